//! A team server that stops while a front end runs (issue 20): the team source degrades with
//! `KNOWLEDGE_SOURCE_UNAVAILABLE`, the local lanes keep answering, and when the server is back
//! the next search connects again. Its own test binary: it stops the cluster the other team
//! tests of a binary share.

mod common;

use common::kc::Local;
use common::team_world::{team_engine, Team, MACHINE};
use knowledge::contract::{Code, SearchRequest, SearchResponse};

fn search(engine: &knowledge::engine::Engine) -> SearchResponse {
    let mut req = SearchRequest::new("mysql connection config timeout");
    req.limit = 50;
    req.max_tokens = 20_000;
    let resp = engine.search(&req);
    let doc = serde_json::to_value(&resp).expect("json");
    common::schema::validate("knowledge_search.v1.schema.json", "response", &doc)
        .unwrap_or_else(|e| panic!("{e}\n{doc:#}"));
    resp
}

fn team_items(resp: &SearchResponse) -> usize {
    resp.lanes
        .episodes
        .items
        .iter()
        .filter(|i| i.session.machine.as_deref() == Some(MACHINE))
        .count()
}

#[test]
fn a_stopped_server_degrades_the_team_source_and_a_restarted_one_answers_again() {
    let Some(team) = Team::push(Local::shared(), "down") else {
        return;
    };
    // This machine's own world: a small synthetic one (none of the team's sessions).
    let (_tmp, data) = common::team_db::synthetic(24, 16, common::world::GENEROUS_LANES);
    let engine = team_engine(&data, &team.url, false);

    let up = search(&engine);
    assert!(team_items(&up) > 0, "the team answers while it is up");
    let local = up.lanes.episodes.items.len() - team_items(&up);
    assert!(local > 0, "and so does this machine's index");

    team.cluster.stop();
    let down = search(&engine);
    team.cluster.restart();
    assert_eq!(team_items(&down), 0);
    assert!(
        !down.lanes.episodes.items.is_empty(),
        "the local lane keeps answering"
    );
    assert!(down.lanes.episodes.header.degraded);
    assert!(down.found);
    assert!(
        down.warnings
            .iter()
            .any(|w| w.code == Code::SourceUnavailable
                && w.lane == Some(knowledge::contract::Lane::Episodes)),
        "{:?}",
        down.warnings
    );
    assert!(down.errors.iter().all(|e| e.code != Code::NoSource));

    let back = search(&engine);
    assert!(team_items(&back) > 0, "the next search connects again");
    assert!(!back.lanes.episodes.header.degraded);
}

/// A team host that accepts the connection and then says nothing (a wrong port, a stuck
/// proxy): the search answers from this machine once the lane's wait is over, naming the team
/// lane as not answering. Before, every lookup after the search waited for the same connect, so
/// the answer came after the whole connect budget (two `connect_timeout`s: a minute here).
#[test]
fn a_silent_team_host_never_holds_the_answer_past_the_lane_wait() {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        // Accept and keep every connection open without a byte.
        let mut held = Vec::new();
        for conn in listener.incoming().flatten() {
            held.push(conn);
        }
    });
    let world = common::world::demo();
    let url = format!("postgresql://u@127.0.0.1:{port}/db?connect_timeout=30");
    // The chart says whether the team answers: within a second, not the connect budget.
    let chart = std::thread::spawn({
        let (data, url) = (world.data_dir.clone(), url.clone());
        move || {
            Command::new(env!("CARGO_BIN_EXE_knowledge"))
                .arg("--data-dir")
                .arg(&data)
                .args(["--team", &url, "stats", "--chart", "--json"])
                .output()
                .expect("chart")
        }
    });
    let mut child = Command::new(env!("CARGO_BIN_EXE_knowledge"))
        .arg("--data-dir")
        .arg(&world.data_dir)
        .args(["--team", &url, "search", "-q", "mysql access"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    // Far above the lane's wait (200 ms), far below the connect budget (60 s).
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the answer waited for the silent team host");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("output");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(
        !doc["lanes"]["episodes"]["items"]
            .as_array()
            .expect("items")
            .is_empty(),
        "this machine's lane answers: {doc}"
    );
    let warnings = doc["warnings"].to_string();
    assert!(warnings.contains("did not answer within"), "{warnings}");
    // Joined after the search's deadline: a chart still waiting then has waited too long.
    let chart = chart.join().expect("chart thread");
    assert_eq!(chart.status.code(), Some(0), "{chart:?}");
    let text = String::from_utf8_lossy(&chart.stdout);
    assert!(text.contains("no answer within 1000 ms"), "{text}");
}

/// A team lane that cannot connect fails with the connection's error kept as the cause: the
/// lane's reason is its text, and the kind says what went wrong (no server at the port).
#[test]
fn a_lane_that_cannot_connect_keeps_the_teams_error_as_its_cause() {
    use knowledge::lanes::LaneRequest;
    use knowledge::team::{TeamError, Unreached};
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let url = format!("postgresql://u@127.0.0.1:{port}/t?sslmode=disable");
    let (episodes, _, _) =
        knowledge::team::source::lanes(&url, std::time::Duration::from_secs(10)).expect("lanes");
    let f = episodes
        .search(&LaneRequest {
            query: "anything".into(),
            terms: vec!["anything".into()],
            depth: 5,
            ..Default::default()
        })
        .expect_err("nothing listens there");
    assert_eq!(f.code, Code::SourceUnavailable);
    let cause = f.cause().and_then(|c| c.downcast_ref::<TeamError>());
    assert!(
        matches!(
            cause,
            Some(TeamError::Unreachable {
                why: Unreached::Refused { .. },
                ..
            })
        ),
        "{f}"
    );
    assert!(f.to_string().contains("cannot be reached"), "{f}");
}
