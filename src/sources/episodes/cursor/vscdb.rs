//! Reading Cursor's IDE store, `globalStorage/state.vscdb`: every composer (chat) that changed.
//!
//! The store is SQLite with a key/value table `cursorDiskKV(key, value)`, written by the IDE
//! while we read it: `composerData:<composerId>` holds a chat (`name`, `createdAt` /
//! `lastUpdatedAt` in ms, `fullConversationHeadersOnly[{bubbleId, type}]` for the order, child
//! composers in `subagentComposerIds` / `subComposerIds`, older chats inline in
//! `conversation[]`), and `bubbleId:<composerId>:<bubbleId>` one message (`type` 1 user, 2
//! assistant; `text`, `thinking.text`, `toolFormerData{name, rawArgs, result, status}`). The
//! working directory is not in the global store: each `workspaceStorage/<id>/workspace.json`
//! names a folder and that workspace's own `state.vscdb` lists its composers. Opened read-only
//! in one read transaction; the cursor is a fingerprint per composer (its row's length and
//! `lastUpdatedAt`, its bubbles' count and total length). Cells are read as what they hold
//! (`sql_cell`): a key that is not UTF-8 is counted and skipped, a time stored as a string or
//! a float is still a time, a value with invalid UTF-8 costs a character; one bad row never
//! costs the store.

use std::collections::HashMap;
use std::io;
use std::path::Path;

use rusqlite::{params, Connection};
use serde_json::Value;

use super::transcript::tool_facts;
use crate::sources::agent_db::AgentDb;
use crate::sources::agent_knowledge::ms_to_rfc3339;
use crate::sources::episodes::agent::{
    EventSink, ReadEnd, ReadLimits, Resume, SessionFingerprints, SessionStart,
};
use crate::sources::episodes::model::{EventType, ParseStats, ParsedEvent};
use crate::sources::episodes::parser::{
    cap_chars, file_uri_path, norm_time, render_tool_input, str_of, Ctx,
};
use crate::sources::regular_file::read_side_file;
use crate::sources::sql_cell::{col, exact_text, int, json_ms, lossy_text};

const COMPOSER: &str = "composerData:";

struct ComposerRow {
    id: String,
    fingerprint: String,
    children: Vec<String>,
}

fn sql_err(e: rusqlite::Error) -> io::Error {
    io::Error::other(format!("cursor state.vscdb: {e}"))
}

pub(crate) fn read_vscdb(
    path: &Path,
    from: Option<Resume<'_>>,
    limits: ReadLimits,
    sink: &mut dyn EventSink,
) -> io::Result<ReadEnd> {
    let conn = AgentDb::open(path).map_err(sql_err)?;
    let has_kv: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='cursorDiskKV'",
            [],
            |r| r.get(0),
        )
        .map_err(sql_err)?;
    if has_kv == 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "not a Cursor global store: no cursorDiskKV table",
        ));
    }
    conn.snapshot(sql_err, |c| read_snapshot(c, path, from, limits, sink))
}

fn read_snapshot(
    conn: &Connection,
    path: &Path,
    from: Option<Resume<'_>>,
    limits: ReadLimits,
    sink: &mut dyn EventSink,
) -> io::Result<ReadEnd> {
    let mut fingerprints = SessionFingerprints::resume(from);
    let mut stats = ParseStats::default();
    let composers = composers(conn, &mut stats).map_err(sql_err)?;
    let mut parent_of = HashMap::new();
    for c in &composers {
        for child in &c.children {
            parent_of.insert(child.clone(), c.id.clone());
        }
    }
    let folders = workspace_folders(path);
    for c in &composers {
        if !fingerprints.changed(&c.id, c.fingerprint.clone()) {
            continue;
        }
        let parent = parent_of.get(&c.id).map(String::as_str);
        let st = push_composer(conn, &c.id, parent, &folders, limits, sink).map_err(sql_err)?;
        stats.add(&st);
    }
    Ok(fingerprints.finish(stats))
}

