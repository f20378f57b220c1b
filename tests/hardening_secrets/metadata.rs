//! Secrets planted in session metadata (issue 36, item 6): the working directory, the git
//! branch, the agent's version, preset, name, role and team, the tool names and a spawned
//! subagent's type and name of a Claude Code and a Codex session (and a Codex subagent, whose
//! actor is named from its metadata). None comes back in clear from a search (the actors
//! included), `get-episode`, the CLI's text answer, any file of the data dir or any table of the
//! team index; nor from a store an older build wrote with the metadata in clear (redacted again
//! where a stored row is read and pushed).

use super::*;

/// (where it is planted, the value; its canary is the word of it that starts with `Meta` or
/// `AKIA`).
const PLANTED: &[(&str, &str)] = &[
    (
        "claude cwd",
        "/srv/ci/https://deploy:MetaCwdUrlPw7q@git.example.com/app",
    ),
    ("claude gitBranch", "feature/token=MetaBranchTok8r"),
    ("claude version", "2.0.14 api_key=MetaVersionKey9s"),
    ("claude teamName", "ops AKIAMETATEAMKEY00001"),
    ("claude agentName", "db-fixer password=MetaAgentPw5t"),
    ("claude spawn type", "scout token MetaSpawnTok3q"),
    ("claude spawn name", "helper-key-MetaSpawnKey4r"),
    (
        "claude tool name",
        "mcp__vault__login password=MetaToolPw5k",
    ),
    (
        "codex cwd",
        "https://ci:MetaCodexCwdPw4v@git.example.com/repo",
    ),
    ("codex originator", "codex_cli_rs secret=MetaPresetSec3w"),
    ("codex cli_version", "0.50.0 password=MetaCliVerPw2x"),
    // A name gives a value after a secret word without a verb (issue 36, fourth pass).
    ("codex git branch", "fix/password-MetaCodexBranch1y"),
    ("codex tool name", "shell_token=MetaCodexToolTok6z"),
    ("codex agent_nickname", "scout token MetaNickTok0u"),
    ("codex agent_role", "reviewer token=MetaRoleTok1p"),
];

fn planted(place: &str) -> &'static str {
    PLANTED
        .iter()
        .find(|(p, _)| *p == place)
        .map(|(_, v)| *v)
        .unwrap_or_else(|| panic!("nothing planted at {place}"))
}

/// The secret part of each planted value: what must not come back.
fn canaries() -> Vec<&'static str> {
    PLANTED
        .iter()
        .map(|(_, v)| {
            v.split(|c: char| !c.is_alphanumeric())
                .find(|w| w.starts_with("Meta") || w.starts_with("AKIA"))
                .unwrap_or(v)
        })
        .collect()
}

const SID: &str = "7a8b9c0d-1111-4222-8333-944455556666";
const CID: &str = "01a1e941-9218-794f-90a0-edae60faa5b7";
const SUB: &str = "01a1e941-9218-794f-90a0-edae60faa5c8";

