//! Inputs past every documented limit, and the data dir in states a user gets it into: oversized
//! filter lists and dispatch lists, a lock left by a dead process, a damaged store, a mistyped
//! `--data-dir`, a data dir inside the indexed repository, invalid UTF-8 and duplicate keys.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::common;
use knowledge::indexing::{index_all, IndexAllError, IndexPlan};
use serde_json::{json, Value};

fn knowledge(data_dir: &Path, args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_knowledge"))
        .arg("--data-dir")
        .arg(data_dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut input = child.stdin.take().expect("stdin");
    let _ = input.write_all(stdin);
    drop(input);
    child.wait_with_output().expect("output")
}

/// The error document on stdout of a refused request, and its first error's field.
fn refused_field(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("an error document on stdout");
    assert_eq!(
        doc["errors"][0]["code"], "KNOWLEDGE_INVALID_REQUEST",
        "{doc}"
    );
    doc["errors"][0]["field"].as_str().unwrap_or("").to_string()
}

#[test]
fn a_thousand_filter_values_are_refused_naming_the_list() {
    let world = common::world::demo();
    for (list, field) in [
        ("workspaces", "filters.workspaces"),
        ("session_ids", "filters.session_ids"),
    ] {
        let values: Vec<String> = (0..1000).map(|i| format!("/srv/w{i}")).collect();
        let req = json!({"schema": "knowledge.search/v1", "query": "mysql",
                         "filters": {list: values}});
        let out = knowledge(
            &world.data_dir,
            &["search", "--request", "-"],
            req.to_string().as_bytes(),
        );
        assert_eq!(refused_field(&out), field);
    }
}

#[test]
fn dispatch_acceptance_and_constraints_are_capped() {
    let world = common::world::demo();
    let cases = [
        (json!(["x".repeat(2_000_000)]), "task.acceptance[0]"),
        (json!(vec!["check it"; 51]), "task.acceptance"),
    ];
    for (acceptance, field) in cases {
        let req = json!({"schema": "knowledge.dispatch/v1", "dry_run": true,
                         "task": {"text": "fix the BOM", "acceptance": acceptance}});
        let out = knowledge(
            &world.data_dir,
            &["dispatch", "--request", "-"],
            req.to_string().as_bytes(),
        );
        assert_eq!(refused_field(&out), field);
    }
    let req = json!({"schema": "knowledge.dispatch/v1", "dry_run": true,
                     "task": {"text": "fix the BOM", "constraints": ["y".repeat(2001)]}});
    let out = knowledge(
        &world.data_dir,
        &["dispatch", "--request", "-"],
        req.to_string().as_bytes(),
    );
    assert_eq!(refused_field(&out), "task.constraints[0]");
}

#[test]
fn a_lock_file_left_by_a_dead_or_reused_pid_blocks_nothing() {
    let dir = tempfile::tempdir().expect("tmp");
    // After a reboot the pid in the file may belong to any live process, e.g. this one.
    std::fs::write(
        dir.path().join("index.lock"),
        std::process::id().to_string(),
    )
    .expect("w");
    index_all(dir.path(), &IndexPlan::default(), &mut |_| {}).expect("not blocked");
    // A lock held by a running indexer still refuses a second one.
    let held = std::fs::File::options()
        .write(true)
        .open(dir.path().join("index.lock"))
        .expect("open");
    held.lock().expect("hold the lock");
    let err = index_all(dir.path(), &IndexPlan::default(), &mut |_| {}).expect_err("busy");
    assert!(matches!(err, IndexAllError::Busy(..)), "{err}");
    drop(held);
    index_all(dir.path(), &IndexPlan::default(), &mut |_| {}).expect("released with its holder");
}

#[test]
fn a_damaged_store_is_named_and_index_rebuild_recovers() {
    let dir = tempfile::tempdir().expect("tmp");
    let sessions = dir.path().join("sessions");
    std::fs::create_dir_all(&sessions).expect("sessions");
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).expect("data");
    let store = data.join("episodes.sqlite");
    std::fs::write(&store, vec![0x5a; 8192]).expect("damage");
    let s = sessions.to_string_lossy().to_string();
    let out = knowledge(&data, &["index", "--quiet", "--sessions", &s], b"");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("episodes.sqlite"),
        "names the file: {stderr}"
    );
    assert!(stderr.contains("knowledge index --rebuild"), "{stderr}");
    let out = knowledge(
        &data,
        &["index", "--quiet", "--rebuild", "--sessions", &s],
        b"",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let out = knowledge(&data, &["index", "--quiet", "--sessions", &s], b"");
    assert_eq!(out.status.code(), Some(0), "and it stays fixed");
}

