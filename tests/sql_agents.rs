//! The agents whose store is one SQLite database holding many sessions (OpenCode, Cursor),
//! end to end: each fixture database is built in a temp dir from the committed SQL text in
//! `fixtures/agents/<agent>/`, kept open by a "writer" connection in WAL mode the way the agent
//! keeps it, then indexed through the registry. Real samples in `../shared/realdata` are read
//! where they exist (skipped with a note where absent).

mod common;

use common::agent_home::{copy_tree, wal_db};

use std::path::{Path, PathBuf};

use knowledge::sources::episodes::agent::{read_whole, Env};
use knowledge::sources::episodes::agents::{self, Agent};
use knowledge::sources::episodes::discover::discover;
use knowledge::sources::episodes::index::{index_episodes, IndexOptions, IndexSummary};
use knowledge::sources::episodes::model::{EventType, Fact};
use rusqlite::Connection;

const ROOT: &str = "ses_1a2b3c4d5ffeRootSessionAbCd";
const CHILD: &str = "ses_1a2b3c5e6ffeChildSessionXy";
const SECRET: &str = "sk_live_51HqLmnOpQrStUvWxYz0123456789abcdefGHIJ";

fn fixture_sql(rel: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/agents")
        .join(rel);
    std::fs::read_to_string(p).expect("fixture sql")
}

fn index(db: &Path, roots: Vec<PathBuf>) -> IndexSummary {
    index_episodes(db, &IndexOptions::new(roots), &mut |_| {}).expect("index")
}

fn one<T: rusqlite::types::FromSql>(db: &Path, sql: &str, p: &[&dyn rusqlite::ToSql]) -> T {
    let c = knowledge::sources::sqlite::open_ro(db).expect("open index");
    c.query_row(sql, p, |r| r.get(0)).expect(sql)
}

fn opencode_world(tmp: &Path) -> (PathBuf, Connection) {
    let db = tmp.join("share/opencode/opencode.db");
    let writer = wal_db(&db, &fixture_sql("opencode/opencode.sql"));
    (db, writer)
}

#[test]
fn opencode_sessions_subagent_tool_error_and_secret_are_indexed() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (db, _writer) = opencode_world(tmp.path());
    let store = tmp.path().join("episodes.sqlite");
    let s = index(&store, vec![tmp.path().join("share/opencode")]);
    assert!(s.failed.is_empty(), "{:?}", s.failed);
    assert_eq!(s.files_new, 1, "one database store");

    let source: String = one(
        &store,
        "SELECT source FROM sessions WHERE session_id=?1",
        &[&ROOT],
    );
    assert_eq!(source, "opencode");
    let cwd: String = one(
        &store,
        "SELECT cwd FROM sessions WHERE session_id=?1",
        &[&ROOT],
    );
    assert_eq!(cwd, "/home/dev/shop");
    let title: String = one(
        &store,
        "SELECT title FROM sessions WHERE session_id=?1",
        &[&ROOT],
    );
    assert_eq!(title, "Fix the flaky checkout test");
    let outcome: String = one(
        &store,
        "SELECT outcome FROM sessions WHERE session_id=?1",
        &[&ROOT],
    );
    assert_eq!(outcome, "success", "the person confirmed the fix");

    // The subagent: its parent, its task as description, the spawning call, the agent kind.
    let parent: String = one(
        &store,
        "SELECT parent_session_id FROM sessions WHERE session_id=?1",
        &[&CHILD],
    );
    assert_eq!(parent, ROOT);
    let task: String = one(
        &store,
        "SELECT agent_description FROM sessions WHERE session_id=?1",
        &[&CHILD],
    );
    assert_eq!(task, "Find the checkout test");
    let spawn: String = one(
        &store,
        "SELECT spawn_tool_use_id FROM sessions WHERE session_id=?1",
        &[&CHILD],
    );
    assert_eq!(spawn, "toolu_01TaskExplore");
    let prompt_kind: String = one(
        &store,
        "SELECT event_type FROM events WHERE session_id=?1 ORDER BY seq LIMIT 1",
        &[&CHILD],
    );
    assert_eq!(
        prompt_kind, "agent/prompt",
        "a child's user text is its parent's"
    );

    // Person vs injected text; the failing bash run and the read error are errors.
    let human: i64 = one(
        &store,
        "SELECT count(*) FROM events WHERE session_id=?1 AND human=1",
        &[&ROOT],
    );
    assert_eq!(human, 2);
    let errors: i64 = one(
        &store,
        "SELECT count(*) FROM events WHERE session_id=?1 AND event_type='tool/result' AND is_error=1",
        &[&ROOT],
    );
    assert_eq!(errors, 2, "bash exit 1 and the missing file");
    let time: String = one(
        &store,
        "SELECT time FROM events WHERE session_id=?1 ORDER BY seq LIMIT 1",
        &[&ROOT],
    );
    assert_eq!(time, "2026-05-28T20:26:41.000Z");

    // The planted secret never reaches the index in clear.
    let leaked: i64 = one(
        &store,
        "SELECT count(*) FROM events WHERE instr(text, ?1) > 0 OR instr(coalesce(facts,''), ?1) > 0",
        &[&SECRET],
    );
    assert_eq!(leaked, 0);
    // The cursor is stored packed when long (LZ4 keeps literals as they are, so the secret
    // must be gone before packing, not hidden by it).
    let cursor: String = one(&store, "SELECT unpack_text(parser_state) FROM files", &[]);
    assert!(!cursor.contains(SECRET));

    // The skill load and the edit are facts for the knowledge layer.
    let facts: String = one(
        &store,
        "SELECT group_concat(facts, ' ') FROM events WHERE session_id=?1 AND facts IS NOT NULL",
        &[&ROOT],
    );
    assert!(facts.contains("flaky-test-triage"), "{facts}");
    assert!(
        facts.contains("/home/dev/shop/test/helpers/payment.ts"),
        "{facts}"
    );
    assert!(db.exists());
}

