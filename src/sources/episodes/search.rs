//! Read-only search over `episodes.sqlite`: the built-in episodes source.
//!
//! The query arrives as already-stemmed terms, ranked by the full-text index beside the store
//! (`sources::lexical`: a disjunction of the terms, BM25); filters (workspace roots at a path
//! boundary, session ids with their subagents, outcome) select the sessions in SQL, and the index
//! applies them and the time range to its candidates. When the query has a
//! vector and the store holds event vectors, a vector arm ranks events by meaning under the same
//! filters and the two rankings are fused inside this lane ([`vectors::fuse`]). When the query
//! also has a sentence vector, the message arm (`messages::arm`: every user prompt and assistant
//! message embedded by the full encoder) adds its ranking to the rerank.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rusqlite::{types::Value as SqlValue, Connection, OptionalExtension};

use super::gist::GistIndex;
pub(super) use super::lexical_arm::LexicalHits;
use super::lexical_arm::{session_filter, stored_now, term_groups, NOISE_FLOOR};
use super::messages::arm::{self as message_arm, SentenceQuery};
use super::messages::scan::MessageIndex;
use super::rerank::{rerank, Reranked};
use super::{messages, meta_redact, semantic, store};
use crate::contract::{EventKind, Outcome};
use crate::sources::lexical::{LexicalError, LexicalIndex, LexicalQuery, LexicalSlot};
use crate::sources::sqlite::ReadPool;
use crate::sources::vectors::{self, VectorIndex};
use crate::text::{embed, snippet};

/// At most this many events of one session in a lane, so one long session cannot hide the rest.
pub const PER_SESSION_CAP: usize = 3;

/// What the lane asks the store.
#[derive(Debug, Clone, Default)]
pub struct EpisodeQuery {
    pub terms: Vec<String>,
    pub workspaces: Vec<String>,
    pub session_ids: Vec<String>,
    pub since_ms: Option<i64>,
    pub until_ms: Option<i64>,
    /// The session outcome to keep; `None` for any.
    pub outcome: Option<Outcome>,
    pub limit: usize,
    pub snippet_chars: usize,
    /// The query's text vector for the vector arm; `None` searches lexically only.
    pub vector: Option<embed::Vector>,
    /// The query's own terms (`terms` without the cross-lingual expansions): an event holding
    /// all of them is a full match, never pushed down or dropped ([`rerank`]).
    pub own_terms: Vec<String>,
    /// The terms of the identifiers the query names as written (`tokens::identifier_terms`): an
    /// event holding a rare one stays above what only the vector arms found (`rare`).
    pub identifiers: Vec<String>,
    /// The query's sentence vector for the message arm (`messages`); `None` skips that arm.
    pub sentence: Option<Arc<SentenceQuery>>,
}

/// What a search found: the hits, or why nothing is relevant.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EpisodeSearch {
    pub hits: Vec<StoredHit>,
    /// Set when the lane is empty because nothing in the index is about the query.
    pub nothing_relevant: Option<String>,
}

/// The session an event belongs to, as the lane reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionRow {
    pub session_id: String,
    pub source: String,
    pub path: String,
    pub cwd: Option<String>,
    pub created_at: Option<String>,
    pub last_event_at: Option<String>,
    pub agent_preset: Option<String>,
    pub title: Option<String>,
    pub parent_session_id: Option<String>,
    pub agent_id: Option<String>,
    pub agent_name: Option<String>,
    pub agent_description: Option<String>,
    pub team_name: Option<String>,
    pub outcome: Outcome,
    pub live: bool,
    pub events: u64,
}

/// An event hit as the built-in index holds it: the whole stored session row, the tool and the
/// event's stored facts. The engine sees it as the lane's `EpisodeHit`
/// (`lanes/builtin.rs::lane_hit`), which keeps only what any episodes source can say.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredHit {
    pub session_id: String,
    pub seq: u64,
    pub event_type: EventKind,
    pub time: Option<String>,
    pub time_ms: Option<i64>,
    /// BM25 from the full-text index (higher is better); 0 when only the vector arm found the
    /// event.
    pub bm25: f64,
    /// Whether the lexical arm found the event.
    pub lexical: bool,
    /// The vector arm's cosine, when it found the event.
    pub cosine: Option<f32>,
    pub snippet: String,
    pub human: bool,
    pub tool_name: Option<String>,
    pub is_error: bool,
    pub sidechain_agent: Option<String>,
    pub facts: Option<String>,
    pub session: SessionRow,
}

