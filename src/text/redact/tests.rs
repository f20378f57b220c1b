//! Unit tests of the parent module, kept apart so the module reads in one sitting.

use super::*;

/// (input, secret that must disappear, text that must stay).
pub(super) const SECRET_CASES: &[(&str, &str, &str)] = &[
    // URLs
    ("mysql://user:hunter2@db.local/app", "hunter2", "mysql://user:[REDACTED]@db.local"),
    ("postgres://admin:p%40ss@10.0.0.5:5432/x", "p%40ss", "postgres://admin:"),
    ("redis://:s3cretpw@cache:6379", "s3cretpw", "redis://:[REDACTED]@cache"),
    ("git clone https://bob:gh0pw@host/r.git", "gh0pw", "https://bob:"),
    ("amqp://u:p@ss:w@rd@mq/vhost", "ss:w@rd", "@mq/vhost"),
    // assignments
    ("password=hunter2", "hunter2", "password="),
    ("passwd: hunter2", "hunter2", "passwd: "),
    ("PASSWORD=\"hunter 2\"", "hunter 2", "PASSWORD=\""),
    ("secret = 'abc123'", "abc123", "secret = '"),
    ("token: abcdef123456", "abcdef123456", "token: "),
    ("api_key => 'k-123'", "k-123", "api_key => '"),
    ("apikey=zzz999", "zzz999", "apikey="),
    ("access_key: AK1234", "AK1234", "access_key"),
    ("client_secret=cs_999", "cs_999", "client_secret="),
    ("private_key: \"MIIEabc\"", "MIIEabc", "private_key"),
    ("{\"password\": \"hunter2\", \"user\": \"bob\"}", "hunter2", "\"password\": \"[REDACTED]\", \"user\": \"bob\""),
    ("{\\\"password\\\": \\\"hunter2\\\"}", "hunter2", "\\\"password\\\": \\\"[REDACTED]\\\""),
    ("$db = ['password' => 'hunter2'];", "hunter2", "'password' => '"),
    ("let authToken = \"tok_abc123\";", "tok_abc123", "authToken = \""),
    ("password := \"gopass\"", "gopass", "password := \""),
    ("password: str = \"pyPass1\"", "pyPass1", "password: str = \""),
    ("if password == \"letmein\":", "letmein", "password == \""),
    ("spring.datasource.password=jdbcPw", "jdbcPw", "spring.datasource.password="),
    ("curl 'https://x.io/api?token=abc123&x=1'", "abc123", "token=[REDACTED]&x=1"),
    ("x-api-key: 0123456789abcdef", "0123456789abcdef", "x-api-key: "),
    // .env lines (whole rest of line)
    ("DB_PASSWORD=correct horse battery\nDB_HOST=db", "horse", "DB_PASSWORD=[REDACTED]\nDB_HOST=db"),
    ("STRIPE_SECRET_KEY=abc123", "abc123", "STRIPE_SECRET_KEY="),
    ("export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG", "wJalrXUtnFEMI", "export AWS_SECRET_ACCESS_KEY="),
    ("OPENAI_KEY=abc999\r\n", "abc999", "OPENAI_KEY="),
    ("DB_PASS=pw1\nGITHUB_TOKEN=tk2", "pw1", "GITHUB_TOKEN=[REDACTED]"),
    ("  password: my long phrase # prod", "long phrase", "  password: [REDACTED]"),
    ("token: abc def;\n", "abc", "token: [REDACTED] def;"),
    ("secret_key_base:\n    \"abcdefgh12345\"", "abcdefgh12345", "secret_key_base:\n    \""),
    ("secret_key_base:\\n    \\\"abcdefgh12345\\\"", "abcdefgh12345", "secret_key_base:"),
    // CLI
    ("mysql -u root -pS3cret db", "S3cret", "-p[REDACTED] db"),
    ("app --password hunter2 --verbose", "hunter2", "--password [REDACTED] --verbose"),
    ("app --token=abc123", "abc123", "--token="),
    ("sshpass -p 'pw pw' ssh host", "pw pw", "sshpass -p '"),
    // XML
    ("<password>hunter2</password>", "hunter2", "<password>[REDACTED]</password>"),
    // token shapes
    ("key AKIAIOSFODNN7EXAMPLE here", "AKIAIOSFODNN7EXAMPLE", "key "),
    ("ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_abcdefghij", ""),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "github_pat_11", ""),
    ("xoxb-123456789012-abcdefghijkl", "xoxb-1234", ""),
    ("sk-abcdefghijklmnopqrstuvwxyz0123456789ABCD", "sk-abcdef", ""),
    ("sk-ant-api03-abcdefghij0123456789_-ABCDEFGH", "sk-ant-api03", ""),
    ("sk-proj-Abc123def456ghi789jkl012", "sk-proj-Abc", ""),
    ("AIzaSyA-1234567890abcdefghijklmnopqrstu", "AIzaSy", ""),
    ("sk_live_abcdefghij0123456789", "sk_live_abc", ""),
    ("rk_live_abcdefghij0123456789", "rk_live_abc", ""),
    ("glpat-abcdefghij0123456789", "glpat-abc", ""),
    ("npm_abcdefghijklmnopqrstuvwxyz0123456789", "npm_abc", ""),
    ("bot 123456789:AAEabcdefghijklmnopqrstuvwxyz012345", "AAEabc", "bot "),
    ("https://hooks.slack.com/services/T000/B000/XXXXabc", "XXXXabc", "hooks.slack.com/services/"),
    (
        "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "eyJhbGciOiJIUzI1NiJ9",
        "jwt ",
    ),
    // Authorization
    ("Authorization: Bearer abc.def-ghi", "abc.def-ghi", "Authorization: Bearer "),
    ("-H \"Authorization: Basic dXNlcjpwYXNz\"", "dXNlcjpwYXNz", "Authorization: Basic "),
    ("\"authorization\": \"token 0123abcd\"", "0123abcd", "\"authorization\": \"token "),
    ("use bearer ABCDEFGHIJKLMNOPQRSTUV now", "ABCDEFGHIJKLMNOP", "bearer "),
    // PEM
    (
        "k:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\nabcdef==\n-----END RSA PRIVATE KEY-----\nafter",
        "MIIEpAIBAAKCAQEA7",
        "k:\n[REDACTED]\n[REDACTED]\n[REDACTED]\n[REDACTED]\nafter",
    ),
    (
        "-----BEGIN OPENSSH PRIVATE KEY-----\\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU\\n-----END OPENSSH PRIVATE KEY-----",
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU",
        "[REDACTED]",
    ),
    (
        "truncated -----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBbbbbbbbbbbbbbbbbbbbbbb\nMHcCAQEEICccccccccccccccccccc",
        "MHcCAQEEI",
        "truncated [REDACTED]",
    ),
    // Russian
    ("пароль: qwerty123", "qwerty123", "пароль: "),
    ("Пароль=йцукен", "йцукен", "Пароль="),
    ("пароль от базы: s3cr3t", "s3cr3t", "пароль от базы: "),
    ("токен — abcdef123", "abcdef123", "токен — "),
    ("password for root: toor1", "toor1", "password for root: "),
    // Issue 13: values that look like placeholders or variables are secrets after a secret key.
    ("password=MyPassword2024q1", "MyPassword2024q1", "password="),
    ("password=Passw0rd!q9", "Passw0rd", "password="),
    ("DATABASE_PASSWORD=DotEnvPassword44", "DotEnvPassword44", "DATABASE_PASSWORD="),
    ("GET /v1?api_key=QueryApiKeyValue55 HTTP/1.1", "QueryApiKeyValue55", " HTTP/1.1"),
    ("db:\n  password: YamlPasswordSecret33\n", "YamlPasswordSecret33", "  password: "),
    ("password=Tr0ub4dor&3q", "3q", "password=[REDACTED]"),
    ("curl 'x?password=Tr0ub4dor&3q&user=bob'", "3q", "[REDACTED]&user=bob"),
    ("password=semi;colon;x", "colon", "password=[REDACTED]"),
    ("machine api.host login bob password NetrcPass77", "NetrcPass77", "login bob password "),
    ("machine h\n  login u\n  password NetrcLine88\n", "NetrcLine88", "  password "),
    ("pwd=PwdShort9", "PwdShort9", "pwd="),
    ("Server=db;Uid=sa;Pwd=OdbcPass1;Database=x", "OdbcPass1", ";Database=x"),
    (
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=AzureKey0+/abc==;EndpointSuffix=core.windows.net",
        "AzureKey0",
        ";EndpointSuffix=core.windows.net",
    ),
    (
        "Endpoint=sb://x/;SharedAccessSignature=sv=2020&sig=SasSig1%2B&se=9;Other=1",
        "SasSig1",
        ";Other=1",
    ),
    ("Server=tcp:h;User Id=u;Password=Ado;Pass;Database=d", "Ado;Pass", ";Database=d"),
    ("jdbc:postgresql://h/db?user=u&password=JdbcPw5&ssl=true", "JdbcPw5", "&ssl=true"),
    ("password=$ecretDollar1", "$ecretDollar1", "password="),
    ("password: |\n  BlockScalarSecret\n  second line\nnext: 1", "BlockScalarSecret", "next: 1"),
    ("password:\n  NextLineSecret\nuser: bob", "NextLineSecret", "user: bob"),
    ("description: password: |   SameLine77 next: 1", "SameLine77", "password: |"),
    ("{\"cmd\": \"password: |\\n  EscapedBlock78\"}", "EscapedBlock78", "password: |"),
    ("export PASSWORD=Cont\\\ninued9 && run", "inued9", "&& run"),
    ("password=!@#$%^", "!@#$%^", "password="),
    ("connect(password=Literal77)", "Literal77", ")"),
    ("the password is set: password=Hunter22.", "Hunter22", "password="),
    (
        "PuTTY-User-Key-File-2: ssh-rsa\nEncryption: none\nPublic-Lines: 1\nAAAAB3NzaC1yc2E\nPrivate-Lines: 2\nAAABAQCPuttyPrivA\nAAABAQCPuttyPrivB\nPrivate-MAC: 0a1b2c3d4e\n",
        "PuttyPriv",
        "Public-Lines: 1\nAAAAB3NzaC1yc2E",
    ),
    ("Private-MAC: 0a1b2c3d4e5f", "0a1b2c3d4e5f", "Private-MAC: "),
];

