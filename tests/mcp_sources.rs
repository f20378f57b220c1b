//! External sources over MCP (issue 3): the code and episodes lanes backed by a RAGRAF-style and
//! a session-query-style server that speak real MCP over stdio.
//!
//! The fake servers are written here: this test binary re-executes itself with
//! `KNOWLEDGE_FAKE_MCP=<behaviour>` and the `fake_server` test then serves MCP on its stdin/stdout
//! (run `--quiet`, so libtest's only line before it is "running 1 test", which is not JSON and is
//! skipped by the MCP client). Every failure
//! mode — missing server, crash, hang, garbage, `found=false`, `index_rev=null`,
//! `capability=degraded`, a backend `SESSION_QUERY_*` error — is asserted through
//! `Engine::search`: that lane is degraded with the right code and the other lane still answers.
//! A hung child must be killed and reaped (its `/proc` entry gone, so no zombie).

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use knowledge::config::{McpSource, SourcesConfig};
use knowledge::engine::{Engine, EngineConfig};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Value};

const MODE_ENV: &str = "KNOWLEDGE_FAKE_MCP";
const PID_ENV: &str = "KNOWLEDGE_FAKE_PID_FILE";
const MARKER_ENV: &str = "KNOWLEDGE_FAKE_MARKER";

// ---------------------------------------------------------------------------------------------
// The fake servers.

struct Fake {
    mode: String,
}

fn tool(name: &'static str) -> Tool {
    let schema = json!({"type": "object", "properties": {"query": {"type": "string"}}});
    Tool::new(
        name,
        "fake",
        schema.as_object().cloned().unwrap_or_default(),
    )
}

fn text(t: &str) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(t.to_string())])
}

impl Fake {
    fn envelope(&self, args: &Value) -> Value {
        let items = json!([
            {"chunk_id": "fake-c1", "path": "src/db/pool.rs", "start_line": 10, "end_line": 24,
             "source_kind": "symbol", "symbol": "Pool::connect", "score": 9.25,
             "why": ["lex: mysql", "symbol: Pool::connect"], "provenance": "stated",
             "snippet": "fn connect(url: &str) -> MysqlConnection { /* retry */ }"},
            {"chunk_id": "fake-c2", "path": "docs/mysql.md", "start_line": 1, "end_line": 8,
             "source_kind": "doc", "score": 3.5, "why": ["lex: mysql"],
             "snippet": "# MySQL connection notes"}
        ]);
        let mut env = json!({
            "index_rev": "fake-rev-1", "capability": "full", "found": true,
            "drift": {"args": args},
            "freshness": {"stale": false, "verified_by": "fingerprint"},
            "items": items
        });
        match self.mode.as_str() {
            "found_false" => {
                env["found"] = json!(false);
                env["items"] = json!([]);
                env["reason"] = json!("no repository is indexed");
            }
            "index_rev_null" => {
                env["index_rev"] = Value::Null;
                env["items"] = json!([]);
            }
            "degraded" => {
                env["capability"] = json!("degraded");
                env["capability_reason"] = json!("vector index missing: lexical only");
            }
            _ => {}
        }
        env
    }

    fn sessions(&self) -> Value {
        if self.mode == "chatty" {
            // One long session answering with many events: the engine caps it (contract §7).
            let matches: Vec<Value> = (1..=6)
                .map(|seq| {
                    json!({"header": {"id": "fake-long", "cwd": "/srv/fake/app"},
                    "live": false, "persisted": true,
                    "bestMatch": {"sessionId": "fake-long", "seq": seq, "type": "assistant",
                                  "time": "2025-03-01T10:05:00Z", "surface": "current",
                                  "snippet": format!("mysql step {seq}")}})
                })
                .chain(std::iter::once(
                    json!({"header": {"id": "fake-s2", "cwd": "/srv/fake/app"},
                    "live": false, "persisted": true,
                    "bestMatch": {"sessionId": "fake-s2", "seq": 1, "type": "user",
                                  "time": "2025-03-01T10:05:00Z", "surface": "current",
                                  "snippet": "mysql is down"}}),
                ))
                .collect();
            return json!({"index_rev": "sq-rev-9", "coverage": {"sessions": 2, "indexed_docs": 7},
                          "matches": matches});
        }
        json!({
            "index_rev": "sq-rev-9",
            "coverage": {"sessions": 2, "indexed_docs": 40},
            "matches": [
                {"header": {"id": "fake-s1", "cwd": "/srv/fake/app", "createdAt": 1740823200000i64,
                            "title": "fix mysql pool", "agentPreset": "coder"},
                 "live": false, "persisted": true,
                 "bestMatch": {"sessionId": "fake-s1", "seq": 7, "type": "assistant",
                               "time": "2025-03-01T10:05:00Z", "surface": "current",
                               "snippet": "restarted the mysql connection pool"}},
                {"header": {"id": "fake-s2", "cwd": "/srv/elsewhere"}, "live": true, "persisted": true,
                 "bestMatch": {"sessionId": "fake-s2", "seq": 3, "type": "user",
                               "time": 1740823500000i64, "surface": "log-only",
                               "snippet": "mysql is down again"}}
            ]
        })
    }

