//! Secrets an attacker (or a careless user) plants wherever text enters `knowledge`: transcript
//! events of both agents (user text, tool inputs, tool outputs), code, config and `.env` files,
//! skills and agent definitions, dispatched task text. Each test reads as an attack survived:
//! the value never comes back in clear from search, get-episode, a code read or a dispatch, and
//! no file of the data dir (stores, outbox, logs) holds it. The labelled measurement prints
//! recall on planted secrets and false positives on code with secret-like names.
//!
//! - `sentences`: secrets said in a sentence, whatever words come before the secret word.
//! - `metadata`: secrets planted in session metadata (working directory, branch, version, agent
//!   and tool names), in a fresh store and in one an older build wrote.

#[path = "../common/mod.rs"]
mod common;
mod metadata;
mod sentences;

use std::path::{Path, PathBuf};

use knowledge::contract::dispatch::{DispatchRequest, Target, Task};
use knowledge::contract::SearchRequest;
use knowledge::engine::{Engine, EngineConfig};
use knowledge::indexing::{index_all, IndexPlan};
use knowledge::sources::code::chunk::{file_text_kind, redact_lines};
use knowledge::text::redact::{redact_as, TextKind};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use serde_json::{json, Value};

const LABELLED: &str = include_str!("../fixtures/secrets_labelled.json");

fn kind_of(file: &str, text: &str) -> TextKind {
    if file.is_empty() {
        TextKind::Prose
    } else {
        file_text_kind(file, text)
    }
}

fn str_field<'a>(v: &'a Value, k: &str) -> &'a str {
    v[k].as_str()
        .unwrap_or_else(|| panic!("fixture entry without {k}: {v}"))
}

/// Every regular file under `dir`, recursively, sorted.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.is_file() {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// A planted secret inside this project's `src/`: a whole file of them, or the lines holding one.
struct SrcPlanted {
    path: String,
    secret: Option<String>,
}

/// Lines of this project's `src/` that redaction changes and no label explains, as
/// `path:line: before → after`, and how many files were scanned.
fn unexplained_redactions_in_src(planted: &[SrcPlanted]) -> (Vec<String>, usize) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut changed = Vec::new();
    let mut scanned = 0;
    for path in files_under(&root.join("src")) {
        let rel = path
            .strip_prefix(root)
            .map(|p| p.to_string_lossy().to_string())
            .unwrap_or_default();
        if planted.iter().any(|p| p.path == rel && p.secret.is_none()) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        scanned += 1;
        let (lines, _) = redact_lines(&text, file_text_kind(&rel, &text));
        for (i, (before, after)) in text.lines().zip(&lines).enumerate() {
            let labelled = planted
                .iter()
                .any(|p| p.path == rel && p.secret.as_deref().is_some_and(|s| before.contains(s)));
            if before != after && !labelled {
                changed.push(format!("{rel}:{}: {before}  →  {after}", i + 1));
            }
        }
    }
    (changed, scanned)
}

#[test]
fn every_planted_secret_is_found_and_secret_named_code_stays_readable() {
    let fx: Value = serde_json::from_str(LABELLED).expect("fixture is JSON");
    let planted = fx["planted"].as_array().expect("planted");
    let negatives = fx["not_secrets"].as_array().expect("not_secrets");
    let src_planted: Vec<SrcPlanted> = fx["src_planted"]
        .as_array()
        .expect("src_planted")
        .iter()
        .map(|p| SrcPlanted {
            path: str_field(p, "path").to_string(),
            secret: p["secret"].as_str().map(str::to_string),
        })
        .collect();

    let mut missed = Vec::new();
    for p in planted {
        let (file, text, secret) = (
            str_field(p, "file"),
            str_field(p, "text"),
            str_field(p, "secret"),
        );
        let out = redact_as(text, kind_of(file, text)).text;
        if out.contains(secret) {
            missed.push(format!("{} in {file:?}: {out:?}", str_field(p, "shape")));
        }
    }
    let mut kept_wrongly = Vec::new();
    for n in negatives {
        let (file, text) = (str_field(n, "file"), str_field(n, "text"));
        let out = redact_as(text, kind_of(file, text)).text;
        if out != text {
            kept_wrongly.push(format!("{file:?}: {out:?}"));
        }
    }
    let (src_changed, scanned) = unexplained_redactions_in_src(&src_planted);

    let found = planted.len() - missed.len();
    eprintln!(
        "recall: {found}/{} planted secrets redacted ({:.1} %)",
        planted.len(),
        100.0 * found as f64 / planted.len() as f64
    );
    eprintln!(
        "false positives: {}/{} labelled code/config/prose texts changed; {} unlabelled lines \
         changed in {scanned} files of this project's src/ ({} labelled planted-secret sites)",
        kept_wrongly.len(),
        negatives.len(),
        src_changed.len(),
        src_planted.len()
    );
    assert!(
        missed.is_empty(),
        "secrets left in clear:\n{}",
        missed.join("\n")
    );
    assert!(
        kept_wrongly.is_empty(),
        "non-secrets redacted:\n{}",
        kept_wrongly.join("\n")
    );
    assert!(
        src_changed.is_empty(),
        "false positives in src/:\n{}",
        src_changed.join("\n")
    );
}

