use rusqlite::Connection;

use super::*;

/// A contentless-delete table like the episodes store's and a two-column one like the code
/// store's, with rows deleted from both (deleted rows must not count as documents).
fn tables() -> Connection {
    let c = Connection::open_in_memory().expect("db");
    register(&c).expect("register");
    c.execute_batch(
        "CREATE VIRTUAL TABLE e USING fts5(x, content='', contentless_delete=1,
             tokenize='unicode61 remove_diacritics 0');
         CREATE VIRTUAL TABLE m USING fts5(a, b, tokenize='unicode61');",
    )
    .expect("tables");
    let words = [
        "mysql",
        "timeout",
        "nginx",
        "deploy",
        "error",
        "пароль",
        "сервер",
        "cache",
    ];
    for i in 0..400u64 {
        // Every row gets a few words in a spread that gives each word its own frequency.
        let mut row: Vec<&str> = Vec::new();
        for (k, w) in words.iter().enumerate() {
            let k = k as u64 + 2;
            if i.is_multiple_of(k) || (i * 7 + k).is_multiple_of(11) {
                for _ in 0..(1 + (i + k) % 3) {
                    row.push(w);
                }
            }
        }
        row.push("filler");
        let text = row.join(" ");
        c.execute(
            "INSERT INTO e(rowid, x) VALUES (?1, ?2)",
            rusqlite::params![i, text],
        )
        .expect("insert");
        let (a, b) = row.split_at(row.len() / 2);
        let (a, b) = (a.join(" "), b.join(" "));
        c.execute(
            "INSERT INTO m(rowid, a, b) VALUES (?1, ?2, ?3)",
            rusqlite::params![i, a, b],
        )
        .expect("insert");
    }
    c.execute_batch("DELETE FROM e WHERE rowid % 9 = 0; DELETE FROM m WHERE rowid % 13 = 0;")
        .expect("delete");
    c
}

fn doc_count(c: &Connection, table: &str, term: &str) -> u64 {
    c.query_row(
        &format!("SELECT count(*) FROM {table} WHERE {table} MATCH ?1"),
        [super::super::quote(term)],
        |r| r.get::<_, i64>(0),
    )
    .expect("count") as u64
}

/// (rowid, score) of every match, by `bm25_call` (a SQL expression over `table`).
fn scores(
    c: &Connection,
    table: &str,
    call: &str,
    expr: &str,
    counts: Option<Vec<u8>>,
) -> Vec<(i64, f64)> {
    let sql =
        format!("SELECT rowid, {call} FROM {table} WHERE {table} MATCH ?2 ORDER BY {call}, rowid");
    let mut st = c.prepare(&sql).expect("prepare");
    let rows = st
        .query_map(rusqlite::params![counts, expr], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .expect("query");
    rows.collect::<Result<_, _>>().expect("rows")
}

#[test]
fn given_counts_give_bm25_bit_for_bit() {
    let c = tables();
    let cases: &[(&str, &str, &str, &[&str])] = &[
        (
            "e",
            "bm25(e)",
            "kbm25(e, ?1)",
            &["mysql", "timeout", "nginx"],
        ),
        (
            "e",
            "bm25(e)",
            "kbm25(e, ?1)",
            &["пароль", "deploy", "error", "cache", "сервер"],
        ),
        (
            "m",
            "bm25(m, 1.0, 8.0)",
            "kbm25(m, ?1, 1.0, 8.0)",
            &["mysql", "cache", "error"],
        ),
        ("m", "bm25(m)", "kbm25(m, ?1)", &["nginx", "filler"]),
    ];
    for (table, plain, ours, words) in cases {
        let terms: Vec<String> = words.iter().map(|w| w.to_string()).collect();
        // Plain OR, and the bounded shape: rare terms or common ones together, a term twice.
        let or = terms
            .iter()
            .map(|t| super::super::quote(t))
            .collect::<Vec<_>>()
            .join(" OR ");
        let grouped = format!(
            "{} OR ({} AND {}) OR ({} AND {})",
            super::super::quote(&terms[0]),
            super::super::quote(&terms[1]),
            super::super::quote(&terms[2 % terms.len()]),
            super::super::quote(&terms[1]),
            super::super::quote(&terms[0]),
        );
        let phrases_or: Vec<&String> = terms.iter().collect();
        let phrases_grouped = [
            &terms[0],
            &terms[1],
            &terms[2 % terms.len()],
            &terms[1],
            &terms[0],
        ];
        for (expr, phrases) in [(or, phrases_or), (grouped, phrases_grouped.to_vec())] {
            let counts: Vec<u64> = phrases.iter().map(|t| doc_count(&c, table, t)).collect();
            let want = scores(&c, table, plain, &expr, None);
            assert!(!want.is_empty(), "{expr} matches");
            let got = scores(&c, table, ours, &expr, Some(counts_blob(&counts)));
            let same = want.len() == got.len()
                && want
                    .iter()
                    .zip(&got)
                    .all(|(a, b)| a.0 == b.0 && a.1.to_bits() == b.1.to_bits());
            assert!(same, "{table} {expr}: {want:?} vs {got:?}");
            // Without counts, or with counts that do not fit the expression, it counts itself.
            assert_eq!(
                scores(&c, table, ours, &expr, None),
                want,
                "{expr} without counts"
            );
            let short = counts_blob(&counts[1..]);
            assert_eq!(
                scores(&c, table, ours, &expr, Some(short)),
                want,
                "{expr} short counts"
            );
        }
    }
}

#[test]
fn counts_that_differ_change_the_scores_so_the_test_above_can_fail() {
    let c = tables();
    let expr = "\"mysql\" OR \"nginx\"";
    let right = [doc_count(&c, "e", "mysql"), doc_count(&c, "e", "nginx")];
    let wrong = [right[0] + 50, right[1]];
    let a = scores(&c, "e", "kbm25(e, ?1)", expr, Some(counts_blob(&right)));
    let b = scores(&c, "e", "kbm25(e, ?1)", expr, Some(counts_blob(&wrong)));
    assert_ne!(a, b);
}

#[test]
fn a_bad_counts_argument_is_an_sql_value_not_a_crash() {
    let c = tables();
    let want = scores(&c, "e", "bm25(e)", "\"mysql\"", None);
    for arg in ["'text'", "42", "x''", "zeroblob(800000)", "NULL"] {
        // Not counts for this expression: ranked as `bm25` ranks.
        let got = scores(&c, "e", &format!("kbm25(e, {arg})"), "\"mysql\"", None);
        assert_eq!(got, want, "{arg}");
    }
    // Counts of the right size but beyond the row count: a NULL score (SQLite's NaN), no crash.
    let mut st = c
        .prepare("SELECT kbm25(e, ?1) FROM e WHERE e MATCH 'mysql'")
        .expect("prepare");
    let odd: Vec<Option<f64>> = st
        .query_map([counts_blob(&[u64::MAX])], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    assert_eq!(odd.len(), want.len());
}
