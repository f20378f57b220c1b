//! Crush and Zed's agent panel (issue 35) through the indexer: each found from its default root
//! as the agent's own variables move it (Crush's `projects.json` under `$CRUSH_GLOBAL_DATA`,
//! Zed's `threads.db` under `$XDG_DATA_HOME`), from its fixture (`fixtures/agents/{crush,zed}/`,
//! the writers' exact schema, kept open in WAL mode by a writer as the agent keeps it, Zed's
//! current threads stored zstd-compressed): cwd, times, a failing tool, a subagent, a planted
//! secret that must not reach the index, the resume command, an unchanged re-run, and a bad row
//! written into the WAL that is counted and never fatal.

mod common;

use std::path::{Path, PathBuf};

use common::agent_home::{wal_db, zstd_threads};
use knowledge::sources::episodes::agent::Env;
use knowledge::sources::episodes::agents::{self, Agent};
use knowledge::sources::episodes::index::{index_episodes, IndexOptions, IndexSummary};

fn index(db: &Path, roots: Vec<PathBuf>) -> IndexSummary {
    index_episodes(db, &IndexOptions::new(roots), &mut |_| {}).expect("index")
}

fn fixture_sql(rel: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/agents")
            .join(rel),
    )
    .expect("fixture")
}

fn scalar(db: &Path, sql: &str) -> i64 {
    let c = knowledge::sources::sqlite::open_ro(db).expect("open");
    c.query_row(sql, [], |r| r.get(0)).expect("scalar")
}

fn text(db: &Path, sql: &str) -> Option<String> {
    let c = knowledge::sources::sqlite::open_ro(db).expect("open");
    c.query_row(sql, [], |r| r.get(0)).expect("text")
}

fn all_text(db: &Path) -> String {
    let c = knowledge::sources::sqlite::open_ro(db).expect("open");
    let mut stmt = c.prepare("SELECT text FROM events").expect("q");
    let rows = stmt.query_map([], |r| r.get::<_, String>(0)).expect("rows");
    rows.flatten().collect::<Vec<_>>().join("\n")
}

fn roots_of(env: &Env, agent: Agent) -> Vec<PathBuf> {
    agents::roots_in(env)
        .into_iter()
        .filter(|(a, _)| *a == agent)
        .map(|(_, r)| r)
        .collect()
}

const CRUSH_ROOT: &str = "6f1c2d3e-4a5b-4c6d-8e7f-90a1b2c3d4e5";

#[test]
fn crush_projects_with_cwd_times_a_failing_tool_a_subagent_a_bad_row_and_secrets() {
    let dir = tempfile::tempdir().expect("tmp");
    let project = dir.path().join("ledger");
    let global = dir.path().join("crush-data");
    std::fs::create_dir_all(&global).expect("mkdir");
    std::fs::write(
        global.join("projects.json"),
        serde_json::json!({"projects": [{"path": project, "data_dir": project.join(".crush"),
            "last_accessed": "2026-09-05T09:20:00Z"}]})
        .to_string(),
    )
    .expect("projects.json");
    let env = Env::of(&[
        ("HOME", Path::new("/nohome")),
        ("CRUSH_GLOBAL_DATA", &global),
    ]);
    let store = project.join(".crush/crush.db");
    assert_eq!(roots_of(&env, Agent::Crush), vec![store.clone()]);
    let writer = wal_db(&store, &fixture_sql("crush/crush.sql"));

    let db = dir.path().join("episodes.sqlite");
    let s = index(&db, vec![store.clone()]);
    assert_eq!(
        (s.files_new, s.lines.skipped(), s.failed.len()),
        (1, 0, 0),
        "{s:?}"
    );
    assert_eq!(
        scalar(&db, "SELECT count(*) FROM sessions WHERE source = 'crush'"),
        2,
        "the session and its subagent; the title-generation child is not read"
    );
    let cwd = project.to_str().expect("utf-8");
    assert_eq!(
        text(
            &db,
            &format!("SELECT cwd FROM sessions WHERE session_id = '{CRUSH_ROOT}'")
        )
        .as_deref(),
        Some(cwd)
    );
    assert_eq!(
        scalar(
            &db,
            &format!(
                "SELECT count(*) FROM sessions WHERE session_id = '{CRUSH_ROOT}'
                 AND created_at = '2026-09-05T09:20:00.000Z'
                 AND last_event_at = '2026-09-05T09:23:00.000Z'
                 AND title = 'Ledger export test fails'"
            )
        ),
        1
    );
    assert_eq!(
        text(
            &db,
            &format!(
                "SELECT agent_description FROM sessions WHERE parent_session_id = '{CRUSH_ROOT}'"
            )
        )
        .as_deref(),
        Some("Find which rounding mode the money package documents for exports.")
    );
    assert_eq!(
        scalar(&db, "SELECT count(*) FROM events WHERE human = 1"),
        1,
        "the subagent's task is an agent's prompt, not a person's"
    );
    assert_eq!(
        scalar(
            &db,
            "SELECT count(*) FROM events WHERE event_type = 'tool/result' AND is_error = 1
             AND text LIKE '%want 10.06%'"
        ),
        1
    );
    for fact in ["/home/dev/ledger/export/round.go", "\"go\""] {
        assert!(
            scalar(
                &db,
                &format!("SELECT count(*) FROM events WHERE facts LIKE '%{fact}%'")
            ) >= 1,
            "{fact}"
        );
    }
    assert!(all_text(&db).contains("LEDGER_DB_PASSWORD"));
    assert!(!all_text(&db).contains("crush-fixture-s3cr3t-35"));
    assert_eq!(
        agents::resume_command("crush", CRUSH_ROOT, Some(cwd)),
        Some(format!("cd {cwd} && crush --session {CRUSH_ROOT}"))
    );
    let again = index(&db, vec![store.clone()]);
    assert_eq!((again.files_unchanged, again.events_added), (1, 0));

    // A reply and a row that is not JSON, written into the WAL: the session is read again
    // whole, the bad row counted, never fatal.
    writer
        .execute_batch(&format!(
            r#"INSERT INTO messages (id, session_id, role, parts, created_at, updated_at) VALUES
               ('msg-u9', '{CRUSH_ROOT}', 'user',
                '[{{"type":"text","data":{{"text":"thanks, ship it"}}}}]', 1788600900, 1788600900),
               ('msg-u10', '{CRUSH_ROOT}', 'user', '[{{"type":"text","da', 1788600901, 1788600901);"#
        ))
        .expect("rows");
    let grown = index(&db, vec![store]);
    assert_eq!(
        (grown.lines.skipped_broken, grown.failed.len()),
        (1, 0),
        "{grown:?}"
    );
    assert_eq!(
        scalar(&db, "SELECT count(*) FROM events WHERE human = 1"),
        2
    );
}

