//! The team index as a source behind the episodes lane (and the connection every team lane
//! shares the shape of). It answers in the lanes' own types like the built-in stores: a lexical
//! arm on a `tsvector` of our own token stream (the same stems as the local full-text index,
//! narrowed in tiers when the terms are common: `tiers.rs`), a vector arm on the pushed sign-bit
//! codes (`vectors.rs`), the two fused as locally, the filters in SQL, snippets cut and redacted here,
//! each hit naming the machine that pushed it. A server that is down or refuses degrades the lane
//! with `KNOWLEDGE_SOURCE_UNAVAILABLE`; the connection (`conn.rs`) is made on first use, waited
//! for no longer than the lane may wait, and made again after a failure. The code lane is `code.rs`, the skills lane `skills.rs`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

pub use super::code::TeamCode;
pub use super::conn::TeamConn;
pub use super::skills::TeamSkills;
use super::tiers;
use super::{tsv, vectors, TeamError, TeamUrl};
use crate::contract::EventKind;
use crate::lanes::{
    CodeSource, Episode, EpisodeError, EpisodeHit, EpisodesAnswer, EpisodesSource, HitSession,
    LaneRequest, LaneStats, SessionRow, SkillsSource, SourceFailure,
};
use crate::sources::episodes::meta_redact;
use crate::sources::episodes::search::{FullEvent, PER_SESSION_CAP};
use crate::text::{embed, redact, snippet};

/// The episodes lane over the team index.
pub struct TeamEpisodes(pub Arc<TeamConn>);

const SESSION_COLS: &str = "s.session_id, s.source, s.path, s.cwd, s.created_at, \
    s.last_event_at, s.agent_preset, s.title, s.parent_session_id, s.agent_id, s.agent_name, \
    s.agent_description, s.team_name, s.outcome, s.live, s.events, s.machine";

/// A session's row, its free text redacted again (a row an older build pushed holds its
/// metadata as the transcript said it; the local store's reader does the same).
fn session_row(r: &postgres::Row, at: usize) -> SessionRow {
    let s = |i: usize| r.get::<_, Option<String>>(at + i);
    let text = |i: usize| meta_redact::read(s(i));
    SessionRow {
        session_id: r.get(at),
        source: r.get(at + 1),
        path: r.get(at + 2),
        cwd: text(3),
        created_at: s(4),
        last_event_at: s(5),
        agent_preset: text(6),
        title: text(7),
        parent_session_id: s(8),
        agent_id: s(9),
        agent_name: text(10),
        agent_description: text(11),
        team_name: text(12),
        outcome: r.get(at + 13),
        live: r.get(at + 14),
        events: r.get::<_, i64>(at + 15).max(0) as u64,
    }
}

/// A query's first parameter (`$1`: the `tsquery` or the query's code), then the SQL
/// conditions and parameters of a request's filters, then whatever the query adds (its limit).
pub(super) struct Filter {
    pub sql: String,
    pub params: Vec<Box<dyn postgres::types::ToSql + Sync>>,
}

impl Filter {
    pub fn new(first: Box<dyn postgres::types::ToSql + Sync>) -> Filter {
        Filter {
            sql: String::new(),
            params: vec![first],
        }
    }
    pub fn add(&mut self, cond: &str, p: Box<dyn postgres::types::ToSql + Sync>) {
        self.params.push(p);
        let n = self.params.len();
        self.sql
            .push_str(&format!(" AND {}", cond.replace("$?", &format!("${n}"))));
    }
    /// A last parameter (a limit); its placeholder.
    pub fn then(&mut self, p: Box<dyn postgres::types::ToSql + Sync>) -> String {
        self.params.push(p);
        format!("${}", self.params.len())
    }
    pub fn refs(&self) -> Vec<&(dyn postgres::types::ToSql + Sync)> {
        self.params.iter().map(|p| p.as_ref() as _).collect()
    }
}

/// An event joined to its session, as the filters name them.
const EVENT_ROWS: &str =
    "kn_event e JOIN kn_session s ON s.machine = e.machine AND s.session_id = e.session_id";

