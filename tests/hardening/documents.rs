//! Sessions kept as one JSON document, and ids a hostile store chooses (issue 35, the hostile
//! review of the nine new agents), through the built binary:
//!
//! - a 55 MB Continue session of small numbers (which parsed whole took 2.2 GB) is read a record
//!   at a time: the index's peak memory stays far below, the record and header value over the
//!   line limit are counted as oversized, the rest is searchable;
//! - a message of Cline's `ui_messages.json` over the line limit costs itself, not the task;
//! - escape sequences, bells and bidi overrides in a Continue session id, its file name, title
//!   and workspace, a Cline task folder's name, a Cline SDK subagent's file name and an Amp
//!   thread's id never reach the output: ids keep a visible replacement character (Amp's is
//!   refused), the workspace is dropped, the title cleaned.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::common::cli::bin;
use crate::hangs::finish;

/// Runs `cmd` to its end, its output into `stdout`, and returns its exit code and its peak
/// resident memory in MB (its own, from `wait4`: other tests' children do not count).
// Reaped by `wait4` below, which alone gives the child's own usage.
#[allow(clippy::zombie_processes)]
fn peak_mb(mut cmd: Command, stdout: &Path) -> (i32, f64) {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(stdout).expect("stdout file"))
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: wait4 writes the status and the usage it is given; the child is ours.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4");
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    // `ru_maxrss` is in KB on Linux.
    (code, usage.ru_maxrss as f64 / 1024.0)
}

fn index(data: &Path, sessions: &Path, more: &[&str]) -> Command {
    let mut cmd = bin();
    cmd.env("HOME", data)
        .arg("--data-dir")
        .arg(data)
        .args(["index", "--quiet", "--sessions"])
        .arg(sessions)
        .args(more);
    cmd
}

fn search(data: &Path, q: &str) -> String {
    let mut cmd = bin();
    cmd.arg("--data-dir").arg(data).args(["search", "-q", q]);
    let out = finish(cmd);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 JSON")
}

/// `[0,0,…]`: `n` zeros, two bytes each, ~32 bytes each parsed.
fn zeros(n: usize) -> String {
    let mut s = String::with_capacity(2 * n + 2);
    s.push('[');
    for i in 0..n {
        s.push_str(if i == 0 { "0" } else { ",0" });
    }
    s.push(']');
    s
}

#[test]
fn a_large_continue_session_is_read_a_record_at_a_time() {
    let tmp = tempfile::tempdir().expect("tmp");
    let sessions = tmp.path().join("home/.continue/sessions");
    std::fs::create_dir_all(&sessions).expect("mkdir");
    let msg = |role: &str, text: &str| {
        serde_json::json!({"message": {"role": role, "content": text}, "contextItems": []})
            .to_string()
    };
    // Six records of 3.8M numbers each (7.6 MB, under the 8 MiB line limit), one of 4.5M (over
    // it), and a header value over it too: 55 MB of JSON, 2.2 GB parsed whole.
    let mut history = vec![msg("user", "The quarterly ledger export truncates rows.")];
    for _ in 0..6 {
        history.push(format!(
            "{{\"message\":{{\"role\":\"assistant\",\"content\":\"x\"}},\"data\":{}}}",
            zeros(3_800_000)
        ));
    }
    history.push(zeros(4_500_000));
    history.push(msg(
        "assistant",
        "Fixed: the exporter paged by bytes, not rows.",
    ));
    let doc = format!(
        "{{\"sessionId\":\"5d1e2f3a-0000-4000-8000-00000000b16d\",\"title\":\"Ledger export\",\
         \"workspaceDirectory\":\"/home/dev/ledger\",\"junk\":{},\"history\":[{}]}}",
        zeros(4_500_000),
        history.join(",")
    );
    assert!(doc.len() > 50_000_000, "{}", doc.len());
    std::fs::write(
        sessions.join("5d1e2f3a-0000-4000-8000-00000000b16d.json"),
        doc,
    )
    .expect("write");
    drop(history);
    let data = tmp.path().join("data");
    let json = tmp.path().join("summary.json");
    let (code, mb) = peak_mb(index(&data, &sessions, &["--json"]), &json);
    assert_eq!(code, 0, "index failed");
    // Parsed whole: 2.2 GB. A record at a time: the bytes, one record parsed (~250 MB).
    assert!(mb < 700.0, "index peaked at {mb:.0} MB");
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).expect("summary")).expect("JSON");
    let lines = &summary["episodes"]["lines"];
    assert_eq!(lines["skipped_oversized"], 2, "{summary}");
    let hits = search(&data, "exporter paged by bytes");
    assert!(hits.contains("paged by bytes"), "{hits}");
}

#[test]
fn a_cline_message_over_the_line_limit_is_counted_and_the_task_read() {
    let tmp = tempfile::tempdir().expect("tmp");
    let storage = tmp.path().join("home/.config/Code/User/globalStorage");
    let task = storage.join("saoudrizwan.claude-dev/tasks/1785315600000");
    std::fs::create_dir_all(&task).expect("mkdir");
    let messages = serde_json::json!([
        {"ts": 1785315600000u64, "type": "say", "say": "task",
            "text": "The nightly reconciliation drops refunds."},
        {"ts": 1785315601000u64, "type": "say", "say": "text", "text": "a".repeat(9 << 20)},
        {"ts": 1785315602000u64, "type": "say", "say": "text",
            "text": "Refunds were filtered by their sign; reconciled now."},
    ]);
    std::fs::write(task.join("ui_messages.json"), messages.to_string()).expect("write");
    let data = tmp.path().join("data");
    let out = finish(index(&data, &storage, &["--json"]));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(
        summary["episodes"]["lines"]["skipped_oversized"], 1,
        "{summary}"
    );
    let hits = search(&data, "filtered by their sign");
    assert!(hits.contains("\"surface\":\"cline\""), "{hits}");
}