const ZED_MAIN: &str = "0f9e8d7c-6b5a-4c3d-8e2f-1a0b9c8d7e6f";
const ZED_LEGACY: &str = "2b3c4d5e-6f70-4b8c-9dae-1f2a3b4c5d6e";

#[test]
fn zed_threads_compressed_and_agent_1_with_a_subagent_errors_a_bomb_and_secrets() {
    let dir = tempfile::tempdir().expect("tmp");
    let xdg = dir.path().join("xdg");
    let env = Env::of(&[("HOME", Path::new("/nohome")), ("XDG_DATA_HOME", &xdg)]);
    let store = xdg.join("zed/threads/threads.db");
    assert_eq!(roots_of(&env, Agent::Zed), vec![store.clone()]);
    let writer = wal_db(&store, &fixture_sql("zed/threads.sql"));
    zstd_threads(&writer);
    assert_eq!(
        writer
            .query_row(
                "SELECT count(*) FROM threads WHERE data_type = 'zstd'",
                [],
                |r| r.get::<_, i64>(0)
            )
            .expect("count"),
        2
    );

    let db = dir.path().join("episodes.sqlite");
    let s = index(&db, vec![store.clone()]);
    assert_eq!(
        (s.files_new, s.lines.skipped(), s.failed.len()),
        (1, 0, 0),
        "{s:?}"
    );
    assert_eq!(
        scalar(&db, "SELECT count(*) FROM sessions WHERE source = 'zed'"),
        3
    );
    assert_eq!(
        scalar(
            &db,
            &format!(
                "SELECT count(*) FROM sessions WHERE session_id = '{ZED_MAIN}'
                 AND cwd = '/home/dev/payments'
                 AND created_at = '2026-09-06T10:00:00.000Z'
                 AND last_event_at = '2026-09-06T10:15:00.000Z'"
            )
        ),
        1
    );
    assert_eq!(
        text(
            &db,
            &format!("SELECT cwd FROM sessions WHERE session_id = '{ZED_LEGACY}'")
        ),
        None
    );
    assert_eq!(
        text(
            &db,
            &format!(
                "SELECT agent_description FROM sessions WHERE parent_session_id = '{ZED_MAIN}'"
            )
        )
        .as_deref(),
        Some("Rounding rules")
    );
    assert_eq!(
        scalar(&db, "SELECT count(*) FROM events WHERE human = 1"),
        2,
        "the two threads' prompts; the subagent's task is an agent's"
    );
    assert_eq!(
        scalar(
            &db,
            "SELECT count(*) FROM events WHERE event_type = 'tool/result' AND is_error = 1
             AND text LIKE '%exit code 101%'"
        ),
        1
    );
    for fact in ["payments/src/refund.rs", "\"cargo\""] {
        assert!(
            scalar(
                &db,
                &format!("SELECT count(*) FROM events WHERE facts LIKE '%{fact}%'")
            ) >= 1,
            "{fact}"
        );
    }
    assert!(all_text(&db).contains("PAYMENTS_DB_PASSWORD"));
    assert!(!all_text(&db).contains("zed-fixture-s3cr3t-35"));
    assert_eq!(
        agents::resume_command("zed", ZED_MAIN, Some("/home/dev/payments")),
        None
    );
    let again = index(&db, vec![store.clone()]);
    assert_eq!((again.files_unchanged, again.events_added), (1, 0));

    // A hostile row: a zstd frame asking for a window of about 128 GB. Counted as oversized;
    // the other threads stay.
    writer
        .execute_batch(
            "INSERT INTO threads (id, summary, updated_at, data_type, data)
             VALUES ('bomb', 'x', '2026-09-07T00:00:00+00:00', 'zstd', X'28B52FFD00DEADBEEF');",
        )
        .expect("bomb");
    let s = index(&db, vec![store]);
    assert_eq!((s.lines.skipped_oversized, s.failed.len()), (1, 0), "{s:?}");
    assert_eq!(
        scalar(
            &db,
            &format!("SELECT count(*) FROM events WHERE session_id = '{ZED_MAIN}'")
        ),
        9
    );
}
