//! The activity view's cost (run with `cargo bench --bench activity_bench`): `Engine::activity`
//! over 2,000 sessions — the sessions from the episodes lane, the per-hour counts and skill uses
//! from the agent-knowledge store, lane health from a request log of a few hundred searches —
//! for the last 7, 30 and 90 days, with P50/P95/P99. The explorer's target is to open the view
//! within 100 ms. `KNOWLEDGE_BENCH_SESSIONS` and `KNOWLEDGE_BENCH_EVENTS` (events per session)
//! change the world; figures go to stdout and `docs/PERFORMANCE.md` records them.

#[path = "support/synth.rs"]
#[allow(dead_code)]
mod synth;

use std::time::Instant;

use knowledge::contract::SearchRequest;
use knowledge::engine::activity::ActivityRequest;
use knowledge::engine::{Engine, EngineConfig};
use knowledge::indexing::{index_all, IndexPlan};

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn percentiles(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(|a, b| a.total_cmp(b));
    let at = |p: f64| v[((v.len() as f64 - 1.0) * p).round() as usize];
    (at(0.50), at(0.95), at(0.99))
}

fn main() {
    let sessions = env("KNOWLEDGE_BENCH_SESSIONS", 2_000);
    let events = env("KNOWLEDGE_BENCH_EVENTS", 100);
    let dir = tempfile::tempdir().expect("temp dir");
    let world = dir.path().join("world");
    let data = dir.path().join("data");
    synth::generate(&world, sessions, events).expect("sessions");
    std::fs::create_dir_all(&data).expect("data dir");
    std::fs::write(data.join("config.toml"), "[search]\nsemantic = false\n").expect("config");
    let plan = IndexPlan {
        sessions: vec![world],
        ..IndexPlan::default()
    };
    let started = Instant::now();
    let s = index_all(&data, &plan, &mut |_| {}).expect("index");
    let ep = s.episodes.expect("episodes");
    println!(
        "{sessions} sessions, {} events indexed in {:.1} s",
        ep.events_added,
        started.elapsed().as_secs_f64()
    );
    let engine = Engine::open(EngineConfig::load(&data).expect("config"));
    // A request log to read: a few hundred searches.
    for i in 0..300 {
        let q = [
            "mysql connection timeout",
            "stripe webhook",
            "кто чинил деплой",
        ][i % 3];
        engine.search(&SearchRequest::new(q));
    }
    // The synthetic sessions are in October 2026: "now" is the first of November.
    let now_ms = 1_793_491_200_000;
    for days in [7u32, 30, 90] {
        let mut req = ActivityRequest::last_days(days, now_ms, 0);
        req.top = 30;
        let first = engine.activity(&req);
        let mut ms = Vec::new();
        for _ in 0..30 {
            let t = Instant::now();
            let r = engine.activity(&req);
            ms.push(t.elapsed().as_secs_f64() * 1000.0);
            assert_eq!(r.events, first.events);
        }
        let (p50, p95, p99) = percentiles(ms);
        println!(
            "  activity, last {days:>2} days: {} sessions, {} events, {} actors counted; \
             P50 {p50:.1} ms  P95 {p95:.1} ms  P99 {p99:.1} ms",
            first.sessions,
            first.events,
            first.actors.len()
        );
    }
}
