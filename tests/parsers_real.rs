//! Parser and discovery tests over real transcripts (`../shared/realdata/`, see its SOURCES.md;
//! skipped with a note where it is absent).
//!
//! Synthetic unit tests prove the rules; these prove the rules meet real data: every fixture
//! parses, and concrete facts known to be in specific files come out as the right events.

use std::fs::File;
use std::io::Cursor;
use std::path::{Path, PathBuf};

use knowledge::sources::episodes::discover::{discover, Layout, TranscriptFile};
use knowledge::sources::episodes::lines::{read_lines, DEFAULT_MAX_LINE_BYTES};
use knowledge::sources::episodes::model::{
    Fact, ParseStats, ParsedEvent, SessionMeta, TranscriptKind,
};
use knowledge::sources::episodes::parser::{parse_file, Outcome, TranscriptParser};

const MAROT_MAIN: &str = "claude/marot-spotter/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl";
const MAROT_CHILD: &str =
    "claude/marot-spotter/ae4a77f8-aedd-4bc1-888f-c94edc91af04/subagents/agent-aac57f5.jsonl";
const CODEX_ERR: &str = "codex/jnarowski-agentcmd/rollout-2025-09-24T20-12-23-01997ea4-a70d-7da3-8c20-c736db82a7c5.jsonl";
const CODEX_LONG: &str = "codex/jnarowski-agentcmd/sessions/2025/09/24/rollout-2025-09-24T19-22-20-01997e76-d124-7592-9cac-2ec05abbca08.jsonl";

mod common;

/// The realdata root; every test first returns early (skipped, with a note) when it is absent.
fn root() -> PathBuf {
    common::realdata::root().unwrap_or_default()
}

type Parsed = (Vec<ParsedEvent>, SessionMeta, ParseStats, Outcome);

fn parse(rel: &str, kind: TranscriptKind) -> Parsed {
    match parse_file(&root().join(rel), kind) {
        Ok(p) => p,
        Err(e) => panic!("{rel}: {e}"),
    }
}

fn of_type<'a>(events: &'a [ParsedEvent], ty: &str) -> Vec<&'a ParsedEvent> {
    events.iter().filter(|e| e.event_type == ty).collect()
}

fn has_fact(events: &[ParsedEvent], pred: impl Fn(&Fact) -> bool) -> bool {
    events.iter().flat_map(|e| e.facts.iter()).any(pred)
}

#[test]
fn every_fixture_parses_as_either_kind_without_panic() {
    if common::realdata::root().is_none() {
        return;
    }
    // The Claude Code and Codex samples (the other agents' have their own tests).
    let mut files = discover(&root().join("claude"));
    files.extend(discover(&root().join("codex")));
    assert!(files.len() >= 30, "found {}", files.len());
    for f in &files {
        for kind in [TranscriptKind::Claude, TranscriptKind::Codex] {
            let (events, _, stats, _) = parse(
                f.path
                    .strip_prefix(root())
                    .unwrap_or(&f.path)
                    .to_str()
                    .unwrap_or(""),
                kind,
            );
            assert_eq!(stats.events, events.len() as u64);
            assert!(events.iter().all(|e| e.text.len() <= 64 * 1024));
            assert!(events
                .iter()
                .all(|e| !e.human
                    || matches!(e.event_type.as_str(), "user/message" | "user/command")));
        }
        // With the detected kind nothing is broken: the fixtures are clean JSONL.
        let (_, _, stats, _) = parse(
            f.path
                .strip_prefix(root())
                .unwrap_or(&f.path)
                .to_str()
                .unwrap_or(""),
            f.kind,
        );
        assert_eq!(stats.skipped_broken, 0, "{}", f.path.display());
        assert_eq!(stats.skipped_oversized, 0);
    }
}

