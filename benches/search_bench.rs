//! Benchmarks (run with `cargo bench --bench search_bench`): index throughput, no-change
//! re-index, the episodes and code lanes and the whole search in-process, a whole CLI call, and
//! `rg -i` over the same code tree as a baseline, with P50/P95/P99 and peak RSS.
//!
//! `KNOWLEDGE_BENCH_SCALE=contract` (default: 181 sessions ≈ 50k events + 10k code chunks),
//! `10x` (2,000 sessions ≈ 1M events + 100k chunks) or `all`. Figures go to stdout;
//! `docs/PERFORMANCE.md` records them.

#[path = "support/synth.rs"]
mod synth;

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use knowledge::contract::SearchRequest;
use knowledge::engine::{Engine, EngineConfig};
use knowledge::indexing::{index_all, IndexPlan};
use knowledge::sources::code::model::CodeQuery;
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

const CODE_QUERIES: &[&str] = &[
    "getUserName",
    "mysql connection",
    "verifySignature webhook",
    "retry cache",
    "checkEncoding",
];

fn percentiles(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(|a, b| a.total_cmp(b));
    let at = |p: f64| v[((v.len() as f64 - 1.0) * p).round() as usize];
    (at(0.50), at(0.95), at(0.99))
}

fn report(name: &str, v: Vec<f64>) -> f64 {
    let n = v.len();
    let (p50, p95, p99) = percentiles(v);
    println!("  {name:<40} n={n:<4} P50 {p50:>8.2} ms  P95 {p95:>8.2} ms  P99 {p99:>8.2} ms");
    p50
}

fn peak_rss_mb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse::<u64>().ok())
        })
        .unwrap_or(0)
        / 1024
}

/// CPU seconds (user + system, every thread) this process has used: on a machine shared with
/// other builds, a cost in CPU time is steadier than one in wall time.
fn cpu_s() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which may hold spaces) start at the state, field 3.
    let rest = stat.rsplit_once(") ").map_or("", |(_, r)| r);
    let field = |n: usize| -> f64 {
        rest.split_whitespace()
            .nth(n - 3)
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0)
    };
    (field(14) + field(15)) / 100.0
}

fn time<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let t = Instant::now();
    let v = f();
    (v, t.elapsed().as_secs_f64())
}

