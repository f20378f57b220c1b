//! Agents' stores under hostile use (issue 36, round 4), on a home holding every agent's store
//! at its default place (`common::agent_home`), through the built binary:
//!
//! - a side file an agent keeps beside its transcripts (Kimi's `kimi.json`, Gemini's
//!   `projects.json`, Cursor's `workspace.json`, Continue's `sessions.json`, an OpenHands
//!   event file, a `.meta.json` sidecar, Cline, Roo Code and Kilo Code's task sidecars and a
//!   Cline SDK manifest) replaced by a FIFO or
//!   a symlink to `/dev/zero` never hangs `index` nor fills memory;
//! - one bad row of an agent's database (a cell of the wrong type, invalid UTF-8) costs that
//!   row, never the store;
//! - an agent's WAL database is read with nothing created beside it, from a read-only
//!   directory too;
//! - a directory the indexer cannot open is named, as an unreadable file is.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::agent_home::AgentHome;
use crate::common::watching::is_root;
use crate::hangs::{finish, mkfifo};

fn doctor_json(h: &AgentHome) -> serde_json::Value {
    let out = finish(h.command(&["doctor", "--json"]));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "doctor printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Sessions doctor counts for `agent` after an index run.
fn sessions_of(h: &AgentHome, agent: &str) -> u64 {
    let d = doctor_json(h);
    sessions_in(&d, agent).unwrap_or_else(|| panic!("no {agent} report: {d}"))
}

/// Sessions a doctor report counts for `agent`.
fn sessions_in(d: &serde_json::Value, agent: &str) -> Option<u64> {
    d["agents"]
        .as_array()
        .expect("agents")
        .iter()
        .find(|r| r["agent"] == agent)
        .and_then(|r| r["sessions"].as_u64())
}

/// The side files a reader opens whole, each replaced by `how`.
fn replace_side_files(h: &AgentHome, how: &str) {
    let ws = h
        .home
        .join(".config/Cursor/User/workspaceStorage/0a1b2c3d4e5f/workspace.json");
    let vscode = h.home.join(".config/Code/User/globalStorage");
    for side in [
        h.home.join(".kimi/kimi.json"),
        h.home.join(".gemini/projects.json"),
        h.home.join(".continue/sessions/sessions.json"),
        // An OpenHands event file: read whole beside its conversation's state.
        h.home.join(
            ".openhands/conversations/7d3e9f102a4b4c5d8e6f0a1b2c3d4e5f/events/\
             event-00005-e0000000-0000-4000-8000-000000000005.json",
        ),
        ws,
        // Cline, Roo Code and Kilo Code's sidecars beside a task's UI messages: Cline's
        // index, a task's metadata, Roo's history item, Kilo's model conversation (read for
        // its environment details), and a Cline SDK session's manifest.
        vscode.join("saoudrizwan.claude-dev/state/taskHistory.json"),
        vscode.join("saoudrizwan.claude-dev/tasks/1785315600000/task_metadata.json"),
        vscode.join(
            "rooveterinaryinc.roo-cline/tasks/5f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b/history_item.json",
        ),
        vscode.join(
            "kilocode.kilo-code/tasks/7b3e4c5d-6f70-4182-9c9d-1e2f3a4b5c6d/\
             api_conversation_history.json",
        ),
        h.home
            .join(".cline/data/sessions/1785402000123_k7qzp/1785402000123_k7qzp.json"),
    ] {
        let _ = std::fs::remove_file(&side);
        match how {
            "fifo" => mkfifo(&side),
            target => std::os::unix::fs::symlink(target, &side).expect("symlink"),
        }
    }
}

#[test]
fn a_side_file_that_is_a_fifo_or_dev_zero_never_hangs_index() {
    for how in ["fifo", "/dev/zero"] {
        let h = AgentHome::new();
        replace_side_files(&h, how);
        let out = finish(h.command(&["index", "--quiet"]));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{how}: {stderr}");
        // The sessions are read; only what the side file would have added (a working
        // directory) is missing.
        assert_eq!(sessions_of(&h, "kimi"), 2, "{how}");
        assert_eq!(sessions_of(&h, "gemini"), 3, "{how}");
        assert_eq!(sessions_of(&h, "cursor"), 4, "{how}");
        assert_eq!(sessions_of(&h, "continue"), 2, "{how}");
        assert_eq!(sessions_of(&h, "openhands"), 1, "{how}");
        assert_eq!(sessions_of(&h, "cline"), 3, "{how}");
        assert_eq!(sessions_of(&h, "roo_code"), 2, "{how}");
        assert_eq!(sessions_of(&h, "kilo_code"), 3, "{how}");
        // The lock went with the run: a second run starts at once.
        let again = finish(h.command(&["index", "--quiet"]));
        assert!(
            again.status.success(),
            "{how}: {}",
            String::from_utf8_lossy(&again.stderr)
        );
    }
}

/// The episodes a search for `q` returns, as JSON text (every field, for `contains` checks).
fn search_text(h: &AgentHome, q: &str) -> String {
    let out = finish(h.command(&["search", "-q", q, "--include", "episodes"]));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The index run's line counters ("N lines read: B broken, …").
fn lines_read(out: &Output) -> String {
    let text = String::from_utf8_lossy(&out.stderr);
    text.lines()
        .find(|l| l.contains("lines read:"))
        .unwrap_or_else(|| panic!("no counters in:\n{text}"))
        .to_string()
}

/// `index` on the home as the fixtures made it, so the next run reads only what a test changed.
fn index_pristine(h: &AgentHome) {
    let out = finish(h.command(&["index", "--quiet"]));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn one_bad_opencode_row_costs_that_row_not_the_database() {
    let h = AgentHome::new();
    index_pristine(&h);
    let root = "ses_1a2b3c4d5ffeRootSessionAbCd";
    let project = "4b0ea68d7af9a6031a7ffda7ad66e0cb83315750";
    // A session whose times are text and a real; a part whose data is invalid UTF-8; a session
    // whose id is a blob that is not UTF-8 (it cannot be looked up, so it is counted).
    h.opencode
        .execute_batch(&format!(
            "INSERT INTO session (id, project_id, parent_id, slug, directory, title, version,
               time_created, time_updated) VALUES
             ('ses_texttime', '{project}', NULL, 's', '/home/dev/shop', 'Texty', '1.14.41',
              'yesterday', 1780000070000.5),
             (X'73ff', '{project}', NULL, 's', '/home/dev/shop', 'Bad id', '1.14.41', 1, 1);
             INSERT INTO message VALUES ('msg_texttime', 'ses_texttime', '1780000071000', 1,
               '{{\"role\":\"user\",\"time\":{{\"created\":1780000071000}}}}');
             INSERT INTO part VALUES ('prt_texttime', 'msg_texttime', 'ses_texttime', 1, 1,
               '{{\"type\":\"text\",\"text\":\"Why does the zebrafinch importer stall?\"}}');
             UPDATE message SET data = 'not json' WHERE id = 'msg_e5d4c3b2b001Assistant001';
             INSERT INTO part VALUES ('prt_badutf8', 'msg_e5d4c3b2a001UserPrompt0001', '{root}',
               1780000001500, 1780000001500,
               CAST(X'7b2274797065223a2274657874222c2274657874223a226b6f6f6b61627572726120ff20626164227d' AS TEXT));"
        ))
        .expect("bad rows");
    let out = finish(h.command(&["index"]));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        sessions_of(&h, "opencode"),
        3,
        "the fixture's two and the text-time one"
    );
    assert!(search_text(&h, "zebrafinch").contains("ses_texttime"));
    // The invalid byte cost a character, not the part.
    assert!(search_text(&h, "kookaburra").contains(root));
    // A message row that is not JSON costs that row; its tool parts are the assistant's still.
    assert!(search_text(&h, "smells").contains(root));
    let line = lines_read(&out);
    assert!(
        line.contains(": 2 broken"),
        "the unreadable id and message are counted: {line}"
    );
}

#[test]
fn one_bad_cursor_row_costs_that_row_not_the_store() {
    let h = AgentHome::new();
    index_pristine(&h);
    let chat = "5f3c9e2a-1111-4a2b-9c3d-5e6f7a8b9c0d";
    let composer = |id: &str, updated: &str| {
        format!(
            "INSERT INTO cursorDiskKV VALUES ('composerData:{id}',
              '{{\"composerId\":\"{id}\",\"name\":\"chat {id}\",\"createdAt\":1780100000000,
                \"lastUpdatedAt\":{updated},
                \"fullConversationHeadersOnly\":[{{\"bubbleId\":\"q\",\"type\":1}}]}}');
             INSERT INTO cursorDiskKV VALUES ('bubbleId:{id}:q',
              '{{\"type\":1,\"bubbleId\":\"q\",\"text\":\"the {id} pelican question\"}}');"
        )
    };
    h.cursor
        .execute_batch(&format!(
            "{}{}
             INSERT INTO cursorDiskKV VALUES (CAST(X'636f6d706f736572446174613aff' AS TEXT), '{{}}');
             INSERT INTO cursorDiskKV VALUES ('bubbleId:{chat}:b-0099',
               CAST(X'7b2274797065223a312c2274657874223a226361706962617261ff227d' AS TEXT));",
            composer("c0000000-string-time", "\"1780100090000\""),
            composer("c0000000-float-time", "1780100090000.5"),
        ))
        .expect("bad rows");
    let out = finish(h.command(&["index"]));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        sessions_of(&h, "cursor"),
        6,
        "the fixture's four and both odd-time chats"
    );
    let found = search_text(&h, "pelican");
    assert!(
        found.contains("c0000000-string-time") && found.contains("c0000000-float-time"),
        "{found}"
    );
    // The bubble with an invalid byte is kept (it cost a character).
    assert!(search_text(&h, "capibara").contains(chat));
    let line = lines_read(&out);
    assert!(
        line.contains(": 1 broken"),
        "the key that is not UTF-8 is counted: {line}"
    );
}

