//! Goose (Block's open-source agent: the CLI and the desktop app) sessions: one SQLite database,
//! `$XDG_DATA_HOME/goose/sessions/sessions.db` (default `~/.local/share/goose/sessions/`;
//! `GOOSE_PATH_ROOT` moves it to `$GOOSE_PATH_ROOT/data/sessions/sessions.db`), written in WAL
//! mode while we read it.
//!
//! Tables (schema v9): `sessions(id 'YYYYMMDD_N', name, description, working_dir,
//! created_at / updated_at (SQLite `CURRENT_TIMESTAMP` text, UTC), session_type
//! user|scheduled|specialist|hidden|terminal, …)` and `messages(id autoincrement, message_id,
//! session_id, role user|assistant, content_json, created_timestamp (unix seconds),
//! metadata_json{userVisible, agentVisible})`. `content_json` is a list of
//! `{type:text,text}`, `{type:thinking,thinking}`, `{type:toolRequest,id,toolCall}` (`toolCall`
//! a result: `{status:success,value:{name,arguments}}` or `{status:error,error}`),
//! `{type:toolResponse,id,toolResult}` (`{status:success,value:[content] | {content:[…],
//! isError}}` or `{status:error,error}`; these ride on `user` messages and are plumbing, not
//! what a person typed), and bookkeeping items (`image`, `redactedThinking`,
//! `toolConfirmationRequest`, `systemNotification`, …) counted as ignored. A message with
//! `metadata_json.userVisible=false` was never shown: its text is context Goose injected.
//!
//! The session id is `sessions.id`, the cwd `working_dir`, the title `name` (else
//! `description`); times are each message's `created_timestamp`, the session's `created_at`
//! when no message has one. A session with a `parent_session_id` (a column agentsview reads;
//! not in the schema read here) is that session's subagent; a `specialist` or `hidden` session
//! without one is a subagent run whose parent is not recorded: its `user` text is read as the
//! task an agent wrote. Resume: `goose session --resume --session-id <id>`.
//!
//! Like OpenCode's database the store holds many sessions (`StoreKind::Database`): it is opened
//! so nothing is created beside it (`agent_db`), read in one snapshot, and a session whose
//! fingerprint (its `updated_at`, its message count and its latest message row id) changed is
//! pushed whole with `replace`. Cells are read as what they hold (`sql_cell`): a row that
//! cannot be read is counted and skipped. Watch mode follows `sessions.db-wal`.
//!
//! Read from `FORMATS-next.md` (block/goose `session_manager.rs` @ dbec1655c177, schema v9,
//! cross-checked against agentsview) and checked against Goose's `conversation/message.rs` and
//! `tool_result_serde.rs` @ 05132966 (read, nothing copied): the item tags, `toolCall` /
//! `toolResult` as `{status:success,value}` | `{status:error,error:<string>}`, a result's value
//! an rmcp `CallToolResult` or (older sessions) a bare content list. The resume command was
//! checked against the CLI's `cli.rs` (`Identifier`: `--session-id`, alias `--id`, "a session ID
//! to resume. Requires --resume"; a bare `--resume` takes the latest session), and the shell
//! tool's name and input (`developer__shell{command}`) against Goose's own tests. Not
//! confirmed: `isError` as rmcp spells it on disk, the other tool names read for facts
//! (`developer__text_editor{command,path}`, `subagent__execute_task` / `dynamic_task__*`) and
//! `parent_session_id`. The older per-session `<id>.jsonl` files (before about v1.10, imported
//! into the database by Goose itself) are not read.

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
use super::parser::{cap_chars, command_program, content_text, render_tool_input, str_of, Ctx};
use crate::sources::agent_db::{changed_db, columns, AgentDb};
use crate::sources::agent_knowledge::ms_to_rfc3339;
use crate::sources::sql_cell::{col, exact_text, int, lossy_text};

/// The Goose reader.
pub struct Reader;

/// The database's file name.
const DB_NAME: &str = "sessions.db";

