//! Which key names denote a secret. Kept apart from value handling because precision on code
//! depends on it: `secrets_redacted`, `max_tokens` and `password_file` mention a secret word but
//! name a count, a limit or a path, and redacting their values makes code unreadable.

/// Words that make a key a secret wherever they appear in it (compacted, lowercased).
const STRONG: &[&str] = &[
    "password",
    "passwd",
    "passphrase",
    "secret",
    "apikey",
    "privatekey",
    "accesskey",
    "accountkey",
    "sharedaccesskey",
    "sharedaccesssignature",
    "credential",
    "парол",
    "секрет",
    "токен",
];

/// A last key segment that says the value is ABOUT a secret, not the secret itself:
/// `secrets_redacted`, `password_min_length`, `token_count`, `password_file`, `secret_name`.
const ABOUT_A_SECRET: &[&str] = &[
    "count",
    "counts",
    "redacted",
    "len",
    "length",
    "size",
    "min",
    "max",
    "limit",
    "limits",
    "ttl",
    "expiry",
    "expires",
    "expiration",
    "exp",
    "age",
    "at",
    "file",
    "files",
    "path",
    "paths",
    "dir",
    "env",
    "var",
    "vars",
    "name",
    "names",
    "id",
    "ids",
    "arn",
    "url",
    "uri",
    "urls",
    "endpoint",
    "type",
    "types",
    "kind",
    "kinds",
    "field",
    "fields",
    "label",
    "hint",
    "prompt",
    "policy",
    "rule",
    "rules",
    "regex",
    "pattern",
    "enabled",
    "required",
    "set",
    "present",
    "found",
    "store",
    "manager",
    "provider",
    "service",
    "header",
    "headers",
    "param",
    "params",
    "prefix",
    "strength",
    "reset",
    "error",
    "errors",
    "message",
    "msg",
    "mode",
    "format",
    "version",
    "flag",
    "flags",
    "usage",
    "used",
    "budget",
    "estimate",
    "index",
    "idx",
    "map",
    "list",
    "reqs",
    "chars",
    "lines",
    "total",
    "stats",
    "help",
    "schema",
    "spec",
    "class",
    "handler",
    "source",
    "sources",
    "command",
    "cmd",
    "helper",
    "storage",
    "backend",
    "offset",
    "start",
    "end",
    "range",
    "window",
    "rotation",
    "lookup",
    "column",
    "table",
    "visible",
    "changed",
    "updated",
    "created",
    "missing",
    "cases",
];

/// A plural names a collection or a count (`let mut secrets = 0`, `max_tokens`), not a value.
const PLURALS: &[&str] = &["secrets", "passwords", "tokens", "keys", "passwds", "pwds"];

/// Whether a key name denotes a secret.
pub(super) fn is_secret_key(key: &str) -> bool {
    let compact: String = key
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect();
    let last = last_segment(key);
    if last.len() < compact.len() && ABOUT_A_SECRET.contains(&last.as_str()) {
        return false;
    }
    if PLURALS.contains(&last.as_str()) {
        return false;
    }
    if STRONG.iter().any(|w| compact.contains(w)) {
        return true;
    }
    match last.as_str() {
        "token" | "pwd" | "sig" => true,
        // Alone these are English words (`tests pass:`); `DB_PASS`, `basic_auth` are keys.
        "pass" | "auth" => last.len() < compact.len(),
        // `OPENAI_KEY=…` in an env file; lowercase `sort_key`/`primary_key` are not secrets.
        "key" => {
            key.chars().any(|c| c.is_ascii_uppercase())
                && !key.chars().any(char::is_lowercase)
                && key.contains('_')
        }
        _ => false,
    }
}

/// `PWD`/`OLDPWD` are the shell's working directories: their value is a path, not a password.
pub(super) fn is_working_dir(key: &str, value: &str) -> bool {
    let k = key.trim_matches(|c: char| !c.is_alphanumeric());
    (k.eq_ignore_ascii_case("pwd") || k.eq_ignore_ascii_case("oldpwd"))
        && value.starts_with(['/', '~'])
}

/// Keys whose value is a `k=v&k=v` list itself (an Azure SAS), so `&` does not end it.
pub(super) fn value_holds_pairs(key: &str) -> bool {
    let compact: String = key
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect();
    compact.ends_with("sharedaccesssignature")
}

/// Last identifier segment of a key, lowercased (`DB_PASS` → `pass`, `authToken` → `token`).
pub(super) fn last_segment(key: &str) -> String {
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

/// `secrets.yaml:12: …` is grep output, not an assignment.
pub(super) fn looks_like_file(key: &str) -> bool {
    const EXT: &[&str] = &[
        "rs", "py", "js", "ts", "tsx", "jsx", "go", "rb", "java", "kt", "c", "h", "cpp", "cs",
        "php", "sh", "md", "txt", "json", "yaml", "yml", "toml", "ini", "cfg", "conf", "xml",
        "html", "sql", "lock", "log",
    ];
    key.rsplit_once('.')
        .is_some_and(|(_, ext)| EXT.contains(&ext.to_ascii_lowercase().as_str()))
}

/// A word that says what follows is ABOUT a secret (`count`, `field`, `reset`), not the secret.
pub(super) fn is_about_a_secret(word: &str) -> bool {
    ABOUT_A_SECRET.contains(&word)
}

/// Whether a key named a secret only by its `_KEY` suffix (`META_KEY`, `CACHE_KEY`, not
/// `API_KEY` or `SECRET_KEY`) holds the name of a key rather than a key: a lower-case name
/// without digits (`"failed_stores"`, `"index-rev"`). Code names its keys so; a secret is not
/// one.
pub(super) fn holds_a_key_name(key: &str, value: &str) -> bool {
    let compact: String = key
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect();
    last_segment(key) == "key"
        && !STRONG.iter().any(|w| compact.contains(w))
        && (1..=64).contains(&value.len())
        && value.starts_with(|c: char| c.is_ascii_lowercase())
        && value
            .chars()
            .all(|c| c.is_ascii_lowercase() || matches!(c, '_' | '-' | '.' | ':'))
}
