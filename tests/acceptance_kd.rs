//! The dispatch acceptance criteria KD-1…KD-6 (contract §14), one test each, on the demo world,
//! plus the outbox review and the two-process commit race. Every document is validated against
//! `assets/schema/knowledge_dispatch.v1.schema.json` / `knowledge_handoff.v1.schema.json`.

mod common;

use knowledge::contract::dispatch::{DispatchRequest, DispatchResponse, Target, Task};
use knowledge::contract::{DispatchRun, Execution, ReviewStatus};
use knowledge::engine::outbox::{self, Decision};
use knowledge::engine::{Engine, EngineConfig};
use rusqlite::Connection;
use serde_json::Value;

fn task(text: &str) -> Task {
    Task {
        text: text.to_string(),
        acceptance: vec!["no file keeps a BOM or CRLF".into()],
        constraints: vec!["do not touch vendored files".into()],
    }
}

fn valid(resp: &DispatchResponse) -> Value {
    let doc = serde_json::to_value(resp).expect("json");
    common::schema::validate("knowledge_dispatch.v1.schema.json", "response", &doc)
        .unwrap_or_else(|e| panic!("dispatch response off-schema:\n{e}\n{doc:#}"));
    if let Some(h) = &resp.handoff {
        let h = serde_json::to_value(h).expect("json");
        common::schema::validate("knowledge_handoff.v1.schema.json", "handoff", &h)
            .unwrap_or_else(|e| panic!("handoff off-schema:\n{e}\n{h:#}"));
    }
    doc
}

fn assignments(data_dir: &std::path::Path) -> i64 {
    let path = EngineConfig::new(data_dir).knowledge_db();
    let conn = Connection::open(path).expect("store");
    conn.query_row("SELECT count(*) FROM ak_assignment", [], |r| r.get(0))
        .unwrap_or(0)
}

fn outbox_files(data_dir: &std::path::Path) -> usize {
    std::fs::read_dir(data_dir.join("outbox"))
        .map(|rd| rd.filter_map(|e| e.ok()).count())
        .unwrap_or(0)
}

#[test]
fn kd01_dry_run_creates_no_assignment() {
    let world = common::world::fresh_demo();
    let engine = world.engine();
    let resp = engine
        .dispatch(&DispatchRequest::dry_run(task(
            "clean-bom-crlf: проверить BOM и CRLF",
        )))
        .expect("dispatch");
    valid(&resp);
    assert_eq!(resp.mode, DispatchRun::DryRun);
    assert!(resp.assignment.is_none());
    assert!(resp.handoff.is_some(), "the package is previewed");
    assert_eq!(assignments(&world.data_dir), 0);
    assert_eq!(outbox_files(&world.data_dir), 0);
}

#[test]
fn kd02_commit_records_once_and_repeats_idempotently() {
    let world = common::world::fresh_demo();
    let engine = world.engine();
    let mut req = DispatchRequest::dry_run(task("clean-bom-crlf: проверить BOM и CRLF"));
    req.dry_run = false;
    let first = engine.dispatch(&req).expect("commit");
    valid(&first);
    let a = first.assignment.clone().expect("an assignment");
    assert!(a.created);
    assert_eq!(a.status, ReviewStatus::RecordedPlan);
    assert!(a.assignment_id.starts_with("assign:"));
    let file = std::fs::read(&a.outbox_path).expect("the package file");
    let second = engine.dispatch(&req).expect("commit again");
    let b = second.assignment.expect("an assignment");
    assert_eq!(a.assignment_id, b.assignment_id);
    assert!(!b.created, "the repeat is reported as already recorded");
    assert_eq!(assignments(&world.data_dir), 1);
    assert_eq!(outbox_files(&world.data_dir), 1);
    assert_eq!(
        file,
        std::fs::read(&b.outbox_path).expect("file"),
        "the file is untouched"
    );
    // The package on disk is a whole, valid handoff package that nobody executed.
    let pkg: Value = serde_json::from_slice(&file).expect("json");
    common::schema::validate("knowledge_handoff.v1.schema.json", "handoff", &pkg).expect("valid");
    assert_eq!(pkg["execution"], "not_executed");
}

