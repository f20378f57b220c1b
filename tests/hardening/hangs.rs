//! What used to panic or hang the binary: a reader that closes the pipe, a full disk, a FIFO
//! where a file was, and lines the MCP server could not decode.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common;
use serde_json::{json, Value};

fn knowledge(data_dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_knowledge"));
    cmd.arg("--data-dir").arg(data_dir);
    cmd
}

/// Runs `cmd` to its end, failing the test (and killing the child) if it takes a minute: a
/// hang is the bug these tests look for.
pub(crate) fn finish(mut cmd: Command) -> Output {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if child.try_wait().expect("wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the command hung");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

pub(crate) fn mkfifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    let made = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(made.success());
}

fn first_episode_id(world: &common::world::Indexed) -> String {
    let resp = world
        .engine()
        .search(&knowledge::contract::SearchRequest::new("mysql"));
    resp.lanes
        .episodes
        .items
        .first()
        .expect("an episode")
        .id
        .clone()
}

#[test]
fn a_reader_closing_the_pipe_ends_the_output_quietly() {
    let world = common::world::demo();
    let id = first_episode_id(world);
    for args in [
        vec!["get-episode", id.as_str(), "--context", "50"],
        vec!["search", "-q", "mysql", "--pretty"],
        vec!["doctor"],
        vec!["stats"],
    ] {
        let mut child = knowledge(&world.data_dir)
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        // `| head -c 0`: the reader is gone before the first byte.
        drop(child.stdout.take());
        let mut stderr = String::new();
        let _ = child
            .stderr
            .take()
            .expect("stderr")
            .read_to_string(&mut stderr);
        let status = child.wait().expect("wait");
        assert_eq!(status.code(), Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

#[test]
fn a_full_disk_is_a_clear_error() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("no /dev/full here: skipped");
        return;
    };
    let world = common::world::demo();
    let out = knowledge(&world.data_dir)
        .args(["search", "-q", "mysql"])
        .stdout(full)
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.contains("cannot write the output") && stderr.contains("No space left"),
        "{stderr}"
    );
}

/// A repository of one file `name`, indexed, whose file is then replaced by a FIFO; returns the
/// temp dir (kept alive by the caller) and the data dir.
fn indexed_file_turned_fifo(name: &str, text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("tmp");
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).expect("repo");
    std::fs::write(repo.join(name), text).expect("w");
    let data = dir.path().join("data");
    let plan = knowledge::indexing::IndexPlan {
        code: vec![repo.clone()],
        ..Default::default()
    };
    knowledge::indexing::index_all(&data, &plan, &mut |_| {}).expect("index");
    mkfifo(&repo.join(name));
    (dir, data)
}

#[test]
fn a_fifo_in_place_of_a_code_file_does_not_hang_a_read() {
    let (_dir, data) =
        indexed_file_turned_fifo("main.rs", "fn main() {\n    println!(\"hi\");\n}\n");
    let mut cmd = knowledge(&data);
    cmd.args(["code", "main.rs:1-2"]);
    let out = finish(cmd);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(stderr.contains("is not a regular file"), "{stderr}");
}

#[test]
fn a_fifo_in_place_of_a_code_file_does_not_hang_the_mcp_code_tool() {
    let (_dir, data) = indexed_file_turned_fifo("lib.rs", "pub fn a() {}\n");
    let mut child = common::cli::raw_mcp_server(&data);
    let mut stdin = child.stdin.take().expect("stdin");
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "knowledge_code", "arguments": {"path": "lib.rs", "start_line": 1}}});
    for message in common::cli::mcp_handshake(1).iter().chain([&call]) {
        let _ = writeln!(stdin, "{message}");
    }
    let _ = stdin.flush();
    // The answer comes at once; a hung read would never give one.
    std::thread::sleep(Duration::from_secs(3));
    drop(stdin);
    let mut out = String::new();
    let _ = child
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut out);
    let _ = child.wait();
    let answered = out
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .any(|v| v["id"] == 2);
    assert!(answered, "no answer to the knowledge_code call: {out}");
}

#[test]
fn a_fifo_in_the_outbox_does_not_hang_list_or_show() {
    let dir = tempfile::tempdir().expect("tmp");
    let data = dir.path().join("data");
    let outbox = data.join("outbox");
    std::fs::create_dir_all(&outbox).expect("outbox");
    mkfifo(&outbox.join("assign-0123456789ab.json"));
    let mut list = knowledge(&data);
    list.args(["outbox", "list"]);
    let out = finish(list);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("not a regular file"), "{stderr}");
    let mut show = knowledge(&data);
    show.args(["outbox", "show", "assign-0123456789ab"]);
    let out = finish(show);
    assert_ne!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("not a regular file"), "{stderr}");
}

#[test]
fn every_line_the_mcp_server_cannot_decode_gets_a_json_rpc_error() {
    let world = common::world::demo();
    let mut child = common::cli::raw_mcp_server(&world.data_dir);
    let mut lines: Vec<Vec<u8>> = common::cli::mcp_handshake(1)
        .iter()
        .map(|m| m.to_string().into_bytes())
        .collect();
    lines.extend([
        b"{\"jsonrpc\": \"2.0\", \"id\": 2, \"method\": ".to_vec(),
        b"{\"jsonrpc\": \"2.0\", \"id\": 3, \"method\": \"ping\", \"x\": \"\xff\xfe\"}".to_vec(),
        br#"{"jsonrpc": "2.0", "id": 4, "method": "ping", "x": "\ud800"}"#.to_vec(),
        format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)).into_bytes(),
        vec![b'x'; 17 * 1024 * 1024],
    ]);
    lines.push(
        json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": [1, 2]})
            .to_string()
            .into_bytes(),
    );
    lines.push(
        json!({"jsonrpc": "2.0", "id": 10, "method": "tools/call",
               "params": {"name": "knowledge_search", "arguments": 17}})
        .to_string()
        .into_bytes(),
    );
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        for l in &lines {
            let _ = stdin.write_all(l);
            let _ = stdin.write_all(b"\n");
        }
        let _ = stdin.flush();
        // Closing stdin ends the session; the server answers what it read first.
    });
    let mut out = String::new();
    let _ = child
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut out);
    let _ = writer.join();
    let status = child.wait().expect("exit");
    assert!(status.success(), "the server exited with {status}");
    let replies: Vec<Value> = out
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    let codes = |code: i64| {
        replies
            .iter()
            .filter(|r| r["error"]["code"] == code)
            .map(|r| r["id"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        codes(-32700).len(),
        5,
        "one parse error per undecodable line: {out}"
    );
    assert!(codes(-32700).iter().all(Value::is_null));
    assert_eq!(codes(-32602), vec![json!(9), json!(10)], "{out}");
    assert!(codes(-32601).is_empty(), "{out}");
}
