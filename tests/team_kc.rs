//! The contract's acceptance criteria KC-1…KC-13 (§13) against the team index: the demo world
//! pushed to a real PostgreSQL (`common::team_world`) and searched from a lead's data dir with
//! no index of its own (`--team-only`). The assertions are `common::kc`'s, the same ones
//! `tests/acceptance_kc.rs` holds this machine's indexes to. Skipped with a visible message only
//! where the PostgreSQL binaries are absent (failed there with `KNOWLEDGE_REQUIRE_POSTGRES` set,
//! as `.ci/run` sets it).

mod common;

use common::kc;
use common::team_world::Team;

#[test]
fn kc01_valid_request_has_schema_routing_lanes_and_fusion() {
    let Some(team) = Team::shared() else { return };
    kc::kc01_valid_request_has_schema_routing_lanes_and_fusion(team);
}

#[test]
fn kc02_both_sources_alive_give_both_lanes_unmixed() {
    let Some(team) = Team::shared() else { return };
    kc::kc02_both_sources_alive_give_both_lanes_unmixed(team);
}

#[test]
fn kc03_code_source_down_degrades_only_the_code_lane() {
    let Some(team) = Team::shared() else { return };
    kc::kc03_code_source_down_degrades_only_the_code_lane(team);
}

#[test]
fn kc04_episodes_source_down_degrades_only_the_episodes_lane() {
    let Some(team) = Team::shared() else { return };
    kc::kc04_episodes_source_down_degrades_only_the_episodes_lane(team);
}

#[test]
fn kc05_both_sources_down_found_false_no_source_no_items() {
    let Some(team) = Team::shared() else { return };
    kc::kc05_both_sources_down_found_false_no_source_no_items(team);
}

#[test]
fn kc06_every_item_has_its_locator() {
    let Some(team) = Team::shared() else { return };
    kc::kc06_every_item_has_its_locator(team);
}

#[test]
fn kc07_actor_evidence_names_only_items_in_the_response() {
    let Some(team) = Team::shared() else { return };
    kc::kc07_actor_evidence_names_only_items_in_the_response(team);
}

#[test]
fn kc08_rrf_weights_apply_and_equal_ranks_order_stably() {
    let Some(team) = Team::shared() else { return };
    kc::kc08_rrf_weights_apply_and_equal_ranks_order_stably(team);
}

#[test]
fn kc09_budget_is_never_exceeded_and_truncation_is_honest() {
    let Some(team) = Team::shared() else { return };
    kc::kc09_budget_is_never_exceeded_and_truncation_is_honest(team);
}

#[test]
fn kc10_workspace_filter_never_leaks_other_sessions_or_paths() {
    let Some(team) = Team::shared() else { return };
    kc::kc10_workspace_filter_never_leaks_other_sessions_or_paths(team);
}

#[test]
fn kc11_secret_canaries_never_appear_in_responses_logs_or_stores() {
    let Some(team) = Team::fresh() else { return };
    kc::kc11_secret_canaries_never_appear_in_responses_logs_or_stores(&team);
}

#[test]
fn kc12_same_request_twice_gives_the_same_bytes() {
    let Some(team) = Team::shared() else { return };
    kc::kc12_same_request_twice_gives_the_same_bytes(team);
}

#[test]
fn kc13_searching_and_dispatching_never_write_the_episodes_or_code_stores() {
    let Some(team) = Team::fresh() else { return };
    kc::kc13_searching_and_dispatching_never_write_the_episodes_or_code_stores(&team);
}
