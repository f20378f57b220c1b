//! Read-only search over `code.sqlite`: the built-in code source.
//!
//! The lexical arm asks the store's full-text index (`sources::lexical`, beside the store) for a
//! disjunction of the query's terms: BM25, a chunk's symbol and path weighing more than its text
//! (`lexical_docs`), and a rare term dominating through its IDF. On top of that a hit is boosted when
//! query terms name its symbol (most when they spell the symbol's own last segment: the
//! definition of `getUserName` beats its callers) and, a little, its path. Filters (workspaces
//! at a path boundary, path prefixes, file mtime) select files in SQL; the index ranks only the
//! chunks of those files. Freshness is checked only for the files of the hits returned: size +
//! mtime against the index, then the content hash when those differ.
//! When the query has a vector and the store holds chunk vectors, a vector arm finds chunks by
//! meaning under the same filters, fused with the lexical ranking inside this lane
//! ([`vectors::fuse`]); the lane's capability is then `full`.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use rusqlite::{params_from_iter, types::Value as SqlValue, Connection, OptionalExtension};

use super::model::{ChunkHit, CodeQuery, CodeSearch, CodeStats, CodeStoreError};
use super::read::{file_is_stale, FileFingerprint};
use super::{relevant, semantic, store};
use crate::contract::Capability;
use crate::sources::lexical::{LexicalIndex, LexicalQuery, LexicalSlot, TermGroup};
use crate::sources::sqlite::ReadPool;
use crate::sources::vectors::{self, VectorIndex};
use crate::text::{embed, snippet, tokens};

/// The built-in code source: a small pool of read-only connections.
pub struct CodeStore {
    pool: ReadPool,
    vectors: VectorIndex,
    /// The unrelated-cosine distribution of the compiled-in table, measured on first need.
    unrelated: std::sync::OnceLock<Option<relevant::Unrelated>>,
    /// The full-text index beside the store, opened on first need.
    lexical: LexicalSlot,
}

impl CodeStore {
    pub fn open(path: &Path) -> Result<Self, CodeStoreError> {
        if !path.exists() {
            return Err(CodeStoreError::Missing(path.to_path_buf()));
        }
        Ok(CodeStore {
            pool: ReadPool::open(path, "SELECT count(*) FROM files")?,
            vectors: VectorIndex::new(vectors::CHUNKS),
            unrelated: std::sync::OnceLock::new(),
            lexical: LexicalSlot::default(),
        })
    }

    /// Whether the full-text index beside the store opens as this store's, every segment of it
    /// (`doctor`): the code lane cannot search without it.
    pub fn check_lexical(&self) -> Result<(), CodeStoreError> {
        self.with_conn(|c| {
            self.lexical(c)?.searcher()?;
            Ok(())
        })
    }

    /// The full-text index beside the store, checked to be this store's.
    fn lexical(&self, c: &Connection) -> Result<Arc<LexicalIndex>, CodeStoreError> {
        Ok(self.lexical.get(self.path(), c)?)
    }

    pub fn path(&self) -> &Path {
        self.pool.path()
    }

