//! `knowledge push`: this data dir's stores into the team index, labelled with the machine and
//! the person: the episodes store (sessions, events and their vector codes), the code store
//! (chunks and their codes) and the agent-knowledge store (skills, actors, skill uses, edits).
//!
//! - **Incremental**: a store whose revision equals the one last pushed is skipped whole; inside
//!   the episodes store each session has watermarks (`episodes.rs`); the code and agent-knowledge
//!   stores, written whole by their indexers, are replaced whole when they changed.
//! - **Atomic per batch**: every transaction carries its rows *and* their watermarks, so a
//!   `kill -9` leaves the database as it was after the last batch and the next push carries on.
//! - **One push per machine at a time** (a session advisory lock); two machines push in parallel.
//! - **Nothing the local stores would not show**: the stores hold redacted text, and every text
//!   is redacted again on the way out (what that catches is counted in the summary).

mod batches;
mod copy;
mod episodes;
mod knowledge;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use self::copy::Staged;
use super::{code_bits, schema, tsv, TeamError, TeamUrl};
use crate::config::DataDir;
use crate::sources::sqlite::{meta_get, open_ro};
use crate::sources::vectors::{self, export};
use crate::text::redact;

pub use self::batches::BATCH_EVENTS;

/// What to push and as whom.
#[derive(Debug, Clone)]
pub struct PushPlan {
    pub machine: String,
    pub person: Option<String>,
}

/// Where a push is: for a progress bar.
#[derive(Debug, Clone, Copy)]
pub enum PushProgress {
    /// Sessions of the episodes store looked at so far, of all.
    Sessions { done: u64, total: u64 },
    /// Code chunks sent.
    Chunks { done: u64 },
    /// Rows of the agent-knowledge store sent.
    Knowledge { rows: u64 },
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
    /// Vector codes (one per window of an event's text) sent.
    pub event_vectors_sent: u64,
    pub chunks_sent: u64,
    pub chunk_vectors_sent: u64,
    /// Rows of the agent-knowledge store sent (every table), and of three of its tables.
    pub knowledge_rows: u64,
    pub skills_sent: u64,
    pub actors_sent: u64,
    pub skill_uses_sent: u64,
    pub batches: u64,
    /// Secrets the re-check redacted that the local store still held in clear.
    pub redacted_again: u64,
    /// Whether a store was skipped whole because its revision was already pushed.
    pub episodes_skipped: bool,
    pub code_skipped: bool,
    pub knowledge_skipped: bool,
    /// Stopped at a batch boundary before the end (the next push carries on).
    pub interrupted: bool,
}

/// Push `data_dir` to `url` as `plan.machine`.
pub fn push(
    data_dir: &Path,
    url: &TeamUrl,
    plan: &PushPlan,
    progress: &mut dyn FnMut(PushProgress),
) -> Result<PushSummary, TeamError> {
    push_until(data_dir, url, plan, &AtomicBool::new(false), progress)
}

