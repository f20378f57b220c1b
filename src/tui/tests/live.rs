//! The explorer following the index (issue 14): a batch from the watch refreshes the results by
//! itself only when nothing is selected; otherwise the status line says how many events arrived
//! and a refresh keeps the cursor on the item it was on.

use super::snapshots::QUERY;
use super::{engine_for, harness, world, Harness};
use crate::tui::action::Action;
use crate::tui::state::Focus;

fn with_results() -> Harness {
    let mut h = harness(engine_for(world()), world(), 120, 40);
    h.search(QUERY);
    h.act(Action::FocusQuery);
    assert_eq!(h.app.focus, Focus::Query);
    h
}

fn status_line(h: &Harness) -> String {
    h.screen().lines().last().unwrap_or_default().to_string()
}

#[test]
fn with_nothing_selected_new_events_refresh_the_results() {
    let mut h = with_results();
    let searches = h.seen.searches;
    h.act(Action::IndexUpdated {
        new_events: 3,
        other_changes: false,
    });
    assert_eq!(h.seen.searches, searches + 1, "the query ran again");
    assert!(!h.app.live.pending());
    assert!(
        status_line(&h).contains("↻ 3 new events: results refreshed"),
        "{}",
        status_line(&h)
    );
    // A batch that changed nothing searchable does nothing.
    h.act(Action::IndexUpdated {
        new_events: 0,
        other_changes: false,
    });
    assert_eq!(h.seen.searches, searches + 1);
}

#[test]
fn with_a_selection_the_status_line_counts_and_a_key_refreshes() {
    let mut h = with_results();
    h.act(Action::FocusEpisodes);
    h.act(Action::Down);
    let selected = h.app.episodes()[h.app.cursors.episodes.selected].id.clone();
    let searches = h.seen.searches;
    h.act(Action::IndexUpdated {
        new_events: 5,
        other_changes: false,
    });
    h.act(Action::IndexUpdated {
        new_events: 7,
        other_changes: true,
    });
    assert_eq!(h.seen.searches, searches, "no search under the cursor");
    assert!(
        status_line(&h).contains("↻ 12 new events"),
        "{}",
        status_line(&h)
    );
    insta::assert_snapshot!("live_pending_120x40", h.screen());

    h.act(Action::Refresh);
    assert_eq!(h.seen.searches, searches + 1);
    assert!(!status_line(&h).contains('↻'));
    assert_eq!(
        h.app.episodes()[h.app.cursors.episodes.selected].id,
        selected,
        "the cursor stays on its item"
    );
}

#[test]
fn a_refreshed_answer_in_another_order_keeps_the_cursor_on_its_item() {
    let mut h = with_results();
    h.act(Action::FocusEpisodes);
    h.act(Action::Down);
    let n = h.app.episodes().len();
    assert!(n >= 3, "the demo query finds several events");
    let selected = h.app.episodes()[1].id.clone();
    let mut resp = h.app.response().cloned().expect("results");
    resp.lanes.episodes.items.reverse();
    h.app.search.generation += 1;
    let g = h.app.search.generation;
    h.act(Action::SearchDone(g, Box::new(resp), 0.0));
    let at = h.app.cursors.episodes.selected;
    assert_eq!(at, n - 2);
    assert_eq!(h.app.episodes()[at].id, selected);
}

#[test]
fn a_watch_that_cannot_index_says_why() {
    let mut h = with_results();
    h.act(Action::IndexNote("another indexer holds the lock".into()));
    assert!(status_line(&h).contains("watch: another indexer holds the lock"));
}
