//! Crush (Charm's terminal coding agent) sessions: one SQLite database per project,
//! `<project>/.crush/crush.db` (Crush uses the nearest `.crush` up to the project boundary, else
//! makes one in the working directory; `options.data_directory` in `crush.json` or `--data-dir`
//! moves it), written in WAL mode while we read it. Crush lists the projects it ran in, with
//! their data directories, in `projects.json` beside its global data
//! (`$CRUSH_GLOBAL_DATA/projects.json`, else `$XDG_DATA_HOME/crush/projects.json`, default
//! `~/.local/share/crush/projects.json`): `{projects:[{path, data_dir, last_accessed}]}`. The
//! default roots are the `crush.db` of each project listed there; a bare `knowledge index` also
//! reads the one in the repository it indexes.
//!
//! Tables: `sessions(id, parent_session_id, title, message_count, prompt_tokens,
//! completion_tokens, cost, summary_message_id, todos, updated_at, created_at)` and
//! `messages(id, session_id, role user|assistant|tool|system, parts, model, provider,
//! created_at, updated_at, finished_at, is_summary_message)`; times are unix **seconds**
//! (`strftime('%s','now')`, whatever the migration's comment says). `parts` is a JSON list of
//! `{type, data}`: `text{text}`, `reasoning{thinking}`, `tool_call{id, name, input (a JSON
//! string), finished}`, `tool_result{tool_call_id, name, content, is_error}` (on `tool`
//! messages), `finish{reason end_turn|max_tokens|tool_use|canceled|error|…, message, details}`,
//! `shell_command{command, output, exit_code}` (a `!command` the person ran), `binary` and
//! `image_url` (not indexed). A message with `is_summary_message` is the summary that replaced
//! the conversation before it.
//!
//! The session id is `sessions.id` (a uuid); the cwd is the project's `path` in
//! `projects.json`, else the folder holding `.crush`. A session with a `parent_session_id` is
//! that session's subagent: the `agent` tool (and `agentic_fetch`) names its child
//! `<message id>$$<tool call id>`, so the call that spawned it is known, and its task is that
//! call's `prompt`. Older Crush also kept a title-generation child, `title-<parent id>`: it is
//! no work of the session's and is not read (counted as ignored). Resume: `crush --session
//! <id>` (`-s`; `internal/cmd/root.go`).
//!
//! Like OpenCode's and Goose's databases the store holds many sessions
//! (`StoreKind::Database`): opened so nothing is created beside it (`agent_db`), read in one
//! snapshot, and a session whose fingerprint (its `updated_at`, its messages' count, latest
//! `updated_at` and total size) changed is pushed whole with `replace`. Cells are read as what
//! they hold (`sql_cell`); a row that cannot be read is counted and skipped. Watch mode follows
//! `crush.db-wal`.
//!
//! Read from charmbracelet/crush @ 37f36e93824e (FSL-1.1-MIT; read, nothing copied):
//! `internal/db/migrations/*.sql`, `internal/db/sql/{sessions,messages}.sql`,
//! `internal/message/{content,message}.go`, `internal/session/session.go`,
//! `internal/projects/projects.go`, `internal/config/load.go`, the tool inputs in
//! `internal/agent/tools/` and `internal/agent/agent_tool.go`. Not confirmed against a real
//! database (none is public under a licence this project may use): the fixtures follow the
//! writers' code.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};

use rusqlite::{params, Connection};
use serde_json::Value;

use super::agent::{
    AgentReader, Env, EventSink, Head, ReadEnd, ReadLimits, Recognised, Resume,
    SessionFingerprints, SessionStart, StoreKind,
};
use super::agents::Agent;
use super::discover::TranscriptFile;
use super::model::{EventType, Fact, ParseStats, ParsedEvent};
use super::parser::{cap_chars, command_program, render_tool_input, str_of, Ctx};
use crate::sources::agent_db::{changed_db, columns, AgentDb};
use crate::sources::agent_knowledge::ms_to_rfc3339;
use crate::sources::sql_cell::{col, exact_text, int, lossy_text};

/// The Crush reader.
pub struct Reader;

/// The database's file name.
const DB_NAME: &str = "crush.db";

/// The folder Crush keeps a project's data in by default.
const DATA_DIR: &str = ".crush";

/// The most of `projects.json` read (it lists one small entry per project).
const MAX_PROJECTS_BYTES: u64 = 4 * 1024 * 1024;

fn sql_err(e: rusqlite::Error) -> io::Error {
    io::Error::other(format!("crush database: {e}"))
}

