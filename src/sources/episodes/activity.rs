//! The sessions the activity view counts: every session under the workspace and outcome filters,
//! with what the view groups them by (workspace, agent, outcome). The per-hour event counts come
//! from the agent-knowledge store, which derives them from this one at index time.

use rusqlite::types::Value as SqlValue;

use super::meta_redact;
use super::search::{push_filters, EpisodeQuery, EpisodeStore, EpisodeStoreError};
use crate::contract::Outcome;

/// A session as the activity view counts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActivitySession {
    pub session_id: String,
    /// The harness (`claude`, `codex`).
    pub source: String,
    pub cwd: Option<String>,
    pub outcome: Outcome,
    pub parent_session_id: Option<String>,
}

impl EpisodeStore {
    /// Sessions in `workspaces` (at a path boundary, like a search; all when empty) with the
    /// given outcome (any when `None`).
    pub fn activity_sessions(
        &self,
        workspaces: &[String],
        outcome: Option<Outcome>,
    ) -> Result<Vec<ActivitySession>, EpisodeStoreError> {
        let q = EpisodeQuery {
            workspaces: workspaces.to_vec(),
            outcome,
            ..Default::default()
        };
        let mut sql = "SELECT s.session_id, s.source, s.cwd, s.outcome, s.parent_session_id
                       FROM sessions s WHERE 1=1"
            .to_string();
        let mut args: Vec<SqlValue> = Vec::new();
        push_filters(&mut sql, &mut args, &q);
        self.with_conn(|c| {
            let mut stmt = c.prepare(&sql)?;
            let rows = stmt.query_map(rusqlite::params_from_iter(args.iter()), |r| {
                Ok(ActivitySession {
                    session_id: r.get(0)?,
                    source: r.get(1)?,
                    // Shown as the workspace: redacted again (`meta_redact`).
                    cwd: r.get(2).map(meta_redact::read)?,
                    outcome: r.get(3)?,
                    parent_session_id: r.get(4)?,
                })
            })?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
    }
}