#[test]
fn kd02_two_processes_committing_at_once_record_one_assignment() {
    let world = common::world::fresh_demo();
    let run = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_knowledge"))
            .arg("--data-dir")
            .arg(&world.data_dir)
            .args([
                "dispatch",
                "--task",
                "почини доступ к MySQL на 176.99.5.35",
                "--commit",
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn")
    };
    let (p1, p2) = (run(), run());
    let (o1, o2) = (
        p1.wait_with_output().expect("wait"),
        p2.wait_with_output().expect("wait"),
    );
    assert!(o1.status.success() && o2.status.success());
    let d1: Value = serde_json::from_slice(&o1.stdout).expect("json");
    let d2: Value = serde_json::from_slice(&o2.stdout).expect("json");
    assert_eq!(
        d1["assignment"]["assignment_id"],
        d2["assignment"]["assignment_id"]
    );
    let created = [&d1, &d2]
        .iter()
        .filter(|d| d["assignment"]["created"] == Value::Bool(true))
        .count();
    assert_eq!(created, 1, "exactly one process created the assignment");
    assert_eq!(assignments(&world.data_dir), 1);
    assert_eq!(
        outbox_files(&world.data_dir),
        1,
        "one whole file, no temp left behind"
    );
}

#[test]
fn kd03_named_skill_goes_to_the_actor_with_the_most_uses() {
    let world = common::world::demo();
    let engine = world.engine();
    let resp = engine
        .dispatch(&DispatchRequest::dry_run(task(
            "clean-bom-crlf: проверить BOM и CRLF в migrations/",
        )))
        .expect("dispatch");
    valid(&resp);
    let target = resp.target.expect("a target");
    assert_eq!(target.name, "encoding-janitor");
    // It really is the maximum of ak_skill_use for that skill.
    let conn = Connection::open(EngineConfig::new(&world.data_dir).knowledge_db()).expect("db");
    let max: i64 = conn
        .query_row(
            "SELECT max(n) FROM (SELECT count(*) n FROM ak_skill_use
             WHERE skill_name LIKE '%clean-bom-crlf' GROUP BY actor_id)",
            [],
            |r| r.get(0),
        )
        .expect("count");
    let mine: i64 = conn
        .query_row(
            "SELECT count(*) FROM ak_skill_use WHERE actor_id=?1 AND skill_name LIKE '%clean-bom-crlf'",
            [&target.actor_id],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(mine, max);
    assert!(target.why.iter().any(|w| w.contains("clean-bom-crlf")));
}

#[test]
fn kd04_dispatch_availability_tells_the_truth() {
    let world = common::world::fresh_demo();
    let req = DispatchRequest::dry_run(task("clean-bom-crlf: проверить BOM и CRLF"));
    let by_default = world.engine().dispatch(&req).expect("dispatch");
    let t = by_default.target.expect("target");
    assert_eq!(
        t.dispatch.mode,
        knowledge::contract::DispatchMode::SpawnReplica
    );
    assert!(
        !t.dispatch.available,
        "nothing is declared or detected: not available"
    );
    assert!(by_default
        .context_pack
        .risks
        .iter()
        .any(|r| r.contains("not available")));
    std::fs::write(
        world.data_dir.join("config.toml"),
        "[dispatch]\navailable = [\"spawn_replica\"]\n",
    )
    .expect("config");
    let engine = Engine::open(EngineConfig::load(&world.data_dir).expect("config loads"));
    let declared = engine.dispatch(&req).expect("dispatch");
    assert!(declared.target.expect("target").dispatch.available);
    // A bad config names the file and the problem.
    std::fs::write(
        world.data_dir.join("config.toml"),
        "[dispatch]\navailable = [\"teleport\"]\n",
    )
    .expect("config");
    let err = EngineConfig::load(&world.data_dir)
        .expect_err("rejected")
        .to_string();
    assert!(
        err.contains("config.toml") && err.contains("teleport"),
        "{err}"
    );
}

#[test]
fn kd05_context_pack_has_acceptance_episodes_code_skills_and_risks() {
    let engine = common::world::demo().engine();
    let resp = engine
        .dispatch(&DispatchRequest::dry_run(task(
            "почини доступ к MySQL на 176.99.5.35",
        )))
        .expect("dispatch");
    valid(&resp);
    let p = &resp.context_pack;
    assert_eq!(
        p.acceptance,
        vec!["no file keeps a BOM or CRLF".to_string()]
    );
    assert!(!p.prior_episodes.is_empty(), "prior episodes");
    assert!(!p.code_refs.is_empty(), "code refs");
    assert!(!p.skills.is_empty(), "skills");
    assert!(
        p.risks
            .iter()
            .any(|r| r.contains("01a139c0-47a8-74e1-87f9-91f91af1bacc")),
        "the earlier failed Codex attempt is a risk: {:?}",
        p.risks
    );
    for e in &p.prior_episodes {
        let n = e.snippet.as_deref().map_or(0, |s| s.chars().count());
        assert!(n <= 160, "snippets stay short: {n}");
    }
    let target = resp.target.expect("target");
    assert_eq!(target.name, "db-fixer");
}

fn children_of_self() -> usize {
    let pid = std::process::id();
    let mut n = 0;
    if let Ok(rd) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for t in rd.filter_map(|e| e.ok()) {
            let c = std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
            n += c.split_whitespace().count();
        }
    }
    n
}

