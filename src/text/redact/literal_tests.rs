//! Secrets said in a sentence inside source code (`literal.rs`, issue 36's fourth hostile
//! pass): in a comment or a string literal the sentence rules read as in prose, and the code
//! around them keeps every word.

use super::*;

const RUST: TextKind = TextKind::Code {
    single_quoted_strings: false,
};
const PYTHON: TextKind = TextKind::Code {
    single_quoted_strings: true,
};

#[test]
fn a_secret_said_in_a_comment_or_a_literal_goes() {
    for (kind, input, value) in [
        (
            PYTHON,
            "# the admin password is Xk9vQ2mLp7Zt\nx = 1\n",
            "Xk9vQ2mLp7Zt",
        ),
        (
            PYTHON,
            "x = 1  # the token is Tk8vQ2mLp7Zt now\n",
            "Tk8vQ2mLp7Zt",
        ),
        (RUST, "// api token: Rt7vQ2mLp7Zt\n", "Rt7vQ2mLp7Zt"),
        (
            RUST,
            "/// The staging secret was Sd6vQ2mLp7Zt, rotate it.\n",
            "Sd6vQ2mLp7Zt",
        ),
        (
            RUST,
            "/* the secret is Bc5vQ2mLp7Zt */ fn f() {}\n",
            "Bc5vQ2mLp7Zt",
        ),
        (
            RUST,
            " * the password for prod is Pr4!vQ2mLp\n",
            "Pr4!vQ2mLp",
        ),
        (
            RUST,
            "let s = \"the password is Ls3vQ2mLp7Zt\";\n",
            "Ls3vQ2mLp7Zt",
        ),
        (
            RUST,
            "bail!(\"use the deploy token Dt2vQ2mLp7Zt for now\");\n",
            "Dt2vQ2mLp7Zt",
        ),
        (
            PYTHON,
            "msg = 'my github token password is Gh1vQ2mLp7Zt'\n",
            "Gh1vQ2mLp7Zt",
        ),
        (
            PYTHON,
            "log(f\"I set the api key to Ak9vQ2mLp7Zt\")\n",
            "Ak9vQ2mLp7Zt",
        ),
        (
            RUST,
            "const NOTE: &str = \"пароль от базы теперь Пб9вQ2mLp7\";\n",
            "Пб9вQ2mLp7",
        ),
        (
            RUST,
            "-- ключ API от боевой базы — Kl8vQ2mLp7Zt\n",
            "Kl8vQ2mLp7Zt",
        ),
        (
            TextKind::Config,
            "# the admin password is Cf7vQ2mLp7Zt\nport: 5432\n",
            "Cf7vQ2mLp7Zt",
        ),
        (
            RUST,
            "/*\n The admin password is Bk5vQ2mLp7Zt\n*/\nfn f() {}\n",
            "Bk5vQ2mLp7Zt",
        ),
        (
            PYTHON,
            "/* x */ y = 1\n/*\n   old token: Bj4vQ2mLp7Zt\n*/\n",
            "Bj4vQ2mLp7Zt",
        ),
        (
            TextKind::Config,
            "description: \"the token is Yd6vQ2mLp7Zt\"\n",
            "Yd6vQ2mLp7Zt",
        ),
    ] {
        let r = redact_as(input, kind);
        assert!(!r.text.contains(value), "{input:?} -> {:?}", r.text);
        assert_eq!(r.text.lines().count(), input.lines().count());
        assert_eq!(
            redact_as(&r.text, kind).text,
            r.text,
            "idempotent on {input:?}"
        );
    }
    let r = redact_as("let s = \"the password is Ls3vQ2mLp7Zt\"; // keep\n", RUST);
    assert_eq!(r.text, "let s = \"the password is [REDACTED]\"; // keep\n");
}

#[test]
fn code_around_secret_words_keeps_every_word() {
    for (kind, input) in [
        (RUST, "let token = next_token();\n"),
        (
            RUST,
            "pub struct Login {\n    password: String,\n    token: Option<Token>,\n}\n",
        ),
        (RUST, "fn key(&self) -> &str {\n    &self.key\n}\n"),
        (RUST, "let key = map.get(&token)?;\n"),
        (
            RUST,
            "let g = glob(\"src/*.rs\");\nlet token = tok;\nlet key = Key::new(token);\n",
        ),
        (RUST, "/* a */\nlet token = tok;\n"),
        (
            RUST,
            ".ok_or_else(|| Error::config(\"password missing\".into()))?;\n",
        ),
        (RUST, "println!(\"the token is {}\", token);\n"),
        (RUST, "// the token is expired when the clock says so\n"),
        (RUST, "// the key is to keep it short\n"),
        (RUST, "/// the password is stored in ~/.pgpass\n"),
        (PYTHON, "# see the password reset flow\n"),
        (
            PYTHON,
            "PASSWD = getpass.getpass(\"IMAP password for %s on %s: \" % (USER, host))\n",
        ),
        (
            PYTHON,
            "prompt(\"Please enter a password [cyan](must be at least 5 characters)\")\n",
        ),
        (PYTHON, "raise ValueError('the secret is base64-encoded')\n"),
        (RUST, "let s = \"the primary key is user_id\";\n"),
        (RUST, "return Err(\"password is required!\".into());\n"),
        (
            RUST,
            "// A sentence's `!` after a word is no value (`the token is expired!`).\n",
        ),
        (
            TextKind::Config,
            "# the token is refreshed hourly\ntoken_ttl: 3600\n",
        ),
    ] {
        let r = redact_as(input, kind);
        assert_eq!((r.text.as_str(), r.count), (input, 0), "{input:?}");
    }
}
