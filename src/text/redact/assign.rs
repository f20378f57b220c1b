//! `key <sep> value` where the key names a secret (code, JSON, YAML, `.env`, INI, prose): where
//! its value starts, and when what follows the separator is not a value after all (a `Type::path`,
//! a key in backticks, a sentence denying the key, a secret word that names what follows it).
//! Kept apart from the pass that runs every rule, so each reads in one sitting.

use regex::Captures;

use super::value::{self, Splits};
use super::{keys, literal_at, literal_or_comment, prose, TextKind};

/// `key <sep> value` where the key names a secret.
pub(super) fn assignment(c: &Captures, t: &str, kind: TextKind) -> Option<(usize, usize)> {
    let key = c.name("key")?;
    if !keys::is_secret_key(key.as_str()) {
        return None;
    }
    let sep = c.name("sep")?.as_str();
    if sep == ":" && keys::looks_like_file(key.as_str()) {
        return None;
    }
    let russian_key = key
        .as_str()
        .chars()
        .any(|c| matches!(c, 'а'..='я' | 'А'..='Я'));
    if matches!(sep, "—" | "–") && !russian_key {
        return None; // an English dash is prose, not an assignment
    }
    // Prose, or a comment or a string literal of code, where people write sentences too.
    let sentence = match kind {
        TextKind::Prose => true,
        TextKind::Code {
            single_quoted_strings,
        } => literal_or_comment(t, key.start(), single_quoted_strings),
        TextKind::Config => false,
    };
    if sentence && matches!(sep, ":" | "—" | "–") {
        if let Some(v) = c.name("val") {
            let dash = sep != ":";
            if said_of_the_secret(t, v.start(), russian_key, dash) {
                return None;
            }
        }
    }
    if let Some(v) = c.name("val2") {
        // A quoted value alone on the next line.
        let val = value::extent(t, v.start(), Splits::AtPairs);
        let inner = &t[val.start..val.end];
        return (!value::is_exempt(inner, val.quoted, Some(key.as_str()), kind))
            .then_some((val.start, val.end));
    }
    let at = c.name("val")?.start();
    if sep == ":" && t[at..].starts_with(':') {
        return None; // a `Type::path`, not `key: value`
    }
    if closes_span(t, key.start(), at) {
        return None; // `password:` in backticks or quotes: the key is quoted, with no value
    }
    if sep == ":" && kind == TextKind::Prose && negated_key(t, key.start()) {
        return None; // a sentence saying what is not a secret (see `negated_key`)
    }
    if let Some(next) = after_escaped_newline(t, at) {
        // JSON-escaped text: only a quoted value alone on the next line is taken.
        let val = value::extent(t, next, Splits::AtPairs);
        let inner = &t[val.start..val.end];
        let ok = val.quoted && !value::is_exempt(inner, true, Some(key.as_str()), kind);
        return ok.then_some((val.start, val.end));
    }
    // Only a sentence's separators: after `=` a secret word is the value (`password=password
    // dbname=app` passes a variable along), after `:` or a dash it names what follows.
    if kind == TextKind::Prose && matches!(sep, ":" | "—" | "–") {
        if let Some(next) = after_secret_words(t, at) {
            // The value named is a secret word (a `token` given as `password X`): the secret
            // follows the word.
            let val = value::extent(t, next, Splits::AtPairs);
            let inner = &t[val.start..val.end];
            let ok = val.start < val.end
                && !value::is_exempt(inner, val.quoted, Some(key.as_str()), kind);
            return ok.then_some((val.start, val.end));
        }
    }
    let (s, e) = literal_at(c, t, 0, Some(key.as_str()), kind)?;
    if matches!(kind, TextKind::Code { .. }) && keys::holds_a_key_name(key.as_str(), &t[s..e]) {
        return None; // `const META_KEY: &str = "failed_stores";`
    }
    if matches!(&t[s..e], "|" | ">" | "|-" | ">-" | "|+" | ">+") {
        return block_scalar_value(t, e, key, kind);
    }
    let line_start = value::at_line_start(t, c.get(0)?.start());
    let quoted = s > 0 && t[..s].ends_with(['"', '\'', '`']);
    if line_start && !quoted && !matches!(kind, TextKind::Code { .. }) {
        return Some((s, value::line_end(t, e)));
    }
    Some((s, e))
}

/// Words that say how a secret is, not what it is, when one of them is all a line says after
/// the key (`token: expired`, `password: missing`, `пароль: обязателен`).
const STATES: &[&str] = &[
    "expired",
    "missing",
    "invalid",
    "hidden",
    "masked",
    "unset",
    "empty",
    "обязателен",
    "обязательно",
    "необязателен",
    "необязательно",
    "истёк",
    "истек",
    "скрыт",
    "пустой",
];