#[test]
fn kd06_nothing_is_started_and_no_source_store_is_written() {
    let world = common::world::fresh_demo();
    let hash = |name: &str| std::fs::read(world.data_dir.join(name)).expect("store");
    let (ep, code) = (hash("episodes.sqlite"), hash("code.sqlite"));
    let before = children_of_self();
    let engine = world.engine();
    for text in [
        "clean-bom-crlf: проверить BOM и CRLF",
        "почини доступ к MySQL",
        "stripe webhook",
    ] {
        let mut req = DispatchRequest::dry_run(task(text));
        engine.dispatch(&req).expect("dry run");
        req.dry_run = false;
        let resp = engine.dispatch(&req).expect("commit");
        let h = resp.handoff.expect("package");
        assert_eq!(h.execution, Execution::NotExecuted);
    }
    assert_eq!(children_of_self(), before, "a process was started");
    assert_eq!(ep, hash("episodes.sqlite"), "episodes store changed");
    assert_eq!(code, hash("code.sqlite"), "code store changed");
}

#[test]
fn unknown_actor_is_a_clear_error_naming_it() {
    let engine = common::world::demo().engine();
    let mut req = DispatchRequest::dry_run(task("anything"));
    req.target = Target::Actor("actor:claude:subagent:nope:ghost".into());
    let errors = engine.dispatch(&req).expect_err("refused");
    assert!(errors[0]
        .message
        .contains("actor:claude:subagent:nope:ghost"));
    assert_eq!(errors[0].field.as_deref(), Some("target"));
    let out = engine.dispatch_json(
        r#"{"schema":"knowledge.dispatch/v1","task":{"text":"x"},"target":"actor:ghost"}"#,
        false,
    );
    assert!(out.is_invalid());
    common::schema::validate(
        "knowledge_dispatch.v1.schema.json",
        "error_response",
        &out.to_json(),
    )
    .expect("error document on schema");
}

#[test]
fn review_approve_and_reject_are_final_and_idempotent() {
    let world = common::world::fresh_demo();
    let engine = world.engine();
    let config = EngineConfig::new(&world.data_dir);
    let mut ids = Vec::new();
    for text in [
        "clean-bom-crlf: проверить BOM и CRLF",
        "почини доступ к MySQL на 176.99.5.35",
    ] {
        let mut req = DispatchRequest::dry_run(task(text));
        req.dry_run = false;
        ids.push(
            engine
                .dispatch(&req)
                .expect("commit")
                .assignment
                .expect("a")
                .assignment_id,
        );
    }
    let (listed, bad) = outbox::list(&config);
    assert!(bad.is_empty());
    assert_eq!(listed.len(), 2);
    let (h, changed) = outbox::decide(&config, &ids[0], &Decision::Approve, "alice").expect("ok");
    assert!(changed);
    assert_eq!(h.review.status, ReviewStatus::Approved);
    assert_eq!(h.review.decided_by.as_deref(), Some("alice"));
    assert_eq!(
        h.execution,
        Execution::NotExecuted,
        "approving executes nothing"
    );
    let (_, again) = outbox::decide(&config, &ids[0], &Decision::Approve, "bob").expect("ok");
    assert!(!again, "approving twice changes nothing");
    assert!(outbox::decide(&config, &ids[0], &Decision::Reject { reason: None }, "bob").is_err());
    let reason = Some("wrong actor".to_string());
    let (h, _) =
        outbox::decide(&config, &ids[1], &Decision::Reject { reason }, "carol").expect("ok");
    assert_eq!(h.review.reason.as_deref(), Some("wrong actor"));
    // The lead reads the decision from the package on disk.
    let (_, on_disk) = outbox::show(&config, &ids[1]).expect("show");
    assert_eq!(on_disk.review.status, ReviewStatus::Rejected);
    let pkg = serde_json::to_value(&on_disk).expect("json");
    common::schema::validate("knowledge_handoff.v1.schema.json", "handoff", &pkg).expect("valid");
}

