//! The episodes indexer: the only writer of `episodes.sqlite`.
//!
//! It walks transcript roots, skips unchanged files by fingerprint (size + mtime), reads a growing
//! file from its last complete line (resuming the parser from its saved state), and re-reads a
//! rewritten one (a change that is not an append: the bytes at the resume point differ, or the
//! size did not grow). A session's identity is its id, not its path: a file that moved takes its
//! session over with the same ids, a copy stores nothing twice (see `identity`). Event text
//! is redacted before it is stored, and the stemmed terms that FTS5 indexes are made from the
//! redacted text, so a secret can be found by neither value nor query. With semantic search on,
//! each stored event's text is also handed to the vector builder, which embeds it beside the
//! writer (see `vectors::Builder`).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{params, Connection, Transaction};
use sha2::{Digest, Sha256};

use super::agent::StoreKind;
use super::discover::{discover_changed, Layout, TranscriptFile};
use super::identity::{claim_session, drop_hard_links, Claim};
use super::lines::DEFAULT_MAX_LINE_BYTES;
use super::merge::merge_events;
use super::model::{ParseStats, SessionMeta};
use super::outcome::Outcome;
use super::prepare::{load_file_rows, prepare, FileRow, Prepared, PreparedEvent, Work};
use super::store;
use crate::sources::packed;
use crate::sources::vectors::{self, Builder};
use crate::text::{embed, redact};

pub use super::prepare::parse_time_ms;

/// How the indexer behaves; the defaults suit real machines.
#[derive(Debug, Clone)]
pub struct IndexOptions {
    pub roots: Vec<PathBuf>,
    pub max_line_bytes: usize,
    /// A session whose file changed this recently is reported `live`.
    pub live_window: Duration,
    /// Embed each stored event for the vector arm while indexing (`[search] semantic`).
    pub semantic: bool,
}

impl IndexOptions {
    pub fn new(roots: Vec<PathBuf>) -> Self {
        IndexOptions {
            roots,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            live_window: Duration::from_secs(300),
            semantic: false,
        }
    }
}

/// What one indexing run did, for the summary a person reads.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct IndexSummary {
    pub files_seen: u64,
    pub files_unchanged: u64,
    pub files_new: u64,
    pub files_appended: u64,
    pub files_rewritten: u64,
    /// Files whose session was stored under a path that is gone (moved, archived).
    pub files_moved: u64,
    /// Files holding a session another file holds at least as far (copied folders).
    pub files_copies: u64,
    /// Indexed files no longer on disk: their sessions stay searchable (Claude Code deletes old
    /// transcripts), and a file with the same session id found elsewhere takes them over.
    pub files_gone: u64,
    /// Stores that could not be read and folders that could not be listed, with why.
    pub failed: Vec<(String, String)>,
    pub events_added: u64,
    pub sessions: u64,
    pub bytes_read: u64,
    pub secrets_redacted: u64,
    pub lines: ParseStats,
    pub index_rev: String,
    pub elapsed_ms: u64,
}

/// Progress of a run, reported after each file.
#[derive(Debug, Clone)]
pub struct IndexProgress<'a> {
    pub done: u64,
    pub total: u64,
    pub bytes_done: u64,
    pub bytes_total: u64,
    pub path: &'a Path,
}

#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("cannot open or write the episodes index {path}: {source}")]
    Store {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
}

