//! The binary's activity chart, shell completions, manual page and version line, in a temp dir.

mod common;

use common::cli::{bin, indexed_world};
use serde_json::Value;

#[test]
fn stats_chart_counts_the_demo_world_as_text_and_json() {
    let w = indexed_world();
    let run = |json: bool| {
        let mut cmd = bin();
        cmd.arg("--data-dir").arg(&w.data).args([
            "stats",
            "--chart",
            "--since",
            "2026-10-01T00:00:00Z",
        ]);
        if json {
            cmd.arg("--json");
        }
        let out = cmd.output().expect("run stats --chart");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf-8")
    };
    let doc: Value = serde_json::from_str(&run(true)).expect("JSON");
    let sessions = doc["sessions"].as_u64().expect("sessions");
    assert!(sessions >= 3, "{doc}");
    let days = doc["days"].as_array().expect("days");
    assert!(
        days.len() >= 60,
        "every day from the first of October: {}",
        days.len()
    );
    let per_day: u64 = days.iter().map(|d| d["events"].as_u64().unwrap()).sum();
    assert_eq!(per_day, doc["events"].as_u64().unwrap());
    assert!(!doc["actors"].as_array().unwrap().is_empty());
    let text = run(false);
    for part in [
        "sessions per day",
        "who worked",
        "workspaces:",
        "lane health",
    ] {
        assert!(text.contains(part), "{part} missing:\n{text}");
    }
    // A bad period is a usage error naming the flag.
    let out = bin()
        .arg("--data-dir")
        .arg(&w.data)
        .args(["stats", "--chart", "--days", "0"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--days"));
}

#[test]
fn completions_man_page_and_version() {
    for (shell, marker) in [
        ("bash", "_knowledge"),
        ("zsh", "#compdef knowledge"),
        ("fish", "complete -c knowledge"),
    ] {
        let out = bin().args(["completions", shell]).output().expect("run");
        assert!(out.status.success(), "{shell}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains(marker),
            "{shell}: {}",
            &text[..text.len().min(200)]
        );
        // fish names long options without their dashes (`-l data-dir`).
        assert!(
            text.contains("get-episode") && text.contains("data-dir"),
            "{shell}"
        );
    }
    let out = bin().args(["completions", "tcsh"]).output().expect("run");
    assert_eq!(
        out.status.code(),
        Some(2),
        "an unknown shell is a usage error"
    );
    let out = bin().arg("man").output().expect("run");
    let man = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && man.contains(".TH knowledge 1"),
        "{man}"
    );
    assert!(man.contains("stats"), "subcommands are listed");
    let out = bin().arg("--version").output().expect("run");
    let v = String::from_utf8_lossy(&out.stdout);
    assert!(
        v.starts_with(&format!("knowledge {}", env!("CARGO_PKG_VERSION"))),
        "{v}"
    );
    for store in ["episodes schema", "code schema", "agent knowledge schema"] {
        assert!(v.contains(store), "{v}");
    }
}
