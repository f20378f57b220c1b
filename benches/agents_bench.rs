//! Indexing throughput per agent (run with `cargo bench --bench agents_bench`): each agent's own
//! sessions (the demo world's Claude Code and Codex transcripts, the `fixtures/agents/<agent>`
//! fixtures of the others) copied many times under fresh session ids into a temp dir, indexed
//! from scratch into an empty store, lexical only. Prints MB/s and events/s per agent (median of
//! three runs), so a reader that got slower shows up next to the others.

use std::path::{Path, PathBuf};
use std::time::Instant;

use knowledge::sources::episodes::index::{index_episodes, IndexOptions};

/// Copies per agent; enough bytes that the per-file overhead is part of the figure, not all of it.
const COPIES: usize = 60;
const RUNS: usize = 3;

fn copy_tree(src: &Path, dst: &Path, n: usize) {
    std::fs::create_dir_all(dst).expect("mkdir");
    for e in std::fs::read_dir(src).expect("ls").flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let to = dst.join(rename(&name, n));
        if e.path().is_dir() {
            copy_tree(&e.path(), &to, n);
        } else {
            let text = std::fs::read_to_string(e.path()).unwrap_or_default();
            std::fs::write(&to, with_copy_ids(&text, n)).expect("write");
        }
    }
}

/// A copy's file and folder names, so ids taken from names differ per copy.
fn rename(name: &str, n: usize) -> String {
    match name.split_once('.') {
        Some((stem, ext)) if !stem.is_empty() => format!("{stem}-c{n}.{ext}"),
        _ => format!("{name}-c{n}"),
    }
}

/// Every UUID in the records (session, message and call ids) made unique per copy, and the
/// Qwen fixture's hyphenless id, so no copy is taken for another file's session.
fn with_copy_ids(text: &str, n: usize) -> String {
    static UUID: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = UUID.get_or_init(|| {
        regex::Regex::new(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
            .expect("regex")
    });
    let out = re.replace_all(text, |c: &regex::Captures<'_>| format!("{}-c{n}", &c[0]));
    out.replace(
        "7e8f9a0b1c2d4e3f8a9b0c1d2e3f4a5b",
        &format!("7e8f9a0b1c2d4e3f8a9b0c1d2e3f4a5b-c{n}"),
    )
}

fn bytes_under(dir: &Path) -> u64 {
    let mut total = 0;
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        total += if p.is_dir() {
            bytes_under(&p)
        } else {
            std::fs::metadata(&p).map_or(0, |m| m.len())
        };
    }
    total
}

fn main() {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let sources: Vec<(&str, PathBuf)> = vec![
        ("claude", manifest.join("fixtures/demo/claude")),
        ("codex", manifest.join("fixtures/demo/codex")),
        ("gemini", manifest.join("fixtures/agents/gemini")),
        ("pi", manifest.join("fixtures/agents/pi")),
        ("qwen", manifest.join("fixtures/agents/qwen")),
        ("copilot", manifest.join("fixtures/agents/copilot")),
    ];
    println!("agents_bench: {COPIES} copies per agent, median of {RUNS} from-scratch runs");
    for (agent, src) in sources {
        let tmp = tempfile::tempdir().expect("tmp");
        let root = tmp.path().join("world");
        for n in 0..COPIES {
            copy_tree(&src, &root.join(format!("copy{n}")), n);
        }
        let bytes = bytes_under(&root);
        let mut secs = Vec::new();
        let mut events = 0;
        for run in 0..RUNS {
            let db = tmp.path().join(format!("episodes-{run}.sqlite"));
            let started = Instant::now();
            let s = index_episodes(&db, &IndexOptions::new(vec![root.clone()]), &mut |_| {})
                .expect("index");
            secs.push(started.elapsed().as_secs_f64());
            events = s.events_added;
        }
        secs.sort_by(f64::total_cmp);
        let median = secs[RUNS / 2];
        println!(
            "  {agent:<8} {:>6.2} MB in {median:.3} s = {:>6.1} MB/s, {:>8.0} events/s ({events} events)",
            bytes as f64 / 1e6,
            bytes as f64 / 1e6 / median,
            events as f64 / median
        );
    }
}