#[test]
fn discovery_kinds_layouts_and_hints() {
    if common::realdata::root().is_none() {
        return;
    }
    let files = discover(&root());
    let find = |suffix: &str| -> &TranscriptFile {
        match files.iter().find(|f| f.path.ends_with(suffix)) {
            Some(f) => f,
            None => panic!("{suffix} not discovered"),
        }
    };
    assert_eq!(find(MAROT_MAIN).layout, Layout::Main);
    assert_eq!(find(MAROT_MAIN).kind, TranscriptKind::Claude);
    assert_eq!(
        find(MAROT_CHILD).layout,
        Layout::Subagent {
            parent_session_hint: Some("ae4a77f8-aedd-4bc1-888f-c94edc91af04".into()),
            agent_id_hint: Some("aac57f5".into()),
            sidecar: None,
        }
    );
    match &find("subagents/agent-acompact-fffbd0.jsonl").layout {
        Layout::Subagent {
            parent_session_hint,
            agent_id_hint,
            ..
        } => {
            assert_eq!(
                parent_session_hint.as_deref(),
                Some("258c7280-ae70-4798-800f-63464d01a85d")
            );
            assert_eq!(agent_id_hint.as_deref(), Some("acompact-fffbd0"));
        }
        other => panic!("{other:?}"),
    }
    match &find("agent-a0ad4f44468bdf20d.jsonl").layout {
        Layout::Subagent { sidecar, .. } => {
            assert!(sidecar
                .as_deref()
                .is_some_and(|s| s.ends_with("agent-a0ad4f44468bdf20d.meta.json")))
        }
        other => panic!("{other:?}"),
    }
    // Codex is detected by name and by content (shape fixtures are not named `rollout-*`).
    assert_eq!(find(CODEX_LONG).kind, TranscriptKind::Codex);
    assert_eq!(
        find("codex/kvsankar-agent-history/session-01.jsonl").kind,
        TranscriptKind::Codex
    );
    assert_eq!(
        find("codex/jazzyalex-agent-sessions/schema_drift.jsonl").kind,
        TranscriptKind::Codex
    );
    assert_eq!(
        find("claude/kvsankar-agent-history/session-01.jsonl").kind,
        TranscriptKind::Claude
    );
    // Not transcripts: under the Claude Code and Codex samples only `.jsonl` files are claimed
    // (no sidecar, README or licence); the other agents' samples have their own formats.
    let claude_or_codex = |f: &&TranscriptFile| {
        let rel = f.path.strip_prefix(root()).unwrap_or(&f.path);
        rel.starts_with("claude") || rel.starts_with("codex")
    };
    assert!(files
        .iter()
        .filter(claude_or_codex)
        .all(|f| f.path.extension().is_some_and(|e| e == "jsonl")));
    let mut sorted = files.clone();
    sorted.sort_by(|a, b| a.path.cmp(&b.path));
    assert_eq!(sorted, files);
}

#[test]
fn marot_skill_spawn_link_and_errors() {
    if common::realdata::root().is_none() {
        return;
    }
    let (events, meta, _, _) = parse(MAROT_MAIN, TranscriptKind::Claude);
    // The Skill call.
    let skill = events
        .iter()
        .find(|e| e.tool_name.as_deref() == Some("Skill") && e.event_type == "assistant/tool_use");
    let skill = skill.map(|e| e.facts.clone()).unwrap_or_default();
    assert!(skill.contains(&Fact::SkillUse {
        name: "elixir:hex-docs-search".into(),
        via: "tool".into()
    }));
    // The injected skill body is `system/skill`, never a person's message.
    let body: Vec<_> = events
        .iter()
        .filter(|e| e.text.starts_with("Base directory for this skill:"))
        .collect();
    assert_eq!(body.len(), 1);
    assert_eq!(body[0].event_type, "system/skill");
    assert!(!body[0].human);
    assert!(of_type(&events, "user/message")
        .iter()
        .all(|e| !e.text.contains("Base directory for this skill")));
    // The Task spawn and its link to the child transcript.
    assert!(has_fact(&events, |f| matches!(f, Fact::Spawn {
        tool_use_id: Some(id), subagent_type: Some(t), description: Some(d), ..
    } if id == "toolu_01Hf8v1Za7y4af8VUwSR4CXU" && t == "general-purpose" && d == "Check OTEL hex package versions")));
    let task_result = events.iter().find(|e| {
        e.event_type == "tool/result"
            && e.tool_use_id.as_deref() == Some("toolu_01Hf8v1Za7y4af8VUwSR4CXU")
    });
    let task_result = task_result.map(|e| (e.tool_name.clone(), e.facts.clone()));
    assert_eq!(
        task_result,
        Some((
            Some("Task".into()),
            vec![Fact::AgentLink {
                tool_use_id: Some("toolu_01Hf8v1Za7y4af8VUwSR4CXU".into()),
                agent_id: "aac57f5".into()
            }]
        ))
    );
    // 12 tool results with is_error:true.
    let errors = events
        .iter()
        .filter(|e| e.event_type == "tool/result" && e.is_error)
        .count();
    assert_eq!(errors, 12);
    // Edits and commands.
    assert!(has_fact(
        &events,
        |f| matches!(f, Fact::FileEdit { path } if path.ends_with("lib/spotter/telemetry/otel.ex"))
    ));
    assert!(has_fact(
        &events,
        |f| matches!(f, Fact::Command { program } if program == "mix")
    ));
    // Human lines: the task, `/compact`, and `continue implementation`; not the compaction
    // summary, caveat or command output.
    let human: Vec<&str> = events
        .iter()
        .filter(|e| e.human)
        .map(|e| e.text.as_str())
        .collect();
    assert_eq!(human.len(), 3, "{human:?}");
    assert!(human[0].starts_with("Work on bead spotter-4te"));
    assert!(human[1].starts_with("/compact"));
    assert_eq!(human[2], "continue implementation");
    assert_eq!(of_type(&events, "system/summary").len(), 1);
    assert_eq!(
        meta.session_id.as_deref(),
        Some("ae4a77f8-aedd-4bc1-888f-c94edc91af04")
    );
    assert_eq!(
        meta.cwd.as_deref(),
        Some("/home/USER/projects/spotter-worktrees/spotter-4te")
    );
    assert_eq!(meta.git_branch.as_deref(), Some("spotter-4te"));
    assert_eq!(meta.version.as_deref(), Some("2.1.39"));
    assert_eq!(meta.agent_id, None);
}

