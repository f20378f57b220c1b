//! The budget's token estimator is calibrated: on whole responses from the shared real
//! transcripts and the demo world, at every budget, it counts within 5 % of the o200k BPE
//! tokenizer (issue 19; the first, pessimistic estimator counted 592 where o200k counts 415 and
//! left the smallest budget with nothing to return).

mod common;

use knowledge::contract::SearchRequest;
use knowledge::engine::budget::estimate_tokens;
use knowledge::engine::{Engine, EngineConfig};

const QUERIES: &[&str] = &[
    "кто чинил доступ к MySQL на 176.99.5.35",
    "who fixed getUserName",
    "hex docs search skill",
    "error exit code",
    "subagent task",
    "BOM CRLF",
    "stripe webhook signature",
    "почему падал деплой",
    "test coverage",
    "rust port",
];

/// The worst `estimate / o200k` ratios (lowest, highest) over responses of at least 100 tokens.
fn check(texts: &[String]) -> (f64, f64) {
    let bpe = tiktoken_rs::o200k_base().expect("o200k ships in the crate");
    let (mut lo, mut hi) = (f64::MAX, 0f64);
    for t in texts {
        let real = bpe.encode_with_special_tokens(t).len();
        if real < 100 {
            continue;
        }
        let ratio = estimate_tokens(t) as f64 / real as f64;
        assert!(
            (0.95..=1.05).contains(&ratio),
            "estimate/o200k {ratio:.3} ({} vs {real}) for a response of {} bytes: {:.300}",
            estimate_tokens(t),
            t.len(),
            t
        );
        lo = lo.min(ratio);
        hi = hi.max(ratio);
    }
    (lo, hi)
}

fn responses(engine: &Engine) -> Vec<String> {
    let mut out = Vec::new();
    for q in QUERIES {
        for (limit, max_tokens, snippet_chars) in [
            (3, 20_000, 1000),
            (10, 20_000, 300),
            (50, 20_000, 1000),
            (10, 500, 300),
            (10, 4000, 300),
        ] {
            let mut req = SearchRequest::new(*q);
            req.limit = limit;
            req.max_tokens = max_tokens;
            req.snippet_chars = snippet_chars;
            out.push(serde_json::to_string(&engine.search(&req)).expect("json"));
        }
    }
    out
}

#[test]
fn estimate_is_within_5_percent_of_o200k_on_real_transcript_responses() {
    let Some((_tmp, data)) = common::world::real() else {
        return;
    };
    let engine = Engine::open(EngineConfig::new(data));
    let (lo, hi) = check(&responses(&engine));
    eprintln!("real transcripts: estimate/o200k between {lo:.3} and {hi:.3}");
}

#[test]
fn estimate_is_within_5_percent_of_o200k_on_the_demo_world() {
    let engine = common::world::demo().engine();
    let (lo, hi) = check(&responses(&engine));
    eprintln!("demo world: estimate/o200k between {lo:.3} and {hi:.3}");
}

#[test]
fn hard_texts_are_never_counted_far_below_o200k() {
    let bpe = tiktoken_rs::o200k_base().expect("o200k ships in the crate");
    for t in [
        "a05d358b0666d872d 0123456789abcdef 9f8e7d6c5b4a",
        "доступ к MySQL восстановлен, пароль лежит в [REDACTED]",
        "{\"a\":1,\"b\":[1,2,3],\"c\":{\"d\":null}}",
        "🙂🙂🙂 日本語のテキスト 中文文本",
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
        "        indented    code\n\n\n\t\tfn main() { println!(\"{}\", x); }",
        "1234567890123456789012345678901234567890",
        "!!!???...,,,;;;:::---___+++===***&&&%%%$$$###@@@",
    ] {
        let real = bpe.encode_with_special_tokens(t).len() as f64;
        let est = estimate_tokens(t) as f64;
        assert!(est >= 0.8 * real, "estimate {est} vs o200k {real} for {t:?}");
    }
}

/// The contract's smallest budget answers within itself and, where the skeleton leaves room,
/// with the best item of the routed lane reduced to its locator (issue 19: before, 0 items of
/// 20 came back). Not yet every query: a subagent's long ids with their `dropped` entries can
/// still crowd the item out (`docs/RELEVANCE.md`, "Budget at 500").
#[test]
fn the_smallest_budget_carries_the_best_item_of_the_routed_lane_where_it_fits() {
    let bpe = tiktoken_rs::o200k_base().expect("o200k ships in the crate");
    let mut engines = vec![("demo", common::world::demo().engine())];
    if let Some((_tmp, data)) = common::world::real() {
        engines.push(("real", Engine::open(EngineConfig::new(data))));
    }
    let (mut asked, mut carried) = (0, 0);
    for (world, engine) in &engines {
        for q in QUERIES {
            let full = engine.search(&SearchRequest::new(*q));
            let lane = full
                .routing
                .lanes
                .first()
                .map(|l| l.as_str().to_string())
                .unwrap_or_default();
            let best = |r: &knowledge::contract::SearchResponse| match lane.as_str() {
                "episodes" => r.lanes.episodes.items.first().map(|i| i.id.clone()),
                "code" => r.lanes.code.items.first().map(|i| i.id.clone()),
                _ => r
                    .lanes
                    .skills
                    .as_ref()
                    .and_then(|s| s.items.first().map(|i| i.id.clone())),
            };
            let Some(want) = best(&full) else { continue };
            let mut req = SearchRequest::new(*q);
            req.max_tokens = 500;
            let small = engine.search(&req);
            let json = serde_json::to_string(&small).expect("json");
            let real = bpe.encode_with_special_tokens(&json).len();
            // A skeleton that cannot fit says so (the real world here has no code or skills
            // index: four long "not ready" warnings); otherwise the response fits.
            let skeleton_too_big = small
                .warnings
                .iter()
                .any(|w| w.message.contains("cannot hold"));
            assert!(
                skeleton_too_big || real <= 525,
                "{world} {q:?}: {real} o200k tokens at max_tokens 500"
            );
            asked += 1;
            if best(&small).as_ref() == Some(&want) {
                carried += 1;
                let item = small.lanes.episodes.items.first();
                assert!(
                    item.is_none_or(|i| i.snippet.is_none() || real <= 500),
                    "{json}"
                );
            } else {
                let named = small.limits.dropped.iter().any(|d| d.id == want);
                assert!(
                    named,
                    "{world} {q:?}: the best item is neither carried nor dropped"
                );
            }
        }
    }
    eprintln!("max_tokens 500: the best item of the routed lane carried in {carried} of {asked}");
    // Measured on the merged demo and real-data worlds: 7 of 17 (0 before the calibrated
    // estimate), then 6 of 16 once renamed real exports answer under the session id their
    // records carry (a 36-character UUID where the file stem was `full-session-four`: every
    // locator and `dropped` entry of those sessions costs ~15 tokens more). A change that
    // carries fewer is a regression.
    assert!(
        carried * 8 >= asked * 3,
        "only {carried} of {asked} carried the best item"
    );
}