/// Text that must come out unchanged.
pub(super) const KEEP_CASES: &[&str] = &[
    "password=",
    "password: [REDACTED]",
    "password: ****",
    "PASSWORD=${DB_PASSWORD}",
    "password: $DB_PASSWORD",
    "password=<password>",
    "token: null",
    "interface S {\n  token: string | null;\n  user: User;\n}",
    "set({\n  user: data.user,\n  token: data.token,\n  ok: null,\n})",
    "password:\n  min_length: 8",
    "secret_key_base: ...",
    "tests pass: all green",
    "auth: true, WIF auth: `X`",
    "api_key_reqs: number",
    "apiKeyService = createService<DatabaseClient>()",
    "send `x-api-key:` — converting",
    "`Authorization: Bearer <token>` plus",
    "{\\n  auth: \\\"basic\\\",\\n}",
    "password = os.getenv(\"DB_PASSWORD\")",
    "token = get_token()",
    "password = self.password",
    "connect(user=user, password=password)",
    "\"input_tokens\": 123, \"output_tokens\": 456, \"max_tokens\": 4096",
    "PWD=/home/user/project",
    "sort_key: name",
    "primary_key = id",
    "src/auth/token.rs:42: fn parse()",
    "secrets.yaml: 12 lines",
    "bypass: true",
    "pub secrets_redacted: u64,",
    "let mut secrets = 0;",
    "password = os.environ[\"DB_PASSWORD\"]",
    "PASSWORD=%DB_PASSWORD%",
    "password: changeme",
    "token=\"\"",
    "\"max_tokens\": 4096, \"token_count\": 12",
    "password_file=/run/secrets/db",
    "Access denied for user 'app'@'10.0.0.7' (using password: NO)",
    "{\\n  autoRefreshToken: true,\\n}",
    "[\"+    if not secret:\",\"+        raise\"]",
    "setToken: (token: string | null) => void;",
    "machine learning by default uses a password manager",
    "mkdir -p dir && mysql -u root -p",
    "the sk-learn-compatible-estimators-and-more library",
    "Authorization: Bearer $TOKEN",
    "Authorization: required",
    "keyboard layout, monkey business, tokenizer",
    "обычный текст без секретов, ключ к разгадке",
    "",
];

