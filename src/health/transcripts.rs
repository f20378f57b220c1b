//! `doctor`'s walk over the session roots: every store found against the index (new or grown,
//! unreadable, or failed by the last index and unchanged since), and the agent each belongs
//! to. Its own module so `doctor.rs` reads as the report it assembles.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::doctor::{Finding, EXAMPLES};
use crate::sources::episodes::agents::Agent;
use crate::sources::episodes::discover::discover_changed;
use crate::sources::sqlite::open_ro;

/// The transcripts under the session roots against the index.
#[derive(Default)]
pub(super) struct Transcripts {
    /// Transcript files the index holds.
    pub(super) indexed: u64,
    /// New, or of another size than when indexed.
    pub(super) changed: Finding,
    /// Cannot be opened for reading (with why, in the examples).
    pub(super) unreadable: Finding,
    /// The last index could not read them, and they are unchanged (with why).
    pub(super) failed: Finding,
    /// Every store found, with its agent and the session root it was found under.
    pub(super) found: Vec<(Agent, PathBuf)>,
}

pub(super) fn transcripts(db: &Path, roots: &[PathBuf]) -> rusqlite::Result<Transcripts> {
    let mut out = Transcripts::default();
    let conn = open_ro(db)?;
    let rows: Vec<(String, i64)> =
        conn.prepare("SELECT path, size FROM files")
            .and_then(|mut stmt| {
                let rows = stmt
                    .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                    .collect();
                rows
            })?;
    out.indexed = rows.len() as u64;
    let known: std::collections::HashMap<PathBuf, i64> = rows
        .iter()
        .map(|(p, size)| (canonical(Path::new(p)), *size))
        .collect();
    let failures = crate::sources::episodes::failed_stores::load(&conn);
    let mut seen = HashSet::new();
    for root in roots {
        let found = discover_changed(root, &|_, _| false);
        for (dir, why) in found.unreadable_dirs {
            out.unreadable.checked += 1;
            out.unreadable.count += 1;
            if out.unreadable.examples.len() < EXAMPLES {
                out.unreadable
                    .examples
                    .push(format!("{}: {why}", dir.display()));
            }
        }
        for t in found.changed {
            let path = canonical(&t.path);
            if !seen.insert(path.clone()) {
                continue;
            }
            out.found.push((t.kind, root.clone()));
            out.changed.checked += 1;
            out.unreadable.checked += 1;
            if let Err(why) = crate::sources::regular_file::open(&path) {
                out.unreadable.count += 1;
                if out.unreadable.examples.len() < EXAMPLES {
                    out.unreadable
                        .examples
                        .push(format!("{}: {why}", path.display()));
                }
                continue;
            }
            let failure = failures
                .get(&t.path.display().to_string())
                .or_else(|| failures.get(&path.display().to_string()))
                .filter(|f| f.unchanged());
            if let Some(f) = failure {
                out.failed.checked += 1;
                out.failed.count += 1;
                if out.failed.examples.len() < EXAMPLES {
                    out.failed.examples.push(format!("{}: {}", f.path, f.why));
                }
                continue;
            }
            let size = crate::sources::episodes::prepare::store_size(&t).map(|s| s as i64);
            if known.get(&path).copied() != size {
                out.changed.count += 1;
                if out.changed.examples.len() < EXAMPLES {
                    out.changed.examples.push(path.display().to_string());
                }
            }
        }
    }
    Ok(out)
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}
