//! Sources: each store's indexer (its only writer) and its read-only reader.

pub mod actor_id;
pub mod agent_db;
pub mod agent_knowledge;
pub mod code;
pub mod episodes;
pub mod lexical;
pub mod packed;
pub mod pid;
pub mod regular_file;
pub mod sql_cell;
pub mod sqlite;
pub mod stored_kinds;
pub mod vectors;

/// How a lane's reason begins when it is empty because nothing it holds is about the question
/// (the details follow a colon); the budget cuts such a reason to these words first.
pub const NOTHING_RELEVANT: &str = "nothing relevant";
