//! Session metadata is text a transcript wrote: the working directory, the git branch, the
//! agent's version, preset, name, role and team, the model, the tool names. It is shown beside
//! the events (search hits, `get-episode`, the explorer, MCP text outside the untrusted block,
//! the team index's `kn_session` and `kn_event`), and the actors' ids and names are built from
//! it, so a key, a token or a `user:password@` URL planted there leaked as surely as one in an
//! event would have. It is redacted like an event's text: before anything is stored (the
//! indexer's sink, `prepare.rs`), and again where a stored row is read or pushed, for a store an
//! older build wrote. Ids (session, agent, tool call) are not: they name rows and files, and a
//! reader bounds them (`bounds.rs`).
//!
//! A name is no sentence: `fix/password-Xk9vQ2mLp7Zt`, `scout token Xk9vQ2mLp7Zt` give a value
//! after a secret word without a verb, which prose may do without naming a secret ("token
//! 0x1F3a9c"); so metadata is read as names are ([`redact::redact_name`]), the title too (it is
//! shown where names are, and read again as one from a stored row). The names an event's facts
//! give (a spawned subagent's name, type and description, a teammate's id, a skill's name)
//! become the actors' ids and names, and are read as names too.

use super::model::{Fact, ParsedEvent, SessionMeta};
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

/// Redacts an event's names (its tool, the inline subagent it came from, the names its facts
/// give) in place; how many values were replaced. Its text is the sink's business.
pub fn event(ev: &mut ParsedEvent) -> usize {
    let names: usize = [&mut ev.tool_name, &mut ev.sidechain_agent]
        .into_iter()
        .flatten()
        .map(field)
        .sum();
    names + ev.facts.iter_mut().map(fact).sum::<usize>()
}

/// Redacts the names a fact gives in place; how many values were replaced. Paths, programs and
/// ids are not names (see the module docs).
pub fn fact(f: &mut Fact) -> usize {
    match f {
        Fact::SkillUse { name, .. } => field(name),
        Fact::Spawn {
            subagent_type,
            name,
            description,
            team_name,
            ..
        } => [subagent_type, name, description, team_name]
            .into_iter()
            .flatten()
            .map(field)
            .sum(),
        Fact::TeammateMessage { teammate_id } => field(teammate_id),
        Fact::AgentLink { .. }
        | Fact::FileEdit { .. }
        | Fact::Command { .. }
        | Fact::Abandoned { .. } => 0,
    }
}

/// Redacts one name in place; how many secrets it held.
pub fn field(value: &mut String) -> usize {
    let (red, n) = redact::redact_name(value);
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
