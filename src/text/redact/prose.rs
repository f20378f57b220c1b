//! Secrets said in a sentence rather than assigned: `the password is Hunter2CanaryA! for prod`,
//! `my github token password is …`, `password Hunter2CanaryB! ok`, `set the token to …`,
//! `пароль — …`, `поменял ключ на …`. A key and a separator (`:`, `=`) are the assignment rules'
//! business; here there is only a word, so the value must also look like a credential, or
//! ordinary sentences about passwords and tokens ("the token is expired", "password is
//! required", "token 4096", "the primary key is user_id") would lose their words.
//!
//! The pattern finds the secret word alone and [`pick`] reads what follows it: a pattern that
//! also matched the words after it consumed the next secret word with them, so in `the secret
//! password is X` or `my token password is X` the value after the second word was never read.
//! Each secret word is now a match of its own, whatever words come before it.
//!
//! After the word: up to four words (`for the prod db`, `you need`), a verb (`is`, `was`, `is
//! set to`, `это`, `теперь`, `:`, `—`, …, [`words::VERBS`]) and the value; or the value right
//! after the word when the word is a password's (`password X`, `пароль X`) or a verb before it
//! uses it (`use the token X`); or `to` / `на` after a verb that sets it (`set the key to X`).
//! The value must look like a credential ([`shape`]); a password's word followed by a verb
//! (`the password is hunter2`) needs less. Prose is read this way throughout (transcripts,
//! task text, Markdown); code and config only in their comments and string literals, where
//! people write sentences (the caller asks `literal`), never in the code around them.

mod layout;
mod shape;
mod words;

use std::sync::LazyLock;

use regex::{Captures, Regex};

use super::value::{self, Splits};
use super::{keys, TextKind};
use layout::{html_tag, list_end, md_closer, value_on_next_line};
use shape::{looks_like_credential, looks_like_password};

/// A secret word, alone or as the last part of a compound (`DB_PASSWORD`, `api-key`,
/// `API-ключ`). Only the word: what follows is read by [`pick`], so that a secret word right
/// after another is a match of its own.
pub(super) static PROSE_SECRET: LazyLock<Regex> = LazyLock::new(|| {
    super::patterns::re(concat!(
        // Case-insensitive words only, never a folded Unicode class (see `patterns`). A
        // compound's first parts (`DB_`, `API-`) are read back from the word in [`pick`]: in
        // the pattern they cost a scan of every letter of a text.
        r"(?:^|[^\p{L}\p{N}\u{345}])",
        r"(?P<key>(?i:passwords?|passphrases?|passwd|pwd|pw|passcodes?|tokens?|secrets?|keys?|credentials?|creds)",
        // The Cyrillic stems share one letter class (see `patterns::PHRASE`).
        r"|(?:(?i:парол)|(?i:токен)|(?i:секрет)|(?i:ключ))[\p{L}\u{345}]*)",
    ))
});

/// Words a Cyrillic stem also starts that name no secret, such as «ключевой» (key, as in "key
/// point"), «секретарь», «токенизатор».
const NOT_SECRET_STEMS: &[&str] = &["ключев", "ключиц", "секретар", "токениз"];

/// Most words between the secret word and its verb (`the password for the prod db is X`,
/// `ключ API от боевой базы — X`, `the password for the production database cluster in
/// eu-west-1 is X`). None of them may end a clause ([`fill_word`]).
const MAX_FILL: usize = 8;

/// Whether `word` is a secret word the prose rule reads (`password`, `token`, `ключ`, …).
pub(super) fn is_secret_word(word: &str) -> bool {
    let w = word.to_lowercase();
    let stem = |s: &str| w.strip_suffix('s').unwrap_or(&w) == s;
    if [
        "password",
        "passphrase",
        "passcode",
        "token",
        "secret",
        "key",
        "credential",
    ]
    .iter()
    .any(|s| stem(s))
        || matches!(w.as_str(), "passwd" | "pwd" | "pw" | "creds")
    {
        return true;
    }
    ["парол", "токен", "секрет", "ключ"]
        .iter()
        .any(|s| w.starts_with(s))
        && !NOT_SECRET_STEMS.iter().any(|s| w.starts_with(s))
}

