//! Format gaps of the agents the episodes lane reads: a renamed Claude Code transcript keeps
//! its session id, Cursor's plain-text agent transcripts, Kimi CLI, iFlow CLI, Continue and Amp
//! (whose sessions are JSON documents rewritten whole), the OpenHands CLI (a folder per
//! conversation: its state file and one file per event), Goose (one SQLite database; its
//! fixture is SQL text in `fixtures/agents/goose/`). Each has a
//! synthetic fixture in `fixtures/formats/<agent>/` (the agent's exact on-disk format, with a
//! subagent where the format has them, a failing tool and a planted secret) and a test on its
//! real samples in `../shared/realdata` (skipped with a note where absent).

mod common;

use std::path::{Path, PathBuf};

use knowledge::sources::episodes::agent::read_whole;
use knowledge::sources::episodes::agents::{self, Agent};
use knowledge::sources::episodes::discover::{discover, Layout};
use knowledge::sources::episodes::index::{index_episodes, IndexOptions, IndexSummary};
use knowledge::sources::episodes::model::Fact;

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/formats")
        .join(rel)
}

fn index(db: &Path, roots: Vec<PathBuf>) -> IndexSummary {
    index_episodes(db, &IndexOptions::new(roots), &mut |_| {}).expect("index")
}

fn copy_tree(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).expect("mkdir");
    for e in std::fs::read_dir(src).expect("ls").flatten() {
        let to = dst.join(e.file_name());
        if e.path().is_dir() {
            copy_tree(&e.path(), &to);
        } else {
            std::fs::copy(e.path(), &to).expect("copy");
        }
    }
}

/// `(session_id, source, cwd, parent, title or description, outcome)` of every session.
type SessionRow = (
    String,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    String,
);

fn sessions(db: &Path) -> Vec<SessionRow> {
    let c = knowledge::sources::sqlite::open_ro(db).expect("open");
    let mut stmt = c
        .prepare(
            "SELECT session_id, source, cwd, parent_session_id,
                    coalesce(agent_description, title), outcome
             FROM sessions ORDER BY session_id",
        )
        .expect("q");
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
            ))
        })
        .expect("rows");
    rows.flatten().collect()
}

fn scalar(db: &Path, sql: &str) -> i64 {
    let c = knowledge::sources::sqlite::open_ro(db).expect("open");
    c.query_row(sql, [], |r| r.get(0)).expect("scalar")
}

fn all_text(db: &Path) -> String {
    let c = knowledge::sources::sqlite::open_ro(db).expect("open");
    let mut stmt = c.prepare("SELECT text FROM events").expect("q");
    let rows = stmt.query_map([], |r| r.get::<_, String>(0)).expect("rows");
    rows.flatten().collect::<Vec<_>>().join("\n")
}

const SHOP: &str = "4f1d2c3b-8a9e-4b7c-9d6e-5f4a3b2c1d0e";

#[test]
fn a_renamed_claude_transcript_keeps_the_session_its_records_name() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("episodes.sqlite");
    let s = index(&db, vec![fixture("claude")]);
    assert_eq!((s.files_new, s.lines.skipped()), (2, 0), "{s:?}");
    let got = sessions(&db);
    let ids: Vec<&str> = got.iter().map(|s| s.0.as_str()).collect();
    let child = format!("{SHOP}/agent-a1b2c3d");
    assert_eq!(
        ids,
        vec![SHOP, child.as_str()],
        "not the file stem `checkout-fix`"
    );
    assert_eq!(got[1].3.as_deref(), Some(SHOP), "the subagent's parent");
    assert_eq!(got[0].5, "success");
    assert_eq!(
        agents::resume_command("claude", SHOP, got[0].2.as_deref()).as_deref(),
        Some(format!("cd /home/dev/shop && claude --resume {SHOP}").as_str())
    );
    assert_eq!(
        scalar(&db, "SELECT count(*) FROM events WHERE is_error=1"),
        1
    );
    assert!(!all_text(&db).contains("sk_test_51shopFixtureKey9x8y7z"));
    // The same transcript under its own name elsewhere is the same session: stored once.
    let copy = dir.path().join("copy/-home-dev-shop");
    std::fs::create_dir_all(&copy).expect("mkdir");
    std::fs::copy(
        fixture("claude/projects/-home-dev-shop/checkout-fix.jsonl"),
        copy.join(format!("{SHOP}.jsonl")),
    )
    .expect("copy");
    let again = index(&db, vec![fixture("claude"), dir.path().join("copy")]);
    assert_eq!(
        (again.events_added, again.files_copies),
        (0, 1),
        "{again:?}"
    );
}

#[test]
fn real_claude_transcripts_named_for_their_task_keep_their_session_ids() {
    let Some(src) = common::realdata::path("claude/jnarowski-agentcmd") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("episodes.sqlite");
    let project = dir.path().join("projects/-home-dev-agentcmd");
    std::fs::create_dir_all(&project).expect("mkdir");
    for name in [
        "full-session-two.jsonl",
        "06381696-0074-49f8-863e-6ad4fac507f9.jsonl",
    ] {
        std::fs::copy(src.join(name), project.join(name)).expect("copy");
    }
    index(&db, vec![dir.path().join("projects")]);
    let ids: Vec<String> = sessions(&db).into_iter().map(|s| s.0).collect();
    assert_eq!(
        ids,
        vec![
            "06381696-0074-49f8-863e-6ad4fac507f9".to_string(),
            "8a2518dd-ff41-4d5f-83a1-407b03598cc6".to_string()
        ]
    );
}

