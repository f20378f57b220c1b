//! Drill-in: opening the selection (an episode, a code reference, a skill's file), following an
//! actor's evidence link to its lane item, and moving around the episode and code views.

use knowledge::contract::Lane;
use knowledge::engine::Episode;

use super::{copy, step, Effect, EPISODE_CONTEXT};
use crate::tui::action::{Action, CodeText};
use crate::tui::state::{App, CodeView, EpisodeView, Focus, Level, View};
use crate::tui::ui::layout;
use crate::tui::ui::views::{code_text, episode_text};

/// Enter (or `e` with `edit`) on the main screen's selection.
pub fn open_selection(app: &mut App, fx: &mut Vec<Effect>, edit: bool) {
    match app.focus {
        Focus::Query => {}
        Focus::Lane(Lane::Episodes) => {
            let Some(it) = app.episodes().get(app.cursors.episodes.selected) else {
                return;
            };
            if edit {
                app.say(Level::Info, "an episode is not a file: enter opens it");
                return;
            }
            let (sid, seq) = (it.session_id.clone(), it.seq);
            open_episode(app, fx, sid, seq);
        }
        Focus::Lane(Lane::Code) => {
            let Some(it) = app.code().get(app.cursors.code.selected) else {
                return;
            };
            let title = match &it.symbol {
                Some(s) => format!("{}:{} {}", it.path, it.start_line, s),
                None => format!("{}:{}", it.path, it.start_line),
            };
            if edit {
                if let Some(root) = &it.root {
                    // The root makes the path absolute: straight to the editor.
                    let path = format!("{}/{}", root.trim_end_matches('/'), it.path);
                    fx.push(Effect::OpenEditor {
                        path,
                        line: it.start_line.max(1),
                    });
                    return;
                }
            }
            // With its repository root the path is unambiguous.
            let load = match &it.root {
                Some(root) => format!("{}/{}", root.trim_end_matches('/'), it.path),
                None => it.path.clone(),
            };
            let (path, s, e) = (it.path.clone(), it.start_line, it.end_line);
            let chunk = Some(it.chunk_id.clone());
            open_code(app, fx, (path, load), chunk, s, e, title, edit);
        }
        Focus::Lane(Lane::Skills) => {
            let Some(it) = app.skills().get(app.cursors.skills.selected) else {
                return;
            };
            let (path, title) = (it.path.clone(), format!("skill {}", it.name));
            if edit {
                fx.push(Effect::OpenEditor { path, line: 1 });
            } else {
                open_code(app, fx, (path.clone(), path), None, 1, 0, title, false);
            }
        }
        Focus::Actors => {
            let Some(actor) = app.selected_actor() else {
                return;
            };
            let k = app.cursors.actors.evidence.unwrap_or(0);
            let Some(e) = actor.evidence.get(k) else {
                app.say(Level::Info, "this actor has no evidence in the lanes");
                return;
            };
            let (lane, id) = (e.lane, e.id.clone());
            let (n, name) = (actor.evidence.len(), actor.name.clone());
            follow(app, lane, &id, k, n, &name);
        }
    }
}

/// Move the focus to the item `id` of `lane` (an evidence link).
fn follow(app: &mut App, lane: Lane, id: &str, k: usize, n: usize, actor: &str) {
    let pos = match lane {
        Lane::Episodes => app.episodes().iter().position(|x| x.id == id),
        Lane::Code => app.code().iter().position(|x| x.id == id),
        Lane::Skills => app.skills().iter().position(|x| x.id == id),
    };
    let Some(pos) = pos else {
        app.say(
            Level::Warn,
            format!("{id} is not in the {} lane", lane.as_str()),
        );
        return;
    };
    app.cursors.lane_mut(lane).selected = pos;
    app.focus = Focus::Lane(lane);
    app.lane_tab = lane;
    let actor = knowledge::text::sanitize::one_line(actor);
    app.say(
        Level::Info,
        format!("evidence {}/{n} of {actor}: {id}", k + 1),
    );
}

