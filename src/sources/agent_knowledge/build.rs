//! The L3 builder: (re)writes `knowledge.sqlite` from scratch out of the skill catalog, the agent
//! definitions and the facts in `episodes.sqlite`.
//!
//! The new store is written to a temporary file beside the old one and renamed over it, so a
//! reader sees either the old store or the new one, never half of one. Rows are inserted in a
//! fixed order, so a rebuild of the same inputs gives the same rows. `episodes.sqlite` is opened
//! read-only. The only rows that are not derived, `ak_assignment` (dispatch plans), are copied from
//! the old store into the new one before the rename, under a write lock on the old store.

use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OpenFlags};
use sha2::{Digest, Sha256};

use super::assignments::{copy_assignments, ASSIGNMENT_SCHEMA};
use super::catalog::{scan_agents, scan_skills, AgentDoc, SkillDoc};
use super::derive::{derive, Derived, EventIn, GroupIn, SessionIn};
use super::schema::{self, SCHEMA, SCHEMA_VERSION};
use super::{AgentKnowledgeError, AgentKnowledgeStats, AgentKnowledgeStore};
use crate::sources::episodes::model::Fact;

mod rows;

/// What one build did.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct BuildSummary {
    /// `knowledge:<hex>`: fingerprint of the episodes `index_rev` and the catalog hashes.
    pub index_rev: String,
    /// The episodes store's `index_rev`; `None` when there is no episodes store.
    pub episodes_index_rev: Option<String>,
    pub skills: u64,
    pub agent_defs: u64,
    pub sessions: u64,
    pub actors: u64,
    pub skill_uses: u64,
    pub edits: u64,
    pub assignments_preserved: u64,
    /// True when nothing changed since the last build and the store was left as it was.
    pub unchanged: bool,
    pub warnings: Vec<String>,
    pub elapsed_ms: u64,
}

/// (Re)build the store at `knowledge_db`, unless nothing it derives from changed since the last
/// build (then the store is left as it is and `unchanged` is set). See the module docs.
pub fn build(
    knowledge_db: &Path,
    episodes_db: &Path,
    skill_roots: &[PathBuf],
    agent_roots: &[PathBuf],
) -> Result<BuildSummary, AgentKnowledgeError> {
    build_with(knowledge_db, episodes_db, skill_roots, agent_roots, false)
}

/// [`build`], with `force` rebuilding even when nothing changed.
pub fn build_with(
    knowledge_db: &Path,
    episodes_db: &Path,
    skill_roots: &[PathBuf],
    agent_roots: &[PathBuf],
    force: bool,
) -> Result<BuildSummary, AgentKnowledgeError> {
    let started = Instant::now();
    let mut summary = BuildSummary::default();
    let skills = scan_skills(skill_roots);
    let agents = scan_agents(agent_roots);

    let current_ep_rev = crate::sources::sqlite::open_ro(episodes_db)
        .ok()
        .and_then(|c| crate::sources::sqlite::meta_get(&c, "index_rev"));
    let wanted = fingerprint(current_ep_rev.as_deref(), &skills, &agents);
    let unchanged = if force {
        None
    } else {
        unchanged(knowledge_db, &wanted)
    };
    if let Some(stats) = unchanged {
        summary.index_rev = wanted;
        summary.episodes_index_rev = current_ep_rev;
        summary.skills = stats.skills;
        summary.actors = stats.actors;
        summary.skill_uses = stats.skill_uses;
        summary.unchanged = true;
        summary.elapsed_ms = started.elapsed().as_millis() as u64;
        return Ok(summary);
    }

    let (sessions, events, groups, hours, ep_rev) = if episodes_db.exists() {
        read_episodes(episodes_db).map_err(|source| AgentKnowledgeError::Episodes {
            path: episodes_db.to_path_buf(),
            source,
        })?
    } else {
        summary
            .warnings
            .push("no episodes store yet: only the skill catalog was built".to_string());
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), None)
    };
    let derived = derive(&sessions, &events, &groups);
    let index_rev = fingerprint(ep_rev.as_deref(), &skills, &agents);

    let tmp = temp_path(knowledge_db)?;
    let result = write_and_swap(
        &tmp,
        knowledge_db,
        &Content {
            skills: &skills,
            agents: &agents,
            derived: &derived,
            sessions: &sessions,
            hours: &hours,
            index_rev: &index_rev,
            episodes_rev: ep_rev.as_deref(),
        },
        &mut summary,
    );
    if result.is_err() {
        remove_temp(&tmp);
    }
    result?;

    summary.index_rev = index_rev;
    summary.episodes_index_rev = ep_rev;
    summary.skills = skills.len() as u64;
    summary.agent_defs = agents.len() as u64;
    summary.sessions = sessions.len() as u64;
    summary.actors = derived.actors.len() as u64;
    summary.skill_uses = derived.uses.len() as u64;
    summary.edits = derived.edits.len() as u64;
    summary.elapsed_ms = started.elapsed().as_millis() as u64;
    Ok(summary)
}