/// The shapes a secret takes in prose, transcripts, tool input and output, skills and tasks.
const PROSE_SHAPES: &[&str] = &[
    "password=@V@",
    "DATABASE_PASSWORD=@V@",
    "api_key: @V@",
    "curl 'https://api.example/v1?api_key=@V@&page=2'",
    "psql postgres://app:@U@@db.internal/app",
    "machine git.example login bob password @V@",
    "Driver={x};Server=db;Uid=sa;Pwd=@V@;Database=app",
    "AccountName=acct;AccountKey=@V@;EndpointSuffix=core.windows.net",
    "{\"client_secret\": \"@V@\", \"user\": \"bob\"}",
    "password: |\n  @V@\nnext: 1",
    "deploy --password @V@ --verbose",
    "<password>@V@</password>",
    "export DB_PASSWORD='@V@'",
    "PuTTY-User-Key-File-3: ssh-ed25519\nPrivate-Lines: 1\n@C@\nPrivate-MAC: 0a1b2c3d4e5f",
    "the password is @V@ for prod",
    "password @V@ ok",
    "пароль это @V@ от базы",
    "the secret password is @V@ for prod",
    "my github token password is @V@",
    "the db token: password @V@ ok",
    "I set the api key to @V@ yesterday",
    "ключ API от боевой базы — @V@",
];

/// Prefixes and suffixes that make a value look like a placeholder, a variable or a token end.
const PREFIXES: &[&str] = &["", "$", "My", "Passw0rd", "changeme", "xx", "Tr0ub4dor&"];
const SUFFIXES: &[&str] = &["", "!q9", "&3q", ";x", "2024q1", "==", "."];

/// One planted secret: the value and the opaque core the search index would keep of it.
#[derive(Debug, Clone)]
struct Plant {
    value: String,
    core: String,
}

/// Render a shape with a value; URL userinfo and PuTTY bodies take only URL-safe or base64
/// characters, as a real file would hold them.
fn render(shape: &str, p: &Plant) -> String {
    let url_safe: String = p.value.chars().filter(|c| c.is_alphanumeric()).collect();
    shape
        .replace("@V@", &p.value)
        .replace("@U@", &url_safe)
        .replace("@C@", &p.core)
}

/// The places text enters, in order; each gets every shape.
const PLACES: &[&str] = &[
    "claude user",
    "claude tool input",
    "claude tool output",
    "codex user",
    "codex tool input",
    "codex tool output",
    "skill description",
    "skill body",
    "agent description",
    "agent body",
    "task text",
    "task acceptance",
];

struct World {
    _tmp: tempfile::TempDir,
    data: PathBuf,
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
    std::fs::write(path, text).expect("write");
}

