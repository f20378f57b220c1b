//! Transcripts that used to be stored twice, misread or emptied of their results: moved and
//! copied files, edits that are not appends, absurd ids and paths, broken text encodings and
//! a line built to cost seconds.

use std::path::{Path, PathBuf};

use knowledge::contract::SearchRequest;
use knowledge::engine::{Engine, EngineConfig};
use knowledge::sources::episodes::index::{index_episodes, IndexOptions, IndexSummary};
use serde_json::json;

/// A temp dir with transcript roots and a data dir, indexed on demand.
struct Bench {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    data: PathBuf,
    roots: Vec<PathBuf>,
}

impl Bench {
    fn new(roots: &[&str]) -> Bench {
        let tmp = tempfile::tempdir().expect("tmp");
        let root = tmp.path().to_path_buf();
        let data = root.join("data");
        std::fs::create_dir_all(&data).expect("data");
        let roots = roots.iter().map(|r| root.join(r)).collect::<Vec<_>>();
        for r in &roots {
            std::fs::create_dir_all(r).expect("root");
        }
        Bench {
            _tmp: tmp,
            root,
            data,
            roots,
        }
    }

    fn write(&self, rel: &str, body: &[u8]) -> PathBuf {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
        std::fs::write(&path, body).expect("write");
        path
    }

    fn index(&self) -> IndexSummary {
        index_episodes(
            &EngineConfig::new(&self.data).episodes_db(),
            &IndexOptions::new(self.roots.clone()),
            &mut |_| {},
        )
        .expect("index")
    }

    fn engine(&self) -> Engine {
        Engine::open(EngineConfig::new(&self.data))
    }

    fn sessions(&self) -> Vec<(String, i64)> {
        let conn =
            knowledge::sources::sqlite::open_ro(&EngineConfig::new(&self.data).episodes_db())
                .expect("db");
        let mut stmt = conn
            .prepare("SELECT session_id, events FROM sessions ORDER BY session_id")
            .expect("sql");
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .expect("rows")
            .map(|r| r.expect("row"))
            .collect();
        rows
    }

    fn texts(&self, session: &str) -> Vec<String> {
        let conn =
            knowledge::sources::sqlite::open_ro(&EngineConfig::new(&self.data).episodes_db())
                .expect("db");
        let mut stmt = conn
            .prepare("SELECT text FROM events WHERE session_id=?1 ORDER BY seq")
            .expect("sql");
        let rows = stmt
            .query_map([session], |r| r.get(0))
            .expect("rows")
            .map(|r| r.expect("row"))
            .collect();
        rows
    }

    fn search_ids(&self, query: &str) -> Vec<String> {
        let resp = self.engine().search(&SearchRequest::new(query));
        resp.lanes
            .episodes
            .items
            .iter()
            .map(|i| i.id.clone())
            .collect()
    }
}

fn claude(session: &str, uuid: &str, text: &str) -> String {
    claude_in(session, uuid, text, "/srv/app")
}

fn claude_in(session: &str, uuid: &str, text: &str, cwd: &str) -> String {
    json!({
        "type": "user", "sessionId": session, "uuid": uuid, "cwd": cwd,
        "timestamp": "2026-10-01T10:00:00.000Z",
        "message": {"role": "user", "content": text},
    })
    .to_string()
        + "\n"
}

fn codex_meta(id: &str) -> String {
    json!({
        "timestamp": "2026-10-01T10:00:00.000Z", "type": "session_meta",
        "payload": {"id": id, "cwd": "/srv/app", "originator": "codex_cli_rs"},
    })
    .to_string()
        + "\n"
}

fn codex_user(text: &str) -> String {
    json!({
        "timestamp": "2026-10-01T10:00:01.000Z", "type": "event_msg",
        "payload": {"type": "user_message", "message": text},
    })
    .to_string()
        + "\n"
}