    pub(super) fn with_conn<T>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, CodeStoreError>,
    ) -> Result<T, CodeStoreError> {
        self.pool.with_conn(f)
    }

    pub fn stats(&self) -> Result<CodeStats, CodeStoreError> {
        let roots = self.roots()?;
        self.with_conn(|c| {
            let files: i64 = c.query_row("SELECT count(*) FROM files", [], |r| r.get(0))?;
            let chunks: i64 = c.query_row("SELECT count(*) FROM chunks", [], |r| r.get(0))?;
            Ok(CodeStats {
                index_rev: store::meta_get(c, "index_rev"),
                files: files.max(0) as u64,
                chunks: chunks.max(0) as u64,
                roots,
            })
        })
    }

    /// Every root the index holds files for (or was ever asked to walk), sorted.
    pub fn roots(&self) -> Result<Vec<String>, CodeStoreError> {
        self.with_conn(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT root FROM roots UNION SELECT DISTINCT root FROM files ORDER BY 1",
            )?;
            let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
    }

    /// Parse the embedding table and load the chunk vectors before the first query needs them.
    pub fn warm_vectors(&self) -> Result<(), CodeStoreError> {
        let _ = embed::shared();
        self.with_conn(|c| Ok(self.vectors.warm(c)?))
    }

    /// The best chunks for the query, best first, with freshness of their files.
    pub fn search(&self, q: &CodeQuery) -> Result<CodeSearch, CodeStoreError> {
        let terms = literal_terms(&q.terms);
        let limit = q.limit.max(1);
        let mut out = CodeSearch {
            index_rev: None,
            capability: Capability::Lexical,
            stale: false,
            stale_paths: Vec::new(),
            hits: Vec::new(),
            nothing_relevant: None,
        };
        let mut files: Vec<FileFingerprint> = Vec::new();
        self.with_conn(|c| {
            out.index_rev = store::meta_get(c, "index_rev");
            let mut cands = if terms.is_empty() {
                Vec::new()
            } else {
                let index = self.lexical(c)?;
                candidates(c, &index, q, &terms, limit)?
            };
            let mut arms: HashMap<i64, vectors::FusedRow> = HashMap::new();
            if let Some((v, Ok(emb))) = q.vector.as_deref().map(|v| (v, embed::shared())) {
                if self.vectors.present(c)? {
                    out.capability = Capability::Full;
                    let nearest = semantic::ranking(c, &self.vectors, emb, v, q, limit)?;
                    if let Some(why) = self.nothing_relevant(c, emb, &terms, &cands, &nearest)? {
                        out.nothing_relevant = Some(why);
                        return Ok(());
                    }
                    let lexical: Vec<(i64, f64)> =
                        cands.iter().map(|k| (k.rowid, k.hit.score)).collect();
                    let fused = vectors::fuse(&lexical, &nearest);
                    let mut by_id: HashMap<i64, Candidate> =
                        cands.drain(..).map(|k| (k.rowid, k)).collect();
                    let qset: HashSet<&str> = terms.iter().map(String::as_str).collect();
                    for f in fused.into_iter().take(limit) {
                        let cand = match by_id.remove(&f.id) {
                            Some(k) => Some(k),
                            None => semantic::candidate(c, f.id, q, &qset)?,
                        };
                        if let Some(k) = cand {
                            cands.push(k);
                            arms.insert(f.id, f);
                        }
                    }
                }
            }
            let mut text_stmt = c.prepare_cached("SELECT text, terms FROM chunks WHERE id=?1")?;
            for mut cand in cands {
                let (text, body_terms): (String, String) =
                    text_stmt.query_row([cand.rowid], |r| Ok((r.get(0)?, r.get(1)?)))?;
                let arm = arms.get(&cand.rowid);
                cand.hit.why = if arm.is_none_or(|a| a.lexical.is_some()) {
                    explain(&terms, &cand, &body_terms)
                } else {
                    Vec::new()
                };
                if let Some(cos) = arm.and_then(|a| a.cosine) {
                    cand.hit.why.push(format!("vec: {cos:.2}"));
                    if cand.bm25 == 0.0 {
                        cand.hit.score = round3(f64::from(cos));
                    }
                }
                cand.hit.snippet = snippet::cut(&text, &terms, q.snippet_chars);
                let (rfc, ms) = mtime_parts(cand.file.mtime_ns);
                cand.hit.mtime = rfc;
                cand.hit.mtime_ms = ms;
                out.hits.push(cand.hit);
                files.push(cand.file);
            }
            Ok(())
        })?;
        // Freshness: one check per distinct file of the returned hits.
        let mut checked: HashMap<(String, String), bool> = HashMap::new();
        for (hit, file) in out.hits.iter().zip(&files) {
            let key = (hit.root.clone(), hit.path.clone());
            if checked.contains_key(&key) {
                continue;
            }
            let abs = Path::new(&hit.root).join(&hit.path);
            let stale = file_is_stale(&abs, file);
            if stale {
                out.stale_paths.push(format!("{}/{}", hit.root, hit.path));
            }
            checked.insert(key, stale);
        }
        out.stale = !out.stale_paths.is_empty();
        Ok(out)
    }
}

impl CodeStore {
    /// Why the lane is empty when nothing in the code is about the query (see
    /// [`relevant`]): no lexical hit holds most of its words and the nearest chunk is no nearer
    /// than an unrelated query's would be.
    fn nothing_relevant(
        &self,
        c: &Connection,
        emb: &embed::Embedder,
        terms: &[String],
        lexical: &[Candidate],
        nearest: &[(i64, f32)],
    ) -> rusqlite::Result<Option<String>> {
        let ids: Vec<i64> = lexical.iter().map(|k| k.rowid).collect();
        if relevant::holds_most_terms(c, terms, &ids)? {
            return Ok(None);
        }
        // The vector arm never counts a chunk below `MIN_COSINE`; above it, a chunk must beat
        // what an unrelated query reaches among this store's chunks.
        let unrelated = *self
            .unrelated
            .get_or_init(|| relevant::Unrelated::measure(emb));
        let chunks = self.vectors.len(c)?;
        let bar = unrelated.map_or(vectors::MIN_COSINE, |u| {
            u.best_of(chunks).max(vectors::MIN_COSINE)
        });
        let best = nearest.first().map_or(f32::MIN, |(_, cos)| *cos);
        Ok((best < bar).then(|| {
            format!(
                "{}: no chunk holds most of the query's words; nearest chunk {best:.2} < {bar:.2} (an unrelated query's best)",
                crate::sources::NOTHING_RELEVANT
            )
        }))
    }
}

