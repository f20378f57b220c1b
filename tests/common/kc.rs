//! The contract's acceptance criteria KC-1…KC-13 (§13), written once over a world handle
//! ([`World`]) so the same assertions hold every source to them: this machine's indexes over the
//! demo world (`tests/acceptance_kc.rs`, [`Local`]) and the team's PostgreSQL holding the same
//! world pushed (`tests/team_kc.rs`). Every response is validated against
//! `assets/schema/knowledge_search.v1.schema.json`.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use knowledge::contract::{Code, Lane, Mode, SearchRequest, SearchResponse};
use knowledge::engine::{Engine, EngineConfig};
use knowledge::lanes::{SourceFailure, Unavailable};
use serde_json::Value;

use super::world::Indexed;

/// What the checks need of a world: its engine, the command line over it, and its stores.
pub trait World {
    /// An engine answering from the world's source.
    fn engine(&self) -> Engine;
    /// An engine over the same kind of source with nothing in it yet (`scratch`: a temp dir).
    fn empty(&self, scratch: &Path) -> Engine;
    /// The demo world's repository `name`, as its sessions' `cwd` names it.
    fn repo(&self, name: &str) -> String;
    /// `knowledge` with the arguments that answer from the world's source.
    fn cli(&self) -> Command;
    /// Every store the answers come from, by name: the bytes a canary must never be in.
    fn stored(&self) -> Vec<(String, Vec<u8>)>;
    /// A digest of every store the answers come from: searching must change none.
    fn digest(&self) -> Vec<(String, String)>;
    /// Whether the code lane ranks by FTS5's BM25 (the team index ranks by `ts_rank`).
    fn ranks_code_by_bm25(&self) -> bool {
        true
    }
}

/// This machine's indexes over the demo world.
pub enum Local {
    Shared(&'static Indexed),
    Fresh(Indexed),
}

impl Local {
    /// The demo world indexed once per test binary (read-only checks).
    pub fn shared() -> Local {
        Local::Shared(super::world::demo())
    }
    /// A fresh copy of the demo world (checks that look at the stores' bytes).
    pub fn fresh() -> Local {
        Local::Fresh(super::world::fresh_demo())
    }
    fn indexed(&self) -> &Indexed {
        match self {
            Local::Shared(w) => w,
            Local::Fresh(w) => w,
        }
    }
}

impl World for Local {
    fn engine(&self) -> Engine {
        self.indexed().engine()
    }
    fn empty(&self, scratch: &Path) -> Engine {
        Engine::open(EngineConfig::new(scratch))
    }
    fn repo(&self, name: &str) -> String {
        self.indexed().world.repo(name)
    }
    fn cli(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_knowledge"));
        c.arg("--data-dir").arg(&self.indexed().data_dir);
        c
    }
    fn stored(&self) -> Vec<(String, Vec<u8>)> {
        ["episodes.sqlite", "code.sqlite", "knowledge.sqlite"]
            .into_iter()
            .map(|db| {
                let bytes = std::fs::read(self.indexed().data_dir.join(db)).expect("store");
                (db.to_string(), bytes)
            })
            .collect()
    }
    fn digest(&self) -> Vec<(String, String)> {
        digest(&self.indexed().data_dir)
    }
}

/// SHA-256 of some bytes, in hex.
pub fn hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

const QUERIES: &[&str] = &[
    "кто чинил доступ к MySQL на 176.99.5.35",
    "who fixed getUserName",
    "where is the MySQL connection configured",
    "which skill checks BOM and CRLF",
    "stripe webhook signature",
    "почему падал деплой",
    "encoding-janitor",
    "where is the cart total computed",
    "nightly backup S3 SignatureDoesNotMatch",
];

fn valid(resp: &SearchResponse) -> Value {
    let doc = serde_json::to_value(resp).expect("serialize");
    if let Err(e) = super::schema::validate("knowledge_search.v1.schema.json", "response", &doc) {
        panic!("response does not match the schema:\n{e}\n{doc:#}");
    }
    doc
}

fn search(engine: &Engine, q: &str) -> (SearchResponse, Value) {
    let resp = engine.search(&SearchRequest::new(q));
    let doc = valid(&resp);
    (resp, doc)
}

fn down(name: &str, code: Code, reason: &str) -> Arc<Unavailable> {
    Arc::new(Unavailable {
        name: name.to_string(),
        failure: SourceFailure::new(code, reason),
    })
}

pub fn kc01_valid_request_has_schema_routing_lanes_and_fusion(w: &dyn World) {
    let engine = w.engine();
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/assets/contracts/knowledge_search.request.json"
    ))
    .expect("example request");
    let doc = engine.search_json(&text).to_json();
    super::schema::validate("knowledge_search.v1.schema.json", "response", &doc)
        .expect("valid response");
    assert_eq!(doc["schema"], "knowledge.search/v1");
    assert!(doc["routing"]["intent"].is_string());
    assert!(doc["lanes"]["episodes"].is_object() && doc["lanes"]["code"].is_object());
    assert_eq!(doc["fusion"]["strategy"], "rrf");
    assert_eq!(doc["fusion"]["k"], 60);
}

