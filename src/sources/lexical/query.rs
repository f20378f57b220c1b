//! Asking the full-text index: the best rows for a question (a disjunction of its terms, BM25,
//! top-k with block-max WAND, at most so many rows per group), and whether given rows hold a term.
//!
//! Filters are applied inside the engine, as a predicate on each candidate's fast fields (its
//! group and time), so a filtered question still ranks only rows it may return.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use tantivy::collector::TopDocs;
use tantivy::columnar::Column;
use tantivy::query::doc_predicate_query::{
    ConstOrVariableSegmentPredicate, DocPredicate, DocPredicateQuery, SegmentDocPredicate,
};
use tantivy::query::{
    AllScorer, BooleanQuery, BoostQuery, ConstScoreQuery, Occur, Query, TermQuery,
};
use tantivy::schema::IndexRecordOption;
use tantivy::tokenizer::TokenStream;
use tantivy::{DocAddress, DocId, DocSet, Searcher, SegmentReader, Term, TERMINATED};

use super::{analyzer, Fields, LexicalError, LexicalIndex};

/// Alternatives that stand for one word of a question, with their weight against the
/// question's own words (1.0): the word itself, or its translations at a lower weight.
#[derive(Debug, Clone, PartialEq)]
pub struct TermGroup {
    pub terms: Vec<String>,
    pub weight: f32,
}

/// What to rank.
#[derive(Debug, Clone, Default)]
pub struct LexicalQuery {
    pub groups: Vec<TermGroup>,
    /// Only rows of these groups (`None`: every group).
    pub keys: Option<Arc<HashSet<u64>>>,
    /// Only rows at or after / at or before this time (ms); a row without a time is then left out.
    pub since_ms: Option<i64>,
    pub until_ms: Option<i64>,
    /// At most this many rows of one group in the answer (0: no cap).
    pub per_key: usize,
    pub limit: usize,
}

impl LexicalQuery {
    fn filtered(&self) -> bool {
        self.keys.is_some() || self.since_ms.is_some() || self.until_ms.is_some()
    }
}

/// One ranked row: its id in the store, its group, its BM25 score, where it is in the index.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranked {
    pub id: i64,
    pub key: u64,
    pub score: f64,
    pub addr: DocAddress,
}

/// The index's tokens of `term` (a stemmed term may still be two words: a phrase of an
/// identifier, `config toml`).
pub(crate) fn tokens_of(term: &str) -> Vec<String> {
    let mut a = analyzer();
    let mut stream = a.token_stream(term);
    let mut out = Vec::new();
    while stream.advance() {
        out.push(stream.token().text.clone());
    }
    out
}

/// The filter as Tantivy evaluates it on each candidate.
#[derive(Debug, Clone)]
struct Filter {
    keys: Option<Arc<HashSet<u64>>>,
    since_ms: Option<i64>,
    until_ms: Option<i64>,
}

struct SegmentFilter {
    filter: Filter,
    keys: Column<u64>,
    times: Column<i64>,
}

impl SegmentDocPredicate for SegmentFilter {
    fn eval(&mut self, doc: DocId) -> bool {
        let f = &self.filter;
        if let Some(keys) = &f.keys {
            if !self.keys.first(doc).is_some_and(|k| keys.contains(&k)) {
                return false;
            }
        }
        if f.since_ms.is_some() || f.until_ms.is_some() {
            let Some(t) = self.times.first(doc) else {
                return false;
            };
            if f.since_ms.is_some_and(|s| t < s) || f.until_ms.is_some_and(|u| t > u) {
                return false;
            }
        }
        true
    }

    fn cost(&self) -> u64 {
        10
    }
}

impl DocPredicate for Filter {
    type SegmentDocPredicate = SegmentFilter;

    fn doc_predicate(
        &self,
        reader: &SegmentReader,
    ) -> tantivy::Result<ConstOrVariableSegmentPredicate<SegmentFilter>> {
        Ok(ConstOrVariableSegmentPredicate::Variable {
            predicate: SegmentFilter {
                filter: self.clone(),
                keys: reader.fast_fields().u64(Fields::KEY)?,
                times: reader.fast_fields().i64(Fields::TIME)?,
            },
            necessary_condition: Box::new(AllScorer::new(reader.max_doc())),
        })
    }
}

/// The id and group columns of every segment of one searcher.
struct Columns {
    ids: Vec<Column<u64>>,
    keys: Vec<Column<u64>>,
}

impl Columns {
    fn of(searcher: &Searcher) -> Result<Columns, LexicalError> {
        let mut ids = Vec::new();
        let mut keys = Vec::new();
        for seg in searcher.segment_readers() {
            ids.push(seg.fast_fields().u64(Fields::ID)?);
            keys.push(seg.fast_fields().u64(Fields::KEY)?);
        }
        Ok(Columns { ids, keys })
    }

    fn row(&self, addr: DocAddress) -> Option<(i64, u64)> {
        let seg = addr.segment_ord as usize;
        let id = self.ids.get(seg)?.first(addr.doc_id)?;
        let key = self.keys.get(seg)?.first(addr.doc_id)?;
        Some((i64::try_from(id).ok()?, key))
    }
}

