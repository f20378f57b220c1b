//! The team index as a source behind the code lane: the chunks every machine pushed, matched on
//! a `tsvector` of our own token stream (as the episodes lane) and, where the codes were
//! pushed, by the vector arm (`vectors.rs`), filtered in SQL (workspace roots, paths, time),
//! each hit naming its machine. The team holds chunks, not files: reading a
//! hit gives back the lines its chunk covers.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::source::{rev_of, Filter, TeamConn};
use super::{tsv, vectors};
use crate::contract::Capability;
use crate::lanes::{
    CodeAnswer, CodeHit, CodeLines, CodeSource, CodeStats, LaneRequest, LineRange, ReadCodeError,
    SourceFailure,
};
use crate::sources::code::search::name_boost;
use crate::text::{embed, redact, snippet, tokens};

/// The code lane over the team index.
pub struct TeamCode(pub Arc<TeamConn>);

/// A chunk of the team index: (machine, chunk id).
type ChunkKey = (String, String);

/// A chunk found by either arm.
struct Chunk {
    path: String,
    start_line: u64,
    end_line: u64,
    source_kind: String,
    symbol: Option<String>,
    text: String,
    mtime: Option<String>,
    mtime_ms: Option<i64>,
    root: String,
}

const CHUNK_COLS: &str = "k.machine, k.chunk_id, k.path, k.start_line, k.end_line, \
    k.source_kind, k.symbol, k.text, k.mtime, k.mtime_ms, k.root";

fn chunk(r: &postgres::Row) -> (ChunkKey, Chunk) {
    let c = Chunk {
        path: r.get(2),
        start_line: r.get::<_, i64>(3).max(1) as u64,
        end_line: r.get::<_, i64>(4).max(1) as u64,
        source_kind: r.get(5),
        symbol: r.get(6),
        text: r.get(7),
        mtime: r.get(8),
        mtime_ms: r.get(9),
        root: r.get(10),
    };
    ((r.get(0), r.get(1)), c)
}

/// The code filters of a request over `kn_chunk k`, after `first`.
fn code_filter(first: Box<dyn postgres::types::ToSql + Sync>, req: &LaneRequest) -> Filter {
    let mut f = Filter::new(first);
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
    f
}

impl TeamCode {
    /// The lexical arm: (chunk, score) best first, at most `depth`. As locally, more candidates
    /// than asked are ranked by the text match (`ts_rank`), then boosted where the query names
    /// the chunk's symbol or path (`sources::code::search::name_boost`) and cut.
    fn lexical(
        &self,
        req: &LaneRequest,
        depth: usize,
        rows: &mut HashMap<ChunkKey, Chunk>,
    ) -> Result<Vec<(ChunkKey, f64)>, SourceFailure> {
        let Some(q) = tsv::query(&req.terms) else {
            return Ok(Vec::new());
        };
        let mut f = code_filter(Box::new(q), req);
        let limit = f.then(Box::new((depth * 4).max(60) as i64));
        let sql = format!(
            "SELECT {CHUNK_COLS}, ts_rank(k.tsv, CAST($1::text AS tsquery), 1)::float8 AS rank
             FROM kn_chunk k WHERE k.tsv @@ CAST($1::text AS tsquery) {}
             ORDER BY rank DESC, k.machine, k.chunk_id LIMIT {limit}",
            f.sql
        );
        let found = self.0.with(|c| c.query(&sql, &f.refs()))?;
        let qset: HashSet<&str> = req.terms.iter().map(String::as_str).collect();
        let mut ranked: Vec<(ChunkKey, f64, Chunk)> = found
            .iter()
            .map(|r| {
                let (key, c) = chunk(r);
                let sym_terms = c.symbol.as_deref().map(tokens::index_text);
                let boost = name_boost(
                    &qset,
                    c.symbol.as_deref(),
                    sym_terms.as_deref().unwrap_or(""),
                    &tokens::index_text(&c.path),
                );
                (key, r.get::<_, f64>(11) * boost, c)
            })
            .collect();
        ranked.sort_by(|a, b| {
            b.1.total_cmp(&a.1)
                .then_with(|| a.2.root.cmp(&b.2.root))
                .then_with(|| a.2.path.cmp(&b.2.path))
                .then_with(|| a.2.start_line.cmp(&b.2.start_line))
                .then_with(|| a.0.cmp(&b.0))
        });
        ranked.truncate(depth);
        Ok(ranked
            .into_iter()
            .map(|(key, score, c)| {
                rows.insert(key.clone(), c);
                (key, score)
            })
            .collect())
    }