/// Crush's global data folder: `$CRUSH_GLOBAL_DATA`, else `$XDG_DATA_HOME/crush`, else
/// `~/.local/share/crush`.
fn global_data(env: &Env) -> Option<PathBuf> {
    env.dir("CRUSH_GLOBAL_DATA")
        .or_else(|| env.dir("XDG_DATA_HOME").map(|d| d.join("crush")))
        .or_else(|| env.home().map(|h| h.join(".local/share/crush")))
}

/// One project of `projects.json`: its working directory and its data directory.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Project {
    path: PathBuf,
    data_dir: PathBuf,
}

/// The projects `projects.json` in `global` lists; empty when it is missing or unreadable.
fn projects(global: &Path) -> Vec<Project> {
    let file = global.join("projects.json");
    let Ok(bytes) = crate::sources::regular_file::read_limited(&file, MAX_PROJECTS_BYTES) else {
        return Vec::new();
    };
    let Ok(doc) = serde_json::from_slice::<Value>(&bytes) else {
        return Vec::new();
    };
    let list = doc.get("projects").and_then(Value::as_array);
    list.into_iter()
        .flatten()
        .filter_map(|p| {
            let path = PathBuf::from(str_of(p, "path").filter(|s| !s.is_empty())?);
            let data_dir = match str_of(p, "data_dir").filter(|s| !s.is_empty()) {
                Some(d) if Path::new(d).is_absolute() => PathBuf::from(d),
                Some(d) => path.join(d),
                None => path.join(DATA_DIR),
            };
            Some(Project { path, data_dir })
        })
        .collect()
}

/// The working directory of the sessions in the database at `db`: the project whose data
/// directory holds it in `projects.json`, else the folder holding its `.crush`.
fn project_of(db: &Path) -> Option<String> {
    let dir = db.parent()?;
    let listed = global_data(&Env::current())
        .map(|g| projects(&g))
        .unwrap_or_default()
        .into_iter()
        .find(|p| p.data_dir == dir)
        .map(|p| p.path);
    listed
        .or_else(|| {
            (dir.file_name()? == DATA_DIR)
                .then(|| dir.parent().map(Path::to_path_buf))
                .flatten()
        })
        .map(|p| p.to_string_lossy().into_owned())
}

/// A `.db` that is SQLite and holds Crush's `sessions` table and `messages(parts)` (no other
/// agent's `messages` has `parts`).
fn has_crush_schema(path: &Path) -> bool {
    crate::sources::agent_db::has_schema(
        path,
        "SELECT (SELECT count(*) FROM pragma_table_info('sessions')
                  WHERE name='parent_session_id')
              + (SELECT count(*) FROM pragma_table_info('messages') WHERE name='parts')",
        2,
    )
}

/// `<…>/.crush/crush.db`: Crush's own place.
fn is_in_crush_place(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == DB_NAME)
        && path
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|n| n == DATA_DIR)
}

impl AgentReader for Reader {
    fn agent(&self) -> Agent {
        Agent::Crush
    }

    fn name(&self) -> &'static str {
        "crush"
    }

    fn label(&self) -> &'static str {
        "Crush"
    }

    fn store_kind(&self, _path: &Path) -> StoreKind {
        StoreKind::Database
    }

    /// The `crush.db` of every project `projects.json` lists.
    fn roots(&self, env: &Env) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = global_data(env)
            .map(|g| projects(&g))
            .unwrap_or_default()
            .into_iter()
            .map(|p| p.data_dir.join(DB_NAME))
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// `<project>/.crush/crush.db`, read for the repository `knowledge index` runs in even when
    /// `projects.json` does not list it.
    fn project_stores(&self, project: &Path) -> Vec<PathBuf> {
        vec![project.join(DATA_DIR).join(DB_NAME)]
    }

    /// Crush's database by its place (`.crush/crush.db`), or any `.db` holding Crush's tables
    /// (a moved data directory, a copy named with `--sessions`).
    fn recognise(&self, path: &Path, _head: &mut Head<'_>) -> Option<Recognised> {
        Recognised::database(path, is_in_crush_place(path), has_crush_schema)
    }

    fn read(
        &self,
        file: &TranscriptFile,
        from: Option<Resume<'_>>,
        limits: ReadLimits,
        sink: &mut dyn EventSink,
    ) -> io::Result<ReadEnd> {
        let cwd = project_of(&file.path);
        let conn = AgentDb::open(&file.path).map_err(sql_err)?;
        conn.snapshot(sql_err, |c| {
            read_snapshot(c, cwd.as_deref(), from, limits, sink)
        })
    }

    fn resume_command(&self, quoted_session_id: &str) -> Option<String> {
        Some(format!("crush --session {quoted_session_id}"))
    }

    /// A write lands in `crush.db-wal` first (the database changes only at a checkpoint);
    /// `-shm` is not followed (readers write it).
    fn store_of_change(&self, changed: &Path) -> Option<PathBuf> {
        changed_db(changed, DB_NAME).filter(|db| is_in_crush_place(db))
    }
}

