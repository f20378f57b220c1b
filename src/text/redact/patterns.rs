//! The patterns redaction looks for, compiled once. The decisions about what they found (is the
//! key a secret, where does the value end, is it exempt) live in the sibling modules.
//!
//! Compiling them is a cost every `knowledge index` run pays once. Case-insensitivity is scoped
//! to the words (`(?i:pass|token)`), never laid over a Unicode class: folding `\p{L}` or `\w`
//! costs more than the rest of the pattern. Where a folded class differs from the plain one, the
//! difference is spelled out so each pattern matches exactly what the `(?i)` form did (`\p{L}`
//! folded also holds U+0345, `[a-z]` folded holds U+017F `ſ` and U+212A `K`).

use std::sync::LazyLock;

use regex::Regex;

pub(super) fn re(pattern: &str) -> Regex {
    match Regex::new(pattern) {
        Ok(r) => r,
        Err(e) => panic!("bad built-in redaction pattern {pattern:?}: {e}"),
    }
}

/// Cheap gate: text without any of these cannot contain a secret we recognise.
pub(super) static TRIGGER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)pass|pwd|(?-u:\b)pw(?-u:\b)|secret|token|key|auth|bearer|cred|sig|private-|mysql|curl|redis-cli|docker|twine|://|akia|asia|gh[pousr]_|github_pat|glpat|xox|xapp|sk-|sk_|rk_|whsec|aiza|eyj|npm_|hf_|:aa|y0_|aqvn|t1\.|парол|токен|секрет|ключ",
    )
});

/// Necessary conditions of the patterns that are slow to compile (Unicode classes under bounded
/// repetition take milliseconds each, most of a one-shot `knowledge search` before these): a text
/// without what a gate finds cannot match its pattern, so the pattern is not even compiled for it.
/// Each gate is the pattern's literal part: every alternative of `TOKEN_SHAPES` starts with one
/// of these prefixes (case-sensitive, as there).
pub(super) static TOKEN_SHAPES_GATE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"AKIA|ASIA|ABIA|ACCA|gh[pousr]_|github_pat_|glpat-|xox[baprs]-|xapp-|sk-|AIza|sk_|rk_|whsec_|eyJ|npm_|hf_|y0_|AQVN|t1\.",
    )
});

/// Every match of `PHRASE` starts with one of its key words (case-insensitive, as there).
pub(super) static PHRASE_GATE: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)парол|токен|pass(?:word|phrase)"));

/// Every match of `KEY_ALONE` ends with its separator and what may follow it on the line.
pub(super) static KEY_ALONE_GATE: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?m)[:=][ \t]*(?:[|>][+\-]?)?[ \t]*\r?$"));

/// Every match of `prose::PROSE_SECRET` holds one of its key words (case-insensitive, as there).
pub(super) static PROSE_SECRET_GATE: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)pass|pw|token|secret|key|cred|парол|токен|секрет|ключ"));

pub(super) static PEM_BEGIN: LazyLock<Regex> =
    LazyLock::new(|| re(r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"));

pub(super) static PEM_END: LazyLock<Regex> =
    LazyLock::new(|| re(r"-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"));

/// Body of a truncated block: base64 lines and `Header: value` lines (real or escaped newlines).
pub(super) static PEM_BODY: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(?:(?:\s|\\[rn])*(?:[A-Za-z0-9+/]{16,}={0,2}|[A-Za-z-]+:[^\n\\]*))*"));

pub(super) static URL_USERINFO: LazyLock<Regex> =
    LazyLock::new(|| re(r#"(?i)([a-z][a-z0-9+.\-]{1,20}://[^\s:/?#@\[\]"'<>]*):([^\s/?#"'<>]+)@"#));

pub(super) static TOKEN_SHAPES: LazyLock<Regex> = LazyLock::new(|| {
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

pub(super) static TELEGRAM: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?-u:\b)[0-9]{8,10}:AA[A-Za-z0-9_\-]{33}(?-u:\b)"));

pub(super) static SLACK_WEBHOOK: LazyLock<Regex> =
    LazyLock::new(|| re(r"hooks\.slack\.com/services/([A-Za-z0-9/]+)"));

pub(super) static AUTH_HEADER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"(?i)authorization\\?["']?[ \t]*[:=][ \t]*\\?["']?((?:bearer|basic|token|bot|digest|negotiate)[ \t]+)?([^\s"'\\,;<>`]+)"#,
    )
});

pub(super) static BEARER: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)(?-u:\b)bearer[ \t]+([A-Za-z0-9._~+/\-]{16,}=*)"));

pub(super) static CLI_FLAG: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"(?i)(?:--(?:password|passwd|pass|token|api-key|apikey|secret|client-secret|access-token|auth-token|db-pass|db-password)[ \t]+|sshpass[ \t]+-p[ \t]*|mysql(?:dump|admin)?[ \t][^\n|;&]*?[ \t]-p|redis-cli[^\n|;&]*?[ \t]-a[ \t]+|docker[ \t]+login[^\n|;&]*?[ \t]-p[ \t]+|twine[^\n|;&]*?[ \t]-p[ \t]+)("[^"\n]*"|'[^'\n]*'|[^\s"']+)|(?:--(?:password|passwd|token|api-key|apikey|secret)=)("[^"\n]*"|'[^'\n]*'|[^\s"']+)|(?:curl[^\n|;&]*?[ \t](?:-u|--user)[ \t]*[^\s:"']+:)("[^"\n]*"|'[^'\n]*'|[^\s"']+)"#,
    )
});

