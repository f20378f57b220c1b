//! `knowledge push`: this data dir's episodes and code chunks into the team index, labelled with
//! the machine and the person.
//!
//! - **Incremental**: a store whose revision equals the one last pushed is skipped whole; inside
//!   the episodes store each session has a watermark (`pushed_seq`, the highest event sent, and
//!   `head_id`, the local row id of its first event): a grown transcript sends only its new
//!   events, a transcript re-read from the start is replaced, an unchanged one sends nothing.
//! - **Atomic per batch**: sessions go in batches of about [`BATCH_EVENTS`] events, each one
//!   transaction carrying its rows *and* their watermarks, so a `kill -9` leaves the database as
//!   it was after the last batch and the next push carries on from there.
//! - **One push per machine at a time** (a session advisory lock); two machines push in parallel.
//! - **Nothing the local stores would not show**: the stores hold redacted text, and every text
//!   is redacted again on the way out (what that catches is counted in the summary).

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::Path;

use super::{schema, tsv, TeamError, TeamUrl};
use crate::config::DataDir;
use crate::sources::sqlite::{meta_get, open_ro};
use crate::text::redact;

/// Events per transaction (a batch ends at a session boundary).
pub const BATCH_EVENTS: usize = 5_000;

/// What to push and as whom.
#[derive(Debug, Clone)]
pub struct PushPlan {
    pub machine: String,
    pub person: Option<String>,
}

/// Where a push is: for a progress bar.
#[derive(Debug, Clone, Copy)]
pub enum Progress {
    /// Sessions of the episodes store looked at so far, of all.
    Sessions { done: u64, total: u64 },
    /// Code chunks sent.
    Chunks { done: u64 },
}

/// What a push did.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct PushSummary {
    pub machine: String,
    /// The schema version the database had before (0: it was empty and is now migrated).
    pub schema_before: i32,
    pub sessions_new: u64,
    pub sessions_grown: u64,
    pub sessions_replaced: u64,
    pub sessions_updated: u64,
    pub sessions_unchanged: u64,
    pub sessions_removed: u64,
    pub events_sent: u64,
    pub chunks_sent: u64,
    pub batches: u64,
    /// Secrets the re-check redacted that the local store still held in clear.
    pub redacted_again: u64,
    /// Whether a store was skipped whole because its revision was already pushed.
    pub episodes_skipped: bool,
    pub code_skipped: bool,
}

/// Push `data_dir` to `url` as `plan.machine`.
pub fn push(
    data_dir: &Path,
    url: &TeamUrl,
    plan: &PushPlan,
    progress: &mut dyn FnMut(Progress),
) -> Result<PushSummary, TeamError> {
    super::check_machine(&plan.machine)?;
    let files = DataDir::new(data_dir);
    let mut client = url.connect()?;
    let schema_before = schema::migrate(&mut client)?;
    check_may_push(&mut client, &plan.machine)?;
    let lock = machine_lock(&plan.machine);
    let got: bool = client
        .query_one("SELECT pg_try_advisory_lock($1)", &[&lock])?
        .get(0);
    if !got {
        return Err(TeamError::Busy(plan.machine.clone()));
    }
    let mut summary = PushSummary {
        machine: plan.machine.clone(),
        schema_before,
        ..PushSummary::default()
    };
    let episodes = files.episodes_db();
    let code = files.code_db();
    let result = (|| {
        if episodes.exists() {
            push_episodes(&mut client, &episodes, plan, &mut summary, progress)?;
        }
        if code.exists() {
            push_code(&mut client, &code, plan, &mut summary, progress)?;
        }
        Ok(())
    })();
    let _ = client.execute("SELECT pg_advisory_unlock($1)", &[&lock]);
    result.map(|()| summary)
}

fn machine_lock(machine: &str) -> i64 {
    use sha2::{Digest, Sha256};
    let h = Sha256::digest(format!("knowledge-push:{machine}").as_bytes());
    i64::from_be_bytes(h[..8].try_into().unwrap_or([0; 8]))
}

