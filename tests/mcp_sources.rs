//! External sources over MCP (issue 3): the code and episodes lanes backed by a RAGRAF-style and
//! a session-query-style server that speak real MCP over stdio (the fakes of
//! `common::fake_mcp`, run by re-executing this test binary). Every failure
//! mode — missing server, crash, hang, garbage, `found=false`, `index_rev=null`,
//! `capability=degraded`, a backend `SESSION_QUERY_*` error — is asserted through
//! `Engine::search`: that lane is degraded with the right code and the other lane still answers.
//! A hung child must be killed and reaped (its `/proc` entry gone, so no zombie).

mod common;

use std::time::{Duration, Instant};

use common::fake_mcp::{fake, gone, pid};
use knowledge::adapters::mcp::error::{McpError, McpFailure};
use knowledge::config::{McpSource, SourcesConfig};
use knowledge::engine::{Engine, EngineConfig};
use serde_json::{json, Value};

/// Not a test when run normally: with `KNOWLEDGE_FAKE_MCP` set, this process is a fake server.
#[test]
fn fake_server() {
    common::fake_mcp::serve_if_asked();
}

// ---------------------------------------------------------------------------------------------
// Helpers.

fn setup() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

/// An engine over the indexed demo world with the given external sources.
fn engine(sources: SourcesConfig, lane_timeout_ms: u64) -> Engine {
    let mut config = EngineConfig::new(&common::world::demo().data_dir);
    config.log = false;
    config.lane_timeout = Duration::from_millis(lane_timeout_ms);
    config.sources = sources;
    knowledge::open_engine(config)
}

fn code_only(src: McpSource) -> SourcesConfig {
    SourcesConfig {
        code: Some(src),
        episodes: None,
    }
}

fn episodes_only(src: McpSource) -> SourcesConfig {
    SourcesConfig {
        code: None,
        episodes: Some(src),
    }
}

fn search(engine: &Engine, query: &str) -> Value {
    let req = json!({"schema": "knowledge.search/v1", "query": query,
                     "include": ["episodes", "code"], "trace": true,
                     "budget": {"max_tokens": 20000}});
    let out = engine.search_json(&req.to_string()).to_json();
    common::schema::validate("knowledge_search.v1.schema.json", "response", &out)
        .unwrap_or_else(|e| panic!("response does not validate:\n{e}\n{out:#}"));
    out
}

fn items(resp: &Value, lane: &str) -> usize {
    resp["lanes"][lane]["items"]
        .as_array()
        .map_or(0, |a| a.len())
}

/// The codes of `warnings` + `errors` for one lane.
fn lane_codes(resp: &Value, lane: &str) -> Vec<String> {
    ["errors", "warnings"]
        .iter()
        .flat_map(|k| resp[*k].as_array().cloned().unwrap_or_default())
        .filter(|i| i["lane"] == lane)
        .filter_map(|i| i["code"].as_str().map(str::to_string))
        .collect()
}

fn assert_degraded(resp: &Value, lane: &str, code: &str, reason_has: &str) {
    let l = &resp["lanes"][lane];
    assert_eq!(l["degraded"], true, "{lane} should be degraded: {l:#}");
    let reason = l["degradation_reason"].as_str().unwrap_or("");
    assert!(
        reason.contains(reason_has),
        "{lane} reason {reason:?} should contain {reason_has:?}"
    );
    let codes = lane_codes(resp, lane);
    assert!(
        codes.iter().any(|c| c == code),
        "{lane} should carry {code}: {codes:?}"
    );
    assert_eq!(items(resp, lane), 0, "a failed lane has no items");
}

/// The other lane (built-in, over the demo world) still answers.
fn assert_answers(resp: &Value, lane: &str) {
    assert_eq!(resp["found"], true);
    assert_eq!(
        resp["lanes"][lane]["degraded"], false,
        "{:#}",
        resp["lanes"][lane]
    );
    assert!(items(resp, lane) > 0, "{lane} should still answer");
}

const QUERY: &str = "mysql connection";

// ---------------------------------------------------------------------------------------------
// Code lane (RAGRAF).

