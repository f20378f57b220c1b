//! Every agent's reader end to end, through the registry: discovery finds its default layout,
//! the indexer stores its sessions (ids, working directory, subagents, outcomes, redaction), a
//! growing file is read on from where it stopped, and its real samples in `../shared/realdata`
//! (skipped with a note where absent) read without loss. Each agent has its own synthetic
//! fixture under `fixtures/agents/<agent>/`, in the agent's exact on-disk format.

mod common;

use common::agent_home::copy_tree;

use std::path::{Path, PathBuf};

use knowledge::sources::episodes::agent::{read_whole, CollectSink, Env};
use knowledge::sources::episodes::agents::{self, Agent};
use knowledge::sources::episodes::discover::{discover, Layout, TranscriptFile};
use knowledge::sources::episodes::index::{index_episodes, IndexOptions, IndexSummary};
use knowledge::sources::episodes::model::{Fact, ParsedEvent};

fn fixture(agent: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/agents")
        .join(agent)
}

fn index(db: &Path, roots: Vec<PathBuf>) -> IndexSummary {
    index_episodes(db, &IndexOptions::new(roots), &mut |_| {}).expect("index")
}

struct Session {
    source: String,
    cwd: Option<String>,
    title: Option<String>,
    parent: Option<String>,
    outcome: String,
    events: i64,
}

fn session(db: &Path, id: &str) -> Session {
    let c = knowledge::sources::sqlite::open_ro(db).expect("open");
    c.query_row(
        "SELECT source, cwd, title, parent_session_id, outcome, events FROM sessions
         WHERE session_id=?1",
        [id],
        |r| {
            Ok(Session {
                source: r.get(0)?,
                cwd: r.get(1)?,
                title: r.get(2)?,
                parent: r.get(3)?,
                outcome: r.get(4)?,
                events: r.get(5)?,
            })
        },
    )
    .unwrap_or_else(|e| panic!("session {id}: {e}"))
}

fn count(db: &Path, sql: &str) -> i64 {
    let c = knowledge::sources::sqlite::open_ro(db).expect("open");
    c.query_row(sql, [], |r| r.get(0)).expect("count")
}

fn all_text(db: &Path) -> String {
    let c = knowledge::sources::sqlite::open_ro(db).expect("open");
    let mut stmt = c.prepare("SELECT text FROM events ORDER BY id").expect("q");
    let rows = stmt.query_map([], |r| r.get::<_, String>(0)).expect("rows");
    rows.flatten().collect::<Vec<_>>().join("\n")
}

fn one(path: PathBuf, agent: Agent) -> (CollectSink, Vec<ParsedEvent>) {
    let file = agents::recognise(&path).unwrap_or(TranscriptFile {
        path: path.clone(),
        kind: agent,
        layout: Layout::Main,
    });
    assert_eq!(
        file.kind,
        agent,
        "{} recognised as {:?}",
        path.display(),
        file.kind
    );
    let (sink, _) = read_whole(&file).expect("read");
    let events = sink
        .sessions
        .iter()
        .flat_map(|s| s.events.clone())
        .collect();
    (sink, events)
}

const GEMINI_MAIN: &str = "3f2a9c1e-7b4d-4e0a-9a51-2c8e6d0f1b77";

#[test]
fn gemini_fixture_discovery_layouts_and_default_root() {
    let root = fixture("gemini");
    let found = discover(&root);
    let kinds: Vec<Agent> = found.iter().map(|f| f.kind).collect();
    assert_eq!(kinds, vec![Agent::Gemini; 3], "{found:?}");
    let sub = found
        .iter()
        .find(|f| f.path.ends_with("k7q2m9.jsonl"))
        .expect("subagent found");
    assert_eq!(
        sub.layout,
        Layout::Subagent {
            parent_session_hint: Some(GEMINI_MAIN.into()),
            agent_id_hint: Some("k7q2m9".into()),
            sidecar: None
        }
    );
    let home = Path::new("/home/u");
    let env = Env::of(&[("HOME", home), ("GEMINI_CLI_HOME", Path::new("/g"))]);
    let roots = agents::roots_in(&env);
    assert!(
        roots.contains(&(Agent::Gemini, PathBuf::from("/g/.gemini/tmp"))),
        "{roots:?}"
    );
    let chats = root.join("tmp/billing-api/chats/session-x.json");
    assert_eq!(agents::store_of_change(&chats), Some(chats.clone()));
    assert_eq!(
        agents::resume_command(
            "gemini/subagent",
            &format!("{GEMINI_MAIN}/agent-k7q2m9"),
            Some("/home/dev/billing-api")
        )
        .as_deref(),
        Some(format!("cd /home/dev/billing-api && gemini --resume {GEMINI_MAIN}").as_str())
    );
}

