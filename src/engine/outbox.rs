//! The outbox: one handoff package per assignment, as a JSON file in `<data_dir>/outbox/`,
//! written atomically (temp file, fsync, rename), plus its `ak_assignment` row in the
//! agent-knowledge store (written by [`crate::sources::agent_knowledge::assignments`], the table's only
//! writer). A person approves or rejects a recorded plan here; the lead agent reads the decision
//! from the package's `review`. Nothing here executes anything.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::EngineConfig;
use crate::contract::dispatch::{Assignment, Handoff, Review};
use crate::contract::DispatchMode;
use crate::contract::ReviewStatus;
use crate::sources::agent_knowledge::assignments::{AssignmentStore, NewAssignment};

#[derive(Debug, thiserror::Error)]
pub enum OutboxError {
    #[error("no assignment {0} in the outbox")]
    NotFound(String),
    #[error("assignment {id} is already {status}; decisions are final")]
    AlreadyDecided { id: String, status: ReviewStatus },
    #[error("cannot read or write {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the assignment store {path} cannot be read or written: {source}")]
    Store {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error("{path} is not a handoff package: {message}")]
    Corrupt { path: PathBuf, message: String },
}

/// A person's decision on a recorded plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Approve,
    Reject { reason: Option<String> },
}

/// One package in the outbox, for listing.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct OutboxEntry {
    pub assignment_id: String,
    pub status: ReviewStatus,
    pub created_at: String,
    pub actor_id: String,
    pub actor_name: String,
    pub dispatch_mode: DispatchMode,
    pub task: String,
    pub path: String,
}

pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// The file name of an assignment (`assign:ab12…` → `assign-ab12….json`).
pub fn file_name(assignment_id: &str) -> String {
    let safe: String = assignment_id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    format!("{safe}.json")
}

/// The assignment table of the data dir's store, and how to name a failure in it.
fn open_store(
    config: &EngineConfig,
) -> Result<(AssignmentStore, impl Fn(rusqlite::Error) -> OutboxError), OutboxError> {
    let path = config.knowledge_db();
    let err = move |source| OutboxError::Store {
        path: path.clone(),
        source,
    };
    let store = AssignmentStore::open(&config.knowledge_db()).map_err(&err)?;
    Ok((store, err))
}

/// Record the plan and write its package, once. Repeating the same commit (also from another
/// process at the same moment) finds the same row and the same file and writes nothing new.
pub fn commit(
    config: &EngineConfig,
    handoff: &Handoff,
) -> Result<(Assignment, Handoff), OutboxError> {
    let (store, store_err) = open_store(config)?;
    let task_json = serde_json::json!({
        "task": handoff.task,
        "target": handoff.target,
    })
    .to_string();
    let recorded = store
        .record(&NewAssignment {
            assignment_id: &handoff.assignment_id,
            actor_id: &handoff.target.actor_id,
            task_json: &task_json,
            created_at: &handoff.created_at,
        })
        .map_err(store_err)?;
    let dir = config.outbox_dir();
    let file = dir.join(file_name(&handoff.assignment_id));
    let stored = if file.exists() {
        read_package(&file)?
    } else {
        // The row's time, not ours: a racing second process writes identical bytes.
        let mut h = handoff.clone();
        h.created_at = recorded.created_at;
        h.review.status = recorded.status;
        write_atomically(&file, &h)?;
        h
    };
    Ok((
        Assignment {
            assignment_id: handoff.assignment_id.clone(),
            status: stored.review.status,
            created: recorded.inserted,
            outbox_path: file.to_string_lossy().to_string(),
        },
        stored,
    ))
}

