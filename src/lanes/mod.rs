//! The lane boundary: what the engine asks a source and what a source answers. It sits below the
//! engine, so the built-in sources (`builtin`), the MCP adapters and the team index implement it
//! without reaching into the engine, and the engine uses it without knowing which source it got.
//!
//! Built-in indexes and external MCP adapters implement the same traits, so the engine treats a
//! failing or slow source the same way whatever it is: that lane is degraded, the others answer.
//! The traits are also the only way to read what a hit points at — an event with its neighbours
//! ([`EpisodesSource::episode`]) and the lines of a file ([`CodeSource::read`]) — so every front
//! end reads through the same door (`Engine::get_episode`, `Engine::read_code`). The types here
//! are the lanes' own; the activity view asks the episodes lane for its sessions and the skills
//! lane for who was active when (`activity_sessions`, `activity`). An external adapter fills them with what its server says and leaves the
//! rest empty, never a built-in row with made-up fields.
//!
//! Everything else the engine needs to know about what a lane found goes through the traits too:
//! a session's row and the time of an event (profiles, the episode filters on skill uses), the
//! actor facts of the agent-knowledge layer (who wrote a session, who edited a file, the skill
//! uses of an actor) and each source's counts (`knowledge doctor`, `knowledge status`). So a
//! source on another machine (the team's PostgreSQL) answers all of it the way the built-in
//! stores do, and `tests/lane_conformance.rs` holds every source to the same rules.

pub mod builtin;
mod episode;
mod failure;

use std::sync::Arc;

use crate::contract::{Capability, Code, EventKind, Outcome};
pub use crate::sources::actor_id::ActorKey;
pub use crate::sources::agent_knowledge::reader::{
    ActivityActor, ActivityBucket, ActivitySkillUse, SkillsActivity,
};
pub use crate::sources::agent_knowledge::{ActorFacts, ActorRow, AgentKnowledgeStats};
pub use crate::sources::code::CodeLines;
pub use crate::sources::code::CodeStats;
pub use crate::sources::episodes::activity::ActivitySession;
pub use crate::sources::episodes::messages::arm::{SentenceCell, SentenceQuery};
pub use crate::sources::episodes::search::{LaneStats, SessionRow};
pub use episode::{
    episode_id, parse_episode_id, Episode, EpisodeError, EpisodeEvent, EpisodeSession,
};
pub use failure::{BothFailed, NeitherRead, NotHeld, ReadCodeError, Reason, SourceFailure};

/// The part of a request a lane needs, already checked.
#[derive(Debug, Clone, Default)]
pub struct LaneRequest {
    /// Stemmed, stopword-free query terms.
    pub terms: Vec<String>,
    /// The query as the person wrote it (external sources do their own tokenising).
    pub query: String,
    pub workspaces: Vec<String>,
    pub session_ids: Vec<String>,
    pub actor_ids: Vec<String>,
    pub skills: Vec<String>,
    pub paths: Vec<String>,
    pub since_ms: Option<i64>,
    pub until_ms: Option<i64>,
    /// The session outcome to keep; `None` for any.
    pub outcome: Option<Outcome>,
    /// Candidate depth K (DECISIONS §2).
    pub depth: usize,
    pub snippet_chars: usize,
    /// The query's text vector for the built-in lanes' vector arm (`None`: semantic search is
    /// off, or no word of the query is in the embedding table).
    pub vector: Option<crate::text::embed::Vector>,
    /// The query's sentence vector, shared by the lanes that read it ([`LaneRequest::sentence`]).
    pub sentence: SentenceCell,
}

impl LaneRequest {
    /// The query's sentence vector, when semantic search is on (`vector` is set) and the
    /// encoder's assets are there: encoded once per request, by the first lane that asks.
    pub fn sentence(&self) -> Option<Arc<SentenceQuery>> {
        self.vector.as_ref()?;
        self.sentence.get(&self.query)
    }
}

/// What the activity view asks the lanes: a period (`until_ms` exclusive) and a search's
/// workspace and outcome filters, already checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ActivityQuery {
    pub since_ms: i64,
    pub until_ms: i64,
    pub workspaces: Vec<String>,
    /// The session outcome to keep; `None` for any.
    pub outcome: Option<Outcome>,
}