#[test]
fn secrets_are_replaced_and_keys_stay() {
    for (input, secret, keep) in SECRET_CASES {
        let r = redact(input);
        assert!(
            !r.text.contains(secret),
            "{input:?} -> {:?} still has {secret:?}",
            r.text
        );
        assert!(
            r.text.contains(keep),
            "{input:?} -> {:?} lost {keep:?}",
            r.text
        );
        assert!(r.text.contains(REDACTED), "{input:?} -> {:?}", r.text);
        assert!(r.count >= 1, "{input:?}");
    }
}

#[test]
fn non_secrets_are_untouched() {
    for input in KEEP_CASES {
        let r = redact(input);
        assert_eq!(&r.text, input);
        assert_eq!(r.count, 0, "{input:?}");
        assert!(matches!(redact_cow(input).0, Cow::Borrowed(_)));
    }
}

#[test]
fn counts_each_value() {
    let r = redact("password=a1 token=b2 mysql://u:c3@h");
    assert_eq!(r.count, 3, "{:?}", r.text);
    assert_eq!(
        r.text,
        "password=[REDACTED] token=[REDACTED] mysql://u:[REDACTED]@h"
    );
}

#[test]
fn redaction_is_idempotent() {
    let mut all: Vec<String> = SECRET_CASES.iter().map(|c| c.0.to_string()).collect();
    all.extend(KEEP_CASES.iter().map(|s| s.to_string()));
    all.push(
        SECRET_CASES
            .iter()
            .map(|c| c.0)
            .collect::<Vec<_>>()
            .join("\n"),
    );
    all.push(
        SECRET_CASES
            .iter()
            .map(|c| c.0)
            .collect::<Vec<_>>()
            .join(" "),
    );
    for input in all {
        let once = redact(&input);
        let twice = redact(&once.text);
        assert_eq!(twice.text, once.text, "input {input:?}");
        assert_eq!(twice.count, 0, "input {input:?} -> {:?}", once.text);
    }
}

