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
//!   shared memory this user may not write, a `-journal` a crashed writer left, which only a
//!   writer may roll back): a private copy of the database with its `-wal` and `-journal`,
//!   opened for writing there (so SQLite rolls the journal back in the copy, and the copy holds
//!   only what the agent committed), deleted with the handle.
//!
//! Before SQLite opens anything, the file's header is read through a non-blocking open: a file
//! that is not a SQLite database (a sparse or zeroed file, `/proc/kmsg`, which SQLite's own
//! blocking read would wait on forever) is refused at once, and never copied. A `-wal`,
//! `-shm` or `-journal` that is not a regular file is named. The copies live in one folder per
//! user (`$TMPDIR/knowledge-agent-db-<uid>`, mode 0700, refused if anyone else could enter it:
//! the copy holds the agent's text before redaction), one subfolder per process; a run killed
//! with its copy still there leaves it for the next one to remove. A database larger than
//! [`MAX_COPY_BYTES`] is not copied.

use std::io::Read;
use std::ops::Deref;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
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

    /// Runs `read` in one deferred read transaction, so every statement of a reader's pass sees
    /// one snapshot while the agent goes on writing (a reader never blocks a WAL writer);
    /// `sql_err` says whose database failed to start it.
    pub fn snapshot<T>(
        &self,
        sql_err: fn(rusqlite::Error) -> std::io::Error,
        read: impl FnOnce(&Connection) -> std::io::Result<T>,
    ) -> std::io::Result<T> {
        self.conn.execute_batch("BEGIN").map_err(sql_err)?;
        let out = read(&self.conn);
        let _ = self.conn.execute_batch("COMMIT");
        out
    }

    /// [`AgentDb::open`], also saying which way it was opened.
    pub fn open_how(path: &Path) -> rusqlite::Result<(AgentDb, Opened)> {
        regular_or_absent(path)?;
        let header = sqlite_header(path)?;
        let beside = |suffix: &str| {
            let mut p = path.as_os_str().to_owned();
            p.push(suffix);
            PathBuf::from(p)
        };
        for suffix in ["-wal", "-shm", "-journal"] {
            let side = beside(suffix);
            if std::fs::metadata(&side).is_ok_and(|m| !m.is_file()) {
                return Err(refused(format!(
                    "{} is not a regular file (move it away: SQLite keeps its journal there)",
                    side.display()
                )));
            }
        }
        // Bytes 18 and 19 of the header are 2 in a WAL-mode database.
        let wal = header[18] == 2 && header[19] == 2;
        // A journal left by a writer that died holds what it had not committed yet: only a
        // connection that may write rolls it back, so the database is read from a copy.
        let journal = std::fs::metadata(beside("-journal")).is_ok_and(|m| m.len() > 0);
        let direct = if journal {
            None
        } else if !wal {
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
        match private_copy(path, &[beside("-wal"), beside("-journal")]) {
            Ok(db) => Ok((db, Opened::PrivateCopy)),
            // The first way's error says more about the database than the copy's.
            Err(e) => Err(first_error.unwrap_or(e)),
        }
    }
}

/// The most a private copy may take (with its `-wal` and `-journal`).
pub const MAX_COPY_BYTES: u64 = 4 * 1024 * 1024 * 1024;

/// A database error saying `why` (SQLite's "not a database" kind).
fn refused(why: String) -> rusqlite::Error {
    rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_NOTADB),
        Some(why),
    )
}

/// The first 100 bytes of the database, read without blocking; a file that does not start
/// with SQLite's magic string is refused before SQLite opens it.
fn sqlite_header(path: &Path) -> rusqlite::Result<[u8; 100]> {
    let mut header = [0u8; 100];
    let read = regular_file::open(path).and_then(|mut f| f.read_exact(&mut header));
    match read {
        Ok(()) if header.starts_with(b"SQLite format 3\0") => Ok(header),
        Ok(()) => Err(refused(format!(
            "{} is not a SQLite database (its header says otherwise)",
            path.display()
        ))),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Err(refused(format!(
            "{} is not a SQLite database (shorter than a header: empty or cut)",
            path.display()
        ))),
        Err(e) => Err(refused(format!("{}: {e}", path.display()))),
    }
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
    // SQLite's open error names the URI; the person knows the path.
    let named = |e: rusqlite::Error| match e {
        rusqlite::Error::SqliteFailure(code, _) => {
            rusqlite::Error::SqliteFailure(code, Some(format!("{}: {code}", path.display())))
        }
        other => other,
    };
    let conn = Connection::open_with_flags(
        uri(path, params),
        OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(named)?;
    conn.busy_timeout(std::time::Duration::from_secs(2))?;
    conn.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(()))
        .map_err(named)?;
    Ok(conn)
}

