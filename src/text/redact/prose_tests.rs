//! Secrets said in a sentence (`prose.rs`), kept apart from the parent's tests so each file
//! reads in one sitting: the value after any secret word goes, in the forms people write it,
//! whatever words come before it; sentences about secrets keep their words.

use super::*;

#[test]
fn secrets_said_in_prose_go_and_the_sentence_stays() {
    for (input, secret, kept) in [
        (
            "the password is Hunter2CanaryA! for prod",
            "Hunter2CanaryA!",
            "the password is [REDACTED] for prod",
        ),
        (
            "password Hunter2CanaryB! ok",
            "Hunter2CanaryB!",
            "password [REDACTED] ok",
        ),
        (
            "the wifi password is zqa1b2c3d000x.",
            "zqa1b2c3d000x",
            "the wifi password is [REDACTED].",
        ),
        (
            "пароль это Kv9tRpl2Lm от базы",
            "Kv9tRpl2Lm",
            "пароль это [REDACTED] от базы",
        ),
    ] {
        let r = redact(input);
        assert!(!r.text.contains(secret), "{input:?} -> {:?}", r.text);
        assert_eq!(r.text, kept);
    }
    // Sentences about passwords and tokens keep their words, and code keeps its own rules.
    for input in [
        "the token is expired",
        "password is required",
        "the secret is base64-encoded",
        "token 0x1F3a9c is a number without a verb",
    ] {
        assert_eq!(redact(input).text, input);
    }
    // In code, a sentence is read in a comment or a literal only (`literal_tests.rs`).
    let code = "// the password is Hunter2CanaryA!\nlet s = secrets_seen;\n";
    let kind = TextKind::Code {
        single_quoted_strings: false,
    };
    assert_eq!(
        redact_as(code, kind).text,
        "// the password is [REDACTED]\nlet s = secrets_seen;\n",
    );
}

#[test]
fn a_denied_key_before_a_colon_is_prose() {
    for input in [
        "секрет это не пароль: смотри ниже",
        "this is not a password: see the docs",
        "there is no token: the call is anonymous",
    ] {
        let r = redact(input);
        assert_eq!((r.text.as_str(), r.count), (input, 0));
    }
    // The colon still assigns where nothing denies the key, in prose and in config.
    for (input, kept) in [
        ("пароль: hunter2", "пароль: [REDACTED]"),
        (
            "не забудь, пароль: hunter2x",
            "не забудь, пароль: [REDACTED]",
        ),
        (
            "the password for root: RootPhrase81",
            "the password for root: [REDACTED]",
        ),
    ] {
        let r = redact(input);
        assert_eq!((r.text.as_str(), r.count), (kept, 1), "{input:?}");
    }
    let config = "not: x\npassword: YamlPasswordSecret33\n";
    assert!(!redact_as(config, TextKind::Config)
        .text
        .contains("YamlPasswordSecret33"));
}

#[test]
fn a_secret_said_in_prose_counts_once() {
    for input in [
        "the password is Hunter2CanaryA! for prod",
        "password Hunter2CanaryB! ok",
        "the wifi password is zqa1b2c3d000x.",
        "пароль это Kv9tRpl2Lm от базы",
        "пароль — Kv9tRpl2Lm",
        "the password is 'Hunter2CanaryC!' now",
        "the password is \"Hunter2CanaryD!\"",
        "my password: Hunter2CanaryE!",
        "the password for root: RootPhrase81",
        "token is ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "the password is Tr0ub4dor&3q, keep it",
        "the password is Hunter2=CanaryF!",
        "password is (Hunter2CanaryG!)",
        "the secret was Xy7Kp9Lm2Qz, rotate it",
    ] {
        let r = redact(input);
        assert_eq!(r.count, 1, "{input:?} -> {:?}", r.text);
    }
}

