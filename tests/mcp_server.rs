//! `knowledge mcp` (issue 7) through a real MCP client: rmcp's client over a child process running
//! the built binary on the indexed demo world.
//!
//! The client lists the tools, calls each with valid and invalid input and validates the results
//! against the contract schemas; a degraded lane is a normal result with its warnings; snippets
//! and texts come back delimited as untrusted content; stdout carries nothing but JSON-RPC, even
//! when the client sends garbage; and a request storm (hundreds of calls, some concurrent) leaves
//! the server responsive with stable memory (VmRSS from /proc before and after).

mod common;

use std::path::Path;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};

const SEARCH_SCHEMA: &str = "knowledge_search.v1.schema.json";
const DISPATCH_SCHEMA: &str = "knowledge_dispatch.v1.schema.json";

type Client = RunningService<RoleClient, ()>;

/// A generous lane timeout, so that a slow debug build under a storm still answers every lane.
fn configure(data_dir: &Path, extra: &str) {
    let text = format!("[lanes]\ntimeout_ms = 10000\n{extra}");
    std::fs::write(data_dir.join("config.toml"), text).expect("write config.toml");
}

async fn start(data_dir: &Path, allow_commit: bool) -> (Client, u32) {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_knowledge"));
    cmd.arg("mcp").arg("--data-dir").arg(data_dir);
    if allow_commit {
        cmd.arg("--allow-commit");
    }
    let transport = TokioChildProcess::new(cmd).expect("start knowledge mcp");
    let pid = transport.id().expect("server pid");
    let client = ().serve(transport).await.expect("MCP handshake");
    (client, pid)
}

async fn call(client: &Client, tool: &str, args: Value) -> CallToolResult {
    let args = args.as_object().cloned().unwrap_or_default();
    client
        .peer()
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("{tool}: protocol error {e}"))
}

