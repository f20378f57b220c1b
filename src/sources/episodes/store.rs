//! The `episodes.sqlite` schema and how it is opened.
//!
//! One owner writes it (the indexer); everyone else opens it read-only, so the coordinator can
//! never change L1 (KC-13). Raw transcripts are never touched: the store holds redacted event text
//! and the stemmed terms used by FTS5.
//!
//! Event rows live in `event_rows`, their long texts packed (`sources::packed`); every reader
//! reads the view `events`, which has the columns the table had before packing (`text` is the
//! text), so no query changed. Schema 2 introduced packing; a store of schema 1 is upgraded in
//! place by the indexer ([`open_rw`]), from its own rows: no transcript is read again, and the
//! sessions of transcripts deleted since stay.

use std::path::Path;

use rusqlite::Connection;

use crate::sources::sqlite;

/// Bumped when the schema changes; an older store is rebuilt from the transcripts, except
/// schema 1, which is upgraded in place (see [`upgrade_from_1`]).
pub const SCHEMA_VERSION: i64 = 2;

/// The physical events table (the indexer writes it; readers read the view `events`).
pub const EVENT_ROWS: &str = "event_rows";

pub const SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(
    path TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    session_id TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    head_hash TEXT NOT NULL,
    resume_hash TEXT NOT NULL DEFAULT '',
    offset INTEGER NOT NULL,
    parser_state TEXT NOT NULL,
    lines INTEGER NOT NULL DEFAULT 0,
    skipped INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS sessions(
    session_id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    path TEXT NOT NULL,
    cwd TEXT,
    created_at TEXT,
    last_event_at TEXT,
    agent_preset TEXT,
    title TEXT,
    parent_session_id TEXT,
    agent_id TEXT,
    agent_name TEXT,
    agent_description TEXT,
    spawn_tool_use_id TEXT,
    team_name TEXT,
    git_branch TEXT,
    version TEXT,
    outcome TEXT NOT NULL DEFAULT 'unknown',
    live INTEGER NOT NULL DEFAULT 0,
    events INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS sessions_cwd ON sessions(cwd);
CREATE VIRTUAL TABLE IF NOT EXISTS events_fts USING fts5(
    terms, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 0'
);
"#;

/// The events table and its reading view (schema 2): `text` holds the packed value (TEXT or
/// an LZ4 BLOB, see `sources::packed`), the view gives the text.
pub const EVENTS_SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS event_rows(
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    event_type TEXT NOT NULL,
    time TEXT,
    time_ms INTEGER,
    text NOT NULL,
    human INTEGER NOT NULL,
    tool_name TEXT,
    tool_use_id TEXT,
    is_error INTEGER NOT NULL,
    sidechain_agent TEXT,
    facts TEXT,
    UNIQUE(session_id, seq)
);
CREATE INDEX IF NOT EXISTS events_time ON event_rows(time_ms);
CREATE VIEW IF NOT EXISTS events AS
    SELECT id, session_id, seq, event_type, time, time_ms,
           CASE WHEN typeof(text) = 'blob' THEN unpack_text(text) ELSE text END AS text,
           human, tool_name, tool_use_id, is_error, sidechain_agent, facts
    FROM event_rows;
"#;

/// Open (creating if needed) the store for writing. Only the indexer calls this.
pub fn open_rw(path: &Path) -> rusqlite::Result<Connection> {
    let conn = sqlite::open_owned(
        path,
        &format!("{SCHEMA}{EVENTS_SCHEMA}"),
        SCHEMA_VERSION,
        &[(1, upgrade_from_1 as sqlite::Upgrade)],
        "DROP VIEW IF EXISTS events; DROP TABLE IF EXISTS events_fts;
         DROP TABLE IF EXISTS events; DROP TABLE IF EXISTS event_rows;
         DROP TABLE IF EXISTS sessions; DROP TABLE IF EXISTS files; DROP TABLE IF EXISTS meta;",
    )?;
    // Stores written before the resume-point hash existed gain the column: an empty hash only
    // means the next change to that file is re-read in full, so nothing is rebuilt up front.
    let has_resume_hash = conn
        .prepare("SELECT resume_hash FROM files LIMIT 0")
        .is_ok();
    if !has_resume_hash {
        conn.execute_batch("ALTER TABLE files ADD COLUMN resume_hash TEXT NOT NULL DEFAULT ''")?;
    }
    Ok(conn)
}

/// Schema 1 → 2: the events move to `event_rows` with their texts packed, same ids (so the
/// full-text index and the vector codes, keyed by id, stay valid), and `events` becomes the
/// view. Runs in the caller's transaction; the space the plain texts took is given back by
/// `VACUUM` after it commits (see `sqlite::open_owned`).
fn upgrade_from_1(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(
        "DROP INDEX IF EXISTS events_time;
         ALTER TABLE events RENAME TO events_v1;",
    )?;
    conn.execute_batch(EVENTS_SCHEMA)?;
    conn.execute_batch(
        "INSERT INTO event_rows(id, session_id, seq, event_type, time, time_ms, text, human,
                                tool_name, tool_use_id, is_error, sidechain_agent, facts)
             SELECT id, session_id, seq, event_type, time, time_ms, pack_text(text), human,
                    tool_name, tool_use_id, is_error, sidechain_agent, facts
             FROM events_v1 ORDER BY id;
         DROP TABLE events_v1;",
    )
}

pub use crate::sources::sqlite::{meta_get, meta_set, open_ro};
