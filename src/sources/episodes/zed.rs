//! Zed's agent panel threads: one SQLite database, `$XDG_DATA_HOME/zed/threads/threads.db`
//! (Zed's `paths::data_dir()`, default `~/.local/share/zed`; `ZED_STATELESS` keeps threads in
//! memory only), in WAL mode while Zed runs.
//!
//! Table `threads(id, summary, updated_at (RFC 3339), data_type 'json'|'zstd', data, parent_id,
//! folder_paths, folder_paths_order, created_at)`: the last four were added by later releases
//! (`ALTER TABLE`), so an older database lacks them. `data` is one JSON document per thread,
//! zstd-compressed (level 3) by current Zed, plain JSON by older ones; both are read. A document
//! with `version "0.3.0"` is `{title, messages, updated_at, model{provider, model}, profile,
//! subagent_context{parent_thread_id, tool_use_id, …}, …}`, its messages externally tagged:
//! `{"User": {id, content: [{"Text": s} | {"Mention": {uri, content}} | {"Image": …}]}}`,
//! `{"Agent": {content: [{"Text": s} | {"Thinking": {text, signature}} |
//! {"RedactedThinking": s} | {"ToolUse": {id, name, raw_input, input, is_input_complete}}],
//! tool_results: {<id>: {tool_use_id, tool_name, is_error, content, output}}}}` or `"Resume"`
//! (Zed asked the model to go on). A document without that version is the agent-1 shape Zed
//! still upgrades on load: `{summary, updated_at, messages: [{id, role user|assistant|system,
//! segments: [{type: text|thinking, text} | {type: RedactedThinking}], text (the oldest),
//! tool_uses: [{id, name, input}], tool_results: [{tool_use_id, is_error, content, output}],
//! context, is_hidden}]}`; in `0.1.0` a call's results rode on the next `user` message. A
//! result's `content` is text as a string, `{"Text": s}`, `{type: text, text}` or `{text}`, an
//! image, or a list of these.
//!
//! The session id is `threads.id`; the title `summary`; the cwd the first of `folder_paths`
//! (newline-separated worktree roots, sorted; `folder_paths_order` gives each one's place in the
//! order the person opened them). **Times:** the messages carry none, so the events have no
//! time of their own: the session starts at `created_at` (else `updated_at`) and its last
//! activity is `updated_at`, as Continue's are read. A thread with `parent_id` (its document's
//! `subagent_context.parent_thread_id`) is that thread's subagent, spawned by the parent's
//! `spawn_agent` call `subagent_context.tool_use_id`; its `User` text is the parent agent's
//! prompt. No resume command: Zed opens a thread from its agent panel's history, and no command
//! line taking a thread id was found in its source (not confirmed that none exists).
//!
//! The store holds many sessions (`StoreKind::Database`): opened so nothing is created beside it
//! (`agent_db`), read in one snapshot; a thread whose fingerprint (its `updated_at`, `data_type`
//! and the size of `data`) changed is read again whole, with `replace`. A document is read
//! only up to [`MAX_DOCUMENT_BYTES`], compressed or not: a larger one (or a zstd bomb) is
//! counted as oversized and skipped, as is a row that cannot be decoded (counted as broken).
//! Watch mode follows `threads.db-wal`.
//!
//! Read from zed-industries/zed `crates/agent/src/db.rs` @ 0642ec7e49e2, `thread.rs`,
//! `legacy_thread.rs`, `crates/language_model` (`LanguageModelToolResultContent`'s reader) and
//! `util::path_list` (read, nothing copied), cross-checked against agentsview. Not confirmed:
//! no real threads.db is public under a licence this project may use (the real sample is the
//! original five-column schema only), so the fixtures follow the writers' code; the
//! `subagent_context` fields beside `parent_thread_id`; the tool names read for facts
//! (`terminal{command}`, `edit_file{path}`, `spawn_agent{label, message}`).

use std::io::{self, Read};
use std::path::{Path, PathBuf};