/// The database and its `-wal` and `-journal` (`sides`) copied into a private temporary
/// directory and opened there for writing (a hot journal is rolled back in the copy).
fn private_copy(path: &Path, sides: &[PathBuf]) -> rusqlite::Result<AgentDb> {
    let io = |e: std::io::Error| {
        rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CANTOPEN),
            Some(format!("a private copy of {}: {e}", path.display())),
        )
    };
    let size = |p: &Path| std::fs::metadata(p).map_or(0, |m| m.len());
    let total: u64 = size(path) + sides.iter().map(|s| size(s)).sum::<u64>();
    if total > MAX_COPY_BYTES {
        return Err(refused(format!(
            "{} cannot be read in place and is too large to copy ({total} bytes, over \
             {MAX_COPY_BYTES})",
            path.display()
        )));
    }
    let dir = tempfile::Builder::new()
        .prefix(&format!("{}-", std::process::id()))
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir_in(copies_dir().map_err(io)?)
        .map_err(io)?;
    let copy = dir.path().join("agent.db");
    copy_regular(path, &copy).map_err(io)?;
    for (side, suffix) in sides.iter().zip(["-wal", "-journal"]) {
        if side.exists() {
            copy_regular(side, &dir.path().join(format!("agent.db{suffix}"))).map_err(io)?;
        }
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

/// Copies a regular file (refusing a FIFO or a device, as every read does), readable by its
/// owner alone.
fn copy_regular(from: &Path, to: &Path) -> std::io::Result<()> {
    let src = regular_file::open(from)?;
    let mut dst = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(to)?;
    std::io::copy(&mut src.take(MAX_COPY_BYTES), &mut dst)?;
    Ok(())
}

/// This user's folder of private copies (made 0700; refused when another user owns it or could
/// enter it), with the copies of processes that are gone removed.
fn copies_dir() -> std::io::Result<PathBuf> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let uid = unsafe { libc::geteuid() };
    let dir = std::env::temp_dir().join(format!("knowledge-agent-db-{uid}"));
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let meta = std::fs::symlink_metadata(&dir)?;
    if !meta.is_dir() || meta.uid() != uid || meta.permissions().mode() & 0o077 != 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!(
                "{} is not a folder of this user's that only this user can enter",
                dir.display()
            ),
        ));
    }
    remove_stale_copies(&dir);
    Ok(dir)
}

