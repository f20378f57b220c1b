use std::path::{Path, PathBuf};

use super::*;
use crate::sources::episodes::agent::{
    read_whole, CollectSink, CollectedSession, ReadEnd, ReadLimits, Resume,
};
use crate::sources::episodes::agents::{recognise, Agent};
use crate::sources::episodes::discover::TranscriptFile;

/// The writes `aider/io.py` makes, in order (so a test can stop after any of them).
struct Writer {
    writes: Vec<String>,
}

impl Writer {
    fn new() -> Self {
        Writer { writes: Vec::new() }
    }
    /// `InputOutput.__init__`.
    fn started(&mut self, at: &str) -> &mut Self {
        self.writes
            .push(format!("\n# aider chat started at {at}\n\n"));
        self
    }
    /// `user_input`.
    fn user(&mut self, inp: &str) -> &mut Self {
        let hist = inp.lines().collect::<Vec<_>>().join("  \n#### ");
        self.writes.push(format!("\n#### {}  \n", hist.trim_end()));
        self
    }
    /// `ai_output`.
    fn ai(&mut self, content: &str) -> &mut Self {
        self.writes.push(format!("\n{}\n\n", content.trim()));
        self
    }
    /// `tool_output` (one message, possibly multi-line: `> ` on its first line only).
    fn tool(&mut self, msg: &str) -> &mut Self {
        self.writes.push(format!("> {}  \n", msg.trim()));
        self
    }
    /// `tool_error` of a multi-line message: one blockquote line per line.
    fn error(&mut self, msg: &str) -> &mut Self {
        for l in msg.lines() {
            let l = l.trim();
            self.writes.push(if l.is_empty() {
                ">  \n".to_string()
            } else {
                format!("> {l}  \n")
            });
        }
        self
    }
    fn text(&self) -> String {
        self.writes.concat()
    }
}

/// The repository's own fixture, as `aider/io.py` writes it.
fn fixture_writer() -> Writer {
    let mut w = Writer::new();
    w.started("2026-10-01 09:15:00")
        .tool("/usr/local/bin/aider --model gpt-4o --openai-api-key sk-proj-Aider7FixtureSecret0123456789abcdef")
        .tool("Aider v0.86.1")
        .tool("Main model: gpt-4o with diff edit format, weak model gpt-4o-mini")
        .tool("Git repo: .git with 42 files")
        .tool("Repo-map: using 1024 tokens, auto refresh")
        .user("the nginx upstream times out after 30s\nfix the proxy_read_timeout")
        .ai("I'll raise the timeout.\n\n#### Plan\n\n> quoting the docs: proxy_read_timeout defaults to 60s\n\ndeploy/nginx.conf\n```\n<<<<<<< SEARCH\n#### not a prompt\n    proxy_read_timeout 30s;\n=======\n    proxy_read_timeout 120s;\n>>>>>>> REPLACE\n```")
        .tool("Tokens: 2,100 sent, 180 received. Cost: $0.01 message, $0.01 session.")
        .tool("Applied edit to deploy/nginx.conf")
        .tool("Commit 1a2b3c4 fix: raise proxy_read_timeout\n\nThe upstream needs more than 30 s under load.")
        .tool("You can use /undo to undo and discard each aider commit.")
        .user("/run nginx -t")
        .tool("Add command output to the chat? (Y)es/(N)o [Yes]: y")
        .user("also set the password DB_PASSWORD=hunter2-fixture-Secret99 in the env file")
        .ai("env/.env\n```\n<<<<<<< SEARCH\n=======\nDB_PASSWORD=changeme\n>>>>>>> REPLACE\n```")
        .error("The LLM did not conform to the edit format.\nhttps://aider.chat/docs/troubleshooting/edit-errors.html\n\n# 1 SEARCH/REPLACE block failed to match!")
        .user("thanks, that works")
        .started("2026-10-01 11:00:00")
        .tool("Aider v0.86.1")
        .tool("Model: claude-3-5-sonnet with diff edit format")
        .user("/ask why does the login test flake?")
        .ai("It races the session cookie.")
        .started("2026-10-01 11:00:00")
        .started("2026-10-01 11:00:00")
        .user("a second run started in the same second");
    w
}

fn fixture_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/aider/myrepo/.aider.chat.history.md")
}