const CURSOR: &str = "7a1c0de0-1111-4222-8333-000000000001";

#[test]
fn cursor_text_transcripts_read_as_the_jsonl_ones_with_their_subagent() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("episodes.sqlite");
    let root = fixture("cursor/projects");
    let found = discover(&root);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found.iter().all(|f| f.kind == Agent::Cursor));
    assert!(matches!(
        &found[1].layout,
        Layout::Subagent { parent_session_hint: Some(p), .. } if p == CURSOR
    ));
    let s = index(&db, vec![root.clone()]);
    assert_eq!((s.files_new, s.lines.skipped()), (2, 0), "{s:?}");
    let got = sessions(&db);
    assert_eq!(got[0].0, CURSOR);
    assert_eq!(got[0].5, "success");
    assert_eq!(got[1].3.as_deref(), Some(CURSOR));
    assert_eq!(
        got[1].4.as_deref(),
        Some("Find where the preview renders markdown tables and how header cells are read.")
    );
    assert_eq!(
        scalar(
            &db,
            "SELECT count(*) FROM events WHERE event_type='tool/result' AND is_error=1"
        ),
        1
    );
    assert_eq!(
        scalar(
            &db,
            "SELECT count(*) FROM events WHERE event_type='agent/prompt'"
        ),
        1
    );
    assert_eq!(
        scalar(
            &db,
            "SELECT count(*) FROM events WHERE facts LIKE '%src/preview/table.ts%'"
        ),
        1,
        "the StrReplace edit"
    );
    assert!(!all_text(&db).contains("ntk-fixture-5d4c3b2a1f"));
    assert_eq!(
        agents::resume_command("cursor", CURSOR, None).as_deref(),
        Some(format!("cursor-agent --resume {CURSOR}").as_str())
    );
    let again = index(&db, vec![root]);
    assert_eq!((again.files_unchanged, again.events_added), (2, 0));
}

const KIMI: &str = "3c2b1a09-8f7e-4d6c-9b5a-4e3d2c1b0a99";

#[test]
fn kimi_sessions_subagent_cwd_errors_and_secrets() {
    let dir = tempfile::tempdir().expect("tmp");
    let share = dir.path().join("kimi");
    copy_tree(&fixture("kimi"), &share);
    let db = dir.path().join("episodes.sqlite");
    let roots = agents::roots_in(&knowledge::sources::episodes::agent::Env::of(&[(
        "KIMI_SHARE_DIR",
        &share,
    )]));
    let kimi_root = roots
        .into_iter()
        .find(|(a, _)| *a == Agent::Kimi)
        .map(|(_, r)| r)
        .expect("a Kimi root");
    assert_eq!(kimi_root, share.join("sessions"));
    let s = index(&db, vec![kimi_root]);
    assert_eq!((s.files_new, s.lines.skipped()), (2, 0), "{s:?}");
    let got = sessions(&db);
    assert_eq!(got[0].0, KIMI);
    assert_eq!(got[0].1, "kimi");
    assert_eq!(
        got[0].2.as_deref(),
        Some("/home/dev/scheduler"),
        "from kimi.json"
    );
    assert_eq!(got[0].5, "success");
    assert_eq!(got[1].0, format!("{KIMI}/agent-explore-1"));
    assert_eq!(got[1].3.as_deref(), Some(KIMI));
    assert_eq!(
        got[1].4.as_deref(),
        Some("Find where the cron parser reads */N steps.")
    );
    assert_eq!(
        scalar(
            &db,
            "SELECT count(*) FROM events WHERE event_type='tool/result' AND is_error=1"
        ),
        1
    );
    assert!(!all_text(&db).contains("kimi-fixture-p4ss-8c7b"));
    assert_eq!(
        agents::resume_command("kimi", KIMI, Some("/home/dev/scheduler")).as_deref(),
        Some(format!("cd /home/dev/scheduler && kimi --session {KIMI}").as_str())
    );
}