#[test]
fn a_codex_rollout_moved_to_archived_sessions_keeps_its_session_and_ids() {
    let b = Bench::new(&["codex/sessions", "codex/archived_sessions"]);
    let id = "0199a213-81c0-7800-8aa1-bbab2a035a53";
    let name = format!("rollout-2026-10-01T10-00-00-{id}.jsonl");
    let body = codex_meta(id) + &codex_user("the nginx upstream times out") + &codex_user("fixed");
    let live = b.write(
        &format!("codex/sessions/2026/10/01/{name}"),
        body.as_bytes(),
    );
    b.index();
    let before = b.search_ids("nginx upstream");
    assert!(!before.is_empty(), "indexed");
    let archived = b.root.join("codex/archived_sessions").join(&name);
    std::fs::rename(&live, &archived).expect("archive");
    let s = b.index();
    assert_eq!((s.files_moved, s.files_gone), (1, 0), "{s:?}");
    assert_eq!(b.sessions(), vec![(id.to_string(), 2)], "stored once");
    assert_eq!(
        b.search_ids("nginx upstream"),
        before,
        "the same episode ids"
    );
    let ep = b.engine().get_episode(id, 1, 0).expect("opens");
    assert_eq!(Path::new(&ep.session.path), archived);
    // Nothing new on the next run: the vanished path is not a second session either.
    let s = b.index();
    assert_eq!((s.files_unchanged, s.events_added), (1, 0));
    // Deleted for good (a retention job): the session stays searchable, counted as gone.
    std::fs::remove_file(&archived).expect("delete");
    let s = b.index();
    assert_eq!(s.files_gone, 1, "{s:?}");
    assert_eq!(b.search_ids("nginx upstream"), before);
}

#[test]
fn a_copied_claude_project_folder_is_stored_once() {
    let b = Bench::new(&["projects"]);
    let body = claude("s1", "u1", "the flaky login test") + &claude("s1", "u2", "retry logic");
    b.write("projects/-home-me-app/s1.jsonl", body.as_bytes());
    b.index();
    // Copied to the folder of the project's new location, then continued there.
    let grown = body.clone() + &claude("s1", "u3", "now with a longer timeout");
    let copy = b.write("projects/-home-me-new-app/s1.jsonl", grown.as_bytes());
    let s = b.index();
    assert_eq!(b.sessions(), vec![("s1".to_string(), 3)], "{s:?}");
    let ep = b
        .engine()
        .get_episode("s1", 3, 0)
        .expect("the continued copy owns s1");
    assert_eq!(Path::new(&ep.session.path), copy);
    // An identical copy stores nothing either.
    b.write("projects/-mnt-backup/s1.jsonl", grown.as_bytes());
    let s = b.index();
    assert_eq!((s.files_copies, s.events_added), (1, 0), "{s:?}");
    assert_eq!(b.sessions(), vec![("s1".to_string(), 3)]);
}

#[test]
fn lines_inserted_in_the_middle_are_re_read_not_taken_as_an_append() {
    let b = Bench::new(&["projects"]);
    // The first 4 KiB (all an append check used to look at) stay the same.
    let head = claude("s1", "u0", &"context ".repeat(700));
    let (a, c) = (claude("s1", "u1", "alpha"), claude("s1", "u3", "gamma"));
    let path = b.write("projects/p/s1.jsonl", (head.clone() + &a + &c).as_bytes());
    b.index();
    let inserted = head + &a + &claude("s1", "u2", "beta") + &c + &claude("s1", "u4", "delta");
    std::fs::write(&path, inserted).expect("rewrite");
    let s = b.index();
    assert_eq!((s.files_rewritten, s.events_added), (1, 2), "{s:?}");
    // Every stored id keeps its text (docs/EVENTS.md, "Event identity"): the inserted line is
    // a new event after the last seq, not a renumbering of the ones after it.
    assert_eq!(
        b.texts("s1").get(1..).map(<[String]>::to_vec),
        Some(vec![
            "alpha".into(),
            "gamma".into(),
            "beta".into(),
            "delta".into()
        ])
    );
}

#[test]
fn a_same_size_edit_past_the_head_is_picked_up() {
    let b = Bench::new(&["projects"]);
    let long = claude("s1", "u1", &"context ".repeat(700));
    let path = b.write(
        "projects/p/s1.jsonl",
        (long.clone() + &claude("s1", "u2", "alpha")).as_bytes(),
    );
    b.index();
    std::fs::write(&path, long + &claude("s1", "u2", "omega")).expect("edit in place");
    // The same size: only the mtime says something changed.
    let s = b.index();
    assert_eq!((s.files_rewritten, s.events_added), (1, 1), "{s:?}");
    // The edited line is a new event; the old text stays under its id.
    assert_eq!(b.texts("s1").last().map(String::as_str), Some("omega"));
    assert_eq!(b.texts("s1").get(1).map(String::as_str), Some("alpha"));
    assert_eq!(b.texts("s1").len(), 3);
}