fn run_scale(label: &str, sessions: usize, events: usize, chunks: usize) {
    // `KNOWLEDGE_BENCH_WORLD=<dir>` searches a world kept by `KNOWLEDGE_BENCH_KEEP` (of the same
    // scale) instead of generating and indexing one: before/after builds then search the same
    // data dir within the same minutes.
    if let Ok(kept) = std::env::var("KNOWLEDGE_BENCH_WORLD") {
        let kept = Path::new(&kept);
        println!("\n[{label}] the kept world in {}", kept.display());
        measure_search(&kept.join("data"), &kept.join("code"));
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let world = dir.path().join("world");
    let code = dir.path().join("code");
    let data = dir.path().join("data");
    let (bytes, gen_s) = time(|| synth::generate(&world, sessions, events).expect("sessions"));
    let ((files, code_bytes), _) = time(|| synth::generate_code(&code, chunks).expect("code"));
    println!(
        "\n[{label}] {sessions} sessions ≈ {} events ({:.1} MB JSONL, generated in {gen_s:.1} s); \
         {files} code files ({:.1} MB)",
        sessions * events,
        bytes as f64 / 1e6,
        code_bytes as f64 / 1e6
    );
    let plan = IndexPlan {
        sessions: vec![world.clone()],
        code: vec![code.clone()],
        ..IndexPlan::default()
    };
    std::fs::create_dir_all(&data).expect("data dir");
    let config = data.join("config.toml");
    // `KNOWLEDGE_BENCH_QUICK=1`: the search figures only, over one index with semantic on (no
    // lexical baseline, no second index from scratch, no upgrade run).
    if std::env::var("KNOWLEDGE_BENCH_QUICK").is_ok() {
        std::fs::write(&config, "[search]\nsemantic = true\n").expect("config");
        let (_, secs) = time(|| index_all(&data, &plan, &mut |_| {}).expect("index"));
        println!("  index all with semantic on: {secs:.1} s");
        measure_search(&data, &code);
        keep_world(dir);
        return;
    }
    // First a lexical index (semantic off), the baseline; the vectors are added afterwards by
    // the upgrade path, which measures their cost and size on their own.
    std::fs::write(&config, "[search]\nsemantic = false\n").expect("config");
    let cpu_before = cpu_s();
    let (s, secs) = time(|| index_all(&data, &plan, &mut |_| {}).expect("index"));
    let lexical_cpu = cpu_s() - cpu_before;
    let ep = s.episodes.expect("episodes");
    let cs = s.code.expect("code");
    let k = s.agent_knowledge.expect("knowledge");
    println!(
        "  index all: {secs:.1} s; episodes {} events in {:.2} s = {:.1} MB/s; code {} chunks, {} \
         lines in {:.2} s = {:.0} lines/s; L3 {} actors in {:.2} s; peak RSS {} MB",
        ep.events_added,
        ep.elapsed_ms as f64 / 1e3,
        bytes as f64 / 1e6 / (ep.elapsed_ms as f64 / 1e3),
        cs.chunks,
        cs.lines,
        cs.elapsed_ms as f64 / 1e3,
        cs.lines as f64 / (cs.elapsed_ms as f64 / 1e3),
        k.actors,
        k.elapsed_ms as f64 / 1e3,
        peak_rss_mb()
    );
    let (s2, secs) = time(|| index_all(&data, &plan, &mut |_| {}).expect("reindex"));
    let ep2 = s2.episodes.expect("episodes");
    let cs2 = s2.code.expect("code");
    println!(
        "  re-index, nothing changed: {secs:.2} s in all; episodes {:.3} s ({} files unchanged), \
         code {:.3} s ({} unchanged), L3 rebuild {:.3} s",
        ep2.elapsed_ms as f64 / 1e3,
        ep2.files_unchanged,
        cs2.elapsed_ms as f64 / 1e3,
        cs2.files_unchanged,
        s2.agent_knowledge
            .map_or(0.0, |k| k.elapsed_ms as f64 / 1e3)
    );
    let lexical_bytes = store_bytes(&data);
    index_semantic_from_scratch(
        &plan,
        (ep.elapsed_ms + cs.elapsed_ms, lexical_cpu),
        lexical_bytes,
        dir.path(),
    );
    std::fs::write(&config, "[search]\nsemantic = true\n").expect("config");
    let (s3, secs3) = time(|| index_all(&data, &plan, &mut |_| {}).expect("vectors"));
    let v = s3.vectors.expect("vectors step");
    let with_vectors = store_bytes(&data);
    println!(
        "  vectors (upgrade of the lexical index from stored text): {} events + {} chunks in \
         {:.2} s ({secs3:.2} s whole run) = +{:.0} % over indexing episodes + code ({:.2} s); \
         stores {:.1} → {:.1} MB (+{:.1} %); peak RSS {} MB",
        v.events,
        v.chunks,
        v.elapsed_ms as f64 / 1e3,
        100.0 * v.elapsed_ms as f64 / (ep.elapsed_ms + cs.elapsed_ms) as f64,
        (ep.elapsed_ms + cs.elapsed_ms) as f64 / 1e3,
        lexical_bytes as f64 / 1e6,
        with_vectors as f64 / 1e6,
        100.0 * (with_vectors as f64 / lexical_bytes as f64 - 1.0),
        peak_rss_mb()
    );

    measure_search(&data, &code);
    keep_world(dir);
}

/// `KNOWLEDGE_BENCH_KEEP=<dir>` keeps the generated world and data dir there (for CLI
/// comparisons between builds, and `KNOWLEDGE_BENCH_WORLD`); otherwise the temp dir is deleted.
fn keep_world(dir: tempfile::TempDir) {
    if let Ok(keep) = std::env::var("KNOWLEDGE_BENCH_KEEP") {
        std::fs::rename(dir.path(), &keep).expect("keep the bench dir");
        println!("  kept the world and data dir in {keep}");
    }
}

/// The in-process lanes and whole search, `rg` over the code tree, and one-shot CLI calls, over
/// an indexed data dir (`data`, semantic on) and its code tree.
fn measure_search(data: &Path, code: &Path) {
    let config = data.join("config.toml");
    let engine = Engine::open(EngineConfig {
        log: false,
        ..EngineConfig::new(data)
    });
    let lexical_engine = Engine::open(EngineConfig {
        log: false,
        semantic: false,
        ..EngineConfig::new(data)
    });
    let store =
        knowledge::sources::episodes::search::EpisodeStore::open(&engine.config.episodes_db())
            .expect("episodes store");
    let code_store =
        knowledge::sources::code::CodeStore::open(&engine.config.code_db()).expect("code store");
    let emb = knowledge::text::embed::shared().expect("embedding table");
    // A first vector query without warm-up: what a one-shot CLI call pays for the codes.
    let warm = EpisodeQuery {
        terms: tokens::query_terms(QUERIES[0]),
        limit: 30,
        snippet_chars: 240,
        vector: emb.embed(QUERIES[0]),
        ..EpisodeQuery::default()
    };
    let (_, load_s) = time(|| store.search(&warm).expect("search"));
    let (_, code_load_s) = time(|| {
        code_store
            .search(&CodeQuery {
                terms: tokens::query_terms(CODE_QUERIES[0]),
                limit: 30,
                snippet_chars: 240,
                vector: emb.embed(CODE_QUERIES[0]),
                ..CodeQuery::default()
            })
            .expect("code search")
    });
    println!(
        "  first vector query, no warm-up: episodes {:.0} ms, code {:.0} ms; RSS {} MB",
        load_s * 1e3,
        code_load_s * 1e3,
        peak_rss_mb()
    );
    // The explorer and the MCP server warm the arms at start (`Engine::warm_semantic`); the
    // in-process figures below are theirs.
    let (_, warm_s) = time(|| {
        store.warm_vectors().expect("warm episodes");
        code_store.warm_vectors().expect("warm code");
        engine.episodes.warm();
        engine.code.warm();
    });
    println!(
        "  warm-up of both arms (codes into memory): {:.0} ms; RSS {} MB",
        warm_s * 1e3,
        peak_rss_mb()
    );
    let (mut lane, mut code_lane, mut full) = (Vec::new(), Vec::new(), Vec::new());
    let (mut lane_h, mut code_lane_h, mut full_lex) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..20 {
        for q in QUERIES {
            let mut query = EpisodeQuery {
                terms: tokens::query_terms(q),
                limit: 30,
                snippet_chars: 240,
                ..EpisodeQuery::default()
            };
            let (_, s) = time(|| store.search(&query).expect("search"));
            lane.push(s * 1e3);
            let (_, s) = time(|| {
                query.vector = emb.embed(q);
                store.search(&query).expect("search")
            });
            lane_h.push(s * 1e3);
            let (_, s) = time(|| engine.search(&SearchRequest::new(*q)));
            full.push(s * 1e3);
            let (_, s) = time(|| lexical_engine.search(&SearchRequest::new(*q)));
            full_lex.push(s * 1e3);
        }
        for q in CODE_QUERIES {
            let mut query = CodeQuery {
                terms: tokens::query_terms(q),
                limit: 30,
                snippet_chars: 240,
                ..CodeQuery::default()
            };
            let (_, s) = time(|| code_store.search(&query).expect("code search"));
            code_lane.push(s * 1e3);
            let (_, s) = time(|| {
                query.vector = emb.embed(q);
                code_store.search(&query).expect("code search")
            });
            code_lane_h.push(s * 1e3);
        }
    }
    report("episodes lane, lexical arm only", lane);
    report("episodes lane, hybrid (lexical + vector)", lane_h);
    let code_p50 = report("code lane, lexical arm only", code_lane);
    report("code lane, hybrid (lexical + vector)", code_lane_h);
    report("whole search, semantic off", full_lex);
    report("whole search (3 lanes + actors), semantic on", full);
    // What a one-shot call does in process: a fresh engine per query (stores opened, vector
    // blocks streamed, no warm-up), without the process start and the JSON out.
    let (mut fresh_on, mut fresh_off) = (Vec::new(), Vec::new());
    for _ in 0..4 {
        for q in QUERIES {
            for (semantic, out) in [(true, &mut fresh_on), (false, &mut fresh_off)] {
                let (_, s) = time(|| {
                    let e = Engine::open(EngineConfig {
                        log: false,
                        semantic,
                        lane_timeout: std::time::Duration::from_secs(10),
                        ..EngineConfig::new(data)
                    });
                    e.search(&SearchRequest::new(*q))
                });
                out.push(s * 1e3);
            }
        }
    }
    report("fresh engine per query, semantic off", fresh_off);
    report("fresh engine per query, semantic on", fresh_on);
    println!(
        "  peak RSS of the bench process so far: {} MB",
        peak_rss_mb()
    );

    if Command::new("rg").arg("--version").output().is_ok() {
        let mut rg = Vec::new();
        for q in CODE_QUERIES.iter().cycle().take(15) {
            let pattern = q.split_whitespace().next().unwrap_or(q);
            let (_, s) = time(|| {
                Command::new("rg")
                    .args(["-i", "-c", pattern])
                    .arg(code)
                    .output()
                    .expect("rg")
            });
            rg.push(s * 1e3);
        }
        let rg_p50 = report("baseline: rg -i over the same tree", rg);
        println!(
            "  indexed code lane is {:.0}× faster than rg (P50)",
            rg_p50 / code_p50
        );
    } else {
        println!("  baseline: rg not installed (apt-get install ripgrep) — skipped");
    }

    // `KNOWLEDGE_BENCH_EXE` runs another build's CLI (a saved "before" binary, so before and
    // after can be interleaved on a shared machine).
    let exe = std::env::var("KNOWLEDGE_BENCH_EXE")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_knowledge").to_string());
    let exe = exe.as_str();
    // A one-shot CLI call with semantic search off and on. The lane deadline is raised so every
    // call does all of its work (on a loaded machine a lane past 250 ms would be abandoned and
    // the call would look cheaper than it is); calls that still timed out are counted.
    for (label, on) in [("off", false), ("on", true)] {
        std::fs::write(
            &config,
            format!("[search]\nsemantic = {on}\n[lanes]\ntimeout_ms = 10000\n"),
        )
        .expect("config");
        let mut cli = Vec::new();
        let mut rss = Vec::new();
        let mut timeouts = 0;
        let time_bin = Path::new("/usr/bin/time").exists();
        for (i, q) in QUERIES.iter().cycle().take(40).enumerate() {
            let measure_rss = time_bin && i % 4 == 0;
            let mut cmd = if measure_rss {
                let mut c = Command::new("/usr/bin/time");
                c.args(["-f", "%M", exe]);
                c
            } else {
                Command::new(exe)
            };
            let (out, s) = time(|| {
                cmd.arg("--data-dir")
                    .arg(data)
                    .args(["search", "-q", q])
                    .output()
                    .expect("run cli")
            });
            assert!(out.status.success(), "cli failed");
            timeouts += usize::from(String::from_utf8_lossy(&out.stdout).contains("timed out"));
            if measure_rss {
                if let Some(kb) = String::from_utf8_lossy(&out.stderr)
                    .lines()
                    .last()
                    .and_then(|l| l.trim().parse::<u64>().ok())
                {
                    rss.push(kb);
                }
            } else {
                cli.push(s * 1e3);
            }
        }
        report(
            &format!("CLI call (process start → exit), semantic {label}"),
            cli,
        );
        if let Some(max) = rss.iter().max() {
            println!("  CLI search peak RSS, semantic {label}: {} MB", max / 1024);
        }
        println!("  CLI calls with a lane timed out, semantic {label}: {timeouts} of 40");
    }
}

/// Index the same world into a fresh data dir with semantic search on from the start (the way a
/// new user indexes): its cost over the lexical run is the indexing-throughput figure. The dir is
/// deleted afterwards (disk is limited at 10×).
fn index_semantic_from_scratch(
    plan: &IndexPlan,
    (lexical_ms, lexical_cpu): (u64, f64),
    lexical_bytes: u64,
    tmp: &Path,
) {
    let data = tmp.join("data-semantic");
    std::fs::create_dir_all(&data).expect("data dir");
    std::fs::write(data.join("config.toml"), "[search]\nsemantic = true\n").expect("config");
    let cpu_before = cpu_s();
    let (s, _) = time(|| index_all(&data, plan, &mut |_| {}).expect("index"));
    let semantic_cpu = cpu_s() - cpu_before;
    let ep = s.episodes.expect("episodes");
    let cs = s.code.expect("code");
    let vectors_ms = s.vectors.map_or(0, |v| v.elapsed_ms);
    let semantic_ms = ep.elapsed_ms + cs.elapsed_ms + vectors_ms;
    let bytes = store_bytes(&data);
    println!(
        "  index with semantic on from scratch: episodes {:.2} s + code {:.2} s + vector step \
         {:.2} s = {:.2} s vs {:.2} s lexical: +{:.1} % time, throughput −{:.1} %; stores \
         {:.1} → {:.1} MB (+{:.1} %)",
        ep.elapsed_ms as f64 / 1e3,
        cs.elapsed_ms as f64 / 1e3,
        vectors_ms as f64 / 1e3,
        semantic_ms as f64 / 1e3,
        lexical_ms as f64 / 1e3,
        100.0 * (semantic_ms as f64 / lexical_ms as f64 - 1.0),
        100.0 * (1.0 - lexical_ms as f64 / semantic_ms as f64),
        lexical_bytes as f64 / 1e6,
        bytes as f64 / 1e6,
        100.0 * (bytes as f64 / lexical_bytes as f64 - 1.0),
    );
    println!(
        "  CPU time of the whole index run (L3 included): {lexical_cpu:.1} s lexical, \
         {semantic_cpu:.1} s semantic on (+{:.1} %)",
        100.0 * (semantic_cpu / lexical_cpu - 1.0)
    );
    std::fs::remove_dir_all(&data).expect("remove the semantic data dir");
}

/// Bytes of the episodes and code stores (with their WAL files).
fn store_bytes(data: &Path) -> u64 {
    ["episodes.sqlite", "code.sqlite"]
        .iter()
        .flat_map(|f| [f.to_string(), format!("{f}-wal")])
        .filter_map(|f| std::fs::metadata(data.join(f)).ok())
        .map(|m| m.len())
        .sum()
}

/// The code lane alone at `chunks` chunks, per query, against `rg -i` (`KNOWLEDGE_BENCH_SCALE=code`).
fn run_code(chunks: usize) {
    let dir = tempfile::tempdir().expect("temp dir");
    let code = dir.path().join("code");
    let data = dir.path().join("data");
    synth::generate_code(&code, chunks).expect("code");
    let plan = IndexPlan {
        code: vec![code.clone()],
        ..IndexPlan::default()
    };
    index_all(&data, &plan, &mut |_| {}).expect("index");
    let engine = Engine::open(EngineConfig::new(&data));
    let store =
        knowledge::sources::code::CodeStore::open(&engine.config.code_db()).expect("code store");
    println!("\n[code lane alone] {chunks} chunks");
    for q in CODE_QUERIES {
        let query = CodeQuery {
            terms: tokens::query_terms(q),
            limit: 30,
            snippet_chars: 240,
            ..CodeQuery::default()
        };
        let lane: Vec<f64> = (0..20)
            .map(|_| time(|| store.search(&query).expect("search")).1 * 1e3)
            .collect();
        let pattern = q.split_whitespace().next().unwrap_or(q);
        let rg: Vec<f64> = (0..5)
            .map(|_| {
                time(|| {
                    Command::new("rg")
                        .args(["-i", "-c", pattern])
                        .arg(&code)
                        .output()
                })
                .1 * 1e3
            })
            .collect();
        let (l50, _, _) = percentiles(lane);
        let (r50, _, _) = percentiles(rg);
        println!(
            "  {q:<28} lane P50 {l50:>7.2} ms   rg P50 {r50:>7.2} ms   {:.1}×",
            r50 / l50
        );
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let scale = std::env::var("KNOWLEDGE_BENCH_SCALE").unwrap_or_else(|_| "contract".into());
    println!(
        "knowledge bench — {} cores; scale {scale}",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    if scale == "contract" || scale == "all" {
        run_scale("contract scale", 181, 276, 10_000);
    }
    if scale == "10x" || scale == "all" {
        run_scale("10x", 2000, 500, 100_000);
    }
    if scale == "code" {
        run_code(100_000);
    }
}
