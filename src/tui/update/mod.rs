//! `update(&mut App, Action) -> Vec<Effect>`: every change of the explorer's state happens here,
//! and nothing here does I/O. What must touch the world (search, load an episode, read a file,
//! dispatch, copy, start `$EDITOR`) comes back as an [`Effect`] for the runtime to carry out; its
//! answer comes back later as another action. Tests drive the whole explorer through this one
//! function.
//!
//! The main screen lives here; views, popups, dispatch/outbox and copying have their own files.

mod activity;
mod copy;

#[cfg(test)]
pub use activity::request as activity_request;
mod dispatch;
mod forms;
mod live;
mod mouse;
mod outbox;
mod views;

use chrono::{DateTime, Duration, FixedOffset, NaiveDate, TimeZone, Utc};
use knowledge::contract::request::normalize_root;
use knowledge::contract::{Lane, Mode, OutcomeFilter, SearchRequest};
use knowledge::text::sanitize::one_line;
use ratatui::layout::Rect;
use ratatui_textarea::{Input, Key, TextArea};

use super::action::Action;
use super::state::{App, Focus, Level, ListCursor, Overlay, View};
use super::ui::layout::{self, main_layout};

/// Typing waits this long for the next key before searching.
pub const DEBOUNCE_MS: u64 = 120;
/// Neighbouring events loaded on each side of an episode.
pub const EPISODE_CONTEXT: u64 = 3;

/// Something for the runtime to do; its result comes back as an [`Action`].
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Send `Action::DebounceElapsed(generation)` after [`DEBOUNCE_MS`].
    Debounce(u64),
    /// Search on the worker; the answer is `Action::SearchDone(generation, …)`.
    Search(Box<SearchRequest>, u64),
    LoadEpisode {
        job: u64,
        session_id: String,
        seq: u64,
        context: u64,
    },
    LoadCode {
        job: u64,
        path: String,
        chunk_id: Option<String>,
        start_line: u64,
        end_line: u64,
    },
    /// A dispatch dry run (`commit: false`) or commit (`commit: true`, only after a yes).
    Dispatch {
        job: u64,
        draft: super::state::TaskDraft,
        commit: bool,
    },
    OutboxList,
    OutboxShow(String),
    /// Record an approve/reject decision (only after a yes).
    OutboxDecide {
        id: String,
        approve: bool,
        reason: Option<String>,
    },
    /// Count the activity of a period on the worker; the answer is `Action::ActivityLoaded`.
    LoadActivity {
        job: u64,
        request: knowledge::engine::activity::ActivityRequest,
    },
    /// Put text on the clipboard; `what` names it in the status line.
    Copy {
        text: String,
        what: String,
    },
    /// Suspend the terminal and run `$EDITOR +line path`.
    OpenEditor {
        path: String,
        line: u64,
    },
}

/// Apply one action.
pub fn update(app: &mut App, action: Action) -> Vec<Effect> {
    let mut fx = Vec::new();
    match action {
        Action::Quit => app.quit = true,
        Action::Tick(now) => {
            app.tick = app.tick.wrapping_add(1);
            app.now_ms = now;
        }
        Action::Resize(w, h) => app.size = (w, h),
        Action::DebounceElapsed(g) => {
            if g == app.search.generation && app.search.debouncing {
                app.search.debouncing = false;
                start_search(app, &mut fx);
            }
        }
        Action::SearchDone(g, resp, ms) => search_done(app, g, *resp, ms),
        Action::SearchFailed(g, e) => {
            if app.search.in_flight == Some(g) {
                app.search.in_flight = None;
            }
            if g == app.search.generation {
                app.say(Level::Error, e);
            }
        }
        Action::EpisodeLoaded(job, res) => views::episode_loaded(app, job, res),
        Action::CodeLoaded(job, res) => views::code_loaded(app, job, res, &mut fx),
        Action::DispatchDone(job, commit, res) => dispatch::done(app, job, commit, res, &mut fx),
        Action::OutboxListed(res) => outbox::listed(app, res),
        Action::OutboxShown(id, res) => outbox::shown(app, id, res),
        Action::OutboxDecided(id, res) => outbox::decided(app, id, res, &mut fx),
        Action::ActivityLoaded(job, res) => activity::loaded(app, job, res),
        Action::CopyDone(res) => match res {
            Ok(how) => app.say(Level::Info, how),
            Err(e) => app.say(Level::Error, format!("copy failed: {e}")),
        },
        Action::EditorDone(res) => {
            if let Err(e) = res {
                app.say(Level::Error, e);
            }
        }
        Action::Mouse(m) => mouse::mouse(app, m, &mut fx),
        Action::IndexUpdated {
            new_events,
            other_changes,
        } => live::index_updated(app, new_events, other_changes, &mut fx),
        Action::IndexNote(why) => app.say(Level::Warn, format!("watch: {why}")),
        Action::Help => match app.overlay {
            Some(Overlay::Help { .. }) => app.overlay = None,
            None => app.overlay = Some(Overlay::Help { scroll: 0 }),
            Some(_) => {}
        },
        other => {
            if app.overlay.is_some() {
                forms::overlay_action(app, other, &mut fx);
            } else if app.views.is_empty() {
                main_action(app, other, &mut fx);
            } else {
                update_inner(app, other, &mut fx);
            }
        }
    }
    if app.focus == Focus::Actors && app.views.is_empty() {
        app.actor_pinned = true;
    }
    fix_scroll(app);
    clamp_scrolls(app);
    fx
}