#[test]
fn kimi_real_flat_sessions_link_their_read_context_subagents() {
    let Some(root) = common::realdata::path("kimi/MoonshotAI-kimi-cli") else {
        return;
    };
    let found = discover(&root);
    assert_eq!(found.len(), 5, "{found:?}");
    assert!(found.iter().all(|f| f.kind == Agent::Kimi));
    let subagents = found
        .iter()
        .filter(|f| matches!(f.layout, Layout::Subagent { .. }))
        .count();
    assert_eq!(subagents, 3);
    let main = found
        .iter()
        .find(|f| {
            f.path
                .ends_with("531d195b-6436-426e-b010-4bf723a992de.jsonl")
        })
        .expect("main");
    let (sink, end) = read_whole(main).expect("read");
    assert_eq!(end.total.skipped(), 0);
    let events = &sink.sessions[0].events;
    let links: Vec<&str> = events
        .iter()
        .flat_map(|e| &e.facts)
        .filter_map(|f| match f {
            Fact::AgentLink { agent_id, .. } => Some(agent_id.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        links.contains(&"read_1") && links.contains(&"read_2"),
        "{links:?}"
    );
    assert!(events.iter().any(|e| e.facts.contains(&Fact::Command {
        program: "python".into()
    })));
    // This era writes a failed command as `<system>Command failed with exit code: N.</system>`.
    let mut failed = 0;
    for file in &found {
        let (sink, end) = read_whole(file).expect("read");
        assert_eq!(end.total.skipped(), 0, "{}", file.path.display());
        failed += sink.sessions[0]
            .events
            .iter()
            .filter(|e| e.event_type == "tool/result" && e.is_error)
            .count();
    }
    assert_eq!(failed, 3);
}

const IFLOW: &str = "session-2a3b4c5d-6e7f-4a8b-9c0d-1e2f3a4b5c6d";

#[test]
fn iflow_results_are_read_from_gemini_parts_and_streamed_calls_kept_once() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("episodes.sqlite");
    let s = index(&db, vec![fixture("iflow")]);
    assert_eq!((s.files_new, s.lines.skipped()), (1, 0), "{s:?}");
    let got = sessions(&db);
    assert_eq!((got[0].0.as_str(), got[0].1.as_str()), (IFLOW, "iflow"));
    assert_eq!(got[0].2.as_deref(), Some("/home/dev/invoices"));
    assert_eq!(got[0].5, "success");
    assert_eq!(
        scalar(
            &db,
            "SELECT count(*) FROM events WHERE event_type='assistant/tool_use'"
        ),
        2,
        "the streamed repeat of call_a1 is kept once"
    );
    assert_eq!(
        scalar(
            &db,
            "SELECT count(*) FROM events WHERE event_type='tool/result' AND is_error=1
             AND text LIKE '%unknown filter%'"
        ),
        1
    );
    assert_eq!(
        scalar(
            &db,
            "SELECT count(*) FROM events WHERE facts LIKE '%template.html%'"
        ),
        1
    );
    assert!(!all_text(&db).contains("iflow-fixture-s3cr3t-42"));
    assert_eq!(
        agents::resume_command("iflow", IFLOW, None).as_deref(),
        Some(format!("iflow --resume {IFLOW}").as_str())
    );
}

#[test]
fn iflow_real_session_reads_every_result() {
    let Some(root) = common::realdata::path("iflow/kenn-io-agentsview") else {
        return;
    };
    let file = discover(&root).remove(0);
    assert_eq!(file.kind, Agent::IFlow);
    let (sink, end) = read_whole(&file).expect("read");
    assert_eq!(end.total.skipped(), 0);
    let s = &sink.sessions[0];
    assert_eq!(
        s.meta.session_id.as_deref(),
        Some("session-5de701fc-7454-4858-a249-95cac4fd3b51")
    );
    assert_eq!(
        s.meta.cwd.as_deref(),
        Some("C:\\exp\\docker-image-retagger")
    );
    let results: Vec<_> = s
        .events
        .iter()
        .filter(|e| e.event_type == "tool/result")
        .collect();
    assert_eq!(results.len(), 6, "every tool_result line");
    assert!(results.iter().all(|e| !e.text.trim().is_empty()));
    let mut calls: Vec<&str> = s
        .events
        .iter()
        .filter(|e| e.event_type == "assistant/tool_use")
        .filter_map(|e| e.tool_use_id.as_deref())
        .collect();
    let n = calls.len();
    calls.sort();
    calls.dedup();
    assert_eq!(calls.len(), n, "a streamed repeat is kept once");
}

const OC_PARENT: &str = "ses_7f01a2b3c4d5PARENT";
const OC_CHILD: &str = "ses_7f01a2b3c4d6CHILD";

#[test]
fn opencode_json_tree_sessions_subagent_tool_error_secret_and_re_read_on_change() {
    let dir = tempfile::tempdir().expect("tmp");
    let data = dir.path().join("share/opencode");
    copy_tree(&fixture("opencode"), &data);
    let env = knowledge::sources::episodes::agent::Env::of(&[
        ("HOME", Path::new("/nohome")),
        ("XDG_DATA_HOME", &dir.path().join("share")),
    ]);
    let roots: Vec<PathBuf> = agents::roots_in(&env)
        .into_iter()
        .filter(|(a, _)| *a == Agent::OpenCode)
        .map(|(_, r)| r)
        .filter(|r| r.exists())
        .collect();
    assert_eq!(roots, vec![data.join("storage/session")]);
    let db = dir.path().join("episodes.sqlite");
    let s = index(&db, roots.clone());
    assert_eq!((s.files_new, s.lines.skipped()), (2, 0), "{s:?}");
    let got = sessions(&db);
    assert_eq!(got[0].0, OC_PARENT);
    assert_eq!(got[0].1, "opencode");
    assert_eq!(got[0].2.as_deref(), Some("/home/dev/mailer"));
    assert_eq!(got[0].5, "success");
    assert_eq!(got[1].0, OC_CHILD);
    assert_eq!(got[1].3.as_deref(), Some(OC_PARENT));
    assert_eq!(got[1].4.as_deref(), Some("Find the bounce classifier"));
    assert_eq!(
        scalar(
            &db,
            "SELECT count(*) FROM events WHERE event_type='tool/result' AND is_error=1"
        ),
        1
    );
    assert_eq!(
        scalar(
            &db,
            "SELECT count(*) FROM events WHERE event_type='agent/prompt'"
        ),
        1
    );
    assert_eq!(
        scalar(
            &db,
            "SELECT count(*) FROM events WHERE facts LIKE '%bounce.py%'"
        ),
        1
    );
    assert!(!all_text(&db).contains("oc-fixture-m41l-9a8b"));
    // Unchanged: skipped by fingerprint. OpenCode rewrites the session file as it goes on:
    // the session is re-read, and only what is new is added.
    let again = index(&db, roots.clone());
    assert_eq!((again.files_unchanged, again.events_added), (2, 0));
    // A part written on its own (the session file untouched) is seen by the next run.
    let part = data.join("storage/part/msg_7f01a2b3c502/prt_7f01a2b3c502f.json");
    std::fs::write(
        &part,
        r#"{"id":"prt_7f01a2b3c502f","sessionID":"ses_7f01a2b3c4d5PARENT","messageID":"msg_7f01a2b3c502","type":"text","text":"The walrusquota retry cap is five."}"#,
    )
    .expect("write part");
    let parted = index(&db, roots.clone());
    assert_eq!(
        (parted.files_rewritten, parted.events_added),
        (1, 1),
        "{parted:?}"
    );
    assert!(all_text(&db).contains("walrusquota"));
    let msg = data
        .join("storage/message")
        .join(OC_PARENT)
        .join("msg_7f01a2b3c503.json");
    std::fs::write(
        &msg,
        r#"{"id":"msg_7f01a2b3c503","sessionID":"ses_7f01a2b3c4d5PARENT","role":"user","time":{"created":1783231300000},"agent":"build"}"#,
    )
    .expect("write");
    let part_dir = data.join("storage/part/msg_7f01a2b3c503");
    std::fs::create_dir_all(&part_dir).expect("mkdir");
    std::fs::write(
        part_dir.join("prt_7f01a2b3c503a.json"),
        r#"{"id":"prt_7f01a2b3c503a","messageID":"msg_7f01a2b3c503","type":"text","text":"thanks, bounces are retried now"}"#,
    )
    .expect("write");
    let session_file = data
        .join("storage/session/global")
        .join(format!("{OC_PARENT}.json"));
    let text = std::fs::read_to_string(&session_file).expect("read");
    std::fs::write(
        &session_file,
        text.replace("1783231290000", "1783231300000"),
    )
    .expect("touch");
    let after = index(&db, roots);
    assert_eq!(
        (after.files_rewritten, after.events_added),
        (1, 1),
        "{after:?}"
    );
}

#[test]
fn opencode_real_json_trees_read_in_both_part_layouts() {
    let Some(root) = common::realdata::path("opencode/jazzyalex-agent-sessions") else {
        return;
    };
    let found = discover(&root);
    let trees: Vec<_> = found
        .iter()
        .filter(|f| f.path.extension().is_some_and(|e| e == "json"))
        .collect();
    assert_eq!(trees.len(), 3, "{found:?}");
    for file in trees {
        assert_eq!(file.kind, Agent::OpenCode);
        let (sink, end) = read_whole(file).expect("read");
        assert_eq!(end.total.skipped_broken, 0, "{}", file.path.display());
        let s = &sink.sessions[0];
        assert!(s.meta.session_id.is_some());
        assert!(s.meta.cwd.is_some(), "{}", file.path.display());
        if file.path.ends_with("ses_s_stage0_drift.json") {
            // The legacy tree keeps its parts flat in `part/`, each naming its message.
            assert!(s
                .events
                .iter()
                .any(|e| e.event_type == "tool/result" && e.text.contains("# Title")));
            assert!(s
                .events
                .iter()
                .any(|e| e.text == "Read README and extracted the title."));
        }
    }
}

const OC_FLAT: &str = "ses_7f02f1a7000aFLAT";

/// A tree that keeps its parts flat in `part/` (each naming its message; OpenCode's own writer
/// keeps `part/<messageID>/`, other tools' trees do this): read, and re-read on every change of
/// a flat part — a new one, and one rewritten in place, which moves no folder's mtime.
#[test]
fn opencode_flat_parts_are_read_and_re_read_whenever_one_changes() {
    let dir = tempfile::tempdir().expect("tmp");
    let storage = dir.path().join("share/opencode/storage");
    copy_tree(&fixture("opencode_flat/storage"), &storage);
    let roots = vec![storage.join("session")];
    let db = dir.path().join("episodes.sqlite");
    let s = index(&db, roots.clone());
    assert_eq!((s.files_new, s.lines.skipped()), (1, 0), "{s:?}");
    let got = sessions(&db);
    assert_eq!(got[0].0, OC_FLAT);
    assert_eq!(got[0].2.as_deref(), Some("/home/dev/importer"));
    let text = all_text(&db);
    assert!(text.contains("stalls on files over a gigabyte"), "{text}");
    assert!(text.contains("48000000 data/big.csv"), "{text}");
    assert!(text.contains("loads every row"), "{text}");
    let unchanged = index(&db, roots.clone());
    assert_eq!((unchanged.files_unchanged, unchanged.events_added), (1, 0));

    // Rewritten in place: the folder's mtime stays, the part's moves.
    let part = storage.join("part/prt_7f02f1a70102b.json");
    std::fs::write(
        &part,
        r#"{"id":"prt_7f02f1a70102b","messageID":"msg_7f02f1a70102","type":"text","text":"The reader loads every row before the first insert; the kestrelbatch size fixes it."}"#,
    )
    .expect("rewrite part");
    let rewritten = index(&db, roots.clone());
    assert_eq!(rewritten.files_rewritten, 1, "{rewritten:?}");
    assert!(all_text(&db).contains("kestrelbatch"));

    // A new flat part of the same message, and a broken one that names no message: the first
    // is read, the second skipped and counted.
    std::fs::write(
        storage.join("part/prt_7f02f1a70102c.json"),
        r#"{"id":"prt_7f02f1a70102c","messageID":"msg_7f02f1a70102","type":"text","text":"Batches of ten thousand rows keep the gannetqueue short."}"#,
    )
    .expect("new part");
    std::fs::write(
        storage.join("part/prt_7f02f1a70102d.json"),
        b"{\"id\":\"prt_",
    )
    .expect("torn part");
    let grown = index(&db, roots);
    assert_eq!(
        (
            grown.files_rewritten,
            grown.events_added,
            grown.lines.skipped_broken
        ),
        (1, 1, 1),
        "{grown:?}"
    );
    let text = all_text(&db);
    assert!(text.contains("gannetqueue"));
    assert_eq!(
        text.matches("kestrelbatch").count(),
        1,
        "a part read again is stored once"
    );
}

const CONTINUE_IDE: &str = "7c1e2d3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f";
const CONTINUE_CLI: &str = "2e3f4a5b-6c7d-4e8f-9a0b-1c2d3e4f5a6b";

/// `$HOME/.continue/sessions` with the fixture's two sessions (an IDE one, a `cn` one) and its
/// index, found as the default root.
fn continue_home(dir: &Path) -> PathBuf {
    let home = dir.join("home");
    copy_tree(&fixture("continue"), &home.join(".continue"));
    let env = knowledge::sources::episodes::agent::Env::of(&[("HOME", &home)]);
    let roots: Vec<PathBuf> = agents::roots_in(&env)
        .into_iter()
        .filter(|(a, _)| *a == Agent::Continue)
        .map(|(_, r)| r)
        .collect();
    assert_eq!(roots, vec![home.join(".continue/sessions")]);
    roots.into_iter().next().expect("root")
}

#[test]
fn continue_sessions_of_the_ide_and_the_cli_with_cwd_times_errors_and_secrets() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = continue_home(dir.path());
    let found = discover(&root);
    assert_eq!(found.len(), 2, "the index is no session: {found:?}");
    assert!(found.iter().all(|f| f.kind == Agent::Continue));
    let db = dir.path().join("episodes.sqlite");
    let s = index(&db, vec![root.clone()]);
    assert_eq!((s.files_new, s.lines.skipped()), (2, 0), "{s:?}");
    let got = sessions(&db);
    assert_eq!(
        (got[0].0.as_str(), got[0].1.as_str()),
        (CONTINUE_CLI, "continue")
    );
    assert_eq!(got[0].2.as_deref(), Some("/home/dev/ledger"));
    assert_eq!(
        got[0].4, None,
        "`Untitled Session` is Continue's placeholder"
    );
    assert_eq!(got[0].5, "success");
    assert_eq!(got[1].0, CONTINUE_IDE);
    assert_eq!(
        got[1].2.as_deref(),
        Some("/home/dev/invoice export"),
        "the IDE's file:// URI, decoded"
    );
    assert_eq!(
        got[1].4.as_deref(),
        Some("Invoice export drops EU VAT line")
    );
    assert_eq!(got[1].5, "success", "a failed test, fixed, then thanks");
    // The session's start is its entry's `dateCreated` in `sessions.json`.
    assert_eq!(
        scalar(
            &db,
            &format!(
                "SELECT count(*) FROM sessions WHERE session_id='{CONTINUE_IDE}'
                 AND created_at='2026-07-08T08:40:00.000Z' AND last_event_at > created_at"
            )
        ),
        1
    );
    // Each call's result once: from its state, not again from the IDE's `tool` message.
    assert_eq!(
        scalar(
            &db,
            "SELECT count(*) FROM events WHERE event_type='tool/result'"
        ),
        7
    );
    assert_eq!(
        scalar(
            &db,
            "SELECT count(*) FROM events WHERE event_type='tool/result' AND is_error=1
             AND text LIKE '%VAT line missing%'"
        ),
        1
    );
    for fact in [
        "src/billing/export.py",
        "ledger/rules.toml",
        "\"program\":\"pytest\"",
        "\"program\":\"ledger\"",
        "reconciler",
    ] {
        assert!(
            scalar(
                &db,
                &format!("SELECT count(*) FROM events WHERE facts LIKE '%{fact}%'")
            ) >= 1,
            "{fact}"
        );
    }
    assert_eq!(
        scalar(
            &db,
            "SELECT count(*) FROM events WHERE event_type='assistant/thinking'"
        ),
        1
    );
    let text = all_text(&db);
    assert!(!text.contains("continue-fixture-s3cr3t-19"), "{text}");
    assert!(!text.contains("EU = {"), "attached context is not indexed");
    assert_eq!(
        agents::resume_command("continue", CONTINUE_IDE, got[1].2.as_deref()).as_deref(),
        Some(format!("cd '/home/dev/invoice export' && cn --fork {CONTINUE_IDE}").as_str())
    );
    let again = index(&db, vec![root.clone()]);
    assert_eq!((again.files_unchanged, again.events_added), (2, 0));

    // Continue rewrites the whole document on every save: the session is read again and only
    // what is new is added.
    let cli = root.join(format!("{CONTINUE_CLI}.json"));
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&cli).expect("read")).expect("json");
    doc["history"]
        .as_array_mut()
        .expect("history")
        .push(serde_json::json!({
            "message": {"role": "assistant", "content": "The okapiledger rule is documented too."},
            "contextItems": []
        }));
    doc["title"] = "Reconcile June".into();
    std::fs::write(&cli, serde_json::to_vec_pretty(&doc).expect("json")).expect("rewrite");
    let rewritten = index(&db, vec![root.clone()]);
    assert_eq!(
        (rewritten.files_rewritten, rewritten.events_added),
        (1, 1),
        "{rewritten:?}"
    );
    assert_eq!(all_text(&db).matches("great, thanks").count(), 1);
    assert_eq!(sessions(&db)[0].4.as_deref(), Some("Reconcile June"));
}

