//! Read-only access to `knowledge.sqlite` for the engine: skill search, actor facts, the actor
//! that used a skill most (KD-3), and the actor of a session.
//!
//! A small pool of read-only connections is kept. The builder replaces the file by renaming a new
//! one over it, so the pool notices when the file on disk is a different one (size, mtime, inode)
//! and reopens, instead of reading a replaced store forever.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use rusqlite::{params, Connection, OptionalExtension, Row};

use super::uses::split_skill_name;
use super::{schema, AgentKnowledgeError};
use crate::contract::{ActorKind, DispatchMode, Outcome};
use crate::sources::actor_id::ActorKey;

/// At most this many recorded uses are listed per skill (most recent first).
pub const USED_BY_MAX: usize = 10;

/// Counts and revision of the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentKnowledgeStats {
    pub index_rev: Option<String>,
    pub built_at: Option<String>,
    pub skills: u64,
    pub actors: u64,
    pub skill_uses: u64,
}

/// A skill that matched a search.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillRow {
    pub name: String,
    /// `plugin:name` for plugin skills, else `name`.
    pub qualified_name: String,
    /// The SKILL.md path (the lane locator); empty for a skill used in sessions but not found in
    /// the catalog (`catalogued: false`).
    pub path: String,
    pub description: String,
    pub when_to_use: Option<String>,
    pub content_hash: String,
    pub plugin: Option<String>,
    pub tags: Vec<String>,
    pub catalogued: bool,
    /// BM25 of its words (higher is better); 0 when only the name, its meaning or a filter
    /// matched.
    pub bm25: f64,
    /// The cosine of its sentence vector to the question's, when near enough to count.
    pub cosine: Option<f32>,
    /// What the catalog's skills are ranked by after the named ones (`skills.rs`).
    pub relevance: f64,
    /// The query names this skill (all of its name terms are query terms).
    pub named: bool,
    pub uses: u64,
    /// (actor_id, session_id, seq) of recorded uses, most recent first, at most [`USED_BY_MAX`].
    pub used_by: Vec<(String, String, u64)>,
    pub why: Vec<String>,
}

/// An actor as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActorRow {
    pub actor_id: String,
    pub name: String,
    pub kind: ActorKind,
    pub source: String,
    pub root_session: String,
    pub first_seen: Option<String>,
    pub last_seen: Option<String>,
    pub sessions: u64,
    pub events: u64,
    pub skill_uses: u64,
    pub edits: u64,
    pub outcome_success: u64,
    pub outcome_failure: u64,
    pub outcome: Outcome,
    /// Name of the agent definition whose name matches, if any.
    pub definition: Option<String>,
}

impl ActorRow {
    pub fn key(&self) -> ActorKey {
        ActorKey {
            actor_id: self.actor_id.clone(),
            name: self.name.clone(),
            kind: self.kind,
            source: self.source.clone(),
            root_session: self.root_session.clone(),
        }
    }

    /// The dispatch mode the contract gives this actor's kind.
    pub fn dispatch_mode(&self) -> DispatchMode {
        self.kind.dispatch_mode()
    }
}

/// What L3 knows about actors that the lanes alone cannot give (the engine's `ActorFacts`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ActorFacts {
    /// path → actors that edited it; keyed by the path as written, its absolute form and its
    /// form relative to the session's cwd.
    pub editors: HashMap<String, Vec<ActorKey>>,
    /// actor_id → (skill name, uses), most used first.
    pub skill_uses: HashMap<String, Vec<(String, u64)>>,
    /// actor_id → actor.
    pub known: HashMap<String, ActorKey>,
    /// actor_id → the actor's outcome.
    pub outcomes: HashMap<String, Outcome>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct FileIdent {
    len: u64,
    mtime: Option<SystemTime>,
    ino: u64,
}

fn file_ident(path: &Path) -> Option<FileIdent> {
    let m = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    let ino = std::os::unix::fs::MetadataExt::ino(&m);
    #[cfg(not(unix))]
    let ino = 0;
    Some(FileIdent {
        len: m.len(),
        mtime: m.modified().ok(),
        ino,
    })
}

#[derive(Default)]
struct Pool {
    ident: Option<FileIdent>,
    conns: Vec<Connection>,
}

/// The read-only agent-knowledge store.
pub struct AgentKnowledgeStore {
    path: PathBuf,
    pool: Mutex<Pool>,
    /// The catalog's search index, for the store revision it was made from.
    skill_index: Mutex<Option<std::sync::Arc<skill_index::SkillIndex>>>,
}

const ACTOR_COLS: &str = "actor_id, name, kind, source, root_session, first_seen, last_seen,
    sessions, events, skill_uses, edits, outcome_success, outcome_failure, outcome, definition";

