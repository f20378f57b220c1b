//! The rows of a new `knowledge.sqlite`, table by table: meta, the skill catalog, agent definitions, actors (with their outcome and definition), the sessions
//! of each actor, skill uses and edits (the per-hour activity is written as it is read,
//! `stream.rs`). Catalog text is redacted on the way in.

use std::collections::{BTreeSet, HashMap};

use rusqlite::{params, Transaction};

use super::Content;
use crate::sources::agent_knowledge::catalog::{AgentDoc, SkillDoc};
use crate::sources::agent_knowledge::derive::{
    family, ActorSessions, Actors, EditRow, SessionIn, UseRow,
};
use crate::sources::agent_knowledge::ms_to_rfc3339;
use crate::sources::agent_knowledge::schema::{MARKS_SCHEMA, SCHEMA_VERSION};
use crate::sources::agent_knowledge::uses::split_skill_name;

/// The rows that come before the derived ones: meta, the skill catalog, the agent definitions.
pub(super) fn insert_catalog(tx: &Transaction<'_>, c: &Content<'_>) -> rusqlite::Result<()> {
    insert_meta(tx, c)?;
    insert_skills(tx, c.skills)?;
    insert_agent_defs(tx, c.agents)
}

fn insert_meta(tx: &Transaction<'_>, c: &Content<'_>) -> rusqlite::Result<()> {
    let set_meta =
        |k: &str, v: &str| tx.execute("INSERT INTO meta(key, value) VALUES(?1, ?2)", params![k, v]);
    set_meta("index_rev", c.index_rev)?;
    set_meta("episodes_index_rev", c.episodes_rev.unwrap_or(""))?;
    set_meta("schema_version", &SCHEMA_VERSION.to_string())?;
    set_meta(
        "built_at",
        &chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
    )?;
    Ok(())
}

/// The meta rows that name what a store was derived from, as an incremental update leaves them
/// (`schema_version` and the marks' basis do not change there).
pub(super) fn update_meta(tx: &Transaction<'_>, c: &Content<'_>) -> rusqlite::Result<()> {
    let mut set = tx.prepare_cached(
        "INSERT INTO meta(key, value) VALUES(?1, ?2)
         ON CONFLICT(key) DO UPDATE SET value = excluded.value",
    )?;
    set.execute(params!["index_rev", c.index_rev])?;
    set.execute(params!["episodes_index_rev", c.episodes_rev.unwrap_or("")])?;
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    set.execute(params!["built_at", now])?;
    Ok(())
}

/// The catalog's skills (the first of each path); their full-text index is made from these
/// rows when the store is read (`reader/skill_index.rs`), their vectors by `skill_vectors`.
fn insert_skills(tx: &Transaction<'_>, skills: &[SkillDoc]) -> rusqlite::Result<()> {
    let mut ins = tx.prepare(
        "INSERT INTO ak_skill(id, name, qualified_name, path, description, when_to_use,
            content_hash, plugin, kind, tags) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?;
    let mut seen_paths = BTreeSet::new();
    let mut id = 0i64;
    for s in skills {
        let path = s.path.to_string_lossy().to_string();
        if !seen_paths.insert(path.clone()) {
            continue;
        }
        id += 1;
        // A skill's name comes from its file as its author wrote it: read as a name may hold
        // a credential (`deploy token X`), like every name the store keeps.
        let name = name_of(&s.name);
        let stored_tags: Vec<String> = s.tags.iter().map(|t| name_of(t)).collect();
        let tags = serde_json::to_string(&stored_tags).unwrap_or_else(|_| "[]".to_string());
        // Catalog text is stored redacted like everything else: a skill may quote a credential.
        let description = crate::text::redact::redact(&s.description).text;
        let when_to_use = s
            .when_to_use
            .as_deref()
            .map(|w| crate::text::redact::redact(w).text);
        let qualified = name_of(&s.qualified_name());
        ins.execute(params![
            id,
            name,
            qualified,
            // The folder a skill lives in is named by its author too.
            name_of(&path),
            description,
            when_to_use,
            s.content_hash,
            s.plugin.as_deref().map(name_of),
            s.kind,
            tags
        ])?;
    }
    Ok(())
}