/// Words that name a secret, English and Russian; each is tried in every form below.
const SECRET_WORDS: &[&str] = &[
    "password",
    "passphrase",
    "passwd",
    "passcode",
    "token",
    "secret",
    "key",
    "api key",
    "access token",
    "DB_PASSWORD",
    "admin-password",
    "credentials",
];

/// Words before the secret word; none of them may hide the value (issue 36, item 5).
const BEFORE: &[&str] = &[
    "",
    "the ",
    "my ",
    "the secret ",
    "my github token ",
    "the wifi ",
    "our new prod db root ",
    "Note: the ",
    "(the ",
    "and the staging key ",
    "Token ",
];

/// The forms a sentence gives a value in; `{k}` is the secret word, `{v}` the value.
const FORMS: &[&str] = &[
    "{k} is {v}",
    "{k} was {v}",
    "{k} is now {v}",
    "{k} will be {v}",
    "{k} is set to {v}",
    "{k} has been changed to {v}",
    "{k} is: {v}",
    "{k}: {v}",
    "{k} = {v}",
    "{k} - {v}",
    "{k} — {v}",
    "{k} -> {v}",
    "{k}'s {v}",
    "{k} for prod is {v}",
    "{k} for the staging db is {v}",
    "{k} you need is {v}",
    "{k} here is \"{v}\"",
    "{k} is `{v}`",
];

/// Sentences that name the secret word only after a verb of their own.
const VERB_FIRST: &[&str] = &[
    "set the {k} to {v}",
    "I changed my {k} to {v} yesterday",
    "reset the {k} to {v}",
    "use the {k} {v} for now",
    "log in with the {k} {v}",
];

const RU_WORDS: &[&str] = &[
    "пароль",
    "токен",
    "ключ",
    "секрет",
    "секретный ключ",
    "ключ API",
    "API-ключ",
    "паролем",
];

const RU_FORMS: &[&str] = &[
    "{k} это {v}",
    "{k} — {v}",
    "{k} - {v}",
    "{k}: {v}",
    "{k} теперь {v}",
    "{k} был {v}",
    "{k} будет {v}",
    "{k} от базы — {v}",
    "{k} для прода: {v}",
    "{k} от боевой базы это {v}",
    "поменял {k} на {v}",
    "используй {k} {v}",
];

/// Values that look like a credential whatever the secret word.
const VALUES: &[&str] = &[
    "Hunter2CanaryA!",
    "Xk9-fj3Lq2z!",
    "zqa1b2c3d000x",
    "Kv9tRpl2Lm",
];

fn assert_hidden(input: &str, value: &str, kept: &str) {
    let r = redact(input);
    assert!(
        !r.text.contains(value),
        "{input:?} -> {:?} keeps {value:?}",
        r.text
    );
    assert!(
        r.text.contains(kept),
        "{input:?} -> {:?} lost {kept:?}",
        r.text
    );
    assert!(r.count >= 1, "{input:?}");
    assert_eq!(redact(&r.text).text, r.text, "idempotent on {input:?}");
}

#[test]
fn a_value_after_any_secret_word_goes_whatever_words_come_before() {
    for v in VALUES {
        for k in SECRET_WORDS {
            for before in BEFORE {
                for form in FORMS {
                    let said = form.replace("{k}", k).replace("{v}", v);
                    let input = format!("{before}{said} ok");
                    if code_like(&input) {
                        continue; // see `a_key_named_as_code_and_config_name_it_is_not_read`
                    }
                    assert_hidden(&input, v, &format!("{before}{k}"));
                }
            }
            for form in VERB_FIRST {
                let input = form.replace("{k}", k).replace("{v}", v);
                assert_hidden(&input, v, k);
            }
        }
        for k in RU_WORDS {
            for before in ["", "мой ", "новый ", "наш секретный ", "и токен "]
            {
                for form in RU_FORMS {
                    let said = form.replace("{k}", k).replace("{v}", v);
                    let input = format!("{before}{said}, понял");
                    assert_hidden(&input, v, k);
                }
            }
        }
    }
}