/// Whether the rest of the clause from `at`, in prose, says how the secret is or what it is
/// rather than giving it: one word of [`STATES`]; after a Russian key (a word of a sentence:
/// no config names its keys so), Russian words alone with a sentence's punctuation between
/// them (`пароль: обязателен для входа`, `токен — это строка доступа`); or, after a dash, a
/// verb that the sentence rule reads there and one value (`пароль — это X, запомни`: it asks X
/// to look like one).
fn said_of_the_secret(t: &str, at: usize, russian_key: bool, dash: bool) -> bool {
    let rest = &t[at..];
    let line = &rest[..rest.find(['\n', '\r']).unwrap_or(rest.len())];
    // A JSON-escaped newline ends the line too.
    let line = &line[..line.find("\\n").unwrap_or(line.len())];
    // A clause ends at `,` or `;`, where the value would end too (`token: expired, renew it`);
    // what follows is another clause's.
    let clause = &line[..line.find([',', ';']).unwrap_or(line.len())];
    let punctuation = |c: char| {
        matches!(
            c,
            '.' | ':'
                | '!'
                | '?'
                | '«'
                | '»'
                | '('
                | ')'
                | '—'
                | '–'
                | '-'
                | '`'
                | '"'
                | '\''
                | '*'
        )
    };
    let words: Vec<String> = clause
        .split(|c: char| c.is_whitespace() || punctuation(c))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    if let [state] = words.as_slice() {
        if STATES.contains(&state.as_str()) {
            return true;
        }
    }
    if !russian_key {
        return false;
    }
    let russian = clause.chars().any(is_cyrillic)
        && clause
            .chars()
            .all(|c| is_cyrillic(c) || c.is_whitespace() || punctuation(c));
    // The verb and one value after it, which the sentence rule reads; with more words after
    // the verb the assignment takes them all, as before (see the tests).
    let verb_and_value = matches!(words.as_slice(), [verb, _] if prose::follows_a_dash(verb));
    russian || dash && verb_and_value
}

fn is_cyrillic(c: char) -> bool {
    matches!(c, 'а'..='я' | 'А'..='Я' | 'ё' | 'Ё')
}

/// Where the value starts when the one at `at` is a secret word followed by more on its line
/// (a `token` given as `password X`, a `ключ` as `пароль X`): the value is what the word
/// names, not the word.
fn after_secret_words(t: &str, at: usize) -> Option<usize> {
    let mut pos = at;
    for _ in 0..3 {
        let rest = &t[pos..];
        let word_len = rest.find(char::is_whitespace).unwrap_or(rest.len());
        if !prose::is_secret_word(&rest[..word_len]) {
            break;
        }
        let after = &rest[word_len..];
        let body = after.trim_start_matches([' ', '\t']);
        if body.len() == after.len() || body.is_empty() || body.starts_with(['\n', '\r']) {
            break; // nothing follows on the line
        }
        pos = t.len() - body.len();
    }
    (pos > at).then_some(pos)
}

/// Whether the key at `key_start` is denied by the words right before it (`не пароль:`, `not a
/// password:`, `no token:`): the sentence says what is not a secret, and the colon that follows
/// introduces the rest of it, not a value.
fn negated_key(t: &str, key_start: usize) -> bool {
    // Only the few words before the key: cheap on a huge single-line text.
    let mut from = key_start.saturating_sub(48);
    while !t.is_char_boundary(from) {
        from += 1;
    }
    let before = &t[from..key_start];
    let before = before.rsplit('\n').next().unwrap_or(before);
    let mut words = before
        .split(|c: char| !c.is_alphabetic() && c != '\'')
        .filter(|w| !w.is_empty())
        .rev();
    let mut last = words.next().map(str::to_lowercase);
    if matches!(last.as_deref(), Some("a" | "an" | "the" | "any")) {
        last = words.next().map(str::to_lowercase);
    }
    matches!(
        last.as_deref(),
        Some("не" | "нет" | "ни" | "not" | "no" | "isn't" | "never")
    )
}

/// Whether the quote at `value_at` closes a quote or code span opened right before the key
/// (`` `password:` ``, `"token: "`), so it does not open a value.
fn closes_span(t: &str, key_start: usize, value_at: usize) -> bool {
    let Some(q) = t[..key_start].chars().next_back() else {
        return false;
    };
    matches!(q, '`' | '"' | '\'')
        && t[value_at..].starts_with(q)
        && !t[key_start..value_at].contains(q)
}

/// Where the next line's content starts when `at` is an escaped newline (`\n`, `\r\n`)
/// followed by indentation, as in JSON-encoded text.
fn after_escaped_newline(t: &str, at: usize) -> Option<usize> {
    let rest = &t[at..];
    let next = rest
        .strip_prefix("\\r\\n")
        .or_else(|| rest.strip_prefix("\\n"))?;
    let body = next.trim_start_matches([' ', '\t']);
    (body.len() < next.len()).then(|| t.len() - body.len())
}

/// The value after a YAML block indicator (`password: |`) ending at `after`: on the next line
/// for real newlines (left to `KEY_ALONE`), else after an escaped `\n` or on the same line.
fn block_scalar_value(
    t: &str,
    after: usize,
    key: regex::Match<'_>,
    kind: TextKind,
) -> Option<(usize, usize)> {
    let rest = &t[after..];
    let mut skipped = rest.len() - rest.trim_start_matches([' ', '\t']).len();
    let tail = &rest[skipped..];
    if tail.is_empty() || tail.starts_with(['\n', '\r']) {
        return None;
    }
    for esc in ["\\r\\n", "\\n"] {
        if let Some(next) = tail.strip_prefix(esc) {
            skipped += esc.len() + (next.len() - next.trim_start_matches([' ', '\t']).len());
            break;
        }
    }
    if closes_span(t, key.start(), after + skipped) {
        return None;
    }
    let val = value::extent(t, after + skipped, Splits::AtPairs);
    let inner = &t[val.start..val.end];
    (!value::is_exempt(inner, val.quoted, Some(key.as_str()), kind) && val.start < val.end)
        .then_some((val.start, val.end))
}
