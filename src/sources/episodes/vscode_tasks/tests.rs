//! Unit tests of the parent module, kept apart so the module reads in one sitting.

use super::*;
use crate::sources::episodes::agent::read_whole;
use crate::sources::episodes::agents::recognise;
use crate::sources::episodes::model::{EventType, Fact};
use serde_json::json;

/// Writes a task folder `<root>/<ext>/tasks/<id>/` with its UI messages and sidecars.
fn task(root: &Path, ext: &str, id: &str, ui: &Value, sidecars: &[(&str, Value)]) -> PathBuf {
    let dir = root.join(ext).join("tasks").join(id);
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join(UI_MESSAGES), ui.to_string()).expect("ui");
    for (name, v) in sidecars {
        std::fs::write(dir.join(name), v.to_string()).expect("sidecar");
    }
    dir.join(UI_MESSAGES)
}

fn types(events: &[crate::sources::episodes::model::ParsedEvent]) -> Vec<&str> {
    events.iter().map(|e| e.event_type.as_str()).collect()
}

#[test]
fn each_extension_claims_its_own_task_folders_and_nothing_else() {
    let dir = tempfile::tempdir().expect("tmp");
    let ui = json!([{"ts": 1, "type": "say", "say": "task", "text": "x"}]);
    let cline = task(dir.path(), CLINE_EXT, "1785000000000", &ui, &[]);
    let roo = task(dir.path(), ROO_EXT, "0f1e", &ui, &[]);
    let kilo = task(dir.path(), KILO_EXT, "1a2b", &ui, &[]);
    let index = task(dir.path(), ROO_EXT, "_index", &ui, &[]);
    for (path, agent) in [
        (&cline, Agent::Cline),
        (&roo, Agent::RooCode),
        (&kilo, Agent::KiloCode),
    ] {
        let f = recognise(path).expect("recognised");
        assert_eq!((f.kind, f.layout), (agent, Layout::Main), "{path:?}");
    }
    assert!(
        recognise(&index).is_none(),
        "folders starting with _ are no tasks"
    );
    // A copy elsewhere: a history item beside it says Roo Code; without one, Cline's by content.
    let copy = task(
        &dir.path().join("copy"),
        "x",
        "t1",
        &ui,
        &[("history_item.json", json!({"id": "t1"}))],
    );
    assert_eq!(recognise(&copy).expect("copy").kind, Agent::RooCode);
    let bare = task(&dir.path().join("bare"), "x", "t2", &ui, &[]);
    assert_eq!(recognise(&bare).expect("bare").kind, Agent::Cline);
    let other = dir.path().join("y/tasks/t3/ui_messages.json");
    std::fs::create_dir_all(other.parent().expect("p")).expect("mkdir");
    std::fs::write(&other, "{\"not\": \"ui messages\"}").expect("w");
    assert!(recognise(&other).is_none());
}