/// `key: X` or `key = X` alone on its line: how YAML and code name a key (`key:
/// cache-v5-{{ checksum }}`), not how a sentence says a secret.
fn code_like(input: &str) -> bool {
    input.starts_with("key:") || input.starts_with("key =")
}

#[test]
fn a_key_named_as_code_and_config_name_it_is_not_read() {
    for input in [
        "key: Hunter2CanaryA! ok",
        "      key: project-cache-v5-<< parameters.rust_img >>-{{ checksum \"Cargo.toml\" }}",
        "    fn get(&self, key: &OsStr) -> Option<&Arc<OsStr>> {",
        "    key: Utf8SuffixKey,",
        "        let key = \"hello there\";",
        "pub type Key = Array<u8, U32>;",
        "impl<'a: 'k, 'k, Params, Key: 'k> DecodeValue<'a> for Info<Params, Key>",
        "        client_creds: &Arc<dyn ResolvesClientCert>,",
        "// TC8: key: 'All your base are belong to us!', IV: IETF2013, rounds 12",
        "The key is pKey,nKey",
        "# Using the key |Htable|, update the GHASH accumulator",
        "the current lookahead token's \"lookahead bytes\" value",
        "connect(\"user=pass_user password=password dbname=postgres\")",
    ] {
        let r = redact(input);
        assert_eq!((r.text.as_str(), r.count), (input, 0), "{input:?}");
    }
    // The same key in a sentence, or a key that names a secret, is read.
    for (input, value) in [
        ("the key: Hunter2CanaryA! ok", "Hunter2CanaryA!"),
        ("api key: Xk9fj3Lq2z", "Xk9fj3Lq2z"),
        ("ключ: Xk9fj3Lq2z", "Xk9fj3Lq2z"),
        ("OPENAI_KEY: Xk9fj3Lq2z", "Xk9fj3Lq2z"),
    ] {
        assert_hidden(input, value, &input[..input.find(value).unwrap_or(0)]);
    }
}

#[test]
fn a_password_named_by_its_word_needs_no_mix_of_classes() {
    // After `password` (or `пароль`) and a verb, a value with a digit or a symbol is a secret
    // even when it is not a strong one.
    for (input, value) in [
        ("the password is hunter2", "hunter2"),
        ("the secret password is qwerty123 for now", "qwerty123"),
        ("my github token password is 12345678", "12345678"),
        ("the root passphrase was letmein99.", "letmein99"),
        ("пароль от почты теперь qwerty123", "qwerty123"),
        ("the password you need is s3cret!", "s3cret!"),
    ] {
        assert_hidden(input, value, &input[..input.find(value).unwrap_or(0)]);
    }
}

#[test]
fn a_secret_word_given_as_a_value_does_not_shield_the_next_one() {
    // `token: password X`: the first key's value is a secret word, and the value after it is
    // the secret (dispatch's task text showed `token: [REDACTED] X`).
    for (input, value) in [
        (
            "Fix the login. token: password Hunter2CanaryA! then restart",
            "Hunter2CanaryA!",
        ),
        ("token: password hunter2", "hunter2"),
        ("creds — token: password hunter2 and user bob", "hunter2"),
        ("api_key: token Xk9fj3Lq2z ok", "Xk9fj3Lq2z"),
        ("password: password Qw3rty!x", "Qw3rty!x"),
        ("the db secret: пароль Qw3rty12 ok", "Qw3rty12"),
        ("токен: пароль Qw3rty12, понял", "Qw3rty12"),
    ] {
        let r = redact(input);
        assert!(!r.text.contains(value), "{input:?} -> {:?}", r.text);
        assert!(r.count >= 1);
    }
}

