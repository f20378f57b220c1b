//! Cline, Roo Code and Kilo Code end to end (issue 35): a home holding each agent's stores at its
//! default place — the VS Code extensions' task folders under `~/.config/Code/User/globalStorage`
//! (Cline's index `state/taskHistory.json`, a Roo Code task and the subtask it delegated, a Kilo
//! Code task of its legacy extension), a Cline SDK session with a subagent under
//! `~/.cline/data/sessions`, and Kilo Code's OpenCode-schema `~/.local/share/kilo/kilo.db` —
//! indexed from the registry's default roots. The fixtures are in `fixtures/formats/{cline,roo,
//! kilo}/` (the writers' exact formats, each with a child task or subagent, a failing tool and a
//! planted secret). The real Cline SDK session in `../shared/realdata/cline/` is read too
//! (skipped with a note where absent).

mod common;

use std::path::{Path, PathBuf};

use knowledge::sources::episodes::agent::Env;
use knowledge::sources::episodes::agents::{self, Agent};
use knowledge::sources::episodes::index::{index_episodes, IndexOptions, IndexSummary};

const CLINE_TASK: &str = "1785315600000";
const CLINE_SDK: &str = "1785402000123_k7qzp";
const ROO_PARENT: &str = "5f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b";
const ROO_CHILD: &str = "6a2d3b4c-5e6f-4071-8b8c-0d1e2f3a4b5c";
const KILO_TASK: &str = "7b3e4c5d-6f70-4182-9c9d-1e2f3a4b5c6d";
const KILO_ROOT: &str = "ses_0a1b2c3d4ffeKiloRootSession";
const KILO_CHILD: &str = "ses_0a1b2c4e5ffeKiloChildSessn";

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/formats")
        .join(rel)
}

/// A home with every store of the three agents at its default place.
struct Home {
    _dir: tempfile::TempDir,
    home: PathBuf,
    db: PathBuf,
}

impl Home {
    fn new() -> Home {
        let dir = tempfile::tempdir().expect("tmp");
        let home = dir.path().join("home");
        let storage = home.join(".config/Code/User/globalStorage");
        for (agent, ext) in [
            ("cline", "saoudrizwan.claude-dev"),
            ("roo", "rooveterinaryinc.roo-cline"),
            ("kilo", "kilocode.kilo-code"),
        ] {
            common::agent_home::copy_tree(&fixture(agent).join(ext), &storage.join(ext));
        }
        common::agent_home::copy_tree(&fixture("cline/data"), &home.join(".cline/data"));
        let sql = std::fs::read_to_string(fixture("kilo/kilo.sql")).expect("kilo.sql");
        drop(common::agent_home::wal_db(
            &home.join(".local/share/kilo/kilo.db"),
            &sql,
        ));
        let db = dir.path().join("episodes.sqlite");
        Home {
            _dir: dir,
            home,
            db,
        }
    }

    /// The default roots of the three agents that exist in this home.
    fn roots(&self) -> Vec<PathBuf> {
        let env = Env::of(&[("HOME", &self.home)]);
        agents::roots_in(&env)
            .into_iter()
            .filter(|(a, r)| {
                matches!(a, Agent::Cline | Agent::RooCode | Agent::KiloCode) && r.exists()
            })
            .map(|(_, r)| r)
            .collect()
    }

    fn index(&self) -> IndexSummary {
        index_episodes(&self.db, &IndexOptions::new(self.roots()), &mut |_| {}).expect("index")
    }

    fn scalar(&self, sql: &str) -> i64 {
        let c = knowledge::sources::sqlite::open_ro(&self.db).expect("open");
        c.query_row(sql, [], |r| r.get(0)).expect("scalar")
    }

    fn text(&self, sql: &str) -> Option<String> {
        let c = knowledge::sources::sqlite::open_ro(&self.db).expect("open");
        c.query_row(sql, [], |r| r.get(0)).expect("text")
    }

    fn all_text(&self) -> String {
        let c = knowledge::sources::sqlite::open_ro(&self.db).expect("open");
        let mut stmt = c.prepare("SELECT text FROM events").expect("q");
        let rows = stmt.query_map([], |r| r.get::<_, String>(0)).expect("rows");
        rows.flatten().collect::<Vec<_>>().join("\n")
    }

    /// `(source, cwd, parent, title or description, outcome)` of a session.
    fn session(
        &self,
        id: &str,
    ) -> (
        String,
        Option<String>,
        Option<String>,
        Option<String>,
        String,
    ) {
        let c = knowledge::sources::sqlite::open_ro(&self.db).expect("open");
        c.query_row(
            "SELECT source, cwd, parent_session_id, coalesce(agent_description, title), outcome
             FROM sessions WHERE session_id=?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )
        .unwrap_or_else(|e| panic!("session {id}: {e}"))
    }

