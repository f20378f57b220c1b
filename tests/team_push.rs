//! The write side of the team index on a real PostgreSQL (issue 20): schema version 2 (vector
//! codes, the agent-knowledge store) applied on an empty or a version-1 database, and `knowledge
//! push` of skills, actors, skill uses, edits and the codes: pushed twice adds nothing, a grown
//! transcript sends only its new events and codes, a `kill -9` mid-push leaves the database
//! consistent, two machines push at once, a push role is held to its own machine's rows.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::pg::{cluster, Cluster};
use common::team_db::{client, count, has_schema, kill_push_after, push_as, synthetic};
use knowledge::sources::vectors::{self, export};
use knowledge::team::{schema, TeamError, TeamUrl};

fn local_count(db: &Path, sql: &str) -> i64 {
    let conn = knowledge::sources::sqlite::open_ro(db).expect("open a local store");
    conn.query_row(sql, [], |r| r.get(0)).expect(sql)
}

/// The number of vector codes a local store holds.
fn local_codes(db: &Path, t: &vectors::VectorTable) -> i64 {
    let conn = knowledge::sources::sqlite::open_ro(db).expect("open a local store");
    let mut n = 0;
    export::for_each_code(&conn, t, |_| n += 1).expect("codes");
    n
}

/// What the team index holds of one machine, table by table.
fn team_counts(c: &Cluster, db: &str, machine: &str) -> Vec<(&'static str, i64)> {
    [
        "kn_event",
        "kn_event_vec",
        "kn_chunk",
        "kn_chunk_vec",
        "kn_skill",
        "kn_actor",
        "kn_actor_session",
        "kn_skill_use",
        "kn_edit",
        "kn_activity",
    ]
    .into_iter()
    .map(|t| {
        let sql = format!("SELECT count(*) FROM {t} WHERE machine = '{machine}'");
        (t, count(c, db, &sql))
    })
    .collect()
}

/// What the local stores of `data` hold, in the order of [`team_counts`].
fn local_counts(data: &Path) -> Vec<(&'static str, i64)> {
    let (ep, code, ak) = (
        data.join("episodes.sqlite"),
        data.join("code.sqlite"),
        data.join("knowledge.sqlite"),
    );
    let ak_count = |t: &str| {
        if ak.exists() {
            local_count(&ak, &format!("SELECT count(*) FROM {t}"))
        } else {
            0
        }
    };
    let code_n = |f: &dyn Fn() -> i64| if code.exists() { f() } else { 0 };
    vec![
        ("kn_event", local_count(&ep, "SELECT count(*) FROM events")),
        ("kn_event_vec", local_codes(&ep, &vectors::EVENTS)),
        (
            "kn_chunk",
            code_n(&|| local_count(&code, "SELECT count(*) FROM chunks")),
        ),
        (
            "kn_chunk_vec",
            code_n(&|| local_codes(&code, &vectors::CHUNKS)),
        ),
        ("kn_skill", ak_count("ak_skill")),
        ("kn_actor", ak_count("ak_actor")),
        ("kn_actor_session", ak_count("ak_actor_session")),
        ("kn_skill_use", ak_count("ak_skill_use")),
        ("kn_edit", ak_count("ak_edit")),
        ("kn_activity", ak_count("ak_activity")),
    ]
}

/// Every session's watermarks match what the team index holds: events up to `pushed_seq` and
/// no codes past `vec_seq`.
fn assert_consistent(c: &Cluster, db: &str) {
    let torn = count(
        c,
        db,
        "SELECT count(*) FROM kn_session s WHERE s.pushed_seq <>
           coalesce((SELECT max(seq) FROM kn_event e
                     WHERE e.machine = s.machine AND e.session_id = s.session_id), -1)
           OR EXISTS (SELECT 1 FROM kn_event_vec v WHERE v.machine = s.machine
                      AND v.session_id = s.session_id AND v.seq > s.vec_seq)",
    );
    assert_eq!(torn, 0, "a session whose watermarks do not match its rows");
}

