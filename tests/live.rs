//! Watch mode, `knowledge stats` and `knowledge doctor` through the built binary, on a fresh
//! copy of the demo world in a temp dir (issue 14).
//!
//! The watch tests start `knowledge index --watch`, change the world (append to a transcript,
//! edit a code file, add a skill) and poll `knowledge search` until the change is found. Nothing
//! is timed: the deadline is generous and only bounds a hang; latency is measured by
//! `cargo bench --bench watch_bench`, not here. `knowledge mcp` watches by itself: a client sees
//! the appended event and a new `index_rev` without restarting it.

mod common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::cli::indexed_world;
use common::watching::{append_event, eventually, items, search, transcript, Watcher, DEADLINE};
use serde_json::Value;

#[test]
fn an_event_appended_to_a_transcript_becomes_searchable() {
    let w = indexed_world();
    let before = search(&w.data, "zanzibarquokka", "episodes");
    assert!(items(&before, "episodes").is_empty());
    let rev_before = before["lanes"]["episodes"]["index_rev"].clone();
    let _watch = Watcher::start(&w, false);
    append_event(
        &transcript(&w),
        &w.world.repo("billing"),
        "the zanzibarquokka cache was flushed by hand",
    );
    let resp = eventually(&w.data, "zanzibarquokka", "episodes", |r| {
        !items(r, "episodes").is_empty()
    });
    let item = &items(&resp, "episodes")[0];
    assert_eq!(item["session_id"], "40b2334f-8cd8-49dd-8b81-2fd55e3b6a92");
    assert_ne!(resp["lanes"]["episodes"]["index_rev"], rev_before);
    // Read from where it stopped: the same session, one more event, no duplicate session.
    let counts = |r: &Value| r["lanes"]["episodes"]["counts"].clone();
    assert_eq!(counts(&resp)["sessions"], counts(&before)["sessions"]);
    assert_eq!(
        counts(&resp)["indexed_docs"].as_u64().unwrap(),
        counts(&before)["indexed_docs"].as_u64().unwrap() + 1
    );
}

#[test]
fn an_edited_code_file_is_chunked_again() {
    let w = indexed_world();
    let _watch = Watcher::start(&w, false);
    let file = PathBuf::from(w.world.repo("webshop")).join("src/cart.ts");
    let mut text = std::fs::read_to_string(&file).expect("read cart.ts");
    text.push_str("\nexport function applyWombatDiscount(total: number): number {\n  return total * 0.9;\n}\n");
    std::fs::write(&file, text).expect("edit cart.ts");
    let resp = eventually(&w.data, "applyWombatDiscount", "code", |r| {
        items(r, "code")
            .iter()
            .any(|i| i["path"] == "src/cart.ts" && i["symbol"] == "applyWombatDiscount")
    });
    assert_eq!(resp["lanes"]["code"]["freshness"]["stale"], false);
}

#[test]
fn a_new_skill_reaches_the_skills_lane_also_when_polling() {
    let w = indexed_world();
    let _watch = Watcher::start(&w, true);
    let dir = w.world.skills_root().join("llama-grooming");
    std::fs::create_dir_all(&dir).expect("skill dir");
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: llama-grooming\ndescription: Brush the llama before the zanzibar show. Use \
         when grooming llamas.\n---\n\n# Llama grooming\n\nBrush gently.\n",
    )
    .expect("write SKILL.md");
    eventually(&w.data, "llama grooming", "skills", |r| {
        items(r, "skills")
            .iter()
            .any(|i| i["name"] == "llama-grooming")
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mcp_server_answers_from_the_newest_revision() {
    use rmcp::model::CallToolRequestParams;
    use rmcp::transport::TokioChildProcess;
    use rmcp::ServiceExt;

    let w = indexed_world();
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_knowledge"));
    cmd.arg("--data-dir").arg(&w.data).arg("mcp");
    let client =
        ().serve(TokioChildProcess::new(cmd).expect("start knowledge mcp"))
            .await
            .expect("MCP handshake");
    let search = |query: &'static str| {
        let args = serde_json::json!({
            "schema": "knowledge.search/v1", "query": query, "include": ["episodes"]
        });
        let params = CallToolRequestParams::new("knowledge_search".to_string())
            .with_arguments(args.as_object().cloned().unwrap_or_default());
        let peer = client.peer().clone();
        async move {
            let r = peer.call_tool(params).await.expect("knowledge_search");
            r.structured_content.expect("a contract document")
        }
    };
    let before = search("wombatlantern").await;
    assert!(items(&before, "episodes").is_empty());
    let rev_before = before["lanes"]["episodes"]["index_rev"].clone();
    append_event(
        &transcript(&w),
        &w.world.repo("billing"),
        "the wombatlantern job was restarted",
    );
    let started = Instant::now();
    let after = loop {
        let resp = search("wombatlantern").await;
        if !items(&resp, "episodes").is_empty() {
            break resp;
        }
        assert!(started.elapsed() < DEADLINE, "never searchable: {resp}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_ne!(after["lanes"]["episodes"]["index_rev"], rev_before);
    let _ = client.cancel().await;
}
