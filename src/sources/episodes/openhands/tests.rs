//! Unit tests of the parent module, kept apart so the module reads in one sitting.

use super::*;
use crate::sources::episodes::agent::read_whole;
use serde_json::json;

const HEX: &str = "0a1b2c3d4e5f40718293a4b5c6d7e8f9";
const ID: &str = "0a1b2c3d-4e5f-4071-8293-a4b5c6d7e8f9";

fn conversation(root: &Path, state: &Value, events: &[Value]) -> TranscriptFile {
    let dir = root.join("conversations").join(HEX);
    std::fs::create_dir_all(dir.join(EVENTS_DIR)).expect("mkdir");
    for (i, ev) in events.iter().enumerate() {
        let id = str_of(ev, "id").unwrap_or("ffffffff");
        let name = format!("event-{i:05}-{id}.json");
        std::fs::write(
            dir.join(EVENTS_DIR).join(name),
            serde_json::to_vec(ev).expect("json"),
        )
        .expect("write");
    }
    let path = dir.join(BASE_STATE);
    std::fs::write(&path, serde_json::to_vec(state).expect("json")).expect("write");
    let file = super::super::agents::recognise(&path).expect("recognised");
    assert_eq!(file.kind, Agent::OpenHands);
    file
}

fn state() -> Value {
    json!({"id": ID, "agent": {"kind": "Agent", "llm": {"model": "anthropic/claude-sonnet-4-5"}},
        "workspace": {"kind": "LocalWorkspace", "working_dir": "/home/dev/shop"},
        "execution_status": "finished", "max_iterations": 500})
}

fn ev(id: &str, ts: &str, kind: &str, source: &str, body: Value) -> Value {
    let mut v = json!({"id": id, "timestamp": ts, "source": source, "kind": kind});
    if let (Some(m), Value::Object(b)) = (v.as_object_mut(), body) {
        m.extend(b);
    }
    v
}

fn text(t: &str) -> Value {
    json!([{"type": "text", "text": t}])
}

