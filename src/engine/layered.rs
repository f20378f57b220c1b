//! "Built-in first, then the external source": the one rule for every lookup, and for a search
//! that asks both.
//!
//! When an external source (an MCP server, the team's PostgreSQL) joins a built-in index in its
//! lane, what a hit points at — an event, a session's row, the lines of a file, an actor — is
//! looked up in the built-in store first (it is local, current and complete for this machine)
//! and only then in the external one. The lane's searches go either to the external source alone
//! ([`Searched::External`]: an MCP server in place of an index, `--team-only`) or to both
//! ([`Searched::Both`]: `--team`): the two are asked at once, the external one's copy of what
//! this machine holds is left out (so an id in the answer names one thing, read back from the
//! built-in store), the two rankings are fused by reciprocal rank, and a source that fails or
//! does not answer in time leaves the lane answering from the other, degraded with a warning
//! naming it. The rule lives here once, as a source that wraps the two ([`Layered`]);
//! `Engine::attach` puts it in the lane, and `get_episode`, `read_code`, the profiles, the
//! filters and dispatch ask the lane without knowing which store answered.

use std::collections::{HashMap, HashSet};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use crate::contract::Code;
use crate::lanes::{
    ActivityQuery, ActivitySession, ActorFacts, ActorKey, ActorRow, AgentKnowledgeStats,
    BothFailed, CodeAnswer, CodeLines, CodeSource, CodeStats, Episode, EpisodeError,
    EpisodesAnswer, EpisodesSource, LaneRequest, LaneStats, LineRange, ReadCodeError, SessionRow,
    SkillsActivity, SkillsAnswer, SkillsSource, SourceFailure,
};

/// A lane whose lookups ask `builtin` first, and whose searches go where `searched` says.
pub struct Layered<S: ?Sized> {
    pub builtin: Arc<S>,
    pub external: Arc<S>,
    pub searched: Searched,
}

/// Which sources a layered lane searches.
#[derive(Debug, Clone)]
pub enum Searched {
    /// The external source alone (an MCP server in place of an index; `--team-only`).
    External,
    /// The built-in store and the external source in one answer (`--team`).
    Both(Both),
}

/// How a lane that searches both sources treats the external one.
#[derive(Debug, Clone)]
pub struct Both {
    /// This machine's name in the team index: its rows there are the built-in store's, pushed,
    /// and are left out of the external answer.
    pub own_machine: Option<String>,
    /// How long the external source may take before the lane answers without it (under the
    /// lane's own deadline, so the built-in answer is never lost to a slow server).
    pub wait: Duration,
}

/// An answer that can say which of its sources did not answer.
trait Partial {
    fn unanswered(&mut self) -> &mut Vec<SourceFailure>;
}

impl Partial for EpisodesAnswer {
    fn unanswered(&mut self) -> &mut Vec<SourceFailure> {
        &mut self.unanswered
    }
}

impl Partial for CodeAnswer {
    fn unanswered(&mut self) -> &mut Vec<SourceFailure> {
        &mut self.unanswered
    }
}

impl Partial for SkillsAnswer {
    fn unanswered(&mut self) -> &mut Vec<SourceFailure> {
        &mut self.unanswered
    }
}

impl<S: ?Sized + Send + Sync + 'static> Layered<S> {
    /// Ask both sources at once: the built-in one on this thread, the external one on its own,
    /// waited for at most `both.wait` (a late answer is dropped and named as missing).
    fn ask_both<A: Send + 'static>(
        &self,
        both: &Both,
        req: &LaneRequest,
        external_name: String,
        call: fn(&S, &LaneRequest) -> Result<A, SourceFailure>,
    ) -> (Result<A, SourceFailure>, Result<A, SourceFailure>) {
        let started = Instant::now();
        let (tx, rx) = mpsc::channel();
        let (external, r) = (self.external.clone(), req.clone());
        let spawned = std::thread::Builder::new()
            .name("knowledge-external".into())
            .spawn(move || {
                let _ = tx.send(call(&*external, &r));
            });
        let local = call(&*self.builtin, req);
        let remote = match spawned {
            Err(e) => Err(SourceFailure::caused(Code::Internal, NoWorker(e))),
            Ok(_) => match rx.recv_timeout(both.wait.saturating_sub(started.elapsed())) {
                Ok(answer) => answer,
                Err(mpsc::RecvTimeoutError::Timeout) => Err(SourceFailure::new(
                    Code::SourceUnavailable,
                    format!(
                        "{external_name} did not answer within {} ms",
                        both.wait.as_millis()
                    ),
                )),
                Err(mpsc::RecvTimeoutError::Disconnected) => Err(SourceFailure::new(
                    Code::Internal,
                    "the external source's worker stopped unexpectedly",
                )),
            },
        };
        (local, remote)
    }
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

