//! The code lane's public data types: what the indexer takes and reports, what a chunk is, and
//! what the read-only store answers. Kept apart from the logic so the engine and front ends can
//! depend on the shapes without pulling in tree-sitter or SQLite details.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use crate::contract::Capability;

/// A piece of a file that is searched and cited as `path:start_line-end_line`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Chunk {
    /// Stable id: the same chunk text at the same place (symbol or window) keeps its id.
    pub chunk_id: String,
    /// Path relative to `root`, with `/` separators.
    pub path: String,
    /// The repository root as given to the indexer (absolute, canonical).
    pub root: String,
    /// 1-based, inclusive.
    pub start_line: u64,
    /// 1-based, inclusive.
    pub end_line: u64,
    /// `symbol`, `doc`, `config` or `window`.
    pub source_kind: String,
    /// Qualified name (`Config::connect`, `CartService.getUserName`), heading, key or section.
    pub symbol: Option<String>,
    /// `function`, `method`, `class`, `struct`, `impl`, `trait`, `interface`, `section`, `key`…
    pub symbol_kind: Option<String>,
    /// The chunk's lines, already redacted.
    pub text: String,
}

/// How the code indexer behaves; [`Default`] suits real repositories.
#[derive(Debug, Clone)]
pub struct CodeIndexOptions {
    /// Files larger than this are skipped (`too_large`).
    pub max_file_bytes: u64,
    /// Lines per window chunk.
    pub window_lines: usize,
    /// Lines shared by consecutive windows.
    pub window_overlap: usize,
    /// A symbol longer than this is split into windows that keep its name.
    pub symbol_max_lines: usize,
    /// Extra directory names skipped as vendored (on top of the built-in list).
    pub extra_skip_dirs: Vec<String>,
    /// Directories never walked, by canonical path: the data dir itself, when it sits inside a
    /// repository, so the indexes never index their own stores and logs.
    pub exclude_dirs: Vec<PathBuf>,
    /// Embed each stored chunk for the vector arm while indexing (`[search] semantic`).
    pub semantic: bool,
}

impl Default for CodeIndexOptions {
    fn default() -> Self {
        CodeIndexOptions {
            max_file_bytes: 1024 * 1024,
            window_lines: 40,
            window_overlap: 5,
            symbol_max_lines: 150,
            extra_skip_dirs: Vec::new(),
            exclude_dirs: Vec::new(),
            semantic: false,
        }
    }
}

/// What one indexing run did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CodeIndexSummary {
    /// The roots walked, canonical.
    pub roots: Vec<String>,
    /// Candidate files found under the roots (after the skips by name, size and ignore rules;
    /// binaries found by content are counted here and under `skipped`).
    pub files_seen: u64,
    pub files_new: u64,
    pub files_changed: u64,
    pub files_unchanged: u64,
    /// Files removed from the index: gone from disk or no longer indexable.
    pub files_deleted: u64,
    /// Skipped entries by reason: `ignored`, `vendored`, `generated`, `binary`, `too_large`,
    /// `unreadable`.
    pub skipped: BTreeMap<String, u64>,
    /// Files that were not valid UTF-8 and were indexed lossily.
    pub lossy_utf8: u64,
    /// Files whose grammar failed and were chunked by window instead.
    pub parse_fallbacks: u64,
    /// Roots or files that could not be read, with the reason.
    pub failed: Vec<(String, String)>,
    /// Chunks written in this run.
    pub chunks_written: u64,
    /// Totals over the indexed files under the walked roots, after the run.
    pub chunks: u64,
    pub lines: u64,
    pub bytes: u64,
    /// Bytes read from disk in this run.
    pub bytes_read: u64,
    /// Secret values replaced in this run.
    pub secrets_redacted: u64,
    pub elapsed_ms: u64,
    pub index_rev: String,
}

/// Progress of a run, reported after each file.
#[derive(Debug, Clone)]
pub struct CodeIndexProgress {
    pub done: u64,
    pub total: u64,
    pub bytes_done: u64,
    pub bytes_total: u64,
    /// Root-relative path of the file just handled.
    pub path: String,
}

