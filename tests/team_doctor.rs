//! `knowledge doctor` and `knowledge stats --chart` about the team server (issue 36, item 10):
//! doctor checks each team URL a data dir's commands use (`--team URL` for searching,
//! `KNOWLEDGE_TEAM_URL` or `[team] url` for pushing) — reachable, PostgreSQL and schema
//! version, what the URL's role may do, `shared_buffers` against `kn_event` — each finding with
//! docs/TEAM.md's fix; the chart says whether the team index it was asked about answers. Against
//! the throwaway cluster (`common::pg`); "down" is a closed port.

mod common;

use std::path::Path;
use std::process::Command;

use common::pg::Cluster;
use common::team_db::{push_as, synthetic};
use common::team_world::Team;
use serde_json::Value;

/// `knowledge [--team URL] doctor --json` on `data`, with `env`: (exit code, the document).
fn doctor_json(data: &Path, team: Option<&str>, env: &[(&str, &str)]) -> (Option<i32>, Value) {
    let out = knowledge(data, team, &["doctor", "--json"], env);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "doctor --json: {e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code(), doc)
}

fn knowledge(
    data: &Path,
    team: Option<&str>,
    args: &[&str],
    env: &[(&str, &str)],
) -> std::process::Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_knowledge"));
    c.arg("--data-dir").arg(data);
    if let Some(url) = team {
        c.args(["--team", url]);
    }
    c.args(args)
        .env_remove("KNOWLEDGE_TEAM_URL")
        .envs(env.iter().copied())
        .output()
        .expect("run knowledge")
}

/// The team entries of a doctor document.
fn team_of(doc: &Value) -> &Vec<Value> {
    doc["team"].as_array().expect("doctor --json has `team`")
}