/// Where the compound a secret word at `at` ends starts (`DB_PASSWORD`, `api-key`,
/// `API-ключ`): a separator before it (`_`, `-`, `.`) joins it to the letters or digits before
/// that. The pattern saw no letter right before the word (`monkey` is not read); at most 64
/// characters are read back, so a long blob costs no more than a short word.
fn compound_start(t: &str, at: usize) -> usize {
    let mut start = at;
    let mut chars = t[..at].char_indices().rev().take(64).peekable();
    while let Some((i, c)) = chars.next() {
        let word_char = c.is_alphanumeric();
        let joins =
            matches!(c, '_' | '-' | '.') && chars.peek().is_some_and(|(_, p)| p.is_alphanumeric());
        if !(word_char || joins) {
            break;
        }
        start = i;
    }
    start
}

/// A word that names a password (whose value needs no verb, and less shape after one).
pub(super) fn is_password_word(w: &str) -> bool {
    w.starts_with("pass") || matches!(w, "pwd" | "pw") || w.starts_with("парол")
}

/// Whether a word before `key` or `token` makes it name something else than a secret
/// (`primary`, `next`, `public`).
pub(super) fn names_no_secret(w: &str) -> bool {
    words::NOT_SECRET_KINDS.contains(&w)
}

/// Whether `word` (lower case) is the verb of a phrase that starts with a dash (`— это`): the
/// sentence rule reads the value after `пароль — это`, and asks it to look like one.
pub(super) fn follows_a_dash(word: &str) -> bool {
    words::VERBS.iter().any(|phrase| {
        phrase.len() == 2 && words::SEPARATORS.contains(&phrase[0]) && phrase[1] == word
    })
}

/// Whether a value that a secret word names without a sentence around it (a table's header, a
/// key cell) looks like one; what a password's word names needs less than `token` or `key`.
pub(super) fn value_shaped(v: &str, password: bool) -> bool {
    if password {
        looks_like_password(v)
    } else {
        looks_like_credential(v)
    }
}

/// `keys`, `tokens`, `пароли`, `ключи`; `credentials` is how one is named, not a list.
fn is_plural(w: &str) -> bool {
    let latin = w.ends_with('s') && !matches!(w, "credentials" | "creds" | "pass");
    latin || w.ends_with(['и', 'ы'])
}

/// A word after `key` that qualifies it rather than being qualified by it: a preposition or a
/// pronoun (`the key for prod`, `the key you need`), an acronym (`ключ API`).
fn qualifies_a_key(w: &str, lower: &str) -> bool {
    is_acronym(w) || words::KEY_QUALIFIERS.contains(&lower)
}

fn is_key_word(w: &str) -> bool {
    matches!(w, "key" | "keys") || w.starts_with("ключ")
}