fn read_text(dir: &Path, text: &str) -> (CollectSink, ReadEnd) {
    let path = dir.join(".aider.chat.history.md");
    std::fs::write(&path, text).expect("write");
    let file = recognise(&path).expect("recognised");
    read_whole(&file).expect("reads")
}

fn types(s: &CollectedSession) -> Vec<&'static str> {
    s.events.iter().map(|e| e.event_type.as_str()).collect()
}

#[test]
fn the_fixture_is_what_aiders_writer_writes() {
    let on_disk = std::fs::read_to_string(fixture_path()).expect("fixture");
    assert_eq!(on_disk, fixture_writer().text());
}

#[test]
fn a_run_is_a_session_with_person_reply_and_tool_blocks_told_apart() {
    let file = recognise(&fixture_path()).expect("recognised");
    assert_eq!(file.kind, Agent::Aider);
    let (sink, end) = read_whole(&file).expect("reads");
    // Three runs with events; the empty same-second run is no session.
    let ids: Vec<String> = sink
        .sessions
        .iter()
        .filter_map(|s| s.start.as_ref().map(|st| st.session_id.clone()))
        .collect();
    assert_eq!(ids.len(), 3, "{ids:?}");
    assert!(ids[0].starts_with("aider-") && ids[0].ends_with("-20261001091500"));
    assert!(ids[2].ends_with("-20261001110000-3"), "{ids:?}");
    let run = &sink.sessions[0];
    assert_eq!(
        types(run),
        vec![
            "system/context",
            "user/message",
            "assistant/message",
            "tool/result",
            "user/command",
            "tool/result",
            "user/message",
            "assistant/message",
            "tool/result",
            "user/message",
        ]
    );
    let ev = &run.events;
    assert_eq!(
        ev[1].text,
        "the nginx upstream times out after 30s\nfix the proxy_read_timeout"
    );
    assert!(ev[1].human);
    // The reply keeps its own heading, quote and the `####` inside its edit block.
    for part in ["#### Plan", "> quoting the docs", "#### not a prompt"] {
        assert!(ev[2].text.contains(part), "{part}: {}", ev[2].text);
    }
    // The multi-line commit message is one tool block with the edit it reports.
    assert!(ev[3].text.contains("The upstream needs more than 30 s"));
    assert!(ev[3].facts.contains(&Fact::FileEdit {
        path: "deploy/nginx.conf".into()
    }));
    assert!(!ev[3].is_error);
    assert!(ev[8].is_error, "{}", ev[8].text);
    let meta = &run.meta;
    assert_eq!(meta.model.as_deref(), Some("gpt-4o"));
    assert_eq!(meta.version.as_deref(), Some("v0.86.1"));
    assert_eq!(
        meta.title.as_deref(),
        Some("the nginx upstream times out after 30s")
    );
    assert_eq!(
        meta.cwd.as_deref(),
        fixture_path().parent().and_then(|p| p.to_str())
    );
    assert!(meta
        .created_at
        .as_deref()
        .is_some_and(|t| t.starts_with("2026-10-01T09:15:00")));
    assert_eq!(
        run.outcome,
        Some(crate::sources::episodes::outcome::Outcome::Success)
    );
    assert_eq!(
        types(&sink.sessions[1]),
        vec!["system/context", "user/command", "assistant/message"]
    );
    assert_eq!(
        sink.sessions[1].meta.model.as_deref(),
        Some("claude-3-5-sonnet")
    );
    assert_eq!(end.total.events, 14);
}