fn jsonl(lines: &[Value]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// A world whose every entry point holds the texts of `texts[place]`, plus code files.
fn build_world(texts: &[String], code: &[(String, String)]) -> World {
    let tmp = tempfile::tempdir().expect("tmp");
    let root = tmp.path().join("world");
    let repo = root.join("repos/app");
    let cwd = repo.to_string_lossy().to_string();
    let t = |i: usize| texts[i].as_str();
    let sid = "5d6e7f80-1111-4222-8333-944455556666";
    let ts = "2026-11-01T10:00:00.000Z";
    let claude = [
        json!({"type":"user","sessionId":sid,"uuid":"a1","parentUuid":null,"cwd":cwd,
               "timestamp":ts,"message":{"role":"user","content":t(0)}}),
        json!({"type":"assistant","sessionId":sid,"uuid":"a2","parentUuid":"a1","cwd":cwd,
               "timestamp":ts,"message":{"role":"assistant","content":[
                   {"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":t(1)}}]}}),
        json!({"type":"user","sessionId":sid,"uuid":"a3","parentUuid":"a2","cwd":cwd,
               "timestamp":ts,"message":{"role":"user","content":[
                   {"type":"tool_result","tool_use_id":"toolu_1","content":t(2)}]}}),
    ];
    write(
        &root.join(format!("claude/projects/-w-app/{sid}.jsonl")),
        &jsonl(&claude),
    );
    let cid = "01a1e941-9218-794f-90a0-edae60faa5a6";
    let codex = [
        json!({"timestamp":ts,"type":"session_meta","payload":{"id":cid,"timestamp":ts,"cwd":cwd}}),
        json!({"timestamp":ts,"type":"event_msg","payload":{"type":"user_message","message":t(3)}}),
        json!({"timestamp":ts,"type":"response_item","payload":{"type":"function_call",
               "name":"exec_command","arguments":json!({"cmd":t(4)}).to_string(),"call_id":"c1"}}),
        json!({"timestamp":ts,"type":"response_item","payload":{"type":"function_call_output",
               "call_id":"c1","output":t(5)}}),
    ];
    write(
        &root.join(format!(
            "codex/sessions/2026/11/01/rollout-2026-11-01T10-00-00-{cid}.jsonl"
        )),
        &jsonl(&codex),
    );
    let one_line = |s: &str| s.replace('\n', " ");
    write(
        &root.join("skills/db-access/SKILL.md"),
        &format!(
            "---\nname: db-access\ndescription: \"{}\"\n---\n\n# DB access\n\n{}\n",
            one_line(t(6)).replace('"', "'"),
            t(7)
        ),
    );
    write(
        &root.join("agents/db-fixer.md"),
        &format!(
            "---\nname: db-fixer\ndescription: \"{}\"\ntools: Read, Bash\n---\n\n{}\n",
            one_line(t(8)).replace('"', "'"),
            t(9)
        ),
    );
    for (path, text) in code {
        write(&repo.join(path), text);
    }
    let data = tmp.path().join("data");
    let plan = IndexPlan {
        sessions: vec![root.join("claude"), root.join("codex")],
        code: vec![repo],
        skills: vec![root.join("skills")],
        agents: vec![root.join("agents")],
        rebuild: false,
    };
    index_all(&data, &plan, &mut |_| {}).expect("index the planted world");
    World { _tmp: tmp, data }
}

/// Code files holding `plants` as literals, config values and shell tokens.
fn code_files(plants: &[Plant]) -> Vec<(String, String)> {
    let v = |i: usize| plants[i % plants.len()].value.as_str();
    vec![
        (".env".into(), format!("DATABASE_PASSWORD={}\nAPI_KEY={}\n", v(0), v(1))),
        (
            "config.yaml".into(),
            format!("db:\n  password: {}\n  token: '{}'\n", v(2), v(3)),
        ),
        (
            "settings.ini".into(),
            format!("[db]\npassword = {}\n", v(4)),
        ),
        (
            "src/main.rs".into(),
            format!(
                "fn main() {{\n    let password = \"{}\";\n    let dsn = \"Server=h;Password={};Database=d\";\n}}\n",
                v(5),
                v(6)
            ),
        ),
        (
            "app.py".into(),
            format!("API_KEY = '{}'\n# old password: {}\n", v(7), v(8)),
        ),
        (
            "deploy.sh".into(),
            format!("#!/bin/sh\nexport DB_PASSWORD={}\n", v(9)),
        ),
    ]
}