use rusqlite::{params, Connection};
use serde_json::{Map, Value};

use super::agent::{
    AgentReader, Env, EventSink, Head, Rank, ReadEnd, ReadLimits, Recognised, Resume,
    SessionFingerprints, SessionStart, StoreKind,
};
use super::agents::Agent;
use super::discover::{Layout, TranscriptFile};
use super::model::{EventType, Fact, ParseStats, ParsedEvent};
use super::parser::{cap_chars, command_program, render_tool_input, str_of, Ctx};
use crate::sources::agent_db::AgentDb;
use crate::sources::agent_knowledge::ms_to_rfc3339;
use crate::sources::sql_cell::{col, exact_text, int, lossy_text};

/// The Zed reader.
pub struct Reader;

/// The first bytes of every SQLite database file.
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// The database's file name.
const DB_NAME: &str = "threads.db";

/// The largest thread document read, as stored and once decompressed (as for the other agents
/// that keep a session in one JSON document).
pub const MAX_DOCUMENT_BYTES: u64 = 64 * 1024 * 1024;

fn sql_err(e: rusqlite::Error) -> io::Error {
    io::Error::other(format!("zed threads database: {e}"))
}

/// A `.db` that is SQLite and holds Zed's `threads(data_type, data)` table.
fn has_zed_schema(path: &Path) -> bool {
    let mut magic = [0u8; 16];
    let is_sqlite = crate::sources::regular_file::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok()
        && &magic == SQLITE_MAGIC;
    if !is_sqlite {
        return false;
    }
    let Ok(conn) = AgentDb::open(path) else {
        return false;
    };
    conn.query_row(
        "SELECT count(*) FROM pragma_table_info('threads')
          WHERE name IN ('summary', 'data_type', 'data')",
        [],
        |r| r.get::<_, i64>(0),
    )
    .is_ok_and(|n| n == 3)
}

/// `<…>/zed/threads/threads.db`: Zed's own place.
fn is_in_zed_place(path: &Path) -> bool {
    let mut up = path.ancestors().skip(1).filter_map(|p| p.file_name());
    path.file_name().is_some_and(|n| n == DB_NAME)
        && up.next().is_some_and(|n| n == "threads")
        && up.next().is_some_and(|n| n == "zed")
}

impl AgentReader for Reader {
    fn agent(&self) -> Agent {
        Agent::Zed
    }

    fn name(&self) -> &'static str {
        "zed"
    }

    fn label(&self) -> &'static str {
        "Zed"
    }

    fn store_kind(&self, _path: &Path) -> StoreKind {
        StoreKind::Database
    }

    /// `$XDG_DATA_HOME/zed/threads/threads.db` (default `~/.local/share/zed/…`).
    fn roots(&self, env: &Env) -> Vec<PathBuf> {
        env.dir("XDG_DATA_HOME")
            .or_else(|| env.home().map(|h| h.join(".local/share")))
            .map(|d| vec![d.join("zed/threads").join(DB_NAME)])
            .unwrap_or_default()
    }

    /// Zed's database by its place (`zed/threads/threads.db`), or any `.db` holding Zed's
    /// `threads` table (a copy named with `--sessions`).
    fn recognise(&self, path: &Path, _head: &mut Head<'_>) -> Option<Recognised> {
        let name = path.file_name()?.to_str()?;
        let rank = if is_in_zed_place(path) {
            Rank::Name
        } else if name.ends_with(".db") && has_zed_schema(path) {
            Rank::Record(0)
        } else {
            return None;
        };
        Some(Recognised {
            layout: Layout::Main,
            rank,
        })
    }

    fn read(
        &self,
        file: &TranscriptFile,
        from: Option<Resume<'_>>,
        _limits: ReadLimits,
        sink: &mut dyn EventSink,
    ) -> io::Result<ReadEnd> {
        let conn = AgentDb::open(&file.path).map_err(sql_err)?;
        conn.snapshot(sql_err, |c| read_snapshot(c, from, sink))
    }

    /// Zed opens a thread from its agent panel's history; no command taking a thread id was
    /// found.
    fn resume_command(&self, _quoted_session_id: &str) -> Option<String> {
        None
    }

    /// A write lands in `threads.db-wal` first (the database changes only at a checkpoint);
    /// `-shm` is not followed (readers write it).
    fn store_of_change(&self, changed: &Path) -> Option<PathBuf> {
        let db = match changed.file_name()?.to_str()? {
            "threads.db-wal" => changed.with_file_name(DB_NAME),
            DB_NAME => changed.to_path_buf(),
            _ => return None,
        };
        is_in_zed_place(&db).then_some(db)
    }
}

