//! Secrets in Markdown tables (`table.rs`, issue 36's fourth hostile pass): a cell under a
//! secret-named header or beside a secret-named key cell goes; tables that describe secrets
//! (fields, types, purposes, key bindings, counts) keep every cell.

use super::*;

#[test]
fn a_cell_under_a_secret_header_or_beside_a_secret_key_goes() {
    for (input, values) in [
        (
            "| user | password |\n|------|----------|\n| bob  | Xk9vQ2mLp7 |\n| amy | hunter2 |",
            &["Xk9vQ2mLp7", "hunter2"][..],
        ),
        (
            "| Service | API key | Owner |\n|:--|:--:|--:|\n| billing | `Ak5fQ9zLm2Wp` | ops |",
            &["Ak5fQ9zLm2Wp"],
        ),
        (
            "host | DB_PASSWORD\n--- | ---\ndb1 | Qw3rty!x9",
            &["Qw3rty!x9"],
        ),
        (
            "| **Name** | **Token** |\n| --- | --- |\n| ci | **Zt7kP2vX9qLm** |",
            &["Zt7kP2vX9qLm"],
        ),
        (
            "| логин | пароль |\n|---|---|\n| админ | Пб9вQ2mLp7 |",
            &["Пб9вQ2mLp7"],
        ),
        (
            "| key | value |\n|---|---|\n| token | Xk9vQ2mLp7 |\n| region | eu-west-1 |",
            &["Xk9vQ2mLp7"],
        ),
        (
            "Credentials:\n\n| password | Mq4!vL9zR2 |\n| secret | Sd8kW3nP5xQz |",
            &["Mq4!vL9zR2", "Sd8kW3nP5xQz"],
        ),
        (
            "text before\n| env | value |\n|---|---|\n| `DB_PASSWORD` | `hunter2x` |\n",
            &["hunter2x"],
        ),
        (
            "| Service | Password (prod) | Token for CI |\n|---|---|---|\n| db | Pw4vQ2mLp7 | Ci5vQ2mLp7Zt |",
            &["Pw4vQ2mLp7", "Ci5vQ2mLp7Zt"],
        ),
        ("| Пароль от БД | Бд6vQ2mLp7 |", &["Бд6vQ2mLp7"]),
    ] {
        let r = redact(input);
        for v in values {
            assert!(!r.text.contains(v), "{input:?} -> {:?} keeps {v}", r.text);
        }
        assert_eq!(r.count, values.len(), "{input:?} -> {:?}", r.text);
        assert_eq!(r.text.lines().count(), input.lines().count());
        assert_eq!(redact(&r.text).text, r.text, "idempotent on {input:?}");
    }
    let r = redact("| user | password |\n|---|---|\n| bob | Xk9vQ2mLp7 |");
    assert_eq!(
        r.text, "| user | password |\n|---|---|\n| bob | [REDACTED] |",
        "the table keeps its shape and its other cells"
    );
}

#[test]
fn tables_about_secrets_keep_their_cells() {
    for input in [
        "| Field | Type | Description |\n|---|---|---|\n| password | string | The user's password |\n| token | str | required |",
        "| Token | Purpose |\n|---|---|\n| GITHUB_TOKEN | CI auth |\n| NPM_TOKEN | publish |",
        "| Primary key | Table |\n|---|---|\n| user_id | users |\n| OrderId2024 | orders |",
        "| Key | Action |\n|---|---|\n| Ctrl+Shift+K | delete line |\n| F5 | run |",
        "| Model | Tokens | Cost |\n|---|---|---|\n| small | 4096 | $0.02 |\n| large | 128k | $1.50 |",
        "| Key ID | Created |\n|---|---|\n| AbC123xyZ9 | 2024-01-02 |",
        "| Time to key rotation | Owner |\n|---|---|\n| 30d | Ab3dE5gH7kQ |",
        "| Token count | Model |\n|---|---|\n| Xk9vQ2mLp7 | big |",
        "| password | required |\n| token | none |",
        "| Secret | Value |\n|---|---|\n| DB_PASSWORD | ${{ secrets.DB_PASSWORD }} |\n| API_KEY | $API_KEY |",
        "| Public key | Host |\n|---|---|\n| AAAAC3NzaC1lZDI1 | web1 |",
        "a | b password | Xk9vQ2mLp7 is not a table",
        "| password | the one you chose at sign-up |",
    ] {
        let r = redact(input);
        assert_eq!((r.text.as_str(), r.count), (input, 0), "{input:?}");
    }
    // Code keeps its own rules: a `|` in code is an operator, not a table.
    let code = "let key = a | b;\n// | user | password |\n";
    let kind = TextKind::Code {
        single_quoted_strings: false,
    };
    assert_eq!(redact_as(code, kind).text, code);
}
