//! Which session a transcript's events belong to.
//!
//! A session's identity is its id, not its path: Codex moves rollouts from `sessions/` to
//! `archived_sessions/`, people move or copy Claude project folders, and each of those used to
//! store the session a second time as `<id>~2`, its old events left behind. The indexer asks here,
//! in its one writing transaction, before it stores a new or re-read file.

use std::path::Path;

use rusqlite::{OptionalExtension, Transaction};

use super::discover::TranscriptFile;
use super::index::{delete_session, load_file_row, IndexSummary};
use super::prepare::{FileRow, Work};

/// Which session a file's events go to.
pub(super) enum Claim {
    /// Store them under this id: a new session, one whose file moved here, or the furthest copy.
    Own(String),
    /// Another file holds the same session at least as far: this copy stores no events.
    Copy(String),
}

/// A session's identity is its id, not its path. A file whose session id is already stored
/// under another path takes that session over when the other file is gone (Codex moves
/// rollouts to `archived_sessions/`, people move project folders) or when it holds the same
/// content and more; it is a copy when the other holds the same content at least as far. Only
/// two files that diverged are two sessions (`<id>~2`).
pub(super) fn claim_session(
    tx: &Transaction<'_>,
    key: &str,
    file: &TranscriptFile,
    work: &Work,
    summary: &mut IndexSummary,
) -> rusqlite::Result<Claim> {
    let path = file.path.to_string_lossy();
    let mut candidate = key.to_string();
    for n in 2.. {
        let Some(owner) = session_path(tx, &candidate)? else {
            return Ok(Claim::Own(candidate));
        };
        if owner == path {
            return Ok(Claim::Own(candidate));
        }
        let owner_path = Path::new(&owner);
        if std::fs::symlink_metadata(owner_path).is_err() {
            delete_session(tx, &candidate)?;
            tx.execute("DELETE FROM files WHERE path=?1", [&owner])?;
            summary.files_moved += 1;
            return Ok(Claim::Own(candidate));
        }
        let owner_row = load_file_row(tx, &owner)?;
        let this_row = FileRow {
            session_id: candidate.clone(),
            size: work.size,
            mtime_ns: work.mtime_ns,
            head_hash: work.head_hash.clone(),
            resume_hash: work.resume_hash.clone(),
            offset: work.end,
            parser_state: String::new(),
        };
        let owner_size = std::fs::metadata(owner_path).map_or(0, |m| m.len());
        let extends_owner = owner_row.as_ref().is_some_and(|o| {
            work.end > o.offset && o.still_prefix_of(&file.path, work.size).unwrap_or(false)
        });
        if extends_owner {
            delete_session(tx, &candidate)?;
            // The old owner becomes a copy; without parser state it is re-claimed if it changes.
            tx.execute("UPDATE files SET parser_state='' WHERE path=?1", [&owner])?;
            return Ok(Claim::Own(candidate));
        }
        if this_row
            .still_prefix_of(owner_path, owner_size)
            .unwrap_or(false)
        {
            return Ok(Claim::Copy(candidate));
        }
        candidate = format!("{key}~{n}");
    }
    Ok(Claim::Own(candidate))
}

/// The path a stored session was read from, if it is stored.
pub(super) fn session_path(
    tx: &Transaction<'_>,
    session_id: &str,
) -> rusqlite::Result<Option<String>> {
    tx.query_row(
        "SELECT path FROM sessions WHERE session_id=?1",
        [session_id],
        |r| r.get(0),
    )
    .optional()
}