pub fn kc02_both_sources_alive_give_both_lanes_unmixed(w: &dyn World) {
    let engine = w.engine();
    let (resp, doc) = search(&engine, "where is the MySQL connection configured");
    assert!(!resp.lanes.episodes.header.degraded && !resp.lanes.code.header.degraded);
    assert!(!resp.lanes.episodes.items.is_empty(), "episodes answer");
    assert!(!resp.lanes.code.items.is_empty(), "code answers");
    for it in doc["lanes"]["episodes"]["items"].as_array().expect("items") {
        assert!(
            it.get("path").is_none(),
            "an episode item carries a path: {it}"
        );
    }
    for it in doc["lanes"]["code"]["items"].as_array().expect("items") {
        assert!(
            it.get("session_id").is_none(),
            "a code item carries a session: {it}"
        );
    }
    // The contract's example ranking is BM25's (FTS5 column weights); a source that ranks by
    // another score is held to everything above, not to this order.
    if w.ranks_code_by_bm25() {
        assert_eq!(resp.lanes.code.items[0].path, "src/Config.php");
    }
}

pub fn kc03_code_source_down_degrades_only_the_code_lane(w: &dyn World) {
    let mut engine = w.engine();
    engine.code = down(
        "ragraf",
        Code::SourceUnavailable,
        "RAGRAF MCP server is not running",
    );
    let (resp, _) = search(&engine, "кто чинил доступ к MySQL на 176.99.5.35");
    assert!(resp.lanes.code.header.degraded);
    assert!(resp.lanes.code.items.is_empty());
    assert!(
        !resp.lanes.episodes.items.is_empty(),
        "episodes keep answering"
    );
    assert!(resp.errors.iter().any(|e| e.code == Code::SourceUnavailable
        && e.lane == Some(Lane::Code)
        && e.message.contains("RAGRAF")));
    assert!(resp.found);
}

pub fn kc04_episodes_source_down_degrades_only_the_episodes_lane(w: &dyn World) {
    let mut engine = w.engine();
    engine.episodes = down(
        "harness.session-query",
        Code::SourceUnavailable,
        "SESSION_QUERY_SEARCH_DISABLED",
    );
    let (resp, _) = search(&engine, "where is the MySQL connection configured");
    assert!(resp.lanes.episodes.header.degraded);
    assert!(resp.lanes.episodes.items.is_empty());
    assert!(!resp.lanes.code.items.is_empty(), "code keeps answering");
    assert!(resp.errors.iter().any(|e| e.lane == Some(Lane::Episodes)));
    // And an index that was never built: the lane is empty with INDEX_NOT_READY.
    let dir = tempfile::tempdir().expect("tmp");
    let empty = w.empty(dir.path());
    let resp = empty.search(&SearchRequest::new("mysql"));
    valid(&resp);
    assert!(resp.lanes.episodes.header.degraded);
    assert!(resp
        .warnings
        .iter()
        .chain(resp.errors.iter())
        .any(|w| w.code == Code::IndexNotReady));
}

pub fn kc05_both_sources_down_found_false_no_source_no_items(w: &dyn World) {
    let mut engine = w.engine();
    engine.episodes = down("harness", Code::SourceUnavailable, "down");
    engine.code = down("ragraf", Code::SourceUnavailable, "down");
    for q in QUERIES {
        let (resp, _) = search(&engine, q);
        assert!(!resp.found);
        assert!(resp.errors.iter().any(|e| e.code == Code::NoSource));
        assert!(resp.lanes.episodes.items.is_empty() && resp.lanes.code.items.is_empty());
        assert!(resp
            .lanes
            .skills
            .as_ref()
            .is_none_or(|s| s.items.is_empty()));
        assert!(resp.actors.is_empty(), "no invented actors");
        assert_eq!(resp.limits.returned, 0);
    }
}

