//! "Built-in first, then the external source": the one rule for every lookup.
//!
//! When an external source (an MCP server, the team's PostgreSQL) replaces a built-in index in
//! its lane, the lane's searches go to the external source, but what a hit points at — an event,
//! a session's row, the lines of a file, an actor — is looked up in the built-in store first
//! (it is local, current and complete for this machine) and only then in the external one. The
//! rule lives here once, as a source that wraps the two ([`Layered`]); `Engine::attach` puts it
//! in the lane, and `get_episode`, `read_code`, the profiles, the filters and dispatch ask the
//! lane without knowing which store answered.

use std::collections::HashMap;
use std::sync::Arc;

use super::lanes::{
    ActivityQuery, ActivitySession, ActorFacts, ActorKey, ActorRow, AgentKnowledgeStats,
    CodeAnswer, CodeLines, CodeSource, CodeStats, Episode, EpisodeError, EpisodesAnswer,
    EpisodesSource, LaneRequest, LaneStats, LineRange, ReadCodeError, SessionRow, SkillsActivity,
    SkillsAnswer, SkillsSource, SourceFailure,
};

/// A lane whose searches go to `external` and whose lookups ask `builtin` first.
pub struct Layered<S: ?Sized> {
    pub builtin: Arc<S>,
    pub external: Arc<S>,
}

impl<S: ?Sized> Layered<S> {
    /// The built-in answer when it holds the thing (`held`), else the external one.
    fn first<T, E>(
        &self,
        builtin: impl FnOnce(&S) -> Result<T, E>,
        held: impl FnOnce(&Result<T, E>) -> bool,
        external: impl FnOnce(&S) -> Result<T, E>,
    ) -> Result<T, E> {
        let found = builtin(&self.builtin);
        if held(&found) {
            found
        } else {
            external(&self.external)
        }
    }
}

/// A lookup that found something; a failed or empty built-in answer lets the external one speak.
fn some<T>(r: &Result<Option<T>, SourceFailure>) -> bool {
    matches!(r, Ok(Some(_)))
}

/// A list lookup that found something.
fn nonempty<T>(r: &Result<Vec<T>, SourceFailure>) -> bool {
    matches!(r, Ok(v) if !v.is_empty())
}

impl EpisodesSource for Layered<dyn EpisodesSource> {
    fn name(&self) -> String {
        self.external.name()
    }
    fn search(&self, req: &LaneRequest) -> Result<EpisodesAnswer, SourceFailure> {
        self.external.search(req)
    }
    fn episode(&self, session_id: &str, seq: u64, context: u64) -> Result<Episode, EpisodeError> {
        self.first(
            |b| b.episode(session_id, seq, context),
            |r| {
                !matches!(
                    r,
                    Err(EpisodeError::NoSession(_)
                        | EpisodeError::NoIndex
                        | EpisodeError::Source(_))
                )
            },
            |e| e.episode(session_id, seq, context),
        )
    }
    fn stats(&self) -> Result<LaneStats, SourceFailure> {
        self.external.stats()
    }
    fn session(&self, session_id: &str) -> Result<Option<SessionRow>, SourceFailure> {
        self.first(|b| b.session(session_id), some, |e| e.session(session_id))
    }
    fn first_human_text(&self, session_id: &str) -> Result<Option<String>, SourceFailure> {
        self.first(
            |b| b.first_human_text(session_id),
            some,
            |e| e.first_human_text(session_id),
        )
    }
    fn session_texts(
        &self,
        session_id: &str,
        human: bool,
        limit: usize,
    ) -> Result<Vec<String>, SourceFailure> {
        self.first(
            |b| b.session_texts(session_id, human, limit),
            nonempty,
            |e| e.session_texts(session_id, human, limit),
        )
    }
    fn edited_paths(&self, session_id: &str, limit: usize) -> Result<Vec<String>, SourceFailure> {
        self.first(
            |b| b.edited_paths(session_id, limit),
            nonempty,
            |e| e.edited_paths(session_id, limit),
        )
    }
    fn event_time(&self, session_id: &str, seq: u64) -> Result<Option<String>, SourceFailure> {
        self.first(
            |b| b.event_time(session_id, seq),
            some,
            |e| e.event_time(session_id, seq),
        )
    }
    /// The activity view counts this data dir's own sessions (an external source lists none).
    fn activity_sessions(&self, q: &ActivityQuery) -> Result<Vec<ActivitySession>, SourceFailure> {
        self.builtin.activity_sessions(q)
    }
    fn spawn_description(
        &self,
        parent_session_id: &str,
        agent_id: &str,
    ) -> Result<Option<String>, SourceFailure> {
        self.first(
            |b| b.spawn_description(parent_session_id, agent_id),
            some,
            |e| e.spawn_description(parent_session_id, agent_id),
        )
    }
    fn warm(&self) {
        self.builtin.warm();
        self.external.warm();
    }
}

