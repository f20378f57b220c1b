//! Unit tests of the parent module, kept apart so the module reads in one sitting.

use super::*;
use crate::sources::episodes::agent::{read_whole, CollectSink, CollectedSession};

const MAIN: &str = "0f9e8d7c-6b5a-4c3d-8e2f-1a0b9c8d7e6f";
const CHILD: &str = "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d";
const LEGACY: &str = "2b3c4d5e-6f70-4b8c-9dae-1f2a3b4c5d6e";

fn fixture_sql() -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/agents/zed/threads.sql"),
    )
    .expect("fixture")
}

fn zstd(bytes: &[u8]) -> Vec<u8> {
    ruzstd::encoding::compress_to_vec(bytes, ruzstd::encoding::CompressionLevel::Fastest)
}

/// Stores the `0.3.0` documents zstd-compressed, as current Zed does.
fn compress_current(c: &Connection) {
    let rows: Vec<(String, Vec<u8>)> = c
        .prepare("SELECT id, data FROM threads WHERE json_extract(data, '$.version') = '0.3.0'")
        .and_then(|mut st| {
            st.query_map([], |r| Ok((r.get(0)?, r.get::<_, String>(1)?.into_bytes())))?
                .collect::<rusqlite::Result<_>>()
        })
        .expect("rows");
    for (id, data) in rows {
        c.execute(
            "UPDATE threads SET data_type = 'zstd', data = ?2 WHERE id = ?1",
            params![id, zstd(&data)],
        )
        .expect("compress");
    }
}

/// The fixture database at Zed's place under `dir`, its writer left open in WAL mode.
fn db(dir: &Path) -> (PathBuf, Connection) {
    let path = dir.join("zed/threads").join(DB_NAME);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    let c = Connection::open(&path).expect("db");
    c.execute_batch("PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;")
        .expect("wal");
    c.execute_batch(&fixture_sql()).expect("fixture sql");
    compress_current(&c);
    (path, c)
}

fn kinds(s: &CollectedSession) -> Vec<(EventType, bool)> {
    s.events
        .iter()
        .map(|e| (e.event_type, e.is_error))
        .collect()
}

fn session<'a>(sink: &'a CollectSink, id: &str) -> &'a CollectedSession {
    sink.sessions
        .iter()
        .find(|s| s.meta.session_id.as_deref() == Some(id))
        .unwrap_or_else(|| panic!("{id} not read"))
}

