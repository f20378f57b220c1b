//! Names and path-like metadata: a git branch (`fix/password-Xk9vQ2mLp7Zt`), an agent's, a
//! tool's or a subagent's name (`scout token Xk9vQ2mLp7Zt`), a working directory. They are no
//! sentences: a secret word there is followed by its value with no verb (`token-X`, `key_X`,
//! `token X`), which the sentence rule must not read in prose ("token 0x1F3a9c" is a number
//! in a sentence about tokens). A name says what a thing is called, so a part right after a
//! secret word that looks like a credential is one; words (`fix/password-reset`,
//! `feature/token-refresh-v2`) and ticket ids (`token-ABC-123`) are not.
//!
//! The same names are written in text too: a tool call's input as an event renders it
//! (`subagent_type: scout token X`, `name: …`), an agent file's front matter, a JSON object
//! (`"name": "…"`). There the value of a field that names something is read as a name
//! ([`named_fields`]), so the event that spawned a subagent holds no more of its name than the
//! actor named from it.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex};

use super::patterns::{re, PROSE_SECRET_GATE};
use super::{apply, prose, redact_cow, replace_ranges, value, TextKind};

/// A field whose value names something (a subagent, an agent, a team, a branch) or says what it
/// is (`description`), at the start of a line (`name: …`, `- name: …`) or as a JSON key
/// (`"name": "…"`). Its value starts where the match ends.
static NAMED_FIELD: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r#"(?m)(?:^[ \t]*(?:-[ \t]+)?|["'])"#,
        r"(?i:name|subagent_?type|agent_?type|agent_?name|nickname|agent_?nickname|agent_?role",
        r"|team_?name|teammate_?id|description|branch|git_?branch)",
        // `\"name\": ` in JSON-escaped text: the value runs to its escaped quote (`ENDS`).
        r#"\\?["']?[ \t]*[:=][ \t]*"#,
    ))
});

/// Every [`NAMED_FIELD`] match holds one of these, and a secret word must follow.
static NAMED_FIELD_GATE: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)name|type|role|id|description|branch"));

/// What joins a secret word to its value in a name: `token-X`, `key_X`, `token: X`,
/// `secret/X`, `token X`.
const JOINERS: &[char] = &[' ', '\t', '-', '_', '/', '.', ':', '='];

/// Most joiners read between the word and its value (`token - X`, `key := X`).
const MAX_JOINERS: usize = 4;

/// What ends a value in a name: a space, a path's `/`, punctuation around it.
const ENDS: &[char] = &[
    ' ', '\t', '\n', '\r', '/', '\\', ',', ';', '"', '\'', '`', '(', ')', '[', ']', '{', '}', '<',
    '>', '|',
];

/// Redacts a name or path-like metadata: as prose ([`super::redact`]), then a value that
/// follows a secret word directly.
pub fn redact_name(text: &str) -> (Cow<'_, str>, usize) {
    let (out, mut count) = redact_cow(text);
    if !super::patterns::PROSE_SECRET_GATE.is_match(&out) {
        return (out, count);
    }
    let out = apply(out, &prose::PROSE_SECRET, &mut count, pick);
    (out, count)
}

/// Reads the values of the fields that name something ([`NAMED_FIELD`]) as names.
pub(super) fn named_fields<'a>(text: Cow<'a, str>, count: &mut usize) -> Cow<'a, str> {
    if !PROSE_SECRET_GATE.is_match(&text) || !NAMED_FIELD_GATE.is_match(&text) {
        return text;
    }
    let mut ranges = Vec::new();
    for m in NAMED_FIELD.find_iter(&text) {
        let (s, e) = field_value(&text, m.end());
        let v = &text[s..e];
        for c in prose::PROSE_SECRET.captures_iter(v) {
            ranges.extend(pick(&c, v).map(|(a, b)| (s + a, s + b)));
        }
    }
    replace_ranges(text, &ranges, count)
}

/// The value of a field starting at `at`: a quoted string's body, or the rest of the line.
fn field_value(t: &str, at: usize) -> (usize, usize) {
    let rest = &t[at..];
    if let Some(q) = rest.chars().next().filter(|c| matches!(c, '"' | '\'')) {
        let body = &rest[1..];
        let mut escaped = false;
        let len = body
            .char_indices()
            .find(|&(_, c)| {
                let end = !escaped && (c == q || c == '\n');
                escaped = !escaped && c == '\\';
                end
            })
            .map_or(body.len(), |(i, _)| i);
        return (at + 1, at + 1 + len);
    }
    // A JSON-escaped newline ends the line as a real one does.
    let len = [rest.find('\n'), rest.find("\\n")]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(rest.len());
    (at, at + len)
}

/// The value after the secret word of match `c`, when it looks like a credential.
fn pick(c: &Captures, t: &str) -> Option<(usize, usize)> {
    let key = c.name("key")?;
    let word = key.as_str().to_lowercase();
    if !prose::is_secret_word(&word) {
        return None;
    }
    let rest = &t[key.end()..];
    let joined = rest
        .char_indices()
        .take(MAX_JOINERS)
        .take_while(|(_, ch)| JOINERS.contains(ch))
        .last()
        .map_or(0, |(i, ch)| i + ch.len_utf8());
    if joined == 0 {
        return None; // `tokenizer`, `keycloak`, or the name ends with the word
    }
    if !prose::is_password_word(&word) && word_before(t, key.start()).is_some_and(not_a_secret) {
        return None; // `primary-key-…`, `next_token_…`
    }
    let mut start = key.end() + joined;
    // Markdown around the value (`token **X**`) is not the value's.
    start += t[start..].len() - t[start..].trim_start_matches(['*', '~']).len();
    let body = &t[start..];
    let mut v = &body[..body.find(ENDS).unwrap_or(body.len())];
    // A sentence's punctuation after the name (`… key changes:`, `token X.`) is not the value's.
    v = v.trim_end_matches(['.', ',', ';', ':', '*', '~']);
    // Nor is its `!` or `?` after a word (`update the key values!`); it is a password's when
    // what comes before it is one, and goes with it.
    let core = v.trim_end_matches(['!', '?']);
    let credential = core
        .split(['-', '_', '.'])
        .any(|part| prose::value_shaped(part, false));
    let exempt = value::is_exempt(v, false, Some(key.as_str()), TextKind::Prose);
    (credential && !exempt).then_some((start, start + v.len()))
}

/// The word right before the secret word starting at `at`, lower-cased (`primary` in
/// `primary-key` or `the primary key`).
fn word_before(t: &str, at: usize) -> Option<String> {
    let before = t[..at].trim_end_matches(JOINERS);
    let start = before
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_alphanumeric())
        .last()
        .map(|(i, _)| i)?;
    Some(before[start..].to_lowercase())
}

fn not_a_secret(word: String) -> bool {
    prose::names_no_secret(&word)
}