#[test]
fn opencode_reindex_skips_unchanged_and_rereads_only_the_session_that_changed() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (db, writer) = opencode_world(tmp.path());
    let store = tmp.path().join("episodes.sqlite");
    let roots = vec![db.clone()];
    index(&store, roots.clone());
    let count = |sid: &str| -> i64 {
        one(
            &store,
            "SELECT count(*) FROM events WHERE session_id=?1",
            &[&sid],
        )
    };
    let (root_before, child_before) = (count(ROOT), count(CHILD));

    let again = index(&store, roots.clone());
    assert_eq!(
        again.files_unchanged, 1,
        "nothing changed: skipped by fingerprint"
    );
    assert_eq!(again.events_added, 0);

    // The agent writes on (into the WAL, no checkpoint): a new part in the child only.
    writer
        .execute_batch(
            "INSERT INTO part VALUES ('prt_e5d4c3b3b004Text00000002', 'msg_e5d4c3b3b001ChildAnswer1',
              'ses_1a2b3c5e6ffeChildSessionXy', 1780000030500, 1780000030500,
              '{\"type\":\"text\",\"text\":\"Also: the retry helper doubles the wait.\"}');",
        )
        .expect("write");
    let third = index(&store, roots.clone());
    assert!(third.failed.is_empty(), "{:?}", third.failed);
    assert_eq!(third.files_unchanged, 0, "the WAL grew: the store changed");
    assert_eq!(count(ROOT), root_before, "the root session was not re-read");
    assert_eq!(
        count(CHILD),
        child_before + 1,
        "the child was replaced, not duplicated"
    );
    assert_eq!(third.events_added as i64, child_before + 1);

    // A part finishing in place (same count, later time_updated) is a change too.
    writer
        .execute_batch(
            "UPDATE part SET time_updated = 1780000099000,
               data = replace(data, 'Edit applied successfully.', 'Edit applied; 3 tests rerun.')
             WHERE id = 'prt_e5d4c3b2c004ToolEdit0001';",
        )
        .expect("update");
    index(&store, roots);
    let edited: i64 = one(
        &store,
        "SELECT count(*) FROM events WHERE session_id=?1 AND instr(text, '3 tests rerun') > 0",
        &[&ROOT],
    );
    assert_eq!(edited, 1);
    assert_eq!(count(ROOT), root_before);
}