/// Removes the copies of processes that no longer run (a run killed with `kill -9`).
fn remove_stale_copies(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let pid = name
            .to_str()
            .and_then(|n| n.split('-').next())
            .and_then(|p| p.parse::<i32>().ok());
        let Some(pid) = pid.filter(|p| *p > 0) else {
            continue;
        };
        if !crate::sources::pid::alive(pid as u32) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// A SQLite file's first bytes.
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// The database named `db_name` that a change at `changed` is a write to: the database itself
/// or its `-wal`, where a write lands first (the database changes only at a checkpoint); `-shm`,
/// which readers write too, names none.
pub fn changed_db(changed: &Path, db_name: &str) -> Option<PathBuf> {
    let name = changed.file_name()?.to_str()?;
    (name == db_name || name.strip_suffix("-wal") == Some(db_name))
        .then(|| changed.with_file_name(db_name))
}

/// Whether `path` is a SQLite database for which `count_sql` (a query giving one count, e.g. of
/// an agent's tables and columns) gives `want`: how a database agent's reader recognises its
/// store away from its own place. The header is read first, so no other file is opened as one.
pub fn has_schema(path: &Path, count_sql: &str, want: i64) -> bool {
    let mut magic = [0u8; 16];
    let is_sqlite = crate::sources::regular_file::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok()
        && &magic == SQLITE_MAGIC;
    if !is_sqlite {
        return false;
    }
    let Ok(conn) = AgentDb::open(path) else {
        return false;
    };
    conn.query_row(count_sql, [], |r| r.get::<_, i64>(0))
        .is_ok_and(|n| n == want)
}

/// The column names of `table` (a store written by an older release may lack later ones).
pub fn columns(conn: &Connection, table: &str) -> rusqlite::Result<Vec<String>> {
    let mut st = conn.prepare(&format!("PRAGMA table_info({table})"))?;
    let rows = st.query_map([], |r| r.get::<_, String>(1))?;
    rows.collect()
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

    #[test]
    fn a_journal_left_by_a_dead_writer_is_rolled_back_in_a_private_copy() {
        let dir = tempfile::tempdir().expect("tmp");
        let live = dir.path().join("live.db");
        let writer = Connection::open(&live).expect("create");
        writer
            .execute_batch(
                "CREATE TABLE t(x TEXT);
                 WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
                 INSERT INTO t SELECT 'committed ' || printf('%02000d', i) FROM n;
                 PRAGMA cache_size = 1;
                 BEGIN;
                 UPDATE t SET x = 'uncommitted ' || printf('%02000d', rowid);",
            )
            // 6 MB of changes: more than any page cache holds, so they spill to the file.
            .expect("an open transaction whose pages spilled to the file");
        // What a crash leaves: the file with uncommitted pages, and the hot journal.
        let crashed = dir.path().join("crashed");
        std::fs::create_dir(&crashed).expect("mkdir");
        std::fs::copy(&live, crashed.join("agent.db")).expect("copy db");
        std::fs::copy(
            dir.path().join("live.db-journal"),
            crashed.join("agent.db-journal"),
        )
        .expect("copy journal");
        drop(writer);
        // The file alone holds uncommitted rows (the writer's cache spilled): the journal matters.
        let bytes = std::fs::read(crashed.join("agent.db")).expect("read");
        let spilled = bytes.windows(11).filter(|w| w == b"uncommitted").count();
        assert!(spilled > 0, "the writer's pages did not reach the file");
        let before = entries(&crashed);
        let (db, how) = AgentDb::open_how(&crashed.join("agent.db")).expect("open");
        assert_eq!(how, Opened::PrivateCopy);
        let uncommitted: i64 = db
            .query_row(
                "SELECT count(*) FROM t WHERE x LIKE 'uncommitted%'",
                [],
                |r| r.get(0),
            )
            .expect("count");
        let committed: i64 = db
            .query_row(
                "SELECT count(*) FROM t WHERE x LIKE 'committed%'",
                [],
                |r| r.get(0),
            )
            .expect("count");
        assert_eq!((committed, uncommitted), (3000, 0));
        // The copy is this user's alone, and gone with the handle; the agent's files untouched.
        let copy_dir = copies_dir().expect("copies dir");
        assert_eq!(
            std::fs::metadata(&copy_dir)
                .expect("meta")
                .permissions()
                .mode()
                & 0o777,
            0o700
        );
        drop(db);
        let mine = format!("{}-", std::process::id());
        let left = std::fs::read_dir(&copy_dir)
            .expect("ls")
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(&mine))
            .count();
        assert_eq!(left, 0, "the copy went with the handle");
        assert_eq!(entries(&crashed), before);
    }

    #[test]
    fn what_is_not_a_sqlite_database_is_refused_before_sqlite_opens_it() {
        let dir = tempfile::tempdir().expect("tmp");
        let zeros = dir.path().join("zeros.db");
        std::fs::File::create(&zeros)
            .and_then(|f| f.set_len(1 << 30))
            .expect("a sparse file");
        let text = dir.path().join("text.db");
        std::fs::write(
            &text,
            "not a database at all, but long enough for a header ".repeat(4),
        )
        .expect("write");
        let empty = dir.path().join("empty.db");
        std::fs::write(&empty, "").expect("write");
        for path in [&zeros, &text, &empty] {
            let err = AgentDb::open(path).err().expect("refused");
            assert!(err.to_string().contains("not a SQLite database"), "{err}");
        }
        // A `-wal` that is not a file is named.
        let db = dir.path().join("ok.db");
        drop(wal_db(&db));
        std::fs::create_dir(dir.path().join("ok.db-wal")).expect("mkdir");
        let err = AgentDb::open(&db).err().expect("refused");
        assert!(
            err.to_string().contains("ok.db-wal is not a regular file"),
            "{err}"
        );
    }
}
