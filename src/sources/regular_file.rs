//! Opening only regular files.
//!
//! A FIFO (or a device) left where a code file, a transcript or an outbox package was would
//! make a plain `open` or `read` wait forever for a writer: `knowledge code`, the MCP
//! `knowledge_code` tool and `outbox list` hung on one. Every read of a file a user or another
//! program can replace goes through here: the open does not block, and anything but a regular
//! file is refused before a byte is read.

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
}