#[test]
fn reading_after_every_write_gives_the_one_pass_events() {
    let tmp = tempfile::tempdir().expect("tmp");
    let w = fixture_writer();
    let (one_pass, _) = read_text(tmp.path(), &w.text());
    let path = tmp.path().join(".aider.chat.history.md");
    std::fs::write(&path, "").expect("empty");
    let file = TranscriptFile {
        path: path.clone(),
        kind: Agent::Aider,
        layout: crate::sources::episodes::discover::Layout::Main,
    };
    let limits = ReadLimits {
        max_line_bytes: 1 << 20,
    };
    let (mut cursor, mut offset) = (None::<String>, 0u64);
    let mut by_session: Vec<(String, Vec<ParsedEvent>)> = Vec::new();
    let mut text = String::new();
    for write in &w.writes {
        text.push_str(write);
        std::fs::write(&path, &text).expect("append");
        let mut sink = CollectSink::default();
        let from = cursor.as_deref().map(|c| Resume { offset, cursor: c });
        let end = Agent::Aider
            .reader()
            .read(&file, from, limits, &mut sink)
            .expect("reads");
        for s in sink.sessions {
            let id = s.start.map(|st| st.session_id).expect("named");
            match by_session.iter_mut().find(|(i, _)| *i == id) {
                Some((_, evs)) => evs.extend(s.events),
                None => by_session.push((id, s.events)),
            }
        }
        cursor = Some(end.cursor);
        offset = end.end;
    }
    let whole: Vec<(String, Vec<ParsedEvent>)> = one_pass
        .sessions
        .into_iter()
        .map(|s| {
            (
                s.start.map(|st| st.session_id).unwrap_or_default(),
                s.events,
            )
        })
        .collect();
    // Tool lines arrive one write at a time: a resumed read may cut a tool block in two, so
    // tool text is compared as lines; every other event is the same.
    let norm = |v: &[(String, Vec<ParsedEvent>)]| -> Vec<(String, String, String)> {
        v.iter()
            .flat_map(|(id, evs)| {
                evs.iter().flat_map(move |e| {
                    let parts: Vec<String> = if matches!(
                        e.event_type,
                        EventType::ToolResult | EventType::SystemContext
                    ) {
                        e.text.lines().map(str::to_string).collect()
                    } else {
                        vec![e.text.clone()]
                    };
                    parts
                        .into_iter()
                        .filter(|p| !p.trim().is_empty())
                        .map(move |p| (id.clone(), e.event_type.as_str().to_string(), p))
                })
            })
            .collect()
    };
    assert_eq!(norm(&by_session), norm(&whole));
}

#[test]
fn a_file_without_the_writers_marks_is_read_by_prefix() {
    let Some(p) = realdata("aider/kenn-io-agentsview/myrepo/.aider.chat.history.md") else {
        return;
    };
    let file = recognise(&p).expect("recognised");
    let (sink, _) = read_whole(&file).expect("reads");
    assert_eq!(sink.sessions.len(), 2, "the header-only run is no session");
    let run = &sink.sessions[0];
    assert_eq!(
        types(run),
        vec![
            "user/message",
            "assistant/message",
            "user/message",
            "assistant/message",
            "tool/result"
        ]
    );
    let edits = run.events[4]
        .facts
        .iter()
        .filter(|f| matches!(f, Fact::FileEdit { .. }))
        .count();
    assert_eq!(edits, 2);
    assert_eq!(
        run.meta.title.as_deref(),
        Some("add a retry to the webhook")
    );
}

#[test]
fn the_real_history_of_1133_runs() {
    let Some(p) = realdata("aider/Aider-AI-aider/tests/fixtures/chat-history.md") else {
        return;
    };
    let file = recognise(&p).expect("a .md with run headers is recognised");
    let (sink, end) = read_whole(&file).expect("reads");
    let text = std::fs::read_to_string(&p).expect("text");
    let runs = sink.sessions.len();
    // Every run with anything in it, plus the fragment before the first header.
    let with_content = text
        .split("\n# aider chat started at ")
        .skip(1)
        .filter(|run| run.lines().skip(1).any(|l| !l.trim().is_empty()))
        .count();
    assert_eq!(runs, with_content + 1);
    let all: Vec<&ParsedEvent> = sink.sessions.iter().flat_map(|s| &s.events).collect();
    let count = |t: EventType| all.iter().filter(|e| e.event_type == t).count();
    // Each `#### ` line the writer wrote (hard break) is in a person's event, verbatim.
    let said: std::collections::HashSet<&str> = all
        .iter()
        .filter(|e| e.event_type.is_human())
        .flat_map(|e| e.text.lines().map(str::trim))
        .collect();
    let missing: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("#### ") && l.ends_with("  "))
        .filter_map(|l| l.get(5..).map(str::trim))
        .filter(|l| !l.is_empty() && *l != "<blank>" && !said.contains(l))
        .collect();
    assert!(missing.is_empty(), "{missing:#?}");
    let applied = text
        .lines()
        .filter(|l| l.starts_with("> Applied edit to "))
        .count();
    let edits = all
        .iter()
        .flat_map(|e| &e.facts)
        .filter(|f| matches!(f, Fact::FileEdit { .. }))
        .count();
    assert_eq!(edits, applied);
    // Each reply is followed by its token report.
    let reports = text.lines().filter(|l| l.starts_with("> Tokens: ")).count();
    assert!(count(EventType::AssistantMessage) >= reports);
    assert!(count(EventType::UserCommand) > 50);
    assert!(all.iter().any(|e| e.is_error));
    assert!(
        sink.sessions
            .iter()
            .filter(|s| s.meta.model.is_some())
            .count()
            > 900
    );
    assert_eq!(end.total.skipped(), 0);
    assert_eq!(end.end, text.len() as u64);
    println!(
        "aider real: {runs} runs, {} events ({} user, {} assistant, {} tool)",
        all.len(),
        count(EventType::UserMessage) + count(EventType::UserCommand),
        count(EventType::AssistantMessage),
        count(EventType::ToolResult)
    );
}