/// One full event, for `get-episode`.
#[derive(Debug, Clone, PartialEq)]
pub struct FullEvent {
    pub session_id: String,
    pub seq: u64,
    pub event_type: EventKind,
    pub time: Option<String>,
    pub text: String,
    pub human: bool,
    pub tool_name: Option<String>,
    pub is_error: bool,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct LaneStats {
    pub index_rev: Option<String>,
    pub sessions: u64,
    pub events: u64,
    pub live: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum EpisodeStoreError {
    #[error("the episodes index {0} does not exist yet; run `knowledge index`")]
    Missing(PathBuf),
    #[error("the episodes index cannot be read: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error(transparent)]
    Lexical(#[from] LexicalError),
}

/// The built-in episodes source: a small pool of read-only connections.
pub struct EpisodeStore {
    pool: ReadPool,
    vectors: VectorIndex,
    gists: GistIndex,
    /// The message vectors beside the store, mapped on the first search that has a sentence.
    messages: MessageIndex,
    /// The full-text index, opened on the first search (other calls never need it).
    lexical: LexicalSlot,
}

const SESSION_COLS: &str = "s.session_id, s.source, s.path, s.cwd, s.created_at, s.last_event_at,
    s.agent_preset, s.title, s.parent_session_id, s.agent_id, s.agent_name, s.agent_description,
    s.team_name, s.outcome, s.live, s.events";

/// A session's row, its free text redacted again (a store an older build wrote holds its
/// metadata as the transcript said it, see `meta_redact`).
fn session_from_row(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<SessionRow> {
    let text = |i: usize| r.get(at + i).map(meta_redact::read);
    Ok(SessionRow {
        session_id: r.get(at)?,
        source: r.get(at + 1)?,
        path: r.get(at + 2)?,
        cwd: text(3)?,
        created_at: r.get(at + 4)?,
        last_event_at: r.get(at + 5)?,
        agent_preset: text(6)?,
        title: text(7)?,
        parent_session_id: r.get(at + 8)?,
        agent_id: r.get(at + 9)?,
        agent_name: text(10)?,
        agent_description: text(11)?,
        team_name: text(12)?,
        outcome: r.get(at + 13)?,
        live: r.get(at + 14)?,
        events: r.get::<_, i64>(at + 15)? as u64,
    })
}

impl EpisodeStore {
    pub fn open(path: &Path) -> Result<Self, EpisodeStoreError> {
        if !path.exists() {
            return Err(EpisodeStoreError::Missing(path.to_path_buf()));
        }
        Ok(EpisodeStore {
            pool: ReadPool::open(path, "SELECT count(*) FROM sessions")?,
            vectors: VectorIndex::new(vectors::EVENTS),
            gists: GistIndex::default(),
            messages: MessageIndex::default(),
            lexical: LexicalSlot::default(),
        })
    }

    /// Whether the full-text index beside the store opens as this store's, every segment of it
    /// (`doctor`): the episodes lane cannot search without it.
    pub fn check_lexical(&self) -> Result<(), EpisodeStoreError> {
        self.with_conn(|c| {
            self.lexical(c)?.searcher()?;
            Ok(())
        })
    }

    /// The full-text index beside the store, checked to be this store's.
    fn lexical(&self, c: &Connection) -> Result<Arc<LexicalIndex>, EpisodeStoreError> {
        Ok(self.lexical.get(self.path(), c)?)
    }

    pub fn path(&self) -> &Path {
        self.pool.path()
    }

    pub(super) fn with_conn<T>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, EpisodeStoreError>,
    ) -> Result<T, EpisodeStoreError> {
        self.pool.with_conn(f)
    }

    pub fn stats(&self) -> Result<LaneStats, EpisodeStoreError> {
        self.with_conn(|c| {
            let (sessions, live, events): (i64, i64, i64) = c.query_row(
                "SELECT count(*), coalesce(sum(live), 0), coalesce(sum(events), 0) FROM sessions",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )?;
            Ok(LaneStats {
                index_rev: store::meta_get(c, "index_rev"),
                sessions: sessions as u64,
                events: events as u64,
                live: live as u64,
            })
        })
    }

    /// The best events for the query, at most [`PER_SESSION_CAP`] per session, best first.
    pub fn search(&self, q: &EpisodeQuery) -> Result<Vec<StoredHit>, EpisodeStoreError> {
        Ok(self.search_ranked(q)?.hits)
    }

    /// [`EpisodeStore::search`], with the reason when nothing in the index is relevant.
    pub fn search_ranked(&self, q: &EpisodeQuery) -> Result<EpisodeSearch, EpisodeStoreError> {
        if q.terms.is_empty() && q.vector.is_none() {
            return Ok(EpisodeSearch::default());
        }
        let filtered = !(q.workspaces.is_empty()
            && q.session_ids.is_empty()
            && q.since_ms.is_none()
            && q.until_ms.is_none()
            && q.outcome.is_none());
        self.with_conn(|c| {
            // One snapshot of the store for every read of this search: the full-text index may
            // be a commit ahead or behind it, and its rows are checked against this snapshot.
            let _snapshot = c.unchecked_transaction()?;
            let index = self.lexical(c)?;
            let searcher = index.searcher()?;
            let ranked = if q.terms.is_empty() {
                Vec::new()
            } else {
                let query = LexicalQuery {
                    groups: term_groups(q),
                    keys: session_filter(c, q)?.map(Arc::new),
                    since_ms: q.since_ms,
                    until_ms: q.until_ms,
                    per_key: PER_SESSION_CAP,
                    limit: q.limit,
                };
                let ranked = index.rank(&searcher, &query)?;
                let floor = ranked.first().map_or(0.0, |r| r.score * NOISE_FLOOR);
                stored_now(c, ranked.into_iter().filter(|r| r.score >= floor).collect())?
            };
            let lex = LexicalHits {
                index: &index,
                searcher: &searcher,
                ranked: &ranked,
            };
            let lexical = lex.pairs();
            let nearest = match q.vector.as_deref().map(|v| (v, embed::shared())) {
                Some((v, Ok(emb))) if self.vectors.present(c)? => {
                    semantic::ranking(c, &self.vectors, emb, v, q, filtered)?
                }
                _ => Vec::new(),
            };
            let messages = match q.sentence.as_deref() {
                Some(sq) => {
                    let keys = if filtered {
                        session_filter(c, q)?
                    } else {
                        None
                    };
                    message_arm::ranking(c, &self.messages, self.path(), sq, q, keys.as_ref())?
                }
                None => Vec::new(),
            };
            let gists = match q.vector {
                Some(_) => self.gists.load(c)?,
                None => None,
            };
            let fused = match gists {
                // Without gists (semantic search off, an index built before them) the two arms
                // are fused as before.
                None if messages.is_empty() => vectors::fuse(&lexical, &nearest),
                g => match rerank(c, q, &lex, &nearest, &messages, g.as_deref())? {
                    Reranked::Ranked(f) => f,
                    Reranked::NothingRelevant(why) => {
                        return Ok(EpisodeSearch {
                            hits: Vec::new(),
                            nothing_relevant: Some(why),
                        })
                    }
                },
            };
            let picked = cap_fused(c, fused, q.limit)?;
            // Stage 2: the full rows of the few events that made it.
            let mut stmt = c.prepare_cached(&format!(
                "SELECT e.session_id, e.seq, e.event_type, e.time, e.time_ms, e.text, e.human,
                        e.tool_name, e.is_error, e.sidechain_agent, e.facts, {SESSION_COLS}
                 FROM events e JOIN sessions s ON s.session_id = e.session_id WHERE e.id = ?1"
            ))?;
            let mut hits = Vec::with_capacity(picked.len());
            for f in picked {
                let hit = stmt.query_row([f.id], |r| {
                    let text: String = r.get(5)?;
                    Ok(StoredHit {
                        session_id: r.get(0)?,
                        seq: r.get::<_, i64>(1)? as u64,
                        event_type: r.get(2)?,
                        time: r.get(3)?,
                        time_ms: r.get(4)?,
                        bm25: f.lexical.unwrap_or(0.0),
                        lexical: f.lexical.is_some(),
                        cosine: f.cosine,
                        snippet: snippet::cut(&text, &q.terms, q.snippet_chars),
                        human: r.get(6)?,
                        tool_name: r.get(7).map(meta_redact::read)?,
                        is_error: r.get(8)?,
                        sidechain_agent: r.get(9).map(meta_redact::read)?,
                        facts: r.get(10)?,
                        session: session_from_row(r, 11)?,
                    })
                })?;
                hits.push(hit);
            }
            Ok(EpisodeSearch {
                hits,
                nothing_relevant: None,
            })
        })
    }

    /// How many stored messages have sentence vectors (`doctor`).
    pub fn message_coverage(&self) -> Result<messages::Coverage, EpisodeStoreError> {
        self.with_conn(|c| Ok(messages::coverage(c)?))
    }

    /// The coverage of the message vectors when an embed pass has run on this store and some
    /// messages still wait for theirs: a lane answered then says its semantic arm saw only part.
    pub fn partial_message_coverage(
        &self,
    ) -> Result<Option<messages::Coverage>, EpisodeStoreError> {
        self.with_conn(|c| {
            if messages::stored_id(c).is_none() || !messages::any_pending(c)? {
                return Ok(None);
            }
            let cov = messages::coverage(c)?;
            Ok((!cov.complete()).then_some(cov))
        })
    }

    /// Parse the embedding table and load the event vectors before the first query needs them.
    pub fn warm_vectors(&self) -> Result<(), EpisodeStoreError> {
        let _ = embed::shared();
        self.with_conn(|c| Ok(self.vectors.warm(c)?))
    }

    pub fn session(&self, session_id: &str) -> Result<Option<SessionRow>, EpisodeStoreError> {
        self.with_conn(|c| {
            let sql = format!("SELECT {SESSION_COLS} FROM sessions s WHERE s.session_id=?1");
            Ok(c.query_row(&sql, [session_id], |r| session_from_row(r, 0))
                .optional()?)
        })
    }

    /// The first `limit` texts of a session, as stored (redacted at index time): what a person
    /// typed (`human`; injected context is not human), else the assistant's messages. What a
    /// session was about when it has no summary (`engine::titles`).
    pub fn session_texts(
        &self,
        session_id: &str,
        human: bool,
        limit: usize,
    ) -> Result<Vec<String>, EpisodeStoreError> {
        self.with_conn(|c| {
            let sql = if human {
                "SELECT text FROM events WHERE session_id=?1 AND human=1 AND text <> ''
                 ORDER BY seq LIMIT ?2"
            } else {
                "SELECT text FROM events WHERE session_id=?1 AND event_type='assistant/message'
                 AND text <> '' ORDER BY seq LIMIT ?2"
            };
            let mut stmt = c.prepare_cached(sql)?;
            let rows = stmt.query_map(rusqlite::params![session_id, limit as i64], |r| r.get(0))?;
            Ok(rows.collect::<Result<Vec<String>, _>>()?)
        })
    }

    /// The paths of the first `limit` file edits of a session, in order (one per edit).
    pub fn edited_paths(
        &self,
        session_id: &str,
        limit: usize,
    ) -> Result<Vec<String>, EpisodeStoreError> {
        self.with_conn(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT json_extract(f.value, '$.path') FROM events e, json_each(e.facts) f
                 WHERE e.session_id=?1 AND e.facts LIKE '%file_edit%'
                   AND json_extract(f.value, '$.fact') = 'file_edit'
                   AND json_extract(f.value, '$.path') IS NOT NULL
                 ORDER BY e.seq LIMIT ?2",
            )?;
            let rows = stmt.query_map(rusqlite::params![session_id, limit as i64], |r| r.get(0))?;
            Ok(rows.collect::<Result<Vec<String>, _>>()?)
        })
    }

    /// The task description of the subagent `agent_id`, from the `Task`/`Agent` call in its
    /// parent session that the tool result's `agentId` links it to. Older Claude Code
    /// transcripts have no `.meta.json` sidecar, so this is the only place the description is.
    pub fn spawn_description(
        &self,
        parent_session_id: &str,
        agent_id: &str,
    ) -> Result<Option<String>, EpisodeStoreError> {
        use super::model::Fact;
        let rows: Vec<(Option<String>, String)> = self.with_conn(|c| {
            let mut st = c.prepare_cached(
                "SELECT tool_use_id, facts FROM events WHERE session_id=?1
                 AND (facts LIKE '%\"agent_link\"%' OR facts LIKE '%\"spawn\"%') ORDER BY seq",
            )?;
            let rows = st.query_map([parent_session_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
            Ok(rows.collect::<Result<_, _>>()?)
        })?;
        let facts: Vec<(Option<String>, Fact)> = rows
            .into_iter()
            .flat_map(|(tool, json)| {
                let facts: Vec<Fact> = serde_json::from_str(&json).unwrap_or_default();
                facts.into_iter().map(move |f| (tool.clone(), f))
            })
            .collect();
        let Some(call) = facts.iter().find_map(|(_, f)| match f {
            Fact::AgentLink {
                tool_use_id: Some(t),
                agent_id: a,
            } if a == agent_id => Some(t.clone()),
            _ => None,
        }) else {
            return Ok(None);
        };
        Ok(facts.into_iter().find_map(|(event_tool, f)| match f {
            Fact::Spawn {
                tool_use_id,
                description: Some(d),
                ..
            } if tool_use_id.as_ref().or(event_tool.as_ref()) == Some(&call) => Some(d),
            _ => None,
        }))
    }

    /// The event `seq` of a session with up to `context` neighbours on each side.
    pub fn event_with_context(
        &self,
        session_id: &str,
        seq: u64,
        context: u64,
    ) -> Result<Vec<FullEvent>, EpisodeStoreError> {
        self.with_conn(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT session_id, seq, event_type, time, text, human, tool_name, is_error
                 FROM events WHERE session_id=?1 AND seq BETWEEN ?2 AND ?3 ORDER BY seq",
            )?;
            let lo = seq.saturating_sub(context) as i64;
            let hi = seq.saturating_add(context) as i64;
            let rows = stmt.query_map(rusqlite::params![session_id, lo, hi], |r| {
                Ok(FullEvent {
                    session_id: r.get(0)?,
                    seq: r.get::<_, i64>(1)? as u64,
                    event_type: r.get(2)?,
                    time: r.get(3)?,
                    text: r.get(4)?,
                    human: r.get(5)?,
                    tool_name: r.get(6).map(meta_redact::read)?,
                    is_error: r.get(7)?,
                })
            })?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
    }
}

/// The fused ranking with the per-session cap applied again (each arm capped its own list).
fn cap_fused(
    c: &Connection,
    fused: Vec<vectors::FusedRow>,
    limit: usize,
) -> Result<Vec<vectors::FusedRow>, EpisodeStoreError> {
    let mut stmt = c.prepare_cached("SELECT session_id FROM events WHERE id = ?1")?;
    let mut per_session: std::collections::HashMap<String, usize> = Default::default();
    let mut out = Vec::new();
    for f in fused {
        if out.len() >= limit {
            break;
        }
        let session: String = stmt.query_row([f.id], |r| r.get(0))?;
        let n = per_session.entry(session).or_default();
        if *n < PER_SESSION_CAP {
            *n += 1;
            out.push(f);
        }
    }
    Ok(out)
}

/// Adds the request's filters as SQL conditions (never string-interpolating user values) on
/// the sessions table `s` and, for the time range, the events `e`.
pub(super) fn push_filters(sql: &mut String, args: &mut Vec<SqlValue>, q: &EpisodeQuery) {
    if !q.workspaces.is_empty() {
        let mut parts = Vec::new();
        for w in &q.workspaces {
            parts.push(
                "(s.cwd = ? OR substr(s.cwd, 1, length(?) + 1) IN (? || '/', ? || '\\'))"
                    .to_string(),
            );
            for _ in 0..4 {
                args.push(SqlValue::Text(w.clone()));
            }
        }
        sql.push_str(&format!(" AND ({})", parts.join(" OR ")));
    }
    if !q.session_ids.is_empty() {
        let mut parts = Vec::new();
        for s in &q.session_ids {
            parts.push("(s.session_id = ? OR substr(s.session_id, 1, length(?) + 1) = ? || '/')");
            for _ in 0..3 {
                args.push(SqlValue::Text(s.clone()));
            }
        }
        sql.push_str(&format!(" AND ({})", parts.join(" OR ")));
    }
    if let Some(since) = q.since_ms {
        sql.push_str(" AND e.time_ms >= ?");
        args.push(SqlValue::Integer(since));
    }
    if let Some(until) = q.until_ms {
        sql.push_str(" AND e.time_ms <= ?");
        args.push(SqlValue::Integer(until));
    }
    if let Some(outcome) = q.outcome {
        sql.push_str(" AND s.outcome = ?");
        args.push(SqlValue::Text(outcome.as_str().to_string()));
    }
}