    /// The vector arm: (chunk, cosine) nearest to the query's vector under the same filters,
    /// best first; `None` on an index without vector codes.
    fn nearest(
        &self,
        req: &LaneRequest,
        query: &[f32],
        depth: usize,
        rows: &mut HashMap<ChunkKey, Chunk>,
    ) -> Result<Option<Vec<(ChunkKey, f32)>>, SourceFailure> {
        let Ok(emb) = embed::shared() else {
            return Ok(None);
        };
        let mut f = code_filter(Box::new(vectors::query_bits(query)), req);
        let limit = f.then(Box::new(vectors::candidates(depth) as i64));
        let sql = vectors::nearest_sql(
            "kn_chunk_vec",
            &["machine", "chunk_id"],
            "kn_chunk k",
            "k.machine = {k}.machine AND k.chunk_id = {k}.chunk_id",
            CHUNK_COLS,
            &f.sql,
            &limit,
        );
        let found = self.0.with_version(|c, version| {
            if version < vectors::SINCE_VERSION {
                return Ok(None);
            }
            c.query(&sql, &f.refs()).map(Some)
        })?;
        let Some(found) = found else { return Ok(None) };
        let mut windows = Vec::with_capacity(found.len());
        for r in &found {
            let (key, c) = chunk(r);
            let win = r.get::<_, i16>(11).max(0) as usize;
            let text = crate::sources::vectors::chunk_text(&c.path, c.symbol.as_deref(), &c.text);
            windows.push((key.clone(), win, text));
            rows.entry(key).or_insert(c);
        }
        Ok(Some(vectors::capped(
            vectors::rescore(emb, query, windows),
            depth,
        )))
    }
}

impl CodeSource for TeamCode {
    fn name(&self) -> String {
        self.0.name("code")
    }

    fn search(&self, req: &LaneRequest) -> Result<CodeAnswer, SourceFailure> {
        let index_rev = self.stats()?.index_rev;
        let depth = req.depth.max(1);
        let mut rows: HashMap<ChunkKey, Chunk> = HashMap::new();
        let lexical = self.lexical(req, depth, &mut rows)?;
        let nearest = match &req.vector {
            Some(v) => self.nearest(req, v, depth, &mut rows)?,
            None => None,
        };
        let capability = if nearest.is_some() {
            Capability::Full
        } else {
            Capability::Lexical
        };
        let fused = vectors::fuse_keys(&lexical, nearest.as_deref().unwrap_or_default());
        let hits = fused
            .into_iter()
            .filter_map(|(key, f)| Some((rows.remove(&key)?, key, f)))
            .take(depth)
            .map(|(k, (machine, chunk_id), f)| {
                let mut why = Vec::new();
                if f.lexical.is_some() {
                    why.push(format!("lex: team index ({machine})"));
                }
                if let Some(cos) = f.cosine {
                    why.push(format!("vec: {cos:.2}"));
                }
                CodeHit {
                    chunk_id,
                    path: k.path,
                    start_line: k.start_line,
                    end_line: k.end_line,
                    source_kind: k.source_kind,
                    symbol: k.symbol,
                    score: f
                        .lexical
                        .unwrap_or_else(|| f64::from(f.cosine.unwrap_or(0.0))),
                    why,
                    snippet: redact::redact(&snippet::cut(&k.text, &req.terms, req.snippet_chars))
                        .text,
                    mtime: k.mtime,
                    mtime_ms: k.mtime_ms,
                    root: k.root,
                    machine: Some(machine),
                }
            })
            .collect();
        Ok(CodeAnswer {
            index_rev,
            capability,
            capability_reason: None,
            stale: false,
            stale_paths: Vec::new(),
            nothing_relevant: None,
            drift: None,
            hits,
            unanswered: Vec::new(),
        })
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
            .map_err(ReadCodeError::Unavailable)?;
        let Some(r) = rows.first() else {
            return Err(ReadCodeError::NotInSource(
                format!("{path}: not in the team index").into(),
            ));
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
