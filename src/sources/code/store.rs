//! The `code.sqlite` schema and how it is opened.
//!
//! The indexer is its only writer; the engine opens it read-only, so the coordinator can never
//! change L2 (KC-13). Chunk text is stored redacted, with its stemmed terms in three columns: the
//! chunk body (plus path and symbol), the symbol name alone and the path alone. The full-text
//! index (`sources::lexical`, `code.lexical/` beside the store) is derived from those columns,
//! one document per chunk with a field per column, so BM25 can weigh a name match above a
//! mention; `lexical_pending` names the files whose chunks changed since its last commit.

use std::path::Path;

use rusqlite::Connection;
use sha2::{Digest, Sha256};

use crate::sources::sqlite;

/// Bumped when the schema changes; an older store is upgraded in place where a step below says
/// how, else rebuilt from the repositories.
pub const SCHEMA_VERSION: i64 = 2;

pub const SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS roots(root TEXT PRIMARY KEY, indexed_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(
    id INTEGER PRIMARY KEY,
    root TEXT NOT NULL,
    path TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    chunks INTEGER NOT NULL,
    lines INTEGER NOT NULL,
    UNIQUE(root, path)
);
CREATE TABLE IF NOT EXISTS chunks(
    id INTEGER PRIMARY KEY,
    chunk_id TEXT NOT NULL UNIQUE,
    file_id INTEGER NOT NULL,
    root TEXT NOT NULL,
    path TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    source_kind TEXT NOT NULL,
    symbol TEXT,
    symbol_kind TEXT,
    text TEXT NOT NULL,
    terms TEXT NOT NULL,
    sym_terms TEXT NOT NULL,
    path_terms TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_file ON chunks(file_id, start_line);
CREATE INDEX IF NOT EXISTS files_path ON files(path);
CREATE TABLE IF NOT EXISTS lexical_pending(key INTEGER PRIMARY KEY);
"#;

/// Schema 1 → 2: the full-text index leaves FTS5 for Tantivy (`sources::lexical`), made anew
/// from the stored chunks on the next run.
fn upgrade_from_1(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(
        "DROP TABLE IF EXISTS chunks_fts;
         CREATE TABLE IF NOT EXISTS lexical_pending(key INTEGER PRIMARY KEY);",
    )
}

/// Open (creating if needed) the store for writing. Only the indexer calls this.
pub fn open_rw(path: &Path) -> rusqlite::Result<Connection> {
    sqlite::open_owned(
        path,
        SCHEMA,
        SCHEMA_VERSION,
        &[(1, upgrade_from_1)],
        "DROP TABLE IF EXISTS chunks_fts; DROP TABLE IF EXISTS chunks;
         DROP TABLE IF EXISTS files; DROP TABLE IF EXISTS roots; DROP TABLE IF EXISTS meta;
         DROP TABLE IF EXISTS lexical_pending;",
    )
}

pub use crate::sources::sqlite::{meta_get, meta_set, open_ro};

/// Fingerprint of the indexed content: every file's (root, path, content hash), in order. It
/// changes exactly when indexed content changes; a no-op re-index keeps it.
pub fn compute_index_rev(conn: &Connection) -> rusqlite::Result<String> {
    let mut stmt = conn.prepare("SELECT root, path, sha256 FROM files ORDER BY root, path")?;
    let mut rows = stmt.query([])?;
    let mut h = Sha256::new();
    while let Some(r) = rows.next()? {
        for i in 0..3 {
            let v: String = r.get(i)?;
            h.update(v.as_bytes());
            h.update([0u8]);
        }
    }
    let digest = h.finalize();
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    Ok(format!("code:{hex}"))
}

/// Hex SHA-256 of file content.
pub fn content_hash(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
