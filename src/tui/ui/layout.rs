//! Where everything goes, as a pure function of the screen size and the state. `draw` uses it to
//! render and `update` uses the same function to scroll selections into view and to find what a
//! mouse click hit, so the two can never disagree.

use knowledge::contract::Lane;
use ratatui::layout::Rect;

use crate::tui::state::{App, Focus};

/// At least this many columns show the three lanes side by side.
pub const WIDE: u16 = 110;
/// Rows per lane item: a locator line and one to three snippet lines, as room allows.
pub const MIN_ITEM_ROWS: usize = 2;
pub const MAX_ITEM_ROWS: usize = 4;

/// The main screen's regions.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MainLayout {
    /// The query box (bordered when there is room).
    pub query: Rect,
    pub query_bordered: bool,
    /// Mode and filters line.
    pub info: Option<Rect>,
    /// Routing line.
    pub routing: Option<Rect>,
    /// The lane panes shown, with their areas (one when tabbed).
    pub lanes: Vec<(Lane, Rect)>,
    pub tabbed: bool,
    pub actors: Option<Rect>,
    pub status: Option<Rect>,
    /// Everything above the status line (views and popups use it).
    pub body: Rect,
}

/// The lane shown when only one fits.
pub fn shown_lane(app: &App) -> Lane {
    match app.focus {
        Focus::Lane(l) => l,
        _ => app.lane_tab,
    }
}

pub fn main_layout(area: Rect, app: &App) -> MainLayout {
    let mut out = MainLayout::default();
    if area.width == 0 || area.height == 0 {
        return out;
    }
    let mut rest = area;
    if area.height >= 3 {
        out.status = Some(Rect::new(area.x, area.bottom() - 1, area.width, 1));
        rest.height -= 1;
    }
    out.body = rest;

    // Header: the query box, then the mode/filters line and the routing line when they fit.
    let (qh, bordered) = if rest.height >= 10 && rest.width >= 10 {
        (3, true)
    } else {
        (1, false)
    };
    out.query = Rect::new(rest.x, rest.y, rest.width, qh.min(rest.height));
    out.query_bordered = bordered;
    let mut y = rest.y + out.query.height;
    let mut left = rest.height - out.query.height;
    if rest.height >= 16 && left > 0 {
        out.info = Some(Rect::new(rest.x, y, rest.width, 1));
        y += 1;
        left -= 1;
    }
    if rest.height >= 12 && left > 0 {
        out.routing = Some(Rect::new(rest.x, y, rest.width, 1));
        y += 1;
        left -= 1;
    }
    if left == 0 {
        return out;
    }
    let panes = Rect::new(rest.x, y, rest.width, left);

    // Too little room for both lanes and actors: only what has the focus.
    if panes.height < 7 {
        out.tabbed = true;
        if app.focus == Focus::Actors {
            out.actors = Some(panes);
        } else {
            out.lanes = vec![(shown_lane(app), panes)];
        }
        return out;
    }
    let wide = panes.width >= WIDE;
    // The actor panel: as tall as its rows need (the most evidence any actor has unfolds
    // under it), at least 5 rows, at most 45% of the room.
    let actors = app.actors();
    let most_evidence = actors.iter().map(|a| a.evidence.len()).max().unwrap_or(0);
    let need = (actors.len() + most_evidence + 3).max(5) as u16;
    let actors_h = need
        .min(panes.height * 45 / 100)
        .max(3)
        .min(panes.height.saturating_sub(4));
    let lanes_h = panes.height - actors_h;
    let lanes_area = Rect::new(panes.x, panes.y, panes.width, lanes_h);
    out.actors = Some(Rect::new(panes.x, panes.y + lanes_h, panes.width, actors_h));
    if wide {
        let w = lanes_area.width / 3;
        let widths = [w, w, lanes_area.width - 2 * w];
        let mut x = lanes_area.x;
        for (lane, width) in Lane::ALL.into_iter().zip(widths) {
            out.lanes
                .push((lane, Rect::new(x, lanes_area.y, width, lanes_area.height)));
            x += width;
        }
    } else {
        out.tabbed = true;
        out.lanes = vec![(shown_lane(app), lanes_area)];
    }
    out
}

/// The inside of a bordered block (nothing when too small for borders).
pub fn inner(r: Rect) -> Rect {
    if r.width < 2 || r.height < 2 {
        return Rect::new(r.x, r.y, 0, 0);
    }
    Rect::new(r.x + 1, r.y + 1, r.width - 2, r.height - 2)
}

