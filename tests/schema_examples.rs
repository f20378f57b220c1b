//! The contract examples in `assets/contracts/` validate against the JSON Schemas in
//! `assets/schema/`, and documents that break a contract invariant do not.

mod common;

use common::schema::{load_json, validate};
use serde_json::{json, Value};

const SEARCH: &str = "knowledge_search.v1.schema.json";
const DISPATCH: &str = "knowledge_dispatch.v1.schema.json";
const HANDOFF: &str = "knowledge_handoff.v1.schema.json";

/// Validator for `#/$defs/<def>` of a schema file in `assets/schema/` (copy me): the file's
/// `$defs` under a wrapper whose root is `{"$ref": "#/$defs/<def>"}`; formats are checked and
/// nothing is fetched.
fn validator(schema_file: &str, def: &str) -> jsonschema::Validator {
    let doc = load_json(&format!("assets/schema/{schema_file}"));
    let wrapper = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$ref": format!("#/$defs/{def}"),
        "$defs": doc["$defs"].clone(),
    });
    jsonschema::draft202012::options()
        .should_validate_formats(true)
        .build(&wrapper)
        .unwrap_or_else(|e| panic!("{schema_file}#/$defs/{def}: {e}"))
}

fn assert_valid(schema_file: &str, def: &str, doc: &Value) {
    if let Err(errors) = validate(schema_file, def, doc) {
        panic!("expected valid against {schema_file}#/$defs/{def}:\n{errors}\n{doc:#}");
    }
}

fn assert_invalid(schema_file: &str, def: &str, doc: &Value, why: &str) {
    assert!(
        !validator(schema_file, def).is_valid(doc),
        "expected INVALID against {schema_file}#/$defs/{def} ({why}):\n{doc:#}"
    );
}

/// `doc` with the value at JSON pointer `at` replaced (the parent must exist).
fn with(doc: &Value, at: &str, value: Value) -> Value {
    let mut out = doc.clone();
    let (parent, key) = at.rsplit_once('/').expect("pointer");
    match out.pointer_mut(parent).expect("parent exists") {
        Value::Object(map) => {
            map.insert(key.to_string(), value);
        }
        Value::Array(items) => items[key.parse::<usize>().expect("index")] = value,
        other => panic!("cannot set {key} in {other}"),
    }
    out
}

/// `doc` without the object member at JSON pointer `at`.
fn without(doc: &Value, at: &str) -> Value {
    let mut out = doc.clone();
    let (parent, key) = at.rsplit_once('/').expect("pointer");
    out.pointer_mut(parent)
        .and_then(Value::as_object_mut)
        .expect("parent object")
        .remove(key)
        .unwrap_or_else(|| panic!("{at} is absent"));
    out
}

fn search_request() -> Value {
    load_json("assets/contracts/knowledge_search.request.json")
}

fn search_response() -> Value {
    load_json("assets/contracts/knowledge_search.response.json")
}

fn dispatch_response() -> Value {
    load_json("assets/contracts/knowledge_dispatch.response.json")
}

fn handoff() -> Value {
    load_json("assets/contracts/knowledge_handoff.json")
}

