//! Kimi's two session stores: Kimi Code's per-agent `wire.jsonl` (its own agent in the
//! registry) and the times Kimi CLI's `wire.jsonl` gives the `context.jsonl` beside it. The
//! synthetic fixtures in `fixtures/formats/{kimi,kimi_code}/` are in the writers' exact formats
//! (MoonshotAI `kimi-code` `agent-core/src/agent/records/types.ts`, `kimi-cli`
//! `wire/file.py`), with a sub-agent, a failing tool and a planted secret; the real trimmed
//! Kimi Code captures in `../shared/realdata/kimi/` are read too (skipped with a note where
//! absent).

mod common;

use std::path::{Path, PathBuf};

use common::agent_home::copy_tree;
use knowledge::sources::episodes::agent::Env;
use knowledge::sources::episodes::agents::{self, Agent};
use knowledge::sources::episodes::discover::{discover, Layout};
use knowledge::sources::episodes::index::{index_episodes, IndexOptions, IndexSummary};
use knowledge::sources::episodes::search::EpisodeStore;

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/formats")
        .join(rel)
}

fn index(db: &Path, roots: Vec<PathBuf>) -> IndexSummary {
    index_episodes(db, &IndexOptions::new(roots), &mut |_| {}).expect("index")
}

fn query<T: rusqlite::types::FromSql>(db: &Path, sql: &str) -> Vec<T> {
    let c = knowledge::sources::sqlite::open_ro(db).expect("open");
    let mut stmt = c.prepare(sql).expect("q");
    let rows = stmt.query_map([], |r| r.get::<_, T>(0)).expect("rows");
    rows.flatten().collect()
}

fn root_of(agent: Agent, env: &Env) -> PathBuf {
    agents::roots_in(env)
        .into_iter()
        .find(|(a, _)| *a == agent)
        .map(|(_, r)| r)
        .expect("a root")
}

const KC: &str = "session_5b2e7c1a-3d4f-4a6b-8c9d-0e1f2a3b4c5d";

#[test]
fn kimi_code_sessions_subagent_times_errors_and_secrets() {
    let dir = tempfile::tempdir().expect("tmp");
    let home = dir.path().join("kc");
    copy_tree(&fixture("kimi_code"), &home);
    let root = root_of(Agent::KimiCode, &Env::of(&[("KIMI_CODE_HOME", &home)]));
    assert_eq!(root, home.join("sessions"));
    let db = dir.path().join("episodes.sqlite");
    let s = index(&db, vec![root.clone()]);
    // One record type the reader does not know (`galaxy.brain`) is skipped and counted.
    assert_eq!(
        (s.files_new, s.lines.skipped_unknown, s.lines.skipped_broken),
        (2, 1, 0),
        "{s:?}"
    );
    let rows: Vec<String> = query(
        &db,
        "SELECT session_id || '|' || source || '|' || coalesce(cwd,'') || '|' ||
                coalesce(parent_session_id,'') || '|' || coalesce(title,'') || '|' || outcome ||
                '|' || coalesce(created_at,'')
         FROM sessions ORDER BY session_id",
    );
    assert_eq!(
        rows,
        vec![
            format!(
                "{KC}|kimi_code|/home/dev/billing||Fix the invoice export VAT column|success|2026-08-01T19:33:23.281Z"
            ),
            format!("{KC}/agent-0|kimi_code|/home/dev/billing|{KC}||unknown|2026-08-01T19:33:34.881Z"),
        ]
    );
    // The sub-agent's task: its prompt without the git context, and the parent's call links it.
    let task: Vec<String> = query(
        &db,
        "SELECT agent_description FROM sessions WHERE parent_session_id IS NOT NULL",
    );
    assert_eq!(
        task,
        vec!["Find where billing/export.py builds the CSV header of the invoice export."]
    );
    let store = EpisodeStore::open(&db).expect("store");
    assert_eq!(
        store.spawn_description(KC, "0").expect("spawn").as_deref(),
        Some("Find the invoice export column list")
    );
    let errors: Vec<String> = query(
        &db,
        "SELECT time FROM events WHERE event_type='tool/result' AND is_error=1",
    );
    assert_eq!(errors, vec!["2026-08-01T19:34:15.281Z"]);
    let edits: Vec<i64> = query(
        &db,
        "SELECT count(*) FROM events WHERE facts LIKE '%export.py%' AND facts LIKE '%file_edit%'",
    );
    assert_eq!(edits, vec![1]);
    let text: Vec<String> = query(&db, "SELECT text FROM events");
    assert!(!text.join("\n").contains("kc-fixture-s3cr-7d2e"));
    assert!(text
        .iter()
        .any(|t| t.contains("VAT column is always exported")));
    assert_eq!(
        agents::resume_command("kimi_code", KC, Some("/home/dev/billing")).as_deref(),
        Some(format!("cd /home/dev/billing && kimi --session {KC}").as_str())
    );
    // Unchanged: skipped. An appended turn is read from where the last run stopped.
    let again = index(&db, vec![root.clone()]);
    assert_eq!((again.files_unchanged, again.events_added), (2, 0));
    let main = root
        .join("wd_billing_4a952e781f24")
        .join(KC)
        .join("agents/main/wire.jsonl");
    common::agent_home::append(
        &main,
        r#"{"type":"context.append_message","message":{"role":"user","content":[{"type":"text","text":"also export the okapiledger id"}],"toolCalls":[],"origin":{"kind":"user"}},"time":1785612900000}"#,
    );
    let after = index(&db, vec![root]);
    assert_eq!(
        (after.files_appended, after.events_added),
        (1, 1),
        "{after:?}"
    );
}

