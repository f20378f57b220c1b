//! The team index as a source behind the skills lane and the agent-knowledge layer: the skills,
//! actors, skill uses and edits every machine pushed (schema version 2).
//!
//! The agent-knowledge store is small (a catalog of skills, a few thousand actors and uses) and
//! its reader holds the whole of the lane's logic (skill search with named skills and use counts,
//! actor facts, KD-3's top actor, activity). So the team source does not answer in SQL of its
//! own: it copies the team's rows into a `knowledge.sqlite` of the local layout (one per set of
//! pushed revisions, shared by this user's processes: `mirrors.rs`) and answers
//! through the built-in reader, so a team answer ranks, counts and explains exactly as a local
//! one. A row two machines pushed (the same skill file, actor or use) is kept once.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use rusqlite::params;

use super::mirrors;
use super::source::{rev_of, TeamConn};
use super::vectors::SINCE_VERSION;
use crate::contract::Code;
use crate::lanes::builtin::BuiltinSkills;
use crate::lanes::{
    ActivityQuery, ActorFacts, ActorKey, ActorRow, AgentKnowledgeStats, LaneRequest,
    SkillsActivity, SkillsAnswer, SkillsSource, SourceFailure,
};
use crate::sources::agent_knowledge::{schema, skill_vectors, AgentKnowledgeStore};

/// The skills lane over the team index.
pub struct TeamSkills {
    conn: Arc<TeamConn>,
    mirror: Mutex<Option<Arc<Mirror>>>,
}

/// The team's agent knowledge copied into a local store, for one set of pushed revisions
/// (shared with this user's other processes, `mirrors.rs`).
struct Mirror {
    revs: String,
    _held: mirrors::Held,
    lane: BuiltinSkills,
}

impl TeamSkills {
    pub fn new(conn: Arc<TeamConn>) -> TeamSkills {
        TeamSkills {
            conn,
            mirror: Mutex::new(None),
        }
    }

    /// The mirror of what the machines pushed last: the one this process or another made for
    /// these revisions, else copied again.
    fn mirror(&self) -> Result<Arc<Mirror>, SourceFailure> {
        let revs = self.conn.with_version(|c, version| {
            if version < SINCE_VERSION {
                return Ok(None);
            }
            let r = c.query_one(
                "SELECT string_agg(machine || '@' || rev, ',' ORDER BY machine)
                 FROM kn_store_rev WHERE store = 'agent_knowledge'",
                &[],
            )?;
            Ok(r.get::<_, Option<String>>(0))
        })?;
        let Some(revs) = revs else {
            return Err(SourceFailure::new(
                Code::IndexNotReady,
                "no machine has pushed its skills and actors to the team index yet",
            ));
        };
        let mut guard = self.mirror.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(m) = guard.as_ref().filter(|m| m.revs == revs) {
            return Ok(m.clone());
        }
        let team = self.conn.name("skills");
        // The copy it replaces gives its skills' vectors to those whose text is unchanged.
        let previous = guard.as_ref().map(|m| m._held.path.clone());
        // A copy is of the local layout this build reads: another build's is not opened.
        let key = format!("{revs}|layout {}", schema::SCHEMA_VERSION);
        let held = self.conn.with(|c| {
            Ok(mirrors::open_or_make(&team, &key, |path| {
                copy(c, path, &revs, previous.as_deref())
            }))
        });
        let held = held.and_then(|r| r.map_err(|e| SourceFailure::caused(Code::Internal, e)))?;
        let store = AgentKnowledgeStore::open(&held.path)
            .map_err(|e| SourceFailure::caused(Code::Internal, e))?;
        let m = Arc::new(Mirror {
            revs,
            _held: held,
            lane: BuiltinSkills {
                store: Arc::new(store),
            },
        });
        *guard = Some(m.clone());
        Ok(m)
    }
}

