//! Where a secret value starts and ends, and which values are exempt.
//!
//! A value runs to the end of its token as a shell or a URL parser reads it: quotes are followed
//! to their closing quote, and `&`, `;` or `,` end it only when a separator would (a next
//! `name=` pair, a space, the end). The exempt values are an exact list (see [`is_exempt`]);
//! everything else after a secret-named key is a secret, whatever it looks like.

use super::TextKind;

/// An unquoted or quoted value: the byte range of its content and whether it was quoted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Value {
    pub start: usize,
    pub end: usize,
    pub quoted: bool,
}

/// Which separators may end an unquoted value when a `name=` pair follows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Splits {
    /// `&` and `;` (a query string, a connection string).
    AtPairs,
    /// Only `;`: the value is itself a `k=v&k=v` list (an Azure SAS).
    AtSemicolon,
    /// Neither: a `KEY=value` line (`.env`, shell), whose value is the whole token.
    Never,
}

/// The value that starts at byte `at` of `text`.
pub(super) fn extent(text: &str, at: usize, splits: Splits) -> Value {
    let rest = &text[at..];
    for q in ["\\\"", "\"", "'", "`"] {
        if let Some(body) = rest.strip_prefix(q) {
            if let Some(len) = closing_quote(body, q) {
                let start = at + q.len();
                return Value {
                    start,
                    end: start + len,
                    quoted: true,
                };
            }
            // No closing quote on this line: the rest of the token is the value.
            let start = at + q.len();
            return Value {
                start,
                end: start + unquoted_len(body, splits),
                quoted: false,
            };
        }
    }
    Value {
        start: at,
        end: at + unquoted_len(rest, splits),
        quoted: false,
    }
}

/// Length of a quoted body up to (not including) its closing `q`, on the same line.
fn closing_quote(body: &str, q: &str) -> Option<usize> {
    let bytes = body.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\n' {
            return None;
        }
        if bytes[i..].starts_with(q.as_bytes()) {
            return Some(i);
        }
        if bytes[i] == b'\\' && q != "'" {
            // `\"` inside `"…"`, `\\` anywhere; in `\"…\"` (JSON-escaped) a `\\` is one char.
            if q == "\\\"" && bytes[i..].starts_with(b"\\\\") {
                i += 2;
                continue;
            }
            if q != "\\\"" {
                i += 2;
                continue;
            }
        }
        i += 1;
    }
    None
}

/// Length of an unquoted token read as a shell or URL parser would.
fn unquoted_len(s: &str, splits: Splits) -> usize {
    let bytes = s.as_bytes();
    // A YAML block indicator (`|`, `|-`, `>+`) is a value of its own; the caller looks after it.
    if let Some(ind) = ["|-", "|+", "|"].iter().find(|i| s.starts_with(**i)) {
        let after = bytes.get(ind.len()).copied();
        if matches!(after, None | Some(b' ' | b'\t' | b'\r' | b'\n' | b'\\')) {
            return ind.len();
        }
    }
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let next = bytes.get(i + 1).copied();
        match b {
            b' ' | b'\t' | b'\n' | b'\r' | b'"' | b'\'' | b'`' | b'<' | b'>' => break,
            b'\\' => match next {
                // JSON escapes end a value embedded in a JSON string.
                Some(b'n' | b'r' | b't' | b'"' | b'\'' | b'u') => break,
                // A backslash-newline continues the value on the next line.
                Some(b'\n') => {
                    i += 2;
                    continue;
                }
                _ => {}
            },
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                if depth == 0 {
                    break;
                }
                depth -= 1;
            }
            b'|' if matches!(next, None | Some(b' ' | b'\t' | b'|')) => break,
            b'&' | b';' | b',' => {
                let after = &s[i + 1..];
                let ends = after.is_empty()
                    || after.starts_with('\\')
                    || after.starts_with([' ', '\t', '\n', '\r', '"', '\'', '`', '&', ';', ','])
                    || after.starts_with("\\n")
                    || (b == b',' && depth > 0);
                let may_split = match splits {
                    Splits::AtPairs => true,
                    Splits::AtSemicolon => b == b';',
                    Splits::Never => false,
                };
                if ends || (may_split && starts_pair(after, b == b';')) {
                    break;
                }
            }
            _ => {}
        }
        i += 1;
    }
    i
}

/// `name=`: the next pair of a query string or (after `;`, where names may hold a space, as in
/// `User ID=`) of a connection string.
fn starts_pair(s: &str, spaced_names: bool) -> bool {
    let name_len = s
        .find(|c: char| {
            !(c.is_alphanumeric()
                || matches!(c, '_' | '-' | '.' | '[' | ']')
                || (spaced_names && c == ' '))
        })
        .unwrap_or(s.len());
    name_len > 0
        && s[..name_len]
            .chars()
            .next()
            .is_some_and(char::is_alphabetic)
        && s[name_len..].starts_with('=')
        && !s[name_len..].starts_with("==") // base64 padding, not a pair
}

