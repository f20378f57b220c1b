//! Where the team skills lane keeps its local copy of the team's agent knowledge (`skills.rs`).
//! Copying the team's rows costs a round trip per table and a SQLite build; a one-shot call
//! (`knowledge search --team`, each one a new process) against a team nobody pushed to since
//! should not pay it again. So a copy is one file per team database and set of pushed
//! revisions, in a private directory of the temp dir (mode 0700, this user's) shared by every
//! process of this user: the first call makes it, the next ones open it.
//!
//! Concurrency: a copy is built under a name private to its process and linked into place with
//! `link(2)`, which never replaces a file, so two processes making the same copy at once both
//! end up reading one complete file. A process reading a copy holds a shared `flock` on it for
//! as long as it reads; a sweep removes a copy only under an exclusive lock it got without
//! waiting, so a copy in use is never removed, and a reader that locked a file a sweep had just
//! unlinked sees that (the path no longer names its file) and looks again.
//!
//! What is swept: a team's copies of older revisions (once a newer one is made), any copy
//! unused and older than [`STALE`], and the half-made copies of processes that are gone.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// A copy of another team (another database) unused for this long is removed by a sweep.
const STALE: Duration = Duration::from_secs(24 * 3600);

/// The name of a half-made copy: `knowledge-team-<pid>-<n>.sqlite` (the earlier builds kept
/// their per-process copies under this name directly in the temp dir).
const TMP_PREFIX: &str = "knowledge-team-";

/// A copy open for reading: its path, and the shared lock that keeps sweeps off it.
pub struct Held {
    pub path: PathBuf,
    _lock: File,
}

/// The copy of `team`'s agent knowledge at the revisions `revs`: opened when a process made it
/// before, else made by `make` (given a fresh path to write a complete store to) and put in
/// place.
pub fn open_or_make<E: From<std::io::Error>>(
    team: &str,
    revs: &str,
    mut make: impl FnMut(&Path) -> Result<(), E>,
) -> Result<Held, E> {
    let dir = private_dir()?;
    let team_key = short_hash(team);
    let path = dir.join(format!("m-{team_key}-{}.sqlite", short_hash(revs)));
    // Two rounds at most lose a race with a sweep or another maker; a third round finding the
    // path still changing means something else is rewriting the directory.
    for _ in 0..3 {
        if let Some(held) = open_locked(&path)? {
            return Ok(held);
        }
        let tmp = tmp_path(&dir);
        if let Err(e) = make(&tmp) {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        let lock = File::open(&tmp)?;
        lock.lock_shared()?;
        let linked = std::fs::hard_link(&tmp, &path);
        let _ = std::fs::remove_file(&tmp);
        match linked {
            Ok(()) => {
                sweep(&dir, &team_key, &path);
                return Ok(Held { path, _lock: lock });
            }
            // Another process put the same copy in place first: read that one.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(std::io::Error::other(format!(
        "the team skills copy {} keeps changing under this process",
        path.display()
    ))
    .into())
}

/// `path` opened and share-locked, if it exists and is still the file locked.
fn open_locked(path: &Path) -> std::io::Result<Option<Held>> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    file.lock_shared()?;
    if !same_file(&file, path) {
        return Ok(None);
    }
    Ok(Some(Held {
        path: path.to_path_buf(),
        _lock: file,
    }))
}

/// Whether `path` still names the open `file` (a sweep may have unlinked it meanwhile).
fn same_file(file: &File, path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (file.metadata(), std::fs::metadata(path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = file;
        path.exists()
    }
}

/// This user's directory of copies, made private; refused when someone else could write it
/// (the temp dir is shared: a planted copy would answer for the team).
fn private_dir() -> std::io::Result<PathBuf> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, MetadataExt};
        // SAFETY: geteuid has no preconditions and cannot fail.
        let uid = unsafe { libc::geteuid() };
        let dir = std::env::temp_dir().join(format!("knowledge-team-{uid}"));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
        let m = std::fs::symlink_metadata(&dir)?;
        if !m.is_dir() || m.uid() != uid || m.mode() & 0o077 != 0 {
            return Err(std::io::Error::other(format!(
                "{} is not a private directory of this user: remove it",
                dir.display()
            )));
        }
        Ok(dir)
    }
    #[cfg(not(unix))]
    {
        let dir = std::env::temp_dir().join("knowledge-team");
        std::fs::create_dir_all(&dir)?;
        Ok(dir)
    }
}

fn short_hash(s: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(s.as_bytes())
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A new name for a half-made copy, private to this process.
fn tmp_path(dir: &Path) -> PathBuf {
    static N: AtomicU64 = AtomicU64::new(0);
    dir.join(format!(
        "{TMP_PREFIX}{}-{}.sqlite",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ))
}

/// Remove the copies nobody reads that are stale: `team_key`'s other revisions, and any copy
/// older than [`STALE`]; then the half-made copies of dead processes (here and, from earlier
/// builds, in the temp dir itself).
fn sweep(dir: &Path, team_key: &str, keep: &Path) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        let ours = format!("m-{team_key}-");
        for e in entries.flatten() {
            let path = e.path();
            let Some(name) = e.file_name().to_str().map(str::to_string) else {
                continue;
            };
            if path == keep || !name.starts_with("m-") || !name.ends_with(".sqlite") {
                continue;
            }
            let old = e
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age >= STALE);
            if name.starts_with(&ours) || old {
                remove_unused(&path);
            }
        }
    }
    sweep_dead(dir);
    sweep_dead(&std::env::temp_dir());
}