#[test]
fn cline_task_reads_times_calls_results_errors_cwd_and_outcome() {
    let dir = tempfile::tempdir().expect("tmp");
    let id = "1785315600000";
    let ui = json!([
        {"ts": 1785315600000_i64, "type": "say", "say": "task", "text": "Fix the JPY rounding"},
        {"ts": 1785315600050_i64, "type": "say", "say": "api_req_started", "text": "{\"tokensIn\":1}"},
        {"ts": 1785315601000_i64, "type": "say", "say": "reasoning", "text": "no minor unit"},
        {"ts": 1785315602000_i64, "type": "ask", "ask": "command", "text": "pytest -qREQ_APP"},
        {"ts": 1785315603000_i64, "type": "say", "say": "command_output", "text": "1 failed"},
        {"ts": 1785315604000_i64, "type": "say", "say": "tool",
         "text": "{\"tool\":\"editedExistingFile\",\"path\":\"src/rates.py\",\"diff\":\"-a\\n+b\"}"},
        {"ts": 1785315605000_i64, "type": "say", "say": "diff_error", "text": "no match"},
        {"ts": 1785315606000_i64, "type": "say", "say": "error", "text": "API overloaded"},
        {"ts": 1785315607000_i64, "type": "ask", "ask": "followup",
         "text": "{\"question\":\"Which currencies?\",\"options\":[\"JPY\"]}"},
        {"ts": 1785315608000_i64, "type": "say", "say": "user_feedback", "text": "JPY and KRW"},
        {"ts": 1785315609000_i64, "type": "say", "say": "tool", "text": "{\"tool\":\"useSkill\",\"path\":\"money\"}"},
        {"ts": 1785315610000_i64, "type": "say", "say": "completion_result", "text": "Done.HAS_CHANGES"},
        {"ts": 1785315611000_i64, "type": "say", "say": "no_such_kind", "text": "?"},
        {"type": "say", "say": "text", "text": "no time"},
        {"ts": 1785315612000_i64, "type": "say", "say": "tool", "text": "not json"}
    ]);
    let path = task(
        dir.path(),
        CLINE_EXT,
        id,
        &ui,
        &[(
            "task_metadata.json",
            json!({"files_in_context": [],
            "model_usage": [{"ts": 1, "model_id": "claude-sonnet-4.5", "model_provider_id": "anthropic", "mode": "act"}]}),
        )],
    );
    let state = dir.path().join(CLINE_EXT).join("state");
    std::fs::create_dir_all(&state).expect("mkdir");
    std::fs::write(
        state.join("taskHistory.json"),
        json!([{"id": "other"}, 7, {"id": id, "ts": 1, "task": "Fix the JPY rounding",
            "cwdOnTaskInitialization": "/home/dev/invoices", "tokensIn": 1, "tokensOut": 1, "totalCost": 0}])
        .to_string(),
    )
    .expect("index");
    let file = recognise(&path).expect("recognised");
    let (sink, end) = read_whole(&file).expect("read");
    let s = &sink.sessions[0];
    assert_eq!(
        types(&s.events),
        [
            "user/message",
            "assistant/thinking",
            "assistant/tool_use",
            "tool/result",
            "assistant/tool_use",
            "tool/result",
            "system/error",
            "assistant/message",
            "user/message",
            "assistant/tool_use",
            "assistant/message",
        ]
    );
    let ev = &s.events;
    assert_eq!(ev[0].time.as_deref(), Some("2026-07-29T09:00:00.000Z"));
    assert_eq!(ev[2].text, "execute_command\npytest -q");
    assert_eq!(
        ev[2].facts,
        [Fact::Command {
            program: "pytest".into()
        }]
    );
    assert_eq!(
        (ev[3].tool_use_id.as_deref(), ev[3].is_error),
        (Some("1785315602000"), false)
    );
    assert_eq!(ev[4].tool_name.as_deref(), Some("editedExistingFile"));
    assert_eq!(
        ev[4].facts,
        [Fact::FileEdit {
            path: "src/rates.py".into()
        }]
    );
    assert!(ev[5].is_error && ev[5].tool_use_id.as_deref() == Some("1785315604000"));
    assert_eq!(ev[7].text, "Which currencies?");
    assert!(ev[8].human);
    assert!(matches!(&ev[9].facts[..], [Fact::SkillUse { name, .. }] if name == "money"));
    assert_eq!(ev[10].text, "Done.");
    assert_eq!(s.meta.session_id.as_deref(), Some(id));
    assert_eq!(s.meta.cwd.as_deref(), Some("/home/dev/invoices"));
    assert_eq!(s.meta.model.as_deref(), Some("claude-sonnet-4.5"));
    assert_eq!(s.meta.title.as_deref(), Some("Fix the JPY rounding"));
    assert_eq!(
        s.meta.created_at.as_deref(),
        Some("2026-07-29T09:00:00.000Z")
    );
    assert_eq!(
        s.meta.last_event_at.as_deref(),
        Some("2026-07-29T09:00:12.000Z")
    );
    assert_eq!(
        s.outcome,
        Some(crate::sources::episodes::outcome::Outcome::Success)
    );
    // The unknown kind, the message without a time and the tool that is not JSON are counted.
    assert_eq!(
        (
            end.lines.lines,
            end.lines.skipped_unknown,
            end.lines.skipped_broken
        ),
        (15, 1, 2)
    );
}

