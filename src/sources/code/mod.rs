//! The code lane (L2): the built-in code index, located by `path` + `start_line`.
//!
//! `index_code` (the only writer of `code.sqlite`) walks repository roots, chunks each file —
//! by symbol with tree-sitter where a grammar exists, by heading for Markdown, by key or section
//! for config files, by window otherwise — redacts secrets and stores the chunks with stemmed
//! terms, from which its full-text index (`lexical_docs`) is derived. [`CodeStore`] opens the
//! store read-only and answers `search` (BM25 with name boosts, workspace/path/time filters,
//! freshness of the returned files), `read_code`, `stats` and `roots`. Walking (`walk`, `lang`), chunking (`chunk`, `syntax`, `textual`), storage
//! (`store`, `index`) and reading (`search`, `read`) are kept apart.

pub mod chunk;
pub mod index;
pub mod lang;
mod lexical_docs;
pub mod model;
#[cfg(test)]
mod perf;
pub mod read;
pub mod relevant;
pub mod search;
mod semantic;
pub mod store;
pub mod syntax;
pub mod textual;
pub mod walk;

pub use index::index_code;
pub use model::{
    Chunk, ChunkHit, ChunkRef, CodeIndexError, CodeIndexOptions, CodeIndexProgress,
    CodeIndexSummary, CodeLines, CodeQuery, CodeSearch, CodeStats, CodeStoreError, Freshness,
};
pub use search::CodeStore;
