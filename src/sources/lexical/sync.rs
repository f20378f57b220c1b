//! Keeps a store's full-text index in step with the SQLite store it is derived from, the same
//! way for every store that has one (episodes, code).
//!
//! Every document of the index is a row of the store, by id, in a group (a session, a file).
//! The store's writer adds each row to the index as it stores it, and in the same SQLite
//! transaction names the row's group in the store's `lexical_pending` table ([`mark`]); the
//! index commits once at the end of the run, and only then is `lexical_pending` emptied
//! ([`commit`]). So a run killed between the two commits leaves its groups named, and the next
//! run first deletes and re-adds them from the store ([`open`]). An index that is missing,
//! damaged, of another version, built from another store (the store's
//! `lexical_store_id`) or holding another number of rows than the store (with nothing pending)
//! is made anew from every stored row: nothing the store was built from is read again.

use std::path::Path;

use rusqlite::{Connection, Row};

use super::{LexicalDoc, LexicalError, LexicalWriter};
use crate::sources::sqlite::{meta_get, meta_set};

/// The store's meta key holding the id its full-text index is built from.
pub const STORE_ID: &str = "lexical_store_id";

/// The table a store names its changed groups in (`key INTEGER PRIMARY KEY`).
pub const PENDING_TABLE_SQL: &str =
    "CREATE TABLE IF NOT EXISTS lexical_pending(key INTEGER PRIMARY KEY);";

/// How a store's rows become the index's documents.
#[derive(Debug, Clone, Copy)]
pub struct Derivation {
    /// SQL: how many rows the index holds when it is in step.
    pub count_rows: &'static str,
    /// SQL: every group's key (a `SELECT` of one column).
    pub all_keys: &'static str,
    /// SQL with `?1` a group's key: its rows, each read by `doc`.
    pub rows_of_key: &'static str,
    /// A document from one row of `rows_of_key`.
    pub doc: fn(&Row<'_>) -> rusqlite::Result<DerivedDoc>,
}

/// A document as derived from a stored row.
#[derive(Debug, Clone, PartialEq)]
pub struct DerivedDoc {
    pub id: i64,
    pub time_ms: Option<i64>,
    /// The terms the row is found by.
    pub terms: String,
}

/// Why the full-text index could not be kept in step.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    #[error(transparent)]
    Lexical(#[from] LexicalError),
    #[error("cannot read the stored rows for the full-text index: {0}")]
    Store(#[from] rusqlite::Error),
}

/// The id of this store (made on first use): an index carries the id of the store it was built
/// from, so one left beside a store made anew is never taken for its index.
pub fn store_id(conn: &Connection) -> rusqlite::Result<String> {
    if let Some(id) = meta_get(conn, STORE_ID) {
        return Ok(id);
    }
    let id: String = conn.query_row("SELECT lower(hex(randomblob(12)))", [], |r| r.get(0))?;
    meta_set(conn, STORE_ID, &id)?;
    Ok(id)
}

/// The id a reader checks the index against (`None` for a store written before it had one).
pub fn stored_id(conn: &Connection) -> Option<String> {
    meta_get(conn, STORE_ID)
}

/// Names group `key` as changed since the index's last commit, in the caller's transaction.
pub fn mark(tx: &Connection, key: i64) -> rusqlite::Result<()> {
    tx.prepare_cached("INSERT OR IGNORE INTO lexical_pending(key) VALUES(?1)")?
        .execute([key])?;
    Ok(())
}

/// The writer of the store's index, brought in step with it first: made anew from every stored
/// row when it has to be, else with the groups a killed run left named re-added.
pub fn open(
    db_path: &Path,
    conn: &Connection,
    derivation: &Derivation,
) -> Result<LexicalWriter, SyncError> {
    let id = store_id(conn)?;
    // With nothing pending, the index holds exactly the stored rows; a count that differs (a
    // store rolled back behind a committed index: a restored backup, a lost WAL) rebuilds it.
    let nothing_pending: bool = conn.query_row(
        "SELECT NOT EXISTS (SELECT 1 FROM lexical_pending)",
        [],
        |r| r.get(0),
    )?;
    let expected = match nothing_pending {
        true => Some(conn.query_row(derivation.count_rows, [], |r| r.get::<_, i64>(0))? as u64),
        false => None,
    };
    let writer = LexicalWriter::open(db_path, &id, expected)?;
    if writer.is_fresh() {
        conn.execute("DELETE FROM lexical_pending", [])?;
        conn.execute(
            &format!(
                "INSERT OR IGNORE INTO lexical_pending(key) {}",
                derivation.all_keys
            ),
            [],
        )?;
    }
    let pending: Vec<i64> = conn
        .prepare("SELECT key FROM lexical_pending ORDER BY key")?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut rows_of = conn.prepare(derivation.rows_of_key)?;
    for key in pending {
        if !writer.is_fresh() {
            writer.delete_key(key as u64)?;
        }
        let mut rows = rows_of.query([key])?;
        while let Some(r) = rows.next()? {
            let doc = (derivation.doc)(r)?;
            writer.add(LexicalDoc {
                id: doc.id,
                key: key as u64,
                time_ms: doc.time_ms,
                terms: &doc.terms,
            })?;
        }
    }
    Ok(writer)
}

/// Commits the index, then forgets the groups it now holds as they are stored.
pub fn commit(writer: LexicalWriter, conn: &Connection) -> Result<(), SyncError> {
    if !writer.has_changes() {
        return Ok(());
    }
    writer.commit()?;
    conn.execute("DELETE FROM lexical_pending", [])?;
    Ok(())
}