/// A Claude Code session, a Codex session and a Codex subagent of it, indexed, with the
/// metadata of [`PLANTED`].
fn world() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("tmp");
    let root = tmp.path().join("world");
    let ts = "2026-11-01T10:00:00.000Z";
    let head = json!({"sessionId": SID, "cwd": planted("claude cwd"),
        "gitBranch": planted("claude gitBranch"), "version": planted("claude version"),
        "teamName": planted("claude teamName"), "timestamp": ts});
    let with = |extra: Value| {
        let mut v = head.clone();
        for (k, x) in extra.as_object().expect("object") {
            v[k] = x.clone();
        }
        v
    };
    let claude = [
        with(json!({"type":"user","uuid":"m1","parentUuid":null,
            "message":{"role":"user","content":"fix the metadata access for the vault"}})),
        with(json!({"type":"assistant","uuid":"m2","parentUuid":"m1",
            "message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_m1",
                "name":planted("claude tool name"),"input":{"path":"vault/db"}}]}})),
        with(json!({"type":"user","uuid":"m3","parentUuid":"m2",
            "message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_m1",
                "content":"the metadata access for the vault works"}]}})),
        with(json!({"type":"assistant","uuid":"m4","parentUuid":"m3",
            "message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_m2",
                "name":"Task","input":{"subagent_type":planted("claude spawn type"),
                "name":planted("claude spawn name"),"description":"check the vault",
                "prompt":"check the metadata access for the vault"}}]}})),
        json!({"type":"agent-name","sessionId":SID,"agentName":planted("claude agentName")}),
    ];
    write(
        &root.join(format!("claude/projects/-w-meta/{SID}.jsonl")),
        &jsonl(&claude),
    );
    let meta = |id: &str, sub: Option<Value>| {
        let mut p = json!({"id": id, "timestamp": ts, "cwd": planted("codex cwd"),
            "originator": planted("codex originator"),
            "cli_version": planted("codex cli_version"),
            "git": {"branch": planted("codex git branch")}});
        if let Some(s) = sub {
            p["source"] = s;
        }
        json!({"timestamp": ts, "type": "session_meta", "payload": p})
    };
    let turn = |what: &str| {
        [
            json!({"timestamp":ts,"type":"event_msg","payload":{"type":"user_message",
                "message":format!("{what} the metadata access for the vault")}}),
            json!({"timestamp":ts,"type":"response_item","payload":{"type":"function_call",
                "name":planted("codex tool name"),"arguments":"{\"cmd\":\"ls vault\"}",
                "call_id":"c1"}}),
            json!({"timestamp":ts,"type":"response_item","payload":{
                "type":"function_call_output","call_id":"c1","output":"vault listed"}}),
        ]
    };
    let mut codex = vec![meta(CID, None)];
    codex.extend(turn("check"));
    let spawn = json!({"subagent": {"thread_spawn": {"parent_thread_id": CID,
        "agent_nickname": planted("codex agent_nickname"),
        "agent_role": planted("codex agent_role")}}});
    let mut sub = vec![meta(SUB, Some(spawn))];
    sub.extend(turn("review"));
    let day = root.join("codex/sessions/2026/11/01");
    write(
        &day.join(format!("rollout-2026-11-01T10-00-00-{CID}.jsonl")),
        &jsonl(&codex),
    );
    write(
        &day.join(format!("rollout-2026-11-01T10-05-00-{SUB}.jsonl")),
        &jsonl(&sub),
    );
    let data = tmp.path().join("data");
    let plan = IndexPlan {
        sessions: vec![root.join("claude"), root.join("codex")],
        ..Default::default()
    };
    index_all(&data, &plan, &mut |_| {}).expect("index the world");
    (tmp, data)
}

/// Search, read every event, ask the CLI for its text answer: none holds a canary.
fn assert_answers_clean(data: &Path, what: &str) {
    let canaries = canaries();
    let engine = Engine::open(EngineConfig::new(data));
    let mut sessions = Vec::new();
    for q in [
        "metadata access for the vault",
        "vault",
        "who fixed the vault access",
    ] {
        let resp = engine.search(&SearchRequest::new(q.to_string()));
        let mut out = serde_json::to_value(&resp).expect("json");
        out["query"] = Value::Null;
        let bytes = serde_json::to_vec(&out).expect("json");
        assert_none_of(&format!("{what}: search {q:?}"), &bytes, &canaries);
        sessions.extend(
            resp.lanes
                .episodes
                .items
                .iter()
                .map(|i| i.session_id.clone()),
        );
        let text = common::cli::bin()
            .arg("--data-dir")
            .arg(data)
            .args(["search", "-q", q, "--pretty"])
            .output()
            .expect("run knowledge search");
        assert_none_of(
            &format!("{what}: search --pretty {q:?}"),
            &text.stdout,
            &canaries,
        );
    }
    // The activity view (the explorer's, `stats --chart`): who worked where.
    for json in [false, true] {
        let mut cmd = common::cli::bin();
        cmd.arg("--data-dir").arg(data).args([
            "stats",
            "--chart",
            "--since",
            "2026-10-01T00:00:00Z",
        ]);
        if json {
            cmd.arg("--json");
        }
        let out = cmd.output().expect("run knowledge stats --chart");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("sessions"),
            "{out:?}"
        );
        assert_none_of(&format!("{what}: stats --chart"), &out.stdout, &canaries);
    }
    sessions.sort();
    sessions.dedup();
    assert!(sessions.len() >= 3, "every session is found: {sessions:?}");
    let mcp = mcp_answers(data, &sessions);
    assert!(
        mcp.contains("\"id\":3") && mcp.contains("\"id\":10") && mcp.contains("vault"),
        "the MCP server answered the search and get-episode: {mcp}"
    );
    assert_none_of(&format!("{what}: MCP"), mcp.as_bytes(), &canaries);
    for s in &sessions {
        for seq in 0..6 {
            if let Ok(ep) = engine.get_episode(s, seq, 6) {
                let out = serde_json::to_vec(&ep).expect("json");
                assert_none_of(&format!("{what}: get-episode {s} {seq}"), &out, &canaries);
            }
        }
    }
}