    fn events_of(&self, id: &str, cond: &str) -> i64 {
        self.scalar(&format!(
            "SELECT count(*) FROM events WHERE session_id='{id}' AND {cond}"
        ))
    }
}

#[test]
fn the_three_agents_are_found_at_their_default_places_and_read_end_to_end() {
    let h = Home::new();
    let roots = h.roots();
    let storage = h.home.join(".config/Code/User/globalStorage");
    for want in [
        storage.join("saoudrizwan.claude-dev/tasks"),
        h.home.join(".cline/data/sessions"),
        storage.join("rooveterinaryinc.roo-cline/tasks"),
        h.home.join(".local/share/kilo/kilo.db"),
        storage.join("kilocode.kilo-code/tasks"),
    ] {
        assert!(roots.contains(&want), "{want:?} in {roots:?}");
    }
    let s = h.index();
    // Cline's task and SDK session + subagent, Roo's two tasks, Kilo's task and database.
    assert_eq!(
        (s.files_new, s.lines.skipped(), s.failed.len()),
        (7, 0, 0),
        "{s:?}"
    );
    assert_eq!(h.scalar("SELECT count(*) FROM sessions"), 8);

    // Cline, the extension's task: cwd from the index, real times, a failed edit, thanks.
    let (source, cwd, parent, title, outcome) = h.session(CLINE_TASK);
    assert_eq!(source, "cline");
    assert_eq!(cwd.as_deref(), Some("/home/dev/invoices"));
    assert_eq!(parent, None);
    assert_eq!(
        title.as_deref(),
        Some("The invoice rounding test fails for JPY totals. Find out why and fix it.")
    );
    assert_eq!(outcome, "success");
    assert_eq!(
        h.scalar(&format!(
            "SELECT count(*) FROM sessions WHERE session_id='{CLINE_TASK}'
             AND created_at='2026-07-29T09:00:00.000Z' AND last_event_at='2026-07-29T09:00:40.000Z'"
        )),
        1
    );
    assert_eq!(h.events_of(CLINE_TASK, "human=1"), 2);
    assert_eq!(
        h.events_of(
            CLINE_TASK,
            "event_type='tool/result' AND is_error=1 AND text LIKE '%does not match%'"
        ),
        1
    );
    assert_eq!(h.events_of(CLINE_TASK, "event_type='tool/result'"), 4);
    // Cline's subagents: the call naming their prompts, their results once completed.
    assert_eq!(
        h.events_of(
            CLINE_TASK,
            "event_type='assistant/tool_use' AND tool_name='use_subagents'
             AND facts LIKE '%\"spawn\"%' AND facts LIKE '%minor unit is not 2%'"
        ),
        1
    );
    assert_eq!(
        h.events_of(
            CLINE_TASK,
            "event_type='tool/result' AND tool_name='use_subagents' AND text LIKE '%BHD, KWD%'"
        ),
        1
    );
    for fact in ["src/rates.py", "pytest", "release-notes"] {
        assert!(
            h.events_of(CLINE_TASK, &format!("facts LIKE '%{fact}%'")) >= 1,
            "{fact}"
        );
    }

    // Cline, the SDK session and its subagent (`<root>/<agentId>.messages.json`).
    let (source, cwd, _, title, outcome) = h.session(CLINE_SDK);
    assert_eq!(
        (source.as_str(), cwd.as_deref()),
        ("cline", Some("/home/dev/ledger"))
    );
    assert_eq!(title.as_deref(), Some("Reconcile the ledger export totals"));
    assert_eq!(outcome, "success");
    let sub = format!("{CLINE_SDK}/agent-agent_audit1");
    let (source, cwd, parent, description, _) = h.session(&sub);
    assert_eq!(source, "cline");
    assert_eq!(parent.as_deref(), Some(CLINE_SDK));
    assert_eq!(
        description.as_deref(),
        Some("Audit every place the ledger sums money with floats")
    );
    assert_eq!(cwd, None, "a subagent's transcript names no cwd of its own");
    assert_eq!(h.events_of(&sub, "event_type='agent/prompt'"), 1);
    assert_eq!(
        h.events_of(CLINE_SDK, "event_type='tool/result' AND is_error=1"),
        1,
        "the failing test run"
    );
    for fact in ["money-math", "/home/dev/ledger/export.py", "agent_audit1"] {
        assert!(
            h.events_of(CLINE_SDK, &format!("facts LIKE '%{fact}%'")) >= 1,
            "{fact}"
        );
    }
    assert_eq!(h.events_of(CLINE_SDK, "text LIKE '%whole file%'"), 0);

    // Roo Code: the orchestrator's task and the subtask it delegated with `new_task`.
    let (source, cwd, parent, _, outcome) = h.session(ROO_PARENT);
    assert_eq!(
        (source.as_str(), cwd.as_deref(), parent, outcome.as_str()),
        ("roo_code", Some("/home/dev/webhooks"), None, "success")
    );
    assert!(
        h.events_of(
            ROO_PARENT,
            "facts LIKE '%\"spawn\"%' AND facts LIKE '%sender.py%'"
        ) >= 1
    );
    assert!(h.events_of(ROO_PARENT, "facts LIKE '%webhook-conventions%'") >= 1);
    assert_eq!(
        h.events_of(
            ROO_PARENT,
            "event_type='tool/result' AND tool_name='newTask'"
        ),
        1,
        "the subtask's result answers the new_task call"
    );
    let (_, cwd, parent, description, outcome) = h.session(ROO_CHILD);
    assert_eq!(parent.as_deref(), Some(ROO_PARENT));
    assert_eq!(
        description.as_deref(),
        Some("Implement retry with exponential backoff (max 5 tries) in sender.py")
    );
    assert_eq!(
        (cwd.as_deref(), outcome.as_str()),
        (Some("/home/dev/webhooks"), "success")
    );
    assert_eq!(
        h.events_of(ROO_CHILD, "event_type='agent/prompt' AND human=0"),
        1
    );
    assert_eq!(
        h.events_of(ROO_CHILD, "event_type='tool/result' AND is_error=1"),
        1
    );
    assert_eq!(
        h.text(&format!(
            "SELECT agent_name FROM sessions WHERE session_id='{ROO_CHILD}'"
        ))
        .as_deref(),
        Some("code")
    );

    // Kilo Code: the legacy extension's task (cwd from the environment details) and the
    // database, read by OpenCode's reader under Kilo's name.
    let (source, cwd, _, _, outcome) = h.session(KILO_TASK);
    assert_eq!(
        (source.as_str(), cwd.as_deref(), outcome.as_str()),
        ("kilo_code", Some("/home/dev/importer"), "success")
    );
    assert_eq!(
        h.events_of(KILO_TASK, "event_type='tool/result' AND is_error=1"),
        1
    );
    assert!(h.events_of(KILO_TASK, "tool_name='mcp__github__get_issue'") >= 1);
    let (source, cwd, _, title, outcome) = h.session(KILO_ROOT);
    assert_eq!(
        (
            source.as_str(),
            cwd.as_deref(),
            title.as_deref(),
            outcome.as_str()
        ),
        (
            "kilo_code",
            Some("/home/dev/importer"),
            Some("Speed up the CSV import"),
            "success"
        )
    );
    let (source, _, parent, description, _) = h.session(KILO_CHILD);
    assert_eq!(source, "kilo_code");
    assert_eq!(parent.as_deref(), Some(KILO_ROOT));
    assert_eq!(description.as_deref(), Some("Profile the import"));

    // Every planted secret is redacted before it is stored.
    let text = h.all_text();
    for secret in [
        "AKIAIOSFODNN7EXAMPLE",
        "hunter2",
        "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
        "ghp_R4nd0mT0k3nV4lu3F0rT3st1ng000000000000",
        "Tr0ub4dor&3",
        "kilo-fixture-s3cr3t-58",
    ] {
        assert!(!text.contains(secret), "{secret} stored");
    }
    assert!(text.contains("[REDACTED]"));

    // Resume commands, in the session's own directory.
    let resume = |source: &str, id: &str, cwd: &str| agents::resume_command(source, id, Some(cwd));
    assert_eq!(
        resume("cline", CLINE_SDK, "/home/dev/ledger").as_deref(),
        Some(format!("cd /home/dev/ledger && cline --id {CLINE_SDK}").as_str())
    );
    assert_eq!(
        resume("roo_code", ROO_PARENT, "/home/dev/webhooks").as_deref(),
        Some(format!("cd /home/dev/webhooks && roo --session-id {ROO_PARENT}").as_str())
    );
    assert_eq!(
        resume("kilo_code", KILO_ROOT, "/home/dev/importer").as_deref(),
        Some(format!("cd /home/dev/importer && kilo --session {KILO_ROOT}").as_str())
    );
    assert_eq!(resume("kilo_code", KILO_TASK, "/home/dev/importer"), None);
}