/// The database owner may push any machine; a push role only the one kn_pusher names for it.
fn check_may_push(client: &mut postgres::Client, machine: &str) -> Result<(), TeamError> {
    let row = client.query_one(
        "SELECT (SELECT rolbypassrls OR rolsuper FROM pg_roles WHERE rolname = current_user)
                OR (SELECT tableowner = current_user FROM pg_tables WHERE tablename = 'kn_session'),
                kn_my_machine()",
        &[],
    )?;
    let privileged: Option<bool> = row.get(0);
    let mine: Option<String> = row.get(1);
    if privileged == Some(true) || mine.as_deref() == Some(machine) {
        return Ok(());
    }
    Err(TeamError::NotYourMachine {
        machine: machine.to_string(),
        why: match mine {
            Some(m) => format!("it pushes machine {m}"),
            None => "it is not a push role".to_string(),
        },
    })
}

fn local(store: &'static str) -> impl Fn(rusqlite::Error) -> TeamError {
    move |e| TeamError::Local {
        store,
        why: e.to_string(),
    }
}

/// A local session and where its events stand.
struct LocalSession {
    row: Vec<Option<String>>,
    outcome: String,
    live: bool,
    events: i64,
    max_seq: i64,
    head_id: i64,
}

/// The columns of kn_session a push copies as text (after machine and session_id).
const SESSION_TEXT: [&str; 12] = [
    "source",
    "path",
    "cwd",
    "created_at",
    "last_event_at",
    "agent_preset",
    "title",
    "parent_session_id",
    "agent_id",
    "agent_name",
    "agent_description",
    "team_name",
];

/// The watermark and row a session has in the team index.
#[derive(PartialEq)]
struct Remote {
    pushed_seq: i64,
    head_id: i64,
    fields: Vec<Option<String>>,
    outcome: String,
    live: bool,
    events: i64,
}

enum Plan {
    Full { replace: bool },
    Grow { after: i64 },
    RowOnly,
}

fn push_episodes(
    client: &mut postgres::Client,
    db: &Path,
    plan: &PushPlan,
    summary: &mut PushSummary,
    progress: &mut dyn FnMut(Progress),
) -> Result<(), TeamError> {
    let conn = open_ro(db).map_err(local("episodes"))?;
    let rev = meta_get(&conn, "index_rev").unwrap_or_default();
    if already_pushed(client, plan, "episodes", &rev)? {
        summary.episodes_skipped = true;
        return Ok(());
    }
    let sessions = local_sessions(&conn)?;
    let remote = remote_sessions(client, &plan.machine)?;
    let total = sessions.len() as u64;
    let mut batch: Vec<(String, LocalSession, Plan)> = Vec::new();
    let mut batch_events = 0usize;
    for (i, (sid, s)) in sessions.into_iter().enumerate() {
        let have = remote.get(&sid);
        let step = match have {
            None => Some(Plan::Full { replace: false }),
            Some(r) if r.head_id != s.head_id || r.pushed_seq > s.max_seq => {
                Some(Plan::Full { replace: true })
            }
            Some(r) if r.pushed_seq < s.max_seq => Some(Plan::Grow {
                after: r.pushed_seq,
            }),
            Some(r)
                if r.fields != s.row
                    || r.outcome != s.outcome
                    || r.live != s.live
                    || r.events != s.events =>
            {
                Some(Plan::RowOnly)
            }
            Some(_) => None,
        };
        match step {
            None => summary.sessions_unchanged += 1,
            Some(step) => {
                batch_events += match &step {
                    Plan::Full { .. } => s.events.max(1) as usize,
                    Plan::Grow { after } => (s.max_seq - after).max(1) as usize,
                    Plan::RowOnly => 1,
                };
                batch.push((sid, s, step));
            }
        }
        if batch_events >= BATCH_EVENTS {
            send_batch(client, &conn, plan, std::mem::take(&mut batch), summary)?;
            batch_events = 0;
        }
        progress(Progress::Sessions {
            done: i as u64 + 1,
            total,
        });
    }
    if !batch.is_empty() {
        send_batch(client, &conn, plan, batch, summary)?;
    }
    // Sessions gone from the local index go from the team index too, with the revision.
    let local_ids: HashSet<String> = local_session_ids(&conn)?;
    let gone: Vec<&String> = remote.keys().filter(|k| !local_ids.contains(*k)).collect();
    let mut tx = client.transaction()?;
    for sid in &gone {
        tx.execute(
            "DELETE FROM kn_session WHERE machine = $1 AND session_id = $2",
            &[&plan.machine, sid],
        )?;
    }
    set_rev(&mut tx, plan, "episodes", &rev)?;
    tx.commit()?;
    summary.sessions_removed += gone.len() as u64;
    Ok(())
}

