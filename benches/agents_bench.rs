//! Indexing throughput per agent (run with `cargo bench --bench agents_bench`; the database
//! agents are in `sql_agents_bench`). For every JSONL and Markdown agent a synthetic world in
//! the agent's real format and layout (`support/synth_agents.rs`: the same sessions whatever the
//! agent, so the figures compare readers) is written and indexed from scratch into an empty
//! store, lexical only, three times; prints MB/s, events/s and the median.
//!
//! With `AGENTS_BENCH_BASELINE=<another build's knowledge binary>` it also runs both binaries'
//! `knowledge index --sessions ROOT --quiet` on the same Claude Code and Codex worlds,
//! interleaved (`AGENTS_BENCH_ROUNDS`, default 5, a fresh data dir each time, semantic off so
//! the figure is the reading and storing), and prints P50 of wall and CPU (user + system of the
//! child) per binary; with `AGENTS_BENCH_CALLGRIND=1` also the instruction counts of one run of
//! each under `valgrind --tool=callgrind` on a world a tenth the size — exact where wall times
//! on a shared machine are not.
//!
//! The world goes to `AGENTS_BENCH_DIR` (default a temp dir) and is deleted at the end.
//! `AGENTS_BENCH_SESSIONS` (default 200) and `AGENTS_BENCH_EVENTS` (events per session,
//! default 200) size it; `AGENTS_BENCH_AGENTS=gemini,pi` runs only those agents.

#[path = "support/synth.rs"]
#[allow(dead_code)]
mod synth;
#[path = "support/synth_agents.rs"]
mod synth_agents;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use knowledge::sources::episodes::index::{index_episodes, IndexOptions};

const RUNS: usize = 3;

fn env_usize(key: &str, default: usize) -> usize {
    std::env::var(key)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// CPU seconds (user + system) of the waited-for children of this process so far.
fn children_cpu() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(u.ru_utime) + tv(u.ru_stime)
}

/// A fresh data dir with semantic search off (no embedding pass).
fn fresh_data(dir: &Path) -> PathBuf {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).expect("data dir");
    std::fs::write(dir.join("config.toml"), "[search]\nsemantic = false\n").expect("config");
    dir.to_path_buf()
}