/// The names in `dir`, sorted.
fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("ls")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// `knowledge --data-dir DATA <args>` run by a user who cannot write the home: as root, the
/// command runs as `nobody` (root writes everywhere); as anyone else, `read_only` folders lose
/// their write bit for the run's length (given back by [`restore`]).
fn as_reader_who_cannot_write(
    h: &AgentHome,
    data: &Path,
    read_only: &[PathBuf],
    args: &[&str],
) -> Command {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    std::fs::create_dir_all(data).expect("data dir");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_knowledge"));
    cmd.env_clear()
        .env("HOME", &h.home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .current_dir(h.repo())
        .arg("--data-dir")
        .arg(data)
        .args(args);
    if is_root() {
        // The temp dir is private to root: let `nobody` in to read, and own its data dir.
        let top = h.home.parent().expect("temp dir");
        std::fs::set_permissions(top, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        std::os::unix::fs::chown(data, Some(65534), Some(65534)).expect("chown");
        cmd.uid(65534).gid(65534);
    } else {
        for dir in read_only {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o555)).expect("chmod");
        }
    }
    cmd
}

fn restore(read_only: &[PathBuf]) {
    use std::os::unix::fs::PermissionsExt;
    for dir in read_only {
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755));
    }
}

#[test]
fn an_agents_wal_database_is_read_with_nothing_created_beside_it() {
    let h = AgentHome::new();
    let opencode = h.home.join(".local/share/opencode");
    let user = h.home.join(".config/Cursor/User");
    // The agents running (-wal and -shm beside OpenCode's, Cursor's global, Goose's, Crush's and
    // Zed's store),
    // and a workspace store its IDE closed cleanly (the main file alone, still in WAL mode).
    let dirs = [
        opencode.clone(),
        user.join("globalStorage"),
        user.join("workspaceStorage/0a1b2c3d4e5f"),
        h.home.join(".local/share/goose/sessions"),
        h.home
            .join(crate::common::agent_home::CRUSH_PROJECT)
            .join(".crush"),
        h.home.join(".local/share/zed/threads"),
    ];
    let before: Vec<Vec<String>> = dirs.iter().map(|d| entries(d)).collect();
    assert!(
        before[0].contains(&"opencode.db-wal".to_string()),
        "{before:?}"
    );
    assert_eq!(before[2], ["state.vscdb", "workspace.json"]);
    index_pristine(&h);
    let after: Vec<Vec<String>> = dirs.iter().map(|d| entries(d)).collect();
    assert_eq!(
        after, before,
        "nothing created beside the agents' databases"
    );
    assert!(
        before[3].contains(&"sessions.db-wal".to_string()),
        "{before:?}"
    );
    assert_eq!(sessions_of(&h, "opencode"), 2);
    assert_eq!(sessions_of(&h, "cursor"), 4);
    assert_eq!(sessions_of(&h, "goose"), 2);
    assert_eq!(sessions_of(&h, "crush"), 2);
    assert_eq!(sessions_of(&h, "zed"), 3);

    // The same stores read by a user who cannot write their folders.
    let data = h.home.parent().expect("tmp").join("data-reader");
    let out = finish(as_reader_who_cannot_write(
        &h,
        &data,
        &dirs,
        &["index", "--quiet"],
    ));
    restore(&dirs);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doctor = finish(as_reader_who_cannot_write(
        &h,
        &data,
        &[],
        &["doctor", "--json"],
    ));
    let d: serde_json::Value = serde_json::from_slice(&doctor.stdout).expect("doctor json");
    let count = |agent: &str| sessions_in(&d, agent);
    assert_eq!(count("opencode"), Some(2), "{d}");
    assert_eq!(count("cursor"), Some(4), "{d}");
    assert_eq!(count("goose"), Some(2), "{d}");
    assert_eq!(count("crush"), Some(2), "{d}");
    assert_eq!(count("zed"), Some(3), "{d}");
    assert_eq!(dirs.iter().map(|d| entries(d)).collect::<Vec<_>>(), before);
}

