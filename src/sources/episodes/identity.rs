//! Which session a transcript's events belong to.
//!
//! A session's identity is its id, not its path: Codex moves rollouts from `sessions/` to
//! `archived_sessions/`, people move or copy Claude project folders (and continue both), and each
//! of those used to store the session a second time as `<id>~2`, its old events left behind or
//! shared ones twice. The indexer asks here, in its one writing transaction, before it stores a
//! new or re-read file; the events themselves are merged by `merge`. A hard link is the same
//! file under another name: it is read once (`drop_hard_links`).

use std::collections::HashMap;
use std::path::Path;

use rusqlite::{OptionalExtension, Transaction};

use super::discover::TranscriptFile;
use super::index::IndexSummary;
use super::prepare::load_file_row;
use super::prepare::{TranscriptRow, Work};

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
/// content and more; it is a copy (stores nothing) when the other holds the same content at
/// least as far. Two files that diverged are still one session: the writer merges each one's
/// events into it (see `merge`), so what they share is stored once.
pub(super) fn claim_session(
    tx: &Transaction<'_>,
    key: &str,
    file: &TranscriptFile,
    work: &Work,
    summary: &mut IndexSummary,
) -> rusqlite::Result<Claim> {
    let path = file.path.to_string_lossy();
    let Some(owner) = session_path(tx, key)? else {
        return Ok(Claim::Own(key.to_string()));
    };
    if owner == path {
        return Ok(Claim::Own(key.to_string()));
    }
    let owner_path = Path::new(&owner);
    if std::fs::symlink_metadata(owner_path).is_err() {
        // Moved: the events stay where they are (same seqs); the gone path is forgotten.
        tx.execute("DELETE FROM files WHERE path=?1", [&owner])?;
        summary.files_moved += 1;
        return Ok(Claim::Own(key.to_string()));
    }
    let owner_row = load_file_row(tx, &owner)?;
    let extends_owner = owner_row.as_ref().is_some_and(|o| {
        work.end > o.offset && o.still_prefix_of(&file.path, work.size).unwrap_or(false)
    });
    if extends_owner {
        // The old owner becomes a copy; without parser state it is re-claimed if it changes.
        tx.execute("UPDATE files SET parser_state='' WHERE path=?1", [&owner])?;
        return Ok(Claim::Own(key.to_string()));
    }
    let this_row = TranscriptRow {
        session_id: key.to_string(),
        size: work.size,
        mtime_ns: work.mtime_ns,
        head_hash: work.head_hash.clone(),
        resume_hash: work.resume_hash.clone(),
        offset: work.end,
        parser_state: String::new(),
        kind: Some(file.kind),
    };
    let owner_size = std::fs::metadata(owner_path).map_or(0, |m| m.len());
    if this_row
        .still_prefix_of(owner_path, owner_size)
        .unwrap_or(false)
    {
        return Ok(Claim::Copy(key.to_string()));
    }
    Ok(Claim::Own(key.to_string()))
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

/// Drops every further name of a file with several hard links: a hard link is the same file,
/// read once. The name the index already knows is kept, else the first. Returns how many names
/// were dropped (reported as copies stored once).
#[cfg(unix)]
pub(super) fn drop_hard_links(
    files: &mut Vec<TranscriptFile>,
    olds: &HashMap<String, TranscriptRow>,
) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let mut first: HashMap<(u64, u64), usize> = HashMap::new();
    let mut keep = vec![true; files.len()];
    for (i, f) in files.iter().enumerate() {
        let Ok(m) = std::fs::metadata(&f.path) else {
            continue;
        };
        if m.nlink() < 2 {
            continue;
        }
        let known = |j: usize| olds.contains_key(files[j].path.to_string_lossy().as_ref());
        match first.get(&(m.dev(), m.ino())).copied() {
            None => {
                first.insert((m.dev(), m.ino()), i);
            }
            Some(j) if known(i) && !known(j) => {
                keep[j] = false;
                first.insert((m.dev(), m.ino()), i);
            }
            Some(_) => keep[i] = false,
        }
    }
    let before = files.len();
    let mut it = keep.into_iter();
    files.retain(|_| it.next().unwrap_or(true));
    (before - files.len()) as u64
}

#[cfg(not(unix))]
pub(super) fn drop_hard_links(
    _files: &mut Vec<TranscriptFile>,
    _olds: &HashMap<String, TranscriptRow>,
) -> u64 {
    0
}