/// Index every transcript under `opts.roots` into the store at `db_path`.
pub fn index_episodes(
    db_path: &Path,
    opts: &IndexOptions,
    progress: &mut dyn FnMut(&IndexProgress<'_>),
) -> Result<IndexSummary, IndexError> {
    let started = Instant::now();
    let store_err = |source| IndexError::Store {
        path: db_path.to_path_buf(),
        source,
    };
    let mut conn = store::open_rw(db_path).map_err(store_err)?;
    let olds = load_file_rows(&conn).map_err(store_err)?;
    let (mut files, unchanged, unreadable_dirs) = discover_all(&opts.roots, &olds);
    let links = drop_hard_links(&mut files, &olds);

    let sizes: Vec<u64> = files
        .iter()
        .map(|f| std::fs::metadata(&f.path).map(|m| m.len()).unwrap_or(0))
        .collect();
    let unchanged_bytes: u64 = unchanged.iter().map(|(_, size)| size).sum();
    let bytes_total = sizes.iter().sum::<u64>() + unchanged_bytes;
    let total = (files.len() + unchanged.len()) as u64;
    let mut summary = IndexSummary {
        files_seen: total + links,
        files_unchanged: unchanged.len() as u64,
        files_copies: links,
        failed: unreadable_dirs
            .into_iter()
            .map(|(dir, why)| (dir.display().to_string(), why))
            .collect(),
        ..IndexSummary::default()
    };
    if let Some((path, _)) = unchanged.last() {
        progress(&IndexProgress {
            done: unchanged.len() as u64,
            total,
            bytes_done: unchanged_bytes,
            bytes_total,
            path,
        });
    }
    let mut vectors = match opts.semantic.then(embed::shared) {
        Some(Ok(emb)) => Some(Builder::start(&conn, vectors::EVENTS, emb).map_err(store_err)?),
        _ => None,
    };
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 4);
    let next = AtomicUsize::new(0);
    let written = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let mut failure: Option<rusqlite::Error> = None;
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::sync_channel::<(usize, std::io::Result<Prepared>)>(workers * 2);
        for _ in 0..workers {
            let tx = tx.clone();
            let (files, olds, next, written, stop) = (&files, &olds, &next, &written, &stop);
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= files.len() {
                    break;
                }
                // Stay at most a window ahead of the writer, so memory stays bounded.
                while i >= written.load(Ordering::SeqCst) + REORDER_WINDOW {
                    if stop.load(Ordering::SeqCst) {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
                let key = files[i].path.to_string_lossy();
                let old = olds.get(key.as_ref());
                let out = prepare(&files[i], old, opts.max_line_bytes, opts.live_window);
                if tx.send((i, out)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        let mut pending: BTreeMap<usize, std::io::Result<Prepared>> = BTreeMap::new();
        let mut bytes_done = unchanged_bytes;
        for (i, out) in rx.iter() {
            pending.insert(i, out);
            let mut want = written.load(Ordering::SeqCst);
            while let Some(out) = pending.remove(&want) {
                let file = &files[want];
                let key = file.path.to_string_lossy().to_string();
                match out {
                    Ok(Prepared::Unchanged) => summary.files_unchanged += 1,
                    Ok(Prepared::Changed(work)) => {
                        let old = olds.get(&key);
                        let vecs = vectors.as_mut();
                        if let Err(e) = write_file(&mut conn, file, old, *work, &mut summary, vecs)
                        {
                            failure = Some(e);
                            stop.store(true, Ordering::SeqCst);
                            return;
                        }
                    }
                    Err(e) => summary
                        .failed
                        .push((file.path.display().to_string(), e.to_string())),
                }
                bytes_done += sizes[want];
                want += 1;
                written.store(want, Ordering::SeqCst);
                progress(&IndexProgress {
                    done: (unchanged.len() + want) as u64,
                    total,
                    bytes_done,
                    bytes_total,
                    path: &file.path,
                });
            }
        }
    });
    if let Some(e) = failure {
        return Err(store_err(e));
    }
    if let Some(v) = vectors {
        v.finish(&mut conn).map_err(store_err)?;
    }
    summary.files_gone = count_gone(&conn).map_err(store_err)?;
    let read: std::collections::HashSet<String> =
        files.iter().map(|f| f.path.display().to_string()).collect();
    super::failed_stores::record(&conn, &read, &summary.failed).map_err(store_err)?;
    let rev = compute_index_rev(&conn).map_err(store_err)?;
    store::meta_set(&conn, "index_rev", &rev).map_err(store_err)?;
    summary.sessions = conn
        .query_row("SELECT count(*) FROM sessions", [], |r| r.get::<_, i64>(0))
        .map_err(store_err)? as u64;
    summary.index_rev = rev;
    // Fewer FTS segments for every later lookup to open (see `fts::segments`).
    let tidied = crate::sources::fts::segments::tidy(&conn, "events_fts").map_err(store_err)?;
    // A whole rewrite leaves the old segments' pages free; give them back (see `sqlite`).
    let rewrote = matches!(
        tidied,
        crate::sources::fts::segments::Tidied::Optimized { .. }
    );
    crate::sources::sqlite::give_back_free_pages(&conn, rewrote).map_err(store_err)?;
    // Fold the WAL into the main file: readers then see one self-contained, unchanging file.
    let _ = conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);");
    summary.elapsed_ms = started.elapsed().as_millis() as u64;
    Ok(summary)
}

/// What [`discover_all`] found: the stores to read, the unchanged ones with their sizes, and the
/// folders that could not be listed with why.
type FoundStores = (
    Vec<TranscriptFile>,
    Vec<(PathBuf, u64)>,
    Vec<(PathBuf, String)>,
);

/// The stores under `roots` (each found once, sorted by path) that need reading, recognised by
/// their readers, those the index holds as they are now (`olds`), with their sizes, and the
/// folders that could not be listed, with why.
fn discover_all(roots: &[PathBuf], olds: &HashMap<String, FileRow>) -> FoundStores {
    let is_unchanged = |path: &Path, meta: &std::fs::Metadata| {
        olds.get(path.to_string_lossy().as_ref())
            .is_some_and(|o| o.unchanged(path, meta))
    };
    let mut files: Vec<TranscriptFile> = Vec::new();
    let mut unchanged: Vec<(PathBuf, u64)> = Vec::new();
    let mut unreadable: Vec<(PathBuf, String)> = Vec::new();
    for root in roots {
        let found = discover_changed(root, &is_unchanged);
        files.extend(found.changed);
        unchanged.extend(found.unchanged);
        unreadable.extend(found.unreadable_dirs);
    }
    unreadable.sort();
    unreadable.dedup_by(|a, b| a.0 == b.0);
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files.dedup_by(|a, b| a.path == b.path);
    unchanged.sort();
    unchanged.dedup_by(|a, b| a.0 == b.0);
    // Two roots holding one file that changed between their walks: it is read.
    if !unchanged.is_empty() {
        unchanged.retain(|(p, _)| files.binary_search_by(|f| f.path.cmp(p)).is_err());
    }
    (files, unchanged, unreadable)
}

/// Indexed files that are no longer on disk (their sessions are kept).
fn count_gone(conn: &Connection) -> rusqlite::Result<u64> {
    let mut stmt = conn.prepare("SELECT path FROM files")?;
    let paths = stmt.query_map([], |r| r.get::<_, String>(0))?;
    let mut gone = 0;
    for path in paths {
        if std::fs::symlink_metadata(path?).is_err() {
            gone += 1;
        }
    }
    Ok(gone)
}

/// Files more than this far ahead of the writer wait, so memory stays bounded.
const REORDER_WINDOW: usize = 16;

/// Store one prepared store in one transaction.
fn write_file(
    conn: &mut Connection,
    file: &TranscriptFile,
    old: Option<&FileRow>,
    work: Work,
    summary: &mut IndexSummary,
    vectors: Option<&mut Builder>,
) -> rusqlite::Result<()> {
    let path_str = file.path.to_string_lossy().to_string();
    summary.bytes_read += work.end.saturating_sub(work.start);
    summary.lines.add(&work.lines);
    let tx = conn.transaction()?;
    let (session_id, state) = if work.many_sessions() {
        write_sessions(&tx, file, old, &work, summary, vectors)?
    } else {
        write_file_session(&tx, file, old, &work, summary, vectors)?
    };
    let stats = work.total;
    tx.execute(
        "INSERT INTO files(path, kind, session_id, size, mtime_ns, head_hash, resume_hash, offset,
                           parser_state, lines, skipped)
         VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?11, ?7, ?8, ?9, ?10)
         ON CONFLICT(path) DO UPDATE SET kind=excluded.kind, session_id=excluded.session_id,
           size=excluded.size, mtime_ns=excluded.mtime_ns, head_hash=excluded.head_hash,
           resume_hash=excluded.resume_hash, offset=excluded.offset,
           parser_state=excluded.parser_state, lines=excluded.lines, skipped=excluded.skipped",
        params![
            path_str,
            file.kind.as_str(),
            session_id,
            work.size as i64,
            work.mtime_ns,
            work.head_hash,
            work.end as i64,
            packed::pack(&state),
            stats.lines as i64,
            stats.skipped() as i64,
            work.resume_hash,
        ],
    )?;
    tx.commit()
}

