//! Secret redaction (contract DECISIONS §12): sources redact before anything reaches a store and
//! the coordinator redacts again on the way out, so this must be cheap, idempotent and total.
//!
//! A secret VALUE becomes `[REDACTED]`; the key name around it stays, so a redacted config is
//! still findable by its keys. Covered: passwords in URLs, `key = value` style assignments whose
//! key names a secret (code, JSON, YAML, `.env`, CLI flags, XML, Russian `пароль: …`), well-known
//! token shapes (AWS, GitHub, GitLab, Slack, OpenAI/Anthropic, Google, Stripe, JWT, npm,
//! Hugging Face, Telegram, Yandex Cloud), `Authorization`/`Bearer` credentials and PEM private
//! key blocks. Placeholders (`${VAR}`, `$VAR`, `<password>`, `****`, `null`, code expressions such
//! as `os.getenv("X")`) are left alone: they are not secrets and they are useful to search.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex};

/// What a redacted value is replaced with.
pub const REDACTED: &str = "[REDACTED]";

/// Redacted text and how many values were replaced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redacted {
    pub text: String,
    pub count: usize,
}

/// Redact `text` (see the module docs). Never panics; `redact(redact(x).text) == redact(x)`.
pub fn redact(text: &str) -> Redacted {
    let (text, count) = redact_cow(text);
    Redacted {
        text: text.into_owned(),
        count,
    }
}

