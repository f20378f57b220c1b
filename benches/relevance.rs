//! The relevance benchmark (run with `cargo bench --bench relevance`): labelled questions in
//! `benches/relevance/questions.toml` (the tuning set) and `benches/relevance/heldout.toml`,
//! `heldout2.toml` and `heldout3.toml` (the held-out sets, written before the changes they judge;
//! never tuned on)
//! over the bundled demo
//! world and the public transcripts and skills in `../shared/realdata` (its questions are
//! skipped, with a note, where it is absent), each asked exactly as a person would (a default
//! request: every
//! lane, limit 10, the default budget), scored per lane, per intent and per kind of question.
//!
//! Why it exists: a ranking, routing, budget or embedding change is judged by these figures, not
//! by eye on one query. `docs/RELEVANCE.md` records them with what changed them.
//!
//! Metrics, for the questions that label a lane: recall@1 and recall@5 (an accepted item is
//! first / in the first five of that lane), MRR (1/rank of the first accepted item, 0 when none
//! is returned), the zero-result rate (the lane came back empty), and over whole responses: how
//! often routing picked the labelled intent, how often a response held no item at all, and how
//! often it carried both episode and code evidence (contract §11).
//!
//! `KNOWLEDGE_RELEVANCE_JSON=FILE` also writes every figure as JSON (to compare two runs);
//! `KNOWLEDGE_RELEVANCE_VERBOSE=1` prints each question's ranks.

#[path = "relevance/model.rs"]
mod model;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use knowledge::contract::SearchRequest;
use knowledge::demo;
use knowledge::engine::{Engine, EngineConfig};
use knowledge::indexing::{index_all, IndexPlan};
use model::{Ranks, Tally, SETS};

fn main() {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut questions = Vec::new();
    for (file, set) in SETS {
        let path = manifest.join("benches/relevance").join(file);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
        questions.extend(model::parse(&text, set).unwrap_or_else(|e| panic!("{file}: {e}")));
    }

    // Held to the end of `main`: the engines read the data dirs under it while the questions run.
    let work = work_dir();
    let demo_engine = index_demo(&work.path);
    let real_engine = realdata(&manifest).map(|root| index_real(&root, &work.path));
    if real_engine.is_none() {
        println!("relevance: ../shared/realdata is absent: the real-world questions are skipped");
    }
    let verbose = std::env::var_os("KNOWLEDGE_RELEVANCE_VERBOSE").is_some();

    let mut groups: BTreeMap<String, Tally> = BTreeMap::new();
    for q in &questions {
        let engine = match (q.world.as_str(), &real_engine) {
            ("demo", _) => &demo_engine,
            (_, Some(real)) => real,
            (_, None) => continue,
        };
        let resp = engine.search(&SearchRequest::new(q.query.clone()));
        let ranks = Ranks::of(q, &resp);
        if verbose {
            let reasons: Vec<String> = resp
                .warnings
                .iter()
                .chain(&resp.errors)
                .map(|w| format!("{}: {}", w.code.as_str(), w.message))
                .collect();
            let skills = resp.lanes.skills.as_ref().map(|s| {
                (
                    s.items.len(),
                    s.header.degradation_reason.clone(),
                    s.header.index_rev.clone(),
                )
            });
            println!("{:<32} {} {reasons:?} {skills:?}", q.id, ranks.describe());
        }
        for key in q.group_keys() {
            groups.entry(key).or_default().add(q, &ranks);
        }
    }

    let count = |set: &str, world: Option<&str>| {
        questions
            .iter()
            .filter(|q| q.set == set && world.is_none_or(|w| q.world == w))
            .count()
    };
    for (_, set) in SETS {
        println!(
            "relevance {set}: {} questions ({} demo, {} real)",
            count(set, None),
            count(set, Some("demo")),
            count(set, Some("real"))
        );
    }
    model::print_table(&groups);
    if let Some(path) = std::env::var_os("KNOWLEDGE_RELEVANCE_JSON") {
        let json = serde_json::to_string_pretty(&model::to_json(&groups)).expect("json");
        std::fs::write(&path, json).expect("write KNOWLEDGE_RELEVANCE_JSON");
        println!("figures written to {}", Path::new(&path).display());
    }
}

