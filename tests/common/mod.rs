//! Helpers shared by the integration tests (`mod common;`).
#![allow(dead_code)]

pub mod agent_home;
pub mod cli;
pub mod conformance;
pub mod fake_mcp;
pub mod kc;
pub mod needs;
pub mod pg;
pub mod realdata;
pub mod schema;
pub mod team_db;
pub mod team_world;
pub mod tmux;
pub mod watching;
pub mod world;