/// The store's stats when it is already what a build would write: its revision is `wanted`
/// (same episodes revision, same catalog files), so it is left alone.
fn unchanged(knowledge_db: &Path, wanted: &str) -> Option<AgentKnowledgeStats> {
    if !knowledge_db.exists() {
        return None;
    }
    let stats = AgentKnowledgeStore::open(knowledge_db).ok()?.stats().ok()?;
    (stats.index_rev.as_deref() == Some(wanted)).then_some(stats)
}

/// A fresh temporary file beside the store (same directory, so the rename is atomic).
fn temp_path(knowledge_db: &Path) -> Result<PathBuf, AgentKnowledgeError> {
    let dir = match knowledge_db.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(|source| AgentKnowledgeError::Io {
        path: dir.clone(),
        source,
    })?;
    let file_name = knowledge_db
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "knowledge.sqlite".to_string());
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    Ok(dir.join(format!(".{file_name}.tmp-{}-{nanos}", std::process::id())))
}

/// A failed build leaves nothing behind: the temporary file and its journal go.
fn remove_temp(tmp: &Path) {
    let _ = std::fs::remove_file(tmp);
    let mut journal = tmp.to_path_buf().into_os_string();
    journal.push("-journal");
    let _ = std::fs::remove_file(journal);
}

struct Content<'a> {
    skills: &'a [SkillDoc],
    agents: &'a [AgentDoc],
    derived: &'a Derived,
    sessions: &'a [SessionIn],
    hours: &'a [HourIn],
    index_rev: &'a str,
    episodes_rev: Option<&'a str>,
}

