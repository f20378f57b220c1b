//! Session metadata is text a transcript wrote: the working directory, the git branch, the
//! agent's version, preset, name, role and team, the model, the tool names. It is shown beside
//! the events (search hits, `get-episode`, the explorer, MCP text outside the untrusted block,
//! the team index's `kn_session` and `kn_event`), and the actors' ids and names are built from
//! it, so a key, a token or a `user:password@` URL planted there leaked as surely as one in an
//! event would have. It is redacted like an event's text: before anything is stored (the
//! indexer's sink, `prepare.rs`), and again where a stored row is read or pushed, for a store an
//! older build wrote. Ids (session, agent, tool call) are not: they name rows and files, and a
//! reader bounds them (`bounds.rs`).

use super::model::{ParsedEvent, SessionMeta};
use crate::text::redact;

/// Redacts the free text of a session's metadata in place; how many values were replaced.
pub fn session(meta: &mut SessionMeta) -> usize {
    [
        &mut meta.cwd,
        &mut meta.agent_preset,
        &mut meta.version,
        &mut meta.git_branch,
        &mut meta.title,
        &mut meta.entrypoint,
        &mut meta.model,
        &mut meta.agent_name,
        &mut meta.agent_description,
        &mut meta.team_name,
    ]
    .into_iter()
    .flatten()
    .map(field)
    .sum()
}

/// Redacts an event's names (its tool, the inline subagent it came from) in place; how many
/// values were replaced. Its text is the sink's business.
pub fn event(ev: &mut ParsedEvent) -> usize {
    [&mut ev.tool_name, &mut ev.sidechain_agent]
        .into_iter()
        .flatten()
        .map(field)
        .sum()
}

/// Redacts one value in place; how many secrets it held.
pub fn field(value: &mut String) -> usize {
    let (red, n) = redact::redact_cow(value);
    if n > 0 {
        *value = red.into_owned();
    }
    n
}

/// A value as read from a store, redacted again.
pub fn read(value: Option<String>) -> Option<String> {
    value.map(|mut v| {
        field(&mut v);
        v
    })
}

#[cfg(test)]
mod tests;
