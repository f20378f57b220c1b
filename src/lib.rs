//! `knowledge`: who fixed what, where is it in the code, which skill applies.
//!
//! One engine answers from three independent layers and never mixes their evidence:
//!
//! ```text
//!  request JSON ─► contract::validate ─► engine::route ─► lanes (concurrent, per-lane timeout)
//!                                                          ├─ episodes (L1: sessions, session_id+seq)
//!                                                          ├─ code     (L2: chunks, path+start_line)
//!                                                          └─ skills   (L3: derived, links into L1/L2)
//!                  response JSON ◄─ budget ◄─ redact ◄─ actors ◄─ fuse (RRF, k=60)
//! ```
//!
//! The front ends (CLI, TUI, MCP) live in the binary and only translate; nothing in this library
//! knows about terminals, clipboards, argument parsing or MCP transport.

pub mod config;
pub mod contract;
pub mod demo;
pub mod engine;
pub mod indexing;
pub mod sources;
pub mod text;
