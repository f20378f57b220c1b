//! The episodes lane (L1): past coding-agent sessions, located by `session_id` + `seq`.
//!
//! Each agent's reader (`claude`, `codex`, …) implements the one interface in [`agent`] and is
//! listed in the registry [`agents`]; readers push the [`model`] types into a sink and know
//! nothing of SQLite. Storage (`prepare`, `index`) and search (`search`) know nothing of formats.

pub mod activity;
pub mod agent;
pub mod agents;
pub mod aider;
pub mod amp;
pub mod bounds;
pub mod claude;
pub mod codex;
pub mod continue_dev;
mod conversation;
pub mod copilot;
pub mod crush;
pub mod cursor;
pub mod discover;
pub mod failed_stores;
pub mod gemini;
pub mod gist;
pub mod goose;
mod identity;
pub mod iflow;
pub mod index;
pub mod kilo;
pub mod kimi;
pub mod kimi_code;
mod lexical_arm;
mod lexical_sync;
pub mod line_rules;
pub mod lines;
mod merge;
pub mod messages;
pub mod meta_redact;
pub mod model;
pub mod opencode;
pub mod openhands;
pub mod outcome;
pub mod parser;
pub mod pi;
pub mod prepare;
pub mod qwen;
mod rare;
mod rerank;
pub mod search;
mod semantic;
pub mod store;
mod tool_text;
pub mod vscode_tasks;
pub mod zed;
