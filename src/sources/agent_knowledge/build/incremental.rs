//! The incremental path of a build: derive again only the families whose sessions changed.
//!
//! A full build reads every event and writes every row: on an Aider history of 100,000 runs,
//! appending one run cost 2.8 s of L3 build, every actor rewritten (issue 36). Derivation is
//! closed per family (`derive::family`: a root session with its subagents, as actor ids spell
//! the root), so a family can be derived without reading any other. A source that keeps a change
//! mark per session ([`FactsSource::marks_basis`], `SessionIn::mark`; the built-in store gives a
//! session a fresh mark whenever its row or events are written) lets a build tell which families
//! changed from the sessions alone: a session whose mark moved, a new one, one gone.
//!
//! The old store is copied beside itself under a read lock, the changed families' rows are
//! deleted and derived again in the copy, and then, as in a full build, under the old store's
//! write lock its assignments are carried over again and the copy is renamed over the store: a
//! reader sees the old store or the new one, and a plan committed meanwhile is kept. The rows equal a full build's; only the row ids of uses and edits differ
//! (`tests/l3_incremental.rs`). When the store cannot be compared (no marks, another basis, a
//! changed catalog) or too much changed, the caller builds in full.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;

use rusqlite::{params, Connection};

use super::stream::{self, Scope, StreamError};
use super::{facts_error, open_old, remove_temp, rows, temp_path, BuildSummary, Content};
use crate::sources::agent_knowledge::assignments::copy_assignments;
use crate::sources::agent_knowledge::derive::{family, SessionIn};
use crate::sources::agent_knowledge::facts::FactsSource;
use crate::sources::agent_knowledge::schema::SCHEMA_VERSION;
use crate::sources::agent_knowledge::AgentKnowledgeError;
use crate::sources::regular_file::file_id;

/// Above this share of the sessions (1 in N) to derive again, a full build is cheaper.
const FULL_ABOVE_ONE_IN: usize = 4;

/// What the old store says was derived from which session.
struct Saved {
    /// session id → (family, mark).
    marks: HashMap<String, (String, i64)>,
}

/// Whether the update was made, or why the caller must build in full.
pub(super) enum Update {
    Made,
    Full(String),
}

fn full(why: &str) -> Result<Update, AgentKnowledgeError> {
    Ok(Update::Full(why.to_string()))
}

/// Updates the store at `db` in place of a full build when it can.
pub(super) fn update(
    db: &Path,
    facts: &mut dyn FactsSource,
    sessions: &[SessionIn],
    content: &Content<'_>,
    summary: &mut BuildSummary,
) -> Result<Update, AgentKnowledgeError> {
    let Some(basis) = content.marks_basis else {
        return full("the episodes source keeps no change marks");
    };
    if !db.exists() {
        return full("there is no store yet");
    }
    if sessions.iter().any(|s| s.mark.is_none()) {
        return full("a session has no change mark");
    }
    let opened = file_id(db);
    let Ok(old) = open_old(db) else {
        return full("the store cannot be opened");
    };
    let saved = match saved(&old, basis, content.catalog_rev) {
        Ok(saved) => saved,
        Err(why) => return full(why),
    };
    let mut changed = changed_families(sessions, &saved);
    // Two families may name one actor (ids join their parts with `:`, which a root or a name
    // may hold): such families are derived again together, as a full build derives them.
    let most = sessions.len().max(1) / FULL_ABOVE_ONE_IN;
    match close_over_actors(&old, &saved, &mut changed, most) {
        Ok(true) => {}
        Ok(false) => return full("more than a quarter of the sessions changed"),
        Err(e) => return full(&format!("the store cannot be read: {e}")),
    }
    let redo: Vec<&SessionIn> = sessions
        .iter()
        .filter(|s| changed.contains(&family(s)))
        .collect();
    let mut purge: BTreeSet<&str> = redo.iter().map(|s| s.session_id.as_str()).collect();
    for (sid, (fam, _)) in &saved.marks {
        if changed.contains(fam) {
            purge.insert(sid);
        }
    }
    if purge.len() * FULL_ABOVE_ONE_IN > sessions.len().max(1) {
        return full("more than a quarter of the sessions changed");
    }

    let tmp = temp_path(db)?;
    let target = Target {
        old: &old,
        db,
        opened,
        tmp: &tmp,
    };
    let result = copy_and_update(&target, facts, sessions, &redo, &purge, content, summary);
    match result {
        Ok(()) => {
            summary.rederived_sessions = Some(redo.len() as u64);
            Ok(Update::Made)
        }
        // Whatever stopped the update (an actor two families name that the store could not
        // tell, a store that cannot be copied or written), a full build starts from nothing.
        Err(e) => {
            remove_temp(&tmp);
            full(&format!("the update failed ({e})"))
        }
    }
}

