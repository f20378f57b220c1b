//! The lane conformance suite (`common::conformance`) run against every source behind a lane
//! that needs no server: the built-in stores over the indexed demo world, and the external MCP
//! fakes (a session-query and a RAGRAF server speaking real MCP over stdio). The team's
//! PostgreSQL source runs the same suite in `tests/team_postgres.rs`.

mod common;

use std::time::Duration;

use common::conformance;
use common::fake_mcp::fake;
use knowledge::adapters::mcp::{McpCodeSource, McpEpisodesSource};

/// Not a test when run normally: with `KNOWLEDGE_FAKE_MCP` set, this process is a fake server.
#[test]
fn fake_server() {
    common::fake_mcp::serve_if_asked();
}

#[test]
fn the_builtin_episodes_source_conforms() {
    let engine = common::world::demo().engine();
    conformance::episodes(&*engine.builtin().episodes, "MySQL access");
}

#[test]
fn the_builtin_code_source_conforms() {
    let engine = common::world::demo().engine();
    conformance::code(&*engine.builtin().code, "mysql connection config");
}

#[test]
fn the_builtin_skills_source_conforms() {
    let engine = common::world::demo().engine();
    conformance::skills(&*engine.builtin().skills, "BOM CRLF");
}

#[test]
fn the_mcp_session_query_source_conforms() {
    let tmp = tempfile::tempdir().expect("tmp");
    let src = McpEpisodesSource::new(&fake("normal", &tmp, "ep"), Duration::from_secs(5));
    conformance::episodes(&src, "MySQL access");
}

#[test]
fn the_mcp_ragraf_source_conforms() {
    let tmp = tempfile::tempdir().expect("tmp");
    let src = McpCodeSource::new(&fake("normal", &tmp, "code"), Duration::from_secs(5));
    conformance::code(&src, "mysql connection");
}

/// The layered lane (built-in first, then the external source) is a source like any other.
#[test]
fn a_layered_lane_conforms() {
    let tmp = tempfile::tempdir().expect("tmp");
    let mut engine = common::world::demo().engine();
    let (episodes, code) = knowledge::adapters::mcp::wire(
        &knowledge::config::SourcesConfig {
            episodes: Some(fake("normal", &tmp, "lep")),
            code: Some(fake("normal", &tmp, "lcode")),
        },
        Duration::from_secs(5),
    );
    engine.attach(episodes, code, None);
    conformance::episodes(&*engine.episodes, "MySQL access");
    conformance::code(&*engine.code, "mysql connection");
}
