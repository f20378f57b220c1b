//! What can be copied from the current selection: ids, locators (`session_id:seq`,
//! `path:line`), snippets, the command that resumes a session in its own directory (copied,
//! never run), the context pack and the handoff package. The copy menu lists only what applies.

use knowledge::text::sanitize::for_terminal;

use super::Effect;
use crate::tui::action::Action;
use crate::tui::state::{
    App, CodeView, CopyChoice, CopyMenu, DispatchView, EpisodeView, Focus, Level, OutboxView,
    Overlay, View,
};
use knowledge::contract::Lane;

/// The command that resumes a session in its own directory, from the agent's reader in the
/// registry (`cd <cwd> && claude --resume <id>`, `codex resume <id>`, …).
pub use knowledge::sources::episodes::agents::resume_command;

fn choice(action: &'static str, label: &str, text: impl Into<String>) -> CopyChoice {
    CopyChoice {
        action,
        label: label.to_string(),
        text: for_terminal(&text.into()),
    }
}

/// A document as the copy and the confirmation show it (indented JSON).
pub(super) fn pretty<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// Everything the current selection offers.
pub fn choices(app: &App) -> Vec<CopyChoice> {
    let mut out = Vec::new();
    match app.views.last() {
        Some(View::Episode(v)) => episode_choices(v, &mut out),
        Some(View::Code(v)) => code_choices(v, &mut out),
        Some(View::Dispatch(d)) => dispatch_choices(d, &mut out),
        Some(View::Outbox(o)) => outbox_choices(o, &mut out),
        Some(View::Activity(_)) => {}
        None => main_choices(app, &mut out),
    }
    out
}

fn episode_choices(v: &EpisodeView, out: &mut Vec<CopyChoice>) {
    out.push(choice(
        "copy_id",
        "id",
        format!("ep:{}:{}", v.session_id, v.seq),
    ));
    out.push(choice(
        "copy_locator",
        "locator",
        format!("{}:{}", v.session_id, v.seq),
    ));
    if let Some(ep) = &v.episode {
        if let Some(ev) = ep.events.iter().find(|e| e.seq == v.seq) {
            out.push(choice("copy_snippet", "event text", ev.text.clone()));
        }
        let s = &ep.session;
        if let Some(cmd) = resume_command(&s.source, &s.session_id, s.cwd.as_deref()) {
            out.push(choice("copy_resume", "resume command", cmd));
        }
    }
}

fn code_choices(v: &CodeView, out: &mut Vec<CopyChoice>) {
    out.push(choice(
        "copy_locator",
        "locator",
        format!("{}:{}", v.path, v.start_line.max(1)),
    ));
    let Some(t) = &v.text else {
        return;
    };
    if let Some(p) = &t.abs_path {
        out.push(choice("copy_id", "absolute path", p.clone()));
    }
    let lo = v.start_line.max(t.first_line);
    let hi = v.end_line.max(lo);
    let lines: Vec<&str> = t
        .lines
        .iter()
        .enumerate()
        .filter(|(i, _)| (lo..=hi).contains(&(t.first_line + *i as u64)))
        .map(|(_, l)| l.as_str())
        .collect();
    if !lines.is_empty() && v.end_line > 0 {
        out.push(choice("copy_snippet", "lines", lines.join("\n")));
    }
}

fn dispatch_choices(d: &DispatchView, out: &mut Vec<CopyChoice>) {
    let Some(p) = &d.preview else {
        return;
    };
    out.push(choice(
        "copy_context_pack",
        "context pack",
        pretty(&p.context_pack),
    ));
    if let Some(h) = &p.handoff {
        out.push(choice("copy_handoff", "handoff package", pretty(h)));
    }
    if let Some(t) = &p.target {
        out.push(choice("copy_id", "target actor id", t.actor_id.clone()));
    }
}

/// The open package's id and package, else the selected row's id and file; nothing for a
/// file that is not a package.
fn outbox_choices(o: &OutboxView, out: &mut Vec<CopyChoice>) {
    if let Some(d) = &o.detail {
        if d.id.is_empty() {
            return;
        }
        out.push(choice("copy_id", "assignment id", d.id.clone()));
        if let Some(pkg) = &d.doc {
            out.push(choice(
                "copy_handoff",
                "handoff package",
                pretty(&pkg.handoff),
            ));
        }
    } else if let Some(r) = o
        .entries
        .get(o.cursor.selected)
        .filter(|r| r.unreadable.is_none())
    {
        out.push(choice("copy_id", "assignment id", r.id.clone()));
        if !r.path.is_empty() {
            out.push(choice("copy_locator", "outbox file", r.path.clone()));
        }
    }
}