fn sql_err(e: rusqlite::Error) -> io::Error {
    io::Error::other(format!("goose database: {e}"))
}

/// A `sessions.db` that is SQLite and holds Goose's `sessions` and `messages` tables (with
/// `content_json`, which no other agent's `messages` has).
fn has_goose_schema(path: &Path) -> bool {
    crate::sources::agent_db::has_schema(
        path,
        "SELECT (SELECT count(*) FROM sqlite_master WHERE type='table' AND name='sessions')
              + (SELECT count(*) FROM pragma_table_info('messages') WHERE name='content_json')",
        2,
    )
}

/// `<…>/goose/sessions/sessions.db` or `<…>/data/sessions/sessions.db`: Goose's own place.
fn is_in_goose_place(path: &Path) -> bool {
    let mut up = path.ancestors().skip(1).filter_map(|p| p.file_name());
    path.file_name().is_some_and(|n| n == DB_NAME)
        && up.next().is_some_and(|n| n == "sessions")
        && up.next().is_some_and(|n| n == "goose" || n == "data")
}

impl AgentReader for Reader {
    fn agent(&self) -> Agent {
        Agent::Goose
    }

    fn name(&self) -> &'static str {
        "goose"
    }

    fn label(&self) -> &'static str {
        "Goose"
    }

    fn store_kind(&self, _path: &Path) -> StoreKind {
        StoreKind::Database
    }

    /// `$GOOSE_PATH_ROOT/data/sessions/sessions.db`, else
    /// `$XDG_DATA_HOME/goose/sessions/sessions.db` (default `~/.local/share/goose/…`).
    fn roots(&self, env: &Env) -> Vec<PathBuf> {
        if let Some(root) = env.dir("GOOSE_PATH_ROOT") {
            return vec![root.join("data/sessions").join(DB_NAME)];
        }
        env.dir("XDG_DATA_HOME")
            .or_else(|| env.home().map(|h| h.join(".local/share")))
            .map(|d| vec![d.join("goose/sessions").join(DB_NAME)])
            .unwrap_or_default()
    }

    /// Goose's database by its default place (`goose/sessions/sessions.db`), or any `.db`
    /// holding Goose's tables (a `$GOOSE_PATH_ROOT` one, a copy named with `--sessions`).
    fn recognise(&self, path: &Path, _head: &mut Head<'_>) -> Option<Recognised> {
        let in_xdg_place = is_in_goose_place(path)
            && path
                .parent()
                .and_then(Path::parent)
                .and_then(Path::file_name)
                .is_some_and(|n| n == "goose");
        Recognised::database(path, in_xdg_place, has_goose_schema)
    }

    fn read(
        &self,
        file: &TranscriptFile,
        from: Option<Resume<'_>>,
        limits: ReadLimits,
        sink: &mut dyn EventSink,
    ) -> io::Result<ReadEnd> {
        let conn = AgentDb::open(&file.path).map_err(sql_err)?;
        conn.snapshot(sql_err, |c| read_snapshot(c, from, limits, sink))
    }

    fn resume_command(&self, quoted_session_id: &str) -> Option<String> {
        Some(format!(
            "goose session --resume --session-id {quoted_session_id}"
        ))
    }

    /// A write lands in `sessions.db-wal` first (the database changes only at a checkpoint);
    /// `-shm` is not followed (readers write it).
    fn store_of_change(&self, changed: &Path) -> Option<PathBuf> {
        changed_db(changed, DB_NAME).filter(|db| is_in_goose_place(db))
    }
}

/// One row of `sessions`, as far as the reader needs it.
struct SessionRow {
    id: String,
    parent_id: Option<String>,
    session_type: Option<String>,
    cwd: Option<String>,
    title: Option<String>,
    created: Option<String>,
    updated: Option<String>,
}

