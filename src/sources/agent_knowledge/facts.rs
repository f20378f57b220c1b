//! Where the L3 builder reads its facts: one trait, [`FactsSource`], so a store other than the
//! built-in `episodes.sqlite` (the team's PostgreSQL, another agent's history) gets actors,
//! titles and skill uses by writing one adapter, not a second builder.
//!
//! A source answers four things, all from one snapshot: its revision, its sessions, its events
//! counted per (session, sidechain agent, hour), and its fact-carrying events. The last two are
//! handed to a visitor row by row, in a fixed order, so the builder derives as it reads and holds
//! no more than one session's events (docs/PERFORMANCE.md, "Issue 20/21"); it asks for the
//! events twice (spawns first, then everything else, `build/stream.rs`). The built-in store is
//! [`EpisodesFacts`].

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use rusqlite::types::Type;
use rusqlite::Connection;

use super::derive::{EventIn, SessionIn};
use super::schema;
use crate::sources::episodes::meta_redact;
use crate::sources::episodes::model::Fact;

/// What the visitor of a source's rows says: go on, or stop (the builder failed to write and
/// keeps its own error).
pub type Visit = ControlFlow<()>;

/// Events of one (session, sidechain agent) in one hour (`hour` `None`: the events that have no
/// time); the activity view's buckets and, summed, each group's events and time range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActivityIn {
    pub session_id: String,
    pub sidechain_agent: Option<String>,
    /// `time_ms / 3_600_000`.
    pub hour: Option<i64>,
    pub events: u64,
    pub min_ms: Option<i64>,
    pub max_ms: Option<i64>,
}

/// Why a source's facts could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FactsError {
    #[error(transparent)]
    Sql(#[from] rusqlite::Error),
    /// Another source's failure, in its own words.
    #[error("{0}")]
    Source(String),
    /// The source broke the order the trait promises (the derivation depends on it).
    #[error("rows out of order: {0}")]
    Order(String),
}

/// The facts an L3 build reads, in the order it derives them. Every method reads the same
/// snapshot of the source, however often it is called.
///
/// Order (byte order of the UTF-8 ids, as SQLite's `BINARY` collation and PostgreSQL's `"C"`):
/// sessions by `session_id`; activity by (`session_id`, `sidechain_agent` with `None` first,
/// `hour` with `None` first); events by (`session_id`, `seq`). The builder checks the event order
/// and stops with [`FactsError::Order`] when it is broken.
pub trait FactsSource {
    /// Names the source in errors (`the episodes index /path/episodes.sqlite`).
    fn name(&self) -> String;
    /// The source's revision (`None`: it has none yet); part of the built store's `index_rev`.
    fn revision(&mut self) -> Result<Option<String>, FactsError>;
    /// Every session, as far as L3 needs it.
    fn sessions(&mut self) -> Result<Vec<SessionIn>, FactsError>;
    /// Every (session, sidechain agent, hour) with its event count and time range, to `visit`.
    fn activity(&mut self, visit: &mut dyn FnMut(ActivityIn) -> Visit) -> Result<(), FactsError>;
    /// Every event that carries at least one fact, with its facts parsed, to `visit`.
    fn fact_events(&mut self, visit: &mut dyn FnMut(EventIn) -> Visit) -> Result<(), FactsError>;

    /// What the sessions' change marks ([`SessionIn::mark`]) are relative to: a build that saved
    /// marks under another basis (another store, another layout) cannot compare them. `None`:
    /// the source keeps no marks, and every build derives everything.
    fn marks_basis(&mut self) -> Result<Option<String>, FactsError> {
        Ok(None)
    }

    /// [`Self::activity`] of these sessions only (`sessions` ascending). The default filters the
    /// whole stream; a source with an index on sessions reads just theirs.
    fn activity_of(
        &mut self,
        sessions: &[&str],
        visit: &mut dyn FnMut(ActivityIn) -> Visit,
    ) -> Result<(), FactsError> {
        let wanted: std::collections::HashSet<&str> = sessions.iter().copied().collect();
        self.activity(&mut |row| match wanted.contains(row.session_id.as_str()) {
            true => visit(row),
            false => ControlFlow::Continue(()),
        })
    }

