//! Popups: the help overlay, the filter form, the confirmation dialog (the only road to a write:
//! `ConfirmAction` becomes `ConfirmedAction` on an explicit yes), the copy menu and the one-line
//! prompt.

use knowledge::contract::{Mode, OutcomeFilter};
use knowledge::text::sanitize::one_line;

use super::{copy, edit_line, parse_when, research, step, Effect};
use crate::tui::action::Action;
use crate::tui::state::{
    text_field, App, ConfirmedAction, FilterField, FilterForm, FilterSet, Level, Overlay,
    PromptPurpose, View,
};

pub fn open_filters(app: &mut App) {
    let f = &app.filters;
    let mut known: Vec<String> = app
        .episodes()
        .iter()
        .filter_map(|e| e.session.cwd.clone())
        .collect();
    known.sort();
    known.dedup();
    app.overlay = Some(Overlay::Filters(Box::new(FilterForm {
        field: 0,
        workspaces: text_field(
            &f.workspaces.join(", "),
            "any workspace (comma-separated roots)",
        ),
        since: text_field(&f.since, "2026-09-01, 7d, 12h …"),
        until: text_field(&f.until, "now"),
        outcome: f.outcome,
        include: f.include,
        mode: f.mode,
        limit: f.limit,
        error: None,
        known_workspaces: known,
    })));
}

pub fn overlay_action(app: &mut App, action: Action, fx: &mut Vec<Effect>) {
    let Some(overlay) = app.overlay.as_mut() else {
        return;
    };
    match overlay {
        Overlay::Help { scroll } => match action {
            Action::Back => app.overlay = None,
            a => {
                super::scroll_text(scroll, &a, 10);
            }
        },
        Overlay::Copy(_) => match action {
            Action::Back | Action::Cancel => app.overlay = None,
            a if a.is_copy() => copy::copy_direct(app, &a, fx),
            _ => {}
        },
        Overlay::Confirm(d) => match action {
            Action::Confirm => {
                if let Some(Overlay::Confirm(d)) = app.overlay.take() {
                    confirmed(app, d.action.confirm(), fx);
                }
            }
            Action::Cancel | Action::Back => {
                app.overlay = None;
                app.say(Level::Info, "cancelled: nothing was written");
            }
            Action::Up => d.scroll = d.scroll.saturating_sub(1),
            Action::Down => d.scroll += 1,
            Action::PageUp => d.scroll = d.scroll.saturating_sub(10),
            Action::PageDown => d.scroll += 10,
            _ => {}
        },
        Overlay::Prompt(p) => match action {
            Action::Back => app.overlay = None,
            Action::Input(i) => {
                edit_line(&mut p.input, i);
            }
            Action::Paste(t) => {
                p.input.insert_str(one_line(&t));
            }
            Action::Apply => {
                let text = one_line(&p.input.lines().join(" "));
                let purpose = p.purpose.clone();
                if text.is_empty() {
                    app.say(Level::Warn, "a reason is required");
                    return;
                }
                app.overlay = None;
                match purpose {
                    PromptPurpose::RejectReason { id } => {
                        super::outbox::confirm_reject(app, id, text)
                    }
                }
            }
            _ => {}
        },
        Overlay::Filters(_) => filters_action(app, action, fx),
    }
}

/// The yes of a confirmation dialog: the one place a write is requested.
fn confirmed(app: &mut App, what: ConfirmedAction, fx: &mut Vec<Effect>) {
    match what {
        ConfirmedAction::CommitDispatch(draft) => {
            let job = app.new_job();
            if let Some(View::Dispatch(d)) = app.views.last_mut() {
                d.job = job;
                d.loading = true;
            }
            app.say(Level::Info, "committing…");
            fx.push(Effect::Dispatch {
                job,
                draft,
                commit: true,
            });
        }
        ConfirmedAction::Approve { id } => {
            app.say(Level::Info, format!("approving {id}…"));
            fx.push(Effect::OutboxDecide {
                id,
                approve: true,
                reason: None,
            });
        }
        ConfirmedAction::Reject { id, reason } => {
            app.say(Level::Info, format!("rejecting {id}…"));
            fx.push(Effect::OutboxDecide {
                id,
                approve: false,
                reason: Some(reason),
            });
        }
    }
}