#[test]
fn unchanged_folders_are_skipped_and_rewritten_files_or_sidecars_re_read() {
    let h = Home::new();
    h.index();
    let again = h.index();
    assert_eq!(
        (again.files_unchanged, again.events_added),
        (7, 0),
        "{again:?}"
    );

    // The extension rewrites ui_messages.json whole with one more message.
    let storage = h.home.join(".config/Code/User/globalStorage");
    let ui = storage.join(format!(
        "rooveterinaryinc.roo-cline/tasks/{ROO_PARENT}/ui_messages.json"
    ));
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&ui).expect("read")).expect("json");
    doc.as_array_mut()
        .expect("array")
        .push(serde_json::json!({"ts": 1785488500000_i64,
        "type": "say", "say": "user_feedback", "text": "Also log the quokkaretry attempts."}));
    std::fs::write(&ui, doc.to_string()).expect("rewrite");
    let rewritten = h.index();
    assert_eq!(
        (rewritten.files_rewritten, rewritten.events_added),
        (1, 1),
        "{rewritten:?}"
    );
    assert_eq!(
        h.events_of(ROO_PARENT, "text LIKE '%quokkaretry%' AND human=1"),
        1
    );

    // Only the history item changes (the task moved to another workspace): read again.
    let item = ui.with_file_name("history_item.json");
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&item).expect("read")).expect("json");
    v["workspace"] = "/home/dev/hooks2".into();
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(&item, v.to_string()).expect("item");
    h.index();
    assert_eq!(h.session(ROO_PARENT).1.as_deref(), Some("/home/dev/hooks2"));

    // A task folder torn mid-write is counted, never fatal.
    let torn = storage.join("saoudrizwan.claude-dev/tasks/1785999999999");
    std::fs::create_dir_all(&torn).expect("mkdir");
    std::fs::write(
        torn.join("ui_messages.json"),
        b"[{\"ts\":1785999999999,\"type\":\"sa",
    )
    .expect("w");
    let s = h.index();
    assert_eq!(
        (s.files_new, s.lines.skipped_broken, s.failed.len()),
        (1, 1, 0),
        "{s:?}"
    );
}