#[test]
fn sentences_about_secrets_keep_their_words() {
    for input in [
        "the token count is 5",
        "key points",
        "press the key",
        "password reset flow works",
        "the token is expired",
        "password is required",
        "the password is wrong",
        "the password is the same as before",
        "the secret is base64-encoded",
        "the token is sha256sum of the body",
        "the password field is Required!",
        "the token type is Bearer",
        "the key is to restart the service",
        "the key thing is Performance",
        "the primary key is user_id",
        "the sort key is created_at",
        "the shortcut key is Ctrl+Shift+K",
        "the key is F5",
        "max tokens is 4096",
        "tokens: 4096",
        "key: value",
        "the password is stored in ~/.pgpass",
        "the token endpoint is https://auth.example/oauth/token",
        "the api key is read from $OPENAI_API_KEY",
        "the password is 8 characters long",
        "passwords are hashed with bcrypt",
        "the password was sha256-hashed",
        "the secret sauce is patience",
        "use the key in the vault",
        "set the password to something long",
        "ключ к разгадке",
        "ключ от квартиры лежит под ковриком",
        "пароль был неверный",
        "токен истёк, нужен новый",
        "секрет это не пароль: смотри ниже",
    ] {
        let r = redact(input);
        assert_eq!((r.text.as_str(), r.count), (input, 0), "{input:?}");
    }
}

#[test]
fn forms_found_by_the_hostile_pass() {
    // Issue 36, a pass of our own over item 5: an abbreviation, a parenthesis, a dash or an
    // arrow without spaces, a value between commas.
    for (input, value) in [
        ("my pw is Xk9-fj3Lq2z!", "Xk9-fj3Lq2z!"),
        ("the password (for prod) is Xk9-fj3Lq2z!", "Xk9-fj3Lq2z!"),
        ("the password—Xk9-fj3Lq2z!", "Xk9-fj3Lq2z!"),
        ("the password→Xk9-fj3Lq2z!", "Xk9-fj3Lq2z!"),
        ("the token, Xk9-fj3Lq2z!, expires soon", "Xk9-fj3Lq2z!"),
        (
            "the password you gave me, Xk9-fj3Lq2z!, works",
            "Xk9-fj3Lq2z!",
        ),
        ("THE PASSWORD IS Xk9-fj3Lq2z!", "Xk9-fj3Lq2z!"),
        ("пароль такой: Xk9-fj3Lq2z!", "Xk9-fj3Lq2z!"),
        ("вот токен Xk9-fj3Lq2z!", "Xk9-fj3Lq2z!"),
        ("he said 'use the token Xk9-fj3Lq2z! now'", "Xk9-fj3Lq2z!"),
    ] {
        assert_hidden(input, value, &input[..input.find(value).unwrap_or(0)]);
    }
    // Lists that name a key among other items are not an apposition.
    for input in [
        "    use chacha20::{Key, XChaCha20, XNonce};",
        "    my ( $round_key, $aesdata0, $aesdata1, $aesdata2 ) = @_;",
        "CCCryptorCreate(op, kCCAlgorithmAES128, 0, key, kCCKeySizeAES256, iv, &cryptor)",
        "a DER-encoded private key as PKCS#1, PKCS#8, or SEC1",
        "the token, however, is valid",
        "run pwsh and pwd, then pw install",
    ] {
        let r = redact(input);
        assert_eq!((r.text.as_str(), r.count), (input, 0), "{input:?}");
    }
}

