//! A fresh demo world indexed through the binary (`knowledge index`, which also remembers the
//! roots for the data dir), for tests of the commands that work on a data dir as a person has it.

use std::path::PathBuf;
use std::process::Command;

use knowledge::demo::{self, DemoWorld};

pub struct CliWorld {
    pub world: DemoWorld,
    pub data: PathBuf,
    _tmp: tempfile::TempDir,
}

/// The built binary.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_knowledge"))
}

/// `knowledge mcp` over `data_dir` with stdin and stdout piped, for raw JSON-RPC lines.
pub fn raw_mcp_server(data_dir: &std::path::Path) -> std::process::Child {
    use std::process::Stdio;
    bin()
        .arg("mcp")
        .arg("--data-dir")
        .arg(data_dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start knowledge mcp")
}

/// The two messages that open a raw MCP session: `initialize` (with `id`), then `initialized`.
pub fn mcp_handshake(id: u64) -> [serde_json::Value; 2] {
    [
        serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}}),
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ]
}

/// The `--sessions/--code/--skills/--agents` arguments naming the whole world.
pub fn plan_args(w: &DemoWorld) -> Vec<String> {
    let plan = w.plan();
    let mut args = Vec::new();
    for (flag, paths) in [
        ("--sessions", &plan.sessions),
        ("--code", &plan.code),
        ("--skills", &plan.skills),
        ("--agents", &plan.agents),
    ] {
        for p in paths {
            args.push(flag.to_string());
            args.push(p.display().to_string());
        }
    }
    args
}

/// A fresh copy of the demo world indexed with `knowledge index` into its own data dir.
pub fn indexed_world() -> CliWorld {
    let tmp = tempfile::tempdir().expect("temp dir");
    let world = demo::materialize(&demo::bundled_world(), &tmp.path().join("world"))
        .expect("materialise the demo world");
    let data = tmp.path().join("data");
    // A generous lane timeout, so that a slow debug build on a busy machine answers every lane.
    std::fs::create_dir_all(&data).expect("data dir");
    std::fs::write(data.join("config.toml"), "[lanes]\ntimeout_ms = 10000\n")
        .expect("write config.toml");
    let out = bin()
        .arg("--data-dir")
        .arg(&data)
        .arg("index")
        .arg("--quiet")
        .args(plan_args(&world))
        .output()
        .expect("run knowledge index");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    CliWorld {
        world,
        data,
        _tmp: tmp,
    }
}