fn read_snapshot(
    conn: &Connection,
    from: Option<Resume<'_>>,
    limits: ReadLimits,
    sink: &mut dyn EventSink,
) -> io::Result<ReadEnd> {
    let msg_cols = columns(conn, "messages").map_err(sql_err)?;
    if columns(conn, "sessions").map_err(sql_err)?.is_empty()
        || !msg_cols.iter().any(|c| c == "content_json")
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "not a Goose database: no sessions and messages(content_json) tables",
        ));
    }
    let mut fingerprints = SessionFingerprints::resume(from);
    let mut stats = ParseStats::default();
    let sessions = sessions(conn, &mut stats).map_err(sql_err)?;
    let msg_fp = message_fingerprints(conn).map_err(sql_err)?;
    for s in &sessions {
        let (n, last) = msg_fp.get(&s.id).copied().unwrap_or((0, 0));
        let fp = format!("{}/{n}/{last}", s.updated.as_deref().unwrap_or(""));
        if !fingerprints.changed(&s.id, fp) {
            continue;
        }
        let st = push_session(conn, s, &msg_cols, limits, sink).map_err(sql_err)?;
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
        "SELECT id, {}, {}, {}, coalesce(nullif({}, ''), nullif({}, '')), {}, {}
         FROM sessions ORDER BY {}, id",
        column("parent_session_id"),
        column("session_type"),
        column("working_dir"),
        column("name"),
        column("description"),
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
            session_type: col(r, 2, lossy_text),
            cwd: col(r, 3, lossy_text).filter(|d| !d.is_empty()),
            title: col(r, 4, lossy_text),
            created: col(r, 5, lossy_text),
            updated: col(r, 6, lossy_text),
        });
    }
    Ok(out)
}

/// Per session: its message count and latest message row id.
fn message_fingerprints(conn: &Connection) -> rusqlite::Result<HashMap<String, (i64, i64)>> {
    let mut st =
        conn.prepare("SELECT session_id, count(*), max(rowid) FROM messages GROUP BY session_id")?;
    let mut rows = st.query([])?;
    let mut out = HashMap::new();
    while let Some(r) = rows.next()? {
        if let Some(id) = col(r, 0, exact_text) {
            out.insert(
                id,
                (col(r, 1, int).unwrap_or(0), col(r, 2, int).unwrap_or(0)),
            );
        }
    }
    Ok(out)
}

/// SQLite's `CURRENT_TIMESTAMP` (`YYYY-MM-DD HH:MM:SS`, UTC) or an RFC 3339 text → RFC 3339.
fn sql_time(s: &str) -> Option<String> {
    let s = s.trim();
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(s) {
        return ms_to_rfc3339(t.timestamp_millis());
    }
    chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S%.f")
        .ok()
        .and_then(|t| ms_to_rfc3339(t.and_utc().timestamp_millis()))
}

/// Who wrote a session's `user` text.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Speaker {
    Person,
    ParentAgent,
}