#[test]
fn roo_child_task_is_its_parents_subagent_and_its_task_is_the_parents_prompt() {
    let dir = tempfile::tempdir().expect("tmp");
    let ui = json!([
        {"ts": 1785488404000_i64, "type": "say", "say": "task", "text": "Implement retry"},
        {"ts": 1785488405000_i64, "type": "ask", "ask": "command", "text": "pytest"},
        {"ts": 1785488406000_i64, "type": "say", "say": "error", "text": "No module named backoff"},
        {"ts": 1785488407000_i64, "type": "say", "say": "condense_context",
         "contextCondense": {"cost": 0.1, "prevContextTokens": 9, "newContextTokens": 1, "summary": "Retry so far"}}
    ]);
    let item = json!({"id": "c1", "parentTaskId": "p1", "rootTaskId": "p1", "number": 2, "ts": 1,
        "task": "Implement retry", "tokensIn": 1, "tokensOut": 1, "totalCost": 0,
        "workspace": "/home/dev/webhooks", "mode": "code"});
    let path = task(
        dir.path(),
        ROO_EXT,
        "c1",
        &ui,
        &[("history_item.json", item)],
    );
    let (sink, _) = read_whole(&recognise(&path).expect("recognised")).expect("read");
    let s = &sink.sessions[0];
    assert_eq!(
        types(&s.events),
        [
            "agent/prompt",
            "assistant/tool_use",
            "tool/result",
            "system/summary"
        ]
    );
    assert!(!s.events[0].human);
    assert!(
        s.events[2].is_error,
        "an error right after a call is its failure"
    );
    let m = &s.meta;
    assert_eq!(m.parent_session_id.as_deref(), Some("p1"));
    assert_eq!(m.agent_id.as_deref(), Some("c1"));
    assert_eq!(m.agent_name.as_deref(), Some("code"));
    assert_eq!(m.agent_description.as_deref(), Some("Implement retry"));
    assert_eq!(m.cwd.as_deref(), Some("/home/dev/webhooks"));
    assert_eq!(
        s.outcome,
        Some(crate::sources::episodes::outcome::Outcome::Failure)
    );
}

#[test]
fn the_cwd_falls_back_to_the_environment_details_and_a_torn_file_is_one_broken_record() {
    let dir = tempfile::tempdir().expect("tmp");
    let api = json!([{"role": "user", "content": [{"type": "text",
        "text": "<environment_details>\n# Current Workspace Directory (/home/dev/import er) Files\nsrc/\n</environment_details>"}]}]);
    let path = task(
        dir.path(),
        KILO_EXT,
        "k1",
        &json!([{"ts": 1, "type": "say", "say": "task", "text": "BOM"}]),
        &[(API_HISTORY, api)],
    );
    let (sink, _) = read_whole(&recognise(&path).expect("recognised")).expect("read");
    assert_eq!(
        sink.sessions[0].meta.cwd.as_deref(),
        Some("/home/dev/import er")
    );
    assert_eq!(
        env_details_in("x # Current Working Directory (C:\\\\Users\\\\me) Files y").as_deref(),
        Some("C:\\Users\\me")
    );
    std::fs::write(&path, "[{\"ts\": 1, \"type\": \"say\", \"say\": \"ta").expect("torn");
    let (sink, end) = read_whole(&recognise(&path).expect("recognised")).expect("read");
    assert!(sink.sessions[0].events.is_empty());
    assert_eq!((end.lines.lines, end.lines.skipped_broken), (1, 1));
}

#[test]
fn task_folder_changes_map_to_their_ui_messages() {
    let t = Path::new("/g").join(ROO_EXT).join("tasks/abc");
    for name in [UI_MESSAGES, HISTORY_ITEM, API_HISTORY, TASK_METADATA] {
        assert_eq!(task_of_change(&t.join(name)), Some(t.join(UI_MESSAGES)));
    }
    assert_eq!(task_of_change(&t.join("checkpoints.json")), None);
    assert_eq!(
        task_of_change(Path::new("/g/tasks/_index/ui_messages.json")),
        None
    );
    let s = Path::new("/h/.cline/data/sessions/1_a");
    assert_eq!(
        ClineReader.store_of_change(&s.join("1_a.json")),
        Some(s.join("1_a.messages.json"))
    );
    assert_eq!(
        ClineReader.store_of_change(&s.join("sub.messages.json")),
        Some(s.join("sub.messages.json"))
    );
}

