//! Names and path-like metadata (`name.rs`, issue 36's fourth hostile pass): the value right
//! after a secret word in a branch, an agent's, a tool's or a subagent's name, a working
//! directory goes; ordinary names keep their words. The same names written as a field of a
//! text (a tool call's input, front matter, JSON) go too.

use super::*;

fn name(text: &str) -> (String, usize) {
    let (out, n) = redact_name(text);
    (out.into_owned(), n)
}

#[test]
fn a_value_after_a_secret_word_in_a_name_goes() {
    for (input, value, kept) in [
        (
            "fix/password-Xk9vQ2mLp7Zt",
            "Xk9vQ2mLp7Zt",
            "fix/password-[REDACTED]",
        ),
        ("token-ghx9Q2mLp7Ztq1", "ghx9Q2mLp7Ztq1", "token-[REDACTED]"),
        (
            "scout token Xk9vQ2mLp7Zt",
            "Xk9vQ2mLp7Zt",
            "scout token [REDACTED]",
        ),
        (
            "feature/api-key/Zt7kP2vX9qLm/cleanup",
            "Zt7kP2vX9qLm",
            "feature/api-key/[REDACTED]/cleanup",
        ),
        (
            "deploy_key_Ab3dE5gH7kQ",
            "Ab3dE5gH7kQ",
            "deploy_key_[REDACTED]",
        ),
        (
            "mcp__vault__token_Xk9vQ2mLp7Zt",
            "Xk9vQ2mLp7Zt",
            "mcp__vault__token_[REDACTED]",
        ),
        (
            "hotfix/secret-Xk9-fj3Lq2z!",
            "fj3Lq2z!",
            "hotfix/secret-[REDACTED]",
        ),
        (
            "/srv/secrets/aB3dE5gH7kL9/app",
            "aB3dE5gH7kL9",
            "/srv/secrets/[REDACTED]/app",
        ),
        (
            "ops TOKEN: Qw3rTy9Zx2Lm",
            "Qw3rTy9Zx2Lm",
            "ops TOKEN: [REDACTED]",
        ),
        (
            "релиз/пароль-Пб9вQ2mLp7",
            "Пб9вQ2mLp7",
            "релиз/пароль-[REDACTED]",
        ),
        ("ключ_Xk9vQ2mLp7Zt", "Xk9vQ2mLp7Zt", "ключ_[REDACTED]"),
        (
            "the passwd.Mq4vL9zR2x.",
            "Mq4vL9zR2x",
            "the passwd.[REDACTED].",
        ),
    ] {
        let (out, n) = name(input);
        assert!(!out.contains(value), "{input:?} -> {out:?}");
        assert_eq!(out, kept, "{input:?}");
        assert_eq!(n, 1, "{input:?}");
        assert_eq!(name(&out), (out.clone(), 0), "idempotent on {input:?}");
    }
    // What prose redacts, a name redacts too.
    let (out, _) = name("fixer password=NamePw6 token: Xk9vQ2mLp7Zt");
    assert_eq!(out, "fixer password=[REDACTED] token: [REDACTED]");
}

#[test]
fn ordinary_names_keep_their_words() {
    for input in [
        "fix/password-reset",
        "feature/token-refresh",
        "feature/token-refresh-v2",
        "fix/token-ABC-123-refresh",
        "chore/api-key-rotation-2024",
        "fix/secret-scanner",
        "secret-scanner",
        "/home/me/src/keycloak-token-service",
        "/home/me/.ssh/keys/id_ed25519",
        "tokenizer-v2",
        "feat/key-Ctrl+Shift+K",
        "token-count-2024Q1",
        "primary-key-Xk9vQ2mLp7Zt",
        "release/v1.2.3-token-a1b2",
        "db-fixer",
        "password-reset-flow",
        "ключевой-момент-Xk9vQ2mLp7Zt",
        "mcp__github__create_pull_request",
    ] {
        assert_eq!(name(input), (input.to_string(), 0), "{input:?}");
    }
}

#[test]
fn a_name_written_as_a_field_of_a_text_is_read_as_a_name() {
    for (input, value) in [
        (
            "Task\nsubagent_type: scout token Xk9vQ2mLp7Zt\nprompt: check the vault",
            "Xk9vQ2mLp7Zt",
        ),
        (
            "---\nname: deploy-token-Ab3dE5gH7kQ\ndescription: rotates keys\n---\nbody",
            "Ab3dE5gH7kQ",
        ),
        (
            r#"{"name": "helper secret Qw3rTy9Zx2Lm", "agent_role": "reviewer"}"#,
            "Qw3rTy9Zx2Lm",
        ),
        (
            "- description: the team's token-Mq4vL9zR2xP7 spare",
            "Mq4vL9zR2xP7",
        ),
        ("gitBranch: fix/password-Xk9vQ2mLp7Zt", "Xk9vQ2mLp7Zt"),
        (
            r#"{\"subagent_type\": \"scout token Je5vQ2mLp7Zt\"}"#,
            "Je5vQ2mLp7Zt",
        ),
        (
            r#"{"teammate_id": "alice-key-Zt7kP2vX9qLm"}"#,
            "Zt7kP2vX9qLm",
        ),
    ] {
        let r = redact(input);
        assert!(!r.text.contains(value), "{input:?} -> {:?}", r.text);
        assert_eq!(r.count, 1, "{input:?} -> {:?}", r.text);
        assert_eq!(redact(&r.text).text, r.text, "idempotent on {input:?}");
    }
    // In a sentence, and in fields that name nothing, a value without a verb is kept as the
    // sentence rule keeps it; ordinary names in fields keep their words.
    for input in [
        "token 0x1F3a9c is a number without a verb",
        "filename: token-Xk9vQ2mLp7Zt.txt was not a name field",
        "name: feature/token-refresh-v2",
        r#"{"name": "Bash", "description": "rotate the api key"}"#,
        "subagent_type: secret-scanner",
    ] {
        let r = redact(input);
        assert_eq!((r.text.as_str(), r.count), (input, 0), "{input:?}");
    }
}
