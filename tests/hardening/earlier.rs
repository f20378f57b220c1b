//! The first review's attacks: a symlink out of a repository, a second indexer on the same data
//! dir, quoted evidence that tries to end its quotation, terminal controls in JSON output, and
//! secrets typed into a dispatched task.

use crate::common;
use knowledge::contract::dispatch::{DispatchRequest, Task};
use knowledge::contract::ReviewStatus;
use knowledge::indexing::{index_all, IndexAllError, IndexPlan};
use knowledge::text::sanitize::json_for_terminal;

#[test]
fn code_reads_never_follow_a_symlink_out_of_the_repository() {
    let dir = tempfile::tempdir().expect("tmp");
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).expect("dirs");
    std::fs::write(repo.join("notes.txt"), "just notes\n").expect("write");
    let outside = dir.path().join("outside-secret.txt");
    std::fs::write(&outside, "TOP-SECRET-OUTSIDE\n").expect("write");
    let data = dir.path().join("data");
    let plan = IndexPlan {
        code: vec![repo.clone()],
        ..IndexPlan::default()
    };
    index_all(&data, &plan, &mut |_| {}).expect("index");
    std::fs::remove_file(repo.join("notes.txt")).expect("rm");
    std::os::unix::fs::symlink(&outside, repo.join("notes.txt")).expect("symlink");
    let engine = knowledge::engine::Engine::open(knowledge::engine::EngineConfig::new(&data));
    let lines = knowledge::sources::code::CodeStore::open(&engine.config.code_db())
        .expect("store")
        .read_code("notes.txt", 1, Some(5))
        .expect("read");
    assert!(!lines.lines.join("\n").contains("TOP-SECRET-OUTSIDE"));
    assert!(lines.freshness.stale, "served from the index, marked stale");
}

#[test]
fn a_second_indexer_on_the_same_data_dir_is_refused() {
    let dir = tempfile::tempdir().expect("tmp");
    let lock = dir.path().join("index.lock");
    std::fs::write(&lock, "4242").expect("lock");
    // The first indexer holds the OS lock for as long as it runs.
    let first = std::fs::File::options()
        .write(true)
        .open(&lock)
        .expect("open");
    first.lock().expect("hold");
    let err = index_all(dir.path(), &IndexPlan::default(), &mut |_| {}).expect_err("busy");
    assert!(matches!(err, IndexAllError::Busy(..)), "{err}");
    assert!(err
        .to_string()
        .contains("another `knowledge index` (pid 4242)"));
    drop(first);
    index_all(dir.path(), &IndexPlan::default(), &mut |_| {}).expect("free once it ends");
}

#[test]
fn quoted_evidence_cannot_end_its_quotation_in_a_handoff_prompt() {
    let world = common::world::demo();
    let engine = world.engine();
    let task = Task {
        text: "clean-bom-crlf: проверить BOM и CRLF; password=hunter2secret".into(),
        acceptance: vec!["token=abc123secretvalue".into()],
        constraints: vec![],
    };
    let resp = engine
        .dispatch(&DispatchRequest::dry_run(task))
        .expect("dispatch");
    let handoff = resp.handoff.expect("package");
    let json = serde_json::to_string(&handoff).expect("json");
    assert!(!json.contains("hunter2secret") && !json.contains("abc123secretvalue"));
    let prompt = handoff.tool_calls[0].arguments["prompt"]
        .as_str()
        .expect("prompt");
    for line in prompt.lines().filter(|l| l.starts_with("- ep:")) {
        let quoted = line.split_once('«').map(|(_, q)| q).unwrap_or("");
        assert_eq!(
            quoted.matches('»').count(),
            1,
            "one closing mark per quote: {line}"
        );
        assert!(quoted.ends_with('»'), "{line}");
    }
}

#[test]
fn json_output_escapes_what_a_terminal_would_act_on() {
    let raw = serde_json::to_string(&serde_json::json!({
        "snippet": "a\u{9b}2Jb\u{202e}c\u{200b}d"
    }))
    .expect("json");
    let safe = json_for_terminal(&raw);
    assert!(!safe.contains('\u{9b}') && !safe.contains('\u{202e}') && !safe.contains('\u{200b}'));
    let back: serde_json::Value = serde_json::from_str(&safe).expect("still JSON");
    assert_eq!(
        back["snippet"], "a\u{9b}2Jb\u{202e}c\u{200b}d",
        "the value is unchanged"
    );
}

#[test]
fn a_decision_the_file_missed_is_written_when_repeated() {
    use knowledge::engine::outbox::{self, Decision};
    let world = common::world::fresh_demo();
    let engine = world.engine();
    let mut req = DispatchRequest::dry_run(Task {
        text: "clean-bom-crlf: проверить BOM и CRLF".into(),
        acceptance: vec![],
        constraints: vec![],
    });
    req.dry_run = false;
    let id = engine
        .dispatch(&req)
        .expect("commit")
        .assignment
        .expect("assignment")
        .assignment_id;
    // The store says approved, the package on disk does not (its write had failed).
    let conn = rusqlite::Connection::open(engine.config.knowledge_db()).expect("db");
    conn.execute(
        "UPDATE ak_assignment SET status='approved', decided_by='alice' WHERE assignment_id=?1",
        [&id],
    )
    .expect("update");
    let (h, changed) =
        outbox::decide(&engine.config, &id, &Decision::Approve, "bob").expect("repaired");
    assert!(changed);
    assert_eq!(h.review.status, ReviewStatus::Approved);
    assert_eq!(
        h.review.decided_by.as_deref(),
        Some("alice"),
        "the recorded decision wins"
    );
    let (_, on_disk) = outbox::show(&engine.config, &id).expect("show");
    assert_eq!(on_disk.review.status, ReviewStatus::Approved);
}

#[test]
fn skills_keep_only_uses_inside_the_filter() {
    let world = common::world::demo();
    let engine = world.engine();
    let mut req = knowledge::contract::SearchRequest::new("skill mysql-access stripe-webhooks");
    req.max_tokens = 20_000;
    let all = engine.search(&req);
    let names = |r: &knowledge::contract::SearchResponse| -> Vec<String> {
        r.lanes
            .skills
            .iter()
            .flat_map(|s| s.items.iter().map(|i| i.name.clone()))
            .collect()
    };
    assert!(names(&all).contains(&"mysql-access".to_string()));
    req.filters.workspaces = vec![world.world.repo("webshop")];
    let webshop = engine.search(&req);
    let kept = names(&webshop);
    assert!(
        !kept.contains(&"mysql-access".to_string()),
        "used only in billing: {kept:?}"
    );
    assert!(
        kept.contains(&"stripe-webhooks".to_string()),
        "used in webshop: {kept:?}"
    );
    for s in webshop.lanes.skills.iter().flat_map(|s| s.items.iter()) {
        for u in &s.used_by {
            assert!(
                !u.episode_id.contains("5af11f95"),
                "a billing use leaked: {}",
                u.episode_id
            );
        }
    }
}
