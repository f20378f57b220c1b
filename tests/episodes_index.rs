//! The episodes indexer on disk: incremental by fingerprint, growing files read from their last
//! complete line, rewritten files re-read, transcripts never modified; and the episodes lane's
//! filters (sessions with their subagents, time range, outcome) on the demo world.

mod common;

use std::io::Write;

use knowledge::contract::{Outcome, OutcomeFilter, SearchRequest};
use knowledge::engine::{Engine, EngineConfig};
use knowledge::sources::episodes::index::{index_episodes, IndexOptions};

fn line(session: &str, uuid: &str, parent: &str, text: &str, ts: &str) -> String {
    record(
        session,
        uuid,
        parent,
        ts,
        "user",
        serde_json::json!({"role": "user", "content": text}),
    )
}

fn assistant(session: &str, uuid: &str, parent: &str, text: &str, ts: &str) -> String {
    let message = serde_json::json!({
        "id": format!("msg_{uuid}"), "type": "message", "role": "assistant", "model": "claude",
        "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
    });
    record(session, uuid, parent, ts, "assistant", message)
}

fn record(
    session: &str,
    uuid: &str,
    parent: &str,
    ts: &str,
    kind: &str,
    message: serde_json::Value,
) -> String {
    serde_json::json!({
        "parentUuid": if parent.is_empty() { serde_json::Value::Null } else { parent.into() },
        "isSidechain": false, "userType": "external", "cwd": "/srv/app",
        "sessionId": session, "version": "2.1.39", "gitBranch": "main", "type": kind,
        "message": message, "uuid": uuid, "timestamp": ts,
    })
    .to_string()
        + "\n"
}

#[test]
fn incremental_indexing_appends_skips_and_rereads() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path().join("projects/-srv-app");
    std::fs::create_dir_all(&root).expect("dirs");
    let file = root.join("s1.jsonl");
    let first = line(
        "s1",
        "u1",
        "",
        "the nginx config is broken",
        "2026-10-01T10:00:00.000Z",
    );
    // A live file: the last line is still being written (no newline yet).
    std::fs::write(&file, format!("{first}{{\"type\":\"user\",\"mess")).expect("write");
    let db = dir.path().join("data/episodes.sqlite");
    std::fs::create_dir_all(db.parent().expect("parent")).expect("dirs");
    let opts = IndexOptions::new(vec![dir.path().join("projects")]);
    let before = std::fs::read(&file).expect("read");

    let s = index_episodes(&db, &opts, &mut |_| {}).expect("index");
    assert_eq!((s.files_new, s.events_added), (1, 1));
    assert_eq!(
        std::fs::read(&file).expect("read"),
        before,
        "transcripts are never modified"
    );

    let s = index_episodes(&db, &opts, &mut |_| {}).expect("index");
    assert_eq!(
        (s.files_unchanged, s.events_added),
        (1, 0),
        "unchanged file skipped"
    );
    let rev = s.index_rev.clone();

    // The writer finishes the line and adds another: only the new events are read.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .expect("open");
    let rest = assistant(
        "s1",
        "u2",
        "u1",
        "fixed the nginx upstream timeout",
        "2026-10-01T10:05:00.000Z",
    );
    let second = line(
        "s1",
        "u3",
        "u2",
        "thanks, works now",
        "2026-10-01T10:06:00.000Z",
    );
    // Complete the torn line as a (broken) record, then two good ones.
    f.write_all(format!("age\"}}\n{rest}{second}").as_bytes())
        .expect("append");
    drop(f);
    let s = index_episodes(&db, &opts, &mut |_| {}).expect("index");
    assert_eq!(s.files_appended, 1);
    assert_eq!(s.events_added, 2, "only the new events");
    assert_eq!(
        s.lines.skipped_broken, 1,
        "the torn line is counted, not fatal"
    );
    assert_ne!(s.index_rev, rev, "index_rev changes with content");

    let engine = Engine::open(EngineConfig::new(dir.path().join("data")));
    let ep = engine.get_episode("s1", 3, 5).expect("episode");
    let seqs: Vec<u64> = ep.events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, [1, 2, 3], "seq continues across runs");
    assert_eq!(ep.session.outcome, Outcome::Success);

    // A rewritten file (not an append) is re-read from scratch, and stays one session.
    std::fs::write(
        &file,
        line(
            "s1",
            "v1",
            "",
            "a different start",
            "2026-10-02T09:00:00.000Z",
        ),
    )
    .expect("rewrite");
    let s = index_episodes(&db, &opts, &mut |_| {}).expect("index");
    assert_eq!((s.files_rewritten, s.events_added, s.sessions), (1, 1, 1));
}

#[test]
fn session_filter_keeps_the_session_and_its_subagents() {
    let engine = common::world::demo().engine();
    let c1 = "5af11f95-d95e-4618-ac0d-6a61a912f47f";
    let mut req = SearchRequest::new("MySQL доступ 176.99.5.35");
    req.filters.session_ids = vec![c1.to_string()];
    req.limit = 50;
    req.max_tokens = 20_000;
    let resp = engine.search(&req);
    assert!(!resp.lanes.episodes.items.is_empty());
    assert!(resp
        .lanes
        .episodes
        .items
        .iter()
        .all(|i| i.session_id == c1 || i.session_id.starts_with(&format!("{c1}/"))));
    assert!(
        resp.lanes
            .episodes
            .items
            .iter()
            .any(|i| i.session_id.contains("/agent-")),
        "the db-fixer subagent's events are part of the session"
    );
}

