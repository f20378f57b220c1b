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

/// The Zed reader.
pub struct Reader;

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
    crate::sources::agent_db::has_schema(
        path,
        "SELECT count(*) FROM pragma_table_info('threads')
          WHERE name IN ('summary', 'data_type', 'data')",
        3,
    )
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
        Recognised::database(path, is_in_zed_place(path), has_zed_schema)
    }

    fn read(
        &self,
        file: &TranscriptFile,
        from: Option<Resume<'_>>,
        limits: ReadLimits,
        sink: &mut dyn EventSink,
    ) -> io::Result<ReadEnd> {
        let conn = AgentDb::open(&file.path).map_err(sql_err)?;
        conn.snapshot(sql_err, |c| {
            read_snapshot(c, from, limits.max_line_bytes, sink)
        })
    }

    /// Zed opens a thread from its agent panel's history; no command taking a thread id was
    /// found.
    fn resume_command(&self, _quoted_session_id: &str) -> Option<String> {
        None
    }

    /// A write lands in `threads.db-wal` first (the database changes only at a checkpoint);
    /// `-shm` is not followed (readers write it).
    fn store_of_change(&self, changed: &Path) -> Option<PathBuf> {
        changed_db(changed, DB_NAME).filter(|db| is_in_zed_place(db))
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

fn read_snapshot(
    conn: &Connection,
    from: Option<Resume<'_>>,
    max_record: usize,
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
        let st = push_thread(conn, t, max_record, sink).map_err(sql_err)?;
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

/// The thread's document as JSON text, decompressed, bounded by `cap` bytes
/// ([`MAX_DOCUMENT_BYTES`]); it is parsed a message at a time (`bounds::records`).
fn document(data_type: Option<&str>, data: Vec<u8>, cap: u64) -> Result<Vec<u8>, Refused> {
    match data_type {
        Some("json") => Ok(data),
        Some("zstd") => decompress(&data, cap),
        _ => Err(Refused::Broken),
    }
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

mod messages;
use messages::*;

#[cfg(test)]
mod tests;