/// The episodes filters of a request over [`EVENT_ROWS`], after `first`, and whether they ask
/// about the session (else `kn_event e` alone answers them).
fn episode_filter(
    first: Box<dyn postgres::types::ToSql + Sync>,
    req: &LaneRequest,
) -> (Filter, bool) {
    let mut f = Filter::new(first);
    let on_sessions = !req.workspaces.is_empty() || req.outcome.is_some();
    if !req.workspaces.is_empty() {
        f.add(
            "EXISTS (SELECT 1 FROM unnest($?::text[]) w \
             WHERE s.cwd = w OR starts_with(s.cwd, rtrim(w, '/') || '/'))",
            Box::new(req.workspaces.clone()),
        );
    }
    if !req.session_ids.is_empty() {
        f.add(
            "EXISTS (SELECT 1 FROM unnest($?::text[]) x \
             WHERE e.session_id = x OR starts_with(e.session_id, x || '/'))",
            Box::new(req.session_ids.clone()),
        );
    }
    if let Some(s) = req.since_ms {
        f.add("e.time_ms >= $?", Box::new(s));
    }
    if let Some(u) = req.until_ms {
        f.add("e.time_ms <= $?", Box::new(u));
    }
    if let Some(o) = &req.outcome {
        f.add("s.outcome = $?", Box::new(o.as_str()));
    }
    (f, on_sessions)
}

/// The columns of an event found by either arm, then its session's.
const EVENT_COLS: &str = "e.machine, e.session_id, e.seq, e.event_type, e.time, e.time_ms, \
    e.text, e.human, e.is_error, e.sidechain_agent";

/// An event found by either arm, with its session.
struct Found {
    machine: String,
    seq: u64,
    event_type: EventKind,
    time: Option<String>,
    time_ms: Option<i64>,
    text: String,
    human: bool,
    is_error: bool,
    sidechain_agent: Option<String>,
    session: SessionRow,
}

/// An event of the team index: (machine, session, seq).
type EventKey = (String, String, u64);

fn found(r: &postgres::Row) -> (EventKey, Found) {
    let session = session_row(r, 10);
    let f = Found {
        machine: r.get(0),
        seq: r.get::<_, i64>(2).max(0) as u64,
        event_type: r.get(3),
        time: r.get(4),
        time_ms: r.get(5),
        text: r.get(6),
        human: r.get(7),
        is_error: r.get(8),
        sidechain_agent: meta_redact::read(r.get(9)),
        session,
    };
    ((f.machine.clone(), r.get(1), f.seq), f)
}

impl TeamEpisodes {
    /// The lexical arm: (event, `ts_rank`) best first, at most [`PER_SESSION_CAP`] a session and
    /// `depth` in all; the rows go to `rows`. The match is bounded (`team::tiers`):
    /// when the terms together match more than [`tiers::DEFAULT_CAP`] events, rare terms stay
    /// alternatives and common ones are required together, widened only when too few are found.
    fn lexical(
        &self,
        req: &LaneRequest,
        depth: usize,
        rows: &mut HashMap<EventKey, Found>,
    ) -> Result<Vec<(EventKey, f64)>, SourceFailure> {
        let terms = tsv::matchable(&req.terms);
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let dfs = self.0.frequencies("kn_event", &terms, tiers::DEFAULT_CAP)?;
        let bounded = tiers::bounded_tiers(&terms, &dfs, tiers::DEFAULT_CAP);
        let mut out = Vec::new();
        for (i, tier) in bounded.iter().enumerate() {
            out = self.lexical_tier(req, &tsv::tier(tier), depth, rows)?;
            if out.len() >= depth || i + 1 == bounded.len() {
                break;
            }
        }
        Ok(out)
    }