/// One row of `threads` without its document.
struct ThreadRow {
    id: String,
    title: Option<String>,
    updated: Option<String>,
    created: Option<String>,
    data_type: Option<String>,
    size: i64,
    parent_id: Option<String>,
    folder_paths: Option<String>,
    folder_order: Option<String>,
}

fn columns(conn: &Connection, table: &str) -> rusqlite::Result<Vec<String>> {
    let mut st = conn.prepare(&format!("PRAGMA table_info({table})"))?;
    let rows = st.query_map([], |r| r.get::<_, String>(1))?;
    rows.collect()
}

fn read_snapshot(
    conn: &Connection,
    from: Option<Resume<'_>>,
    sink: &mut dyn EventSink,
) -> io::Result<ReadEnd> {
    let cols = columns(conn, "threads").map_err(sql_err)?;
    if !["id", "data_type", "data"]
        .iter()
        .all(|c| cols.iter().any(|n| n == c))
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "not a Zed threads database: no threads(id, data_type, data) table",
        ));
    }
    let mut fingerprints = SessionFingerprints::resume(from);
    let mut stats = ParseStats::default();
    let threads = threads(conn, &cols, &mut stats).map_err(sql_err)?;
    for t in &threads {
        let fp = format!(
            "{}/{}/{}",
            t.updated.as_deref().unwrap_or(""),
            t.data_type.as_deref().unwrap_or(""),
            t.size
        );
        if !fingerprints.changed(&t.id, fp) {
            continue;
        }
        let st = push_thread(conn, t, sink).map_err(sql_err)?;
        stats.add(&st);
    }
    Ok(fingerprints.finish(stats))
}

/// Every thread, oldest first; columns an older schema lacks read as NULL.
fn threads(
    conn: &Connection,
    cols: &[String],
    stats: &mut ParseStats,
) -> rusqlite::Result<Vec<ThreadRow>> {
    let column = |c: &str| {
        if cols.iter().any(|n| n == c) {
            c.to_string()
        } else {
            "NULL".to_string()
        }
    };
    let sql = format!(
        "SELECT id, {}, {}, {}, data_type, length(CAST(data AS BLOB)), {}, {}, {}
         FROM threads ORDER BY coalesce({}, {}), id",
        column("summary"),
        column("updated_at"),
        column("created_at"),
        column("parent_id"),
        column("folder_paths"),
        column("folder_paths_order"),
        column("created_at"),
        column("updated_at"),
    );
    let mut st = conn.prepare(&sql)?;
    let mut rows = st.query([])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        // A thread whose id is not text cannot be looked up again: counted, skipped.
        let Some(id) = col(r, 0, exact_text) else {
            stats.lines += 1;
            stats.skipped_broken += 1;
            continue;
        };
        out.push(ThreadRow {
            id,
            title: col(r, 1, lossy_text),
            updated: col(r, 2, lossy_text),
            created: col(r, 3, lossy_text),
            data_type: col(r, 4, lossy_text),
            size: col(r, 5, int).unwrap_or(0),
            parent_id: col(r, 6, exact_text).filter(|p| !p.is_empty()),
            folder_paths: col(r, 7, lossy_text),
            folder_order: col(r, 8, lossy_text),
        });
    }
    Ok(out)
}