/// Rows per item in a lane pane of this area holding `n` items.
pub fn item_rows(r: Rect, n: usize) -> usize {
    let h = inner(r).height as usize;
    (h / n.max(1)).clamp(MIN_ITEM_ROWS, MAX_ITEM_ROWS)
}

/// How many of `n` lane items fit in a lane pane of this area.
pub fn lane_capacity(r: Rect, n: usize) -> usize {
    let h = inner(r).height as usize;
    (h / item_rows(r, n)).max(usize::from(h > 0))
}

/// Rows for actors (and their evidence links) in the actor panel (one row is the header).
pub fn actor_capacity(r: Rect) -> usize {
    let h = inner(r).height as usize;
    if h >= 3 {
        h - 1
    } else {
        h
    }
}

/// A centred popup of at most `w`×`h` inside `area`.
pub fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

/// Rows of text visible in a view (the body minus its border and one title row).
pub fn view_rows(app: &App) -> usize {
    let l = main_layout(Rect::new(0, 0, app.size.0, app.size.1), app);
    inner(l.body).height.saturating_sub(1) as usize
}

/// Columns of text in a view (for wrapping).
pub fn view_cols(app: &App) -> usize {
    let l = main_layout(Rect::new(0, 0, app.size.0, app.size.1), app);
    inner(l.body).width as usize
}

/// The tab labels of the tabbed lane pane (` 1 episodes 6 `), in order.
pub fn tab_labels(app: &App) -> Vec<(Lane, String)> {
    Lane::ALL
        .into_iter()
        .enumerate()
        .map(|(i, lane)| {
            let n = app.lane_len(lane);
            (lane, format!(" {} {} {n} ", i + 1, lane.as_str()))
        })
        .collect()
}

/// The lane whose tab is at column `col` of the tabbed pane `r` (tabs start after the corner,
/// one separator cell between them).
pub fn tab_at(app: &App, r: Rect, col: u16) -> Option<Lane> {
    let mut x = r.x as usize + 1;
    for (lane, label) in tab_labels(app) {
        let w = super::text::width(&label);
        if (x..x + w).contains(&(col as usize)) {
            return Some(lane);
        }
        x += w + 1;
    }
    None
}

pub fn contains(r: Rect, col: u16, row: u16) -> bool {
    col >= r.x && col < r.right() && row >= r.y && row < r.bottom()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::keymap::Keymap;

    fn app(w: u16, h: u16) -> App {
        let mut a = App::new(Keymap::default(), "/data".into(), true);
        a.size = (w, h);
        a
    }

    fn inside(outer: Rect, r: Rect) -> bool {
        r.area() == 0
            || (r.x >= outer.x
                && r.y >= outer.y
                && r.right() <= outer.right()
                && r.bottom() <= outer.bottom())
    }

    #[test]
    fn regions_never_overlap_or_leave_the_screen() {
        for w in [1u16, 2, 5, 20, 40, 79, 80, 109, 110, 120, 200] {
            for h in [1u16, 2, 3, 5, 8, 10, 12, 16, 24, 40, 60] {
                let a = app(w, h);
                let area = Rect::new(0, 0, w, h);
                let l = main_layout(area, &a);
                let mut rects = vec![l.query];
                rects.extend(l.info);
                rects.extend(l.routing);
                rects.extend(l.lanes.iter().map(|(_, r)| *r));
                rects.extend(l.actors);
                rects.extend(l.status);
                for r in &rects {
                    assert!(inside(area, *r), "{w}x{h}: {r:?}");
                }
                for (i, a) in rects.iter().enumerate() {
                    for b in rects.iter().skip(i + 1) {
                        assert!(
                            a.area() == 0 || b.area() == 0 || !a.intersects(*b),
                            "{w}x{h}: {a:?} overlaps {b:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn wide_terminals_show_three_lanes_narrow_ones_tab_them() {
        let l = main_layout(Rect::new(0, 0, 120, 40), &app(120, 40));
        assert_eq!(l.lanes.len(), 3);
        assert!(!l.tabbed && l.actors.is_some());
        let l = main_layout(Rect::new(0, 0, 80, 24), &app(80, 24));
        assert_eq!(l.lanes.len(), 1);
        assert!(l.tabbed && l.actors.is_some() && l.routing.is_some());
    }
}
