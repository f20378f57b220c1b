//! The real binary in a real terminal: `knowledge --data-dir …` runs in a detached tmux session
//! (its own tmux server), a query is typed, and the panes are read back with `capture-pane`.
//! Skipped, with a note, when tmux is not installed (failed with `KNOWLEDGE_REQUIRE_TMUX` set, as
//! `.ci/run` sets it).

mod common;

use std::time::{Duration, Instant};

use common::tmux::{shell_quote, Tmux};

#[test]
fn the_explorer_answers_in_a_real_terminal() {
    if !Tmux::installed() {
        return;
    }
    let world = common::world::demo();
    let cmd = format!(
        "{} --data-dir {}",
        env!("CARGO_BIN_EXE_knowledge"),
        shell_quote(&world.data_dir.display().to_string())
    );
    let tmux = Tmux::start("test", &cmd, Duration::from_secs(20));
    tmux.wait_for("the query box", |s| s.contains("knowledge ·"));

    tmux.type_text("кто чинил доступ к MySQL");
    let screen = tmux.wait_for("results in the lanes", |s| {
        s.contains("Episodes 1") && s.contains("5af11f95") && s.contains("routing find_agent")
    });
    assert!(screen.contains("Actors"), "{screen}");
    assert!(screen.contains("кто чинил доступ к MySQL"), "{screen}");
    assert!(!screen.contains('\u{1b}'));

    // Into the results, open the first episode, and back.
    tmux.press("Tab");
    tmux.press("Enter");
    let screen = tmux.wait_for("the episode view", |s| {
        s.contains("Episode ep:") && s.contains("cwd ")
    });
    assert!(screen.contains("▶ #"), "{screen}");
    tmux.press("q");
    tmux.wait_for("the main screen again", |s| s.contains("Actors"));

    // The help overlay, then quit: the process ends and the session with it.
    tmux.press("?");
    tmux.wait_for("the help overlay", |s| s.contains("Lanes and actors"));
    tmux.press("Escape");
    tmux.press("q");
    let start = Instant::now();
    while tmux.alive() && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(!tmux.alive(), "q on the main screen quits the explorer");
}

/// CI cannot pass by skipping: where tmux is missing, `KNOWLEDGE_REQUIRE_TMUX` (set by
/// `.ci/run`) makes the terminal tests fail, saying how to install it; unset, they skip. The
/// decision `Tmux::installed` makes, with the variable given.
#[test]
fn a_missing_tmux_fails_the_terminal_tests_where_ci_requires_it() {
    use common::needs::TMUX;
    assert_eq!(TMUX.var, "KNOWLEDGE_REQUIRE_TMUX");
    let failed = std::panic::catch_unwind(|| TMUX.met_with(false, Some("1")))
        .expect_err("a missing tmux with the variable set fails");
    let said = failed.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        said.contains("apt-get install tmux") && said.contains(TMUX.var),
        "{said}"
    );
    assert!(!TMUX.met_with(false, None), "unset: skipped");
    assert!(TMUX.met_with(true, Some("1")));
}