/// The two answers of a search that asked both sources as one: `merge`d when both answered,
/// else the one that did, naming the other as unanswered; a failure only when both failed.
fn combine<A: Partial>(
    local: Result<A, SourceFailure>,
    remote: Result<A, SourceFailure>,
    merge: impl FnOnce(A, A) -> A,
) -> Result<A, SourceFailure> {
    match (local, remote) {
        (Ok(l), Ok(r)) => Ok(merge(l, r)),
        (Ok(mut a), Err(f)) | (Err(f), Ok(mut a)) => {
            a.unanswered().push(f);
            Ok(a)
        }
        (Err(l), Err(r)) => Err(SourceFailure::caused(
            r.code,
            BothFailed {
                external: r,
                local: l,
            },
        )),
    }
}

/// The thread that asks the external source could not be started.
#[derive(Debug, thiserror::Error)]
#[error("could not start the external source's worker thread: {0}")]
struct NoWorker(#[source] std::io::Error);

/// Two rankings fused by reciprocal rank with equal weights (the lanes' own RRF, k = 60): rank
/// r of either list scores 1 / (60 + r), so the lists alternate, the built-in one first on a
/// tie; at most `depth`.
fn fuse_ranked<H>(local: Vec<H>, remote: Vec<H>, depth: usize) -> Vec<H> {
    let mut out = Vec::with_capacity(depth.min(local.len() + remote.len()));
    let (mut l, mut r) = (local.into_iter().peekable(), remote.into_iter().peekable());
    while out.len() < depth && (l.peek().is_some() || r.peek().is_some()) {
        out.extend(l.next());
        if out.len() < depth {
            out.extend(r.next());
        }
    }
    out
}

/// Both sources' revisions as one (the same pair of revisions gives the same bytes).
fn both_revs(local: Option<String>, remote: Option<String>) -> Option<String> {
    match (local, remote) {
        (None, None) => None,
        (l, r) => Some(format!(
            "{}+{}",
            l.as_deref().unwrap_or("-"),
            r.as_deref().unwrap_or("-")
        )),
    }
}

/// Both sources' episode counts as one (a session this machine pushed is counted in each).
fn add_lane_stats(l: LaneStats, r: LaneStats) -> LaneStats {
    LaneStats {
        index_rev: both_revs(l.index_rev, r.index_rev),
        sessions: l.sessions + r.sessions,
        events: l.events + r.events,
        live: l.live + r.live,
    }
}

fn is_own(machine: Option<&str>, both: &Both) -> bool {
    machine.is_some() && machine == both.own_machine.as_deref()
}

impl Layered<dyn EpisodesSource> {
    /// The external hits that are not this machine's own (pushed by it, or of a session the
    /// built-in store holds: that id reads back from the built-in store), fused with the
    /// built-in ones.
    fn merge_episodes(
        &self,
        both: &Both,
        depth: usize,
    ) -> impl FnOnce(EpisodesAnswer, EpisodesAnswer) -> EpisodesAnswer + '_ {
        let both = both.clone();
        move |local, remote| {
            let mut held: HashMap<String, bool> = HashMap::new();
            let theirs: Vec<_> = remote
                .hits
                .into_iter()
                .filter(|h| !is_own(h.session.machine.as_deref(), &both))
                .filter(|h| {
                    !*held.entry(h.session_id.clone()).or_insert_with(|| {
                        matches!(self.builtin.session(&h.session_id), Ok(Some(_)))
                    })
                })
                .collect();
            let mine = local.hits.into_iter().map(|mut h| {
                // In an answer of several machines, this machine's items name it too.
                h.session.machine = h.session.machine.or_else(|| both.own_machine.clone());
                h
            });
            EpisodesAnswer {
                stats: add_lane_stats(local.stats, remote.stats),
                hits: fuse_ranked(mine.collect(), theirs, depth),
                unanswered: local
                    .unanswered
                    .into_iter()
                    .chain(remote.unanswered)
                    .collect(),
                // Read only when the fused list is empty, so neither source found anything.
                nothing_relevant: local.nothing_relevant.or(remote.nothing_relevant),
            }
        }
    }
}

/// The external code hits that are not this machine's own (pushed by it, or a chunk the
/// built-in answer holds), fused with the built-in ones; the built-in index's capability and
/// freshness stand for the lane.
fn merge_code(both: &Both, depth: usize) -> impl FnOnce(CodeAnswer, CodeAnswer) -> CodeAnswer + '_ {
    move |mut local, remote| {
        // In an answer of several machines, this machine's items name it too.
        for h in &mut local.hits {
            h.machine = h.machine.take().or_else(|| both.own_machine.clone());
        }
        let mine: HashSet<String> = local.hits.iter().map(|h| h.chunk_id.clone()).collect();
        let theirs: Vec<_> = remote
            .hits
            .into_iter()
            .filter(|h| !is_own(h.machine.as_deref(), both) && !mine.contains(&h.chunk_id))
            .collect();
        CodeAnswer {
            index_rev: both_revs(local.index_rev, remote.index_rev),
            hits: fuse_ranked(local.hits, theirs, depth),
            unanswered: local
                .unanswered
                .into_iter()
                .chain(remote.unanswered)
                .collect(),
            ..local
        }
    }
}