/// Like [`redact`], without allocating when nothing is redacted.
pub fn redact_cow(text: &str) -> (Cow<'_, str>, usize) {
    if !TRIGGER.is_match(text) {
        return (Cow::Borrowed(text), 0);
    }
    let mut total = 0;
    let mut out = Cow::Borrowed(text);
    // A redaction can expose a match that an overlapping, rejected candidate hid; repeat until
    // nothing changes so that redacting again is a no-op.
    for _ in 0..MAX_PASSES {
        let (next, n) = redact_pass(out);
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
fn redact_pass(text: Cow<'_, str>) -> (Cow<'_, str>, usize) {
    let mut count = 0;
    let mut out = text;
    out = apply(out, &PEM_BEGIN, &mut count, pem_block);
    out = apply(out, &URL_USERINFO, &mut count, |c, _| {
        let m = c.get(2)?;
        (!is_placeholder(m.as_str(), true)).then(|| (m.start(), m.end()))
    });
    out = apply(out, &TOKEN_SHAPES, &mut count, |c, _| {
        let m = c.get(0)?;
        let s = m.as_str();
        // `sk-…` also starts ordinary hyphenated words; a key has digits in it.
        if s.starts_with("sk-") && !s.bytes().any(|b| b.is_ascii_digit()) {
            return None;
        }
        Some((m.start(), m.end()))
    });
    out = apply(out, &TELEGRAM, &mut count, |c, _| whole(c));
    out = apply(out, &SLACK_WEBHOOK, &mut count, |c, _| group(c, 1));
    out = apply(out, &AUTH_HEADER, &mut count, |c, _| {
        let v = c.get(2)?;
        let has_scheme = c.get(1).is_some_and(|s| !s.as_str().trim().is_empty());
        if is_placeholder(v.as_str(), true) || (!has_scheme && v.as_str().len() < 12) {
            return None;
        }
        Some((v.start(), v.end()))
    });
    out = apply(out, &BEARER, &mut count, |c, _| group(c, 1));
    out = apply(out, &CLI_FLAG, &mut count, |c, _| {
        let v = c.get(1).or_else(|| c.get(2)).or_else(|| c.get(3))?;
        let (s, e, quoted) = unquote(v.start(), v.as_str());
        let inner = &v.as_str()[s - v.start()..e - v.start()];
        if inner.starts_with('-') || is_placeholder(inner, quoted) {
            return None;
        }
        Some((s, e))
    });
    out = apply(out, &XML_ELEMENT, &mut count, |c, _| {
        let (open, close, v) = (c.get(1)?, c.get(3)?, c.get(2)?);
        let ok = open.as_str().eq_ignore_ascii_case(close.as_str())
            && is_secret_key(open.as_str())
            && !is_placeholder(v.as_str(), true);
        ok.then(|| (v.start(), v.end()))
    });
    out = apply(out, &PHRASE, &mut count, |c, t| value_range(c, t, 1, false));
    out = apply(out, &ASSIGNMENT, &mut count, |c, t| {
        let key = c.name("key")?;
        if !is_secret_key(key.as_str()) {
            return None;
        }
        if c.name("sep").is_some_and(|s| s.as_str() == ":") && looks_like_file(key.as_str()) {
            return None;
        }
        let line_start = at_line_start(t, c.get(0)?.start());
        let v = c.name("val").or_else(|| c.name("val2"))?;
        let (s, e, quoted) = unquote(v.start(), v.as_str());
        let inner = &t[s..e];
        if !quoted && is_variable_named_like(inner, key.as_str()) {
            return None; // `password=password`, `_csrf_token: csrfToken`: a variable passed along
        }
        let dash = c
            .name("sep")
            .is_some_and(|s| matches!(s.as_str(), "—" | "–"));
        if dash
            && !key
                .as_str()
                .chars()
                .any(|c| matches!(c, 'а'..='я' | 'А'..='Я'))
        {
            return None; // an English dash is prose, not an assignment
        }
        value_range(c, t, 0, line_start)
    });
    (out, count)
}

/// The byte range to replace for a value capture (`val` group or group `g`), honouring quotes,
/// placeholders and, for config-style lines, the rest of the line.
fn value_range(c: &Captures, text: &str, g: usize, line_start: bool) -> Option<(usize, usize)> {
    let v = if g == 0 {
        c.name("val").or_else(|| c.name("val2"))?
    } else {
        c.get(g)?
    };
    let (s, mut e, quoted) = unquote(v.start(), v.as_str());
    if is_placeholder(text.get(s..e)?, quoted) {
        return None;
    }
    if !quoted && line_start {
        e = line_end(text, e);
    }
    (s < e).then_some((s, e))
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

fn whole(c: &Captures) -> Option<(usize, usize)> {
    c.get(0).map(|m| (m.start(), m.end()))
}

fn group(c: &Captures, g: usize) -> Option<(usize, usize)> {
    c.get(g).map(|m| (m.start(), m.end()))
}

/// Replace the ranges chosen by `pick` for each match of `re` with [`REDACTED`].
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
        if s < last || e < s || !text.is_char_boundary(s) || !text.is_char_boundary(e) {
            continue;
        }
        if &text[s..e] == REDACTED {
            continue;
        }
        let o = out.get_or_insert_with(|| String::with_capacity(text.len()));
        o.push_str(&text[last..s]);
        o.push_str(REDACTED);
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

/// Strip one level of quotes (`"…"`, `'…'`, `\"…\"`) from a value at byte `start`:
/// returns the inner range and whether it was quoted. Unquoted values end before any `\`.
fn unquote(start: usize, v: &str) -> (usize, usize, bool) {
    for q in ["\\\"", "\"", "'"] {
        if v.len() >= 2 * q.len() && v.starts_with(q) && v.ends_with(q) {
            return (start + q.len(), start + v.len() - q.len(), true);
        }
    }
    // In JSON-escaped text an unquoted value ends at the first escape (`\n`, `\"`, `\\`).
    let cut = v.find('\\').unwrap_or(v.len());
    (start, start + cut, false)
}

/// True when only indentation, `export`, `set` or a list dash precede `pos` on its line.
/// Looks back only over those, so it stays cheap on huge single-line texts.
fn at_line_start(text: &str, pos: usize) -> bool {
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
fn line_end(text: &str, from: usize) -> usize {
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

/// Whether a key name denotes a secret.
fn is_secret_key(key: &str) -> bool {
    let compact: String = key
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect();
    const STRONG: &[&str] = &[
        "password",
        "passwd",
        "passphrase",
        "secret",
        "apikey",
        "privatekey",
        "accesskey",
        "credential",
        "парол",
        "секрет",
        "токен",
    ];
    if STRONG.iter().any(|w| compact.contains(w)) {
        return true;
    }
    if compact == "pwd" || compact == "oldpwd" {
        return false; // the shell's working directory
    }
    let last = last_segment(key);
    match last.as_str() {
        "token" | "pwd" => true,
        // Alone these are English words (`tests pass:`); `DB_PASS`, `basic_auth` are keys.
        "pass" | "auth" => last.len() < compact.len(),
        "key" => {
            // `OPENAI_KEY=…` in an env file; lowercase `sort_key`/`primary_key` are not secrets.
            let env_style = key.chars().any(|c| c.is_ascii_uppercase())
                && !key.chars().any(|c| c.is_lowercase())
                && key.contains('_');
            env_style
        }
        _ => false,
    }
}

/// Last identifier segment of a key, lowercased (`DB_PASS` → `pass`, `authToken` → `token`).
fn last_segment(key: &str) -> String {
    let key = key.trim_matches(|c: char| !c.is_alphanumeric());
    let mut start = 0;
    let mut prev_lower = false;
    for (i, c) in key.char_indices() {
        if !c.is_alphanumeric() {
            start = i + c.len_utf8();
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower {
            start = i;
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
    }
    key[start..].to_lowercase()
}

/// An unquoted identifier value that repeats the key's word (`password=password`,
/// `token: csrfToken`, `secret = db_secret`) is a variable, not a literal secret. A bare word
/// with digits (`password123`) does not count: only whole, camelCase or snake_case identifiers.
fn is_variable_named_like(value: &str, key: &str) -> bool {
    if !is_ident(value) {
        return false;
    }
    let key_plain = key.trim_matches(|c: char| !c.is_alphanumeric());
    if value.eq_ignore_ascii_case(key_plain) {
        return true;
    }
    let structured = value.contains('_')
        || value
            .as_bytes()
            .windows(2)
            .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase());
    let word = last_segment(key);
    structured && word.len() >= 3 && value.to_ascii_lowercase().contains(&word)
}

/// `secrets.yaml:12: …` is grep output, not an assignment.
fn looks_like_file(key: &str) -> bool {
    const EXT: &[&str] = &[
        "rs", "py", "js", "ts", "tsx", "jsx", "go", "rb", "java", "kt", "c", "h", "cpp", "cs",
        "php", "sh", "md", "txt", "json", "yaml", "yml", "toml", "ini", "cfg", "conf", "xml",
        "html", "sql", "lock", "log",
    ];
    key.rsplit_once('.')
        .is_some_and(|(_, ext)| EXT.contains(&ext.to_ascii_lowercase().as_str()))
}

/// Values that are not secrets: empty, already redacted, masks, template/env references,
/// null-likes, type names and (unquoted) code expressions.
fn is_placeholder(v: &str, quoted: bool) -> bool {
    let v = v.trim();
    if v.is_empty() || v.starts_with("[REDACTED") || !v.chars().any(char::is_alphanumeric) {
        return true;
    }
    if v.chars()
        .all(|c| matches!(c, '*' | '•' | '●' | 'x' | 'X' | '.' | '…' | '#' | '-' | '_'))
    {
        return true;
    }
    let starts = |p: &str| v.starts_with(p);
    if starts("${") || starts("$(") || starts("{{") || starts("<%") || starts("%(") || v == "%s" {
        return true;
    }
    if v.starts_with('<') && v.ends_with('>') && !v[1..].contains('<') {
        return true; // <password>
    }
    if let Some(name) = v.strip_prefix('$') {
        if is_ident(name) {
            return true; // $DB_PASSWORD
        }
    }
    if starts("process.env") || starts("os.environ") || starts("os.getenv") || starts("env(") {
        return true;
    }
    const LITERALS: &[&str] = &[
        "null",
        "none",
        "nil",
        "undefined",
        "true",
        "false",
        "str",
        "string",
        "bytes",
        "secretstr",
        "required",
        "optional",
        "redacted",
        "number",
        "boolean",
        "bool",
        "int",
        "any",
        "unknown",
        "object",
    ];
    if LITERALS.iter().any(|l| v.eq_ignore_ascii_case(l)) {
        return true;
    }
    if quoted {
        return false;
    }
    // Unquoted: structure openers and code expressions.
    if v.starts_with(['{', '[', '(']) {
        return true;
    }
    let head_len = v
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .unwrap_or(v.len());
    let head = &v[..head_len];
    let first_is_letter = head.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
    let tail = &v[head_len..];
    if first_is_letter && (tail.starts_with(['(', '[', '<', '!', '?']) || tail.starts_with("::")) {
        return true; // get_password(), request.form["x"], make::<T>(), env!("X"), a?.b
    }
    if first_is_letter && head_len == v.len() && head.contains('.') {
        // self.password, config.db.token — every segment an identifier.
        return head.split('.').all(is_ident);
    }
    false
}

fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn re(pattern: &str) -> Regex {
    match Regex::new(pattern) {
        Ok(r) => r,
        Err(e) => panic!("bad built-in redaction pattern {pattern:?}: {e}"),
    }
}

/// Cheap gate: text without any of these cannot contain a secret we recognise.
static TRIGGER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)pass|pwd|secret|token|key|auth|bearer|credential|mysql|curl|redis-cli|docker|twine|://|akia|asia|gh[pousr]_|github_pat|glpat|xox|xapp|sk-|sk_|rk_|whsec|aiza|eyj|npm_|hf_|:aa|y0_|aqvn|t1\.|парол|токен|секрет",
    )
});

static PEM_BEGIN: LazyLock<Regex> =
    LazyLock::new(|| re(r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"));

static PEM_END: LazyLock<Regex> =
    LazyLock::new(|| re(r"-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"));

/// Body of a truncated block: base64 lines and `Header: value` lines (real or escaped newlines).
static PEM_BODY: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(?:(?:\s|\\[rn])*(?:[A-Za-z0-9+/]{16,}={0,2}|[A-Za-z-]+:[^\n\\]*))*"));

static URL_USERINFO: LazyLock<Regex> =
    LazyLock::new(|| re(r#"(?i)([a-z][a-z0-9+.\-]{1,20}://[^\s:/?#@\[\]"'<>]*):([^\s/?#"'<>]+)@"#));

static TOKEN_SHAPES: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r"(?-u:\b)(?:",
        r"(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?-u:\b)",
        r"|gh[pousr]_[A-Za-z0-9]{36,255}(?-u:\b)",
        r"|github_pat_[A-Za-z0-9_]{22,255}(?-u:\b)",
        r"|glpat-[A-Za-z0-9_\-]{20,}",
        r"|xox[baprs]-[A-Za-z0-9\-]{10,}",
        r"|xapp-[0-9]-[A-Za-z0-9\-]{10,}",
        r"|sk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",
        r"|AIza[0-9A-Za-z_\-]{35}",
        r"|(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{10,}",
        r"|whsec_[A-Za-z0-9]{20,}",
        r"|eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]+",
        r"|npm_[A-Za-z0-9]{36}(?-u:\b)",
        r"|hf_[A-Za-z0-9]{30,}(?-u:\b)",
        r"|y0_[A-Za-z0-9_\-]{40,}",
        r"|AQVN[A-Za-z0-9_\-]{30,}",
        r"|t1\.[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{40,}",
        r")"
    ))
});

static TELEGRAM: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?-u:\b)[0-9]{8,10}:AA[A-Za-z0-9_\-]{33}(?-u:\b)"));

static SLACK_WEBHOOK: LazyLock<Regex> =
    LazyLock::new(|| re(r"hooks\.slack\.com/services/([A-Za-z0-9/]+)"));

static AUTH_HEADER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"(?i)authorization\\?["']?[ \t]*[:=][ \t]*\\?["']?((?:bearer|basic|token|bot|digest|negotiate)[ \t]+)?([^\s"'\\,;<>`]+)"#,
    )
});

