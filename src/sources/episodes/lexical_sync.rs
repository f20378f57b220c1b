//! Keeps the episodes' full-text index (`sources::lexical`) in step with `episodes.sqlite`, as
//! `sources::lexical::sync` keeps every store's.
//!
//! Every document is an event of the store, by id, with its session's key as the group, its
//! time, and the terms its text and tool name give (`event_terms`). The indexer adds each event
//! to the index as it stores it and names the session in `lexical_pending` in the same SQLite
//! transaction ([`mark`]).

use std::path::Path;

use rusqlite::{Connection, Row};

use super::prepare::event_terms;
use crate::sources::lexical::sync::{self, Derivation, DerivedDoc};
use crate::sources::lexical::LexicalWriter;

pub(crate) use crate::sources::lexical::sync::{commit, mark, SyncError};

/// The writer of the store's index, brought in step with the store first.
pub(super) fn open(db_path: &Path, conn: &Connection) -> Result<LexicalWriter, SyncError> {
    sync::open(db_path, conn, &DERIVATION)
}

/// How an event becomes a document.
const DERIVATION: Derivation = Derivation {
    count_rows: "SELECT count(*) FROM event_rows",
    all_keys: "SELECT key FROM session_keys",
    rows_of_key: "SELECT e.id, e.time_ms,
                CASE WHEN typeof(e.text) = 'blob' THEN unpack_text(e.text) ELSE e.text END,
                e.tool_name
         FROM event_rows e WHERE e.session_key = ?1",
    doc: event_doc,
};

fn event_doc(r: &Row<'_>) -> rusqlite::Result<DerivedDoc> {
    let text: String = r.get(2)?;
    let tool: Option<String> = r.get(3)?;
    Ok(DerivedDoc {
        id: r.get(0)?,
        time_ms: r.get(1)?,
        terms: event_terms(&text, tool.as_deref()),
    })
}
