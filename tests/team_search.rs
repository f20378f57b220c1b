//! Local and team in one answer (`--team`, issue 20): each lane asks this machine's index and the
//! team's PostgreSQL at once (`engine/layered.rs`), leaves out the team's copy of what this
//! machine holds, and names the machine of every team item; a team index that cannot be reached
//! degrades only that source, and the local lanes keep answering. Against a real throwaway
//! cluster (`common::pg`); the closed-port check needs none.

mod common;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::kc::Local;
use common::team_world::{team_engine, Team, MACHINE};
use knowledge::contract::{Code, Lane, SearchRequest, SearchResponse};
use knowledge::team::TeamUrl;

/// This machine's own data dir: a small synthetic world (none of the demo world's sessions),
/// named `me` in the team index.
pub fn own_world() -> (tempfile::TempDir, PathBuf) {
    let config = format!(
        "{}[team]\nmachine = \"me\"\n",
        common::world::GENEROUS_LANES
    );
    common::team_db::synthetic(24, 16, &config)
}

fn push_as(data: &Path, team: &Team, machine: &str) {
    let owner = team.cluster.url("admin", &team.db);
    common::team_db::push_as(data, &owner, machine).expect("push");
}

fn search(engine: &knowledge::engine::Engine, q: &str) -> (SearchResponse, serde_json::Value) {
    let mut req = SearchRequest::new(q);
    req.limit = 50;
    req.max_tokens = 20_000;
    let resp = engine.search(&req);
    let doc = serde_json::to_value(&resp).expect("json");
    common::schema::validate("knowledge_search.v1.schema.json", "response", &doc)
        .unwrap_or_else(|e| panic!("{e}\n{doc:#}"));
    (resp, doc)
}

#[test]
fn local_and_team_answer_together_each_item_naming_its_machine_and_no_id_twice() {
    let Some(team) = Team::push(Local::shared(), "both") else {
        return;
    };
    let (_tmp, own) = own_world();
    // This machine pushed its own sessions too, and a mirror of them sits under another name:
    // neither may come back as team items (the local store holds those sessions).
    push_as(&own, &team, "me");
    push_as(&own, &team, "mirror");
    let engine = team_engine(&own, &team.url, false);
    let (resp, doc) = search(&engine, "mysql connection config timeout");
    let ep = &resp.lanes.episodes;
    assert!(!ep.header.degraded, "{doc:#}");
    assert!(
        ep.header
            .source
            .starts_with("builtin.episodes+team.episodes"),
        "{}",
        ep.header.source
    );
    let local = engine.builtin().episodes.clone();
    let (mut mine, mut theirs) = (0, 0);
    for it in &ep.items {
        // Every item names its machine, this machine's own included.
        match it.session.machine.as_deref() {
            Some("me") => {
                mine += 1;
                assert!(
                    matches!(local.session(&it.session_id), Ok(Some(_))),
                    "a local item of a session this machine does not hold: {}",
                    it.id
                );
            }
            m => {
                theirs += 1;
                assert_eq!(
                    m,
                    Some(MACHINE),
                    "{}: this machine's own rows came back",
                    it.id
                );
                assert!(
                    matches!(local.session(&it.session_id), Ok(None)),
                    "{}: a team copy of a local session",
                    it.id
                );
            }
        }
    }
    assert!(
        mine > 0 && theirs > 0,
        "local {mine}, team {theirs}: {doc:#}"
    );
    let ids: HashSet<&str> = ep.items.iter().map(|i| i.id.as_str()).collect();
    assert_eq!(ids.len(), ep.items.len(), "an id twice");
    // Every item reads back: a local one from this machine's store, a team one from the team.
    for it in ep.items.iter().take(6) {
        let read = engine
            .get_episode(&it.session_id, it.seq, 0)
            .unwrap_or_else(|e| panic!("{}: {e}", it.id));
        assert_eq!(read.events.len(), 1, "{}", it.id);
    }
    // This machine has no code index: the code lane answers from the team, and says what is
    // missing.
    let code = &resp.lanes.code;
    assert!(!code.items.is_empty(), "{doc:#}");
    assert!(code
        .items
        .iter()
        .all(|i| i.machine.as_deref() == Some(MACHINE)));
    assert!(code.header.degraded);
    assert!(resp
        .warnings
        .iter()
        .any(|w| w.code == Code::IndexNotReady && w.lane == Some(knowledge::contract::Lane::Code)));
    assert!(resp.found);
}