/// One `knowledge index` of `root` by `bin` into a fresh data dir: (wall s, CPU s).
fn cli_index(bin: &Path, root: &Path, data: &Path) -> (f64, f64) {
    let data = fresh_data(data);
    let cpu = children_cpu();
    let t = Instant::now();
    let out = Command::new(bin)
        .arg("--data-dir")
        .arg(&data)
        .args(["index", "--quiet", "--sessions"])
        .arg(root)
        .output()
        .expect("run knowledge index");
    let wall = t.elapsed().as_secs_f64();
    assert!(
        out.status.success(),
        "{}: {}",
        bin.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    (wall, children_cpu() - cpu)
}

/// Instructions of one `knowledge index` of `root` under callgrind.
fn callgrind(bin: &Path, root: &Path, data: &Path) -> Option<u64> {
    let data = fresh_data(data);
    let out = Command::new("valgrind")
        .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
        .arg(bin)
        .arg("--data-dir")
        .arg(&data)
        .args(["index", "--quiet", "--sessions"])
        .arg(root)
        .output()
        .ok()?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    stderr
        .lines()
        .find_map(|l| l.split("Collected :").nth(1))
        .and_then(|n| n.trim().parse().ok())
}

fn main() {
    let sessions = env_usize("AGENTS_BENCH_SESSIONS", 200);
    let events = env_usize("AGENTS_BENCH_EVENTS", 200);
    let tmp = tempfile::tempdir().expect("tmp");
    let base = std::env::var_os("AGENTS_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| tmp.path().to_path_buf())
        .join("agents_bench");
    std::fs::create_dir_all(&base).expect("bench dir");
    println!(
        "agents_bench: {sessions} sessions x {events} events per agent, median of {RUNS} \
         from-scratch runs (in-process, lexical)"
    );
    let mut roots = Vec::new();
    // `AGENTS_BENCH_AGENTS=gemini,pi` runs only those.
    let only = std::env::var("AGENTS_BENCH_AGENTS").unwrap_or_default();
    let picked = |a: &str| only.is_empty() || only.split(',').any(|o| o.trim() == a);
    for agent in synth_agents::AGENTS.iter().filter(|a| picked(a)) {
        let world = base.join(agent);
        let (bytes, root) =
            synth_agents::generate(agent, &world, sessions, events).expect("generate");
        let mut secs = Vec::new();
        let mut last = None;
        for run in 0..RUNS {
            let db = base.join(format!("{agent}-{run}.sqlite"));
            let started = Instant::now();
            let s = index_episodes(&db, &IndexOptions::new(vec![root.clone()]), &mut |_| {})
                .expect("index");
            secs.push(started.elapsed().as_secs_f64());
            let _ = std::fs::remove_file(&db);
            last = Some(s);
        }
        let s = last.expect("a run");
        assert!(s.failed.is_empty(), "{agent}: {:?}", s.failed);
        assert!(s.events_added > 0, "{agent}: nothing read");
        let m = median(secs);
        println!(
            "  {agent:<9} {:>6.1} MB, {:>4} sessions, {:>7} events: {m:.3} s = {:>5.1} MB/s, \
             {:>7.0} events/s (skipped: {} unknown, {} broken)",
            bytes as f64 / 1e6,
            s.sessions,
            s.events_added,
            bytes as f64 / 1e6 / m,
            s.events_added as f64 / m,
            s.lines.skipped_unknown,
            s.lines.skipped_broken,
        );
        roots.push((agent, root));
    }

    if let Some(baseline) = std::env::var_os("AGENTS_BENCH_BASELINE").map(PathBuf::from) {
        let current = PathBuf::from(env!("CARGO_BIN_EXE_knowledge"));
        let rounds = env_usize("AGENTS_BENCH_ROUNDS", 5);
        println!(
            "\n`knowledge index --sessions ROOT` (semantic off), {rounds} interleaved rounds, \
             a fresh data dir each; baseline {}",
            baseline.display()
        );
        for (agent, root) in roots
            .iter()
            .filter(|(a, _)| matches!(**a, "claude" | "codex"))
        {
            let mut figures = [(Vec::new(), Vec::new()), (Vec::new(), Vec::new())];
            for _ in 0..rounds {
                for (i, bin) in [&baseline, &current].into_iter().enumerate() {
                    let (wall, cpu) = cli_index(bin, root, &base.join("data"));
                    figures[i].0.push(wall);
                    figures[i].1.push(cpu);
                }
            }
            for (i, name) in ["baseline", "current"].into_iter().enumerate() {
                let (wall, cpu) = figures[i].clone();
                println!(
                    "  {agent:<8} {name:<9} wall P50 {:.3} s (min {:.3}), CPU P50 {:.3} s (min {:.3})",
                    median(wall.clone()),
                    wall.iter().copied().fold(f64::INFINITY, f64::min),
                    median(cpu.clone()),
                    cpu.iter().copied().fold(f64::INFINITY, f64::min),
                );
            }
        }
        if std::env::var("AGENTS_BENCH_CALLGRIND").is_ok_and(|v| v == "1") {
            let small_sessions = (sessions / 10).max(1);
            println!("\ncallgrind, one run each, {small_sessions} sessions x {events} events:");
            for agent in ["claude", "codex"] {
                let world = base.join(format!("small-{agent}"));
                let (bytes, root) =
                    synth_agents::generate(agent, &world, small_sessions, events).expect("gen");
                let old = callgrind(&baseline, &root, &base.join("data"));
                let new = callgrind(&current, &root, &base.join("data"));
                let delta = match (old, new) {
                    (Some(o), Some(n)) => format!("{:+.2} %", (n as f64 / o as f64 - 1.0) * 100.0),
                    _ => "n/a (valgrind missing?)".into(),
                };
                println!(
                    "  {agent:<8} {:.1} MB: baseline {:?} Ir, current {:?} Ir ({delta})",
                    bytes as f64 / 1e6,
                    old,
                    new
                );
            }
        }
    }
    let _ = std::fs::remove_dir_all(&base);
}