#[test]
fn opencode_database_is_opened_read_only_and_never_changed() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (db, writer) = opencode_world(tmp.path());
    let wal = PathBuf::from(format!("{}-wal", db.display()));
    let bytes = |p: &Path| std::fs::read(p).unwrap_or_default();
    let (db_before, wal_before) = (bytes(&db), bytes(&wal));
    assert!(
        !wal_before.is_empty(),
        "the fixture's writes sit in the WAL"
    );
    index(&tmp.path().join("episodes.sqlite"), vec![db.clone()]);
    assert_eq!(bytes(&db), db_before, "the database file is untouched");
    assert_eq!(
        bytes(&wal),
        wal_before,
        "the WAL is untouched (no checkpoint by us)"
    );
    // The agent can still write while we hold nothing.
    writer
        .execute_batch(
            "UPDATE session SET title='renamed' WHERE id='ses_1a2b3c4d5ffeRootSessionAbCd'",
        )
        .expect("the agent is never locked out");
}

#[test]
fn opencode_is_found_zero_config_and_by_override_and_resumes_with_its_own_command() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (db, writer) = opencode_world(tmp.path());
    let env = Env::of(&[
        ("HOME", Path::new("/nohome")),
        ("XDG_DATA_HOME", &tmp.path().join("share")),
    ]);
    let roots: Vec<PathBuf> = agents::roots_in(&env)
        .into_iter()
        .filter(|(a, _)| *a == Agent::OpenCode)
        .map(|(_, r)| r)
        .collect();
    // The database, and the JSON tree of installs before v1.2.
    let tree = tmp.path().join("share/opencode/storage/session");
    assert_eq!(roots, vec![db.clone(), tree]);
    let home_only = Env::of(&[("HOME", Path::new("/home/u"))]);
    let default: Vec<PathBuf> = agents::roots_in(&home_only)
        .into_iter()
        .filter(|(a, _)| *a == Agent::OpenCode)
        .map(|(_, r)| r)
        .collect();
    assert_eq!(
        default,
        vec![
            PathBuf::from("/home/u/.local/share/opencode/opencode.db"),
            PathBuf::from("/home/u/.local/share/opencode/storage/session")
        ]
    );
    let moved = Env::of(&[
        ("HOME", Path::new("/home/u")),
        ("OPENCODE_DB", Path::new("/srv/oc/custom.db")),
    ]);
    assert!(agents::roots_in(&moved)
        .iter()
        .any(|(a, r)| *a == Agent::OpenCode && r == Path::new("/srv/oc/custom.db")));

    // A custom-named database is recognised by its tables; `--sessions DIR` finds it.
    let custom = tmp.path().join("elsewhere/custom.db");
    std::fs::create_dir_all(custom.parent().expect("p")).expect("mkdir");
    let _ = std::fs::remove_file(&custom);
    writer
        .execute("VACUUM INTO ?1", [custom.to_string_lossy()])
        .expect("a checkpointed copy");
    let found = discover(custom.parent().expect("p"));
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].kind, Agent::OpenCode);

    // Watch: a write to the WAL is a change of the database.
    let wal = PathBuf::from(format!("{}-wal", db.display()));
    assert_eq!(agents::store_of_change(&wal), Some(db.clone()));
    assert_eq!(
        agents::resume_command("opencode/subagent", CHILD, Some("/home/dev/shop")).as_deref(),
        Some("cd /home/dev/shop && opencode --session ses_1a2b3c5e6ffeChildSessionXy")
    );
}