    /// One tier of the lexical arm: the events `q` matches, ranked.
    fn lexical_tier(
        &self,
        req: &LaneRequest,
        q: &str,
        depth: usize,
        rows: &mut HashMap<EventKey, Found>,
    ) -> Result<Vec<(EventKey, f64)>, SourceFailure> {
        let (mut f, on_sessions) = episode_filter(Box::new(q.to_string()), req);
        let limit = f.then(Box::new((depth * PER_SESSION_CAP * 2) as i64));
        // Two stages: the matching events are ranked on their `tsv` alone (the GIN index finds
        // them; a session is joined only when a filter asks about sessions), and only the
        // winners' text and sessions are read.
        let ranked_from = if on_sessions {
            EVENT_ROWS
        } else {
            "kn_event e"
        };
        let sql = format!(
            "WITH top AS MATERIALIZED (
                 SELECT e.machine, e.session_id, e.seq,
                        ts_rank(e.tsv, CAST($1::text AS tsquery), 1)::float8 AS rank
                 FROM {ranked_from}
                 WHERE e.tsv @@ CAST($1::text AS tsquery) {}
                 ORDER BY rank DESC, e.machine, e.session_id, e.seq
                 LIMIT {limit})
             SELECT {EVENT_COLS}, {SESSION_COLS}, t.rank
             FROM top t
             JOIN kn_event e ON e.machine = t.machine AND e.session_id = t.session_id
                            AND e.seq = t.seq
             JOIN kn_session s ON s.machine = t.machine AND s.session_id = t.session_id
             ORDER BY t.rank DESC, t.machine, t.session_id, t.seq",
            f.sql
        );
        let found = self.0.with(|c| c.query(&sql, &f.refs()))?;
        let mut per_session: HashMap<(String, String), usize> = HashMap::new();
        let mut out = Vec::new();
        for r in &found {
            let (key, row) = self::found(r);
            let n = per_session
                .entry((key.0.clone(), key.1.clone()))
                .or_default();
            if *n >= PER_SESSION_CAP || out.len() >= depth {
                continue;
            }
            *n += 1;
            out.push((key.clone(), r.get::<_, f64>(27)));
            rows.insert(key, row);
        }
        Ok(out)
    }

    /// The vector arm: (event, cosine) of the events nearest to the query's vector under the
    /// same filters, best first (none on an index without vector codes).
    fn nearest(
        &self,
        req: &LaneRequest,
        query: &[f32],
        depth: usize,
        rows: &mut HashMap<EventKey, Found>,
    ) -> Result<Vec<(EventKey, f32)>, SourceFailure> {
        let Ok(emb) = embed::shared() else {
            return Ok(Vec::new());
        };
        let (mut f, _) = episode_filter(Box::new(vectors::query_bits(query)), req);
        let limit = f.then(Box::new(vectors::candidates(depth) as i64));
        let sql = vectors::nearest_sql(
            "kn_event_vec",
            &["machine", "session_id", "seq"],
            EVENT_ROWS,
            "e.machine = {k}.machine AND e.session_id = {k}.session_id AND e.seq = {k}.seq",
            &format!("{EVENT_COLS}, {SESSION_COLS}"),
            &f.sql,
            &limit,
        );
        let found = self.0.with_version(|c, version| {
            if version < vectors::SINCE_VERSION {
                return Ok(Vec::new());
            }
            c.query(&sql, &f.refs())
        })?;
        let mut windows = Vec::with_capacity(found.len());
        for r in &found {
            let (key, row) = self::found(r);
            let win = r.get::<_, i16>(27).max(0) as usize;
            windows.push((key.clone(), win, row.text.clone()));
            rows.entry(key).or_insert(row);
        }
        Ok(vectors::capped(
            vectors::rescore(emb, query, windows),
            depth,
        ))
    }
}

impl EpisodesSource for TeamEpisodes {
    fn name(&self) -> String {
        self.0.name("episodes")
    }

    fn search(&self, req: &LaneRequest) -> Result<EpisodesAnswer, SourceFailure> {
        let stats = self.stats()?;
        let depth = req.depth.max(1);
        let mut rows: HashMap<EventKey, Found> = HashMap::new();
        let lexical = self.lexical(req, depth, &mut rows)?;
        let nearest = match &req.vector {
            Some(v) => self.nearest(req, v, depth, &mut rows)?,
            None => Vec::new(),
        };
        let fused = vectors::fuse_keys(&lexical, &nearest);
        let mut per_session: HashMap<(String, String), usize> = HashMap::new();
        let mut hits = Vec::new();
        for (key, f) in fused {
            if hits.len() >= depth {
                break;
            }
            let n = per_session
                .entry((key.0.clone(), key.1.clone()))
                .or_default();
            let Some(row) = rows.remove(&key).filter(|_| *n < PER_SESSION_CAP) else {
                continue;
            };
            *n += 1;
            let cut = snippet::cut(&row.text, &req.terms, req.snippet_chars);
            hits.push(EpisodeHit {
                session_id: key.1,
                seq: row.seq,
                event_type: row.event_type,
                time: row.time,
                time_ms: row.time_ms,
                bm25: f.lexical.unwrap_or(0.0),
                lexical: f.lexical.is_some(),
                cosine: f.cosine,
                snippet: redact::redact(&cut).text,
                human: row.human,
                is_error: row.is_error,
                sidechain_agent: row.sidechain_agent,
                session: HitSession::from_row(row.session, Some(row.machine)),
            });
        }
        Ok(EpisodesAnswer {
            stats,
            hits,
            unanswered: Vec::new(),
            nothing_relevant: None,
        })
    }