/// Fail when any of `plants` appears in `haystack` (its value, or its core as the index keeps it).
fn assert_clean(what: &str, haystack: &[u8], plants: &[Plant]) {
    let find = |needle: &str| {
        let n = needle.as_bytes();
        haystack.windows(n.len()).position(|w| w == n)
    };
    for p in plants {
        if let Some(at) = find(&p.value).or_else(|| find(&p.core)) {
            let around = &haystack[at.saturating_sub(80)..(at + 80).min(haystack.len())];
            panic!(
                "{what} holds the planted secret {:?}: …{}…",
                p.value,
                String::from_utf8_lossy(around)
            );
        }
    }
}

fn plant_strategy() -> impl Strategy<Value = Vec<Plant>> {
    let count = PLACES.len() * PROSE_SHAPES.len();
    (
        "[a-z][0-9][a-z][0-9][a-z][0-9][a-z]",
        prop::collection::vec((0..PREFIXES.len(), 0..SUFFIXES.len()), count),
    )
        .prop_map(|(seed, affixes)| {
            affixes
                .into_iter()
                .enumerate()
                .map(|(i, (p, s))| {
                    // `zq` + letters and digits alternating: one opaque search term.
                    let core = format!("zq{seed}{i:03}x");
                    Plant {
                        value: format!("{}{core}{}", PREFIXES[p], SUFFIXES[s]),
                        core,
                    }
                })
                .collect()
        })
}

/// Plant `plants` in every shape in every entry point, then search, read and dispatch: nothing
/// answers with a value in clear and no file of the data dir holds one.
fn assert_planted_secrets_stay_hidden(plants: &[Plant]) {
    let n = PROSE_SHAPES.len();
    let texts: Vec<String> = (0..PLACES.len())
        .map(|place| {
            (0..n)
                .map(|s| render(PROSE_SHAPES[s], &plants[place * n + s]))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect();
    let code = code_files(plants);
    let world = build_world(&texts, &code);
    let engine = Engine::open(EngineConfig::new(&world.data));

    // Search for the keys and for the values themselves.
    let mut queries: Vec<String> = vec![
        "password".into(),
        "api_key".into(),
        "DATABASE_PASSWORD".into(),
        "AccountKey".into(),
        "client_secret".into(),
        "db access".into(),
    ];
    queries.extend(plants.iter().step_by(17).map(|p| p.value.clone()));
    let mut sessions = Vec::new();
    for q in &queries {
        let resp = engine.search(&SearchRequest::new(q.clone()));
        let mut out = serde_json::to_value(&resp).expect("json");
        // The echo of what the person typed is theirs (DECISIONS: the query echo).
        out["query"] = Value::Null;
        let out = serde_json::to_vec(&out).expect("json");
        assert_clean(&format!("search {q:?}"), &out, plants);
        for it in &resp.lanes.episodes.items {
            sessions.push(it.session_id.clone());
        }
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
                assert_clean(&format!("get-episode {s} {seq}"), &out, plants);
            }
        }
    }
    let store =
        knowledge::sources::code::CodeStore::open(&engine.config.code_db()).expect("code store");
    for (path, _) in &code {
        let read = store.read_code(path, 1, None).expect("read");
        assert_clean(
            &format!("code read {path}"),
            read.lines.join("\n").as_bytes(),
            plants,
        );
    }

    let mut req = DispatchRequest::dry_run(Task {
        text: format!("Fix the db access.\n{}", texts[10]),
        acceptance: vec![texts[11].clone()],
        constraints: vec![texts[11].clone()],
    });
    req.dry_run = false;
    // What is checked is the package, not who gets it: a search on a task made of secrets that
    // no store holds in clear may rightly choose no one (seed 98c6de12…), so the world's first
    // actor is named.
    let actor = knowledge::sources::agent_knowledge::AgentKnowledgeStore::open(
        &engine.config.knowledge_db(),
    )
    .and_then(|s| s.list_actors(1))
    .expect("the world's actors")
    .into_iter()
    .next()
    .expect("an actor");
    req.target = Target::Actor(actor.actor_id);
    let resp = engine.dispatch(&req).expect("dispatch commits");
    assert!(
        resp.assignment.is_some(),
        "the package was committed: {:?}",
        resp.errors
    );
    assert_clean(
        "dispatch response",
        &serde_json::to_vec(&resp).expect("json"),
        plants,
    );

    drop(engine);
    let files = files_under(&world.data);
    assert!(files
        .iter()
        .any(|f| f.starts_with(world.data.join("outbox"))));
    for f in files {
        let bytes = std::fs::read(&f).expect("read store file");
        assert_clean(&f.display().to_string(), &bytes, plants);
    }
}

