//! Secrets said in a sentence rather than assigned: typed into a dispatched task through the
//! binary, written in every place a transcript, a skill or an agent file holds text, they come
//! back in clear from no search, no `get-episode`, no dispatch, no file of the data dir and no
//! table of the team index.

use super::*;

/// Issue 22, item 11: a password said in a sentence, typed into a dispatched task (through the
/// binary) and written in a transcript, comes back in clear from nothing.
#[test]
fn passwords_said_in_prose_leave_no_dispatch_and_no_store_in_clear() {
    const CANARIES: [&str; 3] = ["Hunter2CanaryA!", "Hunter2CanaryB!", "Kv9tRpl2Lm"];
    let texts: Vec<String> = (0..PLACES.len())
        .map(|_| {
            "the password is Hunter2CanaryA! for prod\npassword Hunter2CanaryB! ok\n\
             пароль это Kv9tRpl2Lm от базы"
                .to_string()
        })
        .collect();
    let world = build_world(&texts, &[]);
    let out = common::cli::bin()
        .arg("--data-dir")
        .arg(&world.data)
        .args(["dispatch", "--task", texts[10].as_str(), "--commit"])
        .output()
        .expect("run knowledge dispatch");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let doc: Value = serde_json::from_str(&stdout).expect("a dispatch response");
    // The goal is built from the task's text, with the values redacted (stdout as a whole —
    // goal, task, the handoff's prompt — is checked below).
    assert!(
        doc["context_pack"]["goal"]
            .as_str()
            .is_some_and(|g| g.contains("[REDACTED]")),
        "{doc}"
    );
    let search = common::cli::bin()
        .arg("--data-dir")
        .arg(&world.data)
        .args(["search", "-q", "password for prod"])
        .output()
        .expect("run knowledge search");
    let found = String::from_utf8_lossy(&search.stdout);
    assert!(found.contains("REDACTED"), "the event is found: {found}");
    for c in CANARIES {
        assert!(!stdout.contains(c), "dispatch echoed {c}: {stdout}");
        assert!(!found.contains(c), "search returned {c}: {found}");
    }
    for f in files_under(&world.data) {
        let bytes = std::fs::read(&f).expect("read a data dir file");
        for c in CANARIES {
            assert!(
                !bytes.windows(c.len()).any(|w| w == c.as_bytes()),
                "{} holds {c}",
                f.display()
            );
        }
    }
}

/// Issue 36, item 5: the value after a secret word that other words come before (another
/// secret word among them), that a setter gives (`set the api key to X`), or that a secret word
/// names after a key (`token: password X`, which dispatch's task text showed as `token:
/// [REDACTED] X`). `{}` is where each value goes.
const SAID: &[(&str, &str)] = &[
    ("the secret password is {} for prod", "Qz7-AfterSecretWord!"),
    ("my github token password is {}", "Qz7-AfterTokenWord!"),
    ("the wifi password is {}.", "Qz7-WifiPassword!"),
    (
        "Fix the login. token: password {} then restart",
        "hunter7valueword",
    ),
    ("the admin password is {}, keep it", "qwerty4242admin"),
    ("I set the api key to {} yesterday", "Qz7-SetterApiKey!"),
    ("ключ API от боевой базы — {}", "Qz7-KlyuchRusskiy!"),
    ("пароль от почты теперь {}", "qwerty4242pochta"),
    ("use the deploy token {} for now", "Qz7-UsedDeployToken"),
];