/// The span of the value a sentence names, when it looks like a credential.
pub(super) fn pick(c: &Captures, t: &str, kind: TextKind) -> Option<(usize, usize)> {
    if kind != TextKind::Prose {
        return None;
    }
    let found = c.name("key")?;
    // Most secret words in a text are followed by none of what can lead to a value
    // (`tokenizer`, `"key":`, `password_file`): decided before anything is allocated.
    // `**Password:** X`, `` `password`: X ``: Markdown closing around the word.
    let end = found.end() + md_closer(t, found.end());
    if !t[end..].starts_with([' ', '\t', ':', '?', '=', '\'', '’', ',', '—', '–', '→']) {
        return None;
    }
    let start = compound_start(t, found.start());
    let key = &t[start..found.end()];
    // `DB_PASSWORD` → (`db`, `password`); `API-ключ` → (`api`, `ключ`).
    let prefix = (start < found.start()).then(|| t[start..found.start() - 1].to_lowercase());
    let word = found.as_str().to_lowercase();
    if NOT_SECRET_STEMS.iter().any(|s| word.starts_with(s)) {
        return None;
    }
    let before = words_before(t, start);
    let kind_word = prefix
        .map(|p| keys::last_segment(&p))
        .or_else(|| before.last().cloned());
    let password = is_password_word(&word);
    let kind_is = |list: &[&str]| kind_word.as_deref().is_some_and(|k| list.contains(&k));
    if !password && kind_is(words::NOT_SECRET_KINDS) {
        return None; // `the primary key is …`, `the next token is …`
    }
    let strong = password || (is_key_word(&word) && kind_is(words::SECRET_KINDS));
    let has = |list: &[&str]| before.iter().any(|w| list.contains(&w.as_str()));
    let how = How {
        setter: has(words::SETTERS),
        // `` `password`: X `` is no assignment the assignment rules read.
        key_is_assigned: keys::is_secret_key(key) && end == found.end(),
        // Russian puts what qualifies a key after it (`ключ доступа`, `ключ апи`).
        adjective: matches!(word.as_str(), "key" | "keys") && !strong,
        plural: is_plural(&word),
        passwords: password && is_plural(&word),
        determined: before
            .last()
            .is_some_and(|w| words::DETERMINERS.contains(&w.as_str())),
    };
    let tail = read_tail(t, end, how)?;
    let used = has(words::USERS);
    if tail.verb == Verb::None && !(password || used) {
        return None; // `token 0x1F3a` is a number in prose about tokens
    }
    let latin = word.is_ascii();
    if tail.verb == Verb::Attached
        && latin
        && !strong
        && !how.key_is_assigned
        && !in_a_sentence(&before)
    {
        // `key: &Arc<str>`, `let key = …`, `- key: cache-v5`: code and config name keys, a
        // sentence says them (`the key: …`, `ключ: …` is Russian prose).
        return None;
    }
    let (s, e, quoted) = value_span(t, tail.value_at)?;
    let v = t.get(s..e)?;
    if tail.verb == Verb::None {
        if !password && !v.starts_with(char::is_alphanumeric) {
            return None; // `using the key |Htable|`: what is used is code
        }
        // `password=password dbname=app`: the word is a value passed along and a pair follows.
        let pair = v.split_once('=').is_some_and(|(name, rest)| {
            value::is_ident(name) && !rest.is_empty() && !rest.starts_with('=')
        });
        if pair || t[..start].ends_with(['=', ':']) {
            return None;
        }
    }
    let shaped = if strong && tail.verb == Verb::Said {
        looks_like_password(v)
    } else {
        looks_like_credential(v)
    };
    if !shaped || value::is_exempt(v, quoted, Some(key), kind) {
        return None;
    }
    // `the passwords are X and Y`, `passwords: X, Y`: each password of the list goes.
    let e = if how.plural && password {
        list_end(t, e, kind)
    } else {
        e
    };
    Some((s, e))
}

/// What comes between the secret word and its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verb {
    /// The value follows the word (`password X`, `use the token X`).
    None,
    /// A verb (`is`, `был`, `set to`) or a separator (`:`, `—`) after a space or a word.
    Said,
    /// A separator right after the word (`key: X`, `key = X`), as code and config write it.
    Attached,
}

struct Tail {
    value_at: usize,
    verb: Verb,
}

/// What is known of the secret word before reading what follows it.
#[derive(Debug, Clone, Copy)]
struct How {
    /// A verb before the word sets it, so `to` / `на` gives the value.
    setter: bool,
    /// The assignment rules take the word as a key (`password=X` is theirs).
    key_is_assigned: bool,
    /// The word is also an adjective (`key`: `the key question is`): words after it must
    /// qualify it (`the key for prod is`), not be what it qualifies.
    adjective: bool,
    /// A plural (`keys`, `пароли`): a list's heading (`Keys: …`) unless a verb says it.
    plural: bool,
    /// A plural of a password's word (`passwords: X, Y`): its list is of passwords.
    passwords: bool,
    /// An article or a possessive comes right before the word (`the token`, `мой пароль`): a
    /// sentence, where a value between commas is an apposition (`the token, X, expires`), not
    /// a list (`{Key, XChaCha20, XNonce}`).
    determined: bool,
}