/// An event hit from any episodes source: what the engine ranks, cites and attributes.
#[derive(Debug, Clone, PartialEq)]
pub struct EpisodeHit {
    pub session_id: String,
    pub seq: u64,
    pub event_type: EventKind,
    pub time: Option<String>,
    pub time_ms: Option<i64>,
    /// The lexical score, higher is better (BM25 for the built-in index, the server's own score
    /// for an external source); 0 when only a vector arm found the event.
    pub bm25: f64,
    /// Whether a lexical match found the event.
    pub lexical: bool,
    /// The vector arm's cosine, when it found the event.
    pub cosine: Option<f32>,
    pub snippet: String,
    /// Written by a person (not an agent or a tool).
    pub human: bool,
    pub is_error: bool,
    /// The subagent of a sidechain event inside its parent's transcript.
    pub sidechain_agent: Option<String>,
    pub session: HitSession,
}

/// The session of an [`EpisodeHit`], as far as its source knows it (`None`: not known).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HitSession {
    /// The harness the session ran in (`claude`, `codex`) or the source's name.
    pub source: String,
    pub cwd: Option<String>,
    pub created_at: Option<String>,
    pub agent_preset: Option<String>,
    pub parent_session_id: Option<String>,
    pub agent_id: Option<String>,
    pub agent_name: Option<String>,
    pub team_name: Option<String>,
    pub outcome: Outcome,
    pub live: bool,
    /// The machine that pushed the session to a team index (`None`: this machine's own, as the
    /// built-in store answers; a combined answer names this machine, `engine/layered.rs`).
    pub machine: Option<String>,
}

impl HitSession {
    /// A stored session row as a hit's session, with the machine that holds it.
    pub fn from_row(s: SessionRow, machine: Option<String>) -> Self {
        HitSession {
            source: s.source,
            cwd: s.cwd,
            created_at: s.created_at,
            agent_preset: s.agent_preset,
            parent_session_id: s.parent_session_id,
            agent_id: s.agent_id,
            agent_name: s.agent_name,
            team_name: s.team_name,
            outcome: s.outcome,
            live: s.live,
            machine,
        }
    }
}

/// An episodes answer: the lane's revision, coverage counts and hits, best first.
#[derive(Debug, Clone)]
pub struct EpisodesAnswer {
    pub stats: LaneStats,
    pub hits: Vec<EpisodeHit>,
    /// The sources of a lane that asks several (local + team, `layered.rs`) which could not
    /// answer: the lane answers with the rest and is degraded with a warning naming each.
    pub unanswered: Vec<SourceFailure>,
    /// Why the lane is empty when nothing in the source is about the query (the built-in
    /// store's gist test); `None` for a source that does not tell.
    pub nothing_relevant: Option<String>,
}

pub trait EpisodesSource: Send + Sync {
    /// The `source` name reported in the lane.
    fn name(&self) -> String;
    fn search(&self, req: &LaneRequest) -> Result<EpisodesAnswer, SourceFailure>;
    /// The event `seq` of a session in full with `context` neighbours each side, redacted.
    fn episode(&self, session_id: &str, seq: u64, context: u64) -> Result<Episode, EpisodeError>;
    /// How many sessions and events the source holds, and its revision.
    fn stats(&self) -> Result<LaneStats, SourceFailure>;
    /// A session's row (`Ok(None)`: the source does not hold it, or cannot say).
    fn session(&self, session_id: &str) -> Result<Option<SessionRow>, SourceFailure>;
    /// The first text a person typed in a session: its title of last resort.
    fn first_human_text(&self, session_id: &str) -> Result<Option<String>, SourceFailure>;
    /// When event `seq` of a session happened (RFC 3339; `Ok(None)`: not held or not known).
    fn event_time(&self, session_id: &str, seq: u64) -> Result<Option<String>, SourceFailure>;
    /// The first `limit` texts of a session: what a person typed (`human`), else the assistant's
    /// messages; what a session was about when it has no summary (`engine::titles`). A source
    /// that holds no more than the first prompt answers with that.
    fn session_texts(
        &self,
        session_id: &str,
        human: bool,
        limit: usize,
    ) -> Result<Vec<String>, SourceFailure> {
        if !human || limit == 0 {
            return Ok(Vec::new());
        }
        Ok(self.first_human_text(session_id)?.into_iter().collect())
    }
    /// The paths of the first `limit` file edits of a session, in order (none: cannot say).
    fn edited_paths(&self, _session_id: &str, _limit: usize) -> Result<Vec<String>, SourceFailure> {
        Ok(Vec::new())
    }
    /// The task description the parent session gave subagent `agent_id` in its `Task`/`Agent`
    /// call (`Ok(None)`: not held, or the source cannot say).
    fn spawn_description(
        &self,
        _parent_session_id: &str,
        _agent_id: &str,
    ) -> Result<Option<String>, SourceFailure> {
        Ok(None)
    }
    /// Load what the vector arm needs ahead of the first search (a long-running front end).
    fn warm(&self) {}
    /// The sessions under the query's workspace and outcome filters, for the activity view.
    /// A source that cannot list its sessions says so; the view shows why it is empty.
    fn activity_sessions(&self, _q: &ActivityQuery) -> Result<Vec<ActivitySession>, SourceFailure> {
        Err(SourceFailure::new(
            Code::LaneDegraded,
            format!(
                "{} does not list its sessions for the activity view",
                self.name()
            ),
        ))
    }
}

