//! Watch mode under hostile use, through the built binary with the real watcher (issue 22,
//! items 1–3): a session root deleted and made again, a data dir that turns read-only while a
//! transcript grows, a transcript nobody may read.
//!
//! Permission tests run the watcher as an unprivileged user when the tests run as root (see
//! `common::watching`); the searches that check the result run as the test.

mod common;

use common::cli::{bin, indexed_world};
use common::watching::{
    append_event, append_line, chmod, eventually, hand_to_nobody, items, transcript, unprivileged,
    Watcher,
};

const NEW_SESSION: &str = "5e1f0c2a-0000-4000-8000-00000000beef";

#[test]
fn a_session_root_deleted_and_made_again_is_watched_again() {
    let w = indexed_world();
    let watch = Watcher::start(&w, false);
    assert!(
        watch.banner.contains("file-system notifications"),
        "the real watcher, not polling: {}",
        watch.banner
    );
    let root = w.world.root.join("claude");
    std::fs::remove_dir_all(&root).expect("rm -rf the session root");
    let folder = root.join("projects/p2");
    std::fs::create_dir_all(&folder).expect("mkdir -p ROOT/p2");
    append_line(
        &folder.join(format!("{NEW_SESSION}.jsonl")),
        NEW_SESSION,
        &w.world.repo("billing"),
        "the okapiharbour migration was rolled back",
    );
    let resp = eventually(&w.data, "okapiharbour", "episodes", |r| {
        !items(r, "episodes").is_empty()
    });
    assert_eq!(items(&resp, "episodes")[0]["session_id"], NEW_SESSION);
    // And it stays watched: a later append to the new transcript is found too.
    append_line(
        &folder.join(format!("{NEW_SESSION}.jsonl")),
        NEW_SESSION,
        &w.world.repo("billing"),
        "the quaggalamp flag was turned off",
    );
    eventually(&w.data, "quaggalamp", "episodes", |r| {
        !items(r, "episodes").is_empty()
    });
}

#[test]
fn a_read_only_data_dir_is_named_and_the_pending_append_is_indexed_once_writable() {
    let w = indexed_world();
    let watch = Watcher::start_as_nobody(&w);
    chmod(&w.data, "555");
    append_event(
        &transcript(&w),
        &w.world.repo("billing"),
        "the capybarafence rollout waited for the disk",
    );
    let said = watch.said(|l| l.starts_with("indexing failed"));
    assert!(
        said.contains("exists but cannot be written") && said.contains("chmod u+rwx"),
        "says what is wrong and how to fix it: {said}"
    );
    assert!(!said.contains("cannot create"), "{said}");
    chmod(&w.data, "755");
    // No further append: the kept batch is tried again by itself.
    eventually(&w.data, "capybarafence", "episodes", |r| {
        !items(r, "episodes").is_empty()
    });
}

#[test]
fn an_unreadable_transcript_is_named_in_every_summary_and_counted_by_doctor() {
    let w = indexed_world();
    let watch = Watcher::start_as_nobody(&w);
    let secret = transcript(&w)
        .parent()
        .expect("project folder")
        .join(format!("{NEW_SESSION}.jsonl"));
    // Written outside the roots, made unreadable, then moved in: the watcher never sees it
    // readable.
    let staged = w
        .data
        .parent()
        .expect("temp dir")
        .join(format!("{NEW_SESSION}.jsonl"));
    append_line(
        &staged,
        NEW_SESSION,
        &w.world.repo("billing"),
        "a private note",
    );
    hand_to_nobody(&w);
    chmod(&staged, "000");
    std::fs::rename(&staged, &secret).expect("move the transcript in");
    let named = watch.said(|l| l.contains("could not read") && l.contains(NEW_SESSION));
    assert!(named.contains("ermission denied"), "{named}");
    let summary = watch
        .lines()
        .into_iter()
        .find(|l| l.contains("files could not be read"));
    assert!(
        summary.is_some(),
        "the batch line counts it: {:?}",
        watch.lines()
    );
    drop(watch);

    // A one-shot index names it and does not exit 0.
    let mut index = bin();
    index
        .arg("--data-dir")
        .arg(&w.data)
        .arg("index")
        .arg("--quiet");
    index.args(common::cli::plan_args(&w.world));
    let out = unprivileged(index).output().expect("run knowledge index");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(NEW_SESSION), "{stderr}");

    let mut doctor = bin();
    doctor
        .arg("--data-dir")
        .arg(&w.data)
        .args(["doctor", "--json"]);
    let out = unprivileged(doctor).output().expect("run knowledge doctor");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("doctor JSON");
    assert_eq!(report["unreadable_transcripts"]["count"], 1, "{report}");
    assert_eq!(report["changed_transcripts"]["count"], 0, "{report}");
    let problems = report["problems"].to_string();
    assert!(
        problems.contains("cannot be read") && problems.contains("chmod u+r"),
        "{problems}"
    );
}
