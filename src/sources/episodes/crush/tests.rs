//! Unit tests of the parent module, kept apart so the module reads in one sitting.

use super::*;
use crate::sources::episodes::agent::{read_whole, CollectSink, CollectedSession};

const ROOT: &str = "6f1c2d3e-4a5b-4c6d-8e7f-90a1b2c3d4e5";
const CHILD: &str = "msg-a2$$call_03";

fn fixture_sql() -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/agents/crush/crush.sql"),
    )
    .expect("fixture")
}

/// The fixture database in `<dir>/ledger/.crush/crush.db`, its writer left open in WAL mode.
fn db(dir: &Path) -> (PathBuf, Connection) {
    let path = dir.join("ledger/.crush").join(DB_NAME);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    let c = Connection::open(&path).expect("db");
    c.execute_batch("PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;")
        .expect("wal");
    c.execute_batch(&fixture_sql()).expect("fixture sql");
    (path, c)
}

fn kinds(s: &CollectedSession) -> Vec<(EventType, bool)> {
    s.events
        .iter()
        .map(|e| (e.event_type, e.is_error))
        .collect()
}

#[test]
fn a_session_its_subagent_tools_failures_and_facts() {
    let dir = tempfile::tempdir().expect("tmp");
    let (path, _conn) = db(dir.path());
    let file = super::super::agents::recognise(&path).expect("recognised");
    assert_eq!(file.kind, Agent::Crush);
    let (sink, end) = read_whole(&file).expect("read");
    // The title-generation child is no work of the session's.
    let ids: Vec<&str> = sink
        .sessions
        .iter()
        .map(|s| s.start.as_ref().expect("start").session_id.as_str())
        .collect();
    assert_eq!(ids, vec![ROOT, CHILD]);
    assert_eq!(
        end.lines.ignored,
        1 + 5,
        "the title child and 5 finish parts"
    );

    let root = &sink.sessions[0];
    let project = dir.path().join("ledger");
    assert_eq!(root.meta.cwd.as_deref(), project.to_str());
    assert_eq!(root.meta.title.as_deref(), Some("Ledger export test fails"));
    assert_eq!(root.meta.model.as_deref(), Some("claude-sonnet-4-5"));
    assert_eq!(
        kinds(root),
        vec![
            (EventType::UserMessage, false),
            (EventType::AssistantThinking, false),
            (EventType::AssistantToolUse, false),
            (EventType::ToolResult, true),
            (EventType::AssistantToolUse, false),
            (EventType::ToolResult, false),
            (EventType::AssistantToolUse, false),
            (EventType::ToolResult, false),
            (EventType::AssistantMessage, false),
        ]
    );
    assert_eq!(
        root.events[0].time.as_deref(),
        Some("2026-09-05T09:20:00.000Z")
    );
    assert_eq!(
        root.meta.created_at.as_deref(),
        Some("2026-09-05T09:20:00.000Z")
    );
    assert_eq!(
        root.meta.last_event_at.as_deref(),
        Some("2026-09-05T09:23:00.000Z")
    );
    assert_eq!(root.events[3].tool_name.as_deref(), Some("bash"));
    assert!(root.events[3].text.contains("want 10.06"));
    assert!(root.events[2]
        .facts
        .iter()
        .any(|f| matches!(f, Fact::Command { program } if program == "go")));
    assert!(root.events[4].facts.iter().any(|f| matches!(f,
        Fact::Spawn { tool_use_id: Some(id), description: Some(d), .. }
            if id == "call_03" && d.starts_with("Find which rounding mode"))));
    assert!(root.events[6].facts.iter().any(
        |f| matches!(f, Fact::FileEdit { path } if path == "/home/dev/ledger/export/round.go")
    ));

    // The child: the parent's `agent` call is its spawn, that call's prompt its task, and its
    // `user` text is an agent's prompt, not a person's.
    let child = &sink.sessions[1];
    assert_eq!(child.meta.parent_session_id.as_deref(), Some(ROOT));
    assert_eq!(child.meta.agent_id.as_deref(), Some(CHILD));
    assert_eq!(child.meta.spawn_tool_use_id.as_deref(), Some("call_03"));
    assert_eq!(
        child.meta.agent_description.as_deref(),
        Some("Find which rounding mode the money package documents for exports.")
    );
    assert_eq!(
        kinds(child),
        vec![
            (EventType::AgentPrompt, false),
            (EventType::AssistantMessage, false)
        ]
    );
}

