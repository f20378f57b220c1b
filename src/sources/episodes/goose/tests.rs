//! Unit tests of the parent module, kept apart so the module reads in one sitting.

use super::*;
use crate::sources::episodes::agent::{read_whole, CollectSink, CollectedSession};

const SCHEMA: &str = "
    CREATE TABLE schema_version (version INTEGER PRIMARY KEY,
        applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP);
    CREATE TABLE sessions (id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT '',
        description TEXT NOT NULL DEFAULT '', user_set_name BOOLEAN DEFAULT FALSE,
        session_type TEXT NOT NULL DEFAULT 'user', working_dir TEXT NOT NULL,
        created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
        updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, extension_data TEXT DEFAULT '{}',
        total_tokens INTEGER, input_tokens INTEGER, output_tokens INTEGER,
        schedule_id TEXT, recipe_json TEXT, provider_name TEXT, model_config_json TEXT);
    CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, message_id TEXT,
        session_id TEXT NOT NULL REFERENCES sessions(id), role TEXT NOT NULL,
        content_json TEXT NOT NULL, created_timestamp INTEGER NOT NULL,
        timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP, tokens INTEGER,
        metadata_json TEXT);";

fn db(dir: &Path) -> (PathBuf, Connection) {
    let path = dir.join("goose/sessions/sessions.db");
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    let c = Connection::open(&path).expect("db");
    c.execute_batch(SCHEMA).expect("schema");
    c.execute_batch(
        r#"INSERT INTO sessions (id, name, working_dir, created_at, updated_at)
             VALUES ('20260901_1', 'fix the flaky test', '/home/dev/api',
                     '2026-09-01 10:00:00', '2026-09-01 10:05:00');
           INSERT INTO messages (message_id, session_id, role, content_json,
               created_timestamp, metadata_json) VALUES
           ('m1', '20260901_1', 'user', '[{"type":"text","text":"the login test flakes"}]',
            1788256800, '{"userVisible":true,"agentVisible":true}'),
           ('m2', '20260901_1', 'assistant', '[{"type":"thinking","thinking":"run it"},
              {"type":"toolRequest","id":"call_1","toolCall":{"status":"success",
               "value":{"name":"developer__shell","arguments":{"command":"cargo test login"}}}}]',
            1788256805, '{}'),
           ('m3', '20260901_1', 'user', '[{"type":"toolResponse","id":"call_1","toolResult":
              {"status":"success","value":{"content":[{"type":"text","text":"test login ... FAILED"}],
               "isError":true}}}]', 1788256810, '{"userVisible":true}'),
           ('m4', '20260901_1', 'user', '[{"type":"text","text":"injected"}]', 1788256811,
            '{"userVisible":false}'),
           ('m5', '20260901_1', 'assistant', '[{"type":"toolRequest","id":"call_2",
              "toolCall":{"status":"success","value":{"name":"developer__text_editor",
              "arguments":{"command":"str_replace","path":"/home/dev/api/tests/login.rs"}}}},
              {"type":"text","text":"fixed the race"}]', 1788256820, NULL),
           ('m6', '20260901_1', 'user', 'not json', 1788256830, NULL);"#,
    )
    .expect("rows");
    (path, c)
}

#[test]
fn messages_tools_failures_facts_and_a_bad_row() {
    let dir = tempfile::tempdir().expect("tmp");
    let (path, conn) = db(dir.path());
    let file = super::super::agents::recognise(&path).expect("recognised");
    assert_eq!(file.kind, Agent::Goose);
    let (sink, end) = read_whole(&file).expect("read");
    assert_eq!(sink.sessions.len(), 1);
    let s = &sink.sessions[0];
    assert_eq!(s.meta.session_id.as_deref(), Some("20260901_1"));
    assert_eq!(s.meta.cwd.as_deref(), Some("/home/dev/api"));
    let kinds: Vec<(EventType, bool)> = s
        .events
        .iter()
        .map(|e| (e.event_type, e.is_error))
        .collect();
    assert_eq!(
        kinds,
        vec![
            (EventType::UserMessage, false),
            (EventType::AssistantThinking, false),
            (EventType::AssistantToolUse, false),
            (EventType::ToolResult, true),
            (EventType::SystemContext, false),
            (EventType::AssistantToolUse, false),
            (EventType::AssistantMessage, false),
        ]
    );
    assert_eq!(
        s.events[0].time.as_deref(),
        Some("2026-09-01T10:00:00.000Z")
    );
    assert_eq!(s.events[3].tool_name.as_deref(), Some("developer__shell"));
    assert!(s.events[2]
        .facts
        .iter()
        .any(|f| matches!(f, Fact::Command { program } if program == "cargo")));
    assert!(s.events[5]
        .facts
        .iter()
        .any(|f| matches!(f, Fact::FileEdit { path } if path == "/home/dev/api/tests/login.rs")));
    assert_eq!(end.lines.skipped_broken, 1, "the row that is not JSON");

    // Unchanged: nothing pushed; a new message: the session again, whole.
    let again = read_whole_from(&file, &end);
    assert!(again.is_empty());
    conn.execute_batch(
        r#"INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp)
           VALUES ('m7', '20260901_1', 'user', '[{"type":"text","text":"thanks"}]', 1788256900);"#,
    )
    .expect("insert");
    let grown = read_whole_from(&file, &end);
    assert_eq!(grown.len(), 1);
    assert_eq!(grown[0].events.len(), 8);
}

fn read_whole_from(file: &TranscriptFile, end: &ReadEnd) -> Vec<CollectedSession> {
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
fn roots_and_the_wal() {
    let home = Path::new("/h");
    let env = Env::of(&[("HOME", home)]);
    assert_eq!(
        Reader.roots(&env),
        vec![home.join(".local/share/goose/sessions/sessions.db")]
    );
    let env = Env::of(&[("HOME", home), ("GOOSE_PATH_ROOT", Path::new("/g"))]);
    assert_eq!(
        Reader.roots(&env),
        vec![PathBuf::from("/g/data/sessions/sessions.db")]
    );
    let db = home.join(".local/share/goose/sessions/sessions.db");
    assert_eq!(
        Reader.store_of_change(&db.with_file_name("sessions.db-wal")),
        Some(db.clone())
    );
    assert_eq!(
        Reader.store_of_change(&db.with_file_name("sessions.db-shm")),
        None
    );
    assert_eq!(
        Reader.store_of_change(Path::new("/elsewhere/sessions.db-wal")),
        None
    );
    assert_eq!(
        sql_time("2026-09-01 10:00:00").as_deref(),
        Some("2026-09-01T10:00:00.000Z")
    );
}
