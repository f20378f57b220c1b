//! The outbox view: review every package, open one in full, approve or reject it behind the
//! same confirmation as a commit. A file that is not a package is listed with why and cannot
//! be decided on.

use knowledge::engine::outbox::OutboxEntry;
use knowledge::text::sanitize::{for_terminal, one_line};

use super::{copy, scroll_text, step, Effect};
use crate::tui::action::{Action, OutboxListing, OutboxPackage};
use crate::tui::state::{
    App, ConfirmAction, ConfirmDialog, Level, OutboxDetail, OutboxRow, OutboxView, Overlay, Prompt,
    PromptPurpose, View,
};
use crate::tui::ui::layout;

pub fn open(app: &mut App, fx: &mut Vec<Effect>) {
    if let Some(View::Outbox(_)) = app.views.last() {
        return;
    }
    app.views.push(View::Outbox(OutboxView {
        loading: true,
        ..Default::default()
    }));
    fx.push(Effect::OutboxList);
}

/// A package as a row of the list.
fn package_row(e: &OutboxEntry) -> OutboxRow {
    OutboxRow {
        id: one_line(&e.assignment_id),
        status: e.status.to_string(),
        created_at: one_line(&e.created_at),
        target: one_line(&e.actor_name),
        task: one_line(&e.task),
        path: one_line(&e.path),
        unreadable: None,
    }
}

/// A file that could not be read as a package, as a row saying why.
fn unreadable_row(why: &str) -> OutboxRow {
    OutboxRow {
        id: String::new(),
        status: "unreadable".to_string(),
        created_at: String::new(),
        target: String::new(),
        task: String::new(),
        path: String::new(),
        unreadable: Some(why.to_string()),
    }
}

/// The rows of a listing: packages newest first, then the unreadable files.
pub fn rows(listing: &OutboxListing) -> Vec<OutboxRow> {
    let mut rows: Vec<OutboxRow> = listing.packages.iter().map(package_row).collect();
    rows.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(a.id.cmp(&b.id)));
    rows.extend(listing.unreadable.iter().map(|why| unreadable_row(why)));
    rows
}

fn view_mut(app: &mut App) -> Option<&mut OutboxView> {
    app.views.iter_mut().rev().find_map(|v| match v {
        View::Outbox(o) => Some(o),
        _ => None,
    })
}

pub fn listed(app: &mut App, res: Result<OutboxListing, String>) {
    let Some(o) = view_mut(app) else {
        return;
    };
    o.loading = false;
    match res {
        Ok(listing) => {
            o.entries = rows(&listing);
            o.error = None;
            o.cursor.selected = o.cursor.selected.min(o.entries.len().saturating_sub(1));
        }
        Err(e) => o.error = Some(e),
    }
}

pub fn shown(app: &mut App, id: String, res: Result<Box<OutboxPackage>, String>) {
    let Some(d) = view_mut(app)
        .and_then(|o| o.detail.as_mut())
        .filter(|d| d.id == id)
    else {
        return;
    };
    d.loading = false;
    match res {
        Ok(pkg) => d.doc = Some(pkg),
        Err(e) => d.error = Some(e),
    }
}

pub fn decided(app: &mut App, id: String, res: Result<String, String>, fx: &mut Vec<Effect>) {
    match res {
        Ok(status) => app.say(Level::Info, format!("{id}: {status}")),
        Err(e) => app.say(Level::Error, format!("{id}: {e}")),
    }
    if let Some(View::Outbox(o)) = app.views.last_mut() {
        o.loading = true;
        fx.push(Effect::OutboxList);
        if let Some(d) = o.detail.as_mut().filter(|d| d.id == id) {
            d.loading = true;
            fx.push(Effect::OutboxShow(id));
        }
    }
}

/// After the reason prompt: confirm the rejection.
pub fn confirm_reject(app: &mut App, id: String, reason: String) {
    let path = selected_path(app, &id);
    app.overlay = Some(Overlay::Confirm(ConfirmDialog {
        action: ConfirmAction::Reject {
            id: id.clone(),
            reason: reason.clone(),
        },
        title: "Reject this package?".to_string(),
        summary: vec![
            ("package".into(), id.clone()),
            (
                "writes".into(),
                format!("review.status = rejected, with the reason, to {path}"),
            ),
            ("reason".into(), reason.clone()),
            ("executes".into(), "nothing".into()),
        ],
        body: String::new(),
        scroll: 0,
    }));
}

fn selected_path(app: &App, id: &str) -> String {
    match app.views.last() {
        Some(View::Outbox(o)) => o
            .entries
            .iter()
            .find(|r| r.id == id)
            .map(|r| app.paths.show(&r.path))
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| "its outbox file".to_string()),
        _ => "its outbox file".to_string(),
    }
}

