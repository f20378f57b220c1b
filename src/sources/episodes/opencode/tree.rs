//! OpenCode's JSON tree, the layout before the v1.2 database (and of forks that kept it):
//! `storage/session/<projectID>/<sessionID>.json` (the session: `id`, `directory`, `parentID`,
//! `title`, `version`, `time`), `storage/message/<sessionID>/<messageID>.json` (a message's
//! info) and `storage/part/<messageID>/<partID>.json` (its parts; some trees keep the parts flat
//! in `storage/part/`, each naming its `messageID`). These are the same `MessageV2` values the
//! database keeps in its `data` columns, with their ids, so they are read by the same rules
//! ([`super::events`]). A session file is one store: OpenCode rewrites it (`time.updated`) as
//! its session goes on, and any change re-reads that session whole; its message and part files
//! count in its fingerprint ([`parts_modified`]), as OpenCode writes them on their own. A session with `parentID`
//! is its parent's subagent, as in the database.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::events::{child_description, message_events, ms_time, Speaker};
use crate::sources::episodes::agent::{EventSink, ReadEnd, ReadLimits};
use crate::sources::episodes::model::ParseStats;
use crate::sources::episodes::parser::{str_of, Ctx};

/// Whether `path` is `…/storage/session/<project>/<id>.json` (a copied tree may carry a
/// suffix: `storage_legacy/`).
pub(super) fn is_tree_session(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "json")
        && name(path.parent().and_then(Path::parent)) == Some("session")
        && name(path.ancestors().nth(3)).is_some_and(|n| n.starts_with("storage"))
}

/// The last component of `p`, when it is UTF-8.
fn name(p: Option<&Path>) -> Option<&str> {
    p?.file_name()?.to_str()
}

/// The `storage/` folder of a session file.
fn storage_of(session_file: &Path) -> Option<&Path> {
    session_file.ancestors().nth(3)
}

/// One JSON file of the tree: `None` (counted) when unreadable, too big or not an object.
fn read_json(path: &Path, limits: ReadLimits, stats: &mut ParseStats) -> Option<Value> {
    stats.lines += 1;
    let len = fs::metadata(path).ok()?.len();
    if len > limits.max_line_bytes as u64 {
        stats.skipped_oversized += 1;
        return None;
    }
    let bytes = crate::sources::regular_file::read(path).ok()?;
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(v) if v.is_object() => Some(v),
        _ => {
            stats.skipped_broken += 1;
            None
        }
    }
}

/// The `.json` files of a folder, by name (ids sort by time).
fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json") && p.is_file())
        .collect();
    files.sort();
    files
}

/// The latest mtime among a tree session's message files and its messages' part folders and
/// files: a new or rewritten message or part moves it. Costs one `stat` per file, no read.
/// Parts kept flat in `part/` (not OpenCode's own writer, which keeps `part/<messageID>/`;
/// other tools' trees do) cannot be told apart without reading them, so every flat part
/// counts: one `stat` per flat file for each session that has flat parts. A removed file is
/// not seen.
pub(super) fn parts_modified(session_file: &Path) -> Option<std::time::SystemTime> {
    let storage = storage_of(session_file)?;
    let id = session_file.file_stem()?.to_str()?;
    let mtime = |p: &Path| fs::metadata(p).and_then(|m| m.modified()).ok();
    let messages = storage.join("message").join(id);
    let mut latest = mtime(&messages);
    let mut flat = false;
    for msg in json_files(&messages) {
        latest = latest.max(mtime(&msg));
        let Some(msg_id) = msg.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        let dir = storage.join("part").join(msg_id);
        if dir.is_dir() {
            latest = latest.max(mtime(&dir));
            for part in json_files(&dir) {
                latest = latest.max(mtime(&part));
            }
        } else {
            flat = true;
        }
    }
    if flat {
        let part = storage.join("part");
        latest = latest.max(mtime(&part));
        for file in json_files(&part) {
            latest = latest.max(mtime(&file));
        }
    }
    latest
}

