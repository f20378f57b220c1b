//! Derivation of actors, skill uses and edits from the structured facts of an episodes source.
//!
//! This is pure logic over rows already read (no SQL), so identity and de-duplication rules are
//! testable on their own. It runs as the rows arrive, in two passes over the fact-carrying
//! events in (session, seq) order: [`SpawnPass`] collects every spawn and agent link (small),
//! then [`FactPass`] credits each event and hands back each session's skill uses and edits as
//! the next session begins, so a build holds one session's events, never the history's
//! (docs/L3.md, "Building"). The rows and their order are those of deriving everything
//! at once ([`derive`]). Actor ids come only from [`crate::sources::actor_id`]; a subagent
//! transcript that can be linked to the spawn in its parent's transcript (`spawn_tool_use_id`, or
//! an `AgentLink` naming its agent id) takes the spawn's name (`name`, else `subagent_type`), so
//! the spawn and the child's own events agree on one `actor_id`.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::uses::{dedupe_uses, normalise, plausible_name, RawUse};
use crate::sources::actor_id::{spawned, ActorKey, SessionFacts};
use crate::sources::episodes::model::Fact;
use index::{resolve, SessionIndex, Spawns};

mod index;

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
    /// The source's change mark of the session: it moves whenever anything derivation reads of
    /// the session changes (`None`: the source keeps none, and every build is a full one).
    pub mark: Option<i64>,
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

/// The actors and who worked in which session: known only once every event was read.
#[derive(Debug, Default)]
pub struct Actors {
    pub actors: BTreeMap<String, ActorAcc>,
    pub actor_sessions: ActorSessions,
}

/// The skill uses and edits of one session, sorted (edits without repeats): the rows of
/// `ak_skill_use` and `ak_edit` in the order they are written.
#[derive(Debug, Default)]
pub struct SessionRows {
    pub uses: Vec<UseRow>,
    pub edits: Vec<EditRow>,
}

/// Everything derived at once (the rows of every session concatenated, in session order).
#[derive(Debug, Default)]
pub struct Derived {
    pub actors: Actors,
    pub rows: SessionRows,
}

/// Events given to a pass out of the order it needs, `(session_id, seq)` ascending.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("event {after_session}#{after_seq} came after {before_session}#{before_seq}")]
pub struct OutOfOrder {
    pub before_session: String,
    pub before_seq: i64,
    pub after_session: String,
    pub after_seq: i64,
}

/// The last (session, seq) a pass was given, to refuse a source that breaks the order.
#[derive(Default)]
struct EventOrder(Option<(String, i64)>);

impl EventOrder {
    /// Whether `ev` starts a new session.
    fn check(&mut self, ev: &EventIn) -> Result<bool, OutOfOrder> {
        let Some((sid, seq)) = &mut self.0 else {
            self.0 = Some((ev.session_id.clone(), ev.seq));
            return Ok(true);
        };
        // Equal keys pass: a source may hold one (session, seq) twice, read in its own order.
        if (sid.as_str(), *seq) > (ev.session_id.as_str(), ev.seq) {
            return Err(OutOfOrder {
                before_session: sid.clone(),
                before_seq: *seq,
                after_session: ev.session_id.clone(),
                after_seq: ev.seq,
            });
        }
        *seq = ev.seq;
        if *sid == ev.session_id {
            return Ok(false);
        }
        sid.clone_from(&ev.session_id);
        Ok(true)
    }
}

/// Who did what, from the sessions, the fact-carrying events and the per-group counts, all in
/// memory: the two passes of [`SpawnPass`] and [`FactPass`] over one slice of events.
pub fn derive(
    sessions: &[SessionIn],
    events: &[EventIn],
    groups: &[GroupIn],
) -> Result<Derived, OutOfOrder> {
    let mut spawns = SpawnPass::new(sessions);
    for ev in events {
        spawns.event(ev)?;
    }
    let mut pass = spawns.authors(groups);
    let mut rows = SessionRows::default();
    let mut add = |r: SessionRows| {
        rows.uses.extend(r.uses);
        rows.edits.extend(r.edits);
    };
    for ev in events {
        if let Some(done) = pass.event(ev)? {
            add(done);
        }
    }
    let (last, actors) = pass.finish();
    if let Some(done) = last {
        add(done);
    }
    Ok(Derived { actors, rows })
}

/// The first pass over the fact-carrying events: every spawn and agent link of every root
/// session, which the second pass needs before any event can be credited (a subagent's events
/// take the actor of the spawn in its parent, which may be read later).
pub struct SpawnPass<'a> {
    index: SessionIndex<'a>,
    spawns: Spawns,
    order: EventOrder,
}

