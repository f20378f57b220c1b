//! What a user-role line of a Claude Code transcript is: text a person typed, or one of the
//! injected kinds (teammate messages, slash-command wrappers, hook feedback, compaction
//! summaries, a parent agent's prompt). The rules are documented in `docs/formats/claude.md`.

use super::{ClaudeState, Origin};
use crate::sources::episodes::model::{EventType, Fact};
use crate::sources::episodes::parser::Ctx;

/// A user-role text classified: its event type, its text, its facts.
type Classified = (EventType, String, Vec<Fact>);

fn plain(kind: EventType, t: &str) -> Classified {
    (kind, t.to_string(), Vec::new())
}

/// Classifies a user-role text: `None` for nothing searchable (caveats, empty output). The
/// rules keyed on the text's own start are exclusive; the ones keyed on the line's origin (a
/// compaction summary first, a meta line and who sent it last) are checked in a fixed order.
pub(super) fn classify(
    cx: &mut Ctx,
    st: &ClaudeState,
    text: &str,
    origin: &Origin<'_>,
) -> Option<Classified> {
    let t = text.trim();
    if t.is_empty() {
        return None;
    }
    if origin.compact_summary {
        return Some(plain(EventType::SystemSummary, t));
    }
    if t.starts_with("[Request interrupted by user") {
        cx.outcome.aborted();
        return Some(plain(EventType::SystemError, t));
    }
    if t.starts_with("<local-command-caveat>") || t.starts_with("Caveat: The messages below") {
        return None;
    }
    if let Some(body) = command_output(t) {
        return (!body.is_empty()).then(|| plain(EventType::SystemContext, body));
    }
    if let Some(c) = wrapper(t).or_else(|| skill_body(t, origin)) {
        return Some(c);
    }
    if t.starts_with("Stop hook feedback")
        || t.starts_with("<user-prompt-submit-hook>")
        || (t.starts_with("<system-reminder>") && t.contains("hook"))
    {
        return Some(plain(EventType::SystemHook, t));
    }
    if origin.is_meta {
        return Some(meta(st, t));
    }
    Some(by_origin(t, origin))
}

/// The output of a local or `!` shell command, unwrapped (empty when it printed nothing).
fn command_output(t: &str) -> Option<&str> {
    [
        "local-command-stdout",
        "local-command-stderr",
        "bash-stdout",
        "bash-stderr",
    ]
    .into_iter()
    .find(|tag| t.starts_with(&format!("<{tag}>")))
    .map(|tag| inner(t, tag).unwrap_or("").trim())
}

/// Text Claude Code wraps in a tag of its own: a teammate's message, a task notification, a
/// slash command with its arguments, a `!` shell command.
fn wrapper(t: &str) -> Option<Classified> {
    if t.starts_with("<teammate-message") {
        let id = attr(t, "teammate_id").unwrap_or("unknown").to_string();
        let body = inner(t, "teammate-message").unwrap_or(t).trim().to_string();
        let facts = vec![Fact::TeammateMessage { teammate_id: id }];
        return Some((EventType::TeamMessage, body, facts));
    }
    if t.starts_with("<task-notification>") {
        return Some(plain(EventType::SystemNotification, t));
    }
    if t.starts_with("<command-name>") || t.starts_with("<command-message>") {
        let name = inner(t, "command-name").unwrap_or("").trim();
        let args = inner(t, "command-args").unwrap_or("").trim();
        let name = if name.is_empty() {
            format!("/{}", inner(t, "command-message").unwrap_or("").trim())
        } else {
            name.to_string()
        };
        let cmd = if args.is_empty() {
            name
        } else {
            format!("{name} {args}")
        };
        return Some((EventType::UserCommand, cmd, Vec::new()));
    }
    if t.starts_with("<bash-input>") {
        let cmd = inner(t, "bash-input").unwrap_or(t).trim();
        return Some(plain(EventType::UserCommand, cmd));
    }
    None
}

/// An injected skill body; the skill counts as used unless a tool call already said so.
fn skill_body(t: &str, origin: &Origin<'_>) -> Option<Classified> {
    if !t.starts_with("Base directory for this skill:") {
        return None;
    }
    let mut facts = Vec::new();
    if !origin.has_source_tool {
        let dir = t.lines().next().unwrap_or("").trim_end();
        if let Some(name) = dir.rsplit(['/', '\\']).next().filter(|n| !n.contains(':')) {
            facts.push(Fact::SkillUse {
                name: name.to_string(),
                via: "injected".into(),
            });
        }
    }
    Some((EventType::SystemSkill, t.to_string(), facts))
}

/// A meta line: the body of the slash command just run (a skill use), else injected context.
fn meta(st: &ClaudeState, t: &str) -> Classified {
    let Some(cmd) = &st.last_command else {
        return plain(EventType::SystemContext, t);
    };
    let name = cmd.split_whitespace().next().unwrap_or("");
    let name = name.trim_start_matches('/').to_string();
    let facts = if name.is_empty() {
        Vec::new()
    } else {
        vec![Fact::SkillUse {
            name,
            via: "slash_command".into(),
        }]
    };
    (EventType::SystemSkill, t.to_string(), facts)
}

/// The rest, by who sent the line: a reminder, a notification, a teammate, a parent agent's
/// prompt, else what a person typed (a slash command or a message).
fn by_origin(t: &str, origin: &Origin<'_>) -> Classified {
    if t.starts_with("<system-reminder>") {
        return plain(EventType::SystemContext, t);
    }
    if origin.origin_kind == Some("task-notification") {
        return plain(EventType::SystemNotification, t);
    }
    if let Some(from) = origin.origin_from {
        let fact = Fact::TeammateMessage {
            teammate_id: from.to_string(),
        };
        return (EventType::TeamMessage, t.to_string(), vec![fact]);
    }
    if origin.by_agent {
        return plain(EventType::AgentPrompt, t);
    }
    if is_slash_command(t) {
        return plain(EventType::UserCommand, t);
    }
    plain(EventType::UserMessage, t)
}

/// `/name args` typed at the prompt (a queued command has no `<command-name>` wrapper).
fn is_slash_command(t: &str) -> bool {
    let mut chars = t.chars();
    chars.next() == Some('/')
        && chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && !t.contains('\n')
        && t.split_whitespace()
            .next()
            .is_some_and(|w| w.matches('/').count() == 1)
}

/// The value of `name="…"` in the opening tag at the start of `t`.
fn attr<'a>(t: &'a str, name: &str) -> Option<&'a str> {
    let head = t.get(..t.find('>')?)?;
    let key = format!("{name}=\"");
    let start = head.find(&key)? + key.len();
    let rest = head.get(start..)?;
    rest.get(..rest.find('"')?)
}

/// The text between `<tag …>` and `</tag>`.
fn inner<'a>(t: &'a str, tag: &str) -> Option<&'a str> {
    let open = t.find(&format!("<{tag}"))?;
    let body_start = open + t.get(open..)?.find('>')? + 1;
    let close = format!("</{tag}>");
    let rest = t.get(body_start..)?;
    rest.get(..rest.find(&close).unwrap_or(rest.len()))
}
