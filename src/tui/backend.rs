//! The only place the explorer calls the engine (on the worker threads): search, the activity of
//! a period, an episode with its neighbours, the lines around a code reference, dispatch and the
//! outbox. Answers are turned into the state's own types or the contract's typed documents here,
//! so a change of a document's shape fails to compile in the UI instead of showing an empty
//! field.

use std::path::Path;

use super::action::{CodeText, OutboxListing, OutboxPackage};
use super::state::TaskDraft;
use knowledge::contract::dispatch::validate_dispatch_value;
use knowledge::contract::dispatch::DispatchResponse;
use knowledge::contract::{Issue, SearchRequest, SearchResponse};
use knowledge::engine::activity::{ActivityReport, ActivityRequest};
use knowledge::engine::outbox::{self, Decision};
use knowledge::engine::{Engine, Episode};

/// Lines read around a code reference (before and after the chunk).
const BEFORE: u64 = 300;
const WINDOW: u64 = 2_000;

pub fn search(engine: &Engine, req: &SearchRequest) -> SearchResponse {
    engine.search(req)
}

/// The activity of a period, counted by the engine through the lanes.
pub fn activity(engine: &Engine, req: &ActivityRequest) -> ActivityReport {
    engine.activity(req)
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

/// The file around `start_line`, by the rules every front end shares (`Engine::read_code`: the
/// code index, else the external code source, else a regular, text, size-capped file under an
/// indexed root).
pub fn read_code(
    engine: &Engine,
    path: &str,
    chunk_id: Option<&str>,
    start_line: u64,
) -> Result<Box<CodeText>, String> {
    let from = start_line.saturating_sub(BEFORE).max(1);
    let to = from + WINDOW - 1;
    let lines = engine
        .read_code(path, from, Some(to), chunk_id)
        .map_err(|e| e.to_string())?;
    let abs = Path::new(&lines.root).join(&lines.path);
    let freshness = if lines.index_rev.is_none() && lines.read_from == "disk" {
        "not in the code index: read from disk, redacted".to_string()
    } else if !lines.freshness.stale {
        "fresh".to_string()
    } else if lines.read_from == "index" {
        "stale: the file is gone; lines rebuilt from the index".to_string()
    } else {
        "stale: the file changed since it was indexed".to_string()
    };
    Ok(Box::new(CodeText {
        abs_path: Some(abs.to_string_lossy().to_string()),
        first_line: lines.start_line,
        lines: lines.lines,
        total_lines: lines.total_lines,
        freshness,
        index_rev: lines.index_rev,
    }))
}

/// A dispatch dry run or commit, as its `knowledge.dispatch/v1` response.
///
/// The draft goes through the same validation as a request document (sizes, NULs), so the
/// explorer cannot write a package the CLI and MCP would refuse.
pub fn dispatch(
    engine: &Engine,
    draft: &TaskDraft,
    commit: bool,
) -> Result<Box<DispatchResponse>, String> {
    let doc = serde_json::json!({
        "schema": "knowledge.dispatch/v1",
        "task": {
            "text": draft.text,
            "acceptance": draft.acceptance,
            "constraints": draft.constraints,
        },
        "actor_id": draft.actor_id,
        "dry_run": !commit,
    });
    let joined = |issues: Vec<Issue>| {
        issues
            .iter()
            .map(|i| i.message.clone())
            .collect::<Vec<_>>()
            .join("; ")
    };
    let (req, _) = validate_dispatch_value(&doc).map_err(joined)?;
    engine.dispatch(&req).map(Box::new).map_err(joined)
}

/// Every package of the outbox, newest first, and why each unreadable file is not one.
pub fn outbox_list(engine: &Engine) -> Result<OutboxListing, String> {
    let (packages, unreadable) = outbox::list(&engine.config);
    Ok(OutboxListing {
        packages,
        unreadable,
    })
}

/// One outbox package in full, with the file it is in; a file that is not a handoff package
/// is an error naming the file and the field.
pub fn outbox_show(engine: &Engine, id: &str) -> Result<Box<OutboxPackage>, String> {
    let (path, handoff) = outbox::show(&engine.config, id).map_err(|e| e.to_string())?;
    Ok(Box::new(OutboxPackage {
        path: path.to_string_lossy().into_owned(),
        handoff,
    }))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_draft_past_the_request_limits_is_refused_like_a_request() {
        let engine = crate::tui::tests::engine_for(crate::tui::tests::world());
        let draft = TaskDraft {
            text: "fix the BOM".into(),
            acceptance: vec!["check it".into(); 51],
            constraints: vec!["y".repeat(2001)],
            actor_id: None,
        };
        let err = dispatch(&engine, &draft, false).expect_err("refused");
        assert!(
            err.contains("task.acceptance") && err.contains("task.constraints[0]"),
            "{err}"
        );
    }

    #[test]
    fn the_explorer_refuses_a_file_outside_the_indexed_roots_like_every_front_end() {
        let engine = crate::tui::tests::engine_for(crate::tui::tests::world());
        let outside = tempfile::NamedTempFile::new().expect("temp file");
        std::fs::write(outside.path(), "password=hunter2\n").expect("write");
        let err = read_code(&engine, &outside.path().display().to_string(), None, 1)
            .expect_err("outside every root");
        assert!(err.contains("outside every indexed repository"), "{err}");
    }
}
