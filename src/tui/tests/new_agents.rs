//! The explorer on the sessions of issue 35's nine agents (Cline, Roo Code, Kilo Code, Goose,
//! Crush, OpenHands, Continue, Amp, Zed): their committed fixtures laid out where each agent
//! keeps them, the databases built from their SQL, indexed into an episodes-only data dir.
//! Every agent's events are found, and each row of the episodes pane names the agent that wrote
//! it right after its `session:seq` locator; one screen is pinned as a snapshot.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::{engine_for, harness, plain_temp_dir, World};
use crate::tui::action::Action;

/// A question per agent, in the words of its fixture's task, and the label its rows carry.
const ASKED: [(&str, &str); 10] = [
    ("Cline", "invoice rounding test fails for JPY totals"),
    ("Roo Code", "retry with backoff to the webhook sender"),
    (
        "Kilo Code",
        "CSV import of the orders table takes four minutes",
    ),
    ("Kilo Code", "CSV importer drop rows with a BOM"),
    (
        "Goose",
        "invoice rounding test fails since the currency change",
    ),
    (
        "Crush",
        "ledger export test fails since the rounding change",
    ),
    (
        "OpenHands CLI",
        "nightly settlement job crashes with a KeyError",
    ),
    (
        "Continue",
        "invoice export drops the VAT line for EU customers",
    ),
    (
        "Amp",
        "nightly settlement job fails on the currency migration",
    ),
    ("Zed", "refund total is off by a cent"),
];

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn copy_tree(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).expect("mkdir");
    for e in std::fs::read_dir(src).expect("ls").flatten() {
        let to = dst.join(e.file_name());
        if e.path().is_dir() {
            copy_tree(&e.path(), &to);
        } else {
            std::fs::copy(e.path(), &to).expect("copy");
        }
    }
}

/// The database `sql` (a committed fixture) builds at `path`.
fn database(path: &Path, sql: &str) -> PathBuf {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    let sql = std::fs::read_to_string(manifest().join(sql)).expect("fixture SQL");
    let c = rusqlite::Connection::open(path).expect("create db");
    c.execute_batch(&sql).expect("fixture SQL runs");
    path.to_path_buf()
}

/// The nine agents' fixtures, indexed once per test binary.
fn nine() -> &'static World {
    static W: OnceLock<World> = OnceLock::new();
    W.get_or_init(|| {
        let tmp = plain_temp_dir();
        let home = tmp.path().join("home");
        let formats = manifest().join("fixtures/formats");
        let storage = home.join(".config/Code/User/globalStorage");
        let mut roots = Vec::new();
        for (agent, ext) in [
            ("cline", "saoudrizwan.claude-dev"),
            ("roo", "rooveterinaryinc.roo-cline"),
            ("kilo", "kilocode.kilo-code"),
        ] {
            copy_tree(&formats.join(agent).join(ext), &storage.join(ext));
            roots.push(storage.join(ext));
        }
        for (fixture, place) in [
            ("continue", ".continue"),
            ("amp", ".local/share/amp"),
            ("openhands", ".openhands"),
        ] {
            copy_tree(&formats.join(fixture), &home.join(place));
            roots.push(home.join(place));
        }
        let share = home.join(".local/share");
        roots.push(database(
            &share.join("kilo/kilo.db"),
            "fixtures/formats/kilo/kilo.sql",
        ));
        roots.push(database(
            &share.join("goose/sessions/sessions.db"),
            "fixtures/agents/goose/sessions.sql",
        ));
        roots.push(database(
            &home.join("src/ledger/.crush/crush.db"),
            "fixtures/agents/crush/crush.sql",
        ));
        roots.push(database(
            &share.join("zed/threads/threads.db"),
            "fixtures/agents/zed/threads.sql",
        ));
        let data_dir = tmp.path().join("data");
        std::fs::create_dir_all(&data_dir).expect("data dir");
        let options = knowledge::sources::episodes::index::IndexOptions::new(roots);
        let summary = knowledge::sources::episodes::index::index_episodes(
            &data_dir.join("episodes.sqlite"),
            &options,
            &mut |_| {},
        )
        .expect("index the nine agents' fixtures");
        assert!(summary.failed.is_empty(), "{:?}", summary.failed);
        World {
            root: home,
            data_dir,
            _tmp: tmp,
        }
    })
}

/// The agent labels on the episodes pane's rows (`MM-DD HH:MM <id>:<seq> <agent> · <type>`, or
/// `— <id>:<seq> …` for an event with no time of its own: Continue's and Zed's).
fn row_labels(screen: &str) -> Vec<String> {
    let mut labels = Vec::new();
    for line in screen.lines() {
        let Some(cell) = line.split('│').nth(1) else {
            continue;
        };
        let cell = cell.trim_start_matches(['▶', ' ']);
        let after_time = match cell.strip_prefix("— ") {
            Some(rest) => Some(rest),
            None => {
                let mut words = cell.splitn(3, ' ');
                match (words.next(), words.next(), words.next()) {
                    (Some(day), Some(time), Some(rest))
                        if day.len() == 5
                            && day.as_bytes()[2] == b'-'
                            && time.len() == 5
                            && time.as_bytes()[2] == b':' =>
                    {
                        Some(rest)
                    }
                    _ => None,
                }
            }
        };
        let Some((id, rest)) = after_time.and_then(|r| r.split_once(' ')) else {
            continue;
        };
        let is_row = id
            .split_once(':')
            .is_some_and(|(_, n)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
        if is_row {
            labels.push(rest.split(" ·").next().unwrap_or_default().to_string());
        }
    }
    labels
}

/// True when a row's `shown` label is `label`, whole or cut by the pane (`OpenHands CL…`).
fn names(shown: &str, label: &str) -> bool {
    shown == label
        || shown
            .strip_suffix('…')
            .is_some_and(|cut| !cut.is_empty() && label.starts_with(cut))
}

#[test]
fn each_new_agents_events_are_shown_with_their_agent() {
    let w = nine();
    for (label, question) in ASKED {
        let mut hs = harness(engine_for(w), w, 120, 40);
        hs.search(question);
        hs.act(Action::FocusEpisodes);
        let screen = hs.screen();
        let labels = row_labels(&screen);
        assert!(
            !labels.is_empty(),
            "no episode rows for {question:?}:\n{screen}"
        );
        assert!(
            labels.first().is_some_and(|l| names(l, label)),
            "the best answer to {question:?} is not {label}'s: {labels:?}\n{screen}"
        );
        // Every row names a known agent.
        let known: Vec<&str> = knowledge::sources::episodes::agents::Agent::ALL
            .iter()
            .map(|a| a.label())
            .collect();
        for l in &labels {
            assert!(
                known.iter().any(|k| names(l, k)),
                "{l:?} is no agent:\n{screen}"
            );
        }
    }
}

#[test]
fn the_nine_agents_screen() {
    let w = nine();
    let mut hs = harness(engine_for(w), w, 120, 40);
    hs.search("rounding test fails");
    hs.act(Action::FocusEpisodes);
    let screen = hs.screen();
    let labels = row_labels(&screen);
    for want in ["Cline", "Goose", "Crush"] {
        assert!(
            labels.iter().any(|l| names(l, want)),
            "{want} not in {labels:?}"
        );
    }
    insta::assert_snapshot!("nine_agents_120x40", screen);
}
