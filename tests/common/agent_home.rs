//! A home directory holding every agent's store at its default place, built in a temp dir from
//! the committed fixtures (`fixtures/agents/<agent>/`, `fixtures/formats/{kimi,kimi_code,iflow,continue,amp,openhands}/`,
//! `fixtures/aider/`): what a user who runs
//! every agent has. The SQLite stores (OpenCode, Cursor IDE, Goose, Crush, Zed) are built from their SQL text
//! and kept open by a writer connection in WAL mode, the way the running agent keeps them.
//! Commands run against it with [`AgentHome::command`]: only `HOME` and `PATH` set, so the
//! machine's own agents (and their env overrides) never leak in.

use std::path::{Path, PathBuf};
use std::process::Command;

use rusqlite::Connection;

use super::cli::bin;

/// The Claude Code session written into the home.
pub const CLAUDE_SESSION: &str = "0a11ce00-0000-4000-8000-00000000c1de";
/// The Codex rollout written into the home.
pub const CODEX_SESSION: &str = "0199aaaa-0000-7000-8000-00000000c0de";
/// The Crush project inside the home (`projects.json` lists it; its `.crush/crush.db`).
pub const CRUSH_PROJECT: &str = "src/ledger";
/// The Aider repository (a git work tree) inside the home; commands run in it.
pub const AIDER_REPO: &str = "src/myrepo";