    /// [`Self::fact_events`] of these sessions only (`sessions` ascending), as
    /// [`Self::activity_of`].
    fn fact_events_of(
        &mut self,
        sessions: &[&str],
        visit: &mut dyn FnMut(EventIn) -> Visit,
    ) -> Result<(), FactsError> {
        let wanted: std::collections::HashSet<&str> = sessions.iter().copied().collect();
        self.fact_events(&mut |ev| match wanted.contains(ev.session_id.as_str()) {
            true => visit(ev),
            false => ControlFlow::Continue(()),
        })
    }
}

/// The built-in episodes store as a [`FactsSource`]: one read-only connection holding one read
/// transaction from [`EpisodesFacts::open`] until it is dropped, so both passes over the events,
/// the sessions and the revision all see one snapshot while an indexer goes on writing.
pub struct EpisodesFacts {
    path: PathBuf,
    conn: Connection,
    /// Whether `sessions` has the `mark` column (a store an older build wrote has none).
    marks: bool,
}

/// The activity of one session or of all: `WHERE` goes between `FROM events` and `GROUP BY`.
const ACTIVITY_SQL: &str =
    "SELECT session_id, sidechain_agent, time_ms / 3600000 AS h, count(*), min(time_ms),
            max(time_ms)
     FROM events {WHERE} GROUP BY session_id, sidechain_agent, h
     ORDER BY session_id, sidechain_agent, h";

/// The fact-carrying events of one session or of all, as [`ACTIVITY_SQL`].
const FACT_EVENTS_SQL: &str = "SELECT session_id, seq, time_ms, tool_use_id, sidechain_agent, facts
     FROM events WHERE facts IS NOT NULL {AND} ORDER BY session_id, seq";

impl EpisodesFacts {
    pub fn open(path: &Path) -> rusqlite::Result<EpisodesFacts> {
        let conn = schema::open_ro(path)?;
        // An indexer may be finishing its write: wait longer than a search would.
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.execute_batch("BEGIN")?;
        let marks = conn.prepare("SELECT mark FROM sessions LIMIT 0").is_ok();
        Ok(EpisodesFacts {
            path: path.to_path_buf(),
            conn,
            marks,
        })
    }

