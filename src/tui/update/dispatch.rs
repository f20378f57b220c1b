//! The dispatch pane (prepare a task for an actor, preview the dry run's context pack and
//! handoff package, commit behind a confirmation) and the outbox view (review every package,
//! approve or reject behind the same confirmation). Nothing here executes anything: the writes
//! are an assignment row and an outbox file, and only after an explicit yes.

use serde_json::Value;

use super::{copy, step, Effect};
use crate::tui::action::Action;
use crate::tui::state::{
    text_block, App, ConfirmAction, ConfirmDialog, DispatchField, DispatchView, Focus, Level,
    OutboxDetail, OutboxRow, OutboxView, Overlay, Prompt, PromptPurpose, View,
};
use crate::tui::ui::layout;

/// `d` (for the selected actor, when the actor panel has the focus) or `D` (target auto).
pub fn open(app: &mut App, fx: &mut Vec<Effect>, auto: bool) {
    let chosen = app
        .selected_actor()
        .map(|a| (a.actor_id.clone(), crate::tui::ui::actors::display_name(a)));
    let use_actor = !auto && chosen.is_some() && app.focus == Focus::Actors;
    let query = app.query_text().trim().to_string();
    let task = if query.is_empty() {
        app.search.shown_query.clone()
    } else {
        query
    };
    let mut view = DispatchView {
        chosen,
        use_actor,
        task: text_block(&[task], "what should be done"),
        acceptance: text_block(&[], "one acceptance criterion per line"),
        constraints: text_block(&[], "one constraint per line"),
        field: DispatchField::Task,
        job: 0,
        loading: false,
        error: None,
        preview: None,
        dirty: false,
        confirm_after_preview: false,
        scroll: 0,
    };
    request_preview(app, &mut view, fx);
    app.views.push(View::Dispatch(Box::new(view)));
}

fn request_preview(app: &mut App, v: &mut DispatchView, fx: &mut Vec<Effect>) {
    let draft = v.draft();
    if draft.text.is_empty() {
        v.error = Some("the task is empty: describe what should be done".to_string());
        return;
    }
    v.job = app.new_job();
    v.loading = true;
    v.error = None;
    v.dirty = false;
    fx.push(Effect::Dispatch {
        job: v.job,
        draft,
        commit: false,
    });
}

pub fn open_outbox(app: &mut App, fx: &mut Vec<Effect>) {
    if let Some(View::Outbox(_)) = app.views.last() {
        return;
    }
    app.views.push(View::Outbox(OutboxView {
        loading: true,
        ..Default::default()
    }));
    fx.push(Effect::OutboxList);
}

/// Keys in the dispatch pane and the outbox.
pub fn view_action(app: &mut App, action: Action, fx: &mut Vec<Effect>) {
    match app.views.last() {
        Some(View::Dispatch(_)) => dispatch_action(app, action, fx),
        Some(View::Outbox(_)) => outbox_action(app, action, fx),
        _ => {}
    }
}

fn dispatch_action(app: &mut App, action: Action, fx: &mut Vec<Effect>) {
    let rows = layout::view_rows(app).max(1);
    let Some(View::Dispatch(mut v)) = app.views.pop() else {
        return;
    };
    let n = DispatchField::ALL.len();
    let at = DispatchField::ALL
        .iter()
        .position(|f| *f == v.field)
        .unwrap_or(0);
    match action {
        Action::Back => return, // the pane is closed (popped)
        Action::Outbox => {
            app.views.push(View::Dispatch(v));
            open_outbox(app, fx);
            return;
        }
        Action::NextField => v.field = DispatchField::ALL[(at + 1) % n],
        Action::PrevField => v.field = DispatchField::ALL[(at + n - 1) % n],
        Action::Input(i) => {
            let t = match v.field {
                DispatchField::Task => Some(&mut v.task),
                DispatchField::Acceptance => Some(&mut v.acceptance),
                DispatchField::Constraints => Some(&mut v.constraints),
                DispatchField::Preview => None,
            };
            if let Some(t) = t {
                if t.input(i) {
                    v.dirty = true;
                }
            }
        }
        Action::Paste(s) => {
            let clean = knowledge::text::sanitize::for_terminal(&s);
            let t = match v.field {
                DispatchField::Task => Some(&mut v.task),
                DispatchField::Acceptance => Some(&mut v.acceptance),
                DispatchField::Constraints => Some(&mut v.constraints),
                DispatchField::Preview => None,
            };
            if let Some(t) = t {
                t.insert_str(clean);
                v.dirty = true;
            }
        }
        Action::ToggleTarget => {
            if v.chosen.is_some() {
                v.use_actor = !v.use_actor;
                request_preview(app, &mut v, fx);
            } else {
                app.say(Level::Info, "no actor selected: the target stays auto");
            }
        }
        Action::Preview | Action::Refresh => request_preview(app, &mut v, fx),
        Action::Commit => {
            if v.loading || v.dirty || v.preview.is_none() {
                v.confirm_after_preview = true;
                if !v.loading {
                    request_preview(app, &mut v, fx);
                }
                if v.error.is_none() {
                    app.say(Level::Info, "previewing the edited task before the commit…");
                }
            } else {
                open_commit_confirm(app, &v);
            }
        }
        Action::Up => v.scroll = v.scroll.saturating_sub(1),
        Action::Down => v.scroll += 1,
        Action::PageUp => v.scroll = v.scroll.saturating_sub(rows),
        Action::PageDown => v.scroll += rows,
        Action::Top => v.scroll = 0,
        Action::Bottom => v.scroll = usize::MAX / 4,
        Action::CopyMenu
        | Action::CopyContextPack
        | Action::CopyHandoff
        | Action::CopyId
        | Action::CopyLocator
        | Action::CopySnippet
        | Action::CopyResume => {
            app.views.push(View::Dispatch(v));
            if matches!(action, Action::CopyMenu) {
                copy::open_menu(app);
            } else {
                copy::copy_direct(app, &action, fx);
            }
            return;
        }
        _ => {}
    }
    app.views.push(View::Dispatch(v));
}

