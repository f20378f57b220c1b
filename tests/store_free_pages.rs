//! The store file after an index run: few pages left free on SQLite's freelist after a fresh full
//! index and after a later run that grew it, and the full-text index beside it (Tantivy) in few
//! segments, its merges finished before the run ends. A small run (what a watch runner does every
//! few seconds) leaves the file alone: it is never rewritten by a `VACUUM`, not even a store made
//! before incremental vacuuming existed.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_knowledge"))
}

/// One Claude Code session of `events` events, its words its own (so every session adds terms
/// and postings to the full-text index, as real sessions do).
fn write_session(root: &Path, n: usize, events: usize) {
    let mut body = String::new();
    for i in 0..events {
        let (role, text) = if i % 2 == 0 {
            (
                "user",
                format!("why does worker{n} crash on job{i} (question {n}-{i})"),
            )
        } else {
            let lines: Vec<String> = (0..8)
                .map(|k| {
                    format!(
                        "line {k}: module{n}x{i} raised error{} in handler{} after {} ms, \
                         retried queue{n} with token{}",
                        (n * 31 + i * 7 + k) % 997,
                        (n + k) % 53,
                        100 + k * 13,
                        n * 1000 + i * 10 + k
                    )
                })
                .collect();
            ("assistant", lines.join("\n"))
        };
        let record = json!({
            "type": role, "sessionId": format!("s{n}"), "uuid": format!("u{n}-{i}"),
            "cwd": "/srv/app",
            "timestamp": format!("2026-10-01T10:{:02}:{:02}.000Z", n % 60, i % 60),
            "message": {"role": role, "content": text},
        });
        body += &(record.to_string() + "\n");
    }
    std::fs::write(root.join(format!("s{n}.jsonl")), body).expect("write session");
}

struct Home {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    data: PathBuf,
}

impl Home {
    fn new() -> Home {
        let tmp = tempfile::tempdir().expect("tmp");
        let data = tmp.path().join("data");
        std::fs::create_dir_all(&data).expect("data");
        std::fs::write(data.join("config.toml"), "[lanes]\ntimeout_ms = 60000\n").expect("config");
        let root = tmp.path().join("sessions/claude/projects/-srv-app");
        std::fs::create_dir_all(&root).expect("root");
        Home {
            root,
            data,
            _tmp: tmp,
        }
    }

    fn index(&self) {
        let out = bin()
            .env("HOME", self.data.join("home"))
            .arg("--data-dir")
            .arg(&self.data)
            .args(["index", "--sessions"])
            .arg(self.root.parent().and_then(Path::parent).expect("sessions"))
            .arg("--json")
            .output()
            .expect("runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn db(&self) -> rusqlite::Connection {
        rusqlite::Connection::open(self.data.join("episodes.sqlite")).expect("open store")
    }

    /// (page_count, freelist_count, auto_vacuum) of the episodes store.
    fn pages(&self) -> (i64, i64, i64) {
        let c = self.db();
        let q = |p: &str| c.query_row(p, [], |r| r.get::<_, i64>(0)).expect(p);
        (
            q("PRAGMA page_count"),
            q("PRAGMA freelist_count"),
            q("PRAGMA auto_vacuum"),
        )
    }

    /// Segments of the full-text index's last commit (`meta.json`).
    fn lexical_segments(&self) -> usize {
        let dir = knowledge::sources::lexical::dir_for(&self.data.join("episodes.sqlite"));
        let meta: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("meta.json")).expect("meta.json"))
                .expect("json");
        meta["segments"].as_array().expect("segments").len()
    }
}

/// Sessions of the first index: enough that a short session's run frees well under 1/20 of the
/// file, as it does in any real store (at a few hundred KB, a handful of pages is 1/20).
const BASE: usize = 200;

/// At most 1/20 of the file free, as the index run leaves it.
fn assert_few_free(home: &Home, when: &str) {
    let (pages, free, _) = home.pages();
    assert!(
        free * 20 <= pages,
        "{when}: {free} of {pages} pages left free on the freelist"
    );
}

#[test]
fn a_fresh_index_and_a_run_that_grows_it_leave_few_free_pages_and_few_segments() {
    let home = Home::new();
    for n in 0..BASE {
        write_session(&home.root, n, 30);
    }
    home.index();
    assert_eq!(
        home.lexical_segments(),
        1,
        "a fresh full index is one segment"
    );
    assert_few_free(&home, "after a fresh full index");
    assert_eq!(home.pages().2, 2, "a new store vacuums incrementally");

    // A third more sessions, then ten small runs: the merges keep the segments few.
    let (before, _, _) = home.pages();
    for n in BASE..BASE + BASE / 3 {
        write_session(&home.root, n, 30);
    }
    home.index();
    for n in 0..10 {
        write_session(&home.root, 20_000 + n, 4);
        home.index();
    }
    assert!(
        home.lexical_segments() <= 8,
        "{} segments after eleven runs",
        home.lexical_segments()
    );
    assert_few_free(&home, "after runs that grew the store");
    assert!(home.pages().0 > before, "the store grew by what was added");
}

#[test]
fn a_small_run_never_vacuums_an_old_store() {
    let home = Home::new();
    for n in 0..BASE {
        write_session(&home.root, n, 30);
    }
    home.index();
    // A store made before incremental vacuuming: the same file without it.
    home.db()
        .execute_batch("PRAGMA auto_vacuum = NONE; VACUUM;")
        .expect("back to auto_vacuum none");
    assert_eq!(home.pages().2, 0);

    // One short session, as a watch runner indexes it: no rewrite of the file, which a VACUUM
    // would have switched to incremental vacuuming.
    write_session(&home.root, 10_000, 4);
    home.index();
    assert_eq!(home.pages().2, 0, "a small run did not VACUUM the store");
    assert_few_free(&home, "after a small run");
}