#[test]
fn random_input_never_panics() {
    const PIECES: &[&str] = &[
        "password",
        "=",
        ":",
        " ",
        "\n",
        "\"",
        "'",
        "\\",
        "://",
        "@",
        "пароль",
        "ё",
        "🙂",
        "漢",
        "token",
        "-----BEGIN RSA PRIVATE KEY-----",
        "-----END RSA PRIVATE KEY-----",
        "eyJ",
        "AKIA",
        "ghp_",
        "sk-",
        "Bearer ",
        "Authorization:",
        "$",
        "{",
        "}",
        "[REDACTED]",
        "\r",
        "abc123XYZ",
        "\u{0}",
        "é",
        "—",
        "<password>",
        "</password>",
        "mysql -p",
        "--token ",
    ];
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..3000 {
        let len = (next() % 24) as usize;
        let s: String = (0..len)
            .map(|_| PIECES[(next() % PIECES.len() as u64) as usize])
            .collect();
        let once = redact(&s);
        let twice = redact(&once.text);
        assert_eq!(twice.text, once.text, "input {s:?}");
    }
}

#[test]
fn command_line_credentials_are_redacted() {
    for (input, secret) in [
        ("curl -u admin:LEAKcurl1 https://x", "LEAKcurl1"),
        ("curl -s --user deploy:LEAKcurl2 https://x", "LEAKcurl2"),
        ("redis-cli -h cache -a LEAKredis1 ping", "LEAKredis1"),
        (
            "docker login registry.example -u ci -p LEAKdocker1",
            "LEAKdocker1",
        ),
        (
            "twine upload -u __token__ -p LEAKtwine1 dist/*",
            "LEAKtwine1",
        ),
        ("./migrate --db-pass LEAKdbpass1", "LEAKdbpass1"),
    ] {
        let out = redact(input);
        assert!(!out.text.contains(secret), "{input} → {}", out.text);
        assert!(out.count >= 1);
        assert_eq!(redact(&out.text).text, out.text, "idempotent");
    }
}

const RUST: TextKind = TextKind::Code {
    single_quoted_strings: false,
};
const PYTHON: TextKind = TextKind::Code {
    single_quoted_strings: true,
};

#[test]
fn code_keeps_identifiers_types_and_expressions() {
    for (kind, input) in [
        (RUST, "pub secrets_redacted: u64,"),
        (RUST, "let mut secrets = 0;"),
        (RUST, "let password = user_input;"),
        (
            RUST,
            "fn check<'a>(password: &'a str, token: Option<String>) {",
        ),
        (RUST, "let token = self.client.token.clone();"),
        (RUST, "Self { password: pw, api_key: key.to_string() }"),
        (RUST, "x.secrets_redacted += chunked.secrets;"),
        (PYTHON, "password = os.environ[\"DB_PASSWORD\"]"),
        (PYTHON, "token = request.headers.get('X-Token')"),
        (PYTHON, "secret = settings.SECRET_KEY"),
        (PYTHON, "params = { _csrf_token: csrfToken }"),
        (RUST, "const META_KEY: &str = \"failed_stores\";"),
        (PYTHON, "CACHE_KEY = 'index-rev'"),
    ] {
        let r = redact_as(input, kind);
        assert_eq!(r.text, input, "{kind:?}");
        assert_eq!(r.count, 0, "{input:?}");
    }
}