/// The confirmation for a commit: exactly what will be written, from the fresh dry run.
fn open_commit_confirm(app: &mut App, v: &DispatchView) {
    let Some(p) = &v.preview else {
        return;
    };
    if let Some(errs) = p
        .get("errors")
        .and_then(Value::as_array)
        .filter(|e| !e.is_empty())
    {
        let msg = errs
            .first()
            .and_then(|e| e.get("message"))
            .and_then(Value::as_str)
            .unwrap_or("the dry run failed");
        app.say(Level::Error, format!("cannot commit: {msg}"));
        return;
    }
    let s = |ptr: &str| {
        p.pointer(ptr)
            .and_then(Value::as_str)
            .map(knowledge::text::sanitize::one_line)
    };
    let assignment = s("/handoff/assignment_id").unwrap_or_else(|| "assign:…".to_string());
    let file = knowledge::engine::outbox::file_name(&assignment);
    let outbox = format!("{}/outbox/{file}", app.data_dir.trim_end_matches('/'));
    let target = match (s("/target/name"), s("/target/actor_id")) {
        (Some(n), Some(id)) => format!("{n} ({id})"),
        _ => "auto".to_string(),
    };
    let mode = s("/target/dispatch/mode").unwrap_or_else(|| "none".into());
    let available = p
        .pointer("/target/dispatch/available")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let here = if available {
        "available here"
    } else {
        "not available here"
    };
    let summary = [
        ("target", target),
        ("dispatch", format!("{mode} ({here})")),
        (
            "records",
            format!(
                "assignment {assignment} (status recorded_plan) in {}/knowledge.sqlite",
                app.data_dir.trim_end_matches('/')
            ),
        ),
        ("writes", format!("the handoff package below, to {outbox}")),
        (
            "executes",
            "nothing: execution stays not_executed until the lead runs it".to_string(),
        ),
    ];
    let body = p
        .get("handoff")
        .filter(|h| !h.is_null())
        .or_else(|| p.get("context_pack"))
        .map(|h| serde_json::to_string_pretty(h).unwrap_or_default())
        .unwrap_or_default();
    app.overlay = Some(Overlay::Confirm(ConfirmDialog {
        action: ConfirmAction::CommitDispatch(v.draft()),
        title: "Commit this dispatch?".to_string(),
        summary: summary
            .into_iter()
            .map(|(k, v)| (k.to_string(), app.paths.show_in_text(&v)))
            .collect(),
        body: knowledge::text::sanitize::for_terminal(&body),
        scroll: 0,
    }));
}