#[test]
fn a_wal_left_without_its_shm_in_a_read_only_folder_is_read() {
    let h = AgentHome::new();
    // What a crash leaves: the database and its -wal (the fixture's rows are only in the
    // -wal: the writer never checkpoints), no -shm.
    let crashed = h.home.join("crashed");
    std::fs::create_dir(&crashed).expect("mkdir");
    let live = h.home.join(".local/share/opencode");
    for name in ["opencode.db", "opencode.db-wal"] {
        std::fs::copy(live.join(name), crashed.join(name)).expect("copy");
    }
    let before = entries(&crashed);
    let data = h.home.parent().expect("tmp").join("data-crashed");
    let db = crashed.join("opencode.db");
    let args = [
        "index",
        "--quiet",
        "--sessions",
        db.to_str().expect("utf-8"),
    ];
    let dirs = [crashed.clone()];
    let out = finish(as_reader_who_cannot_write(&h, &data, &dirs, &args));
    restore(&dirs);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(entries(&crashed), before);
    let found = finish(as_reader_who_cannot_write(
        &h,
        &data,
        &[],
        &["search", "-q", "checkout test", "--include", "episodes"],
    ));
    let text = String::from_utf8_lossy(&found.stdout);
    assert!(text.contains("ses_1a2b3c4d5ffeRootSessionAbCd"), "{text}");
}

