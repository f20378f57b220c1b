//! Event identity through the binary: what `knowledge index` reports and what an
//! `ep:<session>:<seq>` names after a transcript is touched, moved, shortened, copied and
//! continued elsewhere, or linked under another name; and Aider histories found and read
//! incrementally by a bare `knowledge index`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_knowledge"))
}

struct Home {
    tmp: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        let tmp = tempfile::tempdir().expect("tmp");
        std::fs::create_dir_all(tmp.path().join("sessions")).expect("root");
        Home { tmp }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.tmp.path().join(rel)
    }

    fn write(&self, rel: &str, body: &str) -> PathBuf {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("dirs");
        std::fs::write(&p, body).expect("write");
        p
    }

    /// `knowledge index --sessions <root> --json`: the episodes summary.
    fn index(&self) -> Value {
        let out = bin()
            .env("HOME", self.path("home"))
            .args(["--data-dir"])
            .arg(self.path("data"))
            .args(["index", "--sessions"])
            .arg(self.path("sessions"))
            .arg("--json")
            .output()
            .expect("runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).expect("json");
        v["episodes"].clone()
    }

    /// Every stored event as (session, seq, text), in order.
    fn events(&self) -> Vec<(String, i64, String)> {
        let conn =
            knowledge::sources::sqlite::open_ro(&self.path("data/episodes.sqlite")).expect("db");
        let mut stmt = conn
            .prepare("SELECT session_id, seq, text FROM events ORDER BY session_id, seq")
            .expect("prepare");
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .expect("query");
        rows.map(|r| r.expect("row")).collect()
    }

    fn sessions(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.events().into_iter().map(|e| e.0).collect();
        ids.dedup();
        ids
    }
}

fn n(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or(u64::MAX)
}

fn line(role: &str, uuid: &str, text: &str) -> String {
    json!({
        "type": role, "sessionId": "s1", "uuid": uuid, "cwd": "/srv/app",
        "timestamp": format!("2026-10-01T10:00:{:02}.000Z", uuid.len()),
        "message": {"role": role, "content": text},
    })
    .to_string()
        + "\n"
}

fn transcript(turns: &[(&str, &str)]) -> String {
    turns
        .iter()
        .enumerate()
        .map(|(i, (role, text))| line(role, &format!("u{i}"), text))
        .collect()
}

const BASE: [(&str, &str); 4] = [
    ("user", "the nginx upstream times out"),
    ("assistant", "raise proxy_read_timeout to 120s"),
    ("user", "and the keepalive?"),
    ("assistant", "set keepalive_timeout 75s"),
];

#[test]
fn a_touch_with_identical_bytes_adds_nothing_and_is_not_a_rewrite() {
    let h = Home::new();
    let p = h.write("sessions/p/s1.jsonl", &transcript(&BASE));
    assert_eq!(n(&h.index(), "events_added"), 4);
    // Same bytes, new mtime.
    let f = std::fs::File::options()
        .append(true)
        .open(&p)
        .expect("open");
    f.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
        .expect("touch");
    let s = h.index();
    assert_eq!(
        (n(&s, "events_added"), n(&s, "files_rewritten")),
        (0, 0),
        "{s}"
    );
    assert_eq!(n(&s, "files_unchanged"), 1, "{s}");
    assert_eq!(h.events().len(), 4);
}

#[test]
fn a_moved_transcript_reports_no_new_events_and_keeps_its_ids() {
    let h = Home::new();
    let p = h.write("sessions/old-project/s1.jsonl", &transcript(&BASE));
    h.index();
    let before = h.events();
    std::fs::create_dir_all(h.path("sessions/new-project")).expect("dir");
    std::fs::rename(&p, h.path("sessions/new-project/s1.jsonl")).expect("move");
    let s = h.index();
    assert_eq!(n(&s, "events_added"), 0, "{s}");
    assert_eq!((n(&s, "files_moved"), n(&s, "files_new")), (1, 0), "{s}");
    assert_eq!(h.events(), before);
}

#[test]
fn a_shortened_transcript_never_makes_an_id_name_other_text() {
    let h = Home::new();
    let p = h.write("sessions/p/s1.jsonl", &transcript(&BASE));
    h.index();
    let before = h.events();
    // `head -2 f > t && cat t > f`, then the agent appends a new line.
    let short = transcript(&BASE[..2]);
    std::fs::write(&p, &short).expect("shorten");
    let s = h.index();
    assert_eq!(n(&s, "events_added"), 0, "{s}");
    let grown = short + &line("user", "u-new", "now check the upstream health");
    std::fs::write(&p, grown).expect("append");
    let s = h.index();
    assert_eq!(n(&s, "events_added"), 1, "{s}");
    let after = h.events();
    // Every id stored before still names its text; the new line has a new id.
    for ev in &before {
        assert!(after.contains(ev), "{ev:?} changed: {after:?}");
    }
    let new: Vec<_> = after.iter().filter(|e| !before.contains(e)).collect();
    assert_eq!(new.len(), 1);
    assert_eq!(new[0].1, 5);
    assert_eq!(new[0].2, "now check the upstream health");
}

