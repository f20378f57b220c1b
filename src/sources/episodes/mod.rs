//! The episodes lane (L1): past coding-agent sessions, located by `session_id` + `seq`.
//!
//! Parsing (`claude`, `codex`, `lines`, `discover`) is kept apart from storage (`index`) and
//! search (`search`): parsers emit the [`model`] types and know nothing of SQLite.

pub mod activity;
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
