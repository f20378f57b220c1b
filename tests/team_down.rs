//! A team server that stops while a front end runs (issue 20): the team source degrades with
//! `KNOWLEDGE_SOURCE_UNAVAILABLE`, the local lanes keep answering, and when the server is back
//! the next search connects again. Its own test binary: it stops the cluster the other team
//! tests of a binary share.

mod common;

use common::kc::Local;
use common::team_world::{team_engine, Team, MACHINE};
use knowledge::contract::{Code, SearchRequest, SearchResponse};

fn search(engine: &knowledge::engine::Engine) -> SearchResponse {
    let mut req = SearchRequest::new("mysql connection config timeout");
    req.limit = 50;
    req.max_tokens = 20_000;
    let resp = engine.search(&req);
    let doc = serde_json::to_value(&resp).expect("json");
    common::schema::validate("knowledge_search.v1.schema.json", "response", &doc)
        .unwrap_or_else(|e| panic!("{e}\n{doc:#}"));
    resp
}

fn team_items(resp: &SearchResponse) -> usize {
    resp.lanes
        .episodes
        .items
        .iter()
        .filter(|i| i.session.machine.as_deref() == Some(MACHINE))
        .count()
}

#[test]
fn a_stopped_server_degrades_the_team_source_and_a_restarted_one_answers_again() {
    let Some(team) = Team::push(Local::shared(), "down") else {
        return;
    };
    // This machine's own world: a small synthetic one (none of the team's sessions).
    let (_tmp, data) = common::team_db::synthetic(24, 16, common::world::GENEROUS_LANES);
    let engine = team_engine(&data, &team.url, false);

    let up = search(&engine);
    assert!(team_items(&up) > 0, "the team answers while it is up");
    let local = up.lanes.episodes.items.len() - team_items(&up);
    assert!(local > 0, "and so does this machine's index");

    team.cluster.stop();
    let down = search(&engine);
    team.cluster.restart();
    assert_eq!(team_items(&down), 0);
    assert!(
        !down.lanes.episodes.items.is_empty(),
        "the local lane keeps answering"
    );
    assert!(down.lanes.episodes.header.degraded);
    assert!(down.found);
    assert!(
        down.warnings
            .iter()
            .any(|w| w.code == Code::SourceUnavailable && w.lane.as_deref() == Some("episodes")),
        "{:?}",
        down.warnings
    );
    assert!(down.errors.iter().all(|e| e.code != Code::NoSource));

    let back = search(&engine);
    assert!(team_items(&back) > 0, "the next search connects again");
    assert!(!back.lanes.episodes.header.degraded);
}
