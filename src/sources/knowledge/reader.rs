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
use super::{schema, KnowledgeError};
use crate::sources::actor_id::{self, ActorKey};
use crate::text::tokens;

/// At most this many recorded uses are listed per skill (most recent first).
pub const USED_BY_MAX: usize = 10;

/// Counts and revision of the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnowledgeStats {
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
    /// FTS5 BM25 with the sign flipped (higher is better); 0 when only the name or a filter
    /// matched.
    pub bm25: f64,
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
    pub kind: String,
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
    /// `success`, `failure` or `unknown`.
    pub outcome: String,
    /// Name of the agent definition whose name matches, if any.
    pub definition: Option<String>,
}

impl ActorRow {
    pub fn key(&self) -> ActorKey {
        ActorKey {
            actor_id: self.actor_id.clone(),
            name: self.name.clone(),
            kind: kind_static(&self.kind),
            source: self.source.clone(),
            root_session: self.root_session.clone(),
        }
    }

    /// The dispatch mode the contract gives this actor's kind.
    pub fn dispatch_mode(&self) -> &'static str {
        actor_id::dispatch_mode(&self.kind)
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
    /// actor_id → `success` / `failure` / `unknown`.
    pub outcomes: HashMap<String, String>,
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
pub struct KnowledgeStore {
    path: PathBuf,
    pool: Mutex<Pool>,
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

impl KnowledgeStore {
    pub fn open(path: &Path) -> Result<Self, KnowledgeError> {
        if !path.exists() {
            return Err(KnowledgeError::Missing(path.to_path_buf()));
        }
        let store = KnowledgeStore {
            path: path.to_path_buf(),
            pool: Mutex::new(Pool::default()),
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
    ) -> Result<T, KnowledgeError> {
        let ident = file_ident(&self.path);
        if ident.is_none() {
            return Err(KnowledgeError::Missing(self.path.clone()));
        }
        let pooled = self.pool.lock().ok().and_then(|mut p| {
            if p.ident != ident {
                p.conns.clear();
                p.ident = ident.clone();
            }
            p.conns.pop()
        });
        let sql = |source| KnowledgeError::Sql {
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

    pub fn stats(&self) -> Result<KnowledgeStats, KnowledgeError> {
        self.with_conn(|c| {
            let count = |sql: &str| -> rusqlite::Result<u64> {
                Ok(c.query_row(sql, [], |r| r.get::<_, i64>(0))?.max(0) as u64)
            };
            Ok(KnowledgeStats {
                index_rev: schema::meta_get(c, "index_rev"),
                built_at: schema::meta_get(c, "built_at"),
                skills: count("SELECT count(*) FROM ak_skill")?,
                actors: count("SELECT count(*) FROM ak_actor")?,
                skill_uses: count("SELECT count(*) FROM ak_skill_use")?,
            })
        })
    }

    /// Skills for stemmed query `terms` (BM25 over name, description, when_to_use and tags),
    /// plus skills the query names. A skill the query names ranks first, by uses; the rest by
    /// BM25, then uses. A non-empty `skills_filter` keeps only those skills (and with no terms,
    /// lists them).
    pub fn search_skills(
        &self,
        terms: &[String],
        skills_filter: &[String],
        limit: usize,
    ) -> Result<Vec<SkillRow>, KnowledgeError> {
        let terms: Vec<String> = terms
            .iter()
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .collect();
        if limit == 0 || (terms.is_empty() && skills_filter.is_empty()) {
            return Ok(Vec::new());
        }
        let term_set: HashSet<&str> = terms.iter().map(String::as_str).collect();
        let names = |name: &str| {
            let nt = tokens::query_terms(name);
            !nt.is_empty() && nt.iter().all(|t| term_set.contains(t.as_str()))
        };
        let filtered = |name: &str, qualified: &str| {
            skills_filter.is_empty()
                || skills_filter.iter().any(|f| {
                    let f = f.trim().trim_start_matches('/').to_lowercase();
                    let (fp, fb) = split_skill_name(&f);
                    f == name.to_lowercase()
                        || f == qualified.to_lowercase()
                        || (fp.is_none() && fb == name.to_lowercase())
                })
        };
        self.with_conn(|c| {
            let mut bm: HashMap<i64, f64> = HashMap::new();
            if let Some(expr) = tokens::fts_match_expr(&terms) {
                let mut stmt = c.prepare_cached(
                    "SELECT rowid, -bm25(ak_skill_fts, 4.0, 1.0, 2.0, 1.0) FROM ak_skill_fts
                     WHERE ak_skill_fts MATCH ?1 ORDER BY bm25(ak_skill_fts, 4.0, 1.0, 2.0, 1.0)
                     LIMIT 500",
                )?;
                let rows = stmt.query_map([expr], |r| Ok((r.get(0)?, r.get(1)?)))?;
                for row in rows {
                    let (id, score) = row?;
                    bm.insert(id, score);
                }
            }
            let mut out: Vec<SkillRow> = Vec::new();
            let mut stmt = c.prepare_cached(
                "SELECT id, name, qualified_name, path, description, when_to_use, content_hash,
                        plugin, tags FROM ak_skill ORDER BY id",
            )?;
            let mut rows = stmt.query([])?;
            while let Some(r) = rows.next()? {
                let id: i64 = r.get(0)?;
                let name: String = r.get(1)?;
                let qualified: String = r.get(2)?;
                let named = names(&qualified) || names(&name);
                let score = bm.get(&id).copied().unwrap_or(0.0);
                let wanted =
                    (score > 0.0 || named || terms.is_empty()) && filtered(&name, &qualified);
                if !wanted {
                    continue;
                }
                let tags: String = r.get(8)?;
                out.push(SkillRow {
                    name,
                    qualified_name: qualified,
                    path: r.get(3)?,
                    description: r.get(4)?,
                    when_to_use: r.get(5)?,
                    content_hash: r.get(6)?,
                    plugin: r.get(7)?,
                    tags: serde_json::from_str(&tags).unwrap_or_default(),
                    catalogued: true,
                    bm25: score,
                    named,
                    uses: 0,
                    used_by: Vec::new(),
                    why: Vec::new(),
                });
            }
            // Skills used in sessions that the catalog does not have.
            let mut stmt = c.prepare_cached(
                "SELECT max(skill_name) FROM ak_skill_use GROUP BY skill_base, skill_plugin
                 ORDER BY 1",
            )?;
            let used: Vec<String> = stmt
                .query_map([], |r| r.get(0))?
                .collect::<Result<_, _>>()?;
            let in_catalog: Vec<(Option<String>, String)> = {
                let mut s = c.prepare_cached("SELECT plugin, name FROM ak_skill")?;
                let v = s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
                v.collect::<Result<_, _>>()?
            };
            for name in used {
                let (up, ub) = split_skill_name(&name);
                let catalogued = in_catalog.iter().any(|(p, n)| {
                    n.to_lowercase() == ub
                        && (p.is_none()
                            || up.is_none()
                            || p.as_deref().map(str::to_lowercase) == up)
                });
                let named = names(&name);
                let wanted =
                    !catalogued && (named || !skills_filter.is_empty()) && filtered(&name, &name);
                if !wanted {
                    continue;
                }
                out.push(SkillRow {
                    name: ub.clone(),
                    qualified_name: name.clone(),
                    path: String::new(),
                    description: String::new(),
                    when_to_use: None,
                    content_hash: String::new(),
                    plugin: up,
                    tags: Vec::new(),
                    catalogued: false,
                    bm25: 0.0,
                    named,
                    uses: 0,
                    used_by: Vec::new(),
                    why: vec!["not in the skill catalog".to_string()],
                });
            }
            // Use counts of every spelling, once, then matched per row in memory.
            let mut stmt = c.prepare_cached(
                "SELECT skill_base, skill_plugin, lower(skill_name), count(*) FROM ak_skill_use
                 GROUP BY 1, 2, 3",
            )?;
            let counts: Vec<(String, Option<String>, String, i64)> = stmt
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
                .collect::<Result<_, _>>()?;
            for row in &mut out {
                row.uses = counts
                    .iter()
                    .filter(|(b, p, n, _)| use_matches(&row.qualified_name, b, p.as_deref(), n))
                    .map(|c| c.3.max(0) as u64)
                    .sum();
            }
            out.sort_by(|a, b| {
                let primary = if a.named && b.named {
                    b.uses.cmp(&a.uses).then(b.bm25.total_cmp(&a.bm25))
                } else {
                    b.bm25.total_cmp(&a.bm25).then(b.uses.cmp(&a.uses))
                };
                b.named
                    .cmp(&a.named)
                    .then(primary)
                    .then_with(|| a.qualified_name.cmp(&b.qualified_name))
                    .then_with(|| a.path.cmp(&b.path))
            });
            out.truncate(limit);
            for row in &mut out {
                if row.uses > 0 {
                    row.used_by = used_by(c, &row.qualified_name)?;
                }
                let mut why = Vec::new();
                if row.named {
                    why.push(format!("name: {}", row.qualified_name));
                }
                if row.bm25 > 0.0 {
                    why.push(format!("bm25: {:.2}", row.bm25));
                }
                if row.uses > 0 {
                    why.push(format!("uses: {}", row.uses));
                }
                why.append(&mut row.why);
                row.why = why;
            }
            out.truncate(limit);
            Ok(out)
        })
    }

    /// The actor that used the skill most (ties: latest use, then actor_id) — contract KD-3.
    pub fn top_actor_for_skill(
        &self,
        skill: &str,
    ) -> Result<Option<(String, u64)>, KnowledgeError> {
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
    pub fn actor_facts(&self, actor_ids: &[String]) -> Result<ActorFacts, KnowledgeError> {
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
                    facts.outcomes.insert(a.actor_id.clone(), a.outcome.clone());
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
    ) -> Result<ActorFacts, KnowledgeError> {
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
                    facts.outcomes.insert(a.actor_id.clone(), a.outcome.clone());
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

mod actors;

type UsedBy = Vec<(String, String, u64)>;

/// The in-memory twin of [`use_filter`]: does a recorded use (`base`, `plugin`, lowercased
/// `name`) count for the skill named `q`?
fn use_matches(q: &str, base: &str, plugin: Option<&str>, name: &str) -> bool {
    let (qp, qb) = split_skill_name(q);
    match qp {
        Some(_) => {
            name == q.trim().trim_start_matches('/').to_lowercase()
                || (base == qb && plugin.is_none())
        }
        None => base == qb,
    }
}

/// (actor_id, session_id, seq) of the most recent uses of the skill named `q`.
fn used_by(c: &Connection, q: &str) -> rusqlite::Result<UsedBy> {
    let (cond, args) = use_filter(q);
    let mut stmt = c.prepare_cached(&format!(
        "SELECT actor_id, session_id, seq FROM ak_skill_use WHERE {cond}
         ORDER BY time_ms IS NULL, time_ms DESC, session_id DESC, seq DESC LIMIT {USED_BY_MAX}"
    ))?;
    let rows = stmt.query_map(params![args[0], args[1]], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get::<_, i64>(2)?.max(0) as u64))
    })?;
    rows.collect()
}

fn kind_static(kind: &str) -> &'static str {
    match kind {
        actor_id::ROOT => actor_id::ROOT,
        actor_id::SUBAGENT => actor_id::SUBAGENT,
        actor_id::TEAM_MEMBER => actor_id::TEAM_MEMBER,
        "autoclaw_agent" => "autoclaw_agent",
        _ => "unknown",
    }
}