#[test]
fn gemini_fixture_indexes_sessions_subagent_errors_and_redacts() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("episodes.sqlite");
    let s = index(&db, vec![fixture("gemini")]);
    assert_eq!(
        (s.files_new, s.failed.len(), s.lines.skipped()),
        (3, 0, 0),
        "{s:?}"
    );
    let main = session(&db, GEMINI_MAIN);
    assert_eq!(main.source, "gemini");
    assert_eq!(main.cwd.as_deref(), Some("/home/dev/billing-api"));
    assert_eq!(
        main.title.as_deref(),
        Some("Fix invoice PDF export timeout (N+1 product query)")
    );
    assert_eq!(main.outcome, "success");
    let sub = session(&db, &format!("{GEMINI_MAIN}/agent-k7q2m9"));
    assert_eq!(sub.parent.as_deref(), Some(GEMINI_MAIN));
    assert!(sub
        .title
        .as_deref()
        .is_some_and(|t| t.starts_with("Write a regression test")));
    assert!(sub.events >= 3);
    let legacy = session(&db, "8d0c1a22-5e6f-4a1b-9c2d-3e4f5a6b7c8d");
    assert_eq!(legacy.cwd.as_deref(), Some("/home/dev/infra"));
    // Each re-appended message is stored once: one tool call and one result per call id.
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM events WHERE event_type='assistant/tool_use'"
        ),
        6
    );
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM (SELECT tool_use_id FROM events WHERE event_type='tool/result'
             GROUP BY tool_use_id HAVING count(*) > 1)"
        ),
        0
    );
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM events WHERE is_error=1 AND event_type='tool/result'"
        ),
        1
    );
    let text = all_text(&db);
    assert!(text.contains("N+1"));
    assert!(!text.contains("Hunter2-staging") && !text.contains("xoxb-2048-777777777777"));
    let facts: String = {
        let c = knowledge::sources::sqlite::open_ro(&db).expect("open");
        let mut stmt = c
            .prepare("SELECT coalesce(facts,'') FROM events")
            .expect("q");
        let rows = stmt.query_map([], |r| r.get::<_, String>(0)).expect("rows");
        rows.flatten().collect()
    };
    assert!(facts.contains("\"agent_id\":\"k7q2m9\"") && facts.contains("invoice_pdf.py"));
}

#[test]
fn gemini_growing_file_is_read_on_and_equals_one_pass() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path().join("gemini");
    copy_tree(&fixture("gemini"), &root);
    let file = root.join("tmp/billing-api/chats/session-2026-05-12T09-14-3f2a9c1e.jsonl");
    let full = std::fs::read_to_string(&file).expect("read");
    let lines: Vec<&str> = full.lines().collect();
    // Cut right after a message's first copy: its re-append (with the tool call) comes later.
    let cut = 5;
    std::fs::write(&file, lines[..cut].join("\n") + "\n").expect("write");
    let db = dir.path().join("episodes.sqlite");
    index(&db, vec![root.clone()]);
    // Up to the rewind the lines only add to the conversation: read on from where it stopped.
    let rewind = lines
        .iter()
        .position(|l| l.starts_with("{\"$rewindTo\""))
        .expect("the fixture rewinds");
    std::fs::write(&file, lines[..rewind].join("\n") + "\n").expect("write");
    let s = index(&db, vec![root.clone()]);
    assert_eq!((s.files_appended, s.files_rewritten), (1, 0), "{s:?}");
    // A rewind takes a message read before out of the conversation: the file is re-read and
    // merged (the stored events keep their seqs; the rewound one is marked).
    std::fs::write(&file, full.clone()).expect("write");
    let s = index(&db, vec![root.clone()]);
    assert_eq!((s.files_appended, s.files_rewritten), (0, 1), "{s:?}");
    let once = dir.path().join("once.sqlite");
    index(&once, vec![root]);
    let rows = |db: &Path| {
        let c = knowledge::sources::sqlite::open_ro(db).expect("open");
        let mut stmt = c
            .prepare("SELECT seq, event_type, text FROM events WHERE session_id=?1 ORDER BY seq")
            .expect("q");
        let rows = stmt
            .query_map([GEMINI_MAIN], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                ))
            })
            .expect("rows");
        rows.flatten().collect::<Vec<_>>()
    };
    assert_eq!(rows(&db), rows(&once));
}

