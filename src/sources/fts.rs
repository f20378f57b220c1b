//! Bounded full-text matching: the FTS5 `MATCH` expression for a query's terms, shaped so that
//! ranking never has to score an unbounded number of rows.
//!
//! BM25 costs about a microsecond per matching row, so a plain `a OR b OR c` over words that each
//! occur in a tenth of a million events scores hundreds of thousands of rows. When the terms'
//! document frequencies (from an `fts5vocab` view) add up to more than a cap, the expression
//! keeps every rare term as an alternative and requires the common ones together: all of them, or
//! all but one. Rows that match only one common word are the ones BM25 would rank last anyway.
//! The terms stay quoted: the query is always literal.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use rusqlite::Connection;

use crate::text::tokens;

pub mod rank;
pub mod segments;

/// Rows BM25 may score for one query before the expression is narrowed.
pub const DEFAULT_CAP: u64 = 15_000;

/// One term as an FTS5 string: quoted, so it is matched as itself.
pub(crate) fn quote(term: &str) -> String {
    format!("\"{}\"", term.replace('"', "\"\""))
}

/// Document frequency of each term in `fts_table` (0 for an absent one), or `None` when the
/// vocabulary view cannot be made (then the caller falls back to the plain expression).
///
/// `fts5vocab` counts a term's documents by walking its whole doclist, a tenth of a warm search
/// at 2,000 sessions; a long-running process (the explorer, `knowledge mcp`) asks again for the
/// same words, so the counts are kept per store and table ([`KNOWN`]) while the table's structure
/// record (FTS5 rewrites it on every change to the index) and the store's `index_rev` (a
/// fingerprint of what was indexed, so a rebuild that happens to leave a structure record of the
/// same bytes is still a change) are unchanged.
pub(crate) fn document_counts(
    conn: &Connection,
    fts_table: &str,
    terms: &[String],
) -> Option<Vec<u64>> {
    let vocab = format!("{fts_table}_vocab");
    conn.execute_batch(&format!(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.{vocab} USING fts5vocab(main, {fts_table}, row);"
    ))
    .ok()?;
    let mut stmt = conn
        .prepare_cached(&format!("SELECT doc FROM temp.{vocab} WHERE term = ?1"))
        .ok()?;
    let state = index_state(conn, fts_table);
    let mut out: Vec<Option<u64>> = match &state {
        Some(state) => known(state, terms),
        None => vec![None; terms.len()],
    };
    let mut found: Vec<(String, u64)> = Vec::new();
    for (t, df) in terms.iter().zip(out.iter_mut()) {
        if df.is_some() {
            continue;
        }
        match stmt.query_row([t], |r| r.get::<_, i64>(0)) {
            Ok(n) => {
                let n = n.max(0) as u64;
                found.push((t.clone(), n));
                *df = Some(n);
            }
            // An absent term has no row.
            Err(rusqlite::Error::QueryReturnedNoRows) => {
                found.push((t.clone(), 0));
                *df = Some(0);
            }
            // A failed lookup counts as absent, as it always did, but is not remembered.
            Err(_) => *df = Some(0),
        }
    }
    if let Some(state) = state {
        remember(state, found);
    }
    Some(out.into_iter().map(|df| df.unwrap_or(0)).collect())
}

/// Which index a frequency was counted in: the store file, the FTS table, the table's
/// structure record as it was read, and the store's `index_rev`.
#[derive(PartialEq)]
struct IndexState {
    store: String,
    table: String,
    structure: Vec<u8>,
    rev: Option<String>,
}

/// Frequencies counted earlier in this process, per index (a handful: one per FTS table of each
/// store searched).
static KNOWN: Mutex<Vec<(IndexState, HashMap<String, u64>)>> = Mutex::new(Vec::new());

/// Terms remembered per index before the oldest counts are dropped.
const KNOWN_TERMS: usize = 20_000;

