//! Keeps the episodes' full-text index (`sources::lexical`) in step with `episodes.sqlite`.
//!
//! The index is derived: every row of it is an event of the store, by id, with its session's key
//! as the group and the terms its text and tool name give (`event_terms`). The indexer adds each
//! event to it as it stores it, and in the same SQLite transaction names the session in
//! `lexical_pending`; the index commits once at the end of the run, and only then is
//! `lexical_pending` emptied. So a run killed between the two commits leaves its sessions
//! named, and the next run first deletes and re-adds them from the store ([`open`]). An index
//! that is missing, damaged, of another version or built from another store (the store's
//! `lexical_store_id`) is made anew from every stored event: no transcript is read again.

use std::path::Path;

use rusqlite::{Connection, Transaction};

use super::prepare::event_terms;
use crate::sources::lexical::{LexicalDoc, LexicalError, LexicalWriter};

/// The store's meta key holding the id its full-text index is built from.
pub(crate) const STORE_ID: &str = "lexical_store_id";

/// The id of this store (made on first use): an index carries the id of the store it was built
/// from, so one left beside a store made anew is never taken for its index.
pub(crate) fn store_id(conn: &Connection) -> rusqlite::Result<String> {
    if let Some(id) = super::store::meta_get(conn, STORE_ID) {
        return Ok(id);
    }
    let id: String = conn.query_row("SELECT lower(hex(randomblob(12)))", [], |r| r.get(0))?;
    super::store::meta_set(conn, STORE_ID, &id)?;
    Ok(id)
}

/// The id a reader checks the index against (`None` for a store written before it had one).
pub(crate) fn stored_id(conn: &Connection) -> Option<String> {
    super::store::meta_get(conn, STORE_ID)
}

/// Names `session_key` as changed since the index's last commit, in the caller's transaction.
pub(super) fn mark(tx: &Transaction<'_>, session_key: i64) -> rusqlite::Result<()> {
    tx.prepare_cached("INSERT OR IGNORE INTO lexical_pending(key) VALUES(?1)")?
        .execute([session_key])?;
    Ok(())
}

/// Why the full-text index could not be kept in step.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    #[error(transparent)]
    Lexical(#[from] LexicalError),
    #[error("cannot read the stored events for the full-text index: {0}")]
    Store(#[from] rusqlite::Error),
}

/// The writer of the store's index, brought in step with it first: made anew from every stored
/// event when it has to be, else with the sessions a killed run left named re-added.
pub(super) fn open(db_path: &Path, conn: &Connection) -> Result<LexicalWriter, SyncError> {
    let id = store_id(conn)?;
    // With nothing pending, the index holds exactly the stored events; a count that differs
    // (a store rolled back behind a committed index: a restored backup, a lost WAL) rebuilds it.
    let nothing_pending: bool = conn.query_row(
        "SELECT NOT EXISTS (SELECT 1 FROM lexical_pending)",
        [],
        |r| r.get(0),
    )?;
    let expected = match nothing_pending {
        true => Some(conn.query_row("SELECT count(*) FROM event_rows", [], |r| {
            r.get::<_, i64>(0)
        })? as u64),
        false => None,
    };
    let writer = LexicalWriter::open(db_path, &id, expected)?;
    if writer.is_fresh() {
        conn.execute_batch(
            "DELETE FROM lexical_pending;
             INSERT INTO lexical_pending(key) SELECT key FROM session_keys;",
        )?;
    }
    let pending: Vec<i64> = conn
        .prepare("SELECT key FROM lexical_pending ORDER BY key")?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut events = conn.prepare(
        "SELECT e.id, e.time_ms,
                CASE WHEN typeof(e.text) = 'blob' THEN unpack_text(e.text) ELSE e.text END,
                e.tool_name
         FROM event_rows e WHERE e.session_key = ?1",
    )?;
    for key in pending {
        if !writer.is_fresh() {
            writer.delete_key(key as u64)?;
        }
        let mut rows = events.query([key])?;
        while let Some(r) = rows.next()? {
            let text: String = r.get(2)?;
            let tool: Option<String> = r.get(3)?;
            let terms = event_terms(&text, tool.as_deref());
            writer.add(LexicalDoc {
                id: r.get(0)?,
                key: key as u64,
                time_ms: r.get(1)?,
                terms: &terms,
            })?;
        }
    }
    Ok(writer)
}

/// Commits the index, then forgets the sessions it now holds as they are stored.
pub(super) fn commit(writer: LexicalWriter, conn: &Connection) -> Result<(), SyncError> {
    if !writer.has_changes() {
        return Ok(());
    }
    writer.commit()?;
    conn.execute_batch("DELETE FROM lexical_pending;")?;
    Ok(())
}