#[test]
fn gemini_real_jsonl_with_duplicate_ids_and_a_subagent_call() {
    let Some(path) =
        common::realdata::path("gemini/empathic-toolpath/test-fixtures/gemini/convo.jsonl")
    else {
        return;
    };
    let (sink, events) = one(path, Agent::Gemini);
    let meta = &sink.sessions[0].meta;
    assert_eq!(
        meta.session_id.as_deref(),
        Some("9534b902-4b8a-437e-ba2e-2e4db4b82fec")
    );
    let calls: Vec<&ParsedEvent> = events
        .iter()
        .filter(|e| e.event_type == "assistant/tool_use")
        .collect();
    // Ten tool-using model messages, each appended twice: ten calls, each once.
    assert_eq!(calls.len(), 10);
    let results = events
        .iter()
        .filter(|e| e.event_type == "tool/result")
        .count();
    assert_eq!(results, 10);
    let failed: Vec<&ParsedEvent> = events.iter().filter(|e| e.is_error).collect();
    assert_eq!(failed.len(), 1);
    assert!(failed[0].text.contains("File not found"));
    let spawn = events
        .iter()
        .flat_map(|e| &e.facts)
        .any(|f| matches!(f, Fact::Spawn { name: Some(n), .. } if n == "generalist"));
    let link = events
        .iter()
        .flat_map(|e| &e.facts)
        .any(|f| matches!(f, Fact::AgentLink { agent_id, .. } if agent_id == "y3w0o9"));
    assert!(spawn && link);
    assert!(events.iter().any(|e| e.event_type == "assistant/thinking"));
    assert_eq!(events.iter().filter(|e| e.human).count(), 1);
}

#[test]
fn gemini_real_legacy_json_and_shape_fixtures_read_without_broken_records() {
    let Some(root) = common::realdata::path("gemini") else {
        return;
    };
    for rel in [
        "kvsankar-agent-history/tests/fixtures/real_sessions/gemini/session-01.json",
        "jazzyalex-agent-sessions/small.json",
        "jazzyalex-agent-sessions/large.json",
        "jazzyalex-agent-sessions/jsonl_v040.jsonl",
        "kenn-io-agentsview/standard_session.json",
        "kenn-io-agentsview/tool_calls_with_results.json",
        "kenn-io-agentsview/thinking_only.json",
        "kenn-io-agentsview/system_messages.json",
    ] {
        let path = root.join(rel);
        let file = TranscriptFile {
            path: path.clone(),
            kind: Agent::Gemini,
            layout: Layout::Main,
        };
        let (sink, end) = read_whole(&file).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let events: usize = sink.sessions.iter().map(|s| s.events.len()).sum();
        assert!(events > 0, "{rel}: no events");
        assert_eq!(end.total.skipped_broken, 0, "{rel}: {:?}", end.total);
        assert!(sink.sessions[0].meta.session_id.is_some(), "{rel}");
    }
    // A `/chat save` checkpoint (`{history:[{role,parts}]}`) is not a session: counted, not read.
    let file = TranscriptFile {
        path: root.join("jazzyalex-agent-sessions/schema_drift.json"),
        kind: Agent::Gemini,
        layout: Layout::Main,
    };
    let (sink, end) = read_whole(&file).expect("read");
    assert!(sink.sessions.iter().all(|s| s.events.is_empty()));
    assert_eq!(end.total.skipped_unknown, 1);
}

/// What one agent's own fixture must give once indexed.
struct Expect {
    agent: &'static str,
    session: &'static str,
    cwd: &'static str,
    title: &'static str,
    secrets: &'static [&'static str],
    resume: &'static str,
}

const FIXTURES: &[Expect] = &[
    Expect {
        agent: "pi",
        session: "0199e1a4-7c2b-7d3e-9f10-4a5b6c7d8e9f",
        cwd: "/home/dev/ledger",
        title: "Fix ledger reconciliation decimal overflow",
        secrets: &["p4ssw0rd-ledger-77"],
        resume: "cd /home/dev/ledger && pi --resume",
    },
    Expect {
        agent: "copilot",
        session: "5b6c7d8e-1a2b-4c3d-8e9f-0a1b2c3d4e5f",
        cwd: "/home/dev/webhooks",
        title: "",
        secrets: &["sk_live_51HxT9aQ2eZvKYlo2C8w3fX7"],
        resume: "cd /home/dev/webhooks && copilot --resume 5b6c7d8e-1a2b-4c3d-8e9f-0a1b2c3d4e5f",
    },
    Expect {
        agent: "qwen",
        session: "7e8f9a0b1c2d4e3f8a9b0c1d2e3f4a5b",
        cwd: "/home/dev/mailer",
        title: "Fix double-escaped reset email",
        secrets: &["mailer-Secr3t-2026"],
        resume: "cd /home/dev/mailer && qwen --resume 7e8f9a0b1c2d4e3f8a9b0c1d2e3f4a5b",
    },
];

