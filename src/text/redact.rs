//! Secret redaction (contract DECISIONS §12): sources redact before anything reaches a store and
//! the coordinator redacts again on the way out, so this must be cheap, idempotent and total.
//!
//! A secret VALUE becomes `[REDACTED]`; the key name around it stays, so a redacted config is
//! still findable by its keys. Covered: passwords in URLs, `key = value` style assignments whose
//! key names a secret (code, JSON, YAML, `.env`, INI, CLI flags, XML, connection strings such as
//! `Password=…;` or `AccountKey=…`, Russian `пароль: …`), secrets said in a sentence in prose
//! (`the password is …`, `пароль — …`, [`prose`]), cells of Markdown tables under a secret-named
//! header or beside a secret-named key cell ([`table`]), a value right after a secret word in a
//! name or a field that names something (`fix/password-X`, `subagent_type: scout token X`,
//! [`name`]), `.netrc` lines, values continued on the next lines (YAML block scalars, a
//! backslash-newline), well-known token shapes (AWS, GitHub, GitLab, Slack, OpenAI/Anthropic,
//! Google, Stripe, JWT, npm, Hugging Face, Telegram, Yandex Cloud), `Authorization`/`Bearer`
//! credentials, PEM and PuTTY private keys.
//!
//! A value after a secret-named key is a secret whatever it looks like; only the exact list in
//! [`value::is_exempt`] is not (`${VAR}`, `$VAR`, `<password>`, `changeme`, `***`, an empty value,
//! `[REDACTED]`, …). What else counts as "not a literal" depends on the [`TextKind`]: in source
//! code only string literals (and comments) hold secrets, so `let mut secrets = 0` or
//! `password = os.environ["X"]` stay readable; prose and transcripts are redacted strictly.
//! A redaction never changes the number of lines, so code line numbers stay true.

mod assign;
mod keys;
mod literal;
mod name;
mod patterns;
mod prose;
mod table;
mod value;

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex};

use literal::literal_or_comment;
pub use name::redact_name;
use patterns::*;
use value::Splits;
pub use value::EXEMPT_WORDS;

/// What a redacted value is replaced with.
pub const REDACTED: &str = "[REDACTED]";

/// What kind of text is redacted, which decides what counts as a literal value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TextKind {
    /// Transcripts, task text, skill and agent files, Markdown, text of unknown origin: every
    /// value after a secret-named key is a secret unless exempt or plainly code (a call, a type).
    #[default]
    Prose,
    /// A config, `.env`, INI, YAML, TOML, JSON or shell file: every value is a literal, so only
    /// the exempt placeholders are kept.
    Config,
    /// Source code: a value is a secret when it is a string literal, or inside one, or in a
    /// comment; identifiers, numbers, types, calls and expressions are not.
    Code {
        /// `'…'` delimits strings (Python, JavaScript, PHP), not characters or lifetimes (Rust).
        single_quoted_strings: bool,
    },
}

/// Redacted text and how many values were replaced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redacted {
    pub text: String,
    pub count: usize,
}

/// Redact prose (see the module docs). Never panics; `redact(redact(x).text) == redact(x)`.
pub fn redact(text: &str) -> Redacted {
    redact_as(text, TextKind::Prose)
}

/// Redact text of a known kind.
pub fn redact_as(text: &str, kind: TextKind) -> Redacted {
    let (text, count) = redact_cow_as(text, kind);
    Redacted {
        text: text.into_owned(),
        count,
    }
}

/// Like [`redact`], without allocating when nothing is redacted.
pub fn redact_cow(text: &str) -> (Cow<'_, str>, usize) {
    redact_cow_as(text, TextKind::Prose)
}

/// Like [`redact_as`], without allocating when nothing is redacted.
pub fn redact_cow_as(text: &str, kind: TextKind) -> (Cow<'_, str>, usize) {
    if !TRIGGER.is_match(text) {
        return (Cow::Borrowed(text), 0);
    }
    let mut total = 0;
    let mut out = Cow::Borrowed(text);
    // A redaction can expose a match that an overlapping, rejected candidate hid; repeat until
    // nothing changes so that redacting again is a no-op.
    for _ in 0..MAX_PASSES {
        let (next, n) = redact_pass(out, kind);
        out = next;
        total += n;
        if n == 0 {
            break;
        }
    }
    (out, total)
}