/// A code chunk hit from any code source.
#[derive(Debug, Clone, PartialEq)]
pub struct CodeHit {
    pub chunk_id: String,
    pub path: String,
    pub start_line: u64,
    pub end_line: u64,
    pub source_kind: String,
    pub symbol: Option<String>,
    pub score: f64,
    pub why: Vec<String>,
    pub snippet: String,
    pub mtime: Option<String>,
    pub mtime_ms: Option<i64>,
    /// The repository root (workspace) the chunk belongs to.
    pub root: String,
    /// The machine that pushed the chunk to a team index (`None`: this machine's own, as the
    /// built-in store answers; a combined answer names this machine, `engine/layered.rs`).
    pub machine: Option<String>,
}

#[derive(Debug, Clone)]
pub struct CodeAnswer {
    pub index_rev: Option<String>,
    pub capability: Capability,
    pub capability_reason: Option<String>,
    pub stale: bool,
    pub stale_paths: Vec<String>,
    pub drift: Option<serde_json::Value>,
    pub hits: Vec<CodeHit>,
    /// Why the lane is empty when nothing in the code is about the query (as
    /// [`EpisodesAnswer::nothing_relevant`]).
    pub nothing_relevant: Option<String>,
    /// As [`EpisodesAnswer::unanswered`].
    pub unanswered: Vec<SourceFailure>,
}

pub trait CodeSource: Send + Sync {
    fn name(&self) -> String;
    fn search(&self, req: &LaneRequest) -> Result<CodeAnswer, SourceFailure>;
    /// Lines of a file the source holds, redacted. `chunk` is the chunk the caller got the path
    /// from, if any: it picks the repository when the path is in several.
    fn read(
        &self,
        path: &str,
        range: LineRange,
        chunk: Option<&str>,
    ) -> Result<CodeLines, ReadCodeError>;
    /// How many files and chunks the source holds, in which roots, and its revision.
    fn stats(&self) -> Result<CodeStats, SourceFailure>;
    /// Load what the vector arm needs ahead of the first search (a long-running front end).
    fn warm(&self) {}
}

/// Lines `start..=end` of a file, 1-based (`end` `None`: as many as a read allows).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineRange {
    pub start: u64,
    pub end: Option<u64>,
}

/// A skill hit from the agent-knowledge store.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillHit {
    pub name: String,
    pub path: String,
    pub description: String,
    pub when_to_use: Option<String>,
    pub content_hash: String,
    pub bm25: f64,
    pub uses: u64,
    /// (actor_id, session_id, seq) of recorded uses.
    pub used_by: Vec<(String, String, u64)>,
    pub why: Vec<String>,
    /// The query names the skill (its name, or its words, all of them): dispatch's KD-3.
    pub named: bool,
}

#[derive(Debug, Clone)]
pub struct SkillsAnswer {
    pub index_rev: Option<String>,
    pub hits: Vec<SkillHit>,
    /// As [`EpisodesAnswer::unanswered`].
    pub unanswered: Vec<SourceFailure>,
}

