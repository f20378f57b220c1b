//! An episode: one event of a session in full with its neighbours, the same whichever source
//! read it (`knowledge get-episode`, the TUI drill-in, MCP). A source reads the session's row and
//! the events around `seq`; [`Episode::assemble`] checks the event is there, names everything by
//! its id and redacts the text on the way out, so the built-in index and the team's PostgreSQL
//! cannot drift apart in what an episode shows.

use super::{SessionRow, SourceFailure};
use crate::contract::{EventKind, Outcome};
use crate::sources::episodes::search::FullEvent;
use crate::text::redact;

/// The id that names an event everywhere: `ep:<session>:<seq>`.
pub fn episode_id(session_id: &str, seq: u64) -> String {
    format!("ep:{session_id}:{seq}")
}

/// Split an episode id `ep:<session>:<seq>` (the session id may itself contain `:`).
pub fn parse_episode_id(id: &str) -> Option<(String, u64)> {
    let rest = id.strip_prefix("ep:").unwrap_or(id);
    let (sid, seq) = rest.rsplit_once(':')?;
    if sid.is_empty() {
        return None;
    }
    Some((sid.to_string(), seq.parse().ok()?))
}

/// One event in full with its neighbours (`knowledge get-episode`, the TUI drill-in, MCP).
#[derive(Debug, Clone, serde::Serialize)]
pub struct Episode {
    pub id: String,
    pub session_id: String,
    pub seq: u64,
    pub session: EpisodeSession,
    pub events: Vec<EpisodeEvent>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct EpisodeSession {
    pub session_id: String,
    pub source: String,
    pub path: String,
    pub cwd: Option<String>,
    pub created_at: Option<String>,
    pub title: Option<String>,
    pub parent_session_id: Option<String>,
    pub agent_name: Option<String>,
    pub agent_preset: Option<String>,
    pub outcome: Outcome,
    pub live: bool,
    pub events: u64,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct EpisodeEvent {
    pub id: String,
    pub seq: u64,
    pub event_type: EventKind,
    pub time: Option<String>,
    pub tool_name: Option<String>,
    pub is_error: bool,
    pub human: bool,
    pub text: String,
}

/// Why an episode could not be read.
#[derive(Debug, thiserror::Error)]
pub enum EpisodeError {
    #[error("no episodes index: run `knowledge index` first")]
    NoIndex,
    #[error("no session {0} in the episodes index")]
    NoSession(String),
    #[error("session {0} has no event {1}")]
    NoEvent(String, u64),
    /// The episodes lane is an external source that cannot show the event.
    #[error(
        "session {session} is not in the built-in episodes index; the episodes lane comes from \
         the external source {source_name}, which {why}"
    )]
    External {
        session: String,
        source_name: String,
        why: String,
    },
    /// The source could not answer at all.
    #[error("{0}")]
    Source(#[source] SourceFailure),
    #[error(transparent)]
    Store(#[from] crate::sources::episodes::search::EpisodeStoreError),
}

impl EpisodeError {
    pub fn is_not_found(&self) -> bool {
        matches!(
            self,
            EpisodeError::NoSession(_) | EpisodeError::NoEvent(..) | EpisodeError::External { .. }
        )
    }
}

impl Episode {
    /// Event `seq` of the session `session_id` (whose row is `session`) among the `events` read
    /// around it (as the episodes store holds them, before redaction; the team source reads
    /// its rows into the same type); the title and every text redacted again on the way out.
    pub fn assemble(
        session_id: &str,
        seq: u64,
        session: SessionRow,
        events: impl IntoIterator<Item = FullEvent>,
    ) -> Result<Episode, EpisodeError> {
        let redact = |t: &str| redact::redact(t).text;
        let events: Vec<EpisodeEvent> = events
            .into_iter()
            .map(|e| EpisodeEvent {
                id: episode_id(session_id, e.seq),
                seq: e.seq,
                event_type: e.event_type,
                time: e.time,
                tool_name: e.tool_name,
                is_error: e.is_error,
                human: e.human,
                text: redact(&e.text),
            })
            .collect();
        if !events.iter().any(|e| e.seq == seq) {
            return Err(EpisodeError::NoEvent(session_id.to_string(), seq));
        }
        let s = session;
        Ok(Episode {
            id: episode_id(session_id, seq),
            session_id: session_id.to_string(),
            seq,
            session: EpisodeSession {
                session_id: s.session_id,
                source: s.source,
                path: s.path,
                cwd: s.cwd,
                created_at: s.created_at,
                title: s.title.as_deref().map(redact),
                parent_session_id: s.parent_session_id,
                agent_name: s.agent_name,
                agent_preset: s.agent_preset,
                outcome: s.outcome,
                live: s.live,
                events: s.events,
            },
            events,
        })
    }
}