/// [`push`], stopping at the next batch boundary once `stop` is set (Ctrl-C in `push --watch`):
/// what was committed stays, the stores not finished keep their old revision, so the next push
/// carries on; the summary says `interrupted`.
/// How long a push waits for its machine's lock: a push killed with `kill -9` holds it until
/// the server notices the closed connection and ends its backend, which takes a moment; another
/// push still running holds it for longer, and this one then says the machine is busy.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Take the machine's advisory lock, retrying for up to [`LOCK_WAIT`].
fn take_machine_lock(client: &mut postgres::Client, lock: i64) -> Result<bool, TeamError> {
    let started = std::time::Instant::now();
    loop {
        let got: bool = client
            .query_one("SELECT pg_try_advisory_lock($1)", &[&lock])?
            .get(0);
        if got || started.elapsed() >= LOCK_WAIT {
            return Ok(got);
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

pub fn push_until(
    data_dir: &Path,
    url: &TeamUrl,
    plan: &PushPlan,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(PushProgress),
) -> Result<PushSummary, TeamError> {
    super::check_machine(&plan.machine)?;
    let files = DataDir::new(data_dir);
    let mut client = url.connect()?;
    let schema_before = schema::migrate(&mut client)?;
    check_may_push(&mut client, &plan.machine)?;
    let lock = machine_lock(&plan.machine);
    if !take_machine_lock(&mut client, lock)? {
        return Err(TeamError::Busy(plan.machine.clone()));
    }
    let mut summary = PushSummary {
        machine: plan.machine.clone(),
        schema_before,
        ..PushSummary::default()
    };
    let (episodes, code, knowledge) = (files.episodes_db(), files.code_db(), files.knowledge_db());
    let stopped = |summary: &mut PushSummary| {
        summary.interrupted |= stop.load(Ordering::Relaxed);
        summary.interrupted
    };
    let result = (|| {
        if episodes.exists() && !stopped(&mut summary) {
            episodes::push_episodes(&mut client, &episodes, plan, stop, &mut summary, progress)?;
        }
        if code.exists() && !stopped(&mut summary) {
            push_code(&mut client, &code, plan, &mut summary, progress)?;
        }
        if knowledge.exists() && !stopped(&mut summary) {
            knowledge::push_knowledge(&mut client, &knowledge, plan, &mut summary, progress)?;
        }
        stopped(&mut summary);
        Ok(())
    })();
    let _ = client.execute("SELECT pg_advisory_unlock($1)", &[&lock]);
    result.map(|()| summary)
}

/// The revision of the code store as a push sees it: its content and its codes.
fn code_rev(conn: &rusqlite::Connection) -> String {
    format!(
        "{}|{}",
        meta_get(conn, "index_rev").unwrap_or_default(),
        export::codes_rev(conn, &vectors::CHUNKS)
    )
}

/// A fingerprint of every store a push reads: it changes exactly when a push may have
/// something to send (`push --watch` pushes when it changes).
pub fn local_revision(data_dir: &Path) -> String {
    let files = DataDir::new(data_dir);
    let read = |db: &Path, rev: &dyn Fn(&rusqlite::Connection) -> String| {
        open_ro(db).map_or_else(|_| String::new(), |c| rev(&c))
    };
    [
        read(&files.episodes_db(), &|c| {
            episodes::store_rev(c).unwrap_or_default()
        }),
        read(&files.code_db(), &code_rev),
        read(&files.knowledge_db(), &|c| {
            meta_get(c, "index_rev").unwrap_or_default()
        }),
    ]
    .join("\n")
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
        pushes: mine,
    })
}

pub(super) fn local(store: &'static str) -> impl Fn(rusqlite::Error) -> TeamError {
    move |source| TeamError::Local { store, source }
}

/// Whether this machine already pushed `store` at revision `rev` (an unknown revision never is).
pub(super) fn already_pushed(
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

pub(super) fn set_rev(
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

/// The code store changed: this machine's chunks and their codes are replaced in one
/// transaction.
fn push_code(
    client: &mut postgres::Client,
    db: &Path,
    plan: &PushPlan,
    summary: &mut PushSummary,
    progress: &mut dyn FnMut(PushProgress),
) -> Result<(), TeamError> {
    let conn = open_ro(db).map_err(local("code"))?;
    // One read snapshot: the chunks and their codes as one revision.
    conn.execute_batch("BEGIN").map_err(local("code"))?;
    let rev = code_rev(&conn);
    if already_pushed(client, plan, "code", &rev)? {
        summary.code_skipped = true;
        return Ok(());
    }
    let mut tx = client.transaction()?;
    tx.execute("DELETE FROM kn_chunk WHERE machine = $1", &[&plan.machine])?;
    const COLS: [&str; 12] = [
        "machine",
        "chunk_id",
        "root",
        "path",
        "start_line",
        "end_line",
        "source_kind",
        "symbol",
        "text",
        "mtime",
        "mtime_ms",
        "tsv",
    ];
    let mut w = Staged::start(
        &mut tx,
        "kn_chunk_in",
        "(LIKE kn_chunk) ON COMMIT DROP",
        &COLS,
    )?;
    let mut stmt = conn
        .prepare(
            "SELECT c.chunk_id, c.root, c.path, c.start_line, c.end_line, c.source_kind, c.symbol,
                    c.text, c.terms || ' ' || c.sym_terms || ' ' || c.path_terms, f.mtime_ns, c.id
             FROM chunks c JOIN files f ON f.id = c.file_id ORDER BY c.id",
        )
        .map_err(local("code"))?;
    let mut rows = stmt.query([]).map_err(local("code"))?;
    // Local row id -> chunk id, for the codes.
    let mut chunk_ids: std::collections::HashMap<i64, String> = Default::default();
    while let Some(r) = rows.next().map_err(local("code"))? {
        let s = |i| r.get::<_, Option<String>>(i).map_err(local("code"));
        let n = |i| r.get::<_, Option<i64>>(i).map_err(local("code"));
        let text = s(7)?.unwrap_or_default();
        let path = s(2)?.unwrap_or_default();
        let kind = crate::sources::code::chunk::file_text_kind(&path, &text);
        let red = redact::redact_as(&text, kind);
        summary.redacted_again += red.count as u64;
        let mtime_ms = n(9)?.map(|ns| ns / 1_000_000);
        let chunk_id = s(0)?;
        let (start, end) = (n(3)?.map(|v| v.to_string()), n(4)?.map(|v| v.to_string()));
        let (root, kind, symbol) = (s(1)?, s(5)?, s(6)?);
        let mtime = mtime_ms.and_then(crate::sources::agent_knowledge::ms_to_rfc3339);
        let mtime_ms = mtime_ms.map(|v| v.to_string());
        let tsv = tsv::from_terms(&s(8)?.unwrap_or_default());
        w.row(&[
            Some(&plan.machine),
            chunk_id.as_deref(),
            root.as_deref(),
            Some(&path),
            start.as_deref(),
            end.as_deref(),
            kind.as_deref(),
            symbol.as_deref(),
            Some(&red.text),
            mtime.as_deref(),
            mtime_ms.as_deref(),
            Some(&tsv),
        ])?;
        if let (Some(id), Some(cid)) = (n(10)?, chunk_id) {
            chunk_ids.insert(id, cid);
        }
        summary.chunks_sent += 1;
        if summary.chunks_sent.is_multiple_of(1000) {
            progress(PushProgress::Chunks {
                done: summary.chunks_sent,
            });
        }
    }
    w.finish()?;
    tx.batch_execute("INSERT INTO kn_chunk SELECT * FROM kn_chunk_in")?;
    let cols = ["machine", "chunk_id", "win", "code"];
    let mut w = Staged::start(
        &mut tx,
        "kn_chunk_vec_in",
        "(LIKE kn_chunk_vec) ON COMMIT DROP",
        &cols,
    )?;
    let mut failed = None;
    export::for_each_code(&conn, &vectors::CHUNKS, |(parent, win, bits)| {
        let Some(cid) = chunk_ids.get(&parent) else {
            return;
        };
        if failed.is_none() {
            let (win, bits) = (win.to_string(), code_bits(&bits));
            failed = w
                .row(&[Some(&plan.machine), Some(cid), Some(&win), Some(&bits)])
                .err();
        }
    })
    .map_err(local("code"))?;
    if let Some(e) = failed {
        return Err(e);
    }
    summary.chunk_vectors_sent += w.finish()?;
    tx.batch_execute("INSERT INTO kn_chunk_vec SELECT * FROM kn_chunk_vec_in")?;
    set_rev(&mut tx, plan, "code", &rev)?;
    tx.commit()?;
    summary.batches += 1;
    Ok(())
}
