//! The built-in sources behind the lane traits: the episodes index, the code index and the
//! agent-knowledge store (L3), each opened read-only. Each turns its store's rows into the lane's
//! own types, and reads what its hits point at (an event in full, the lines of a file), the
//! session rows and event times the engine asks about, and (`builtin/skills.rs`) the actor facts.

mod skills;

use std::path::Path;
use std::sync::Arc;

use super::{
    ActivityQuery, ActivitySession, CodeAnswer, CodeHit, CodeLines, CodeSource, CodeStats, Episode,
    EpisodeError, EpisodeHit, EpisodesAnswer, EpisodesSource, HitSession, LaneRequest, LaneStats,
    LineRange, ReadCodeError, Reason, SessionRow, SkillsSource, SourceFailure, Unavailable,
};
use crate::contract::Code;
use crate::sources::agent_knowledge::AgentKnowledgeStore;
use crate::sources::code::{model::CodeQuery, search::CodeStore, CodeStoreError};
use crate::sources::episodes::search::{self as episodes, EpisodeQuery, EpisodeStore};
pub use skills::BuiltinSkills;

/// The built-in episodes source over `episodes.sqlite`.
pub struct BuiltinEpisodes {
    pub store: Arc<EpisodeStore>,
}

impl EpisodesSource for BuiltinEpisodes {
    fn name(&self) -> String {
        "builtin.episodes".to_string()
    }
    fn search(&self, req: &LaneRequest) -> Result<EpisodesAnswer, SourceFailure> {
        let stats = self.store.stats().map_err(unavailable)?;
        let q = EpisodeQuery {
            terms: req.terms.clone(),
            workspaces: req.workspaces.clone(),
            session_ids: req.session_ids.clone(),
            since_ms: req.since_ms,
            until_ms: req.until_ms,
            outcome: req.outcome,
            limit: req.depth,
            snippet_chars: req.snippet_chars,
            vector: req.vector.clone(),
            own_terms: crate::text::tokens::query_terms(&req.query),
            identifiers: crate::text::tokens::identifier_terms(&req.query),
            sentence: req.sentence(),
        };
        let found = self.store.search_ranked(&q).map_err(unavailable)?;
        // The message arm saw only the messages embedded so far: the lane says so.
        let partial = match q.sentence {
            Some(_) => self.store.partial_message_coverage().ok().flatten(),
            None => None,
        };
        Ok(EpisodesAnswer {
            stats,
            hits: found.hits.into_iter().map(lane_hit).collect(),
            unanswered: partial.map(not_embedded).into_iter().collect(),
            nothing_relevant: found.nothing_relevant,
        })
    }
    fn episode(&self, session_id: &str, seq: u64, context: u64) -> Result<Episode, EpisodeError> {
        read_episode(&self.store, session_id, seq, context)
    }
    fn stats(&self) -> Result<LaneStats, SourceFailure> {
        self.store.stats().map_err(unavailable)
    }
    fn session(&self, session_id: &str) -> Result<Option<SessionRow>, SourceFailure> {
        self.store.session(session_id).map_err(unavailable)
    }
    fn first_human_text(&self, session_id: &str) -> Result<Option<String>, SourceFailure> {
        let texts = self.session_texts(session_id, true, 1)?;
        Ok(texts.into_iter().next())
    }
    fn session_texts(
        &self,
        session_id: &str,
        human: bool,
        limit: usize,
    ) -> Result<Vec<String>, SourceFailure> {
        (self.store)
            .session_texts(session_id, human, limit)
            .map_err(unavailable)
    }
    fn edited_paths(&self, session_id: &str, limit: usize) -> Result<Vec<String>, SourceFailure> {
        self.store
            .edited_paths(session_id, limit)
            .map_err(unavailable)
    }
    fn activity_sessions(&self, q: &ActivityQuery) -> Result<Vec<ActivitySession>, SourceFailure> {
        self.store
            .activity_sessions(&q.workspaces, q.outcome)
            .map_err(unavailable)
    }
    fn spawn_description(
        &self,
        parent_session_id: &str,
        agent_id: &str,
    ) -> Result<Option<String>, SourceFailure> {
        self.store
            .spawn_description(parent_session_id, agent_id)
            .map_err(unavailable)
    }
    fn event_time(&self, session_id: &str, seq: u64) -> Result<Option<String>, SourceFailure> {
        let events = self
            .store
            .event_with_context(session_id, seq, 0)
            .map_err(unavailable)?;
        Ok(events
            .into_iter()
            .find(|e| e.seq == seq)
            .and_then(|e| e.time))
    }
    fn warm(&self) {
        let _ = self.store.warm_vectors();
    }
}

