//! The agent-knowledge store (`knowledge.sqlite`: skills, agent definitions, actors, the
//! sessions of each actor, skill uses, edits, activity) into the team index. A local build writes
//! that store whole, so when its revision changed a push replaces this machine's rows of every
//! table in one transaction: a reader sees the old store or the new one, never a mix.

use std::path::Path;

use super::copy::Staged;
use super::{already_pushed, local, set_rev, PushPlan, PushProgress, PushSummary};
use crate::sources::sqlite::{meta_get, open_ro};
use crate::team::{tsv, TeamError};
use crate::text::redact;

/// How a column's value is sent.
#[derive(Clone, Copy, PartialEq)]
enum Col {
    /// As stored.
    Plain,
    /// Free text a person reads: redacted again on the way out.
    Text,
}

/// One table: the local table, the team table, its columns (the same names in both, the team
/// table having `machine` first).
struct Table {
    local: &'static str,
    team: &'static str,
    cols: &'static [(&'static str, Col)],
}

use Col::{Plain, Text};

const TABLES: [Table; 6] = [
    Table {
        local: "ak_agent_def",
        team: "kn_agent_def",
        cols: &[
            ("id", Plain),
            ("name", Plain),
            ("path", Plain),
            ("description", Text),
            ("model", Plain),
            ("tools", Plain),
            ("content_hash", Plain),
        ],
    },
    Table {
        local: "ak_actor",
        team: "kn_actor",
        cols: &[
            ("actor_id", Plain),
            ("name", Text),
            ("kind", Plain),
            ("source", Plain),
            ("root_session", Plain),
            ("first_seen", Plain),
            ("last_seen", Plain),
            ("last_seen_ms", Plain),
            ("sessions", Plain),
            ("events", Plain),
            ("skill_uses", Plain),
            ("edits", Plain),
            ("outcome_success", Plain),
            ("outcome_failure", Plain),
            ("outcome", Plain),
            ("definition", Plain),
        ],
    },
    Table {
        local: "ak_actor_session",
        team: "kn_actor_session",
        cols: &[
            ("actor_id", Plain),
            ("session_id", Plain),
            ("role", Plain),
            ("sidechain_agent", Plain),
            ("events", Plain),
        ],
    },
    Table {
        local: "ak_skill_use",
        team: "kn_skill_use",
        cols: &[
            ("id", Plain),
            ("actor_id", Plain),
            ("skill_name", Plain),
            ("skill_base", Plain),
            ("skill_plugin", Plain),
            ("session_id", Plain),
            ("seq", Plain),
            ("time", Plain),
            ("time_ms", Plain),
            ("via", Plain),
            ("outcome", Plain),
        ],
    },
    Table {
        local: "ak_edit",
        team: "kn_edit",
        cols: &[
            ("id", Plain),
            ("actor_id", Plain),
            ("path", Plain),
            ("abs_path", Plain),
            ("rel_path", Plain),
            ("session_id", Plain),
            ("seq", Plain),
            ("time", Plain),
            ("time_ms", Plain),
        ],
    },
    Table {
        local: "ak_activity",
        team: "kn_activity",
        cols: &[
            ("session_id", Plain),
            ("sidechain_agent", Plain),
            ("hour", Plain),
            ("events", Plain),
        ],
    },
];

/// The skill columns sent as they are (the team row adds `tsv`, weighted like the local skill
/// index's fields: name A, when_to_use B, description C, tags D).
const SKILL_COLS: [(&str, Col); 10] = [
    ("id", Plain),
    ("name", Plain),
    ("qualified_name", Plain),
    ("path", Plain),
    ("description", Text),
    ("when_to_use", Text),
    ("content_hash", Plain),
    ("plugin", Plain),
    ("kind", Plain),
    ("tags", Plain),
];

pub(super) fn push_knowledge(
    client: &mut postgres::Client,
    db: &Path,
    plan: &PushPlan,
    summary: &mut PushSummary,
    progress: &mut dyn FnMut(PushProgress),
) -> Result<(), TeamError> {
    let conn = open_ro(db).map_err(local("agent knowledge"))?;
    let rev = meta_get(&conn, "index_rev").unwrap_or_default();
    if already_pushed(client, plan, "agent_knowledge", &rev)? {
        summary.knowledge_skipped = true;
        return Ok(());
    }
    let mut tx = client.transaction()?;
    for t in TABLES.iter().map(|t| t.team).chain(["kn_skill"]) {
        tx.execute(
            &format!("DELETE FROM {t} WHERE machine = $1"),
            &[&plan.machine],
        )?;
    }
    summary.skills_sent = send_skills(&mut tx, &conn, plan, summary)?;
    for t in &TABLES {
        let n = send_table(&mut tx, &conn, plan, t, summary)?;
        match t.team {
            "kn_actor" => summary.actors_sent = n,
            "kn_skill_use" => summary.skill_uses_sent = n,
            _ => {}
        }
        summary.knowledge_rows += n;
        progress(PushProgress::Knowledge {
            rows: summary.knowledge_rows + summary.skills_sent,
        });
    }
    summary.knowledge_rows += summary.skills_sent;
    set_rev(&mut tx, plan, "agent_knowledge", &rev)?;
    tx.commit()?;
    summary.batches += 1;
    Ok(())
}