/// Why the team's skills could not be copied into a local store.
#[derive(Debug, thiserror::Error)]
enum CopyError {
    #[error("the team's skills: {0}")]
    Local(#[from] rusqlite::Error),
    #[error("the team's skills: {0}")]
    Team(#[from] postgres::Error),
    #[error("the team's skills: {0}")]
    Io(#[from] std::io::Error),
}

/// Copy every machine's agent-knowledge rows into a new store at `path` (the local layout); the
/// skills' vectors come from `previous` (the copy it replaces) where their text is unchanged.
fn copy(
    pg: &mut postgres::Client,
    path: &std::path::Path,
    revs: &str,
    previous: Option<&std::path::Path>,
) -> Result<(), CopyError> {
    let _ = std::fs::remove_file(path);
    let mut db = rusqlite::Connection::open(path)?;
    // A half-made copy is never read (it is linked into place whole), and a crashed one is
    // swept: no journal, no syncs.
    db.execute_batch("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;")?;
    db.execute_batch(schema::SCHEMA)?;
    let tx = db.transaction()?;
    {
        let mut skill = tx.prepare(
            "INSERT OR IGNORE INTO ak_skill(name, qualified_name, path, description, when_to_use,
                content_hash, plugin, kind, tags) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        )?;
        for r in pg.query(
            "SELECT name, qualified_name, path, description, when_to_use, content_hash, plugin,
                    kind, tags FROM kn_skill ORDER BY machine, id",
            &[],
        )? {
            let (name, qualified, desc): (String, String, String) = (r.get(0), r.get(1), r.get(3));
            let when: Option<String> = r.get(4);
            let tags: String = r.get(8);
            // A skill file several machines pushed is kept once (INSERT OR IGNORE on its path).
            skill.execute(params![
                name,
                qualified,
                r.get::<_, String>(2),
                desc,
                when,
                r.get::<_, String>(5),
                r.get::<_, Option<String>>(6),
                r.get::<_, String>(7),
                tags
            ])?;
        }
        // The skills' sentence vectors, as the local builder makes them, so the team's skills
        // rank as a local catalog would.
        skill_vectors::fill(&tx, previous)?;
        let mut def = tx.prepare(
            "INSERT OR IGNORE INTO ak_agent_def(name, path, description, model, tools,
                content_hash) VALUES(?1, ?2, ?3, ?4, ?5, ?6)",
        )?;
        for r in pg.query(
            "SELECT name, path, description, model, tools, content_hash FROM kn_agent_def
             ORDER BY machine, id",
            &[],
        )? {
            def.execute(params![
                r.get::<_, String>(0),
                r.get::<_, String>(1),
                r.get::<_, String>(2),
                r.get::<_, Option<String>>(3),
                r.get::<_, String>(4),
                r.get::<_, String>(5)
            ])?;
        }
        let mut actor = tx.prepare(
            "INSERT OR IGNORE INTO ak_actor(actor_id, name, kind, source, root_session,
                first_seen, last_seen, last_seen_ms, sessions, events, skill_uses, edits,
                outcome_success, outcome_failure, outcome, definition)
             VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
        )?;
        for r in pg.query(
            "SELECT actor_id, name, kind, source, root_session, first_seen, last_seen,
                    last_seen_ms, sessions, events, skill_uses, edits, outcome_success,
                    outcome_failure, outcome, definition FROM kn_actor ORDER BY machine, actor_id",
            &[],
        )? {
            actor.execute(params![
                r.get::<_, String>(0),
                r.get::<_, String>(1),
                r.get::<_, String>(2),
                r.get::<_, String>(3),
                r.get::<_, String>(4),
                r.get::<_, Option<String>>(5),
                r.get::<_, Option<String>>(6),
                r.get::<_, Option<i64>>(7),
                r.get::<_, i64>(8),
                r.get::<_, i64>(9),
                r.get::<_, i64>(10),
                r.get::<_, i64>(11),
                r.get::<_, i64>(12),
                r.get::<_, i64>(13),
                r.get::<_, String>(14),
                r.get::<_, Option<String>>(15)
            ])?;
        }
        let mut worked = tx.prepare(
            "INSERT OR IGNORE INTO ak_actor_session(actor_id, session_id, role, sidechain_agent,
                events) VALUES(?1, ?2, ?3, ?4, ?5)",
        )?;
        for r in pg.query(
            "SELECT actor_id, session_id, role, sidechain_agent, events FROM kn_actor_session
             ORDER BY machine, actor_id, session_id",
            &[],
        )? {
            worked.execute(params![
                r.get::<_, String>(0),
                r.get::<_, String>(1),
                r.get::<_, String>(2),
                r.get::<_, String>(3),
                r.get::<_, i64>(4)
            ])?;
        }
        // A use or an edit two machines pushed (the same session on both) counts once.
        let mut seen: HashSet<(String, String, i64, String)> = HashSet::new();
        let mut used = tx.prepare(
            "INSERT INTO ak_skill_use(actor_id, skill_name, skill_base, skill_plugin, session_id,
                seq, time, time_ms, via, outcome) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        )?;
        for r in pg.query(
            "SELECT actor_id, skill_name, skill_base, skill_plugin, session_id, seq, time,
                    time_ms, via, outcome FROM kn_skill_use ORDER BY machine, id",
            &[],
        )? {
            let key = (r.get(0), r.get(4), r.get(5), r.get(1));
            if !seen.insert(key) {
                continue;
            }
            used.execute(params![
                r.get::<_, String>(0),
                r.get::<_, String>(1),
                r.get::<_, String>(2),
                r.get::<_, Option<String>>(3),
                r.get::<_, String>(4),
                r.get::<_, i64>(5),
                r.get::<_, Option<String>>(6),
                r.get::<_, Option<i64>>(7),
                r.get::<_, String>(8),
                r.get::<_, String>(9)
            ])?;
        }
        seen.clear();
        let mut edit = tx.prepare(
            "INSERT INTO ak_edit(actor_id, path, abs_path, rel_path, session_id, seq, time,
                time_ms) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )?;
        for r in pg.query(
            "SELECT actor_id, path, abs_path, rel_path, session_id, seq, time, time_ms
             FROM kn_edit ORDER BY machine, id",
            &[],
        )? {
            let key = (r.get(0), r.get(4), r.get(5), r.get(1));
            if !seen.insert(key) {
                continue;
            }
            edit.execute(params![
                r.get::<_, String>(0),
                r.get::<_, String>(1),
                r.get::<_, Option<String>>(2),
                r.get::<_, Option<String>>(3),
                r.get::<_, String>(4),
                r.get::<_, i64>(5),
                r.get::<_, Option<String>>(6),
                r.get::<_, Option<i64>>(7)
            ])?;
        }
        let mut hour = tx.prepare(
            "INSERT OR IGNORE INTO ak_activity(session_id, sidechain_agent, hour, events)
             VALUES(?1, ?2, ?3, ?4)",
        )?;
        for r in pg.query(
            "SELECT session_id, sidechain_agent, hour, events FROM kn_activity
             ORDER BY machine, session_id, hour",
            &[],
        )? {
            hour.execute(params![
                r.get::<_, String>(0),
                r.get::<_, String>(1),
                r.get::<_, i64>(2),
                r.get::<_, i64>(3)
            ])?;
        }
        let pushed: Option<String> = pg
            .query_one(
                "SELECT max(pushed_at)::text FROM kn_store_rev WHERE store = 'agent_knowledge'",
                &[],
            )?
            .get(0);
        let mut meta = tx.prepare("INSERT INTO meta(key, value) VALUES(?1, ?2)")?;
        meta.execute(params!["index_rev", rev_of(revs)])?;
        meta.execute(params![
            "schema_version",
            schema::SCHEMA_VERSION.to_string()
        ])?;
        meta.execute(params!["built_at", pushed.unwrap_or_default()])?;
    }
    tx.commit()?;
    Ok(())
}

