//! Sources: each store's indexer (its only writer) and its read-only reader.

pub mod actor_id;
pub mod agent_knowledge;
pub mod code;
pub mod episodes;
pub mod fts;
pub mod packed;
pub mod regular_file;
pub mod sqlite;
pub mod vectors;