static BEARER: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)(?-u:\b)bearer[ \t]+([A-Za-z0-9._~+/\-]{16,}=*)"));

static CLI_FLAG: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"(?i)(?:--(?:password|passwd|pass|token|api-key|apikey|secret|client-secret|access-token|auth-token|db-pass|db-password)[ \t]+|sshpass[ \t]+-p[ \t]*|mysql(?:dump|admin)?[ \t][^\n|;&]*?[ \t]-p|redis-cli[^\n|;&]*?[ \t]-a[ \t]+|docker[ \t]+login[^\n|;&]*?[ \t]-p[ \t]+|twine[^\n|;&]*?[ \t]-p[ \t]+)("[^"\n]*"|'[^'\n]*'|[^\s"']+)|(?:--(?:password|passwd|token|api-key|apikey|secret)=)("[^"\n]*"|'[^'\n]*'|[^\s"']+)|(?:curl[^\n|;&]*?[ \t](?:-u|--user)[ \t]*[^\s:"']+:)("[^"\n]*"|'[^'\n]*'|[^\s"']+)"#,
    )
});

static XML_ELEMENT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)<((?:[A-Za-z_][\w:.\-]*)?(?:pass|secret|token|apikey|api_key|credential)[\w:.\-]*)>([^<\n]{1,500})</([A-Za-z_][\w:.\-]*)>",
    )
});

