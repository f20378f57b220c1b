//! The data dir in the states a hostile user leaves it in (issue 22, items 7–9): a store
//! truncated, zeroed, overwritten with noise, or replaced by a FIFO or `/dev/zero`; a data dir
//! that does not exist; the request log replaced by a FIFO or a symlink to `/dev/zero`; a
//! `config.toml` that does not parse.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::cli::{bin, indexed_world, plan_args};
use crate::hangs::mkfifo;
use serde_json::Value;

/// Runs `knowledge --data-dir DATA ARGS` to its end, failing the test (and killing the child)
/// after a minute: a hang is one of the bugs these tests look for.
fn knowledge(data_dir: &Path, args: &[&str]) -> Output {
    let mut cmd: Command = bin();
    let mut child = cmd
        .arg("--data-dir")
        .arg(data_dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("knowledge {args:?} hung");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().expect("output")
}

fn doctor_json(data_dir: &Path) -> Value {
    let out = knowledge(data_dir, &["doctor", "--json"]);
    serde_json::from_slice(&out.stdout).expect("doctor prints JSON")
}

fn problems(report: &Value) -> Vec<(String, String)> {
    report["problems"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            let text = |k: &str| p[k].as_str().unwrap_or("").to_string();
            (text("problem"), text("fix"))
        })
        .collect()
}