fn main_choices(app: &App, out: &mut Vec<CopyChoice>) {
    match app.focus {
        Focus::Query => {}
        Focus::Lane(Lane::Episodes) => {
            if let Some(it) = app.episodes().get(app.cursors.episodes.selected) {
                out.push(choice("copy_id", "id", it.id.clone()));
                out.push(choice(
                    "copy_locator",
                    "locator",
                    format!("{}:{}", it.session_id, it.seq),
                ));
                if let Some(s) = it.snippet.as_deref().filter(|s| !s.is_empty()) {
                    out.push(choice("copy_snippet", "snippet", s));
                }
                if let Some(cmd) =
                    resume_command(&it.surface, &it.session_id, it.session.cwd.as_deref())
                {
                    out.push(choice("copy_resume", "resume command", cmd));
                }
            }
        }
        Focus::Lane(Lane::Code) => {
            if let Some(it) = app.code().get(app.cursors.code.selected) {
                out.push(choice("copy_id", "id", it.id.clone()));
                out.push(choice(
                    "copy_locator",
                    "locator",
                    format!("{}:{}", it.path, it.start_line),
                ));
                if let Some(s) = it.snippet.as_deref().filter(|s| !s.is_empty()) {
                    out.push(choice("copy_snippet", "snippet", s));
                }
            }
        }
        Focus::Lane(Lane::Skills) => {
            if let Some(it) = app.skills().get(app.cursors.skills.selected) {
                out.push(choice("copy_id", "id", it.id.clone()));
                out.push(choice("copy_locator", "path", it.path.clone()));
                out.push(choice(
                    "copy_snippet",
                    "description",
                    it.description.clone(),
                ));
            }
        }
        Focus::Actors => {
            let Some(a) = app.selected_actor() else {
                return;
            };
            match app.selected_evidence() {
                Some((_, id)) => out.push(choice("copy_id", "evidence id", id)),
                None => out.push(choice("copy_id", "actor id", a.actor_id.clone())),
            }
            // Resume the actor's session, from its first episode in the lane.
            let first = a
                .evidence
                .iter()
                .filter(|e| e.lane == Lane::Episodes)
                .find_map(|e| app.episodes().iter().find(|x| x.id == e.id));
            if let Some(it) = first {
                out.push(choice(
                    "copy_locator",
                    "locator",
                    format!("{}:{}", it.session_id, it.seq),
                ));
                if let Some(cmd) =
                    resume_command(&it.surface, &it.session_id, it.session.cwd.as_deref())
                {
                    out.push(choice("copy_resume", "resume command", cmd));
                }
            }
        }
    }
}

/// `y`: the copy menu, or a note when there is nothing to copy.
pub fn open_menu(app: &mut App) {
    let choices = choices(app);
    if choices.is_empty() {
        app.say(Level::Info, "nothing to copy here");
        return;
    }
    app.overlay = Some(Overlay::Copy(CopyMenu { choices }));
}

fn action_name(a: &Action) -> &'static str {
    match a {
        Action::CopyId => "copy_id",
        Action::CopyLocator => "copy_locator",
        Action::CopySnippet => "copy_snippet",
        Action::CopyResume => "copy_resume",
        Action::CopyContextPack => "copy_context_pack",
        _ => "copy_handoff",
    }
}

/// A copy key pressed directly (or in the menu): copy that choice if the selection has it.
pub fn copy_direct(app: &mut App, action: &Action, fx: &mut Vec<Effect>) {
    let name = action_name(action);
    let picked = match &app.overlay {
        Some(Overlay::Copy(m)) => m.choices.iter().find(|c| c.action == name).cloned(),
        _ => choices(app).into_iter().find(|c| c.action == name),
    };
    if matches!(app.overlay, Some(Overlay::Copy(_))) {
        app.overlay = None;
    }
    match picked {
        Some(c) => fx.push(Effect::Copy {
            text: c.text,
            what: c.label,
        }),
        None => {
            let what = match name {
                "copy_id" => "id",
                "copy_locator" => "locator",
                "copy_snippet" => "snippet",
                "copy_resume" => "session to resume",
                "copy_context_pack" => "context pack",
                _ => "handoff package",
            };
            app.say(
                Level::Info,
                format!("nothing to copy: this selection has no {what}"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use knowledge::sources::episodes::agents::shell_quote;

    #[test]
    fn resume_commands_cd_into_the_session_directory() {
        assert_eq!(
            resume_command("claude", "abc-1", Some("/srv/app")).as_deref(),
            Some("cd /srv/app && claude --resume abc-1")
        );
        assert_eq!(
            resume_command("claude/subagent", "abc-1/agent-x", Some("/srv/my app")).as_deref(),
            Some("cd '/srv/my app' && claude --resume abc-1")
        );
        assert_eq!(
            resume_command("codex", "01a1", None).as_deref(),
            Some("codex resume 01a1")
        );
        assert_eq!(resume_command("other", "x", None), None);
        assert_eq!(
            resume_command("claude", "x", Some("/a'b; rm -rf /")).as_deref(),
            Some("cd '/a'\\''b; rm -rf /' && claude --resume x")
        );
    }

    #[test]
    fn shell_quoting() {
        assert_eq!(shell_quote("plain/path-1.2"), "plain/path-1.2");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("$(x)"), "'$(x)'");
        assert_eq!(shell_quote("~/x"), "'~/x'");
    }
}
