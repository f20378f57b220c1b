//! Opening only regular files.
//!
//! A FIFO (or a device) left where a code file, a transcript or an outbox package was would
//! make a plain `open` or `read` wait forever for a writer: `knowledge code`, the MCP
//! `knowledge_code` tool and `outbox list` hung on one. Every read of a file a user or another
//! program can replace goes through here: the open does not block, and anything but a regular
//! file is refused before a byte is read. A file read whole (an agent's side file: Kimi's
//! `kimi.json`, Gemini's `projects.json`, Cursor's `workspace.json`, a `.meta.json` sidecar)
//! is also bounded ([`read_limited`]): a file that keeps growing, or one far larger than its
//! kind ever is, is refused instead of filling memory.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// Opens `path` for reading if (and only if) it is a regular file, following symlinks.
pub fn open(path: &Path) -> io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Without it, opening a FIFO blocks until a writer opens the other end.
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a regular file", path.display()),
        ));
    }
    Ok(file)
}

/// The whole content of a regular file (see [`open`]).
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    let mut file = open(path)?;
    let mut bytes = Vec::with_capacity(file.metadata().map_or(0, |m| m.len() as usize));
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The most an agent's side file (a registry, a sidecar, a workspace descriptor) may hold: the
/// real ones are a few kilobytes; a user with thousands of projects stays far below.
pub const SIDE_FILE_LIMIT: u64 = 16 * 1024 * 1024;

/// The whole content of a regular file of at most `limit` bytes (see [`open`]); a larger one
/// is refused with `InvalidData` before it is read, and a file growing while it is read stops
/// at `limit + 1` bytes and is refused the same way.
pub fn read_limited(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let file = open(path)?;
    let too_large = || {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{} is larger than {limit} bytes", path.display()),
        )
    };
    let len = file.metadata()?.len();
    if len > limit {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(bytes)
}

/// An agent's side file as text (at most [`SIDE_FILE_LIMIT`] bytes; invalid UTF-8 costs a
/// character).
pub fn read_side_file(path: &Path) -> io::Result<String> {
    read_limited(path, SIDE_FILE_LIMIT).map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// The whole content of a regular UTF-8 text file (see [`open`]).
pub fn read_to_string(path: &Path) -> io::Result<String> {
    String::from_utf8(read(path)?).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let Ok(dir) = tempfile::tempdir() else { return };
        let fifo = dir.path().join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo");
        let err = read(&fifo).expect_err("refused");
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        let file = dir.path().join("f.txt");
        std::fs::write(&file, "ok").expect("write");
        assert_eq!(read(&file).expect("read"), b"ok");
    }

    #[test]
    fn a_bounded_read_refuses_devices_fifos_and_oversized_files() {
        let Ok(dir) = tempfile::tempdir() else { return };
        let zero = dir.path().join("zero.json");
        std::os::unix::fs::symlink("/dev/zero", &zero).expect("symlink");
        let err = read_side_file(&zero).expect_err("a device is refused");
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        let fifo = dir.path().join("pipe.json");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo");
        let err = read_side_file(&fifo).expect_err("a FIFO is refused");
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        let big = dir.path().join("big.json");
        std::fs::write(&big, vec![b' '; 11]).expect("write");
        let err = read_limited(&big, 10).expect_err("over the limit");
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert_eq!(read_limited(&big, 11).expect("at the limit").len(), 11);
    }
}

/// The file at `path` (device and inode on Unix; size and time elsewhere): what tells a file
/// another one was renamed over (a store a build replaced) from the one a handle opened.
pub fn file_id(path: &Path) -> Option<(u64, u64)> {
    let meta = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some((meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let modified = meta
            .modified()
            .ok()?
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?;
        Some((meta.len(), modified.as_nanos() as u64))
    }
}