#[test]
fn a_folder_the_indexer_cannot_list_is_named_not_skipped() {
    use std::os::unix::fs::PermissionsExt;
    let h = AgentHome::new();
    let pi_project = h.home.join(".pi/agent/sessions/--home-dev-ledger--");
    let gemini_tmp = h.home.join(".gemini/tmp");
    let locked = [pi_project.clone(), gemini_tmp.clone()];
    for dir in &locked {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o000)).expect("chmod");
    }
    let data = h.home.parent().expect("tmp").join("data-locked");
    let out = finish(as_reader_who_cannot_write(
        &h,
        &data,
        &[],
        &["index", "--quiet"],
    ));
    let doctor = finish(as_reader_who_cannot_write(
        &h,
        &data,
        &[],
        &["doctor", "--json"],
    ));
    restore(&locked);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    for dir in &locked {
        let named = format!("could not read {}: cannot list this folder", dir.display());
        assert!(stderr.contains(&named), "{named} in:\n{stderr}");
    }
    let d: serde_json::Value = serde_json::from_slice(&doctor.stdout).expect("doctor json");
    assert_eq!(d["unreadable_transcripts"]["count"], 2, "{d}");
    let examples = d["unreadable_transcripts"]["examples"].to_string();
    assert!(
        examples.contains("--home-dev-ledger--") && examples.contains(".gemini/tmp"),
        "{examples}"
    );
    assert!(
        d["problems"].to_string().contains("chmod u+rx FOLDER"),
        "{d}"
    );
    // Everything else was read.
    let count = |agent: &str| sessions_in(&d, agent);
    assert_eq!(count("claude"), Some(1), "{d}");
    assert_eq!(count("opencode"), Some(2), "{d}");
}

#[test]
fn doctor_names_an_agent_database_the_index_could_not_read_and_says_what_to_do() {
    let h = AgentHome::new();
    // A second OpenCode database (a channel build's name) whose pages are noise after a valid
    // header: SQLite opens it and then finds it malformed.
    let broken = h.home.join(".local/share/opencode/opencode-dev.db");
    {
        let c = rusqlite::Connection::open(&broken).expect("create");
        let sql = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/agents/opencode/opencode.sql"),
        )
        .expect("fixture sql");
        c.execute_batch(&sql).expect("fill");
    }
    let mut bytes = std::fs::read(&broken).expect("read");
    for b in bytes.iter_mut().skip(100) {
        *b = 0x55;
    }
    std::fs::write(&broken, &bytes).expect("damage");
    let out = finish(h.command(&["index", "--quiet"]));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("opencode-dev.db"), "{stderr}");
    let d = doctor_json(&h);
    assert_eq!(d["failed_stores"]["count"], 1, "{d}");
    assert_eq!(d["changed_transcripts"]["count"], 0, "not called new: {d}");
    let example = d["failed_stores"]["examples"][0].to_string();
    assert!(example.contains("opencode-dev.db"), "{example}");
    let problems = d["problems"].to_string();
    assert!(
        problems.contains(".recover") && !problems.contains("grew or appeared"),
        "{problems}"
    );
    // Once the agent's file changes (repaired, or replaced), it is new again.
    std::fs::remove_file(&broken).expect("rm");
    std::fs::write(&broken, b"").expect("empty");
    let d = doctor_json(&h);
    assert_eq!(d["failed_stores"]["count"], 0, "{d}");
}

