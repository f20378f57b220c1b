//! The episodes store into the team index: sessions by per-session watermarks, their events and
//! the events' vector codes, in batches of about [`super::BATCH_EVENTS`] rows, each one transaction
//! carrying its rows *and* their watermarks.
//!
//! Two watermarks a session: `pushed_seq` / `head_id` for the events (a grown transcript sends
//! only its new events, one re-read from the start is replaced whole, an unchanged one sends
//! nothing) and `vec_seq` for the codes (the local index embeds events after storing them, so a
//! push may find events whose codes come later: they follow on a later push).

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use super::batches::{make_batches, Batch, Msg, Remote, SESSION_TEXT};
use super::{already_pushed, local, set_rev, PushPlan, PushProgress, PushSummary};
use crate::sources::sqlite::{meta_get, open_ro};
use crate::sources::vectors::{self, export};
use crate::team::TeamError;

/// The revision of the episodes store as a push sees it: its content, its codes and how far
/// they reach.
pub(super) fn store_rev(conn: &rusqlite::Connection) -> rusqlite::Result<String> {
    Ok(format!(
        "{}|{}|{}",
        meta_get(conn, "index_rev").unwrap_or_default(),
        export::codes_rev(conn, &vectors::EVENTS),
        export::covered_upto(conn, &vectors::EVENTS)?
    ))
}

/// Push the episodes store, stopping between batches once `stop` is set.
///
/// Two sides, on two threads: the local side reads the store (one snapshot), redacts every text
/// again, makes its token stream and the COPY rows of each batch; the team side runs one
/// transaction a batch. While the server inserts one batch the next one is being made.
pub(super) fn push_episodes(
    client: &mut postgres::Client,
    db: &Path,
    plan: &PushPlan,
    stop: &AtomicBool,
    summary: &mut PushSummary,
    progress: &mut dyn FnMut(PushProgress),
) -> Result<(), TeamError> {
    let rev = {
        let conn = open_ro(db).map_err(local("episodes"))?;
        store_rev(&conn).map_err(local("episodes"))?
    };
    if already_pushed(client, plan, "episodes", &rev)? {
        summary.episodes_skipped = true;
        return Ok(());
    }
    let remote = remote_sessions(client, &plan.machine)?;
    client.batch_execute(STAGING)?;
    // COPY refuses a table under row-level security: a push role's events go through a
    // staging table and one `INSERT … SELECT` the policies check; the owner's go straight in
    // (the staging table's write and read were a tenth of the server's time of an event).
    let events_into = if client
        .query_one("SELECT row_security_active('kn_event')", &[])?
        .get::<_, bool>(0)
    {
        "kn_event_in"
    } else {
        "kn_event"
    };
    let (send, recv) = std::sync::mpsc::sync_channel::<Msg>(2);
    std::thread::scope(|scope| {
        let remote = &remote;
        scope.spawn(move || {
            if let Err(e) = make_batches(db, plan, remote, &send) {
                let _ = send.send(Msg::Failed(e));
            }
        });
        // Dropping `recv` on the way out (an error, a stop) ends the local side at its next
        // send.
        for msg in recv {
            match msg {
                Msg::Batch(b) => {
                    if stop.load(Ordering::Relaxed) {
                        // The revision stays the old one: the next push looks at every
                        // session again and carries on from the watermarks.
                        summary.interrupted = true;
                        return Ok(());
                    }
                    send_batch(client, plan, events_into, &b, summary)?;
                    progress(PushProgress::Sessions {
                        done: b.looked,
                        total: b.total,
                    });
                }
                Msg::End {
                    rev,
                    gone,
                    unchanged,
                } => {
                    summary.sessions_unchanged += unchanged;
                    // Sessions gone from the local index go from the team index too, with the
                    // revision.
                    let mut tx = client.transaction()?;
                    delete_sessions(&mut tx, &plan.machine, &gone)?;
                    set_rev(&mut tx, plan, "episodes", &rev)?;
                    tx.commit()?;
                    summary.sessions_removed += gone.len() as u64;
                    return Ok(());
                }
                Msg::Failed(e) => return Err(e),
            }
        }
        Err(TeamError::ReaderStopped { store: "episodes" })
    })
}

/// The staging tables of the episodes push, made once a connection and emptied at each commit.
const STAGING: &str = "
    CREATE TEMP TABLE IF NOT EXISTS kn_session_in (LIKE kn_session) ON COMMIT DELETE ROWS;
    CREATE TEMP TABLE IF NOT EXISTS kn_event_in (LIKE kn_event) ON COMMIT DELETE ROWS;
    CREATE TEMP TABLE IF NOT EXISTS kn_event_vec_in (LIKE kn_event_vec) ON COMMIT DELETE ROWS;";