#[test]
fn pi_copilot_and_qwen_fixtures_index_with_ids_cwd_errors_spawns_and_redaction() {
    for x in FIXTURES {
        let dir = tempfile::tempdir().expect("tmp");
        let db = dir.path().join("episodes.sqlite");
        let root = fixture(x.agent);
        let found = discover(&root);
        assert_eq!(found.len(), 1, "{}: {found:?}", x.agent);
        assert_eq!(found[0].kind.as_str(), x.agent);
        let s = index(&db, vec![root.clone()]);
        assert_eq!(
            (s.files_new, s.lines.skipped()),
            (1, 0),
            "{}: {s:?}",
            x.agent
        );
        let got = session(&db, x.session);
        assert_eq!(got.source, x.agent);
        assert_eq!(got.cwd.as_deref(), Some(x.cwd), "{}", x.agent);
        if !x.title.is_empty() {
            assert_eq!(got.title.as_deref(), Some(x.title), "{}", x.agent);
        }
        assert_eq!(got.outcome, "success", "{}", x.agent);
        let errors = count(
            &db,
            "SELECT count(*) FROM events WHERE event_type='tool/result' AND is_error=1",
        );
        assert_eq!(errors, 1, "{}: one failing tool", x.agent);
        let text = all_text(&db);
        for secret in x.secrets {
            assert!(
                !text.contains(secret),
                "{}: {secret} stored in clear",
                x.agent
            );
        }
        assert_eq!(
            agents::resume_command(x.agent, x.session, Some(x.cwd)).as_deref(),
            Some(x.resume)
        );
        // Nothing changed: the second run skips the file by fingerprint.
        let again = index(&db, vec![root]);
        assert_eq!(
            (again.files_unchanged, again.events_added),
            (1, 0),
            "{}",
            x.agent
        );
    }
}

#[test]
fn copilot_and_qwen_fixtures_carry_their_subagent_spawns() {
    for (agent, name) in [("copilot", "test-writer"), ("qwen", "general-purpose")] {
        let file = discover(&fixture(agent)).remove(0);
        let (sink, _) = read_whole(&file).expect("read");
        let spawned = sink.sessions[0]
            .events
            .iter()
            .flat_map(|e| &e.facts)
            .any(|f| matches!(f, Fact::Spawn { subagent_type: Some(t), .. } if t == name));
        assert!(spawned, "{agent}: no spawn of {name}");
    }
}

#[test]
fn pi_real_sessions_with_compaction_aborts_and_bash_executions() {
    let Some(root) = common::realdata::path("pi") else {
        return;
    };
    let big = root.join("badlogic-pi-mono/packages/coding-agent/test/fixtures/large-session.jsonl");
    let (sink, events) = one(big, Agent::Pi);
    assert!(events.len() > 1000, "{}", events.len());
    assert!(sink.sessions[0].meta.cwd.is_some());
    let before =
        root.join("badlogic-pi-mono/packages/coding-agent/test/fixtures/before-compaction.jsonl");
    let (sink, events) = one(before, Agent::Pi);
    let s = &sink.sessions[0];
    assert_eq!(
        s.meta.cwd.as_deref(),
        Some("/Users/badlogic/workspaces/pi-mono")
    );
    assert_eq!(
        events
            .iter()
            .filter(|e| e.event_type == "system/summary")
            .count(),
        2
    );
    assert_eq!(
        events
            .iter()
            .filter(|e| e.event_type == "user/message")
            .count(),
        55
    );
    assert!(events
        .iter()
        .any(|e| e.event_type == "user/command" && e.text.starts_with("!ls")));
    let calls = events
        .iter()
        .filter(|e| e.event_type == "assistant/tool_use")
        .count();
    let results = events
        .iter()
        .filter(|e| e.event_type == "tool/result")
        .count();
    assert_eq!(
        results,
        448 + 3,
        "every toolResult and bashExecution output"
    );
    assert!(calls >= 448);
    for rel in [
        "kvsankar-agent-history/tests/fixtures/real_sessions/pi/session-01.jsonl",
        "jazzyalex-agent-sessions/small.jsonl",
        "kenn-io-agentsview/session.jsonl",
    ] {
        let file = TranscriptFile {
            path: root.join(rel),
            kind: Agent::Pi,
            layout: Layout::Main,
        };
        let (sink, end) = read_whole(&file).expect("read");
        assert!(!sink.sessions[0].events.is_empty(), "{rel}");
        assert!(sink.sessions[0].meta.session_id.is_some(), "{rel}");
        // agentsview's fixture plants one malformed line and one unknown entry type.
        let planted = u64::from(rel.starts_with("kenn-io"));
        assert_eq!(end.total.skipped_broken, planted, "{rel}");
        assert_eq!(end.total.skipped_unknown, planted, "{rel}");
    }
}