#[test]
fn marot_subagent_transcript_meta() {
    if common::realdata::root().is_none() {
        return;
    }
    let (events, meta, _, _) = parse(MAROT_CHILD, TranscriptKind::Claude);
    assert_eq!(meta.agent_id.as_deref(), Some("aac57f5"));
    assert_eq!(
        meta.parent_session_id.as_deref(),
        Some("ae4a77f8-aedd-4bc1-888f-c94edc91af04")
    );
    assert_eq!(
        meta.session_id.as_deref(),
        Some("ae4a77f8-aedd-4bc1-888f-c94edc91af04")
    );
    assert_eq!(meta.model.as_deref(), Some("claude-sonnet-4-5-20250929"));
    assert!(events
        .iter()
        .all(|e| !e.human && e.sidechain_agent.is_none()));
    assert_eq!(
        events.first().map(|e| e.event_type.as_str()),
        Some("agent/prompt")
    );
    assert_eq!(of_type(&events, "assistant/tool_use").len(), 12);
}

#[test]
fn jazzyalex_subagent_layout_with_sidecar() {
    if common::realdata::root().is_none() {
        return;
    }
    let rel = "claude/jazzyalex-agent-sessions/subagent/0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f/subagents/agent-a0ad4f44468bdf20d.jsonl";
    let (events, meta, _, _) = parse(rel, TranscriptKind::Claude);
    assert_eq!(meta.agent_id.as_deref(), Some("a0ad4f44468bdf20d"));
    assert_eq!(
        meta.agent_preset.as_deref(),
        Some("general-purpose"),
        "sidecar agentType"
    );
    assert_eq!(
        events.first().map(|e| e.text.as_str()),
        Some("Search the repo for TODO comments")
    );
    assert!(has_fact(
        &events,
        |f| matches!(f, Fact::Command { program } if program == "grep")
    ));
}

