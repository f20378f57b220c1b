//! SQLite plumbing shared by every store: how an indexer opens the store it owns, how readers
//! open it read-only, the small `meta` key/value table, and a pool of read-only connections.
//! One piece of code, so every store gets the same pragmas and the same read-only guarantee.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::{Connection, OpenFlags};

/// A store path that exists and is not a regular file (a FIFO, where SQLite's open would wait
/// for a writer forever; a device such as `/dev/zero`) is refused as not a database, so every
/// front end calls it damaged and `knowledge index --rebuild` replaces it.
pub fn regular_or_absent(path: &Path) -> rusqlite::Result<()> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => Err(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_NOTADB),
            Some(format!("{} is not a regular file", path.display())),
        )),
        _ => Ok(()),
    }
}

/// An in-place upgrade of a store from one schema version to the next, run in a transaction.
pub type Upgrade = fn(&Connection) -> rusqlite::Result<()>;

/// Open (creating if needed) a store for its one writer, in WAL mode. A store written by
/// another schema version is upgraded in place when `upgrades` has a step from its version
/// (each step `(from, f)` takes version `from` to `from + 1`; the file is vacuumed after, so the
/// space the old layout took is given back), else dropped (`drop_sql`) and recreated
/// (`schema`): every store is derived from files on disk, so rebuilding loses nothing.
pub fn open_owned(
    path: &Path,
    schema: &str,
    version: i64,
    upgrades: &[(i64, Upgrade)],
    drop_sql: &str,
) -> rusqlite::Result<Connection> {
    regular_or_absent(path)?;
    let mut conn = Connection::open(path)?;
    register_functions(&conn)?;
    conn.execute_batch(
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=5000;",
    )?;
    let mut current: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap_or(0);
    let upgradable = |from: i64| upgrades.iter().find(|(v, _)| *v == from).map(|(_, f)| *f);
    if current != 0 && current < version && (current..version).all(|v| upgradable(v).is_some()) {
        while current < version {
            let step = upgradable(current).ok_or(rusqlite::Error::InvalidQuery)?;
            let tx = conn.transaction()?;
            step(&tx)?;
            tx.pragma_update(None, "user_version", current + 1)?;
            tx.commit()?;
            current += 1;
        }
        // The VACUUM rewrites the file anyway, so the switch to incremental vacuuming is free
        // here (`auto_vacuum` only takes effect before the first table or through a VACUUM).
        conn.execute_batch("PRAGMA auto_vacuum = INCREMENTAL; VACUUM;")?;
    }
    if current != version {
        conn.execute_batch(drop_sql)?;
        incremental_vacuuming(&conn)?;
        conn.execute_batch(schema)?;
        conn.pragma_update(None, "user_version", version)?;
    }
    Ok(conn)
}

/// `auto_vacuum = INCREMENTAL` on a store about to get its schema: a new file takes it at
/// once; a file whose tables were just dropped needs a VACUUM, which copies what is left (the
/// drop left little, and a rebuild follows anyway).
fn incremental_vacuuming(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch("PRAGMA auto_vacuum = INCREMENTAL;")?;
    if auto_vacuum(conn)? != AUTO_VACUUM_INCREMENTAL {
        conn.execute_batch("VACUUM;")?;
    }
    Ok(())
}

const AUTO_VACUUM_INCREMENTAL: i64 = 2;

fn auto_vacuum(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA auto_vacuum", [], |r| r.get(0))
}

/// Free pages beyond this share of the file (1/20) are given back after an index run.
pub const FREE_SHARE: i64 = 20;

/// What [`give_back_free_pages`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GaveBack {
    /// Few free pages (at most [`FREE_SHARE`]'s share): SQLite reuses them for later writes.
    Nothing,
    /// `PRAGMA incremental_vacuum`: the free pages were moved to the end and cut off; its cost
    /// is the pages freed, not the file.
    Incremental { pages: i64 },
    /// A store made before incremental vacuuming (`auto_vacuum = NONE`) was rewritten once by
    /// `VACUUM`, switching it to incremental, so later runs take the cheap way.
    Vacuumed { pages: i64 },
}