/// An RFC 3339 time as Zed writes it (`2026-09-06T10:15:00.123+00:00`) → the stored form.
fn zed_time(s: &str) -> Option<String> {
    chrono::DateTime::parse_from_rfc3339(s.trim())
        .ok()
        .and_then(|t| ms_to_rfc3339(t.timestamp_millis()))
}

/// The folder the person opened first: `folder_paths` is sorted, `folder_paths_order` holds,
/// for each sorted path, its place in the order they were opened.
fn first_folder(paths: &str, order: Option<&str>) -> Option<String> {
    let paths: Vec<&str> = paths.lines().filter(|p| !p.trim().is_empty()).collect();
    let first = order
        .map(|o| {
            o.split(',')
                .map(|i| i.trim().parse::<usize>().ok())
                .collect::<Vec<_>>()
        })
        .and_then(|places| places.iter().position(|p| *p == Some(0)))
        .and_then(|slot| paths.get(slot));
    first.or(paths.first()).map(|p| p.to_string())
}

/// Why a thread's document was not read.
enum Refused {
    /// Over [`MAX_DOCUMENT_BYTES`], stored or decompressed.
    Oversized,
    /// Not decodable: a bad zstd frame, not JSON, an unknown `data_type`.
    Broken,
}

/// The thread's document, decompressed and parsed, bounded by `cap` bytes
/// ([`MAX_DOCUMENT_BYTES`]).
fn document(data_type: Option<&str>, data: &[u8], cap: u64) -> Result<Value, Refused> {
    let json = match data_type {
        Some("json") => data.to_vec(),
        Some("zstd") => decompress(data, cap)?,
        _ => return Err(Refused::Broken),
    };
    serde_json::from_slice::<Value>(&json).map_err(|_| Refused::Broken)
}

/// A zstd frame's content, at most `cap` bytes of it (a larger one is refused before more is
/// decoded: a small row that expands without end costs no more than the cap); the decoder's
/// window is bounded by [`MAX_DOCUMENT_BYTES`] too.
fn decompress(data: &[u8], cap: u64) -> Result<Vec<u8>, Refused> {
    use ruzstd::decoding::errors::FrameDecoderError;
    let decoder =
        ruzstd::decoding::StreamingDecoder::new_with_max_window_size(data, MAX_DOCUMENT_BYTES)
            .map_err(|e| match e {
                // A frame that says it needs a window over the cap holds more than the cap.
                FrameDecoderError::WindowSizeTooBig { .. } => Refused::Oversized,
                _ => Refused::Broken,
            })?;
    let mut out = Vec::new();
    decoder
        .take(cap + 1)
        .read_to_end(&mut out)
        .map_err(|_| Refused::Broken)?;
    if out.len() as u64 > cap {
        return Err(Refused::Oversized);
    }
    Ok(out)
}

/// Who wrote a thread's `User` text.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Speaker {
    Person,
    ParentAgent,
}

