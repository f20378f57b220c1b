use super::*;
use crate::sources::episodes::parser::test_support::{assert_resumable, parse_str};

#[test]
fn context_records_become_events_and_errors_and_links_are_read() {
    let text = [
        r#"{"role": "_checkpoint", "id": 0}"#,
        r#"{"role": "user", "content": "fix the flaky test"}"#,
        r#"{"role": "_usage", "token_count": 4504}"#,
        r#"{"role": "assistant", "content": [{"type": "think", "think": "look first"}, {"type": "text", "text": "Looking."}], "tool_calls": [{"type": "function", "id": "ReadContext:0", "function": {"name": "ReadContext", "arguments": "{\"description\": \"find the test\"}"}}, {"type": "function", "id": "Bash:1", "function": {"name": "Bash", "arguments": "{\"command\": \"cd /w && pytest -q\"}"}}]}"#,
        r#"{"role": "tool", "content": [{"type": "text", "text": "<system>Context gathered successfully. Transcript saved to: /root/.kimi/sessions/00d5/531d_read_1.jsonl</system>"}], "tool_call_id": "ReadContext:0"}"#,
        r#"{"role": "tool", "content": [{"type": "text", "text": "<system>ERROR: Command failed with exit code: 1.</system>"}], "tool_call_id": "Bash:1"}"#,
        r#"{"role": "_mystery", "x": 1}"#,
        r#"{"role": "assistant", "content""#,
    ]
    .join("\n");
    let (events, parser) = parse_str(Agent::Kimi, &text);
    let types: Vec<&str> = events.iter().map(|e| e.event_type.as_str()).collect();
    assert_eq!(
        types,
        vec![
            "user/message",
            "assistant/thinking",
            "assistant/message",
            "assistant/tool_use",
            "assistant/tool_use",
            "tool/result",
            "tool/result"
        ]
    );
    assert!(!events[5].is_error && events[6].is_error);
    assert_eq!(events[6].tool_name.as_deref(), Some("Bash"));
    assert!(events[5].facts.contains(&Fact::AgentLink {
        tool_use_id: Some("ReadContext:0".into()),
        agent_id: "read_1".into()
    }));
    assert!(events[4].facts.contains(&Fact::Command {
        program: "pytest".into()
    }));
    assert_eq!(parser.stats().skipped_unknown, 1);
    assert_eq!(parser.stats().skipped_broken, 1);
    assert_resumable(Agent::Kimi, &text);
}

#[test]
fn layouts_name_sessions_and_subagents() {
    let tmp = tempfile::tempdir().expect("tmp");
    let flat = tmp.path().join("sessions/00d5/531d.jsonl");
    let read = tmp.path().join("sessions/00d5/531d_read_2.jsonl");
    let nested = tmp.path().join("sessions/00d5/9e1f/context.jsonl");
    let child = tmp
        .path()
        .join("sessions/00d5/9e1f/subagents/explore-1/context.jsonl");
    for p in [&flat, &read, &nested, &child] {
        std::fs::create_dir_all(p.parent().expect("dir")).expect("mkdir");
        std::fs::write(p, "{\"role\": \"_checkpoint\", \"id\": 0}\n").expect("write");
    }
    let layout = |p: &Path| {
        let mut head = Head::new(p);
        Reader.recognise(p, &mut head).map(|r| r.layout)
    };
    assert_eq!(layout(&flat), Some(Layout::Main));
    assert_eq!(
        layout(&read),
        Some(Layout::Subagent {
            parent_session_hint: Some("531d".into()),
            agent_id_hint: Some("read_2".into()),
            sidecar: None
        })
    );
    assert_eq!(layout(&nested), Some(Layout::Main));
    assert_eq!(
        layout(&child),
        Some(Layout::Subagent {
            parent_session_hint: Some("9e1f".into()),
            agent_id_hint: Some("explore-1".into()),
            sidecar: None
        })
    );
    let file = TranscriptFile {
        path: nested.clone(),
        kind: Agent::Kimi,
        layout: Layout::Main,
    };
    assert_eq!(
        Reader
            .file_session_id(&file, &SessionMeta::default())
            .as_deref(),
        Some("9e1f")
    );
}