#[test]
fn continue_torn_huge_and_fifo_sessions_are_counted_never_fatal() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = continue_home(dir.path());
    // Torn mid-write, larger than a session is read, and a FIFO named like a session.
    std::fs::write(
        root.join("3f4a5b6c-0000-4000-8000-000000000001.json"),
        b"{\n  \"sessionId\": \"3f4a5b6c-0000-4000-8000-0",
    )
    .expect("torn");
    let huge = std::fs::File::create(root.join("3f4a5b6c-0000-4000-8000-000000000002.json"))
        .expect("huge");
    huge.set_len(65 * 1024 * 1024).expect("sparse");
    let fifo = root.join("3f4a5b6c-0000-4000-8000-000000000003.json");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");
    let db = dir.path().join("episodes.sqlite");
    let s = index(&db, vec![root]);
    assert_eq!(
        (s.lines.skipped_broken, s.lines.skipped_oversized),
        (1, 1),
        "{s:?}"
    );
    assert_eq!(s.failed.len(), 1, "{:?}", s.failed);
    assert!(
        s.failed[0].1.contains("not a regular file"),
        "{:?}",
        s.failed
    );
    assert_eq!(
        scalar(
            &db,
            &format!(
                "SELECT count(*) FROM sessions WHERE session_id IN ('{CONTINUE_IDE}', '{CONTINUE_CLI}')"
            )
        ),
        2,
        "the good sessions are read"
    );
}