#[test]
fn doctor_recognises_a_damaged_store_and_names_index_rebuild() {
    let w = indexed_world();
    let store = w.data.join("episodes.sqlite");
    let original = std::fs::read(&store).expect("read the store");
    let half = original.get(..original.len() / 2).unwrap_or(&[]).to_vec();
    let zeroed = vec![0u8; original.len()];
    // Noise that is not a SQLite header (a fixed pattern: the test must not depend on luck).
    let noise: Vec<u8> = (0..original.len())
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    for (how, bytes) in [
        ("truncated to nothing", Some(Vec::new())),
        ("truncated to half", Some(half)),
        ("zeroed", Some(zeroed)),
        ("random", Some(noise)),
        // Not a file at all: SQLite's open would wait on a FIFO for a writer forever.
        ("a fifo", None),
        ("a symlink to /dev/zero", None),
    ] {
        let _ = std::fs::remove_file(&store);
        match bytes {
            Some(bytes) => std::fs::write(&store, &bytes).expect("damage the store"),
            None if how == "a fifo" => mkfifo(&store),
            None => std::os::unix::fs::symlink("/dev/zero", &store).expect("symlink"),
        }
        let search = knowledge(&w.data, &["search", "-q", "mysql"]);
        assert_eq!(
            search.status.code(),
            Some(0),
            "{how}: search answers, degraded"
        );
        let report = doctor_json(&w.data);
        let found = problems(&report);
        let episodes = found
            .iter()
            .find(|(p, _)| p.contains("episodes"))
            .unwrap_or_else(|| panic!("{how}: no episodes problem in {found:?}"));
        assert!(episodes.0.contains("damaged"), "{how}: {episodes:?}");
        assert!(
            episodes.1.contains("knowledge index --rebuild"),
            "{how}: {episodes:?}"
        );
        assert!(
            !found.iter().any(|(p, _)| p.contains("no episodes index")),
            "{how}: not called missing: {found:?}"
        );
        assert_eq!(
            report["changed_transcripts"]["count"], 0,
            "{how}: no transcript grew: {report}"
        );
        // The bare `knowledge` off a terminal says the same (the engine's counts).
        let status = knowledge(&w.data, &[]);
        let text = String::from_utf8_lossy(&status.stdout);
        assert!(
            text.contains("episodes: damaged") && text.contains("--rebuild"),
            "{how}: {text}"
        );
    }
    // And the command doctor names works.
    let mut args = vec!["index", "--quiet", "--rebuild"];
    let plan = plan_args(&w.world);
    args.extend(plan.iter().map(String::as_str));
    let out = knowledge(&w.data, &args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(problems(&doctor_json(&w.data)).is_empty());
}

#[test]
fn doctor_on_a_data_dir_that_does_not_exist_says_so() {
    let tmp = tempfile::tempdir().expect("tmp");
    let missing = tmp.path().join("no-such-dir");
    let report = doctor_json(&missing);
    let found = problems(&report);
    assert!(
        found
            .iter()
            .any(|(p, f)| p.contains("does not exist") && f.contains("--data-dir")),
        "{found:?}"
    );
    assert!(!missing.exists(), "doctor creates nothing");
}

#[test]
fn a_log_that_is_a_fifo_or_dev_zero_is_refused_without_hanging() {
    let w = indexed_world();
    let log = w.data.join("logs/knowledge.log");
    std::fs::create_dir_all(log.parent().expect("logs")).expect("logs dir");
    for how in ["fifo", "/dev/zero"] {
        let _ = std::fs::remove_file(&log);
        if how == "fifo" {
            mkfifo(&log);
        } else {
            std::os::unix::fs::symlink("/dev/zero", &log).expect("symlink");
        }
        let out = knowledge(&w.data, &["search", "-q", "mysql"]);
        assert_eq!(out.status.code(), Some(0), "{how}: search answers");
        let doc: Value = serde_json::from_slice(&out.stdout).expect("a response");
        assert!(doc["lanes"]["episodes"].is_object(), "{how}: {doc}");
        let out = knowledge(&w.data, &["stats", "--json"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{how}: {stderr}");
        assert!(stderr.contains("not a regular file"), "{how}: {stderr}");
    }
}

#[test]
fn a_broken_config_puts_the_error_document_on_stdout() {
    let w = indexed_world();
    std::fs::write(w.data.join("config.toml"), "[lanes\ntimeout_ms = \n").expect("config");
    for args in [
        vec!["search", "-q", "mysql"],
        vec!["dispatch", "--task", "fix the mysql timeout"],
    ] {
        let out = knowledge(&w.data, &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let doc: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|_| panic!("{args:?}: an error document on stdout"));
        assert_eq!(
            doc["errors"][0]["code"], "KNOWLEDGE_INVALID_REQUEST",
            "{doc}"
        );
        assert_eq!(doc["errors"][0]["field"], "config.toml", "{doc}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("config.toml"), "{stderr}");
    }
}

#[test]
fn a_data_dir_that_is_a_file_is_called_a_file_by_every_command() {
    let tmp = tempfile::tempdir().expect("tmp");
    let file = tmp.path().join("knowledge-data");
    std::fs::write(&file, "not a folder").expect("write");
    for args in [
        vec!["index", "--sessions", "."],
        vec!["stats"],
        vec!["stats", "--chart"],
        vec!["get-episode", "x"],
        vec!["mcp"],
        vec![],
    ] {
        let out = knowledge(&file, &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("is a file") && !stderr.contains("os error"),
            "{args:?}: {stderr}"
        );
    }
    let search = knowledge(&file, &["search", "-q", "mysql"]);
    assert_eq!(search.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&search.stdout).contains("is a file"));
    let found = problems(&doctor_json(&file));
    assert!(
        found
            .iter()
            .any(|(p, f)| p.contains("is a file") && f.contains("--data-dir")),
        "{found:?}"
    );
    assert_eq!(std::fs::read(&file).expect("read"), b"not a folder");
}

#[test]
fn a_broken_config_is_refused_by_every_command_alike() {
    let w = indexed_world();
    std::fs::write(w.data.join("config.toml"), "[lanes\ntimeout_ms = \n").expect("config");
    for args in [
        vec!["stats", "--json"],
        vec!["stats"],
        vec!["stats", "--chart"],
        vec!["outbox", "list"],
        vec![],
    ] {
        let out = knowledge(&w.data, &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("config.toml"), "{args:?}: {stderr}");
    }
}

/// The TOML parser quotes the line it stopped at: a team URL's password must not be echoed.
#[test]
fn a_broken_config_never_echoes_the_password_it_holds() {
    let w = indexed_world();
    std::fs::write(
        w.data.join("config.toml"),
        "[team]\nurl = \"postgresql://alice:Sup3rS3cretPw@db.example/kn\n",
    )
    .expect("config");
    for args in [
        vec!["stats"],
        vec!["search", "-q", "mysql"],
        vec!["doctor", "--json"],
        vec!["index", "--quiet"],
    ] {
        let out = knowledge(&w.data, &args);
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(all.contains("config.toml"), "{args:?}: {all}");
        assert!(!all.contains("Sup3rS3cretPw"), "{args:?}: {all}");
    }
}

/// A data dir this user may not enter, or whose parent is a file, is named as the folder that
/// cannot be read, not as a broken `config.toml`.
#[test]
fn a_data_dir_that_cannot_be_read_is_blamed_not_its_config() {
    let tmp = tempfile::tempdir().expect("tmp");
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "x").expect("write");
    let under_a_file = file.join("data");
    for args in [vec!["stats"], vec!["index", "--sessions", "."]] {
        let out = knowledge(&under_a_file, &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("the data dir") && !stderr.contains("fix the file"),
            "{args:?}: {stderr}"
        );
    }
    let report = doctor_json(&file);
    assert!(
        !report["problems"]
            .to_string()
            .contains("config file is broken"),
        "{report}"
    );
}

/// `plan.json` replaced by a FIFO: doctor names it (it reported a healthy, empty data dir), and
/// the next `index` writes it again without waiting on the FIFO.
#[test]
fn a_saved_plan_that_cannot_be_read_is_named_and_written_again() {
    let w = indexed_world();
    let plan = w.data.join("plan.json");
    mkfifo(&plan);
    mkfifo(&w.data.join("plan.json.tmp"));
    let found = problems(&doctor_json(&w.data));
    assert!(
        found
            .iter()
            .any(|(p, _)| p.contains("plan.json") && p.contains("cannot be read")),
        "{found:?}"
    );
    let mut args = vec!["index", "--quiet"];
    let roots = plan_args(&w.world);
    args.extend(roots.iter().map(String::as_str));
    let out = knowledge(&w.data, &args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::metadata(&plan).expect("plan").is_file());
}
