//! How a value is laid out around the words the prose rule reads: Markdown marks closing
//! around the secret word (`**Password:** X`), HTML tags around the value (`<b>X</b>`), a value
//! alone on the next line (`The password is:\n    X`), a list of passwords (`the passwords are
//! X and Y`).

use super::super::value;
use super::super::TextKind;
use super::shape::looks_like_password;
use super::{value_span, Tail, Verb};

/// The length of the Markdown emphasis or code mark closing at `at` (`**`, `__`, `*`, `` ` ``)
/// when its line opened it before; 0 otherwise.
pub(super) fn md_closer(t: &str, at: usize) -> usize {
    let line = &t[t[..at].rfind('\n').map_or(0, |i| i + 1)..at];
    ["**", "__", "`", "*"]
        .iter()
        .find(|m| t[at..].starts_with(**m) && line.contains(**m))
        .map_or(0, |m| m.len())
}

/// The length of the HTML tag `t` starts with (`<b>`, `</b>`, `<br/>`, `<br />`), if any.
pub(super) fn html_tag(t: &str) -> Option<usize> {
    let body = t.strip_prefix('<')?;
    let body = body.strip_prefix('/').unwrap_or(body);
    let name = body.len()
        - body
            .trim_start_matches(|c: char| c.is_ascii_alphanumeric())
            .len();
    let rest = &body[name..];
    let close = rest.trim_start_matches([' ', '/']);
    let ok =
        name > 0 && body.starts_with(|c: char| c.is_ascii_alphabetic()) && close.starts_with('>');
    ok.then(|| t.len() - close.len() + 1)
}

/// The value alone on the line after the one ending after `from` (`The password is:\n
/// X`): a line of one word, indented or not; a line of words is a sentence.
pub(super) fn value_on_next_line(t: &str, from: usize) -> Option<Tail> {
    let rest = &t[from..];
    let nl = rest.find('\n')?;
    if !rest[..nl].trim().is_empty() {
        return None;
    }
    let next = &rest[nl + 1..];
    let line = next.split('\n').next().unwrap_or(next).trim_end();
    let body = line.trim_start();
    (!body.is_empty() && !body.contains([' ', '\t'])).then(|| Tail {
        value_at: from + nl + 1 + line.len() - body.len(),
        verb: Verb::Said,
    })
}

/// Where a list of passwords whose first item ends at `e` ends: items after `,` or `and`
/// (`и`) that look like passwords, on the same line.
pub(super) fn list_end(t: &str, mut e: usize, kind: TextKind) -> usize {
    for _ in 0..16 {
        let rest = &t[e..];
        let r = rest.strip_prefix(',').unwrap_or(rest);
        let r = r.trim_start_matches([' ', '\t']);
        let r = ["and ", "и "]
            .iter()
            .find_map(|w| r.strip_prefix(w))
            .unwrap_or(r)
            .trim_start_matches([' ', '\t']);
        if r.len() == rest.len() {
            break;
        }
        let Some((s2, e2, quoted)) = value_span(t, t.len() - r.len()) else {
            break;
        };
        let v = &t[s2..e2];
        if !looks_like_password(v) || value::is_exempt(v, quoted, None, kind) {
            break;
        }
        e = e2;
    }
    e
}
