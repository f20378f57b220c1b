//! The L3 builder: (re)writes `knowledge.sqlite` from scratch out of the skill catalog, the agent
//! definitions and the facts of an episodes source ([`FactsSource`]: the built-in
//! `episodes.sqlite` is [`EpisodesFacts`]), derived as they are read (`stream.rs`).
//!
//! The new store is written to a temporary file beside the old one and renamed over it, so a
//! reader sees either the old store or the new one, never half of one. Rows are inserted in a
//! fixed order, so a rebuild of the same inputs gives the same rows. The source is only read.
//! The only rows that are not derived, `ak_assignment` (dispatch plans), are copied from
//! the old store into the new one before the rename, under a write lock on the old store.
//!
//! When the source marks each session's changes and the catalog is the same, only the families
//! of the sessions that changed are derived again, in a copy of the old store (`incremental.rs`).

use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OpenFlags};
use sha2::{Digest, Sha256};

use super::assignments::{copy_assignments, ASSIGNMENT_SCHEMA};
use super::catalog::{scan_agents, scan_skills, AgentDoc, SkillDoc};
use super::derive::SessionIn;
use super::facts::{EpisodesFacts, FactsError, FactsSource};
use super::schema::{self, SCHEMA, SCHEMA_VERSION};
use super::{AgentKnowledgeError, AgentKnowledgeStats, AgentKnowledgeStore};
use incremental::Update;
use stream::{Scope, StreamError};

mod incremental;
mod rows;
mod stream;

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
    /// Sessions derived again by an incremental update (`None`: a full build, or none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rederived_sessions: Option<u64>,
    /// Why everything was derived (`None`: an incremental update, or nothing changed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_build_because: Option<String>,
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
    let mut facts = match episodes_db.exists() {
        true => Some(EpisodesFacts::open(episodes_db).map_err(|source| {
            AgentKnowledgeError::Episodes {
                path: episodes_db.to_path_buf(),
                source,
            }
        })?),
        false => None,
    };
    let facts = facts.as_mut().map(|f| f as &mut dyn FactsSource);
    build_from(knowledge_db, facts, skill_roots, agent_roots, force)
}

/// [`build_with`] from any [`FactsSource`] (`None`: there are no episodes yet, only the catalog
/// is built).
pub fn build_from(
    knowledge_db: &Path,
    mut facts: Option<&mut dyn FactsSource>,
    skill_roots: &[PathBuf],
    agent_roots: &[PathBuf],
    force: bool,
) -> Result<BuildSummary, AgentKnowledgeError> {
    let started = Instant::now();
    let mut summary = BuildSummary::default();
    let skills = scan_skills(skill_roots);
    let agents = scan_agents(agent_roots);

    let ep_rev = match facts.as_deref_mut() {
        Some(f) => f.revision().map_err(|e| facts_error(&*f, e))?,
        None => None,
    };
    let index_rev = fingerprint(ep_rev.as_deref(), &skills, &agents);
    let unchanged = if force {
        None
    } else {
        unchanged(knowledge_db, &index_rev)
    };
    if let Some(stats) = unchanged {
        summary.index_rev = index_rev;
        summary.episodes_index_rev = ep_rev;
        summary.skills = stats.skills;
        summary.actors = stats.actors;
        summary.skill_uses = stats.skill_uses;
        summary.unchanged = true;
        summary.elapsed_ms = started.elapsed().as_millis() as u64;
        return Ok(summary);
    }
    if facts.is_none() {
        summary
            .warnings
            .push("no episodes store yet: only the skill catalog was built".to_string());
    }

    let (sessions, marks_basis) = match facts.as_deref_mut() {
        Some(f) => (
            f.sessions().map_err(|e| facts_error(&*f, e))?,
            f.marks_basis().map_err(|e| facts_error(&*f, e))?,
        ),
        None => (Vec::new(), None),
    };
    let catalog_rev = fingerprint(None, &skills, &agents);
    let content = Content {
        skills: &skills,
        agents: &agents,
        index_rev: &index_rev,
        episodes_rev: ep_rev.as_deref(),
        catalog_rev: &catalog_rev,
        marks_basis: marks_basis.as_deref(),
    };
    let update = match (force, facts.as_deref_mut()) {
        (false, Some(f)) => {
            incremental::update(knowledge_db, f, &sessions, &content, &mut summary)?
        }
        (true, _) => Update::Full("a full build was asked for".to_string()),
        (false, None) => Update::Full("there are no episodes yet".to_string()),
    };
    if let Update::Full(why) = update {
        summary.full_build_because = Some(why);
        let tmp = temp_path(knowledge_db)?;
        let result = write_and_swap(&tmp, knowledge_db, &content, facts, &sessions, &mut summary);
        if result.is_err() {
            remove_temp(&tmp);
        }
        result?;
    }

    summary.index_rev = index_rev;
    summary.episodes_index_rev = ep_rev;
    summary.skills = skills.len() as u64;
    summary.agent_defs = agents.len() as u64;
    summary.elapsed_ms = started.elapsed().as_millis() as u64;
    Ok(summary)
}

