//! The team index as a source behind the episodes and code lanes. It answers in the lanes' own
//! types like the built-in stores: lexical search on a `tsvector` of our own token stream (the
//! same stems as the local FTS5 index), the filters in SQL, snippets cut and redacted here, each
//! hit naming the machine that pushed it. A server that is down or refuses degrades the lane with
//! `KNOWLEDGE_SOURCE_UNAVAILABLE`; the connection is made on first use and made again after a
//! failure.

use std::sync::{Arc, Mutex};

use super::{schema, tsv, TeamError, TeamUrl};
use crate::contract::Code;
use crate::engine::items::episode_id;
use crate::engine::lanes::{
    CodeAnswer, CodeHit, CodeLines, CodeSource, CodeStats, Episode, EpisodeError, EpisodeEvent,
    EpisodeHit, EpisodeSession, EpisodesAnswer, EpisodesSource, HitSession, LaneRequest, LaneStats,
    LineRange, ReadCodeError, SessionRow, SourceFailure,
};
use crate::sources::episodes::search::PER_SESSION_CAP;
use crate::text::{redact, snippet};

/// One lazily made connection of a team lane.
pub struct TeamConn {
    url: TeamUrl,
    client: Mutex<Option<postgres::Client>>,
}

impl TeamConn {
    pub fn new(url: TeamUrl) -> Arc<TeamConn> {
        Arc::new(TeamConn {
            url,
            client: Mutex::new(None),
        })
    }

    /// Run `f` on the connection (made, and its schema checked, when there is none); a failure
    /// drops it so the next call connects again.
    fn with<T>(
        &self,
        f: impl FnOnce(&mut postgres::Client) -> Result<T, postgres::Error>,
    ) -> Result<T, SourceFailure> {
        let mut guard = self.client.lock().unwrap_or_else(|p| p.into_inner());
        if guard.is_none() {
            let mut c = self.url.connect().map_err(fail)?;
            let v = schema::check(&mut c).map_err(fail)?;
            if v == 0 {
                return Err(fail(TeamError::Sql(format!(
                    "{} holds no team index yet (run `knowledge push --to …` on a machine)",
                    self.url
                ))));
            }
            *guard = Some(c);
        }
        let Some(client) = guard.as_mut() else {
            return Err(fail(TeamError::Sql("no connection".into())));
        };
        match f(client) {
            Ok(v) => Ok(v),
            Err(e) => {
                *guard = None;
                Err(fail(TeamError::Sql(format!(
                    "{}: {}",
                    self.url,
                    super::describe(&e)
                ))))
            }
        }
    }

    fn name(&self, lane: &str) -> String {
        format!("team.{lane}:{}", self.url)
    }
}

fn fail(e: TeamError) -> SourceFailure {
    SourceFailure::new(Code::SourceUnavailable, e.to_string())
}

/// The episodes lane over the team index.
pub struct TeamEpisodes(pub Arc<TeamConn>);
/// The code lane over the team index.
pub struct TeamCode(pub Arc<TeamConn>);

const SESSION_COLS: &str = "s.session_id, s.source, s.path, s.cwd, s.created_at, \
    s.last_event_at, s.agent_preset, s.title, s.parent_session_id, s.agent_id, s.agent_name, \
    s.agent_description, s.team_name, s.outcome, s.live, s.events, s.machine";

fn session_row(r: &postgres::Row, at: usize) -> SessionRow {
    let s = |i: usize| r.get::<_, Option<String>>(at + i);
    SessionRow {
        session_id: r.get(at),
        source: r.get(at + 1),
        path: r.get(at + 2),
        cwd: s(3),
        created_at: s(4),
        last_event_at: s(5),
        agent_preset: s(6),
        title: s(7),
        parent_session_id: s(8),
        agent_id: s(9),
        agent_name: s(10),
        agent_description: s(11),
        team_name: s(12),
        outcome: r.get(at + 13),
        live: r.get(at + 14),
        events: r.get::<_, i64>(at + 15).max(0) as u64,
    }
}

/// SQL conditions and parameters of a request's filters over `kn_event e JOIN kn_session s`.
struct Filter {
    sql: String,
    params: Vec<Box<dyn postgres::types::ToSql + Sync>>,
}

impl Filter {
    fn add(&mut self, cond: &str, p: Box<dyn postgres::types::ToSql + Sync>) {
        self.params.push(p);
        let n = self.params.len();
        self.sql
            .push_str(&format!(" AND {}", cond.replace("$?", &format!("${n}"))));
    }
    fn refs(&self) -> Vec<&(dyn postgres::types::ToSql + Sync)> {
        self.params.iter().map(|p| p.as_ref() as _).collect()
    }
}

impl EpisodesSource for TeamEpisodes {
    fn name(&self) -> String {
        self.0.name("episodes")
    }

