//! Our own token stream in PostgreSQL's text search types: a `tsvector` literal of an indexed
//! text's terms with their positions, and a `tsquery` of the query terms, both cast from text
//! (no PostgreSQL parser or dictionary touches them, so the team matches exactly the stems the
//! local full-text index holds: `sources::lexical`, checked by a test below).

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
    from_terms(&index_terms(text, extra))
}

/// Our tokenizer's terms of `text`, then `extra`'s.
fn index_terms(text: &str, extra: Option<&str>) -> String {
    let mut terms = tokens::index_text(text);
    if let Some(x) = extra {
        terms.push(' ');
        terms.push_str(&tokens::index_text(x));
    }
    terms
}

/// The `tsvector` text of terms already made by our tokenizer (space-separated, as the local
/// full-text indexes store them).
pub fn from_terms(terms: &str) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(terms.len() * 2);
    each_entry(terms, |term, positions| {
        if !out.is_empty() {
            out.push(' ');
        }
        quote(term, &mut out);
        out.push(':');
        for (n, p) in positions.iter().enumerate() {
            if n > 0 {
                out.push(',');
            }
            let _ = write!(out, "{p}");
        }
    });
    out
}

/// The `tsvector` of `text`'s index terms (and `extra`'s) in PostgreSQL's binary form (what
/// `tsvectorrecv` reads: the lexeme count, then each lexeme NUL-terminated with its positions),
/// for a binary COPY: the server then parses no text (`tsvector_in` was a fifth of its time of
/// an event pushed, docs/PERFORMANCE.md).
pub fn binary(text: &str, extra: Option<&str>) -> Vec<u8> {
    let terms = index_terms(text, extra);
    let mut out = Vec::with_capacity(terms.len() * 2);
    out.extend_from_slice(&0i32.to_be_bytes());
    let mut count = 0i32;
    each_entry(&terms, |term, positions| {
        out.extend_from_slice(term.as_bytes());
        out.push(0);
        out.extend_from_slice(&(positions.len() as u16).to_be_bytes());
        for p in positions {
            // Weight D (0) in the top two bits, as the text form's default.
            out.extend_from_slice(&(*p as u16).to_be_bytes());
        }
        count += 1;
    });
    out[..4].copy_from_slice(&count.to_be_bytes());
    out
}

/// Each distinct term of `terms` in byte order with its rising positions (at most
/// [`MAX_POSITIONS`], clamped to [`MAX_POSITION`]), while the text form stays under
/// [`MAX_VECTOR_BYTES`]: the one walk both forms of a `tsvector` are written from, so they hold
/// the same lexemes.
fn each_entry(terms: &str, mut f: impl FnMut(&str, &[usize])) {
    // (term, position) sorted: each term's positions rise, the terms in byte order (one sort,
    // no map or list per term: this runs for every event a push sends). A term holding NUL
    // cannot be a lexeme.
    let mut all: Vec<(&str, usize)> = terms
        .split_whitespace()
        .enumerate()
        .filter(|(_, t)| t.len() <= MAX_LEXEME_BYTES && !t.contains('\0'))
        .map(|(i, t)| (t, (i + 1).min(MAX_POSITION)))
        .collect();
    all.sort_unstable();
    let mut positions = Vec::with_capacity(MAX_POSITIONS);
    let (mut i, mut size) = (0, 0);
    while i < all.len() && size <= MAX_VECTOR_BYTES {
        let term = all[i].0;
        let end = i + all[i..].iter().take_while(|(t, _)| *t == term).count();
        positions.clear();
        for &(_, p) in all[i..end].iter().take(MAX_POSITIONS) {
            // Positions must rise; a clamped tail collapses into one.
            if positions.last() != Some(&p) {
                positions.push(p);
            }
        }
        // At most the text form's bytes: quotes doubled, five digits and a comma a position.
        size += 2 * term.len() + 4 + 6 * positions.len();
        f(term, &positions);
        i = end;
    }
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

/// The `tsquery` text of a bounded tier (`team::tiers`): any of its rare terms, or all of one
/// group of its common terms.
pub fn tier(t: &super::tiers::Tier) -> String {
    t.render(&term, " | ", " & ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 33: the team index and the local full-text index (Tantivy) hold the same terms of
    /// an event, so a question finds the same events in both.
    #[test]
    fn the_team_holds_the_terms_the_local_full_text_index_holds() {
        let events: [(&str, Option<&str>); 6] = [
            (
                "Кто чинил доступ к MySQL на 176.99.5.35? Проверил права пользователя",
                None,
            ),
            (
                "fixed getUserName() in src/user/profile.ts; see config.toml and --dry-run",
                Some("Edit"),
            ),
            (
                "ERROR E0308 mismatched types at src/lib.rs:42:7 (cargo build --release)",
                Some("Bash"),
            ),
            (
                "the deploy pipeline failed while integration tests ran on staging",
                None,
            ),
            (
                "HTTP_PROXY=http://proxy:3128 npm ci && node_modules/.bin/jest --runInBand",
                Some("bash"),
            ),
            (
                "обновил зависимости: serde 1.0.219, tokio 1.45; тесты зелёные",
                None,
            ),
        ];
        for (text, tool) in events {
            let mut team: Vec<String> = Vec::new();
            each_entry(&index_terms(text, tool), |t, _| team.push(t.to_string()));
            let mut local = crate::sources::lexical::query::tokens_of(
                &crate::sources::episodes::prepare::event_terms(text, tool),
            );
            local.sort();
            local.dedup();
            team.sort();
            assert_eq!(team, local, "{text}");
        }
    }

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

    /// The binary form read back as `tsvectorrecv` reads it, written out as the text form.
    fn binary_as_text(b: &[u8]) -> String {
        let n = i32::from_be_bytes(b[..4].try_into().unwrap());
        let (mut at, mut out) = (4, String::new());
        for _ in 0..n {
            let end = at + b[at..].iter().position(|&c| c == 0).unwrap();
            let lexeme = std::str::from_utf8(&b[at..end]).unwrap();
            at = end + 1;
            let npos = u16::from_be_bytes([b[at], b[at + 1]]) as usize;
            at += 2;
            let pos: Vec<String> = (0..npos)
                .map(|i| u16::from_be_bytes([b[at + 2 * i], b[at + 2 * i + 1]]).to_string())
                .collect();
            at += 2 * npos;
            if !out.is_empty() {
                out.push(' ');
            }
            quote(lexeme, &mut out);
            out.push(':');
            out.push_str(&pos.join(","));
        }
        assert_eq!(at, b.len(), "nothing after the last lexeme");
        out
    }

    #[test]
    fn the_binary_form_holds_what_the_text_form_holds() {
        let many = vec!["b"; 70].join(" ");
        for (text, tool) in [
            ("MySQL access, mysql again; it's a\\b", Some("Bash")),
            (many.as_str(), None),
            ("", None),
        ] {
            assert_eq!(binary_as_text(&binary(text, tool)), vector(text, tool));
        }
        let words: Vec<String> = (0..200_000).map(|i| format!("w{i}x")).collect();
        let huge = binary(&words.join(" "), None);
        assert!(huge.len() < MAX_VECTOR_BYTES + 4096, "{}", huge.len());
        assert_eq!(binary_as_text(&huge), vector(&words.join(" "), None));
    }

    #[test]
    fn a_huge_text_stays_under_the_tsvector_limit() {
        let words: Vec<String> = (0..200_000).map(|i| format!("w{i}x")).collect();
        let v = vector(&words.join(" "), None);
        assert!(v.len() < MAX_VECTOR_BYTES + 4096, "{}", v.len());
    }
}