#[test]
fn forms_found_by_the_second_hostile_pass() {
    // Issue 37: Markdown around the word, long clauses before the verb, values with `/`,
    // parentheses, a leading `-` or `&`, HTML tags, a value on the next line, more verbs.
    let mut failed = Vec::new();
    for (input, value) in [
        ("**Password:** Bd9!CNRYe66", "Bd9!CNRYe66"),
        ("**API key:** Ak5!CNRYd05", "Ak5!CNRYd05"),
        ("`password`: Bq2!CNRYe68", "Bq2!CNRYe68"),
        (
            "the password for the new staging database server is Rt6*CNRYe09y",
            "Rt6*CNRYe09y",
        ),
        (
            "the password that I use for everything is Ev2!CNRYe25ss",
            "Ev2!CNRYe25ss",
        ),
        (
            "the password for the production database cluster in eu-west-1 is Eu9!CNRYv19",
            "Eu9!CNRYv19",
        ),
        (
            "пароль от сервера базы данных в продакшене теперь Пб9!CNRYv20",
            "Пб9!CNRYv20",
        ),
        ("the password is Ab1/CNRYe18!z", "Ab1/CNRYe18!z"),
        ("the password is 'Ab1/CNRYv02!ef'", "Ab1/CNRYv02!ef"),
        (
            "the secret is 3q2+7w/AbCdEfCNRYv01==",
            "3q2+7w/AbCdEfCNRYv01",
        ),
        (
            "the secret is wJalrXUtnFEMI/K7MDENG/bPxRfiCNRYv07EXAMPLE",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCNRYv07EXAMPLE",
        ),
        ("the password is P@ss(CNRYe98)w0rd", "P@ss(CNRYe98)w0rd"),
        ("the token is &Xy7!CNRYv03", "Xy7!CNRYv03"),
        ("the password is -Neg4!CNRYe19", "Neg4!CNRYe19"),
        ("the password is <b>Hb7!CNRYj07</b>", "Hb7!CNRYj07"),
        ("the password is Hb8!CNRYj08<br/>next", "Hb8!CNRYj08"),
        ("the password is Pa55,CNRYe20x!", "Pa55,CNRYe20x"),
        ("The password is:\n    Nl9!CNRYe24tt", "Nl9!CNRYe24tt"),
        ("the password is\nNx5!CNRYe83", "Nx5!CNRYe83"),
        ("What's the password? It's Qw3!CNRYe04e", "Qw3!CNRYe04e"),
        ("the password remains Rm1!CNRYe30", "Rm1!CNRYe30"),
        ("the password stays St1!CNRYe31", "St1!CNRYe31"),
        ("the password has to be Ht1!CNRYe32", "Ht1!CNRYe32"),
        ("the password needs to be Nt1!CNRYe33", "Nt1!CNRYe33"),
        ("the password should now be Sn1!CNRYe34", "Sn1!CNRYe34"),
        ("пароль является Пя1!CNRYe35", "Пя1!CNRYe35"),
        ("пароль - это Пд1!CNRYe36", "Пд1!CNRYe36"),
        ("the passwords are Pl1!CNRYa and Pl2!CNRYe55", "Pl1!CNRYa"),
        ("the passwords are Pl1!CNRYa and Pl2!CNRYe55", "Pl2!CNRYe55"),
        ("passwords: Pa1!CNRYb, Pa2!CNRYc", "Pa1!CNRYb"),
        ("passwords: Pa1!CNRYb, Pa2!CNRYc", "Pa2!CNRYc"),
    ] {
        let r = redact(input);
        if r.text.contains(value) || redact(&r.text).text != r.text {
            failed.push(format!("{input:?} -> {:?}", r.text));
        }
    }
    for input in [
        "the token count is 5",
        "press the key",
        "password reset flow works",
        "the password is required",
        "the password is required!",
        "the token is expired",
        "the token is expired?!",
        "the key question is whether it scales",
        "the token limit is 128k",
        "the key is Ctrl+Shift+P",
        "Секрет успеха — тесты",
        "ключ — это поле id",
        "токен истёк",
        "the key is src/keys/a.pem",
        "the key is ~/.ssh/id_ed25519",
        "the token is stored in /etc/x",
        "the password for the account and the token for the api are both required",
        "the password needs to be changed",
        "the password remains unchanged",
        "**Password:** required",
        "`password`: the user's password",
        "the password is\nrequired by the server",
        "What's the password? It's in the vault",
        "the key is api/v2/users",
        "the token is foo(bar)",
        "the token is -v",
    ] {
        let r = redact(input);
        if (r.text.as_str(), r.count) != (input, 0) {
            failed.push(format!("kept? {input:?} -> {:?}", r.text));
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}
