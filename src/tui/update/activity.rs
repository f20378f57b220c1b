//! The activity view: open it (`a`), change the period (`p`), move between days (`h`/`l`) and
//! within the lists (`j`/`k`), and Enter on a selection runs the matching search — the day's
//! time range, the actor (with its workspace) or the workspace as filters, the skill or the
//! actor's title as the query when the query box is empty — so the view leads to the evidence.

use chrono::{DateTime, FixedOffset};
use knowledge::contract::request::normalize_root;
use knowledge::engine::activity::{ActivityReport, ActivityRequest, Period};

use super::{parse_when, research, Effect};
use crate::tui::action::Action;
use crate::tui::state::{
    text_field, ActivityPane, ActivityPeriod, ActivityView, App, Focus, Level, View,
    QUERY_PLACEHOLDER,
};

/// Rows kept per list in the view.
const TOP: usize = 30;

pub fn open(app: &mut App, fx: &mut Vec<Effect>) {
    if let Some(View::Activity(_)) = app.views.last() {
        return;
    }
    let job = app.new_job();
    app.views.push(View::Activity(Box::new(ActivityView::new(
        job,
        ActivityPeriod::Days(30),
    ))));
    load(app, fx);
}

/// The request for the view's period and the search filters (workspaces, outcome).
pub fn request(app: &App, period: ActivityPeriod) -> Result<ActivityRequest, String> {
    let mut req = ActivityRequest::last_days(30, app.now_ms, app.utc_offset_s);
    req.top = TOP;
    req.period = match period {
        ActivityPeriod::Days(n) => Period::LastDays(n),
        ActivityPeriod::Filters => {
            let since = parse_when(&app.filters.since, app.now_ms, false)?;
            let until = parse_when(&app.filters.until, app.now_ms, true)?;
            Period::Range {
                since_ms: since.map(|t| t.timestamp_millis()),
                until_ms: until.map(|t| t.timestamp_millis()),
            }
        }
    };
    req.workspaces = app
        .filters
        .workspaces
        .iter()
        .map(|w| normalize_root(w))
        .collect();
    req.outcome = app.filters.outcome.wanted();
    Ok(req)
}

fn load(app: &mut App, fx: &mut Vec<Effect>) {
    let job = app.new_job();
    let Some(View::Activity(v)) = app.views.last() else {
        return;
    };
    match request(app, v.period) {
        Ok(request) => {
            if let Some(View::Activity(v)) = app.views.last_mut() {
                v.job = job;
                v.loading = true;
                v.error = None;
            }
            fx.push(Effect::LoadActivity { job, request });
        }
        Err(e) => {
            if let Some(View::Activity(v)) = app.views.last_mut() {
                v.loading = false;
                v.error = Some(format!("filters: {e}"));
            }
        }
    }
}

pub fn loaded(app: &mut App, job: u64, res: Result<Box<ActivityReport>, String>) {
    let Some(v) = app.views.iter_mut().rev().find_map(|v| match v {
        View::Activity(a) if a.job == job => Some(a),
        _ => None,
    }) else {
        return; // a late answer for a closed view or an older period
    };
    v.loading = false;
    match res {
        Ok(r) => {
            // A fresh period starts on its last day; a reload keeps the selections in range.
            v.day = if v.report.is_none() {
                r.days.len().saturating_sub(1)
            } else {
                v.day.min(r.days.len().saturating_sub(1))
            };
            v.actor = v.actor.min(r.actors.len().saturating_sub(1));
            v.workspace = v.workspace.min(r.workspaces.len().saturating_sub(1));
            v.skill = v.skill.min(r.skills.len().saturating_sub(1));
            v.error = None;
            v.report = Some(r);
        }
        Err(e) => v.error = Some(e),
    }
}

