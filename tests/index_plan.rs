//! What `knowledge index` starts from: a bare run adds to what a data dir already follows and
//! never drops it (after the demo, or any run with flags, `knowledge index` from another
//! directory keeps the demo's skills, code and sessions), and a broken `config.toml` stops it
//! and every search as a usage error (exit 2) that quotes the bad line.

mod common;

use common::cli::{bin, indexed_world};
use serde_json::Value;

#[test]
fn a_bare_index_keeps_the_roots_an_earlier_run_indexed() {
    let w = indexed_world();
    let home = tempfile::tempdir().expect("empty home");
    let out = bin()
        .arg("--data-dir")
        .arg(&w.data)
        .args(["index", "--json"])
        .current_dir(home.path())
        .env("HOME", home.path())
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .output()
        .expect("run knowledge index");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: Value = serde_json::from_slice(&out.stdout).expect("summary JSON");
    assert_eq!(
        summary.pointer("/knowledge/skills").and_then(Value::as_u64),
        Some(6),
        "the demo's six skills are still indexed: {summary:#}"
    );
    let found = bin()
        .arg("--data-dir")
        .arg(&w.data)
        .args(["search", "-q", "which skill checks BOM and CRLF"])
        .output()
        .expect("search");
    let resp: Value = serde_json::from_slice(&found.stdout).expect("response");
    let skills = resp
        .pointer("/lanes/skills/items")
        .and_then(Value::as_array);
    assert!(
        skills.is_some_and(|s| s.iter().any(|i| i["name"] == "clean-bom-crlf")),
        "{resp:#}"
    );
}

#[test]
fn a_broken_config_is_a_usage_error_for_index_and_search() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let data = tmp.path().join("data");
    std::fs::create_dir_all(&data).expect("data dir");
    std::fs::write(data.join("config.toml"), "[search]\nsemantic = \"yes\"\n").expect("config");
    for args in [
        vec!["index", "--sessions", tmp.path().to_str().expect("utf-8")],
        vec!["search", "-q", "mysql"],
    ] {
        let out = bin()
            .arg("--data-dir")
            .arg(&data)
            .args(&args)
            .output()
            .expect("run");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("semantic = \"yes\""), "{args:?}: {err}");
    }
}