    fn search(&self, req: &LaneRequest) -> Result<EpisodesAnswer, SourceFailure> {
        let stats = self.stats()?;
        let Some(q) = tsv::query(&req.terms) else {
            return Ok(EpisodesAnswer {
                stats,
                hits: Vec::new(),
                nothing_relevant: None,
            });
        };
        let mut f = Filter {
            sql: String::new(),
            params: vec![Box::new(q)],
        };
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
            f.add("s.outcome = $?", Box::new(o.clone()));
        }
        let depth = req.depth.max(1);
        f.params
            .push(Box::new((depth * PER_SESSION_CAP * 2) as i64));
        let sql = format!(
            "SELECT e.seq, e.event_type, e.time, e.time_ms, e.text, e.human, e.is_error,
                    e.sidechain_agent, ts_rank(e.tsv, CAST($1::text AS tsquery), 1)::float8, {SESSION_COLS}
             FROM kn_event e JOIN kn_session s
               ON s.machine = e.machine AND s.session_id = e.session_id
             WHERE e.tsv @@ CAST($1::text AS tsquery) {}
             ORDER BY 9 DESC, e.machine, e.session_id, e.seq
             LIMIT ${}",
            f.sql,
            f.params.len()
        );
        let rows = self.0.with(|c| c.query(&sql, &f.refs()))?;
        let mut per_session: std::collections::HashMap<(String, String), usize> =
            Default::default();
        let mut hits = Vec::new();
        for r in rows {
            let s = session_row(&r, 9);
            let machine: String = r.get(9 + 16);
            let n = per_session
                .entry((machine.clone(), s.session_id.clone()))
                .or_default();
            if *n >= PER_SESSION_CAP {
                continue;
            }
            *n += 1;
            let text: String = r.get(4);
            let cut = snippet::cut(&text, &req.terms, req.snippet_chars);
            hits.push(EpisodeHit {
                session_id: s.session_id.clone(),
                seq: r.get::<_, i64>(0).max(0) as u64,
                event_type: r.get(1),
                time: r.get(2),
                time_ms: r.get(3),
                bm25: r.get(8),
                lexical: true,
                cosine: None,
                snippet: redact::redact(&cut).text,
                human: r.get(5),
                is_error: r.get(6),
                sidechain_agent: r.get(7),
                session: HitSession::from_row(s, Some(machine)),
            });
            if hits.len() >= depth {
                break;
            }
        }
        Ok(EpisodesAnswer {
            stats,
            hits,
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
        let events: Vec<EpisodeEvent> = rows
            .iter()
            .map(|r| {
                let seq = r.get::<_, i64>(0).max(0) as u64;
                EpisodeEvent {
                    id: episode_id(session_id, seq),
                    seq,
                    event_type: r.get(1),
                    time: r.get(2),
                    tool_name: r.get(3),
                    is_error: r.get(4),
                    human: r.get(5),
                    text: redact::redact(&r.get::<_, String>(6)).text,
                }
            })
            .collect();
        if !events.iter().any(|e| e.seq == seq) {
            return Err(EpisodeError::NoEvent(session_id.to_string(), seq));
        }
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
                title: s.title.as_deref().map(|t| redact::redact(t).text),
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
fn rev_of(revs: &str) -> String {
    use sha2::{Digest, Sha256};
    let h = Sha256::digest(revs.as_bytes());
    let hex: String = h.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("team:{hex}")
}

impl CodeSource for TeamCode {
    fn name(&self) -> String {
        self.0.name("code")
    }

    fn search(&self, req: &LaneRequest) -> Result<CodeAnswer, SourceFailure> {
        let index_rev = self.stats()?.index_rev;
        let mut answer = CodeAnswer {
            index_rev,
            capability: "full".to_string(),
            capability_reason: Some("team index: lexical only".to_string()),
            stale: false,
            stale_paths: Vec::new(),
            drift: None,
            hits: Vec::new(),
        };
        let Some(q) = tsv::query(&req.terms) else {
            return Ok(answer);
        };
        let mut f = Filter {
            sql: String::new(),
            params: vec![Box::new(q)],
        };
        if !req.workspaces.is_empty() {
            f.add(
                "EXISTS (SELECT 1 FROM unnest($?::text[]) w \
                 WHERE k.root = w OR starts_with(k.root, rtrim(w, '/') || '/'))",
                Box::new(req.workspaces.clone()),
            );
        }
        if !req.paths.is_empty() {
            f.add(
                "EXISTS (SELECT 1 FROM unnest($?::text[]) p WHERE starts_with(k.path, p) \
                 OR starts_with(k.root || '/' || k.path, p))",
                Box::new(req.paths.clone()),
            );
        }
        if let Some(s) = req.since_ms {
            f.add("k.mtime_ms >= $?", Box::new(s));
        }
        if let Some(u) = req.until_ms {
            f.add("k.mtime_ms <= $?", Box::new(u));
        }
        f.params.push(Box::new(req.depth.max(1) as i64));
        let sql = format!(
            "SELECT k.chunk_id, k.path, k.start_line, k.end_line, k.source_kind, k.symbol,
                    ts_rank(k.tsv, CAST($1::text AS tsquery), 1)::float8, k.text, k.mtime, k.mtime_ms, k.root,
                    k.machine
             FROM kn_chunk k WHERE k.tsv @@ CAST($1::text AS tsquery) {}
             ORDER BY 7 DESC, k.machine, k.chunk_id LIMIT ${}",
            f.sql,
            f.params.len()
        );
        let rows = self.0.with(|c| c.query(&sql, &f.refs()))?;
        answer.hits = rows
            .iter()
            .map(|r| {
                let text: String = r.get(7);
                let machine: String = r.get(11);
                CodeHit {
                    chunk_id: r.get(0),
                    path: r.get(1),
                    start_line: r.get::<_, i64>(2).max(1) as u64,
                    end_line: r.get::<_, i64>(3).max(1) as u64,
                    source_kind: r.get(4),
                    symbol: r.get(5),
                    score: r.get(6),
                    why: vec![format!("lex: team index ({machine})")],
                    snippet: redact::redact(&snippet::cut(&text, &req.terms, req.snippet_chars))
                        .text,
                    mtime: r.get(8),
                    mtime_ms: r.get(9),
                    root: r.get(10),
                }
            })
            .collect();
        Ok(answer)
    }

    fn read(
        &self,
        path: &str,
        range: LineRange,
        chunk: Option<&str>,
    ) -> Result<CodeLines, ReadCodeError> {
        // The team index holds chunks, not files: the lines a chunk covers can be read back.
        let (p, c) = (path.to_string(), chunk.unwrap_or("").to_string());
        let rows = self
            .0
            .with(|cl| {
                cl.query(
                    "SELECT root, path, start_line, end_line, text FROM kn_chunk
                     WHERE (chunk_id = $2 OR $2 = '') AND (path = $1 OR root || '/' || path = $1)
                     ORDER BY chunk_id = $2 DESC, machine, start_line LIMIT 1",
                    &[&p, &c],
                )
            })
            .map_err(|f| ReadCodeError::Unavailable(f.reason))?;
        let Some(r) = rows.first() else {
            return Err(ReadCodeError::NotInSource(format!(
                "{path}: not in the team index"
            )));
        };
        let first = r.get::<_, i64>(2).max(1) as u64;
        let text = redact::redact(&r.get::<_, String>(4)).text;
        let all: Vec<String> = text.lines().map(str::to_string).collect();
        let start = range.start.max(first);
        let end = range
            .end
            .unwrap_or(u64::MAX)
            .min(first + all.len() as u64 - 1);
        let lines: Vec<String> = all
            .iter()
            .enumerate()
            .filter(|(i, _)| (first + *i as u64) >= start && (first + *i as u64) <= end)
            .map(|(_, l)| l.clone())
            .collect();
        Ok(CodeLines {
            root: r.get(0),
            path: r.get(1),
            start_line: start,
            end_line: if lines.is_empty() { 0 } else { end },
            total_lines: r.get::<_, i64>(3).max(0) as u64,
            lines,
            read_from: "team".to_string(),
            redacted: 0,
            index_rev: None,
            freshness: crate::sources::code::Freshness {
                stale: true,
                verified_by: "team index".to_string(),
            },
            chunks: Vec::new(),
        })
    }

    fn stats(&self) -> Result<CodeStats, SourceFailure> {
        self.0.with(|c| {
            let r = c.query_one(
                "SELECT count(DISTINCT (machine, root, path)), count(*),
                        coalesce(array_agg(DISTINCT root) FILTER (WHERE root IS NOT NULL), '{}'),
                        (SELECT string_agg(machine || '@' || rev, ',' ORDER BY machine)
                         FROM kn_store_rev WHERE store = 'code')
                 FROM kn_chunk",
                &[],
            )?;
            Ok(CodeStats {
                files: r.get::<_, i64>(0).max(0) as u64,
                chunks: r.get::<_, i64>(1).max(0) as u64,
                roots: r.get(2),
                index_rev: r.get::<_, Option<String>>(3).map(|s| rev_of(&s)),
            })
        })
    }
}

/// The team's episodes and code lanes.
pub type TeamLanes = (Arc<dyn EpisodesSource>, Arc<dyn CodeSource>);

/// The team's episodes and code lanes for a URL.
/// Each lane has its own connection, so the two are asked at once like local lanes.
pub fn lanes(url: &str) -> Result<TeamLanes, TeamError> {
    let url = TeamUrl::parse(url)?;
    Ok((
        Arc::new(TeamEpisodes(TeamConn::new(url.clone()))),
        Arc::new(TeamCode(TeamConn::new(url))),
    ))
}
