//! Reading `opencode.db`: every session that changed since the last run, in full.
//!
//! OpenCode (v1.2+) keeps all sessions in one SQLite database in WAL mode, written while we read.
//! It is opened read-only (`agent_db`: a WAL reader never blocks the agent's writes, and nothing
//! is created beside the database) and
//! read inside one read transaction, so every session comes from one consistent snapshot. The
//! cursor is a fingerprint per session (its row's `time_updated` plus the count and latest
//! `time_updated` of its messages and parts): a session whose fingerprint is unchanged is
//! skipped, any other is pushed whole with `replace`, so an edit, a revert (rows deleted) or a
//! part finishing in place are all picked up. Rows over the size cap are counted, never loaded.
//! Cells are read as what they hold (`sql_cell`): a row whose id cannot be read is counted and
//! skipped, a time in the wrong type is taken if it says a number, and invalid UTF-8 in a
//! `data` cell costs a character; one bad row never costs the database.

use std::collections::HashMap;
use std::io;
use std::path::Path;

use rusqlite::{params, Connection};
use serde_json::Value;

use super::events::{child_description, message_events, ms_time, spawned_session, Speaker};
use crate::sources::agent_db::{columns, AgentDb};
use crate::sources::episodes::agent::{
    EventSink, ReadEnd, ReadLimits, Resume, SessionFingerprints, SessionStart,
};
use crate::sources::episodes::model::ParseStats;
use crate::sources::episodes::parser::{str_of, Ctx};
use crate::sources::sql_cell::{col, exact_text, int, lossy_text};

/// One row of `session`, as far as the reader needs it.
struct SessionRow {
    id: String,
    parent_id: Option<String>,
    directory: Option<String>,
    title: Option<String>,
    version: Option<String>,
    created: Option<i64>,
    updated: Option<i64>,
}

fn sql_err(e: rusqlite::Error) -> io::Error {
    io::Error::other(format!("opencode database: {e}"))
}

/// Reads every changed session of the database at `path` into `sink`.
pub(crate) fn read_db(
    path: &Path,
    from: Option<Resume<'_>>,
    limits: ReadLimits,
    sink: &mut dyn EventSink,
) -> io::Result<ReadEnd> {
    let conn = AgentDb::open(path).map_err(sql_err)?;
    conn.snapshot(sql_err, |c| read_snapshot(c, from, limits, sink))
}

fn read_snapshot(
    conn: &Connection,
    from: Option<Resume<'_>>,
    limits: ReadLimits,
    sink: &mut dyn EventSink,
) -> io::Result<ReadEnd> {
    let tables = table_names(conn).map_err(sql_err)?;
    if !["session", "message", "part"]
        .iter()
        .all(|t| tables.iter().any(|n| n == t))
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "not an OpenCode database: no session, message and part tables",
        ));
    }
    let mut fingerprints = SessionFingerprints::resume(from);
    let mut stats = ParseStats::default();
    let has_project = tables.iter().any(|t| t == "project");
    let sessions = sessions(conn, has_project, &mut stats).map_err(sql_err)?;
    let msg_fp = child_fingerprints(conn, "message").map_err(sql_err)?;
    let part_fp = child_fingerprints(conn, "part").map_err(sql_err)?;
    for s in &sessions {
        let none = (0, 0);
        let (mc, mm) = msg_fp.get(&s.id).copied().unwrap_or(none);
        let (pc, pm) = part_fp.get(&s.id).copied().unwrap_or(none);
        let fp = format!("{}/{mc}/{mm}/{pc}/{pm}", s.updated.unwrap_or(0));
        if !fingerprints.changed(&s.id, fp) {
            continue;
        }
        let st = push_session(conn, s, limits, sink).map_err(sql_err)?;
        stats.add(&st);
    }
    Ok(fingerprints.finish(stats))
}

fn table_names(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut st = conn.prepare("SELECT name FROM sqlite_master WHERE type='table'")?;
    let rows = st.query_map([], |r| r.get::<_, String>(0))?;
    rows.collect()
}

/// Every session, oldest first. `directory` is missing from early schemas: the project's
/// worktree stands in.
fn sessions(
    conn: &Connection,
    has_project: bool,
    stats: &mut ParseStats,
) -> rusqlite::Result<Vec<SessionRow>> {
    let cols = columns(conn, "session")?;
    let column = |c: &str| {
        if cols.iter().any(|n| n == c) {
            format!("s.{c}")
        } else {
            "NULL".to_string()
        }
    };
    let worktree = if has_project && cols.iter().any(|n| n == "project_id") {
        "(SELECT p.worktree FROM project p WHERE p.id = s.project_id)"
    } else {
        "NULL"
    };
    let sql = format!(
        "SELECT s.id, {}, coalesce({}, {worktree}), {}, {}, {}, {} FROM session s
         ORDER BY {} , s.id",
        column("parent_id"),
        column("directory"),
        column("title"),
        column("version"),
        column("time_created"),
        column("time_updated"),
        column("time_created"),
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
            parent_id: col(r, 1, exact_text),
            directory: col(r, 2, lossy_text),
            title: col(r, 3, lossy_text),
            version: col(r, 4, lossy_text),
            created: col(r, 5, int),
            updated: col(r, 6, int),
        });
    }
    Ok(out)
}

/// Per session: how many rows `table` holds for it and the latest `time_updated` among them.
fn child_fingerprints(
    conn: &Connection,
    table: &str,
) -> rusqlite::Result<HashMap<String, (i64, i64)>> {
    let updated = if columns(conn, table)?.iter().any(|c| c == "time_updated") {
        "coalesce(max(time_updated), 0)"
    } else {
        "0"
    };
    let sql = format!("SELECT session_id, count(*), {updated} FROM {table} GROUP BY session_id");
    let mut st = conn.prepare(&sql)?;
    let mut rows = st.query([])?;
    let mut out = HashMap::new();
    while let Some(r) = rows.next()? {
        if let Some(id) = col(r, 0, exact_text) {
            let n = col(r, 1, int).unwrap_or(0);
            out.insert(id, (n, col(r, 2, int).unwrap_or(0)));
        }
    }
    Ok(out)
}