/// The state of `fts_table`'s index, or `None` when it cannot be told (an in-memory database,
/// a table without a structure record): then nothing is remembered.
fn index_state(conn: &Connection, fts_table: &str) -> Option<IndexState> {
    let store = conn.path().filter(|p| !p.is_empty())?.to_string();
    // Row 10 of `<table>_data` is FTS5's structure record (its segments and their sizes).
    let structure: Vec<u8> = conn
        .query_row(
            &format!("SELECT block FROM main.{fts_table}_data WHERE id = 10"),
            [],
            |r| r.get(0),
        )
        .ok()?;
    Some(IndexState {
        store,
        table: fts_table.to_string(),
        structure,
        rev: crate::sources::sqlite::meta_get(conn, "index_rev"),
    })
}

fn known(state: &IndexState, terms: &[String]) -> Vec<Option<u64>> {
    let cache = KNOWN.lock().unwrap_or_else(PoisonError::into_inner);
    let dfs = cache.iter().find(|(s, _)| s == state).map(|(_, d)| d);
    terms
        .iter()
        .map(|t| dfs.and_then(|d| d.get(t).copied()))
        .collect()
}

fn remember(state: IndexState, found: Vec<(String, u64)>) {
    if found.is_empty() {
        return;
    }
    let mut cache = KNOWN.lock().unwrap_or_else(PoisonError::into_inner);
    // Counts of an older state of the same index are stale: replace them.
    cache.retain(|(s, _)| s == &state || s.store != state.store || s.table != state.table);
    let at = match cache.iter().position(|(s, _)| s == &state) {
        Some(at) => at,
        None => {
            cache.push((state, HashMap::new()));
            cache.len() - 1
        }
    };
    let dfs = &mut cache[at].1;
    if dfs.len() + found.len() > KNOWN_TERMS {
        dfs.clear();
    }
    dfs.extend(found);
}

/// The `MATCH` expression for `terms` (already stemmed and literal), bounded by `cap`; `None`
/// when no term can match. It is the last (widest) of [`bounded_match_tiers`].
pub fn bounded_match_expr(
    conn: &Connection,
    fts_table: &str,
    terms: &[String],
    cap: u64,
) -> Option<String> {
    bounded_match_tiers(conn, fts_table, terms, cap)
        .pop()
        .map(|m| m.expr)
}

/// One expression to match, with what [`rank::NAME`] needs to rank its rows without counting
/// them again: each phrase's document count, in the expression's phrase order
/// ([`rank::counts_blob`]); `None` when the counts are not known (then it counts, as `bm25`).
#[derive(Debug, Clone, PartialEq)]
pub struct Match {
    pub expr: String,
    pub counts: Option<Vec<u8>>,
}

/// The expressions to try in order, narrowest first: a caller runs the next only when the
/// previous one found too few rows. Under the cap there is one: every term as an alternative.
/// Over it: rare terms or all common terms together; then also all common terms but one.
pub fn bounded_match_tiers(
    conn: &Connection,
    fts_table: &str,
    terms: &[String],
    cap: u64,
) -> Vec<Match> {
    let Some(dfs) = document_counts(conn, fts_table, terms) else {
        return tokens::fts_match_expr(terms)
            .into_iter()
            .map(|expr| Match { expr, counts: None })
            .collect();
    };
    let df_of = |t: &str| terms.iter().position(|x| x == t).map_or(0, |i| dfs[i]);
    bounded_tiers(terms, &dfs, cap)
        .iter()
        .map(|t| Match {
            expr: t.render(&quote, " OR ", " AND "),
            counts: Some(rank::counts_blob(
                &t.phrases().map(df_of).collect::<Vec<u64>>(),
            )),
        })
        .collect()
}

/// One tier of a bounded match: any of `any`, or all the terms of one of `together`.
#[derive(Debug, Clone, PartialEq)]
pub struct Tier {
    pub any: Vec<String>,
    pub together: Vec<Vec<String>>,
}

impl Tier {
    /// The tier in a query language: each term through `quote`, alternatives joined by `or`,
    /// terms required together by `and` (inside parentheses).
    pub fn render(&self, quote: &dyn Fn(&str) -> String, or: &str, and: &str) -> String {
        let mut parts: Vec<String> = self.any.iter().map(|t| quote(t)).collect();
        for group in &self.together {
            let inner: Vec<String> = group.iter().map(|t| quote(t)).collect();
            parts.push(format!("({})", inner.join(and)));
        }
        parts.join(or)
    }