#[test]
fn code_literals_and_comments_are_redacted() {
    for (kind, input, secret) in [
        (RUST, "let password = \"CodeLit1\";", "CodeLit1"),
        (
            RUST,
            "const DSN: &str = \"Server=x;Password=CodeConn2;Database=y\";",
            "CodeConn2",
        ),
        (RUST, "// password=CodeComment3", "CodeComment3"),
        (
            RUST,
            "let url = \"postgres://u:CodeUrl4@h/db\";",
            "CodeUrl4",
        ),
        (PYTHON, "password = 'CodePy5'", "CodePy5"),
        (PYTHON, "# api_key: CodeHash6", "CodeHash6"),
        (
            PYTHON,
            "requests.get('https://x/?token=CodeQuery7&a=1')",
            "CodeQuery7",
        ),
        // A `_KEY` holding a lower-case name is a key's name; any other value is a key.
        (
            RUST,
            "const SIGNING_KEY: &str = \"k3yCodeLit8\";",
            "k3yCodeLit8",
        ),
        (PYTHON, "API_KEY = 'abcdefcodelit'", "abcdefcodelit"),
        (
            PYTHON,
            "SECRET_KEY = 'django_insecure_codelit'",
            "django_insecure_codelit",
        ),
    ] {
        let r = redact_as(input, kind);
        assert!(!r.text.contains(secret), "{input:?} -> {:?}", r.text);
        assert!(r.count >= 1);
    }
}

#[test]
fn config_values_are_literals() {
    for (input, secret) in [
        ("PASSWORD=password_value", "password_value"),
        ("token = data.token", "data.token"),
        ("api_key: getKey()", "getKey()"),
    ] {
        let r = redact_as(input, TextKind::Config);
        assert!(!r.text.contains(secret), "{input:?} -> {:?}", r.text);
    }
}

#[test]
fn redaction_keeps_the_line_count() {
    for (input, _, _) in SECRET_CASES {
        let r = redact(input);
        assert_eq!(
            r.text.lines().count(),
            input.lines().count(),
            "{input:?} -> {:?}",
            r.text
        );
    }
}

/// Texts made to match each gated pattern, in the forms its gate must still see.
pub(super) const GATE_CASES: &[&str] = &[
    "key AKIAABCDEFGHIJKLMNOP here",
    "xapp-1-ABCDEFGHIJKL and t1.abcdefghijklmnopqrstuvwxyz.abcdefghijklmnopqrstuvwxyzabcdefghijklmnop",
    "<db_PASSWORD>Zq9!x</db_password>",
    "ПАРОЛЬ от базы: Qw3rty",
    "PaſſWORD for root = x",
    "secret_key_base:\n    \"abc\"",
    "  - \"api-token\" = |+\r\nvalue",
    "the Tokens were: abc",
    "секреты это x",
];

/// Every rule that runs only when its gate opens, with the gate (as in `redact_pass`).
pub(super) fn gated_rules() -> Vec<(&'static str, &'static LazyLock<Regex>, Gate)> {
    vec![
        ("PEM_BEGIN", &PEM_BEGIN, Gate::Contains("-----BEGIN")),
        (
            "PUTTY_PRIVATE",
            &PUTTY_PRIVATE,
            Gate::Contains("Private-Lines:"),
        ),
        ("PUTTY_MAC", &PUTTY_MAC, Gate::Contains("Private-")),
        ("URL_USERINFO", &URL_USERINFO, Gate::Contains("://")),
        (
            "TOKEN_SHAPES",
            &TOKEN_SHAPES,
            Gate::Regex(&TOKEN_SHAPES_GATE),
        ),
        ("TELEGRAM", &TELEGRAM, Gate::Contains(":AA")),
        (
            "SLACK_WEBHOOK",
            &SLACK_WEBHOOK,
            Gate::Contains("hooks.slack.com/services/"),
        ),
        ("XML_ELEMENT", &XML_ELEMENT, Gate::Contains("</")),
        ("PHRASE", &PHRASE, Gate::Regex(&PHRASE_GATE)),
        ("KEY_ALONE", &KEY_ALONE, Gate::Regex(&KEY_ALONE_GATE)),
        (
            "PROSE_SECRET",
            &prose::PROSE_SECRET,
            Gate::Regex(&PROSE_SECRET_GATE),
        ),
    ]
}

#[test]
fn a_text_a_gated_pattern_matches_always_opens_its_gate() {
    let texts: Vec<&str> = SECRET_CASES
        .iter()
        .map(|(t, _, _)| *t)
        .chain(KEEP_CASES.iter().copied())
        .chain(GATE_CASES.iter().copied())
        .collect();
    for (name, pattern, gate) in gated_rules() {
        let opens = |t: &str| gate.opens(t);
        let matched: Vec<&str> = texts
            .iter()
            .copied()
            .filter(|t| pattern.is_match(t))
            .collect();
        assert!(!matched.is_empty(), "{name}: no text to check the gate on");
        for t in matched {
            assert!(opens(t), "{name} matches {t:?} but its gate stays shut");
        }
    }
}