/// Characters that must never reach a terminal, as JSON escapes them (and raw).
const UNSAFE: [&str; 6] = [
    "\\u001b", "\\u0007", "\\u009b", "\\u202e", "\u{1b}", "\u{202e}",
];

#[test]
fn escape_sequences_in_ids_titles_and_workspaces_never_reach_the_output() {
    let tmp = tempfile::tempdir().expect("tmp");
    let home = tmp.path().join("home");
    // Continue: the id, title and workspace, and the file name the id falls back to.
    let sessions = home.join(".continue/sessions");
    std::fs::create_dir_all(&sessions).expect("mkdir");
    let history = |text: &str| serde_json::json!([{"message": {"role": "user", "content": text}, "contextItems": []}]);
    let doc = serde_json::json!({"sessionId": "c0ffee\u{1b}]0;owned\u{7}\u{1b}[31m",
        "title": "Payroll \u{1b}[2J\u{202e}rounding\u{9b}31m", "workspaceDirectory":
        "/home/dev/\u{1b}[1mpayroll", "history": history("payroll rounding drift in March")});
    std::fs::write(sessions.join("c0ffee.json"), doc.to_string()).expect("write");
    let doc = serde_json::json!({"title": "No id", "workspaceDirectory": "/home/dev/payroll",
        "history": history("payroll rounding drift in April")});
    std::fs::write(sessions.join("bad\u{1b}[31mname.json"), doc.to_string()).expect("write");
    // Cline: a task folder named with an escape sequence.
    let storage = home.join(".config/Code/User/globalStorage");
    let task = storage.join("saoudrizwan.claude-dev/tasks/17853\u{1b}[8m15600000");
    std::fs::create_dir_all(&task).expect("mkdir");
    let ui = serde_json::json!([{"ts": 1785315600000u64, "type": "say", "say": "task",
        "text": "payroll rounding drift in May"}]);
    std::fs::write(task.join("ui_messages.json"), ui.to_string()).expect("write");
    // Amp: the thread id its document names.
    let threads = home.join(".local/share/amp/threads");
    std::fs::create_dir_all(&threads).expect("mkdir");
    let thread = serde_json::json!({"v": 1, "id": "T-\u{1b}[31m0001\u{202e}", "created":
        1785315600000u64, "title": "Payroll", "messages": [{"role": "user", "messageId": 0,
        "content": [{"type": "text", "text": "payroll rounding drift in June"}]}]});
    std::fs::write(threads.join("T-0001.json"), thread.to_string()).expect("write");

    // A Cline SDK subagent's file named with an escape sequence (its id comes from the name).
    let sdk = home.join(".cline/data/sessions");
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/formats/cline/data/sessions");
    crate::common::agent_home::copy_tree(&fixture, &sdk);
    let session = sdk.join("1785402000123_k7qzp");
    std::fs::rename(
        session.join("agent_audit1.messages.json"),
        session.join("agent_\u{1b}[31maudit1.messages.json"),
    )
    .expect("rename");

    let data = tmp.path().join("data");
    for root in [
        &sessions,
        &storage.join("saoudrizwan.claude-dev"),
        &threads,
        &sdk,
    ] {
        let out = finish(index(&data, root, &[]));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let hits = search(&data, "payroll rounding drift");
    for month in ["March", "April", "May", "June"] {
        assert!(hits.contains(month), "{month} not found: {hits}");
    }
    for bad in UNSAFE {
        assert!(!hits.contains(bad), "{bad:?} in the output: {hits}");
    }
    let v: serde_json::Value = serde_json::from_str(&hits).expect("JSON");
    let items = v["lanes"]["episodes"]["items"].as_array().expect("items");
    let ids: Vec<&str> = items
        .iter()
        .filter_map(|i| i["session_id"].as_str())
        .collect();
    // Replaced, not removed: the id cannot become another session's clean one.
    assert!(
        ids.contains(&"c0ffee\u{fffd}]0;owned\u{fffd}\u{fffd}[31m"),
        "{ids:?}"
    );
    assert!(ids.contains(&"bad\u{fffd}[31mname"), "{ids:?}");
    assert!(
        ids.iter().any(|i| i.starts_with("17853\u{fffd}[8m")),
        "{ids:?}"
    );
    // Amp takes a thread id only of its own shape (`T-` and letters, digits, `-`, `_`): not
    // that one, so the thread is its file's.
    assert!(ids.contains(&"T-0001"), "{ids:?}");
    let audit = search(&data, "ledger sums money with floats");
    for bad in UNSAFE {
        assert!(!audit.contains(bad), "{bad:?} in the output: {audit}");
    }
    assert!(
        audit.contains("1785402000123_k7qzp/agent-agent_\u{fffd}[31maudit1"),
        "{audit}"
    );
    // A workspace holding an escape names no real folder: dropped, never shown.
    assert!(!hits.contains("[1mpayroll"), "{hits}");
    // The title keeps its words.
    let pretty = finish({
        let mut c = bin();
        c.arg("--data-dir")
            .arg(&data)
            .args(["search", "-q", "payroll March", "--pretty"]);
        c
    });
    let text = String::from_utf8_lossy(&pretty.stdout);
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{text}"
    );
}