#[test]
fn events_map_to_turns_calls_results_and_facts() {
    let dir = tempfile::tempdir().expect("tmp");
    let events = [
        ev(
            "00000000-0000-4000-8000-000000000000",
            "2026-03-01T10:00:00.000001",
            "SystemPromptEvent",
            "agent",
            json!({"system_prompt": {"type": "text", "text": "You are"}}),
        ),
        ev(
            "00000000-0000-4000-8000-000000000001",
            "2026-03-01T10:00:01.5",
            "MessageEvent",
            "user",
            json!({"llm_message": {"role": "user", "content": text("fix the cart total")}, "activated_skills": ["python-tests"]}),
        ),
        ev(
            "00000000-0000-4000-8000-000000000002",
            "2026-03-01T10:00:05",
            "ActionEvent",
            "agent",
            json!({"thought": text("Running the tests."), "reasoning_content": "tests first",
                "action": {"kind": "TerminalAction", "command": "cd /home/dev/shop && pytest -q", "is_input": false},
                "tool_name": "terminal", "tool_call_id": "toolu_1",
                "tool_call": {"id": "toolu_1", "name": "terminal", "arguments": "{}", "origin": "completion"},
                "llm_response_id": "r1"}),
        ),
        ev(
            "00000000-0000-4000-8000-000000000003",
            "2026-03-01T10:00:09.250",
            "ObservationEvent",
            "environment",
            json!({"observation": {"kind": "TerminalObservation", "content": text("1 failed"), "is_error": false, "exit_code": 1},
                "tool_name": "terminal", "tool_call_id": "toolu_1", "action_id": "00000000-0000-4000-8000-000000000002"}),
        ),
        ev(
            "00000000-0000-4000-8000-000000000004",
            "2026-03-01T10:00:12",
            "ActionEvent",
            "agent",
            json!({"thought": [], "action": {"kind": "FileEditorAction", "command": "str_replace", "path": "/home/dev/shop/cart.py", "old_str": "a", "new_str": "b"},
                "tool_name": "file_editor", "tool_call_id": "toolu_2"}),
        ),
        ev(
            "00000000-0000-4000-8000-000000000005",
            "2026-03-01T10:00:13",
            "AgentErrorEvent",
            "agent",
            json!({"error": "file changed on disk", "tool_name": "file_editor", "tool_call_id": "toolu_2"}),
        ),
        ev(
            "00000000-0000-4000-8000-000000000006",
            "2026-03-01T10:00:20",
            "ActionEvent",
            "agent",
            json!({"action": {"kind": "TaskAction", "prompt": "review", "description": "Review the fix", "subagent_type": "reviewer"},
                "tool_name": "task", "tool_call_id": "toolu_3"}),
        ),
        ev(
            "00000000-0000-4000-8000-000000000007",
            "2026-03-01T10:01:00",
            "MessageEvent",
            "agent",
            json!({"llm_message": {"role": "assistant", "content": text("Fixed.")}}),
        ),
        ev(
            "00000000-0000-4000-8000-000000000008",
            "2026-03-01T10:01:01",
            "MysteryEvent",
            "agent",
            json!({}),
        ),
        json!({"id": "00000000-0000-4000-8000-000000000009", "timestamp": "2026-03-01T10:01:02", "source": "user"}),
    ];
    let file = conversation(dir.path(), &state(), &events);
    let (sink, end) = read_whole(&file).expect("read");
    let s = &sink.sessions[0];
    let types: Vec<&str> = s.events.iter().map(|e| e.event_type.as_str()).collect();
    assert_eq!(
        types,
        [
            "user/message",
            "assistant/thinking",
            "assistant/message",
            "assistant/tool_use",
            "tool/result",
            "assistant/tool_use",
            "tool/result",
            "assistant/tool_use",
            "assistant/message",
        ]
    );
    assert_eq!(
        s.events[0].time.as_deref(),
        Some("2026-03-01T10:00:01.500Z")
    );
    assert_eq!(
        s.events[0].facts,
        vec![Fact::SkillUse {
            name: "python-tests".into(),
            via: "activated".into()
        }]
    );
    assert_eq!(
        s.events[3].facts,
        vec![Fact::Command {
            program: "pytest".into()
        }]
    );
    assert!(s.events[3].text.contains("pytest -q") && !s.events[3].text.contains("TerminalAction"));
    assert!(s.events[4].is_error, "exit code 1");
    assert_eq!(s.events[4].tool_name.as_deref(), Some("terminal"));
    assert_eq!(
        s.events[5].facts,
        vec![Fact::FileEdit {
            path: "/home/dev/shop/cart.py".into()
        }]
    );
    assert!(s.events[6].is_error && s.events[6].text == "file changed on disk");
    assert!(matches!(&s.events[7].facts[0],
        Fact::Spawn { subagent_type: Some(t), description: Some(d), .. } if t == "reviewer" && d == "Review the fix"));
    let m = &s.meta;
    assert_eq!(m.session_id.as_deref(), Some(ID));
    assert_eq!(m.cwd.as_deref(), Some("/home/dev/shop"));
    assert_eq!(m.model.as_deref(), Some("anthropic/claude-sonnet-4-5"));
    assert_eq!(m.created_at.as_deref(), Some("2026-03-01T10:00:00.000Z"));
    assert_eq!(m.last_event_at.as_deref(), Some("2026-03-01T10:01:01.000Z"));
    assert_eq!(
        (end.total.skipped_unknown, end.total.skipped_broken),
        (1, 1),
        "an unknown kind and an event without one"
    );
}

#[test]
fn torn_fifo_and_oversized_events_are_counted_and_skipped() {
    let dir = tempfile::tempdir().expect("tmp");
    let events = [ev(
        "00000000-0000-4000-8000-00000000000a",
        "2026-03-01T10:00:00",
        "MessageEvent",
        "user",
        json!({"llm_message": {"role": "user", "content": text("hello")}}),
    )];
    let file = conversation(dir.path(), &state(), &events);
    let evdir = file.path.parent().expect("dir").join(EVENTS_DIR);
    std::fs::write(
        evdir.join("event-00001-00000000-0000-4000-8000-00000000000b.json"),
        b"{\"id\": \"0",
    )
    .expect("torn");
    std::fs::write(
        evdir.join("event-00002-00000000-0000-4000-8000-00000000000c.json"),
        vec![b' '; 2 * 1024 * 1024],
    )
    .expect("big");
    #[cfg(unix)]
    {
        let fifo = evdir.join("event-00003-00000000-0000-4000-8000-00000000000d.json");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).expect("c");
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }
    std::fs::write(evdir.join(".eventlog.lock"), b"").expect("lock");
    let mut sink = crate::sources::episodes::agent::CollectSink::default();
    let end = Reader
        .read(
            &file,
            None,
            ReadLimits {
                max_line_bytes: 1024 * 1024,
            },
            &mut sink,
        )
        .expect("read");
    assert_eq!(sink.sessions[0].events.len(), 1);
    let broken = if cfg!(unix) { 2 } else { 1 };
    assert_eq!(
        (end.total.skipped_broken, end.total.skipped_oversized),
        (broken, 1),
        "{:?}",
        end.total
    );
}