#[test]
fn kimi_code_real_wires_read_with_their_subagent() {
    let Some(real) = common::realdata::path("kimi/jazzyalex-agent-sessions") else {
        return;
    };
    // The captures are flat files; laid out as Kimi Code keeps them.
    let dir = tempfile::tempdir().expect("tmp");
    let session = dir.path().join(
        ".kimi-code/sessions/wd_project_ac3bb318f98e/session_1bcbe023-4f7e-4971-9dc9-43b8756045b0",
    );
    for (from, to) in [
        ("assistant_tools.jsonl", "agents/main/wire.jsonl"),
        ("subagent_agent-0.jsonl", "agents/agent-0/wire.jsonl"),
        ("assistant_tools.state.json", "state.json"),
    ] {
        let to = session.join(to);
        std::fs::create_dir_all(to.parent().expect("dir")).expect("mkdir");
        std::fs::copy(real.join(from), to).expect("copy");
    }
    let found = discover(&dir.path().join(".kimi-code/sessions"));
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found.iter().all(|f| f.kind == Agent::KimiCode));
    assert!(found
        .iter()
        .any(|f| matches!(&f.layout, Layout::Subagent { agent_id_hint: Some(a), .. } if a == "0")));
    let db = dir.path().join("episodes.sqlite");
    let s = index(&db, vec![dir.path().join(".kimi-code/sessions")]);
    assert_eq!((s.lines.skipped_unknown, s.lines.skipped_broken), (0, 0));
    let cwd: Vec<String> = query(&db, "SELECT DISTINCT cwd FROM sessions");
    assert_eq!(cwd, vec!["/private/tmp/as-agent-lab/kimi/project"]);
    // `cat /nonexistent-file-xyz` failed; the user's prompts are the person's.
    let failed: Vec<String> = query(
        &db,
        "SELECT text FROM events WHERE event_type='tool/result' AND is_error=1",
    );
    assert_eq!(failed.len(), 1);
    assert!(failed[0].contains("No such file or directory"));
    let prompts: Vec<String> = query(
        &db,
        "SELECT text FROM events WHERE event_type='user/message' AND session_id NOT LIKE '%/agent-%'",
    );
    assert!(prompts
        .iter()
        .any(|p| p == "run subagent to count swift files in this repo"));
    assert!(prompts.iter().all(|p| !p.contains("<system-reminder>")));
    let store = EpisodeStore::open(&db).expect("store");
    assert_eq!(
        store
            .spawn_description("session_1bcbe023-4f7e-4971-9dc9-43b8756045b0", "0")
            .expect("spawn")
            .as_deref(),
        Some("Count Swift files in repo")
    );
    let untimed: Vec<i64> = query(&db, "SELECT count(*) FROM events WHERE time IS NULL");
    assert_eq!(untimed, vec![0]);
}

const KIMI: &str = "3c2b1a09-8f7e-4d6c-9b5a-4e3d2c1b0a99";

/// `created_at last_event_at` of the fixture's Kimi CLI session.
fn kimi_span(db: &Path) -> Vec<String> {
    query(
        db,
        &format!(
            "SELECT created_at || ' ' || last_event_at FROM sessions WHERE session_id='{KIMI}'"
        ),
    )
}