fn text_of(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

fn structured(r: &CallToolResult) -> Value {
    r.structured_content.clone().unwrap_or(Value::Null)
}

fn ok(r: &CallToolResult) -> Value {
    assert_ne!(
        r.is_error,
        Some(true),
        "unexpected tool error: {}",
        text_of(r)
    );
    structured(r)
}

/// A tool error carrying `code` for `field`.
fn refused(r: &CallToolResult, code: &str, field: &str) -> Value {
    assert_eq!(
        r.is_error,
        Some(true),
        "expected a tool error: {}",
        text_of(r)
    );
    let doc = structured(r);
    let hit = doc["errors"]
        .as_array()
        .is_some_and(|e| e.iter().any(|i| i["code"] == code && i["field"] == field));
    assert!(hit, "expected {code} on `{field}`: {doc:#}");
    assert!(text_of(r).contains(code), "the text names the code");
    doc
}

fn valid(file: &str, def: &str, doc: &Value) {
    common::schema::validate(file, def, doc)
        .unwrap_or_else(|e| panic!("{file}#{def} does not validate:\n{e}\n{doc:#}"));
}

fn search_req(query: &str) -> Value {
    json!({"schema": "knowledge.search/v1", "query": query, "budget": {"max_tokens": 20000}})
}

/// Untrusted text is delimited and labelled, and every block is closed exactly once.
fn assert_untrusted_wrapped(text: &str) {
    assert!(
        text.contains("untrusted_content:"),
        "the note is missing:\n{text}"
    );
    let open = text.matches("<untrusted_content source=").count();
    let close = text.matches("</untrusted_content>").count();
    assert!(open > 0, "no untrusted block:\n{text}");
    assert_eq!(open, close, "unbalanced untrusted blocks:\n{text}");
}

fn vm_rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn tools_answer_valid_and_invalid_input() {
    let world = common::world::fresh_demo();
    configure(&world.data_dir, "");
    let (client, _pid) = start(&world.data_dir, false).await;

    // The tool list and its self-contained input schemas.
    let tools = client.peer().list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "knowledge_search",
            "knowledge_dispatch",
            "knowledge_get_episode",
            "knowledge_code"
        ]
    );
    for t in &tools {
        let schema = Value::Object((*t.input_schema).clone());
        assert_eq!(schema["type"], "object", "{}", t.name);
        assert!(
            !schema.to_string().contains("\"$ref\""),
            "{} schema has a $ref",
            t.name
        );
        jsonschema::validator_for(&schema)
            .unwrap_or_else(|e| panic!("{} input schema does not compile: {e}", t.name));
    }
    let search_schema = Value::Object((*tools[0].input_schema).clone());
    let v = jsonschema::validator_for(&search_schema).expect("compiles");
    assert!(v.is_valid(&search_req("mysql")));
    assert!(!v.is_valid(&json!({"query": "mysql"})));
    let dispatch = tools[1].description.as_deref().unwrap_or("");
    assert!(dispatch.contains("NOT allowed"), "{dispatch}");

    // knowledge_search: the response as structured content plus a rendering.
    let r = call(
        &client,
        "knowledge_search",
        search_req("кто чинил доступ к MySQL"),
    )
    .await;
    let resp = ok(&r);
    valid(SEARCH_SCHEMA, "response", &resp);
    assert_eq!(resp["found"], true);
    let text = text_of(&r);
    assert_untrusted_wrapped(&text);
    assert!(r
        .meta
        .as_ref()
        .is_some_and(|m| m.contains_key("knowledge/untrusted_content")));
    let episode_id = resp["lanes"]["episodes"]["items"][0]["id"]
        .as_str()
        .expect("an episode")
        .to_string();

    for (args, field) in [
        (json!({"query": "mysql"}), "schema"),
        (
            json!({"schema": "knowledge.search/v1", "query": ""}),
            "query",
        ),
        (
            json!({"schema": "knowledge.search/v1", "query": "x", "limit": 0}),
            "limit",
        ),
        (
            json!({"schema": "knowledge.search/v1", "query": "x", "mode": "bogus"}),
            "mode",
        ),
        (
            json!({"schema": "knowledge.search/v2", "query": "x"}),
            "schema",
        ),
    ] {
        let r = call(&client, "knowledge_search", args).await;
        let doc = refused(&r, "KNOWLEDGE_INVALID_REQUEST", field);
        valid(SEARCH_SCHEMA, "error_response", &doc);
    }

    // knowledge_get_episode.
    let r = call(
        &client,
        "knowledge_get_episode",
        json!({"id": episode_id, "context": 1}),
    )
    .await;
    let ep = ok(&r);
    assert_eq!(ep["id"], episode_id.as_str());
    let events = ep["events"].as_array().expect("events");
    assert!(!events.is_empty() && events.len() <= 3);
    assert!(events.iter().any(|e| e["id"] == episode_id.as_str()));
    assert_untrusted_wrapped(&text_of(&r));
    refused(
        &call(&client, "knowledge_get_episode", json!({})).await,
        "KNOWLEDGE_INVALID_REQUEST",
        "id",
    );
    refused(
        &call(&client, "knowledge_get_episode", json!({"id": "not an id"})).await,
        "KNOWLEDGE_INVALID_REQUEST",
        "id",
    );
    refused(
        &call(
            &client,
            "knowledge_get_episode",
            json!({"id": "ep:no-such-session:1"}),
        )
        .await,
        "KNOWLEDGE_INVALID_REQUEST",
        "id",
    );
    refused(
        &call(
            &client,
            "knowledge_get_episode",
            json!({"id": episode_id, "context": 99}),
        )
        .await,
        "KNOWLEDGE_INVALID_REQUEST",
        "context",
    );

    // knowledge_code: the lines of a code item of a find_code search.
    let r = call(
        &client,
        "knowledge_search",
        json!({"schema": "knowledge.search/v1", "query": "где функция подключения к mysql",
               "include": ["code"], "budget": {"max_tokens": 20000}}),
    )
    .await;
    let resp = ok(&r);
    valid(SEARCH_SCHEMA, "response", &resp);
    let item = resp["lanes"]["code"]["items"][0].clone();
    assert!(item.is_object(), "a code item: {:#}", resp["lanes"]["code"]);
    let path = item["path"].as_str().expect("path");
    let args = json!({"path": item["root"].as_str().map_or(path.to_string(), |root| format!("{root}/{path}")),
                      "start_line": item["start_line"], "end_line": item["end_line"]});
    let r = call(&client, "knowledge_code", args).await;
    let lines = ok(&r);
    assert_eq!(lines["start_line"], item["start_line"]);
    assert!(!lines["lines"].as_array().expect("lines").is_empty());
    assert!(lines["freshness"]["stale"].is_boolean());
    assert_untrusted_wrapped(&text_of(&r));
    for (args, field) in [
        (json!({"path": path}), "start_line"),
        (json!({"path": "", "start_line": 1}), "path"),
        (
            json!({"path": path, "start_line": 5, "end_line": 2}),
            "end_line",
        ),
        (json!({"path": "no/such/file.rs", "start_line": 1}), "path"),
        (json!({"path": "/etc/passwd", "start_line": 1}), "path"),
    ] {
        refused(
            &call(&client, "knowledge_code", args).await,
            "KNOWLEDGE_INVALID_REQUEST",
            field,
        );
    }

    // knowledge_dispatch: a dry run; a commit is refused on a server without --allow-commit.
    let task = json!({"schema": "knowledge.dispatch/v1",
                      "task": {"text": "clean-bom-crlf: проверить BOM и CRLF", "acceptance": ["no BOM"]}});
    let r = call(&client, "knowledge_dispatch", task.clone()).await;
    let d = ok(&r);
    valid(DISPATCH_SCHEMA, "response", &d);
    assert_eq!(d["mode"], "dry_run");
    assert!(text_of(&r).contains("commit not allowed"));
    let mut commit = task.clone();
    commit["dry_run"] = json!(false);
    let doc = refused(
        &call(&client, "knowledge_dispatch", commit).await,
        "KNOWLEDGE_INVALID_REQUEST",
        "dry_run",
    );
    valid(DISPATCH_SCHEMA, "error_response", &doc);
    let doc = refused(
        &call(
            &client,
            "knowledge_dispatch",
            json!({"schema": "knowledge.dispatch/v1"}),
        )
        .await,
        "KNOWLEDGE_INVALID_REQUEST",
        "task",
    );
    valid(DISPATCH_SCHEMA, "error_response", &doc);

    // An unknown tool is a protocol error, and the server carries on.
    let unknown = client
        .peer()
        .call_tool(CallToolRequestParams::new("knowledge_nope"))
        .await;
    assert!(unknown.is_err());
    ok(&call(&client, "knowledge_search", search_req("mysql")).await);
    let _ = client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn commit_is_allowed_only_with_the_flag() {
    let world = common::world::fresh_demo();
    configure(&world.data_dir, "");
    let (client, _pid) = start(&world.data_dir, true).await;
    let tools = client.peer().list_all_tools().await.expect("tools/list");
    let d = tools
        .iter()
        .find(|t| t.name == "knowledge_dispatch")
        .expect("dispatch tool");
    assert!(d
        .description
        .as_deref()
        .unwrap_or("")
        .contains("IS ALLOWED"));

    let req = json!({"schema": "knowledge.dispatch/v1", "dry_run": false,
                     "task": {"text": "clean-bom-crlf: проверить BOM и CRLF"}});
    let r = call(&client, "knowledge_dispatch", req.clone()).await;
    let first = ok(&r);
    valid(DISPATCH_SCHEMA, "response", &first);
    assert_eq!(first["mode"], "commit");
    let id = first["assignment"]["assignment_id"]
        .as_str()
        .expect("assignment")
        .to_string();
    // A repeated commit is idempotent (KD-2).
    let again = ok(&call(&client, "knowledge_dispatch", req).await);
    assert_eq!(again["assignment"]["assignment_id"], id.as_str());
    let _ = client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_degraded_lane_is_a_normal_result_with_warnings() {
    let world = common::world::fresh_demo();
    configure(
        &world.data_dir,
        "[sources.code]\ncommand = \"/nonexistent/ragraf-server\"\n",
    );
    let (client, _pid) = start(&world.data_dir, false).await;
    let r = call(&client, "knowledge_search", search_req("mysql connection")).await;
    let resp = ok(&r);
    valid(SEARCH_SCHEMA, "response", &resp);
    assert_eq!(resp["lanes"]["code"]["degraded"], true);
    assert!(resp["lanes"]["episodes"]["items"]
        .as_array()
        .is_some_and(|a| !a.is_empty()));
    let codes: Vec<&str> = resp["errors"]
        .as_array()
        .into_iter()
        .chain(resp["warnings"].as_array())
        .flatten()
        .filter(|i| i["lane"] == "code")
        .filter_map(|i| i["code"].as_str())
        .collect();
    assert!(codes.contains(&"KNOWLEDGE_SOURCE_UNAVAILABLE"), "{codes:?}");
    let text = text_of(&r);
    assert!(
        text.contains("DEGRADED") && text.contains("/nonexistent/ragraf-server"),
        "{text}"
    );
    let _ = client.cancel().await;
}

#[test]
fn stdout_is_protocol_only_even_with_garbage_input() {
    use std::io::{Read, Write};
    let world = common::world::demo();
    let mut child = common::cli::raw_mcp_server(&world.data_dir);
    let rest = [
        "this is not json at all".to_string(),
        "{\"jsonrpc\": \"2.0\", \"id\": 2, \"method\": ".to_string(),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
               "params": {"name": "knowledge_search", "arguments": 17}})
        .to_string(),
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
            "name": "knowledge_search",
            "arguments": {"schema": "knowledge.search/v1", "query": "\u{1b}]0;x\u{7}mysql\u{0}"}}})
        .to_string(),
        "x".repeat(100_000),
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
            "name": "knowledge_code", "arguments": {"path": ["x"], "start_line": -3}}})
        .to_string(),
        json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {
            "name": "knowledge_search",
            "arguments": {"schema": "knowledge.search/v1", "query": "mysql"}}})
        .to_string(),
    ];
    let lines: Vec<String> = common::cli::mcp_handshake(1)
        .iter()
        .map(|m| m.to_string())
        .chain(rest)
        .collect();
    {
        let mut stdin = child.stdin.take().expect("stdin");
        for l in &lines {
            let _ = writeln!(stdin, "{l}");
        }
        let _ = stdin.flush();
        // Give the server time to answer before the pipe closes.
        std::thread::sleep(Duration::from_secs(3));
    }
    let mut out = String::new();
    let _ = child
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut out);
    let status = child.wait().expect("exit");
    assert!(status.success(), "the server exited with {status}");
    let mut ids = Vec::new();
    for line in out.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("stdout carries a non-JSON line ({e}): {line}"));
        assert_eq!(v["jsonrpc"], "2.0", "{line}");
        if let Some(id) = v["id"].as_u64() {
            ids.push(id);
        }
    }
    for id in [1, 4, 5, 6] {
        assert!(
            ids.contains(&id),
            "no answer to request {id}: {ids:?}\n{out}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_request_storm_leaves_the_server_responsive_with_stable_memory() {
    let world = common::world::fresh_demo();
    configure(&world.data_dir, "");
    let (client, pid) = start(&world.data_dir, false).await;
    let first = ok(&call(&client, "knowledge_search", search_req("mysql")).await);
    let episode = first["lanes"]["episodes"]["items"][0]["id"].clone();
    let queries = [
        "mysql",
        "кто чинил доступ к MySQL",
        "invoice rounding",
        "deploy checklist",
        "BOM CRLF",
    ];

    let round = |n: usize| {
        let peer = client.peer().clone();
        let episode = episode.clone();
        async move {
            let mut tasks = Vec::new();
            for i in 0..n {
                let peer = peer.clone();
                let (tool, args) = match i % 5 {
                    0 | 1 => ("knowledge_search", search_req(queries[i % queries.len()])),
                    2 => (
                        "knowledge_search",
                        json!({"schema": "knowledge.search/v1", "query": ""}),
                    ),
                    3 => (
                        "knowledge_get_episode",
                        json!({"id": episode, "context": 2}),
                    ),
                    _ => ("knowledge_get_episode", json!({"id": 42})),
                };
                let args = args.as_object().cloned().unwrap_or_default();
                tasks.push(tokio::spawn(async move {
                    peer.call_tool(CallToolRequestParams::new(tool).with_arguments(args))
                        .await
                        .is_ok()
                }));
                // Some calls concurrent (batches of 20 in flight), the rest back to back.
                if tasks.len() == 20 {
                    for t in tasks.drain(..) {
                        assert!(t.await.unwrap_or(false), "a call failed at protocol level");
                    }
                }
            }
            for t in tasks {
                assert!(t.await.unwrap_or(false), "a call failed at protocol level");
            }
        }
    };

    round(100).await; // warm-up: caches, pools, allocator arenas
    let before = vm_rss_kb(pid);
    round(300).await;
    let mid = vm_rss_kb(pid);
    round(300).await;
    let after = vm_rss_kb(pid);
    assert!(before > 0 && after > 0, "VmRSS unreadable");
    eprintln!("VmRSS kB: before {before}, after 300 calls {mid}, after 600 calls {after}");
    assert!(
        after <= before + 48 * 1024,
        "memory grew from {before} kB to {after} kB over 600 calls"
    );
    assert!(
        after <= mid + 24 * 1024,
        "memory keeps growing: {mid} kB → {after} kB over the last 300 calls"
    );

    // Still responsive.
    let started = std::time::Instant::now();
    let tools = client
        .peer()
        .list_all_tools()
        .await
        .expect("tools/list after the storm");
    assert_eq!(tools.len(), 4);
    ok(&call(&client, "knowledge_search", search_req("mysql")).await);
    assert!(started.elapsed() < Duration::from_secs(10));
    let _ = client.cancel().await;
}
