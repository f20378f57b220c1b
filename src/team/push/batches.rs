//! The local side of the episodes push: one read snapshot of `episodes.sqlite`, each session's
//! step (from its watermarks in the team index), and the COPY rows of each batch, its texts
//! redacted again and their token stream made. It runs on its own thread and hands batches to
//! the team side (`episodes.rs`), so the next batch is made while the server inserts one.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::mpsc::SyncSender;

use super::copy::{Bin, BinRows, Rows};
use super::episodes::store_rev;
use super::{local, PushPlan};
use crate::sources::episodes::meta_redact;
use crate::sources::sqlite::open_ro;
use crate::sources::vectors::{self, export};
use crate::team::{code_bits, tsv, TeamError};
use crate::text::redact;

/// Rows (events and codes) per transaction (a batch ends at a session boundary).
pub const BATCH_EVENTS: usize = 5_000;

/// A local session and where its events and codes stand.
struct LocalSession {
    row: Vec<Option<String>>,
    outcome: String,
    live: bool,
    events: i64,
    max_seq: i64,
    head_id: i64,
    /// The highest seq whose codes are stored locally (-1: none).
    vec_seq: i64,
    /// Secrets the row's free text still held (a store an older build wrote), redacted.
    redacted: u64,
}

/// The columns of kn_session a push copies as text (after machine and session_id).
pub(super) const SESSION_TEXT: [&str; 12] = [
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

/// The columns of [`SESSION_TEXT`] that are free text a transcript wrote (the working directory,
/// the agent's preset, name, role and team, the title): redacted again on the way out. The
/// others are ids, paths of files and times.
const SESSION_FREE_TEXT: [&str; 6] = [
    "cwd",
    "agent_preset",
    "title",
    "agent_name",
    "agent_description",
    "team_name",
];

/// The watermarks and row a session has in the team index.
pub(super) struct Remote {
    pub(super) pushed_seq: i64,
    pub(super) head_id: i64,
    pub(super) vec_seq: i64,
    pub(super) fields: Vec<Option<String>>,
    pub(super) outcome: String,
    pub(super) live: bool,
    pub(super) events: i64,
}

enum Plan {
    Full { replace: bool },
    Grow { after: i64 },
    RowOnly,
}

/// What one session sends: its events' plan and, when its codes are behind, the seq after
/// which they are sent.
struct Step {
    plan: Plan,
    vec_after: Option<i64>,
    vec_seq: i64,
}

/// The step a session needs, or `None` when the team index has it as it is.
fn step_for(s: &LocalSession, have: Option<&Remote>) -> Option<Step> {
    let plan = match have {
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
    let remote_vec = match (&plan, have) {
        (Some(Plan::Full { .. }), _) | (_, None) => -1,
        (_, Some(r)) => r.vec_seq,
    };
    let vec_after = (s.vec_seq > remote_vec).then_some(remote_vec);
    let plan = match (plan, vec_after) {
        (None, None) => return None,
        (None, Some(_)) => Plan::RowOnly,
        (Some(p), _) => p,
    };
    Some(Step {
        plan,
        vec_after,
        vec_seq: s.vec_seq.max(remote_vec),
    })
}

/// Rows a step sends (at least one: its session row).
fn step_rows(s: &LocalSession, step: &Step) -> usize {
    let events = match step.plan {
        Plan::Full { .. } => s.events,
        Plan::Grow { after } => s.max_seq - after,
        Plan::RowOnly => 0,
    };
    let codes = step.vec_after.map_or(0, |a| s.vec_seq - a);
    (events + codes).max(1) as usize
}

/// One batch as the local side made it, ready for one transaction.
#[derive(Default)]
pub(super) struct Batch {
    /// Sessions re-read from the start: deleted first (their events and codes go with them).
    pub(super) replace: Vec<String>,
    pub(super) sessions: Rows,
    pub(super) events: BinRows,
    pub(super) codes: Rows,
    /// Events read but not yet made into rows (see [`finish_events`]).
    pub(super) pending: Vec<RawEvent>,
    pub(super) new: u64,
    pub(super) grown: u64,
    pub(super) replaced: u64,
    pub(super) updated: u64,
    pub(super) redacted_again: u64,
    /// Sessions looked at so far, of all, for the progress bar.
    pub(super) looked: u64,
    pub(super) total: u64,
}

/// What the local side hands the team side.
pub(super) enum Msg {
    Batch(Box<Batch>),
    /// Every batch is made: the revision of the snapshot read, the sessions the local store no
    /// longer has, the ones that needed nothing.
    End {
        rev: String,
        gone: Vec<String>,
        unchanged: u64,
    },
    Failed(TeamError),
}

/// The local side: one snapshot of the store, every session's step, batches of about
/// [`BATCH_EVENTS`] rows sent as they are made.
pub(super) fn make_batches(
    db: &Path,
    plan: &PushPlan,
    remote: &HashMap<String, Remote>,
    send: &SyncSender<Msg>,
) -> Result<(), TeamError> {
    let conn = open_ro(db).map_err(local("episodes"))?;
    // One read snapshot for the whole push: an index batch committing meanwhile (`push
    // --watch` runs one beside it) is the next push's business.
    conn.execute_batch("BEGIN").map_err(local("episodes"))?;
    let covered = export::covered_upto(&conn, &vectors::EVENTS).map_err(local("episodes"))?;
    let rev = store_rev(&conn).map_err(local("episodes"))?;
    let sessions = local_sessions(&conn, covered)?;
    let mut local_ids = HashSet::with_capacity(sessions.len());
    let mut batch = Batch::default();
    let mut rows = 0usize;
    let mut unchanged = 0u64;
    for (i, (sid, s)) in sessions.iter().enumerate() {
        local_ids.insert(sid.as_str());
        let have = remote.get(sid);
        match step_for(s, have) {
            None => unchanged += 1,
            Some(step) => {
                rows += step_rows(s, &step);
                add_session(&conn, plan, covered, sid, s, &step, have, &mut batch)?;
            }
        }
        if rows >= BATCH_EVENTS {
            (batch.looked, batch.total) = (i as u64 + 1, sessions.len() as u64);
            finish_events(plan, &mut batch);
            if send
                .send(Msg::Batch(Box::new(std::mem::take(&mut batch))))
                .is_err()
            {
                return Ok(());
            }
            rows = 0;
        }
    }
    if batch.sessions.count > 0 {
        (batch.looked, batch.total) = (sessions.len() as u64, sessions.len() as u64);
        finish_events(plan, &mut batch);
        if send.send(Msg::Batch(Box::new(batch))).is_err() {
            return Ok(());
        }
    }
    let gone = remote
        .keys()
        .filter(|k| !local_ids.contains(k.as_str()))
        .cloned()
        .collect();
    let _ = send.send(Msg::End {
        rev,
        gone,
        unchanged,
    });
    Ok(())
}

fn local_sessions(
    conn: &rusqlite::Connection,
    covered: i64,
) -> Result<Vec<(String, LocalSession)>, TeamError> {
    let sql = format!(
        "SELECT s.session_id, s.outcome, s.live, s.events,
                coalesce((SELECT max(seq) FROM events e WHERE e.session_id = s.session_id), -1),
                coalesce((SELECT min(id) FROM events e WHERE e.session_id = s.session_id), 0),
                coalesce((SELECT max(seq) FROM events e
                          WHERE e.session_id = s.session_id AND e.id <= ?1), -1),
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
        .query_map([covered], |r| {
            let mut row = Vec::with_capacity(SESSION_TEXT.len());
            for i in 0..SESSION_TEXT.len() {
                row.push(r.get::<_, Option<String>>(7 + i)?);
            }
            Ok((
                r.get::<_, String>(0)?,
                LocalSession {
                    outcome: r.get(1)?,
                    live: r.get::<_, i64>(2)? != 0,
                    events: r.get(3)?,
                    max_seq: r.get(4)?,
                    head_id: r.get(5)?,
                    vec_seq: r.get(6)?,
                    row,
                    redacted: 0,
                },
            ))
        })
        .map_err(local("episodes"))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(local("episodes"))?;
    Ok(rows
        .into_iter()
        .map(|(sid, mut s)| {
            // What a transcript wrote is shown to people: redacted again like the events.
            // PostgreSQL text cannot hold NUL.
            for (col, f) in SESSION_TEXT.iter().zip(s.row.iter_mut()) {
                if let Some(t) = f.as_mut().filter(|_| SESSION_FREE_TEXT.contains(col)) {
                    s.redacted += meta_redact::field(t) as u64;
                }
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

/// The local side of one session: its row with the new watermarks, the events and the codes
/// its step sends, into `batch`.
#[allow(clippy::too_many_arguments)]
fn add_session(
    conn: &rusqlite::Connection,
    plan: &PushPlan,
    covered: i64,
    sid: &str,
    s: &LocalSession,
    step: &Step,
    have: Option<&Remote>,
    batch: &mut Batch,
) -> Result<(), TeamError> {
    let nums = [s.events, s.max_seq, s.head_id, step.vec_seq].map(|n| n.to_string());
    let mut row: Vec<Option<&str>> = vec![
        Some(&plan.machine),
        Some(sid),
        Some(&s.outcome),
        Some(if s.live { "t" } else { "f" }),
        Some(&nums[0]),
        Some(&nums[1]),
        Some(&nums[2]),
        Some(&nums[3]),
    ];
    row.extend(s.row.iter().map(|f| f.as_deref()));
    batch.sessions.row(&row);
    batch.redacted_again += s.redacted;
    match step.plan {
        Plan::Full { replace } => {
            if replace {
                batch.replace.push(sid.to_string());
                batch.replaced += 1;
            } else {
                batch.new += 1;
            }
            add_events(conn, sid, -1, s.max_seq, batch)?;
        }
        Plan::Grow { after } => {
            batch.grown += 1;
            add_events(conn, sid, after, s.max_seq, batch)?;
        }
        // A session only its codes brought here is not "updated" unless its row changed.
        Plan::RowOnly => {
            if have.is_some_and(|r| row_changed(r, s)) {
                batch.updated += 1;
            }
        }
    }
    if let Some(after) = step.vec_after {
        add_codes(conn, plan, covered, sid, after, step.vec_seq, batch)?;
    }
    Ok(())
}

fn row_changed(r: &Remote, s: &LocalSession) -> bool {
    r.fields != s.row || r.outcome != s.outcome || r.live != s.live || r.events != s.events
}

/// An event as read, its text not yet redacted again nor tokenised.
pub(super) struct RawEvent {
    sid: String,
    ints: [Option<i64>; 4],
    strs: [Option<String>; 4],
    text: String,
}

/// The events of session `sid` in `(after, upto]`, into the batch's pending events.
fn add_events(
    conn: &rusqlite::Connection,
    sid: &str,
    after: i64,
    upto: i64,
    batch: &mut Batch,
) -> Result<(), TeamError> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT seq, time_ms, human, is_error, event_type, time, tool_name, sidechain_agent,
                    text
             FROM events WHERE session_id = ?1 AND seq > ?2 AND seq <= ?3 ORDER BY seq",
        )
        .map_err(local("episodes"))?;
    let mut rows = stmt
        .query(rusqlite::params![sid, after, upto])
        .map_err(local("episodes"))?;
    while let Some(r) = rows.next().map_err(local("episodes"))? {
        let get_s = |i| r.get::<_, Option<String>>(i).map_err(local("episodes"));
        let get_i = |i| r.get::<_, Option<i64>>(i).map_err(local("episodes"));
        batch.pending.push(RawEvent {
            sid: sid.to_string(),
            ints: [get_i(0)?, get_i(1)?, get_i(2)?, get_i(3)?],
            strs: [get_s(4)?, get_s(5)?, get_s(6)?, get_s(7)?],
            text: r.get(8).map_err(local("episodes"))?,
        });
    }
    Ok(())
}

/// Events at least this many in a batch are redacted and tokenised on two threads.
const PARALLEL_EVENTS: usize = 512;

/// The batch's pending events redacted again, their token stream made (the client's largest
/// cost, `docs/PERFORMANCE.md`), on two threads for a large batch, into COPY rows in order.
fn finish_events(plan: &PushPlan, batch: &mut Batch) {
    let mut raw = std::mem::take(&mut batch.pending);
    // The tool's and the inline subagent's names are shown and searched beside the text.
    for e in raw.iter_mut() {
        for name in e.strs[2..].iter_mut().flatten() {
            batch.redacted_again += meta_redact::field(name) as u64;
        }
    }
    let prepare = |part: &[RawEvent]| -> Vec<(redact::Redacted, Vec<u8>)> {
        part.iter()
            .map(|e| {
                let red = redact::redact(&e.text);
                let tsv = tsv::binary(&red.text, e.strs[2].as_deref());
                (red, tsv)
            })
            .collect()
    };
    let two = std::thread::available_parallelism().is_ok_and(|n| n.get() > 1);
    let made = if raw.len() < PARALLEL_EVENTS || !two {
        prepare(&raw)
    } else {
        let (a, b) = raw.split_at(raw.len() / 2);
        std::thread::scope(|scope| {
            let second = scope.spawn(|| prepare(b));
            let mut out = prepare(a);
            match second.join() {
                Ok(rest) => out.extend(rest),
                Err(panic) => std::panic::resume_unwind(panic),
            }
            out
        })
    };
    fn text(v: &Option<String>) -> Bin<'_> {
        v.as_deref().map_or(Bin::Null, Bin::Text)
    }
    let int = |v: Option<i64>| v.map_or(Bin::Null, Bin::Int);
    for (e, (red, tsv)) in raw.iter().zip(made) {
        batch.redacted_again += red.count as u64;
        let [seq, time_ms, human, is_error] = e.ints;
        let [kind, time, tool, side] = &e.strs;
        batch.events.row(&[
            Bin::Text(&plan.machine),
            Bin::Text(&e.sid),
            int(seq),
            text(kind),
            text(time),
            int(time_ms),
            Bin::Text(&red.text),
            Bin::Bool(human.unwrap_or(0) != 0),
            text(tool),
            Bin::Bool(is_error.unwrap_or(0) != 0),
            text(side),
            Bin::Raw(&tsv),
        ]);
    }
}

/// The codes of session `sid`'s events in `(after, upto]` that the local store has.
fn add_codes(
    conn: &rusqlite::Connection,
    plan: &PushPlan,
    covered: i64,
    sid: &str,
    after: i64,
    upto: i64,
    batch: &mut Batch,
) -> Result<(), TeamError> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT id, seq FROM events
             WHERE session_id = ?1 AND seq > ?2 AND seq <= ?3 AND id <= ?4 ORDER BY seq",
        )
        .map_err(local("episodes"))?;
    let rows: Vec<(i64, i64)> = stmt
        .query_map(rusqlite::params![sid, after, upto, covered], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .map_err(local("episodes"))?
        .collect::<Result<_, _>>()
        .map_err(local("episodes"))?;
    let ids: Vec<i64> = rows.iter().map(|r| r.0).collect();
    let codes = export::codes_of(conn, &vectors::EVENTS, &ids).map_err(local("episodes"))?;
    for (id, seq) in &rows {
        let seq = seq.to_string();
        for (win, bits) in codes.get(id).into_iter().flatten() {
            let (win, bits) = (win.to_string(), code_bits(bits));
            batch.codes.row(&[
                Some(&plan.machine),
                Some(sid),
                Some(&seq),
                Some(&win),
                Some(&bits),
            ]);
        }
    }
    Ok(())
}