#[test]
fn kimi_cli_context_takes_its_times_from_the_wire_beside_it() {
    let dir = tempfile::tempdir().expect("tmp");
    let share = dir.path().join("kimi");
    copy_tree(&fixture("kimi"), &share);
    let db = dir.path().join("episodes.sqlite");
    let root = root_of(Agent::Kimi, &Env::of(&[("KIMI_SHARE_DIR", &share)]));
    let s = index(&db, vec![root.clone()]);
    // The wire file is not a session of its own (nor anyone's fallback).
    assert_eq!(s.files_new, 2, "{s:?}");
    let span = kimi_span(&db);
    assert_eq!(
        span,
        vec!["2026-07-06T07:20:00.125Z 2026-07-06T07:21:35.625Z"]
    );
    let times: Vec<String> = query(
        &db,
        &format!("SELECT DISTINCT coalesce(time,'none') FROM events WHERE session_id='{KIMI}'"),
    );
    assert_eq!(
        times,
        vec!["2026-07-06T07:20:00.125Z"],
        "the turn's begin time"
    );
    // A second turn: its prompt in the wire, then in the context; only the new turn is read
    // and it takes its own time.
    let session = root.join("3ded63a930cb31774327e9b947f57361").join(KIMI);
    common::agent_home::append(
        &session.join("wire.jsonl"),
        r#"{"timestamp": 1783323000.5, "message": {"type": "TurnBegin", "payload": {"user_input": [{"type": "text", "text": "Also reject a negative step"}]}}}"#,
    );
    common::agent_home::append(
        &session.join("context.jsonl"),
        r#"{"role": "user", "content": [{"type": "text", "text": "Also reject a negative step"}]}"#,
    );
    common::agent_home::append(
        &session.join("context.jsonl"),
        r#"{"role": "assistant", "content": [{"type": "text", "text": "parse_step() now rejects any step below one."}]}"#,
    );
    let after = index(&db, vec![root]);
    assert_eq!(
        (after.files_appended, after.events_added),
        (1, 2),
        "{after:?}"
    );
    let late: Vec<String> = query(
        &db,
        &format!(
            "SELECT time FROM events WHERE session_id='{KIMI}' AND time > '2026-07-06T07:25' ORDER BY seq"
        ),
    );
    assert_eq!(late, vec!["2026-07-06T07:30:00.500Z"; 2]);
}

/// Kimi CLI's wire is append-only like its context: each run continues it from where the last
/// stopped, with the turns it read that no prompt took yet. So a prompt sent again ("go on")
/// takes its own turn's time, not the first one's, and nothing is stored twice.
#[test]
fn kimi_cli_wire_is_resumed_so_a_repeated_prompt_takes_its_own_turn() {
    let dir = tempfile::tempdir().expect("tmp");
    let share = dir.path().join("kimi");
    copy_tree(&fixture("kimi"), &share);
    let db = dir.path().join("episodes.sqlite");
    let root = root_of(Agent::Kimi, &Env::of(&[("KIMI_SHARE_DIR", &share)]));
    index(&db, vec![root.clone()]);
    let count = |db: &Path| -> i64 {
        query::<i64>(
            db,
            &format!("SELECT count(*) FROM events WHERE session_id='{KIMI}'"),
        )[0]
    };
    let before = count(&db);
    let session = root.join("3ded63a930cb31774327e9b947f57361").join(KIMI);
    let turn = |secs: &str, answer: &str| {
        common::agent_home::append(
            &session.join("wire.jsonl"),
            &format!(
                r#"{{"timestamp": {secs}, "message": {{"type": "TurnBegin", "payload": {{"user_input": [{{"type": "text", "text": "go on"}}]}}}}}}"#
            ),
        );
        common::agent_home::append(
            &session.join("context.jsonl"),
            r#"{"role": "user", "content": [{"type": "text", "text": "go on"}]}"#,
        );
        common::agent_home::append(
            &session.join("context.jsonl"),
            &serde_json::json!({"role": "assistant", "content": [{"type": "text", "text": answer}]})
                .to_string(),
        );
    };
    turn("1783323000.5", "The step parser now rejects zero.");
    let first = index(&db, vec![root.clone()]);
    assert_eq!(
        (first.files_appended, first.events_added),
        (1, 2),
        "{first:?}"
    );
    turn(
        "1783326600.25",
        "The step parser now rejects a quokkastep too.",
    );
    let second = index(&db, vec![root]);
    assert_eq!(
        (second.files_appended, second.events_added),
        (1, 2),
        "{second:?}"
    );
    assert_eq!(count(&db), before + 4, "nothing stored twice");
    let times: Vec<String> = query(
        &db,
        &format!(
            "SELECT time FROM events WHERE session_id='{KIMI}' AND time > '2026-07-06T07:25'
             ORDER BY seq"
        ),
    );
    assert_eq!(
        times,
        vec![
            "2026-07-06T07:30:00.500Z",
            "2026-07-06T07:30:00.500Z",
            "2026-07-06T08:30:00.250Z",
            "2026-07-06T08:30:00.250Z"
        ],
        "each \"go on\" takes its own turn's time"
    );
    let span = kimi_span(&db);
    assert_eq!(
        span,
        vec!["2026-07-06T07:20:00.125Z 2026-07-06T08:30:00.250Z"]
    );
}
