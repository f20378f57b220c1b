//! Request validation (contract §3, DECISIONS §8): every invalid case is rejected with
//! `KNOWLEDGE_INVALID_REQUEST` naming the field; unknown fields only warn. One table, one row a
//! case, checked through the library and (for a few rows) through the real binary.

mod common;

use knowledge::contract::{validate_search, Code};
use serde_json::{json, Value};

fn base() -> Value {
    json!({"schema": "knowledge.search/v1", "query": "кто чинил доступ к MySQL"})
}

fn with(path: &[&str], v: Value) -> String {
    let mut doc = base();
    let mut cur = &mut doc;
    for (i, key) in path.iter().enumerate() {
        if i + 1 == path.len() {
            cur[*key] = v.clone();
        } else {
            if cur.get(*key).is_none() {
                cur[*key] = json!({});
            }
            cur = &mut cur[*key];
        }
    }
    doc.to_string()
}

fn without(key: &str) -> String {
    let mut doc = base();
    doc.as_object_mut().map(|o| o.remove(key));
    doc.to_string()
}

#[test]
fn invalid_requests_name_the_field() {
    let long = "я".repeat(2001);
    let cases: Vec<(&str, String, &str)> = vec![
        ("missing query", without("query"), "query"),
        ("empty query", with(&["query"], json!("")), "query"),
        (
            "whitespace query",
            with(&["query"], json!("  \t\n ")),
            "query",
        ),
        (
            "NUL in query",
            with(&["query"], json!("mysql\u{0}drop")),
            "query",
        ),
        ("NUL at start", with(&["query"], json!("\u{0}")), "query"),
        ("2001 characters", with(&["query"], json!(long)), "query"),
        ("query not a string", with(&["query"], json!(42)), "query"),
        ("missing schema", without("schema"), "schema"),
        (
            "wrong schema",
            with(&["schema"], json!("knowledge.search/v2")),
            "schema",
        ),
        (
            "unknown mode",
            with(&["mode"], json!("find_everything")),
            "mode",
        ),
        ("mode wrong type", with(&["mode"], json!(1)), "mode"),
        (
            "unknown include",
            with(&["include"], json!(["episodes", "memes"])),
            "include[1]",
        ),
        ("empty include", with(&["include"], json!([])), "include"),
        (
            "include not a list",
            with(&["include"], json!("code")),
            "include",
        ),
        (
            "unknown outcome",
            with(&["filters", "outcome"], json!("maybe")),
            "filters.outcome",
        ),
        (
            "unknown provenance",
            with(&["provenance"], json!("loose")),
            "provenance",
        ),
        ("limit 0", with(&["limit"], json!(0)), "limit"),
        ("limit 51", with(&["limit"], json!(51)), "limit"),
        ("limit negative", with(&["limit"], json!(-3)), "limit"),
        ("limit fractional", with(&["limit"], json!(2.5)), "limit"),
        ("limit string", with(&["limit"], json!("10")), "limit"),
        (
            "max_tokens 499",
            with(&["budget", "max_tokens"], json!(499)),
            "budget.max_tokens",
        ),
        (
            "max_tokens 20001",
            with(&["budget", "max_tokens"], json!(20001)),
            "budget.max_tokens",
        ),
        (
            "snippet_chars 79",
            with(&["budget", "snippet_chars"], json!(79)),
            "budget.snippet_chars",
        ),
        (
            "snippet_chars 1001",
            with(&["budget", "snippet_chars"], json!(1001)),
            "budget.snippet_chars",
        ),
        (
            "since not RFC 3339",
            with(&["filters", "since"], json!("2026-09-01")),
            "filters.since",
        ),
        (
            "since garbage",
            with(&["filters", "since"], json!("yesterday")),
            "filters.since",
        ),
        (
            "until not RFC 3339",
            with(&["filters", "until"], json!("2026/10/01 10:00")),
            "filters.until",
        ),
        (
            "until before since",
            {
                let mut d = base();
                d["filters"] =
                    json!({"since": "2026-10-01T00:00:00Z", "until": "2026-09-01T00:00:00Z"});
                d.to_string()
            },
            "filters.until",
        ),
        (
            "workspaces not a list",
            with(&["filters", "workspaces"], json!("/srv")),
            "filters.workspaces",
        ),
        (
            "empty workspace",
            with(&["filters", "workspaces"], json!([""])),
            "filters.workspaces[0]",
        ),
        (
            "session id not a string",
            with(&["filters", "session_ids"], json!([7])),
            "filters.session_ids[0]",
        ),
        ("trace not a bool", with(&["trace"], json!("yes")), "trace"),
        (
            "filters not an object",
            with(&["filters"], json!([1])),
            "filters",
        ),
        (
            "budget not an object",
            with(&["budget"], json!(4000)),
            "budget",
        ),
        (
            "malformed JSON",
            "{\"schema\": \"knowledge.search/v1\", \"query\": ".to_string(),
            "$",
        ),
        ("not an object", "[1, 2, 3]".to_string(), "$"),
        (
            "101 workspaces",
            with(&["filters", "workspaces"], json!(vec!["/srv/app"; 101])),
            "filters.workspaces",
        ),
        (
            "1000 session ids",
            with(&["filters", "session_ids"], json!(vec!["s1"; 1000])),
            "filters.session_ids",
        ),
        (
            "101 actor ids",
            with(&["filters", "actor_ids"], json!(vec!["a"; 101])),
            "filters.actor_ids",
        ),
        (
            "a 1025-character workspace",
            with(
                &["filters", "workspaces"],
                json!([format!("/{}", "w".repeat(1024))]),
            ),
            "filters.workspaces[0]",
        ),
        (
            "a 100k-character session id",
            with(&["filters", "session_ids"], json!(["s".repeat(100_000)])),
            "filters.session_ids[0]",
        ),
        (
            "a duplicate key",
            r#"{"schema": "knowledge.search/v1", "query": "a", "query": "b"}"#.to_string(),
            "query",
        ),
        (
            "a duplicate nested key",
            r#"{"schema": "knowledge.search/v1", "query": "a",
                "filters": {"since": null, "since": "2026-09-01T00:00:00Z"}}"#
                .to_string(),
            "filters.since",
        ),
    ];
    for (name, text, field) in cases {
        let errors = match validate_search(&text) {
            Ok(_) => panic!("{name}: accepted an invalid request"),
            Err(e) => e,
        };
        assert!(
            errors
                .iter()
                .any(|e| e.code == Code::InvalidRequest && e.field.as_deref() == Some(field)),
            "{name}: expected KNOWLEDGE_INVALID_REQUEST on {field}, got {errors:?}"
        );
        for e in &errors {
            assert!(
                !e.message.contains('\u{0}'),
                "{name}: NUL echoed in a message"
            );
        }
    }
}

