//! `knowledge`: who fixed what, where is it in the code, which skill applies.
//!
//! One engine answers from three independent layers and never mixes their evidence:
//!
//! ```text
//!  request JSON ─► contract::validate ─► route ─► lanes (concurrent, per-lane timeout)
//!                                                  ├─ episodes (L1: sessions, session_id+seq)
//!                                                  ├─ code     (L2: chunks, path+start_line)
//!                                                  └─ skills   (L3: derived, links into L1/L2)
//!                                                          │
//!                          fusion (per-lane caps and dedup, then RRF k=60, inside each lane)
//!                                                          │
//!  response JSON ◄─ budget (redact, clip) ◄─ response ◄─ limit ◄─ actors ◄─ L3 lookup
//! ```
//!
//! Each stage is one function, named in `engine::search`'s module doc.
//!
//! The front ends (CLI, TUI, MCP server) live in the binary and only translate. Nothing in the
//! engine, the built-in sources, the text handling or the contract knows about terminals,
//! clipboards, argument parsing or MCP transport: external MCP sources are adapters
//! (`adapters::mcp`) attached behind the lane traits by [`open_engine`].

pub mod adapters;
pub mod config;
pub mod contract;
pub mod demo;
pub mod engine;
pub mod health;
pub mod indexing;
pub mod lanes;
pub mod saved_plan;
pub mod sources;
pub mod team;
pub mod text;
pub mod watch;
mod wiring;

pub use wiring::open_engine;