/// `KNOWLEDGE_RELEVANCE_SEMANTIC=0`: index and search lexically (the baseline the semantic arm
/// is compared with); anything else keeps the default, semantic search on.
fn semantic() -> bool {
    std::env::var_os("KNOWLEDGE_RELEVANCE_SEMANTIC").is_none_or(|v| v != "0")
}

/// A data dir whose config says whether the semantic arm is on.
fn data_dir(path: PathBuf) -> PathBuf {
    std::fs::create_dir_all(&path).expect("data dir");
    let config = format!("[search]\nsemantic = {}\n", semantic());
    std::fs::write(path.join("config.toml"), config).expect("config");
    path
}

/// Where the demo world is materialised and both worlds are indexed: one absolute path for every
/// checkout (`knowledge-relevance-bench` in the system temp dir, `$TMPDIR` or `/tmp`), emptied
/// first, never a fresh temp dir and never a path inside the checkout. The demo world's
/// transcripts hold the path they were materialised at (its `@DEMO@` placeholder: cwd, file
/// paths), so a random temp-dir name (`.tmpXk3Rq9`) split into different words and pieces on
/// every run, and `target/tmp/relevance` of each checkout differed between worktrees: either moved
/// BM25 lengths and event vectors and with them a few ranks. Figures are comparable only between
/// runs that print the same path.
const WORK_DIR: &str = "knowledge-relevance-bench";

/// The work dir, emptied and owned by this run until the guard drops (the process ends): runs
/// from several checkouts share the path, so each takes an exclusive lock on a file beside it
/// (not inside: it is wiped) and waits for the one before it. The kernel drops the lock if a run
/// is killed, and the next run wipes what it left.
struct WorkDir {
    path: PathBuf,
    _lock: std::fs::File,
}

fn work_dir() -> WorkDir {
    let tmp = std::env::temp_dir();
    let path = tmp.join(WORK_DIR);
    let lock_path = tmp.join(format!("{WORK_DIR}.lock"));
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .unwrap_or_else(|e| panic!("open the bench lock {}: {e}", lock_path.display()));
    match lock.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            println!(
                "relevance: another run holds {}; waiting for it",
                lock_path.display()
            );
            lock.lock()
                .unwrap_or_else(|e| panic!("lock {}: {e}", lock_path.display()));
        }
        Err(std::fs::TryLockError::Error(e)) => panic!("lock {}: {e}", lock_path.display()),
    }
    match std::fs::remove_dir_all(&path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => panic!("empty {}: {e}", path.display()),
    }
    std::fs::create_dir_all(&path).expect("relevance work dir");
    println!("relevance: indexing under {}", path.display());
    WorkDir { path, _lock: lock }
}

fn index_demo(tmp: &Path) -> Engine {
    let world = demo::materialize(&demo::bundled_world(), &tmp.join("demo-world"))
        .expect("materialise the demo world");
    let data = data_dir(tmp.join("demo-data"));
    index_all(&data, &world.plan(), &mut |_| {}).expect("index the demo world");
    open(&data)
}

/// The real transcripts, skills and agent definitions: `../shared/realdata` beside the checkout,
/// else `/work/shared/realdata`; third-party data, never copied into the repository.
fn realdata(manifest: &Path) -> Option<PathBuf> {
    [
        manifest.join("../shared/realdata"),
        PathBuf::from("/work/shared/realdata"),
    ]
    .into_iter()
    .find(|p| p.join("SOURCES.md").is_file())
}

fn index_real(root: &Path, tmp: &Path) -> Engine {
    let data = data_dir(tmp.join("real-data"));
    let existing = |p: PathBuf| p.exists().then_some(p);
    let plan = IndexPlan {
        sessions: vec![root.join("claude"), root.join("codex")],
        code: Vec::new(),
        skills: existing(root.join("skills")).into_iter().collect(),
        agents: existing(root.join("agents")).into_iter().collect(),
        rebuild: false,
    };
    index_all(&data, &plan, &mut |_| {}).expect("index realdata");
    open(&data)
}

/// Relevance, not speed, is measured here: a lane must never miss its timeout on a busy
/// machine or in a debug build, or its questions would count as misses.
fn open(data: &Path) -> Engine {
    let mut config = EngineConfig::load(data).expect("config");
    config.lane_timeout = std::time::Duration::from_secs(30);
    Engine::open(config)
}