/// Keep the scrollable popups and panes within their text (so `k` after `G` moves at once).
fn clamp_scrolls(app: &mut App) {
    use super::ui::{dispatch as d, outbox, popups};
    let body = main_layout(screen(app), app).body;
    let max = match &app.overlay {
        Some(Overlay::Help { .. }) => Some(popups::help_max_scroll(app, body)),
        Some(Overlay::Confirm(c)) => Some(popups::confirm_max_scroll(app, c, body)),
        _ => None,
    };
    match (&mut app.overlay, max) {
        (Some(Overlay::Help { scroll }), Some(m)) => *scroll = (*scroll).min(m),
        (Some(Overlay::Confirm(c)), Some(m)) => c.scroll = c.scroll.min(m),
        _ => {}
    }
    let max = match app.views.last() {
        Some(View::Dispatch(v)) => d::preview_max_scroll(app, v, body),
        Some(View::Outbox(o)) => match o.detail.as_ref().and_then(|x| x.doc.as_ref()) {
            Some(pkg) => outbox::package_max_scroll(app, pkg, body),
            None => 0,
        },
        _ => return,
    };
    match app.views.last_mut() {
        Some(View::Dispatch(v)) => v.scroll = v.scroll.min(max),
        Some(View::Outbox(o)) => {
            if let Some(x) = o.detail.as_mut() {
                x.scroll = x.scroll.min(max);
            }
        }
        _ => {}
    }
}

fn main_action(app: &mut App, action: Action, fx: &mut Vec<Effect>) {
    match action {
        Action::FocusQuery => app.focus = Focus::Query,
        Action::Back => {
            if app.focus == Focus::Query {
                if app.response().is_some() {
                    app.focus = Focus::Lane(first_lane_with_items(app));
                }
            } else {
                app.focus = Focus::Query;
            }
        }
        Action::SearchNow | Action::Refresh => {
            if app.focus == Focus::Query && app.response().is_some() && !app.search.pending() {
                // Enter on an unchanged query moves to the results.
                if app.query_text().trim() == app.search.shown_query.trim() {
                    app.focus = Focus::Lane(first_lane_with_items(app));
                    return;
                }
            }
            app.search.generation += 1;
            app.search.debouncing = false;
            start_search(app, fx);
        }
        Action::ClearQuery => {
            app.query = super::state::text_field("", super::state::QUERY_PLACEHOLDER);
            query_changed(app, fx);
        }
        Action::Input(input) if app.focus == Focus::Query => type_in_query(app, input, fx),
        Action::Paste(text) => {
            // Pasting anywhere on the main screen pastes into the query.
            app.focus = Focus::Query;
            app.query.insert_str(one_line(&text));
            query_changed(app, fx);
        }
        Action::CycleMode => {
            let i = Mode::ALL
                .iter()
                .position(|m| *m == app.filters.mode)
                .unwrap_or(0);
            app.filters.mode = Mode::ALL[(i + 1) % Mode::ALL.len()];
            app.say(Level::Info, format!("mode {}", app.filters.mode.as_str()));
            research(app, fx);
        }
        Action::Up => move_selection(app, -1),
        Action::Down => {
            if app.focus == Focus::Query {
                app.focus = Focus::Lane(first_lane_with_items(app));
            } else {
                move_selection(app, 1)
            }
        }
        Action::PageUp => move_selection(app, -(page(app) as i64)),
        Action::PageDown => move_selection(app, page(app) as i64),
        Action::Top => move_selection(app, i64::MIN / 2),
        Action::Bottom => move_selection(app, i64::MAX / 2),
        Action::NextPane => cycle_pane(app, 1),
        Action::PrevPane => cycle_pane(app, -1),
        Action::FocusEpisodes => focus_lane(app, Lane::Episodes),
        Action::FocusCode => focus_lane(app, Lane::Code),
        Action::FocusSkills => focus_lane(app, Lane::Skills),
        Action::FocusActors => app.focus = Focus::Actors,
        Action::Open => views::open_selection(app, fx, false),
        Action::OpenEditor => views::open_selection(app, fx, true),
        Action::OpenFilters => forms::open_filters(app),
        Action::Dispatch => dispatch::open(app, fx, false),
        Action::DispatchAuto => dispatch::open(app, fx, true),
        Action::Outbox => outbox::open(app, fx),
        Action::Activity => activity::open(app, fx),
        Action::CopyMenu => copy::open_menu(app),
        a if a.is_copy() => copy::copy_direct(app, &a, fx),
        _ => {}
    }
}