/// The one session of a one-session file: appended to, or claimed (see `identity`) and stored
/// anew. Returns the session id and the cursor to save.
fn write_file_session(
    tx: &Transaction<'_>,
    file: &TranscriptFile,
    old: Option<&FileRow>,
    work: &Work,
    summary: &mut IndexSummary,
    vectors: Option<&mut Builder>,
) -> rusqlite::Result<(String, String)> {
    let path_str = file.path.to_string_lossy().to_string();
    let (meta, outcome) = work.file_session();
    let moved_before = summary.files_moved;
    let claim = match (old, work.appended) {
        (Some(o), true) => {
            summary.files_appended += 1;
            Claim::Own(o.session_id.clone())
        }
        _ => {
            let key = session_key(file, &meta);
            claim_session(tx, &key, file, work, summary)?
        }
    };
    Ok(match claim {
        Claim::Copy(session_id) => {
            summary.files_copies += 1;
            match old {
                Some(_) => summary.files_rewritten += 1,
                None => summary.files_new += 1,
            }
            // No cursor: if the copy ever changes, it is re-read and claimed again.
            (session_id, String::new())
        }
        Claim::Own(session_id) => {
            let events = work.sessions.iter().flat_map(|s| &s.events);
            let added = if work.appended {
                append_events(tx, &session_id, events, vectors)?
            } else {
                // A re-read keeps every stored event's seq; only what is new is added.
                merge_events(tx, &session_id, events, vectors)?
            };
            if !work.appended {
                match old {
                    // Touched, same bytes: nothing was rewritten.
                    Some(o) if added == 0 && o.size == work.size => summary.files_unchanged += 1,
                    Some(_) => summary.files_rewritten += 1,
                    None if summary.files_moved > moved_before => {}
                    None => summary.files_new += 1,
                }
            }
            summary.events_added += added;
            summary.secrets_redacted += work.secrets;
            upsert_session(tx, &session_id, file, &meta, outcome, &path_str, work.live)?;
            (session_id, saved_cursor(&work.cursor))
        }
    })
}