#[test]
fn team_only_answers_from_the_team_index_alone() {
    let Some(team) = Team::shared() else {
        return;
    };
    let (_tmp, own) = own_world();
    let engine = team_engine(&own, &team.url, true);
    let (resp, doc) = search(&engine, "mysql connection config timeout");
    assert!(!resp.lanes.episodes.items.is_empty(), "{doc:#}");
    assert!(
        resp.lanes
            .episodes
            .items
            .iter()
            .all(|i| i.session.machine.as_deref() == Some(MACHINE)),
        "{doc:#}"
    );
}

#[test]
fn a_closed_port_degrades_the_team_source_and_the_local_lanes_keep_answering() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let url = format!("host=127.0.0.1 port={port} user=lead dbname=team");
    let world = common::world::demo();
    let engine = team_engine(&world.data_dir, &url, false);
    let (resp, doc) = search(&engine, "where is the MySQL connection configured");
    for (lane, header, items) in [
        (
            Lane::Episodes,
            &resp.lanes.episodes.header,
            resp.lanes.episodes.items.len(),
        ),
        (
            Lane::Code,
            &resp.lanes.code.header,
            resp.lanes.code.items.len(),
        ),
    ] {
        assert!(items > 0, "{lane}: the local lane keeps answering: {doc:#}");
        assert!(header.degraded, "{lane}: {doc:#}");
        assert!(
            header
                .degradation_reason
                .as_deref()
                .is_some_and(|r| r.contains("cannot be reached")),
            "{lane}: {doc:#}"
        );
        assert!(
            resp.warnings
                .iter()
                .any(|w| w.code == Code::SourceUnavailable
                    && w.lane == Some(lane)
                    && w.message.contains("127.0.0.1")),
            "{lane}: {doc:#}"
        );
    }
    assert!(resp.found);
    assert!(resp.errors.is_empty(), "{doc:#}");
    assert!(resp
        .lanes
        .episodes
        .items
        .iter()
        .all(|i| i.session.machine.is_none()));
}

#[test]
fn the_cli_searches_local_and_team_and_refuses_team_only_without_a_team() {
    let Some(team) = Team::shared() else {
        return;
    };
    let (_tmp, own) = own_world();
    let out = Command::new(env!("CARGO_BIN_EXE_knowledge"))
        .arg("--data-dir")
        .arg(&own)
        .args([
            "--team",
            &team.url,
            "search",
            "-q",
            "mysql connection config timeout",
        ])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let items = doc["lanes"]["episodes"]["items"].as_array().expect("items");
    let machines: HashSet<Option<&str>> = items
        .iter()
        .map(|i| i["session"]["machine"].as_str())
        .collect();
    assert!(
        machines.contains(&Some("me"))
            && machines.contains(&Some(MACHINE))
            && !machines.contains(&None),
        "{machines:?}"
    );
    let refused = Command::new(env!("CARGO_BIN_EXE_knowledge"))
        .arg("--data-dir")
        .arg(&own)
        .args(["--team-only", "search", "-q", "mysql"])
        .output()
        .expect("run");
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--team"));
}