#[test]
fn a_push_sends_skills_actors_skill_uses_and_codes_and_a_second_push_adds_nothing() {
    let Some(c) = cluster() else { return };
    let db = c.database("l3twice");
    let data = &common::world::demo().data_dir;
    let url = c.url("admin", &db);
    let first = push_as(data, &url, "laptop-k").expect("first push");
    let local = local_counts(data);
    for (t, n) in &local {
        if *t != "kn_chunk_vec" && *t != "kn_edit" && *t != "kn_activity" {
            assert!(*n > 0, "the demo world has {t} rows to push: {local:?}");
        }
    }
    assert_eq!(team_counts(c, &db, "laptop-k"), local, "{first:?}");
    assert!(first.skills_sent > 0 && first.actors_sent > 0 && first.skill_uses_sent > 0);
    assert!(first.event_vectors_sent > 0, "{first:?}");
    assert_consistent(c, &db);
    // The catalog text is searchable with our own stems, weighted by column.
    let weighted = count(
        c,
        &db,
        "SELECT count(*) FROM kn_skill WHERE tsv::text LIKE '%A%'",
    );
    assert!(weighted > 0, "skill names carry weight A");

    let second = push_as(data, &url, "laptop-k").expect("second push");
    assert!(second.episodes_skipped && second.code_skipped && second.knowledge_skipped);
    assert_eq!(
        second.event_vectors_sent + second.knowledge_rows,
        0,
        "{second:?}"
    );
    // Without the store revisions, the watermarks still send no event or code again, and the
    // agent-knowledge store is replaced by the same rows.
    client(c, "admin", &db)
        .batch_execute("DELETE FROM kn_store_rev")
        .expect("forget the revisions");
    let third = push_as(data, &url, "laptop-k").expect("third push");
    assert_eq!(third.events_sent + third.event_vectors_sent, 0, "{third:?}");
    assert_eq!(third.sessions_updated, 0, "{third:?}");
    assert_eq!(team_counts(c, &db, "laptop-k"), local);
}

#[test]
fn a_version_1_database_is_upgraded_and_its_sessions_get_their_codes() {
    let Some(c) = cluster() else { return };
    let db = c.database("upgrade");
    c.sql(&db, include_str!("../src/team/migrations/0001_init.sql"));
    let data = &common::world::demo().data_dir;
    let url = c.url("admin", &db);
    let s = push_as(data, &url, "laptop-u").expect("push");
    assert_eq!(s.schema_before, 1);
    assert_eq!(
        count(c, &db, "SELECT max(version)::bigint FROM kn_schema"),
        i64::from(schema::VERSION)
    );
    assert_eq!(team_counts(c, &db, "laptop-u"), local_counts(data));
    // A session pushed before its codes existed gets them on the next push, events untouched.
    client(c, "admin", &db)
        .batch_execute(
            "DELETE FROM kn_event_vec; UPDATE kn_session SET vec_seq = -1;
             DELETE FROM kn_store_rev WHERE store = 'episodes';",
        )
        .expect("forget the codes");
    let again = push_as(data, &url, "laptop-u").expect("push again");
    assert_eq!(again.events_sent, 0, "{again:?}");
    assert_eq!(
        again.event_vectors_sent as i64,
        local_codes(&data.join("episodes.sqlite"), &vectors::EVENTS)
    );
    assert_consistent(c, &db);
}