/// Reads what follows the secret word ending at `at`: the words, the verb, where the value
/// starts.
fn read_tail(t: &str, at: usize, how: How) -> Option<Tail> {
    let How {
        setter,
        key_is_assigned,
        adjective,
        plural,
        passwords,
        determined,
    } = how;
    let rest = &t[at..];
    for possessive in ["'s", "’s"] {
        if let Some(r) = rest.strip_prefix(possessive) {
            return r
                .starts_with([' ', '\t'])
                .then(|| value_after(t, at + possessive.len()))
                .flatten();
        }
    }
    // `the password—X`, `password→X`: a sentence's dash or arrow written without spaces.
    if let Some(sep) = ["—", "–", "→"].iter().find(|s| rest.starts_with(**s)) {
        return value_after(t, at + sep.len());
    }
    // `the token, X, expires soon`: the value said between commas right after the word.
    if let Some(after) = rest.strip_prefix(',') {
        let next = tokens(t, t.len() - after.len());
        return (!plural && determined && between_commas(&next)).then(|| Tail {
            value_at: next[0].start,
            verb: Verb::Said,
        });
    }
    // `What's the password? It's X`: the answer after the question.
    if let Some(after) = rest.strip_prefix('?') {
        let next = tokens(t, t.len() - after.len());
        let said = |i: usize, w: &str| next.get(i).is_some_and(|tok| tok.text.to_lowercase() == w);
        let n = if said(0, "it's") || said(0, "it’s") || said(0, "это") {
            1
        } else if said(0, "it") && said(1, "is") {
            2
        } else {
            return None;
        };
        return value_after(t, next[n - 1].end);
    }
    if rest.starts_with("::") {
        return None; // a `Type::path`
    }
    if let Some(sep) = ["=>", ":=", ":", "="]
        .iter()
        .find(|s| rest.starts_with(**s))
    {
        // `password=X` is an assignment, the assignment rules' (they take any value); a word
        // they do not take as a key (`key: X`, `ключ: X`) is read here.
        // `**Password:** X` is none either: the mark stands between the key and its value.
        let from = at + sep.len();
        let closer = md_closer(t, from);
        let read = (!key_is_assigned || closer > 0) && (!plural || passwords);
        return read
            .then(|| value_after(t, from + closer))
            .flatten()
            .map(|v| Tail {
                verb: Verb::Attached,
                ..v
            });
    }
    if !rest.starts_with([' ', '\t']) {
        return None; // `tokenizer`, `password_file`, `keyboard`
    }
    let toks = tokens(t, at);
    for fill in 0..=MAX_FILL.min(toks.len()) {
        if fill > 0 {
            let word = toks[fill - 1].text;
            let bare = word.strip_suffix(':').unwrap_or(word);
            let lower = bare.to_lowercase();
            // `the password you gave me, X, works`: the value between commas after the words.
            let clause = word.strip_suffix(',').is_some_and(fill_word);
            if clause && !plural && determined && between_commas(&toks[fill..]) {
                return Some(Tail {
                    value_at: toks[fill].start,
                    verb: Verb::Said,
                });
            }
            if !fill_word(bare)
                || is_secret_word(bare)
                || (fill == 1 && keys::is_about_a_secret(&lower))
                || (fill == 1 && adjective && !qualifies_a_key(bare, &lower))
            {
                // A clause ends; another secret word, which is a match of its own; words that
                // say what the secret is ABOUT (`token count`); `key` as an adjective (`the key
                // question is`).
                break;
            }
            if bare.len() < word.len() {
                // `password for prod: X`
                return (!plural)
                    .then(|| value_after(t, toks[fill - 1].end))
                    .flatten();
            }
        }
        if let Some((n, separator)) = verb_at(&toks[fill..], setter) {
            if separator && plural {
                break;
            }
            let from = toks[fill + n - 1].end;
            let tail = value_after(t, from).or_else(|| {
                // `the password is:` and the value alone on the next line.
                (!separator).then(|| value_on_next_line(t, from)).flatten()
            })?;
            // `key = X` is written as code writes it; `the key for prod = X` as a sentence.
            let attached = separator && fill == 0 && matches!(toks[0].text, "=" | ":=" | "=>");
            return Some(Tail {
                verb: if attached { Verb::Attached } else { tail.verb },
                ..tail
            });
        }
    }
    if plural {
        return None;
    }
    // No verb: the value follows the word, or an acronym that qualifies it (`ключ API X`).
    let first = toks.first()?;
    let value = match toks.get(1) {
        Some(next) if is_acronym(first.text) => next,
        _ => first,
    };
    Some(Tail {
        value_at: value.start,
        verb: Verb::None,
    })
}

