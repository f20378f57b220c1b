//! Our own token stream in PostgreSQL's text search types: a `tsvector` literal of an indexed
//! text's terms with their positions, and a `tsquery` of the query terms, both cast from text
//! (no PostgreSQL parser or dictionary touches them, so the team matches exactly the stems the
//! local FTS5 index matches).

use crate::text::tokens;

/// Positions kept per term (PostgreSQL keeps at most 256, each at most 16383).
const MAX_POSITIONS: usize = 64;
const MAX_POSITION: usize = 16383;
/// A tsvector holds lexemes of at most 2047 bytes; longer terms are not worth matching.
const MAX_LEXEME_BYTES: usize = 200;
/// A tsvector is at most 1 MiB: a huge event keeps the lexemes that fit in well under that
/// (its text is still stored whole), so one pasted log cannot fail a push.
const MAX_VECTOR_BYTES: usize = 512 * 1024;

/// A term quoted for tsvector / tsquery input.
fn quote(term: &str, out: &mut String) {
    out.push('\'');
    for c in term.chars() {
        match c {
            '\'' => out.push_str("''"),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out.push('\'');
}

/// The `tsvector` text of `text`'s index terms (and `extra`'s, e.g. a tool name).
pub fn vector(text: &str, extra: Option<&str>) -> String {
    let mut terms = tokens::index_text(text);
    if let Some(x) = extra {
        terms.push(' ');
        terms.push_str(&tokens::index_text(x));
    }
    from_terms(&terms)
}

/// The `tsvector` text of terms already made by our tokenizer (space-separated, as stored in
/// an FTS5 column).
pub fn from_terms(terms: &str) -> String {
    use std::fmt::Write;
    // (term, position) sorted: each term's positions rise, the terms in byte order (one sort,
    // no map or list per term: this runs for every event a push sends).
    let mut all: Vec<(&str, usize)> = terms
        .split_whitespace()
        .enumerate()
        .filter(|(_, t)| t.len() <= MAX_LEXEME_BYTES)
        .map(|(i, t)| (t, (i + 1).min(MAX_POSITION)))
        .collect();
    all.sort_unstable();
    let mut out = String::with_capacity(terms.len() + all.len() * 4);
    let mut i = 0;
    while i < all.len() {
        let term = all[i].0;
        let end = i + all[i..].iter().take_while(|(t, _)| *t == term).count();
        if out.len() > MAX_VECTOR_BYTES {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        quote(term, &mut out);
        out.push(':');
        let mut last = 0;
        for (n, &(_, p)) in all[i..end].iter().take(MAX_POSITIONS).enumerate() {
            // Positions must rise; a clamped tail collapses into one.
            if p == last {
                continue;
            }
            if n > 0 {
                out.push(',');
            }
            let _ = write!(out, "{p}");
            last = p;
        }
        i = end;
    }
    out
}

/// The `tsquery` text matching any of `terms` (`None`: nothing to match).
pub fn query(terms: &[String]) -> Option<String> {
    let mut out = String::new();
    for t in matchable(terms) {
        if !out.is_empty() {
            out.push_str(" | ");
        }
        quote(&t, &mut out);
    }
    (!out.is_empty()).then_some(out)
}

/// The terms a `tsvector` can hold (the others never match).
pub fn matchable(terms: &[String]) -> Vec<String> {
    terms
        .iter()
        .filter(|t| !t.is_empty() && t.len() <= MAX_LEXEME_BYTES)
        .cloned()
        .collect()
}

/// One term as a `tsquery` text.
pub fn term(t: &str) -> String {
    let mut out = String::new();
    quote(t, &mut out);
    out
}

/// The `tsquery` text of a bounded tier (`sources::fts`): any of its rare terms, or all of one
/// group of its common terms.
pub fn tier(t: &crate::sources::fts::Tier) -> String {
    t.render(&term, " | ", " & ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_are_quoted_and_positioned() {
        let v = vector("MySQL access, mysql again; it's", None);
        assert!(v.contains("'mysql':3,5") && v.contains("'access':4"), "{v}");
        let q = query(&["it's".into(), "a\\b".into()]).unwrap();
        assert_eq!(q, "'it''s' | 'a\\\\b'");
        assert_eq!(query(&[]), None);
    }

    #[test]
    fn repeated_terms_keep_their_first_positions_in_order_and_terms_sort_by_bytes() {
        let many = vec!["b"; 70].join(" ");
        let v = from_terms(&format!("zz a {many} a"));
        let b_positions: Vec<&str> = v
            .split(' ')
            .find(|t| t.starts_with("'b'"))
            .unwrap()
            .trim_start_matches("'b':")
            .split(',')
            .collect();
        assert_eq!(b_positions.len(), MAX_POSITIONS);
        assert_eq!((b_positions[0], b_positions[63]), ("3", "66"));
        assert!(v.starts_with("'a':2,73 'b':3,4,"), "{v}");
        assert!(v.ends_with(" 'zz':1"), "{v}");
    }

    #[test]
    fn a_huge_text_stays_under_the_tsvector_limit() {
        let words: Vec<String> = (0..200_000).map(|i| format!("w{i}x")).collect();
        let v = vector(&words.join(" "), None);
        assert!(v.len() < MAX_VECTOR_BYTES + 4096, "{}", v.len());
    }
}
