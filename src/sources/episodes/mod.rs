//! The episodes lane (L1): past coding-agent sessions, located by `session_id` + `seq`.
//!
//! Each agent's reader (`claude`, `codex`, …) implements the one interface in [`agent`] and is
//! listed in the registry [`agents`]; readers push the [`model`] types into a sink and know
//! nothing of SQLite. Storage (`prepare`, `index`) and search (`search`) know nothing of formats.

pub mod agent;
pub mod agents;
pub mod bounds;
pub mod claude;
pub mod codex;
pub mod discover;
mod identity;
pub mod index;
pub mod lines;
pub mod model;
pub mod outcome;
pub mod parser;
pub mod prepare;
pub mod search;
mod semantic;
pub mod store;
mod tool_text;