    fn episode(&self, session_id: &str, seq: u64, context: u64) -> Result<Episode, EpisodeError> {
        let s = self
            .session(session_id)
            .map_err(EpisodeError::Source)?
            .ok_or_else(|| EpisodeError::NoSession(session_id.to_string()))?;
        let (lo, hi) = (
            seq.saturating_sub(context) as i64,
            seq.saturating_add(context).min(i64::MAX as u64) as i64,
        );
        let sid = session_id.to_string();
        let rows = self
            .0
            .with(|c| {
                c.query(
                    "SELECT seq, event_type, time, tool_name, is_error, human, text FROM kn_event
                     WHERE machine = (SELECT min(machine) FROM kn_session WHERE session_id = $1)
                       AND session_id = $1 AND seq BETWEEN $2 AND $3 ORDER BY seq",
                    &[&sid, &lo, &hi],
                )
            })
            .map_err(EpisodeError::Source)?;
        let events = rows.iter().map(|r| FullEvent {
            session_id: session_id.to_string(),
            seq: r.get::<_, i64>(0).max(0) as u64,
            event_type: r.get(1),
            time: r.get(2),
            tool_name: meta_redact::read(r.get(3)),
            is_error: r.get(4),
            human: r.get(5),
            text: r.get(6),
        });
        Episode::assemble(session_id, seq, s, events)
    }

    fn stats(&self) -> Result<LaneStats, SourceFailure> {
        self.0.with(|c| {
            let r = c.query_one(
                "SELECT count(*), coalesce(sum(events), 0)::bigint,
                        count(*) FILTER (WHERE live),
                        (SELECT string_agg(machine || '@' || rev, ',' ORDER BY machine)
                         FROM kn_store_rev WHERE store = 'episodes')
                 FROM kn_session",
                &[],
            )?;
            Ok(LaneStats {
                sessions: r.get::<_, i64>(0).max(0) as u64,
                events: r.get::<_, i64>(1).max(0) as u64,
                live: r.get::<_, i64>(2).max(0) as u64,
                index_rev: r.get::<_, Option<String>>(3).map(|s| rev_of(&s)),
            })
        })
    }

    fn session(&self, session_id: &str) -> Result<Option<SessionRow>, SourceFailure> {
        let sid = session_id.to_string();
        let sql = format!(
            "SELECT {SESSION_COLS} FROM kn_session s WHERE s.session_id = $1
             ORDER BY s.machine LIMIT 1"
        );
        let row = self.0.with(|c| c.query_opt(&sql, &[&sid]))?;
        Ok(row.map(|r| session_row(&r, 0)))
    }

    fn first_human_text(&self, session_id: &str) -> Result<Option<String>, SourceFailure> {
        let sid = session_id.to_string();
        let row = self.0.with(|c| {
            c.query_opt(
                "SELECT text FROM kn_event WHERE session_id = $1 AND human AND text <> ''
                 ORDER BY machine, seq LIMIT 1",
                &[&sid],
            )
        })?;
        Ok(row.map(|r| redact::redact(&r.get::<_, String>(0)).text))
    }

    fn event_time(&self, session_id: &str, seq: u64) -> Result<Option<String>, SourceFailure> {
        let (sid, seq) = (session_id.to_string(), seq.min(i64::MAX as u64) as i64);
        let row = self.0.with(|c| {
            c.query_opt(
                "SELECT time FROM kn_event WHERE session_id = $1 AND seq = $2
                 ORDER BY machine LIMIT 1",
                &[&sid, &seq],
            )
        })?;
        Ok(row.and_then(|r| r.get::<_, Option<String>>(0)))
    }
}

/// A short revision of the team index: what every machine last pushed.
pub(super) fn rev_of(revs: &str) -> String {
    use sha2::{Digest, Sha256};
    let h = Sha256::digest(revs.as_bytes());
    let hex: String = h.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("team:{hex}")
}

/// The team's episodes, code and skills lanes.
pub type TeamLanes = (
    Arc<dyn EpisodesSource>,
    Arc<dyn CodeSource>,
    Arc<dyn SkillsSource>,
);

/// The team's lanes for a URL. Each lane has its own connection, so they are asked at once
/// like local lanes.
pub fn lanes(url: &str, patience: Duration) -> Result<TeamLanes, TeamError> {
    let url = TeamUrl::parse(url)?;
    let conn = |url: TeamUrl| TeamConn::with_patience(url, patience);
    Ok((
        Arc::new(TeamEpisodes(conn(url.clone()))),
        Arc::new(TeamCode(conn(url.clone()))),
        Arc::new(TeamSkills::new(conn(url))),
    ))
}