pub fn view_action(app: &mut App, action: Action, fx: &mut Vec<Effect>) {
    let Some(View::Activity(v)) = app.views.last_mut() else {
        return;
    };
    let step = |v: &mut ActivityView, by: i64| {
        let len = v.pane_len();
        let c = v.cursor_mut();
        *c = (*c as i64 + by).clamp(0, len.saturating_sub(1) as i64) as usize;
    };
    match action {
        Action::Back => {
            app.views.pop();
        }
        Action::CyclePeriod => {
            v.period = v.period.next();
            v.report = None;
            load(app, fx);
        }
        Action::Refresh => load(app, fx),
        Action::Decrease | Action::Increase => {
            let len = v.report.as_ref().map_or(0, |r| r.days.len());
            let by: i64 = if matches!(action, Action::Increase) {
                1
            } else {
                -1
            };
            v.day = (v.day as i64 + by).clamp(0, len.saturating_sub(1) as i64) as usize;
        }
        Action::Up => step(v, -1),
        Action::Down => step(v, 1),
        Action::Top => step(v, i64::MIN / 2),
        Action::Bottom => step(v, i64::MAX / 2),
        Action::NextPane | Action::PrevPane => {
            let all = ActivityPane::ALL;
            let i = all.iter().position(|p| *p == v.pane).unwrap_or(0);
            let by = if matches!(action, Action::NextPane) {
                1
            } else {
                all.len() - 1
            };
            v.pane = all[(i + by) % all.len()];
        }
        Action::Open => search_selection(app, fx),
        Action::OpenFilters => super::forms::open_filters(app),
        _ => {}
    }
}

/// `ms` as RFC 3339 in local time (`2026-10-21T00:00:00+03:00`), as the filter popup shows it.
fn local_time(ms: i64, offset_s: i32) -> String {
    let tz = FixedOffset::east_opt(offset_s).unwrap_or(FixedOffset::east_opt(0).expect("UTC"));
    DateTime::from_timestamp_millis(ms)
        .map(|t| {
            t.with_timezone(&tz)
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        })
        .unwrap_or_default()
}

/// Set the filters of the selection, leave the view and search (or ask for a question when
/// the query box is empty and the selection has no words of its own).
fn search_selection(app: &mut App, fx: &mut Vec<Effect>) {
    let Some(View::Activity(v)) = app.views.last() else {
        return;
    };
    let Some(r) = v.report.as_deref() else {
        return;
    };
    let period = (
        r.days.first().map_or(0, |d| d.since_ms),
        r.days.last().map_or(0, |d| d.until_ms),
    );
    let (mut range, mut workspaces, mut actors, mut words) =
        (period, None::<Vec<String>>, Vec::new(), None::<String>);
    let what = match v.pane {
        ActivityPane::Days => {
            let Some(d) = r.days.get(v.day) else { return };
            range = (d.since_ms, d.until_ms);
            d.day.clone()
        }
        ActivityPane::Actors => {
            let Some(a) = r.actors.get(v.actor) else {
                return;
            };
            actors.push(a.actor_id.clone());
            workspaces = a.workspace.clone().map(|w| vec![w]);
            words = a.title.clone();
            a.label.clone()
        }
        ActivityPane::Workspaces => {
            let Some(w) = r.workspaces.get(v.workspace) else {
                return;
            };
            if !w.workspace.starts_with('(') {
                workspaces = Some(vec![w.workspace.clone()]);
            }
            w.workspace.clone()
        }
        ActivityPane::Skills => {
            let Some(s) = r.skills.get(v.skill) else {
                return;
            };
            words = Some(s.skill.clone());
            s.skill.clone()
        }
    };
    let off = app.utc_offset_s;
    app.filters.since = local_time(range.0, off);
    app.filters.until = local_time(range.1 - 1000, off);
    app.filters.actors = actors;
    if let Some(w) = workspaces {
        app.filters.workspaces = w;
    }
    app.views.pop();
    if app.query_text().trim().is_empty() {
        if let Some(w) = words {
            app.query = text_field(&w, QUERY_PLACEHOLDER);
        }
    }
    let what = app
        .paths
        .show_in_text(&knowledge::text::sanitize::one_line(&what));
    if app.query_text().trim().is_empty() {
        app.focus = Focus::Query;
        app.say(
            Level::Info,
            format!("filters set to {what}: type a question to search it"),
        );
        return;
    }
    app.say(Level::Info, format!("searching {what}"));
    research(app, fx);
}
