//! Benchmarks (run with `cargo bench`): index throughput, no-change re-index, the episodes lane
//! and the whole search in-process, and a whole CLI call, with P50/P95/P99 and peak RSS.
//!
//! `KNOWLEDGE_BENCH_SCALE=contract` (default: 181 sessions, ~50k events), `10x` (2,000
//! sessions, ~1M events) or `all`. Figures go to stdout; `docs/PERFORMANCE.md` records them.

#[path = "support/synth.rs"]
mod synth;

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use knowledge::contract::SearchRequest;
use knowledge::engine::{Engine, EngineConfig};
use knowledge::sources::episodes::index::{index_episodes, IndexOptions};
use knowledge::sources::episodes::search::EpisodeQuery;
use knowledge::text::tokens;

const QUERIES: &[&str] = &[
    "кто чинил доступ к MySQL",
    "mysql connection timeout",
    "stripe webhook signature",
    "getUserName returns undefined",
    "деплой упал ошибка",
    "memory leak profile",
    "кодировка BOM CRLF",
    "retry cache invalidate",
    "who fixed the router policy",
    "nginx restart pod",
];

fn percentiles(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(|a, b| a.total_cmp(b));
    let at = |p: f64| v[((v.len() as f64 - 1.0) * p).round() as usize];
    (at(0.50), at(0.95), at(0.99))
}

fn report(name: &str, v: Vec<f64>) {
    let n = v.len();
    let (p50, p95, p99) = percentiles(v);
    println!("  {name:<34} n={n:<5} P50 {p50:>8.2} ms  P95 {p95:>8.2} ms  P99 {p99:>8.2} ms");
}

fn peak_rss_kb() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
}

fn run_scale(label: &str, sessions: usize, events: usize) {
    let dir = tempfile::tempdir().expect("temp dir");
    let world = dir.path().join("world");
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).expect("data dir");
    let t = Instant::now();
    let bytes = synth::generate(&world, sessions, events).expect("generate");
    println!(
        "\n[{label}] {sessions} sessions, ~{} events, {:.1} MB of JSONL (generated in {:.1} s)",
        sessions * events,
        bytes as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );
    let config = EngineConfig::new(&data);
    let opts = IndexOptions::new(vec![world.clone()]);
    let t = Instant::now();
    let s = index_episodes(&config.episodes_db(), &opts, &mut |_| {}).expect("index");
    let secs = t.elapsed().as_secs_f64();
    println!(
        "  index: {} events in {:.2} s = {:.1} MB/s; peak RSS so far {} MB",
        s.events_added,
        secs,
        bytes as f64 / 1e6 / secs,
        peak_rss_kb().unwrap_or(0) / 1024
    );
    let t = Instant::now();
    let s2 = index_episodes(&config.episodes_db(), &opts, &mut |_| {}).expect("reindex");
    println!(
        "  re-index, nothing changed: {:.3} s ({} files unchanged)",
        t.elapsed().as_secs_f64(),
        s2.files_unchanged
    );

    let engine = Engine::open(EngineConfig {
        log: false,
        ..EngineConfig::new(&data)
    });
    let store = engine.episode_store().expect("store");
    let mut lane = Vec::new();
    let mut full = Vec::new();
    for round in 0..30 {
        for q in QUERIES {
            let query = EpisodeQuery {
                terms: tokens::query_terms(q),
                limit: 30,
                snippet_chars: 240,
                ..EpisodeQuery::default()
            };
            let t = Instant::now();
            let hits = store.search(&query).expect("search");
            lane.push(t.elapsed().as_secs_f64() * 1000.0);
            assert!(round > 0 || !hits.is_empty() || q.contains("BOM"));
            let t = Instant::now();
            let _ = engine.search(&SearchRequest::new(*q));
            full.push(t.elapsed().as_secs_f64() * 1000.0);
        }
    }
    report("episodes lane, in-process", lane);
    report("whole search, in-process", full);

    let exe = env!("CARGO_BIN_EXE_knowledge");
    let mut cli = Vec::new();
    let mut rss = Vec::new();
    let time_bin = Path::new("/usr/bin/time").exists();
    for (i, q) in QUERIES.iter().cycle().take(40).enumerate() {
        let t = Instant::now();
        let mut cmd = if time_bin && i % 4 == 0 {
            let mut c = Command::new("/usr/bin/time");
            c.args(["-f", "%M", exe]);
            c
        } else {
            Command::new(exe)
        };
        let out = cmd
            .arg("--data-dir")
            .arg(&data)
            .args(["search", "-q", q])
            .output()
            .expect("run cli");
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        if time_bin && i % 4 == 0 {
            if let Some(kb) = String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .and_then(|l| l.trim().parse::<u64>().ok())
            {
                rss.push(kb);
            }
        } else {
            cli.push(ms);
        }
        assert!(out.status.success(), "cli failed");
    }
    report("CLI call (process start → exit)", cli);
    if let Some(max) = rss.iter().max() {
        println!("  CLI search peak RSS: {} MB", max / 1024);
    }
}

fn main() {
    let scale = std::env::var("KNOWLEDGE_BENCH_SCALE").unwrap_or_else(|_| "contract".into());
    println!(
        "knowledge bench — {} cores; scale {scale}",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    if scale == "contract" || scale == "all" {
        run_scale("contract scale", 181, 276);
    }
    if scale == "10x" || scale == "all" {
        run_scale("10x", 2000, 500);
    }
}