#[test]
fn a_folder_that_may_be_listed_but_not_entered_and_a_root_out_of_reach_are_named() {
    use std::os::unix::fs::PermissionsExt;
    let h = AgentHome::new();
    let claude_project = h.home.join(".claude/projects/-home-dev-shop");
    let opencode = h.home.join(".local/share/opencode");
    std::fs::set_permissions(&claude_project, std::fs::Permissions::from_mode(0o444))
        .expect("chmod");
    std::fs::set_permissions(&opencode, std::fs::Permissions::from_mode(0o000)).expect("chmod");
    let data = h.home.parent().expect("tmp").join("data-444");
    let out = finish(as_reader_who_cannot_write(
        &h,
        &data,
        &[],
        &["index", "--quiet"],
    ));
    let doctor = finish(as_reader_who_cannot_write(
        &h,
        &data,
        &[],
        &["doctor", "--json"],
    ));
    let back = [claude_project.clone(), opencode.clone()];
    restore(&back);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let entries = format!(
        "could not read {}: cannot open its entries",
        claude_project.display()
    );
    assert!(stderr.contains(&entries), "{entries} in:\n{stderr}");
    let reached = format!(
        "could not read {}: cannot be reached",
        opencode.join("opencode.db").display()
    );
    assert!(stderr.contains(&reached), "{reached} in:\n{stderr}");
    let d: serde_json::Value = serde_json::from_slice(&doctor.stdout).expect("doctor json");
    let examples = d["unreadable_transcripts"]["examples"].to_string();
    assert!(
        examples.contains("-home-dev-shop") && examples.contains("opencode"),
        "{d}"
    );
}

/// The reader's saved cursor holds the session's metadata as the records wrote it: every string
/// in it is redacted on its own, so no secret is kept there and the cursor stays whole (redacted
/// as one text, a value ran on into the next field: the secret kept, and the title lost on the
/// next append).
#[test]
fn the_saved_cursor_keeps_no_secret_and_survives_an_append() {
    use crate::common::agent_home::{append, claude_line, CLAUDE_SESSION};
    let h = AgentHome::new();
    let file = h.home.join(format!(
        ".claude/projects/-home-dev-shop/{CLAUDE_SESSION}.jsonl"
    ));
    let mut line: serde_json::Value = serde_json::from_str(&claude_line(
        CLAUDE_SESSION,
        "c1de0000-0000-4000-8000-000000000002",
        None,
        "user",
        "why does the cart lose items",
        "/home/dev/shop",
    ))
    .expect("json");
    line["gitBranch"] = "fix/password Gb7!CNRYz10".into();
    line["version"] = "2.1.172 the token is Vr3!CNRYm03".into();
    append(&file, &line.to_string());
    append(
        &file,
        &serde_json::json!({"type": "custom-title", "customTitle": "Nice readable title",
            "sessionId": CLAUDE_SESSION})
        .to_string(),
    );
    index_pristine(&h);
    append(
        &file,
        &claude_line(
            CLAUDE_SESSION,
            "c1de0000-0000-4000-8000-000000000003",
            None,
            "user",
            "and the wishlist too",
            "/home/dev/shop",
        ),
    );
    index_pristine(&h);
    let store =
        knowledge::sources::sqlite::open_ro(&h.data().join("episodes.sqlite")).expect("store");
    let cursors: Vec<String> = {
        let mut st = store
            .prepare(
                "SELECT CASE WHEN typeof(parser_state) = 'blob' THEN unpack_text(parser_state)
                 ELSE parser_state END FROM files",
            )
            .expect("prepare");
        let rows = st.query_map([], |r| r.get(0)).expect("query");
        rows.collect::<Result<_, _>>().expect("rows")
    };
    for c in &cursors {
        assert!(!c.contains("CNRY"), "a secret in a saved cursor: {c}");
        if !c.is_empty() && c.starts_with(['{', '[']) {
            serde_json::from_str::<serde_json::Value>(c).expect("the cursor is still JSON");
        }
    }
    let title: Option<String> = store
        .query_row(
            "SELECT title FROM sessions WHERE session_id = ?1",
            [CLAUDE_SESSION],
            |r| r.get(0),
        )
        .expect("session");
    assert_eq!(title.as_deref(), Some("Nice readable title"));
}
