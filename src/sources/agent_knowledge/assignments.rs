//! `ak_assignment`, the dispatch plans: the one table of the agent-knowledge store that is not
//! derived. Every statement that writes it lives here, so the store has one writer per table: the
//! engine's outbox records and decides plans through [`AssignmentStore`], and every rebuild
//! carries the rows over with [`copy_assignments`].

use std::path::Path;
use std::time::Duration;

use rusqlite::{params, Connection, OptionalExtension};

use crate::contract::dispatch::Review;
use crate::contract::ReviewStatus;

/// The table, created on demand by whoever writes it first (a commit before any build).
pub const ASSIGNMENT_SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS ak_assignment(
    assignment_id TEXT PRIMARY KEY,
    actor_id TEXT NOT NULL,
    task_json TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    decided_at TEXT,
    decided_by TEXT,
    reason TEXT
);
"#;

/// Columns of `ak_assignment`, in order.
pub const ASSIGNMENT_COLUMNS: &[&str] = &[
    "assignment_id",
    "actor_id",
    "task_json",
    "status",
    "created_at",
    "decided_at",
    "decided_by",
    "reason",
];

/// A plan to record.
#[derive(Debug, Clone)]
pub struct NewAssignment<'a> {
    pub assignment_id: &'a str,
    pub actor_id: &'a str,
    /// The task and its target, as JSON.
    pub task_json: &'a str,
    pub created_at: &'a str,
}

/// The stored row after [`AssignmentStore::record`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// This call inserted the row (false: it was there already).
    pub inserted: bool,
    pub status: ReviewStatus,
    /// The row's own time, which may be an earlier commit's.
    pub created_at: String,
}

/// The assignment table of a store, opened for writing.
pub struct AssignmentStore {
    conn: Connection,
    path: std::path::PathBuf,
    /// The file `conn` opened (a build renames a new store over it).
    opened: Option<(u64, u64)>,
}

impl AssignmentStore {
    /// Open (or create) the store at `path` and make sure the table exists. A build may hold
    /// the file for a moment while it copies assignments: the writer waits for it.
    pub fn open(path: &Path) -> rusqlite::Result<Self> {
        crate::sources::sqlite::regular_or_absent(path)?;
        let opened = crate::sources::regular_file::file_id(path);
        let conn = Connection::open(path)?;
        conn.busy_timeout(Duration::from_secs(10))?;
        conn.execute_batch(ASSIGNMENT_SCHEMA)?;
        Ok(AssignmentStore {
            conn,
            path: path.to_path_buf(),
            opened,
        })
    }

    /// Runs `f`, and once more on the store as it is now when a build renamed a new store over
    /// the file this one opened: before or while `f` waited for its lock. A write there is
    /// refused (`SQLITE_READONLY_DBMOVED`), but a read, or a write that found nothing to change,
    /// answers from the old file, so the file is compared too; a write that did change the old
    /// file (`done`) landed before the build carried the assignments over, and stands. Every
    /// call is safe to repeat: a record is kept once, a decision moves a recorded plan only.
    fn retrying<T>(
        &self,
        f: impl Fn(&Connection) -> rusqlite::Result<T>,
        done: impl Fn(&T) -> bool,
    ) -> rusqlite::Result<T> {
        let first = f(&self.conn);
        let again = match &first {
            Err(rusqlite::Error::SqliteFailure(e, _)) => {
                e.extended_code == rusqlite::ffi::SQLITE_READONLY_DBMOVED
            }
            Err(_) => false,
            Ok(v) => !done(v) && crate::sources::regular_file::file_id(&self.path) != self.opened,
        };
        if again {
            return f(&AssignmentStore::open(&self.path)?.conn);
        }
        first
    }

    /// Record a plan once. Repeating it (also from another process at the same moment) finds
    /// the same row and changes nothing.
    pub fn record(&self, a: &NewAssignment<'_>) -> rusqlite::Result<Recorded> {
        self.retrying(|c| Self::record_in(c, a), |r| r.inserted)
    }

