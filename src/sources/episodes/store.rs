//! The `episodes.sqlite` schema and how it is opened.
//!
//! One owner writes it (the indexer); everyone else opens it read-only, so the coordinator can
//! never change L1 (KC-13). Raw transcripts are never touched: the store holds redacted event text
//! and the stemmed terms used by FTS5.

use std::path::Path;

use rusqlite::Connection;

use crate::sources::sqlite;

/// Bumped when the schema changes; an older store is rebuilt from the transcripts.
pub const SCHEMA_VERSION: i64 = 1;

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
CREATE TABLE IF NOT EXISTS events(
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    event_type TEXT NOT NULL,
    time TEXT,
    time_ms INTEGER,
    text TEXT NOT NULL,
    human INTEGER NOT NULL,
    tool_name TEXT,
    tool_use_id TEXT,
    is_error INTEGER NOT NULL,
    sidechain_agent TEXT,
    facts TEXT,
    UNIQUE(session_id, seq)
);
CREATE INDEX IF NOT EXISTS events_time ON events(time_ms);
CREATE INDEX IF NOT EXISTS sessions_cwd ON sessions(cwd);
CREATE VIRTUAL TABLE IF NOT EXISTS events_fts USING fts5(
    terms, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 0'
);
"#;

/// Open (creating if needed) the store for writing. Only the indexer calls this.
pub fn open_rw(path: &Path) -> rusqlite::Result<Connection> {
    let conn = sqlite::open_owned(
        path,
        SCHEMA,
        SCHEMA_VERSION,
        "DROP TABLE IF EXISTS events_fts; DROP TABLE IF EXISTS events;
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

pub use crate::sources::sqlite::{meta_get, meta_set, open_ro};
