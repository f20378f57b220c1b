//! Who is who before any event is credited: the sessions by id, every spawn and agent link of
//! each root session (the first pass), and the actor of a (session, sidechain agent) they give.

use std::collections::HashMap;

use super::{facts_of, is_subagent, root_session, spawn_key, EventIn, SessionIn};
use crate::sources::actor_id::{actor_of, ActorKey, SessionFacts};
use crate::sources::episodes::model::Fact;

/// The sessions by id, with what derivation asks of a session that may be missing.
pub(super) struct SessionIndex<'a> {
    pub(super) sessions: &'a [SessionIn],
    by_id: HashMap<&'a str, &'a SessionIn>,
}

impl<'a> SessionIndex<'a> {
    pub(super) fn new(sessions: &'a [SessionIn]) -> Self {
        let by_id = sessions
            .iter()
            .map(|s| (s.session_id.as_str(), s))
            .collect();
        SessionIndex { sessions, by_id }
    }
    pub(super) fn get(&self, sid: &str) -> Option<&'a SessionIn> {
        self.by_id.get(sid).copied()
    }
    pub(super) fn root_of(&self, sid: &str) -> String {
        match self.get(sid) {
            Some(s) => root_session(s),
            None => sid.split('/').next().unwrap_or(sid).to_string(),
        }
    }
    pub(super) fn source_of(&self, sid: &str) -> String {
        self.get(sid)
            .map(|s| s.source.clone())
            .unwrap_or_else(|| "unknown".to_string())
    }
}

pub(super) struct Spawn {
    pub(super) session_id: String,
    pub(super) time_ms: Option<i64>,
    pub(super) key: ActorKey,
}

/// Every spawn, findable per root session by its tool call or by the agent id a link names.
#[derive(Default)]
pub(super) struct Spawns {
    pub(super) spawns: Vec<Spawn>,
    /// (root, tool_use_id) → index into `spawns` (the first spawn of a tool call).
    by_tool: HashMap<(String, String), usize>,
    /// (root, agent_id) → the tool call that spawned it.
    links: HashMap<(String, String), String>,
}

impl Spawns {
    pub(super) fn add(&mut self, index: &SessionIndex<'_>, ev: &EventIn) {
        let mut root = None;
        for f in &ev.facts {
            match f {
                Fact::Spawn {
                    tool_use_id,
                    subagent_type,
                    name,
                    team_name,
                    ..
                } => {
                    let root = root.get_or_insert_with(|| index.root_of(&ev.session_id));
                    let parent_team = index.get(&ev.session_id).and_then(|s| s.team_name.clone());
                    let Some(key) = spawn_key(
                        &index.source_of(&ev.session_id),
                        root,
                        name.as_deref(),
                        subagent_type.as_deref(),
                        team_name.is_some() || parent_team.is_some(),
                    ) else {
                        continue;
                    };
                    if let Some(id) = tool_use_id.as_ref().or(ev.tool_use_id.as_ref()) {
                        self.by_tool
                            .entry((root.clone(), id.clone()))
                            .or_insert(self.spawns.len());
                    }
                    self.spawns.push(Spawn {
                        session_id: ev.session_id.clone(),
                        time_ms: ev.time_ms,
                        key,
                    });
                }
                Fact::AgentLink {
                    tool_use_id: Some(tool),
                    agent_id,
                } => {
                    let root = root.get_or_insert_with(|| index.root_of(&ev.session_id));
                    self.links
                        .entry((root.clone(), agent_id.clone()))
                        .or_insert_with(|| tool.clone());
                }
                _ => {}
            }
        }
    }

    pub(super) fn by_tool(&self, root: &str, tool: &str) -> Option<&Spawn> {
        let i = self.by_tool.get(&(root.to_string(), tool.to_string()))?;
        self.spawns.get(*i)
    }

    pub(super) fn for_agent(&self, root: &str, agent: &str) -> Option<&Spawn> {
        let tool = self.links.get(&(root.to_string(), agent.to_string()))?;
        self.by_tool(root, tool)
    }

    /// The spawn a subagent session came from: by its spawning tool call, else by its agent id.
    pub(super) fn for_subagent(&self, root: &str, s: &SessionIn) -> Option<&Spawn> {
        s.spawn_tool_use_id
            .as_deref()
            .and_then(|t| self.by_tool(root, t))
            .or_else(|| s.agent_id.as_deref().and_then(|a| self.for_agent(root, a)))
    }
}

/// The actor of a (session, sidechain agent): the spawn's actor when the session or sidechain
/// can be linked to one, else the session's own identity.
pub(super) fn resolve(
    resolved: &mut HashMap<(String, Option<String>), ActorKey>,
    index: &SessionIndex<'_>,
    spawns: &Spawns,
    sid: &str,
    side: Option<&str>,
) -> ActorKey {
    let cache_key = (sid.to_string(), side.map(str::to_string));
    if let Some(k) = resolved.get(&cache_key) {
        return k.clone();
    }
    let root = index.root_of(sid);
    let s = index.get(sid);
    let from_spawn = match side {
        Some(agent) => spawns.for_agent(&root, agent),
        None => s
            .filter(|s| is_subagent(s))
            .and_then(|s| spawns.for_subagent(&root, s)),
    };
    let key = match (from_spawn, s) {
        (Some(sp), _) => sp.key.clone(),
        (None, Some(s)) => actor_of(facts_of(s, side)),
        (None, None) => actor_of(SessionFacts {
            source: "unknown",
            session_id: sid,
            parent_session_id: None,
            agent_id: None,
            agent_name: None,
            agent_preset: None,
            team_name: None,
            sidechain_agent: side,
        }),
    };
    resolved.insert(cache_key, key.clone());
    key
}