fn actor_from_row(r: &Row<'_>) -> rusqlite::Result<ActorRow> {
    let n = |i: usize| -> rusqlite::Result<u64> { Ok(r.get::<_, i64>(i)?.max(0) as u64) };
    Ok(ActorRow {
        actor_id: r.get(0)?,
        name: r.get(1)?,
        kind: r.get(2)?,
        source: r.get(3)?,
        root_session: r.get(4)?,
        first_seen: r.get(5)?,
        last_seen: r.get(6)?,
        sessions: n(7)?,
        events: n(8)?,
        skill_uses: n(9)?,
        edits: n(10)?,
        outcome_success: n(11)?,
        outcome_failure: n(12)?,
        outcome: r.get(13)?,
        definition: r.get(14)?,
    })
}

/// SQL condition (on `ak_skill_use`) and its two parameters for uses of the skill named `q`.
///
/// `plugin:skill` matches that exact name or the bare `skill`; a bare `skill` matches that skill
/// under any plugin (a catalog entry outside the plugin cache does not know its plugin).
fn use_filter(q: &str) -> (&'static str, [String; 2]) {
    let (plugin, base) = split_skill_name(q);
    let full = q.trim().trim_start_matches('/').to_lowercase();
    match plugin {
        Some(_) => (
            "(lower(skill_name) = ?1 OR (skill_base = ?2 AND skill_plugin IS NULL))",
            [full, base],
        ),
        None => ("(?1 = '' AND skill_base = ?2)", [String::new(), base]),
    }
}