#[test]
fn secrets_said_after_other_words_reach_no_answer_store_or_team_table() {
    let said: Vec<String> = SAID.iter().map(|(s, v)| s.replace("{}", v)).collect();
    let values: Vec<&str> = SAID.iter().map(|(_, v)| *v).collect();
    let text = said.join("\n");
    let texts: Vec<String> = PLACES.iter().map(|_| text.clone()).collect();
    let world = build_world(&texts, &[]);

    let run = |args: &[&str]| {
        let out = common::cli::bin()
            .arg("--data-dir")
            .arg(&world.data)
            .args(args)
            .output()
            .expect("run knowledge");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {out:?}");
        out.stdout
    };
    let dispatched = run(&["dispatch", "--task", &text, "--commit"]);
    assert_none_of("dispatch", &dispatched, &values);
    let doc: Value = serde_json::from_slice(&dispatched).expect("a dispatch response");
    let goal = doc["context_pack"]["goal"].as_str().unwrap_or_default();
    assert!(goal.contains("token: password [REDACTED]"), "{goal}");

    let engine = Engine::open(EngineConfig::new(&world.data));
    let mut sessions = Vec::new();
    for q in [
        "secret password",
        "github token password",
        "api key",
        "пароль от почты",
    ] {
        let found = run(&["search", "-q", q]);
        assert!(
            String::from_utf8_lossy(&found).contains("REDACTED"),
            "{q:?} finds a redacted event"
        );
        assert_none_of(&format!("search {q:?}"), &found, &values);
        let resp = engine.search(&SearchRequest::new(q.to_string()));
        sessions.extend(
            resp.lanes
                .episodes
                .items
                .iter()
                .map(|i| i.session_id.clone()),
        );
    }
    sessions.sort();
    sessions.dedup();
    assert!(
        sessions.len() >= 2,
        "both transcripts are found: {sessions:?}"
    );
    for s in &sessions {
        for seq in 0..8 {
            if let Ok(ep) = engine.get_episode(s, seq, 8) {
                let out = serde_json::to_vec(&ep).expect("json");
                assert_none_of(&format!("get-episode {s} {seq}"), &out, &values);
            }
        }
    }
    drop(engine);
    for f in files_under(&world.data) {
        let bytes = std::fs::read(&f).expect("read a data dir file");
        assert_none_of(&f.display().to_string(), &bytes, &values);
    }
    if let Some(team) = pushed_team_tables(&world.data, "saidsecrets") {
        assert_none_of("the team tables", team.as_bytes(), &values);
    }
}

/// Issue 36, fourth hostile pass, item 4: a secret said in a sentence in a code comment or a
/// string literal (code, shell, YAML) comes back in clear from no code read, no search and no
/// file of the data dir; the code around secret words keeps every word.
#[test]
fn secrets_said_in_code_comments_and_literals_reach_no_store() {
    const SAID_IN_CODE: &[(&str, &str)] = &[
        ("app.py", "# the admin password is Cm7vQ2mLp7Zt\nport = 5432\n"),
        (
            "src/lib.rs",
            "// api token: Cl6vQ2mLp7Zt\npub fn f() -> &'static str {\n    \"the password is Cs5vQ2mLp7Zt\"\n}\n",
        ),
        ("web/app.js", "const hint = 'use the deploy token Cj4vQ2mLp7Zt for now';\n"),
        ("deploy.sh", "#!/bin/sh\n# пароль от базы теперь Cb3vQ2mLp7Zt\nrun\n"),
        ("ci.yaml", "# the secret is Cy2vQ2mLp7Zt\nsteps: []\n"),
    ];
    const PLAIN: &str = "pub struct Login {\n    password: String,\n}\n\
        pub fn next(token: &str) -> String {\n    let key = next_token(token);\n    key\n}\n";
    let values = [
        "Cm7vQ2mLp7Zt",
        "Cl6vQ2mLp7Zt",
        "Cs5vQ2mLp7Zt",
        "Cj4vQ2mLp7Zt",
        "Cb3vQ2mLp7Zt",
        "Cy2vQ2mLp7Zt",
    ];
    let mut code: Vec<(String, String)> = SAID_IN_CODE
        .iter()
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect();
    code.push(("src/login.rs".into(), PLAIN.into()));
    let texts: Vec<String> = PLACES
        .iter()
        .map(|_| "fix the db access".to_string())
        .collect();
    let world = build_world(&texts, &code);
    let engine = Engine::open(EngineConfig::new(&world.data));
    let store =
        knowledge::sources::code::CodeStore::open(&engine.config.code_db()).expect("code store");
    for (path, _) in SAID_IN_CODE {
        let read = store.read_code(path, 1, None).expect("read");
        let text = read.lines.join("\n");
        assert!(text.contains("[REDACTED]"), "{path}: {text}");
        assert_none_of(&format!("code read {path}"), text.as_bytes(), &values);
    }
    let read = store.read_code("src/login.rs", 1, None).expect("read");
    assert_eq!(
        read.lines.join("\n") + "\n",
        PLAIN,
        "ordinary code keeps its words"
    );
    for q in [
        "admin password",
        "api token",
        "deploy token",
        "пароль от базы",
        "secret",
    ] {
        let resp = engine.search(&SearchRequest::new(q.to_string()));
        let mut out = serde_json::to_value(&resp).expect("json");
        out["query"] = Value::Null;
        let out = serde_json::to_vec(&out).expect("json");
        assert_none_of(&format!("search {q:?}"), &out, &values);
    }
    drop(engine);
    for f in files_under(&world.data) {
        let bytes = std::fs::read(&f).expect("read a data dir file");
        assert_none_of(&f.display().to_string(), &bytes, &values);
    }
}