pub fn open_episode(app: &mut App, fx: &mut Vec<Effect>, session_id: String, seq: u64) {
    let job = app.new_job();
    fx.push(Effect::LoadEpisode {
        job,
        session_id: session_id.clone(),
        seq,
        context: EPISODE_CONTEXT,
    });
    app.views.push(View::Episode(EpisodeView {
        job,
        session_id,
        seq,
        context: EPISODE_CONTEXT,
        loading: true,
        error: None,
        episode: None,
        scroll: 0,
        match_row: None,
    }));
}

#[allow(clippy::too_many_arguments)]
fn open_code(
    app: &mut App,
    fx: &mut Vec<Effect>,
    (path, load_path): (String, String),
    chunk_id: Option<String>,
    start_line: u64,
    end_line: u64,
    title: String,
    edit: bool,
) {
    let job = app.new_job();
    fx.push(Effect::LoadCode {
        job,
        path: load_path.clone(),
        chunk_id: chunk_id.clone(),
        start_line,
        end_line,
    });
    app.views.push(View::Code(CodeView {
        job,
        path,
        load_path,
        chunk_id,
        start_line,
        end_line,
        title,
        loading: true,
        error: None,
        text: None,
        scroll: 0,
        match_row: None,
        edit_when_loaded: edit,
    }));
}

pub fn episode_loaded(app: &mut App, job: u64, res: Result<Box<Episode>, String>) {
    let width = layout::view_cols(app);
    let Some(i) = app
        .views
        .iter()
        .position(|v| matches!(v, View::Episode(e) if e.job == job))
    else {
        return; // the view was closed
    };
    if let View::Episode(v) = &mut app.views[i] {
        v.loading = false;
        match res {
            Ok(ep) => {
                v.episode = Some(ep);
                v.error = None;
            }
            Err(e) => v.error = Some(e),
        }
    }
    let rows = layout::view_rows(app);
    if let View::Episode(v) = &app.views[i] {
        let focus = episode_text(app, v, width).focus;
        if let View::Episode(v) = &mut app.views[i] {
            // Keep the session's metadata in sight when the event is near the top.
            v.scroll = if focus < rows * 2 / 3 {
                0
            } else {
                focus.saturating_sub(1)
            };
        }
    }
}

pub fn code_loaded(
    app: &mut App,
    job: u64,
    res: Result<Box<CodeText>, String>,
    fx: &mut Vec<Effect>,
) {
    let rows = layout::view_rows(app);
    let Some(View::Code(v)) = app
        .views
        .iter_mut()
        .find(|v| matches!(v, View::Code(c) if c.job == job))
    else {
        return;
    };
    v.loading = false;
    let mut msg = None;
    match res {
        Ok(t) => {
            let at = v.start_line.saturating_sub(t.first_line) as usize;
            v.scroll = at.saturating_sub(rows / 3);
            if v.edit_when_loaded {
                v.edit_when_loaded = false;
                match &t.abs_path {
                    Some(p) => fx.push(Effect::OpenEditor {
                        path: p.clone(),
                        line: v.start_line.max(1),
                    }),
                    None => msg = Some("the file's location on disk is unknown".to_string()),
                }
            }
            v.text = Some(t);
            v.error = None;
        }
        Err(e) => v.error = Some(e),
    }
    if let Some(m) = msg {
        app.say(Level::Error, m);
    }
}