fn insert_agent_defs(tx: &Transaction<'_>, agents: &[AgentDoc]) -> rusqlite::Result<()> {
    let mut ins = tx.prepare(
        "INSERT OR IGNORE INTO ak_agent_def(name, path, description, model, tools, content_hash)
         VALUES(?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    for a in agents {
        let tools: Vec<String> = a.tools.iter().map(|t| name_of(t)).collect();
        ins.execute(params![
            name_of(&a.name),
            name_of(&a.path.to_string_lossy()),
            crate::text::redact::redact(&a.description).text,
            a.model.as_deref().map(name_of),
            tools.join(", "),
            a.content_hash
        ])?;
    }
    Ok(())
}

/// A name, a tag or a path from a catalog file, as the store keeps every name: its author wrote
/// it, and it may hold a credential (`deploy-token-X`, `skills/token-X/SKILL.md`).
fn name_of(text: &str) -> String {
    crate::text::redact::redact_name(text).0.into_owned()
}

/// Every session's change mark and family, and what they are relative to (`meta`): what the
/// next build compares (`incremental.rs`).
pub(super) fn insert_marks(
    tx: &Transaction<'_>,
    sessions: &[SessionIn],
    basis: &str,
    catalog_rev: &str,
) -> rusqlite::Result<()> {
    tx.execute_batch(MARKS_SCHEMA)?;
    set_marks_meta(tx, basis, catalog_rev)?;
    replace_marks(tx, sessions)
}

/// The marks of `sessions` (replacing what the store held for them).
pub(super) fn replace_marks(tx: &Transaction<'_>, sessions: &[SessionIn]) -> rusqlite::Result<()> {
    let mut ins = tx.prepare_cached(
        "INSERT OR REPLACE INTO ak_session_mark(session_id, family, mark) VALUES(?1, ?2, ?3)",
    )?;
    for s in sessions {
        ins.execute(params![s.session_id, family(s), s.mark.unwrap_or_default()])?;
    }
    Ok(())
}

fn set_marks_meta(tx: &Transaction<'_>, basis: &str, catalog_rev: &str) -> rusqlite::Result<()> {
    let mut set = tx.prepare_cached(
        "INSERT INTO meta(key, value) VALUES(?1, ?2)
         ON CONFLICT(key) DO UPDATE SET value = excluded.value",
    )?;
    set.execute(params!["marks_basis", basis])?;
    set.execute(params!["catalog_rev", catalog_rev])?;
    Ok(())
}

fn insert_actor_sessions(tx: &Transaction<'_>, rows: &ActorSessions) -> rusqlite::Result<()> {
    let mut ins = tx.prepare(
        "INSERT INTO ak_actor_session(actor_id, session_id, role, sidechain_agent, events)
         VALUES(?1, ?2, ?3, ?4, ?5)",
    )?;
    for ((actor, sid, role, side), n) in rows {
        ins.execute(params![actor, sid, role, side, *n as i64])?;
    }
    Ok(())
}

/// One session's skill uses (a statement kept prepared: it is asked once per session).
pub(super) fn insert_skill_uses(tx: &Transaction<'_>, uses: &[UseRow]) -> rusqlite::Result<()> {
    let mut ins = tx.prepare_cached(
        "INSERT INTO ak_skill_use(actor_id, skill_name, skill_base, skill_plugin, session_id, seq,
            time, time_ms, via, outcome) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?;
    for u in uses {
        let (plugin, base) = split_skill_name(&u.skill_name);
        ins.execute(params![
            u.actor_id,
            u.skill_name,
            base,
            plugin,
            u.session_id,
            u.seq,
            u.time_ms.and_then(ms_to_rfc3339),
            u.time_ms,
            u.via,
            u.outcome
        ])?;
    }
    Ok(())
}

/// One session's edits (as [`insert_skill_uses`]).
pub(super) fn insert_edits(tx: &Transaction<'_>, edits: &[EditRow]) -> rusqlite::Result<()> {
    let mut ins = tx.prepare_cached(
        "INSERT INTO ak_edit(actor_id, path, abs_path, rel_path, session_id, seq, time, time_ms)
         VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?;
    for e in edits {
        ins.execute(params![
            e.actor_id,
            e.path,
            e.abs_path,
            e.rel_path,
            e.session_id,
            e.seq,
            e.time_ms.and_then(ms_to_rfc3339),
            e.time_ms
        ])?;
    }
    Ok(())
}

/// The actors (with their outcome and definition), then the sessions of each actor.
pub(super) fn insert_actors(
    tx: &Transaction<'_>,
    derived: &Actors,
    sessions: &[SessionIn],
    agents: &[AgentDoc],
) -> rusqlite::Result<()> {
    let by_id: HashMap<&str, &SessionIn> = sessions
        .iter()
        .map(|s| (s.session_id.as_str(), s))
        .collect();
    let mut defs: HashMap<String, String> = HashMap::new();
    for a in agents {
        // Keyed and stored as the actors are named (read as names), so a definition still
        // finds its actor and names it as the store does.
        let name = name_of(&a.name);
        defs.entry(name.to_lowercase()).or_insert(name);
    }
    let mut ins = tx.prepare(
        "INSERT INTO ak_actor(actor_id, name, kind, source, root_session, first_seen, last_seen,
            last_seen_ms, sessions, events, skill_uses, edits, outcome_success, outcome_failure,
            outcome, definition)
         VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
    )?;
    for (actor_id, a) in &derived.actors {
        let Some(key) = &a.key else { continue };
        let (mut ok, mut bad) = (0i64, 0i64);
        // The most recent authored session with a known outcome breaks a tie.
        let mut latest: Option<(Option<i64>, &str, &str)> = None;
        for sid in &a.authored {
            let Some(s) = by_id.get(sid.as_str()) else {
                continue;
            };
            match s.outcome.as_str() {
                "success" => ok += 1,
                "failure" => bad += 1,
                _ => continue,
            }
            let cand = (s.last_ms, s.session_id.as_str(), s.outcome.as_str());
            if latest.is_none_or(|l| (cand.0, cand.1) > (l.0, l.1)) {
                latest = Some(cand);
            }
        }
        let outcome = match ok.cmp(&bad) {
            std::cmp::Ordering::Greater => "success",
            std::cmp::Ordering::Less => "failure",
            std::cmp::Ordering::Equal => latest.map_or("unknown", |l| l.2),
        };
        let definition = (key.kind != crate::sources::actor_id::ROOT)
            .then(|| defs.get(&key.name.to_lowercase()).map(String::as_str))
            .flatten();
        ins.execute(params![
            actor_id,
            key.name,
            key.kind,
            key.source,
            key.root_session,
            a.first_ms.and_then(ms_to_rfc3339),
            a.last_ms.and_then(ms_to_rfc3339),
            a.last_ms,
            a.sessions.len() as i64,
            a.events as i64,
            a.skill_uses as i64,
            a.edits as i64,
            ok,
            bad,
            outcome,
            definition
        ])?;
    }
    insert_actor_sessions(tx, &derived.actor_sessions)
}