#[test]
fn a_decision_the_store_holds_but_the_package_lacks_is_brought_to_the_package() {
    use knowledge::contract::dispatch::Review;
    use knowledge::sources::agent_knowledge::assignments::AssignmentStore;
    let world = common::world::fresh_demo();
    let engine = world.engine();
    let config = EngineConfig::new(&world.data_dir);
    let mut ids = Vec::new();
    for text in ["проверить BOM и CRLF", "почини доступ к MySQL"] {
        let mut req = DispatchRequest::dry_run(task(text));
        req.dry_run = false;
        let asg = engine
            .dispatch(&req)
            .expect("commit")
            .assignment
            .expect("a");
        ids.push(asg.assignment_id);
    }
    // Both decisions reached the store, but their package writes failed.
    let store = AssignmentStore::open(&config.knowledge_db()).expect("store");
    let decided = |status: &str| Review {
        status: ReviewStatus::parse(status).expect("a status"),
        decided_by: Some("alice".to_string()),
        decided_at: Some("2026-12-01T02:00:00Z".to_string()),
        reason: None,
    };
    assert!(store.decide(&ids[0], &decided("approved")).expect("decide"));
    assert!(store.decide(&ids[1], &decided("rejected")).expect("decide"));

    // The same decision again repairs the package with the store's record of it.
    let (h, changed) = outbox::decide(&config, &ids[0], &Decision::Approve, "bob").expect("ok");
    assert!(changed);
    assert_eq!(h.review, decided("approved"));
    let (_, on_disk) = outbox::show(&config, &ids[0]).expect("show");
    assert_eq!(on_disk.review, decided("approved"));

    // Another decision is refused: the store's is final.
    let err = outbox::decide(&config, &ids[1], &Decision::Approve, "bob").expect_err("final");
    assert!(err.to_string().contains("rejected"), "{err}");
    let (_, on_disk) = outbox::show(&config, &ids[1]).expect("show");
    assert_eq!(on_disk.review.status, ReviewStatus::RecordedPlan);
}

/// A package whose review status was edited by hand into something knowledge never writes (a
/// map in the place of the word, a word with escape sequences) is not a decision: it is listed
/// as unreadable with the reason, `show` refuses it with a message the terminal can print, and
/// the file stays as it was.
#[test]
fn a_hand_edited_review_status_is_refused_not_taken_as_a_decision() {
    let world = common::world::fresh_demo();
    let mut req = DispatchRequest::dry_run(task("почини доступ к MySQL на 176.99.5.35"));
    req.dry_run = false;
    let id = world
        .engine()
        .dispatch(&req)
        .expect("commit")
        .assignment
        .expect("an assignment")
        .assignment_id;
    let config = EngineConfig::new(&world.data_dir);
    let file = std::fs::read_dir(world.data_dir.join("outbox"))
        .expect("outbox")
        .map(|e| e.expect("entry").path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .expect("the package");
    for status in [
        serde_json::json!({"approved": null}),
        serde_json::json!("\u{1b}]52;c;UFdORUQ=\u{7}\u{1b}[2Japproved"),
    ] {
        let mut doc: Value = serde_json::from_slice(&std::fs::read(&file).expect("read")).unwrap();
        doc["review"]["status"] = status.clone();
        let edited = serde_json::to_vec_pretty(&doc).unwrap();
        std::fs::write(&file, &edited).expect("write");
        let (listed, bad) = outbox::list(&config);
        assert!(listed.is_empty(), "{status}: {listed:?}");
        assert_eq!(bad.len(), 1, "{status}");
        assert!(
            outbox::decide(&config, &id, &Decision::Reject { reason: None }, "bob").is_err(),
            "{status}"
        );
        // By its full id and by the first characters of its hex, as a person types it.
        let prefix = &id.trim_start_matches("assign:")[..6];
        for asked in [id.as_str(), prefix] {
            let out = common::cli::bin()
                .arg("--data-dir")
                .arg(&world.data_dir)
                .args(["outbox", "show", asked])
                .output()
                .expect("run");
            assert_ne!(out.status.code(), Some(0), "{status}");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                stderr.contains("not a handoff package"),
                "{asked}: {stderr}"
            );
            assert!(
                !stderr.chars().any(|c| c.is_control() && c != '\n'),
                "{stderr:?}"
            );
        }
        assert_eq!(
            std::fs::read(&file).expect("read"),
            edited,
            "the file is kept"
        );
    }
}
