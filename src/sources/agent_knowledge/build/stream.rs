//! The derived rows of a build, written as the facts are read: the activity buckets as they come,
//! each session's skill uses and edits when its last event is read, the actors and their
//! sessions at the end (their counts are complete only then). What is held is the sessions, the
//! per-group counts, the spawns and the actors, plus one session's events: never every event of
//! the history, which is what made a full index of the 10× world peak at 196–245 MB
//! (docs/PERFORMANCE.md, "Issue 20/21"). Each table's rows are written in the order the build that
//! held everything wrote them (`tests/l3_streamed.rs`), so their rowids are the same.

use std::ops::ControlFlow::{Break, Continue};

use rusqlite::{params, Transaction};

use super::rows;
use crate::sources::agent_knowledge::derive::{
    Actors, EventIn, GroupIn, SessionIn, SessionRows, SpawnPass,
};
use crate::sources::agent_knowledge::facts::{ActivityIn, FactsError, FactsSource, Visit};

/// Why the derived rows could not be written: the source failed, or the new store did.
pub(super) enum StreamError {
    Read(FactsError),
    Write(rusqlite::Error),
}

impl From<FactsError> for StreamError {
    fn from(e: FactsError) -> Self {
        StreamError::Read(e)
    }
}

impl From<rusqlite::Error> for StreamError {
    fn from(e: rusqlite::Error) -> Self {
        StreamError::Write(e)
    }
}

/// What is left to write once every event was read, and how many rows were.
#[derive(Default)]
pub(super) struct Streamed {
    pub actors: Actors,
    pub uses: u64,
    pub edits: u64,
    /// Events of a session `sessions` does not hold were read (their family cannot be told from
    /// the sessions alone, so no change marks are saved).
    pub orphans: bool,
}

/// Which sessions' facts a build reads: every one, or only these (ascending; the incremental
/// path's families, `incremental.rs`).
#[derive(Clone, Copy)]
pub(super) enum Scope<'a> {
    All,
    Only(&'a [&'a str]),
}

/// Reads `facts` (within `scope`; `sessions` are the scope's sessions) and writes `ak_activity`,
/// `ak_skill_use` and `ak_edit` as it goes; the actors are returned for
/// [`rows::insert_actors`].
pub(super) fn insert_derived(
    tx: &Transaction<'_>,
    facts: &mut dyn FactsSource,
    sessions: &[SessionIn],
    scope: Scope<'_>,
) -> Result<Streamed, StreamError> {
    let groups = insert_activity(tx, facts, scope)?;
    let orphans = {
        let known: std::collections::HashSet<&str> =
            sessions.iter().map(|s| s.session_id.as_str()).collect();
        groups
            .iter()
            .any(|g| !known.contains(g.session_id.as_str()))
    };

    let mut spawns = SpawnPass::new(sessions);
    let mut failed: Option<StreamError> = None;
    fact_events(facts, scope, &mut |ev| match spawns.event(&ev) {
        Ok(()) => Continue(()),
        Err(e) => {
            failed = Some(StreamError::Read(FactsError::Order(e.to_string())));
            Break(())
        }
    })?;
    if let Some(e) = failed {
        return Err(e);
    }

    let mut pass = spawns.authors(&groups);
    drop(groups);
    let (mut uses, mut edits) = (0u64, 0u64);
    let mut write = |r: SessionRows| -> Result<(), StreamError> {
        rows::insert_skill_uses(tx, &r.uses)?;
        rows::insert_edits(tx, &r.edits)?;
        uses += r.uses.len() as u64;
        edits += r.edits.len() as u64;
        Ok(())
    };
    fact_events(facts, scope, &mut |ev| {
        let written = match pass.event(&ev) {
            Ok(Some(done)) => write(done),
            Ok(None) => Ok(()),
            Err(e) => Err(StreamError::Read(FactsError::Order(e.to_string()))),
        };
        match written {
            Ok(()) => Continue(()),
            Err(e) => {
                failed = Some(e);
                Break(())
            }
        }
    })?;
    if let Some(e) = failed {
        return Err(e);
    }
    let (last, actors) = pass.finish();
    if let Some(done) = last {
        write(done)?;
    }
    Ok(Streamed {
        actors,
        uses,
        edits,
        orphans,
    })
}

fn fact_events(
    facts: &mut dyn FactsSource,
    scope: Scope<'_>,
    visit: &mut dyn FnMut(EventIn) -> Visit,
) -> Result<(), FactsError> {
    match scope {
        Scope::All => facts.fact_events(visit),
        Scope::Only(ids) => facts.fact_events_of(ids, visit),
    }
}

/// Writes each (session, sidechain agent, hour) bucket as it is read; returns the per-group
/// counts and time ranges (small: one per session and sidechain agent).
fn insert_activity(
    tx: &Transaction<'_>,
    facts: &mut dyn FactsSource,
    scope: Scope<'_>,
) -> Result<Vec<GroupIn>, StreamError> {
    // Two sidechain names the store kept apart may read as one once redacted: their hours add up.
    let mut ins = tx.prepare(
        "INSERT INTO ak_activity(session_id, sidechain_agent, hour, events) VALUES(?1, ?2, ?3, ?4)
         ON CONFLICT(session_id, sidechain_agent, hour) DO UPDATE SET events = events + excluded.events",
    )?;
    let mut groups: Vec<GroupIn> = Vec::new();
    let mut failed = None;
    let mut visit = |row: ActivityIn| {
        if let Some(hour) = row.hour {
            let side = row.sidechain_agent.as_deref().unwrap_or_default();
            let n = row.events as i64;
            if let Err(e) = ins.execute(params![row.session_id, side, hour, n]) {
                failed = Some(e);
                return Break(());
            }
        }
        match groups.last_mut() {
            Some(g)
                if g.session_id == row.session_id && g.sidechain_agent == row.sidechain_agent =>
            {
                g.events += row.events;
                g.min_ms = either(g.min_ms, row.min_ms, i64::min);
                g.max_ms = either(g.max_ms, row.max_ms, i64::max);
            }
            _ => groups.push(GroupIn {
                session_id: row.session_id,
                sidechain_agent: row.sidechain_agent,
                events: row.events,
                min_ms: row.min_ms,
                max_ms: row.max_ms,
            }),
        }
        Continue(())
    };
    match scope {
        Scope::All => facts.activity(&mut visit)?,
        Scope::Only(ids) => facts.activity_of(ids, &mut visit)?,
    }
    match failed {
        Some(e) => Err(StreamError::Write(e)),
        None => Ok(groups),
    }
}

/// `pick` of two optional values, either alone when the other is missing.
fn either(a: Option<i64>, b: Option<i64>, pick: fn(i64, i64) -> i64) -> Option<i64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(pick(a, b)),
        (a, b) => a.or(b),
    }
}