fn local_session_ids(conn: &rusqlite::Connection) -> Result<HashSet<String>, TeamError> {
    let mut stmt = conn
        .prepare("SELECT session_id FROM sessions")
        .map_err(local("episodes"))?;
    let ids = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .map_err(local("episodes"))?
        .collect::<Result<HashSet<_>, _>>()
        .map_err(local("episodes"));
    ids
}

fn local_sessions(conn: &rusqlite::Connection) -> Result<Vec<(String, LocalSession)>, TeamError> {
    let sql = format!(
        "SELECT s.session_id, s.outcome, s.live, s.events,
                coalesce((SELECT max(seq) FROM events e WHERE e.session_id = s.session_id), -1),
                coalesce((SELECT min(id) FROM events e WHERE e.session_id = s.session_id), 0),
                {}
         FROM sessions s ORDER BY s.session_id",
        SESSION_TEXT
            .iter()
            .map(|c| format!("s.{c}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut stmt = conn.prepare(&sql).map_err(local("episodes"))?;
    let rows = stmt
        .query_map([], |r| {
            let mut row = Vec::with_capacity(SESSION_TEXT.len());
            for i in 0..SESSION_TEXT.len() {
                row.push(r.get::<_, Option<String>>(6 + i)?);
            }
            Ok((
                r.get::<_, String>(0)?,
                LocalSession {
                    outcome: r.get(1)?,
                    live: r.get::<_, i64>(2)? != 0,
                    events: r.get(3)?,
                    max_seq: r.get(4)?,
                    head_id: r.get(5)?,
                    row,
                },
            ))
        })
        .map_err(local("episodes"))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(local("episodes"))?;
    Ok(rows
        .into_iter()
        .map(|(sid, mut s)| {
            // The title is shown to people: redacted again like the events. PostgreSQL text
            // cannot hold NUL.
            if let Some(t) = s.row[6].as_mut() {
                *t = redact::redact(t).text;
            }
            for f in s.row.iter_mut().flatten() {
                if f.contains('\0') {
                    *f = f.replace('\0', "");
                }
            }
            (sid, s)
        })
        .collect())
}

fn remote_sessions(
    client: &mut postgres::Client,
    machine: &str,
) -> Result<HashMap<String, Remote>, TeamError> {
    let sql = format!(
        "SELECT session_id, pushed_seq, head_id, outcome, live, events, {}
         FROM kn_session WHERE machine = $1",
        SESSION_TEXT.join(", ")
    );
    let mut out = HashMap::new();
    for r in client.query(&sql, &[&machine])? {
        let fields = (0..SESSION_TEXT.len())
            .map(|i| r.get::<_, Option<String>>(6 + i))
            .collect();
        out.insert(
            r.get::<_, String>(0),
            Remote {
                pushed_seq: r.get(1),
                head_id: r.get(2),
                outcome: r.get(3),
                live: r.get(4),
                events: r.get(5),
                fields,
            },
        );
    }
    Ok(out)
}

/// One transaction: each session's row and watermark, and the events it still lacks.
fn send_batch(
    client: &mut postgres::Client,
    conn: &rusqlite::Connection,
    plan: &PushPlan,
    batch: Vec<(String, LocalSession, Plan)>,
    summary: &mut PushSummary,
) -> Result<(), TeamError> {
    let mut tx = client.transaction()?;
    let upsert = format!(
        "INSERT INTO kn_session (machine, session_id, outcome, live, events, pushed_seq, head_id, {})
         VALUES ($1, $2, $3, $4, $5, $6, $7, {})
         ON CONFLICT (machine, session_id) DO UPDATE SET
           outcome = EXCLUDED.outcome, live = EXCLUDED.live, events = EXCLUDED.events,
           pushed_seq = EXCLUDED.pushed_seq, head_id = EXCLUDED.head_id, {}",
        SESSION_TEXT.join(", "),
        (0..SESSION_TEXT.len())
            .map(|i| format!("${}", 8 + i))
            .collect::<Vec<_>>()
            .join(", "),
        SESSION_TEXT
            .iter()
            .map(|c| format!("{c} = EXCLUDED.{c}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let upsert = tx.prepare(&upsert)?;
    let mut copy_rows: Vec<(String, i64)> = Vec::new();
    for (sid, s, step) in &batch {
        if let Plan::Full { replace: true } = step {
            tx.execute(
                "DELETE FROM kn_session WHERE machine = $1 AND session_id = $2",
                &[&plan.machine, sid],
            )?;
        }
        let mut params: Vec<&(dyn postgres::types::ToSql + Sync)> = vec![
            &plan.machine,
            sid,
            &s.outcome,
            &s.live,
            &s.events,
            &s.max_seq,
            &s.head_id,
        ];
        for f in &s.row {
            params.push(f);
        }
        tx.execute(&upsert, &params)?;
        match step {
            Plan::Full { replace } => {
                if *replace {
                    summary.sessions_replaced += 1;
                } else {
                    summary.sessions_new += 1;
                }
                copy_rows.push((sid.clone(), -1));
            }
            Plan::Grow { after } => {
                summary.sessions_grown += 1;
                copy_rows.push((sid.clone(), *after));
            }
            Plan::RowOnly => summary.sessions_updated += 1,
        }
    }
    if !copy_rows.is_empty() {
        // COPY FROM refuses a table under row-level security: the rows land in a temporary
        // table and move with one INSERT, which the policies check.
        tx.batch_execute("CREATE TEMP TABLE kn_event_in (LIKE kn_event) ON COMMIT DROP")?;
        let mut w = tx.copy_in(
            "COPY kn_event_in (machine, session_id, seq, event_type, time, time_ms, text, human, \
             tool_name, is_error, sidechain_agent, tsv) FROM STDIN",
        )?;
        let mut stmt = conn
            .prepare_cached(
                "SELECT seq, event_type, time, time_ms, text, human, tool_name, is_error,
                        sidechain_agent
                 FROM events WHERE session_id = ?1 AND seq > ?2 ORDER BY seq",
            )
            .map_err(local("episodes"))?;
        let mut line = String::new();
        for (sid, after) in &copy_rows {
            let mut rows = stmt
                .query(rusqlite::params![sid, after])
                .map_err(local("episodes"))?;
            while let Some(r) = rows.next().map_err(local("episodes"))? {
                let text: String = r.get(4).map_err(local("episodes"))?;
                let red = redact::redact(&text);
                summary.redacted_again += red.count as u64;
                let tool: Option<String> = r.get(6).map_err(local("episodes"))?;
                let get_s = |i| r.get::<_, Option<String>>(i).map_err(local("episodes"));
                let get_i = |i| r.get::<_, Option<i64>>(i).map_err(local("episodes"));
                line.clear();
                let cols: [Option<String>; 12] = [
                    Some(plan.machine.clone()),
                    Some(sid.clone()),
                    get_i(0)?.map(|v| v.to_string()),
                    get_s(1)?,
                    get_s(2)?,
                    get_i(3)?.map(|v| v.to_string()),
                    Some(red.text.clone()),
                    Some(bool_text(get_i(5)?)),
                    tool.clone(),
                    Some(bool_text(get_i(7)?)),
                    get_s(8)?,
                    Some(tsv::vector(&red.text, tool.as_deref())),
                ];
                copy_line(&cols, &mut line);
                w.write_all(line.as_bytes())
                    .map_err(|e| TeamError::Sql(e.to_string()))?;
                summary.events_sent += 1;
            }
        }
        w.finish()?;
        tx.batch_execute("INSERT INTO kn_event SELECT * FROM kn_event_in")?;
    }
    tx.commit()?;
    summary.batches += 1;
    Ok(())
}

fn bool_text(v: Option<i64>) -> String {
    if v.unwrap_or(0) != 0 { "t" } else { "f" }.to_string()
}

/// One row of COPY's text format: tab-separated, `\N` for NULL, escapes for the rest.
fn copy_line(cols: &[Option<String>], out: &mut String) {
    for (i, c) in cols.iter().enumerate() {
        if i > 0 {
            out.push('\t');
        }
        match c {
            None => out.push_str("\\N"),
            Some(v) => {
                for ch in v.chars() {
                    match ch {
                        '\\' => out.push_str("\\\\"),
                        '\n' => out.push_str("\\n"),
                        '\r' => out.push_str("\\r"),
                        '\t' => out.push_str("\\t"),
                        '\0' => {}
                        c => out.push(c),
                    }
                }
            }
        }
    }
    out.push('\n');
}

/// Whether this machine already pushed `store` at revision `rev` (an unknown revision never is).
fn already_pushed(
    client: &mut postgres::Client,
    plan: &PushPlan,
    store: &str,
    rev: &str,
) -> Result<bool, TeamError> {
    let pushed: Option<String> = client
        .query_opt(
            "SELECT rev FROM kn_store_rev WHERE machine = $1 AND store = $2",
            &[&plan.machine, &store],
        )?
        .map(|r| r.get(0));
    Ok(!rev.is_empty() && pushed.as_deref() == Some(rev))
}

fn set_rev(
    tx: &mut postgres::Transaction<'_>,
    plan: &PushPlan,
    store: &str,
    rev: &str,
) -> Result<(), TeamError> {
    tx.execute(
        "INSERT INTO kn_store_rev (machine, store, rev, person, pushed_at)
         VALUES ($1, $2, $3, $4, now())
         ON CONFLICT (machine, store) DO UPDATE SET rev = EXCLUDED.rev,
           person = EXCLUDED.person, pushed_at = now()",
        &[&plan.machine, &store, &rev, &plan.person],
    )?;
    Ok(())
}

/// The code store changed: this machine's chunks are replaced in one transaction.
fn push_code(
    client: &mut postgres::Client,
    db: &Path,
    plan: &PushPlan,
    summary: &mut PushSummary,
    progress: &mut dyn FnMut(Progress),
) -> Result<(), TeamError> {
    let conn = open_ro(db).map_err(local("code"))?;
    let rev = meta_get(&conn, "index_rev").unwrap_or_default();
    if already_pushed(client, plan, "code", &rev)? {
        summary.code_skipped = true;
        return Ok(());
    }
    let mut tx = client.transaction()?;
    tx.execute("DELETE FROM kn_chunk WHERE machine = $1", &[&plan.machine])?;
    tx.batch_execute("CREATE TEMP TABLE kn_chunk_in (LIKE kn_chunk) ON COMMIT DROP")?;
    let mut w = tx.copy_in(
        "COPY kn_chunk_in (machine, chunk_id, root, path, start_line, end_line, source_kind, \
         symbol, text, mtime, mtime_ms, tsv) FROM STDIN",
    )?;
    let mut stmt = conn
        .prepare(
            "SELECT c.chunk_id, c.root, c.path, c.start_line, c.end_line, c.source_kind, c.symbol,
                    c.text, c.terms || ' ' || c.sym_terms || ' ' || c.path_terms, f.mtime_ns
             FROM chunks c JOIN files f ON f.id = c.file_id ORDER BY c.id",
        )
        .map_err(local("code"))?;
    let mut rows = stmt.query([]).map_err(local("code"))?;
    let mut line = String::new();
    while let Some(r) = rows.next().map_err(local("code"))? {
        let s = |i| r.get::<_, Option<String>>(i).map_err(local("code"));
        let n = |i| r.get::<_, Option<i64>>(i).map_err(local("code"));
        let text = s(7)?.unwrap_or_default();
        let path = s(2)?.unwrap_or_default();
        let kind = crate::sources::code::chunk::file_text_kind(&path, &text);
        let red = redact::redact_as(&text, kind);
        summary.redacted_again += red.count as u64;
        let mtime_ms = n(9)?.map(|ns| ns / 1_000_000);
        let cols: [Option<String>; 12] = [
            Some(plan.machine.clone()),
            s(0)?,
            s(1)?,
            s(2)?,
            n(3)?.map(|v| v.to_string()),
            n(4)?.map(|v| v.to_string()),
            s(5)?,
            s(6)?,
            Some(red.text),
            mtime_ms.and_then(crate::sources::agent_knowledge::ms_to_rfc3339),
            mtime_ms.map(|v| v.to_string()),
            Some(tsv::from_terms(&s(8)?.unwrap_or_default())),
        ];
        line.clear();
        copy_line(&cols, &mut line);
        w.write_all(line.as_bytes())
            .map_err(|e| TeamError::Sql(e.to_string()))?;
        summary.chunks_sent += 1;
        if summary.chunks_sent.is_multiple_of(1000) {
            progress(Progress::Chunks {
                done: summary.chunks_sent,
            });
        }
    }
    w.finish()?;
    tx.batch_execute("INSERT INTO kn_chunk SELECT * FROM kn_chunk_in")?;
    set_rev(&mut tx, plan, "code", &rev)?;
    tx.commit()?;
    summary.batches += 1;
    Ok(())
}