#[test]
fn a_huge_cwd_or_session_id_does_not_empty_the_results() {
    let b = Bench::new(&["projects", "codex"]);
    let cwd = format!("/{}", "d".repeat(12_000));
    b.write(
        "projects/p/s1.jsonl",
        claude_in("s1", "u1", "kubernetes ingress certificate", &cwd).as_bytes(),
    );
    let huge_id = "x".repeat(100_000);
    let codex = codex_meta(&huge_id) + &codex_user("kubernetes ingress renewal");
    b.write(
        "codex/rollout-2026-10-01T10-00-00-r1.jsonl",
        codex.as_bytes(),
    );
    let s = b.index();
    assert_eq!(
        s.lines.skipped_bad_id, 1,
        "the meta record is skipped: {s:?}"
    );
    let resp = b.engine().search(&SearchRequest::new("kubernetes ingress"));
    let items = &resp.lanes.episodes.items;
    assert_eq!(items.len(), 2, "{:?}", resp.limits);
    for item in items {
        assert!(item.session_id.len() <= 200, "bounded id");
        assert!(item.session.cwd.as_deref().is_none_or(|c| c.len() <= 1024));
    }
    let json = serde_json::to_string(&resp).expect("json");
    assert!(
        json.len() < 50_000,
        "a bounded response: {} bytes",
        json.len()
    );
}

#[test]
fn an_empty_codex_session_id_still_gives_events_that_open() {
    let b = Bench::new(&["codex"]);
    let body = codex_meta("") + &codex_user("postgres vacuum stalls");
    b.write(
        "codex/rollout-2026-10-01T10-00-00-r2.jsonl",
        body.as_bytes(),
    );
    b.index();
    let ids = b.search_ids("postgres vacuum");
    let id = ids.first().expect("found");
    let (session, seq) = id
        .strip_prefix("ep:")
        .and_then(|r| r.rsplit_once(':'))
        .expect("ep:<session>:<seq>");
    assert!(!session.is_empty(), "{id}");
    let seq: u64 = seq.parse().expect("seq");
    b.engine().get_episode(session, seq, 0).expect("opens");
}

#[test]
fn invalid_utf8_and_lone_surrogates_cost_a_character_not_the_event() {
    let b = Bench::new(&["projects"]);
    let mut body = claude("s1", "u1", "before BROKEN after").into_bytes();
    let at = body
        .windows(6)
        .position(|w| w == b"BROKEN")
        .expect("marker");
    body.splice(at..at + 6, [0xff, 0xfe, b'o', b'k']);
    body.extend_from_slice(
        br#"{"type":"user","sessionId":"s1","uuid":"u2","cwd":"/srv/app","timestamp":"2026-10-01T10:00:00.000Z","message":{"role":"user","content":"emoji cut \ud83d here"}}"#,
    );
    body.push(b'\n');
    b.write("projects/p/s1.jsonl", &body);
    let s = b.index();
    assert_eq!(s.lines.skipped_broken, 0, "{s:?}");
    assert_eq!(
        b.texts("s1"),
        vec!["before \u{fffd}\u{fffd}ok after", "emoji cut \u{fffd} here"]
    );
}

#[test]
fn a_line_of_300k_tiny_blocks_is_skipped_unbuilt_and_counted() {
    let b = Bench::new(&["projects"]);
    let blocks: Vec<_> = (0..300_000)
        .map(|_| json!({"type": "text", "text": "a"}))
        .collect();
    let bomb = json!({
        "type": "user", "sessionId": "s1", "uuid": "u1", "cwd": "/srv/app",
        "message": {"role": "user", "content": blocks},
    })
    .to_string();
    assert!(bomb.len() > 6_000_000);
    let body = bomb + "\n" + &claude("s1", "u2", "the next line is kept");
    b.write("projects/p/s1.jsonl", body.as_bytes());
    let s = b.index();
    assert_eq!(s.lines.skipped_oversized, 1, "{s:?}");
    assert_eq!(b.texts("s1"), vec!["the next line is kept"]);
}
