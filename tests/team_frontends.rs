//! The front ends on a team index, as a person runs them (issue 20): `knowledge --team URL mcp`
//! through a real MCP client (rmcp over the child's stdio), and the explorer `knowledge --team
//! URL` in a real terminal (tmux). The lead's data dir holds no index, so what they show comes
//! from the team's PostgreSQL (`common::team_world`). Skipped with a visible message where
//! PostgreSQL (or, for the explorer, tmux) is not installed.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::team_world::{Team, MACHINE};
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

struct Tmux {
    socket: String,
}

impl Tmux {
    fn run(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("run tmux")
    }

    fn wait_for(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let out = self.run(&["capture-pane", "-p", "-t", "tui"]);
            let screen = String::from_utf8_lossy(&out.stdout).into_owned();
            if ok(&screen) {
                return screen;
            }
            if start.elapsed() > Duration::from_secs(90) {
                panic!("timed out waiting for {what}; the screen:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(150));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

#[test]
fn the_explorer_with_a_team_answers_from_the_team_index() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("NOTE: tmux is not installed; skipping the terminal test of the explorer");
        return;
    }
    let Some(team) = Team::shared() else { return };
    let quote = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
    let cmd = format!(
        "{} --data-dir {} --team {} --no-watch",
        env!("CARGO_BIN_EXE_knowledge"),
        quote(&team.lead.path().display().to_string()),
        quote(&team.url)
    );
    let tmux = Tmux {
        socket: format!("knowledge-team-{}", std::process::id()),
    };
    let started = tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "tui",
        "-x",
        "120",
        "-y",
        "40",
        "-e",
        "NO_COLOR=1",
        &cmd,
    ]);
    assert!(started.status.success(), "{started:?}");
    tmux.wait_for("the query box", |s| s.contains("knowledge ·"));
    tmux.run(&["send-keys", "-t", "tui", "-l", "кто чинил доступ к MySQL"]);
    // The lead's data dir holds no session: the demo world's session comes from the team.
    let screen = tmux.wait_for("the team's results", |s| {
        s.contains("Episodes 1") && s.contains("5af11f95")
    });
    assert!(!screen.contains('\u{1b}'));
    tmux.run(&["send-keys", "-t", "tui", "Tab"]);
    tmux.run(&["send-keys", "-t", "tui", "Enter"]);
    tmux.wait_for("the episode view, read from the team", |s| {
        s.contains("Episode ep:") && s.contains("cwd ")
    });
}