#[test]
fn the_real_cline_sdk_session_is_read_with_its_manifest() {
    let Some(real) = common::realdata::path("cline/cline-cline") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tmp");
    let id = "1784094124598_rruoq";
    let session = dir.path().join(".cline/data/sessions").join(id);
    std::fs::create_dir_all(&session).expect("mkdir");
    std::fs::copy(
        real.join("session.json"),
        session.join(format!("{id}.json")),
    )
    .expect("cp");
    std::fs::copy(
        real.join("session.messages.json"),
        session.join(format!("{id}.messages.json")),
    )
    .expect("cp");
    // The compacted messages of the same session, as another session's file.
    let compacted = dir.path().join(".cline/data/sessions/1784094124598_cmpct");
    std::fs::create_dir_all(&compacted).expect("mkdir");
    std::fs::copy(
        real.join("agentic.compaction.json"),
        compacted.join("1784094124598_cmpct.messages.json"),
    )
    .expect("cp");
    let db = dir.path().join("episodes.sqlite");
    let roots = vec![dir.path().join(".cline/data/sessions")];
    let s = index_episodes(&db, &IndexOptions::new(roots), &mut |_| {}).expect("index");
    assert_eq!(
        (s.files_new, s.lines.skipped(), s.failed.len()),
        (2, 0, 0),
        "{s:?}"
    );
    let c = knowledge::sources::sqlite::open_ro(&db).expect("open");
    let (source, cwd, title, created): (String, Option<String>, Option<String>, Option<String>) = c
        .query_row(
            "SELECT source, cwd, title, created_at FROM sessions WHERE session_id=?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .expect("the real session");
    assert_eq!(source, "cline");
    assert_eq!(cwd.as_deref(), Some("/Users/example/dev/cline"));
    assert!(title.is_some_and(|t| t.contains("filter icon")));
    assert_eq!(created.as_deref(), Some("2026-07-15T05:42:04.609Z"));
    let count = |sql: &str| -> i64 { c.query_row(sql, [], |r| r.get(0)).expect("count") };
    let calls = count(&format!(
        "SELECT count(*) FROM events WHERE session_id='{id}' AND event_type='assistant/tool_use'"
    ));
    let results = count(&format!(
        "SELECT count(*) FROM events WHERE session_id='{id}' AND event_type='tool/result'
         AND tool_name IS NOT NULL"
    ));
    assert_eq!(calls, 11, "every tool_use of the sample");
    assert_eq!(results, calls, "each answered, by name");
    assert!(
        count(&format!(
        "SELECT count(*) FROM events WHERE session_id='{id}' AND facts LIKE '%agent-sidebar.tsx%'"
    )) >= 1
    );
    // The attached file's contents are not indexed: the text typed is.
    assert_eq!(
        count(&format!(
            "SELECT count(*) FROM events WHERE session_id='{id}' AND text LIKE '%lucide-react%'
             AND event_type='user/message'"
        )),
        0
    );
    assert_eq!(
        count(
            "SELECT count(*) FROM events WHERE session_id='1784094124598_cmpct'
             AND event_type='system/summary'"
        ),
        1,
        "the compaction's context summary"
    );
}
