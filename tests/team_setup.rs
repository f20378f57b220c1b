//! docs/TEAM.md walked as written on a fresh cluster (issue 36, item 9): the setup's shell lines,
//! the roles' SQL as the owner, the owner's first push, a laptop's push and the lead's search are
//! each read from the page itself and run, so the page and the product cannot drift apart again
//! (the first push used to need `CREATEROLE` on the owner, which the page never said). Beside
//! it, what the first push says when the owner may not create the group roles.
//!
//! Each test starts a cluster of its own: roles are cluster-wide, and the page's setup must meet
//! a cluster where no other test made the group roles already.

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Output};

use common::pg::Cluster;
use common::team_db::{count, has_schema, push_as};

const PAGE: &str = include_str!("../docs/TEAM.md");

/// A cluster of this test's own (`None` where PostgreSQL is not installed).
fn own_cluster() -> Option<Cluster> {
    if !common::pg::installed() {
        return None;
    }
    Some(Cluster::start_custom(None, |_| Ok(String::new())).expect("a PostgreSQL test cluster"))
}

/// The page's level-2 section whose heading starts with `title`.
fn section(title: &str) -> &'static str {
    let start = PAGE
        .find(&format!("\n## {title}"))
        .unwrap_or_else(|| panic!("docs/TEAM.md has no section {title:?}"));
    let body = &PAGE[start + 1..];
    let end = body[3..].find("\n## ").map_or(body.len(), |e| e + 3);
    &body[..end]
}

/// The fenced blocks of `lang` in `text`, in order.
fn blocks<'a>(text: &'a str, lang: &str) -> Vec<&'a str> {
    let open = format!("```{lang}\n");
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(&open) {
        let body = &rest[i + open.len()..];
        let end = body.find("```").expect("a closed block");
        out.push(&body[..end]);
        rest = &body[end + 3..];
    }
    out
}

/// A shell line's words as sh reads the page's lines: single quotes literal, double quotes
/// expanding `$NAME`, `#` starting a comment. Anything else of sh (pipes, `;`, redirections)
/// would be run differently here, so it fails the test instead.
fn words(line: &str, vars: &HashMap<String, String>) -> Vec<String> {
    let (mut out, mut cur, mut has) = (Vec::new(), String::new(), false);
    let mut quote: Option<char> = None;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, c) if c.is_whitespace() => {
                if has {
                    out.push(std::mem::take(&mut cur));
                    has = false;
                }
            }
            (None, '#') if !has => break,
            (None, '\'' | '"') => {
                quote = Some(c);
                has = true;
            }
            (Some(q), c) if c == q => quote = None,
            (Some('\''), c) => cur.push(c),
            (_, '$') => {
                let mut name = String::new();
                while let Some(n) = chars.next_if(|n| n.is_ascii_alphanumeric() || *n == '_') {
                    name.push(n);
                }
                let value = vars
                    .get(&name)
                    .unwrap_or_else(|| panic!("${name} in {line:?} is not set by the page"));
                cur.push_str(value);
                has = true;
            }
            (q, c) => {
                assert!(
                    q.is_some() || !"|&;<>`\\()".contains(c),
                    "{line:?}: sh syntax this test does not run"
                );
                cur.push(c);
                has = true;
            }
        }
    }
    assert!(quote.is_none(), "{line:?}: an open quote");
    if has {
        out.push(cur);
    }
    out
}

/// The page's URL `postgresql://USER:…@HOST/DB?…` as the test cluster's: the same user and
/// database over its unix socket. The cluster trusts its socket (no password), TLS has its own
/// tests (tests/team_tls.rs), and a unix socket is never encrypted, so only the user and the
/// database are the page's to check here.
fn on_cluster(c: &Cluster, url: &str) -> String {
    let rest = url
        .strip_prefix("postgresql://")
        .unwrap_or_else(|| panic!("not a URL of the page's form: {url}"));
    let (creds, rest) = rest.split_once('@').expect("USER@HOST");
    let user = creds.split(':').next().expect("a user");
    let (_host, path) = rest.split_once('/').expect("HOST/DATABASE");
    let db = path.split('?').next().expect("a database");
    c.url(user, db)
}

/// The user of one of the page's URLs.
fn url_user(url: &str) -> String {
    let rest = url.strip_prefix("postgresql://").expect("a URL");
    rest.split(['@', ':']).next().expect("a user").to_string()
}