#[test]
fn roots_cover_every_vs_code_build_and_the_clis() {
    let env = Env::of(&[("HOME", Path::new("/h"))]);
    let roots = ClineReader.roots(&env);
    for want in [
        "/h/.config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks",
        "/h/.config/Code - Insiders/User/globalStorage/saoudrizwan.claude-dev/tasks",
        "/h/.config/VSCodium/User/globalStorage/saoudrizwan.claude-dev/tasks",
        "/h/.vscode-server/data/User/globalStorage/saoudrizwan.claude-dev/tasks",
        "/h/.cursor-server/data/User/globalStorage/saoudrizwan.claude-dev/tasks",
        "/h/.cline/data/tasks",
        "/h/.cline/data/sessions",
    ] {
        assert!(roots.contains(&PathBuf::from(want)), "{want}: {roots:?}");
    }
    let env = Env::of(&[("HOME", Path::new("/h")), ("CLINE_DIR", Path::new("/c"))]);
    assert!(ClineReader
        .roots(&env)
        .contains(&PathBuf::from("/c/data/tasks")));
    let env = Env::of(&[
        ("HOME", Path::new("/h")),
        ("CLINE_DATA_DIR", Path::new("/d")),
        ("CLINE_SESSION_DATA_DIR", Path::new("/s")),
        ("XDG_CONFIG_HOME", Path::new("/cfg")),
    ]);
    let roots = ClineReader.roots(&env);
    assert!(roots.contains(&PathBuf::from("/d/tasks")));
    assert!(roots.contains(&PathBuf::from("/s")));
    assert!(roots.contains(&PathBuf::from(
        "/cfg/Code/User/globalStorage/saoudrizwan.claude-dev/tasks"
    )));
    let roo = RooReader.roots(&Env::of(&[("HOME", Path::new("/h"))]));
    assert!(roo.contains(&PathBuf::from("/h/.vscode-mock/global-storage/tasks")));
    assert_eq!(
        ClineReader.resume_command("1785_ab").as_deref(),
        Some("cline --id 1785_ab")
    );
    assert_eq!(
        RooReader.resume_command("c1").as_deref(),
        Some("roo --session-id c1")
    );
}