#[test]
fn shape_fixtures_count_unknown_types() {
    if common::realdata::root().is_none() {
        return;
    }
    let (_, _, stats, _) = parse(
        "claude/jazzyalex-agent-sessions/schema_drift.jsonl",
        TranscriptKind::Claude,
    );
    assert_eq!(stats.skipped_unknown, 2, "top-level tool_use/tool_result");
    let (events, meta, stats, _) = parse(
        "claude/jazzyalex-agent-sessions/small.jsonl",
        TranscriptKind::Claude,
    );
    assert_eq!(stats.skipped_unknown, 2, "started/result");
    assert_eq!(
        meta.title.as_deref(),
        Some("Stage0 small fixture"),
        "custom-title wins"
    );
    assert!(!of_type(&events, "system/error").is_empty());
    assert!(of_type(&events, "user/message")
        .iter()
        .all(|e| e.text != "Summary of prior context."));
    let (events, _, stats, _) = parse(
        "codex/jazzyalex-agent-sessions/schema_drift.jsonl",
        TranscriptKind::Codex,
    );
    assert_eq!(stats.skipped_unknown, 2, "records without type");
    assert_eq!(of_type(&events, "assistant/tool_use").len(), 1);
    let (events, meta, stats, _) = parse(
        "codex/jazzyalex-agent-sessions/small.jsonl",
        TranscriptKind::Codex,
    );
    assert_eq!(stats.skipped_broken, 0);
    assert_eq!(
        meta.session_id.as_deref(),
        Some("019fc8be-3658-7ca3-9e29-000000000000"),
        "first session_meta owns identity"
    );
    assert!(has_fact(&events, |f| matches!(f, Fact::Spawn { .. })));
    // "Found 2 files." is written as response_item, event_msg and task_complete: indexed once.
    let found = events.iter().filter(|e| e.text == "Found 2 files.").count();
    assert_eq!(found, 1);
}

#[test]
fn codex_shell_calls_errors_context_and_meta() {
    if common::realdata::root().is_none() {
        return;
    }
    let (events, meta, _, outcome) = parse(CODEX_ERR, TranscriptKind::Codex);
    assert_eq!(
        meta.session_id.as_deref(),
        Some("01997ea4-a70d-7da3-8c20-c736db82a7c5")
    );
    assert_eq!(
        meta.cwd.as_deref(),
        Some("/Users/jnarowski/Dev/spectora/src/spectora-labs-monorepo-v2")
    );
    assert_eq!(meta.agent_preset.as_deref(), Some("codex_vscode"));
    assert_eq!(meta.version.as_deref(), Some("0.40.0"));
    assert_eq!(meta.git_branch.as_deref(), Some("feat/dashboard-refactor"));
    assert_eq!(meta.model.as_deref(), Some("gpt-5-codex"));
    let calls = of_type(&events, "assistant/tool_use");
    assert_eq!(calls.len(), 16);
    assert!(calls.iter().all(|e| e.tool_name.as_deref() == Some("shell")
        && e.facts.iter().any(|f| matches!(f, Fact::Command { .. }))));
    assert!(calls[0].facts.contains(&Fact::Command {
        program: "sed".into()
    }));
    // The first call exits with code 2 (unquoted parentheses).
    let first = events.iter().find(|e| e.event_type == "tool/result");
    let first = first.map(|e| {
        (
            e.is_error,
            e.tool_use_id.clone(),
            e.text.contains("syntax error near unexpected token"),
        )
    });
    assert_eq!(
        first,
        Some((true, Some("call_WmlLLopV6YokTw8Y639cqY5h".into()), true))
    );
    assert_eq!(events.iter().filter(|e| e.is_error).count(), 3);
    // Injected context is never a person's message.
    let env = events
        .iter()
        .find(|e| e.text.starts_with("<environment_context>"));
    assert_eq!(
        env.map(|e| (e.event_type.as_str(), e.human)),
        Some(("system/context", false))
    );
    assert!(events
        .iter()
        .filter(|e| e.human)
        .all(|e| !e.text.contains("# Context from my IDE setup")));
    // Each visible message once, although the rollout writes it twice.
    let seeing = events
        .iter()
        .filter(|e| e.text.starts_with("**What You\u{2019}re Seeing**"))
        .count();
    assert_eq!(seeing, 1);
    assert_eq!(of_type(&events, "assistant/message").len(), 2);
    assert_eq!(of_type(&events, "user/message").len(), 2);
    assert_eq!(
        outcome,
        Outcome::Success,
        "errors followed by successful calls"
    );
}

