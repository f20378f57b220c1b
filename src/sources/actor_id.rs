//! Actor identity: who did the work, named the same way by the L3 builder and by the engine's
//! L1-only fallback, so an `actor_id` means one thing everywhere.
//!
//! `actor:<source>:<kind>:<session>:<name>` where `<session>` is the root session the actor
//! worked in (a subagent's parent), and `<name>` the subagent type / teammate name, or `main`
//! for the root session itself.

pub use crate::contract::kinds::ActorKind;

/// The kinds an actor id of this build names (contract §5.3).
pub const ROOT: ActorKind = ActorKind::RootSession;
pub const SUBAGENT: ActorKind = ActorKind::Subagent;
pub const TEAM_MEMBER: ActorKind = ActorKind::TeamMember;

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ActorKey {
    pub actor_id: String,
    pub name: String,
    pub kind: ActorKind,
    pub source: String,
    /// The root session the actor worked in.
    pub root_session: String,
}

/// What is known about the session an event came from.
#[derive(Debug, Clone, Copy)]
pub struct SessionFacts<'a> {
    pub source: &'a str,
    pub session_id: &'a str,
    pub parent_session_id: Option<&'a str>,
    pub agent_id: Option<&'a str>,
    pub agent_name: Option<&'a str>,
    pub agent_preset: Option<&'a str>,
    pub team_name: Option<&'a str>,
    /// Inline sidechain agent of the event (Claude era 1).
    pub sidechain_agent: Option<&'a str>,
}

/// The actor that produced an event of this session.
pub fn actor_of(s: SessionFacts<'_>) -> ActorKey {
    let is_sub = s.parent_session_id.is_some() || s.agent_id.is_some();
    if is_sub {
        let root = s
            .parent_session_id
            .or_else(|| s.session_id.split('/').next())
            .unwrap_or(s.session_id);
        let name = s
            .agent_name
            .or(s.agent_preset)
            .or(s.agent_id)
            .unwrap_or("subagent");
        let kind = if s.team_name.is_some() && s.agent_name.is_some() {
            TEAM_MEMBER
        } else {
            SUBAGENT
        };
        return key(s.source, kind, root, name);
    }
    if let Some(agent) = s.sidechain_agent {
        return key(s.source, SUBAGENT, s.session_id, agent);
    }
    key(s.source, ROOT, s.session_id, "main")
}

/// A named spawn seen in a parent's transcript (Task/Agent `name` or `subagent_type`).
pub fn spawned(source: &str, root_session: &str, name: &str, team: bool) -> ActorKey {
    key(
        source,
        if team { TEAM_MEMBER } else { SUBAGENT },
        root_session,
        name,
    )
}

/// A part of an actor id as the id spells it (whitespace becomes `-`, so `a b` and `a-b` name
/// one actor).
pub fn id_part(s: &str) -> String {
    s.replace(char::is_whitespace, "-")
}

pub fn key(source: &str, kind: ActorKind, root_session: &str, name: &str) -> ActorKey {
    let clean = id_part;
    ActorKey {
        actor_id: format!(
            "actor:{}:{kind}:{}:{}",
            clean(source),
            clean(root_session),
            clean(name)
        ),
        name: name.to_string(),
        kind,
        source: source.to_string(),
        root_session: root_session.to_string(),
    }
}