#[test]
fn ragraf_envelope_becomes_the_code_lane() {
    let s = setup();
    let e = engine(code_only(fake("normal", &s, "code")), 5000);
    let resp = search(&e, QUERY);
    let code = &resp["lanes"]["code"];
    assert_eq!(code["degraded"], false, "{code:#}");
    assert_eq!(code["source"], "fake-code");
    assert_eq!(code["index_rev"], "fake-rev-1");
    assert_eq!(code["capability"], "full");
    assert_eq!(items(&resp, "code"), 2);
    let first = &code["items"][0];
    assert_eq!(first["path"], "src/db/pool.rs");
    assert_eq!(first["start_line"], 10);
    assert_eq!(first["end_line"], 24);
    assert_eq!(first["chunk_id"], "fake-c1");
    let why: Vec<&str> = first["why"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(why.contains(&"symbol: Pool::connect"), "{why:?}");
    assert!(
        why.iter().any(|w| w.starts_with("ragraf score: 9.25")),
        "{why:?}"
    );
    // The request reached the server as `{query, limit, with_text}` (the fake echoes it in drift).
    assert_eq!(code["drift"]["args"]["query"], QUERY);
    assert!(code["drift"]["args"]["limit"].as_u64().is_some());
    assert_eq!(code["drift"]["args"]["with_text"], true);
    assert_answers(&resp, "episodes");

    // The child is reused across calls.
    let first_pid = pid(&s, "code").expect("the fake wrote its pid");
    let again = search(&e, QUERY);
    assert_eq!(items(&again, "code"), 2);
    assert_eq!(pid(&s, "code"), Some(first_pid), "the server was restarted");

    // Dropping the engine stops and reaps the server.
    drop(e);
    assert!(gone(first_pid), "the server outlived the engine");
}

#[test]
fn missing_server_names_the_command() {
    let src = McpSource {
        command: "/nonexistent/ragraf-server".into(),
        args: vec![],
        env: Default::default(),
        tool: None,
        name: None,
    };
    let e = engine(code_only(src), 2000);
    let resp = search(&e, QUERY);
    assert_degraded(
        &resp,
        "code",
        "KNOWLEDGE_SOURCE_UNAVAILABLE",
        "/nonexistent/ragraf-server",
    );
    assert_eq!(
        resp["lanes"]["code"]["source"],
        "mcp:/nonexistent/ragraf-server"
    );
    assert_answers(&resp, "episodes");
}

#[test]
fn crashing_server_degrades_and_is_restarted() {
    let s = setup();
    let e = engine(code_only(fake("crash", &s, "crash")), 5000);
    let resp = search(&e, QUERY);
    assert_degraded(&resp, "code", "KNOWLEDGE_SOURCE_UNAVAILABLE", "exited");
    assert_answers(&resp, "episodes");
    let crashed = pid(&s, "crash").expect("pid");
    assert!(gone(crashed), "the crashed child was not reaped");

    // A server that crashed once answers after its restart.
    let s2 = setup();
    let e2 = engine(code_only(fake("crash_once", &s2, "once")), 5000);
    let first = search(&e2, QUERY);
    assert_degraded(&first, "code", "KNOWLEDGE_SOURCE_UNAVAILABLE", "exited");
    let second = search(&e2, QUERY);
    assert_eq!(
        second["lanes"]["code"]["degraded"], false,
        "{:#}",
        second["lanes"]["code"]
    );
    assert_eq!(items(&second, "code"), 2);
}

#[test]
fn hung_server_is_killed_and_reaped() {
    let s = setup();
    let timeout_ms = 1500;
    let e = engine(code_only(fake("hang", &s, "hang")), timeout_ms);
    let started = Instant::now();
    let resp = search(&e, QUERY);
    let took = started.elapsed();
    assert!(
        took < Duration::from_millis(timeout_ms + 1000),
        "the search waited {took:?} for a hung lane"
    );
    assert_eq!(resp["lanes"]["code"]["degraded"], true);
    assert!(lane_codes(&resp, "code").contains(&"KNOWLEDGE_SOURCE_UNAVAILABLE".to_string()));
    assert_answers(&resp, "episodes");
    let hung = pid(&s, "hang").expect("the fake wrote its pid");
    assert!(
        gone(hung),
        "the hung child {hung} is still there (running or a zombie)"
    );

    // The next call starts a fresh server (which hangs again, and is stopped again).
    let _ = std::fs::remove_file(s.path().join("hang.pid"));
    let resp = search(&e, QUERY);
    assert_eq!(resp["lanes"]["code"]["degraded"], true);
    let second = pid(&s, "hang").expect("a new server was started");
    assert_ne!(second, hung);
    assert!(gone(second), "the second hung child is still there");
}

#[test]
fn bad_answers_degrade_with_their_code() {
    for (mode, code, reason) in [
        ("garbage", "KNOWLEDGE_SOURCE_UNAVAILABLE", "not JSON"),
        ("found_false", "KNOWLEDGE_SOURCE_UNAVAILABLE", "found=false"),
        (
            "index_rev_null",
            "KNOWLEDGE_INDEX_NOT_READY",
            "index_rev=null",
        ),
    ] {
        let s = setup();
        let e = engine(code_only(fake(mode, &s, mode)), 5000);
        let resp = search(&e, QUERY);
        assert_degraded(&resp, "code", code, reason);
        assert_eq!(resp["lanes"]["code"]["index_rev"], Value::Null, "{mode}");
        assert_answers(&resp, "episodes");
    }
}

#[test]
fn degraded_capability_is_an_answer_with_a_warning() {
    let s = setup();
    let e = engine(code_only(fake("degraded", &s, "d")), 5000);
    let resp = search(&e, QUERY);
    let code = &resp["lanes"]["code"];
    assert_eq!(code["capability"], "degraded");
    assert_eq!(code["degraded"], true);
    assert_eq!(
        code["degradation_reason"],
        "vector index missing: lexical only"
    );
    assert_eq!(
        items(&resp, "code"),
        2,
        "capability=degraded still returns its data"
    );
    assert!(lane_codes(&resp, "code").contains(&"KNOWLEDGE_LANE_DEGRADED".to_string()));
    assert_answers(&resp, "episodes");
}

// ---------------------------------------------------------------------------------------------
// Episodes lane (session query).

#[test]
fn get_episode_of_an_external_session_asks_the_external_source() {
    let s = setup();
    let e = engine(episodes_only(fake("normal", &s, "ge")), 5000);
    let err = e
        .get_episode("fake-s1", 7, 2)
        .expect_err("not in the built-in index");
    let msg = err.to_string();
    assert!(msg.contains("external source fake-ge"), "{msg}");
    assert!(msg.contains("answers searches only"), "{msg}");
    assert!(err.is_not_found());

    // Without any built-in episodes index it is still the external source that answers, not
    // "run `knowledge index`".
    let empty = tempfile::tempdir().expect("data dir");
    let mut config = EngineConfig::new(empty.path());
    config.log = false;
    config.sources = episodes_only(fake("normal", &s, "ge2"));
    let bare = knowledge::open_engine(config);
    let msg = bare
        .get_episode("fake-s1", 7, 2)
        .expect_err("no reader")
        .to_string();
    assert!(msg.contains("external source fake-ge2"), "{msg}");
}

#[test]
fn get_episode_reads_the_built_in_index_first_with_an_external_source() {
    let builtin = common::world::demo().engine();
    let resp = builtin
        .search_json(
            &json!({"schema": "knowledge.search/v1", "query": QUERY,
        "include": ["episodes"]})
            .to_string(),
        )
        .to_json();
    let item = &resp["lanes"]["episodes"]["items"][0];
    let (sid, seq) = (
        item["session_id"].as_str().expect("sid"),
        item["seq"].as_u64().expect("seq"),
    );
    let s = setup();
    let e = engine(episodes_only(fake("normal", &s, "gb")), 5000);
    let ep = e.get_episode(sid, seq, 1).expect("in the built-in index");
    assert_eq!(ep.session_id, sid);
    assert!(ep.events.iter().any(|ev| ev.seq == seq));
}

#[test]
fn an_external_episodes_source_is_capped_at_three_events_a_session() {
    let s = setup();
    let e = engine(episodes_only(fake("chatty", &s, "chatty")), 5000);
    let resp = search(&e, QUERY);
    let items = resp["lanes"]["episodes"]["items"]
        .as_array()
        .unwrap()
        .clone();
    let long = items
        .iter()
        .filter(|i| i["session_id"] == "fake-long")
        .count();
    assert_eq!(long, 3, "{items:#?}");
    assert!(items.iter().any(|i| i["session_id"] == "fake-s2"));
}

#[test]
fn session_query_answer_becomes_the_episodes_lane() {
    let s = setup();
    let e = engine(episodes_only(fake("normal", &s, "sq")), 5000);
    let resp = search(&e, QUERY);
    let ep = &resp["lanes"]["episodes"];
    assert_eq!(ep["degraded"], false, "{ep:#}");
    assert_eq!(ep["source"], "fake-sq");
    assert_eq!(ep["index_rev"], "sq-rev-9");
    assert_eq!(ep["counts"]["sessions"], 2);
    assert_eq!(ep["counts"]["indexed_docs"], 40);
    let ids: Vec<&str> = ep["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["id"].as_str())
        .collect();
    assert!(
        ids.contains(&"ep:fake-s1:7") && ids.contains(&"ep:fake-s2:3"),
        "{ids:?}"
    );
    let s1 = ep["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["id"] == "ep:fake-s1:7")
        .unwrap();
    assert_eq!(s1["session"]["cwd"], "/srv/fake/app");
    assert_eq!(s1["session"]["created_at"], "2025-03-01T10:00:00.000Z");
    assert_eq!(s1["session"]["agent_preset"], "coder");
    assert_answers(&resp, "code");

    // The workspace filter is enforced on the answer, at a path boundary.
    let req = json!({"schema": "knowledge.search/v1", "query": QUERY, "include": ["episodes"],
                     "filters": {"workspaces": ["/srv/fake"]}});
    let out = e.search_json(&req.to_string()).to_json();
    let ids: Vec<&str> = out["lanes"]["episodes"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["id"].as_str())
        .collect();
    assert_eq!(ids, vec!["ep:fake-s1:7"]);
}

#[test]
fn backend_errors_degrade_episodes_only() {
    for (mode, code) in [
        ("disabled", "SESSION_QUERY_SEARCH_DISABLED"),
        ("index_failed", "SESSION_QUERY_INDEX_FAILED"),
    ] {
        let s = setup();
        let e = engine(episodes_only(fake(mode, &s, mode)), 5000);
        let resp = search(&e, QUERY);
        assert_degraded(&resp, "episodes", "KNOWLEDGE_SOURCE_UNAVAILABLE", code);
        assert_answers(&resp, "code");
    }
}

#[test]
fn episodes_failure_modes_leave_code_answering() {
    for (mode, reason) in [("garbage", "not JSON"), ("crash", "exited")] {
        let s = setup();
        let e = engine(episodes_only(fake(mode, &s, mode)), 5000);
        let resp = search(&e, QUERY);
        assert_degraded(&resp, "episodes", "KNOWLEDGE_SOURCE_UNAVAILABLE", reason);
        assert_answers(&resp, "code");
    }
    let s = setup();
    let e = engine(episodes_only(fake("hang", &s, "eh")), 1500);
    let resp = search(&e, QUERY);
    assert_eq!(resp["lanes"]["episodes"]["degraded"], true);
    assert_answers(&resp, "code");
    let hung = pid(&s, "eh").expect("pid");
    assert!(gone(hung), "the hung session-query child is still there");
}

#[test]
fn both_sources_failing_is_no_source() {
    let s = setup();
    let sources = SourcesConfig {
        code: Some(fake("found_false", &s, "c")),
        episodes: Some(fake("disabled", &s, "e")),
    };
    let e = engine(sources, 5000);
    let resp = search(&e, QUERY);
    assert_eq!(resp["found"], false);
    let codes: Vec<&str> = resp["errors"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["code"].as_str())
        .collect();
    assert!(codes.contains(&"KNOWLEDGE_NO_SOURCE"), "{codes:?}");
}

#[test]
fn external_code_is_read_through_the_code_lane_after_the_index() {
    let s = setup();
    let e = engine(code_only(fake("normal", &s, "rc")), 5000);
    // Not in the built-in index: the external source's `ragraf_code` answers, redacted again.
    let lines = e
        .read_code("src/db/pool.rs", 10, Some(12), None)
        .expect("ragraf_code answers");
    assert_eq!(lines.read_from, "external");
    assert_eq!((lines.start_line, lines.end_line), (10, 12));
    assert_eq!(lines.root, "/srv/fake/app");
    assert!(lines.freshness.stale, "the server's freshness is kept");
    assert!(lines.lines[0].contains("fn connect"), "{:?}", lines.lines);
    assert!(
        lines.lines.iter().all(|l| !l.contains("Sup3rSecretValue9")),
        "{:?}",
        lines.lines
    );
    assert!(lines.redacted >= 1);
    // In the built-in index: read from there, the external source is not asked for it.
    let indexed = e
        .read_code("src/Config.php", 1, Some(5), None)
        .expect("indexed file");
    assert_ne!(indexed.read_from, "external");
    assert!(indexed.root.ends_with("repos/billing"), "{}", indexed.root);
    let p = pid(&s, "rc").expect("the fake wrote its pid");
    drop(e);
    assert!(gone(p), "the RAGRAF child outlived the engine");
}

#[test]
fn a_failing_external_code_read_says_why_and_reads_nothing_outside_the_roots() {
    let s = setup();
    let e = engine(code_only(fake("crash", &s, "rcx")), 5000);
    let err = e
        .read_code("src/db/pool.rs", 1, None, None)
        .expect_err("the server crashed");
    let msg = err.to_string();
    assert!(msg.contains("exited"), "{msg}");
    assert!(msg.contains("src/db/pool.rs"), "{msg}");
    // The source's failure is kept under the read's: the server exited during the call.
    let mcp = std::iter::successors(Some(&err as &dyn std::error::Error), |e| e.source())
        .find_map(|e| e.downcast_ref::<McpFailure>());
    assert!(
        matches!(
            mcp,
            Some(McpFailure {
                why: McpError::Exited(_),
                ..
            })
        ),
        "{msg}"
    );
}
