//! `knowledge stats` and `knowledge doctor` through the built binary on a fresh copy of the demo
//! world in a temp dir (issue 14): the metrics follow the requests made, the log holds no query
//! text, and the doctor finds what is wrong, says what to run, and exits 1 until it is fixed.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::cli::{bin, indexed_world, plan_args};
use serde_json::Value;

fn run(data: &Path, args: &[&str]) -> Output {
    bin()
        .arg("--data-dir")
        .arg(data)
        .args(args)
        .output()
        .expect("run knowledge")
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn stats_count_the_requests_made_and_the_log_holds_no_query_text() {
    let w = indexed_world();
    let empty = json(&run(&w.data, &["stats", "--json"]));
    assert_eq!(empty["requests"], 0);

    // What the answers held, counted from the answers themselves.
    let (mut zero, mut both, mut truncated) = (0, 0, 0);
    let queries = [
        "кто чинил доступ к MySQL на 176.99.5.35",
        "кто чинил доступ к MySQL на 176.99.5.35",
        "getUserName",
        "qwxzvbnmkjh",
        "stripe webhook signature",
    ];
    for q in queries {
        let resp = json(&run(&w.data, &["search", "-q", q]));
        let n = |lane: &str| resp["lanes"][lane]["items"].as_array().map_or(0, Vec::len);
        zero += usize::from(resp["limits"]["returned"] == 0);
        both += usize::from(n("episodes") > 0 && n("code") > 0);
        truncated += usize::from(resp["limits"]["truncated"] == true);
    }
    assert!(
        zero == 1 && both >= 1,
        "the demo world answers these as expected"
    );
    let out = run(
        &w.data,
        &["get-episode", "ep:40b2334f-8cd8-49dd-8b81-2fd55e3b6a92:1"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let s = json(&run(&w.data, &["stats", "--json"]));
    assert_eq!(s["requests"], 6, "{s}");
    assert_eq!(s["by_operation"]["search"], 5);
    assert_eq!(s["by_operation"]["get_episode"], 1);
    assert_eq!(s["zero_result_rate"], 0.2, "{s}");
    assert_eq!(s["both_evidence_rate"], both as f64 / 5.0, "{s}");
    assert_eq!(s["budget_truncations"], truncated, "{s}");
    let lat = &s["latency_by_operation"]["search"];
    assert_eq!(lat["count"], 5);
    assert!(lat["p50_ms"].as_f64().unwrap() <= lat["p99_ms"].as_f64().unwrap());
    let lanes: Vec<&str> = s["lanes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["lane"].as_str().unwrap())
        .collect();
    assert_eq!(lanes, ["code", "episodes", "skills"]);

    // A span in the future filters everything out; the text report reads like one.
    let none = json(&run(
        &w.data,
        &["stats", "--json", "--since", "2999-01-01T00:00:00Z"],
    ));
    assert_eq!(none["requests"], 0);
    let text = run(&w.data, &["stats", "--since", "1h"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("6 requests") && text.contains("zero results"),
        "{text}"
    );
    let bad = run(&w.data, &["stats", "--since", "yesterday"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("RFC 3339"));

    let log = std::fs::read_to_string(w.data.join("logs/knowledge.log")).unwrap();
    for q in ["MySQL", "getUserName", "qwxzvbnmkjh", "176.99", "stripe"] {
        assert!(!log.contains(q), "the log holds query text {q}");
    }
}

#[test]
fn doctor_is_healthy_on_the_demo_world_and_finds_what_breaks() {
    let w = indexed_world();
    let out = run(&w.data, &["doctor", "--json"]);
    let d = json(&out);
    assert_eq!(out.status.code(), Some(0), "{d}");
    assert_eq!(d["healthy"], true);
    let i = &d["indexed"];
    for key in [
        "sessions",
        "events",
        "code_files",
        "chunks",
        "skills",
        "actors",
    ] {
        assert!(i[key].as_u64().unwrap() > 0, "{key}: {i}");
    }
    // One root per agent the demo world holds: Claude Code, Codex, Gemini CLI, Pi, Copilot CLI,
    // Cline and the OpenHands CLI.
    assert_eq!(i["session_roots"].as_array().unwrap().len(), 7);
    let agents = d["agents"].as_array().unwrap();
    let sessions = |name: &str| {
        agents
            .iter()
            .find(|a| a["agent"] == name)
            .and_then(|a| a["sessions"].as_u64())
    };
    for name in ["gemini", "pi", "copilot", "cline", "openhands"] {
        assert_eq!(sessions(name), Some(1), "{name}: {agents:?}");
    }
    assert_eq!(sessions("qwen"), Some(0));
    for s in d["stores"].as_array().unwrap() {
        assert_eq!(s["exists"], true);
        assert!(s["index_rev"].is_string(), "{s}");
        assert!(s["bytes"].as_u64().unwrap() > 0);
    }

    // A code file edited and a transcript grown since indexing, and a broken config.
    let cart = PathBuf::from(w.world.repo("webshop")).join("src/cart.ts");
    std::fs::write(&cart, "export const changed = true;\n").unwrap();
    let transcript = w
        .world
        .root
        .join("claude/projects/-DEMO--repos-billing/40b2334f-8cd8-49dd-8b81-2fd55e3b6a92.jsonl");
    let mut t = std::fs::read_to_string(&transcript).unwrap();
    t.push_str("{\"type\":\"summary\",\"summary\":\"later\"}\n");
    std::fs::write(&transcript, t).unwrap();
    std::fs::write(w.data.join("config.toml"), "[lanes]\ntimeout = 5\n").unwrap();
    std::fs::create_dir_all(w.data.join("outbox")).unwrap();
    let package = w.data.join("outbox/assign-0badf11e.json");
    std::fs::write(&package, "{\"review\": {\"status\": {\"approved\": null}}}").unwrap();

    let out = run(&w.data, &["doctor", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let d = json(&out);
    assert_eq!(d["healthy"], false);
    assert_eq!(d["stale_code_files"]["count"], 1, "{d}");
    assert_eq!(d["changed_transcripts"]["count"], 1, "{d}");
    assert!(d["config"]["error"].as_str().unwrap().contains("timeout"));
    let problems = d["problems"].as_array().unwrap();
    let fix_for = |needle: &str| -> String {
        problems
            .iter()
            .find(|p| p["problem"].as_str().unwrap().contains(needle))
            .unwrap_or_else(|| panic!("no problem about {needle}: {problems:?}"))["fix"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(fix_for("code files").contains("knowledge index --code"));
    assert!(fix_for("transcripts").contains("knowledge index"));
    assert!(fix_for("config").contains("config.toml"));
    assert!(fix_for("outbox packages").contains("knowledge outbox show"));

    // The text report names the problems and their fixes.
    let text = run(&w.data, &["doctor"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("4 problems") && text.contains("fix: "),
        "{text}"
    );

    // Fixing them makes it healthy again.
    std::fs::remove_file(w.data.join("config.toml")).unwrap();
    std::fs::remove_file(&package).unwrap();
    let mut args = vec!["index".to_string(), "--quiet".to_string()];
    args.extend(plan_args(&w.world));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert!(run(&w.data, &args).status.success());
    let out = run(&w.data, &["doctor", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", json(&out));
}

#[test]
fn doctor_on_an_empty_data_dir_says_what_to_run() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run(tmp.path(), &["doctor"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("no episodes index") && text.contains("fix: knowledge index"),
        "{text}"
    );
}

#[test]
fn doctor_says_when_an_external_source_is_unreachable() {
    let w = indexed_world();
    std::fs::write(
        w.data.join("config.toml"),
        "[sources.code]\ncommand = \"/nonexistent/ragraf-server\"\ntool = \"ragraf_search\"\n",
    )
    .unwrap();
    let out = run(&w.data, &["doctor", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let d = json(&out);
    let src = &d["sources"][0];
    assert_eq!(src["lane"], "code");
    assert_eq!(src["reachable"], false);
    assert!(!src["error"].as_str().unwrap().is_empty(), "{src}");
    let problem = d["problems"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["problem"].as_str().unwrap().contains("unreachable"))
        .expect("the unreachable source is a problem");
    assert!(problem["fix"].as_str().unwrap().contains("[sources.code]"));
}

#[test]
fn stats_name_the_reason_a_lane_degraded_without_its_text() {
    let w = indexed_world();
    std::fs::remove_file(w.data.join("code.sqlite")).unwrap();
    let out = run(&w.data, &["search", "-q", "getUserName"]);
    assert!(out.status.success());
    let s = json(&run(&w.data, &["stats", "--json"]));
    let code = s["lanes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["lane"] == "code")
        .cloned()
        .unwrap_or_else(|| panic!("no code lane: {s}"));
    assert_eq!(code["degraded"], 1, "{code}");
    assert_eq!(code["degradation_rate"], 1.0);
    let reasons: Vec<&String> = code["reasons"].as_object().unwrap().keys().collect();
    assert_eq!(reasons.len(), 1);
    assert!(
        reasons[0].starts_with("KNOWLEDGE_") && !reasons[0].contains('/'),
        "a reason class, not the message: {reasons:?}"
    );
}