/// Run one of the page's `knowledge …` lines with `env`, its URLs pointed at the cluster.
fn knowledge(c: &Cluster, line: &[String], env: &[(String, String)]) -> Output {
    assert_eq!(line[0], "knowledge", "{line:?}");
    let args: Vec<String> = line[1..]
        .iter()
        .map(|w| match w.starts_with("postgresql://") {
            true => on_cluster(c, w),
            false => w.clone(),
        })
        .collect();
    let out = Command::new(env!("CARGO_BIN_EXE_knowledge"))
        .args(&args)
        .env_remove("KNOWLEDGE_TEAM_URL")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .expect("run knowledge");
    assert!(
        out.status.success(),
        "TEAM.md's `{}` failed: {}{}",
        line.join(" "),
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    out
}

fn data_dir_env(dir: &Path) -> (String, String) {
    ("KNOWLEDGE_DATA_DIR".to_string(), dir.display().to_string())
}

fn group_roles(c: &Cluster) -> i64 {
    count(
        c,
        "postgres",
        "SELECT count(*) FROM pg_roles WHERE rolname IN ('knowledge_push', 'knowledge_search')",
    )
}

/// Sections 1 to 4 as a new team runs them: the superuser makes the owner and the database, the
/// owner pushes first (creating the schema and the group roles), makes a push role and a search
/// role, a laptop pushes as its role, and the lead searches with hers.
#[test]
fn team_md_works_as_written_on_a_fresh_cluster() {
    let Some(c) = own_cluster() else {
        return;
    };
    let none = HashMap::new();
    // 1. The server: `sudo -u postgres` is the cluster's superuser here; the password prompt is
    // interactive (and the cluster trusts its socket).
    let server = section("1. The server");
    let setup = blocks(server, "sh")
        .into_iter()
        .find(|b| b.contains("createdb"))
        .expect("section 1 creates the database");
    let (mut owner, mut db) = (None, None);
    for line in setup.lines() {
        let mut w = words(line, &none);
        if w.is_empty() {
            continue;
        }
        if w.starts_with(&["sudo".into(), "-u".into(), "postgres".into()]) {
            w.drain(..3);
        }
        w.retain(|a| a != "--pwprompt" && a != "-P");
        let tool = w.remove(0);
        assert!(
            matches!(tool.as_str(), "createuser" | "createdb"),
            "{line:?}: a setup line this test does not know"
        );
        if tool == "createdb" {
            let o = w.iter().position(|a| a == "-O").expect("createdb -O OWNER");
            owner = Some(w[o + 1].clone());
            db = w.last().cloned();
        }
        let out = c.client_tool(&tool).args(&w).output().expect("run");
        assert!(
            out.status.success(),
            "TEAM.md's `{line}` failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let (owner, db) = (owner.expect("an owner"), db.expect("a database"));
    assert_eq!(group_roles(&c), 0, "a fresh cluster has no group roles");

    // The owner's first push, as the page writes it, of the demo world.
    let world = common::world::demo();
    let first = blocks(server, "sh")
        .into_iter()
        .flat_map(str::lines)
        .map(|l| words(l, &none))
        .find(|w| w.get(1).is_some_and(|s| s == "push"))
        .expect("section 1's first push");
    assert!(
        first.iter().any(|w| w.contains(&format!("//{owner}:"))),
        "the first push is the owner's: {first:?}"
    );
    knowledge(&c, &first, &[data_dir_env(&world.data_dir)]);
    assert!(has_schema(&c, &db));

    // 2. Roles, as the owner.
    let roles = section("2. Roles");
    let as_owner = &roles[roles.find("As the owner:").expect("\"As the owner:\"")..];
    let sql = blocks(as_owner, "sql")[0];
    let mut client = postgres::Client::connect(&c.url(&owner, &db), postgres::NoTls)
        .expect("connect as the owner");
    if let Err(e) = client.batch_execute(sql) {
        panic!(
            "TEAM.md's roles SQL as {owner}: {}",
            knowledge::team::describe(&e)
        );
    }

    // 3. A laptop pushes with its role (its `knowledge index` is the demo world's, made once
    // for this test binary: a bare index would read this machine's own agents).
    let laptop = blocks(section("3. Each laptop pushes"), "sh")[0];
    let mut env = vec![data_dir_env(&world.data_dir)];
    let mut pushed = false;
    for line in laptop.lines() {
        let w = words(line, &none);
        match w.first().map(String::as_str) {
            None => {}
            Some("export") => {
                let (k, v) = w[1].split_once('=').expect("export NAME=VALUE");
                env.push((k.to_string(), on_cluster(&c, v)));
            }
            Some("knowledge") if w[1] == "index" => {}
            Some("knowledge") => {
                knowledge(&c, &w, &env);
                pushed = true;
            }
            Some(other) => panic!("{line:?}: {other} is not a line this test knows"),
        }
    }
    assert!(pushed, "section 3 pushes");
    let machine_rows = |m: &str| {
        count(
            &c,
            &db,
            &format!("SELECT count(*) FROM kn_session WHERE machine = '{m}'"),
        )
    };
    assert!(machine_rows("alice-laptop") > 0, "alice's push arrived");
    assert!(machine_rows("seed") > 0, "the owner's push arrived");
    // Section 2's refusal, as the page quotes it: alice's role pushing bob's machine.
    let quoted = "this role may not push machine X: it pushes machine Y";
    assert!(roles.contains(quoted), "section 2 quotes the refusal");
    let refused = Command::new(env!("CARGO_BIN_EXE_knowledge"))
        .args(["push", "--machine", "bob-desktop"])
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .expect("run");
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success()
            && said.contains(
                &quoted
                    .replace('X', "bob-desktop")
                    .replace('Y', "alice-laptop")
            ),
        "{said}"
    );

    // 4. The lead searches with the search role. A data dir with only a config: a debug build
    // on a busy machine needs a longer lane wait than a release build's 250 ms.
    let lead_dir = tempfile::tempdir().expect("lead");
    std::fs::write(
        lead_dir.path().join("config.toml"),
        common::world::GENEROUS_LANES,
    )
    .expect("config");
    let lead = blocks(section("4. The lead searches"), "sh")[0];
    let mut vars = HashMap::new();
    let mut answer = None;
    for line in lead.lines() {
        let w = words(line, &vars);
        match w.first().map(String::as_str) {
            None => {}
            Some(assign) if assign.contains('=') && !assign.starts_with('-') => {
                let (k, v) = assign.split_once('=').expect("NAME=VALUE");
                vars.insert(k.to_string(), v.to_string());
            }
            Some("knowledge") if w.iter().any(|a| a == "search") => {
                answer = Some(knowledge(&c, &w, &[data_dir_env(lead_dir.path())]));
            }
            // The explorer needs a terminal (tests/team_frontends.rs runs it).
            Some("knowledge") => {}
            Some(other) => panic!("{line:?}: {other} is not a line this test knows"),
        }
    }
    // Section 2: the search role has no write privilege at all.
    let role = url_user(&vars["TEAM"]);
    let mut lead_client =
        postgres::Client::connect(&c.url(&role, &db), postgres::NoTls).expect("connect as lead");
    let write = lead_client
        .batch_execute("DELETE FROM kn_session")
        .expect_err("the search role writes nothing");
    assert_eq!(
        write.code(),
        Some(&postgres::error::SqlState::INSUFFICIENT_PRIVILEGE)
    );
    let out = answer.expect("section 4 searches");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a JSON answer");
    let machines: Vec<&str> = doc["lanes"]["episodes"]["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|i| i["session"]["machine"].as_str())
        .collect();
    assert!(
        machines.contains(&"alice-laptop"),
        "the lead finds alice's sessions: {doc:#}"
    );
}

/// An owner without `CREATEROLE` on a cluster without the group roles: the first push says what
/// is missing and both ways out, and creates nothing; once a superuser made the group roles, the
/// same owner's first push creates the schema.
#[test]
fn the_first_push_names_createrole_when_the_owner_may_not_create_the_group_roles() {
    let Some(c) = own_cluster() else {
        return;
    };
    c.sql("postgres", "CREATE ROLE plain_owner LOGIN");
    c.sql("postgres", "CREATE DATABASE plain OWNER plain_owner");
    let url = c.url("plain_owner", "plain");
    let world = common::world::demo();
    let msg = push_as(&world.data_dir, &url, "seed")
        .expect_err("the owner may not create roles")
        .to_string();
    for said in [
        "CREATEROLE",
        "ALTER ROLE plain_owner CREATEROLE",
        "CREATE ROLE knowledge_push NOLOGIN",
        "CREATE ROLE knowledge_search NOLOGIN",
    ] {
        assert!(msg.contains(said), "{said:?} not in: {msg}");
    }
    assert!(!has_schema(&c, "plain"), "nothing was created");

    // The binary says the same, as a failure of the push.
    let out = Command::new(env!("CARGO_BIN_EXE_knowledge"))
        .arg("--data-dir")
        .arg(&world.data_dir)
        .args(["push", "--machine", "seed", "--to", &url])
        .env_remove("KNOWLEDGE_TEAM_URL")
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("ALTER ROLE plain_owner CREATEROLE"),
        "{stderr}"
    );

    // One group role made by a superuser: only the other is named.
    c.sql("postgres", "CREATE ROLE knowledge_push NOLOGIN");
    let msg = push_as(&world.data_dir, &url, "seed")
        .expect_err("knowledge_search is still missing")
        .to_string();
    assert!(
        msg.contains("CREATE ROLE knowledge_search NOLOGIN")
            && !msg.contains("CREATE ROLE knowledge_push"),
        "{msg}"
    );

    // Both made first (the page's other way): the owner's first push needs no CREATEROLE.
    c.sql("postgres", "CREATE ROLE knowledge_search NOLOGIN");
    push_as(&world.data_dir, &url, "seed").expect("the owner's first push");
    assert!(has_schema(&c, "plain"));
    assert_eq!(group_roles(&c), 2);
}

/// `knowledge push` with its arguments wrong (issue 36, the smaller team items): a URL of
/// another kind is named as not PostgreSQL's, whatever parser would have choked on it, and a
/// bad machine name is named by where it came from, not as a URL's fault. Needs no server.
#[test]
fn push_names_a_url_that_is_not_postgresql_and_a_machine_name_by_its_source() {
    let world = common::world::demo();
    let push = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_knowledge"))
            .arg("--data-dir")
            .arg(&world.data_dir)
            .arg("push")
            .args(args)
            .env_remove("KNOWLEDGE_TEAM_URL")
            .output()
            .expect("run");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, said) = push(&["--to", "http://db.internal/team", "--machine", "m"]);
    assert_eq!(code, Some(2), "{said}");
    for part in [
        "not a PostgreSQL URL",
        "postgresql://",
        "postgres://",
        "key=value",
    ] {
        assert!(said.contains(part), "{part:?} not in: {said}");
    }
    assert!(!said.contains("has no '='"), "{said}");

    // Every other kind of text says what it is, and never echoes a password.
    use knowledge::team::{TeamError, UrlError};
    let other: fn(&UrlError) -> bool = |e| matches!(e, UrlError::OtherScheme(_));
    let neither: fn(&UrlError) -> bool = |e| matches!(e, UrlError::Neither);
    let empty: fn(&UrlError) -> bool = |e| matches!(e, UrlError::Empty);
    let case: fn(&UrlError) -> bool = |e| matches!(e, UrlError::SchemeCase(_));
    for (url, says, kind) in [
        ("https://lead:s3cret-pw@db.internal/team", "https://", other),
        ("mysql://lead:s3cret-pw@db.internal/team", "mysql://", other),
        (
            "jdbc:postgresql://db.internal/team",
            "jdbc:postgresql://",
            other,
        ),
        (
            "POSTGRESQL://lead:s3cret-pw@db.internal/team",
            "lower case",
            case,
        ),
        ("lead:s3cret-pw@db.internal/team", "key=value", neither),
        ("postgresql:/db.internal/team", "key=value", neither),
        ("", "empty", empty),
        ("   ", "empty", empty),
    ] {
        let err = knowledge::team::TeamUrl::parse(url).expect_err(url);
        assert!(
            matches!(&err, TeamError::BadUrl(why) if kind(why)),
            "{url:?}: {err}"
        );
        let e = err.to_string();
        assert!(
            e.contains(says) && !e.contains("has no '='") && !e.contains("s3cret-pw"),
            "{url:?}: {e}"
        );
    }
    // The two forms PostgreSQL reads still parse.
    for url in [
        "postgresql://lead@db.internal/team",
        "postgres://lead@db.internal/team",
        "host=db.internal dbname=team user=lead",
        "  host=/run/postgresql dbname=team",
    ] {
        knowledge::team::TeamUrl::parse(url).unwrap_or_else(|e| panic!("{url:?}: {e}"));
    }

    // A machine name is named by its source: the flag, or the config key in its file.
    let closed = "postgresql://u@127.0.0.1:1/db";
    let (code, said) = push(&["--to", closed, "--machine", "a b"]);
    assert_eq!(code, Some(2), "{said}");
    assert!(
        said.contains("--machine") && said.contains("\"a b\""),
        "{said}"
    );
    assert!(!said.contains("team URL"), "{said}");

    let dir = tempfile::tempdir().expect("tmp");
    std::fs::write(
        dir.path().join("config.toml"),
        format!("[team]\nurl = \"{closed}\"\nmachine = \"bad/name\"\n"),
    )
    .expect("config");
    let out = Command::new(env!("CARGO_BIN_EXE_knowledge"))
        .arg("--data-dir")
        .arg(dir.path())
        .arg("push")
        .env_remove("KNOWLEDGE_TEAM_URL")
        .output()
        .expect("run");
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains("[team] machine")
            && said.contains("config.toml")
            && said.contains("bad/name"),
        "{said}"
    );
    assert!(!said.contains("team URL"), "{said}");
}
