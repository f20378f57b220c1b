//! What a careless MCP client sends (issue 22, item 10): requests that reuse an id, and a key
//! given twice inside `arguments`. Each request is answered, under the id it came with.

use std::io::{BufRead, BufReader, Write};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::common;
use serde_json::{json, Value};

#[test]
fn requests_that_reuse_an_id_are_each_answered_under_it() {
    let world = common::world::demo();
    let mut child = common::cli::raw_mcp_server(&world.data_dir);
    let mut lines: Vec<String> = common::cli::mcp_handshake(1)
        .iter()
        .map(Value::to_string)
        .collect();
    let list = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list"}).to_string();
    lines.extend([list.clone(), list.clone(), list]);
    lines.push(
        json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
            "name": "knowledge_search",
            "arguments": {"schema": "knowledge.search/v1", "query": "mysql"}}})
        .to_string(),
    );
    lines.push(json!({"jsonrpc": "2.0", "id": 9, "method": "ping"}).to_string());
    lines.push(
        r#"{"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {"name": "knowledge_search", "arguments": {"query": "a", "query": "b"}}}"#
            .to_string(),
    );
    let mut stdin = child.stdin.take().expect("stdin");
    for l in &lines {
        stdin.write_all(l.as_bytes()).expect("write");
        stdin.write_all(b"\n").expect("write");
    }
    stdin.flush().expect("flush");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    // Seven answers are owed: initialize, three lists, the search, the ping, the refusal.
    let mut replies: Vec<Value> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while replies.len() < 7 {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => replies.push(serde_json::from_str(&line).expect("a JSON-RPC line")),
            Err(_) => break,
        }
    }
    // Stdin stays open until then: closing it would end the session first.
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    let with_id = |id: i64| replies.iter().filter(|r| r["id"] == id).collect::<Vec<_>>();
    let lists = with_id(7);
    assert_eq!(lists.len(), 3, "every tools/list answered: {replies:?}");
    assert!(lists.iter().all(|r| r["result"]["tools"].is_array()));
    let nines = with_id(9);
    assert_eq!(nines.len(), 2, "the call and the ping: {replies:?}");
    assert!(
        nines.iter().any(|r| r["result"]["content"].is_array()),
        "the search answered: {nines:?}"
    );
    assert!(
        nines.iter().any(|r| r["result"] == json!({})),
        "the ping answered: {nines:?}"
    );
    let refused = with_id(11);
    assert_eq!(refused.len(), 1, "{replies:?}");
    assert_eq!(refused[0]["error"]["code"], -32600);
    assert!(refused[0]["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("arguments.query")));
}

/// A client that skips the handshake is told so, then served once it initializes.
#[test]
fn a_request_before_initialize_is_answered_not_initialized() {
    let world = common::world::demo();
    let mut child = common::cli::raw_mcp_server(&world.data_dir);
    let mut lines = vec![
        // Notifications and a stray response before the handshake are dropped, not fatal.
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 5}})
        .to_string(),
        json!({"jsonrpc": "2.0", "id": 99, "result": {}}).to_string(),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string(),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "knowledge_search", "arguments": {"query": "mysql"}}})
        .to_string(),
    ];
    lines.extend(common::cli::mcp_handshake(3).iter().map(Value::to_string));
    lines.push(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}).to_string());
    // A second handshake is refused; the session goes on.
    lines.push(common::cli::mcp_handshake(5)[0].to_string());
    lines.push(json!({"jsonrpc": "2.0", "id": 6, "method": "tools/list"}).to_string());
    let mut stdin = child.stdin.take().expect("stdin");
    for l in &lines {
        writeln!(stdin, "{l}").expect("write");
    }
    stdin.flush().expect("flush");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut replies: Vec<Value> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while replies.len() < 6 {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(line) => replies.push(serde_json::from_str(&line).expect("a JSON-RPC line")),
            Err(_) => break,
        }
    }
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    let by_id = |id: u64| {
        replies
            .iter()
            .find(|r| r["id"] == id)
            .unwrap_or_else(|| panic!("no answer to {id}: {replies:?}"))
    };
    for id in [1, 2] {
        let message = by_id(id)["error"]["message"].as_str().unwrap_or("");
        assert!(message.starts_with("not initialized"), "{id}: {message}");
    }
    assert!(by_id(3)["result"].is_object(), "initialize answered");
    assert!(by_id(4)["result"]["tools"].is_array(), "served after it");
    let again = by_id(5)["error"]["message"].as_str().unwrap_or("");
    assert!(again.contains("already initialized"), "{again}");
    assert!(by_id(6)["result"]["tools"].is_array(), "still served");
}