impl LexicalIndex {
    fn build(&self, q: &LexicalQuery) -> Box<dyn Query> {
        let fields = self.fields();
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        let mut seen: HashSet<String> = HashSet::new();
        for g in &q.groups {
            for t in &g.terms {
                for tok in tokens_of(t) {
                    if !seen.insert(tok.clone()) {
                        continue;
                    }
                    let term = TermQuery::new(
                        Term::from_field_text(fields.terms, &tok),
                        IndexRecordOption::WithFreqs,
                    );
                    clauses.push((
                        Occur::Should,
                        Box::new(BoostQuery::new(Box::new(term), g.weight)),
                    ));
                }
            }
        }
        let text = BooleanQuery::new(clauses);
        if !q.filtered() {
            return Box::new(text);
        }
        let filter = DocPredicateQuery::from(Filter {
            keys: q.keys.clone(),
            since_ms: q.since_ms,
            until_ms: q.until_ms,
        });
        Box::new(BooleanQuery::new(vec![
            (Occur::Must, Box::new(text) as Box<dyn Query>),
            (
                Occur::Must,
                Box::new(ConstScoreQuery::new(Box::new(filter), 0.0)),
            ),
        ]))
    }

    /// The best rows for `q`, best first, at most `q.per_key` of one group: the candidate list
    /// deepens until enough survive the cap or the matches run out.
    pub fn rank(&self, searcher: &Searcher, q: &LexicalQuery) -> Result<Vec<Ranked>, LexicalError> {
        if q.groups.iter().all(|g| g.terms.is_empty()) || q.limit == 0 {
            return Ok(Vec::new());
        }
        let query = self.build(q);
        let cols = Columns::of(searcher)?;
        let mut depth = (q.limit * 8).max(64);
        loop {
            let top = searcher.search(&*query, &TopDocs::with_limit(depth).order_by_score())?;
            let mut per_key: HashMap<u64, usize> = HashMap::new();
            let mut picked = Vec::new();
            for (score, addr) in &top {
                let Some((id, key)) = cols.row(*addr) else {
                    continue;
                };
                let n = per_key.entry(key).or_default();
                if (q.per_key == 0 || *n < q.per_key) && picked.len() < q.limit {
                    *n += 1;
                    picked.push(Ranked {
                        id,
                        key,
                        score: f64::from(*score),
                        addr: *addr,
                    });
                }
            }
            if picked.len() >= q.limit || top.len() < depth || depth >= 1 << 20 {
                return Ok(picked);
            }
            depth *= 4;
        }
    }

    /// The ids of `among` that hold `term` (every token of it, in any order).
    pub fn holders(
        &self,
        searcher: &Searcher,
        term: &str,
        among: &[Ranked],
    ) -> Result<HashSet<i64>, LexicalError> {
        let tokens = tokens_of(term);
        let mut out: HashSet<i64> = HashSet::new();
        if tokens.is_empty() || among.is_empty() {
            return Ok(out);
        }
        let mut by_segment: HashMap<u32, Vec<(DocId, i64)>> = HashMap::new();
        for r in among {
            by_segment
                .entry(r.addr.segment_ord)
                .or_default()
                .push((r.addr.doc_id, r.id));
        }
        let field = self.fields().terms;
        for (seg, mut docs) in by_segment {
            docs.sort_unstable();
            let reader = searcher.segment_reader(seg);
            let inverted = reader.inverted_index(field)?;
            let mut held: Vec<bool> = vec![true; docs.len()];
            for tok in &tokens {
                let term = Term::from_field_text(field, tok);
                let Some(mut postings) = inverted
                    .read_postings(&term, IndexRecordOption::Basic)
                    .map_err(|e| LexicalError::Tantivy(e.into()))?
                else {
                    held.iter_mut().for_each(|h| *h = false);
                    break;
                };
                // Both lists ascend, so one pass seeks each posting list forward only.
                for (i, (doc, _)) in docs.iter().enumerate() {
                    if !held[i] {
                        continue;
                    }
                    let at = if postings.doc() < *doc {
                        postings.seek(*doc)
                    } else {
                        postings.doc()
                    };
                    held[i] = at == *doc;
                }
            }
            out.extend(
                docs.iter()
                    .zip(held)
                    .filter(|(_, h)| *h)
                    .map(|((_, id), _)| *id),
            );
        }
        Ok(out)
    }

    /// Up to `limit` live rows holding `term` (every token of it), as (id, group), in index
    /// order: enough to tell whether a term is rare without walking a common one to its end.
    pub fn rows_holding(
        &self,
        searcher: &Searcher,
        term: &str,
        limit: usize,
    ) -> Result<Vec<(i64, u64)>, LexicalError> {
        let tokens = tokens_of(term);
        let mut out = Vec::new();
        if tokens.is_empty() {
            return Ok(out);
        }
        let cols = Columns::of(searcher)?;
        let field = self.fields().terms;
        for (ord, reader) in searcher.segment_readers().iter().enumerate() {
            let inverted = reader.inverted_index(field)?;
            let mut lists = Vec::new();
            for tok in &tokens {
                let term = Term::from_field_text(field, tok);
                match inverted
                    .read_postings(&term, IndexRecordOption::Basic)
                    .map_err(|e| LexicalError::Tantivy(e.into()))?
                {
                    Some(p) => lists.push(p),
                    None => {
                        lists.clear();
                        break;
                    }
                }
            }
            if lists.is_empty() {
                continue;
            }
            lists.sort_by_key(|p| p.doc_freq());
            let alive = reader.alive_bitset();
            let mut doc = lists[0].doc();
            'walk: while doc != TERMINATED {
                for other in lists.iter_mut().skip(1) {
                    let d = if other.doc() < doc {
                        other.seek(doc)
                    } else {
                        other.doc()
                    };
                    if d > doc {
                        doc = lists[0].seek(d);
                        continue 'walk;
                    }
                }
                if alive.is_none_or(|a| a.is_alive(doc)) {
                    let addr = DocAddress::new(ord as u32, doc);
                    if let Some(row) = cols.row(addr) {
                        out.push(row);
                        if out.len() >= limit {
                            return Ok(out);
                        }
                    }
                }
                doc = lists[0].advance();
            }
        }
        Ok(out)
    }
}