/// Upper bound on whole-text passes; in practice the second pass finds nothing.
const MAX_PASSES: usize = 6;

/// One pass of every rule, in order.
fn redact_pass(text: Cow<'_, str>, kind: TextKind) -> (Cow<'_, str>, usize) {
    let mut count = 0;
    let mut out = text;
    out = gated(
        out,
        Gate::Contains("-----BEGIN"),
        &PEM_BEGIN,
        &mut count,
        pem_block,
    );
    out = gated(
        out,
        Gate::Contains("Private-Lines:"),
        &PUTTY_PRIVATE,
        &mut count,
        |c, t| putty_body(t, c.get(0)?.end()),
    );
    out = gated(
        out,
        Gate::Contains("Private-"),
        &PUTTY_MAC,
        &mut count,
        |c, _| group(c, 1),
    );
    out = gated(
        out,
        Gate::Contains("://"),
        &URL_USERINFO,
        &mut count,
        |c, _| {
            let m = c.get(2)?;
            (!value::is_exempt(m.as_str(), true, None, kind)).then(|| (m.start(), m.end()))
        },
    );
    out = gated(
        out,
        Gate::Regex(&TOKEN_SHAPES_GATE),
        &TOKEN_SHAPES,
        &mut count,
        |c, _| {
            let m = c.get(0)?;
            let s = m.as_str();
            // `sk-…` also starts ordinary hyphenated words; a key has digits in it.
            if s.starts_with("sk-") && !s.bytes().any(|b| b.is_ascii_digit()) {
                return None;
            }
            Some((m.start(), m.end()))
        },
    );
    out = gated(out, Gate::Contains(":AA"), &TELEGRAM, &mut count, |c, _| {
        group(c, 0)
    });
    out = gated(
        out,
        Gate::Contains("hooks.slack.com/services/"),
        &SLACK_WEBHOOK,
        &mut count,
        |c, _| group(c, 1),
    );
    out = apply(out, &AUTH_HEADER, &mut count, |c, _| {
        let v = c.get(2)?;
        let has_scheme = c.get(1).is_some_and(|s| !s.as_str().trim().is_empty());
        if value::is_exempt(v.as_str(), true, None, kind) || (!has_scheme && v.as_str().len() < 12)
        {
            return None;
        }
        Some((v.start(), v.end()))
    });
    out = apply(out, &BEARER, &mut count, |c, _| group(c, 1));
    out = apply(out, &CLI_FLAG, &mut count, |c, t| {
        let v = c.get(1).or_else(|| c.get(2)).or_else(|| c.get(3))?;
        let val = value::extent(t, v.start(), Splits::AtPairs);
        let inner = &t[val.start..val.end];
        if inner.starts_with('-') || value::is_exempt(inner, val.quoted, None, TextKind::Config) {
            return None;
        }
        Some((val.start, val.end))
    });
    out = gated(
        out,
        Gate::Contains("</"),
        &XML_ELEMENT,
        &mut count,
        |c, _| {
            let (open, close, v) = (c.get(1)?, c.get(3)?, c.get(2)?);
            let ok = xml_value_fits(c)
                && open.as_str().eq_ignore_ascii_case(close.as_str())
                && keys::is_secret_key(open.as_str())
                && !value::is_exempt(v.as_str(), true, None, kind);
            ok.then(|| (v.start(), v.end()))
        },
    );
    out = apply(out, &NETRC_INLINE, &mut count, |c, t| {
        literal_at(c, t, 1, None, kind)
    });
    out = apply(out, &NETRC_LINE, &mut count, |c, t| {
        literal_at(c, t, 1, None, kind)
    });
    out = gated(
        out,
        Gate::Regex(&PHRASE_GATE),
        &PHRASE,
        &mut count,
        |c, t| literal_at(c, t, 1, None, kind),
    );
    out = apply(out, &ASSIGNMENT, &mut count, |c, t| {
        assign::assignment(c, t, kind)
    });
    out = gated(
        out,
        Gate::Regex(&KEY_ALONE_GATE),
        &KEY_ALONE,
        &mut count,
        |c, t| {
            let key = c.name("key")?;
            let code = matches!(kind, TextKind::Code { .. });
            if code || !keys::is_secret_key(key.as_str()) || keys::looks_like_file(key.as_str()) {
                return None;
            }
            let line_start = c.get(0)?.start();
            let (s, e) = value::next_lines_value(t, line_start, c.name("sep")?.end())?;
            let one_quoted_line = !t[s..e].contains('\n') && t[s..e].starts_with(['"', '\'']);
            let (s, e, quoted) = if one_quoted_line {
                let v = value::extent(&t[..e], s, Splits::AtPairs);
                (v.start, v.end, v.quoted)
            } else {
                (s, e, false)
            };
            let body = &t[s..e];
            (!value::is_exempt(body, quoted, Some(key.as_str()), TextKind::Config))
                .then_some((s, e))
        },
    );
    // Secrets said in a sentence (`prose::pick`): anywhere in prose; in code and config only in
    // a comment or a string literal, where people write sentences (`# the admin password is
    // X`, `"the token is X"`), never in the code around them (`let token = next_token();`).
    out = gated(
        out,
        Gate::Regex(&PROSE_SECRET_GATE),
        &prose::PROSE_SECRET,
        &mut count,
        |c, t| {
            let single_quoted_strings = match kind {
                TextKind::Prose => return prose::pick(c, t, kind),
                TextKind::Config => true,
                TextKind::Code {
                    single_quoted_strings,
                } => single_quoted_strings,
            };
            // The sentence ends with its comment or literal: `"password missing".into()` says
            // nothing of the code after the quote.
            let at = c.name("key")?.start();
            let end = literal::sentence_end(t, at, single_quoted_strings)?;
            prose::pick(c, &t[..end], TextKind::Prose)
        },
    );
    if kind == TextKind::Prose {
        out = table::redact(out, &mut count);
    }
    if !matches!(kind, TextKind::Code { .. }) {
        out = name::named_fields(out, &mut count);
    }
    (out, count)
}