/// A JavaScript writer that cut a string inside an emoji writes a lone surrogate escape, and a
/// stray byte may be invalid UTF-8: each costs its characters, never the session kept as one
/// document.
#[test]
fn a_cut_emoji_or_a_bad_byte_costs_a_character_not_a_continue_session() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = continue_home(dir.path());
    let ide = root.join(format!("{CONTINUE_IDE}.json"));
    let whole = std::fs::read(&ide).expect("read");
    let db = dir.path().join("whole.sqlite");
    index(&db, vec![root.clone()]);
    let events = |db: &Path| {
        scalar(
            db,
            &format!("SELECT events FROM sessions WHERE session_id = '{CONTINUE_IDE}'"),
        )
    };
    let expected = events(&db);
    assert!(expected > 3, "{expected}");
    let text = String::from_utf8(whole).expect("utf8");
    let title = "\"title\": \"";
    assert!(text.contains(title), "the fixture has a title");
    // A lone high surrogate escape, then a byte that is no UTF-8, both inside the title.
    let marker = "cut \\ud83d X";
    let mut cut = text
        .replacen(title, &format!("{title}{marker}"), 1)
        .into_bytes();
    let at = String::from_utf8_lossy(&cut)
        .find(marker)
        .expect("the marker")
        + marker.len()
        - 1;
    cut[at] = 0xff;
    std::fs::write(&ide, cut).expect("write");
    let db = dir.path().join("cut.sqlite");
    let s = index(&db, vec![root]);
    assert_eq!(s.lines.skipped_broken, 0, "{s:?}");
    assert_eq!(events(&db), expected);
}