#[test]
fn codex_long_session_turns() {
    if common::realdata::root().is_none() {
        return;
    }
    let (events, _, _, _) = parse(CODEX_LONG, TranscriptKind::Codex);
    let human: Vec<&str> = of_type(&events, "user/message")
        .iter()
        .map(|e| e.text.as_str())
        .collect();
    assert_eq!(human.len(), 13);
    assert_eq!(
        human
            .iter()
            .filter(|t| **t == "Why do we need stats for the team?")
            .count(),
        1
    );
    assert!(human.contains(&"Ok it is still not working either way. No data is showing up"));
    let aborted = of_type(&events, "system/error");
    assert_eq!(aborted.len(), 4);
    assert!(aborted
        .iter()
        .all(|e| e.text == "turn aborted: interrupted"));
    assert!(has_fact(
        &events,
        |f| matches!(f, Fact::FileEdit { path } if path == "apps/spectora-labs/src/app/api/teams/[id]/route.ts")
    ));
    assert!(has_fact(
        &events,
        |f| matches!(f, Fact::Command { program } if program == "apply_patch")
    ));
}

#[test]
fn codex_modern_exec_session() {
    if common::realdata::root().is_none() {
        return;
    }
    let (events, meta, _, outcome) = parse(
        "codex/kvsankar-agent-history/session-01.jsonl",
        TranscriptKind::Codex,
    );
    assert_eq!(meta.agent_preset.as_deref(), Some("codex_exec"));
    assert_eq!(meta.version.as_deref(), Some("0.135.0"));
    let kinds: Vec<&str> = events.iter().map(|e| e.event_type.as_str()).collect();
    assert_eq!(
        kinds,
        vec![
            "system/context",
            "system/context",
            "user/message",
            "assistant/message"
        ]
    );
    assert_eq!(outcome, Outcome::Success, "task_complete");
}

#[test]
fn claude_eras_and_record_shapes() {
    if common::realdata::root().is_none() {
        return;
    }
    let (events, _, _, _) = parse(
        "claude/jnarowski-agentcmd/06381696-0074-49f8-863e-6ad4fac507f9.jsonl",
        TranscriptKind::Claude,
    );
    assert_eq!(
        of_type(&events, "user/command")
            .first()
            .map(|e| e.text.as_str()),
        Some("/clear")
    );
    let (events, _, _, _) = parse(
        "claude/jnarowski-agentcmd/full-session-three.jsonl",
        TranscriptKind::Claude,
    );
    let mcp = events.iter().find(|e| {
        e.tool_use_id.as_deref() == Some("toolu_01VZ4mZBZtXjHzEgB2dFd6Bs")
            && e.event_type == "tool/result"
    });
    assert_eq!(
        mcp.map(|e| e.text.as_str()),
        Some("Successfully changed chat title to: \"New Chat Session\"")
    );
    let (events, meta, _, _) = parse(
        "claude/jnarowski-agentcmd/full-session-five.jsonl",
        TranscriptKind::Claude,
    );
    assert_eq!(of_type(&events, "system/summary").len(), 16);
    assert!(meta.title.is_some());
    let (events, _, _, outcome) = parse(
        "claude/jimmc414-cctrace/132b2f66-ee5f-46f6-8904-32d9dc4d36c3.jsonl",
        TranscriptKind::Claude,
    );
    assert_eq!(of_type(&events, "assistant/thinking").len(), 100);
    assert_eq!(
        outcome,
        Outcome::Success,
        "`it worked!` after `still didnt work`"
    );
    let (events, meta, _, _) = parse(
        "claude/kvsankar-agent-history/session-01.jsonl",
        TranscriptKind::Claude,
    );
    assert_eq!(meta.entrypoint.as_deref(), Some("sdk-cli"));
    assert_eq!(
        of_type(&events, "user/message").len(),
        1,
        "queued prompt and its user line: once"
    );
    let (events, _, _, _) = parse(
        "claude/marot-spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl",
        TranscriptKind::Claude,
    );
    let human: Vec<&str> = events
        .iter()
        .filter(|e| e.human)
        .map(|e| e.text.as_str())
        .collect();
    assert_eq!(
        human,
        vec![
            "Implement spotter-gqc",
            "check again",
            "new beads for the epic were added. tackle them",
            "did you push?"
        ]
    );
    // Two task notifications and the auto compaction (`compact_boundary`).
    let notices = of_type(&events, "system/notification");
    assert_eq!(notices.len(), 3);
    assert!(notices
        .iter()
        .any(|e| e.text.contains("compacted (auto, 167094 tokens before)")));
    assert_eq!(events.iter().filter(|e| e.is_error).count(), 7);
    let (_, _, _, outcome) = parse(
        "claude/marot-spotter/tool_heavy.jsonl",
        TranscriptKind::Claude,
    );
    assert_eq!(outcome, Outcome::Failure, "ends with an interruption");
    let (events, _, stats, _) = parse(
        "claude/drmaciver-claude-reliability/coverage-test-fix.jsonl",
        TranscriptKind::Claude,
    );
    assert_eq!(
        of_type(&events, "system/hook").len(),
        2,
        "isMeta stop-hook feedback"
    );
    assert_eq!(stats.ignored, 1, "the queue-operation dequeue");
}