/// The value starting at capture `g` (0: the `val` group) when it is a literal secret.
fn literal_at(
    c: &Captures,
    t: &str,
    g: usize,
    key: Option<&str>,
    kind: TextKind,
) -> Option<(usize, usize)> {
    let at = if g == 0 { c.name("val")? } else { c.get(g)? }.start();
    let splits = if key.is_some_and(keys::value_holds_pairs) {
        Splits::AtSemicolon
    } else if key.is_some() && value::at_line_start(t, c.get(0)?.start()) {
        Splits::Never // `KEY=a&b=c` on a line of its own: the value is the whole token
    } else {
        Splits::AtPairs
    };
    let val = value::extent(t, at, splits);
    let inner = &t[val.start..val.end];
    if key.is_some_and(|k| keys::is_working_dir(k, inner)) {
        return None;
    }
    let kind = match kind {
        TextKind::Code {
            single_quoted_strings,
        } => {
            if literal_or_comment(t, c.get(0)?.start(), single_quoted_strings) {
                TextKind::Prose
            } else if !val.quoted {
                return None; // an identifier, number, type or expression
            } else {
                kind
            }
        }
        other => other,
    };
    if value::is_exempt(inner, val.quoted, key, kind) {
        return None;
    }
    (val.start < val.end).then_some((val.start, val.end))
}

/// A private key block from its BEGIN line to its END line; without an END (truncated
/// output), through the base64 body. The search stops at the next BEGIN, keeping it linear.
fn pem_block(c: &Captures, text: &str) -> Option<(usize, usize)> {
    let begin = c.get(0)?;
    let limit = PEM_BEGIN
        .find_at(text, begin.end())
        .map_or(text.len(), |m| m.start());
    let region = text.get(begin.end()..limit)?;
    let len = match PEM_END.find(region) {
        Some(end) => end.end(),
        None => PEM_BODY.find(region).map_or(0, |m| m.end()),
    };
    Some((begin.start(), begin.end() + len))
}

/// The base64 lines of a PuTTY private key after `Private-Lines: N` (real or escaped newlines,
/// or spaces when the key was pasted onto one line), up to the first token that is not base64.
fn putty_body(text: &str, from: usize) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let is_b64 = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=');
    let skip_sep = |mut i: usize| loop {
        match bytes.get(i) {
            Some(b' ' | b'\t' | b'\r' | b'\n') => i += 1,
            Some(b'\\') if matches!(bytes.get(i + 1), Some(b'n' | b'r')) => i += 2,
            _ => return i,
        }
    };
    let start = skip_sep(from);
    let (mut i, mut end) = (start, start);
    loop {
        let token_end = i + bytes[i..].iter().take_while(|b| is_b64(**b)).count();
        let ends_cleanly = matches!(
            bytes.get(token_end),
            None | Some(b' ' | b'\t' | b'\r' | b'\n' | b'\\')
        );
        if token_end == i || !ends_cleanly {
            break;
        }
        end = token_end;
        i = skip_sep(token_end);
    }
    (end > start).then_some((start, end))
}