#[test]
fn unchanged_sessions_are_skipped_a_changed_one_is_read_whole_and_bad_rows_counted() {
    let dir = tempfile::tempdir().expect("tmp");
    let (path, conn) = db(dir.path());
    let file = super::super::agents::recognise(&path).expect("recognised");
    let (_, end) = read_whole(&file).expect("read");
    assert!(read_from(&file, &end).is_empty(), "nothing changed");

    // A person's reply, a `!command` they ran, a summary, a cancelled turn, a provider error,
    // a part of a kind not known and a row that is not JSON.
    conn.execute_batch(&format!(
        r#"INSERT INTO messages (id, session_id, role, parts, created_at, updated_at) VALUES
           ('msg-u2', '{ROOT}', 'user', '[{{"type":"text","data":{{"text":"thanks"}}}},
              {{"type":"shell_command","data":{{"command":"git status","output":"fatal: not a git repository","exit_code":128}}}}]',
            1788600300, 1788600300),
           ('msg-a5', '{ROOT}', 'assistant', '[{{"type":"text","data":{{"text":"partial"}}}},
              {{"type":"finish","data":{{"reason":"canceled","time":1788600310}}}}]', 1788600305, 1788600310),
           ('msg-a6', '{ROOT}', 'assistant', '[{{"type":"finish","data":{{"reason":"error",
              "message":"Provider error","details":"overloaded"}}}},
              {{"type":"hologram","data":{{}}}}]', 1788600320, 1788600320),
           ('msg-a7', '{ROOT}', 'assistant', '[{{"type":"text","data":{{"text":"Summary of the work so far."}}}}]',
            1788600330, 1788600330),
           ('msg-bad', '{ROOT}', 'assistant', 'not json', 1788600340, 1788600340);
           UPDATE messages SET is_summary_message = 1 WHERE id = 'msg-a7';"#
    ))
    .expect("insert");
    let grown = read_from(&file, &end);
    assert_eq!(grown.len(), 1, "only the session that changed");
    let s = &grown[0];
    let tail: Vec<(EventType, bool)> = kinds(s).into_iter().skip(9).collect();
    assert_eq!(
        tail,
        vec![
            (EventType::UserMessage, false),
            (EventType::UserCommand, false),
            (EventType::ToolResult, true),
            (EventType::AssistantMessage, false),
            (EventType::SystemError, false),
            (EventType::SystemSummary, false),
        ]
    );
    assert_eq!(s.events[10].text, "!git status");
    assert_eq!(s.events[13].text, "Provider error\noverloaded");
    assert_eq!((s.meta.cwd.is_some(), s.events.len()), (true, 15));
}

fn read_from(file: &TranscriptFile, end: &ReadEnd) -> Vec<CollectedSession> {
    let mut sink = CollectSink::default();
    let from = Resume {
        offset: end.end,
        cursor: &end.cursor,
    };
    let limits = ReadLimits {
        max_line_bytes: 1 << 20,
    };
    Reader
        .read(file, Some(from), limits, &mut sink)
        .expect("read");
    sink.sessions
}

#[test]
fn a_row_over_the_cap_and_a_broken_one_are_counted_never_fatal() {
    let dir = tempfile::tempdir().expect("tmp");
    let (path, conn) = db(dir.path());
    conn.execute_batch(&format!(
        "INSERT INTO messages (id, session_id, role, parts, created_at, updated_at) VALUES
           ('big', '{ROOT}', 'assistant', '[{{\"type\":\"text\",\"data\":{{\"text\":\"' ||
              printf('%.*c', 3000, 'x') || '\"}}}}]', 1788600400, 1788600400),
           ('broken', '{ROOT}', 'assistant', '[{{\"type\":\"text\"', 1788600401, 1788600401);"
    ))
    .expect("insert");
    let file = super::super::agents::recognise(&path).expect("recognised");
    let mut sink = CollectSink::default();
    let limits = ReadLimits {
        max_line_bytes: 2048,
    };
    let end = Reader.read(&file, None, limits, &mut sink).expect("read");
    assert_eq!(
        (end.lines.skipped_oversized, end.lines.skipped_broken),
        (1, 1)
    );
    assert_eq!(sink.sessions[0].events.len(), 9);
}