/// What `knowledge mcp` answers to a search and to `get-episode` on each session's first
/// events (its text, inside and outside the untrusted block, and its JSON).
fn mcp_answers(data: &Path, sessions: &[String]) -> String {
    use std::io::{Read, Write};
    let mut child = common::cli::raw_mcp_server(data);
    let search = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "knowledge_search", "arguments": {"schema": "knowledge.search/v1",
        "query": "metadata access for the vault"}}});
    let mut lines: Vec<String> = common::cli::mcp_handshake(1)
        .iter()
        .chain([&search])
        .map(|m| m.to_string())
        .collect();
    for (i, s) in sessions.iter().enumerate() {
        for seq in 0..3 {
            lines.push(
                json!({"jsonrpc": "2.0", "id": 10 + i * 3 + seq, "method": "tools/call",
                    "params": {"name": "knowledge_get_episode",
                    "arguments": {"id": format!("ep:{s}:{seq}"), "context": 3}}})
                .to_string(),
            );
        }
    }
    {
        let mut stdin = child.stdin.take().expect("stdin");
        for l in &lines {
            writeln!(stdin, "{l}").expect("write a request");
        }
        stdin.flush().expect("flush");
        // The answers are read once the server has had time to give them.
        std::thread::sleep(std::time::Duration::from_secs(3));
    }
    let mut out = String::new();
    let _ = child
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut out);
    let _ = child.wait();
    out
}

#[test]
fn secrets_in_session_metadata_reach_no_answer_store_or_team_table() {
    let (_tmp, data) = world();
    assert_answers_clean(&data, "fresh index");
    for f in files_under(&data) {
        let bytes = std::fs::read(&f).expect("read a data dir file");
        assert_none_of(&f.display().to_string(), &bytes, &canaries());
    }
    if let Some(team) = pushed_team_tables(&data, "metasecrets") {
        assert_none_of("the team tables", team.as_bytes(), &canaries());
    }
}

/// A store an older build wrote holds the metadata in clear: what is read from it and pushed
/// from it is redacted again.
#[test]
fn metadata_an_older_store_holds_in_clear_is_redacted_on_the_way_out() {
    let (_tmp, data) = world();
    let conn = rusqlite::Connection::open(data.join("episodes.sqlite")).expect("open the store");
    let set = |sql: &str, value: &str| {
        conn.execute(sql, [value]).expect(sql);
    };
    set(
        "UPDATE sessions SET cwd = ?1 WHERE source = 'claude'",
        planted("claude cwd"),
    );
    set(
        "UPDATE sessions SET agent_name = ?1 WHERE source = 'claude'",
        planted("claude agentName"),
    );
    set(
        "UPDATE sessions SET team_name = ?1 WHERE source = 'claude'",
        planted("claude teamName"),
    );
    set(
        "UPDATE sessions SET agent_preset = ?1 WHERE source = 'codex'",
        planted("codex originator"),
    );
    set(
        "UPDATE sessions SET agent_name = ?1 WHERE source = 'codex' AND agent_name IS NOT NULL",
        planted("codex agent_nickname"),
    );
    set(
        "UPDATE sessions SET agent_description = ?1 WHERE source = 'codex'
         AND agent_name IS NOT NULL",
        planted("codex agent_role"),
    );
    set(
        "UPDATE event_rows SET tool_name = ?1 WHERE tool_name LIKE 'mcp__vault__login%'",
        planted("claude tool name"),
    );
    drop(conn);
    assert_answers_clean(&data, "older store");
    if let Some(team) = pushed_team_tables(&data, "metaolder") {
        assert_none_of("the team tables", team.as_bytes(), &canaries());
    }
}
