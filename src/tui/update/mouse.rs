//! The mouse: a click focuses and selects (a click on an evidence link follows it), a double
//! click opens, the wheel moves the selection or scrolls the open view. Hits are found with the
//! same layout function the screen is drawn with.

use super::{focus_lane, move_selection, screen, update_inner, views, Effect};
use crate::tui::action::{Action, MouseInput, MouseKind};
use crate::tui::state::{App, Focus};
use crate::tui::ui::layout::{self, main_layout};

pub fn mouse(app: &mut App, m: MouseInput, fx: &mut Vec<Effect>) {
    let scroll = match m.kind {
        MouseKind::ScrollUp => Some(-1),
        MouseKind::ScrollDown => Some(1),
        _ => None,
    };
    if app.overlay.is_some() || !app.views.is_empty() {
        if let Some(d) = scroll {
            for _ in 0..3 {
                update_inner(app, if d < 0 { Action::Up } else { Action::Down }, fx);
            }
        }
        return;
    }
    let l = main_layout(screen(app), app);
    let (col, row) = (m.column, m.row);
    if layout::contains(l.query, col, row) {
        app.focus = Focus::Query;
        return;
    }
    for (lane, r) in l.lanes.clone() {
        if !layout::contains(r, col, row) {
            continue;
        }
        if l.tabbed && row == r.y {
            if let Some(t) = layout::tab_at(app, r, col) {
                focus_lane(app, t);
            }
            return;
        }
        focus_lane(app, lane);
        let inner = layout::inner(r);
        if let Some(d) = scroll {
            move_selection(app, d);
        } else if layout::contains(inner, col, row) {
            let c = *app.cursors.lane(lane);
            let per = layout::item_rows(r, app.lane_len(lane));
            let i = c.offset + (row - inner.y) as usize / per;
            if i < app.lane_len(lane) {
                app.cursors.lane_mut(lane).selected = i;
                if m.kind == MouseKind::DoubleClick {
                    views::open_selection(app, fx, false);
                }
            }
        }
        return;
    }
    if let Some(r) = l.actors.filter(|r| layout::contains(*r, col, row)) {
        app.focus = Focus::Actors;
        if let Some(d) = scroll {
            move_selection(app, d);
            return;
        }
        let inner = layout::inner(r);
        let header = u16::from(inner.height >= 3);
        if row >= inner.y + header && layout::contains(inner, col, row) {
            let i = app.cursors.actors.offset + (row - inner.y - header) as usize;
            if let Some(&(actor, ev)) = app.actor_rows().get(i) {
                app.cursors.actors.actor = actor;
                app.cursors.actors.evidence = ev;
                if m.kind == MouseKind::DoubleClick || ev.is_some() {
                    views::open_selection(app, fx, false);
                }
            }
        }
    }
}