/// Every composer with its fingerprint and child composers, parsed by SQLite's own JSON
/// functions (a composer row can be megabytes; only two fields are needed here).
fn composers(conn: &Connection, stats: &mut ParseStats) -> rusqlite::Result<Vec<ComposerRow>> {
    let mut bubbles: HashMap<String, (i64, i64)> = HashMap::new();
    {
        let mut st = conn.prepare(
            "SELECT substr(key, 10, instr(substr(key, 10), ':') - 1), count(*), sum(length(value))
             FROM cursorDiskKV WHERE key >= 'bubbleId:' AND key < 'bubbleId;' GROUP BY 1",
        )?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            // A composer id that is not UTF-8 is counted with the composers below.
            if let Some(id) = col(r, 0, exact_text) {
                let n = col(r, 1, int).unwrap_or(0);
                bubbles.insert(id, (n, col(r, 2, int).unwrap_or(0)));
            }
        }
    }
    let mut st = conn.prepare(
        "SELECT substr(key, 14), length(value),
           CASE WHEN json_valid(v) THEN json_extract(v, '$.lastUpdatedAt') END,
           CASE WHEN json_valid(v) THEN coalesce(json_extract(v, '$.subagentComposerIds'),
                                                json_extract(v, '$.subComposerIds')) END
         FROM (SELECT key, value, CAST(value AS TEXT) AS v FROM cursorDiskKV
               WHERE key >= 'composerData:' AND key < 'composerData;')
         ORDER BY key",
    )?;
    let mut rows = st.query([])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        // A key that is not UTF-8 cannot be looked up again: counted, skipped.
        let Some(id) = col(r, 0, exact_text) else {
            stats.lines += 1;
            stats.skipped_broken += 1;
            continue;
        };
        let (len, updated) = (col(r, 1, int), col(r, 2, int));
        let children = col(r, 3, lossy_text);
        let (n, blen) = bubbles.get(&id).copied().unwrap_or((0, 0));
        let children: Vec<String> = children
            .and_then(|c| serde_json::from_str(&c).ok())
            .unwrap_or_default();
        out.push(ComposerRow {
            fingerprint: format!("{}/{}/{n}/{blen}", len.unwrap_or(0), updated.unwrap_or(0)),
            id,
            children,
        });
    }
    Ok(out)
}