/// Whether the words before a secret word make a sentence (`the key: …`, `my key = …`) rather
/// than code (`let key = …`, `(&self, key: …`, a key at the start of a YAML line).
fn in_a_sentence(before: &[String]) -> bool {
    const CODE: &[&str] = &[
        "let", "mut", "const", "var", "val", "pub", "static", "final", "auto", "def", "fn", "self",
        "this", "local", "export", "type",
    ];
    before.last().is_some_and(|w| !CODE.contains(&w.as_str()))
}

/// `X, works`: a token ending with a comma, then a word of a sentence (lower case letters
/// alone), as an apposition is written; a list goes on with more items (`$aesdata0, $aesdata1,`).
fn between_commas(toks: &[Tok<'_>]) -> bool {
    let [value, next, ..] = toks else {
        return false;
    };
    value.text.len() > 1
        && value.text.ends_with(',')
        && next
            .text
            .chars()
            .all(|c| c.is_alphabetic() && c.is_lowercase())
}

/// The value after a verb ending at `from`, on the same line.
fn value_after(t: &str, from: usize) -> Option<Tail> {
    let rest = &t[from..];
    let body = rest.trim_start_matches([' ', '\t']);
    if body.is_empty() || body.starts_with(['\n', '\r']) {
        return None;
    }
    Some(Tail {
        value_at: from + rest.len() - body.len(),
        verb: Verb::Said,
    })
}

/// A word of a sentence between the secret word and its verb (`for 🔑 is`, `for x> is`): no
/// clause ends in it, it assigns nothing and it is not code (`` `Authorization: ``).
fn fill_word(w: &str) -> bool {
    // A parenthesis around words (`the password (for prod) is X`) is the sentence's.
    let w = w.strip_prefix('(').unwrap_or(w);
    let w = w.strip_suffix(')').unwrap_or(w);
    !w.is_empty()
        && !w.contains([':', '=', '`', '"', '(', ')', '[', ']', '{', '}'])
        && !w.ends_with(['.', ',', ';', '!', '?'])
}

/// `API`, `SSH`, `JWT`: an acronym after a secret word qualifies it.
fn is_acronym(w: &str) -> bool {
    (2..=5).contains(&w.len()) && w.chars().all(|c| c.is_ascii_uppercase())
}

/// The verb phrase at the start of `toks`, if any: (how many words, whether a separator).
fn verb_at(toks: &[Tok<'_>], setter: bool) -> Option<(usize, bool)> {
    let first = toks.first()?;
    let said = |phrase: &[&str]| {
        phrase.len() <= toks.len()
            && phrase.iter().zip(toks).enumerate().all(|(i, (p, tok))| {
                let w = if i + 1 == phrase.len() {
                    tok.text.strip_suffix(':').unwrap_or(tok.text)
                } else {
                    tok.text
                };
                w.to_lowercase() == *p
            })
    };
    let mut best = words::VERBS
        .iter()
        .filter(|p| said(p))
        .map(|p| p.len())
        .max();
    if best.is_none() && setter && (said(&["to"]) || said(&["на"])) {
        best = Some(1);
    }
    // A verb phrase may start with a separator (`- это`): the phrase first.
    match best {
        Some(n) => Some((n, false)),
        None => words::SEPARATORS.contains(&first.text).then_some((1, true)),
    }
}

/// A whitespace-separated word of the line after the secret word, with its byte range.
struct Tok<'a> {
    text: &'a str,
    start: usize,
    end: usize,
}

/// The words of the rest of the line from `at`: enough for the longest word run and verb,
/// read no further (a huge one-line text costs no more than a short one).
fn tokens(t: &str, at: usize) -> Vec<Tok<'_>> {
    const MOST: usize = MAX_FILL + 5;
    let mut out = Vec::new();
    let mut i = at;
    let bytes = t.as_bytes();
    while out.len() < MOST {
        while i < bytes.len() && matches!(bytes[i], b' ' | b'\t') {
            i += 1;
        }
        if i >= bytes.len() || matches!(bytes[i], b'\n' | b'\r') {
            break;
        }
        let start = i;
        while i < bytes.len() && !matches!(bytes[i], b' ' | b'\t' | b'\n' | b'\r') {
            i += 1;
        }
        out.push(Tok {
            text: &t[start..i],
            start,
            end: i,
        });
    }
    out
}