/// Pushes one thread in full; returns its counters.
fn push_thread(
    conn: &Connection,
    t: &ThreadRow,
    sink: &mut dyn EventSink,
) -> rusqlite::Result<ParseStats> {
    sink.session(SessionStart {
        session_id: t.id.clone(),
        replace: true,
    });
    let mut cx = Ctx::default();
    cx.meta.session_id = Some(t.id.clone());
    cx.meta.cwd = t
        .folder_paths
        .as_deref()
        .and_then(|p| first_folder(p, t.folder_order.as_deref()));
    if let Some(title) = &t.title {
        cx.set_title(title, 2);
    }
    cx.stats.lines += 1;
    let mut out = Vec::new();
    let doc = if t.size as u64 > MAX_DOCUMENT_BYTES {
        cx.stats.skipped_oversized += 1;
        None
    } else {
        let mut st = conn.prepare_cached("SELECT data FROM threads WHERE id = ?1")?;
        let data: Option<Vec<u8>> = st
            .query_row(params![t.id], |r| {
                Ok(match r.get_ref(0)? {
                    rusqlite::types::ValueRef::Blob(b) | rusqlite::types::ValueRef::Text(b) => {
                        Some(b.to_vec())
                    }
                    _ => None,
                })
            })
            .unwrap_or(None);
        match data.map(|d| document(t.data_type.as_deref(), &d, MAX_DOCUMENT_BYTES)) {
            Some(Ok(doc)) => Some(doc),
            Some(Err(Refused::Oversized)) => {
                cx.stats.skipped_oversized += 1;
                None
            }
            Some(Err(Refused::Broken)) | None => {
                cx.stats.skipped_broken += 1;
                None
            }
        }
    };
    let subagent = doc.as_ref().and_then(|d| d.get("subagent_context"));
    let parent = t.parent_id.clone().or_else(|| {
        subagent
            .and_then(|s| str_of(s, "parent_thread_id"))
            .map(str::to_string)
    });
    let speaker = if parent.is_some() {
        Speaker::ParentAgent
    } else {
        Speaker::Person
    };
    if let Some(doc) = &doc {
        if let Some(model) = doc.get("model").and_then(|m| str_of(m, "model")) {
            cx.meta.model = Some(cap_chars(model, 200));
        }
        if let Some(title) = str_of(doc, "title").or_else(|| str_of(doc, "summary")) {
            cx.set_title(title, 1);
        }
        let messages = doc.get("messages").and_then(Value::as_array);
        let current = str_of(doc, "version") == Some("0.3.0")
            || messages.is_some_and(|m| m.iter().any(|m| !is_agent1_message(m)));
        for m in messages.into_iter().flatten() {
            if current {
                current_message(&mut cx, m, speaker, &mut out);
            } else {
                agent1_message(&mut cx, m, speaker, &mut out);
            }
            for ev in out.drain(..) {
                sink.event(ev);
            }
        }
    }
    let updated = t.updated.as_deref().and_then(zed_time).or_else(|| {
        doc.as_ref()
            .and_then(|d| str_of(d, "updated_at"))
            .and_then(zed_time)
    });
    cx.meta.created_at = t.created.as_deref().and_then(zed_time).or(updated.clone());
    cx.meta.last_event_at = updated;
    if let Some(parent) = parent {
        cx.meta.parent_session_id = Some(parent);
        cx.meta.agent_id = Some(t.id.clone());
        cx.meta.agent_description = t.title.as_deref().map(|d| cap_chars(d, 500));
        cx.meta.spawn_tool_use_id = subagent
            .and_then(|s| str_of(s, "tool_use_id"))
            .map(str::to_string);
    }
    let outcome = cx.outcome.outcome();
    let stats = cx.stats;
    sink.end_session(cx.meta, outcome);
    Ok(stats)
}

/// An agent-1 message: an object with a `role`.
fn is_agent1_message(m: &Value) -> bool {
    m.get("role").is_some()
}

/// The one variant of an externally tagged enum value: `{"Text": "…"}` → `("Text", "…")`.
fn variant(v: &Value) -> Option<(&str, &Value)> {
    match v {
        Value::Object(m) if m.len() == 1 => m.iter().next().map(|(k, v)| (k.as_str(), v)),
        Value::String(s) => Some((s.as_str(), &Value::Null)),
        _ => None,
    }
}

