//! What a user-role line of a Claude Code transcript is: text a person typed, or one of the
//! injected kinds (teammate messages, slash-command wrappers, hook feedback, compaction
//! summaries, a parent agent's prompt). The rules are documented in `docs/EVENTS.md`.

use super::{ClaudeState, Origin};
use crate::sources::episodes::model::Fact;
use crate::sources::episodes::parser::Ctx;

/// Classifies a user-role text: `None` for nothing searchable (caveats, empty output).
pub(super) fn classify(
    cx: &mut Ctx,
    st: &ClaudeState,
    text: &str,
    origin: &Origin<'_>,
) -> Option<(&'static str, String, Vec<Fact>)> {
    let t = text.trim();
    if t.is_empty() {
        return None;
    }
    let plain = |kind: &'static str| Some((kind, t.to_string(), Vec::new()));
    if origin.compact_summary {
        return plain("system/summary");
    }
    if t.starts_with("[Request interrupted by user") {
        cx.outcome.aborted();
        return plain("system/error");
    }
    if t.starts_with("<teammate-message") {
        let id = attr(t, "teammate_id").unwrap_or("unknown").to_string();
        let body = inner(t, "teammate-message").unwrap_or(t).trim().to_string();
        return Some((
            "team/message",
            body,
            vec![Fact::TeammateMessage { teammate_id: id }],
        ));
    }
    if t.starts_with("<task-notification>") {
        return plain("system/notification");
    }
    if t.starts_with("<local-command-caveat>") || t.starts_with("Caveat: The messages below") {
        return None;
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
        return Some(("user/command", cmd, Vec::new()));
    }
    for tag in [
        "local-command-stdout",
        "local-command-stderr",
        "bash-stdout",
        "bash-stderr",
    ] {
        if t.starts_with(&format!("<{tag}>")) {
            let body = inner(t, tag).unwrap_or("").trim();
            return (!body.is_empty()).then(|| ("system/context", body.to_string(), Vec::new()));
        }
    }
    if t.starts_with("<bash-input>") {
        return Some((
            "user/command",
            inner(t, "bash-input").unwrap_or(t).trim().to_string(),
            Vec::new(),
        ));
    }
    if t.starts_with("Base directory for this skill:") {
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
        return Some(("system/skill", t.to_string(), facts));
    }
    if t.starts_with("Stop hook feedback")
        || t.starts_with("<user-prompt-submit-hook>")
        || (t.starts_with("<system-reminder>") && t.contains("hook"))
    {
        return plain("system/hook");
    }
    if origin.is_meta {
        if let Some(cmd) = &st.last_command {
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
            return Some(("system/skill", t.to_string(), facts));
        }
        return plain("system/context");
    }
    if t.starts_with("<system-reminder>") {
        return plain("system/context");
    }
    if origin.origin_kind == Some("task-notification") {
        return plain("system/notification");
    }
    if let Some(from) = origin.origin_from {
        let fact = Fact::TeammateMessage {
            teammate_id: from.to_string(),
        };
        return Some(("team/message", t.to_string(), vec![fact]));
    }
    if origin.by_agent {
        return plain("agent/prompt");
    }
    if is_slash_command(t) {
        return plain("user/command");
    }
    plain("user/message")
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
