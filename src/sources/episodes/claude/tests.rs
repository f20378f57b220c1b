//! Unit tests of the parent module, kept apart so the module reads in one sitting.

use super::super::model::TranscriptKind::Claude;
use super::super::parser::test_support::{assert_resumable, parse_str};
use super::*;

fn types(events: &[ParsedEvent]) -> Vec<&str> {
    events.iter().map(|e| e.event_type.as_str()).collect()
}

const SESSION: &str = r#"{"type":"user","sessionId":"s1","cwd":"/w","version":"2.1.39","gitBranch":"main","timestamp":"2026-02-12T14:00:00.000Z","message":{"role":"user","content":"run the tests"}}
{"type":"assistant","sessionId":"s1","timestamp":"2026-02-12T14:00:01.000Z","message":{"model":"claude-opus-4-6","content":[{"type":"thinking","thinking":"plan"},{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"cd /w && cargo test","description":"run"}}]}}
{"type":"user","sessionId":"s1","timestamp":"2026-02-12T14:00:02.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"Exit code 101","is_error":true}]},"toolUseResult":"Error: Exit code 101"}
{"type":"assistant","sessionId":"s1","message":{"content":[{"type":"tool_use","id":"t2","name":"Skill","input":{"skill":"elixir:hex-docs-search"}}]}}
{"type":"user","sessionId":"s1","message":{"content":[{"type":"tool_result","tool_use_id":"t2","content":"Launching skill: elixir:hex-docs-search"}]},"toolUseResult":{"success":true}}
{"type":"user","isMeta":true,"sourceToolUseID":"t2","message":{"content":[{"type":"text","text":"Base directory for this skill: /h/skills/hex-docs-search\n\n# Hex"}]}}
{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t9","content":[{"type":"text","text":"mcp says hi"},{"type":"image","source":{"type":"base64","data":"AAAA"}}]}]},"toolUseResult":[{"type":"text","text":"mcp says hi"}]}
{"type":"user","message":{"role":"user","content":"спасибо, работает"}}
{"type":"summary","summary":"Fix the tests","leafUuid":"x"}
{"type":"custom-title","customTitle":"My title"}
{"type":"brand-new-type","sessionId":"s1"}
"#;

#[test]
fn maps_a_session() {
    let (events, p) = parse_str(Claude, SESSION);
    assert_eq!(
        types(&events),
        vec![
            "user/message",
            "assistant/thinking",
            "assistant/tool_use",
            "tool/result",
            "assistant/tool_use",
            "tool/result",
            "system/skill",
            "tool/result",
            "user/message",
            "system/summary",
        ]
    );
    let bash = &events[2];
    assert_eq!(
        bash.text,
        "Bash\ncommand: cd /w && cargo test\ndescription: run"
    );
    assert_eq!(
        bash.facts,
        vec![Fact::Command {
            program: "cargo".into()
        }]
    );
    assert!(events[3].is_error);
    assert_eq!(events[3].tool_name.as_deref(), Some("Bash"));
    assert!(events[4].facts.contains(&Fact::SkillUse {
        name: "elixir:hex-docs-search".into(),
        via: "tool".into()
    }));
    assert!(!events[5].is_error, "is_error absent means success");
    assert!(!events[6].human);
    assert_eq!(events[7].text, "mcp says hi");
    assert!(events[8].human);
    let m = p.meta();
    assert_eq!(m.session_id.as_deref(), Some("s1"));
    assert_eq!(m.model.as_deref(), Some("claude-opus-4-6"));
    assert_eq!(m.title.as_deref(), Some("My title"));
    assert_eq!(m.created_at.as_deref(), Some("2026-02-12T14:00:00.000Z"));
    assert_eq!(p.stats().skipped_unknown, 1);
    assert_eq!(p.stats().ignored, 1);
    assert_eq!(p.outcome().as_str(), "success");
    assert_resumable(Claude, SESSION);
}

#[test]
fn malformed_bodies_are_counted_not_fatal() {
    let text = concat!(
        "{\"type\":\"assistant\",\"message\":{\"content\":null}}\n",
        "{\"type\":\"assistant\"}\n",
        "{\"type\":\"user\",\"message\":{\"role\":\"user\"}}\n",
        "\0\0\0\0\0\0\n",
        "{\"type\":\"user\",\"message\":{\"content\":\"a\"{\"type\":\"user\",\"message\":{\"content\":\"hello\"}}\n",
        "{\"type\":\"user\",\"message\":{\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"x\",\"content\":null}]},\"toolUseResult\":{\"stdout\":\"out\",\"stderr\":\"\"}}\n",
    );
    let (events, p) = parse_str(Claude, text);
    assert_eq!(types(&events), vec!["user/message", "tool/result"]);
    assert_eq!(events[0].text, "hello");
    assert_eq!(events[1].text, "out");
    assert_eq!(p.stats().skipped_broken, 5);
    assert_eq!(p.stats().lines, 6);
}

#[test]
fn injected_lines_are_not_human() {
    let text = r#"{"type":"user","message":{"content":"fix it"}}
{"type":"assistant","message":{"content":[{"type":"text","text":"ok"}]}}
{"type":"user","isMeta":true,"message":{"content":"<local-command-caveat>Caveat: ...</local-command-caveat>"}}
{"type":"user","message":{"content":"<command-name>/handgemacht:create-beads</command-name>\n<command-message>x</command-message>\n<command-args>epic</command-args>"}}
{"type":"user","isMeta":true,"message":{"content":[{"type":"text","text":"Create beads with a preview."}]}}
{"type":"user","message":{"content":"<local-command-stdout>done</local-command-stdout>"}}
{"type":"user","message":{"content":"<teammate-message teammate_id=\"alice\" color=\"blue\">tests pass</teammate-message>"}}
{"type":"user","message":{"content":"<task-notification>\n<task-id>b1</task-id></task-notification>"}}
{"type":"user","isCompactSummary":true,"message":{"content":"This session is being continued"}}
{"type":"user","isMeta":true,"message":{"content":"Stop hook feedback:\n[x]: failing"}}
{"type":"user","message":{"content":[{"type":"text","text":"[Request interrupted by user]"}]}}
{"type":"system","subtype":"local_command","content":"<command-name>/model</command-name>\n<command-message>model</command-message>\n<command-args></command-args>"}
"#;
    let (events, p) = parse_str(Claude, text);
    assert_eq!(
        types(&events),
        vec![
            "user/message",
            "assistant/message",
            "user/command",
            "system/skill",
            "system/context",
            "team/message",
            "system/notification",
            "system/summary",
            "system/hook",
            "system/error",
            "user/command",
        ]
    );
    let human: Vec<&str> = events
        .iter()
        .filter(|e| e.human)
        .map(|e| e.text.as_str())
        .collect();
    assert_eq!(
        human,
        vec!["fix it", "/handgemacht:create-beads epic", "/model"]
    );
    assert_eq!(
        events[3].facts,
        vec![Fact::SkillUse {
            name: "handgemacht:create-beads".into(),
            via: "slash_command".into()
        }]
    );
    assert_eq!(events[5].text, "tests pass");
    assert_eq!(
        events[5].facts,
        vec![Fact::TeammateMessage {
            teammate_id: "alice".into()
        }]
    );
    assert_eq!(p.stats().ignored, 1);
    assert_resumable(Claude, text);
}

#[test]
fn sidechains_subagent_files_and_links() {
    let main = r#"{"type":"user","sessionId":"m","message":{"content":"go"}}
{"type":"assistant","sessionId":"m","message":{"content":[{"type":"tool_use","id":"tk","name":"Task","input":{"description":"look","prompt":"find x","subagent_type":"general-purpose"}}]}}
{"type":"progress","data":{"type":"agent_progress","agentId":"abc1234"},"parentToolUseID":"tk"}
{"type":"user","isSidechain":true,"agentId":"abc1234","sessionId":"m","message":{"content":"find x"}}
{"type":"assistant","isSidechain":true,"sessionId":"m","message":{"content":[{"type":"text","text":"found"}]}}
{"type":"user","sessionId":"m","message":{"content":[{"type":"tool_result","tool_use_id":"tk","content":[{"type":"text","text":"found\nagentId: abc1234 (for resuming)"}]}]}}
"#;
    let (events, p) = parse_str(Claude, main);
    assert_eq!(
        types(&events),
        vec![
            "user/message",
            "assistant/tool_use",
            "agent/prompt",
            "assistant/message",
            "tool/result"
        ]
    );
    assert!(
        matches!(&events[1].facts[0], Fact::Spawn { subagent_type: Some(t), .. } if t == "general-purpose")
    );
    let link = Fact::AgentLink {
        tool_use_id: Some("tk".into()),
        agent_id: "abc1234".into(),
    };
    assert!(events[2].facts.contains(&link), "deferred progress link");
    assert!(events[4].facts.contains(&link), "text tail link");
    assert_eq!(events[2].sidechain_agent.as_deref(), Some("abc1234"));
    assert_eq!(events[3].sidechain_agent.as_deref(), Some("sidechain"));
    assert_eq!(events[4].sidechain_agent, None);
    assert_eq!(p.meta().agent_id, None);

    let child = r#"{"type":"user","isSidechain":true,"agentId":"abc1234","sessionId":"m","message":{"content":"find x"}}
{"type":"assistant","isSidechain":true,"agentId":"abc1234","sessionId":"m","message":{"content":[{"type":"text","text":"found"}]}}
"#;
    let (events, mut p) = parse_str(Claude, child);
    assert_eq!(types(&events), vec!["agent/prompt", "assistant/message"]);
    assert!(events
        .iter()
        .all(|e| !e.human && e.sidechain_agent.is_none()));
    p.apply_sidecar(br#"{"agentType":"Explore","description":"look","toolUseId":"tk"}"#);
    p.apply_sidecar(b"not json");
    let m = p.meta();
    assert_eq!(m.agent_id.as_deref(), Some("abc1234"));
    assert_eq!(m.parent_session_id.as_deref(), Some("m"));
    assert_eq!(m.session_id.as_deref(), Some("m"));
    assert_eq!(m.agent_preset.as_deref(), Some("Explore"));
    assert_eq!(m.spawn_tool_use_id.as_deref(), Some("tk"));
    assert_resumable(Claude, main);
}

#[test]
fn queued_prompts_are_indexed_once() {
    let text = r#"{"type":"user","message":{"content":"start"}}
{"type":"queue-operation","operation":"enqueue","content":"check again"}
{"type":"queue-operation","operation":"remove"}
{"type":"queue-operation","operation":"enqueue","content":"/mcp"}
{"type":"user","message":{"content":"<command-name>/mcp</command-name>\n<command-message>mcp</command-message>\n<command-args></command-args>"}}
{"type":"user","message":{"content":"check again"}}
{"type":"user","message":{"content":"check again"}}
"#;
    let (events, _) = parse_str(Claude, text);
    let texts: Vec<(&str, &str)> = events
        .iter()
        .map(|e| (e.event_type.as_str(), e.text.as_str()))
        .collect();
    assert_eq!(
        texts,
        vec![
            ("user/message", "start"),
            ("user/message", "check again"),
            ("user/command", "/mcp"),
            ("user/message", "check again"),
        ]
    );
}

#[test]
fn outcome_failure_when_the_person_says_it_fails() {
    let text = r#"{"type":"user","message":{"content":"the login does not work"}}
{"type":"assistant","message":{"content":[{"type":"text","text":"fixed"}]}}
{"type":"user","message":{"content":"still failing"}}
"#;
    let (_, p) = parse_str(Claude, text);
    assert_eq!(p.outcome(), Outcome::Failure);
}

use super::super::parser::Outcome;

#[test]
fn system_records_with_words_are_events_and_an_api_errors_codes_are_searchable() {
    let text = r#"{"type":"system","subtype":"api_error","level":"error","error":{"message":"Connection error.","cause":{"code":"ECONNRESET","errno":-104},"connection":{"code":"UND_ERR_SOCKET"}},"retryAttempt":3}
{"type":"system","subtype":"api_error","error":{"status":529,"error":{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}}}
{"type":"system","subtype":"compact_boundary","compactMetadata":{"trigger":"auto","preTokens":120000},"content":"Conversation compacted"}
{"type":"system","subtype":"informational","content":"Claude Code was updated to 2.2.0"}
{"type":"system","subtype":"turn_duration","durationMs":1200}
{"type":"system","subtype":"session_start","isMeta":true}
"#;
    let (events, _) = parse_str(Claude, text);
    assert_eq!(
        types(&events),
        vec![
            "system/error",
            "system/error",
            "system/notification",
            "system/notification"
        ]
    );
    assert!(events[0].text.contains("ECONNRESET"), "{}", events[0].text);
    assert!(
        events[0].text.contains("UND_ERR_SOCKET"),
        "{}",
        events[0].text
    );
    assert!(
        events[1].text.contains("overloaded_error"),
        "{}",
        events[1].text
    );
    assert!(events[2].text.contains("120000"), "{}", events[2].text);
    assert!(
        events[3].text.contains("updated to 2.2.0"),
        "{}",
        events[3].text
    );
}
