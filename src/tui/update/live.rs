//! The explorer following the index: a batch from the watch marks the shown results as behind
//! (`↻ N new events` in the status line); when nothing is selected — the query box has the
//! focus, no view or popup is open, the query is the one shown — the search runs again by
//! itself. Otherwise the person refreshes with a key. A refreshed answer to the same query keeps
//! the selection on the same item (by id), at the same row on screen, so it never jumps.

use knowledge::contract::{Lane, SearchResponse};

use super::{start_search, Effect};
use crate::tui::state::{App, Focus, ListCursor};

pub(super) fn index_updated(app: &mut App, new_events: u64, other: bool, fx: &mut Vec<Effect>) {
    if new_events == 0 && !other {
        return;
    }
    app.live.new_events += new_events;
    app.live.other_changes |= other;
    if nothing_selected(app) {
        let n = app.live.new_events;
        app.say(
            crate::tui::state::Level::Info,
            match n {
                0 => "↻ index updated: results refreshed".to_string(),
                n => format!("↻ {n} new events: results refreshed"),
            },
        );
        app.search.generation += 1;
        app.search.debouncing = false;
        start_search(app, fx);
    }
}

fn nothing_selected(app: &App) -> bool {
    app.views.is_empty()
        && app.overlay.is_none()
        && app.focus == Focus::Query
        && app.response().is_some()
        && !app.search.pending()
        && app.query_text().trim() == app.search.shown_query.trim()
}

/// The ids under the cursors, before a response replaces the shown one.
pub(super) struct Selection {
    lanes: [Option<(String, ListCursor)>; 3],
    actor: Option<String>,
}

fn lane_ids(resp: &SearchResponse, lane: Lane) -> Vec<&str> {
    resp.lane_ids(lane)
}

pub(super) fn selection(app: &App) -> Selection {
    let Some(resp) = app.response() else {
        return Selection {
            lanes: [None, None, None],
            actor: None,
        };
    };
    let lanes = Lane::ALL.map(|lane| {
        let c = *app.cursors.lane(lane);
        lane_ids(resp, lane)
            .get(c.selected)
            .map(|id| (id.to_string(), c))
    });
    Selection {
        lanes,
        actor: app.selected_actor().map(|a| a.actor_id.clone()),
    }
}

/// Put each cursor back on the item it was on, at the same screen row.
pub(super) fn restore(app: &mut App, sel: Selection) {
    let Some(resp) = app.search.response.take() else {
        return;
    };
    for (lane, kept) in Lane::ALL.into_iter().zip(sel.lanes) {
        let ids = lane_ids(&resp, lane);
        let cursor = app.cursors.lane_mut(lane);
        match kept {
            Some((id, old)) => match ids.iter().position(|x| *x == id) {
                Some(at) => {
                    let row = old.selected.saturating_sub(old.offset);
                    cursor.selected = at;
                    cursor.offset = at.saturating_sub(row);
                }
                None => cursor.selected = old.selected.min(ids.len().saturating_sub(1)),
            },
            None => cursor.selected = cursor.selected.min(ids.len().saturating_sub(1)),
        }
    }
    if let Some(id) = sel.actor {
        if let Some(at) = resp.actors.iter().position(|a| a.actor_id == id) {
            if at != app.cursors.actors.actor {
                app.cursors.actors.actor = at;
                app.cursors.actors.evidence = None;
            }
        }
    }
    app.search.response = Some(resp);
}
