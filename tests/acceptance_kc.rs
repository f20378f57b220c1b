//! The contract's acceptance criteria KC-1…KC-13 (§13), one test each, on this machine's
//! indexes over the demo world. The assertions are `common::kc`'s, shared with the team index
//! (`tests/team_kc.rs`).

mod common;

use common::kc::{self, Local};

#[test]
fn kc01_valid_request_has_schema_routing_lanes_and_fusion() {
    kc::kc01_valid_request_has_schema_routing_lanes_and_fusion(&Local::shared());
}

#[test]
fn kc02_both_sources_alive_give_both_lanes_unmixed() {
    kc::kc02_both_sources_alive_give_both_lanes_unmixed(&Local::shared());
}

#[test]
fn kc03_code_source_down_degrades_only_the_code_lane() {
    kc::kc03_code_source_down_degrades_only_the_code_lane(&Local::shared());
}

#[test]
fn kc04_episodes_source_down_degrades_only_the_episodes_lane() {
    kc::kc04_episodes_source_down_degrades_only_the_episodes_lane(&Local::shared());
}

#[test]
fn kc05_both_sources_down_found_false_no_source_no_items() {
    kc::kc05_both_sources_down_found_false_no_source_no_items(&Local::shared());
}

#[test]
fn kc06_every_item_has_its_locator() {
    kc::kc06_every_item_has_its_locator(&Local::shared());
}

#[test]
fn kc07_actor_evidence_names_only_items_in_the_response() {
    kc::kc07_actor_evidence_names_only_items_in_the_response(&Local::shared());
}

#[test]
fn kc08_rrf_weights_apply_and_equal_ranks_order_stably() {
    kc::kc08_rrf_weights_apply_and_equal_ranks_order_stably(&Local::shared());
}

#[test]
fn kc09_budget_is_never_exceeded_and_truncation_is_honest() {
    kc::kc09_budget_is_never_exceeded_and_truncation_is_honest(&Local::shared());
}

#[test]
fn kc10_workspace_filter_never_leaks_other_sessions_or_paths() {
    kc::kc10_workspace_filter_never_leaks_other_sessions_or_paths(&Local::shared());
}

#[test]
fn kc11_secret_canaries_never_appear_in_responses_logs_or_stores() {
    kc::kc11_secret_canaries_never_appear_in_responses_logs_or_stores(&Local::fresh());
}

#[test]
fn kc12_same_request_twice_gives_the_same_bytes() {
    kc::kc12_same_request_twice_gives_the_same_bytes(&Local::shared());
}

#[test]
fn kc13_searching_and_dispatching_never_write_the_episodes_or_code_stores() {
    kc::kc13_searching_and_dispatching_never_write_the_episodes_or_code_stores(&Local::fresh());
}
