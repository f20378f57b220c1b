use super::*;
use crate::sources::episodes::agents::Agent;
use crate::sources::episodes::parser::test_support::{assert_resumable, parse_str};

const HEADER: &str = r#"{"sessionId":"s-1","projectHash":"ab","startTime":"2026-05-07T18:28:01.404Z","lastUpdated":"2026-05-07T18:28:01.404Z","kind":"main"}"#;

fn types(events: &[ParsedEvent]) -> Vec<&'static str> {
    events.iter().map(|e| e.event_type.as_str()).collect()
}

#[test]
fn a_reappended_message_adds_only_its_tool_calls() {
    let text = [
        HEADER,
        r#"{"id":"u1","timestamp":"2026-05-07T18:28:02.234Z","type":"user","content":[{"text":"list files"}]}"#,
        r#"{"$set":{"lastUpdated":"2026-05-07T18:28:02.234Z"}}"#,
        r#"{"id":"g1","timestamp":"2026-05-07T18:28:05.711Z","type":"gemini","content":"I will list them.","thoughts":[{"subject":"Plan","description":"use ls","timestamp":"2026-05-07T18:28:05.259Z"}]}"#,
        r#"{"id":"g1","timestamp":"2026-05-07T18:28:05.711Z","type":"gemini","content":"I will list them.","thoughts":[{"subject":"Plan","description":"use ls","timestamp":"2026-05-07T18:28:05.259Z"}],"toolCalls":[{"id":"c1","name":"run_shell_command","args":{"command":"ls -la"},"status":"executing"}]}"#,
        r#"{"id":"g1","timestamp":"2026-05-07T18:28:05.711Z","type":"gemini","content":"I will list them.","toolCalls":[{"id":"c1","name":"run_shell_command","args":{"command":"ls -la"},"status":"error","result":[{"functionResponse":{"id":"c1","name":"run_shell_command","response":{"error":"permission denied"}}}]}]}"#,
    ]
    .join("\n");
    let (events, parser) = parse_str(Agent::Gemini, &text);
    assert_eq!(
        types(&events),
        vec![
            "user/message",
            "assistant/thinking",
            "assistant/message",
            "assistant/tool_use",
            "tool/result"
        ]
    );
    let result = &events[4];
    assert!(result.is_error && result.text.contains("permission denied"));
    assert_eq!(result.tool_name.as_deref(), Some("run_shell_command"));
    assert!(events[3].facts.contains(&Fact::Command {
        program: "ls".into()
    }));
    assert_eq!(parser.meta().session_id.as_deref(), Some("s-1"));
    assert_eq!(parser.stats().skipped(), 0);
    assert_resumable(Agent::Gemini, &text);
}

#[test]
fn a_rewound_message_appended_again_is_new_and_an_unknown_id_clears_all() {
    let text = [
        HEADER,
        r#"{"id":"g1","timestamp":"2026-05-07T18:28:05.711Z","type":"gemini","content":"first try"}"#,
        r#"{"$rewindTo":"g1"}"#,
        r#"{"id":"g1","timestamp":"2026-05-07T18:29:05.711Z","type":"gemini","content":"first try"}"#,
        r#"{"$rewindTo":"nope"}"#,
        r#"{"id":"g1","timestamp":"2026-05-07T18:30:05.711Z","type":"gemini","content":"first try"}"#,
    ]
    .join("\n");
    let (events, _) = parse_str(Agent::Gemini, &text);
    assert_eq!(events.len(), 3);
    assert_resumable(Agent::Gemini, &text);
}

#[test]
fn a_subagent_header_makes_user_lines_the_parents_task() {
    let text = [
        r#"{"sessionId":"k7","projectHash":"ab","startTime":"2026-05-07T18:28:01.404Z","kind":"subagent","directories":["/w/app"]}"#,
        r#"{"id":"u1","timestamp":"2026-05-07T18:28:02.234Z","type":"user","content":[{"text":"Count the words in notes.md"}]}"#,
        r#"{"id":"i1","timestamp":"2026-05-07T18:28:03.234Z","type":"info","content":"hint"}"#,
        r#"{"id":"e1","timestamp":"2026-05-07T18:28:04.234Z","type":"error","content":"quota"}"#,
        r#"{"$set":"not an object"}"#,
        r#"{"neither":"a header nor a message"}"#,
    ]
    .join("\n");
    let (events, parser) = parse_str(Agent::Gemini, &text);
    assert_eq!(
        types(&events),
        vec!["agent/prompt", "system/notification", "system/error"]
    );
    assert!(!events[0].human);
    let m = parser.meta();
    assert_eq!(m.cwd.as_deref(), Some("/w/app"));
    assert_eq!(m.title.as_deref(), Some("Count the words in notes.md"));
    assert_eq!(parser.stats().skipped_broken, 1);
    assert_eq!(parser.stats().skipped_unknown, 1);
}

#[test]
fn a_checkpoint_replays_its_messages_through_the_same_rule() {
    let text = [
        HEADER,
        r#"{"id":"u1","timestamp":"2026-05-07T18:28:02.234Z","type":"user","content":"fix it"}"#,
        r#"{"$set":{"messages":[{"id":"u1","timestamp":"2026-05-07T18:28:02.234Z","type":"user","content":"fix it"},{"id":"g2","timestamp":"2026-05-07T18:28:09.000Z","type":"gemini","content":"fixed"}],"summary":"Fix it"}}"#,
    ]
    .join("\n");
    let (events, parser) = parse_str(Agent::Gemini, &text);
    assert_eq!(types(&events), vec!["user/message", "assistant/message"]);
    assert_eq!(parser.meta().title.as_deref(), Some("Fix it"));
}