fn write_and_swap(
    tmp: &Path,
    target: &Path,
    content: &Content<'_>,
    summary: &mut BuildSummary,
) -> Result<(), AgentKnowledgeError> {
    let sql_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| AgentKnowledgeError::Sql {
            path: path.clone(),
            source,
        }
    };
    let mut conn = Connection::open(tmp).map_err(sql_err(tmp))?;
    conn.execute_batch("PRAGMA journal_mode=DELETE; PRAGMA synchronous=OFF;")
        .map_err(sql_err(tmp))?;
    {
        let tx = conn.transaction().map_err(sql_err(tmp))?;
        tx.execute_batch(SCHEMA).map_err(sql_err(tmp))?;
        tx.execute_batch(ASSIGNMENT_SCHEMA).map_err(sql_err(tmp))?;
        rows::insert_all(&tx, content).map_err(sql_err(tmp))?;
        tx.pragma_update(None, "user_version", SCHEMA_VERSION)
            .map_err(sql_err(tmp))?;
        tx.commit().map_err(sql_err(tmp))?;
    }

    // Hold a write lock on the old store while its assignments are copied and the new file is
    // renamed into place, so a concurrent `commit` lands before the copy or waits.
    let old = if target.exists() {
        Some(
            open_old(target).map_err(|source| AgentKnowledgeError::Preserve {
                path: target.to_path_buf(),
                source,
            })?,
        )
    } else {
        None
    };
    if let Some(old) = &old {
        let locked = old.execute_batch("BEGIN IMMEDIATE").is_ok();
        let copied = copy_assignments(old, &conn).map_err(|source| AgentKnowledgeError::Preserve {
            path: target.to_path_buf(),
            source,
        });
        match copied {
            Ok((n, dropped)) => {
                summary.assignments_preserved = n;
                if !dropped.is_empty() {
                    summary.warnings.push(format!(
                        "ak_assignment columns not carried over: {}",
                        dropped.join(", ")
                    ));
                }
            }
            Err(e) => {
                if locked {
                    let _ = old.execute_batch("ROLLBACK");
                }
                return Err(e);
            }
        }
        if !locked {
            summary
                .warnings
                .push("could not lock the old store while copying assignments".to_string());
        }
    }
    conn.close().map_err(|(_, e)| sql_err(tmp)(e))?;
    if let Ok(f) = std::fs::File::open(tmp) {
        let _ = f.sync_all();
    }
    let renamed = std::fs::rename(tmp, target).map_err(|source| AgentKnowledgeError::Io {
        path: target.to_path_buf(),
        source,
    });
    if let Some(old) = old {
        let _ = old.execute_batch("ROLLBACK");
        drop(old);
    }
    renamed
}

fn open_old(path: &Path) -> rusqlite::Result<Connection> {
    crate::sources::sqlite::regular_or_absent(path)?;
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .or_else(|_| schema::open_ro(path))?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    // Fails on a file that is not a database: better to stop than to lose its assignments.
    conn.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(()))?;
    Ok(conn)
}

type EpisodeRows = (
    Vec<SessionIn>,
    Vec<EventIn>,
    Vec<GroupIn>,
    Vec<HourIn>,
    Option<String>,
);

/// Sessions, fact-carrying events, per-group counts and per-hour activity, read-only, in a fixed
/// order.
fn read_episodes(path: &Path) -> rusqlite::Result<EpisodeRows> {
    let conn = schema::open_ro(path)?;
    // An indexer may be finishing its write: wait longer than a search would.
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    // One read transaction, so the three reads see the same snapshot.
    conn.execute_batch("BEGIN")?;
    let rev: Option<String> = conn
        .query_row("SELECT value FROM meta WHERE key='index_rev'", [], |r| {
            r.get(0)
        })
        .ok();
    let mut stmt = conn.prepare(
        "SELECT session_id, source, cwd, parent_session_id, agent_id, agent_name, agent_preset,
                team_name, spawn_tool_use_id, outcome, last_event_at
         FROM sessions ORDER BY session_id",
    )?;
    let sessions = stmt
        .query_map([], |r| {
            Ok(SessionIn {
                session_id: r.get(0)?,
                source: r.get(1)?,
                cwd: r.get(2)?,
                parent_session_id: r.get(3)?,
                agent_id: r.get(4)?,
                agent_name: r.get(5)?,
                agent_preset: r.get(6)?,
                team_name: r.get(7)?,
                spawn_tool_use_id: r.get(8)?,
                outcome: r.get(9)?,
                last_ms: r
                    .get::<_, Option<String>>(10)?
                    .as_deref()
                    .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
                    .map(|t| t.timestamp_millis()),
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let mut stmt = conn.prepare(
        "SELECT session_id, seq, time_ms, tool_use_id, sidechain_agent, facts
         FROM events WHERE facts IS NOT NULL ORDER BY session_id, seq",
    )?;
    let mut events = Vec::new();
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let facts: Option<String> = r.get(5)?;
        let facts = parse_facts(facts.as_deref().unwrap_or(""));
        if facts.is_empty() {
            continue;
        }
        events.push(EventIn {
            session_id: r.get(0)?,
            seq: r.get(1)?,
            time_ms: r.get(2)?,
            tool_use_id: r.get(3)?,
            sidechain_agent: r.get(4)?,
            facts,
        });
    }
    // One pass gives both the per-hour activity and the per-group counts and time range.
    let mut stmt = conn.prepare(
        "SELECT session_id, sidechain_agent, time_ms / 3600000 AS h, count(*), min(time_ms),
                max(time_ms)
         FROM events GROUP BY session_id, sidechain_agent, h
         ORDER BY session_id, sidechain_agent, h",
    )?;
    let mut groups: Vec<GroupIn> = Vec::new();
    let mut hours: Vec<HourIn> = Vec::new();
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let session_id: String = r.get(0)?;
        let sidechain_agent: Option<String> = r.get(1)?;
        let hour: Option<i64> = r.get(2)?;
        let events = r.get::<_, i64>(3)?.max(0) as u64;
        let (min_ms, max_ms): (Option<i64>, Option<i64>) = (r.get(4)?, r.get(5)?);
        if let Some(hour) = hour {
            hours.push(HourIn {
                session_id: session_id.clone(),
                sidechain_agent: sidechain_agent.clone().unwrap_or_default(),
                hour,
                events,
            });
        }
        match groups.last_mut() {
            Some(g) if g.session_id == session_id && g.sidechain_agent == sidechain_agent => {
                g.events += events;
                g.min_ms = min_opt(g.min_ms, min_ms, i64::min);
                g.max_ms = min_opt(g.max_ms, max_ms, i64::max);
            }
            _ => groups.push(GroupIn {
                session_id,
                sidechain_agent,
                events,
                min_ms,
                max_ms,
            }),
        }
    }
    drop(rows);
    drop(stmt);
    let _ = conn.execute_batch("COMMIT");
    Ok((sessions, events, groups, hours, rev))
}

/// `pick` of two optional values, either alone when the other is missing.
fn min_opt(a: Option<i64>, b: Option<i64>, pick: fn(i64, i64) -> i64) -> Option<i64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(pick(a, b)),
        (a, b) => a.or(b),
    }
}

