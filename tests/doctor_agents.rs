//! `knowledge doctor` lists every agent of the registry with its roots and counts (issue 18),
//! through the built binary on a home holding every agent's store at its default place
//! (`common::agent_home`): a bare `knowledge index` finds them all, and doctor, text and
//! `--json`, names each agent's root and how many stores and sessions it has. A FIFO named like
//! a transcript in a session root is counted as unreadable, never silently left out, and the
//! index names it without hanging.

mod common;

use std::path::PathBuf;
use std::process::Output;

use common::agent_home::AgentHome;
use knowledge::sources::episodes::agents::Agent;

fn run(h: &AgentHome, args: &[&str]) -> Output {
    h.command(args).output().expect("run knowledge")
}

fn doctor_json(h: &AgentHome) -> serde_json::Value {
    let out = run(h, &["doctor", "--json"]);
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "doctor printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Each agent's expected root in the home (its default place) and its stores and sessions in
/// the fixtures. Exhaustive, so a new agent in the registry must say what doctor shows for it.
fn expected(h: &AgentHome, agent: Agent) -> (PathBuf, u64, u64) {
    let home = &h.home;
    match agent {
        Agent::Claude => (home.join(".claude/projects"), 1, 1),
        Agent::Codex => (home.join(".codex/sessions"), 1, 1),
        // The JSONL session, its subagent's file and the legacy `.json`.
        Agent::Gemini => (home.join(".gemini/tmp"), 3, 3),
        Agent::Pi => (home.join(".pi/agent/sessions"), 1, 1),
        Agent::Qwen => (home.join(".qwen/projects"), 1, 1),
        Agent::Copilot => (home.join(".copilot/session-state"), 1, 1),
        // The history in the repository the command runs in: one store, one session per run.
        Agent::Aider => (h.repo().join(".aider.chat.history.md"), 1, 3),
        // One database, a session and its child.
        Agent::OpenCode => (home.join(".local/share/opencode/opencode.db"), 1, 2),
        // The IDE store (a composer and its subagent) and the agent transcripts (a chat and
        // its subagent); `~/.cursor/projects` is listed, the IDE store after it.
        Agent::Cursor => (home.join(".cursor/projects"), 3, 4),
        // The session's context and its subagent's.
        Agent::Kimi => (home.join(".kimi/sessions"), 2, 2),
        Agent::IFlow => (home.join(".iflow/projects"), 1, 1),
        // The main agent's wire and its sub-agent's.
        Agent::KimiCode => (home.join(".kimi-code/sessions"), 2, 2),
        // A session of the IDE and one of `cn`; the index `sessions.json` is no store.
        Agent::Continue => (home.join(".continue/sessions"), 2, 2),
        Agent::Amp => (home.join(".local/share/amp/threads"), 1, 1),
        // One conversation folder: its `base_state.json` is the store, its event files are not.
        Agent::OpenHands => (home.join(".openhands/conversations"), 1, 1),
        // One database: a session and a specialist (subagent) run.
        Agent::Goose => (home.join(".local/share/goose/sessions/sessions.db"), 1, 2),
        // The project `projects.json` lists: a session and its subagent (the title-generation
        // child is not read).
        Agent::Crush => (
            home.join(common::agent_home::CRUSH_PROJECT)
                .join(".crush/crush.db"),
            1,
            2,
        ),
        // A thread, its subagent and an agent-1 thread.
        Agent::Zed => (home.join(".local/share/zed/threads/threads.db"), 1, 3),
        // A task of the VS Code extension, an SDK session and its subagent's transcript.
        Agent::Cline => (
            home.join(".config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks"),
            3,
            3,
        ),
        // A task and the subtask it delegated, each a folder.
        Agent::RooCode => (
            home.join(".config/Code/User/globalStorage/rooveterinaryinc.roo-cline/tasks"),
            2,
            2,
        ),
        // The database (a session and its child) and a task of the legacy extension.
        Agent::KiloCode => (home.join(".local/share/kilo/kilo.db"), 2, 3),
    }
}

#[test]
fn doctor_lists_every_agents_root_and_counts_after_a_bare_index() {
    let h = AgentHome::new();
    let out = run(&h, &["index", "--quiet"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let d = doctor_json(&h);
    assert_eq!(d["healthy"], true, "{d}");
    let reports = d["agents"].as_array().expect("agents");
    assert_eq!(reports.len(), Agent::ALL.len());
    for agent in Agent::ALL {
        let r = reports
            .iter()
            .find(|r| r["agent"] == agent.as_str())
            .unwrap_or_else(|| panic!("{} missing: {reports:?}", agent.label()));
        let (root, stores, sessions) = expected(&h, agent);
        let roots: Vec<&str> = r["roots"]
            .as_array()
            .expect("roots")
            .iter()
            .filter_map(|v| v.as_str())
            .collect();
        assert!(
            roots.contains(&root.to_str().expect("utf-8")),
            "{}: {root:?} not in {roots:?}",
            agent.label()
        );
        assert_eq!(r["label"], agent.label());
        assert_eq!(r["stores"], stores, "{}: {r}", agent.label());
        assert_eq!(r["sessions"], sessions, "{}: {r}", agent.label());
    }
    let cursor = reports
        .iter()
        .find(|r| r["agent"] == "cursor")
        .expect("cursor");
    assert!(
        cursor["roots"]
            .to_string()
            .contains("globalStorage/state.vscdb"),
        "both of Cursor's stores are listed: {cursor}"
    );

    // The same in the text report, one line per agent.
    let out = run(&h, &["doctor"]);
    let text = String::from_utf8_lossy(&out.stdout);
    for agent in Agent::ALL {
        let (root, stores, sessions) = expected(&h, agent);
        let line = text
            .lines()
            .find(|l| {
                l.trim_start()
                    .starts_with(&format!("agent {}:", agent.label()))
            })
            .unwrap_or_else(|| panic!("no line for {}:\n{text}", agent.label()));
        assert!(
            line.contains(&format!("{stores} stores, {sessions} sessions"))
                && line.contains(root.to_str().expect("utf-8")),
            "{line}"
        );
    }
}

#[test]
fn a_fifo_named_like_a_transcript_is_counted_unreadable_not_ignored() {
    let h = AgentHome::new();
    let fifo = h.home.join(".claude/projects/-home-dev-shop/stuck.jsonl");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");

    // The index reads everything else, names the FIFO, and exits 1 instead of hanging on it.
    let out = run(&h, &["index", "--quiet"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("stuck.jsonl") && stderr.contains("not a regular file"),
        "{stderr}"
    );
    let d = doctor_json(&h);
    let claude = d["agents"]
        .as_array()
        .expect("agents")
        .iter()
        .find(|r| r["agent"] == "claude")
        .expect("claude")
        .clone();
    assert_eq!(claude["sessions"], 1, "the readable session is indexed");
    assert_eq!(d["unreadable_transcripts"]["count"], 1, "{d}");
    let example = d["unreadable_transcripts"]["examples"][0].to_string();
    assert!(
        example.contains("stuck.jsonl") && example.contains("not a regular file"),
        "{example}"
    );
    assert_eq!(d["healthy"], false);
    let problems = d["problems"].to_string();
    assert!(
        problems.contains("cannot be read") && problems.contains("move what is not a transcript"),
        "{problems}"
    );
}