/// The skills lane and the agent-knowledge layer it stands on: the actors, who wrote which
/// session, who edited which file and who applied which skill. A source that is not there
/// answers every question with its failure; the engine then infers actors from sessions alone.
pub trait SkillsSource: Send + Sync {
    fn name(&self) -> String;
    fn search(&self, req: &LaneRequest) -> Result<SkillsAnswer, SourceFailure>;
    /// How many skills, actors and skill uses the source holds, and its revision.
    fn stats(&self) -> Result<AgentKnowledgeStats, SourceFailure>;
    /// The actor that wrote a session's events (or those of one inline sidechain agent).
    fn actor_for_session(
        &self,
        session_id: &str,
        sidechain_agent: Option<&str>,
    ) -> Result<Option<ActorKey>, SourceFailure>;
    /// The editors of `abs_paths`, and the outcome, identity and skill uses of `actor_ids`.
    fn facts_for(
        &self,
        abs_paths: &[String],
        actor_ids: &[String],
    ) -> Result<ActorFacts, SourceFailure>;
    /// One actor by id (`Ok(None)`: not held).
    fn actor(&self, actor_id: &str) -> Result<Option<ActorRow>, SourceFailure>;
    /// The sessions an actor worked in.
    fn sessions_of(&self, actor_id: &str) -> Result<Vec<String>, SourceFailure>;
    /// The actor who applied a skill most, with how often (KD-3).
    fn top_actor_for_skill(&self, skill: &str) -> Result<Option<(String, u64)>, SourceFailure>;
    /// Events per session and hour with their actors, and the skill uses, of the query's period.
    fn activity(&self, _q: &ActivityQuery) -> Result<SkillsActivity, SourceFailure> {
        Err(SourceFailure::new(
            Code::LaneDegraded,
            format!("{} does not report activity", self.name()),
        ))
    }
}

/// A source that is not configured or could not be opened: it always fails the same way.
pub struct Unavailable {
    pub name: String,
    pub failure: SourceFailure,
}

impl EpisodesSource for Unavailable {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn search(&self, _: &LaneRequest) -> Result<EpisodesAnswer, SourceFailure> {
        Err(self.failure.clone())
    }
    fn episode(&self, _: &str, _: u64, _: u64) -> Result<Episode, EpisodeError> {
        Err(match self.failure.code {
            Code::IndexNotReady => EpisodeError::NoIndex,
            _ => EpisodeError::Source(self.failure.clone()),
        })
    }
    fn stats(&self) -> Result<LaneStats, SourceFailure> {
        Err(self.failure.clone())
    }
    fn session(&self, _: &str) -> Result<Option<SessionRow>, SourceFailure> {
        Err(self.failure.clone())
    }
    fn first_human_text(&self, _: &str) -> Result<Option<String>, SourceFailure> {
        Err(self.failure.clone())
    }
    fn event_time(&self, _: &str, _: u64) -> Result<Option<String>, SourceFailure> {
        Err(self.failure.clone())
    }
    fn activity_sessions(&self, _: &ActivityQuery) -> Result<Vec<ActivitySession>, SourceFailure> {
        Err(self.failure.clone())
    }
}

impl CodeSource for Unavailable {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn search(&self, _: &LaneRequest) -> Result<CodeAnswer, SourceFailure> {
        Err(self.failure.clone())
    }
    fn read(&self, path: &str, _: LineRange, _: Option<&str>) -> Result<CodeLines, ReadCodeError> {
        // No index holds the file; the engine may still find it on disk under the allowed roots.
        Err(ReadCodeError::NotInSource(Reason::error(NotHeld {
            path: path.to_string(),
            failure: self.failure.clone(),
        })))
    }
    fn stats(&self) -> Result<CodeStats, SourceFailure> {
        Err(self.failure.clone())
    }
}

impl SkillsSource for Unavailable {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn search(&self, _: &LaneRequest) -> Result<SkillsAnswer, SourceFailure> {
        Err(self.failure.clone())
    }
    fn stats(&self) -> Result<AgentKnowledgeStats, SourceFailure> {
        Err(self.failure.clone())
    }
    fn actor_for_session(
        &self,
        _: &str,
        _: Option<&str>,
    ) -> Result<Option<ActorKey>, SourceFailure> {
        Err(self.failure.clone())
    }
    fn facts_for(&self, _: &[String], _: &[String]) -> Result<ActorFacts, SourceFailure> {
        Err(self.failure.clone())
    }
    fn actor(&self, _: &str) -> Result<Option<ActorRow>, SourceFailure> {
        Err(self.failure.clone())
    }
    fn sessions_of(&self, _: &str) -> Result<Vec<String>, SourceFailure> {
        Err(self.failure.clone())
    }
    fn top_actor_for_skill(&self, _: &str) -> Result<Option<(String, u64)>, SourceFailure> {
        Err(self.failure.clone())
    }
    fn activity(&self, _: &ActivityQuery) -> Result<SkillsActivity, SourceFailure> {
        Err(self.failure.clone())
    }
}