/// Words that stand for "no value here" (compared case-insensitively, whole value).
pub const EXEMPT_WORDS: &[&str] = &[
    "changeme",
    "change_me",
    "change-me",
    "null",
    "none",
    "nil",
    "undefined",
    "true",
    "false",
    "required",
    "optional",
    "redacted",
    "placeholder",
    // MySQL's `(using password: YES)` / `NO` says whether one was sent.
    "yes",
    "no",
];

/// Type names: a value in a type position (`secrets_redacted: u64`, `token: string | null`).
const TYPE_NAMES: &[&str] = &[
    "str",
    "&str",
    "string",
    "bytes",
    "secretstr",
    "secretstring",
    "bool",
    "boolean",
    "number",
    "int",
    "integer",
    "float",
    "u8",
    "u16",
    "u32",
    "u64",
    "u128",
    "usize",
    "i8",
    "i16",
    "i32",
    "i64",
    "i128",
    "isize",
    "f32",
    "f64",
    "char",
    "any",
    "unknown",
    "object",
];

/// Receivers whose members are settings, not literals (`self.password`, `config.db.token`).
const RECEIVERS: &[&str] = &[
    "self",
    "this",
    "cls",
    "ctx",
    "config",
    "cfg",
    "conf",
    "settings",
    "options",
    "opts",
    "args",
    "params",
    "props",
    "env",
    "process",
    "os",
    "data",
    "request",
    "req",
    "form",
    "secrets",
    "credentials",
    "vault",
    "input",
    "state",
    "app",
];

/// Whether a value is one of the documented non-secrets (README "Secrets"):
/// - empty, or already `[REDACTED]`; one or two punctuation characters (`,`, `""`);
/// - a mask made only of `*`, `•`, `●`, `x`, `X`, `.`, `…`, `#`, `-`, `_` (`***`, `xxxx`, `...`);
/// - a reference: `${VAR}`, `$VAR` / `%VAR%` with an UPPER_CASE name, `{{ … }}`, `$(…)`, `<% … %>`,
///   `%s`, `%(name)s`, `{}` / `{name}`;
/// - an angle placeholder: `<password>`, `<your token>`;
/// - a word of [`EXEMPT_WORDS`] (`changeme`, `null`, …).
///
/// Unquoted values outside config files are also exempt when they are code: a type name
/// (`u64`, `Option<String>`), a value opening a bracket (`(t: string) => void`, `{ … }`), a
/// call, index or macro (`get_password()`, `os.environ["X"]`), a
/// member of a settings receiver or one repeating the key (`self.password`, `data.token`),
/// or the key's own name (`password=password`). Any other value is a secret, `$ecret1` included.
pub(super) fn is_exempt(v: &str, quoted: bool, key: Option<&str>, kind: TextKind) -> bool {
    let v = v.trim();
    if v.is_empty() || v.starts_with("[REDACTED") {
        return true;
    }
    let block_indicator = matches!(v, "|" | "|-" | "|+" | ">" | ">-" | ">+");
    if v.chars().count() <= 2 && !v.chars().any(char::is_alphanumeric) && !block_indicator {
        return true; // `secret:","` in a JSON list of lines: structure, not a value
    }
    if v.chars()
        .all(|c| matches!(c, '*' | '•' | '●' | 'x' | 'X' | '.' | '…' | '#' | '-' | '_'))
    {
        return true;
    }
    if is_reference(v) {
        return true;
    }
    if v.len() > 2 && v.starts_with('<') && v.ends_with('>') && !v[1..].contains('<') {
        return true;
    }
    if EXEMPT_WORDS.iter().any(|w| v.eq_ignore_ascii_case(w)) {
        return true;
    }
    if quoted || kind == TextKind::Config {
        return false;
    }
    is_code(v, key)
}

/// `${VAR}`, `$VAR`, `%VAR%`, `{{ x }}`, `$(cmd)`, `<% x %>`, `%s`, `%(x)s`, `{}`, `{x}`.
fn is_reference(v: &str) -> bool {
    let upper_ident = |s: &str| {
        s.starts_with(|c: char| c.is_ascii_uppercase() || c == '_')
            && s.chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
    };
    if v.starts_with("${") && v.ends_with('}') || v.starts_with("$(") && v.ends_with(')') {
        return true;
    }
    if v.starts_with("{{") && v.ends_with("}}") || v.starts_with("<%") && v.ends_with("%>") {
        return true;
    }
    if let Some(name) = v.strip_prefix('$') {
        return upper_ident(name);
    }
    if let Some(name) = v.strip_prefix('%').and_then(|n| n.strip_suffix('%')) {
        return upper_ident(name);
    }
    if v == "%s" || (v.starts_with("%(") && v.ends_with(")s")) {
        return true;
    }
    v.strip_prefix('{')
        .and_then(|n| n.strip_suffix('}'))
        .is_some_and(|n| n.is_empty() || is_ident(n) || n.parse::<u32>().is_ok())
}

