//! Property tests of the fusion and budget invariants (contract §4.1, §7, §8), over generated
//! requests on the demo world: whatever the query, mode, limit, budget and snippet length, the
//! response keeps every invariant.

mod common;

use knowledge::contract::{Code, Mode, SearchRequest, SearchResponse};
use knowledge::engine::budget::estimate_tokens;
use knowledge::engine::items::order;
use proptest::prelude::*;

const WORDS: &[&str] = &[
    "кто",
    "чинил",
    "доступ",
    "MySQL",
    "176.99.5.35",
    "who",
    "fixed",
    "getUserName",
    "where",
    "connection",
    "skill",
    "BOM",
    "CRLF",
    "stripe",
    "webhook",
    "signature",
    "деплой",
    "почему",
    "encoding-janitor",
    "cart",
    "total",
    "migration",
    "grant",
    "\"quoted\"",
    "NEAR(",
    "OR",
    "*",
    "-x",
    "a:b",
    "backup",
    "S3",
    "token",
];

fn query() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(WORDS), 1..6).prop_map(|w| w.join(" "))
}

fn mode() -> impl Strategy<Value = Mode> {
    prop::sample::select(Mode::ALL.to_vec())
}

/// The response says even its skeleton did not fit (not just that the limit was lowered).
fn over_budget(resp: &SearchResponse) -> bool {
    resp.warnings
        .iter()
        .any(|w| w.code == Code::BudgetExceeded && w.message.contains("cannot hold"))
}

/// Items of a lane named as the routing names it.
fn lane_len(resp: &SearchResponse, lane: &str) -> usize {
    resp.lane_ids(knowledge::contract::Lane::parse(lane).expect("a lane"))
        .len()
}

fn o200k(text: &str) -> usize {
    static BPE: std::sync::OnceLock<tiktoken_rs::CoreBPE> = std::sync::OnceLock::new();
    BPE.get_or_init(|| tiktoken_rs::o200k_base().expect("o200k"))
        .encode_with_special_tokens(text)
        .len()
}

