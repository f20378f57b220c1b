//! The episodes indexer: the only writer of `episodes.sqlite`.
//!
//! It walks transcript roots, skips unchanged files by fingerprint (size + mtime), reads a growing
//! file from its last complete line (resuming the parser from its saved state), and re-reads a
//! rewritten one (a change that is not an append: the bytes at the resume point differ, or the
//! size did not grow). A session's identity is its id, not its path: a file that moved takes its
//! session over with the same ids, a copy stores nothing twice (see `identity`). Event text
//! is redacted before it is stored, and the stemmed terms of the full-text index
//! (`sources::lexical`, kept in step by `lexical_sync`) are made from the redacted text, so a
//! secret can be found by neither value nor query. With semantic search on,
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
use super::prepare::{load_file_rows, prepare, Prepared, PreparedEvent, TranscriptRow, Work};
use super::store;
use crate::sources::packed;
use crate::sources::vectors::{self, Builder};
use crate::text::{embed, redact};

pub use super::prepare::parse_time_ms;

mod write;
use write::write_file;
pub(super) use write::{append_events, Sinks, WriteError};
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
    /// Stores gone between discovery and reading (deleted, or renamed: the next run finds them
    /// by their new name): skipped and counted, not a failure.
    pub files_vanished: u64,
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

/// Progress of an episodes run, reported after each file (`indexing::IndexProgress` is the whole
/// run's, stage by stage).
#[derive(Debug, Clone)]
pub struct EpisodeIndexProgress<'a> {
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
    #[error("cannot keep the full-text index of {path} in step: {source}")]
    Lexical {
        path: PathBuf,
        #[source]
        source: super::lexical_sync::SyncError,
    },
}

/// Index every transcript under `opts.roots` into the store at `db_path`.
pub fn index_episodes(
    db_path: &Path,
    opts: &IndexOptions,
    progress: &mut dyn FnMut(&EpisodeIndexProgress<'_>),
) -> Result<IndexSummary, IndexError> {
    let started = Instant::now();
    let store_err = |source| IndexError::Store {
        path: db_path.to_path_buf(),
        source,
    };
    let mut conn = store::open_rw(db_path).map_err(store_err)?;
    super::messages::ensure_schema(&conn).map_err(store_err)?;
    let lexical_err = |source| IndexError::Lexical {
        path: db_path.to_path_buf(),
        source,
    };
    let lexical = super::lexical_sync::open(db_path, &conn).map_err(lexical_err)?;
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
        progress(&EpisodeIndexProgress {
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
    let mut failure: Option<WriteError> = None;
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
                        let mut sinks = Sinks {
                            vectors: vectors.as_mut(),
                            lexical: &lexical,
                        };
                        if let Err(e) =
                            write_file(&mut conn, file, old, *work, &mut summary, &mut sinks)
                        {
                            failure = Some(e);
                            stop.store(true, Ordering::SeqCst);
                            return;
                        }
                    }
                    Err(_) if super::prepare::vanished(&file.path) => summary.files_vanished += 1,
                    Err(e) => summary
                        .failed
                        .push((file.path.display().to_string(), e.to_string())),
                }
                bytes_done += sizes[want];
                want += 1;
                written.store(want, Ordering::SeqCst);
                progress(&EpisodeIndexProgress {
                    done: (unchanged.len() + want) as u64,
                    total,
                    bytes_done,
                    bytes_total,
                    path: &file.path,
                });
            }
        }
    });
    match failure {
        Some(WriteError::Sql(e)) => return Err(store_err(e)),
        Some(WriteError::Lexical(e)) => return Err(lexical_err(e.into())),
        None => {}
    }
    // Readers see the run's events once both the store and its full-text index hold them. The
    // store's commits are made durable first (WAL with `synchronous=NORMAL` defers that to a
    // checkpoint): an index must never hold rows a power loss could take from the store.
    conn.execute_batch("PRAGMA wal_checkpoint(FULL);")
        .map_err(store_err)?;
    super::lexical_sync::commit(lexical, &conn).map_err(lexical_err)?;
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
    // Deleted and replaced sessions leave pages free; give them back (see `sqlite`).
    crate::sources::sqlite::give_back_free_pages(&conn).map_err(store_err)?;
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
fn discover_all(roots: &[PathBuf], olds: &HashMap<String, TranscriptRow>) -> FoundStores {
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
