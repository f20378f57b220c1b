//! Secrets said in a sentence rather than assigned: `the password is Hunter2CanaryA! for prod`,
//! `password Hunter2CanaryB! ok`, `the token was Xy7…`, `пароль — …`, `пароль это …`. A key and a
//! separator (`:`, `=`) are the assignment rules' business; here there is only a word, so the
//! value must also look like a credential, or ordinary sentences about passwords and tokens
//! ("the token is expired", "password is required", "token 4096") would lose their words.
//!
//! A credential here is a single token of 6 to 200 characters with letters that mixes at least
//! three of lower case, upper case, digits and symbols (word punctuation `-`, `_`, `.`, `'` is
//! not one: `base64-encoded`, `x86_64`, `UTF-8` are words), or two of them one being a symbol,
//! or letters and digits alternating at least twice in 8 characters or more (`zqa1b2c3d000x`,
//! not `sha256sum`); that is not a path, URL, call or `::`/`->` path; and that is not exempt.
//! Only prose is read this way (transcripts, task text, Markdown): in source code a value must be
//! a literal, and config files have keys.

use std::sync::LazyLock;

use regex::{Captures, Regex};

use super::value::{self, Splits};
use super::TextKind;

/// `KEY [for WHAT] [VERB] VALUE`: the key word, an optional qualifier, an optional verb.
pub(super) static PROSE_SECRET: LazyLock<Regex> = LazyLock::new(|| {
    super::patterns::re(concat!(
        // Case-insensitive words only, never a folded Unicode class (see `patterns`).
        r"(?:^|[^\p{L}\p{N}_\-.\u{345}])",
        // The Cyrillic stems share one letter class (see `patterns::PHRASE`).
        r"(?P<key>(?i:passwords?|passphrases?|passwd|pwd|tokens?|secrets?)|(?:(?i:парол)|(?i:токен)|(?i:секрет))[\p{L}\u{345}]*)",
        r"(?P<qual>[ \t]+(?i:for|to|of|on|от|для|к|на)[ \t]+[^\s:=]{1,40})?",
        r"(?:[ \t]+(?P<verb>(?i:is|was|will[ \t]+be|это|был|была|будет)|=|:|-|—|–))?",
        r"[ \t]+(?P<val>\S)",
    ))
});

/// The keys that are a secret said without a verb (`password Hunter2!`); `token` and `secret`
/// need one (`token 0x1F3a` is a number in prose about tokens, `the token is …` is a secret).
fn verbless_key(key: &str) -> bool {
    let k = key.to_lowercase();
    k.starts_with("pass") || k == "pwd" || k.starts_with("парол")
}

/// The span of the value a sentence names, when it looks like a credential.
pub(super) fn pick(c: &Captures, t: &str, kind: TextKind) -> Option<(usize, usize)> {
    if kind != TextKind::Prose {
        return None;
    }
    let key = c.name("key")?.as_str();
    let has_verb = c.name("verb").is_some();
    if !has_verb && (c.name("qual").is_some() || !verbless_key(key)) {
        return None;
    }
    let val = value::extent(t, c.name("val")?.start(), Splits::AtPairs);
    let (mut s, mut e) = (val.start, val.end);
    if !val.quoted {
        // The token up to the next space; a sentence's full stop or comma is not part of it.
        e = s + t[s..].find(char::is_whitespace).unwrap_or(t.len() - s);
        while e > s && t[..e].ends_with(['.', ',', ';', ':', ')', ']', '}', '»', '"', '\'']) {
            e -= 1;
        }
        // A value opening a quote or bracket is prose punctuation, not the secret's first byte.
        while s < e && t[s..].starts_with(['(', '[', '«', '"', '\'', '`']) {
            s += t[s..].chars().next().map_or(1, char::len_utf8);
        }
    }
    let v = t.get(s..e)?;
    (looks_like_credential(v) && !value::is_exempt(v, val.quoted, Some(key), kind))
        .then_some((s, e))
}

/// Whether one token mixes character classes the way a password or key does (module doc).
pub(super) fn looks_like_credential(v: &str) -> bool {
    let n = v.chars().count();
    if !(6..=200).contains(&n) || v.contains("://") || v.contains(['/', '\\', '(', ')']) {
        return false;
    }
    if v.contains("::") || v.contains("->") {
        return false;
    }
    let lower = v.chars().any(|c| c.is_lowercase());
    let upper = v.chars().any(|c| c.is_uppercase());
    let digit = v.chars().any(|c| c.is_ascii_digit());
    // Word punctuation (`base64-encoded`, `x86_64`, `v1.2`, `don't`) is not a symbol.
    let special = v
        .chars()
        .any(|c| !c.is_alphanumeric() && !matches!(c, '-' | '_' | '.' | '\''));
    let classes = [lower, upper, digit, special]
        .iter()
        .filter(|b| **b)
        .count();
    if !(lower || upper) {
        return false;
    }
    if classes >= 3 || special && classes >= 2 {
        return true;
    }
    // Letters and digits of one case: a generated password alternates them (`zqa1b2c3d000x`),
    // a word with a number in it has one run of digits (`base64url`, `sha256sum`, `utf8mb4`).
    let digit_runs = v
        .as_bytes()
        .windows(2)
        .filter(|w| !w[0].is_ascii_digit() && w[1].is_ascii_digit())
        .count()
        + usize::from(v.starts_with(|c: char| c.is_ascii_digit()));
    let letters = v.chars().filter(|c| c.is_alphabetic()).count();
    digit && n >= 8 && letters >= 3 && digit_runs >= 2 && v.chars().all(char::is_alphanumeric)
}
