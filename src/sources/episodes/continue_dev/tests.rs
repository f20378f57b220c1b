//! Unit tests of the parent module, kept apart so the module reads in one sitting.

use super::*;
use crate::sources::episodes::agent::read_whole;
use serde_json::json;

fn session_file(dir: &Path, id: &str, doc: &Value) -> TranscriptFile {
    let sessions = dir.join(".continue/sessions");
    std::fs::create_dir_all(&sessions).expect("mkdir");
    let path = sessions.join(format!("{id}.json"));
    let text = serde_json::to_string_pretty(doc).expect("json");
    std::fs::write(&path, text).expect("write");
    let file = super::super::agents::recognise(&path).expect("recognised");
    assert_eq!(file.kind, Agent::Continue);
    file
}

#[test]
fn ide_items_state_results_once_and_times_from_the_index() {
    let dir = tempfile::tempdir().expect("tmp");
    let id = "0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d";
    let doc = json!({
        "sessionId": id, "title": "Fix the VAT line",
        "workspaceDirectory": "file:///home/dev/billing%20api",
        "history": [
            {"message": {"role": "user", "content": [{"type": "text", "text": "why is VAT missing"}]},
             "contextItems": [{"content": "def export(): ...", "name": "export.py",
                "description": "src/export.py", "id": {"providerTitle": "file", "itemId": "x"}}]},
            {"message": {"role": "assistant", "content": "Reading it.",
                "toolCalls": [{"id": "c1", "type": "function",
                    "function": {"name": "run_terminal_command", "arguments": "{\"command\":\"pytest -q\"}"}}]},
             "contextItems": [],
             "reasoning": {"active": false, "text": "look at the export", "startAt": 1780000000000_i64, "endAt": 1780000001000_i64},
             "toolCallStates": [{"toolCallId": "c1", "status": "errored",
                "toolCall": {"id": "c1", "type": "function",
                    "function": {"name": "run_terminal_command", "arguments": "{\"command\":\"pytest -q\"}"}},
                "parsedArgs": {"command": "pytest -q"},
                "output": [{"content": "1 failed", "name": "Terminal", "description": "pytest -q"}]}]},
            {"message": {"role": "tool", "content": "1 failed", "toolCallId": "c1"}, "contextItems": []},
            {"message": {"role": "thinking", "content": "hidden", "redactedThinking": "abc"}, "contextItems": []},
            {"message": {"role": "system", "content": "You are Continue"}, "contextItems": []},
            {"message": {"role": "oracle", "content": "?"}, "contextItems": []},
            {"contextItems": []}
        ]
    });
    let file = session_file(dir.path(), id, &doc);
    std::fs::write(
        file.path.with_file_name("sessions.json"),
        json!([{"sessionId": id, "title": "Fix the VAT line", "dateCreated": "1779999990000",
            "workspaceDirectory": "file:///home/dev/billing%20api", "messageCount": 1}])
        .to_string(),
    )
    .expect("index");
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
            "tool/result"
        ]
    );
    assert!(s.events[4].is_error, "errored");
    assert_eq!(
        s.events[1].time.as_deref(),
        Some("2026-05-28T20:26:40.000Z")
    );
    assert_eq!(
        s.events[3].facts,
        vec![Fact::Command {
            program: "pytest".into()
        }]
    );
    assert_eq!(s.meta.session_id.as_deref(), Some(id));
    assert_eq!(s.meta.cwd.as_deref(), Some("/home/dev/billing api"));
    assert_eq!(s.meta.title.as_deref(), Some("Fix the VAT line"));
    assert_eq!(
        s.meta.created_at.as_deref(),
        Some("2026-05-28T20:26:30.000Z")
    );
    assert_eq!(s.meta.last_event_at, file_mtime(&file.path));
    assert_eq!(
        (end.total.skipped_unknown, end.total.skipped_broken),
        (1, 1),
        "an unknown role and an item without a message"
    );
}

#[test]
fn cli_results_live_on_the_call_state_and_a_broken_file_is_counted() {
    let dir = tempfile::tempdir().expect("tmp");
    let id = "1c2d3e4f-5061-4b7c-8d9e-0f1a2b3c4d5e";
    let doc = json!({
        "sessionId": id, "title": "Untitled Session", "workspaceDirectory": "/home/dev/billing",
        "history": [
            {"message": {"role": "user", "content": "count the rows"}, "contextItems": [],
             "editorState": "count the rows"},
            {"message": {"role": "assistant", "content": "",
                "toolCalls": [{"id": "t1", "type": "function",
                    "function": {"name": "Subagent", "arguments": "{}"}}]},
             "contextItems": [],
             "toolCallStates": [{"toolCallId": "t1", "status": "done",
                "toolCall": {"id": "t1", "type": "function",
                    "function": {"name": "Subagent", "arguments": "{}"}},
                "parsedArgs": {"description": "Count rows", "prompt": "count them", "subagent_name": "counter"},
                "output": [{"content": "42 rows", "name": "Tool Result", "description": "Tool execution result"}]}]}
        ],
        "usage": {"totalCost": 0.01, "promptTokens": 10, "completionTokens": 5}
    });
    let file = session_file(dir.path(), id, &doc);
    let (sink, _) = read_whole(&file).expect("read");
    let s = &sink.sessions[0];
    let types: Vec<&str> = s.events.iter().map(|e| e.event_type.as_str()).collect();
    assert_eq!(types, ["user/message", "assistant/tool_use", "tool/result"]);
    assert_eq!(s.events[2].text, "42 rows");
    assert!(matches!(&s.events[1].facts[0], Fact::Spawn { name: Some(n), .. } if n == "counter"));
    assert_eq!(s.meta.title, None, "a placeholder is no title");
    assert_eq!(s.meta.cwd.as_deref(), Some("/home/dev/billing"));
    assert_eq!(s.meta.created_at, None, "no index entry");

    std::fs::write(&file.path, "{\"sessionId\": \"1c2d").expect("torn");
    let (sink, end) = read_whole(&file).expect("a torn file is no error");
    assert!(sink.sessions[0].events.is_empty());
    assert_eq!((end.total.lines, end.total.skipped_broken), (1, 1));
}

#[test]
fn sessions_are_claimed_by_place_or_by_their_head() {
    let dir = tempfile::tempdir().expect("tmp");
    let moved = dir.path().join("elsewhere/sessions");
    std::fs::create_dir_all(&moved).expect("mkdir");
    let session = moved.join("a.json");
    std::fs::write(&session, "{\n  \"sessionId\": \"a\",\n  \"title\": \"t\",\n  \"workspaceDirectory\": \"/w\",\n  \"history\": []\n}").expect("write");
    let other = moved.join("b.json");
    std::fs::write(&other, "{\"id\": \"b\"}").expect("write");
    std::fs::write(moved.join("sessions.json"), "[]").expect("write");
    let kind = |p: &Path| super::super::agents::recognise(p).map(|f| f.kind);
    assert_eq!(kind(&session), Some(Agent::Continue));
    assert_eq!(kind(&other), None);
    assert_eq!(kind(&moved.join("sessions.json")), None);
    let env = Env::of(&[
        ("HOME", Path::new("/home/me")),
        ("CONTINUE_GLOBAL_DIR", Path::new("/data/cont")),
    ]);
    assert_eq!(
        Reader.roots(&env),
        vec![PathBuf::from("/data/cont/sessions")]
    );
    let env = Env::of(&[("HOME", Path::new("/home/me"))]);
    assert_eq!(
        Reader.roots(&env),
        vec![PathBuf::from("/home/me/.continue/sessions")]
    );
}