#[test]
fn a_newer_schema_is_refused_and_nothing_is_written() {
    let Some(c) = cluster() else { return };
    let db = c.database("newer2");
    let data = &common::world::demo().data_dir;
    let url = c.url("admin", &db);
    push_as(data, &url, "m1").expect("push");
    let newer = schema::VERSION + 1;
    c.sql(
        &db,
        &format!("UPDATE kn_schema SET version = {newer}; DELETE FROM kn_store_rev;"),
    );
    let err = push_as(data, &url, "m2").expect_err("refused");
    assert!(
        matches!(err, TeamError::NewerSchema { found, .. } if found == newer),
        "{err}"
    );
    let text = err.to_string();
    assert!(
        text.contains(&format!("schema version {newer}")) && text.contains("upgrade knowledge"),
        "{text}"
    );
    assert_eq!(
        count(
            c,
            &db,
            "SELECT count(*) FROM kn_session WHERE machine = 'm2'"
        ),
        0
    );
    assert_eq!(count(c, &db, "SELECT count(*) FROM kn_store_rev"), 0);
    // The binary says the same and fails.
    let out = Command::new(env!("CARGO_BIN_EXE_knowledge"))
        .arg("--data-dir")
        .arg(data)
        .args(["push", "--machine", "m2", "--to", &url])
        .output()
        .expect("run push");
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("upgrade knowledge"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_grown_transcript_sends_only_its_new_events_and_their_codes() {
    let Some(c) = cluster() else { return };
    let db = c.database("growvec");
    let world = common::world::fresh_demo();
    let url = c.url("admin", &db);
    push_as(&world.data_dir, &url, "laptop-g").expect("first push");
    let ep = world.data_dir.join("episodes.sqlite");
    let (events_before, codes_before) = (
        local_count(&ep, "SELECT count(*) FROM events"),
        local_codes(&ep, &vectors::EVENTS),
    );
    let path = world
        .world
        .root
        .join("claude/projects/-DEMO--repos-billing/40b2334f-8cd8-49dd-8b81-2fd55e3b6a92.jsonl");
    let cwd = world.world.root.join("repos/billing").display().to_string();
    common::watching::append_event(
        &path,
        &cwd,
        "rotated the grafana webhook token and restarted the alert relay",
    );
    common::world::index_world(&world.world, &world.data_dir);
    let second = push_as(&world.data_dir, &url, "laptop-g").expect("second push");
    assert_eq!(second.sessions_grown, 1, "{second:?}");
    assert_eq!(
        second.events_sent as i64,
        local_count(&ep, "SELECT count(*) FROM events") - events_before
    );
    let new_codes = local_codes(&ep, &vectors::EVENTS) - codes_before;
    assert!(new_codes > 0, "the new event has codes locally");
    assert_eq!(second.event_vectors_sent as i64, new_codes, "{second:?}");
    assert_eq!(
        team_counts(c, &db, "laptop-g"),
        local_counts(&world.data_dir)
    );
    assert_consistent(c, &db);
    // The codes sent are the new event's.
    let of_new = count(
        c,
        &db,
        "SELECT count(*) FROM kn_event_vec v JOIN kn_event e USING (machine, session_id, seq)
         WHERE e.text LIKE '%grafana webhook token%'",
    );
    assert_eq!(of_new, new_codes);
}

#[test]
fn a_push_killed_mid_way_with_codes_and_knowledge_leaves_the_database_consistent() {
    let Some(c) = cluster() else { return };
    let db = c.database("killvec");
    let (_tmp, data) = synthetic(150, 40, "");
    // As a push role: its events go through the staging table and one INSERT … SELECT the
    // row-level policies check (the owner's kill test in team_postgres.rs copies straight in).
    let mut owner = TeamUrl::parse(&c.url("admin", &db))
        .expect("url")
        .connect()
        .expect("connect");
    schema::migrate(&mut owner).expect("schema");
    c.sql(
        &db,
        "CREATE ROLE kv_crashy LOGIN IN ROLE knowledge_push;
         INSERT INTO kn_pusher VALUES ('kv_crashy', 'crashy');",
    );
    let url = c.url("kv_crashy", &db);
    let mut killed_mid_way = 0;
    for delay_ms in [100u64, 250, 500, 900] {
        let delay = Duration::from_millis(delay_ms);
        killed_mid_way += usize::from(kill_push_after(&data, &url, "crashy", delay));
        if has_schema(c, &db) {
            assert_consistent(c, &db);
        }
    }
    push_as(&data, &url, "crashy").expect("the next push completes");
    assert_eq!(team_counts(c, &db, "crashy"), local_counts(&data));
    assert_consistent(c, &db);
    eprintln!("kill -9 landed mid-push {killed_mid_way} time(s) of 4");
}

#[test]
fn two_machines_push_everything_at_once_each_into_its_own_rows() {
    let Some(c) = cluster() else { return };
    let db = c.database("twovec");
    let data = common::world::demo().data_dir.clone();
    push_as(&data, &c.url("admin", &db), "seed").expect("schema");
    for m in ["alpha", "beta"] {
        c.sql(
            &db,
            &format!(
                "CREATE ROLE tv_{m} LOGIN IN ROLE knowledge_push;
                 INSERT INTO kn_pusher VALUES ('tv_{m}', '{m}');"
            ),
        );
    }
    let threads: Vec<_> = ["alpha", "beta"]
        .into_iter()
        .map(|m| {
            let (url, data) = (c.url(&format!("tv_{m}"), &db), data.clone());
            std::thread::spawn(move || push_as(&data, &url, m))
        })
        .collect();
    for t in threads {
        let s = t.join().expect("thread").expect("push");
        assert!(s.knowledge_rows > 0 && s.event_vectors_sent > 0, "{s:?}");
    }
    let local = local_counts(&data);
    for m in ["alpha", "beta", "seed"] {
        assert_eq!(team_counts(c, &db, m), local, "machine {m}");
    }
}

#[test]
fn a_push_role_cannot_touch_another_machines_knowledge_or_codes() {
    let Some(c) = cluster() else { return };
    let db = c.database("rolesvec");
    let data = &common::world::demo().data_dir;
    push_as(data, &c.url("admin", &db), "other").expect("another machine's rows");
    c.sql(
        &db,
        "CREATE ROLE rv_mine LOGIN IN ROLE knowledge_push;
         INSERT INTO kn_pusher VALUES ('rv_mine', 'mine');
         CREATE ROLE rv_lead LOGIN IN ROLE knowledge_search;",
    );
    push_as(data, &c.url("rv_mine", &db), "mine").expect("its own machine");
    let mut role = client(c, "rv_mine", &db);
    for t in [
        "kn_skill",
        "kn_actor",
        "kn_skill_use",
        "kn_event_vec",
        "kn_chunk_vec",
    ] {
        let seen: i64 = role
            .query_one(
                &format!("SELECT count(*) FROM {t} WHERE machine = 'other'"),
                &[],
            )
            .expect("select")
            .get(0);
        assert_eq!(seen, 0, "{t}: another machine's rows are invisible");
        let deleted = role
            .execute(&format!("DELETE FROM {t} WHERE machine = 'other'"), &[])
            .expect("delete runs");
        assert_eq!(deleted, 0, "{t}: another machine's rows cannot be deleted");
        let forged = role.execute(
            &format!("UPDATE {t} SET machine = 'other' WHERE machine = 'mine'"),
            &[],
        );
        assert!(
            forged.is_err(),
            "{t}: its rows cannot move to another machine"
        );
    }
    let planted = role.execute(
        "INSERT INTO kn_actor (machine, actor_id, name, kind, source, root_session, sessions,
             events, skill_uses, edits, outcome_success, outcome_failure, outcome)
         VALUES ('other', 'planted', 'x', 'main', 'claude', 's', 0, 0, 0, 0, 0, 0, 'unknown')",
        &[],
    );
    assert!(
        planted.is_err(),
        "an actor cannot be planted on another machine"
    );
    // Nor can it re-map itself, or drop what the owner made.
    let remap = role.execute("UPDATE kn_pusher SET machine = 'other'", &[]);
    assert_eq!(
        remap.expect_err("kn_pusher is the owner's").code(),
        Some(&postgres::error::SqlState::INSUFFICIENT_PRIVILEGE)
    );
    assert!(role.batch_execute("DROP TABLE kn_event_vec").is_err());
    // The other machine's rows are all still there.
    assert_eq!(team_counts(c, &db, "other"), local_counts(data));
    // The search role reads both machines' codes and knowledge, and writes none.
    let mut lead = client(c, "rv_lead", &db);
    let machines: i64 = lead
        .query_one("SELECT count(DISTINCT machine) FROM kn_skill_use", &[])
        .expect("select")
        .get(0);
    assert_eq!(machines, 2);
    let e = lead
        .execute("DELETE FROM kn_event_vec", &[])
        .expect_err("the search role cannot write");
    assert_eq!(
        e.code(),
        Some(&postgres::error::SqlState::INSUFFICIENT_PRIVILEGE)
    );
}

#[test]
fn the_events_binary_tsvector_reads_back_as_our_token_stream_as_owner_and_as_push_role() {
    let Some(c) = cluster() else { return };
    let db = c.database("binary");
    let data = &common::world::demo().data_dir;
    // The owner's events are copied straight into kn_event, a push role's through the staging
    // table: both in COPY's binary form, the tsvector as `tsvectorrecv` reads it.
    push_as(data, &c.url("admin", &db), "owned").expect("owner's push");
    c.sql(
        &db,
        "CREATE ROLE bin_role LOGIN IN ROLE knowledge_push;
         INSERT INTO kn_pusher VALUES ('bin_role', 'pushed');",
    );
    push_as(data, &c.url("bin_role", &db), "pushed").expect("push role's push");
    let local = local_count(&data.join("episodes.sqlite"), "SELECT count(*) FROM events");
    for machine in ["owned", "pushed"] {
        let rows = client(c, "admin", &db)
            .query(
                "SELECT text, tool_name, tsv::text, time_ms, human FROM kn_event
                 WHERE machine = $1",
                &[&machine],
            )
            .expect("events");
        assert_eq!(rows.len() as i64, local, "{machine}: every event arrived");
        let mut differ = 0;
        for r in &rows {
            let (text, tool): (String, Option<String>) = (r.get(0), r.get(1));
            if r.get::<_, String>(2) != knowledge::team::tsv::vector(&text, tool.as_deref()) {
                differ += 1;
            }
        }
        assert_eq!(
            differ, 0,
            "{machine}: events whose tsvector is not their terms"
        );
        assert!(
            rows.iter().any(|r| r.get::<_, Option<i64>>(3).is_some())
                && rows.iter().any(|r| r.get::<_, bool>(4)),
            "{machine}: times and flags arrived"
        );
    }
    let found = count(
        c,
        &db,
        "SELECT count(DISTINCT machine) FROM kn_event WHERE tsv @@ 'mysql'::tsquery",
    );
    assert_eq!(found, 2, "both machines' events match a term");
}