#[test]
fn roots_come_from_projects_json_and_the_wal_maps_to_its_database() {
    let dir = tempfile::tempdir().expect("tmp");
    let global = dir.path().join("crush-data");
    std::fs::create_dir_all(&global).expect("mkdir");
    std::fs::write(
        global.join("projects.json"),
        r#"{"projects": [
            {"path": "/home/dev/ledger", "data_dir": "/home/dev/ledger/.crush",
             "last_accessed": "2026-09-05T09:20:00Z"},
            {"path": "/home/dev/api", "data_dir": "/srv/crush-data/api",
             "last_accessed": "2026-09-04T09:20:00Z"},
            {"path": "/home/dev/web"},
            {"data_dir": "/nowhere"}
        ]}"#,
    )
    .expect("write");
    let env = Env::of(&[("HOME", Path::new("/h")), ("CRUSH_GLOBAL_DATA", &global)]);
    assert_eq!(
        Reader.roots(&env),
        vec![
            PathBuf::from("/home/dev/ledger/.crush/crush.db"),
            PathBuf::from("/home/dev/web/.crush/crush.db"),
            PathBuf::from("/srv/crush-data/api/crush.db"),
        ]
    );
    // `XDG_DATA_HOME` moves it when `CRUSH_GLOBAL_DATA` does not; no projects, no roots.
    let env = Env::of(&[("HOME", Path::new("/h")), ("XDG_DATA_HOME", dir.path())]);
    assert!(Reader.roots(&env).is_empty());
    std::fs::create_dir_all(dir.path().join("crush")).expect("mkdir");
    std::fs::write(dir.path().join("crush/projects.json"), "not json").expect("write");
    assert!(Reader.roots(&env).is_empty(), "a broken projects.json");
    assert_eq!(
        Reader.project_stores(Path::new("/r")),
        vec![PathBuf::from("/r/.crush/crush.db")]
    );

    let db = PathBuf::from("/home/dev/ledger/.crush/crush.db");
    assert_eq!(
        Reader.store_of_change(&db.with_file_name("crush.db-wal")),
        Some(db.clone())
    );
    assert_eq!(
        Reader.store_of_change(&db.with_file_name("crush.db-shm")),
        None
    );
    assert_eq!(
        Reader.store_of_change(Path::new("/elsewhere/crush.db-wal")),
        None
    );
    assert_eq!(
        crush_time(1788600000).as_deref(),
        Some("2026-09-05T09:20:00.000Z")
    );
    assert_eq!(
        crush_time(1788600000123).as_deref(),
        Some("2026-09-05T09:20:00.123Z")
    );
}

#[test]
fn a_copy_under_another_name_is_recognised_by_its_tables_and_others_are_not() {
    let dir = tempfile::tempdir().expect("tmp");
    let (path, conn) = db(dir.path());
    drop(conn);
    let copy = dir.path().join("backup.db");
    std::fs::copy(&path, &copy).expect("copy");
    let file = super::super::agents::recognise(&copy).expect("recognised");
    assert_eq!(file.kind, Agent::Crush);
    let other = dir.path().join("other.db");
    Connection::open(&other)
        .and_then(|c| c.execute_batch("CREATE TABLE sessions(id TEXT); CREATE TABLE messages(x);"))
        .expect("other");
    assert!(!has_crush_schema(&other));
}

#[test]
fn sessions_naming_the_project_its_crush_folder_or_the_database_find_the_store() {
    let dir = tempfile::tempdir().expect("tmp");
    let (path, _conn) = db(dir.path());
    let project = dir.path().join("ledger");
    for root in [project.clone(), project.join(DATA_DIR), path.clone()] {
        let found = crate::sources::episodes::discover::discover(&root);
        let stores: Vec<(&Path, Agent)> =
            found.iter().map(|f| (f.path.as_path(), f.kind)).collect();
        assert_eq!(stores, vec![(path.as_path(), Agent::Crush)], "{root:?}");
    }
}
