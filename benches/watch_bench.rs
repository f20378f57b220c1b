//! Watch mode's cost and speed (run with `cargo bench --bench watch_bench`): a synthetic tree of
//! 2,000 sessions is indexed, `knowledge index --watch` is started on it, and
//!
//! - idle cost: CPU time (utime + stime from `/proc/<pid>/stat`) over an idle window, as a share
//!   of one core, with VmRSS and VmHWM from `/proc/<pid>/status` — native notifications and the
//!   polling fallback (`KNOWLEDGE_WATCH_POLL=1`);
//! - latency: an event appended to a random transcript until a search finds it, P50/P95/max.
//!
//! `KNOWLEDGE_BENCH_IDLE_SECS` (default 30) sets the idle window, `KNOWLEDGE_BENCH_SESSIONS`
//! (default 2000) the tree. Linux only (it reads `/proc`). Figures go to `docs/PERFORMANCE.md`.

#[path = "support/synth.rs"]
#[allow(dead_code)]
mod synth;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use knowledge::contract::{Lane, SearchRequest};
use knowledge::engine::{Engine, EngineConfig};

const BIN: &str = env!("CARGO_BIN_EXE_knowledge");

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn roots(tree: &Path) -> Vec<String> {
    let mut args = Vec::new();
    for r in ["claude", "codex"] {
        args.push("--sessions".to_string());
        args.push(tree.join(r).display().to_string());
    }
    args
}

fn start_watch(data: &Path, tree: &Path, poll: bool) -> Child {
    let mut cmd = Command::new(BIN);
    cmd.arg("--data-dir")
        .arg(data)
        .args(["index", "--watch", "--quiet"])
        .args(roots(tree))
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if poll {
        cmd.env("KNOWLEDGE_WATCH_POLL", "1");
    }
    let mut child = cmd.spawn().expect("start the watcher");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = BufReader::new(stderr).lines();
    for line in lines.by_ref() {
        let line = line.expect("read stderr");
        if line.starts_with("watching") {
            println!("  {line}");
            break;
        }
    }
    std::thread::spawn(move || for _ in lines {});
    child
}

/// utime + stime of a process, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("read stat");
    // Fields after the command (which may hold spaces) start after the last ')'.
    let rest = &stat[stat.rfind(')').expect("stat format") + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    f[11].parse::<u64>().unwrap_or(0) + f[12].parse::<u64>().unwrap_or(0)
}

fn status_kb(pid: u32, key: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn clock_ticks_per_sec() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0)
}

fn idle(child: &Child, secs: u64, label: &str) {
    let pid = child.id();
    // Let the start settle (the first poll walks the tree once).
    std::thread::sleep(Duration::from_secs(3));
    let t0 = cpu_ticks(pid);
    let started = Instant::now();
    std::thread::sleep(Duration::from_secs(secs));
    let ticks = cpu_ticks(pid) - t0;
    let wall = started.elapsed().as_secs_f64();
    let share = ticks as f64 / clock_ticks_per_sec() / wall * 100.0;
    println!(
        "  idle {label}: {share:.2} % of a core over {wall:.0} s ({ticks} ticks); VmRSS {:.1} MB, VmHWM {:.1} MB",
        status_kb(pid, "VmRSS:") as f64 / 1024.0,
        status_kb(pid, "VmHWM:") as f64 / 1024.0
    );
}

fn transcripts(tree: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![tree.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl")
                && p.starts_with(tree.join("claude"))
            {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn append(path: &Path, word: &str) {
    let id = path.file_stem().unwrap().to_string_lossy().to_string();
    let line = serde_json::json!({
        "type": "assistant",
        "message": {"role": "assistant", "type": "message",
                    "content": [{"type": "text", "text": format!("flushed the {word} cache")}]},
        "uuid": format!("{word}-uuid"),
        "timestamp": "2026-11-30T10:00:00.000Z",
        "cwd": "/srv/ws0",
        "sessionId": id,
    });
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .expect("open");
    writeln!(f, "{line}").expect("append");
}

fn latency(data: &Path, tree: &Path, rounds: usize, label: &str) {
    let engine = Engine::open(EngineConfig {
        log: false,
        ..EngineConfig::new(data)
    });
    let files = transcripts(tree);
    // Words of their own per run, so that no run finds the appends of another.
    let mut rng = synth::Rng::new(7 + label.len() as u64);
    let mut ms = Vec::new();
    for i in 0..rounds {
        let word = format!("zq{label}{i}x{}", rng.below(1_000_000));
        let file = &files[rng.below(files.len() as u64) as usize];
        let mut req = SearchRequest::new(word.clone());
        req.include = [Lane::Episodes].into_iter().collect();
        let started = Instant::now();
        append(file, &word);
        loop {
            let resp = engine.search(&req);
            if !resp.lanes.episodes.items.is_empty() {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "never searchable"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        ms.push(started.elapsed().as_secs_f64() * 1000.0);
        // Space the appends so each is its own batch.
        std::thread::sleep(Duration::from_millis(300));
    }
    ms.sort_by(f64::total_cmp);
    let at = |p: f64| ms[((p * ms.len() as f64).ceil() as usize).clamp(1, ms.len()) - 1];
    println!(
        "  append → searchable, {label}, over {rounds} appends: p50 {:.0} ms, p95 {:.0} ms, max {:.0} ms",
        at(0.5),
        at(0.95),
        ms[ms.len() - 1]
    );
}

fn main() {
    let sessions = env_num("KNOWLEDGE_BENCH_SESSIONS", 2000) as usize;
    let idle_secs = env_num("KNOWLEDGE_BENCH_IDLE_SECS", 30);
    let tmp = tempfile::tempdir().expect("temp dir");
    let tree = tmp.path().join("tree");
    let data = tmp.path().join("data");
    let bytes = synth::generate(&tree, sessions, 20).expect("generate the tree");
    println!(
        "watch over {sessions} sessions ({:.1} MB of transcripts)",
        bytes as f64 / 1e6
    );
    let started = Instant::now();
    let status = Command::new(BIN)
        .arg("--data-dir")
        .arg(&data)
        .args(["index", "--quiet"])
        .args(roots(&tree))
        .status()
        .expect("index");
    assert!(status.success());
    println!("  first index: {:.1} s", started.elapsed().as_secs_f64());

    for poll in [false, true] {
        let label = if poll { "polling" } else { "native" };
        let mut child = start_watch(&data, &tree, poll);
        idle(&child, idle_secs, label);
        latency(&data, &tree, 20, label);
        let _ = child.kill();
        let _ = child.wait();
    }
}