fn type_in_query(app: &mut App, input: Input, fx: &mut Vec<Effect>) {
    if edit_line(&mut app.query, input) {
        query_changed(app, fx);
    }
}

/// Feed a key to a single-line text field (Enter and its control aliases never add a line).
pub(crate) fn edit_line(t: &mut TextArea<'static>, input: Input) -> bool {
    let newline = matches!(input.key, Key::Enter)
        || (input.ctrl && matches!(input.key, Key::Char('m') | Key::Char('j')));
    if newline {
        return false;
    }
    t.input(input)
}

fn query_changed(app: &mut App, fx: &mut Vec<Effect>) {
    app.search.generation += 1;
    if app.query_text().trim().is_empty() {
        app.search.debouncing = false;
        app.search.in_flight = None;
        app.search.response = None;
        app.search.shown_query.clear();
        app.search.terms.clear();
        app.cursors = Default::default();
        app.actor_pinned = false;
        return;
    }
    app.search.debouncing = true;
    fx.push(Effect::Debounce(app.search.generation));
}

/// Search again with the current query and filters (after a mode or filter change).
pub(crate) fn research(app: &mut App, fx: &mut Vec<Effect>) {
    if app.query_text().trim().is_empty() {
        return;
    }
    app.search.generation += 1;
    app.search.debouncing = false;
    start_search(app, fx);
}

fn start_search(app: &mut App, fx: &mut Vec<Effect>) {
    match build_request(app) {
        Ok(req) => {
            // The answer will include whatever the watch indexed so far.
            app.live = Default::default();
            app.search.in_flight = Some(app.search.generation);
            fx.push(Effect::Search(Box::new(req), app.search.generation));
        }
        Err(e) => {
            app.search.in_flight = None;
            if !e.is_empty() {
                app.say(Level::Error, e);
            }
        }
    }
}

/// The search request for the query box and the filters.
pub fn build_request(app: &App) -> Result<SearchRequest, String> {
    let q = app.query_text();
    if q.trim().is_empty() {
        return Err(String::new());
    }
    if q.chars().count() > 2000 {
        return Err("the query is longer than 2000 characters".to_string());
    }
    let f = &app.filters;
    let mut req = SearchRequest::new(q.trim());
    req.mode = f.mode;
    req.filters.workspaces = f.workspaces.iter().map(|w| normalize_root(w)).collect();
    req.filters.since = parse_when(&f.since, app.now_ms, false)?;
    req.filters.until = parse_when(&f.until, app.now_ms, true)?;
    if let (Some(s), Some(u)) = (req.filters.since, req.filters.until) {
        if s > u {
            return Err("filters: until is earlier than since".to_string());
        }
    }
    req.filters.outcome = (f.outcome != OutcomeFilter::Any).then_some(f.outcome);
    req.filters.actor_ids = f.actors.clone();
    req.include = Lane::ALL
        .into_iter()
        .zip(f.include)
        .filter(|(_, on)| *on)
        .map(|(l, _)| l)
        .collect();
    if req.include.is_empty() {
        return Err("filters: include at least one lane".to_string());
    }
    req.limit = f.limit.clamp(1, 50);
    // A person reads the answer on a screen, not through a model's context: the widest budget,
    // so the lanes are not cut to fit a token count.
    req.max_tokens = knowledge::contract::request::MAX_TOKENS_RANGE.1 as u32;
    req.trace = true;
    Ok(req)
}

