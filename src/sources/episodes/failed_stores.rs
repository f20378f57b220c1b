//! The stores the index could not read, remembered in the episodes store (`meta`), so that
//! `doctor` names each with the reason instead of calling it new.
//!
//! A store that fails (an agent's database whose disk image is malformed, a file that is not
//! a database) never gets a row in `files`, so doctor saw a store "grown or appeared since the
//! last index" and said to run `knowledge index`, which failed the same way. Each run records
//! what it could not read with the store's size and mtime; doctor reports a store whose size
//! and mtime are still those as failed, with the reader's own words and what to do. A store
//! that changed since is new again (the next run may read it). A watch batch reads only some
//! stores: the failures of the others are kept while their files are unchanged.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::UNIX_EPOCH;

use rusqlite::Connection;
use serde::{Deserialize, Serialize};

use crate::sources::sqlite::{meta_get, meta_set};

const META_KEY: &str = "failed_stores";

/// One store (or folder) the last run that read it could not read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailedStore {
    pub path: String,
    pub why: String,
    size: u64,
    modified_ns: u128,
}

impl FailedStore {
    fn now(path: &str, why: &str) -> FailedStore {
        let (size, modified_ns) = stamp(Path::new(path)).unwrap_or((0, 0));
        FailedStore {
            path: path.to_string(),
            why: why.to_string(),
            size,
            modified_ns,
        }
    }

    /// Whether the file is still as it was when it failed (so it would fail again).
    pub fn unchanged(&self) -> bool {
        stamp(Path::new(&self.path)) == Some((self.size, self.modified_ns))
    }
}

fn stamp(path: &Path) -> Option<(u64, u128)> {
    let m = std::fs::metadata(path).ok()?;
    let modified = m.modified().ok()?.duration_since(UNIX_EPOCH).ok()?;
    Some((m.len(), modified.as_nanos()))
}

/// Every remembered failure, by path.
pub fn load(conn: &Connection) -> HashMap<String, FailedStore> {
    meta_get(conn, META_KEY)
        .and_then(|text| serde_json::from_str::<Vec<FailedStore>>(&text).ok())
        .unwrap_or_default()
        .into_iter()
        .map(|f| (f.path.clone(), f))
        .collect()
}

/// Remembers this run's failures (`failed`: path and why), keeping earlier ones of stores this
/// run did not read (`read`) whose files are unchanged.
pub fn record(
    conn: &Connection,
    read: &HashSet<String>,
    failed: &[(String, String)],
) -> rusqlite::Result<()> {
    let mut all: Vec<FailedStore> = load(conn)
        .into_values()
        .filter(|f| !read.contains(&f.path) && f.unchanged())
        .collect();
    let now: HashSet<&str> = failed.iter().map(|(p, _)| p.as_str()).collect();
    all.retain(|f| !now.contains(f.path.as_str()));
    all.extend(failed.iter().map(|(p, why)| FailedStore::now(p, why)));
    all.sort_by(|a, b| a.path.cmp(&b.path));
    let text = serde_json::to_string(&all).unwrap_or_else(|_| "[]".into());
    meta_set(conn, META_KEY, &text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_is_kept_while_its_file_is_unchanged_and_forgotten_once_read() {
        let dir = tempfile::tempdir().expect("tmp");
        let conn = Connection::open_in_memory().expect("db");
        conn.execute_batch("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT)")
            .expect("meta");
        let bad = dir.path().join("bad.db");
        std::fs::write(&bad, "not a database").expect("write");
        let bad = bad.display().to_string();
        let failed = vec![(bad.clone(), "file is not a database".to_string())];
        record(&conn, &HashSet::from([bad.clone()]), &failed).expect("record");
        assert!(load(&conn)[&bad].unchanged());
        // A watch batch that read other stores keeps it.
        record(&conn, &HashSet::new(), &[]).expect("record");
        assert_eq!(load(&conn)[&bad].why, "file is not a database");
        // Once it changes, it is new again: a batch that does not read it drops it.
        std::fs::write(&bad, "still not a database, longer").expect("write");
        assert!(!load(&conn)[&bad].unchanged());
        record(&conn, &HashSet::new(), &[]).expect("record");
        assert!(load(&conn).is_empty());
        // A run that read it without failing forgets it.
        record(&conn, &HashSet::from([bad.clone()]), &failed).expect("record");
        record(&conn, &HashSet::from([bad.clone()]), &[]).expect("record");
        assert!(load(&conn).is_empty());
    }
}
