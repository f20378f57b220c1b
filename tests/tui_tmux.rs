//! The real binary in a real terminal: `knowledge --data-dir …` runs in a detached tmux session
//! (its own tmux server), a query is typed, and the panes are read back with `capture-pane`.
//! Skipped, with a note, when tmux is not installed.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

struct Tmux {
    socket: String,
}

impl Tmux {
    fn run(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("run tmux")
    }

    fn capture(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-t", "tui"]).stdout).into_owned()
    }

    /// Wait until the screen satisfies `ok` (or time out with the last screen).
    fn wait_for(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.capture();
            if ok(&screen) {
                return screen;
            }
            if start.elapsed() > Duration::from_secs(20) {
                panic!("timed out waiting for {what}; the screen:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn alive(&self) -> bool {
        self.run(&["has-session", "-t", "tui"]).status.success()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

#[test]
fn the_explorer_answers_in_a_real_terminal() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("NOTE: tmux is not installed; skipping the terminal test of the explorer");
        return;
    }
    let world = common::world::demo();
    let bin = env!("CARGO_BIN_EXE_knowledge");
    let tmux = Tmux {
        socket: format!("knowledge-test-{}", std::process::id()),
    };
    let cmd = format!(
        "{bin} --data-dir '{}'",
        world.data_dir.display().to_string().replace('\'', "'\\''")
    );
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
        &cmd,
    ]);
    assert!(started.status.success(), "{started:?}");
    tmux.wait_for("the query box", |s| s.contains("knowledge ·"));

    tmux.run(&["send-keys", "-t", "tui", "-l", "кто чинил доступ к MySQL"]);
    let screen = tmux.wait_for("results in the lanes", |s| {
        s.contains("Episodes 1") && s.contains("5af11f95") && s.contains("routing find_agent")
    });
    assert!(screen.contains("Actors"), "{screen}");
    assert!(screen.contains("кто чинил доступ к MySQL"), "{screen}");
    assert!(!screen.contains('\u{1b}'));

    // Into the results, open the first episode, and back.
    tmux.run(&["send-keys", "-t", "tui", "Tab"]);
    tmux.run(&["send-keys", "-t", "tui", "Enter"]);
    let screen = tmux.wait_for("the episode view", |s| {
        s.contains("Episode ep:") && s.contains("cwd ")
    });
    assert!(screen.contains("▶ #"), "{screen}");
    tmux.run(&["send-keys", "-t", "tui", "q"]);
    tmux.wait_for("the main screen again", |s| s.contains("Actors"));

    // The help overlay, then quit: the process ends and the session with it.
    tmux.run(&["send-keys", "-t", "tui", "?"]);
    tmux.wait_for("the help overlay", |s| s.contains("Lanes and actors"));
    tmux.run(&["send-keys", "-t", "tui", "Escape"]);
    tmux.run(&["send-keys", "-t", "tui", "q"]);
    let start = Instant::now();
    while tmux.alive() && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(!tmux.alive(), "q on the main screen quits the explorer");
}
