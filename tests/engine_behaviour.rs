//! Engine behaviour a person notices beyond the acceptance criteria: routing on Russian and
//! English cue words, a slow lane timing out alone, `trace`, a stale code index, the handoff
//! package of each dispatch mode, and `knowledge code` on the real binary.

mod common;

use std::sync::Arc;
use std::time::Duration;

use knowledge::contract::dispatch::{ContextPack, DispatchTarget, Task};
use knowledge::contract::Execution;
use knowledge::contract::{ActorKind, Code, DispatchInfo, DispatchMode, Lane, Mode, SearchRequest};
use knowledge::engine::dispatch::build_handoff;
use knowledge::engine::routing::route;
use knowledge::lanes::{
    CodeAnswer, CodeLines, CodeSource, CodeStats, LaneRequest, LineRange, ReadCodeError,
    SourceFailure,
};

#[test]
fn routing_follows_the_contract_table_in_both_languages() {
    let all = Lane::ALL.into_iter().collect();
    let cases = [
        ("кто чинил доступ к MySQL", Mode::FindAgent, [1.0, 0.4, 0.6]),
        ("who fixed getUserName", Mode::FindAgent, [1.0, 0.4, 0.6]),
        (
            "где функция подключения к базе",
            Mode::FindCode,
            [0.3, 1.0, 0.2],
        ),
        (
            "where is the function defined",
            Mode::FindCode,
            [0.3, 1.0, 0.2],
        ),
        (
            "какой навык применял для BOM",
            Mode::FindSkill,
            [0.5, 0.2, 1.0],
        ),
        ("which skill checks BOM", Mode::FindSkill, [0.5, 0.2, 1.0]),
        (
            "stripe webhook signature",
            Mode::FindKnowledge,
            [0.8, 0.8, 0.4],
        ),
    ];
    for (q, intent, weights) in cases {
        let r = route(q, Mode::Auto, &all);
        assert_eq!(r.intent, intent, "{q}: {}", r.reason);
        assert_eq!(r.weights, weights, "{q}");
        assert!(!r.reason.is_empty());
    }
    // A mixed question keeps both themes at a lower confidence and says so.
    let mixed = route("кто менял функцию подключения и где она", Mode::Auto, &all);
    let single = route("кто чинил доступ", Mode::Auto, &all);
    assert!(mixed.confidence < single.confidence);
    assert!(mixed.reason.contains("find_agent") && mixed.reason.contains("find_code"));
    assert!(
        mixed.weights[0] >= 1.0 && mixed.weights[1] >= 1.0,
        "both lanes kept"
    );
    // The caller's mode wins over the cue words.
    let forced = route("кто чинил доступ", Mode::FindCode, &all);
    assert_eq!((forced.intent, forced.confidence), (Mode::FindCode, 1.0));
}

/// A code source that answers after a delay.
struct Slow(Duration);

impl CodeSource for Slow {
    fn name(&self) -> String {
        "slow-ragraf".into()
    }
    fn search(&self, _: &LaneRequest) -> Result<CodeAnswer, SourceFailure> {
        std::thread::sleep(self.0);
        Err(SourceFailure::new(
            Code::Internal,
            "should have been abandoned",
        ))
    }
    fn read(&self, path: &str, _: LineRange, _: Option<&str>) -> Result<CodeLines, ReadCodeError> {
        Err(ReadCodeError::NotInSource(
            format!("{path}: not held here").into(),
        ))
    }
    fn stats(&self) -> Result<CodeStats, SourceFailure> {
        Ok(CodeStats::default())
    }
}