#[test]
fn sdk_session_reads_manifest_tools_results_and_its_subagent() {
    let dir = tempfile::tempdir().expect("tmp");
    let s = dir.path().join(".cline/data/sessions/17_abcde");
    std::fs::create_dir_all(&s).expect("mkdir");
    std::fs::write(
        s.join("17_abcde.json"),
        json!({"version": 1, "session_id": "17_abcde", "started_at": "2026-07-30T09:00:00.000Z",
            "ended_at": "2026-07-30T09:05:00.000Z", "status": "failed", "cwd": "/home/dev/ledger",
            "model": "m", "source": "cli", "metadata": {"title": "Ledger", "mode": "act"}})
        .to_string(),
    )
    .expect("manifest");
    std::fs::write(
        s.join("17_abcde.messages.json"),
        json!({"version": 1, "agent": "lead", "sessionId": "17_abcde", "messages": [
            {"id": "1", "role": "user", "ts": 1785402000000_i64, "content": [
                {"type": "text", "text": "<user_input mode=\"act\">fix it</user_input>"},
                {"type": "file", "path": "/x", "content": "whole file"}]},
            {"id": "2", "role": "assistant", "ts": 1785402001000_i64, "content": [
                {"type": "tool_use", "id": "t1", "name": "run_commands", "input": {"commands": ["cargo test"]}},
                {"type": "tool_use", "id": "t2", "name": "spawn_agent", "input": {"task": "audit sums"}}]},
            {"id": "3", "role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": [{"query": "cargo test", "result": "", "error": "exit 101", "success": false}]},
                {"type": "tool_result", "tool_use_id": "t2", "content": "{\"result\":{\"text\":\"ok\",\"subAgentId\":\"a1\"}}"}]},
            {"id": "4", "role": "user", "content": [{"type": "text", "text": "Context summary:\n\nwhere we are"}]},
            {"id": "5"}
        ]})
        .to_string(),
    )
    .expect("messages");
    std::fs::write(
        s.join("a1.messages.json"),
        json!({"version": 1, "agent": "subagent", "sessionId": "17_abcde__a1",
            "origin": {"parentThreadId": "17_abcde", "subagent": "a1"}, "messages": [
            {"id": "1", "role": "user", "ts": 1785402002000_i64, "content": [{"type": "text", "text": "audit sums"}]},
            {"id": "2", "role": "assistant", "ts": 1785402003000_i64, "content": [{"type": "text", "text": "two"}]}]})
        .to_string(),
    )
    .expect("sub");
    let main = recognise(&s.join("17_abcde.messages.json")).expect("main");
    assert_eq!((main.kind, &main.layout), (Agent::Cline, &Layout::Main));
    assert!(
        recognise(&s.join("17_abcde.json")).is_none(),
        "the manifest is no store"
    );
    let (sink, end) = read_whole(&main).expect("read");
    let m = &sink.sessions[0];
    assert_eq!(
        types(&m.events),
        [
            "user/message",
            "assistant/tool_use",
            "assistant/tool_use",
            "tool/result",
            "tool/result",
            "system/summary"
        ]
    );
    assert_eq!(m.events[0].text, "fix it");
    assert!(m.events[3].is_error && m.events[3].text == "exit 101");
    assert_eq!(m.events[3].tool_name.as_deref(), Some("run_commands"));
    assert!(m.events[4].facts.contains(&Fact::AgentLink {
        tool_use_id: Some("t2".into()),
        agent_id: "a1".into()
    }));
    assert!(
        matches!(&m.events[2].facts[..], [Fact::Spawn { description: Some(d), .. }] if d == "audit sums")
    );
    assert_eq!(m.meta.session_id.as_deref(), Some("17_abcde"));
    assert_eq!(m.meta.cwd.as_deref(), Some("/home/dev/ledger"));
    assert_eq!(m.meta.title.as_deref(), Some("Ledger"));
    assert_eq!(
        m.meta.created_at.as_deref(),
        Some("2026-07-30T09:00:00.000Z")
    );
    assert_eq!(
        m.meta.last_event_at.as_deref(),
        Some("2026-07-30T09:05:00.000Z")
    );
    assert_eq!(
        m.outcome,
        Some(crate::sources::episodes::outcome::Outcome::Failure)
    );
    assert_eq!(end.lines.skipped_broken, 1, "the message with no role");

    let sub = recognise(&s.join("a1.messages.json")).expect("sub");
    assert_eq!(
        sub.layout,
        Layout::Subagent {
            parent_session_hint: Some("17_abcde".into()),
            agent_id_hint: Some("a1".into()),
            sidecar: None
        }
    );
    let (sink, _) = read_whole(&sub).expect("read");
    let c = &sink.sessions[0];
    assert_eq!(c.events[0].event_type, EventType::AgentPrompt);
    assert_eq!(c.meta.parent_session_id.as_deref(), Some("17_abcde"));
    assert_eq!(c.meta.agent_description.as_deref(), Some("audit sums"));
}

#[test]
fn cline_subagents_are_a_spawning_call_and_their_results_once_done() {
    let dir = tempfile::tempdir().expect("tmp");
    let running = json!({"status": "running", "items": [{"prompt": "a", "status": "running"}]});
    let done = json!({"status": "failed", "items": [
        {"prompt": "a", "status": "completed", "result": "found 3"},
        {"prompt": "b", "status": "failed", "error": "timed out"}]});
    let ui = json!([
        {"ts": 1, "type": "say", "say": "task", "text": "audit"},
        {"ts": 2, "type": "ask", "ask": "use_subagents", "text": "{\"prompts\":[\"a\",\"b\"]}"},
        {"ts": 3, "type": "say", "say": "subagent", "text": running.to_string(), "partial": true},
        {"ts": 4, "type": "say", "say": "subagent", "text": done.to_string()},
        {"ts": 5, "type": "say", "say": "subagent_usage", "text": "{}"}
    ]);
    let path = task(dir.path(), CLINE_EXT, "9", &ui, &[]);
    let (sink, end) = read_whole(&recognise(&path).expect("recognised")).expect("read");
    let ev = &sink.sessions[0].events;
    assert_eq!(
        types(ev),
        ["user/message", "assistant/tool_use", "tool/result"]
    );
    assert_eq!(ev[1].facts.len(), 2);
    assert!(matches!(&ev[1].facts[1], Fact::Spawn { description: Some(d), .. } if d == "b"));
    assert_eq!(ev[2].text, "found 3\n\ntimed out");
    assert!(ev[2].is_error);
    assert_eq!(ev[2].tool_use_id.as_deref(), Some("2"));
    assert_eq!(end.lines.skipped(), 0);
}