/// A column's value as COPY text, redacted again when it is free text.
fn value(
    r: &rusqlite::Row<'_>,
    i: usize,
    col: Col,
    summary: &mut PushSummary,
) -> Result<Option<String>, TeamError> {
    use rusqlite::types::ValueRef;
    let v = r.get_ref(i).map_err(local("agent knowledge"))?;
    let s = match v {
        ValueRef::Null => return Ok(None),
        ValueRef::Integer(n) => n.to_string(),
        ValueRef::Real(x) => x.to_string(),
        ValueRef::Text(t) | ValueRef::Blob(t) => String::from_utf8_lossy(t).into_owned(),
    };
    if col == Text {
        let red = redact::redact(&s);
        summary.redacted_again += red.count as u64;
        return Ok(Some(red.text));
    }
    Ok(Some(s))
}

fn send_table(
    tx: &mut postgres::Transaction<'_>,
    conn: &rusqlite::Connection,
    plan: &PushPlan,
    t: &Table,
    summary: &mut PushSummary,
) -> Result<u64, TeamError> {
    let names: Vec<&str> = t.cols.iter().map(|c| c.0).collect();
    let mut team_cols = vec!["machine"];
    team_cols.extend(&names);
    let staging = format!("{}_in", t.team);
    let mut w = Staged::start(
        tx,
        &staging,
        &format!("(LIKE {}) ON COMMIT DROP", t.team),
        &team_cols,
    )?;
    let mut stmt = conn
        .prepare(&format!("SELECT {} FROM {}", names.join(", "), t.local))
        .map_err(local("agent knowledge"))?;
    let mut rows = stmt.query([]).map_err(local("agent knowledge"))?;
    let mut vals: Vec<Option<String>> = Vec::with_capacity(names.len() + 1);
    while let Some(r) = rows.next().map_err(local("agent knowledge"))? {
        vals.clear();
        vals.push(Some(plan.machine.clone()));
        for (i, (_, col)) in t.cols.iter().enumerate() {
            vals.push(value(r, i, *col, summary)?);
        }
        let refs: Vec<Option<&str>> = vals.iter().map(|v| v.as_deref()).collect();
        w.row(&refs)?;
    }
    let n = w.finish()?;
    tx.batch_execute(&format!(
        "INSERT INTO {} ({}) SELECT {} FROM {staging}",
        t.team,
        team_cols.join(", "),
        team_cols.join(", ")
    ))?;
    Ok(n)
}

/// The catalog's skills with their weighted token stream.
fn send_skills(
    tx: &mut postgres::Transaction<'_>,
    conn: &rusqlite::Connection,
    plan: &PushPlan,
    summary: &mut PushSummary,
) -> Result<u64, TeamError> {
    let names: Vec<&str> = SKILL_COLS.iter().map(|c| c.0).collect();
    let mut cols = vec!["machine"];
    cols.extend(&names);
    cols.extend(["tsv_a", "tsv_b", "tsv_c", "tsv_d"]);
    let mut w = Staged::start(
        tx,
        "kn_skill_in",
        "ON COMMIT DROP AS SELECT *, tsv AS tsv_a, tsv AS tsv_b, tsv AS tsv_c, tsv AS tsv_d
         FROM kn_skill WITH NO DATA",
        &cols,
    )?;
    let mut stmt = conn
        .prepare(&format!(
            "SELECT {} FROM ak_skill ORDER BY id",
            names.join(", ")
        ))
        .map_err(local("agent knowledge"))?;
    let mut rows = stmt.query([]).map_err(local("agent knowledge"))?;
    while let Some(r) = rows.next().map_err(local("agent knowledge"))? {
        let mut vals = vec![Some(plan.machine.clone())];
        for (i, (_, col)) in SKILL_COLS.iter().enumerate() {
            vals.push(value(r, i, *col, summary)?);
        }
        // name, when_to_use, description, tags: vals[2], [6], [5], [10]
        for i in [2, 6, 5, 10] {
            vals.push(Some(tsv::vector(vals[i].as_deref().unwrap_or(""), None)));
        }
        let refs: Vec<Option<&str>> = vals.iter().map(|v| v.as_deref()).collect();
        w.row(&refs)?;
    }
    let n = w.finish()?;
    let plain = std::iter::once("machine")
        .chain(names.iter().copied())
        .collect::<Vec<_>>()
        .join(", ");
    tx.batch_execute(&format!(
        "INSERT INTO kn_skill ({plain}, tsv)
         SELECT {plain}, setweight(tsv_a, 'A') || setweight(tsv_b, 'B') || setweight(tsv_c, 'C')
                || setweight(tsv_d, 'D')
         FROM kn_skill_in"
    ))?;
    Ok(n)
}