fn check_invariants(req: &SearchRequest, resp: &SearchResponse) -> Result<(), TestCaseError> {
    let text = serde_json::to_string(resp).expect("json");
    let over = over_budget(resp);
    if !over {
        prop_assert!(estimate_tokens(&text) <= req.max_tokens as usize);
    }
    prop_assert_eq!(
        resp.limits.truncated,
        over || !resp.limits.dropped.is_empty()
    );
    let returned = resp.lanes.episodes.items.len()
        + resp.lanes.code.items.len()
        + resp.lanes.skills.as_ref().map_or(0, |s| s.items.len());
    prop_assert_eq!(resp.limits.returned as usize, returned);
    prop_assert!(resp.lanes.episodes.items.len() <= req.limit as usize);
    prop_assert!(resp.lanes.code.items.len() <= req.limit as usize);
    prop_assert!(resp.actors.len() <= req.limit as usize);
    // Lanes are ordered (invariant 10) and ids are unique within a lane.
    let eps: Vec<_> = resp.lanes.episodes.items.iter().collect();
    for w in eps.windows(2) {
        prop_assert!(
            order(
                (w[0].score, w[0].time.as_deref(), &w[0].id),
                (w[1].score, w[1].time.as_deref(), &w[1].id)
            ) != std::cmp::Ordering::Greater
        );
    }
    let mut ids: Vec<&str> = eps.iter().map(|i| i.id.as_str()).collect();
    ids.sort();
    ids.dedup();
    prop_assert_eq!(ids.len(), eps.len());
    for w in resp.lanes.code.items.windows(2) {
        prop_assert!(w[0].score >= w[1].score);
    }
    for w in resp.actors.windows(2) {
        prop_assert!(w[0].score >= w[1].score);
    }
    // Evidence only names items in the response (invariant 5).
    for a in &resp.actors {
        prop_assert!(!a.evidence.is_empty());
        for e in &a.evidence {
            let found = match e.lane.as_str() {
                "episodes" => resp.lanes.episodes.items.iter().any(|i| i.id == e.id),
                "code" => resp.lanes.code.items.iter().any(|i| i.id == e.id),
                _ => resp
                    .lanes
                    .skills
                    .iter()
                    .any(|s| s.items.iter().any(|i| i.id == e.id)),
            };
            prop_assert!(found, "{} cites missing {}", a.actor_id, e.id);
        }
    }
    // Snippets respect snippet_chars; locator provenance drops them all.
    for it in &resp.lanes.episodes.items {
        if let Some(s) = &it.snippet {
            prop_assert!(s.chars().count() <= req.snippet_chars as usize);
        }
    }
    prop_assert_eq!(resp.fusion.k, 60);
    prop_assert_eq!(resp.fusion.strategy.as_str(), "rrf");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn fusion_and_budget_invariants_hold_for_any_request(
        q in query(),
        mode in mode(),
        limit in 1u32..=50,
        max_tokens in 500u32..=20_000,
        snippet_chars in 80u32..=1000,
        locator in any::<bool>(),
    ) {
        let engine = common::world::demo().engine();
        let mut req = SearchRequest::new(q);
        req.mode = mode;
        req.limit = limit;
        req.max_tokens = max_tokens;
        req.snippet_chars = snippet_chars;
        if locator {
            req.provenance = knowledge::contract::Provenance::Locator;
        }
        let resp = engine.search(&req);
        check_invariants(&req, &resp)?;
        if locator {
            prop_assert!(resp.lanes.episodes.items.iter().all(|i| i.snippet.is_none()));
            prop_assert!(resp.lanes.code.items.iter().all(|i| i.snippet.is_none()));
        }
        // Determinism: the same request again gives the same bytes (KC-12).
        let again = engine.search(&req);
        prop_assert_eq!(
            serde_json::to_string(&resp).expect("json"),
            serde_json::to_string(&again).expect("json")
        );
    }

    /// Issue 10: the budget is a hard bound in real (o200k) tokens whenever the skeleton fits,
    /// the routed primary lane keeps an item whenever it had hits and any lane keeps one, and no
    /// lane is emptied while a lower-weight lane keeps more than one item.
    #[test]
    fn the_budget_keeps_what_the_question_is_about(
        q in query(),
        mode in mode(),
        limit in 1u32..=50,
        max_tokens in 500u32..=6_000,
    ) {
        let engine = common::world::demo().engine();
        let mut req = SearchRequest::new(q);
        req.mode = mode;
        req.limit = limit;
        let mut full = req.clone();
        full.max_tokens = 20_000;
        let all = engine.search(&full);
        req.max_tokens = max_tokens;
        let resp = engine.search(&req);
        let text = serde_json::to_string(&resp).expect("json");
        if !over_budget(&resp) {
            prop_assert!(o200k(&text) <= max_tokens as usize, "{} > {max_tokens}", o200k(&text));
        }
        let weights = &resp.fusion.weights;
        let lanes = ["episodes", "code", "skills"];
        let primary = resp
            .routing
            .lanes
            .first()
            .map(|l| l.as_str())
            .unwrap_or_default();
        let any_left = lanes.iter().any(|l| lane_len(&resp, l) > 0);
        if lane_len(&all, primary) > 0 && any_left {
            prop_assert!(lane_len(&resp, primary) > 0, "primary {primary} emptied");
        }
        for lane in lanes {
            if lane_len(&all, lane) == 0 || lane_len(&resp, lane) > 0 {
                continue;
            }
            let w = weights.get(lane).copied().unwrap_or(0.0);
            for other in lanes {
                let lower = weights.get(other).copied().unwrap_or(0.0) < w;
                prop_assert!(
                    !(lower && lane_len(&resp, other) > 1),
                    "{lane} emptied while lower-weight {other} keeps {}",
                    lane_len(&resp, other)
                );
            }
        }
    }

    #[test]
    fn lane_order_is_a_total_order(
        items in prop::collection::vec(
            (0u32..4, prop::option::of(0u32..4), 0u32..4),
            1..12,
        ),
    ) {
        let rows: Vec<(f64, Option<String>, String)> = items
            .iter()
            .map(|(s, t, id)| (*s as f64 / 100.0, t.map(|t| format!("2026-10-0{t}")), format!("id{id}")))
            .collect();
        let key = |r: &(f64, Option<String>, String)| (r.0, r.1.clone(), r.2.clone());
        let mut a: Vec<_> = rows.iter().map(key).collect();
        let mut b = a.clone();
        b.reverse();
        let cmp = |x: &(f64, Option<String>, String), y: &(f64, Option<String>, String)| {
            order((x.0, x.1.as_deref(), &x.2), (y.0, y.1.as_deref(), &y.2))
        };
        a.sort_by(cmp);
        b.sort_by(cmp);
        prop_assert_eq!(a.clone(), b);
        for w in a.windows(2) {
            prop_assert!(w[0].0 >= w[1].0);
        }
    }
}
