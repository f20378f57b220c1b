//! Packed event text through the binary: a fresh index stores long texts packed and
//! `get-episode` gives them back exactly; a store of the first schema (plain text) is upgraded
//! by `knowledge index` in place — no transcript read again (the transcript is gone by then),
//! the same episodes, search still finding them, no text re-embedded — and it is smaller after.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_knowledge"))
}

/// A long text of `n` sentences, different per `seed` (words of real sessions, repeated the
/// way tool output and code repeat: what packing is for).
fn long_text(seed: usize, n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                "step {i} of run {seed}: the deploy of service-{seed} failed because the mysql \
                 connection to db-{} timed out after {} ms; retried with backoff.",
                (seed * 7 + i) % 13,
                100 + i * 17
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn transcript() -> (String, Vec<String>) {
    let mut texts = Vec::new();
    let mut body = String::new();
    for i in 0..40 {
        let (role, text) = match i % 3 {
            0 => (
                "user",
                format!("why does service-{i} fail (short question {i})"),
            ),
            _ => ("assistant", long_text(i, 12 + i % 7)),
        };
        body += &(json!({
            "type": role, "sessionId": "s1", "uuid": format!("u{i}"), "cwd": "/srv/app",
            "timestamp": format!("2026-10-01T10:{:02}:00.000Z", i),
            "message": {"role": role, "content": text},
        })
        .to_string()
            + "\n");
        texts.push(text);
    }
    (body, texts)
}

struct Home {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    data: PathBuf,
}

impl Home {
    fn new() -> (Home, Vec<String>) {
        let tmp = tempfile::tempdir().expect("tmp");
        let root = tmp.path().join("sessions/claude/projects/-srv-app");
        std::fs::create_dir_all(&root).expect("root");
        let (body, texts) = transcript();
        std::fs::write(root.join("s1.jsonl"), body).expect("write");
        let data = tmp.path().join("data");
        let home = Home {
            root: tmp.path().join("sessions"),
            data,
            _tmp: tmp,
        };
        (home, texts)
    }

    fn run(&self, args: &[&str]) -> Vec<u8> {
        let out = bin()
            .env("HOME", self.data.join("home"))
            .arg("--data-dir")
            .arg(&self.data)
            .args(args)
            .output()
            .expect("runs");
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    }

    fn index(&self) -> Value {
        let root = self.root.to_string_lossy().to_string();
        serde_json::from_slice(&self.run(&["index", "--sessions", &root, "--json"])).expect("json")
    }

    /// Every event's text as `get-episode` prints it (JSON), one call per event.
    fn episode_texts(&self, n: usize) -> Vec<String> {
        (1..=n)
            .map(|seq| {
                let out = self.run(&[
                    "get-episode",
                    &format!("ep:s1:{seq}"),
                    "--context",
                    "0",
                    "--json",
                ]);
                let v: Value = serde_json::from_slice(&out).expect("json");
                let events = v["events"].as_array().expect("events");
                assert_eq!(events.len(), 1, "{v}");
                events[0]["text"].as_str().expect("text").to_string()
            })
            .collect()
    }

    fn db(&self) -> PathBuf {
        self.data.join("episodes.sqlite")
    }
}

fn user_version(db: &Path) -> i64 {
    let c = rusqlite::Connection::open(db).expect("open");
    c.query_row("PRAGMA user_version", [], |r| r.get(0))
        .expect("version")
}

fn packed_rows(db: &Path) -> i64 {
    let c = rusqlite::Connection::open(db).expect("open");
    c.query_row(
        "SELECT count(*) FROM event_rows WHERE typeof(text) = 'blob'",
        [],
        |r| r.get(0),
    )
    .expect("count")
}

/// Turn a store back into the first schema, as a build before packing wrote it: `events` a
/// table of plain text, user_version 1, vacuumed.
fn downgrade_to_schema_1(db: &Path) {
    let c = knowledge::sources::sqlite::open_writer(db).expect("open");
    c.execute_batch(
        "CREATE TABLE events_plain(
            id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, seq INTEGER NOT NULL,
            event_type TEXT NOT NULL, time TEXT, time_ms INTEGER, text TEXT NOT NULL,
            human INTEGER NOT NULL, tool_name TEXT, tool_use_id TEXT, is_error INTEGER NOT NULL,
            sidechain_agent TEXT, facts TEXT, UNIQUE(session_id, seq));
         INSERT INTO events_plain SELECT * FROM events;
         DROP VIEW events;
         DROP TABLE event_rows;
         ALTER TABLE events_plain RENAME TO events;
         CREATE INDEX events_time ON events(time_ms);
         PRAGMA user_version = 1;",
    )
    .expect("downgrade");
    drop(c);
    let c = rusqlite::Connection::open(db).expect("open");
    c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE); VACUUM;")
        .expect("vacuum");
}

#[test]
fn long_texts_are_stored_packed_and_read_back_exactly() {
    let (home, texts) = Home::new();
    let v = home.index();
    assert_eq!(v["episodes"]["events_added"], json!(texts.len()));
    assert_eq!(user_version(&home.db()), 2);
    let long = texts.iter().filter(|t| t.len() >= 200).count() as i64;
    assert!(
        packed_rows(&home.db()) >= long,
        "every long text is packed ({long} long texts)"
    );
    assert_eq!(home.episode_texts(texts.len()), texts);
}

#[test]
fn a_plain_text_store_is_upgraded_in_place_without_the_transcripts() {
    let (home, texts) = Home::new();
    home.index();
    let fresh_bytes = std::fs::metadata(home.db()).expect("db").len();
    let before = home.episode_texts(texts.len());
    let search = |home: &Home| -> Value {
        serde_json::from_slice(&home.run(&["search", "-q", "backoff service-7 db-10"]))
            .expect("json")
    };
    let found_before = search(&home)["lanes"]["episodes"]["items"].clone();
    assert!(!found_before.as_array().expect("items").is_empty());

    downgrade_to_schema_1(&home.db());
    assert_eq!(user_version(&home.db()), 1);
    let plain_bytes = std::fs::metadata(home.db()).expect("db").len();
    // The transcript is gone: whatever the store keeps now comes from the store alone.
    std::fs::remove_dir_all(&home.root).expect("remove transcripts");
    std::fs::create_dir_all(&home.root).expect("empty root");

    let v = home.index();
    assert_eq!(user_version(&home.db()), 2, "upgraded");
    assert_eq!(
        v["episodes"]["events_added"],
        json!(0),
        "nothing was read again"
    );
    assert_eq!(
        v["vectors"]["events"],
        json!(0),
        "the codes stay valid: no text is embedded again"
    );
    assert!(packed_rows(&home.db()) > 0);
    assert_eq!(home.episode_texts(texts.len()), before, "the same episodes");
    assert_eq!(before, texts);
    assert_eq!(
        search(&home)["lanes"]["episodes"]["items"],
        found_before,
        "search finds the same events"
    );
    let upgraded_bytes = std::fs::metadata(home.db()).expect("db").len();
    assert!(
        upgraded_bytes < plain_bytes,
        "the upgraded store is smaller: {upgraded_bytes} vs {plain_bytes} bytes plain"
    );
    assert!(
        upgraded_bytes <= fresh_bytes + 8192,
        "{upgraded_bytes} vs {fresh_bytes}"
    );
}