/// A `0.3.0` message.
fn current_message(cx: &mut Ctx, m: &Value, speaker: Speaker, out: &mut Vec<ParsedEvent>) {
    cx.stats.lines += 1;
    match variant(m) {
        Some(("User", body)) => {
            let mut text = String::new();
            for item in body
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                match variant(item) {
                    Some(("Text", Value::String(s))) => text.push_str(s),
                    // A file, symbol or thread the person attached: its name in the prompt, its
                    // content is context, not what they typed.
                    Some(("Mention", mention)) => {
                        if let Some(name) = mention.get("uri").and_then(mention_name) {
                            text.push_str(&format!("@{name}"));
                        }
                        cx.stats.ignored += 1;
                    }
                    _ => cx.stats.ignored += 1,
                }
            }
            user_text(cx, text, speaker, false, out);
        }
        Some(("Agent", body)) => {
            let results = body.get("tool_results").and_then(Value::as_object);
            let mut answered = Vec::new();
            for item in body
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                match variant(item) {
                    Some(("Text", Value::String(s))) => assistant_text(cx, s, out),
                    Some(("Thinking", t)) => thinking(cx, str_of(t, "text").unwrap_or(""), out),
                    Some(("ToolUse", call)) => {
                        let id = str_of(call, "id").unwrap_or("");
                        tool_use(cx, call, out);
                        if let Some(r) = results.and_then(|r| r.get(id)) {
                            tool_result(cx, r, id, out);
                            answered.push(id.to_string());
                        }
                    }
                    _ => cx.stats.ignored += 1,
                }
            }
            // Results whose call is not in the content (never seen; read all the same).
            for (id, r) in results.into_iter().flatten() {
                if !answered.contains(id) {
                    tool_result(cx, r, id, out);
                }
            }
        }
        // Zed asked the model to continue where it left off.
        Some(("Resume", _)) => cx.stats.ignored += 1,
        _ => cx.stats.skipped_unknown += 1,
    }
}

/// An agent-1 (`0.1.0`, `0.2.0` or unversioned) message.
fn agent1_message(cx: &mut Ctx, m: &Value, speaker: Speaker, out: &mut Vec<ParsedEvent>) {
    cx.stats.lines += 1;
    let hidden = m.get("is_hidden").and_then(Value::as_bool) == Some(true);
    let segments = m.get("segments").and_then(Value::as_array);
    let role = str_of(m, "role").unwrap_or("");
    match role {
        "user" => {
            let mut text = String::new();
            for s in segments.into_iter().flatten() {
                if let Some(t) = str_of(s, "text") {
                    text.push_str(t);
                }
            }
            if segments.is_none() {
                text.push_str(str_of(m, "text").unwrap_or(""));
            }
            user_text(cx, text, speaker, hidden, out);
        }
        "assistant" => {
            for s in segments.into_iter().flatten() {
                match str_of(s, "type") {
                    Some("text") => assistant_text(cx, str_of(s, "text").unwrap_or(""), out),
                    Some("thinking") => thinking(cx, str_of(s, "text").unwrap_or(""), out),
                    _ => cx.stats.ignored += 1,
                }
            }
            if segments.is_none() {
                assistant_text(cx, str_of(m, "text").unwrap_or(""), out);
            }
            for call in m
                .get("tool_uses")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                tool_use(cx, call, out);
            }
        }
        "system" => {
            cx.stats.ignored += 1;
            return;
        }
        _ => {
            cx.stats.skipped_unknown += 1;
            return;
        }
    }
    // `0.2.0` keeps a call's results on its assistant message, `0.1.0` on the next user one.
    for r in m
        .get("tool_results")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let id = str_of(r, "tool_use_id").unwrap_or("").to_string();
        tool_result(cx, r, &id, out);
    }
}

/// The name a mention shows: the path or URL it points at.
fn mention_name(uri: &Value) -> Option<String> {
    let (_, fields) = variant(uri)?;
    ["abs_path", "path", "url", "name", "title"]
        .iter()
        .find_map(|k| str_of(fields, k))
        .map(str::to_string)
}

fn user_text(
    cx: &mut Ctx,
    text: String,
    speaker: Speaker,
    hidden: bool,
    out: &mut Vec<ParsedEvent>,
) {
    if text.trim().is_empty() {
        return;
    }
    let ty = match speaker {
        _ if hidden => EventType::SystemContext,
        Speaker::ParentAgent => EventType::AgentPrompt,
        Speaker::Person if text.trim_start().starts_with('/') => EventType::UserCommand,
        Speaker::Person => EventType::UserMessage,
    };
    cx.emit(out, ParsedEvent::new(ty, None, text));
}