/// The lane's warning when some messages wait for their sentence vectors.
fn not_embedded(c: crate::sources::episodes::messages::Coverage) -> SourceFailure {
    SourceFailure::new(
        Code::IndexNotReady,
        format!(
            "{}; questions in other words may miss the rest until `knowledge index` embeds them",
            c.describe()
        ),
    )
}

/// A store that fails a read degrades the lane: the source is there but cannot answer.
fn unavailable(e: impl std::error::Error + Send + Sync + 'static) -> SourceFailure {
    SourceFailure::caused(Code::SourceUnavailable, e)
}

/// A row of the episodes index → the lane's hit.
fn lane_hit(h: episodes::StoredHit) -> EpisodeHit {
    let s = h.session;
    EpisodeHit {
        session_id: h.session_id,
        seq: h.seq,
        event_type: h.event_type,
        time: h.time,
        time_ms: h.time_ms,
        bm25: h.bm25,
        lexical: h.lexical,
        cosine: h.cosine,
        snippet: h.snippet,
        human: h.human,
        is_error: h.is_error,
        sidechain_agent: h.sidechain_agent,
        session: HitSession::from_row(s, None),
    }
}

/// The event `seq` of a session in the episodes index with `context` neighbours each side,
/// redacted again on the way out.
pub fn read_episode(
    store: &EpisodeStore,
    session_id: &str,
    seq: u64,
    context: u64,
) -> Result<Episode, EpisodeError> {
    let s = store
        .session(session_id)?
        .ok_or_else(|| EpisodeError::NoSession(session_id.to_string()))?;
    let events = store.event_with_context(session_id, seq, context)?;
    Episode::assemble(session_id, seq, s, events)
}

/// The built-in code source over `code.sqlite`.
pub struct BuiltinCode {
    pub store: Arc<CodeStore>,
}

impl CodeSource for BuiltinCode {
    fn name(&self) -> String {
        "builtin.code".to_string()
    }
    fn search(&self, req: &LaneRequest) -> Result<CodeAnswer, SourceFailure> {
        let q = CodeQuery {
            terms: req.terms.clone(),
            workspaces: req.workspaces.clone(),
            paths: req.paths.clone(),
            since_ms: req.since_ms,
            until_ms: req.until_ms,
            limit: req.depth,
            snippet_chars: req.snippet_chars,
            vector: req.vector.clone(),
        };
        let found = self.store.search(&q).map_err(unavailable)?;
        Ok(CodeAnswer {
            index_rev: found.index_rev,
            capability: found.capability,
            capability_reason: None,
            stale: found.stale,
            stale_paths: found.stale_paths,
            nothing_relevant: found.nothing_relevant,
            drift: None,
            hits: found
                .hits
                .into_iter()
                .map(|h| CodeHit {
                    chunk_id: h.chunk_id,
                    path: h.path,
                    start_line: h.start_line,
                    end_line: h.end_line,
                    source_kind: h.source_kind,
                    symbol: h.symbol,
                    score: h.score,
                    why: h.why,
                    snippet: h.snippet,
                    mtime: Some(h.mtime),
                    mtime_ms: Some(h.mtime_ms),
                    root: h.root,
                    machine: None,
                })
                .collect(),
            unanswered: Vec::new(),
        })
    }
    fn read(
        &self,
        path: &str,
        range: LineRange,
        chunk: Option<&str>,
    ) -> Result<CodeLines, ReadCodeError> {
        read_indexed(&self.store, path, range, chunk)
    }
    fn stats(&self) -> Result<CodeStats, SourceFailure> {
        self.store.stats().map_err(unavailable)
    }
    fn warm(&self) {
        let _ = self.store.warm_vectors();
    }
}