#[test]
fn the_secrets_of_issue_13_reach_no_store_and_no_answer() {
    const ISSUE: &[&str] = &[
        "MyPassword2024q1",
        "Passw0rd!q9",
        "DotEnvPassword44",
        "QueryApiKeyValue55",
        "YamlPasswordSecret33",
        "Tr0ub4dor&3q",
        "$ecretDollar1",
    ];
    let plants: Vec<Plant> = (0..PLACES.len() * PROSE_SHAPES.len())
        .map(|i| {
            let value = ISSUE[i % ISSUE.len()].to_string();
            // The longest letter/digit run, as the search index would keep it.
            let core = value
                .split(|c: char| !c.is_alphanumeric())
                .max_by_key(|w| w.len())
                .unwrap_or_default()
                .to_lowercase();
            Plant { value, core }
        })
        .collect();
    assert_planted_secrets_stay_hidden(&plants);
}

proptest! {
    // The seeds stay beside this file (proptest would put those of a `main.rs` elsewhere).
    #![proptest_config(ProptestConfig {
        cases: 4,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "tests/hardening_secrets/main.proptest-regressions",
        ))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn planted_secrets_never_leave_in_clear_from_any_entry_point(plants in plant_strategy()) {
        assert_planted_secrets_stay_hidden(&plants);
    }
}

/// Every row of every team table once `data` is pushed to a new database of the throwaway
/// PostgreSQL cluster, as text (`None`: PostgreSQL is not installed, the check is skipped).
fn pushed_team_tables(data: &Path, tag: &str) -> Option<String> {
    use knowledge::team::push::{push, PushPlan};
    let cluster = common::pg::cluster()?;
    let db = cluster.database(tag);
    let owner = knowledge::team::TeamUrl::parse(&cluster.url("admin", &db)).expect("url");
    let plan = PushPlan {
        machine: "laptop-secrets".to_string(),
        person: Some("tester".into()),
    };
    push(data, &owner, &plan, &mut |_| {}).expect("push the world");
    let mut c =
        postgres::Client::connect(&cluster.url("admin", &db), postgres::NoTls).expect("connect");
    let tables: Vec<String> = c
        .query(
            "SELECT tablename::text FROM pg_tables WHERE tablename LIKE 'kn\\_%'
             ORDER BY tablename",
            &[],
        )
        .expect("tables")
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert!(tables.iter().any(|t| t == "kn_session"), "{tables:?}");
    let mut all = String::new();
    for t in tables {
        let sql = format!("SELECT coalesce(string_agg(t::text, E'\\n'), '') FROM {t} t");
        let rows: String = c.query_one(&sql, &[]).expect(&sql).get(0);
        all.push_str(&format!("{t}:\n{rows}\n"));
    }
    Some(all)
}

/// What must not be found of a planted value: the value, and each run of letters and digits
/// of 6 or more in it, lower-cased, as the search index keeps its terms.
fn needles(value: &str) -> Vec<String> {
    let mut out = vec![value.to_string()];
    out.extend(
        value
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.chars().count() >= 6)
            .map(str::to_lowercase),
    );
    out
}

/// Fail when any needle of `values` is in `haystack`.
fn assert_none_of(what: &str, haystack: &[u8], values: &[&str]) {
    for v in values {
        for n in needles(v) {
            if let Some(at) = haystack.windows(n.len()).position(|w| w == n.as_bytes()) {
                let around = &haystack[at.saturating_sub(80)..(at + 80).min(haystack.len())];
                panic!(
                    "{what} holds {v:?} ({n:?}): …{}…",
                    String::from_utf8_lossy(around)
                );
            }
        }
    }
}