impl<'a> SpawnPass<'a> {
    pub fn new(sessions: &'a [SessionIn]) -> Self {
        SpawnPass {
            index: SessionIndex::new(sessions),
            spawns: Spawns::default(),
            order: EventOrder::default(),
        }
    }

    pub fn event(&mut self, ev: &EventIn) -> Result<(), OutOfOrder> {
        self.order.check(ev)?;
        self.spawns.add(&self.index, ev);
        Ok(())
    }

    /// Every session's author, each (session, sidechain agent) group's events, every spawn:
    /// the actors known before the second pass, touched in the order a key is decided by.
    pub fn authors(self, groups: &[GroupIn]) -> FactPass<'a> {
        let mut pass = FactPass {
            index: self.index,
            spawns: self.spawns,
            resolved: HashMap::new(),
            out: Actors::default(),
            pending_uses: HashMap::new(),
            open: None,
            order: EventOrder::default(),
        };
        pass.add_authors(groups);
        for sp in &pass.spawns.spawns {
            pass.out.touch(&sp.key);
            pass.out
                .add_session(&sp.key, &sp.session_id, "spawned", "", 0);
            if let Some(a) = pass.out.actors.get_mut(&sp.key.actor_id) {
                a.seen(sp.time_ms);
            }
        }
        pass
    }
}

/// The second pass: edits and teammates in event order, skill uses per session, each credited
/// to the actor of its (session, sidechain agent). A session's rows are handed back when the
/// next session begins, so only one session's are held.
pub struct FactPass<'a> {
    index: SessionIndex<'a>,
    spawns: Spawns,
    /// The actor of each (session, sidechain agent), computed once.
    resolved: HashMap<(String, Option<String>), ActorKey>,
    out: Actors,
    /// Skill uses per actor: counted once every event is read (an actor a later teammate
    /// message makes known still counts the uses before it).
    pending_uses: HashMap<String, u64>,
    open: Option<OpenSession>,
    order: EventOrder,
}

/// The session whose events are being read.
struct OpenSession {
    session_id: String,
    uses: Vec<RawUse>,
    edits: Vec<EditRow>,
}

impl<'a> FactPass<'a> {
    /// One event; the rows of the previous session when this one begins a new session.
    pub fn event(&mut self, ev: &EventIn) -> Result<Option<SessionRows>, OutOfOrder> {
        let closed = match self.order.check(ev)? {
            true => self.open.take().map(|s| self.close(s)),
            false => None,
        };
        let mut open = self.open.take().unwrap_or_else(|| OpenSession {
            session_id: ev.session_id.clone(),
            uses: Vec::new(),
            edits: Vec::new(),
        });
        for f in &ev.facts {
            match f {
                Fact::SkillUse { name, via } => open.uses.push(RawUse {
                    seq: ev.seq,
                    name: name.clone(),
                    via: via.clone(),
                    tool_use_id: ev.tool_use_id.clone(),
                    sidechain: ev.sidechain_agent.clone(),
                    time_ms: ev.time_ms,
                }),
                Fact::FileEdit { path } if !path.trim().is_empty() => {
                    let edit = self.edit(ev, path);
                    open.edits.push(edit);
                }
                Fact::TeammateMessage { teammate_id } => self.teammate(ev, teammate_id),
                _ => {}
            }
        }
        self.open = Some(open);
        Ok(closed)
    }

    /// The rows of the last session, and the actors with every count.
    pub fn finish(mut self) -> (Option<SessionRows>, Actors) {
        let last = self.open.take().map(|s| self.close(s));
        for (actor_id, n) in std::mem::take(&mut self.pending_uses) {
            if let Some(a) = self.out.actors.get_mut(&actor_id) {
                a.skill_uses += n;
            }
        }
        (last, self.out)
    }

    fn resolve(&mut self, sid: &str, side: Option<&str>) -> ActorKey {
        resolve(&mut self.resolved, &self.index, &self.spawns, sid, side)
    }

    /// Every session has an author, even one without events; each (session, sidechain) group
    /// adds its events and time range to its actor.
    fn add_authors(&mut self, groups: &[GroupIn]) {
        let sessions = self.index.sessions;
        for s in sessions {
            let key = self.resolve(&s.session_id, None);
            self.out.touch(&key);
            self.out.add_session(&key, &s.session_id, "author", "", 0);
        }
        for g in groups {
            let key = self.resolve(&g.session_id, g.sidechain_agent.as_deref());
            self.out.touch(&key);
            let side = g.sidechain_agent.clone().unwrap_or_default();
            self.out
                .add_session(&key, &g.session_id, "author", &side, g.events);
            if let Some(a) = self.out.actors.get_mut(&key.actor_id) {
                a.events += g.events;
                a.seen(g.min_ms);
                a.seen(g.max_ms);
            }
        }
    }