/// composerId → the folder of the workspace that lists it (`workspaceStorage/*/workspace.json`
/// plus that workspace's `composer.composerData`). Unreadable workspaces are skipped.
fn workspace_folders(global_db: &Path) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let Some(user) = global_db.parent().and_then(Path::parent) else {
        return out;
    };
    let Ok(entries) = std::fs::read_dir(user.join("workspaceStorage")) else {
        return out;
    };
    for dir in entries.flatten().map(|e| e.path()) {
        let folder = read_side_file(&dir.join("workspace.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .and_then(|v| str_of(&v, "folder").map(file_uri_path));
        let Some(folder) = folder else { continue };
        let Ok(conn) = AgentDb::open(&dir.join("state.vscdb")) else {
            continue;
        };
        let list: Option<String> = conn
            .query_row(
                "SELECT value FROM ItemTable WHERE key='composer.composerData'",
                [],
                |r| Ok(col(r, 0, lossy_text)),
            )
            .ok()
            .flatten();
        let Some(v) = list.and_then(|l| serde_json::from_str::<Value>(&l).ok()) else {
            continue;
        };
        for c in v["allComposers"].as_array().into_iter().flatten() {
            if let Some(id) = str_of(c, "composerId") {
                out.insert(id.to_string(), folder.clone());
            }
        }
    }
    out
}

fn kv_json(
    conn: &Connection,
    stats: &mut ParseStats,
    key: &str,
    max: i64,
) -> rusqlite::Result<Option<Value>> {
    let row = conn
        .prepare_cached(
            "SELECT length(value), CASE WHEN length(value) <= ?2 THEN value END
             FROM cursorDiskKV WHERE key = ?1",
        )?
        .query_row(params![key, max], |r| {
            Ok((col(r, 0, int).unwrap_or(0), col(r, 1, lossy_text)))
        });
    let (len, text) = match row {
        Ok(row) => row,
        Err(rusqlite::Error::QueryReturnedNoRows) => return Ok(None),
        Err(e) => return Err(e),
    };
    stats.lines += 1;
    let Some(text) = text else {
        stats.skipped_oversized += u64::from(len > 0);
        return Ok(None);
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(v) if v.is_object() => Ok(Some(v)),
        _ => {
            stats.skipped_broken += 1;
            Ok(None)
        }
    }
}

/// Pushes one composer in full; returns its counters.
fn push_composer(
    conn: &Connection,
    id: &str,
    parent: Option<&str>,
    folders: &HashMap<String, String>,
    limits: ReadLimits,
    sink: &mut dyn EventSink,
) -> rusqlite::Result<ParseStats> {
    let max = limits.max_line_bytes as i64;
    let mut cx = Ctx::default();
    let composer = kv_json(conn, &mut cx.stats, &format!("{COMPOSER}{id}"), max)?;
    sink.session(SessionStart {
        session_id: id.to_string(),
        replace: true,
    });
    cx.meta.session_id = Some(id.to_string());
    let parent_folder = parent.and_then(|p| folders.get(p));
    cx.meta.cwd = folders.get(id).or(parent_folder).cloned();
    let c = composer.unwrap_or(Value::Null);
    let started = json_ms(c.get("createdAt")).and_then(ms_to_rfc3339);
    if let Some(name) = str_of(&c, "name") {
        cx.set_title(name, 2);
    }
    cx.meta.model = c
        .pointer("/modelConfig/modelName")
        .and_then(Value::as_str)
        .map(str::to_string);
    cx.touch_time(started.as_deref());
    // The order is the headers'; bubbles they do not list follow in key order.
    let mut order: Vec<String> = c["fullConversationHeadersOnly"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|h| str_of(h, "bubbleId").map(str::to_string))
        .collect();
    {
        let prefix = format!("bubbleId:{id}:");
        let mut st = conn.prepare_cached(
            "SELECT substr(key, ?2) FROM cursorDiskKV WHERE key > ?1 AND key < ?1 || '~'
             ORDER BY key",
        )?;
        let rows = st.query_map(params![prefix, prefix.len() as i64 + 1], |r| {
            Ok(col(r, 0, exact_text))
        })?;
        for b in rows {
            // A bubble key that is not UTF-8 cannot be looked up again: counted, skipped.
            let Some(b) = b? else {
                cx.stats.lines += 1;
                cx.stats.skipped_broken += 1;
                continue;
            };
            if !order.contains(&b) {
                order.push(b);
            }
        }
    }
    let mut out = Vec::new();
    let mut bubbles: Vec<Value> = Vec::new();
    for b in &order {
        if let Some(v) = kv_json(conn, &mut cx.stats, &format!("bubbleId:{id}:{b}"), max)? {
            bubbles.push(v);
        }
    }
    // Chats from before bubbles had rows of their own.
    if bubbles.is_empty() {
        bubbles = c["conversation"].as_array().cloned().unwrap_or_default();
    }
    for bubble in &bubbles {
        let time = norm_time(bubble.get("createdAt")).or_else(|| started.clone());
        bubble_events(&mut cx, bubble, parent.is_some(), time, &mut out);
        for ev in out.drain(..) {
            sink.event(ev);
        }
    }
    let ended = json_ms(c.get("lastUpdatedAt")).and_then(ms_to_rfc3339);
    cx.touch_time(ended.as_deref());
    if let Some(p) = parent {
        cx.meta.parent_session_id = Some(p.to_string());
        cx.meta.agent_id = Some(id.to_string());
        cx.meta.agent_description = cx.meta.title.clone().or_else(|| {
            bubbles
                .iter()
                .find(|b| b["type"].as_i64() == Some(1))
                .and_then(|b| str_of(b, "text"))
                .map(|t| cap_chars(t.trim(), 300))
        });
    }
    match str_of(&c, "status") {
        Some("aborted") => cx.outcome.aborted(),
        Some("error") => cx.outcome.task_complete(true),
        _ => {}
    }
    let outcome = cx.outcome.outcome();
    let stats = cx.stats;
    sink.end_session(cx.meta, outcome);
    Ok(stats)
}

fn bubble_events(
    cx: &mut Ctx,
    b: &Value,
    child: bool,
    time: Option<String>,
    out: &mut Vec<ParsedEvent>,
) {
    cx.touch_time(time.as_deref());
    let text = str_of(b, "text").unwrap_or("").to_string();
    match b["type"].as_i64() {
        Some(1) => {
            let ty = if child {
                EventType::AgentPrompt
            } else {
                EventType::UserMessage
            };
            cx.emit(out, ParsedEvent::new(ty, time, text));
        }
        Some(2) => {
            if let Some(t) = b.pointer("/thinking/text").and_then(Value::as_str) {
                let ev = ParsedEvent::new(EventType::AssistantThinking, time.clone(), t.into());
                cx.emit(out, ev);
            }
            if let Some(tool) = b.get("toolFormerData").filter(|t| t.is_object()) {
                tool_events(cx, tool, time.clone(), out);
            }
            cx.emit(
                out,
                ParsedEvent::new(EventType::AssistantMessage, time, text),
            );
        }
        _ => cx.stats.skipped_unknown += 1,
    }
}

/// A tool call bubble: the call (`rawArgs` is JSON text) and, once there, its result.
fn tool_events(cx: &mut Ctx, tool: &Value, time: Option<String>, out: &mut Vec<ParsedEvent>) {
    let name = str_of(tool, "name").unwrap_or("tool").to_string();
    let call_id = str_of(tool, "toolCallId").map(str::to_string);
    let input = match tool.get("rawArgs") {
        Some(Value::String(s)) => serde_json::from_str(s).unwrap_or(Value::String(s.clone())),
        Some(other) => other.clone(),
        None => tool.get("params").cloned().unwrap_or(Value::Null),
    };
    let mut call = ParsedEvent::new(
        EventType::AssistantToolUse,
        time.clone(),
        render_tool_input(&name, &input),
    );
    call.facts = tool_facts(&name, &input);
    for f in &mut call.facts {
        if let crate::sources::episodes::model::Fact::Spawn { tool_use_id, .. } = f {
            tool_use_id.clone_from(&call_id);
        }
    }
    call.tool_name = Some(name.clone());
    call.tool_use_id = call_id.clone();
    cx.emit(out, call);
    let status = str_of(tool, "status").unwrap_or("");
    let Some(result) = tool.get("result").filter(|r| !r.is_null()) else {
        return;
    };
    let body = match result {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let mut ev = ParsedEvent::new(EventType::ToolResult, time, body);
    ev.tool_name = Some(name);
    ev.tool_use_id = call_id;
    ev.is_error = matches!(status, "error" | "failed");
    cx.emit(out, ev);
}
