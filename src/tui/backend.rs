//! The only place the explorer calls the engine (on the worker threads): search, an episode with
//! its neighbours, the lines around a code reference, dispatch and the outbox. Answers are turned
//! into the state's own types (or JSON documents) here, so the UI does not depend on the exact
//! shape of the engine's structs.

use std::path::Path;

use knowledge::contract::dispatch::{DispatchRequest, Target, Task};
use knowledge::contract::{SearchRequest, SearchResponse};
use knowledge::engine::outbox::{self, Decision};
use knowledge::engine::{Engine, Episode};
use knowledge::sources::code::CodeStoreError;
use serde_json::Value;

use super::action::CodeText;
use super::state::TaskDraft;

/// Lines read around a code reference (before and after the chunk).
const BEFORE: u64 = 300;
const WINDOW: u64 = 2_000;

pub fn search(engine: &Engine, req: &SearchRequest) -> SearchResponse {
    engine.search(req)
}

pub fn load_episode(
    engine: &Engine,
    session_id: &str,
    seq: u64,
    context: u64,
) -> Result<Box<Episode>, String> {
    engine
        .get_episode(session_id, seq, context)
        .map(Box::new)
        .map_err(|e| e.to_string())
}

/// The file around `start_line`: through the code index when it knows the file (current lines,
/// redacted, with a freshness verdict), else straight from disk for an absolute path (redacted).
pub fn read_code(
    engine: &Engine,
    path: &str,
    chunk_id: Option<&str>,
    start_line: u64,
) -> Result<Box<CodeText>, String> {
    let from = start_line.saturating_sub(BEFORE).max(1);
    let to = from + WINDOW - 1;
    let mut index_error = None;
    if let Some(store) = engine.code_store() {
        let read = |p: &str| store.read_code(p, from, Some(to));
        let found = match read(path) {
            Err(CodeStoreError::Ambiguous { roots, .. }) => {
                // The lane gives root-relative paths: pick the root holding the chunk.
                let mut first = None;
                let mut chosen = None;
                for root in roots.split(", ") {
                    let abs = format!("{}/{}", root.trim_end_matches('/'), path);
                    if let Ok(lines) = read(&abs) {
                        let has =
                            chunk_id.is_some_and(|c| lines.chunks.iter().any(|k| k.chunk_id == c));
                        if has {
                            chosen = Some(lines);
                            break;
                        }
                        first.get_or_insert(lines);
                    }
                }
                chosen
                    .or(first)
                    .ok_or_else(|| format!("{path} is in several repositories"))
            }
            other => other.map_err(|e| e.to_string()),
        };
        match found {
            Ok(lines) => {
                let abs = Path::new(&lines.root).join(&lines.path);
                let freshness = if !lines.freshness.stale {
                    "fresh".to_string()
                } else if lines.read_from == "index" {
                    "stale: the file is gone; lines rebuilt from the index".to_string()
                } else {
                    "stale: the file changed since it was indexed".to_string()
                };
                return Ok(Box::new(CodeText {
                    abs_path: Some(abs.to_string_lossy().to_string()),
                    first_line: lines.start_line,
                    lines: lines.lines,
                    total_lines: lines.total_lines,
                    freshness,
                    index_rev: lines.index_rev,
                }));
            }
            Err(e) => index_error = Some(e),
        }
    }
    let p = Path::new(path);
    if p.is_absolute() && p.is_file() {
        let bytes = std::fs::read(p).map_err(|e| format!("cannot read {path}: {e}"))?;
        let text = String::from_utf8_lossy(&bytes);
        let kind = knowledge::sources::code::chunk::file_text_kind(path, &text);
        let text = knowledge::text::redact::redact_as(&text, kind).text;
        let all: Vec<&str> = text.split('\n').collect();
        let total = all.len() as u64;
        let lines = all
            .iter()
            .skip((from - 1) as usize)
            .take(WINDOW as usize)
            .map(|l| l.trim_end_matches('\r').to_string())
            .collect();
        return Ok(Box::new(CodeText {
            abs_path: Some(path.to_string()),
            first_line: from,
            lines,
            total_lines: total,
            freshness: "not in the code index: read from disk, redacted".to_string(),
            index_rev: None,
        }));
    }
    Err(index_error.unwrap_or_else(|| {
        format!("{path}: not in the code index (no code index in this data dir) and not a file")
    }))
}

/// A dispatch dry run or commit, as its `knowledge.dispatch/v1` document.
pub fn dispatch(engine: &Engine, draft: &TaskDraft, commit: bool) -> Result<Value, String> {
    let req = DispatchRequest {
        request_id: None,
        task: Task {
            text: draft.text.clone(),
            acceptance: draft.acceptance.clone(),
            constraints: draft.constraints.clone(),
        },
        target: match &draft.actor_id {
            Some(id) => Target::Actor(id.clone()),
            None => Target::Auto,
        },
        dry_run: !commit,
    };
    match engine.dispatch(&req) {
        Ok(resp) => serde_json::to_value(resp).map_err(|e| e.to_string()),
        Err(issues) => Err(issues
            .iter()
            .map(|i| i.message.clone())
            .collect::<Vec<_>>()
            .join("; ")),
    }
}

/// Every package of the outbox, newest first, as documents (unreadable files are skipped).
pub fn outbox_list(engine: &Engine) -> Result<Vec<Value>, String> {
    let (entries, _unreadable) = outbox::list(&engine.config);
    entries
        .iter()
        .map(|e| serde_json::to_value(e).map_err(|e| e.to_string()))
        .collect()
}

/// One outbox package in full, with the file it is in.
pub fn outbox_show(engine: &Engine, id: &str) -> Result<Value, String> {
    let (path, handoff) = outbox::show(&engine.config, id).map_err(|e| e.to_string())?;
    let mut doc = serde_json::to_value(handoff).map_err(|e| e.to_string())?;
    if let Some(obj) = doc.as_object_mut() {
        obj.insert("path".into(), Value::String(path.to_string_lossy().into()));
    }
    Ok(doc)
}

/// Record an approve/reject decision; what happened, for the status line.
pub fn outbox_decide(
    engine: &Engine,
    id: &str,
    approve: bool,
    reason: Option<&str>,
) -> Result<String, String> {
    let decision = if approve {
        Decision::Approve
    } else {
        Decision::Reject {
            reason: reason.map(str::to_string),
        }
    };
    let by = decided_by();
    let (h, changed) =
        outbox::decide(&engine.config, id, &decision, &by).map_err(|e| e.to_string())?;
    Ok(if changed {
        format!("{} by {by}", h.review.status)
    } else {
        format!("already {}", h.review.status)
    })
}

/// Who decides, for the record.
pub fn decided_by() -> String {
    let user = std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .or_else(|_| std::env::var("USERNAME"))
        .unwrap_or_else(|_| "someone".to_string());
    format!("tui:{user}")
}
