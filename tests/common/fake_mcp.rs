//! Fake external MCP servers (a RAGRAF-style code source and a session-query-style episodes
//! source) that speak real MCP over stdio.
//!
//! A test binary that uses them re-executes itself with `KNOWLEDGE_FAKE_MCP=<behaviour>` and
//! its `fake_server` test (`#[test] fn fake_server() { common::fake_mcp::serve_if_asked() }`)
//! then serves MCP on its stdin/stdout (run `--quiet`, so libtest's only line before it is
//! "running 1 test", which is not JSON and is skipped by the MCP client).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use knowledge::config::McpSource;
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
            "ragraf_code" if !held(&args) => CallToolResult::structured(json!({
                "found": false, "path": args.get("path")
            })),
            "ragraf_code" => CallToolResult::structured(json!({
                "path": args.get("path"), "root": "/srv/fake/app",
                "start_line": args.get("start_line"), "total_lines": 40, "index_rev": "fake-rev-1",
                "freshness": {"stale": true, "verified_by": "fingerprint"},
                "lines": ["fn connect(url: &str) {", "    let password = \"Sup3rSecretValue9\";", "}"]
            })),
            _ => CallToolResult::error(vec![ContentBlock::text("unknown tool")]),
        }
    }
}

/// Whether the fake RAGRAF server holds the file a `ragraf_code` call asks for (the paths of
/// its search answer, under any root).
fn held(args: &Value) -> bool {
    let path = args.get("path").and_then(Value::as_str).unwrap_or("");
    ["src/db/pool.rs", "docs/mysql.md"]
        .iter()
        .any(|p| path == *p || path.ends_with(&format!("/{p}")))
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
pub fn serve_if_asked() {
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

/// A source that starts this test binary as the fake server in `mode`; it writes its pid to
/// `<tmp>/<tag>.pid`.
pub fn fake(mode: &str, tmp: &tempfile::TempDir, tag: &str) -> McpSource {
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

pub fn pid(setup: &tempfile::TempDir, tag: &str) -> Option<u32> {
    std::fs::read_to_string(setup.path().join(format!("{tag}.pid")))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Wait (bounded) until the process is gone from /proc: killed and reaped, no zombie.
pub fn gone(pid: u32) -> bool {
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