fn write_atomically(path: &Path, handoff: &Handoff) -> Result<(), OutboxError> {
    let io = |source| OutboxError::Io {
        path: path.to_path_buf(),
        source,
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(io)?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default(),
        std::process::id()
    ));
    let bytes = serde_json::to_vec_pretty(handoff).map_err(|e| OutboxError::Corrupt {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let mut f = File::create(&tmp).map_err(io)?;
    f.write_all(&bytes).map_err(io)?;
    f.sync_all().map_err(io)?;
    drop(f);
    fs::rename(&tmp, path).map_err(io)?;
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

fn read_package(path: &Path) -> Result<Handoff, OutboxError> {
    let text =
        crate::sources::regular_file::read_to_string(path).map_err(|source| OutboxError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    serde_json::from_str(&text).map_err(|e| OutboxError::Corrupt {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// Every package, newest first. Unreadable files are skipped (named in the error list).
pub fn list(config: &EngineConfig) -> (Vec<OutboxEntry>, Vec<String>) {
    let mut out = Vec::new();
    let mut bad = Vec::new();
    let Ok(rd) = fs::read_dir(config.outbox_dir()) else {
        return (out, bad);
    };
    for entry in rd.filter_map(|e| e.ok()) {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().to_string();
        if name.starts_with('.') || !name.ends_with(".json") {
            continue;
        }
        match read_package(&path) {
            Ok(h) => out.push(OutboxEntry {
                assignment_id: h.assignment_id,
                status: h.review.status,
                created_at: h.created_at,
                actor_id: h.target.actor_id,
                actor_name: h.target.name,
                dispatch_mode: h.target.dispatch.mode,
                task: h.task.text,
                path: path.to_string_lossy().to_string(),
            }),
            Err(e) => bad.push(e.to_string()),
        }
    }
    out.sort_by(|a, b| {
        b.created_at
            .cmp(&a.created_at)
            .then_with(|| a.assignment_id.cmp(&b.assignment_id))
    });
    (out, bad)
}

/// One package by assignment id (or a unique prefix of its hex part).
pub fn show(config: &EngineConfig, id: &str) -> Result<(PathBuf, Handoff), OutboxError> {
    let exact = config.outbox_dir().join(file_name(id));
    if exact.exists() {
        return Ok((exact.clone(), read_package(&exact)?));
    }
    let (entries, _) = list(config);
    let want = id
        .trim_start_matches("assign:")
        .trim_start_matches("assign-");
    let matches: Vec<&OutboxEntry> = entries
        .iter()
        .filter(|e| {
            !want.is_empty()
                && e.assignment_id
                    .trim_start_matches("assign:")
                    .starts_with(want)
        })
        .collect();
    match matches.as_slice() {
        [one] => {
            let p = PathBuf::from(&one.path);
            Ok((p.clone(), read_package(&p)?))
        }
        // No readable package has it: a file named for it that cannot be read says why.
        [] => match unreadable_named(config, want).as_slice() {
            [p] => Ok((p.clone(), read_package(p)?)),
            _ => Err(OutboxError::NotFound(id.to_string())),
        },
        _ => Err(OutboxError::NotFound(id.to_string())),
    }
}

/// The package files whose name starts with `assign-<want>` (what [`file_name`] makes of an id).
fn unreadable_named(config: &EngineConfig, want: &str) -> Vec<PathBuf> {
    let Ok(rd) = fs::read_dir(config.outbox_dir()) else {
        return Vec::new();
    };
    rd.filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".json"))
                .and_then(|n| n.strip_prefix("assign-"))
                .is_some_and(|hex| !want.is_empty() && hex.starts_with(want))
        })
        .collect()
}

/// Approve or reject a recorded plan. A repeated identical decision is a no-op; a different
/// decision on a decided plan is refused. Returns the package and whether anything changed.
pub fn decide(
    config: &EngineConfig,
    id: &str,
    decision: &Decision,
    by: &str,
) -> Result<(Handoff, bool), OutboxError> {
    let (path, mut h) = show(config, id)?;
    let wanted = match decision {
        Decision::Approve => ReviewStatus::Approved,
        Decision::Reject { .. } => ReviewStatus::Rejected,
    };
    if h.review.status == wanted {
        return Ok((h, false));
    }
    if h.review.status != ReviewStatus::RecordedPlan {
        return Err(OutboxError::AlreadyDecided {
            id: h.assignment_id,
            status: h.review.status,
        });
    }
    let (store, store_err) = open_store(config)?;
    let reason = match decision {
        Decision::Reject { reason } => reason.clone(),
        Decision::Approve => None,
    };
    let review = Review {
        status: wanted,
        decided_by: Some(by.to_string()),
        decided_at: Some(now_rfc3339()),
        reason,
    };
    let moved = store
        .decide(&h.assignment_id, &review)
        .map_err(&store_err)?;
    if !moved {
        match store.decision(&h.assignment_id).map_err(&store_err)? {
            // Decided in the store but not in the file (an earlier write failed): the file is
            // what the lead reads, so it is brought up to date.
            Some(current) if current.status == wanted => {
                h.review = current;
                write_atomically(&path, &h)?;
                return Ok((h, true));
            }
            Some(current) if current.status != ReviewStatus::RecordedPlan => {
                return Err(OutboxError::AlreadyDecided {
                    id: h.assignment_id,
                    status: current.status,
                })
            }
            // The row is missing (a store rebuilt from an old copy): the file is the record.
            _ => {}
        }
    }
    h.review = review;
    write_atomically(&path, &h)?;
    Ok((h, true))
}