/// Give the file's free pages back after an index run that left more than a [`FREE_SHARE`]'s
/// share of the file free (sessions or files dropped, a schema step that removed a table). Any
/// other run costs two pragma reads, so a watch runner never rewrites the file.
pub fn give_back_free_pages(conn: &Connection) -> rusqlite::Result<GaveBack> {
    let pages: i64 = conn.query_row("PRAGMA page_count", [], |r| r.get(0))?;
    let free: i64 = conn.query_row("PRAGMA freelist_count", [], |r| r.get(0))?;
    if free == 0 || free.saturating_mul(FREE_SHARE) <= pages {
        return Ok(GaveBack::Nothing);
    }
    if auto_vacuum(conn)? == AUTO_VACUUM_INCREMENTAL {
        // The pragma frees one page per step: stepped once (as `execute_batch` does) it would
        // give back a single page.
        let mut stmt = conn.prepare("PRAGMA incremental_vacuum")?;
        let mut rows = stmt.query([])?;
        while rows.next()?.is_some() {}
        return Ok(GaveBack::Incremental { pages: free });
    }
    conn.execute_batch("PRAGMA auto_vacuum = INCREMENTAL; VACUUM;")?;
    Ok(GaveBack::Vacuumed { pages: free })
}

/// The SQL functions every store connection has: the views over packed text read through them.
fn register_functions(conn: &Connection) -> rusqlite::Result<()> {
    crate::sources::packed::register(conn)
}

/// Open an existing store for its writer without touching its schema (a step that only adds
/// its own tables, such as the vectors, after the store's indexer has run).
pub fn open_writer(path: &Path) -> rusqlite::Result<Connection> {
    regular_or_absent(path)?;
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE)?;
    register_functions(&conn)?;
    conn.execute_batch("PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=5000;")?;
    Ok(conn)
}

/// Open a store read-only: a reader can never write into it.
pub fn open_ro(path: &Path) -> rusqlite::Result<Connection> {
    regular_or_absent(path)?;
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    register_functions(&conn)?;
    conn.busy_timeout(std::time::Duration::from_secs(2))?;
    Ok(conn)
}

pub fn meta_get(conn: &Connection, key: &str) -> Option<String> {
    conn.query_row("SELECT value FROM meta WHERE key=?1", [key], |r| r.get(0))
        .ok()
}

pub fn meta_set(conn: &Connection, key: &str, value: &str) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO meta(key, value) VALUES(?1, ?2)
         ON CONFLICT(key) DO UPDATE SET value=excluded.value",
        [key, value],
    )?;
    Ok(())
}

/// Up to four read-only connections, reused across calls (a fresh connection would lose its
/// page cache every search).
pub struct ReadPool {
    path: PathBuf,
    pool: Mutex<Vec<Connection>>,
}

impl ReadPool {
    /// Open the first connection and check it with `probe` (a query every valid store answers).
    pub fn open(path: &Path, probe: &str) -> rusqlite::Result<Self> {
        let conn = open_ro(path)?;
        conn.query_row(probe, [], |_| Ok(()))?;
        Ok(ReadPool {
            path: path.to_path_buf(),
            pool: Mutex::new(vec![conn]),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Run `f` on a pooled connection (opening another when all are busy).
    pub fn with_conn<T, E: From<rusqlite::Error>>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, E>,
    ) -> Result<T, E> {
        let pooled = self.pool.lock().ok().and_then(|mut p| p.pop());
        let conn = match pooled {
            Some(c) => c,
            None => open_ro(&self.path)?,
        };
        let out = f(&conn);
        if let Ok(mut p) = self.pool.lock() {
            if p.len() < 4 {
                p.push(conn);
            }
        }
        out
    }
}
