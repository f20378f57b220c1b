//! What the activity view needs from the agent-knowledge store: the events of each session (or
//! inline sidechain agent) per hour with the actor that wrote them, the actors by name, and the
//! skill uses of a period. Counts and ids only, like everything in L3.

use std::collections::{HashMap, HashSet};

use rusqlite::params;

use super::{AgentKnowledgeError, AgentKnowledgeStore};
use crate::contract::{ActorKind, Outcome};

/// Events of one session (or inline sidechain agent) in one hour (`time_ms / 3_600_000`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActivityBucket {
    pub session_id: String,
    /// The actor that wrote them (`None`: the store has no author for the group).
    pub actor_id: Option<String>,
    pub hour: i64,
    pub events: u64,
}

/// An actor named in the buckets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActivityActor {
    pub actor_id: String,
    pub name: String,
    pub kind: ActorKind,
    pub source: String,
}

/// One recorded skill use in the period.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActivitySkillUse {
    pub skill: String,
    pub session_id: String,
    pub actor_id: String,
    pub outcome: Outcome,
}

/// The store's answer for a period.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillsActivity {
    pub buckets: Vec<ActivityBucket>,
    pub actors: Vec<ActivityActor>,
    pub uses: Vec<ActivitySkillUse>,
}

const HOUR_MS: i64 = 3_600_000;

impl AgentKnowledgeStore {
    /// Activity between `since_ms` (inclusive) and `until_ms` (exclusive), by whole hours.
    pub fn activity(
        &self,
        since_ms: i64,
        until_ms: i64,
    ) -> Result<SkillsActivity, AgentKnowledgeError> {
        let (from_hour, to_hour) = (since_ms.div_euclid(HOUR_MS), ceil_div(until_ms, HOUR_MS));
        self.with_conn(|c| {
            let mut authors: HashMap<(String, String), String> = HashMap::new();
            let mut stmt = c.prepare_cached(
                "SELECT session_id, sidechain_agent, min(actor_id) FROM ak_actor_session
                 WHERE role = 'author' GROUP BY session_id, sidechain_agent",
            )?;
            let rows = stmt.query_map([], |r| Ok(((r.get(0)?, r.get(1)?), r.get(2)?)))?;
            for row in rows {
                let (k, v) = row?;
                authors.insert(k, v);
            }
            let mut stmt = c.prepare_cached(
                "SELECT session_id, sidechain_agent, hour, events FROM ak_activity
                 WHERE hour >= ?1 AND hour < ?2",
            )?;
            let rows = stmt.query_map(params![from_hour, to_hour], |r| {
                let session_id: String = r.get(0)?;
                let side: String = r.get(1)?;
                Ok((session_id, side, r.get::<_, i64>(2)?, r.get::<_, i64>(3)?))
            })?;
            let mut buckets = Vec::new();
            let mut named: HashSet<String> = HashSet::new();
            for row in rows {
                let (session_id, side, hour, events) = row?;
                let actor_id = authors.get(&(session_id.clone(), side)).cloned();
                if let Some(a) = &actor_id {
                    named.insert(a.clone());
                }
                buckets.push(ActivityBucket {
                    session_id,
                    actor_id,
                    hour,
                    events: events.max(0) as u64,
                });
            }
            // Ties in the order a full build's row ids give, whatever ids an incremental
            // update gave the rows it wrote again.
            let mut stmt = c.prepare_cached(
                "SELECT skill_name, session_id, actor_id, outcome FROM ak_skill_use
                 WHERE time_ms >= ?1 AND time_ms < ?2
                 ORDER BY time_ms, session_id, seq, skill_name, actor_id, via, id",
            )?;
            let uses = stmt
                .query_map(params![since_ms, until_ms], |r| {
                    Ok(ActivitySkillUse {
                        skill: r.get(0)?,
                        session_id: r.get(1)?,
                        actor_id: r.get(2)?,
                        outcome: r.get(3)?,
                    })
                })?
                .collect::<Result<Vec<_>, _>>()?;
            named.extend(uses.iter().map(|u| u.actor_id.clone()));
            let mut stmt =
                c.prepare_cached("SELECT actor_id, name, kind, source FROM ak_actor ORDER BY 1")?;
            let actors = stmt
                .query_map([], |r| {
                    Ok(ActivityActor {
                        actor_id: r.get(0)?,
                        name: r.get(1)?,
                        kind: r.get(2)?,
                        source: r.get(3)?,
                    })
                })?
                .filter(|a| a.as_ref().map_or(true, |a| named.contains(&a.actor_id)))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(SkillsActivity {
                buckets,
                actors,
                uses,
            })
        })
    }
}

fn ceil_div(a: i64, b: i64) -> i64 {
    -((-a).div_euclid(b))
}