#[test]
fn a_mistyped_data_dir_is_an_error_and_is_not_created() {
    let dir = tempfile::tempdir().expect("tmp");
    let typo = dir.path().join("knowlege");
    let out = knowledge(&typo, &["search", "-q", "mysql"], b"");
    assert_eq!(out.status.code(), Some(2));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("an error document");
    assert_eq!(
        doc["errors"][0]["code"], "KNOWLEDGE_INDEX_NOT_READY",
        "{doc}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("no data dir"));
    for args in [
        &["get-episode", "ep:s:1"][..],
        &["code", "a.rs:1"],
        &["outbox", "list"],
    ] {
        let out = knowledge(&typo, args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
    assert!(!typo.exists(), "a reader never creates the data dir");
}

#[test]
fn a_data_dir_inside_the_code_root_is_not_indexed_as_code() {
    let dir = tempfile::tempdir().expect("tmp");
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(repo.join("src")).expect("repo");
    std::fs::write(repo.join("src/lib.rs"), "pub fn answer() -> u32 { 42 }\n").expect("w");
    let data = repo.join(".knowledge");
    let plan = IndexPlan {
        code: vec![repo.clone()],
        ..IndexPlan::default()
    };
    index_all(&data, &plan, &mut |_| {}).expect("first run");
    std::fs::create_dir_all(data.join("logs")).expect("logs");
    std::fs::write(data.join("logs/requests.jsonl"), "{\"query_terms\":3}\n").expect("log");
    index_all(&data, &plan, &mut |_| {}).expect("second run sees the stores");
    let conn = rusqlite::Connection::open(data.join("code.sqlite")).expect("db");
    let paths: Vec<String> = conn
        .prepare("SELECT path FROM files ORDER BY path")
        .expect("sql")
        .query_map([], |r| r.get(0))
        .expect("rows")
        .map(|r| r.expect("row"))
        .collect();
    assert_eq!(paths, vec!["src/lib.rs".to_string()]);
}

#[test]
fn invalid_utf8_on_stdin_gets_the_error_document() {
    let world = common::world::demo();
    let out = knowledge(
        &world.data_dir,
        &["search", "--request", "-"],
        b"{\"schema\": \"knowledge.search/v1\", \"query\": \"caf\xe9\"}",
    );
    assert_eq!(refused_field(&out), "$");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    common::schema::validate("knowledge_search.v1.schema.json", "error_response", &doc)
        .expect("the error document matches the schema");
}

#[test]
fn duplicate_keys_are_refused_naming_the_key() {
    let world = common::world::demo();
    let text = r#"{"schema": "knowledge.search/v1", "query": "mysql", "query": "stripe"}"#;
    let out = knowledge(
        &world.data_dir,
        &["search", "--request", "-"],
        text.as_bytes(),
    );
    assert_eq!(refused_field(&out), "query");
    let text = r#"{"schema": "knowledge.dispatch/v1", "task": {"text": "a", "text": "b"}}"#;
    let out = knowledge(
        &world.data_dir,
        &["dispatch", "--request", "-"],
        text.as_bytes(),
    );
    assert_eq!(refused_field(&out), "task.text");
}
