//! The team index on a real PostgreSQL (issue 20): a throwaway cluster started by the tests
//! (`common::pg`), `knowledge push` from real data dirs (the indexed demo world, a synthetic
//! world for the crash test) and the team answering through the lane traits. Skipped with a
//! visible message only where the PostgreSQL binaries are absent (failed there with
//! `KNOWLEDGE_REQUIRE_POSTGRES` set, as `.ci/run` sets it).

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::pg::{cluster, Cluster};
use common::team_db::{count, has_schema, kill_push_after, push_as, synthetic};
use knowledge::engine::{Engine, EngineConfig};
use knowledge::team::source::{TeamCode, TeamConn, TeamEpisodes};
use knowledge::team::{TeamError, TeamUrl};

fn local_events(data: &Path) -> i64 {
    let conn =
        knowledge::sources::sqlite::open_ro(&data.join("episodes.sqlite")).expect("episodes");
    conn.query_row("SELECT count(*) FROM events", [], |r| r.get(0))
        .expect("count")
}

/// Roles for one test: a push role per machine and a search role (trust auth: no passwords).
fn roles(c: &Cluster, db: &str, tag: &str, machines: &[&str]) {
    for m in machines {
        let role = format!("{tag}_{}", m.replace('-', "_"));
        c.sql(
            db,
            &format!(
                "CREATE ROLE {role} LOGIN IN ROLE knowledge_push;
                 INSERT INTO kn_pusher VALUES ('{role}', '{m}');"
            ),
        );
    }
    c.sql(
        db,
        &format!("CREATE ROLE {tag}_lead LOGIN IN ROLE knowledge_search;"),
    );
}

#[test]
fn a_first_push_creates_the_schema_and_the_same_sessions_pushed_twice_add_nothing() {
    let Some(c) = cluster() else { return };
    let db = c.database("twice");
    let data = &common::world::demo().data_dir;
    let first = push_as(data, &c.url("admin", &db), "laptop-a").expect("first push");
    assert_eq!(first.schema_before, 0, "the empty database got its schema");
    assert!(first.events_sent > 0 && first.sessions_new > 0, "{first:?}");
    assert_eq!(
        count(c, &db, "SELECT count(*) FROM kn_event"),
        local_events(data)
    );
    let second = push_as(data, &c.url("admin", &db), "laptop-a").expect("second push");
    assert_eq!(second.events_sent, 0, "{second:?}");
    assert!(second.episodes_skipped && second.code_skipped, "{second:?}");
    assert_eq!(
        count(c, &db, "SELECT count(*) FROM kn_event"),
        local_events(data)
    );
    // Even without the store revision, the per-session watermarks send nothing again.
    c.sql(&db, "DELETE FROM kn_store_rev");
    let third = push_as(data, &c.url("admin", &db), "laptop-a").expect("third push");
    assert_eq!(third.events_sent, 0, "{third:?}");
    assert_eq!(third.sessions_unchanged, first.sessions_new, "{third:?}");
}

