//! Values that are words or well-known formats (issue 36's fourth hostile pass, item 5): a
//! Russian sentence after a Russian secret word, a word that says a secret's state, a locale,
//! a character set, a version or a date are no secrets; every value redacted before still is.

use super::*;

#[test]
fn words_and_well_known_formats_after_a_secret_word_are_kept() {
    let mut failed = Vec::new();
    for input in [
        "токен — это строка доступа",
        "пароль: обязателен",
        "Пароль: Обязателен.",
        "пароль — обязательное поле формы",
        "ключ: смотри ниже",
        "секрет: см. раздел «Доступ»",
        "API-ключ: выдаёт администратор, спроси его",
        "токен: истёк, нужен новый",
        "the key is en_US.UTF-8",
        "the locale key is ru_RU.utf8 now",
        "the key is C.UTF-8",
        "the token is v2.0.1-RC1",
        "the secret is ISO-8859-1",
        "the key was 2024-01-02T10:00:00Z",
        "token: expired",
        "password: missing",
        "token: expired, renew it",
        "the token is expired!",
        "password is required!",
    ] {
        let r = redact(input);
        if (r.text.as_str(), r.count) != (input, 0) {
            failed.push(format!("kept? {input:?} -> {:?}", r.text));
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

#[test]
fn values_redacted_before_still_are() {
    let mut failed = Vec::new();
    for (kind, input, value) in [
        (TextKind::Prose, "пароль: qwerty123", "qwerty123"),
        (TextKind::Prose, "Пароль=йцукен", "йцукен"),
        (TextKind::Prose, "токен — abcdef123", "abcdef123"),
        (TextKind::Prose, "пароль: Пб9вQ2mLp7", "Пб9вQ2mLp7"),
        (TextKind::Prose, "пароль: солнце123", "солнце123"),
        (TextKind::Prose, "токен — это Xk9vQ2mLp7Zt", "Xk9vQ2mLp7Zt"),
        (
            TextKind::Prose,
            "пароль — это Kv9tRpl2Lm, запомни",
            "Kv9tRpl2Lm",
        ),
        (
            TextKind::Prose,
            "пароль: обязателен Xk9vQ2mLp7Zt",
            "Xk9vQ2mLp7Zt",
        ),
        (TextKind::Prose, "the password is hunter2", "hunter2"),
        (
            TextKind::Prose,
            "the key is en_US.Xk9vQ2mLp7Zt",
            "Xk9vQ2mLp7Zt",
        ),
        (
            TextKind::Prose,
            "the key is ab.Xk9vQ2mLp7Zt",
            "Xk9vQ2mLp7Zt",
        ),
        (
            TextKind::Prose,
            "the token is v2-Xk9vQ2mLp7Zt",
            "Xk9vQ2mLp7Zt",
        ),
        (
            TextKind::Prose,
            "the token is 2024-Xk9vQ2mLp7Zt",
            "Xk9vQ2mLp7Zt",
        ),
        (TextKind::Prose, "password: supersecret", "supersecret"),
        (TextKind::Prose, "DB_PASSWORD: postgres", "postgres"),
        (
            TextKind::Prose,
            "  password: my long phrase # prod",
            "long phrase",
        ),
        (TextKind::Prose, "token: expired123", "expired123"),
        (TextKind::Prose, "пароль — будет qwerty123", "qwerty123"),
        (
            TextKind::Prose,
            "токен — это строка Xk9vQ2mLp7Zt",
            "Xk9vQ2mLp7Zt",
        ),
        (
            TextKind::Prose,
            "пароль — это qwerty123 и ещё что-то",
            "qwerty123",
        ),
        (TextKind::Prose, "пароль: это Xk9vQ2mLp7Zt", "Xk9vQ2mLp7Zt"),
        (
            TextKind::Prose,
            "пароль: обязателен. qwerty123",
            "qwerty123",
        ),
        (
            TextKind::Prose,
            "token: expired Xk9vQ2mLp7Zt",
            "Xk9vQ2mLp7Zt",
        ),
        (
            TextKind::Prose,
            "the password is Hunter2CanaryA!",
            "Hunter2CanaryA!",
        ),
        (TextKind::Config, "LANG_KEY=Xk9vQ2mLp7Zt\n", "Xk9vQ2mLp7Zt"),
    ] {
        let r = redact_as(input, kind);
        if r.text.contains(value) || r.count == 0 {
            failed.push(format!("{input:?} -> {:?}", r.text));
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}