    /// Runs `sql` (of one session when `session` is given) and hands each row `parse` makes
    /// something of to `visit`; `false` when the visitor stopped.
    fn each_row<T>(
        &self,
        sql: &str,
        session: Option<&str>,
        parse: impl Fn(&rusqlite::Row<'_>) -> rusqlite::Result<Option<T>>,
        visit: &mut dyn FnMut(T) -> Visit,
    ) -> Result<bool, FactsError> {
        let mut stmt = self.conn.prepare_cached(sql)?;
        let mut rows = match session {
            Some(sid) => stmt.query([sid])?,
            None => stmt.query([])?,
        };
        while let Some(r) = rows.next()? {
            if let Some(item) = parse(r)? {
                if visit(item).is_break() {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }
}

fn activity_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Option<ActivityIn>> {
    Ok(Some(ActivityIn {
        session_id: r.get(0)?,
        sidechain_agent: r.get(1).map(meta_redact::read)?,
        hour: r.get(2)?,
        events: r.get::<_, i64>(3)?.max(0) as u64,
        min_ms: r.get(4)?,
        max_ms: r.get(5)?,
    }))
}

/// An event with its facts parsed; `None` for one whose facts are all unknown or malformed.
fn fact_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Option<EventIn>> {
    let json = r
        .get_ref(5)?
        .as_str_or_null()
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(5, Type::Text, Box::new(e)))?;
    let facts = parse_facts(json.unwrap_or(""));
    if facts.is_empty() {
        return Ok(None);
    }
    Ok(Some(EventIn {
        session_id: r.get(0)?,
        seq: r.get(1)?,
        time_ms: r.get(2)?,
        tool_use_id: r.get(3)?,
        sidechain_agent: r.get(4).map(meta_redact::read)?,
        facts,
    }))
}

impl Drop for EpisodesFacts {
    fn drop(&mut self) {
        let _ = self.conn.execute_batch("COMMIT");
    }
}

impl FactsSource for EpisodesFacts {
    fn name(&self) -> String {
        format!("the episodes index {}", self.path.display())
    }

    fn revision(&mut self) -> Result<Option<String>, FactsError> {
        Ok(self
            .conn
            .query_row("SELECT value FROM meta WHERE key='index_rev'", [], |r| {
                r.get(0)
            })
            .ok())
    }

    fn sessions(&mut self) -> Result<Vec<SessionIn>, FactsError> {
        let mark = if self.marks { "mark" } else { "NULL" };
        let mut stmt = self.conn.prepare(&format!(
            "SELECT session_id, source, cwd, parent_session_id, agent_id, agent_name,
                    agent_preset, team_name, spawn_tool_use_id, outcome, last_event_at, {mark}
             FROM sessions ORDER BY session_id"
        ))?;
        let rows = stmt.query_map([], |r| {
            // Actors are named from these: redacted again, as a store an older build wrote
            // holds them as the transcript said them (`episodes::meta_redact`).
            let text = |i: usize| r.get(i).map(meta_redact::read);
            Ok(SessionIn {
                session_id: r.get(0)?,
                source: r.get(1)?,
                cwd: text(2)?,
                parent_session_id: r.get(3)?,
                agent_id: r.get(4)?,
                agent_name: text(5)?,
                agent_preset: text(6)?,
                team_name: text(7)?,
                spawn_tool_use_id: r.get(8)?,
                outcome: r.get(9)?,
                last_ms: r
                    .get::<_, Option<String>>(10)?
                    .as_deref()
                    .and_then(rfc3339_ms),
                mark: r.get(11)?,
            })
        })?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    fn activity(&mut self, visit: &mut dyn FnMut(ActivityIn) -> Visit) -> Result<(), FactsError> {
        self.each_row(
            &ACTIVITY_SQL.replace("{WHERE}", ""),
            None,
            activity_row,
            visit,
        )?;
        Ok(())
    }

    fn fact_events(&mut self, visit: &mut dyn FnMut(EventIn) -> Visit) -> Result<(), FactsError> {
        self.each_row(&FACT_EVENTS_SQL.replace("{AND}", ""), None, fact_row, visit)?;
        Ok(())
    }

    fn marks_basis(&mut self) -> Result<Option<String>, FactsError> {
        if !self.marks {
            return Ok(None);
        }
        let layout: i64 = self
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))?;
        // The same store named from another directory is the same basis.
        let path = std::fs::canonicalize(&self.path).unwrap_or_else(|_| self.path.clone());
        Ok(Some(format!("{}#{layout}", path.display())))
    }

    fn activity_of(
        &mut self,
        sessions: &[&str],
        visit: &mut dyn FnMut(ActivityIn) -> Visit,
    ) -> Result<(), FactsError> {
        let sql = ACTIVITY_SQL.replace("{WHERE}", "WHERE session_id = ?1");
        for sid in sessions {
            if !self.each_row(&sql, Some(sid), activity_row, visit)? {
                break;
            }
        }
        Ok(())
    }

    fn fact_events_of(
        &mut self,
        sessions: &[&str],
        visit: &mut dyn FnMut(EventIn) -> Visit,
    ) -> Result<(), FactsError> {
        let sql = FACT_EVENTS_SQL.replace("{AND}", "AND session_id = ?1");
        for sid in sessions {
            if !self.each_row(&sql, Some(sid), fact_row, visit)? {
                break;
            }
        }
        Ok(())
    }
}

/// An RFC 3339 time as ms since the epoch (`None`: not a time).
pub fn rfc3339_ms(t: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(t)
        .ok()
        .map(|t| t.timestamp_millis())
}

/// `events.facts` → facts; unknown or malformed entries are skipped one by one.
///
/// The facts come back without spare room: a `Vec` grown push by push keeps room for four, and
/// most events hold one (what a build held when it kept every event: docs/PERFORMANCE.md).
pub fn parse_facts(json: &str) -> Vec<Fact> {
    if json.trim().is_empty() {
        return Vec::new();
    }
    let mut facts = serde_json::from_str::<Vec<Fact>>(json).unwrap_or_else(|_| {
        serde_json::from_str::<Vec<serde_json::Value>>(json)
            .map(|vals| {
                vals.into_iter()
                    .filter_map(|v| serde_json::from_value::<Fact>(v).ok())
                    .collect()
            })
            .unwrap_or_default()
    });
    // Actors and skill uses are named from these: redacted again, as a store an older build
    // wrote holds them as the transcript said them (`episodes::meta_redact`).
    for f in &mut facts {
        meta_redact::fact(f);
    }
    facts.shrink_to_fit();
    facts
}