/// A filter date: RFC 3339, `YYYY-MM-DD` (start of the day, or its end for `until`), or a time
/// back from now (`30m`, `12h`, `7d`, `2w`).
pub fn parse_when(
    s: &str,
    now_ms: i64,
    end_of_day: bool,
) -> Result<Option<DateTime<FixedOffset>>, String> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(None);
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Ok(Some(t));
    }
    if let Ok(d) = NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        let t = if end_of_day {
            d.and_hms_opt(23, 59, 59)
        } else {
            d.and_hms_opt(0, 0, 0)
        };
        if let Some(t) = t {
            return Ok(Some(Utc.from_utc_datetime(&t).fixed_offset()));
        }
    }
    let (num, unit) = s.split_at(s.len() - s.chars().last().map_or(0, char::len_utf8));
    if let Ok(n) = num.parse::<i64>() {
        let span = match unit {
            "m" => Duration::try_minutes(n),
            "h" => Duration::try_hours(n),
            "d" => Duration::try_days(n),
            "w" => Duration::try_weeks(n),
            _ => None,
        };
        if let (Some(span), Some(now)) = (span, Utc.timestamp_millis_opt(now_ms).single()) {
            if let Some(t) = now.checked_sub_signed(span) {
                return Ok(Some(t.fixed_offset()));
            }
        }
    }
    Err(format!(
        "\"{}\" is not a date: use 2026-09-01, 2026-09-01T10:00:00+03:00 or 7d/12h/2w",
        one_line(s)
    ))
}

fn search_done(app: &mut App, g: u64, resp: knowledge::contract::SearchResponse, ms: f64) {
    if app.search.in_flight == Some(g) {
        app.search.in_flight = None;
    }
    if g != app.search.generation {
        return; // stale: a newer request is on its way
    }
    let same_query = app.search.shown_query == resp.query;
    app.search.terms = knowledge::text::tokens::query_terms(&resp.query);
    app.search.shown_query = resp.query.clone();
    app.search.elapsed_ms = Some(ms);
    if let Some(e) = resp.errors.first() {
        app.say(
            Level::Error,
            format!(
                "{}: {}",
                e.code,
                app.paths.show_in_text(&one_line(&e.message))
            ),
        );
    }
    let kept = same_query.then(|| live::selection(app));
    app.search.response = Some(Box::new(resp));
    match kept {
        Some(sel) => live::restore(app, sel),
        None => {
            app.cursors = Default::default();
            app.actor_pinned = false;
        }
    }
}

fn first_lane_with_items(app: &App) -> Lane {
    if let Focus::Lane(l) = app.focus {
        return l;
    }
    Lane::ALL
        .into_iter()
        .find(|l| app.lane_len(*l) > 0)
        .unwrap_or(app.lane_tab)
}

pub(crate) fn focus_lane(app: &mut App, lane: Lane) {
    app.focus = Focus::Lane(lane);
    app.lane_tab = lane;
}

fn cycle_pane(app: &mut App, dir: i64) {
    let order = [
        Focus::Lane(Lane::Episodes),
        Focus::Lane(Lane::Code),
        Focus::Lane(Lane::Skills),
        Focus::Actors,
    ];
    let n = order.len() as i64;
    let next = match order.iter().position(|f| *f == app.focus) {
        Some(i) => order[(i as i64 + dir).rem_euclid(n) as usize],
        None if dir > 0 => order[0],
        None => order[3],
    };
    app.focus = next;
    if let Focus::Lane(l) = next {
        app.lane_tab = l;
    }
}

fn page(app: &App) -> usize {
    let l = main_layout(screen(app), app);
    match app.focus {
        Focus::Actors => l.actors.map(layout::actor_capacity).unwrap_or(1),
        Focus::Lane(lane) => l
            .lanes
            .iter()
            .find(|(x, _)| *x == lane)
            .map(|(_, r)| layout::lane_capacity(*r, app.lane_len(lane)))
            .unwrap_or(1),
        Focus::Query => 1,
    }
    .max(1)
}