const AMP: &str = "T-019fb1c2-3d4e-7f50-8a6b-7c8d9e0f1a2b";

#[test]
fn amp_threads_with_cwd_times_tool_errors_spawns_skills_and_secrets() {
    let dir = tempfile::tempdir().expect("tmp");
    let share = dir.path().join("share");
    copy_tree(&fixture("amp"), &share.join("amp"));
    let env = knowledge::sources::episodes::agent::Env::of(&[
        ("HOME", Path::new("/nohome")),
        ("XDG_DATA_HOME", &share),
    ]);
    let roots: Vec<PathBuf> = agents::roots_in(&env)
        .into_iter()
        .filter(|(a, _)| *a == Agent::Amp)
        .map(|(_, r)| r)
        .collect();
    assert_eq!(roots, vec![share.join("amp/threads")]);
    let root = roots[0].clone();
    let db = dir.path().join("episodes.sqlite");
    let s = index(&db, roots.clone());
    assert_eq!((s.files_new, s.lines.skipped()), (1, 0), "{s:?}");
    let got = sessions(&db);
    assert_eq!((got[0].0.as_str(), got[0].1.as_str()), (AMP, "amp"));
    assert_eq!(got[0].2.as_deref(), Some("/home/dev/payments"));
    assert_eq!(
        got[0].4.as_deref(),
        Some("Settlement job fails on currency migration")
    );
    assert_eq!(
        got[0].5, "success",
        "a failed migration, fixed, then thanks"
    );
    assert_eq!(
        scalar(
            &db,
            &format!(
                "SELECT count(*) FROM sessions WHERE session_id='{AMP}'
                 AND created_at='2026-07-28T18:34:14.351Z'
                 AND last_event_at='2026-07-28T18:35:47.100Z'"
            )
        ),
        1
    );
    // The user messages that carry results are plumbing: one person's prompt and thanks.
    assert_eq!(scalar(&db, "SELECT count(*) FROM events WHERE human=1"), 2);
    assert_eq!(
        scalar(
            &db,
            "SELECT count(*) FROM events WHERE event_type='tool/result'"
        ),
        5
    );
    assert_eq!(
        scalar(
            &db,
            "SELECT count(*) FROM events WHERE event_type='tool/result' AND is_error=1
             AND text LIKE '%already exists%'"
        ),
        1,
        "exit code 1"
    );
    for fact in [
        "migrations/0042_currency.sql",
        "migrate.sh",
        "Audit later migrations",
        "db-migrations",
    ] {
        assert!(
            scalar(
                &db,
                &format!("SELECT count(*) FROM events WHERE facts LIKE '%{fact}%'")
            ) >= 1,
            "{fact}"
        );
    }
    assert!(!all_text(&db).contains("amp-fixture-s3cr3t-77"));
    assert_eq!(
        agents::resume_command("amp", AMP, got[0].2.as_deref()).as_deref(),
        Some(format!("cd /home/dev/payments && amp threads continue {AMP}").as_str())
    );
    let again = index(&db, roots.clone());
    assert_eq!((again.files_unchanged, again.events_added), (1, 0));

    // Rewritten whole with one more message: read again, only the new message added.
    let path = root.join(format!("{AMP}.json"));
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).expect("read")).expect("json");
    doc["messages"].as_array_mut().expect("messages").push(
        serde_json::json!({"role": "user", "messageId": 13,
            "meta": {"sentAt": 1785263800000_i64},
            "content": [{"type": "text", "text": "also backfill the ibisrate column"}]}),
    );
    std::fs::write(&path, serde_json::to_vec(&doc).expect("json")).expect("rewrite");
    let rewritten = index(&db, roots.clone());
    assert_eq!(
        (rewritten.files_rewritten, rewritten.events_added),
        (1, 1),
        "{rewritten:?}"
    );

    // A thread torn mid-write is counted, never fatal; its file is claimed by name.
    std::fs::write(
        root.join("T-019fb1c2-0000-7000-8000-00000000dead.json"),
        b"{\"v\": 3, \"id\": \"T-019f",
    )
    .expect("torn");
    let torn = index(&db, roots);
    assert_eq!(
        (torn.files_new, torn.lines.skipped_broken, torn.failed.len()),
        (1, 1, 0),
        "{torn:?}"
    );
}