impl CodeSource for Layered<dyn CodeSource> {
    fn name(&self) -> String {
        self.external.name()
    }
    fn search(&self, req: &LaneRequest) -> Result<CodeAnswer, SourceFailure> {
        self.external.search(req)
    }
    fn read(
        &self,
        path: &str,
        range: LineRange,
        chunk: Option<&str>,
    ) -> Result<CodeLines, ReadCodeError> {
        self.first(
            |b| b.read(path, range, chunk),
            |r| !matches!(r, Err(ReadCodeError::NotInSource(_))),
            |e| e.read(path, range, chunk),
        )
    }
    fn stats(&self) -> Result<CodeStats, SourceFailure> {
        self.external.stats()
    }
    fn warm(&self) {
        self.builtin.warm();
        self.external.warm();
    }
}

impl SkillsSource for Layered<dyn SkillsSource> {
    fn name(&self) -> String {
        self.external.name()
    }
    fn activity(&self, q: &ActivityQuery) -> Result<SkillsActivity, SourceFailure> {
        self.builtin.activity(q)
    }
    fn search(&self, req: &LaneRequest) -> Result<SkillsAnswer, SourceFailure> {
        self.external.search(req)
    }
    fn stats(&self) -> Result<AgentKnowledgeStats, SourceFailure> {
        self.external.stats()
    }
    fn actor_for_session(
        &self,
        session_id: &str,
        sidechain_agent: Option<&str>,
    ) -> Result<Option<ActorKey>, SourceFailure> {
        self.first(
            |b| b.actor_for_session(session_id, sidechain_agent),
            some,
            |e| e.actor_for_session(session_id, sidechain_agent),
        )
    }
    /// Both stores' facts: the built-in one's win where both know an actor or a path.
    fn facts_for(
        &self,
        abs_paths: &[String],
        actor_ids: &[String],
    ) -> Result<ActorFacts, SourceFailure> {
        let local = self.builtin.facts_for(abs_paths, actor_ids);
        let remote = self.external.facts_for(abs_paths, actor_ids);
        match (local, remote) {
            (Ok(l), Ok(r)) => Ok(merge_facts(l, r)),
            (Ok(f), Err(_)) | (Err(_), Ok(f)) => Ok(f),
            (Err(_), Err(e)) => Err(e),
        }
    }
    fn actor(&self, actor_id: &str) -> Result<Option<ActorRow>, SourceFailure> {
        self.first(|b| b.actor(actor_id), some, |e| e.actor(actor_id))
    }
    fn sessions_of(&self, actor_id: &str) -> Result<Vec<String>, SourceFailure> {
        self.first(
            |b| b.sessions_of(actor_id),
            |r| r.as_ref().is_ok_and(|s| !s.is_empty()),
            |e| e.sessions_of(actor_id),
        )
    }
    fn top_actor_for_skill(&self, skill: &str) -> Result<Option<(String, u64)>, SourceFailure> {
        self.first(
            |b| b.top_actor_for_skill(skill),
            some,
            |e| e.top_actor_for_skill(skill),
        )
    }
}

/// `first`'s facts with what only `then` knows added.
fn merge_facts(mut first: ActorFacts, then: ActorFacts) -> ActorFacts {
    fn add<V>(into: &mut HashMap<String, V>, from: HashMap<String, V>) {
        for (k, v) in from {
            into.entry(k).or_insert(v);
        }
    }
    for (path, editors) in then.editors {
        let known = first.editors.entry(path).or_default();
        for e in editors {
            if !known.iter().any(|k| k.actor_id == e.actor_id) {
                known.push(e);
            }
        }
    }
    add(&mut first.skill_uses, then.skill_uses);
    add(&mut first.known, then.known);
    add(&mut first.outcomes, then.outcomes);
    first
}