/// A `data` cell within the size cap, parsed; oversized and broken cells are counted.
fn row_json(stats: &mut ParseStats, len: i64, data: Option<String>) -> Option<Value> {
    stats.lines += 1;
    let Some(text) = data else {
        if len > 0 {
            stats.skipped_oversized += 1;
        } else {
            stats.skipped_broken += 1;
        }
        return None;
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(v) if v.is_object() => Some(v),
        _ => {
            stats.skipped_broken += 1;
            None
        }
    }
}

/// Pushes one session in full; returns its counters.
fn push_session(
    conn: &Connection,
    s: &SessionRow,
    limits: ReadLimits,
    sink: &mut dyn EventSink,
) -> rusqlite::Result<ParseStats> {
    sink.session(SessionStart {
        session_id: s.id.clone(),
        replace: true,
    });
    let mut cx = Ctx::default();
    cx.meta.session_id = Some(s.id.clone());
    cx.meta.cwd = s.directory.clone().filter(|d| !d.is_empty());
    cx.meta.version = s.version.clone();
    if let Some(t) = &s.title {
        cx.set_title(t, 2);
    }
    let speaker = if s.parent_id.is_some() {
        Speaker::ParentAgent
    } else {
        Speaker::Person
    };
    let max = limits.max_line_bytes as i64;
    let mut messages = conn.prepare_cached(
        "SELECT id, length(CAST(data AS BLOB)),
                CASE WHEN length(CAST(data AS BLOB)) <= ?2 THEN data END
         FROM message WHERE session_id = ?1 ORDER BY time_created, id",
    )?;
    let mut parts = conn.prepare_cached(
        "SELECT length(CAST(data AS BLOB)), CASE WHEN length(CAST(data AS BLOB)) <= ?2 THEN data END
         FROM part WHERE message_id = ?1 ORDER BY id",
    )?;
    let rows = messages.query_map(params![s.id, max], |r| {
        Ok((
            col(r, 0, exact_text),
            col(r, 1, int).unwrap_or(0),
            col(r, 2, lossy_text),
        ))
    })?;
    let mut first_agent = None;
    let mut out = Vec::new();
    for row in rows {
        let (id, len, data) = row?;
        // A message row that cannot be read is counted; its parts are rows of their own and
        // are still read (`message_events` tells whose they are from what they hold).
        let info =
            row_json(&mut cx.stats, len, data).unwrap_or_else(|| Value::Object(Default::default()));
        // Its parts are found by its id: a message whose id is not text is counted, skipped.
        let Some(id) = id else {
            cx.stats.skipped_broken += 1;
            continue;
        };
        if first_agent.is_none() && str_of(&info, "role") == Some("user") {
            first_agent = str_of(&info, "agent").map(str::to_string);
        }
        let mut list = Vec::new();
        let prow = parts.query_map(params![id, max], |r| {
            Ok((col(r, 0, int).unwrap_or(0), col(r, 1, lossy_text)))
        })?;
        for p in prow {
            let (plen, pdata) = p?;
            if let Some(v) = row_json(&mut cx.stats, plen, pdata) {
                list.push(v);
            }
        }
        message_events(&mut cx, &info, &list, speaker, &mut out);
        for ev in out.drain(..) {
            sink.event(ev);
        }
    }
    if cx.meta.created_at.is_none() {
        cx.meta.created_at = s.created.and_then(|t| ms_time(Some(&Value::from(t))));
    }
    if let Some(parent) = &s.parent_id {
        describe_child(conn, &mut cx, s, parent, first_agent)?;
    }
    let outcome = cx.outcome.outcome();
    let stats = cx.stats;
    sink.end_session(cx.meta, outcome);
    Ok(stats)
}

/// A child session is its parent's subagent: the parent's `task` call that started it names
/// the task (its title as an actor) and the kind of agent.
fn describe_child(
    conn: &Connection,
    cx: &mut Ctx,
    s: &SessionRow,
    parent: &str,
    first_agent: Option<String>,
) -> rusqlite::Result<()> {
    let meta = &mut cx.meta;
    meta.parent_session_id = Some(parent.to_string());
    meta.agent_id = Some(s.id.clone());
    meta.agent_name = first_agent;
    meta.agent_description = s.title.as_deref().map(child_description);
    let mut st = conn.prepare_cached(
        "SELECT data FROM part WHERE session_id = ?1 AND instr(data, ?2) > 0 LIMIT 16",
    )?;
    let rows = st.query_map(params![parent, s.id], |r| Ok(col(r, 0, lossy_text)))?;
    for data in rows {
        let Some(Ok(part)) = data?.map(|d| serde_json::from_str::<Value>(&d)) else {
            continue;
        };
        let Some(state) = part.get("state") else {
            continue;
        };
        if str_of(&part, "tool") != Some("task") || spawned_session(state).as_deref() != Some(&s.id)
        {
            continue;
        }
        meta.spawn_tool_use_id = str_of(&part, "callID").map(str::to_string);
        let input = state.get("input");
        let field = |k: &str| input.and_then(|i| str_of(i, k)).map(str::to_string);
        if let Some(d) = field("description") {
            meta.agent_description = Some(d);
        }
        if let Some(kind) = field("subagent_type") {
            meta.agent_name = Some(kind);
        }
        break;
    }
    Ok(())
}