pub fn kc06_every_item_has_its_locator(w: &dyn World) {
    let engine = w.engine();
    for q in QUERIES {
        let mut req = SearchRequest::new(*q);
        req.limit = 50;
        req.max_tokens = 20_000;
        let resp = engine.search(&req);
        let doc = valid(&resp);
        for it in doc["lanes"]["episodes"]["items"].as_array().expect("items") {
            assert!(it["session_id"].as_str().is_some_and(|s| !s.is_empty()));
            assert!(it["seq"].as_u64().is_some());
        }
        for it in doc["lanes"]["code"]["items"].as_array().expect("items") {
            assert!(it["path"].as_str().is_some_and(|s| !s.is_empty()));
            assert!(it["start_line"].as_u64().is_some_and(|n| n >= 1));
        }
    }
}

pub fn kc07_actor_evidence_names_only_items_in_the_response(w: &dyn World) {
    let engine = w.engine();
    for q in QUERIES {
        for (limit, max_tokens) in [(3, 500), (10, 1500), (10, 4000), (50, 20000)] {
            let mut req = SearchRequest::new(*q);
            req.limit = limit;
            req.max_tokens = max_tokens;
            let resp = engine.search(&req);
            valid(&resp);
            let ids: Vec<(Lane, String)> = resp
                .lanes
                .episodes
                .items
                .iter()
                .map(|i| (Lane::Episodes, i.id.clone()))
                .chain(
                    resp.lanes
                        .code
                        .items
                        .iter()
                        .map(|i| (Lane::Code, i.id.clone())),
                )
                .chain(
                    resp.lanes
                        .skills
                        .iter()
                        .flat_map(|s| s.items.iter().map(|i| (Lane::Skills, i.id.clone()))),
                )
                .collect();
            for a in &resp.actors {
                assert!(
                    !a.evidence.is_empty(),
                    "an actor without evidence: {}",
                    a.actor_id
                );
                for e in &a.evidence {
                    assert!(
                        ids.contains(&(e.lane, e.id.clone())),
                        "{q} (limit {limit}, budget {max_tokens}): {} cites missing {}:{}",
                        a.actor_id,
                        e.lane,
                        e.id
                    );
                }
            }
        }
    }
}

pub fn kc08_rrf_weights_apply_and_equal_ranks_order_stably(w: &dyn World) {
    let engine = w.engine();
    for (mode, w_ep, w_code) in [
        (Mode::FindAgent, 1.0, 0.4),
        (Mode::FindCode, 0.3, 1.0),
        (Mode::FindSkill, 0.5, 0.2),
        (Mode::FindKnowledge, 0.8, 0.8),
    ] {
        let mut req = SearchRequest::new("mysql connection");
        req.mode = mode;
        req.max_tokens = 20_000;
        let resp = engine.search(&req);
        valid(&resp);
        assert_eq!(resp.fusion.weights["episodes"], w_ep);
        assert_eq!(resp.fusion.weights["code"], w_code);
        for (rank, it) in resp.lanes.episodes.items.iter().enumerate() {
            let want = w_ep / (60.0 + rank as f64 + 1.0);
            assert!(
                (it.score - want).abs() < 1e-6,
                "episodes rank {rank}: {}",
                it.score
            );
        }
        for (rank, it) in resp.lanes.code.items.iter().enumerate() {
            let want = w_code / (60.0 + rank as f64 + 1.0);
            assert!(
                (it.score - want).abs() < 1e-6,
                "code rank {rank}: {}",
                it.score
            );
        }
        // The same rank in two lanes: the heavier lane scores higher, equal weights tie.
        if let (Some(e), Some(c)) = (
            resp.lanes.episodes.items.first(),
            resp.lanes.code.items.first(),
        ) {
            assert_eq!(e.score > c.score, w_ep > w_code);
            assert_eq!(e.score == c.score, w_ep == w_code);
        }
    }
    // Equal scores order by (time desc, id asc), whatever the input order.
    use knowledge::engine::items::order;
    let mut v = vec![
        (0.01, Some("2026-10-01"), "b"),
        (0.01, Some("2026-10-02"), "c"),
        (0.01, None, "a"),
        (0.01, Some("2026-10-01"), "a"),
        (0.02, None, "z"),
    ];
    let mut w = v.clone();
    w.reverse();
    v.sort_by(|a, b| order(*a, *b));
    w.sort_by(|a, b| order(*a, *b));
    assert_eq!(v, w);
    let ids: Vec<&str> = v.iter().map(|x| x.2).collect();
    assert_eq!(ids, ["z", "c", "a", "b", "a"]);
}