pub struct AgentHome {
    pub home: PathBuf,
    /// The writers of the database stores, open as long as the home lives.
    pub opencode: Connection,
    pub cursor: Connection,
    pub goose: Connection,
    pub crush: Connection,
    pub zed: Connection,
    /// Kilo Code's `kilo.db` (OpenCode's schema).
    pub kilo: Connection,
    _tmp: tempfile::TempDir,
}

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A copy of `src` in a temp dir (tests never write inside the repository).
pub fn copy_tree(src: &Path, dst: &Path) {
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

/// The database `sql` builds at `path`, in WAL mode with checkpoints off, the connection left
/// open: the agent's last writes sit in the `-wal` file.
pub fn wal_db(path: &Path, sql: &str) -> Connection {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    let c = Connection::open(path).expect("create db");
    c.execute_batch("PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;")
        .expect("wal");
    c.execute_batch(sql).expect("fixture sql runs");
    c
}

fn fixture_sql(rel: &str) -> String {
    std::fs::read_to_string(manifest().join("fixtures/agents").join(rel)).expect("fixture sql")
}

/// Zed's `0.3.0` thread documents stored zstd-compressed, as current Zed stores them (the
/// fixture's SQL holds them as JSON text, to be read).
pub fn zstd_threads(c: &Connection) {
    let rows: Vec<(String, String)> = c
        .prepare("SELECT id, data FROM threads WHERE json_extract(data, '$.version') = '0.3.0'")
        .and_then(|mut st| {
            st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<_>>()
        })
        .expect("threads");
    for (id, data) in rows {
        let packed = ruzstd::encoding::compress_to_vec(
            data.as_bytes(),
            ruzstd::encoding::CompressionLevel::Fastest,
        );
        c.execute(
            "UPDATE threads SET data_type = 'zstd', data = ?2 WHERE id = ?1",
            rusqlite::params![id, packed],
        )
        .expect("compress");
    }
}

/// A line appended to (or starting) a file.
pub fn append(path: &Path, line: &str) {
    use std::io::Write;
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .expect("open for append");
    writeln!(f, "{line}").expect("append");
}

impl AgentHome {
    pub fn new() -> AgentHome {
        let tmp = tempfile::tempdir().expect("temp dir");
        let home = tmp.path().join("home");
        let fx = manifest().join("fixtures/agents");
        // Claude Code and Codex: one session each, written here in their formats.
        let claude = home.join(format!(
            ".claude/projects/-home-dev-shop/{CLAUDE_SESSION}.jsonl"
        ));
        append(
            &claude,
            &claude_line(
                CLAUDE_SESSION,
                "c1de0000-0000-4000-8000-000000000001",
                None,
                "user",
                "The checkout page double-charges on retry.",
                "/home/dev/shop",
            ),
        );
        let codex = home.join(format!(
            ".codex/sessions/2026/05/02/rollout-2026-05-02T09-00-00-{CODEX_SESSION}.jsonl"
        ));
        append(
            &codex,
            &serde_json::json!({"timestamp": "2026-05-02T09:00:00.000Z", "type": "session_meta",
                "payload": {"id": CODEX_SESSION, "timestamp": "2026-05-02T09:00:00.000Z",
                "cwd": "/home/dev/infra", "originator": "codex_cli_rs", "cli_version": "0.135.0",
                "source": "cli"}})
            .to_string(),
        );
        append(
            &codex,
            &codex_message("user", "The staging deploy hangs on the migration step."),
        );
        copy_tree(&fx.join("gemini"), &home.join(".gemini"));
        copy_tree(&fx.join("pi"), &home.join(".pi/agent"));
        copy_tree(&fx.join("qwen"), &home.join(".qwen"));
        copy_tree(&fx.join("copilot"), &home.join(".copilot"));
        let formats = manifest().join("fixtures/formats");
        copy_tree(&formats.join("kimi"), &home.join(".kimi"));
        copy_tree(&formats.join("iflow"), &home.join(".iflow"));
        copy_tree(&formats.join("kimi_code"), &home.join(".kimi-code"));
        copy_tree(&formats.join("continue"), &home.join(".continue"));
        copy_tree(&formats.join("amp"), &home.join(".local/share/amp"));
        copy_tree(&formats.join("openhands"), &home.join(".openhands"));
        // Cline, Roo Code and Kilo Code's task folders in VS Code's globalStorage, Cline's SDK
        // sessions in `~/.cline/data`, Kilo Code's database.
        let storage = home.join(".config/Code/User/globalStorage");
        for (agent, ext) in [
            ("cline", "saoudrizwan.claude-dev"),
            ("roo", "rooveterinaryinc.roo-cline"),
            ("kilo", "kilocode.kilo-code"),
        ] {
            copy_tree(&formats.join(agent).join(ext), &storage.join(ext));
        }
        copy_tree(&formats.join("cline/data"), &home.join(".cline/data"));
        let kilo = wal_db(
            &home.join(".local/share/kilo/kilo.db"),
            &std::fs::read_to_string(formats.join("kilo/kilo.sql")).expect("kilo.sql"),
        );
        let opencode = wal_db(
            &home.join(".local/share/opencode/opencode.db"),
            &fixture_sql("opencode/opencode.sql"),
        );
        let goose = wal_db(
            &home.join(".local/share/goose/sessions/sessions.db"),
            &fixture_sql("goose/sessions.sql"),
        );
        // Crush: a project listed in `projects.json`, its database in the project's `.crush`.
        let crush_project = home.join(CRUSH_PROJECT);
        std::fs::create_dir_all(home.join(".local/share/crush")).expect("mkdir");
        std::fs::write(
            home.join(".local/share/crush/projects.json"),
            serde_json::json!({"projects": [{"path": crush_project,
                "data_dir": crush_project.join(".crush"),
                "last_accessed": "2026-09-05T09:20:00Z"}]})
            .to_string(),
        )
        .expect("projects.json");
        let crush = wal_db(
            &crush_project.join(".crush/crush.db"),
            &fixture_sql("crush/crush.sql"),
        );
        let zed = wal_db(
            &home.join(".local/share/zed/threads/threads.db"),
            &fixture_sql("zed/threads.sql"),
        );
        zstd_threads(&zed);
        let user = home.join(".config/Cursor/User");
        let cursor = wal_db(
            &user.join("globalStorage/state.vscdb"),
            &fixture_sql("cursor/state.vscdb.sql"),
        );
        let ws = user.join("workspaceStorage/0a1b2c3d4e5f");
        drop(wal_db(
            &ws.join("state.vscdb"),
            &fixture_sql("cursor/workspace.sql"),
        ));
        std::fs::copy(fx.join("cursor/workspace.json"), ws.join("workspace.json"))
            .expect("workspace.json");
        copy_tree(
            &fx.join("cursor/agent-transcripts"),
            &home.join(".cursor/projects/-home-dev-shop/agent-transcripts"),
        );
        let repo = home.join(AIDER_REPO);
        copy_tree(&manifest().join("fixtures/aider/myrepo"), &repo);
        std::fs::create_dir_all(repo.join(".git")).expect("a git work tree");
        AgentHome {
            home,
            opencode,
            cursor,
            goose,
            crush,
            zed,
            kilo,
            _tmp: tmp,
        }
    }

    /// The Aider repository (a git work tree holding `.aider.chat.history.md`).
    pub fn repo(&self) -> PathBuf {
        self.home.join(AIDER_REPO)
    }

    /// The data dir the tests index into (beside the home, never inside it).
    pub fn data(&self) -> PathBuf {
        self.home.parent().expect("temp dir").join("data")
    }

    /// `knowledge --data-dir DATA <args>` in the Aider repository, with only `HOME` and `PATH`
    /// set: the zero-config discovery a bare command does on this home.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = bin();
        cmd.env_clear()
            .env("HOME", &self.home)
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .current_dir(self.repo())
            .arg("--data-dir")
            .arg(self.data())
            .args(args);
        cmd
    }
}

/// One Claude Code transcript line: a `user` or `assistant` message of `session` in `cwd`.
pub fn claude_line(
    session: &str,
    uuid: &str,
    parent: Option<&str>,
    role: &str,
    text: &str,
    cwd: &str,
) -> String {
    let message = if role == "user" {
        serde_json::json!({"role": "user", "content": text})
    } else {
        serde_json::json!({"role": "assistant", "type": "message",
            "content": [{"type": "text", "text": text}]})
    };
    serde_json::json!({"parentUuid": parent, "isSidechain": false, "type": role,
        "message": message, "uuid": uuid, "timestamp": "2026-05-01T10:00:00.000Z",
        "cwd": cwd, "sessionId": session, "version": "2.1.172"})
    .to_string()
}

/// One Codex `response_item` message line, as a rollout holds it.
pub fn codex_message(role: &str, text: &str) -> String {
    let kind = if role == "user" {
        "input_text"
    } else {
        "output_text"
    };
    serde_json::json!({"timestamp": "2026-05-02T09:00:05.000Z", "type": "response_item",
        "payload": {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}})
    .to_string()
}