#[test]
fn schema_files_are_valid_draft_2020_12() {
    for file in [SEARCH, DISPATCH, HANDOFF] {
        let schema = load_json(&format!("assets/schema/{file}"));
        assert_eq!(
            schema["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
        if let Err(e) = jsonschema::meta::validate(&schema) {
            panic!("{file} is not a valid schema: {e}");
        }
        // The file itself (with its $id) compiles offline, too.
        jsonschema::draft202012::options()
            .should_validate_formats(true)
            .build(&schema)
            .unwrap_or_else(|e| panic!("{file}: {e}"));
    }
}

#[test]
fn contract_examples_validate() {
    let cases = [
        (SEARCH, "request", "knowledge_search.request.json"),
        (SEARCH, "response", "knowledge_search.response.json"),
        (DISPATCH, "request", "knowledge_dispatch.request.json"),
        (DISPATCH, "response", "knowledge_dispatch.response.json"),
        (HANDOFF, "handoff", "knowledge_handoff.json"),
    ];
    for (schema_file, def, example) in cases {
        let doc = load_json(&format!("assets/contracts/{example}"));
        assert_valid(schema_file, def, &doc);
        // The root of each schema file accepts its documents as well.
        let root = load_json(&format!("assets/schema/{schema_file}"));
        let root = jsonschema::draft202012::options()
            .should_validate_formats(true)
            .build(&root)
            .expect("root compiles");
        assert!(
            root.is_valid(&doc),
            "{example} against the root of {schema_file}"
        );
    }
}

#[test]
fn search_request_accepts_minimal_and_lenient_forms() {
    let minimal = json!({"schema": "knowledge.search/v1", "query": "где функция parse"});
    assert_valid(SEARCH, "request", &minimal);
    // Unknown top-level fields are warned about by the engine, not rejected.
    assert_valid(SEARCH, "request", &with(&minimal, "/colour", json!("blue")));
    let bounds = with(&minimal, "/limit", json!(50));
    let bounds = with(
        &bounds,
        "/budget",
        json!({"max_tokens": 500, "snippet_chars": 1000}),
    );
    assert_valid(SEARCH, "request", &bounds);
    assert_valid(
        SEARCH,
        "request",
        &with(&minimal, "/query", json!("я".repeat(2000))),
    );
}

#[test]
fn search_request_rejects_contract_violations() {
    let req = search_request();
    let cases = [
        (with(&req, "/limit", json!(0)), "limit 0"),
        (with(&req, "/limit", json!(51)), "limit 51"),
        (with(&req, "/mode", json!("bogus")), "unknown mode"),
        (with(&req, "/query", json!("")), "empty query"),
        (with(&req, "/query", json!(" \t\n ")), "whitespace query"),
        (with(&req, "/query", json!("a\u{0}b")), "NUL in query"),
        (
            with(&req, "/query", json!("x".repeat(2001))),
            "query too long",
        ),
        (
            with(&req, "/include", json!(["episodes", "actors"])),
            "unknown include",
        ),
        (
            with(&req, "/filters/outcome", json!("maybe")),
            "unknown outcome",
        ),
        (
            with(&req, "/provenance", json!("loose")),
            "unknown provenance",
        ),
        (
            with(&req, "/budget/max_tokens", json!(499)),
            "max_tokens < 500",
        ),
        (
            with(&req, "/budget/snippet_chars", json!(1001)),
            "snippet_chars > 1000",
        ),
        (
            with(&req, "/filters/since", json!("yesterday")),
            "since not RFC 3339",
        ),
        (
            with(&req, "/schema", json!("knowledge.search/v2")),
            "wrong schema",
        ),
        (without(&req, "/query"), "no query"),
    ];
    for (doc, why) in &cases {
        assert_invalid(SEARCH, "request", doc, why);
    }
}

#[test]
fn search_response_accepts_locator_and_no_source_forms() {
    let resp = search_response();
    // provenance=locator: no snippets anywhere.
    let locator = without(&resp, "/lanes/episodes/items/0/snippet");
    let locator = without(&locator, "/lanes/code/items/0/snippet");
    assert_valid(SEARCH, "response", &locator);
    // skills lane is optional (not requested), actors absent (L3 not built).
    assert_valid(
        SEARCH,
        "response",
        &without(&without(&resp, "/lanes/skills"), "/actors"),
    );
    // Both sources down.
    let down = json!({"source": "x", "index_rev": null, "degraded": true,
                      "degradation_reason": "unavailable", "items": []});
    let mut code_down = down.clone();
    code_down["capability"] = json!("degraded");
    code_down["freshness"] = json!({"stale": false, "verified_by": null});
    let no_source = with(
        &resp,
        "/lanes",
        json!({"episodes": down, "code": code_down}),
    );
    let no_source = with(&no_source, "/actors", json!([]));
    let no_source = with(&no_source, "/found", json!(false));
    let no_source = with(
        &no_source,
        "/errors",
        json!([{"code": "KNOWLEDGE_NO_SOURCE", "message": "no source"}]),
    );
    assert_valid(SEARCH, "response", &no_source);
    assert_invalid(
        SEARCH,
        "response",
        &without(&no_source, "/found"),
        "NO_SOURCE without found=false",
    );
    assert_invalid(
        SEARCH,
        "response",
        &with(&no_source, "/errors", json!([])),
        "found=false without NO_SOURCE",
    );
    // Truncation names what was dropped.
    let truncated = with(&resp, "/limits/truncated", json!(true));
    assert_invalid(SEARCH, "response", &truncated, "truncated without dropped");
    let truncated = with(
        &truncated,
        "/limits/dropped",
        json!([{"lane": "code", "id": "chunk:cfg:...", "what": "snippet"}]),
    );
    assert_valid(SEARCH, "response", &truncated);
    // trace
    let traced = with(
        &resp,
        "/trace",
        json!({"lanes": [{"lane": "episodes", "ms": 12.5, "items": 1, "degraded": false, "cache_hit": false}]}),
    );
    assert_valid(SEARCH, "response", &traced);
}

#[test]
fn search_response_rejects_contract_violations() {
    let resp = search_response();
    let cases = [
        (
            with(&resp, "/lanes/episodes/items/0/path", json!("src/a.rs")),
            "episode with path",
        ),
        (
            with(
                &resp,
                "/lanes/code/items/0/session_id",
                json!("session-abc"),
            ),
            "code item with session_id",
        ),
        (without(&resp, "/lanes/code"), "no code lane"),
        (without(&resp, "/lanes/episodes"), "no episodes lane"),
        (
            without(&resp, "/lanes/episodes/index_rev"),
            "lane without index_rev",
        ),
        (
            without(&resp, "/lanes/skills/degraded"),
            "lane without degraded",
        ),
        (
            without(&resp, "/lanes/code/degradation_reason"),
            "degraded without reason",
        ),
        (
            without(&resp, "/lanes/code/capability"),
            "code lane without capability",
        ),
        (
            with(&resp, "/lanes/code/capability", json!("partial")),
            "unknown capability",
        ),
        (
            without(&resp, "/lanes/episodes/items/0/seq"),
            "episode without seq",
        ),
        (
            with(&resp, "/lanes/episodes/items/0/seq", json!(-1)),
            "negative seq",
        ),
        (
            with(
                &resp,
                "/lanes/episodes/items/0/id",
                json!("session-abc:1842"),
            ),
            "episode id not ep:",
        ),
        (
            with(&resp, "/lanes/code/items/0/start_line", json!(0)),
            "start_line 0",
        ),
        (
            without(&resp, "/lanes/code/items/0/path"),
            "code item without path",
        ),
        (
            with(&resp, "/lanes/code/freshness/stale", json!(true)),
            "stale without warning",
        ),
        (with(&resp, "/fusion/strategy", json!("sum")), "fusion sum"),
        (with(&resp, "/fusion/k", json!(0)), "k 0"),
        (
            with(&resp, "/routing/confidence", json!(1.5)),
            "confidence > 1",
        ),
        (with(&resp, "/routing/intent", json!("auto")), "intent auto"),
        (
            with(&resp, "/actors/0/kind", json!("robot")),
            "unknown actor kind",
        ),
        (
            with(&resp, "/actors/0/evidence/0/lane", json!("actors")),
            "evidence lane",
        ),
        (
            with(&resp, "/actors/0/dispatch/mode", json!("spawn")),
            "dispatch mode",
        ),
        (
            with(
                &resp,
                "/limits/dropped",
                json!([{"lane": "code", "id": "x", "what": "all"}]),
            ),
            "dropped what",
        ),
        (
            with(&resp, "/warnings/0/code", json!("KNOWLEDGE_OOPS")),
            "unknown code",
        ),
        (
            with(
                &resp,
                "/errors",
                json!([{"code": "KNOWLEDGE_INVALID_REQUEST", "message": "m", "field": "query"}]),
            ),
            "invalid request in a full response",
        ),
        (
            with(&resp, "/lanes/episodes/items/0/time", json!("21.10.2026")),
            "time not RFC 3339",
        ),
        (without(&resp, "/fusion"), "no fusion"),
        (without(&resp, "/routing"), "no routing"),
    ];
    for (doc, why) in &cases {
        assert_invalid(SEARCH, "response", doc, why);
    }
}

#[test]
fn error_responses() {
    let refusal = json!({
        "schema": "knowledge.search/v1",
        "request_id": "req-1",
        "errors": [{"code": "KNOWLEDGE_INVALID_REQUEST", "field": "limit", "message": "limit must be 1…50"}]
    });
    assert_valid(SEARCH, "error_response", &refusal);
    assert_invalid(
        SEARCH,
        "error_response",
        &without(&refusal, "/errors/0/field"),
        "no field",
    );
    assert_invalid(
        SEARCH,
        "error_response",
        &with(&refusal, "/errors", json!([])),
        "no errors",
    );
    assert_invalid(SEARCH, "response", &refusal, "refusal is not a response");
    let dispatch_refusal = with(&refusal, "/schema", json!("knowledge.dispatch/v1"));
    assert_valid(DISPATCH, "error_response", &dispatch_refusal);
    assert_invalid(SEARCH, "error_response", &dispatch_refusal, "wrong schema");
}

#[test]
fn dispatch_documents() {
    let req = load_json("assets/contracts/knowledge_dispatch.request.json");
    assert_valid(
        DISPATCH,
        "request",
        &with(&req, "/target", json!("actor:harness:root:s1")),
    );
    assert_invalid(
        DISPATCH,
        "request",
        &with(&req, "/target", json!("bob")),
        "target",
    );
    assert_invalid(
        DISPATCH,
        "request",
        &with(&req, "/task/text", json!("  ")),
        "blank task",
    );
    assert_invalid(DISPATCH, "request", &without(&req, "/task"), "no task");

    let resp = dispatch_response();
    assert_valid(DISPATCH, "response", &with(&resp, "/target", Value::Null));
    let assignment = json!({"assignment_id": "assign:0f3a", "status": "recorded_plan",
                            "created": true, "outbox_path": "/tmp/outbox/assign-0f3a.json"});
    let committed = with(&resp, "/mode", json!("commit"));
    assert_valid(
        DISPATCH,
        "response",
        &with(&committed, "/assignment", assignment.clone()),
    );
    let cases = [
        (
            with(&resp, "/assignment", assignment.clone()),
            "dry_run with assignment",
        ),
        (
            with(
                &committed,
                "/assignment",
                with(&assignment, "/status", json!("sent")),
            ),
            "status",
        ),
        (
            with(
                &committed,
                "/assignment",
                with(&assignment, "/assignment_id", json!("0f3a")),
            ),
            "id",
        ),
        (with(&resp, "/mode", json!("run")), "mode"),
        (
            with(&resp, "/target/kind", json!("root_session|subagent")),
            "kind alternatives",
        ),
        (
            with(&resp, "/context_pack/prior_episodes/0/path", json!("a.rs")),
            "episode ref with path",
        ),
        (
            with(&resp, "/context_pack/code_refs/0/session_id", json!("s")),
            "code ref with session_id",
        ),
        (without(&resp, "/context_pack/risks"), "no risks"),
    ];
    for (doc, why) in &cases {
        assert_invalid(DISPATCH, "response", doc, why);
    }
}

#[test]
fn handoff_documents() {
    let doc = handoff();
    let reviewed = with(
        &doc,
        "/review",
        json!({"status": "approved", "decided_by": "lead", "decided_at": "2026-10-23T15:00:00+03:00", "reason": null}),
    );
    assert_valid(HANDOFF, "handoff", &reviewed);
    let external = with(&doc, "/target/dispatch/mode", json!("external_handoff"));
    assert_valid(
        HANDOFF,
        "handoff",
        &with(&external, "/tool_calls", json!([])),
    );
    let cases = [
        (with(&doc, "/execution", json!("executed")), "executed"),
        (external, "external_handoff with tool calls"),
        (
            with(&doc, "/tool_calls/0/tool", json!("bash")),
            "unknown tool",
        ),
        (
            without(&doc, "/tool_calls/2/arguments/message"),
            "send_message without message",
        ),
        (with(&doc, "/assignment_id", json!("0f3a")), "assignment id"),
        (
            with(&reviewed, "/review/status", json!("maybe")),
            "review status",
        ),
        (without(&doc, "/requires"), "no requires"),
    ];
    for (doc, why) in &cases {
        assert_invalid(HANDOFF, "handoff", doc, why);
    }
}