pub fn kc09_budget_is_never_exceeded_and_truncation_is_honest(w: &dyn World) {
    let engine = w.engine();
    let bpe = tiktoken_rs::o200k_base().expect("o200k");
    for q in QUERIES {
        let mut full_req = SearchRequest::new(*q);
        full_req.max_tokens = 20_000;
        full_req.limit = 20;
        let full = engine.search(&full_req);
        for max_tokens in [500, 700, 1000, 1500, 2500, 4000, 20000] {
            let mut req = full_req.clone();
            req.max_tokens = max_tokens;
            let resp = engine.search(&req);
            let text = serde_json::to_string(&resp).expect("json");
            valid(&resp);
            let real = bpe.encode_with_special_tokens(&text).len();
            // Only a skeleton that cannot fit excuses going over; a lowered limit does not.
            let over = resp
                .warnings
                .iter()
                .any(|w| w.code == Code::BudgetExceeded && w.message.contains("cannot hold"));
            if !over {
                assert!(
                    real <= max_tokens as usize,
                    "{q}: {real} o200k tokens > {max_tokens}"
                );
                assert!(resp.limits.budget.used_tokens <= max_tokens);
            }
            assert_eq!(resp.limits.truncated, !resp.limits.dropped.is_empty());
            for d in &resp.limits.dropped {
                let lane_ids = full.lane_ids(d.lane);
                assert!(
                    lane_ids.contains(&d.id.as_str()),
                    "dropped {} was never there",
                    d.id
                );
                let still = resp.lane_ids(d.lane);
                assert_eq!(still.contains(&d.id.as_str()), d.what == "snippet", "{d:?}");
            }
            if max_tokens == 20000 {
                assert!(
                    !resp.limits.truncated,
                    "{q}: a generous budget cuts nothing"
                );
            }
        }
    }
}

pub fn kc10_workspace_filter_never_leaks_other_sessions_or_paths(w: &dyn World) {
    let engine = w.engine();
    let billing = w.repo("billing");
    for q in QUERIES
        .iter()
        .chain(["MySQL 176.99.5.35 archive_ro invoices 2019"].iter())
    {
        let mut req = SearchRequest::new(*q);
        req.filters.workspaces = vec![billing.clone()];
        req.limit = 50;
        req.max_tokens = 20_000;
        let resp = engine.search(&req);
        valid(&resp);
        for it in &resp.lanes.episodes.items {
            let cwd = it.session.cwd.as_deref().unwrap_or("");
            assert!(
                cwd == billing || cwd.starts_with(&format!("{billing}/")),
                "{q}: session {} from {cwd} leaked",
                it.session_id
            );
        }
        let text = serde_json::to_string(&resp).expect("json");
        assert!(
            !text.contains("billing-archive"),
            "{q}: billing-archive leaked"
        );
        assert!(!text.contains("repos/webshop"), "{q}: webshop leaked");
        assert!(
            !text.contains("0967c2cb-7b3b-43a0-aef5-cda669e49a32"),
            "C9 leaked"
        );
    }
    // Without the filter, the archive session is found: the filter is what removed it.
    let resp = engine.search(&SearchRequest::new(
        "MySQL 176.99.5.35 archive_ro invoices 2019",
    ));
    assert!(serde_json::to_string(&resp)
        .expect("json")
        .contains("0967c2cb"));
}

const CANARIES: &[&str] = &[
    "Canary-Pw-7731",
    "canary-env-5521",
    "sk_live_CANARYKEY7f3a9c1e5b2d8f4a6c0e",
    "AKIACANARY0000000000",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYCANARY9931",
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJzdmMtb3JkZXJzIiwiY2FuYXJ5Ijoiand0LTQ0MTgiLCJpYXQiOjE3OTEwMDAwMDAsImV4cCI6MTc5MzAwMDAwMH0",
    "CANARYRSAKEY8842",
    "Канарейка-42",
    "canary-smtp-6620",
    "CANARYMG5d1e8f2a9b3c7046",
];

fn assert_no_canary(what: &str, text: &str) {
    for c in CANARIES {
        assert!(!text.contains(c), "{what} leaks the canary {c}");
    }
}