#[test]
fn opencode_bad_rows_are_counted_and_a_foreign_database_fails_clearly() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (db, writer) = opencode_world(tmp.path());
    writer
        .execute_batch(&format!(
            "INSERT INTO part VALUES ('prt_x1', 'msg_e5d4c3b2c001Assistant002', '{ROOT}', 1780000051000, 1780000051000, '{{not json');
             INSERT INTO part VALUES ('prt_x2', 'msg_e5d4c3b2c001Assistant002', '{ROOT}', 1780000052000, 1780000052000,
               '{{\"type\":\"hologram\",\"text\":\"from the future\"}}');
             INSERT INTO part VALUES ('prt_x3', 'msg_e5d4c3b2c001Assistant002', '{ROOT}', 1780000053000, 1780000053000,
               '{{\"type\":\"text\",\"text\":\"' || hex(randomblob(5000000)) || '\"}}');"
        ))
        .expect("bad rows");
    let file = agents::recognise(&db).expect("recognised");
    let (sink, end) = read_whole(&file).expect("read");
    assert_eq!(sink.sessions.len(), 2);
    assert_eq!(end.lines.skipped_broken, 1);
    assert_eq!(end.lines.skipped_unknown, 1, "{:?}", end.lines);
    assert_eq!(end.lines.skipped_oversized, 1);

    let foreign = tmp.path().join("share/opencode/opencode-beta.db");
    Connection::open(&foreign)
        .and_then(|c| c.execute_batch("CREATE TABLE t(x)"))
        .expect("foreign");
    let f = agents::recognise(&foreign).expect("named like OpenCode's");
    let err = read_whole(&f).expect_err("not OpenCode's schema");
    assert!(
        err.to_string().contains("not an OpenCode database"),
        "{err}"
    );
}

/// The real `opencode export` sample, loaded into a database the way OpenCode stores it (the
/// `data` columns without `id`/`sessionID`/`messageID`), reads without loss.
#[test]
fn opencode_real_export_sample_reads_as_a_database() {
    let Some(path) =
        common::realdata::path("opencode/empathic-toolpath/test-fixtures/opencode/convo.json")
    else {
        return;
    };
    let export: serde_json::Value =
        serde_json::from_slice(&std::fs::read(path).expect("read")).expect("json");
    let tmp = tempfile::tempdir().expect("tmp");
    let db = tmp.path().join("opencode.db");
    let schema = fixture_sql("opencode/opencode.sql");
    let c = wal_db(&db, schema.split("\nINSERT").next().unwrap_or(""));
    let info = &export["info"];
    c.execute(
        "INSERT INTO project (id, worktree, time_created, time_updated) VALUES (?1, '/', 0, 0)",
        [info["projectID"].as_str()],
    )
    .expect("project");
    let sid = info["id"].as_str().expect("id");
    c.execute(
        "INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        rusqlite::params![
            sid,
            info["projectID"].as_str(),
            info["slug"].as_str(),
            info["directory"].as_str(),
            info["title"].as_str(),
            info["version"].as_str(),
            info["time"]["created"].as_i64(),
            info["time"]["updated"].as_i64()
        ],
    )
    .expect("session");
    let strip = |v: &serde_json::Value| {
        let mut v = v.clone();
        if let Some(m) = v.as_object_mut() {
            for k in ["id", "sessionID", "messageID"] {
                m.remove(k);
            }
        }
        v.to_string()
    };
    let mut parts_total = 0;
    for m in export["messages"].as_array().expect("messages") {
        let mi = &m["info"];
        let mid = mi["id"].as_str().expect("mid");
        let t = mi["time"]["created"].as_i64().unwrap_or(0);
        c.execute(
            "INSERT INTO message VALUES (?1, ?2, ?3, ?3, ?4)",
            rusqlite::params![mid, sid, t, strip(mi)],
        )
        .expect("message");
        for p in m["parts"].as_array().expect("parts") {
            parts_total += 1;
            c.execute(
                "INSERT INTO part VALUES (?1, ?2, ?3, ?4, ?4, ?5)",
                rusqlite::params![p["id"].as_str(), mid, sid, t, strip(p)],
            )
            .expect("part");
        }
    }
    let file = agents::recognise(&db).expect("recognised");
    let (sink, end) = read_whole(&file).expect("read");
    assert_eq!(sink.sessions.len(), 1);
    let s = &sink.sessions[0];
    assert_eq!(end.lines.lines, 12 + parts_total as u64);
    assert_eq!(end.lines.skipped(), 0, "{:?}", end.lines);
    assert_eq!(
        s.meta.title.as_deref(),
        Some("Tool category exercise walkthrough")
    );
    assert!(s
        .meta
        .cwd
        .as_deref()
        .is_some_and(|d| d.ends_with("/opencode")));
    let errors = s
        .events
        .iter()
        .filter(|e| e.event_type == EventType::ToolResult && e.is_error)
        .count();
    assert_eq!(errors, 1, "the read of a missing file");
    let linked = s.events.iter().flat_map(|e| &e.facts).any(|f| {
        matches!(f, Fact::AgentLink { agent_id, .. } if agent_id == "ses_1fc4ae43affekhOzm9Kf36uiwL")
    });
    assert!(linked, "the task call links its child session");
    assert_eq!(
        s.events.iter().filter(|e| e.human).count(),
        1,
        "one prompt typed by the person"
    );
}