/// The last few words before byte `at` on its line, lower-cased, nearest last.
fn words_before(t: &str, at: usize) -> Vec<String> {
    let mut from = at.saturating_sub(64);
    while !t.is_char_boundary(from) {
        from += 1;
    }
    let before = &t[from..at];
    // Only the words of this phrase: punctuation or code (`` ` ``, `(`, `:`) ends it.
    let phrase_start = before
        .char_indices()
        .rev()
        .find(|(_, c)| !(c.is_alphanumeric() || matches!(c, ' ' | '\t' | '\'' | '’' | '-')))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let before = &before[phrase_start..];
    let mut words: Vec<String> = before
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        // A quote opening the sentence (`'use the token X'`) is not the word's apostrophe.
        .map(|w| w.trim_matches('\''))
        .filter(|w| !w.is_empty())
        .rev()
        .take(3)
        .map(str::to_lowercase)
        .collect();
    words.reverse();
    words
}

/// The value starting at `at`: a quoted string, or the token up to the next space without a
/// sentence's punctuation around it. (start, end, quoted).
fn value_span(t: &str, at: usize) -> Option<(usize, usize, bool)> {
    if t[at..].starts_with("[REDACTED") {
        return None;
    }
    let val = value::extent(t, at, Splits::AtPairs);
    let (mut s, mut e) = (val.start, val.end);
    if !val.quoted {
        e = s + t[s..].find(char::is_whitespace).unwrap_or(t.len() - s);
        // `<b>X</b>`, `X<br/>`: HTML tags around a value are markup, not the value.
        while let Some(n) = html_tag(&t[s..e]).filter(|n| !t[s..s + n].starts_with("</")) {
            s += n;
        }
        if let Some(p) =
            (1..e - s).find(|&p| t.is_char_boundary(s + p) && html_tag(&t[s + p..e]).is_some())
        {
            e = s + p;
        }
        // A value opening a quote or bracket is prose punctuation, not the secret's first byte.
        while s < e && t[s..e].starts_with(['(', '[', '«', '"', '\'', '`', '*', '~']) {
            s += t[s..].chars().next().map_or(1, char::len_utf8);
        }
        // A sentence's full stop, comma or closing bracket is not part of it; a bracket the
        // value opened is (`${DB_PASSWORD}`).
        while let Some(last) = t[s..e].chars().next_back() {
            let unopened = |open: char| {
                let v = &t[s..e];
                v.matches(open).count() < v.matches(last).count()
            };
            let trim = match last {
                '.' | ',' | ';' | ':' | '"' | '\'' | '`' | '*' | '~' => true,
                ')' => unopened('('),
                ']' => unopened('['),
                '}' => unopened('{'),
                '»' => unopened('«'),
                _ => false,
            };
            if !trim {
                break;
            }
            e -= last.len_utf8();
        }
    }
    (s < e).then_some((s, e, val.quoted))
}