/// The sessions of a many-session store, each under the id its reader gave: replaced when the
/// reader pushed it whole, appended to otherwise. The store's own row names no session.
fn write_sessions(
    tx: &Transaction<'_>,
    file: &TranscriptFile,
    old: Option<&FileRow>,
    work: &Work,
    summary: &mut IndexSummary,
    mut vectors: Option<&mut Builder>,
) -> rusqlite::Result<(String, String)> {
    let path_str = file.path.to_string_lossy().to_string();
    // A database pushes a changed session whole, as it is now; a file holding many sessions
    // (Aider) is re-read whole only when it is not an append, and then merges like any file.
    let database = file.kind.reader().store_kind(&file.path) == StoreKind::Database;
    let mut added = 0;
    for s in &work.sessions {
        let Some(start) = &s.start else { continue };
        let vecs = vectors.as_deref_mut();
        added += match (start.replace, database) {
            (true, true) => {
                delete_session(tx, &start.session_id)?;
                append_events(tx, &start.session_id, s.events.iter(), vecs)?
            }
            (true, false) => merge_events(tx, &start.session_id, s.events.iter(), vecs)?,
            (false, _) => append_events(tx, &start.session_id, s.events.iter(), vecs)?,
        };
        upsert_session(
            tx,
            &start.session_id,
            file,
            &s.meta,
            s.outcome,
            &path_str,
            work.live,
        )?;
    }
    match old {
        Some(_) if work.appended => summary.files_appended += 1,
        Some(o) if added == 0 && o.size == work.size => summary.files_unchanged += 1,
        Some(_) => summary.files_rewritten += 1,
        None => summary.files_new += 1,
    }
    summary.events_added += added;
    summary.secrets_redacted += work.secrets;
    Ok((String::new(), saved_cursor(&work.cursor)))
}

