//! Session gists on the demo world: a question in other words finds the session it is about
//! first, a question about something the world does not hold gets an empty episodes lane that
//! says "nothing relevant" instead of the nearest events, and an event holding every word of
//! the query is never dropped or pushed below partial matches.

mod common;

use knowledge::contract::{SearchRequest, SearchResponse};
use knowledge::engine::{Engine, EngineConfig};

/// The healthcheck session: `cmd/healthcheck` exited 0 when the API was down (webshop, Codex).
const HEALTHCHECK: &str = "01a11216-3e10-7267-81d9-a3d9621ace36";
/// The session that fixed `getUserName` (webshop, Claude Code).
const USER_NAME: &str = "72f73b62-6702-4310-8954-f664eb5b1c87";

fn demo() -> &'static common::world::Indexed {
    static WORLD: std::sync::OnceLock<common::world::Indexed> = std::sync::OnceLock::new();
    WORLD.get_or_init(|| common::world::fresh_demo_with_config("[search]\nsemantic = true\n"))
}

fn engine(semantic: bool) -> Engine {
    Engine::open(EngineConfig {
        semantic,
        // What is found, not how fast: a debug build on a busy machine may be slow.
        lane_timeout: std::time::Duration::from_secs(20),
        ..EngineConfig::load(&demo().data_dir).expect("config")
    })
}

fn search(engine: &Engine, q: &str) -> SearchResponse {
    let mut req = SearchRequest::new(q);
    req.max_tokens = 20_000;
    engine.search(&req)
}

fn sessions(resp: &SearchResponse) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for it in &resp.lanes.episodes.items {
        let root = it
            .session_id
            .split('/')
            .next()
            .unwrap_or_default()
            .to_string();
        if !out.contains(&root) {
            out.push(root);
        }
    }
    out
}

#[test]
fn a_question_in_other_words_finds_its_session_first() {
    // The session says "healthcheck exits 0", "k8s never restarts the pod"; the question shares
    // none of those words.
    let resp = search(
        &engine(true),
        "the liveness check kept claiming success although the backend was unreachable",
    );
    let found = sessions(&resp);
    assert_eq!(
        found.first().map(String::as_str),
        Some(HEALTHCHECK),
        "{found:?}"
    );
}

#[test]
fn a_question_about_nothing_in_the_world_gets_an_empty_lane_with_its_reason() {
    let resp = search(
        &engine(true),
        "who tuned the telescope mirror alignment at the observatory",
    );
    assert!(
        resp.lanes.episodes.items.is_empty(),
        "{:?}",
        sessions(&resp)
    );
    let reason = resp.lanes.episodes.header.degradation_reason.as_deref();
    assert!(
        reason.is_some_and(|r| r.starts_with("nothing relevant")),
        "{reason:?}"
    );
    // Lexical search alone (no gists) has no such judgement: it returns what shares a word or
    // nothing, and says "no match" then.
    let lexical = search(
        &engine(false),
        "who tuned the telescope mirror alignment at the observatory",
    );
    let reason = lexical.lanes.episodes.header.degradation_reason.as_deref();
    assert!(
        reason.is_none_or(|r| !r.starts_with("nothing relevant")),
        "{reason:?}"
    );
}

#[test]
fn an_event_holding_every_word_of_the_query_is_never_dropped() {
    for q in ["getUserName undefined", "getUserName"] {
        let found = sessions(&search(&engine(true), q));
        assert_eq!(
            found.first().map(String::as_str),
            Some(USER_NAME),
            "{q}: {found:?}"
        );
    }
}

/// The Codex session whose test `test_metadata_carries_cart_id` was written (webshop).
const CART_ID_TEST: &str = "01a18cf0-e540-7a8a-bab5-dbaa21394216";

#[test]
fn a_question_naming_a_rare_identifier_among_ordinary_words_finds_its_session_first() {
    // One identifier only that session holds, in a question whose other words it never said:
    // the vector and gist arms point elsewhere, the identifier decides.
    let q = "which conversation touched test_metadata_carries_cart_id while somebody grumbled \
             about weekend parcels arriving late and a broken printer";
    let found = sessions(&search(&engine(true), q));
    assert_eq!(
        found.first().map(String::as_str),
        Some(CART_ID_TEST),
        "{found:?}"
    );
    // Without the identifier the same words find nothing of that session first.
    let plain = "which conversation touched while somebody grumbled about weekend parcels \
                 arriving late and a broken printer";
    let found = sessions(&search(&engine(true), plain));
    assert_ne!(
        found.first().map(String::as_str),
        Some(CART_ID_TEST),
        "{found:?}"
    );
}