/// Pushes one session in full; returns its counters.
fn push_session(
    conn: &Connection,
    s: &SessionRow,
    msg_cols: &[String],
    limits: ReadLimits,
    sink: &mut dyn EventSink,
) -> rusqlite::Result<ParseStats> {
    sink.session(SessionStart {
        session_id: s.id.clone(),
        replace: true,
    });
    let mut cx = Ctx::default();
    cx.meta.session_id = Some(s.id.clone());
    cx.meta.cwd = s.cwd.clone();
    if let Some(t) = &s.title {
        cx.set_title(t, 2);
    }
    let sub_run = matches!(s.session_type.as_deref(), Some("specialist" | "hidden"));
    let speaker = if s.parent_id.is_some() || sub_run {
        Speaker::ParentAgent
    } else {
        Speaker::Person
    };
    let has = |c: &str| msg_cols.iter().any(|n| n == c);
    let time_col = if has("created_timestamp") {
        "created_timestamp"
    } else {
        "NULL"
    };
    let meta_col = if has("metadata_json") {
        "metadata_json"
    } else {
        "NULL"
    };
    let sql = format!(
        "SELECT role, length(CAST(content_json AS BLOB)),
                CASE WHEN length(CAST(content_json AS BLOB)) <= ?2 THEN content_json END,
                {time_col}, {meta_col}
         FROM messages WHERE session_id = ?1 ORDER BY {time_col}, rowid"
    );
    let mut st = conn.prepare_cached(&sql)?;
    let max = limits.max_line_bytes as i64;
    let rows = st.query_map(params![s.id, max], |r| {
        Ok((
            col(r, 0, lossy_text),
            col(r, 1, int).unwrap_or(0),
            col(r, 2, lossy_text),
            col(r, 3, int),
            col(r, 4, lossy_text),
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (role, len, content, secs, meta) = row?;
        cx.stats.lines += 1;
        let Some(text) = content else {
            if len > 0 {
                cx.stats.skipped_oversized += 1;
            } else {
                cx.stats.skipped_broken += 1;
            }
            continue;
        };
        let Ok(Value::Array(items)) = serde_json::from_str::<Value>(&text) else {
            cx.stats.skipped_broken += 1;
            continue;
        };
        let time = secs
            .and_then(|t| t.checked_mul(1000))
            .and_then(ms_to_rfc3339);
        cx.touch_time(time.as_deref());
        let visible = meta
            .and_then(|m| serde_json::from_str::<Value>(&m).ok())
            .and_then(|m| m.get("userVisible").and_then(Value::as_bool))
            != Some(false);
        match role.as_deref() {
            Some("user") => {
                for item in &items {
                    user_item(&mut cx, item, speaker, visible, time.clone(), &mut out);
                }
            }
            Some("assistant") => {
                for item in &items {
                    assistant_item(&mut cx, item, time.clone(), &mut out);
                }
            }
            _ => cx.stats.skipped_unknown += 1,
        }
        for ev in out.drain(..) {
            sink.event(ev);
        }
    }
    if cx.meta.created_at.is_none() {
        cx.meta.created_at = s.created.as_deref().and_then(sql_time);
    }
    if let Some(parent) = &s.parent_id {
        cx.meta.parent_session_id = Some(parent.clone());
        cx.meta.agent_id = Some(s.id.clone());
        cx.meta.agent_description = s.title.clone();
    }
    let outcome = cx.outcome.outcome();
    let stats = cx.stats;
    sink.end_session(cx.meta, outcome);
    Ok(stats)
}

fn user_item(
    cx: &mut Ctx,
    item: &Value,
    speaker: Speaker,
    visible: bool,
    time: Option<String>,
    out: &mut Vec<ParsedEvent>,
) {
    match str_of(item, "type").unwrap_or("") {
        "text" => {
            let text = str_of(item, "text").unwrap_or("").to_string();
            if text.trim().is_empty() {
                return;
            }
            let ty = match speaker {
                _ if !visible => EventType::SystemContext,
                Speaker::ParentAgent => EventType::AgentPrompt,
                Speaker::Person if text.trim_start().starts_with('/') => EventType::UserCommand,
                Speaker::Person => EventType::UserMessage,
            };
            cx.emit(out, ParsedEvent::new(ty, time, text));
        }
        "toolResponse" => tool_response(cx, item, time, out),
        _ => cx.stats.ignored += 1,
    }
}

fn assistant_item(cx: &mut Ctx, item: &Value, time: Option<String>, out: &mut Vec<ParsedEvent>) {
    match str_of(item, "type").unwrap_or("") {
        "text" => {
            let text = str_of(item, "text").unwrap_or("").to_string();
            if !text.trim().is_empty() {
                cx.emit(
                    out,
                    ParsedEvent::new(EventType::AssistantMessage, time, text),
                );
            }
        }
        "thinking" | "reasoning" => {
            let text = str_of(item, "thinking")
                .or_else(|| str_of(item, "text"))
                .unwrap_or("")
                .to_string();
            if !text.trim().is_empty() {
                cx.emit(
                    out,
                    ParsedEvent::new(EventType::AssistantThinking, time, text),
                );
            }
        }
        "toolRequest" | "frontendToolRequest" => tool_request(cx, item, time, out),
        // A response the assistant holds itself (never seen; read all the same).
        "toolResponse" => tool_response(cx, item, time, out),
        _ => cx.stats.ignored += 1,
    }
}

fn tool_request(cx: &mut Ctx, item: &Value, time: Option<String>, out: &mut Vec<ParsedEvent>) {
    let id = str_of(item, "id").unwrap_or("");
    let call = item.get("toolCall").unwrap_or(&Value::Null);
    let value = call.get("value").unwrap_or(call);
    let name = str_of(value, "name").unwrap_or("tool").to_string();
    let input = value.get("arguments").cloned().unwrap_or(Value::Null);
    cx.remember_tool(id, &name);
    let mut ev = ParsedEvent::new(
        EventType::AssistantToolUse,
        time.clone(),
        render_tool_input(short_name(&name), &input),
    );
    ev.tool_name = Some(name.clone());
    ev.tool_use_id = (!id.is_empty()).then(|| id.to_string());
    ev.facts = call_facts(&name, id, &input);
    cx.emit(out, ev);
    // A call Goose could not even parse answers itself: a failed result.
    if str_of(call, "status") == Some("error") {
        let mut res = ParsedEvent::new(EventType::ToolResult, time, error_text(call));
        res.tool_name = Some(name);
        res.tool_use_id = (!id.is_empty()).then(|| id.to_string());
        res.is_error = true;
        cx.emit(out, res);
    }
}

fn tool_response(cx: &mut Ctx, item: &Value, time: Option<String>, out: &mut Vec<ParsedEvent>) {
    let id = str_of(item, "id").unwrap_or("");
    let result = item.get("toolResult").unwrap_or(&Value::Null);
    let (text, failed) = if str_of(result, "status") == Some("error") {
        (error_text(result), true)
    } else {
        let value = result.get("value").unwrap_or(result);
        let is_error = value.get("isError").and_then(Value::as_bool) == Some(true);
        let body = match value {
            Value::Object(m) if m.contains_key("content") => content_text(&m["content"]),
            other => content_text(other),
        };
        (body, is_error)
    };
    let mut ev = ParsedEvent::new(EventType::ToolResult, time, text);
    ev.tool_name = cx.tool_name(id);
    ev.tool_use_id = (!id.is_empty()).then(|| id.to_string());
    ev.is_error = failed;
    cx.emit(out, ev);
}

fn error_text(v: &Value) -> String {
    match v.get("error") {
        Some(Value::String(s)) => s.clone(),
        Some(e) => str_of(e, "message")
            .map(str::to_string)
            .unwrap_or_else(|| e.to_string()),
        None => "error".to_string(),
    }
}

/// `developer__shell` → `shell`: Goose prefixes a tool with its extension's name.
fn short_name(name: &str) -> &str {
    name.rsplit_once("__").map_or(name, |(_, t)| t)
}

/// Facts of a call, by the developer extension's tool names.
fn call_facts(name: &str, id: &str, input: &Value) -> Vec<Fact> {
    let arg = |k: &str| str_of(input, k).map(str::to_string);
    match short_name(name) {
        "shell" => arg("command")
            .as_deref()
            .and_then(command_program)
            .map(|program| Fact::Command { program })
            .into_iter()
            .collect(),
        "text_editor" if arg("command").as_deref() != Some("view") => arg("path")
            .map(|path| Fact::FileEdit { path })
            .into_iter()
            .collect(),
        "write" | "edit" => arg("path")
            .map(|path| Fact::FileEdit { path })
            .into_iter()
            .collect(),
        "execute_task" | "create_task" | "delegate" => vec![Fact::Spawn {
            tool_use_id: (!id.is_empty()).then(|| id.to_string()),
            subagent_type: None,
            name: None,
            description: arg("instructions")
                .or_else(|| arg("task"))
                .or_else(|| arg("description"))
                .map(|d| cap_chars(&d, 500)),
            team_name: None,
        }],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests;