const OPENHANDS: &str = "7d3e9f10-2a4b-4c5d-8e6f-0a1b2c3d4e5f";

#[test]
fn openhands_conversations_with_cwd_times_tool_errors_skills_and_secrets() {
    let dir = tempfile::tempdir().expect("tmp");
    let persist = dir.path().join("persist");
    copy_tree(&fixture("openhands"), &persist);
    let env = knowledge::sources::episodes::agent::Env::of(&[
        ("HOME", Path::new("/nohome")),
        ("OPENHANDS_PERSISTENCE_DIR", &persist),
    ]);
    let roots: Vec<PathBuf> = agents::roots_in(&env)
        .into_iter()
        .filter(|(a, _)| *a == Agent::OpenHands)
        .map(|(_, r)| r)
        .collect();
    assert_eq!(roots, vec![persist.join("conversations")]);
    let conversation = roots[0].join(OPENHANDS.replace('-', ""));
    let db = dir.path().join("episodes.sqlite");
    let s = index(&db, roots.clone());
    assert_eq!((s.files_new, s.lines.skipped()), (1, 0), "{s:?}");
    let got = sessions(&db);
    assert_eq!(got.len(), 1, "the event files are no stores of their own");
    assert_eq!(
        (got[0].0.as_str(), got[0].1.as_str()),
        (OPENHANDS, "openhands")
    );
    assert_eq!(got[0].2.as_deref(), Some("/home/dev/payments"));
    assert_eq!(got[0].5, "success", "a failed test run, fixed, then thanks");
    // Times without a zone, read as UTC.
    assert_eq!(
        scalar(
            &db,
            &format!(
                "SELECT count(*) FROM sessions WHERE session_id='{OPENHANDS}'
                 AND created_at='2026-08-03T09:14:02.118Z'
                 AND last_event_at='2026-08-03T09:15:02.741Z'"
            )
        ),
        1
    );
    assert_eq!(scalar(&db, "SELECT count(*) FROM events WHERE human=1"), 2);
    assert_eq!(
        scalar(
            &db,
            "SELECT count(*) FROM events WHERE event_type='tool/result'"
        ),
        4
    );
    assert_eq!(
        scalar(
            &db,
            "SELECT count(*) FROM events WHERE event_type='tool/result' AND is_error=1
             AND (text LIKE '%KeyError%' OR text LIKE '%does not exist%')"
        ),
        2,
        "exit code 1 and an editor error"
    );
    for fact in [
        "/home/dev/payments/settlement/batch.py",
        "python",
        "payments-conventions",
    ] {
        assert!(
            scalar(
                &db,
                &format!("SELECT count(*) FROM events WHERE facts LIKE '%{fact}%'")
            ) >= 1,
            "{fact}"
        );
    }
    assert!(
        scalar(
            &db,
            "SELECT count(*) FROM events WHERE facts LIKE '%ledger_cache.py%'"
        ) == 0,
        "a view is no edit"
    );
    assert!(!all_text(&db).contains("openhands-fixture-s3cr3t-31"));
    assert_eq!(
        agents::resume_command("openhands", OPENHANDS, got[0].2.as_deref()).as_deref(),
        Some(format!("cd /home/dev/payments && openhands --resume {OPENHANDS}").as_str())
    );
    let again = index(&db, roots.clone());
    assert_eq!((again.files_unchanged, again.events_added), (1, 0));

    // A new event file, the state untouched: the conversation is read again, one event added.
    let event = serde_json::json!({"kind": "MessageEvent",
        "id": "e0000000-0000-4000-8000-00000000000d", "timestamp": "2026-08-03T09:16:00.000001",
        "source": "user", "parent_id": "e0000000-0000-4000-8000-00000000000c",
        "llm_message": {"role": "user",
            "content": [{"type": "text", "text": "also backfill the quokkaledger table"}]},
        "activated_skills": [], "extended_content": []});
    std::fs::write(
        conversation.join("events/event-00013-e0000000-0000-4000-8000-00000000000d.json"),
        serde_json::to_vec(&event).expect("json"),
    )
    .expect("event");
    let grown = index(&db, roots.clone());
    assert_eq!(
        (grown.files_rewritten, grown.events_added),
        (1, 1),
        "{grown:?}"
    );

    // An event torn mid-write is counted, never fatal.
    std::fs::write(
        conversation.join("events/event-00014-e0000000-0000-4000-8000-00000000000e.json"),
        b"{\"kind\": \"MessageEvent\", \"id\": \"e0",
    )
    .expect("torn");
    let torn = index(&db, roots);
    assert_eq!(
        (torn.lines.skipped_broken, torn.failed.len()),
        (1, 0),
        "{torn:?}"
    );
}