    /// The tier's terms in the order [`Tier::render`] writes them (FTS5 numbers its phrases so).
    pub fn phrases(&self) -> impl Iterator<Item = &str> {
        self.any
            .iter()
            .chain(self.together.iter().flatten())
            .map(String::as_str)
    }
}

/// The tiers for `terms` whose document frequencies are `dfs` (0: the term matches nothing),
/// bounded by `cap`, narrowest first; none when no term matches. The same rule for every store
/// that can say how common a term is (FTS5's vocabulary here, PostgreSQL's statistics for the
/// team index).
pub fn bounded_tiers(terms: &[String], dfs: &[u64], cap: u64) -> Vec<Tier> {
    let mut known: Vec<(&String, u64)> = terms
        .iter()
        .zip(dfs.iter().copied())
        .filter(|(_, df)| *df > 0)
        .collect();
    if known.is_empty() {
        return Vec::new();
    }
    let total: u64 = known.iter().map(|(_, df)| df).sum();
    let tier = |any: Vec<String>, together: Vec<Vec<String>>| Tier { any, together };
    if total <= cap || known.len() == 1 {
        return vec![tier(
            known.iter().map(|(t, _)| t.to_string()).collect(),
            vec![],
        )];
    }
    known.sort_by_key(|(_, df)| *df);
    let mut rare: Vec<String> = Vec::new();
    let mut budget = cap / 2;
    let mut common: Vec<String> = Vec::new();
    for (t, df) in &known {
        if *df <= budget {
            budget -= df;
            rare.push(t.to_string());
        } else {
            common.push(t.to_string());
        }
    }
    let all_but = |skip: Option<usize>| -> Vec<String> {
        common
            .iter()
            .enumerate()
            .filter(|(i, _)| Some(*i) != skip)
            .map(|(_, t)| t.clone())
            .collect()
    };
    match common.len() {
        0 => vec![tier(rare, vec![])],
        1 if rare.is_empty() => vec![tier(common, vec![])],
        1 => vec![tier(rare, vec![])],
        n => {
            let first = tier(rare.clone(), vec![all_but(None)]);
            let mut tiers = vec![first.clone()];
            if n >= 3 {
                let mut wider = first;
                for i in 0..n.min(8) {
                    wider.together.push(all_but(Some(i)));
                }
                tiers.push(wider);
            }
            tiers
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(rows: &[&str]) -> Connection {
        let c = Connection::open_in_memory().expect("db");
        c.execute_batch("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='unicode61')")
            .expect("fts");
        for r in rows {
            c.execute("INSERT INTO t(x) VALUES(?1)", [r])
                .expect("insert");
        }
        c
    }

    fn terms(ts: &[&str]) -> Vec<String> {
        ts.iter().map(|t| t.to_string()).collect()
    }

    #[test]
    fn rare_terms_give_the_plain_or() {
        let c = table(&["a b", "c d", "a"]);
        let e = bounded_match_expr(&c, "t", &terms(&["a", "d", "zz"]), 100).expect("expr");
        assert_eq!(e, "\"a\" OR \"d\"");
    }

    #[test]
    fn common_terms_are_required_together_and_rare_ones_stay() {
        let mut rows = vec!["common other"; 40];
        rows.extend(["common other rare"; 1]);
        rows.extend(["third common other"; 5]);
        let c = table(&rows);
        let e = bounded_match_expr(&c, "t", &terms(&["common", "other", "third", "rare"]), 10)
            .expect("expr");
        assert!(e.starts_with("\"rare\" OR ("), "{e}");
        assert!(e.contains("(\"common\" AND \"other\")"), "{e}");
        // It is valid FTS5 and finds the rare row and the rows with both common words.
        let n: i64 = c
            .query_row("SELECT count(*) FROM t WHERE t MATCH ?1", [&e], |r| {
                r.get(0)
            })
            .expect("query");
        assert_eq!(n, 46);
    }

    #[test]
    fn every_tier_ranks_as_bm25_with_the_counts_it_carries() {
        let mut rows = vec!["common other"; 40];
        rows.extend(["common other rare"; 1]);
        rows.extend(["third common other"; 5]);
        rows.extend(["third common"; 3]);
        let c = table(&rows);
        rank::register(&c).expect("kbm25");
        let ts = terms(&["common", "other", "third", "rare", "absent"]);
        let tiers = bounded_match_tiers(&c, "t", &ts, 10);
        assert_eq!(tiers.len(), 2, "{tiers:?}");
        for m in &tiers {
            let counts = m.counts.clone().expect("counts known");
            let ranked = |call: &str| -> Vec<(i64, u64)> {
                let sql =
                    format!("SELECT rowid, {call} FROM t WHERE t MATCH ?2 ORDER BY {call}, rowid");
                let mut st = c.prepare(&sql).expect("prepare");
                let rows = st
                    .query_map(rusqlite::params![counts, m.expr], |r| {
                        Ok((r.get(0)?, r.get::<_, f64>(1)?.to_bits()))
                    })
                    .expect("query");
                rows.collect::<Result<_, _>>().expect("rows")
            };
            let want = ranked("bm25(t)");
            assert!(!want.is_empty());
            assert_eq!(ranked("kbm25(t, ?1)"), want, "{}", m.expr);
        }
    }

    #[test]
    fn nothing_known_is_none_and_syntax_stays_literal() {
        let c = table(&["x"]);
        assert!(bounded_match_expr(&c, "t", &terms(&["nope"]), 10).is_none());
        let c = table(&["or near"]);
        let e = bounded_match_expr(&c, "t", &terms(&["or", "near"]), 10).expect("expr");
        let n: i64 = c
            .query_row("SELECT count(*) FROM t WHERE t MATCH ?1", [&e], |r| {
                r.get(0)
            })
            .expect("literal OR and NEAR are just words");
        assert_eq!(n, 1);
    }

    #[test]
    fn remembered_frequencies_follow_every_change_to_the_index() {
        let dir = tempfile::tempdir().expect("dir");
        let c = Connection::open(dir.path().join("s.sqlite")).expect("db");
        c.execute_batch(
            "CREATE VIRTUAL TABLE e USING fts5(x, content='', contentless_delete=1,
                 tokenize='unicode61 remove_diacritics 0');
             INSERT INTO e(rowid, x) VALUES (1, 'mysql timeout'), (2, 'mysql'), (3, 'nginx');",
        )
        .expect("fts");
        let ts = terms(&["mysql", "nginx", "absent"]);
        // What the vocabulary says right now, nothing remembered.
        let counted = |c: &Connection| -> Vec<u64> {
            ts.iter()
                .map(|t| {
                    c.query_row("SELECT doc FROM temp.e_vocab WHERE term = ?1", [t], |r| {
                        r.get::<_, i64>(0)
                    })
                    .map_or(0, |n| n as u64)
                })
                .collect()
        };
        assert_eq!(document_counts(&c, "e", &ts), Some(vec![2, 1, 0]));
        let state = index_state(&c, "e").expect("a file-backed table has a state");
        assert_eq!(
            known(&state, &ts),
            vec![Some(2), Some(1), Some(0)],
            "remembered"
        );
        c.execute(
            "INSERT INTO e(rowid, x) VALUES (4, 'mysql nginx absent')",
            [],
        )
        .expect("insert");
        assert_eq!(counted(&c), vec![3, 2, 1]);
        assert_eq!(
            document_counts(&c, "e", &ts),
            Some(counted(&c)),
            "after an insert"
        );
        c.execute("DELETE FROM e WHERE rowid IN (1, 4)", [])
            .expect("delete");
        assert_eq!(
            document_counts(&c, "e", &ts),
            Some(counted(&c)),
            "after a delete"
        );
        let other = Connection::open(dir.path().join("s.sqlite")).expect("db");
        assert_eq!(
            document_counts(&other, "e", &ts),
            Some(counted(&c)),
            "another reader"
        );
    }
}