#[test]
fn the_team_skills_lane_conforms_and_the_vector_arm_answers_from_the_pushed_codes() {
    use knowledge::lanes::EpisodesSource;
    use knowledge::team::source::{TeamConn, TeamEpisodes, TeamSkills};
    let Some(team) = Team::shared() else {
        return;
    };
    let url = TeamUrl::parse(&team.url).expect("url");
    common::conformance::skills(&TeamSkills::new(TeamConn::new(url.clone())), "BOM CRLF");
    // A question in other words than the transcript's: only the vector arm can place it.
    let mut req = common::conformance::request("who repaired the database login");
    req.vector = knowledge::text::embed::prepare_query(&req.query, &mut req.terms);
    assert!(req.vector.is_some(), "the query has a vector");
    let found = TeamEpisodes(TeamConn::new(url))
        .search(&req)
        .expect("search");
    assert!(
        found.hits.iter().any(|h| h.cosine.is_some()),
        "no hit from the vector arm: {:?}",
        found.hits
    );
}

/// A lead on a fresh machine (no data dir at all) runs `--team URL` without knowing
/// `--team-only`: search and `mcp` answer from the team, a warning names the missing local
/// index, and the data dir is not created (a reader never creates it).
#[test]
fn a_lead_without_a_local_index_searches_the_team_and_is_told_so() {
    use std::io::{BufRead, BufReader, Write};
    let Some(team) = Team::shared() else {
        return;
    };
    let tmp = tempfile::tempdir().expect("tmp");
    let missing = tmp.path().join("never-indexed");
    let out = Command::new(env!("CARGO_BIN_EXE_knowledge"))
        .arg("--data-dir")
        .arg(&missing)
        .args([
            "--team",
            &team.url,
            "search",
            "-q",
            "mysql connection config timeout",
        ])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let items = doc["lanes"]["episodes"]["items"].as_array().expect("items");
    assert!(!items.is_empty(), "{doc:#}");
    assert!(
        items.iter().all(|i| i["session"]["machine"] == MACHINE),
        "{doc:#}"
    );
    let named = doc["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .any(|w| {
            w["code"] == "KNOWLEDGE_INDEX_NOT_READY"
                && w["message"]
                    .as_str()
                    .is_some_and(|m| m.contains(missing.to_str().expect("utf-8")))
        });
    assert!(named, "a warning names the missing local index: {doc:#}");
    assert!(!missing.exists(), "the search created the data dir");
    // An item reads back from the team.
    let id = items[0]["id"].as_str().expect("id");
    let read = Command::new(env!("CARGO_BIN_EXE_knowledge"))
        .arg("--data-dir")
        .arg(&missing)
        .args(["--team", &team.url, "get-episode", id])
        .output()
        .expect("run");
    assert_eq!(read.status.code(), Some(0), "{read:?}");
    assert!(!missing.exists(), "get-episode created the data dir");

    // The same through `mcp`.
    let mut child = Command::new(env!("CARGO_BIN_EXE_knowledge"))
        .arg("--data-dir")
        .arg(&missing)
        .args(["--team", &team.url, "mcp", "--no-watch"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start knowledge mcp");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines: Vec<String> = common::cli::mcp_handshake(1)
        .iter()
        .map(|v| v.to_string())
        .collect();
    lines.push(
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "knowledge_search",
            "arguments": {"schema": "knowledge.search/v1", "query": "mysql connection config"}}})
        .to_string(),
    );
    for l in &lines {
        writeln!(stdin, "{l}").expect("write");
    }
    stdin.flush().expect("flush");
    let stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut answer = None;
    for line in stdout.lines().map_while(Result::ok) {
        let v: serde_json::Value = serde_json::from_str(&line).expect("a JSON-RPC line");
        if v["id"] == 2 {
            answer = Some(v);
            break;
        }
    }
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    let answer = answer.expect("mcp answered the search").to_string();
    assert!(
        answer.contains(MACHINE) && answer.contains("KNOWLEDGE_INDEX_NOT_READY"),
        "{answer}"
    );
    assert!(!missing.exists(), "mcp created the data dir");
}
