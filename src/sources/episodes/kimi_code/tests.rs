use super::*;
use crate::sources::episodes::parser::test_support::{assert_resumable, parse_str};

#[test]
fn loop_events_become_events_with_their_times_errors_and_agent_links() {
    let text = [
        r#"{"type":"metadata","protocol_version":"1.4","created_at":1785612803281}"#,
        r#"{"type":"config.update","modelAlias":"moonshot-ai/kimi-k2.7-code","time":1785612803282}"#,
        r#"{"type":"turn.prompt","input":[{"type":"text","text":"count the swift files"}],"origin":{"kind":"user"},"time":1785612812819}"#,
        r#"{"type":"context.append_message","message":{"role":"user","content":[{"type":"text","text":"count the swift files"}],"toolCalls":[],"origin":{"kind":"user"}},"time":1785612812820}"#,
        r#"{"type":"context.append_message","message":{"role":"user","content":[{"type":"text","text":"<system-reminder>plan mode</system-reminder>"}],"toolCalls":[],"origin":{"kind":"injection"}},"time":1785612812821}"#,
        r#"{"type":"context.append_loop_event","event":{"type":"content.part","uuid":"u1","turnId":"0","step":1,"stepUuid":"s1","part":{"type":"think","think":"delegate it"}},"time":1785612813000}"#,
        r#"{"type":"context.append_loop_event","event":{"type":"tool.call","uuid":"Agent_3","turnId":"0","step":1,"stepUuid":"s1","toolCallId":"Agent_3","name":"Agent","args":{"description":"Count Swift files","subagent_type":"explore","prompt":"Count them"}},"time":1785612814000}"#,
        r#"{"type":"context.append_loop_event","event":{"type":"tool.result","parentUuid":"Agent_3","toolCallId":"Agent_3","result":{"output":"agent_id: agent-0\nactual_subagent_type: explore\nstatus: completed"}},"time":1785612815000}"#,
        r#"{"type":"context.append_loop_event","event":{"type":"tool.call","uuid":"Bash_4","turnId":"0","step":2,"stepUuid":"s2","toolCallId":"Bash_4","name":"Bash","args":{"command":"cat /nope"}},"time":1785612816000}"#,
        r#"{"type":"context.append_loop_event","event":{"type":"tool.result","parentUuid":"Bash_4","toolCallId":"Bash_4","result":{"output":"cat: /nope: No such file or directory","isError":true}},"time":1785612817000}"#,
        r#"{"type":"usage.record","model":"m","usage":{},"time":1785612817001}"#,
        r#"{"type":"brand.new_thing","time":1785612817002}"#,
        r#"{"time":1785612817003}"#,
    ]
    .join("\n");
    let (events, parser) = parse_str(Agent::KimiCode, &text);
    let types: Vec<&str> = events.iter().map(|e| e.event_type.as_str()).collect();
    assert_eq!(
        types,
        vec![
            "user/message",
            "system/context",
            "assistant/thinking",
            "assistant/tool_use",
            "tool/result",
            "assistant/tool_use",
            "tool/result"
        ]
    );
    assert_eq!(events[0].time.as_deref(), Some("2026-08-01T19:33:32.820Z"));
    assert!(events[3].facts.iter().any(|f| matches!(f,
        Fact::Spawn { description: Some(d), subagent_type: Some(t), .. }
            if d == "Count Swift files" && t == "explore")));
    assert!(events[4].facts.contains(&Fact::AgentLink {
        tool_use_id: Some("Agent_3".into()),
        agent_id: "0".into()
    }));
    assert!(!events[4].is_error && events[6].is_error);
    assert_eq!(events[6].tool_name.as_deref(), Some("Bash"));
    assert_eq!(
        parser.meta().model.as_deref(),
        Some("moonshot-ai/kimi-k2.7-code")
    );
    assert_eq!(parser.stats().skipped_unknown, 1);
    assert_eq!(parser.stats().skipped_broken, 1);
    assert_resumable(Agent::KimiCode, &text);
}

#[test]
fn a_subagents_task_is_its_prompt_without_the_git_context() {
    let text = r#"{"type":"context.append_message","message":{"role":"user","content":[{"type":"text","text":"<git-context>\nBranch: main\n</git-context>\n\nCount the Swift files."}],"origin":{"kind":"system_trigger","name":"subagent"}},"time":1785615359960}"#;
    let (events, parser) = parse_str(Agent::KimiCode, text);
    assert_eq!(events.len(), 1);
    assert_eq!(
        parser.meta().agent_description.as_deref(),
        Some("Count the Swift files.")
    );
}

#[test]
fn only_agent_wires_are_claimed_and_named_by_their_folders() {
    let tmp = tempfile::tempdir().expect("tmp");
    let session = tmp
        .path()
        .join("sessions/wd_p_ac3bb318f98e/session_9eb1bf57-c1af-48a5-b658-0e8d9fe794f5");
    let main = session.join("agents/main/wire.jsonl");
    let child = session.join("agents/agent-2/wire.jsonl");
    // Kimi CLI's own wire file (`{timestamp, message}`), beside its context: not Kimi Code's.
    let cli = tmp.path().join("sessions/00d5/9e1f/wire.jsonl");
    for p in [&main, &child, &cli] {
        std::fs::create_dir_all(p.parent().expect("dir")).expect("mkdir");
        std::fs::write(
            p,
            "{\"type\":\"metadata\",\"protocol_version\":\"1.4\",\"created_at\":1}\n\
             {\"type\":\"config.update\",\"time\":1}\n",
        )
        .expect("write");
    }
    let claim = |p: &Path| {
        let mut head = Head::new(p);
        Reader.recognise(p, &mut head).map(|r| r.layout)
    };
    assert_eq!(claim(&main), Some(Layout::Main));
    assert_eq!(
        claim(&child),
        Some(Layout::Subagent {
            parent_session_hint: Some("session_9eb1bf57-c1af-48a5-b658-0e8d9fe794f5".into()),
            agent_id_hint: Some("2".into()),
            sidecar: None
        })
    );
    assert_eq!(claim(&cli), None);
    let file = TranscriptFile {
        path: main,
        kind: Agent::KimiCode,
        layout: Layout::Main,
    };
    assert_eq!(
        Reader
            .file_session_id(&file, &SessionMeta::default())
            .as_deref(),
        Some("session_9eb1bf57-c1af-48a5-b658-0e8d9fe794f5")
    );
}
