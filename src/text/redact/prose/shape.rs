//! Whether a word after a secret word is a credential by its shape. A sentence has no
//! separator to trust ("the token is expired" is not a secret), so the value said after a
//! secret word must also look like one; how much it must look like one depends on the word
//! (`password` names a password, `token` or `key` may name many things).

use std::sync::LazyLock;

use regex::Regex;

/// Whether one token mixes character classes the way a password or key does: 6 to 200
/// characters with letters, mixing three of lower case, upper case, digits and symbols (word
/// punctuation `-`, `_`, `.`, `'` is not one: `base64-encoded`, `x86_64`, `UTF-8` are words), or
/// two of them one being a symbol, or letters and digits alternating at least twice in 8
/// characters or more (`zqa1b2c3d000x`, not `sha256sum`); not a path, URL, call, `::`/`->` path
/// or key combination (`Ctrl+Shift+K`).
pub(in super::super) fn looks_like_credential(v: &str) -> bool {
    let n = v.chars().count();
    if !(6..=200).contains(&n)
        || !plain_token(v)
        || is_key_combo(v)
        || exclaimed_word(v)
        || is_known_format(v)
    {
        return false;
    }
    let lower = v.chars().any(|c| c.is_lowercase());
    let upper = v.chars().any(|c| c.is_uppercase());
    let digit = v.chars().any(|c| c.is_ascii_digit());
    // Word punctuation (`base64-encoded`, `x86_64`, `v1.2`, `don't`) is not a symbol, nor is
    // the space of a quoted phrase (`"lookahead bytes"`).
    let special = v
        .chars()
        .any(|c| !c.is_alphanumeric() && !matches!(c, '-' | '_' | '.' | '\'' | ' '));
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

/// Whether a token said to BE a password (`the password is hunter2`, `пароль теперь
/// qwerty123`) is one: besides [`looks_like_credential`], any token of 5 to 200 characters
/// with a digit or a symbol in it, digits alone included (`12345678`), that is not a word
/// with a number in it (`sha256-hashed`, `base64-encoded`: the last part is a word) or a
/// number with a unit (`8-chars`). A word alone (`required`, `wrong`, `неверный`) is what the
/// sentence says of the password, not the password.
pub(in super::super) fn looks_like_password(v: &str) -> bool {
    if looks_like_credential(v) {
        return true;
    }
    // A sentence's `!` or `?` after a word is not part of a value (`password is required!`).
    let core = v.trim_end_matches(['!', '?']);
    let n = core.chars().count();
    if !(5..=200).contains(&n) || !plain_token(core) || is_key_combo(core) {
        return false;
    }
    let digit = core.chars().any(|c| c.is_ascii_digit());
    let symbol = core
        .chars()
        .any(|c| !c.is_alphanumeric() && !matches!(c, '-' | '_' | '.' | '\''));
    if !(digit || symbol) {
        return false;
    }
    // `sha256-hashed`, `utf8-encoded`, `10-chars`: parts joined by word punctuation whose last
    // part is a word of letters say how something is done, not what the password is.
    let parts: Vec<&str> = core.split(['-', '_', '.']).collect();
    let last_is_word = parts
        .last()
        .is_some_and(|p| p.chars().count() >= 3 && p.chars().all(char::is_alphabetic));
    !(parts.len() > 1 && last_is_word && !symbol)
}

/// A well-known format that is no secret whatever its mix of characters: a locale
/// (`en_US.UTF-8`, `ru_RU.utf8`, `C.UTF-8`, `de_DE@euro`), a character set (`UTF-8`,
/// `ISO-8859-1`, `windows-1251`), a version (`v2.0.1-RC1`, `1.2.3`), a date or time
/// (`2024-01-02T10:00:00Z`).
fn is_known_format(v: &str) -> bool {
    static KNOWN: LazyLock<Regex> = LazyLock::new(|| {
        let charset = concat!(
            r"(?i:utf-?(?:8|16|32)(?:le|be)?|iso-?8859-[0-9]{1,2}|windows-125[0-8]|cp[0-9]{3,4}",
            r"|koi8-[ru]|us-ascii|latin-?1|euc-?(?:jp|kr)|gb18030|gbk|big5)",
        );
        super::super::patterns::re(&format!(
            concat!(
                r"^(?:",
                // A locale: language and territory (or `C`), a character set, a modifier.
                r"(?:[a-z]{{2,3}}_[A-Z]{{2}}|C|POSIX)(?:\.{charset})?(?:@[a-z]{{2,12}})?",
                r"|{charset}",
                // A version, with a pre-release word.
                r"|v?[0-9]+(?:\.[0-9]+){{1,3}}(?:-(?i:alpha|beta|rc|pre|preview|dev|snapshot",
                r"|nightly|canary|final|stable|lts)\.?[0-9]*)?",
                // A date, a time.
                r"|[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}(?:[T ][0-9]{{2}}:[0-9]{{2}}",
                r"(?::[0-9]{{2}}(?:\.[0-9]+)?)?(?:Z|[+-][0-9]{{2}}:?[0-9]{{2}})?)?",
                r")$",
            ),
            charset = charset
        ))
    });
    KNOWN.is_match(v)
}

/// A word and a sentence's `!` or `?` after it (`the token is expired!`, `password is
/// required!`): the mark ends the sentence, it is no symbol of a value.
fn exclaimed_word(v: &str) -> bool {
    let core = v.trim_end_matches(['!', '?']);
    core.len() < v.len() && !core.is_empty() && core.chars().all(char::is_alphabetic)
}

/// Not a path, URL, call, command-line flag, reference (`&Arc<str>`), generic type, list
/// (`pKey,nKey`), Markdown link, `::` or `->` path: code and places are named in sentences about secrets, and
/// are not secrets. A token with a password's mark in it (`!`, `@`, `#`, `$`, `%`, `^`, `*`,
/// `+`, `=`, `?`, `~`) is no code or place even with a `/`, a parenthesis, a comma or a
/// leading `-` or `&` (`Ab1/X!z`, `P@ss(X)w0rd`, `-Neg4!X`, `&Xy7!X`, base64); nor is one
/// whose `/`-separated parts mix letters, digits and capitals (`wJalr/K7MDENG/bPxR`), which
/// a path's parts (`src/keys/a.pem`, `api/v2/users`) do not.
fn plain_token(v: &str) -> bool {
    let mark = v.chars().any(|c| {
        matches!(
            c,
            '!' | '@' | '#' | '$' | '%' | '^' | '*' | '+' | '=' | '?' | '~'
        )
    });
    let list = v
        .as_bytes()
        .windows(2)
        .any(|w| w[0] == b',' && w[1].is_ascii_alphabetic());
    // `Array<u8`, `Option<String>`: a type's parameters open after its name.
    let generic = v
        .as_bytes()
        .windows(2)
        .any(|w| w[0].is_ascii_alphanumeric() && w[1] == b'<');
    // `foo(bar)`, `f(x=1)`: a call's name before its parenthesis, or the parenthesis last.
    let call = v.contains(['(', ')'])
        && (v.ends_with(')')
            || v.split('(')
                .next()
                .is_some_and(|n| n.chars().all(|c| c.is_alphanumeric() || "_.:".contains(c))));
    let mixed_part = |p: &str| {
        p.chars().any(char::is_uppercase)
            && p.chars().any(|c| c.is_ascii_digit())
            && p.chars().any(char::is_lowercase)
            || p.chars().filter(|c| c.is_ascii_digit()).count() >= 1
                && p.chars().filter(|c| c.is_uppercase()).count() >= 3
    };
    let path = v.contains('/')
        && (v.starts_with(['/', '~', '.']) || !(mark || v.split('/').any(mixed_part)));
    // `[cyan](must`: a link or console markup around words, as a prompt writes it.
    !(v.contains("://")
        || v.contains("](")
        || v.starts_with("--")
        || v.starts_with(['-', '&']) && !mark
        || list && !mark
        || generic
        || path
        || v.contains('\\')
        || call
        || v.contains("::")
        || v.contains("->"))
}

/// `Ctrl+Shift+K`, `Cmd+Alt+Del`, `Shift-F5`: keys pressed together, what "the shortcut key is
/// …" names.
fn is_key_combo(v: &str) -> bool {
    const MODIFIERS: &[&str] = &[
        "ctrl", "control", "shift", "alt", "option", "opt", "cmd", "command", "meta", "super",
        "win", "fn", "hyper",
    ];
    let parts: Vec<&str> = v.split(['+', '-']).collect();
    parts.len() > 1
        && parts[..parts.len() - 1]
            .iter()
            .all(|p| MODIFIERS.contains(&p.to_ascii_lowercase().as_str()))
}