    async fn answer(&self, name: &str, args: Value) -> CallToolResult {
        match self.mode.as_str() {
            "crash" => std::process::exit(3),
            "crash_once" => {
                if let Ok(marker) = std::env::var(MARKER_ENV) {
                    if !Path::new(&marker).exists() {
                        let _ = std::fs::write(&marker, "crashed");
                        std::process::exit(3);
                    }
                }
            }
            "hang" => {
                tokio::time::sleep(Duration::from_secs(3600)).await;
            }
            "garbage" => return text("<<< this is not json {"),
            "disabled" => {
                return CallToolResult::error(vec![ContentBlock::text(
                    "SESSION_QUERY_SEARCH_DISABLED: session search is disabled (openAt: never)",
                )])
            }
            "index_failed" => {
                return CallToolResult::structured(json!({
                    "error": {"code": "SESSION_QUERY_INDEX_FAILED", "message": "fts build failed"}
                }))
            }
            _ => {}
        }
        match name {
            "ragraf_search" => CallToolResult::structured(self.envelope(&args)),
            "session_query" => text(&self.sessions().to_string()),
            "ragraf_code" => CallToolResult::structured(json!({
                "path": args.get("path"), "start_line": args.get("start_line"),
                "lines": ["fn connect() {}"]
            })),
            _ => CallToolResult::error(vec![ContentBlock::text("unknown tool")]),
        }
    }
}

impl ServerHandler for Fake {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![
            tool("ragraf_search"),
            tool("ragraf_code"),
            tool("session_query"),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = Value::Object(request.arguments.unwrap_or_default());
        Ok(self.answer(&request.name, args).await.into())
    }
}

/// Not a test when run normally: with `KNOWLEDGE_FAKE_MCP` set, this process is a fake server.
#[test]
fn fake_server() {
    let Ok(mode) = std::env::var(MODE_ENV) else {
        return;
    };
    if let Ok(pid_file) = std::env::var(PID_ENV) {
        let _ = std::fs::write(pid_file, std::process::id().to_string());
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let fake = Fake { mode };
        if let Ok(service) = fake.serve(rmcp::transport::stdio()).await {
            let _ = service.waiting().await;
        }
    });
    std::process::exit(0);
}

// ---------------------------------------------------------------------------------------------
// Helpers.

fn setup() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

/// A source that starts this test binary as the fake server in `mode`; it writes its pid to
/// `<tmp>/<tag>.pid`.
fn fake(mode: &str, tmp: &tempfile::TempDir, tag: &str) -> McpSource {
    let exe = std::env::current_exe().expect("test exe");
    let file = |ext: &str| {
        tmp.path()
            .join(format!("{tag}.{ext}"))
            .display()
            .to_string()
    };
    let env = [
        (MODE_ENV, mode.to_string()),
        (PID_ENV, file("pid")),
        (MARKER_ENV, file("marker")),
    ]
    .map(|(k, v)| (k.to_string(), v))
    .into_iter()
    .collect();
    let args = "--exact fake_server --quiet --nocapture --test-threads 1";
    McpSource {
        command: exe.display().to_string(),
        args: args.split(' ').map(String::from).collect(),
        env,
        tool: None,
        name: Some(format!("fake-{tag}")),
    }
}

fn pid(setup: &tempfile::TempDir, tag: &str) -> Option<u32> {
    std::fs::read_to_string(setup.path().join(format!("{tag}.pid")))
        .ok()?
        .trim()
        .parse()
        .ok()
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

/// Wait (bounded) until the process is gone from /proc: killed and reaped, no zombie.
fn gone(pid: u32) -> bool {
    let proc_dir = PathBuf::from(format!("/proc/{pid}"));
    let until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < until {
        if !proc_dir.exists() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
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
fn get_episode_of_an_external_session_says_where_the_session_lives() {
    let s = setup();
    let e = engine(episodes_only(fake("normal", &s, "ge")), 5000);
    let err = e
        .get_episode("fake-s1", 7, 2)
        .expect_err("not in the built-in index");
    let msg = err.to_string();
    assert!(msg.contains("external source fake-ge"), "{msg}");
    assert!(err.is_not_found());
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
fn external_code_reads_lines_through_ragraf_code() {
    let s = setup();
    let src = knowledge::adapters::mcp::McpCodeSource::new(
        &fake("normal", &s, "rc"),
        Duration::from_secs(5),
    );
    let doc = src
        .read_code("src/db/pool.rs", 10, Some(12))
        .expect("ragraf_code answers");
    assert_eq!(doc["path"], "src/db/pool.rs");
    assert_eq!(doc["start_line"], 10);
    let p = src.client().pid().expect("running");
    drop(src);
    assert!(gone(p));
}