/// The problems of one team entry, as one text (problem and fix).
fn problems_of(t: &Value) -> String {
    t["problems"]
        .as_array()
        .expect("problems")
        .iter()
        .map(|p| format!("{} | fix: {}", p["problem"], p["fix"]))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A data dir holding only `config`.
fn config_only(config: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    std::fs::write(dir.path().join("config.toml"), config).expect("config");
    dir
}

#[test]
fn doctor_checks_the_team_server_its_schema_and_what_each_role_may_do() {
    let Some(team) = Team::shared() else {
        return;
    };
    let c = team.cluster;
    let known = knowledge::team::schema::VERSION;

    // The lead's search role: reachable, this build's schema, searches every machine.
    let (_, doc) = doctor_json(team.lead.path(), Some(&team.url), &[]);
    let t = &team_of(&doc)[0];
    assert_eq!(t["purpose"], "search", "{doc:#}");
    assert_eq!(t["reachable"], true, "{doc:#}");
    assert_eq!(t["server"]["schema_version"], known, "{doc:#}");
    assert_eq!(t["server"]["rights"]["searches"], true, "{doc:#}");
    assert!(t["server"]["shared_buffers"].as_i64().expect("bytes") > 0);
    assert!(t["server"]["event_bytes"].as_i64().expect("bytes") > 0);
    assert_eq!(problems_of(t), "", "a healthy team server: {doc:#}");
    let text = knowledge(team.lead.path(), Some(&team.url), &["doctor"], &[]);
    let text = String::from_utf8_lossy(&text.stdout);
    for said in [
        "team (--team, searches)",
        "reachable: PostgreSQL 15",
        "searches every machine",
        "shared_buffers",
    ] {
        assert!(text.contains(said), "{said:?} not in:\n{text}");
    }

    // A login role outside knowledge_search: named, with the GRANT that fixes it.
    let nobody = format!("{}_nobody", team.db);
    c.sql(&team.db, &format!("CREATE ROLE {nobody} LOGIN"));
    let (code, doc) = doctor_json(team.lead.path(), Some(&c.url(&nobody, &team.db)), &[]);
    let p = problems_of(&team_of(&doc)[0]);
    assert!(
        p.contains("may not search") && p.contains(&format!("GRANT knowledge_search TO {nobody}")),
        "{p}"
    );
    assert_eq!(code, Some(1), "a problem makes doctor unhealthy");

    // A push role mapped to another machine than `[team] machine`: no --team, the config's URL.
    let alice = format!("{}_alice", team.db);
    c.sql(
        &team.db,
        &format!(
            "CREATE ROLE {alice} LOGIN IN ROLE knowledge_push;
             INSERT INTO kn_pusher VALUES ('{alice}', 'alice')"
        ),
    );
    let alice_url = c.url(&alice, &team.db);
    let dir = config_only(&format!(
        "[team]\nurl = \"{alice_url}\"\nmachine = \"bob\"\n"
    ));
    let (_, doc) = doctor_json(dir.path(), None, &[]);
    let t = &team_of(&doc)[0];
    assert_eq!(t["purpose"], "push", "{doc:#}");
    assert!(
        t["from"].as_str().is_some_and(|f| f.contains("[team] url")),
        "{doc:#}"
    );
    let p = problems_of(t);
    assert!(
        p.contains("may not push machine bob: it pushes machine alice"),
        "{p}"
    );
    // KNOWLEDGE_TEAM_URL wins over `[team] url`: the owner may push any machine.
    let owner = c.url("admin", &team.db);
    let (_, doc) = doctor_json(dir.path(), None, &[("KNOWLEDGE_TEAM_URL", &owner)]);
    let t = &team_of(&doc)[0];
    assert_eq!(t["from"], "KNOWLEDGE_TEAM_URL", "{doc:#}");
    assert_eq!(problems_of(t), "", "{doc:#}");

    // A database nobody pushed to: a search there finds nothing, and doctor says why.
    let empty = c.database("docempty");
    let (_, doc) = doctor_json(team.lead.path(), Some(&c.url("admin", &empty)), &[]);
    let t = &team_of(&doc)[0];
    assert_eq!(t["server"]["schema_version"], 0, "{doc:#}");
    assert!(
        problems_of(t).contains("no knowledge schema yet"),
        "{doc:#}"
    );
}

/// `shared_buffers` smaller than `kn_event` with its indexes: the warning says both sizes and
/// the fix from docs/TEAM.md. A cluster of its own, with 2 MB of shared buffers.
#[test]
fn doctor_warns_when_shared_buffers_cannot_hold_the_events() {
    if !common::pg::installed() {
        return;
    }
    let c = Cluster::start_custom(None, |_| Ok("-c shared_buffers=2MB".into()))
        .expect("a cluster with small shared buffers");
    let db = c.database("small");
    let (_tmp, data) = synthetic(100, 40, common::world::GENEROUS_LANES);
    let owner = c.url("admin", &db);
    push_as(&data, &owner, "m1").expect("push");
    let (_, doc) = doctor_json(&data, Some(&owner), &[]);
    let t = &team_of(&doc)[0];
    let s = &t["server"];
    assert!(
        s["event_bytes"].as_i64() > s["shared_buffers"].as_i64(),
        "the test needs more events than buffers: {doc:#}"
    );
    let p = problems_of(t);
    for said in [
        "shared_buffers is 2.0 MB",
        "kn_event with its indexes",
        "shared_buffers = 256MB",
        "restart PostgreSQL",
        "Server settings",
        "timeout_ms",
    ] {
        assert!(p.contains(said), "{said:?} not in: {p}");
    }
}

#[test]
fn doctor_and_the_chart_say_when_the_team_server_is_down_and_why() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let closed = format!("postgresql://lead@127.0.0.1:{port}/team");
    let dir = config_only(&format!(
        "{}[team]\nurl = \"{closed}\"\nmachine = \"bad name\"\n",
        common::world::GENEROUS_LANES
    ));
    let (code, doc) = doctor_json(dir.path(), Some(&closed), &[]);
    assert_eq!(code, Some(1));
    let team = team_of(&doc);
    assert_eq!(team.len(), 2, "--team and [team] url: {doc:#}");
    for t in team {
        assert_eq!(t["reachable"], false, "{doc:#}");
        let p = problems_of(t);
        assert!(
            p.contains("cannot be reached") && p.contains(&format!("127.0.0.1:{port}")),
            "{p}"
        );
    }
    // The machine a push would refuse is said too, server down or not.
    assert!(
        problems_of(&team[1]).contains("bad name\\\" is not a machine name"),
        "{doc:#}"
    );
    let text = knowledge(dir.path(), Some(&closed), &["doctor"], &[]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("down: "), "{text}");

    // The chart: the same data dir, the team down, then up.
    let chart = |url: &str, json: bool| {
        let mut args = vec!["stats", "--chart", "--days", "3"];
        if json {
            args.push("--json");
        }
        let out = knowledge(dir.path(), Some(url), &args, &[]);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let down = chart(&closed, false);
    assert!(
        down.contains("team server is down") && down.contains("cannot be reached"),
        "{down}"
    );
    let down_json: Value = serde_json::from_str(&chart(&closed, true)).expect("json");
    assert!(
        down_json["warnings"]
            .to_string()
            .contains("cannot be reached"),
        "{down_json:#}"
    );
    // A --team that is no PostgreSQL URL is said to be that, not a server that is down.
    let unusable = chart("http://db.internal/team", false);
    assert!(
        unusable.contains("the --team URL") && unusable.contains("not a PostgreSQL URL"),
        "{unusable}"
    );
    let Some(up_team) = Team::shared() else {
        return;
    };
    let up = chart(&up_team.url, false);
    assert!(
        up.contains("answers (schema version") && !up.contains("down"),
        "{up}"
    );
}