pub fn kc11_secret_canaries_never_appear_in_responses_logs_or_stores(w: &dyn World) {
    let engine = w.engine();
    let queries = [
        "DB_PASSWORD",
        "password",
        "пароль",
        "AWS_SECRET_ACCESS_KEY aws_access_key_id",
        "BEGIN RSA PRIVATE KEY",
        "sk_live stripe secret key config.toml",
        "STAGING_TOKEN printenv",
        "mysql://billing",
        "Canary-Pw-7731",
        "canary-env-5521",
        "AKIACANARY0000000000",
        "Канарейка-42",
        "CANARYRSAKEY8842",
        "SMTP_PASSWORD newsletter worker",
        "MAILGUN_API_KEY env",
        "canary-smtp-6620",
        "CANARYMG5d1e8f2a9b3c7046",
    ];
    for q in queries.iter().chain(QUERIES.iter()) {
        let mut req = SearchRequest::new(*q);
        req.limit = 50;
        req.max_tokens = 20_000;
        req.snippet_chars = 1000;
        let mut resp = engine.search(&req);
        // The echo of what the person typed is theirs; everything the stores gave must be clean.
        resp.query = String::new();
        let text = serde_json::to_string(&resp).expect("json");
        assert_no_canary(&format!("the response to {q:?}"), &text);
        for it in &resp.lanes.episodes.items {
            let ep = engine
                .get_episode(&it.session_id, it.seq, 5)
                .expect("episode");
            assert_no_canary("get_episode", &serde_json::to_string(&ep).expect("json"));
        }
        for it in &resp.lanes.code.items {
            let abs = format!("{}/{}", it.root.as_deref().unwrap_or(""), it.path);
            let lines = engine
                .read_code(&abs, 1, Some(400), Some(&it.chunk_id))
                .expect("read");
            assert_no_canary("read_code", &lines.lines.join("\n"));
        }
    }
    let log = std::fs::read_to_string(engine.config.log_path()).expect("the request log exists");
    assert_no_canary("the log", &log);
    assert!(
        !log.contains("DB_PASSWORD") && !log.contains("пароль"),
        "the log holds query text"
    );
    let stored = w.stored();
    assert!(!stored.is_empty(), "no store to check");
    for (store, bytes) in stored {
        assert_no_canary(&store, &String::from_utf8_lossy(&bytes));
    }
}

pub fn kc12_same_request_twice_gives_the_same_bytes(w: &dyn World) {
    let engine = w.engine();
    for q in QUERIES {
        let a = serde_json::to_string(&engine.search(&SearchRequest::new(*q))).expect("json");
        let b = serde_json::to_string(&engine.search(&SearchRequest::new(*q))).expect("json");
        assert_eq!(a, b, "{q}");
    }
    // Across processes too: two CLI calls print identical bytes.
    let run = || {
        let out = w
            .cli()
            .args(["search", "-q", "кто чинил доступ к MySQL на 176.99.5.35"])
            .output()
            .expect("run");
        assert!(out.status.success(), "{out:?}");
        out.stdout
    };
    let first = run();
    assert!(String::from_utf8_lossy(&first).contains("\"episodes\""));
    assert_eq!(first, run());
}

/// (file, SHA-256) of the episodes and code stores, WAL included (the `-shm` index is shared
/// memory that every reader touches, not stored data).
pub fn digest(path: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for name in ["episodes.sqlite", "code.sqlite"] {
        for suffix in ["", "-wal"] {
            let p = path.join(format!("{name}{suffix}"));
            // A reader may create an empty `-wal`; only stored bytes count.
            if let Some(bytes) = std::fs::read(&p).ok().filter(|b| !b.is_empty()) {
                out.push((format!("{name}{suffix}"), hex(&bytes)));
            }
        }
    }
    out
}

pub fn kc13_searching_and_dispatching_never_write_the_episodes_or_code_stores(w: &dyn World) {
    let before = w.digest();
    assert!(before.len() >= 2);
    let engine = w.engine();
    for q in QUERIES {
        let resp = engine.search(&SearchRequest::new(*q));
        for it in &resp.lanes.episodes.items {
            let _ = engine.get_episode(&it.session_id, it.seq, 3);
        }
    }
    let task = knowledge::contract::dispatch::Task {
        text: "clean-bom-crlf: проверить BOM и CRLF".into(),
        acceptance: vec!["no BOM".into()],
        constraints: vec![],
    };
    let mut req = knowledge::contract::dispatch::DispatchRequest::dry_run(task);
    engine.dispatch(&req).expect("dry run");
    req.dry_run = false;
    engine.dispatch(&req).expect("commit");
    drop(engine);
    assert_eq!(before, w.digest(), "a store changed");
    let _ = Lane::Episodes;
}