#[test]
fn a_newer_schema_is_refused_with_a_clear_message() {
    let Some(c) = cluster() else { return };
    let db = c.database("newer");
    let data = &common::world::demo().data_dir;
    push_as(data, &c.url("admin", &db), "m1").expect("push");
    c.sql(&db, "UPDATE kn_schema SET version = 99");
    let err = push_as(data, &c.url("admin", &db), "m1").expect_err("refused");
    assert!(
        matches!(err, TeamError::NewerSchema { found: 99, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("upgrade knowledge"), "{err}");
}

#[test]
fn a_transcript_that_grows_between_pushes_sends_only_its_new_events() {
    let Some(c) = cluster() else { return };
    let db = c.database("grow");
    let world = common::world::fresh_demo();
    let url = c.url("admin", &db);
    push_as(&world.data_dir, &url, "laptop-g").expect("first push");
    // One more prompt in a Claude transcript, then the local index picks it up.
    let file = walk(&world.world.sessions_roots()[0])
        .into_iter()
        .find(|p| {
            p.extension().is_some_and(|e| e == "jsonl") && p.to_string_lossy().contains("claude")
        })
        .expect("a claude transcript");
    let text = std::fs::read_to_string(&file).expect("read");
    let last: serde_json::Value =
        serde_json::from_str(text.lines().last().expect("a line")).expect("json");
    let line = serde_json::json!({
        "parentUuid": last["uuid"], "isSidechain": false, "type": "user",
        "message": {"role": "user", "content": "and now rotate the grafana webhook token"},
        "uuid": "9d1c0b8e-0000-4000-8000-00000000beef", "timestamp": "2026-12-01T10:00:00.000Z",
        "cwd": last["cwd"], "sessionId": last["sessionId"], "version": "2.1.150"
    });
    let mut grown = text.clone();
    if !grown.ends_with('\n') {
        grown.push('\n');
    }
    grown.push_str(&format!("{line}\n"));
    std::fs::write(&file, grown).expect("append");
    common::world::index_world(&world.world, &world.data_dir);
    let before = count(c, &db, "SELECT count(*) FROM kn_event");
    let second = push_as(&world.data_dir, &url, "laptop-g").expect("second push");
    assert_eq!(second.sessions_grown, 1, "{second:?}");
    assert_eq!(
        second.sessions_new + second.sessions_replaced,
        0,
        "{second:?}"
    );
    assert_eq!(
        second.events_sent as i64,
        local_events(&world.data_dir) - before
    );
    assert_eq!(
        count(c, &db, "SELECT count(*) FROM kn_event"),
        local_events(&world.data_dir)
    );
    let found = count(
        c,
        &db,
        "SELECT count(*) FROM kn_event WHERE tsv @@ 'grafana'::tsquery",
    );
    assert!(found >= 1, "the new event is searchable in the team index");
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out.sort();
    out
}

#[test]
fn two_machines_push_concurrently_and_each_writes_only_its_rows() {
    let Some(c) = cluster() else { return };
    let db = c.database("two");
    let data = common::world::demo().data_dir.clone();
    // The owner creates the schema; then each machine pushes with its own role, at once.
    push_as(&data, &c.url("admin", &db), "seed").expect("schema");
    roles(c, &db, "two", &["alpha", "beta"]);
    let threads: Vec<_> = ["alpha", "beta"]
        .into_iter()
        .map(|m| {
            let (url, data) = (c.url(&format!("two_{m}"), &db), data.clone());
            std::thread::spawn(move || push_as(&data, &url, m))
        })
        .collect();
    for t in threads {
        let s = t.join().expect("thread").expect("push");
        assert!(s.events_sent > 0, "{s:?}");
    }
    let local = local_events(&data);
    for m in ["alpha", "beta", "seed"] {
        let n = count(
            c,
            &db,
            &format!("SELECT count(*) FROM kn_event WHERE machine = '{m}'"),
        );
        assert_eq!(n, local, "machine {m}");
    }
}

#[test]
fn roles_are_refused_what_they_may_not_do() {
    let Some(c) = cluster() else { return };
    let db = c.database("roles");
    let data = &common::world::demo().data_dir;
    push_as(data, &c.url("admin", &db), "other").expect("schema and another machine's rows");
    roles(c, &db, "rl", &["mine"]);
    // A push role pushes its own machine, and no other.
    push_as(data, &c.url("rl_mine", &db), "mine").expect("own machine");
    let err = push_as(data, &c.url("rl_mine", &db), "other").expect_err("not its machine");
    assert!(matches!(err, TeamError::NotYourMachine { .. }), "{err}");
    let mut push_role =
        postgres::Client::connect(&c.url("rl_mine", &db), postgres::NoTls).expect("connect");
    let seen: i64 = push_role
        .query_one("SELECT count(*) FROM kn_event WHERE machine = 'other'", &[])
        .expect("select")
        .get(0);
    assert_eq!(seen, 0, "a push role cannot read another machine's rows");
    let deleted = push_role
        .execute("DELETE FROM kn_session WHERE machine = 'other'", &[])
        .expect("delete runs");
    assert_eq!(
        deleted, 0,
        "a push role cannot delete another machine's rows"
    );
    let forged = push_role.execute(
        "UPDATE kn_session SET machine = 'other' WHERE machine = 'mine'",
        &[],
    );
    assert!(
        forged.is_err(),
        "a push role cannot move its rows to another machine"
    );
    // The search role reads every machine and writes nothing.
    let mut lead =
        postgres::Client::connect(&c.url("rl_lead", &db), postgres::NoTls).expect("connect");
    let machines: i64 = lead
        .query_one("SELECT count(DISTINCT machine) FROM kn_session", &[])
        .expect("select")
        .get(0);
    assert_eq!(machines, 2);
    let write = lead.execute("DELETE FROM kn_event", &[]);
    let e = write.expect_err("the search role cannot write");
    assert_eq!(
        e.code(),
        Some(&postgres::error::SqlState::INSUFFICIENT_PRIVILEGE)
    );
    let err = push_as(data, &c.url("rl_lead", &db), "lead").expect_err("not a push role");
    assert!(matches!(err, TeamError::NotYourMachine { .. }), "{err}");
}

#[test]
fn a_push_killed_mid_way_leaves_the_database_consistent_and_the_next_push_completes() {
    let Some(c) = cluster() else { return };
    let db = c.database("kill");
    let (_tmp, data) = synthetic(400, 60, "[search]\nsemantic = false\n");
    // The owner's push: its events go straight into kn_event (no staging table).
    let url = c.url("admin", &db);
    let mut killed_mid_way = false;
    for delay_ms in [150u64, 300, 600] {
        killed_mid_way |= kill_push_after(&data, &url, "crashy", Duration::from_millis(delay_ms));
        if !has_schema(c, &db) {
            continue;
        }
        // Consistent: every session's watermark is exactly what it holds.
        let torn = count(
            c,
            &db,
            "SELECT count(*) FROM kn_session s WHERE s.pushed_seq <>
               coalesce((SELECT max(seq) FROM kn_event e
                         WHERE e.machine = s.machine AND e.session_id = s.session_id), -1)",
        );
        assert_eq!(
            torn, 0,
            "a session whose watermark does not match its events"
        );
    }
    let s = push_as(&data, &url, "crashy").expect("the next push completes");
    assert!(s.batches >= 1 || s.episodes_skipped, "{s:?}");
    assert_eq!(
        count(
            c,
            &db,
            "SELECT count(*) FROM kn_event WHERE machine = 'crashy'"
        ),
        local_events(&data)
    );
    eprintln!("kill -9 landed mid-push: {killed_mid_way}");
}

fn team_engine(url: &str) -> Engine {
    let mut config = EngineConfig::load(&common::world::demo().data_dir).expect("config");
    config.log = false;
    config.team = Some(url.to_string());
    config.team_only = true;
    knowledge::open_engine(config)
}

#[test]
fn the_team_sources_conform() {
    let Some(c) = cluster() else { return };
    let db = c.database("conform");
    let data = &common::world::demo().data_dir;
    push_as(data, &c.url("admin", &db), "laptop-c").expect("push");
    roles(c, &db, "cf", &[]);
    let url = TeamUrl::parse(&c.url("cf_lead", &db)).expect("url");
    common::conformance::episodes(&TeamEpisodes(TeamConn::new(url.clone())), "MySQL access");
    common::conformance::code(&TeamCode(TeamConn::new(url)), "mysql connection config");
}

#[test]
fn search_through_the_team_names_each_items_machine_and_validates() {
    let Some(c) = cluster() else { return };
    let db = c.database("search");
    let data = &common::world::demo().data_dir;
    push_as(data, &c.url("admin", &db), "laptop-s").expect("push");
    roles(c, &db, "sr", &[]);
    let engine = team_engine(&c.url("sr_lead", &db));
    let req = serde_json::json!({"schema": "knowledge.search/v1",
        "query": "кто чинил доступ к MySQL", "budget": {"max_tokens": 20000}});
    let out = engine.search_json(&req.to_string()).to_json();
    common::schema::validate("knowledge_search.v1.schema.json", "response", &out)
        .unwrap_or_else(|e| panic!("{e}\n{out:#}"));
    let items = out["lanes"]["episodes"]["items"].as_array().expect("items");
    assert!(!items.is_empty(), "{out:#}");
    assert!(
        items.iter().all(|i| i["session"]["machine"] == "laptop-s"),
        "{items:#?}"
    );
    assert!(out["lanes"]["episodes"]["source"]
        .as_str()
        .is_some_and(|s| s.starts_with("team.episodes")));
    // Same request, same bytes (KC-12 against the team source).
    let again = engine.search_json(&req.to_string()).to_json();
    assert_eq!(out, again);
    // The workspace filter applies in SQL (KC-10 against the team source).
    let filtered = serde_json::json!({"schema": "knowledge.search/v1",
        "query": "MySQL", "filters": {"workspaces": ["/no/such/workspace"]}});
    let out = engine.search_json(&filtered.to_string()).to_json();
    assert_eq!(
        out["lanes"]["episodes"]["items"].as_array().map(Vec::len),
        Some(0),
        "{out:#}"
    );
    // The event behind an item reads back through the lane (built-in first, then the team).
    let ep = engine
        .get_episode(
            items[0]["session_id"].as_str().expect("sid"),
            items[0]["seq"].as_u64().expect("seq"),
            1,
        )
        .expect("episode");
    assert!(!ep.events.is_empty());
}

#[test]
fn a_down_server_degrades_the_team_lanes_and_the_local_lanes_keep_answering() {
    let dead = tempfile::tempdir().expect("tmp");
    let url = format!("host={} user=nobody dbname=none", dead.path().display());
    let engine = team_engine(&url);
    let req = serde_json::json!({"schema": "knowledge.search/v1",
        "query": "which skill checks BOM and CRLF", "include": ["episodes", "code", "skills"]});
    let out = engine.search_json(&req.to_string()).to_json();
    assert_eq!(out["lanes"]["episodes"]["degraded"], true, "{out:#}");
    assert_eq!(out["lanes"]["code"]["degraded"], true, "{out:#}");
    let text = out.to_string();
    assert!(text.contains("KNOWLEDGE_SOURCE_UNAVAILABLE"), "{text}");
    assert!(text.contains("cannot be reached"), "{text}");
    // `--team-only`: the skills lane is the team's too, and degrades with it; with both the
    // episodes and the code source gone the contract keeps no items (KNOWLEDGE_NO_SOURCE), and
    // says so. (Local + team, the default, keeps the local lanes answering: tests/team_search.rs.)
    assert_eq!(out["lanes"]["skills"]["degraded"], true, "{out:#}");
    assert!(text.contains("KNOWLEDGE_NO_SOURCE"), "{text}");
    // Reading an event of this machine needs no server: the local store answers first.
    let local = common::world::demo().engine();
    let hit = local
        .search_json(r#"{"schema":"knowledge.search/v1","query":"MySQL"}"#)
        .to_json();
    let item = &hit["lanes"]["episodes"]["items"][0];
    let ep = engine
        .get_episode(
            item["session_id"].as_str().expect("sid"),
            item["seq"].as_u64().expect("seq"),
            0,
        )
        .expect("the local store answers while the team is down");
    assert_eq!(ep.events.len(), 1);
}

#[test]
fn a_bad_team_url_is_a_clear_error_and_no_panic() {
    let engine = team_engine("postgresql://[::1");
    let out = engine
        .search_json(r#"{"schema":"knowledge.search/v1","query":"mysql"}"#)
        .to_json();
    assert!(out.to_string().contains("team URL"), "{out:#}");
    let cli = Command::new(env!("CARGO_BIN_EXE_knowledge"))
        .args(["push", "--to", "postgresql://[::1"])
        .output()
        .expect("run");
    assert_eq!(cli.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&cli.stderr).contains("team URL"));
}

/// CI cannot pass by skipping: where PostgreSQL is missing, `KNOWLEDGE_REQUIRE_POSTGRES` (set
/// by `.ci/run`) makes the team tests fail, saying how to install it; unset (a stranger's
/// `cargo test`), they skip. The decision `pg::installed` makes, with the variable given.
#[test]
fn a_missing_server_fails_the_team_tests_where_ci_requires_it() {
    use common::needs::{required, POSTGRES};
    assert_eq!(POSTGRES.var, "KNOWLEDGE_REQUIRE_POSTGRES");
    for value in ["1", "yes", " 1 "] {
        assert!(required(Some(value)), "{value:?}");
    }
    for value in [None, Some(""), Some("0")] {
        assert!(!required(value), "{value:?}");
    }
    let failed = std::panic::catch_unwind(|| POSTGRES.met_with(false, Some("1")))
        .expect_err("a missing server with the variable set fails");
    let said = failed.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        said.contains("apt-get install postgresql-15") && said.contains(POSTGRES.var),
        "{said}"
    );
    assert!(!POSTGRES.met_with(false, None), "unset: skipped");
    assert!(!POSTGRES.met_with(false, Some("0")), "0: skipped");
    let note = POSTGRES.absent(false).expect("a skip note");
    assert!(
        note.starts_with("SKIPPED: PostgreSQL is not installed"),
        "{note}"
    );
    assert!(POSTGRES.met_with(true, Some("1")) && POSTGRES.met_with(true, None));
}