/// The cursor as saved: it holds titles, descriptions, paths and the session's metadata as the
/// records wrote them, so every string in it is redacted, each on its own (redacting the JSON
/// text as one string let a value run on into the next field: a secret kept, the cursor broken
/// and the metadata after it lost on the next append). A cursor that is not JSON is redacted as
/// text (one that no longer parses just means a full re-read).
fn saved_cursor(cursor: &str) -> String {
    fn each_string(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::String(s) => {
                super::meta_redact::field(s);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(each_string),
            serde_json::Value::Object(map) => map.values_mut().for_each(each_string),
            _ => {}
        }
    }
    match serde_json::from_str::<serde_json::Value>(cursor) {
        Ok(mut v) => {
            each_string(&mut v);
            v.to_string()
        }
        Err(_) => redact::redact(cursor).text,
    }
}

/// Appends events after the session's last `seq`.
pub(super) fn append_events<'a>(
    tx: &Transaction<'_>,
    session_id: &str,
    events: impl Iterator<Item = &'a PreparedEvent>,
    vectors: Option<&mut Builder>,
) -> rusqlite::Result<u64> {
    let next_seq: i64 = tx
        .query_row(
            "SELECT coalesce(max(seq), 0) FROM events WHERE session_id=?1",
            [session_id],
            |r| r.get(0),
        )
        .unwrap_or(0);
    insert_events(tx, session_id, next_seq, events, vectors)
}

/// The session id a file's events are stored under.
///
/// The file's reader names the session of a main file (Claude: the `<sessionId>.jsonl` stem,
/// which is what `claude --resume` takes; Codex: its first `session_meta` id); a subagent
/// transcript gets `<parent>/agent-<id>` so its `seq` never collides with its parent's.
fn session_key(file: &TranscriptFile, meta: &SessionMeta) -> String {
    let stem = file
        .path
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    match &file.layout {
        Layout::Subagent {
            parent_session_hint,
            agent_id_hint,
            ..
        } => {
            let parent = parent_session_hint
                .clone()
                .or_else(|| meta.parent_session_id.clone())
                .or_else(|| meta.session_id.clone())
                .unwrap_or_else(|| "unknown".to_string());
            let agent = agent_id_hint
                .clone()
                .or_else(|| meta.agent_id.clone())
                .unwrap_or_else(|| stem.trim_start_matches("agent-").to_string());
            format!("{parent}/agent-{agent}")
        }
        Layout::Main => file
            .kind
            .reader()
            .file_session_id(file, meta)
            .unwrap_or(stem),
    }
}

pub(super) fn delete_session(tx: &Transaction<'_>, session_id: &str) -> rusqlite::Result<()> {
    tx.execute(
        "DELETE FROM events_fts WHERE rowid IN (SELECT id FROM events WHERE session_id=?1)",
        [session_id],
    )?;
    tx.execute(
        "DELETE FROM event_rows
         WHERE session_key = (SELECT key FROM session_keys WHERE session_id=?1)",
        [session_id],
    )?;
    tx.execute("DELETE FROM sessions WHERE session_id=?1", [session_id])?;
    Ok(())
}

fn insert_events<'a>(
    tx: &Transaction<'_>,
    session_id: &str,
    last_seq: i64,
    events: impl Iterator<Item = &'a PreparedEvent>,
    mut vectors: Option<&mut Builder>,
) -> rusqlite::Result<u64> {
    let session = store::session_key(tx, session_id)?;
    let mut types = store::EventTypes::default();
    let mut tool_ids = store::ToolIds::after(tx, session, last_seq)?;
    let mut ins = tx.prepare_cached(&format!(
        "INSERT INTO event_rows(session_key, seq, type_key, time, time_ms, text, human, tool_name,
                                tool_use_id, is_error, sidechain_agent, facts)
         VALUES(?1, ?2, ?3, {}, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        store::stored_time_sql("?4", "?5")
    ))?;
    let mut fts = tx.prepare_cached("INSERT INTO events_fts(rowid, terms) VALUES(?1, ?2)")?;
    let mut n = 0u64;
    for (i, p) in events.enumerate() {
        n += 1;
        let ev = &p.event;
        ins.execute(params![
            session,
            last_seq + 1 + i as i64,
            types.key(tx, ev.event_type.as_str())?,
            ev.time,
            p.time_ms,
            match &p.packed {
                Some(bytes) => ToSqlOutput::Borrowed(ValueRef::Blob(bytes)),
                None => ToSqlOutput::Borrowed(ValueRef::Text(ev.text.as_bytes())),
            },
            ev.human,
            ev.tool_name,
            match ev.tool_use_id.as_deref() {
                _ if tool_ids.same(ev.tool_use_id.as_deref()) => {
                    ToSqlOutput::Borrowed(ValueRef::Blob(store::SAME_TOOL_ID))
                }
                Some(t) => ToSqlOutput::Borrowed(ValueRef::Text(t.as_bytes())),
                None => ToSqlOutput::Borrowed(ValueRef::Null),
            },
            ev.is_error,
            ev.sidechain_agent,
            p.facts,
        ])?;
        let id = tx.last_insert_rowid();
        fts.execute(params![id, p.terms])?;
        if let Some(v) = vectors.as_deref_mut() {
            v.add(id, ev.text.clone());
        }
    }
    Ok(n)
}