const COMPOSER: &str = "5f3c9e2a-1111-4a2b-9c3d-5e6f7a8b9c0d";
const SUB_COMPOSER: &str = "7a1d4b6c-2222-4d3e-8f9a-0b1c2d3e4f5a";
const CURSOR_SECRET: &str = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";

/// A Cursor home in `tmp`: the IDE's global store (open, in WAL mode), one workspace, and the
/// agent transcripts. Returns the global store and its writer.
fn cursor_world(tmp: &Path) -> (PathBuf, Connection) {
    let user = tmp.join("config/Cursor/User");
    let global = user.join("globalStorage/state.vscdb");
    let writer = wal_db(&global, &fixture_sql("cursor/state.vscdb.sql"));
    let ws = user.join("workspaceStorage/0a1b2c3d4e5f");
    wal_db(
        &ws.join("state.vscdb"),
        &fixture_sql("cursor/workspace.sql"),
    );
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/agents/cursor/workspace.json"),
        ws.join("workspace.json"),
    )
    .expect("workspace.json");
    let fx = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/agents/cursor/agent-transcripts");
    copy_tree(
        &fx,
        &tmp.join("home/.cursor/projects/-home-dev-shop/agent-transcripts"),
    );
    (global, writer)
}

fn cursor_roots(tmp: &Path) -> Vec<PathBuf> {
    let env = Env::of(&[
        ("HOME", &tmp.join("home")),
        ("XDG_CONFIG_HOME", &tmp.join("config")),
    ]);
    agents::roots_in(&env)
        .into_iter()
        .filter(|(a, r)| *a == Agent::Cursor && r.exists())
        .map(|(_, r)| r)
        .collect()
}