#[test]
fn a_torn_state_keeps_the_events_and_the_folders_id() {
    let dir = tempfile::tempdir().expect("tmp");
    let events = [ev(
        "00000000-0000-4000-8000-00000000000a",
        "2026-03-01T10:00:00",
        "MessageEvent",
        "user",
        json!({"llm_message": {"role": "user", "content": text("hello")}}),
    )];
    let file = conversation(dir.path(), &state(), &events);
    std::fs::write(&file.path, b"{\"id\": \"0a1b").expect("torn");
    let (sink, end) = read_whole(&file).expect("read");
    assert_eq!(sink.sessions[0].events.len(), 1);
    assert_eq!(end.total.skipped_broken, 1);
    assert_eq!(
        Reader
            .file_session_id(&file, &sink.sessions[0].meta)
            .as_deref(),
        Some(ID)
    );
}

#[test]
fn events_off_the_active_branch_are_marked() {
    let dir = tempfile::tempdir().expect("tmp");
    let msg = |id: &str, parent: Option<&str>, t: &str| {
        let mut v = ev(
            id,
            "2026-03-01T10:00:00",
            "MessageEvent",
            "user",
            json!({"llm_message": {"role": "user", "content": text(t)}}),
        );
        if let Some(p) = parent {
            v["parent_id"] = p.into();
        }
        v
    };
    let events = [
        msg("aaaaaaaa-0000-4000-8000-000000000001", None, "first"),
        msg(
            "aaaaaaaa-0000-4000-8000-000000000002",
            Some("aaaaaaaa-0000-4000-8000-000000000001"),
            "abandoned",
        ),
        msg(
            "aaaaaaaa-0000-4000-8000-000000000003",
            Some("aaaaaaaa-0000-4000-8000-000000000001"),
            "kept",
        ),
    ];
    let mut st = state();
    st["leaf_event_id"] = "aaaaaaaa-0000-4000-8000-000000000003".into();
    let file = conversation(dir.path(), &st, &events);
    let (sink, _) = read_whole(&file).expect("read");
    let marked: Vec<(&str, bool)> = sink.sessions[0]
        .events
        .iter()
        .map(|e| {
            let off = e.facts.iter().any(|f| matches!(f, Fact::Abandoned { .. }));
            (e.text.as_str(), off)
        })
        .collect();
    assert_eq!(
        marked,
        [("first", false), ("abandoned", true), ("kept", false)]
    );
}

#[test]
fn names_roots_times_and_changes() {
    assert_eq!(conversation_id(HEX).as_deref(), Some(ID));
    assert_eq!(conversation_id(ID).as_deref(), Some(ID));
    assert_eq!(conversation_id("not-a-conversation"), None);
    assert_eq!(event_index("event-00012-0a1b2c3d-aaaa.json"), Some(12));
    assert_eq!(event_index("event-123456-0a1b2c3d.json"), Some(123456));
    assert_eq!(event_index("event-12-0a1b2c3d.json"), None);
    assert_eq!(event_index(".eventlog.lock"), None);
    assert_eq!(
        utc_time(Some(&json!("2026-03-01T10:00:00.123456"))).as_deref(),
        Some("2026-03-01T10:00:00.123Z")
    );
    assert_eq!(
        utc_time(Some(&json!("2026-03-01T12:00:00+02:00"))).as_deref(),
        Some("2026-03-01T10:00:00.000Z")
    );
    assert_eq!(utc_time(Some(&json!("yesterday"))), None);
    let env = Env::of(&[("HOME", Path::new("/home/me"))]);
    assert_eq!(
        Reader.roots(&env),
        vec![PathBuf::from("/home/me/.openhands/conversations")]
    );
    let env = Env::of(&[
        ("HOME", Path::new("/home/me")),
        ("OPENHANDS_PERSISTENCE_DIR", Path::new("/p")),
    ]);
    assert_eq!(Reader.roots(&env), vec![PathBuf::from("/p/conversations")]);
    let env = Env::of(&[
        ("OPENHANDS_PERSISTENCE_DIR", Path::new("/p")),
        ("OPENHANDS_CONVERSATIONS_DIR", Path::new("/c")),
    ]);
    assert_eq!(Reader.roots(&env), vec![PathBuf::from("/c")]);
    let conv = PathBuf::from("/c").join(HEX);
    let event = conv.join("events/event-00003-0a1b2c3d-0000.json");
    assert_eq!(Reader.store_of_change(&event), Some(conv.join(BASE_STATE)));
    assert!(Reader.is_aside(&event));
    assert_eq!(
        Reader.store_of_change(&conv.join(BASE_STATE)),
        Some(conv.join(BASE_STATE))
    );
    assert_eq!(
        Reader.store_of_change(&conv.join("events/.eventlog.lock")),
        None
    );
    assert_eq!(
        Reader.store_of_change(Path::new("/c/notes/base_state.json")),
        None
    );
}