#[test]
fn copilot_and_qwen_shape_fixtures_read_without_broken_records() {
    let Some(root) = common::realdata::root() else {
        return;
    };
    let cases: &[(&str, Agent)] = &[
        ("copilot/jazzyalex-agent-sessions/subdir_v1/aaaabbbb-1111-2222-3333-ccccddddeeee/events.jsonl", Agent::Copilot),
        ("copilot/jazzyalex-agent-sessions/small.jsonl", Agent::Copilot),
        ("copilot/jazzyalex-agent-sessions/large.jsonl", Agent::Copilot),
        ("copilot/jazzyalex-agent-sessions/schema_drift.jsonl", Agent::Copilot),
        ("qwen/jazzyalex-agent-sessions/019f0000-0000-7000-8000-000000000001.jsonl", Agent::Qwen),
        ("qwen/jazzyalex-agent-sessions/019f0000-0000-7000-8000-000000000002.jsonl", Agent::Qwen),
        ("qwen/jazzyalex-agent-sessions/019f0000000070008000000000000003.jsonl", Agent::Qwen),
        ("qwen/jazzyalex-agent-sessions/019f0000-0000-7000-8000-000000000004.jsonl", Agent::Qwen),
        ("qwen/jazzyalex-agent-sessions/019f0000-0000-7000-8000-000000000005.jsonl", Agent::Qwen),
    ];
    for (rel, agent) in cases {
        let path = root.join(rel);
        let (sink, events) = one(path, *agent);
        assert!(!events.is_empty(), "{rel}");
        assert!(sink.sessions[0].meta.session_id.is_some(), "{rel}");
        let file = agents::recognise(&root.join(rel)).expect("recognised");
        let (_, end) = read_whole(&file).expect("read");
        assert_eq!(end.total.skipped_broken, 0, "{rel}: {:?}", end.total);
    }
    let (_, events) = one(
        root.join("copilot/jazzyalex-agent-sessions/subdir_v1/aaaabbbb-1111-2222-3333-ccccddddeeee/events.jsonl"),
        Agent::Copilot,
    );
    let result = events
        .iter()
        .find(|e| e.event_type == "tool/result")
        .expect("a result");
    assert_eq!(result.tool_name.as_deref(), Some("bash"));
    assert!(result.text.contains("file1"));
}

/// The demo world's newsletter-unsubscribe work was done by five agents besides Claude Code and
/// Codex (issues 18 and 35): one question finds each of them, in its own workspace.
#[test]
fn one_demo_question_returns_evidence_from_five_other_agents() {
    use knowledge::contract::SearchRequest;
    let engine = common::world::demo().engine();
    let resp = engine.search(&SearchRequest::new("newsletter unsubscribe"));
    let items = &resp.lanes.episodes.items;
    let mut agents_seen: Vec<&str> = items
        .iter()
        .filter_map(|it| Agent::from_source(&it.surface))
        .map(|a| a.as_str())
        .collect();
    agents_seen.sort();
    agents_seen.dedup();
    for want in ["cline", "copilot", "gemini", "openhands", "pi"] {
        assert!(
            agents_seen.contains(&want),
            "{want} missing from {agents_seen:?}"
        );
    }
    for surface in ["gemini", "cline", "openhands"] {
        let item = items
            .iter()
            .find(|it| it.surface == surface)
            .unwrap_or_else(|| panic!("a {surface} episode"));
        assert!(
            item.session
                .cwd
                .as_deref()
                .is_some_and(|c| c.ends_with("/repos/webshop")),
            "{surface}: {:?}",
            item.session.cwd
        );
    }
}