/// Keys in the episode and code views.
pub fn view_action(app: &mut App, action: Action, fx: &mut Vec<Effect>) {
    let rows = layout::view_rows(app).max(1);
    let width = layout::view_cols(app);
    let (total, matches) = match app.views.last() {
        Some(View::Episode(v)) => {
            let t = episode_text(app, v, width);
            (t.lines.len(), t.matches)
        }
        Some(View::Code(v)) => {
            let t = code_text(app, v, width);
            (t.lines.len(), t.matches)
        }
        _ => return,
    };
    let max_scroll = total.saturating_sub(rows);
    let (mut scroll, mut match_row) = match app.views.last() {
        Some(View::Episode(v)) => (v.scroll, v.match_row),
        Some(View::Code(v)) => (v.scroll, v.match_row),
        _ => return,
    };
    let by = |s: usize, d: i64| step(s, d, max_scroll + 1);
    match action {
        Action::Back => {
            app.views.pop();
            return;
        }
        Action::Up => scroll = by(scroll, -1),
        Action::Down => scroll = by(scroll, 1),
        Action::PageUp => scroll = by(scroll, -(rows as i64)),
        Action::PageDown => scroll = by(scroll, rows as i64),
        Action::Top => scroll = 0,
        Action::Bottom => scroll = max_scroll,
        Action::NextMatch | Action::PrevMatch => {
            let forward = matches!(action, Action::NextMatch);
            let Some(next) = next_match(&matches, match_row, scroll, forward) else {
                app.say(Level::Info, "no match of the query here");
                return;
            };
            match_row = Some(next);
            scroll = next.saturating_sub(rows / 3).min(max_scroll);
            let k = matches.iter().position(|&r| r == next).unwrap_or(0) + 1;
            app.say(Level::Info, format!("match {k}/{}", matches.len()));
        }
        Action::MoreContext | Action::LessContext | Action::Refresh => reload(app, &action, fx),
        Action::OpenEditor => open_editor(app, fx),
        Action::CopyMenu => copy::open_menu(app),
        a if a.is_copy() => copy::copy_direct(app, &a, fx),
        _ => {}
    }
    match app.views.last_mut() {
        Some(View::Episode(v)) => (v.scroll, v.match_row) = (scroll, match_row),
        Some(View::Code(v)) => (v.scroll, v.match_row) = (scroll, match_row),
        _ => {}
    }
}

/// More or less context around an episode, or the view read again.
fn reload(app: &mut App, action: &Action, fx: &mut Vec<Effect>) {
    if let Some(View::Episode(v)) = app.views.last() {
        let context = match action {
            Action::MoreContext => (v.context + 3).min(50),
            Action::LessContext => v.context.saturating_sub(3),
            _ => v.context,
        };
        let (sid, seq) = (v.session_id.clone(), v.seq);
        let job = app.new_job();
        if let Some(View::Episode(v)) = app.views.last_mut() {
            v.context = context;
            v.job = job;
            v.loading = true;
        }
        fx.push(Effect::LoadEpisode {
            job,
            session_id: sid,
            seq,
            context,
        });
    } else if let Some(View::Code(v)) = app.views.last() {
        if matches!(action, Action::Refresh) {
            let (path, s, e) = (v.load_path.clone(), v.start_line, v.end_line);
            let chunk_id = v.chunk_id.clone();
            let job = app.new_job();
            if let Some(View::Code(v)) = app.views.last_mut() {
                v.job = job;
                v.loading = true;
            }
            fx.push(Effect::LoadCode {
                job,
                path,
                chunk_id,
                start_line: s,
                end_line: e,
            });
        }
    }
}

/// `$EDITOR` at the code reference (as soon as the file is located, when it is loading).
fn open_editor(app: &mut App, fx: &mut Vec<Effect>) {
    match app.views.last_mut() {
        Some(View::Code(v)) => {
            let line = v.start_line.max(1);
            match v.text.as_ref().and_then(|t| t.abs_path.clone()) {
                Some(path) => fx.push(Effect::OpenEditor { path, line }),
                None if v.loading => v.edit_when_loaded = true,
                None => app.say(Level::Error, "the file's location on disk is unknown"),
            }
        }
        _ => app.say(Level::Info, "an episode is not a file"),
    }
}

/// The row of the next (or previous) match after the current one or the scroll position,
/// wrapping around; `None` when there is no match.
fn next_match(
    matches: &[usize],
    match_row: Option<usize>,
    scroll: usize,
    forward: bool,
) -> Option<usize> {
    let from = match_row.unwrap_or(scroll);
    if forward {
        matches
            .iter()
            .copied()
            .find(|&r| r > from || (match_row.is_none() && r >= from))
            .or(matches.first().copied())
    } else {
        matches
            .iter()
            .rev()
            .copied()
            .find(|&r| r < from)
            .or(matches.last().copied())
    }
}