/// The external skills the built-in answer does not name, fused with the built-in ones.
fn merge_skills(depth: usize) -> impl FnOnce(SkillsAnswer, SkillsAnswer) -> SkillsAnswer {
    move |local, remote| {
        let mine: HashSet<String> = local.hits.iter().map(|h| h.name.clone()).collect();
        let theirs: Vec<_> = remote
            .hits
            .into_iter()
            .filter(|h| !mine.contains(&h.name))
            .collect();
        SkillsAnswer {
            index_rev: both_revs(local.index_rev, remote.index_rev),
            hits: fuse_ranked(local.hits, theirs, depth),
            unanswered: local
                .unanswered
                .into_iter()
                .chain(remote.unanswered)
                .collect(),
        }
    }
}

/// Both sources' counts as one.
fn both_stats<T>(
    local: Result<T, SourceFailure>,
    remote: Result<T, SourceFailure>,
    add: impl FnOnce(T, T) -> T,
) -> Result<T, SourceFailure> {
    match (local, remote) {
        (Ok(l), Ok(r)) => Ok(add(l, r)),
        (Ok(a), Err(_)) | (Err(_), Ok(a)) => Ok(a),
        (Err(_), Err(r)) => Err(r),
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
        match &self.searched {
            Searched::External => self.external.name(),
            Searched::Both(_) => format!("{}+{}", self.builtin.name(), self.external.name()),
        }
    }
    fn search(&self, req: &LaneRequest) -> Result<EpisodesAnswer, SourceFailure> {
        let Searched::Both(both) = &self.searched else {
            return self.external.search(req);
        };
        let (local, remote) = self.ask_both(both, req, self.external.name(), |s, r| s.search(r));
        combine(local, remote, self.merge_episodes(both, req.depth))
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
        let Searched::Both(_) = &self.searched else {
            return self.external.stats();
        };
        both_stats(self.builtin.stats(), self.external.stats(), add_lane_stats)
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
        match &self.searched {
            Searched::External => self.external.name(),
            Searched::Both(_) => format!("{}+{}", self.builtin.name(), self.external.name()),
        }
    }
    fn search(&self, req: &LaneRequest) -> Result<CodeAnswer, SourceFailure> {
        let Searched::Both(both) = &self.searched else {
            return self.external.search(req);
        };
        let (local, remote) = self.ask_both(both, req, self.external.name(), |s, r| s.search(r));
        combine(local, remote, merge_code(both, req.depth))
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
        let Searched::Both(_) = &self.searched else {
            return self.external.stats();
        };
        both_stats(self.builtin.stats(), self.external.stats(), |l, r| {
            let mut roots = l.roots;
            let theirs: Vec<String> = r.roots.into_iter().filter(|x| !roots.contains(x)).collect();
            roots.extend(theirs);
            CodeStats {
                files: l.files + r.files,
                chunks: l.chunks + r.chunks,
                roots,
                index_rev: both_revs(l.index_rev, r.index_rev),
            }
        })
    }
    fn warm(&self) {
        self.builtin.warm();
        self.external.warm();
    }
}

impl SkillsSource for Layered<dyn SkillsSource> {
    fn name(&self) -> String {
        match &self.searched {
            Searched::External => self.external.name(),
            Searched::Both(_) => format!("{}+{}", self.builtin.name(), self.external.name()),
        }
    }
    fn activity(&self, q: &ActivityQuery) -> Result<SkillsActivity, SourceFailure> {
        self.builtin.activity(q)
    }
    fn search(&self, req: &LaneRequest) -> Result<SkillsAnswer, SourceFailure> {
        let Searched::Both(both) = &self.searched else {
            return self.external.search(req);
        };
        let (local, remote) = self.ask_both(both, req, self.external.name(), |s, r| s.search(r));
        combine(local, remote, merge_skills(req.depth))
    }
    fn stats(&self) -> Result<AgentKnowledgeStats, SourceFailure> {
        let Searched::Both(_) = &self.searched else {
            return self.external.stats();
        };
        both_stats(self.builtin.stats(), self.external.stats(), |l, r| {
            AgentKnowledgeStats {
                index_rev: both_revs(l.index_rev, r.index_rev),
                built_at: l.built_at.or(r.built_at),
                skills: l.skills + r.skills,
                actors: l.actors + r.actors,
                skill_uses: l.skill_uses + r.skill_uses,
            }
        })
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
