//! The dispatch pane: prepare a task for an actor, preview the dry run's context pack and
//! handoff package, commit behind a confirmation. Nothing here executes anything: the writes
//! are an assignment row and an outbox file, and only after an explicit yes.

use knowledge::contract::dispatch::DispatchResponse;
use knowledge::text::sanitize::{for_terminal, one_line};

use super::{copy, outbox, scroll_text, Effect};
use crate::tui::action::Action;
use crate::tui::state::{
    text_block, App, ConfirmAction, ConfirmDialog, DispatchField, DispatchView, Focus, Level,
    Overlay, View,
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

/// Keys in the dispatch pane.
pub fn view_action(app: &mut App, action: Action, fx: &mut Vec<Effect>) {
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
            outbox::open(app, fx);
            return;
        }
        Action::NextField => v.field = DispatchField::ALL[(at + 1) % n],
        Action::PrevField => v.field = DispatchField::ALL[(at + n - 1) % n],
        Action::Input(i) => {
            if v.focused_editor().is_some_and(|t| t.input(i)) {
                v.dirty = true;
            }
        }
        Action::Paste(s) => {
            if let Some(t) = v.focused_editor() {
                t.insert_str(for_terminal(&s));
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
        Action::Commit => commit(app, &mut v, fx),
        Action::CopyMenu => {
            app.views.push(View::Dispatch(v));
            copy::open_menu(app);
            return;
        }
        a if a.is_copy() => {
            app.views.push(View::Dispatch(v));
            copy::copy_direct(app, &a, fx);
            return;
        }
        a => {
            scroll_text(&mut v.scroll, &a, rows);
        }
    }
    app.views.push(View::Dispatch(v));
}

/// The confirmation from a fresh dry run of the task as it is now; a stale or pending preview
/// is refreshed first and the confirmation opens when it arrives.
fn commit(app: &mut App, v: &mut DispatchView, fx: &mut Vec<Effect>) {
    if v.loading || v.dirty || v.preview.is_none() {
        v.confirm_after_preview = true;
        if !v.loading {
            request_preview(app, v, fx);
        }
        if v.error.is_none() {
            app.say(Level::Info, "previewing the edited task before the commit…");
        }
    } else {
        open_commit_confirm(app, v);
    }
}

/// The confirmation for a commit: exactly what will be written, from the fresh dry run.
fn open_commit_confirm(app: &mut App, v: &DispatchView) {
    let Some(p) = &v.preview else {
        return;
    };
    if let Some(e) = p.errors.first() {
        app.say(Level::Error, format!("cannot commit: {}", e.message));
        return;
    }
    let summary = commit_summary(app, p);
    let body = match &p.handoff {
        Some(h) => copy::pretty(h),
        None => copy::pretty(&p.context_pack),
    };
    app.overlay = Some(Overlay::Confirm(ConfirmDialog {
        action: ConfirmAction::CommitDispatch(v.draft()),
        title: "Commit this dispatch?".to_string(),
        summary: summary
            .into_iter()
            .map(|(k, v)| (k.to_string(), app.paths.show_in_text(&v)))
            .collect(),
        body: for_terminal(&body),
        scroll: 0,
    }));
}

/// What a commit of `p` records, writes and (never) executes.
fn commit_summary(app: &App, p: &DispatchResponse) -> [(&'static str, String); 5] {
    let data_dir = knowledge::config::DataDir::new(app.data_dir.trim_end_matches('/'));
    let assignment = p
        .handoff
        .as_ref()
        .map(|h| one_line(&h.assignment_id))
        .unwrap_or_else(|| "assign:…".to_string());
    let file = knowledge::engine::outbox::file_name(&assignment);
    let (target, mode, available) = match &p.target {
        Some(t) => (
            format!("{} ({})", one_line(&t.name), one_line(&t.actor_id)),
            t.dispatch.mode.to_string(),
            t.dispatch.available,
        ),
        None => ("auto".to_string(), "none".to_string(), false),
    };
    let here = if available {
        "available here"
    } else {
        "not available here"
    };
    [
        ("target", target),
        ("dispatch", format!("{mode} ({here})")),
        (
            "records",
            format!(
                "assignment {assignment} (status recorded_plan) in {}",
                data_dir.knowledge_db().display()
            ),
        ),
        (
            "writes",
            format!(
                "the handoff package below, to {}",
                data_dir.outbox_dir().join(&file).display()
            ),
        ),
        (
            "executes",
            "nothing: execution stays not_executed until the lead runs it".to_string(),
        ),
    ]
}

/// The dispatch pane that asked for job `job`, if it is still open.
fn pane(app: &mut App, job: u64) -> Option<&mut DispatchView> {
    app.views.iter_mut().rev().find_map(|v| match v {
        View::Dispatch(d) if d.job == job => Some(d.as_mut()),
        _ => None,
    })
}

/// A dispatch answered (dry run or commit).
pub fn done(
    app: &mut App,
    job: u64,
    commit: bool,
    res: Result<Box<DispatchResponse>, String>,
    fx: &mut Vec<Effect>,
) {
    if let Some(v) = pane(app, job) {
        v.loading = false;
    }
    if commit {
        commit_done(app, res, fx);
    } else {
        preview_done(app, job, res);
    }
}

/// The dry run of pane `job` arrived: shown, and the confirmation opened if it was asked for.
fn preview_done(app: &mut App, job: u64, res: Result<Box<DispatchResponse>, String>) {
    let Some(v) = pane(app, job) else {
        return;
    };
    let open_confirm = match res {
        Ok(doc) => {
            v.preview = Some(doc);
            v.error = None;
            std::mem::take(&mut v.confirm_after_preview) && !v.dirty
        }
        Err(e) => {
            v.error = Some(e);
            v.confirm_after_preview = false;
            false
        }
    };
    if open_confirm {
        if let Some(View::Dispatch(v)) = app.views.pop() {
            open_commit_confirm(app, &v);
            app.views.push(View::Dispatch(v));
        }
    }
}

/// A commit finished: what was recorded (or that it already was), in the status line.
fn commit_done(app: &mut App, res: Result<Box<DispatchResponse>, String>, fx: &mut Vec<Effect>) {
    let doc = match res {
        Ok(doc) => doc,
        Err(e) => return app.say(Level::Error, format!("commit failed: {e}")),
    };
    let (id, path, created) = match &doc.assignment {
        Some(a) => (a.assignment_id.as_str(), a.outbox_path.as_str(), a.created),
        None => ("", "", true),
    };
    let path = app.paths.show(path);
    if let Some(e) = doc.errors.first() {
        app.say(Level::Error, format!("commit failed: {}", e.message));
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
