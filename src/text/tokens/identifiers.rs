//! The identifiers a question names as written: what says a word is specific where an ordinary
//! word's rarity in a small history says nothing (`sources::episodes::rare`).
//!
//! People type an identifier the way the code, the shell or the file system spells it:
//! - a compound (`getUserName`, `test_dsn_reads_env`): its whole term, as the index holds it
//!   beside its parts;
//! - a word that mixes letters and digits (`utf8mb4`, `cpython312`);
//! - words joined without a space by `.`, `/`, `\` or `:` (`hello.sh`, `src/db.rs`, `std::fs`),
//!   a flag (`--fail-under-lines`), or words joined by `-` with a digit among them
//!   (`cpython-312`): the tokenizer keeps their words apart, so they are named by a phrase of
//!   their terms (`"hello sh"`, matched as adjacent terms). Words joined by `-` alone
//!   (`step-by-step`, `pre-production`, `из-за`) are prose as often as names, and are left out.

use super::{tokenize, Token};

/// The identifier terms and phrases of `query` (see the module docs), each once, in order.
pub fn identifier_terms(query: &str) -> Vec<String> {
    let tokens = tokenize(query);
    let mut out: Vec<String> = Vec::new();
    let mut push = |term: String| {
        if !term.is_empty() && !out.contains(&term) {
            out.push(term);
        }
    };
    for t in &tokens {
        let word = query.get(t.start..t.end).unwrap_or_default();
        let mixed =
            word.chars().any(char::is_alphabetic) && word.chars().any(|c| c.is_ascii_digit());
        if is_compound(t, &tokens) || mixed {
            push(t.term.clone());
        }
    }
    for (start, run) in runs(query) {
        let end = start + run.len();
        let parts: Vec<&Token> = tokens
            .iter()
            .filter(|t| t.start >= start && t.end <= end && !is_compound(t, &tokens))
            .collect();
        if parts.len() < 2 {
            continue;
        }
        let inner = run.trim_matches(|c: char| !c.is_alphanumeric() && c != '-');
        let joined = inner.contains(['.', '/', '\\', ':']);
        let flag = inner.starts_with('-') && inner.trim_start_matches('-').len() > 1;
        let numbered = inner.contains('-') && inner.chars().any(|c| c.is_ascii_digit());
        if joined || flag || numbered {
            let phrase: Vec<&str> = parts.iter().map(|t| t.term.as_str()).collect();
            push(phrase.join(" "));
        }
    }
    out
}

/// Whether `t` is the whole term of a compound: another token lies strictly inside it.
fn is_compound(t: &Token, tokens: &[Token]) -> bool {
    tokens
        .iter()
        .any(|u| u.start >= t.start && u.end <= t.end && (u.start, u.end) != (t.start, t.end))
}

/// The runs of `text` between whitespace, with their byte offsets.
fn runs(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut at = 0;
    text.split(char::is_whitespace).filter_map(move |run| {
        let start = at;
        at += run.len()
            + text[at + run.len()..]
                .chars()
                .next()
                .map_or(0, char::len_utf8);
        (!run.is_empty()).then_some((start, run))
    })
}