    fn record_in(conn: &Connection, a: &NewAssignment<'_>) -> rusqlite::Result<Recorded> {
        let inserted = conn.execute(
            "INSERT OR IGNORE INTO ak_assignment(assignment_id, actor_id, task_json, status,
                 created_at) VALUES(?1, ?2, ?3, ?4, ?5)",
            params![
                a.assignment_id,
                a.actor_id,
                a.task_json,
                ReviewStatus::RecordedPlan,
                a.created_at
            ],
        )?;
        let (status, created_at) = conn.query_row(
            "SELECT status, created_at FROM ak_assignment WHERE assignment_id=?1",
            [a.assignment_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        Ok(Recorded {
            inserted: inserted == 1,
            status,
            created_at,
        })
    }

    /// Move a recorded plan to the decision's status. The conditional update is the guard: of two
    /// racing decisions only one moves the row. Returns whether this call moved it.
    pub fn decide(&self, assignment_id: &str, decision: &Review) -> rusqlite::Result<bool> {
        self.retrying(
            |c| Self::decide_in(c, assignment_id, decision),
            |moved| *moved,
        )
    }

    fn decide_in(
        conn: &Connection,
        assignment_id: &str,
        decision: &Review,
    ) -> rusqlite::Result<bool> {
        let changed = conn.execute(
            "UPDATE ak_assignment SET status=?2, decided_at=?3, decided_by=?4, reason=?5
             WHERE assignment_id=?1 AND status=?6",
            params![
                assignment_id,
                decision.status,
                decision.decided_at,
                decision.decided_by,
                decision.reason,
                ReviewStatus::RecordedPlan
            ],
        )?;
        Ok(changed > 0)
    }

    /// The stored review of a plan (only its status while undecided), if the row exists.
    pub fn decision(&self, assignment_id: &str) -> rusqlite::Result<Option<Review>> {
        self.retrying(|c| Self::decision_in(c, assignment_id), |_| false)
    }

    fn decision_in(conn: &Connection, assignment_id: &str) -> rusqlite::Result<Option<Review>> {
        conn.query_row(
            "SELECT status, decided_by, decided_at, reason FROM ak_assignment
                 WHERE assignment_id=?1",
            [assignment_id],
            |r| {
                Ok(Review {
                    status: r.get(0)?,
                    decided_by: r.get(1)?,
                    decided_at: r.get(2)?,
                    reason: r.get(3)?,
                })
            },
        )
        .optional()
    }
}

/// Copies `ak_assignment` rows (the columns both stores know); returns (rows, old-only columns).
pub fn copy_assignments(
    old: &Connection,
    new: &Connection,
) -> rusqlite::Result<(u64, Vec<String>)> {
    let mut stmt = old.prepare("SELECT name FROM pragma_table_info('ak_assignment')")?;
    let old_cols: Vec<String> = stmt
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    if old_cols.is_empty() {
        return Ok((0, Vec::new()));
    }
    let cols: Vec<&str> = ASSIGNMENT_COLUMNS
        .iter()
        .copied()
        .filter(|c| old_cols.iter().any(|o| o == c))
        .collect();
    let dropped: Vec<String> = old_cols
        .iter()
        .filter(|o| !ASSIGNMENT_COLUMNS.contains(&o.as_str()))
        .cloned()
        .collect();
    if !cols.contains(&"assignment_id") {
        return Ok((0, dropped));
    }
    let list = cols.join(", ");
    let marks = vec!["?"; cols.len()].join(", ");
    let mut read = old.prepare(&format!(
        "SELECT {list} FROM ak_assignment ORDER BY assignment_id"
    ))?;
    let mut write = new.prepare(&format!(
        "INSERT OR REPLACE INTO ak_assignment({list}) VALUES({marks})"
    ))?;
    let mut rows = read.query([])?;
    let mut n = 0;
    while let Some(r) = rows.next()? {
        let vals: Vec<rusqlite::types::Value> = (0..cols.len())
            .map(|i| r.get(i))
            .collect::<Result<_, _>>()?;
        write.execute(rusqlite::params_from_iter(vals))?;
        n += 1;
    }
    Ok((n, dropped))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan<'a>(id: &'a str, at: &'a str) -> NewAssignment<'a> {
        NewAssignment {
            assignment_id: id,
            actor_id: "actor:claude:subagent:p:db-fixer",
            task_json: r#"{"task":"fix"}"#,
            created_at: at,
        }
    }

    fn review(status: &str, by: &str) -> Review {
        Review {
            status: ReviewStatus::parse(status).expect("a status"),
            decided_by: Some(by.to_string()),
            decided_at: Some("2026-12-01T02:00:00Z".to_string()),
            reason: None,
        }
    }

    #[test]
    fn a_plan_is_recorded_once_and_keeps_its_first_time() {
        let dir = tempfile::tempdir().unwrap();
        let store = AssignmentStore::open(&dir.path().join("knowledge.sqlite")).unwrap();
        let first = store
            .record(&plan("assign:1", "2026-12-01T01:00:00Z"))
            .unwrap();
        assert!(first.inserted);
        assert_eq!(first.status, ReviewStatus::RecordedPlan);
        let again = store
            .record(&plan("assign:1", "2026-12-01T01:05:00Z"))
            .unwrap();
        assert!(!again.inserted);
        assert_eq!(again.created_at, "2026-12-01T01:00:00Z");
    }

    #[test]
    fn only_a_recorded_plan_can_be_decided() {
        let dir = tempfile::tempdir().unwrap();
        let store = AssignmentStore::open(&dir.path().join("knowledge.sqlite")).unwrap();
        assert_eq!(store.decision("assign:1").unwrap(), None);
        store
            .record(&plan("assign:1", "2026-12-01T01:00:00Z"))
            .unwrap();
        assert!(store
            .decide("assign:1", &review("approved", "alice"))
            .unwrap());
        assert!(!store
            .decide("assign:1", &review("rejected", "bob"))
            .unwrap());
        let stored = store.decision("assign:1").unwrap().unwrap();
        assert_eq!(stored, review("approved", "alice"));
        assert!(!store
            .decide("assign:2", &review("approved", "alice"))
            .unwrap());
    }

    #[test]
    fn a_handle_opened_before_a_build_replaced_the_store_reads_and_writes_the_new_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("knowledge.sqlite");
        let store = AssignmentStore::open(&path).unwrap();
        // A build writes a new store beside it (holding the plan, as carried over) and renames it.
        let next = dir.path().join("next.sqlite");
        AssignmentStore::open(&next)
            .unwrap()
            .record(&plan("assign:1", "2026-12-01T01:00:00Z"))
            .unwrap();
        std::fs::rename(&next, &path).unwrap();
        // The old handle finds the plan in the new store, and its decision lands there.
        assert!(store.decision("assign:1").unwrap().is_some());
        assert!(store
            .decide("assign:1", &review("approved", "alice"))
            .unwrap());
        let fresh = AssignmentStore::open(&path).unwrap();
        assert_eq!(
            fresh.decision("assign:1").unwrap(),
            Some(review("approved", "alice"))
        );
    }

    #[test]
    fn a_rebuild_carries_the_rows_and_names_the_columns_it_drops() {
        let old = Connection::open_in_memory().unwrap();
        old.execute_batch(ASSIGNMENT_SCHEMA).unwrap();
        old.execute_batch("ALTER TABLE ak_assignment ADD COLUMN priority TEXT;")
            .unwrap();
        old.execute(
            "INSERT INTO ak_assignment(assignment_id, actor_id, task_json, status, created_at,
                 priority) VALUES('assign:1', 'a', '{}', 'approved', 't', 'high')",
            [],
        )
        .unwrap();
        let new = Connection::open_in_memory().unwrap();
        new.execute_batch(ASSIGNMENT_SCHEMA).unwrap();
        let (rows, dropped) = copy_assignments(&old, &new).unwrap();
        assert_eq!((rows, dropped), (1, vec!["priority".to_string()]));
        let status: String = new
            .query_row(
                "SELECT status FROM ak_assignment WHERE assignment_id='assign:1'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(status, "approved");
    }
}
