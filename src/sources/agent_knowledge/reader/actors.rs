//! The agent-knowledge store's actor queries: one actor, the sessions it wrote, the most
//! recently seen, and the actor behind a session's events.

use rusqlite::{params, OptionalExtension};

use super::{actor_from_row, ActorRow, AgentKnowledgeError, AgentKnowledgeStore, ACTOR_COLS};
use crate::sources::actor_id::ActorKey;

impl AgentKnowledgeStore {
    pub fn actor(&self, actor_id: &str) -> Result<Option<ActorRow>, AgentKnowledgeError> {
        self.with_conn(|c| {
            let sql = format!("SELECT {ACTOR_COLS} FROM ak_actor WHERE actor_id = ?1");
            c.query_row(&sql, [actor_id], actor_from_row).optional()
        })
    }

    /// The sessions an actor wrote events in (a subagent's own transcript, a root's session).
    pub fn sessions_of(&self, actor_id: &str) -> Result<Vec<String>, AgentKnowledgeError> {
        self.with_conn(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT DISTINCT session_id FROM ak_actor_session
                 WHERE actor_id = ?1 AND role = 'author' ORDER BY session_id LIMIT 16",
            )?;
            let rows = stmt.query_map([actor_id], |r| r.get(0))?;
            rows.collect()
        })
    }

    /// Actors, most recently seen first.
    pub fn list_actors(&self, limit: usize) -> Result<Vec<ActorRow>, AgentKnowledgeError> {
        self.with_conn(|c| {
            let sql = format!(
                "SELECT {ACTOR_COLS} FROM ak_actor
                 ORDER BY last_seen_ms IS NULL, last_seen_ms DESC, actor_id LIMIT ?1"
            );
            let mut stmt = c.prepare_cached(&sql)?;
            let rows = stmt.query_map([limit.min(i64::MAX as usize) as i64], actor_from_row)?;
            rows.collect()
        })
    }

    /// The actor that wrote the events of a session (or of one inline sidechain agent of it):
    /// use this instead of `actor_of` on raw session fields when L3 is built, so a subagent
    /// linked to its spawn gets the spawn's name.
    pub fn actor_for_session(
        &self,
        session_id: &str,
        sidechain_agent: Option<&str>,
    ) -> Result<Option<ActorKey>, AgentKnowledgeError> {
        self.with_conn(|c| {
            let sql = format!(
                "SELECT {ACTOR_COLS} FROM ak_actor WHERE actor_id = (
                    SELECT actor_id FROM ak_actor_session
                    WHERE session_id = ?1 AND role = 'author' AND sidechain_agent = ?2
                    ORDER BY actor_id LIMIT 1)"
            );
            let row = c
                .query_row(
                    &sql,
                    params![session_id, sidechain_agent.unwrap_or("")],
                    actor_from_row,
                )
                .optional()?;
            Ok(row.map(|a| a.key()))
        })
    }
}