/// The `storage/` folder a tree root (`storage*/session`) reads its messages and parts from.
pub(super) fn storage_beside(root: &Path) -> Option<PathBuf> {
    let storage = root.parent()?;
    (root.file_name()? == "session"
        && storage
            .file_name()?
            .to_str()
            .is_some_and(|n| n.starts_with("storage")))
    .then(|| storage.to_path_buf())
}

/// The largest part file whose ids are read from its JSON when a change is mapped.
const MAX_PART_PEEK: u64 = 4 * 1024 * 1024;

/// The session file a changed message or part of a tree belongs to (watch mode): a message's
/// folder names its session; a part names its session (`sessionID`, which OpenCode's writer
/// always sets), else its message (`messageID`, else its folder), whose folder names the
/// session. `Some(storage/session)` when the change is the tree's but its session cannot be
/// told (a part without ids, a message not yet written): every tree session is then checked.
/// `None` for a path that is no message or part of a tree.
pub(super) fn session_of_change(changed: &Path) -> Option<PathBuf> {
    let is_storage = |p: Option<&Path>| name(p).is_some_and(|n| n.starts_with("storage"));
    let json = changed.extension().is_some_and(|e| e == "json")
        && !name(Some(changed)).is_some_and(|n| n.starts_with('.'));
    let up = |n: usize| changed.ancestors().nth(n);
    // (storage, session id if the path names it, message id if the path names it)
    let (storage, session, message) = if name(up(1)) == Some("message") && is_storage(up(2)) {
        // A session's new message folder.
        (up(2)?, name(Some(changed)).map(str::to_string), None)
    } else if json && name(up(2)) == Some("message") && is_storage(up(3)) {
        (up(3)?, name(up(1)).map(str::to_string), None)
    } else if json && name(up(2)) == Some("part") && is_storage(up(3)) {
        let (s, m) = part_ids(changed);
        (up(3)?, s, m.or_else(|| name(up(1)).map(str::to_string)))
    } else if json && name(up(1)) == Some("part") && is_storage(up(2)) {
        let (s, m) = part_ids(changed);
        (up(2)?, s, m)
    } else if name(up(1)) == Some("part") && is_storage(up(2)) && changed.is_dir() {
        // A message's new part folder.
        (up(2)?, None, name(Some(changed)).map(str::to_string))
    } else {
        return None;
    };
    let session = session.or_else(|| message_session(storage, message.as_deref()?));
    let found = session.and_then(|s| session_file(storage, &s));
    Some(found.unwrap_or_else(|| storage.join("session")))
}

/// A part file's `sessionID` and `messageID`, when it is small enough to peek at and parses.
fn part_ids(part: &Path) -> (Option<String>, Option<String>) {
    let small = fs::metadata(part).is_ok_and(|m| m.is_file() && m.len() <= MAX_PART_PEEK);
    let value = small
        .then(|| crate::sources::regular_file::read(part).ok())
        .flatten()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok());
    let Some(v) = value else {
        return (None, None);
    };
    // An id names a file of the tree: one plain path component, never a way out of it.
    let id = |k| {
        str_of(&v, k)
            .filter(|s| !s.is_empty() && *s != "." && *s != ".." && !s.contains(['/', '\\']))
            .map(str::to_string)
    };
    (id("sessionID"), id("messageID"))
}

/// The session whose folder holds message `message` (`message/<sessionID>/<messageID>.json`).
fn message_session(storage: &Path, message: &str) -> Option<String> {
    let file = format!("{message}.json");
    fs::read_dir(storage.join("message"))
        .ok()?
        .flatten()
        .find(|e| e.path().join(&file).is_file())
        .and_then(|e| e.file_name().into_string().ok())
}

/// `session/<projectID>/<session>.json` under `storage`.
fn session_file(storage: &Path, session: &str) -> Option<PathBuf> {
    let file = format!("{session}.json");
    fs::read_dir(storage.join("session"))
        .ok()?
        .flatten()
        .map(|e| e.path().join(&file))
        .find(|p| p.is_file())
}