#[test]
fn discovery_honours_the_env_file_and_finds_the_file_in_a_project() {
    let env = crate::sources::episodes::agent::Env::of(&[(
        "AIDER_CHAT_HISTORY_FILE",
        Path::new("/srv/notes/aider.md"),
    )]);
    let roots = crate::sources::episodes::agents::roots_in(&env);
    assert!(roots.contains(&(Agent::Aider, PathBuf::from("/srv/notes/aider.md"))));
    let tmp = tempfile::tempdir().expect("tmp");
    assert!(
        crate::sources::episodes::agents::project_stores(&[tmp.path().to_path_buf()]).is_empty()
    );
    std::fs::write(tmp.path().join(".aider.chat.history.md"), "").expect("write");
    assert_eq!(
        crate::sources::episodes::agents::project_stores(&[tmp.path().to_path_buf()]),
        vec![tmp.path().join(".aider.chat.history.md")]
    );
    // A README is not a history; another name holding a run header is.
    std::fs::write(tmp.path().join("README.md"), "# readme\n").expect("write");
    assert!(recognise(&tmp.path().join("README.md")).is_none());
    std::fs::write(
        tmp.path().join("history.md"),
        "\n# aider chat started at 2026-01-02 03:04:05\n\n#### hi  \n",
    )
    .expect("write");
    assert_eq!(
        recognise(&tmp.path().join("history.md")).map(|f| f.kind),
        Some(Agent::Aider)
    );
    assert_eq!(
        crate::sources::episodes::agents::resume_command("aider", "aider-1-2", Some("/srv/app"))
            .as_deref(),
        Some("cd /srv/app && aider --restore-chat-history")
    );
}

#[test]
fn hostile_bytes_are_counted_not_fatal() {
    let tmp = tempfile::tempdir().expect("tmp");
    let mut text = String::from("\n# aider chat started at 2026-01-02 03:04:05\n\n#### hi  \n");
    text.push_str("\u{0}\u{0}garbage \u{1b}[31m red\n");
    text.push_str(&"x".repeat(9 << 20));
    text.push('\n');
    text.push_str("# aider chat started at 9999-99-99 99:99:99\n");
    let (sink, end) = read_text(tmp.path(), &text);
    assert_eq!(sink.sessions.len(), 1);
    assert_eq!(end.total.skipped_oversized, 1);
    // Invalid UTF-8 (Aider writes with errors="ignore" in the user's encoding).
    let path = tmp.path().join(".aider.chat.history.md");
    std::fs::write(
        &path,
        b"\n# aider chat started at 2026-01-02 03:04:05\n\n#### caf\xe9  \n",
    )
    .expect("write");
    let (sink, _) = read_whole(&recognise(&path).expect("recognised")).expect("reads");
    assert!(sink.sessions[0].events[0].text.starts_with("caf"));
}

fn realdata(rel: &str) -> Option<PathBuf> {
    let beside = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/realdata");
    let root = [beside, PathBuf::from("/work/shared/realdata")]
        .into_iter()
        .find(|p| p.join("SOURCES.md").is_file());
    match root.map(|r| r.join(rel)).filter(|p| p.exists()) {
        Some(p) => Some(p),
        None => {
            println!("skipped: ../shared/realdata/{rel} is absent");
            None
        }
    }
}