fn filters_action(app: &mut App, action: Action, fx: &mut Vec<Effect>) {
    let now = app.now_ms;
    let Some(Overlay::Filters(f)) = app.overlay.as_mut() else {
        return;
    };
    let n = FilterField::ALL.len();
    let cur = f.current();
    match action {
        Action::Back | Action::Cancel => app.overlay = None,
        Action::NextField => f.field = (f.field + 1) % n,
        Action::PrevField => f.field = (f.field + n - 1) % n,
        Action::Input(i) => {
            if let Some(t) = text_of(f, cur) {
                edit_line(t, i);
                f.error = None;
            }
        }
        Action::Paste(s) => {
            if let Some(t) = text_of(f, cur) {
                t.insert_str(one_line(&s));
            }
        }
        Action::Increase | Action::Toggle => change(f, cur, 1),
        Action::Decrease => change(f, cur, -1),
        Action::ResetFilters => {
            let d = FilterSet::default();
            f.workspaces = text_field("", "any workspace (comma-separated roots)");
            f.since = text_field("", "2026-09-01, 7d, 12h …");
            f.until = text_field("", "now");
            f.outcome = d.outcome;
            f.include = d.include;
            f.mode = d.mode;
            f.limit = d.limit;
            f.error = None;
        }
        Action::Apply => match form_filters(f, now) {
            Ok(set) => {
                app.overlay = None;
                let changed = set != app.filters;
                app.filters = set;
                if changed {
                    research(app, fx);
                }
            }
            Err(e) => f.error = Some(e),
        },
        _ => {}
    }
}

fn text_of(
    f: &mut FilterForm,
    field: FilterField,
) -> Option<&mut ratatui_textarea::TextArea<'static>> {
    match field {
        FilterField::Workspaces => Some(&mut f.workspaces),
        FilterField::Since => Some(&mut f.since),
        FilterField::Until => Some(&mut f.until),
        _ => None,
    }
}

fn change(f: &mut FilterForm, field: FilterField, d: i64) {
    match field {
        FilterField::Outcome => {
            let all = [
                OutcomeFilter::Any,
                OutcomeFilter::Success,
                OutcomeFilter::Failure,
            ];
            let i = all.iter().position(|o| *o == f.outcome).unwrap_or(0) as i64;
            f.outcome = all[(i + d).rem_euclid(3) as usize];
        }
        FilterField::Lane(l) => {
            let i = l as usize;
            f.include[i] = !f.include[i];
        }
        FilterField::Mode => {
            let i = Mode::ALL.iter().position(|m| *m == f.mode).unwrap_or(0) as i64;
            f.mode = Mode::ALL[(i + d).rem_euclid(Mode::ALL.len() as i64) as usize];
        }
        FilterField::Limit => f.limit = step(f.limit as usize - 1, d, 50) as u32 + 1,
        _ => {}
    }
}

/// The form's values as filters, or what is wrong with them.
pub fn form_filters(f: &FilterForm, now_ms: i64) -> Result<FilterSet, String> {
    let text = |t: &ratatui_textarea::TextArea<'static>| one_line(&t.lines().join(" "));
    let workspaces: Vec<String> = text(&f.workspaces)
        .split(',')
        .map(|w| w.trim().to_string())
        .filter(|w| !w.is_empty())
        .collect();
    let since = text(&f.since);
    let until = text(&f.until);
    let s = parse_when(&since, now_ms, false).map_err(|e| format!("since: {e}"))?;
    let u = parse_when(&until, now_ms, true).map_err(|e| format!("until: {e}"))?;
    if let (Some(s), Some(u)) = (s, u) {
        if s > u {
            return Err("until is earlier than since".to_string());
        }
    }
    if !f.include.iter().any(|x| *x) {
        return Err("include at least one lane".to_string());
    }
    Ok(FilterSet {
        mode: f.mode,
        workspaces,
        since,
        until,
        outcome: f.outcome,
        include: f.include,
        limit: f.limit.clamp(1, 50),
        // The actor filter comes from the activity view; editing the filters drops it.
        actors: Vec::new(),
    })
}