#[test]
fn cursor_ide_composers_subagent_tool_error_workspace_and_secret_are_indexed() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (global, _writer) = cursor_world(tmp.path());
    let roots = cursor_roots(tmp.path());
    assert_eq!(
        roots.len(),
        2,
        "the IDE store and the transcripts are found: {roots:?}"
    );
    assert!(roots.contains(&global));
    let store = tmp.path().join("episodes.sqlite");
    let s = index(&store, roots.clone());
    assert!(s.failed.is_empty(), "{:?}", s.failed);

    let q = |sql: &str, id: &str| -> String { one(&store, sql, &[&id]) };
    assert_eq!(
        q("SELECT source FROM sessions WHERE session_id=?1", COMPOSER),
        "cursor"
    );
    assert_eq!(
        q("SELECT cwd FROM sessions WHERE session_id=?1", COMPOSER),
        "/home/dev/shop app",
        "the workspace that lists the composer"
    );
    assert_eq!(
        q("SELECT title FROM sessions WHERE session_id=?1", COMPOSER),
        "Cache invalidation for product pages"
    );
    assert_eq!(
        q("SELECT outcome FROM sessions WHERE session_id=?1", COMPOSER),
        "success"
    );
    assert_eq!(
        q(
            "SELECT parent_session_id FROM sessions WHERE session_id=?1",
            SUB_COMPOSER
        ),
        COMPOSER
    );
    assert_eq!(
        q(
            "SELECT agent_description FROM sessions WHERE session_id=?1",
            SUB_COMPOSER
        ),
        "Find the price cache key"
    );
    assert_eq!(
        q("SELECT cwd FROM sessions WHERE session_id=?1", SUB_COMPOSER),
        "/home/dev/shop app",
        "a subagent works in its parent's folder"
    );
    let errors: i64 = one(
        &store,
        "SELECT count(*) FROM events WHERE session_id=?1 AND event_type='tool/result' AND is_error=1",
        &[&COMPOSER],
    );
    assert_eq!(errors, 1);
    let first_time: String = one(
        &store,
        "SELECT time FROM events WHERE session_id=?1 ORDER BY seq LIMIT 1",
        &[&COMPOSER],
    );
    assert_eq!(
        first_time, "2026-05-30T00:13:20.000Z",
        "the composer's createdAt"
    );
    let facts: String = one(
        &store,
        "SELECT group_concat(facts, ' ') FROM events WHERE session_id=?1 AND facts IS NOT NULL",
        &[&COMPOSER],
    );
    assert!(facts.contains("app/models/page_cache.rb"), "{facts}");
    assert!(facts.contains("\"program\":\"rails\""), "{facts}");
    let leaked: i64 = one(
        &store,
        "SELECT count(*) FROM events WHERE instr(text, ?1) > 0",
        &[&CURSOR_SECRET],
    );
    assert_eq!(leaked, 0, "the planted secret is redacted in both stores");

    // Incremental: unchanged stores are skipped; a new bubble re-reads only its composer.
    let again = index(&store, roots.clone());
    assert_eq!(again.files_unchanged, 3, "{again:?}");
    let before: i64 = one(
        &store,
        "SELECT count(*) FROM events WHERE session_id=?1",
        &[&SUB_COMPOSER],
    );
    _writer
        .execute_batch(&format!(
            "INSERT INTO cursorDiskKV VALUES ('bubbleId:{SUB_COMPOSER}:s-0003',
               '{{\"_v\":3,\"type\":2,\"bubbleId\":\"s-0003\",\"text\":\"Also the CDN caches for an hour.\"}}');"
        ))
        .expect("write");
    let third = index(&store, roots);
    assert_eq!(third.events_added as i64, before + 1, "{third:?}");
    let after: i64 = one(
        &store,
        "SELECT count(*) FROM events WHERE session_id=?1",
        &[&SUB_COMPOSER],
    );
    assert_eq!(after, before + 1);
    assert_eq!(
        agents::store_of_change(&PathBuf::from(format!("{}-wal", global.display()))),
        Some(global)
    );
}