/// Adds to `changed` every family that shares an actor with one in it, until none is left:
/// the sessions of the changed families name their actors in `ak_actor_session`, and those
/// actors name every session (so every family) they worked in. `false` as soon as the changed
/// families hold more than `most` saved sessions (a full build is cheaper then).
fn close_over_actors(
    old: &Connection,
    saved: &Saved,
    changed: &mut HashSet<String>,
    most: usize,
) -> rusqlite::Result<bool> {
    let mut by_family: HashMap<&str, Vec<&str>> = HashMap::new();
    let mut family_of: HashMap<&str, &str> = HashMap::with_capacity(saved.marks.len());
    for (sid, (fam, _)) in &saved.marks {
        family_of.insert(sid, fam);
        by_family.entry(fam).or_default().push(sid);
    }
    let mut actors_of = old.prepare(
        "SELECT DISTINCT b.session_id FROM ak_actor_session a
         JOIN ak_actor_session b ON b.actor_id = a.actor_id
         WHERE a.session_id = ?1 AND b.session_id <> ?1",
    )?;
    let mut queue: Vec<&str> = changed
        .iter()
        .filter_map(|f| by_family.get(f.as_str()))
        .flatten()
        .copied()
        .collect();
    let mut seen: HashSet<&str> = queue.iter().copied().collect();
    while let Some(sid) = queue.pop() {
        if seen.len() > most {
            return Ok(false);
        }
        let others: Vec<String> = actors_of
            .query_map([sid], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        for other in others {
            let Some(&fam) = family_of.get(other.as_str()) else {
                continue;
            };
            if changed.insert(fam.to_string()) {
                for &s in by_family.get(fam).into_iter().flatten() {
                    if seen.insert(s) {
                        queue.push(s);
                    }
                }
            }
        }
    }
    Ok(seen.len() <= most)
}

/// The old store's marks, when they can be compared with the source's now: same basis, same
/// catalog, same layout; else why not.
fn saved(old: &Connection, basis: &str, catalog_rev: &str) -> Result<Saved, &'static str> {
    let meta = |k: &str| crate::sources::sqlite::meta_get(old, k);
    let version: Option<i64> = old.query_row("PRAGMA user_version", [], |r| r.get(0)).ok();
    if version != Some(SCHEMA_VERSION) {
        return Err("the store has another layout");
    }
    match meta("marks_basis") {
        None => return Err("the store keeps no change marks"),
        Some(b) if b != basis => return Err("the store was built from another episodes store"),
        Some(_) => {}
    }
    if meta("catalog_rev").as_deref() != Some(catalog_rev) {
        return Err("the skill catalog, the agent definitions or the derivation's code changed");
    }
    let read = || -> rusqlite::Result<HashMap<String, (String, i64)>> {
        let mut stmt = old.prepare("SELECT session_id, family, mark FROM ak_session_mark")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))?;
        rows.collect()
    };
    let marks = read().map_err(|_| "the store's change marks cannot be read")?;
    Ok(Saved { marks })
}

/// The families with a session that is new, gone or marked anew (both its old and its new
/// family, should it have moved).
fn changed_families(sessions: &[SessionIn], saved: &Saved) -> HashSet<String> {
    let mut changed = HashSet::new();
    let mut seen: HashSet<&str> = HashSet::with_capacity(sessions.len());
    for s in sessions {
        seen.insert(&s.session_id);
        let now = family(s);
        match saved.marks.get(&s.session_id) {
            Some((fam, mark)) if Some(*mark) == s.mark && *fam == now => {}
            Some((fam, _)) => {
                changed.insert(fam.clone());
                changed.insert(now);
            }
            None => {
                changed.insert(now);
            }
        }
    }
    for (sid, (fam, _)) in &saved.marks {
        if !seen.contains(sid.as_str()) {
            changed.insert(fam.clone());
        }
    }
    changed
}

/// The store being updated: its open handle, its path, the file that path named when the
/// handle was opened, and the copy beside it.
struct Target<'a> {
    old: &'a Connection,
    db: &'a Path,
    opened: Option<(u64, u64)>,
    tmp: &'a Path,
}