/// A dispatch answered (dry run or commit).
pub fn done(
    app: &mut App,
    job: u64,
    commit: bool,
    res: Result<Value, String>,
    fx: &mut Vec<Effect>,
) {
    let mut open_confirm = false;
    if let Some(View::Dispatch(v)) = app
        .views
        .iter_mut()
        .rev()
        .find(|v| matches!(v, View::Dispatch(d) if d.job == job))
    {
        v.loading = false;
        if !commit {
            match &res {
                Ok(doc) => {
                    v.preview = Some(doc.clone());
                    v.error = None;
                    open_confirm = std::mem::take(&mut v.confirm_after_preview) && !v.dirty;
                }
                Err(e) => {
                    v.error = Some(e.clone());
                    v.confirm_after_preview = false;
                }
            }
        }
    }
    if !commit {
        if open_confirm {
            if let Some(View::Dispatch(v)) = app.views.pop() {
                open_commit_confirm(app, &v);
                app.views.push(View::Dispatch(v));
            }
        }
        return;
    }
    match res {
        Ok(doc) => {
            let s = |ptr: &str| doc.pointer(ptr).and_then(Value::as_str).unwrap_or("");
            let id = s("/assignment/assignment_id");
            let path = app.paths.show(s("/assignment/outbox_path"));
            let created = doc
                .pointer("/assignment/created")
                .and_then(Value::as_bool)
                .unwrap_or(true);
            if let Some(e) = doc
                .get("errors")
                .and_then(Value::as_array)
                .and_then(|a| a.first())
            {
                let m = e.get("message").and_then(Value::as_str).unwrap_or("failed");
                app.say(Level::Error, format!("commit failed: {m}"));
            } else if created {
                app.say(
                    Level::Info,
                    format!("recorded {id}; package written to {path}"),
                );
            } else {
                app.say(Level::Info, format!("already recorded: {id} ({path})"));
            }
            if let Some(View::Outbox(_)) = app.views.last() {
                fx.push(Effect::OutboxList);
            }
        }
        Err(e) => app.say(Level::Error, format!("commit failed: {e}")),
    }
}

/// Pick a string field from the first of several JSON pointers.
fn field(v: &Value, ptrs: &[&str]) -> String {
    ptrs.iter()
        .find_map(|p| v.pointer(p).and_then(Value::as_str))
        .map(knowledge::text::sanitize::one_line)
        .unwrap_or_default()
}

/// An outbox entry as listed, whatever exact shape the engine gives it.
pub fn outbox_row(v: &Value) -> OutboxRow {
    OutboxRow {
        id: field(v, &["/assignment_id", "/id"]),
        status: field(v, &["/status", "/review/status"]),
        created_at: field(v, &["/created_at", "/handoff/created_at"]),
        target: field(
            v,
            &[
                "/actor_name",
                "/target/name",
                "/target",
                "/actor_id",
                "/target/actor_id",
            ],
        ),
        task: field(v, &["/task/text", "/task", "/title"]),
        path: field(v, &["/path", "/outbox_path", "/file"]),
    }
}

pub fn outbox_listed(app: &mut App, res: Result<Vec<Value>, String>) {
    let Some(View::Outbox(o)) = app
        .views
        .iter_mut()
        .rev()
        .find(|v| matches!(v, View::Outbox(_)))
    else {
        return;
    };
    o.loading = false;
    match res {
        Ok(list) => {
            let mut rows: Vec<OutboxRow> = list.iter().map(outbox_row).collect();
            rows.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(a.id.cmp(&b.id)));
            o.entries = rows;
            o.error = None;
            o.cursor.selected = o.cursor.selected.min(o.entries.len().saturating_sub(1));
        }
        Err(e) => o.error = Some(e),
    }
}

pub fn outbox_shown(app: &mut App, id: String, res: Result<Value, String>) {
    if let Some(View::Outbox(o)) = app
        .views
        .iter_mut()
        .rev()
        .find(|v| matches!(v, View::Outbox(_)))
    {
        if let Some(d) = o.detail.as_mut().filter(|d| d.id == id) {
            d.loading = false;
            match res {
                Ok(doc) => d.doc = Some(doc),
                Err(e) => d.error = Some(e),
            }
        }
    }
}

pub fn outbox_decided(
    app: &mut App,
    id: String,
    res: Result<String, String>,
    fx: &mut Vec<Effect>,
) {
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

fn outbox_action(app: &mut App, action: Action, fx: &mut Vec<Effect>) {
    let rows = layout::view_rows(app).max(1);
    let Some(View::Outbox(o)) = app.views.last_mut() else {
        return;
    };
    let len = o.entries.len();
    let selected = o.entries.get(o.cursor.selected).cloned();
    if let Some(d) = o.detail.as_mut() {
        match action {
            Action::Back => o.detail = None,
            Action::Up => d.scroll = d.scroll.saturating_sub(1),
            Action::Down => d.scroll += 1,
            Action::PageUp => d.scroll = d.scroll.saturating_sub(rows),
            Action::PageDown => d.scroll += rows,
            Action::Top => d.scroll = 0,
            Action::Bottom => d.scroll = usize::MAX / 4,
            Action::Refresh => {
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
            _ => {}
        }
        return;
    }
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
                o.detail = Some(OutboxDetail {
                    id: r.id.clone(),
                    loading: true,
                    error: None,
                    doc: None,
                    scroll: 0,
                });
                fx.push(Effect::OutboxShow(r.id));
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

/// Approve (straight to the confirmation) or reject (a reason first).
fn decide(app: &mut App, id: String, approve: bool) {
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
            .map(|d| serde_json::to_string_pretty(d).unwrap_or_default())
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
        body: knowledge::text::sanitize::for_terminal(&body),
        scroll: 0,
    }));
}