#[test]
fn goose_database_with_cwd_times_a_failing_tool_a_subagent_run_a_bad_row_and_secrets() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path().join("goose-root");
    let env = knowledge::sources::episodes::agent::Env::of(&[
        ("HOME", Path::new("/nohome")),
        ("GOOSE_PATH_ROOT", &root),
    ]);
    let roots: Vec<PathBuf> = agents::roots_in(&env)
        .into_iter()
        .filter(|(a, _)| *a == Agent::Goose)
        .map(|(_, r)| r)
        .collect();
    let store = root.join("data/sessions/sessions.db");
    assert_eq!(roots, vec![store.clone()]);
    std::fs::create_dir_all(store.parent().expect("parent")).expect("mkdir");
    let writer = rusqlite::Connection::open(&store).expect("db");
    writer
        .execute_batch("PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;")
        .expect("wal");
    writer
        .execute_batch(
            &std::fs::read_to_string(
                Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/agents/goose/sessions.sql"),
            )
            .expect("fixture"),
        )
        .expect("fixture sql");
    let db = dir.path().join("episodes.sqlite");
    let s = index(&db, roots.clone());
    assert_eq!((s.files_new, s.lines.skipped()), (1, 0), "{s:?}");
    let got = sessions(&db);
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(
        (got[0].0.as_str(), got[0].1.as_str()),
        ("20260904_1", "goose")
    );
    assert_eq!(got[0].2.as_deref(), Some("/home/dev/billing"));
    assert_eq!(
        scalar(
            &db,
            "SELECT count(*) FROM sessions WHERE session_id='20260904_1'
             AND created_at='2026-09-04T08:30:00.000Z'
             AND last_event_at='2026-09-04T08:33:20.000Z'"
        ),
        1
    );
    assert_eq!(
        scalar(&db, "SELECT count(*) FROM events WHERE human=1"),
        1,
        "the specialist run's task is an agent's prompt, not a person's"
    );
    assert_eq!(
        scalar(
            &db,
            "SELECT count(*) FROM events WHERE event_type='tool/result' AND is_error=1
             AND text LIKE '%exit code 101%'"
        ),
        1
    );
    assert_eq!(
        scalar(
            &db,
            "SELECT count(*) FROM events WHERE event_type='tool/result' AND is_error=0"
        ),
        1
    );
    for fact in ["/home/dev/billing/src/invoice.rs", "cargo"] {
        assert!(
            scalar(
                &db,
                &format!("SELECT count(*) FROM events WHERE facts LIKE '%{fact}%'")
            ) >= 1,
            "{fact}"
        );
    }
    assert!(!all_text(&db).contains("goose-fixture-s3cr3t-35"));
    assert_eq!(
        agents::resume_command("goose", "20260904_1", got[0].2.as_deref()).as_deref(),
        Some("cd /home/dev/billing && goose session --resume --session-id 20260904_1")
    );
    let again = index(&db, roots.clone());
    assert_eq!((again.files_unchanged, again.events_added), (1, 0));

    // A row written into the WAL (a new message, and one that is not JSON): the session is
    // read again whole, the bad row counted, never fatal.
    writer
        .execute_batch(
            r#"INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp)
               VALUES ('msg_u4', '20260904_1', 'user', '[{"type":"text","text":"thanks"}]', 1788510900),
                      ('msg_u5', '20260904_1', 'user', '[{"type":"text","te', 1788510901);"#,
        )
        .expect("rows");
    let before = scalar(&db, "SELECT count(*) FROM events");
    let grown = index(&db, roots);
    assert_eq!(
        (grown.lines.skipped_broken, grown.failed.len()),
        (1, 0),
        "{grown:?}"
    );
    assert_eq!(
        (
            grown.events_added,
            scalar(&db, "SELECT count(*) FROM events")
        ),
        (8, before + 1),
        "only the changed session, pushed whole: {grown:?}"
    );
}