/// An unquoted value that is code, not a literal (see [`is_exempt`]).
fn is_code(v: &str, key: Option<&str>) -> bool {
    let lower = v.to_ascii_lowercase();
    if TYPE_NAMES.contains(&lower.as_str()) {
        return true;
    }
    let key_plain = key.map(|k| k.trim_matches(|c: char| !c.is_alphanumeric()));
    if key_plain.is_some_and(|k| v.eq_ignore_ascii_case(k)) {
        return true; // the key's own name: a variable passed along
    }
    let head_len = v
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .unwrap_or(v.len());
    let head = &v[..head_len];
    if v.starts_with(['(', '{', '[']) {
        return true; // a function type, an object or a list: `(token: string) => void`
    }
    if !head.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        return v.starts_with("&'") || v.starts_with("&mut ") || v == "&[u8]";
    }
    let tail = &v[head_len..];
    let code_tail = ["(", "[", "::", "!(", "![", "!{", "?.", "?;"];
    if code_tail.iter().any(|p| tail.starts_with(p)) || tail == "?" {
        return true; // a call, an index, a macro, a path or `?`
    }
    if tail.starts_with('<') && tail.ends_with('>') {
        return true; // Option<String>
    }
    if tail.is_empty() && head.contains('.') && head.split('.').all(is_ident) {
        let mut parts = head.split('.');
        let first = parts.next().unwrap_or("");
        let last = head.rsplit('.').next().unwrap_or("");
        let repeats_key = key_plain.is_some_and(|k| {
            let k = super::keys::last_segment(k);
            last.to_ascii_lowercase().contains(&k)
        });
        return repeats_key || RECEIVERS.contains(&first.to_ascii_lowercase().as_str());
    }
    false
}

pub(super) fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// True when only indentation, `export`, `set` or a list dash precede `pos` on its line.
/// Looks back only over those, so it stays cheap on huge single-line texts.
pub(super) fn at_line_start(text: &str, pos: usize) -> bool {
    let blank = [' ', '\t'];
    let mut before = text[..pos].trim_end_matches(blank);
    for prefix in ["export", "set", "-"] {
        if let Some(rest) = before.strip_suffix(prefix) {
            if rest.is_empty() || rest.ends_with([' ', '\t', '\n']) {
                before = rest.trim_end_matches(blank);
                break;
            }
        }
    }
    before.is_empty() || before.ends_with('\n')
}

/// Extend a value ending at `from` to the end of its line (a real newline or an escaped `\n`,
/// `\r`, `\"` as found in JSON strings), trailing whitespace excluded.
pub(super) fn line_end(text: &str, from: usize) -> usize {
    let rest = &text[from..];
    let mut end = rest.len();
    for (i, c) in rest.char_indices() {
        if c == '\n' || c == '\r' {
            end = i;
            break;
        }
        if c == '\\' && matches!(rest.as_bytes().get(i + 1), Some(b'n' | b'r' | b'"')) {
            end = i;
            break;
        }
    }
    let line = &rest[..end];
    // Only a plain `.env`/YAML tail (`correct horse battery`, `# comment`) is taken; code
    // (`string | null;`) or further pairs (`b=2`, URLs) stay.
    let code = |c: char| "=,;{}()[]|&<>`\"'".contains(c);
    if line.contains(code) || line.contains("://") {
        return from;
    }
    from + line.trim_end().len()
}

/// A value continued on the following lines: a YAML block scalar (`password: |`) or a key
/// with nothing after it whose value sits alone on the next, deeper-indented line. Returns the
/// range of those lines, or `None`.
pub(super) fn next_lines_value(
    text: &str,
    key_line_start: usize,
    after_sep: usize,
) -> Option<(usize, usize)> {
    let line_end = text[after_sep..]
        .find('\n')
        .map_or(text.len(), |i| after_sep + i);
    let rest_of_line = text[after_sep..line_end].trim();
    let block = matches!(rest_of_line, "|" | ">" | "|-" | ">-" | "|+" | ">+");
    if !(block || rest_of_line.is_empty()) || line_end >= text.len() {
        return None;
    }
    let indent = |l: &str| l.len() - l.trim_start_matches([' ', '\t']).len();
    let key_indent = indent(&text[key_line_start..line_end]);
    let start = line_end + 1;
    let mut end = start;
    let mut pos = start;
    for line in text[start..].split('\n') {
        let content = line.trim_end_matches('\r');
        if content.trim().is_empty() || indent(content) <= key_indent {
            break;
        }
        if !block {
            // One plain scalar, not a nested mapping (`password:\n  min_length: 8`) or list.
            let t = content.trim();
            let nested =
                t.starts_with("- ") || t.contains(": ") || t.ends_with(':') || t.starts_with('#');
            if nested && pos == start {
                return None;
            }
            if nested {
                break;
            }
        }
        end = pos + content.len();
        pos += line.len() + 1;
        if pos > text.len() {
            break;
        }
    }
    (end > start).then_some((start + indent(&text[start..end]), end))
}