#[test]
fn a_compressed_thread_its_subagent_and_an_agent_1_thread() {
    let dir = tempfile::tempdir().expect("tmp");
    let (path, conn) = db(dir.path());
    let stored: i64 = conn
        .query_row(
            "SELECT count(*) FROM threads WHERE data_type = 'zstd'",
            [],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(stored, 2, "the current documents are stored compressed");
    let file = super::super::agents::recognise(&path).expect("recognised");
    assert_eq!(file.kind, Agent::Zed);
    let (sink, end) = read_whole(&file).expect("read");
    assert_eq!(sink.sessions.len(), 3);
    assert_eq!(
        (end.lines.skipped_broken, end.lines.skipped_unknown),
        (0, 0)
    );

    let main = session(&sink, MAIN);
    assert_eq!(main.meta.cwd.as_deref(), Some("/home/dev/payments"));
    assert_eq!(
        main.meta.title.as_deref(),
        Some("Refunds are off by a cent")
    );
    assert_eq!(main.meta.model.as_deref(), Some("claude-sonnet-4-5"));
    assert_eq!(
        main.meta.created_at.as_deref(),
        Some("2026-09-06T10:00:00.000Z")
    );
    assert_eq!(
        main.meta.last_event_at.as_deref(),
        Some("2026-09-06T10:15:00.000Z")
    );
    assert_eq!(
        kinds(main),
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
    assert!(
        main.events.iter().all(|e| e.time.is_none()),
        "no per-message times"
    );
    assert_eq!(
        main.events[0].text,
        "The refund total is off by a cent. Look at @/home/dev/payments/src/refund.rs and fix it."
    );
    assert_eq!(main.events[3].tool_name.as_deref(), Some("terminal"));
    assert!(main.events[3].text.contains("exit code 101"));
    assert_eq!(main.events[7].text, "Edited payments/src/refund.rs:");
    assert!(main.events[2]
        .facts
        .iter()
        .any(|f| matches!(f, Fact::Command { program } if program == "cargo")));
    assert!(main.events[4].facts.iter().any(|f| matches!(f,
        Fact::Spawn { tool_use_id: Some(id), name: Some(n), .. }
            if id == "toolu_02" && n == "Rounding rules")));
    assert!(main.events[6]
        .facts
        .iter()
        .any(|f| matches!(f, Fact::FileEdit { path } if path == "payments/src/refund.rs")));

    let child = session(&sink, CHILD);
    assert_eq!(child.meta.parent_session_id.as_deref(), Some(MAIN));
    assert_eq!(child.meta.agent_id.as_deref(), Some(CHILD));
    assert_eq!(child.meta.spawn_tool_use_id.as_deref(), Some("toolu_02"));
    assert_eq!(
        child.meta.agent_description.as_deref(),
        Some("Rounding rules")
    );
    assert_eq!(
        kinds(child),
        vec![
            (EventType::AgentPrompt, false),
            (EventType::AssistantMessage, false)
        ]
    );

    let legacy = session(&sink, LEGACY);
    assert_eq!(legacy.meta.cwd, None);
    assert_eq!(
        legacy.meta.created_at.as_deref(),
        Some("2025-06-01T08:00:00.000Z")
    );
    assert_eq!(
        kinds(legacy),
        vec![
            (EventType::UserMessage, false),
            (EventType::AssistantThinking, false),
            (EventType::AssistantMessage, false),
            (EventType::AssistantToolUse, false),
            (EventType::ToolResult, false),
            (EventType::AssistantMessage, false),
        ]
    );
    assert_eq!(legacy.events[4].tool_name.as_deref(), Some("read_file"));
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
fn a_rewritten_thread_is_read_again_and_bad_rows_are_counted_never_fatal() {
    let dir = tempfile::tempdir().expect("tmp");
    let (path, conn) = db(dir.path());
    let file = super::super::agents::recognise(&path).expect("recognised");
    let (_, end) = read_whole(&file).expect("read");
    assert!(read_from(&file, &end).is_empty(), "nothing changed");

    // Zed saves the whole thread again, one message longer.
    let doc: String = conn
        .query_row(
            "SELECT data FROM threads WHERE id = ?1",
            params![LEGACY],
            |r| r.get(0),
        )
        .expect("doc");
    let mut doc: Value = serde_json::from_str(&doc).expect("json");
    doc["messages"]
        .as_array_mut()
        .expect("messages")
        .push(serde_json::json!({"id": 3, "role": "user",
            "segments": [{"type": "text", "text": "thanks"}], "tool_uses": [], "tool_results": []}));
    conn.execute(
        "UPDATE threads SET data = ?2, updated_at = '2025-06-01T08:05:00+00:00' WHERE id = ?1",
        params![LEGACY, doc.to_string()],
    )
    .expect("rewrite");
    // A frame that is not zstd, a data type not known, a document that is not JSON.
    conn.execute_batch(
        "INSERT INTO threads (id, summary, updated_at, data_type, data) VALUES
           ('bad-zstd', 'x', '2026-01-01T00:00:00Z', 'zstd', X'0011223344556677'),
           ('bad-type', 'x', '2026-01-01T00:00:00Z', 'lz4', X'00'),
           ('bad-json', 'x', '2026-01-01T00:00:00Z', 'json', '{\"messages\": [');",
    )
    .expect("bad rows");
    let mut sink = CollectSink::default();
    let limits = ReadLimits {
        max_line_bytes: 1 << 20,
    };
    let from = Resume {
        offset: 0,
        cursor: &end.cursor,
    };
    let again = Reader
        .read(&file, Some(from), limits, &mut sink)
        .expect("read");
    assert_eq!(again.lines.skipped_broken, 3);
    let ids: Vec<&str> = sink
        .sessions
        .iter()
        .filter_map(|s| s.meta.session_id.as_deref())
        .collect();
    assert_eq!(ids.len(), 4, "{ids:?}");
    let legacy = session(&sink, LEGACY);
    assert_eq!(legacy.events.len(), 7);
    assert_eq!(
        legacy.meta.last_event_at.as_deref(),
        Some("2025-06-01T08:05:00.000Z")
    );
}

#[test]
fn a_zstd_bomb_is_refused_at_the_cap_without_decoding_it_all() {
    // 8 MB of zeros compress to a few hundred bytes; with a 64 KB cap the decoder stops just
    // past it. A frame that asks for a window over the largest document is refused unread.
    let zeros = vec![0u8; 8 * 1024 * 1024];
    let bomb = zstd(&zeros);
    assert!(bomb.len() < 64 * 1024, "{}", bomb.len());
    assert!(matches!(
        document(Some("zstd"), bomb, 64 * 1024),
        Err(Refused::Oversized)
    ));
    let small = zstd(br#"{"messages": []}"#);
    assert!(document(Some("zstd"), small, 64 * 1024).is_ok());
    // The zstd magic, then a header asking for a window of about 3.7 GB.
    assert!(matches!(
        document(
            Some("zstd"),
            vec![0x28, 0xB5, 0x2F, 0xFD, 0x00, 0xDE, 0xAD],
            64 * 1024
        ),
        Err(Refused::Oversized)
    ));
    assert!(matches!(
        document(Some("zstd"), b"not zstd at all".to_vec(), 64 * 1024),
        Err(Refused::Broken)
    ));
    assert!(matches!(
        document(None, b"{}".to_vec(), 64 * 1024),
        Err(Refused::Broken)
    ));
}

/// The real sample (`../shared/realdata/zed/`): the original five-column `threads` table, as
/// the first Zed releases with threads.db made it (before parent_id, folder_paths and
/// created_at). A thread in it is read with no cwd, its start its `updated_at`.
#[test]
fn the_real_five_column_schema_is_read() {
    let sample = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/realdata/zed/kenn-io-agentsview/zed-legacy-threads.sql");
    let Ok(schema) = std::fs::read_to_string(&sample) else {
        eprintln!("skipped: {} is absent", sample.display());
        return;
    };
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("zed/threads").join(DB_NAME);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    let c = Connection::open(&path).expect("db");
    c.execute_batch(&schema).expect("the sample's schema");
    let doc = serde_json::json!({"title": "Old thread", "updated_at": "2025-05-01T09:00:00Z",
        "messages": [{"User": {"id": "u1", "content": [{"Text": "Rename the crate."}]}},
                     {"Agent": {"content": [{"Text": "Renamed."}], "tool_results": {}}}],
        "version": "0.3.0"});
    c.execute(
        "INSERT INTO threads (id, summary, updated_at, data_type, data)
         VALUES ('t-old', 'Old thread', '2025-05-01T09:00:00+00:00', 'zstd', ?1)",
        params![zstd(doc.to_string().as_bytes())],
    )
    .expect("row");
    drop(c);
    let file = super::super::agents::recognise(&path).expect("recognised");
    let (sink, _) = read_whole(&file).expect("read");
    assert_eq!(sink.sessions.len(), 1);
    let s = &sink.sessions[0];
    assert_eq!((s.meta.cwd.as_deref(), s.events.len()), (None, 2));
    assert_eq!(
        s.meta.created_at.as_deref(),
        Some("2025-05-01T09:00:00.000Z")
    );
    assert_eq!(s.meta.parent_session_id, None);
}

#[test]
fn roots_folders_and_the_wal() {
    let home = Path::new("/h");
    let env = Env::of(&[("HOME", home)]);
    assert_eq!(
        Reader.roots(&env),
        vec![home.join(".local/share/zed/threads/threads.db")]
    );
    let env = Env::of(&[("HOME", home), ("XDG_DATA_HOME", Path::new("/x"))]);
    assert_eq!(
        Reader.roots(&env),
        vec![PathBuf::from("/x/zed/threads/threads.db")]
    );
    let db = home.join(".local/share/zed/threads/threads.db");
    assert_eq!(
        Reader.store_of_change(&db.with_file_name("threads.db-wal")),
        Some(db.clone())
    );
    assert_eq!(
        Reader.store_of_change(&db.with_file_name("threads.db-shm")),
        None
    );
    assert_eq!(
        Reader.store_of_change(Path::new("/elsewhere/threads.db-wal")),
        None
    );
    assert_eq!(
        first_folder("/a\n/b\n/c", Some("2,0,1")).as_deref(),
        Some("/b")
    );
    assert_eq!(first_folder("/a", None).as_deref(), Some("/a"));
    assert_eq!(first_folder("/a\n/b", Some("x")).as_deref(), Some("/a"));
    assert_eq!(first_folder("", Some("0")), None);
    assert_eq!(Reader.resume_command("'x'"), None);
}
