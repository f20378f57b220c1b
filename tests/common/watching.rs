//! `knowledge index --watch` driven from a test: start it, read what it says on stderr, poll
//! `knowledge search` until a change is found. Nothing is timed: the deadline only bounds a hang.
//!
//! Tests about permissions run the watcher as an unprivileged user when the tests run as root
//! (root reads and writes through any mode bits); [`Watcher::start_as_nobody`] hands the temp
//! dir to that user first.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::cli::{bin, plan_args, CliWorld as World};

pub const DEADLINE: Duration = Duration::from_secs(120);

/// The unprivileged user a permission test runs as when the tests run as root.
const NOBODY: &str = "65534";

/// `knowledge index --watch` running until dropped; returns once it says it is watching.
pub struct Watcher {
    child: Child,
    /// Every stderr line so far.
    lines: Arc<Mutex<Vec<String>>>,
    /// The line saying how it watches (`watching N folders (file-system notifications)`).
    pub banner: String,
}

/// Whether the tests run as root.
pub fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0")
}

/// `cmd` run as [`NOBODY`] when the tests run as root (through `setpriv`), else as is.
pub fn unprivileged(cmd: Command) -> Command {
    if !is_root() {
        return cmd;
    }
    let mut wrapped = Command::new("setpriv");
    wrapped
        .arg(format!("--reuid={NOBODY}"))
        .arg(format!("--regid={NOBODY}"))
        .arg("--clear-groups")
        .arg(cmd.get_program())
        .args(cmd.get_args());
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => wrapped.env(k, v),
            None => wrapped.env_remove(k),
        };
    }
    wrapped
}

/// Give the world's temp dir (world and data dir) to [`NOBODY`] when the tests run as root.
pub fn hand_to_nobody(w: &World) {
    if !is_root() {
        return;
    }
    let tmp = w.data.parent().expect("the temp dir");
    let owner = format!("{NOBODY}:{NOBODY}");
    let ok = Command::new("chown")
        .args(["-R", &owner])
        .arg(tmp)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "chown the temp dir");
    chmod(tmp, "755");
}

pub fn chmod(path: &Path, mode: &str) {
    let ok = Command::new("chmod")
        .arg(mode)
        .arg(path)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "chmod {mode} {}", path.display());
}

/// `knowledge index --watch --quiet` over the whole world.
pub fn watch_command(w: &World, poll: bool) -> Command {
    let mut cmd = bin();
    cmd.arg("--data-dir")
        .arg(&w.data)
        .arg("index")
        .arg("--watch")
        .arg("--quiet")
        .args(plan_args(&w.world));
    if poll {
        cmd.env("KNOWLEDGE_WATCH_POLL", "1");
    }
    cmd
}

impl Watcher {
    pub fn start(w: &World, poll: bool) -> Watcher {
        let watcher = Watcher::spawn(watch_command(w, poll));
        if poll {
            assert!(watcher.banner.contains("polling"), "{}", watcher.banner);
        }
        watcher
    }

    /// The watcher as an unprivileged user (see the module doc), over a world handed to it.
    pub fn start_as_nobody(w: &World) -> Watcher {
        hand_to_nobody(w);
        Watcher::spawn(unprivileged(watch_command(w, false)))
    }

    pub fn spawn(mut cmd: Command) -> Watcher {
        cmd.stdout(Stdio::null()).stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("start knowledge index --watch");
        let stderr = child.stderr.take().expect("stderr");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = mpsc::channel();
        let keep = lines.clone();
        // Keep draining so the child never blocks on a full pipe.
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if line.starts_with("watching") {
                    let _ = tx.send(line.clone());
                }
                keep.lock().expect("lines").push(line);
            }
        });
        let banner = match rx.recv_timeout(DEADLINE) {
            Ok(line) => line,
            Err(_) => panic!(
                "the watcher never started: {:?}",
                lines.lock().expect("lines")
            ),
        };
        Watcher {
            child,
            lines,
            banner,
        }
    }

    /// Wait until a stderr line satisfies `found`; that line.
    pub fn said(&self, found: impl Fn(&str) -> bool) -> String {
        let started = Instant::now();
        loop {
            if let Some(l) = self.lines.lock().expect("lines").iter().find(|l| found(l)) {
                return l.clone();
            }
            assert!(
                started.elapsed() < DEADLINE,
                "never said: {:?}",
                self.lines.lock().expect("lines")
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().expect("lines").clone()
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn search(data: &Path, query: &str, lane: &str) -> Value {
    let out = bin()
        .arg("--data-dir")
        .arg(data)
        .args(["search", "-q", query, "--include", lane])
        .output()
        .expect("run knowledge search");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
        panic!(
            "search printed no JSON: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Poll until `found` holds for the search's answer (or fail at the deadline).
pub fn eventually(data: &Path, query: &str, lane: &str, found: impl Fn(&Value) -> bool) -> Value {
    let started = Instant::now();
    loop {
        let resp = search(data, query, lane);
        if found(&resp) {
            return resp;
        }
        assert!(
            started.elapsed() < DEADLINE,
            "not found within {DEADLINE:?}: {query} in {lane}: {resp}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

pub fn items<'a>(resp: &'a Value, lane: &str) -> &'a [Value] {
    resp["lanes"][lane]["items"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

pub fn transcript(w: &World) -> PathBuf {
    w.world
        .root
        .join("claude/projects/-DEMO--repos-billing/40b2334f-8cd8-49dd-8b81-2fd55e3b6a92.jsonl")
}

static NEXT_LINE: AtomicUsize = AtomicUsize::new(1);

/// One assistant line of session `session` appended to (or starting) the transcript at `path`.
pub fn append_line(path: &Path, session: &str, cwd: &str, text: &str) {
    let line = serde_json::json!({
        "parentUuid": null,
        "isSidechain": false,
        "type": "assistant",
        "message": {"role": "assistant", "type": "message",
                    "content": [{"type": "text", "text": text}]},
        "uuid": format!("9b0e4c1e-live-0000-0000-{:012}", NEXT_LINE.fetch_add(1, Ordering::SeqCst)),
        "timestamp": "2026-11-30T10:00:00.000Z",
        "cwd": cwd,
        "sessionId": session,
        "version": "2.1.172"
    });
    super::agent_home::append(path, &line.to_string());
}

/// One line appended to the demo billing session's transcript.
pub fn append_event(path: &Path, cwd: &str, text: &str) {
    append_line(path, "40b2334f-8cd8-49dd-8b81-2fd55e3b6a92", cwd, text);
}
