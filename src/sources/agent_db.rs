//! Opening an agent's SQLite database (OpenCode's `opencode.db`, Cursor's `state.vscdb`) so
//! that nothing is ever created beside it, from a read-only directory too.
//!
//! A plain read-only connection is not enough: on a database in WAL mode SQLite creates the
//! `-wal` and `-shm` files beside it when they are missing (files in the agent's folder that
//! the agent never made), and where the folder is read-only it cannot create them and the
//! database is unreadable. So the open depends on what is there:
//!
//! - a rollback-journal database: `mode=ro` (a reader creates nothing);
//! - WAL, no `-wal` file (the agent closed it cleanly: everything is in the main file):
//!   `immutable=1`, which reads the file alone, with no lock and no shared memory;
//! - WAL with both `-wal` and `-shm` (the agent is running): `mode=ro`, the normal concurrent
//!   reader, which uses the agent's shared memory and creates nothing;
//! - anything else, or any of the above failing (a `-wal` left by a crash without its `-shm`,
//!   shared memory this user may not write, a hot journal): a private copy of the database and
//!   its `-wal` in a temporary directory of our own, read there and deleted with the handle.

use std::io::Read;
use std::ops::Deref;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

use super::regular_file;
use super::sqlite::regular_or_absent;

/// A connection to an agent's database; when it reads a private copy, the copy lives as long
/// as the connection.
pub struct AgentDb {
    // Dropped before the copy it reads.
    conn: Connection,
    _copy: Option<tempfile::TempDir>,
}

impl Deref for AgentDb {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        &self.conn
    }
}

/// How the database at a path was opened (for tests and `doctor`'s wording).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opened {
    ReadOnly,
    Immutable,
    PrivateCopy,
}

impl AgentDb {
    /// Opens the agent's database at `path` (see the module doc).
    pub fn open(path: &Path) -> rusqlite::Result<AgentDb> {
        Self::open_how(path).map(|(db, _)| db)
    }

    /// [`AgentDb::open`], also saying which way it was opened.
    pub fn open_how(path: &Path) -> rusqlite::Result<(AgentDb, Opened)> {
        regular_or_absent(path)?;
        let wal = in_wal_mode(path);
        let beside = |suffix: &str| {
            let mut p = path.as_os_str().to_owned();
            p.push(suffix);
            PathBuf::from(p)
        };
        let direct = if !wal {
            Some(("mode=ro", Opened::ReadOnly))
        } else if !beside("-wal").exists() {
            Some(("immutable=1", Opened::Immutable))
        } else if beside("-shm").exists() {
            Some(("mode=ro", Opened::ReadOnly))
        } else {
            None
        };
        let mut first_error = None;
        if let Some((params, how)) = direct {
            match open_uri(path, params) {
                Ok(conn) => {
                    return Ok((AgentDb { conn, _copy: None }, how));
                }
                Err(e) => first_error = Some(e),
            }
        }
        match private_copy(path, &beside("-wal")) {
            Ok(db) => Ok((db, Opened::PrivateCopy)),
            // The first way's error says more about the database than the copy's.
            Err(e) => Err(first_error.unwrap_or(e)),
        }
    }
}

/// Bytes 18 and 19 of the header are 2 in a WAL-mode database.
fn in_wal_mode(path: &Path) -> bool {
    let mut header = [0u8; 20];
    regular_file::open(path)
        .and_then(|mut f| f.read_exact(&mut header))
        .is_ok()
        && header[18] == 2
        && header[19] == 2
}

/// `file:` URI of `path` with `params`: every byte but unreserved ones is percent-encoded, so
/// a `?`, `#` or `%` in a folder name (or a name that is not UTF-8) stays part of the path.
fn uri(path: &Path, params: &str) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::from("file:");
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/._-~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out.push('?');
    out.push_str(params);
    out
}

