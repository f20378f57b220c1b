//! Bounded full-text matching: the FTS5 `MATCH` expression for a query's terms, shaped so that
//! ranking never has to score an unbounded number of rows.
//!
//! BM25 costs about a microsecond per matching row, so a plain `a OR b OR c` over words that each
//! occur in a tenth of a million events scores hundreds of thousands of rows. When the terms'
//! document frequencies (from an `fts5vocab` view) add up to more than a cap, the expression
//! keeps every rare term as an alternative and requires the common ones together: all of them, or
//! all but one. Rows that match only one common word are the ones BM25 would rank last anyway.
//! The terms stay quoted: the query is always literal.

use rusqlite::Connection;

use crate::text::tokens;

/// Rows BM25 may score for one query before the expression is narrowed.
pub const DEFAULT_CAP: u64 = 15_000;

/// One term as an FTS5 string: quoted, so it is matched as itself.
pub(crate) fn quote(term: &str) -> String {
    format!("\"{}\"", term.replace('"', "\"\""))
}

/// Document frequency of each term in `fts_table`, or `None` when the vocabulary view cannot
/// be made (then the caller falls back to the plain expression).
fn frequencies(conn: &Connection, fts_table: &str, terms: &[String]) -> Option<Vec<u64>> {
    let vocab = format!("{fts_table}_vocab");
    conn.execute_batch(&format!(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.{vocab} USING fts5vocab(main, {fts_table}, row);"
    ))
    .ok()?;
    let mut stmt = conn
        .prepare_cached(&format!("SELECT doc FROM temp.{vocab} WHERE term = ?1"))
        .ok()?;
    let mut out = Vec::with_capacity(terms.len());
    for t in terms {
        let df: i64 = stmt.query_row([t], |r| r.get(0)).unwrap_or(0);
        out.push(df.max(0) as u64);
    }
    Some(out)
}

/// The `MATCH` expression for `terms` (already stemmed and literal), bounded by `cap`; `None`
/// when no term can match. It is the last (widest) of [`bounded_match_tiers`].
pub fn bounded_match_expr(
    conn: &Connection,
    fts_table: &str,
    terms: &[String],
    cap: u64,
) -> Option<String> {
    bounded_match_tiers(conn, fts_table, terms, cap).pop()
}

/// The expressions to try in order, narrowest first: a caller runs the next only when the
/// previous one found too few rows. Under the cap there is one: every term as an alternative.
/// Over it: rare terms or all common terms together; then also all common terms but one.
pub fn bounded_match_tiers(
    conn: &Connection,
    fts_table: &str,
    terms: &[String],
    cap: u64,
) -> Vec<String> {
    let Some(dfs) = frequencies(conn, fts_table, terms) else {
        return tokens::fts_match_expr(terms).into_iter().collect();
    };
    bounded_tiers(terms, &dfs, cap)
        .iter()
        .map(|t| t.render(&quote, " OR ", " AND "))
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
}