fn assistant_text(cx: &mut Ctx, text: &str, out: &mut Vec<ParsedEvent>) {
    if !text.trim().is_empty() {
        cx.emit(
            out,
            ParsedEvent::new(EventType::AssistantMessage, None, text.to_string()),
        );
    }
}

fn thinking(cx: &mut Ctx, text: &str, out: &mut Vec<ParsedEvent>) {
    if !text.trim().is_empty() {
        cx.emit(
            out,
            ParsedEvent::new(EventType::AssistantThinking, None, text.to_string()),
        );
    }
}

fn tool_use(cx: &mut Ctx, call: &Value, out: &mut Vec<ParsedEvent>) {
    let id = str_of(call, "id").unwrap_or("");
    let name = str_of(call, "name").unwrap_or("tool").to_string();
    let input = match call.get("input") {
        Some(v) if !v.is_null() => v.clone(),
        _ => str_of(call, "raw_input")
            .and_then(|r| serde_json::from_str(r).ok())
            .unwrap_or(Value::Null),
    };
    cx.remember_tool(id, &name);
    let mut ev = ParsedEvent::new(
        EventType::AssistantToolUse,
        None,
        render_tool_input(&name, &input),
    );
    ev.tool_name = Some(name.clone());
    ev.tool_use_id = (!id.is_empty()).then(|| id.to_string());
    ev.facts = call_facts(&name, id, &input);
    cx.emit(out, ev);
}

fn tool_result(cx: &mut Ctx, r: &Value, id: &str, out: &mut Vec<ParsedEvent>) {
    let id = str_of(r, "tool_use_id").unwrap_or(id);
    let mut text = String::new();
    result_text(r.get("content").unwrap_or(&Value::Null), &mut text, 0);
    let mut ev = ParsedEvent::new(EventType::ToolResult, None, text);
    ev.tool_name = str_of(r, "tool_name")
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .or_else(|| cx.tool_name(id));
    ev.tool_use_id = (!id.is_empty()).then(|| id.to_string());
    ev.is_error = r.get("is_error").and_then(Value::as_bool) == Some(true);
    cx.emit(out, ev);
}

/// A result's text in each shape Zed's reader accepts: a string, `{"Text": s}`, `{type: text,
/// text}`, `{text}` (any case), a list of these; images are left out.
fn result_text(v: &Value, out: &mut String, depth: u8) {
    if depth > 3 {
        return;
    }
    let mut push = |s: &str| {
        if s.trim().is_empty() {
            return;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(s);
    };
    match v {
        Value::String(s) => push(s),
        Value::Array(items) => {
            for item in items {
                result_text(item, out, depth + 1);
            }
        }
        Value::Object(m) => {
            if let Some(Value::String(s)) = field(m, "text") {
                push(s);
            }
        }
        _ => {}
    }
}

/// A field of `m` by its name in any case (as Zed reads a result's content).
fn field<'a>(m: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    m.iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v)
}

/// Facts of a call, by the Zed agent's tool names.
fn call_facts(name: &str, id: &str, input: &Value) -> Vec<Fact> {
    let arg = |k: &str| str_of(input, k).map(str::to_string);
    match name {
        "terminal" => arg("command")
            .as_deref()
            .and_then(command_program)
            .map(|program| Fact::Command { program })
            .into_iter()
            .collect(),
        "edit_file" | "streaming_edit_file" | "create_file" => arg("path")
            .map(|path| Fact::FileEdit { path })
            .into_iter()
            .collect(),
        "spawn_agent" => vec![Fact::Spawn {
            tool_use_id: (!id.is_empty()).then(|| id.to_string()),
            subagent_type: None,
            name: arg("label").map(|l| cap_chars(&l, 200)),
            description: arg("message").map(|d| cap_chars(&d, 500)),
            team_name: None,
        }],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests;