/// A hit before it is explained and cut.
pub(super) struct Candidate {
    pub(super) rowid: i64,
    hit: ChunkHit,
    bm25: f64,
    sym_terms: String,
    path_terms: String,
    file: FileFingerprint,
}

/// The best `limit` chunks for `terms` under the filters, rescored with the name boosts.
fn candidates(
    c: &Connection,
    index: &LexicalIndex,
    q: &CodeQuery,
    terms: &[String],
    limit: usize,
) -> Result<Vec<Candidate>, CodeStoreError> {
    let files = filtered_files(c, q)?;
    if files.as_ref().is_some_and(HashSet::is_empty) {
        return Ok(Vec::new());
    }
    let searcher = index.searcher()?;
    let query = LexicalQuery {
        groups: terms
            .iter()
            .map(|t| TermGroup {
                terms: vec![t.clone()],
                weight: 1.0,
            })
            .collect(),
        keys: files.map(Arc::new),
        // Deeper than the limit so the boosts can reorder.
        limit: (limit * 4).max(60),
        ..LexicalQuery::default()
    };
    let ranked = index.rank(&searcher, &query)?;
    let mut row = c.prepare_cached(&format!(
        "SELECT {CAND_COLS}, ?2, {CAND_TAIL}
         FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id = ?1"
    ))?;
    let qset: HashSet<&str> = terms.iter().map(String::as_str).collect();
    let mut cands: Vec<Candidate> = Vec::new();
    for r in ranked {
        // A chunk the index holds but this read's snapshot of the store does not (the writer
        // committed in between) is left out.
        if let Some(cand) = row
            .query_row(rusqlite::params![r.id, r.score], |row| {
                candidate_row(row, &qset)
            })
            .optional()?
        {
            cands.push(cand);
        }
    }
    cands.sort_by(|a, b| {
        b.hit
            .score
            .partial_cmp(&a.hit.score)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| a.hit.root.cmp(&b.hit.root))
            .then_with(|| a.hit.path.cmp(&b.hit.path))
            .then_with(|| a.hit.start_line.cmp(&b.hit.start_line))
            .then_with(|| a.hit.chunk_id.cmp(&b.hit.chunk_id))
    });
    cands.truncate(limit);
    Ok(cands)
}

/// The ids of the files the request's filters let through (`None`: no filter, every file).
fn filtered_files(c: &Connection, q: &CodeQuery) -> Result<Option<HashSet<u64>>, CodeStoreError> {
    let filtered = !(q.workspaces.is_empty()
        && q.paths.is_empty()
        && q.since_ms.is_none()
        && q.until_ms.is_none());
    if !filtered {
        return Ok(None);
    }
    let mut sql = "SELECT f.id FROM files f WHERE 1".to_string();
    let mut args = Vec::new();
    push_filters(&mut sql, &mut args, q, "f");
    let mut stmt = c.prepare_cached(&sql)?;
    let ids = stmt
        .query_map(params_from_iter(args.iter()), |r| r.get::<_, i64>(0))?
        .map(|id| id.map(|id| id as u64))
        .collect::<rusqlite::Result<HashSet<u64>>>()?;
    Ok(Some(ids))
}

/// The columns of a candidate row: `CAND_COLS`, the score, `CAND_TAIL`.
pub(super) const CAND_COLS: &str = "c.id, c.chunk_id, c.root, c.path, c.start_line, c.end_line,
    c.source_kind, c.symbol, c.symbol_kind";
pub(super) const CAND_TAIL: &str = "c.sym_terms, c.path_terms, f.size, f.mtime_ns, f.sha256";