fn facts_error(facts: &dyn FactsSource, source: FactsError) -> AgentKnowledgeError {
    AgentKnowledgeError::Facts {
        source_name: facts.name(),
        source,
    }
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
    remove_dead_temps(&dir, &file_name);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    Ok(dir.join(format!(".{file_name}.tmp-{}-{nanos}", std::process::id())))
}

/// Removes the temporary stores (and journals) of builds whose process no longer runs: a build
/// killed with `kill -9` leaves a store-sized file beside the store, which nothing else removes.
fn remove_dead_temps(dir: &Path, file_name: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let prefix = format!(".{file_name}.tmp-");
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(&prefix)) else {
            continue;
        };
        let rest = rest.strip_suffix("-journal").unwrap_or(rest);
        let pid = rest
            .split_once('-')
            .filter(|(_, nanos)| nanos.parse::<u128>().is_ok())
            .and_then(|(pid, _)| pid.parse::<u32>().ok());
        if let Some(pid) = pid {
            if pid != std::process::id() && !crate::sources::pid::alive(pid) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
}

/// A failed build leaves nothing behind: the temporary file and its journal go.
fn remove_temp(tmp: &Path) {
    let _ = std::fs::remove_file(tmp);
    let mut journal = tmp.to_path_buf().into_os_string();
    journal.push("-journal");
    let _ = std::fs::remove_file(journal);
}

/// What a build writes besides the derived rows.
struct Content<'a> {
    skills: &'a [SkillDoc],
    agents: &'a [AgentDoc],
    index_rev: &'a str,
    episodes_rev: Option<&'a str>,
    /// The schema, the catalog and the derivation's code (no episodes): an incremental update
    /// needs it unchanged.
    catalog_rev: &'a str,
    /// The source's [`FactsSource::marks_basis`].
    marks_basis: Option<&'a str>,
}

fn write_and_swap(
    tmp: &Path,
    target: &Path,
    content: &Content<'_>,
    facts: Option<&mut dyn FactsSource>,
    sessions: &[SessionIn],
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
        rows::insert_catalog(&tx, content).map_err(sql_err(tmp))?;
        super::skill_vectors::fill(&tx, Some(target)).map_err(sql_err(tmp))?;
        let derived = match facts {
            Some(f) => {
                stream::insert_derived(&tx, f, sessions, Scope::All).map_err(|e| match e {
                    StreamError::Read(source) => facts_error(&*f, source),
                    StreamError::Write(source) => sql_err(tmp)(source),
                })?
            }
            None => stream::Streamed::default(),
        };
        rows::insert_actors(&tx, &derived.actors, sessions, content.agents)
            .map_err(sql_err(tmp))?;
        // Marks only where every session has one and no event lies outside them: then the
        // families of the next build's changes can be told from the sessions alone.
        let marked = !derived.orphans && sessions.iter().all(|s| s.mark.is_some());
        if let (Some(basis), true) = (content.marks_basis, marked) {
            rows::insert_marks(&tx, sessions, basis, content.catalog_rev).map_err(sql_err(tmp))?;
        }
        summary.sessions = sessions.len() as u64;
        summary.actors = derived.actors.actors.len() as u64;
        summary.skill_uses = derived.uses;
        summary.edits = derived.edits;
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

fn fingerprint(episodes_rev: Option<&str>, skills: &[SkillDoc], agents: &[AgentDoc]) -> String {
    let mut h = Sha256::new();
    h.update(format!("schema:{SCHEMA_VERSION}\n").as_bytes());
    // The rules that derived the store (build.rs hashes their sources): a store another build
    // derived is derived again, in full, even when nothing it reads changed.
    h.update(format!("code:{}\n", env!("KNOWLEDGE_DERIVATION_ID")).as_bytes());
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