/// Reads one session of the tree, whole.
pub(super) fn read_tree_session(
    path: &Path,
    limits: ReadLimits,
    sink: &mut dyn EventSink,
) -> io::Result<ReadEnd> {
    let size = fs::metadata(path)?.len();
    let mut cx = Ctx::default();
    let Some(session) = read_json(path, limits, &mut cx.stats) else {
        sink.end_session(cx.meta.clone(), cx.outcome.outcome());
        return Ok(end(size, cx.stats));
    };
    let id = str_of(&session, "id").unwrap_or("").to_string();
    cx.meta.session_id = (!id.is_empty()).then(|| id.clone());
    cx.meta.cwd = str_of(&session, "directory")
        .filter(|d| !d.is_empty())
        .map(str::to_string);
    cx.meta.version = str_of(&session, "version").map(str::to_string);
    if let Some(t) = str_of(&session, "title") {
        cx.set_title(t, 2);
    }
    let parent = str_of(&session, "parentID").map(str::to_string);
    let speaker = if parent.is_some() {
        Speaker::ParentAgent
    } else {
        Speaker::Person
    };
    let storage = storage_of(path).unwrap_or(Path::new("."));
    let mut messages: Vec<Value> = json_files(&storage.join("message").join(&id))
        .iter()
        .filter_map(|p| read_json(p, limits, &mut cx.stats))
        .collect();
    messages.sort_by(|a, b| {
        let key = |m: &Value| {
            (
                m.pointer("/time/created").and_then(Value::as_i64),
                str_of(m, "id").map(str::to_string),
            )
        };
        key(a).cmp(&key(b))
    });
    // Parts under `part/<messageID>/`, else flat in `part/` naming their message.
    let mut flat: Option<Vec<Value>> = None;
    let mut out = Vec::new();
    for info in &messages {
        let msg_id = str_of(info, "id").unwrap_or("");
        let dir = storage.join("part").join(msg_id);
        let parts: Vec<Value> = if !msg_id.is_empty() && dir.is_dir() {
            json_files(&dir)
                .iter()
                .filter_map(|p| read_json(p, limits, &mut cx.stats))
                .collect()
        } else {
            let all = flat.get_or_insert_with(|| {
                // Every flat part is read, but only this session's count as its lines; one
                // that cannot be read belongs to no session, so each session reading the
                // folder counts it skipped.
                let mut stats = ParseStats::default();
                let parts = json_files(&storage.join("part"))
                    .iter()
                    .filter_map(|p| read_json(p, limits, &mut stats))
                    .collect();
                let skipped = stats.skipped_broken + stats.skipped_oversized;
                cx.stats.lines += skipped;
                cx.stats.skipped_broken += stats.skipped_broken;
                cx.stats.skipped_oversized += stats.skipped_oversized;
                parts
            });
            let mine: Vec<Value> = all
                .iter()
                .filter(|p| str_of(p, "messageID") == Some(msg_id))
                .cloned()
                .collect();
            cx.stats.lines += mine.len() as u64;
            mine
        };
        message_events(&mut cx, info, &parts, speaker, &mut out);
        for ev in out.drain(..) {
            sink.event(ev);
        }
    }
    if cx.meta.created_at.is_none() {
        cx.meta.created_at = ms_time(session.pointer("/time/created"));
    }
    if let Some(parent) = parent {
        cx.meta.parent_session_id = Some(parent);
        cx.meta.agent_id = Some(id);
        cx.meta.agent_description = str_of(&session, "title").map(child_description);
    }
    let stats = cx.stats;
    let outcome = cx.outcome.outcome();
    sink.end_session(cx.meta, outcome);
    Ok(end(size, stats))
}

fn end(size: u64, stats: ParseStats) -> ReadEnd {
    ReadEnd {
        start: 0,
        end: size,
        resumed: false,
        cursor: String::new(),
        lines: stats,
        total: stats,
    }
}