/// Events of one (session, sidechain agent) in one hour (`time_ms / 3_600_000`): the activity
/// view's buckets (`ak_activity`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HourIn {
    pub session_id: String,
    /// Empty when the events are the session's own.
    pub sidechain_agent: String,
    pub hour: i64,
    pub events: u64,
}

/// `events.facts` → facts; unknown or malformed entries are skipped one by one.
///
/// The facts come back without spare room: a `Vec` grown push by push keeps room for four, most
/// events hold one, and a build holds every event's facts at once (196k events at 10×: 94 MB
/// of facts before, a quarter of it after; docs/PERFORMANCE.md).
pub fn parse_facts(json: &str) -> Vec<Fact> {
    if json.trim().is_empty() {
        return Vec::new();
    }
    let mut facts = serde_json::from_str::<Vec<Fact>>(json).unwrap_or_else(|_| {
        serde_json::from_str::<Vec<serde_json::Value>>(json)
            .map(|vals| {
                vals.into_iter()
                    .filter_map(|v| serde_json::from_value::<Fact>(v).ok())
                    .collect()
            })
            .unwrap_or_default()
    });
    facts.shrink_to_fit();
    facts
}

fn fingerprint(episodes_rev: Option<&str>, skills: &[SkillDoc], agents: &[AgentDoc]) -> String {
    let mut h = Sha256::new();
    h.update(format!("schema:{SCHEMA_VERSION}\n").as_bytes());
    h.update(format!("episodes:{}\n", episodes_rev.unwrap_or("none")).as_bytes());
    for s in skills {
        h.update(format!("skill:{}:{}\n", s.path.display(), s.content_hash).as_bytes());
    }
    for a in agents {
        h.update(format!("agent:{}:{}\n", a.path.display(), a.content_hash).as_bytes());
    }
    let hex: String = h
        .finalize()
        .iter()
        .take(6)
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("knowledge:{hex}")
}