#[test]
fn cursor_agent_transcripts_prompt_subagent_tool_error_and_resume() {
    let tmp = tempfile::tempdir().expect("tmp");
    cursor_world(tmp.path());
    let store = tmp.path().join("episodes.sqlite");
    let projects = tmp.path().join("home/.cursor/projects");
    let s = index(&store, vec![projects.clone()]);
    assert!(s.failed.is_empty(), "{:?}", s.failed);
    let main = "c0ffee01-aaaa-4bbb-8ccc-000000000001";
    let text: String = one(
        &store,
        "SELECT text FROM events WHERE session_id=?1 AND human=1 ORDER BY seq LIMIT 1",
        &[&main],
    );
    assert_eq!(
        text, "The nightly export job dies with an auth error. Fix it.",
        "unwrapped"
    );
    let redacted_text: i64 = one(
        &store,
        "SELECT count(*) FROM events WHERE text = '[REDACTED]'",
        &[],
    );
    assert_eq!(redacted_text, 0, "Cursor's placeholder text is not indexed");
    let errors: i64 = one(
        &store,
        "SELECT count(*) FROM events WHERE session_id=?1 AND is_error=1",
        &[&main],
    );
    assert_eq!(errors, 1);
    let leaked: i64 = one(
        &store,
        "SELECT count(*) FROM events WHERE instr(text, ?1) > 0",
        &[&CURSOR_SECRET],
    );
    assert_eq!(leaked, 0);
    let (sid, parent, task): (String, String, String) = knowledge::sources::sqlite::open_ro(&store)
        .expect("open")
        .query_row(
            "SELECT session_id, parent_session_id, agent_description FROM sessions
             WHERE parent_session_id IS NOT NULL AND source='cursor'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("the subagent session");
    assert_eq!(parent, main);
    assert!(
        sid.contains("d00dfeed-bbbb-4ccc-8ddd-000000000002"),
        "{sid}"
    );
    assert_eq!(task, "Find where the nightly export reads its API token.");
    let prompt: String = one(
        &store,
        "SELECT event_type FROM events WHERE session_id=?1 ORDER BY seq LIMIT 1",
        &[&sid],
    );
    assert_eq!(prompt, "agent/prompt");
    let main_desc: Option<String> = one(
        &store,
        "SELECT agent_description FROM sessions WHERE session_id=?1",
        &[&main],
    );
    assert_eq!(main_desc, None);
    let last: Option<String> = one(
        &store,
        "SELECT last_event_at FROM sessions WHERE session_id=?1",
        &[&main],
    );
    assert!(
        last.is_some(),
        "the file's time stands in for the missing line times"
    );

    // Appended lines are read on from where the last run stopped.
    let file = projects.join(format!(
        "-home-dev-shop/agent-transcripts/{main}/{main}.jsonl"
    ));
    let mut body = std::fs::read_to_string(&file).expect("read");
    body.push_str("{\"role\":\"user\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Rotate it weekly too.\"}]}}\n");
    std::fs::write(&file, body).expect("append");
    let again = index(&store, vec![projects]);
    assert_eq!(again.files_appended, 1, "{again:?}");
    assert_eq!(again.events_added, 1);
    assert_eq!(
        agents::resume_command("cursor", main, None).as_deref(),
        Some("cursor-agent --resume c0ffee01-aaaa-4bbb-8ccc-000000000001")
    );
}

#[test]
fn cursor_real_transcript_samples_read_without_loss() {
    let Some(dir) = common::realdata::path("cursor/jazzyalex-agent-sessions") else {
        return;
    };
    let found = discover(&dir);
    assert_eq!(found.len(), 5, "{found:?}");
    for f in &found {
        assert_eq!(f.kind, Agent::Cursor, "{}", f.path.display());
        let (sink, end) = read_whole(f).expect("read");
        assert_eq!(end.lines.skipped_broken, 0, "{}", f.path.display());
        assert!(!sink.sessions[0].events.is_empty(), "{}", f.path.display());
    }
    let drift = found
        .iter()
        .find(|f| f.path.ends_with("schema_drift.jsonl"))
        .expect("drift sample");
    let (sink, _) = read_whole(drift).expect("read");
    let kinds: Vec<EventType> = sink.sessions[0]
        .events
        .iter()
        .map(|e| e.event_type)
        .collect();
    assert!(kinds.contains(&EventType::AssistantThinking));
    assert!(
        kinds.contains(&EventType::AssistantToolUse),
        "tool_call blocks"
    );
    assert!(kinds.contains(&EventType::ToolResult), "tool-result blocks");
    let child = found
        .iter()
        .find(|f| f.path.ends_with("subagents/child.jsonl"))
        .expect("child");
    assert!(matches!(
        &child.layout,
        knowledge::sources::episodes::discover::Layout::Subagent { parent_session_hint: Some(p), .. } if p == "subagent"
    ));
}

/// `knowledge index --sessions <opencode.db>` then `knowledge doctor`: a database whose WAL holds
/// the agent's last writes is not "changed" after indexing, and is once the agent writes again.
#[test]
fn doctor_counts_a_database_with_its_wal_like_the_indexer() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (db, writer) = opencode_world(tmp.path());
    let data = tmp.path().join("data");
    let run = |args: &[&str]| {
        common::cli::bin()
            .arg("--data-dir")
            .arg(&data)
            .args(args)
            .output()
            .expect("run knowledge")
    };
    let db_arg = db.display().to_string();
    let out = run(&[
        "index",
        "--sessions",
        &db_arg,
        "--code",
        &tmp.path().display().to_string(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doctor = |label: &str| -> serde_json::Value {
        let out = run(&["doctor", "--json"]);
        let d: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "{label}: not JSON ({e}): {}",
                String::from_utf8_lossy(&out.stdout)
            )
        });
        d["changed_transcripts"].clone()
    };
    assert_eq!(doctor("fresh")["count"], 0, "indexed just now");
    writer
        .execute_batch(
            "UPDATE session SET title='later' WHERE id='ses_1a2b3c4d5ffeRootSessionAbCd'",
        )
        .expect("write");
    assert_eq!(doctor("written")["count"], 1, "the agent wrote since");
}