#[test]
fn valid_edges_are_accepted() {
    let max = "я".repeat(2000);
    let cases: Vec<(&str, String)> = vec![
        ("2000 characters", with(&["query"], json!(max))),
        ("limit 1", with(&["limit"], json!(1))),
        ("limit 50", with(&["limit"], json!(50))),
        (
            "max_tokens 500",
            with(&["budget", "max_tokens"], json!(500)),
        ),
        (
            "max_tokens 20000",
            with(&["budget", "max_tokens"], json!(20000)),
        ),
        (
            "snippet_chars 80",
            with(&["budget", "snippet_chars"], json!(80)),
        ),
        (
            "snippet_chars 1000",
            with(&["budget", "snippet_chars"], json!(1000)),
        ),
        ("until null", with(&["filters", "until"], json!(null))),
        (
            "100 workspaces of 1024 characters",
            with(
                &["filters", "workspaces"],
                json!(vec![format!("/{}", "w".repeat(1023)); 100]),
            ),
        ),
        (
            "offset time",
            with(&["filters", "since"], json!("2026-09-01T00:00:00+03:00")),
        ),
        ("every mode", with(&["mode"], json!("find_code"))),
        ("locator", with(&["provenance"], json!("locator"))),
        (
            "FTS syntax is just text",
            with(&["query"], json!("\"mysql\" OR NEAR(a b) -x:y *")),
        ),
        (
            "contract example",
            std::fs::read_to_string(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/assets/contracts/knowledge_search.request.json"
            ))
            .expect("example"),
        ),
    ];
    for (name, text) in cases {
        if let Err(e) = validate_search(&text) {
            panic!("{name}: rejected a valid request: {e:?}");
        }
    }
}

#[test]
fn unknown_fields_warn_and_are_ignored() {
    let mut doc = base();
    doc["colour"] = json!("blue");
    doc["filters"] = json!({"workspace": ["/srv/app"]});
    doc["budget"] = json!({"max_tokens": 1000, "tokens": 5});
    let (req, warnings) = validate_search(&doc.to_string()).expect("valid");
    assert!(
        req.filters.workspaces.is_empty(),
        "a misspelt filter must not filter"
    );
    let fields: Vec<_> = warnings.iter().filter_map(|w| w.field.clone()).collect();
    assert_eq!(fields, vec!["colour", "filters.workspace", "budget.tokens"]);
    assert!(warnings.iter().all(|w| w.code == Code::IgnoredField));
}

#[test]
fn invalid_request_through_the_binary_exits_2_with_the_error_document() {
    let dir = tempfile::tempdir().expect("tmp");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_knowledge"))
        .arg("--data-dir")
        .arg(dir.path())
        .args(["search", "--query", "mysql", "--limit", "0"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(doc["errors"][0]["code"], "KNOWLEDGE_INVALID_REQUEST");
    assert_eq!(doc["errors"][0]["field"], "limit");
    common::schema::validate("knowledge_search.v1.schema.json", "error_response", &doc)
        .expect("error document matches the schema");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("limit"),
        "stderr says which field: {stderr}"
    );
}
