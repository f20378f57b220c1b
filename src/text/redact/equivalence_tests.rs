//! Redaction must not change when its patterns are made cheaper to compile (issues 18, 21).
//! Two checks: the whole pipeline's outputs on a corpus of secret shapes are pinned (a digest
//! taken before the rewrite), and every pattern that was rewritten or gated is compared with its
//! old form on every text of a larger corpus: the repository's fixtures, and the directories in
//! `KNOWLEDGE_REDACT_CORPUS` (`:`-separated, e.g. `/work/shared/realdata`) when it is set.


use super::tests::{GATE_CASES, KEEP_CASES, SECRET_CASES};
use super::*;

/// Shapes the unit tests do not hold, aimed at the rewritten patterns' edges: XML values around
/// the 500-character limit, several elements on a line, Cyrillic keys of each stem, qualifiers
/// of 40 characters and more, every gated rule's literal in another case.
fn edge_cases() -> Vec<String> {
    let mut v = Vec::new();
    for n in [1, 2, 40, 41, 499, 500, 501, 1000] {
        for unit in ["a", "é", "Ж", "🔑", "x>y"] {
            let value: String = unit.repeat(n).chars().take(n).collect();
            v.push(format!("<password>{value}</password>"));
            v.push(format!("<api_key>{value}</api_key> <token>Zq9!x</token>"));
            v.push(format!("<secret>{value}</secret><secret>short</secret>"));
            v.push(format!("<ſecret>{value}</SECRET>"));
            v.push(format!("password for {value} is Hunter2CanaryA!"));
            v.push(format!("пароль от {value} это Qw3rty!x"));
            v.push(format!("токен для {value}: abcDEF123"));
        }
    }
    v.extend(
        [
            "<password>a\nb</password>",
            "<password></password>",
            "<password>x</pass>",
            "<<password>x</password>",
            "</password>x</password>",
            "<tokenizer>ab12</tokenizer> and <key_pass>k</key_pass>",
            "Пароль: Abc!12345", "ПАРОЛИ это Abc!12345", "паролем — Abc!12345",
            "Токены это Xy7!abcd", "токенами: Xy7abcd12", "Секрет — Zz9!zzzz",
            "секретный ключ для прода: Zz9!zzzz", "СЕКРЕТЫ был Zz9!zzzz",
            "the token is expired", "password is required", "token 4096",
            "the PASSWORD WAS Hunter2CanaryA! ok", "pwd - Qx!81234", "passphrase: Tr0ub4dor&3",
            "--PASSWORD hunter2", "--Api-Key=abc123", "MySQL -u root -pS3cret db",
            "REDIS-CLI -h h -a s3cr3t ping", "Docker login -u u -p dockerpw reg",
            "TWINE upload -p pypipw dist/*", "CURL -u admin:curlpw https://x",
            "SSHPASS -p pw ssh h", "Authorization: Basic dXNlcjpwYXNz", "AUTHORIZATION=token abcdefghijklmnop",
            "BEARER abcdefghijklmnopqrstuvwxyz", "machine h login u password pw1", "MACHINE h PASSWORD pw2",
            "default login u passwd pw3", "  PASSWORD   pw4  ", "HTTPS://u:pw5@h/x",
            "123456789:AAabcdefghijklmnopqrstuvwxyz0123456", "hooks.slack.com/services/T0/B0/abc",
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEabcdefghijklmnop\n-----END RSA PRIVATE KEY-----",
            "Private-Lines: 2\nAAAAabcdefghijklmnop\nAAAAqrstuvwxyz\nPrivate-MAC: 0123abcd",
            "key: |\n  multi\n  line", "TOKEN=\n  \"next-line\"", "x_token:\\n    \\\"esc\\\"",
        ]
        .map(String::from),
    );
    v
}

/// Every text of the in-code corpus, alone, inside prose, JSON-escaped, and all in one text.
fn corpus() -> Vec<String> {
    let base: Vec<String> = SECRET_CASES
        .iter()
        .map(|(t, _, _)| (*t).to_string())
        .chain(KEEP_CASES.iter().map(|t| (*t).to_string()))
        .chain(GATE_CASES.iter().map(|t| (*t).to_string()))
        .chain(edge_cases())
        .collect();
    let mut all = Vec::new();
    for t in &base {
        all.push(t.clone());
        all.push(format!("Note: {t} (see above)"));
        let escaped = t.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n");
        all.push(format!("{{\"text\":\"{escaped}\"}}"));
    }
    all.push(base.join("\n"));
    all
}

const KINDS: [TextKind; 4] = [
    TextKind::Prose,
    TextKind::Config,
    TextKind::Code {
        single_quoted_strings: true,
    },
    TextKind::Code {
        single_quoted_strings: false,
    },
];

/// FNV-1a: stable across Rust releases, unlike the std hasher.
fn fnv(h: &mut u64, bytes: &[u8]) {
    for b in bytes {
        *h ^= u64::from(*b);
        *h = h.wrapping_mul(0x100_0000_01b3);
    }
}

fn digest<'a>(texts: impl Iterator<Item = &'a str>) -> (u64, usize) {
    let mut h = 0xcbf2_9ce4_8422_2325;
    let mut redactions = 0;
    for t in texts {
        for (k, kind) in KINDS.iter().enumerate() {
            let r = redact_as(t, *kind);
            fnv(&mut h, &[k as u8]);
            fnv(&mut h, r.text.as_bytes());
            fnv(&mut h, &r.count.to_le_bytes());
            redactions += r.count;
        }
    }
    (h, redactions)
}

/// Taken with the patterns as they were before the issue-18/21 rewrite (commit `bd81ac3`).
const PINNED: (u64, usize) = (18_193_926_049_564_032_034, 4564);

#[test]
fn redaction_of_the_secret_corpus_is_pinned() {
    let texts = corpus();
    let got = digest(texts.iter().map(String::as_str));
    assert_eq!(got, PINNED, "redaction of {} texts changed", texts.len());
}