/// `пароль от базы: qwerty`, `password for root: hunter2`.
static PHRASE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"(?i)(?:парол\p{L}*|токен\p{L}*|password|passphrase)[ \t]+(?:от|для|к|на|у|of|for|to|on)[ \t]+[^\s:=]{1,40}(?:[ \t]+[^\s:=]{1,40})?[ \t]*(?::|=|—|–)[ \t]*(\\"(?:[^"\\\n]|\\[^"\n])*\\"|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|[^\s,;&'"<>)\]}`\\][^\s,;&'"<>)\]}`]*)"#,
    )
});

/// `key <sep> value` where the key mentions a secret; the key is checked by [`is_secret_key`].
static ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r#"(?i)\\?["']?(?P<key>[\p{L}\p{N}_.\-]*(?:pass|pwd|secret|token|key|auth|credential|парол|токен|секрет)[\p{L}\p{N}_.\-]*)\\?["']?"#,
        r#"(?:[ \t]*:[ \t]*(?:str|string|&str|bytes|secretstr|optional\[str\]))?"#,
        r#"[ \t]*(?P<sep>=>|:=|===?|!==?|=|:|—|–)[ \t]*"#,
        r#"(?:(?P<val>\\"(?:[^"\\\n]|\\[^"\n])*\\"|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|[^\s,;&'"<>)\]}`\\][^\s,;&'"<>)\]}`]*)"#,
        // A quoted value on the next, indented line (`secret_key_base:\n    "…"`).
        r#"|(?:\r?\n|(?:\\r)?\\n)[ \t]+(?P<val2>\\"(?:[^"\\\n]|\\[^"\n])*\\"|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'))"#,
    ))
});

#[cfg(test)]
mod tests;