#[derive(Debug, thiserror::Error)]
pub enum CodeIndexError {
    #[error("cannot open or write the code index {path}: {source}")]
    Store {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error("cannot keep the full-text index of {path} in step: {source}")]
    Lexical {
        path: PathBuf,
        #[source]
        source: crate::sources::lexical::sync::SyncError,
    },
}

/// What the code lane asks the store.
#[derive(Debug, Clone, Default)]
pub struct CodeQuery {
    /// Stemmed query terms (`text::tokens::query_terms`); anything else is made literal.
    pub terms: Vec<String>,
    /// Repository roots, or folders inside a root; path-boundary matching.
    pub workspaces: Vec<String>,
    /// Prefixes (at a `/` boundary) of the root-relative path, or absolute prefixes.
    pub paths: Vec<String>,
    /// Bounds on the file's modification time, in ms since the epoch.
    pub since_ms: Option<i64>,
    pub until_ms: Option<i64>,
    pub limit: usize,
    pub snippet_chars: usize,
    /// The query's text vector for the vector arm; `None` searches lexically only.
    pub vector: Option<crate::text::embed::Vector>,
}

/// One matching chunk.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChunkHit {
    pub chunk_id: String,
    pub path: String,
    pub root: String,
    pub start_line: u64,
    pub end_line: u64,
    pub source_kind: String,
    pub symbol: Option<String>,
    pub symbol_kind: Option<String>,
    /// BM25 with the name boosts applied; higher is better.
    pub score: f64,
    /// `lex: <term>`, `symbol: <name>`, `path: <term>`, `bm25: <raw>`, `vec: <cosine>`.
    pub why: Vec<String>,
    pub snippet: String,
    /// The file's modification time when indexed (RFC 3339, UTC).
    pub mtime: String,
    pub mtime_ms: i64,
}

/// The store's answer to a query.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CodeSearch {
    pub index_rev: Option<String>,
    /// `full` when the vector arm ran beside the lexical one, else `lexical`.
    pub capability: Capability,
    /// True when a file of a returned hit changed or vanished after indexing.
    pub stale: bool,
    /// `root/path` of those files.
    pub stale_paths: Vec<String>,
    pub hits: Vec<ChunkHit>,
    /// Why the lane is empty when nothing in the code is about the query.
    pub nothing_relevant: Option<String>,
}

/// How the freshness of returned lines was checked: the code lane's own `freshness` block.
pub use crate::contract::Freshness;

/// A chunk that overlaps a [`CodeLines`] range.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChunkRef {
    pub chunk_id: String,
    pub start_line: u64,
    pub end_line: u64,
    pub source_kind: String,
    pub symbol: Option<String>,
    pub symbol_kind: Option<String>,
}

/// Lines of an indexed file, as `read_code` returns them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CodeLines {
    pub root: String,
    pub path: String,
    pub start_line: u64,
    /// Last line returned (0 when no line is in range).
    pub end_line: u64,
    /// Lines of the file as read (from disk, or rebuilt from the index when the file is gone).
    pub total_lines: u64,
    /// Redacted lines `start_line..=end_line`.
    pub lines: Vec<String>,
    /// `disk` or, when the file no longer exists, `index`.
    pub read_from: String,
    /// Values redacted in the returned lines.
    pub redacted: u64,
    pub index_rev: Option<String>,
    pub freshness: Freshness,
    pub chunks: Vec<ChunkRef>,
}

/// Coverage of the code index.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CodeStats {
    pub index_rev: Option<String>,
    pub files: u64,
    pub chunks: u64,
    pub roots: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum CodeStoreError {
    #[error("the code index {0} does not exist yet; run `knowledge index`")]
    Missing(PathBuf),
    #[error("the code index cannot be read: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error(transparent)]
    Lexical(#[from] crate::sources::lexical::LexicalError),
    #[error("{0} is not in the code index")]
    NotIndexed(String),
    #[error("{path} is indexed under several roots ({roots}); give an absolute path")]
    Ambiguous { path: String, roots: String },
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}