pub(crate) fn screen(app: &App) -> Rect {
    Rect::new(0, 0, app.size.0, app.size.1)
}

pub(crate) fn move_selection(app: &mut App, delta: i64) {
    match app.focus {
        Focus::Query => {}
        Focus::Lane(lane) => {
            let len = app.lane_len(lane);
            let c = app.cursors.lane_mut(lane);
            c.selected = step(c.selected, delta, len);
        }
        Focus::Actors => {
            let rows = app.actor_rows();
            if rows.is_empty() {
                return;
            }
            let cur = (app.cursors.actors.actor, app.cursors.actors.evidence);
            let at = rows.iter().position(|r| *r == cur).unwrap_or(0);
            let (actor, evidence) = if delta.abs() == 1 {
                rows[step(at, delta, rows.len())]
            } else {
                (step(cur.0, delta, app.actors().len()), None)
            };
            app.cursors.actors.actor = actor;
            app.cursors.actors.evidence = evidence;
        }
    }
}

/// `i` moved by `delta` within `0..len`.
/// Scroll text at `pos` by a line, a page of `page` rows or to either end; false when `action`
/// is not a scroll (the end is clamped when the screen is drawn).
pub(crate) fn scroll_text(pos: &mut usize, action: &Action, page: usize) -> bool {
    *pos = match action {
        Action::Up => pos.saturating_sub(1),
        Action::Down => *pos + 1,
        Action::PageUp => pos.saturating_sub(page),
        Action::PageDown => *pos + page,
        Action::Top => 0,
        Action::Bottom => usize::MAX / 4,
        _ => return false,
    };
    true
}

pub(crate) fn step(i: usize, delta: i64, len: usize) -> usize {
    if len == 0 {
        return 0;
    }
    (i as i64).saturating_add(delta).clamp(0, len as i64 - 1) as usize
}

/// Keep every selection inside its list and scrolled into view.
fn fix_scroll(app: &mut App) {
    let l = main_layout(screen(app), app);
    for lane in Lane::ALL {
        let len = app.lane_len(lane);
        let cap = l
            .lanes
            .iter()
            .find(|(x, _)| *x == lane)
            .map(|(_, r)| layout::lane_capacity(*r, len))
            .unwrap_or(1)
            .max(1);
        scroll_into_view(app.cursors.lane_mut(lane), len, cap);
    }
    let n = app.actors().len();
    if n == 0 {
        app.cursors.actors = Default::default();
        return;
    }
    let actor = app.cursors.actors.actor.min(n - 1);
    let ev = app.actors()[actor].evidence.len();
    let mut evidence = app.cursors.actors.evidence;
    if evidence.is_some_and(|e| e >= ev) {
        evidence = ev.checked_sub(1);
    }
    app.cursors.actors.actor = actor;
    app.cursors.actors.evidence = evidence;
    let rows = app.actor_rows();
    let row = rows
        .iter()
        .position(|r| *r == (actor, evidence))
        .unwrap_or(0);
    let cap = l.actors.map(layout::actor_capacity).unwrap_or(1).max(1);
    let mut c = ListCursor {
        selected: row,
        offset: app.cursors.actors.offset,
    };
    scroll_into_view(&mut c, rows.len(), cap);
    app.cursors.actors.offset = c.offset;
}

fn scroll_into_view(c: &mut ListCursor, len: usize, cap: usize) {
    if len == 0 {
        *c = ListCursor::default();
        return;
    }
    c.selected = c.selected.min(len - 1);
    if c.selected < c.offset {
        c.offset = c.selected;
    }
    if c.selected >= c.offset + cap {
        c.offset = c.selected + 1 - cap;
    }
    c.offset = c.offset.min(len.saturating_sub(cap));
}

/// Re-enter `update` for a derived action (mouse wheel → up/down) without fixing scroll twice.
pub(crate) fn update_inner(app: &mut App, action: Action, fx: &mut Vec<Effect>) {
    if app.overlay.is_some() {
        forms::overlay_action(app, action, fx);
    } else {
        match app.views.last() {
            Some(View::Dispatch(_)) => dispatch::view_action(app, action, fx),
            Some(View::Outbox(_)) => outbox::view_action(app, action, fx),
            Some(View::Activity(_)) => activity::view_action(app, action, fx),
            Some(_) => views::view_action(app, action, fx),
            None => main_action(app, action, fx),
        }
    }
}