#[test]
fn a_slow_lane_times_out_alone_and_trace_says_so() {
    let mut engine = common::world::demo().engine();
    engine.config.lane_timeout = Duration::from_millis(250);
    engine.code = Arc::new(Slow(Duration::from_secs(3)));
    let mut req = SearchRequest::new("кто чинил доступ к MySQL");
    req.trace = true;
    let started = std::time::Instant::now();
    let resp = engine.search(&req);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "the search did not wait"
    );
    assert!(resp.lanes.code.header.degraded);
    assert!(resp
        .lanes
        .code
        .header
        .degradation_reason
        .as_deref()
        .unwrap_or("")
        .contains("timed out"));
    assert!(
        !resp.lanes.episodes.items.is_empty(),
        "episodes still answer"
    );
    let trace = resp.trace.as_ref().expect("trace");
    let lanes: Vec<&str> = trace.lanes.iter().map(|l| l.lane.as_str()).collect();
    assert_eq!(lanes, ["episodes", "code", "skills"]);
    let code = &trace.lanes[1];
    assert!(code.degraded && code.ms >= 200.0);
    let text = serde_json::to_string(&trace).expect("json");
    assert!(
        !text.contains("MySQL") && !text.contains("доступ"),
        "trace holds no query text"
    );
    let doc = serde_json::to_value(&resp).expect("json");
    common::schema::validate("knowledge_search.v1.schema.json", "response", &doc).expect("valid");
    // Without `trace`, no trace.
    assert!(engine.search(&SearchRequest::new("mysql")).trace.is_none());
}

#[test]
fn a_changed_file_makes_the_code_lane_stale_but_still_answering() {
    let world = common::world::fresh_demo();
    let config_php = std::path::Path::new(&world.world.repo("billing")).join("src/Config.php");
    let mut text = std::fs::read_to_string(&config_php).expect("read");
    text.push_str("\n// edited after indexing\n");
    std::fs::write(&config_php, text).expect("write");
    let resp = world.engine().search(&SearchRequest::new(
        "where is the MySQL connection configured",
    ));
    assert!(resp.lanes.code.freshness.stale);
    assert_eq!(resp.lanes.code.freshness.verified_by, "fingerprint");
    assert!(
        !resp.lanes.code.items.is_empty(),
        "the data is still returned"
    );
    assert!(resp.warnings.iter().any(|w| w.code == Code::StaleIndex));
    let doc = serde_json::to_value(&resp).expect("json");
    common::schema::validate("knowledge_search.v1.schema.json", "response", &doc).expect("valid");
}

#[test]
fn each_dispatch_mode_gets_its_tool_calls_and_nothing_is_executed() {
    let task = Task {
        text: "rotate the webhook secret".into(),
        acceptance: vec!["old secret rejected".into()],
        constraints: vec![],
    };
    for (mode, tools) in [
        (DispatchMode::SpawnReplica, vec!["spawn_teammate"]),
        (
            DispatchMode::TeamTask,
            vec!["team_task_create", "send_message"],
        ),
        (DispatchMode::ExternalHandoff, vec![]),
        (DispatchMode::None, vec![]),
    ] {
        let target = DispatchTarget {
            actor_id: "actor:claude:team_member:s:alice".into(),
            name: "alice".into(),
            kind: ActorKind::TeamMember,
            source: "claude".into(),
            why: vec![],
            dispatch: DispatchInfo {
                mode,
                available: false,
            },
            title: None,
            workspace: None,
        };
        let h = build_handoff(
            "assign:0123",
            &target,
            &task,
            &ContextPack::default(),
            "2026-11-30T00:00:00Z".into(),
        );
        let got: Vec<&str> = h.tool_calls.iter().map(|c| c.tool.as_str()).collect();
        assert_eq!(got, tools, "{mode}");
        assert_eq!(h.execution, Execution::NotExecuted);
        let doc = serde_json::to_value(&h).expect("json");
        common::schema::validate("knowledge_handoff.v1.schema.json", "handoff", &doc)
            .unwrap_or_else(|e| panic!("{mode}: {e}"));
    }
}

#[test]
fn knowledge_code_prints_redacted_numbered_lines() {
    let world = common::world::demo();
    let run = |loc: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_knowledge"))
            .arg("--data-dir")
            .arg(&world.data_dir)
            .args(["code", loc])
            .output()
            .expect("run")
    };
    let env = format!("{}/.env:1-20", world.world.repo("billing"));
    let out = run(&env);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("DB_PASSWORD"),
        "the key name stays visible:\n{text}"
    );
    assert!(!text.contains("canary-env-5521"), "the value never shows");
    assert!(text
        .lines()
        .nth(1)
        .is_some_and(|l| l.trim_start().starts_with('1')));
    let bad = run("not-a-locator");
    assert_eq!(bad.status.code(), Some(2));
}