#[test]
fn diverging_copies_stay_one_session_with_shared_events_once() {
    let h = Home::new();
    let body = transcript(&BASE);
    let a = h.write("sessions/-home-me-app/s1.jsonl", &body);
    h.index();
    let b = h.write("sessions/-home-me-app-copy/s1.jsonl", &body);
    h.index();
    std::fs::write(
        &a,
        body.clone() + &line("user", "ua", "branch a: add retries"),
    )
    .expect("a");
    std::fs::write(
        &b,
        body + &line("user", "ub", "branch b: add a circuit breaker"),
    )
    .expect("b");
    h.index();
    h.index();
    assert_eq!(h.sessions(), vec!["s1".to_string()], "no s1~2");
    let texts: Vec<String> = h.events().into_iter().map(|e| e.2).collect();
    for t in BASE.iter().map(|(_, t)| *t) {
        assert_eq!(
            texts.iter().filter(|x| x.as_str() == t).count(),
            1,
            "{t}: {texts:?}"
        );
    }
    assert!(texts.iter().any(|t| t == "branch a: add retries"));
    assert!(texts.iter().any(|t| t == "branch b: add a circuit breaker"));
    assert_eq!(texts.len(), 6);
}

#[cfg(unix)]
#[test]
fn a_hard_link_under_another_name_is_the_same_file() {
    let h = Home::new();
    let p = h.write("sessions/p/s1.jsonl", &transcript(&BASE));
    h.index();
    std::fs::hard_link(&p, h.path("sessions/p/a-renamed.jsonl")).expect("link");
    let s = h.index();
    assert_eq!(n(&s, "events_added"), 0, "{s}");
    assert_eq!(h.sessions(), vec!["s1".to_string()]);
}

fn fixture() -> String {
    let p =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/aider/myrepo/.aider.chat.history.md");
    std::fs::read_to_string(p).expect("fixture")
}

#[test]
fn a_bare_index_finds_the_aider_history_of_the_repository_and_follows_its_appends() {
    let h = Home::new();
    let repo = h.path("work/app");
    std::fs::create_dir_all(repo.join(".git")).expect("repo");
    std::fs::create_dir_all(repo.join("src")).expect("src");
    let history = h.write("work/app/.aider.chat.history.md", &fixture());
    let index = || {
        let out = bin()
            .env("HOME", h.path("home"))
            .env_remove("AIDER_CHAT_HISTORY_FILE")
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("CODEX_HOME")
            .current_dir(repo.join("src"))
            .args(["--data-dir"])
            .arg(h.path("data"))
            .args(["index", "--json"])
            .output()
            .expect("runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).expect("json");
        v["episodes"].clone()
    };
    let s = index();
    assert_eq!((n(&s, "files_new"), n(&s, "events_added")), (1, 14), "{s}");
    // Two planted secrets; the prose rule may count the `password KEY=value` one twice.
    assert!(n(&s, "secrets_redacted") >= 2, "{s}");
    let texts: String = h.events().into_iter().map(|e| e.2).collect();
    assert!(!texts.contains("Aider7FixtureSecret") && !texts.contains("hunter2-fixture"));
    // Aider appends a new run: only it is read.
    let mut more = std::fs::read_to_string(&history).expect("read");
    more.push_str("\n# aider chat started at 2026-10-02 08:00:00\n\n> Aider v0.86.1  \n\n#### why is the healthcheck red?  \n\nThe probe hits /health on the wrong port.\n\n");
    std::fs::write(&history, more).expect("append");
    let s = index();
    assert_eq!(
        (n(&s, "files_appended"), n(&s, "events_added")),
        (1, 3),
        "{s}"
    );
    let ids = h.sessions();
    assert_eq!(ids.len(), 4, "{ids:?}");
    assert!(ids.iter().all(|i| i.starts_with("aider-")));
    // Searching finds it, labelled with its agent.
    let out = bin()
        .args(["--data-dir"])
        .arg(h.path("data"))
        .args([
            "search",
            "-q",
            "healthcheck probe port",
            "--include",
            "episodes",
        ])
        .output()
        .expect("search");
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    let item = &v["lanes"]["episodes"]["items"][0];
    assert_eq!(item["surface"], "aider", "{v}");
    assert!(item["session_id"]
        .as_str()
        .is_some_and(|s| s.ends_with("-20261002080000")));
}
