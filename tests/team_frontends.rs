//! The front ends on a team index, as a person runs them (issue 20): `knowledge --team URL mcp`
//! through a real MCP client (rmcp over the child's stdio), and the explorer `knowledge --team
//! URL` in a real terminal (tmux). The lead's data dir holds no index, so what they show comes
//! from the team's PostgreSQL (`common::team_world`). Skipped with a visible message where
//! PostgreSQL (or, for the explorer, tmux) is not installed, and failed there instead with
//! `KNOWLEDGE_REQUIRE_POSTGRES` / `KNOWLEDGE_REQUIRE_TMUX` set, as `.ci/run` sets them.

mod common;

use std::time::Duration;

use common::team_world::{Team, MACHINE};
use common::tmux::{shell_quote, Tmux};
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use rmcp::ServiceExt;
use serde_json::{json, Value};

#[test]
fn mcp_with_a_team_answers_from_the_team_index_naming_each_machine() {
    // The world is pushed before the client's runtime starts (the push is a blocking client).
    let Some(team) = Team::shared() else { return };
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(mcp_answers_from(team));
}

async fn mcp_answers_from(team: &Team) {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_knowledge"));
    cmd.arg("--data-dir")
        .arg(team.lead.path())
        .args(["--team", &team.url, "mcp", "--no-watch"]);
    let client =
        ().serve(TokioChildProcess::new(cmd).expect("start knowledge mcp"))
            .await
            .expect("MCP handshake");
    let args = json!({"schema": "knowledge.search/v1", "query": "кто чинил доступ к MySQL",
                      "budget": {"max_tokens": 20000}});
    let r = client
        .peer()
        .call_tool(
            CallToolRequestParams::new("knowledge_search".to_string())
                .with_arguments(args.as_object().cloned().unwrap_or_default()),
        )
        .await
        .expect("tools/call");
    assert_ne!(r.is_error, Some(true), "{r:?}");
    let doc = r.structured_content.clone().unwrap_or(Value::Null);
    common::schema::validate("knowledge_search.v1.schema.json", "response", &doc)
        .unwrap_or_else(|e| panic!("{e}\n{doc:#}"));
    let items = doc["lanes"]["episodes"]["items"].as_array().expect("items");
    assert!(!items.is_empty(), "{doc:#}");
    assert!(
        items.iter().all(|i| i["session"]["machine"] == MACHINE),
        "{doc:#}"
    );
    // The event behind an item reads back through the same server, from the team.
    let id = items[0]["id"].as_str().expect("id").to_string();
    let r = client
        .peer()
        .call_tool(
            CallToolRequestParams::new("knowledge_get_episode".to_string()).with_arguments(
                json!({"id": id, "context": 1})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            ),
        )
        .await
        .expect("tools/call");
    assert_ne!(r.is_error, Some(true), "{r:?}");
    let _ = client.cancel().await;
}

#[test]
fn the_explorer_with_a_team_answers_from_the_team_index() {
    if !Tmux::installed() {
        return;
    }
    let Some(team) = Team::shared() else { return };
    let cmd = format!(
        "{} --data-dir {} --team {} --no-watch",
        env!("CARGO_BIN_EXE_knowledge"),
        shell_quote(&team.lead.path().display().to_string()),
        shell_quote(&team.url)
    );
    // Generous: under a loaded CI machine the first team query (connect, plan, search) is slow.
    let tmux = Tmux::start("team", &cmd, Duration::from_secs(90));
    tmux.wait_for("the query box", |s| s.contains("knowledge ·"));
    tmux.type_text("кто чинил доступ к MySQL");
    // The lead's data dir holds no session: the demo world's session comes from the team.
    let screen = tmux.wait_for("the team's results", |s| {
        s.contains("Episodes 1") && s.contains("5af11f95")
    });
    assert!(!screen.contains('\u{1b}'));
    tmux.press("Tab");
    tmux.press("Enter");
    tmux.wait_for("the episode view, read from the team", |s| {
        s.contains("Episode ep:") && s.contains("cwd ")
    });
}