#[test]
fn time_and_outcome_filters_narrow_the_episodes() {
    let engine = common::world::demo().engine();
    let mut req = SearchRequest::new("stripe webhook signature");
    req.limit = 50;
    req.max_tokens = 20_000;
    req.filters.outcome = Some(OutcomeFilter::Failure);
    let failed = engine.search(&req);
    assert!(!failed.lanes.episodes.items.is_empty());
    assert!(failed
        .lanes
        .episodes
        .items
        .iter()
        .all(|i| i.session.outcome == Some(Outcome::Failure)));
    req.filters.outcome = Some(OutcomeFilter::Success);
    let ok = engine.search(&req);
    assert!(ok
        .lanes
        .episodes
        .items
        .iter()
        .all(|i| i.session.outcome == Some(Outcome::Success)));

    let since = chrono::DateTime::parse_from_rfc3339("2026-11-01T00:00:00+00:00").expect("t");
    let until = chrono::DateTime::parse_from_rfc3339("2026-11-10T00:00:00+03:00").expect("t");
    let mut req = SearchRequest::new("stripe webhook signature");
    req.limit = 50;
    req.max_tokens = 20_000;
    req.filters.since = Some(since);
    req.filters.until = Some(until);
    let resp = engine.search(&req);
    assert!(!resp.lanes.episodes.items.is_empty());
    for i in &resp.lanes.episodes.items {
        let t = chrono::DateTime::parse_from_rfc3339(i.time.as_deref().expect("time")).expect("t");
        assert!(t >= since && t <= until, "{} outside the range", i.id);
    }
}

/// A re-run reads only what changed: unchanged transcripts are skipped by their fingerprint
/// before anything of them is read, and a same-size rewrite, a rename and a growth are each
/// still seen; the progress still counts every file.
#[test]
fn a_rerun_reads_only_the_transcripts_that_changed() {
    let dir = tempfile::tempdir().expect("tmp");
    let projects = dir.path().join("projects");
    let root = projects.join("-srv-app");
    std::fs::create_dir_all(&root).expect("dirs");
    let ts = "2026-10-01T10:00:00.000Z";
    for s in ["a", "b", "c"] {
        let body = line(s, &format!("{s}1"), "", &format!("alpha words of {s}"), ts);
        std::fs::write(root.join(format!("{s}.jsonl")), body).expect("write");
    }
    let db = dir.path().join("data/episodes.sqlite");
    std::fs::create_dir_all(db.parent().expect("parent")).expect("dirs");
    // The same root twice: each file is counted once, skipped or read.
    let opts = IndexOptions::new(vec![projects.clone(), projects.clone()]);
    let run = || {
        let mut last = (0, 0);
        let s = index_episodes(&db, &opts, &mut |p| last = (p.done, p.total)).expect("index");
        assert_eq!(last, (3, 3), "the progress ends at every file: {s:?}");
        s
    };
    let s = run();
    assert_eq!((s.files_seen, s.files_new, s.events_added), (3, 3, 3));
    let s = run();
    assert_eq!((s.files_seen, s.files_unchanged, s.events_added), (3, 3, 0));

    // Rewritten to the same size (a word swapped for one as long), a later mtime.
    let a = root.join("a.jsonl");
    let text = std::fs::read_to_string(&a).expect("read");
    std::fs::write(&a, text.replace("alpha", "omega")).expect("rewrite");
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    std::fs::File::options()
        .write(true)
        .open(&a)
        .and_then(|f| f.set_modified(later))
        .expect("mtime");
    // Renamed: the session keeps its events, none stored twice.
    std::fs::rename(root.join("b.jsonl"), root.join("b-renamed.jsonl")).expect("rename");
    // Grown: the new line is read from where the last run stopped.
    let mut c = std::fs::OpenOptions::new()
        .append(true)
        .open(root.join("c.jsonl"))
        .expect("open");
    c.write_all(assistant("c", "c2", "c1", "gamma answer", ts).as_bytes())
        .expect("append");
    drop(c);

    let s = run();
    assert_eq!(
        (
            s.files_unchanged,
            s.files_rewritten,
            s.files_moved,
            s.files_appended
        ),
        (0, 1, 1, 1),
        "{s:?}"
    );
    let engine = Engine::open(EngineConfig::new(dir.path().join("data")));
    let texts = |session: &str| -> Vec<String> {
        let ep = engine.get_episode(session, 1, 10).expect("episode");
        ep.events.iter().map(|e| e.text.clone()).collect()
    };
    assert!(
        texts("a").iter().any(|t| t.contains("omega")),
        "{:?}",
        texts("a")
    );
    assert_eq!(texts("b").len(), 1, "the renamed file's session, once");
    assert_eq!(texts("c").len(), 2, "the grown file's new line");
    let s = run();
    assert_eq!((s.files_unchanged, s.events_added), (3, 0));
}
