//! Derivation of actors, skill uses and edits from the structured facts of `episodes.sqlite`.
//!
//! This is pure logic over rows already read (no SQL), so identity and de-duplication rules are
//! testable on their own. Actor ids come only from [`crate::sources::actor_id`]; a subagent
//! transcript that can be linked to the spawn in its parent's transcript (`spawn_tool_use_id`, or
//! an `AgentLink` naming its agent id) takes the spawn's name (`name`, else `subagent_type`), so
//! the spawn and the child's own events agree on one `actor_id`.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::uses::{dedupe_uses, normalise, plausible_name, RawUse};
use crate::sources::actor_id::{actor_of, spawned, ActorKey, SessionFacts};
use crate::sources::episodes::model::Fact;

/// A row of `sessions`, as far as L3 needs it.
#[derive(Debug, Clone, Default)]
pub struct SessionIn {
    pub session_id: String,
    pub source: String,
    pub cwd: Option<String>,
    pub parent_session_id: Option<String>,
    pub agent_id: Option<String>,
    pub agent_name: Option<String>,
    pub agent_preset: Option<String>,
    pub team_name: Option<String>,
    pub spawn_tool_use_id: Option<String>,
    pub outcome: String,
    /// Time of the session's last event (ms since the epoch).
    pub last_ms: Option<i64>,
}

/// An event that carries facts.
#[derive(Debug, Clone, Default)]
pub struct EventIn {
    pub session_id: String,
    pub seq: i64,
    pub time_ms: Option<i64>,
    pub tool_use_id: Option<String>,
    pub sidechain_agent: Option<String>,
    pub facts: Vec<Fact>,
}

/// Event count and time range of one (session, sidechain agent) group.
#[derive(Debug, Clone, Default)]
pub struct GroupIn {
    pub session_id: String,
    pub sidechain_agent: Option<String>,
    pub events: u64,
    pub min_ms: Option<i64>,
    pub max_ms: Option<i64>,
}

#[derive(Debug, Clone, Default)]
pub struct ActorAcc {
    pub key: Option<ActorKey>,
    pub sessions: BTreeSet<String>,
    pub authored: BTreeSet<String>,
    pub events: u64,
    pub first_ms: Option<i64>,
    pub last_ms: Option<i64>,
    pub skill_uses: u64,
    pub edits: u64,
}