/// Whether an `XML_ELEMENT` match's value is within the limit the pattern once spelled as
/// `{1,500}` (see there).
fn xml_value_fits(c: &Captures) -> bool {
    c.get(2)
        .is_some_and(|v| v.as_str().chars().nth(XML_VALUE_MAX).is_none())
}

/// Replace each of `ranges` (on one line each, in order, not overlapping) with [`REDACTED`].
fn replace_ranges<'a>(
    text: Cow<'a, str>,
    ranges: &[(usize, usize)],
    count: &mut usize,
) -> Cow<'a, str> {
    if ranges.is_empty() {
        return text;
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for &(s, e) in ranges {
        if s < last || e <= s {
            continue;
        }
        out.push_str(&text[last..s]);
        out.push_str(REDACTED);
        last = e;
        *count += 1;
    }
    out.push_str(&text[last..]);
    Cow::Owned(out)
}

fn group(c: &Captures, g: usize) -> Option<(usize, usize)> {
    c.get(g).map(|m| (m.start(), m.end()))
}

/// What must be in a text for a pattern to match it, so that a pattern is compiled only for a
/// text that needs it (compiling all of them was most of a one-shot `knowledge search`): a
/// regex that must match somewhere (`patterns::TOKEN_SHAPES_GATE` and its siblings), or a
/// literal every match holds (`</` of `XML_ELEMENT`, `://` of `URL_USERINFO`, …).
enum Gate {
    Regex(&'static LazyLock<Regex>),
    Contains(&'static str),
}

impl Gate {
    fn opens(&self, text: &str) -> bool {
        match self {
            Gate::Regex(g) => g.is_match(text),
            Gate::Contains(s) => text.contains(s),
        }
    }
}

/// [`apply`], only when the gate (a necessary condition of any match) holds for the text:
/// otherwise the pattern can match nothing there, and is not even compiled for it.
fn gated<'a>(
    text: Cow<'a, str>,
    gate: Gate,
    re: &'static LazyLock<Regex>,
    count: &mut usize,
    pick: impl FnMut(&Captures, &str) -> Option<(usize, usize)>,
) -> Cow<'a, str> {
    if gate.opens(&text) {
        apply(text, re, count, pick)
    } else {
        text
    }
}

/// Replace the ranges chosen by `pick` for each match of `re` with [`REDACTED`]. A range that
/// spans lines becomes one `[REDACTED]` per line, so line numbers stay true.
fn apply<'a>(
    text: Cow<'a, str>,
    re: &Regex,
    count: &mut usize,
    mut pick: impl FnMut(&Captures, &str) -> Option<(usize, usize)>,
) -> Cow<'a, str> {
    let mut out: Option<String> = None;
    let mut last = 0;
    for caps in re.captures_iter(&text) {
        let Some((s, e)) = pick(&caps, &text) else {
            continue;
        };
        if s < last || e <= s || !text.is_char_boundary(s) || !text.is_char_boundary(e) {
            continue;
        }
        let found = &text[s..e];
        if found.split('\n').all(|l| {
            let l = l.strip_suffix('\r').unwrap_or(l);
            l == REDACTED || l.is_empty()
        }) {
            continue;
        }
        let o = out.get_or_insert_with(|| String::with_capacity(text.len()));
        o.push_str(&text[last..s]);
        for (i, line) in found.split('\n').enumerate() {
            if i > 0 {
                o.push('\n');
            }
            let cr = line.ends_with('\r');
            if line.len() > usize::from(cr) {
                o.push_str(REDACTED);
            }
            if cr {
                o.push('\r');
            }
        }
        last = e;
        *count += 1;
    }
    match out {
        None => text,
        Some(mut o) => {
            o.push_str(&text[last..]);
            Cow::Owned(o)
        }
    }
}

#[cfg(test)]
mod equivalence_tests;
#[cfg(test)]
mod literal_tests;
#[cfg(test)]
mod name_tests;
#[cfg(test)]
mod prose_tests;
#[cfg(test)]
mod table_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod wording_tests;