/// One row of `sessions`, as far as the reader needs it.
struct SessionRow {
    id: String,
    parent_id: Option<String>,
    title: Option<String>,
    created: Option<i64>,
    updated: Option<i64>,
}

fn read_snapshot(
    conn: &Connection,
    cwd: Option<&str>,
    from: Option<Resume<'_>>,
    limits: ReadLimits,
    sink: &mut dyn EventSink,
) -> io::Result<ReadEnd> {
    let msg_cols = columns(conn, "messages").map_err(sql_err)?;
    if columns(conn, "sessions").map_err(sql_err)?.is_empty()
        || !msg_cols.iter().any(|c| c == "parts")
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "not a Crush database: no sessions and messages(parts) tables",
        ));
    }
    let mut fingerprints = SessionFingerprints::resume(from);
    let mut stats = ParseStats::default();
    let sessions = sessions(conn, &mut stats).map_err(sql_err)?;
    let msg_fp = message_fingerprints(conn, &msg_cols).map_err(sql_err)?;
    for s in &sessions {
        if s.parent_id
            .as_deref()
            .is_some_and(|p| s.id == format!("title-{p}"))
        {
            stats.ignored += 1;
            continue;
        }
        let (n, last, bytes) = msg_fp.get(&s.id).copied().unwrap_or((0, 0, 0));
        let fp = format!("{}/{n}/{last}/{bytes}", s.updated.unwrap_or(0));
        if !fingerprints.changed(&s.id, fp) {
            continue;
        }
        let st = push_session(conn, s, cwd, &msg_cols, limits, sink).map_err(sql_err)?;
        stats.add(&st);
    }
    Ok(fingerprints.finish(stats))
}

/// Every session, oldest first; columns an older schema lacks read as NULL.
fn sessions(conn: &Connection, stats: &mut ParseStats) -> rusqlite::Result<Vec<SessionRow>> {
    let cols = columns(conn, "sessions")?;
    let column = |c: &str| {
        if cols.iter().any(|n| n == c) {
            c.to_string()
        } else {
            "NULL".to_string()
        }
    };
    let sql = format!(
        "SELECT id, {}, {}, {}, {} FROM sessions ORDER BY {}, id",
        column("parent_session_id"),
        column("title"),
        column("created_at"),
        column("updated_at"),
        column("created_at"),
    );
    let mut st = conn.prepare(&sql)?;
    let mut rows = st.query([])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        // A session whose id is not text cannot be looked up again: counted, skipped.
        let Some(id) = col(r, 0, exact_text) else {
            stats.lines += 1;
            stats.skipped_broken += 1;
            continue;
        };
        out.push(SessionRow {
            id,
            parent_id: col(r, 1, exact_text).filter(|p| !p.is_empty()),
            title: col(r, 2, lossy_text),
            created: col(r, 3, int),
            updated: col(r, 4, int),
        });
    }
    Ok(out)
}

/// Per session: its message count, latest `updated_at` and the total size of its parts (a
/// message is rewritten in place as it streams, within the same second).
fn message_fingerprints(
    conn: &Connection,
    msg_cols: &[String],
) -> rusqlite::Result<HashMap<String, (i64, i64, i64)>> {
    let updated = if msg_cols.iter().any(|c| c == "updated_at") {
        "coalesce(max(updated_at), 0)"
    } else {
        "0"
    };
    let sql = format!(
        "SELECT session_id, count(*), {updated}, coalesce(sum(length(CAST(parts AS BLOB))), 0)
         FROM messages GROUP BY session_id"
    );
    let mut st = conn.prepare(&sql)?;
    let mut rows = st.query([])?;
    let mut out = HashMap::new();
    while let Some(r) = rows.next()? {
        if let Some(id) = col(r, 0, exact_text) {
            out.insert(
                id,
                (
                    col(r, 1, int).unwrap_or(0),
                    col(r, 2, int).unwrap_or(0),
                    col(r, 3, int).unwrap_or(0),
                ),
            );
        }
    }
    Ok(out)
}

/// A Crush time (unix seconds; milliseconds read as such, should a writer ever store them)
/// as RFC 3339.
fn crush_time(t: i64) -> Option<String> {
    let ms = if t.abs() >= 100_000_000_000 {
        t
    } else {
        t.checked_mul(1000)?
    };
    ms_to_rfc3339(ms)
}

mod messages;
use messages::*;

#[cfg(test)]
mod tests;