fn remote_sessions(
    client: &mut postgres::Client,
    machine: &str,
) -> Result<HashMap<String, Remote>, TeamError> {
    let sql = format!(
        "SELECT session_id, pushed_seq, head_id, outcome, live, events, vec_seq, {}
         FROM kn_session WHERE machine = $1",
        SESSION_TEXT.join(", ")
    );
    let mut out = HashMap::new();
    for r in client.query(&sql, &[&machine])? {
        let fields = (0..SESSION_TEXT.len())
            .map(|i| r.get::<_, Option<String>>(7 + i))
            .collect();
        out.insert(
            r.get::<_, String>(0),
            Remote {
                pushed_seq: r.get(1),
                head_id: r.get(2),
                outcome: r.get(3),
                live: r.get(4),
                events: r.get(5),
                vec_seq: r.get(6),
                fields,
            },
        );
    }
    Ok(out)
}

/// The columns of kn_session, in the order a batch's session rows carry them.
fn session_cols() -> Vec<&'static str> {
    let mut cols = vec![
        "machine",
        "session_id",
        "outcome",
        "live",
        "events",
        "pushed_seq",
        "head_id",
        "vec_seq",
    ];
    cols.extend(SESSION_TEXT);
    cols
}

const EVENT_COLS: [&str; 12] = [
    "machine",
    "session_id",
    "seq",
    "event_type",
    "time",
    "time_ms",
    "text",
    "human",
    "tool_name",
    "is_error",
    "sidechain_agent",
    "tsv",
];

const CODE_COLS: [&str; 5] = ["machine", "session_id", "seq", "win", "code"];

/// Remove sessions of `machine` with their events and codes (the schema checks no keys between
/// them, migration 0003: they come and go together, here and in [`send_batch`]).
fn delete_sessions(
    tx: &mut postgres::Transaction<'_>,
    machine: &str,
    ids: &[String],
) -> Result<(), TeamError> {
    if ids.is_empty() {
        return Ok(());
    }
    for table in ["kn_event_vec", "kn_event", "kn_session"] {
        tx.execute(
            &format!("DELETE FROM {table} WHERE machine = $1 AND session_id = ANY($2)"),
            &[&machine, &ids],
        )?;
    }
    Ok(())
}

/// The team side: one transaction with the batch's sessions (row and watermarks), the events
/// (copied into `events_into`: `kn_event` itself, or its staging table) and the codes they lack.
fn send_batch(
    client: &mut postgres::Client,
    plan: &PushPlan,
    events_into: &str,
    b: &Batch,
    summary: &mut PushSummary,
) -> Result<(), TeamError> {
    let mut tx = client.transaction()?;
    // A server crash may lose the last batches committed but never tears one: the watermarks
    // travel with their rows, and the next push sends again what was lost.
    tx.batch_execute("SET LOCAL synchronous_commit = off")?;
    // The GIN index's pending list is merged in the inserting transaction, in `work_mem`: a
    // batch's new terms are sorted once in memory instead of in 4 MB rounds.
    tx.batch_execute("SET LOCAL work_mem = '64MB'")?;
    delete_sessions(&mut tx, &plan.machine, &b.replace)?;
    let cols = session_cols();
    b.sessions.copy(&mut tx, "kn_session_in", &cols)?;
    tx.batch_execute(&format!(
        "INSERT INTO kn_session ({all}) SELECT {all} FROM kn_session_in
         ON CONFLICT (machine, session_id) DO UPDATE SET {set}",
        all = cols.join(", "),
        set = cols[2..]
            .iter()
            .map(|c| format!("{c} = EXCLUDED.{c}"))
            .collect::<Vec<_>>()
            .join(", ")
    ))?;
    if b.events.count > 0 {
        b.events.copy(&mut tx, events_into, &EVENT_COLS)?;
        if events_into != "kn_event" {
            tx.batch_execute(&format!("INSERT INTO kn_event SELECT * FROM {events_into}"))?;
        }
    }
    if b.codes.count > 0 {
        b.codes.copy(&mut tx, "kn_event_vec_in", &CODE_COLS)?;
        tx.batch_execute("INSERT INTO kn_event_vec SELECT * FROM kn_event_vec_in")?;
    }
    tx.commit()?;
    summary.sessions_new += b.new;
    summary.sessions_grown += b.grown;
    summary.sessions_replaced += b.replaced;
    summary.sessions_updated += b.updated;
    summary.redacted_again += b.redacted_again;
    summary.events_sent += b.events.count;
    summary.event_vectors_sent += b.codes.count;
    summary.batches += 1;
    Ok(())
}