impl SkillsSource for TeamSkills {
    fn name(&self) -> String {
        self.conn.name("skills")
    }
    fn search(&self, req: &LaneRequest) -> Result<SkillsAnswer, SourceFailure> {
        self.mirror()?.lane.search(req)
    }
    fn stats(&self) -> Result<AgentKnowledgeStats, SourceFailure> {
        self.mirror()?.lane.stats()
    }
    fn actor_for_session(
        &self,
        session_id: &str,
        sidechain_agent: Option<&str>,
    ) -> Result<Option<ActorKey>, SourceFailure> {
        self.mirror()?
            .lane
            .actor_for_session(session_id, sidechain_agent)
    }
    fn facts_for(
        &self,
        abs_paths: &[String],
        actor_ids: &[String],
    ) -> Result<ActorFacts, SourceFailure> {
        self.mirror()?.lane.facts_for(abs_paths, actor_ids)
    }
    fn actor(&self, actor_id: &str) -> Result<Option<ActorRow>, SourceFailure> {
        self.mirror()?.lane.actor(actor_id)
    }
    fn sessions_of(&self, actor_id: &str) -> Result<Vec<String>, SourceFailure> {
        self.mirror()?.lane.sessions_of(actor_id)
    }
    fn top_actor_for_skill(&self, skill: &str) -> Result<Option<(String, u64)>, SourceFailure> {
        self.mirror()?.lane.top_actor_for_skill(skill)
    }
    fn activity(&self, q: &ActivityQuery) -> Result<SkillsActivity, SourceFailure> {
        self.mirror()?.lane.activity(q)
    }
}