impl AgentKnowledgeStore {
    pub fn open(path: &Path) -> Result<Self, AgentKnowledgeError> {
        if !path.exists() {
            return Err(AgentKnowledgeError::Missing(path.to_path_buf()));
        }
        let store = AgentKnowledgeStore {
            path: path.to_path_buf(),
            pool: Mutex::new(Pool::default()),
            skill_index: Mutex::new(None),
        };
        store.with_conn(|c| c.query_row("SELECT count(*) FROM ak_actor", [], |_| Ok(())))?;
        Ok(store)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn with_conn<T>(
        &self,
        f: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> Result<T, AgentKnowledgeError> {
        let ident = file_ident(&self.path);
        if ident.is_none() {
            return Err(AgentKnowledgeError::Missing(self.path.clone()));
        }
        let pooled = self.pool.lock().ok().and_then(|mut p| {
            if p.ident != ident {
                p.conns.clear();
                p.ident = ident.clone();
            }
            p.conns.pop()
        });
        let sql = |source| AgentKnowledgeError::Sql {
            path: self.path.clone(),
            source,
        };
        let conn = match pooled {
            Some(c) => c,
            None => schema::open_ro(&self.path).map_err(sql)?,
        };
        let out = f(&conn).map_err(sql);
        if let Ok(mut p) = self.pool.lock() {
            if p.ident == ident && p.conns.len() < 4 {
                p.conns.push(conn);
            }
        }
        out
    }

    pub fn stats(&self) -> Result<AgentKnowledgeStats, AgentKnowledgeError> {
        self.with_conn(|c| {
            let count = |sql: &str| -> rusqlite::Result<u64> {
                Ok(c.query_row(sql, [], |r| r.get::<_, i64>(0))?.max(0) as u64)
            };
            Ok(AgentKnowledgeStats {
                index_rev: schema::meta_get(c, "index_rev"),
                built_at: schema::meta_get(c, "built_at"),
                skills: count("SELECT count(*) FROM ak_skill")?,
                actors: count("SELECT count(*) FROM ak_actor")?,
                skill_uses: count("SELECT count(*) FROM ak_skill_use")?,
            })
        })
    }

    /// The actor that used the skill most (ties: latest use, then actor_id) — contract KD-3.
    pub fn top_actor_for_skill(
        &self,
        skill: &str,
    ) -> Result<Option<(String, u64)>, AgentKnowledgeError> {
        let (cond, args) = use_filter(skill);
        if args[1].is_empty() {
            return Ok(None);
        }
        self.with_conn(|c| {
            let sql = format!(
                "SELECT actor_id, count(*) AS n, max(coalesce(time_ms, -1)) AS latest,
                        max(session_id || char(31) || printf('%012d', seq)) AS last_locator
                 FROM ak_skill_use WHERE {cond}
                 GROUP BY actor_id ORDER BY n DESC, latest DESC, last_locator DESC, actor_id ASC
                 LIMIT 1"
            );
            c.query_row(&sql, params![args[0], args[1]], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?.max(0) as u64))
            })
            .optional()
        })
    }

    /// Facts of the given actors (all actors when `actor_ids` is empty).
    pub fn actor_facts(&self, actor_ids: &[String]) -> Result<ActorFacts, AgentKnowledgeError> {
        let only: HashSet<&str> = actor_ids.iter().map(String::as_str).collect();
        let keep = |id: &str| only.is_empty() || only.contains(id);
        self.with_conn(|c| {
            let mut facts = ActorFacts::default();
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {ACTOR_COLS} FROM ak_actor ORDER BY actor_id"
            ))?;
            for row in stmt.query_map([], actor_from_row)? {
                let a = row?;
                if keep(&a.actor_id) {
                    facts.outcomes.insert(a.actor_id.clone(), a.outcome);
                    facts.known.insert(a.actor_id.clone(), a.key());
                }
            }
            let mut editors: BTreeMap<String, Vec<ActorKey>> = BTreeMap::new();
            let mut stmt = c.prepare_cached(
                "SELECT DISTINCT actor_id, path, abs_path, rel_path FROM ak_edit
                 ORDER BY actor_id, path",
            )?;
            let mut rows = stmt.query([])?;
            while let Some(r) = rows.next()? {
                let actor: String = r.get(0)?;
                let Some(key) = facts.known.get(&actor) else {
                    continue;
                };
                for i in 1..4 {
                    if let Some(p) = r.get::<_, Option<String>>(i)? {
                        let list = editors.entry(p).or_default();
                        if !list.iter().any(|k| k.actor_id == key.actor_id) {
                            list.push(key.clone());
                        }
                    }
                }
            }
            facts.editors = editors.into_iter().collect();
            let mut stmt = c.prepare_cached(
                "SELECT actor_id, max(skill_name), count(*) AS n FROM ak_skill_use
                 GROUP BY actor_id, skill_base, skill_plugin ORDER BY actor_id, n DESC, 2",
            )?;
            let mut rows = stmt.query([])?;
            while let Some(r) = rows.next()? {
                let actor: String = r.get(0)?;
                if keep(&actor) {
                    let n = r.get::<_, i64>(2)?.max(0) as u64;
                    facts
                        .skill_uses
                        .entry(actor)
                        .or_default()
                        .push((r.get(1)?, n));
                }
            }
            Ok(facts)
        })
    }

    /// Facts about just what a response needs: the editors of `abs_paths` (absolute file
    /// paths), and the outcome, identity and skill uses of `actor_ids` and of those editors.
    /// Cost grows with the response, not with the store (a million events stay fast).
    pub fn facts_for(
        &self,
        abs_paths: &[String],
        actor_ids: &[String],
    ) -> Result<ActorFacts, AgentKnowledgeError> {
        self.with_conn(|c| {
            let mut facts = ActorFacts::default();
            let mut wanted: BTreeMap<String, ()> =
                actor_ids.iter().map(|a| (a.clone(), ())).collect();
            let mut edits: Vec<(String, String)> = Vec::new();
            {
                let mut stmt = c.prepare_cached(
                    "SELECT DISTINCT actor_id FROM ak_edit WHERE abs_path = ?1 ORDER BY actor_id",
                )?;
                for p in abs_paths {
                    let rows = stmt.query_map([p], |r| r.get::<_, String>(0))?;
                    for a in rows {
                        let a = a?;
                        wanted.insert(a.clone(), ());
                        edits.push((p.clone(), a));
                    }
                }
            }
            let mut actor_stmt = c.prepare_cached(&format!(
                "SELECT {ACTOR_COLS} FROM ak_actor WHERE actor_id = ?1"
            ))?;
            let mut uses_stmt = c.prepare_cached(
                "SELECT max(skill_name), count(*) AS n FROM ak_skill_use WHERE actor_id = ?1
                 GROUP BY skill_base, skill_plugin ORDER BY n DESC, 1",
            )?;
            for id in wanted.keys() {
                if let Some(a) = actor_stmt.query_row([id], actor_from_row).optional()? {
                    facts.outcomes.insert(a.actor_id.clone(), a.outcome);
                    facts.known.insert(a.actor_id.clone(), a.key());
                }
                let uses: Vec<(String, u64)> = uses_stmt
                    .query_map([id], |r| Ok((r.get(0)?, r.get::<_, i64>(1)?.max(0) as u64)))?
                    .collect::<Result<_, _>>()?;
                if !uses.is_empty() {
                    facts.skill_uses.insert(id.clone(), uses);
                }
            }
            for (path, actor) in edits {
                if let Some(key) = facts.known.get(&actor) {
                    facts.editors.entry(path).or_default().push(key.clone());
                }
            }
            Ok(facts)
        })
    }
}

mod activity;
mod actors;
mod skill_index;
mod skills;
pub use skill_index::SkillIndexError;
pub use skills::SkillSearch;

pub use activity::{ActivityActor, ActivityBucket, ActivitySkillUse, SkillsActivity};