/// A candidate from a row laid out as `CAND_COLS, score, CAND_TAIL`.
pub(super) fn candidate_row(
    r: &rusqlite::Row<'_>,
    qset: &HashSet<&str>,
) -> rusqlite::Result<Candidate> {
    {
        let bm25: f64 = r.get(9)?;
        let symbol: Option<String> = r.get(7)?;
        let sym_terms: String = r.get(10)?;
        let path_terms: String = r.get(11)?;
        let boost = name_boost(qset, symbol.as_deref(), &sym_terms, &path_terms);
        Ok(Candidate {
            rowid: r.get(0)?,
            hit: ChunkHit {
                chunk_id: r.get(1)?,
                root: r.get(2)?,
                path: r.get(3)?,
                start_line: r.get::<_, i64>(4)?.max(0) as u64,
                end_line: r.get::<_, i64>(5)?.max(0) as u64,
                source_kind: r.get(6)?,
                symbol,
                symbol_kind: r.get(8)?,
                score: round3(bm25 * boost),
                why: Vec::new(),
                snippet: String::new(),
                mtime: String::new(),
                mtime_ms: 0,
            },
            bm25,
            sym_terms,
            path_terms,
            file: FileFingerprint {
                size: r.get::<_, i64>(12)?.max(0) as u64,
                mtime_ns: r.get(13)?,
                sha256: r.get(14)?,
            },
        })
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// Multiplier for a chunk whose symbol or path the query names.
///
/// `1 + share of query terms in the symbol + 1 when the symbol's last segment is spelled entirely
/// by query terms + 0.25 × share of query terms in the path`.
pub(crate) fn name_boost(
    q: &HashSet<&str>,
    symbol: Option<&str>,
    sym_terms: &str,
    path_terms: &str,
) -> f64 {
    if q.is_empty() {
        return 1.0;
    }
    let n = q.len() as f64;
    let share = |terms: &str| {
        let set: HashSet<&str> = terms.split_whitespace().collect();
        q.iter().filter(|t| set.contains(*t)).count() as f64 / n
    };
    let mut boost = 1.0 + share(sym_terms) + 0.25 * share(path_terms);
    if let Some(sym) = symbol {
        let leaf = sym
            .rsplit([':', '.', '\\', '/', ' '])
            .find(|s| !s.is_empty())
            .unwrap_or(sym);
        if leaf_spelled_by(leaf, q) {
            boost += 1.0;
        }
    }
    boost
}

/// True when the query holds every word part of `leaf` (`mysqlConnect` ← `mysql connection`), or
/// the whole identifier (`getusernam` ← `getUserName`).
fn leaf_spelled_by(leaf: &str, q: &HashSet<&str>) -> bool {
    let toks = tokens::tokenize(leaf);
    if toks.is_empty() {
        return false;
    }
    // A compound identifier's whole-word term spans its parts; it is not a part itself.
    let is_part = |t: &tokens::Token| {
        !toks
            .iter()
            .any(|o| o.start >= t.start && o.end <= t.end && (o.end - o.start) < (t.end - t.start))
    };
    let parts_match = toks
        .iter()
        .filter(|t| is_part(t))
        .all(|t| q.contains(t.term.as_str()));
    let whole_match = toks
        .iter()
        .filter(|t| !is_part(t))
        .any(|t| q.contains(t.term.as_str()));
    parts_match || whole_match
}

/// `lex:` per query term found, `symbol:` when a term names the symbol, `path:`, `bm25:`.
fn explain(terms: &[String], cand: &Candidate, body_terms: &str) -> Vec<String> {
    let body: HashSet<&str> = body_terms.split_whitespace().collect();
    let sym: HashSet<&str> = cand.sym_terms.split_whitespace().collect();
    let path: HashSet<&str> = cand.path_terms.split_whitespace().collect();
    let mut why = Vec::new();
    for t in terms {
        let t = t.as_str();
        if body.contains(t) || sym.contains(t) || path.contains(t) {
            why.push(format!("lex: {t}"));
        }
    }
    if let Some(s) = &cand.hit.symbol {
        if terms.iter().any(|t| sym.contains(t.as_str())) {
            why.push(format!("symbol: {s}"));
        }
    }
    if terms.iter().any(|t| path.contains(t.as_str())) {
        why.push(format!("path: {}", cand.hit.path));
    }
    why.push(format!("bm25: {:.2}", cand.bm25));
    why
}

/// RFC 3339 (UTC, seconds) and milliseconds of an mtime in nanoseconds.
fn mtime_parts(ns: i64) -> (String, i64) {
    let secs = ns.div_euclid(1_000_000_000);
    let nanos = ns.rem_euclid(1_000_000_000) as u32;
    let rfc = chrono::DateTime::from_timestamp(secs, nanos)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_default();
    (rfc, ns.div_euclid(1_000_000))
}

/// Query terms made safe: already-stemmed terms pass; anything else is cut at non-alphanumerics
/// and lowercased, so FTS syntax (`"`, `*`, `NEAR(`, `-`, `:`) is only ever literal text.
pub fn literal_terms(terms: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in terms {
        for part in t.split(|c: char| !c.is_alphanumeric()) {
            let part = part.to_lowercase();
            if !part.is_empty() && !out.contains(&part) {
                out.push(part);
            }
        }
    }
    out
}

/// Trailing separators off (except a bare root).
fn trim_sep(s: &str) -> &str {
    let t = s.trim_end_matches(['/', '\\']);
    if t.is_empty() {
        &s[..s.len().min(1)]
    } else {
        t
    }
}

/// The forms a workspace may match: as given and, when it exists, canonical.
fn workspace_forms(w: &str) -> Vec<String> {
    let mut forms = vec![trim_sep(w).to_string()];
    if let Ok(c) = Path::new(w).canonicalize() {
        if let Some(s) = c.to_str() {
            let s = trim_sep(s).to_string();
            if !forms.contains(&s) {
                forms.push(s);
            }
        }
    }
    forms
}

/// Adds the request's filters as SQL conditions (never string-interpolating user values) on the
/// table aliased `row`, which has the file's `root` and `path`, and the files table `f`.
pub(super) fn push_filters(sql: &mut String, args: &mut Vec<SqlValue>, q: &CodeQuery, row: &str) {
    let abs = format!("({row}.root || '/' || {row}.path)");
    let abs = abs.as_str();
    if !q.workspaces.is_empty() {
        let mut parts = Vec::new();
        for w in q.workspaces.iter().flat_map(|w| workspace_forms(w)) {
            if w == "/" || w == "\\" {
                parts.push("1".to_string());
                continue;
            }
            // The root is W or under W; or W is a folder inside the root and the file under W.
            parts.push(format!(
                "({row}.root = ? OR substr({row}.root, 1, length(?) + 1) IN (? || '/', ? || '\\')
                  OR (substr(?, 1, length({row}.root) + 1) IN ({row}.root || '/', {row}.root || '\\')
                      AND substr({abs}, 1, length(?) + 1) = ? || '/'))"
            ));
            for _ in 0..7 {
                args.push(SqlValue::Text(w.clone()));
            }
        }
        sql.push_str(&format!(" AND ({})", parts.join(" OR ")));
    }
    if !q.paths.is_empty() {
        let mut parts = Vec::new();
        for p in &q.paths {
            let absolute = Path::new(p).is_absolute() || p.starts_with('/');
            let p = if absolute {
                trim_sep(p).to_string()
            } else {
                let p = p.replace('\\', "/");
                p.trim_start_matches("./").trim_matches('/').to_string()
            };
            if p.is_empty() || p == "/" {
                parts.push("1".to_string());
                continue;
            }
            let rel = format!("{row}.path");
            let col = if absolute { abs } else { rel.as_str() };
            parts.push(format!(
                "({col} = ? OR substr({col}, 1, length(?) + 1) = ? || '/')"
            ));
            for _ in 0..3 {
                args.push(SqlValue::Text(p.clone()));
            }
        }
        sql.push_str(&format!(" AND ({})", parts.join(" OR ")));
    }
    if let Some(since) = q.since_ms {
        sql.push_str(" AND f.mtime_ns >= ?");
        args.push(SqlValue::Integer(since.saturating_mul(1_000_000)));
    }
    if let Some(until) = q.until_ms {
        sql.push_str(" AND f.mtime_ns <= ?");
        args.push(SqlValue::Integer(
            until.saturating_mul(1_000_000).saturating_add(999_999),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_terms_strip_syntax() {
        let raw: Vec<String> = ["\"a*", "NEAR(b", "-c:d", "OR", "x"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(literal_terms(&raw), ["a", "near", "b", "c", "d", "or", "x"]);
    }

    #[test]
    fn leaf_names() {
        let q: HashSet<&str> = ["mysql", "connect"].into_iter().collect();
        assert!(leaf_spelled_by("mysqlConnect", &q));
        assert!(leaf_spelled_by("Connection", &q));
        assert!(!leaf_spelled_by("mysqlDsn", &q));
        let q: HashSet<&str> = ["getusernam"].into_iter().collect();
        assert!(leaf_spelled_by("getUserName", &q));
    }

    #[test]
    fn definitions_outrank_mentions() {
        let q: HashSet<&str> = ["get", "user", "name", "getusernam"].into_iter().collect();
        let def = name_boost(
            &q,
            Some("CartService.getUserName"),
            "cart servic get user name getusernam cartservic",
            "src cart ts",
        );
        let caller = name_boost(
            &q,
            Some("CartService.render"),
            "cart servic render cartservic",
            "src cart ts",
        );
        assert!(def > 2.5 * caller, "{def} vs {caller}");
        assert_eq!(mtime_parts(1_500_000_000_123_456_789).1, 1_500_000_000_123);
    }
}