/// Remove `path` if no process holds it (an exclusive lock got without waiting).
fn remove_unused(path: &Path) {
    let Ok(file) = File::open(path) else { return };
    if file.try_lock().is_ok() && same_file(&file, path) {
        let _ = std::fs::remove_file(path);
    }
}

/// The pid a half-made copy's file name carries.
fn tmp_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(TMP_PREFIX)?.strip_suffix(".sqlite")?;
    let (pid, n) = rest.split_once('-')?;
    n.parse::<u64>().ok()?;
    pid.parse().ok()
}

/// Remove the half-made copies (and their journals) whose process no longer runs.
fn sweep_dead(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        let base = name
            .strip_suffix("-journal")
            .or_else(|| name.strip_suffix("-wal"))
            .or_else(|| name.strip_suffix("-shm"))
            .unwrap_or(name);
        let Some(pid) = tmp_pid(base) else {
            continue;
        };
        if pid != std::process::id() && !crate::sources::pid::alive(pid) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn a_dead_processs_half_made_copy_is_swept_and_a_live_ones_kept() {
        let dir = tempfile::tempdir().expect("tmp");
        // pid_max on Linux is at most 2^22: this pid cannot run.
        let dead = dir.path().join(format!("{TMP_PREFIX}4999999-0.sqlite"));
        let dead_journal = dir
            .path()
            .join(format!("{TMP_PREFIX}4999999-0.sqlite-journal"));
        let live = dir
            .path()
            .join(format!("{TMP_PREFIX}{}-7.sqlite", std::process::id()));
        let other = dir.path().join("knowledge-team-notes.sqlite");
        for p in [&dead, &dead_journal, &live, &other] {
            std::fs::write(p, b"x").expect("write");
        }
        sweep_dead(dir.path());
        assert!(!dead.exists() && !dead_journal.exists());
        assert!(live.exists(), "this process's copy stays");
        assert!(other.exists(), "a file that is not a copy stays");
    }

    /// A team name unique to one test run, so runs never share copies.
    fn team(tag: &str) -> String {
        format!(
            "test:{tag}:{}:{:?}",
            std::process::id(),
            std::time::Instant::now()
        )
    }

    #[test]
    fn an_unchanged_team_is_copied_once_and_a_new_revision_replaces_the_old_copy() {
        let team = team("revs");
        let made = AtomicUsize::new(0);
        let make = |p: &Path| -> std::io::Result<()> {
            made.fetch_add(1, Ordering::SeqCst);
            std::fs::write(p, b"copy")
        };
        let first = open_or_make(&team, "a@1", make).expect("first");
        let old_path = first.path.clone();
        drop(first);
        let again = open_or_make(&team, "a@1", make).expect("again");
        assert_eq!(
            made.load(Ordering::SeqCst),
            1,
            "the same revisions are not copied again"
        );
        assert_eq!(again.path, old_path);
        // The old copy is held by `again`: a new revision keeps it until it is let go.
        let newer = open_or_make(&team, "a@2", make).expect("newer");
        assert_eq!(made.load(Ordering::SeqCst), 2);
        assert!(old_path.exists(), "a copy being read is not swept");
        drop(again);
        drop(newer);
        let newest = open_or_make(&team, "a@3", make).expect("newest");
        assert!(!old_path.exists(), "an unused older revision is swept");
        std::fs::remove_file(&newest.path).expect("clean up");
    }

    #[test]
    fn processes_making_the_same_copy_at_once_all_read_one_complete_file() {
        let team = team("race");
        let made = AtomicUsize::new(0);
        let paths: Vec<PathBuf> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(|| {
                        let held = open_or_make(&team, "m@1", |p: &Path| -> std::io::Result<()> {
                            made.fetch_add(1, Ordering::SeqCst);
                            std::thread::sleep(Duration::from_millis(20));
                            std::fs::write(p, b"complete")
                        })
                        .expect("copy");
                        assert_eq!(std::fs::read(&held.path).expect("read"), b"complete");
                        held.path.clone()
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("thread"))
                .collect()
        });
        assert!(paths.windows(2).all(|w| w[0] == w[1]), "{paths:?}");
        let dir = paths[0].parent().expect("dir").to_path_buf();
        let pid = std::process::id().to_string();
        let leftovers = std::fs::read_dir(&dir)
            .expect("dir")
            .flatten()
            .filter(|e| {
                let n = e.file_name().to_string_lossy().to_string();
                n.starts_with(&format!("{TMP_PREFIX}{pid}-"))
            })
            .count();
        assert_eq!(leftovers, 0, "no half-made copy is left behind");
        std::fs::remove_file(&paths[0]).expect("clean up");
    }

    #[test]
    fn a_failed_copy_leaves_nothing_and_says_why() {
        let team = team("fail");
        let err = open_or_make(&team, "x@1", |p: &Path| -> std::io::Result<()> {
            std::fs::write(p, b"half")?;
            Err(std::io::Error::other("the server went away"))
        })
        .err()
        .expect("an error");
        assert!(err.to_string().contains("went away"), "{err}");
        let dir = private_dir().expect("dir");
        let key = format!("m-{}-", short_hash(&team));
        assert!(!std::fs::read_dir(dir)
            .expect("dir")
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with(&key)));
    }
}
