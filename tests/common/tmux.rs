//! The real binary in a real terminal: a detached tmux session on its own tmux server (one socket
//! per test process, killed on drop), keys sent with `send-keys`, the screen read back with
//! `capture-pane`. Shared by every test that drives the explorer, so they start, wait and clean up
//! the same way.

use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// A tmux server of its own holding one session, `tui`, that runs a command.
pub struct Tmux {
    socket: String,
    /// How long [`Tmux::wait_for`] waits for a screen before it fails with the last one.
    patience: Duration,
}

impl Tmux {
    /// Whether the terminal test goes on: tmux is installed. The one place its absence is
    /// decided: a note that the test is skipped and `false`, or, with `KNOWLEDGE_REQUIRE_TMUX`
    /// set (`.ci/run`), a failure saying how to install it.
    pub fn installed() -> bool {
        super::needs::TMUX.met(Command::new("tmux").arg("-V").output().is_ok())
    }

    /// Start `cmd` (a shell command line) in a 120×40 terminal without colours. `name` tells
    /// this test's server apart from others running at the same time.
    pub fn start(name: &str, cmd: &str, patience: Duration) -> Tmux {
        let tmux = Tmux {
            socket: format!("knowledge-{name}-{}", std::process::id()),
            patience,
        };
        let started = tmux.run(&[
            "new-session",
            "-d",
            "-s",
            "tui",
            "-x",
            "120",
            "-y",
            "40",
            "-e",
            "NO_COLOR=1",
            cmd,
        ]);
        assert!(started.status.success(), "{started:?}");
        tmux
    }

    pub fn run(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("run tmux")
    }

    /// Type `text` literally into the terminal.
    pub fn type_text(&self, text: &str) {
        self.run(&["send-keys", "-t", "tui", "-l", text]);
    }

    /// Press one key (tmux key names: `Tab`, `Enter`, `Escape`, `q`, …).
    pub fn press(&self, key: &str) {
        self.run(&["send-keys", "-t", "tui", key]);
    }

    pub fn capture(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-t", "tui"]).stdout).into_owned()
    }

    /// Wait until the screen satisfies `ok`, or fail with `what` and the last screen.
    pub fn wait_for(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.capture();
            if ok(&screen) {
                return screen;
            }
            if start.elapsed() > self.patience {
                panic!(
                    "timed out after {:?} waiting for {what}; the screen:\n{screen}",
                    self.patience
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn alive(&self) -> bool {
        self.run(&["has-session", "-t", "tui"]).status.success()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

/// Quote `s` for the shell command line tmux runs.
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}
