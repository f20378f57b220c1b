//! Unit tests of the parent module, kept apart so the module reads in one sitting.

use super::super::model::TranscriptKind::Codex;
use super::super::parser::test_support::{assert_resumable, parse_str};
use super::super::parser::Outcome;
use super::*;

fn types(events: &[ParsedEvent]) -> Vec<&str> {
    events.iter().map(|e| e.event_type.as_str()).collect()
}

const ROLLOUT: &str = r##"{"timestamp":"2025-09-25T02:12:23.966Z","type":"session_meta","payload":{"id":"s-1","cwd":"/w","originator":"codex_vscode","cli_version":"0.40.0","instructions":null,"git":{"branch":"feat/x"}}}
{"timestamp":"2025-09-25T02:12:23.966Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"}]}}
{"timestamp":"2025-09-25T02:12:24.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"# Context from my IDE setup:\n\n## Active file: a.ts\n\n## My request for Codex:\nwhy is it slow?\n"}]}}
{"timestamp":"2025-09-25T02:12:24.000Z","type":"event_msg","payload":{"type":"user_message","message":"# Context from my IDE setup:\n\n## Active file: a.ts\n\n## My request for Codex:\nwhy is it slow?\n","kind":"plain"}}
{"timestamp":"2025-09-25T02:12:25.000Z","type":"turn_context","payload":{"cwd":"/w","model":"gpt-5-codex"}}
{"timestamp":"2025-09-25T02:12:25.000Z","type":"event_msg","payload":{"type":"agent_reasoning","text":"**Looking**"}}
{"timestamp":"2025-09-25T02:12:25.000Z","type":"response_item","payload":{"type":"reasoning","summary":[{"type":"summary_text","text":"**Looking**"}],"content":null,"encrypted_content":"gAAA"}}
{"timestamp":"2025-09-25T02:12:26.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"cd /w && sed -n '1,200p' a.ts\"],\"workdir\":\"/w\"}","call_id":"c1"}}
{"timestamp":"2025-09-25T02:12:26.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"{\"output\":\"bash: syntax error\\n\",\"metadata\":{\"exit_code\":2,\"duration_seconds\":0.0}}"}}
{"timestamp":"2025-09-25T02:12:27.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"apply_patch\",\"*** Begin Patch\\n*** Update File: a.ts\\n@@\\n-x\\n+y\\n*** End Patch\"]}","call_id":"c2"}}
{"timestamp":"2025-09-25T02:12:27.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c2","output":"Exit code: 0\nOutput:\nDone!"}}
{"timestamp":"2025-09-25T02:12:28.000Z","type":"event_msg","payload":{"type":"agent_message","message":"It is slow because of X."}}
{"timestamp":"2025-09-25T02:12:28.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"It is slow because of X."}]}}
{"timestamp":"2025-09-25T02:12:29.000Z","type":"event_msg","payload":{"type":"token_count","info":null}}
{"timestamp":"2025-09-25T02:12:30.000Z","type":"event_msg","payload":{"type":"task_complete","last_agent_message":"It is slow because of X."}}
{"timestamp":"2025-09-25T02:12:31.000Z","type":"event_msg","payload":{"type":"brand_new_event"}}
"##;

#[test]
fn maps_a_rollout_and_dedupes_doubled_text() {
    let (events, p) = parse_str(Codex, ROLLOUT);
    assert_eq!(
        types(&events),
        vec![
            "system/context",
            "system/context",
            "user/message",
            "assistant/thinking",
            "assistant/tool_use",
            "tool/result",
            "assistant/tool_use",
            "tool/result",
            "assistant/message",
        ]
    );
    assert_eq!(events[2].text, "why is it slow?");
    assert!(events[2].human);
    assert!(!events[0].human && !events[1].human);
    assert_eq!(
        events[4].facts,
        vec![Fact::Command {
            program: "sed".into()
        }]
    );
    assert_eq!(events[4].tool_name.as_deref(), Some("shell"));
    assert!(events[5].is_error);
    assert_eq!(events[5].text, "bash: syntax error\n");
    assert_eq!(events[5].tool_name.as_deref(), Some("shell"));
    assert!(events[6].facts.contains(&Fact::FileEdit {
        path: "a.ts".into()
    }));
    assert!(!events[7].is_error);
    let m = p.meta();
    assert_eq!(m.session_id.as_deref(), Some("s-1"));
    assert_eq!(m.agent_preset.as_deref(), Some("codex_vscode"));
    assert_eq!(m.version.as_deref(), Some("0.40.0"));
    assert_eq!(m.git_branch.as_deref(), Some("feat/x"));
    assert_eq!(m.model.as_deref(), Some("gpt-5-codex"));
    assert_eq!(p.stats().skipped_unknown, 1);
    // An error resolved by a later success, then task_complete.
    assert_eq!(p.outcome(), Outcome::Success);
    assert_resumable(Codex, ROLLOUT);
}

#[test]
fn legacy_rollout() {
    let text = r#"{"id":"old-1","timestamp":"2025-08-01T10:00:00.000Z","instructions":"Always run tests."}
{"record_type":"state"}
{"type":"message","role":"user","content":[{"type":"input_text","text":"add a flag"}]}
{"type":"function_call","name":"shell","arguments":"{\"command\":[\"cargo\",\"build\"]}","call_id":"c"}
{"type":"function_call_output","call_id":"c","output":"{\"output\":\"error[E0425]\",\"metadata\":{\"exit_code\":101}}"}
{"record_type":"state"}
"#;
    let (events, p) = parse_str(Codex, text);
    assert_eq!(
        types(&events),
        vec![
            "system/context",
            "user/message",
            "assistant/tool_use",
            "tool/result"
        ]
    );
    assert_eq!(
        events[2].facts,
        vec![Fact::Command {
            program: "cargo".into()
        }]
    );
    assert!(events[3].is_error);
    assert_eq!(p.meta().session_id.as_deref(), Some("old-1"));
    assert_eq!(
        p.meta().created_at.as_deref(),
        Some("2025-08-01T10:00:00.000Z")
    );
    assert_eq!(p.stats().ignored, 2);
    assert_eq!(p.outcome(), Outcome::Failure);
    assert_resumable(Codex, text);
}

#[test]
fn subagent_thread_aborts_and_item_completed() {
    let text = r#"{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"child","cwd":"/w","originator":"codex_cli_rs","source":{"subagent":{"thread_spawn":{"parent_thread_id":"parent","depth":1,"agent_nickname":"scout","agent_role":"explorer"}}}}}
{"timestamp":"2026-01-01T00:00:01Z","type":"session_meta","payload":{"id":"other","cwd":"/elsewhere"}}
{"timestamp":"2026-01-01T00:00:02Z","type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"be terse"}]}}
{"timestamp":"2026-01-01T00:00:03Z","type":"event_msg","payload":{"type":"user_message","message":"map the repo"}}
{"timestamp":"2026-01-01T00:00:03Z","type":"event_msg","payload":{"type":"item_completed","item":{"type":"UserMessage","content":[{"type":"text","text":"map the repo"}]}}}
{"timestamp":"2026-01-01T00:00:04Z","type":"event_msg","payload":{"type":"item_completed","item":{"type":"AgentMessage","content":[{"type":"Text","text":"done"}]}}}
{"timestamp":"2026-01-01T00:00:04Z","type":"event_msg","payload":{"type":"agent_message","message":"done"}}
{"timestamp":"2026-01-01T00:00:05Z","type":"event_msg","payload":{"type":"turn_aborted","reason":"interrupted"}}
"#;
    let (events, p) = parse_str(Codex, text);
    assert_eq!(
        types(&events),
        vec![
            "system/context",
            "agent/prompt",
            "assistant/message",
            "system/error"
        ]
    );
    assert!(events.iter().all(|e| !e.human));
    let m = p.meta();
    assert_eq!(m.session_id.as_deref(), Some("child"));
    assert_eq!(m.agent_id.as_deref(), Some("child"));
    assert_eq!(m.parent_session_id.as_deref(), Some("parent"));
    assert_eq!(m.agent_name.as_deref(), Some("scout"));
    assert_eq!(m.cwd.as_deref(), Some("/w"));
    assert_eq!(p.outcome(), Outcome::Failure);
    assert_resumable(Codex, text);
}