/// Copies the store to `tmp` (under a read lock: a consistent copy, writers wait), derives the
/// families of `redo` again in it, then takes the old store's write lock, carries its
/// assignments over again (one committed meanwhile is kept) and renames the copy over `db`.
fn copy_and_update(
    target: &Target<'_>,
    facts: &mut dyn FactsSource,
    sessions: &[SessionIn],
    redo: &[&SessionIn],
    purge: &BTreeSet<&str>,
    content: &Content<'_>,
    summary: &mut BuildSummary,
) -> Result<(), AgentKnowledgeError> {
    let &Target {
        old,
        db,
        opened,
        tmp,
    } = target;
    let sql_err = |source| AgentKnowledgeError::Sql {
        path: tmp.to_path_buf(),
        source,
    };
    let copy = || -> Result<(), AgentKnowledgeError> {
        old.execute_batch("BEGIN; SELECT count(*) FROM meta;")
            .map_err(|source| AgentKnowledgeError::Preserve {
                path: db.to_path_buf(),
                source,
            })?;
        let copied = std::fs::copy(db, tmp).map_err(|source| AgentKnowledgeError::Io {
            path: tmp.to_path_buf(),
            source,
        });
        let _ = old.execute_batch("COMMIT");
        copied.map(|_| ())
    };
    copy()?;
    make_writable(tmp);
    let mut conn = Connection::open(tmp).map_err(sql_err)?;
    conn.execute_batch("PRAGMA journal_mode=DELETE; PRAGMA synchronous=OFF;")
        .map_err(sql_err)?;
    let tx = conn.transaction().map_err(sql_err)?;
    delete_families(&tx, purge).map_err(sql_err)?;

    let redo_sessions: Vec<SessionIn> = redo.iter().map(|s| (*s).clone()).collect();
    let ids: Vec<&str> = redo.iter().map(|s| s.session_id.as_str()).collect();
    let derived = stream::insert_derived(&tx, facts, &redo_sessions, Scope::Only(&ids)).map_err(
        |e| match e {
            StreamError::Read(source) => facts_error(&*facts, source),
            StreamError::Write(source) => sql_err(source),
        },
    )?;
    rows::insert_actors(&tx, &derived.actors, &redo_sessions, content.agents).map_err(sql_err)?;
    rows::replace_marks(&tx, &redo_sessions).map_err(sql_err)?;
    rows::update_meta(&tx, content).map_err(sql_err)?;
    // A store written while the encoder's assets were missing gets its skills' vectors now.
    crate::sources::agent_knowledge::skill_vectors::fill(&tx, None).map_err(sql_err)?;

    let count = |table: &str| -> rusqlite::Result<u64> {
        tx.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| {
            r.get::<_, i64>(0)
        })
        .map(|n| n.max(0) as u64)
    };
    summary.sessions = sessions.len() as u64;
    summary.actors = count("ak_actor").map_err(sql_err)?;
    summary.skill_uses = count("ak_skill_use").map_err(sql_err)?;
    summary.edits = count("ak_edit").map_err(sql_err)?;
    tx.commit().map_err(sql_err)?;

    // As a full build: the old store's write lock from the assignments' copy to the rename.
    let preserve = |source| AgentKnowledgeError::Preserve {
        path: db.to_path_buf(),
        source,
    };
    old.execute_batch("BEGIN IMMEDIATE").map_err(preserve)?;
    let swapped = (|| {
        // The handle must still name the store at `db`: another build may have renamed a new
        // one over it since it was opened (then that store's assignments are the ones to keep).
        if file_id(db) != opened {
            return Err(AgentKnowledgeError::Io {
                path: db.to_path_buf(),
                source: std::io::Error::other("the store was replaced during the update"),
            });
        }
        conn.execute_batch("BEGIN; DELETE FROM ak_assignment;")
            .map_err(sql_err)?;
        let (n, dropped) = copy_assignments(old, &conn).map_err(preserve)?;
        conn.execute_batch("COMMIT").map_err(sql_err)?;
        summary.assignments_preserved = n;
        if !dropped.is_empty() {
            summary.warnings.push(format!(
                "ak_assignment columns not carried over: {}",
                dropped.join(", ")
            ));
        }
        conn.close().map_err(|(_, e)| sql_err(e))?;
        if let Ok(f) = std::fs::File::open(tmp) {
            let _ = f.sync_all();
        }
        std::fs::rename(tmp, db).map_err(|source| AgentKnowledgeError::Io {
            path: db.to_path_buf(),
            source,
        })
    })();
    let _ = old.execute_batch("ROLLBACK");
    swapped
}

/// Sets the owner's write bit of the copy (it kept the store's mode, which may be read-only).
fn make_writable(path: &Path) {
    let Ok(meta) = std::fs::metadata(path) else {
        return;
    };
    let mut perms = meta.permissions();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        perms.set_mode(perms.mode() | 0o200);
    }
    #[cfg(not(unix))]
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    let _ = std::fs::set_permissions(path, perms);
}

/// Every row derived from the sessions of `purge` (the sessions of the changed families, as
/// they were and as they are): their actors, the actors' sessions, uses, edits, activity, marks.
fn delete_families(tx: &rusqlite::Transaction<'_>, purge: &BTreeSet<&str>) -> rusqlite::Result<()> {
    tx.execute_batch("CREATE TEMP TABLE purge(session_id TEXT PRIMARY KEY) WITHOUT ROWID")?;
    {
        let mut ins = tx.prepare("INSERT INTO temp.purge(session_id) VALUES(?1)")?;
        for sid in purge {
            ins.execute(params![sid])?;
        }
    }
    // An actor has a row in `ak_actor_session` for every session it worked in, and the changed
    // families are closed over the actors they share (`close_over_actors`): the purged sessions
    // name every actor of the changed families and no other.
    tx.execute_batch(
        "DELETE FROM ak_actor WHERE actor_id IN (
             SELECT actor_id FROM ak_actor_session WHERE session_id IN temp.purge);
         DELETE FROM ak_actor_session WHERE session_id IN temp.purge;
         DELETE FROM ak_skill_use WHERE session_id IN temp.purge;
         DELETE FROM ak_edit WHERE session_id IN temp.purge;
         DELETE FROM ak_activity WHERE session_id IN temp.purge;
         DELETE FROM ak_session_mark WHERE session_id IN temp.purge;
         DROP TABLE temp.purge;",
    )
}