    fn edit(&mut self, ev: &EventIn, path: &str) -> EditRow {
        let key = self.resolve(&ev.session_id, ev.sidechain_agent.as_deref());
        let cwd = self
            .index
            .get(&ev.session_id)
            .and_then(|s| s.cwd.as_deref());
        let (abs_path, rel_path) = normalise(path, cwd);
        if let Some(a) = self.out.actors.get_mut(&key.actor_id) {
            a.edits += 1;
        }
        EditRow {
            session_id: ev.session_id.clone(),
            seq: ev.seq,
            path: path.to_string(),
            actor_id: key.actor_id,
            abs_path,
            rel_path,
            time_ms: ev.time_ms,
        }
    }

    fn teammate(&mut self, ev: &EventIn, teammate_id: &str) {
        let id = teammate_id.trim();
        if !plausible_name(id) || matches!(id, "system" | "unknown") {
            return;
        }
        let root = self.index.root_of(&ev.session_id);
        let key = spawned(&self.index.source_of(&ev.session_id), &root, id, true);
        self.out.touch(&key);
        self.out
            .add_session(&key, &ev.session_id, "teammate", "", 0);
        if let Some(a) = self.out.actors.get_mut(&key.actor_id) {
            a.seen(ev.time_ms);
        }
    }

    /// A session's rows: one skill use per use after de-duplication, with the session's
    /// outcome, and its edits.
    fn close(&mut self, s: OpenSession) -> SessionRows {
        let OpenSession {
            session_id: sid,
            uses: raw,
            mut edits,
        } = s;
        edits.sort();
        edits.dedup();
        let outcome = self
            .index
            .get(&sid)
            .map(|s| s.outcome.clone())
            .unwrap_or_else(|| "unknown".to_string());
        let mut uses = Vec::new();
        for u in dedupe_uses(raw) {
            let key = self.resolve(&sid, u.sidechain.as_deref());
            *self.pending_uses.entry(key.actor_id.clone()).or_default() += 1;
            uses.push(UseRow {
                session_id: sid.clone(),
                seq: u.seq,
                skill_name: u.name.trim().trim_start_matches('/').to_string(),
                actor_id: key.actor_id,
                via: u.via,
                time_ms: u.time_ms,
                outcome: outcome.clone(),
            });
        }
        uses.sort();
        SessionRows { uses, edits }
    }
}

impl Actors {
    /// Make sure the actor exists (its first key wins).
    fn touch(&mut self, key: &ActorKey) {
        let a = self.actors.entry(key.actor_id.clone()).or_default();
        a.key.get_or_insert_with(|| key.clone());
    }

    fn add_session(&mut self, key: &ActorKey, sid: &str, role: &'static str, side: &str, n: u64) {
        *self
            .actor_sessions
            .entry((
                key.actor_id.clone(),
                sid.to_string(),
                role,
                side.to_string(),
            ))
            .or_default() += n;
        if let Some(a) = self.actors.get_mut(&key.actor_id) {
            a.sessions.insert(sid.to_string());
            if role == "author" {
                a.authored.insert(sid.to_string());
            }
        }
    }
}

pub(super) fn is_subagent(s: &SessionIn) -> bool {
    s.parent_session_id.is_some() || s.agent_id.is_some()
}

/// The family of a session: its root session as actor ids spell it. Every actor, spawn and link
/// of a session stays inside its family (actor ids hold the root), so a family can be derived
/// again without the others (`build/incremental.rs`).
pub fn family(s: &SessionIn) -> String {
    crate::sources::actor_id::id_part(&root_session(s))
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

pub(super) fn facts_of<'a>(s: &'a SessionIn, side: Option<&'a str>) -> SessionFacts<'a> {
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
        let d = derive(&[parent, child], &events, &[]).expect("in order");
        let ids: Vec<&String> = d.actors.actors.keys().collect();
        assert_eq!(
            ids,
            vec![
                "actor:claude:root_session:p:main",
                "actor:claude:subagent:p:db-fixer"
            ]
        );
        assert_eq!(d.rows.edits[0].actor_id, "actor:claude:subagent:p:db-fixer");
    }
}