/// Opens read-only through a URI and reads the schema, which is when SQLite touches the
/// `-wal`/`-shm` files: a way of opening that cannot read fails here, not at the first query.
fn open_uri(path: &Path, params: &str) -> rusqlite::Result<Connection> {
    let conn = Connection::open_with_flags(
        uri(path, params),
        OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(std::time::Duration::from_secs(2))?;
    conn.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(()))?;
    Ok(conn)
}

/// The database and its `-wal` copied into a private temporary directory and opened there.
fn private_copy(path: &Path, wal: &Path) -> rusqlite::Result<AgentDb> {
    let io = |e: std::io::Error| {
        rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CANTOPEN),
            Some(format!("a private copy of {}: {e}", path.display())),
        )
    };
    let dir = tempfile::Builder::new()
        .prefix("knowledge-agent-db-")
        .tempdir()
        .map_err(io)?;
    let copy = dir.path().join("agent.db");
    copy_regular(path, &copy).map_err(io)?;
    if wal.exists() {
        copy_regular(wal, &dir.path().join("agent.db-wal")).map_err(io)?;
    }
    let conn = Connection::open_with_flags(
        &copy,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(()))?;
    Ok(AgentDb {
        conn,
        _copy: Some(dir),
    })
}

/// Copies a regular file (refusing a FIFO or a device, as every read does).
fn copy_regular(from: &Path, to: &Path) -> std::io::Result<()> {
    let mut src = regular_file::open(from)?;
    let mut dst = std::fs::File::create(to)?;
    std::io::copy(&mut src, &mut dst)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .expect("ls")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    fn wal_db(path: &Path) -> Connection {
        let c = Connection::open(path).expect("create");
        c.execute_batch(
            "PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;
             CREATE TABLE t(x); INSERT INTO t VALUES (1), (2);",
        )
        .expect("fill");
        c
    }

    fn rows(db: &AgentDb) -> i64 {
        db.query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .expect("count")
    }

    #[test]
    fn each_state_of_a_wal_database_is_read_with_nothing_created_beside_it() {
        let dir = tempfile::tempdir().expect("tmp");
        // A name a URI would misread.
        let sub = dir.path().join("we?ird #dir%20");
        std::fs::create_dir(&sub).expect("mkdir");
        let path = sub.join("agent.db");

        // The agent running: -wal and -shm present.
        let writer = wal_db(&path);
        let before = entries(&sub);
        let (db, how) = AgentDb::open_how(&path).expect("open");
        assert_eq!((rows(&db), how), (2, Opened::ReadOnly));
        drop(db);
        assert_eq!(entries(&sub), before);

        // A crash left the -wal without its -shm (the rows are only in the -wal): read from a
        // private copy.
        let crashed = dir.path().join("crashed");
        std::fs::create_dir(&crashed).expect("mkdir");
        for name in ["agent.db", "agent.db-wal"] {
            std::fs::copy(sub.join(name), crashed.join(name)).expect("copy");
        }
        let before = entries(&crashed);
        let (db, how) = AgentDb::open_how(&crashed.join("agent.db")).expect("open");
        assert_eq!((rows(&db), how), (2, Opened::PrivateCopy));
        drop(db);
        assert_eq!(entries(&crashed), before);
        drop(writer);

        // Closed cleanly (the writer's close checkpointed and removed both): the main file.
        assert_eq!(entries(&sub), vec!["agent.db".to_string()]);
        let (db, how) = AgentDb::open_how(&path).expect("open");
        assert_eq!((rows(&db), how), (2, Opened::Immutable));
        drop(db);
        assert_eq!(entries(&sub), vec!["agent.db".to_string()]);
    }

    #[test]
    fn a_rollback_journal_database_is_opened_read_only() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("plain.db");
        let c = Connection::open(&path).expect("create");
        c.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
            .expect("fill");
        drop(c);
        let (db, how) = AgentDb::open_how(&path).expect("open");
        assert_eq!((rows(&db), how), (1, Opened::ReadOnly));
        assert!(
            db.execute_batch("INSERT INTO t VALUES (2)").is_err(),
            "read-only"
        );
        drop(db);
        assert_eq!(entries(dir.path()), vec!["plain.db".to_string()]);
    }
}