impl ActorAcc {
    fn seen(&mut self, ms: Option<i64>) {
        if let Some(ms) = ms {
            self.first_ms = Some(self.first_ms.map_or(ms, |f| f.min(ms)));
            self.last_ms = Some(self.last_ms.map_or(ms, |l| l.max(ms)));
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct UseRow {
    pub session_id: String,
    pub seq: i64,
    pub skill_name: String,
    pub actor_id: String,
    pub via: String,
    pub time_ms: Option<i64>,
    pub outcome: String,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct EditRow {
    pub session_id: String,
    pub seq: i64,
    pub path: String,
    pub actor_id: String,
    pub abs_path: Option<String>,
    pub rel_path: Option<String>,
    pub time_ms: Option<i64>,
}

/// (actor_id, session_id, role, sidechain_agent) → authored events.
pub type ActorSessions = BTreeMap<(String, String, &'static str, String), u64>;

#[derive(Debug, Default)]
pub struct Derived {
    pub actors: BTreeMap<String, ActorAcc>,
    pub actor_sessions: ActorSessions,
    pub uses: Vec<UseRow>,
    pub edits: Vec<EditRow>,
}

/// Who did what, from the sessions, the fact-carrying events and the per-group counts: every
/// session's author, every spawn, every teammate, then edits and skill uses, each credited to the
/// actor of its (session, sidechain agent).
pub fn derive(sessions: &[SessionIn], events: &[EventIn], groups: &[GroupIn]) -> Derived {
    let index = SessionIndex::new(sessions);
    let spawns = Spawns::collect(&index, events);
    let mut actors = Resolver::new(&index, &spawns);
    let mut out = Derived::default();
    add_authors(&mut out, &mut actors, sessions, groups);
    for sp in &spawns.spawns {
        out.touch(&sp.key);
        add_session(&mut out, &sp.key, &sp.session_id, "spawned", "", 0);
        if let Some(a) = out.actors.get_mut(&sp.key.actor_id) {
            a.seen(sp.time_ms);
        }
    }
    let raw_uses = add_edits_and_teammates(&mut out, &mut actors, &index, events);
    add_skill_uses(&mut out, &mut actors, &index, raw_uses);
    out.uses.sort();
    out.edits.sort();
    out.edits.dedup();
    out
}

impl Derived {
    /// Make sure the actor exists (its first key wins).
    fn touch(&mut self, key: &ActorKey) {
        let a = self.actors.entry(key.actor_id.clone()).or_default();
        a.key.get_or_insert_with(|| key.clone());
    }
}

/// The sessions by id, with what derivation asks of a session that may be missing.
struct SessionIndex<'a> {
    by_id: HashMap<&'a str, &'a SessionIn>,
}

impl<'a> SessionIndex<'a> {
    fn new(sessions: &'a [SessionIn]) -> Self {
        let by_id = sessions
            .iter()
            .map(|s| (s.session_id.as_str(), s))
            .collect();
        SessionIndex { by_id }
    }
    fn get(&self, sid: &str) -> Option<&'a SessionIn> {
        self.by_id.get(sid).copied()
    }
    fn root_of(&self, sid: &str) -> String {
        match self.get(sid) {
            Some(s) => root_session(s),
            None => sid.split('/').next().unwrap_or(sid).to_string(),
        }
    }
    fn source_of(&self, sid: &str) -> String {
        self.get(sid)
            .map(|s| s.source.clone())
            .unwrap_or_else(|| "unknown".to_string())
    }
}

struct Spawn {
    session_id: String,
    time_ms: Option<i64>,
    key: ActorKey,
}

/// Every spawn, findable per root session by its tool call or by the agent id a link names.
#[derive(Default)]
struct Spawns {
    spawns: Vec<Spawn>,
    /// (root, tool_use_id) → index into `spawns` (the first spawn of a tool call).
    by_tool: HashMap<(String, String), usize>,
    /// (root, agent_id) → the tool call that spawned it.
    links: HashMap<(String, String), String>,
}

impl Spawns {
    fn collect(index: &SessionIndex<'_>, events: &[EventIn]) -> Self {
        let mut out = Spawns::default();
        for ev in events {
            let root = index.root_of(&ev.session_id);
            for f in &ev.facts {
                match f {
                    Fact::Spawn {
                        tool_use_id,
                        subagent_type,
                        name,
                        team_name,
                        ..
                    } => {
                        let parent_team =
                            index.get(&ev.session_id).and_then(|s| s.team_name.clone());
                        let Some(key) = spawn_key(
                            &index.source_of(&ev.session_id),
                            &root,
                            name.as_deref(),
                            subagent_type.as_deref(),
                            team_name.is_some() || parent_team.is_some(),
                        ) else {
                            continue;
                        };
                        if let Some(id) = tool_use_id.as_ref().or(ev.tool_use_id.as_ref()) {
                            out.by_tool
                                .entry((root.clone(), id.clone()))
                                .or_insert(out.spawns.len());
                        }
                        out.spawns.push(Spawn {
                            session_id: ev.session_id.clone(),
                            time_ms: ev.time_ms,
                            key,
                        });
                    }
                    Fact::AgentLink {
                        tool_use_id: Some(tool),
                        agent_id,
                    } => {
                        out.links
                            .entry((root.clone(), agent_id.clone()))
                            .or_insert_with(|| tool.clone());
                    }
                    _ => {}
                }
            }
        }
        out
    }

    fn by_tool(&self, root: &str, tool: &str) -> Option<&Spawn> {
        let i = self.by_tool.get(&(root.to_string(), tool.to_string()))?;
        self.spawns.get(*i)
    }

    fn for_agent(&self, root: &str, agent: &str) -> Option<&Spawn> {
        let tool = self.links.get(&(root.to_string(), agent.to_string()))?;
        self.by_tool(root, tool)
    }

    /// The spawn a subagent session came from: by its spawning tool call, else by its agent id.
    fn for_subagent(&self, root: &str, s: &SessionIn) -> Option<&Spawn> {
        s.spawn_tool_use_id
            .as_deref()
            .and_then(|t| self.by_tool(root, t))
            .or_else(|| s.agent_id.as_deref().and_then(|a| self.for_agent(root, a)))
    }
}

/// The actor of each (session, sidechain agent), computed once: the spawn's actor when the
/// session or sidechain can be linked to one, else the session's own identity.
struct Resolver<'a> {
    index: &'a SessionIndex<'a>,
    spawns: &'a Spawns,
    resolved: HashMap<(String, Option<String>), ActorKey>,
}

impl<'a> Resolver<'a> {
    fn new(index: &'a SessionIndex<'a>, spawns: &'a Spawns) -> Self {
        Resolver {
            index,
            spawns,
            resolved: HashMap::new(),
        }
    }

    fn resolve(&mut self, sid: &str, side: Option<&str>) -> ActorKey {
        let cache_key = (sid.to_string(), side.map(str::to_string));
        if let Some(k) = self.resolved.get(&cache_key) {
            return k.clone();
        }
        let root = self.index.root_of(sid);
        let s = self.index.get(sid);
        let from_spawn = match side {
            Some(agent) => self.spawns.for_agent(&root, agent),
            None => s
                .filter(|s| is_subagent(s))
                .and_then(|s| self.spawns.for_subagent(&root, s)),
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
        self.resolved.insert(cache_key, key.clone());
        key
    }
}

/// Every session has an author, even one without events; each (session, sidechain) group adds
/// its events and time range to its actor.
fn add_authors(
    out: &mut Derived,
    actors: &mut Resolver<'_>,
    sessions: &[SessionIn],
    groups: &[GroupIn],
) {
    for s in sessions {
        let key = actors.resolve(&s.session_id, None);
        out.touch(&key);
        add_session(out, &key, &s.session_id, "author", "", 0);
    }
    for g in groups {
        let key = actors.resolve(&g.session_id, g.sidechain_agent.as_deref());
        out.touch(&key);
        let side = g.sidechain_agent.clone().unwrap_or_default();
        add_session(out, &key, &g.session_id, "author", &side, g.events);
        if let Some(a) = out.actors.get_mut(&key.actor_id) {
            a.events += g.events;
            a.seen(g.min_ms);
            a.seen(g.max_ms);
        }
    }
}

/// Edits and teammates, in event order; skill uses are returned per session, to be
/// de-duplicated by [`add_skill_uses`].
fn add_edits_and_teammates(
    out: &mut Derived,
    actors: &mut Resolver<'_>,
    index: &SessionIndex<'_>,
    events: &[EventIn],
) -> BTreeMap<String, Vec<RawUse>> {
    let mut raw_uses: BTreeMap<String, Vec<RawUse>> = BTreeMap::new();
    for ev in events {
        for f in &ev.facts {
            match f {
                Fact::SkillUse { name, via } => {
                    raw_uses
                        .entry(ev.session_id.clone())
                        .or_default()
                        .push(RawUse {
                            seq: ev.seq,
                            name: name.clone(),
                            via: via.clone(),
                            tool_use_id: ev.tool_use_id.clone(),
                            sidechain: ev.sidechain_agent.clone(),
                            time_ms: ev.time_ms,
                        });
                }
                Fact::FileEdit { path } if !path.trim().is_empty() => {
                    add_edit(out, actors, index, ev, path);
                }
                Fact::TeammateMessage { teammate_id } => {
                    add_teammate(out, index, ev, teammate_id);
                }
                _ => {}
            }
        }
    }
    raw_uses
}

fn add_edit(
    out: &mut Derived,
    actors: &mut Resolver<'_>,
    index: &SessionIndex<'_>,
    ev: &EventIn,
    path: &str,
) {
    let key = actors.resolve(&ev.session_id, ev.sidechain_agent.as_deref());
    let cwd = index.get(&ev.session_id).and_then(|s| s.cwd.as_deref());
    let (abs_path, rel_path) = normalise(path, cwd);
    if let Some(a) = out.actors.get_mut(&key.actor_id) {
        a.edits += 1;
    }
    out.edits.push(EditRow {
        session_id: ev.session_id.clone(),
        seq: ev.seq,
        path: path.to_string(),
        actor_id: key.actor_id,
        abs_path,
        rel_path,
        time_ms: ev.time_ms,
    });
}

fn add_teammate(out: &mut Derived, index: &SessionIndex<'_>, ev: &EventIn, teammate_id: &str) {
    let id = teammate_id.trim();
    if !plausible_name(id) || matches!(id, "system" | "unknown") {
        return;
    }
    let root = index.root_of(&ev.session_id);
    let key = spawned(&index.source_of(&ev.session_id), &root, id, true);
    out.touch(&key);
    add_session(out, &key, &ev.session_id, "teammate", "", 0);
    if let Some(a) = out.actors.get_mut(&key.actor_id) {
        a.seen(ev.time_ms);
    }
}

/// One row per skill use after de-duplication, with its session's outcome.
fn add_skill_uses(
    out: &mut Derived,
    actors: &mut Resolver<'_>,
    index: &SessionIndex<'_>,
    raw_uses: BTreeMap<String, Vec<RawUse>>,
) {
    for (sid, uses) in raw_uses {
        let outcome = index
            .get(&sid)
            .map(|s| s.outcome.clone())
            .unwrap_or_else(|| "unknown".to_string());
        for u in dedupe_uses(uses) {
            let key = actors.resolve(&sid, u.sidechain.as_deref());
            if let Some(a) = out.actors.get_mut(&key.actor_id) {
                a.skill_uses += 1;
            }
            out.uses.push(UseRow {
                session_id: sid.clone(),
                seq: u.seq,
                skill_name: u.name.trim().trim_start_matches('/').to_string(),
                actor_id: key.actor_id,
                via: u.via,
                time_ms: u.time_ms,
                outcome: outcome.clone(),
            });
        }
    }
}

fn add_session(
    out: &mut Derived,
    key: &ActorKey,
    sid: &str,
    role: &'static str,
    side: &str,
    n: u64,
) {
    *out.actor_sessions
        .entry((
            key.actor_id.clone(),
            sid.to_string(),
            role,
            side.to_string(),
        ))
        .or_default() += n;
    if let Some(a) = out.actors.get_mut(&key.actor_id) {
        a.sessions.insert(sid.to_string());
        if role == "author" {
            a.authored.insert(sid.to_string());
        }
    }
}

fn is_subagent(s: &SessionIn) -> bool {
    s.parent_session_id.is_some() || s.agent_id.is_some()
}

/// The root session a session belongs to (as [`actor_of`] computes it).
pub fn root_session(s: &SessionIn) -> String {
    s.parent_session_id.clone().unwrap_or_else(|| {
        s.session_id
            .split('/')
            .next()
            .unwrap_or(&s.session_id)
            .to_string()
    })
}

fn facts_of<'a>(s: &'a SessionIn, side: Option<&'a str>) -> SessionFacts<'a> {
    SessionFacts {
        source: &s.source,
        session_id: &s.session_id,
        parent_session_id: s.parent_session_id.as_deref(),
        agent_id: s.agent_id.as_deref(),
        agent_name: s.agent_name.as_deref(),
        agent_preset: s.agent_preset.as_deref(),
        team_name: s.team_name.as_deref(),
        sidechain_agent: side,
    }
}

/// The actor a spawn names: its `name` (a teammate when a team is active), else its
/// `subagent_type`; `None` for a spawn that names neither (placeholders do not count).
pub fn spawn_key(
    source: &str,
    root: &str,
    name: Option<&str>,
    subagent_type: Option<&str>,
    team_active: bool,
) -> Option<ActorKey> {
    match (clean(name), clean(subagent_type)) {
        (Some(n), _) => Some(spawned(source, root, n, team_active)),
        (None, Some(t)) => Some(spawned(source, root, t, false)),
        (None, None) => None,
    }
}

fn clean(v: Option<&str>) -> Option<&str> {
    v.map(str::trim).filter(|v| plausible_name(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spawn_and_child_share_one_actor() {
        let parent = SessionIn {
            session_id: "p".into(),
            source: "claude".into(),
            outcome: "success".into(),
            ..Default::default()
        };
        let child = SessionIn {
            session_id: "p/agent-a1".into(),
            source: "claude".into(),
            parent_session_id: Some("p".into()),
            agent_id: Some("a1".into()),
            outcome: "success".into(),
            ..Default::default()
        };
        let events = vec![
            EventIn {
                session_id: "p".into(),
                seq: 1,
                tool_use_id: Some("t".into()),
                facts: vec![Fact::Spawn {
                    tool_use_id: Some("t".into()),
                    subagent_type: Some("db-fixer".into()),
                    name: None,
                    description: None,
                    team_name: None,
                }],
                ..Default::default()
            },
            EventIn {
                session_id: "p".into(),
                seq: 2,
                facts: vec![Fact::AgentLink {
                    tool_use_id: Some("t".into()),
                    agent_id: "a1".into(),
                }],
                ..Default::default()
            },
            EventIn {
                session_id: "p/agent-a1".into(),
                seq: 3,
                facts: vec![Fact::FileEdit {
                    path: "x.rs".into(),
                }],
                ..Default::default()
            },
        ];
        let d = derive(&[parent, child], &events, &[]);
        let ids: Vec<&String> = d.actors.keys().collect();
        assert_eq!(
            ids,
            vec![
                "actor:claude:root_session:p:main",
                "actor:claude:subagent:p:db-fixer"
            ]
        );
        assert_eq!(d.edits[0].actor_id, "actor:claude:subagent:p:db-fixer");
    }
}