/// Simulates a growing file: the indexer reads whatever is there, stores the parser state and
/// the offset, and resumes when more bytes arrive — cutting lines anywhere, even mid-line.
fn parse_growing(
    path: &Path,
    kind: TranscriptKind,
    cuts: &[usize],
) -> (Vec<ParsedEvent>, TranscriptParser) {
    let data = std::fs::read(path).unwrap_or_default();
    let mut state = serde_json::to_string(&TranscriptParser::new(kind)).unwrap_or_default();
    let mut offset = 0u64;
    let mut events = Vec::new();
    for &cut in cuts.iter().chain(std::iter::once(&data.len())) {
        let visible = &data[..cut.min(data.len())];
        let mut parser: TranscriptParser =
            serde_json::from_str(&state).unwrap_or_else(|_| TranscriptParser::new(kind));
        let end = read_lines(
            Cursor::new(visible),
            offset,
            DEFAULT_MAX_LINE_BYTES,
            |item| parser.feed_item(item, &mut events),
        );
        offset = end.unwrap_or(offset);
        state = serde_json::to_string(&parser).unwrap_or_default();
    }
    assert_eq!(offset, data.len() as u64);
    let parser = serde_json::from_str(&state).unwrap_or_else(|_| TranscriptParser::new(kind));
    (events, parser)
}

#[test]
fn resuming_from_saved_state_equals_one_pass() {
    if common::realdata::root().is_none() {
        return;
    }
    for (rel, kind) in [
        (MAROT_MAIN, TranscriptKind::Claude),
        (
            "claude/marot-spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl",
            TranscriptKind::Claude,
        ),
        (CODEX_LONG, TranscriptKind::Codex),
        (
            "codex/jazzyalex-agent-sessions/small.jsonl",
            TranscriptKind::Codex,
        ),
    ] {
        let path = root().join(rel);
        let (one_pass, meta, stats, outcome) = parse(rel, kind);
        let len = std::fs::metadata(&path)
            .map(|m| m.len() as usize)
            .unwrap_or(0);
        let cuts: Vec<usize> = (1..12).map(|i| len * i / 12 + 7).collect();
        let (events, parser) = parse_growing(&path, kind, &cuts);
        assert_eq!(events.len(), one_pass.len(), "{rel}");
        assert!(events == one_pass, "{rel}: events differ");
        assert_eq!(parser.meta(), &meta);
        assert_eq!(parser.stats(), &stats);
        assert_eq!(parser.outcome(), outcome);
        let state = serde_json::to_string(&parser).unwrap_or_default();
        assert!(
            state.len() < 32 * 1024,
            "{rel}: state is {} bytes",
            state.len()
        );
    }
}

#[test]
fn oversized_lines_are_counted_and_skipped() {
    if common::realdata::root().is_none() {
        return;
    }
    let path = root().join(MAROT_MAIN);
    let Ok(file) = File::open(&path) else {
        panic!("open")
    };
    let mut parser = TranscriptParser::new(TranscriptKind::Claude);
    let mut events = Vec::new();
    let end = read_lines(file, 0, 16 * 1024, |item| {
        parser.feed_item(item, &mut events)
    });
    assert_eq!(end.ok(), std::fs::metadata(&path).ok().map(|m| m.len()));
    let stats = parser.stats();
    assert_eq!(stats.skipped_oversized, 7, "lines over 16 KiB: {stats:?}");
    assert!(events.len() > 600, "the other lines still parse");
    assert_eq!(stats.lines, 2385);
    assert_eq!(stats.skipped_broken, 0);
}