/// Keys in the outbox: the open package's, else the list's.
pub fn view_action(app: &mut App, action: Action, fx: &mut Vec<Effect>) {
    let rows = layout::view_rows(app).max(1);
    let Some(View::Outbox(o)) = app.views.last_mut() else {
        return;
    };
    if o.detail.is_some() {
        detail_action(app, action, fx, rows);
    } else {
        list_action(app, action, fx, rows);
        keep_selection_visible(app, rows);
    }
}

fn detail_action(app: &mut App, action: Action, fx: &mut Vec<Effect>, rows: usize) {
    let Some(View::Outbox(o)) = app.views.last_mut() else {
        return;
    };
    let Some(d) = o.detail.as_mut() else {
        return;
    };
    match action {
        Action::Back => o.detail = None,
        Action::Refresh if !d.id.is_empty() => {
            d.loading = true;
            fx.push(Effect::OutboxShow(d.id.clone()));
        }
        Action::Approve | Action::Reject => {
            let id = d.id.clone();
            decide(app, id, matches!(action, Action::Approve));
        }
        Action::CopyMenu => copy::open_menu(app),
        Action::CopyId | Action::CopyHandoff | Action::CopyLocator => {
            copy::copy_direct(app, &action, fx)
        }
        a => {
            scroll_text(&mut d.scroll, &a, rows);
        }
    }
}

fn list_action(app: &mut App, action: Action, fx: &mut Vec<Effect>, rows: usize) {
    let Some(View::Outbox(o)) = app.views.last_mut() else {
        return;
    };
    let len = o.entries.len();
    let selected = o.entries.get(o.cursor.selected).cloned();
    let c = &mut o.cursor;
    match action {
        Action::Back => {
            app.views.pop();
        }
        Action::Up => c.selected = step(c.selected, -1, len),
        Action::Down => c.selected = step(c.selected, 1, len),
        Action::PageUp => c.selected = step(c.selected, -(rows as i64), len),
        Action::PageDown => c.selected = step(c.selected, rows as i64, len),
        Action::Top => c.selected = 0,
        Action::Bottom => c.selected = len.saturating_sub(1),
        Action::Refresh => {
            o.loading = true;
            fx.push(Effect::OutboxList);
        }
        Action::Open => {
            if let Some(r) = selected {
                let load = r.unreadable.is_none();
                o.detail = Some(OutboxDetail {
                    id: r.id.clone(),
                    loading: load,
                    error: r.unreadable,
                    doc: None,
                    scroll: 0,
                });
                if load {
                    fx.push(Effect::OutboxShow(r.id));
                }
            }
        }
        Action::Approve | Action::Reject => {
            if let Some(r) = selected {
                decide(app, r.id, matches!(action, Action::Approve));
            }
        }
        Action::CopyMenu => copy::open_menu(app),
        Action::CopyId | Action::CopyHandoff | Action::CopyLocator => {
            copy::copy_direct(app, &action, fx)
        }
        _ => {}
    }
}

/// The selection inside the list and the list scrolled to it.
fn keep_selection_visible(app: &mut App, rows: usize) {
    if let Some(View::Outbox(o)) = app.views.last_mut() {
        let len = o.entries.len();
        if len > 0 {
            o.cursor.selected = o.cursor.selected.min(len - 1);
            if o.cursor.selected < o.cursor.offset {
                o.cursor.offset = o.cursor.selected;
            }
            if o.cursor.selected >= o.cursor.offset + rows {
                o.cursor.offset = o.cursor.selected + 1 - rows;
            }
        }
    }
}

/// Approve (straight to the confirmation) or reject (a reason first); a file that is not a
/// package cannot be decided on.
fn decide(app: &mut App, id: String, approve: bool) {
    if id.is_empty() {
        app.say(
            Level::Error,
            "this file is not a readable handoff package: fix or remove it first",
        );
        return;
    }
    if !approve {
        app.overlay = Some(Overlay::Prompt(Box::new(Prompt {
            title: format!("Why reject {id}?"),
            input: crate::tui::state::text_field("", "the reason, for the record"),
            purpose: PromptPurpose::RejectReason { id },
        })));
        return;
    }
    let path = selected_path(app, &id);
    let body = match app.views.last() {
        Some(View::Outbox(o)) => o
            .detail
            .as_ref()
            .and_then(|d| d.doc.as_ref())
            .map(|pkg| copy::pretty(&pkg.handoff))
            .unwrap_or_default(),
        _ => String::new(),
    };
    app.overlay = Some(Overlay::Confirm(ConfirmDialog {
        action: ConfirmAction::Approve { id: id.clone() },
        title: "Approve this package?".to_string(),
        summary: vec![
            ("package".into(), id.clone()),
            (
                "writes".into(),
                format!("review.status = approved to {path}"),
            ),
            (
                "executes".into(),
                "nothing: the lead agent runs an approved package".into(),
            ),
        ],
        body: for_terminal(&body),
        scroll: 0,
    }));
}