/// Lines of a file the code index knows: its current lines (or, when it is gone or no longer a
/// text file the index would take, the indexed ones, marked stale), redacted.
pub fn read_indexed(
    store: &CodeStore,
    path: &str,
    range: LineRange,
    chunk: Option<&str>,
) -> Result<CodeLines, ReadCodeError> {
    let read = |p: &str| store.read_code(p, range.start, range.end);
    let found = match read(path) {
        Err(CodeStoreError::Ambiguous { path: p, roots }) => {
            // The lanes give root-relative paths: pick the root holding the caller's chunk.
            let mut first = None;
            for root in roots.split(", ") {
                if let Ok(lines) = read(&format!("{}/{}", root.trim_end_matches('/'), path)) {
                    if chunk.is_some_and(|c| lines.chunks.iter().any(|k| k.chunk_id == c)) {
                        return Ok(lines);
                    }
                    first.get_or_insert(lines);
                }
            }
            first.ok_or(CodeStoreError::Ambiguous { path: p, roots })
        }
        other => other,
    };
    found.map_err(|e| match e {
        CodeStoreError::NotIndexed(_) => ReadCodeError::NotInSource(Reason::error(e)),
        CodeStoreError::Missing(_) | CodeStoreError::Sql(_) | CodeStoreError::Lexical(_) => {
            ReadCodeError::Unavailable(unavailable(e))
        }
        CodeStoreError::Ambiguous { .. } | CodeStoreError::Io { .. } => {
            ReadCodeError::NotReadable(Reason::error(e))
        }
    })
}

/// A store that did not open, and how to build it.
#[derive(Debug, thiserror::Error)]
#[error("{error} ({hint})")]
struct WithHint<E: std::error::Error + 'static> {
    #[source]
    error: E,
    hint: String,
}

/// The episodes lane over `episodes.sqlite`, and the store when it opened.
pub fn episodes_lane(path: &Path) -> (Arc<dyn EpisodesSource>, Option<Arc<EpisodeStore>>) {
    open_lane(
        path,
        EpisodeStore::open,
        "builtin.episodes",
        None,
        |store| -> Arc<dyn EpisodesSource> { Arc::new(BuiltinEpisodes { store }) },
    )
}

/// The code lane over `code.sqlite`, and the store when it opened.
pub fn code_lane(path: &Path) -> (Arc<dyn CodeSource>, Option<Arc<CodeStore>>) {
    let hint = "index code with `knowledge index --code ROOT`";
    open_lane(
        path,
        CodeStore::open,
        "builtin.code",
        Some(hint),
        |store| -> Arc<dyn CodeSource> { Arc::new(BuiltinCode { store }) },
    )
}

/// The skills lane over the agent-knowledge store, and the store when it opened.
pub fn skills_lane(path: &Path) -> (Arc<dyn SkillsSource>, Option<Arc<AgentKnowledgeStore>>) {
    let name = "builtin.skills+agent-knowledge";
    open_lane(
        path,
        AgentKnowledgeStore::open,
        name,
        None,
        |store| -> Arc<dyn SkillsSource> { Arc::new(BuiltinSkills { store }) },
    )
}

/// Open a built-in store for its lane. A store that does not open does not fail the engine: its
/// lane becomes [`Unavailable`], and the error text (with `hint`, how to build the store) is the
/// lane's degradation reason: a missing file means the index is not ready yet.
fn open_lane<S, E: std::error::Error + Send + Sync + 'static, L: ?Sized>(
    path: &Path,
    open: impl FnOnce(&Path) -> Result<S, E>,
    name: &str,
    hint: Option<&str>,
    lane: impl FnOnce(Arc<S>) -> Arc<L>,
) -> (Arc<L>, Option<Arc<S>>)
where
    Arc<L>: From<Unavailable>,
{
    match open(path) {
        Ok(store) => {
            let store = Arc::new(store);
            (lane(store.clone()), Some(store))
        }
        Err(e) => {
            let code = if path.exists() {
                Code::SourceUnavailable
            } else {
                Code::IndexNotReady
            };
            let failure = match hint {
                Some(hint) => SourceFailure::caused(
                    code,
                    WithHint {
                        error: e,
                        hint: hint.to_string(),
                    },
                ),
                None => SourceFailure::caused(code, e),
            };
            let name = name.to_string();
            (Arc::from(Unavailable { name, failure }), None)
        }
    }
}

/// An unavailable source stands in for any lane.
macro_rules! unavailable_lane {
    ($($lane:ident),*) => {$(
        impl From<Unavailable> for Arc<dyn $lane> {
            fn from(u: Unavailable) -> Self {
                Arc::new(u)
            }
        }
    )*};
}
unavailable_lane!(EpisodesSource, CodeSource, SkillsSource);