fn upsert_session(
    tx: &Transaction<'_>,
    session_id: &str,
    file: &TranscriptFile,
    m: &SessionMeta,
    outcome: Outcome,
    path: &str,
    live: bool,
) -> rusqlite::Result<()> {
    let events: i64 = tx.query_row(
        "SELECT count(*) FROM events WHERE session_id=?1",
        [session_id],
        |r| r.get(0),
    )?;
    let parent = match &file.layout {
        Layout::Subagent {
            parent_session_hint,
            ..
        } => parent_session_hint
            .clone()
            .or_else(|| m.parent_session_id.clone())
            .or_else(|| m.session_id.clone()),
        Layout::Main => m.parent_session_id.clone(),
    };
    let agent_id = match &file.layout {
        Layout::Subagent { agent_id_hint, .. } => {
            agent_id_hint.clone().or_else(|| m.agent_id.clone())
        }
        Layout::Main => m.agent_id.clone(),
    };
    tx.execute(
        "INSERT INTO sessions(session_id, source, path, cwd, created_at, last_event_at,
            agent_preset, title, parent_session_id, agent_id, agent_name, agent_description,
            spawn_tool_use_id, team_name, git_branch, version, outcome, live, events)
         VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,
                ?19)
         ON CONFLICT(session_id) DO UPDATE SET source=excluded.source, path=excluded.path,
            cwd=excluded.cwd, created_at=excluded.created_at, last_event_at=excluded.last_event_at,
            agent_preset=excluded.agent_preset, title=excluded.title,
            parent_session_id=excluded.parent_session_id, agent_id=excluded.agent_id,
            agent_name=excluded.agent_name, agent_description=excluded.agent_description,
            spawn_tool_use_id=excluded.spawn_tool_use_id, team_name=excluded.team_name,
            git_branch=excluded.git_branch, version=excluded.version, outcome=excluded.outcome,
            live=excluded.live, events=excluded.events",
        params![
            session_id,
            file.kind.as_str(),
            path,
            m.cwd,
            m.created_at,
            m.last_event_at,
            m.agent_preset,
            m.title.as_deref().map(|t| redact::redact(t).text),
            parent,
            agent_id,
            m.agent_name,
            m.agent_description
                .as_deref()
                .map(|t| redact::redact(t).text),
            m.spawn_tool_use_id,
            m.team_name,
            m.git_branch,
            m.version,
            outcome.as_str(),
            live,
            events,
        ],
    )?;
    Ok(())
}

/// A content fingerprint of the whole store: it changes exactly when indexed content changes.
fn compute_index_rev(conn: &Connection) -> rusqlite::Result<String> {
    // Size and mtime too: a rewrite of the same length behind an unchanged head is a change.
    let mut stmt =
        conn.prepare("SELECT path, offset, head_hash, size, mtime_ns FROM files ORDER BY path")?;
    let mut h = Sha256::new();
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let path: String = r.get(0)?;
        let head: String = r.get(2)?;
        h.update(path.as_bytes());
        h.update(r.get::<_, i64>(1)?.to_le_bytes());
        h.update(head.as_bytes());
        h.update(r.get::<_, i64>(3)?.to_le_bytes());
        h.update(r.get::<_, i64>(4)?.to_le_bytes());
    }
    let digest = h.finalize();
    let hex: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    Ok(format!("episodes:{hex}"))
}