/// An XML element named for a secret, around its value. The value's limit of 500 characters
/// is checked in code ([`super::xml_value_fits`]), not by `{1,500}`: 500 copies of the class
/// were a quarter of compiling every pattern. The value cannot hold `<` and must end at `</`,
/// so at each `<` the value is the whole run up to the next `<` either way, and a match of this
/// form whose value is too long ends at its `</…>`, where no match of the bounded form could
/// start: both forms find the same matches once the long ones are dropped.
pub(super) static XML_ELEMENT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"<((?:(?i:[a-z_])[\w:.\-]*)?(?i:pass|secret|token|apikey|api_key|credential)[\w:.\-]*)>([^<\n]+)</((?i:[a-z_])[\w:.\-]*)>",
    )
});

/// The longest value [`XML_ELEMENT`] takes, in characters.
pub(super) const XML_VALUE_MAX: usize = 500;

/// A secret named in a phrase (`пароль от базы: …`, `password for root: …`). The two Cyrillic
/// stems share one copy of their letter class: they start with different letters in every case,
/// so at most one of them matches at a place, as when each had its own copy.
pub(super) static PHRASE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"(?:(?:(?i:парол)|(?i:токен))[\p{L}\u{345}]*|(?i:password)|(?i:passphrase))[ \t]+(?i:от|для|к|на|у|of|for|to|on)[ \t]+[^\s:=]{1,40}(?:[ \t]+[^\s:=]{1,40})?[ \t]*(?::|=|—|–)[ \t]*([^\s,;&<>)\]}])"#,
    )
});

/// `key <sep> value` where the key mentions a secret; the key is checked by [`is_secret_key`].
pub(super) static ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r#"\\?["']?(?P<key>[\p{L}\p{N}_.\-\u{345}]*(?i:pass|pwd|secret|token|key|auth|credential|sig|парол|токен|секрет)[\p{L}\p{N}_.\-\u{345}]*)\\?["']?"#,
        r#"(?:[ \t]*:[ \t]*(?i:str|string|&str|bytes|secretstr|optional\[str\]))?"#,
        r#"[ \t]*(?P<sep>=>|:=|===?|!==?|=|:|—|–)[ \t]*"#,
        r#"(?:(?P<val>[^\s,;&<>)\]}])"#,
        // A quoted value on the next, indented line (`secret_key_base:\n    "…"`).
        r#"|(?:\r?\n|(?i:(?:\\r)?\\n))[ \t]+(?P<val2>\\"(?:[^"\\\n]|\\[^"\n])*\\"|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'))"#,
    ))
});

/// A key alone at the end of its line (`password:`, `password: |`): its value is on the next lines.
pub(super) static KEY_ALONE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"(?m)^[ \t]*(?:-[ \t]+)?["']?(?P<key>[\p{L}\p{N}_.\-]+)["']?[ \t]*(?P<sep>[:=])[ \t]*(?:[|>][+\-]?)?[ \t]*\r?$"#,
    )
});

/// `.netrc`: `machine h login u password X` on one line.
pub(super) static NETRC_INLINE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:machine[ \t]+\S+|default)(?:[ \t]+(?:login|account|port)[ \t]+\S+)*[ \t]+(?:password|passwd)[ \t]+(\S)",
    )
});

/// `.netrc` spread over lines, or any line that is only `password X`.
pub(super) static NETRC_LINE: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?im)^[ \t]*(?:password|passwd)[ \t]+(\S+)[ \t]*\r?$"));

/// The `Private-Lines: N` line of a PuTTY `.ppk` private key, before its base64 body (see
/// `putty_body`).
pub(super) static PUTTY_PRIVATE: LazyLock<Regex> =
    LazyLock::new(|| re(r"Private-Lines:[ \t]*[0-9]+"));

/// The PuTTY key's MAC (or hash) line, which is derived from the private key.
pub(super) static PUTTY_MAC: LazyLock<Regex> =
    LazyLock::new(|| re(r"Private-(?:MAC|Hash):[ \t]*([0-9A-Fa-f]+)"));
