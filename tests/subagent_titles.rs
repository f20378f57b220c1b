//! A subagent's title is its task description on every Claude Code layout: older transcripts
//! have no `.meta.json`, and the description is in the parent's `Task` call, linked to the
//! subagent by the tool result's `agentId` (issue 19). Read from the shared real transcripts.

mod common;

use knowledge::contract::SearchRequest;
use knowledge::engine::{Engine, EngineConfig};

#[test]
fn an_older_subagent_without_a_sidecar_is_titled_by_its_task_description() {
    let Some(root) = common::realdata::path("claude/marot-spotter") else {
        return;
    };
    let tmp = tempfile::tempdir().expect("temp dir");
    let data = tmp.path().join("data");
    let plan = knowledge::indexing::IndexPlan {
        sessions: vec![root],
        code: Vec::new(),
        skills: Vec::new(),
        agents: Vec::new(),
        rebuild: false,
    };
    knowledge::indexing::index_all(&data, &plan, &mut |_| {}).expect("index");
    let engine = Engine::open(EngineConfig::new(&data));
    let resp = engine.search(&SearchRequest::new(
        "which subagent checked the OTEL hex package versions",
    ));
    let sub = resp
        .actors
        .iter()
        .find(|a| a.actor_id.contains(":subagent:ae4a77f8"))
        .unwrap_or_else(|| panic!("no subagent actor: {:?}", resp.actors));
    assert_eq!(
        sub.title.as_deref(),
        Some("Check OTEL hex package versions")
    );
}
