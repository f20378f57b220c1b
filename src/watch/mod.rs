//! Watch mode: the index follows the session roots, code roots and skill folders as they are
//! written. File-system notifications (inotify and friends through `notify`, or polling where
//! those are unavailable or their watch limit is reached) are batched for [`DEBOUNCE`] and each
//! batch runs the same incremental [`index_all`] as `knowledge index`, limited to the stages
//! whose files changed: a growing transcript is read from where it stopped, an edited code file
//! is re-chunked, a new SKILL.md reaches the skills lane.
//!
//! One writer per data dir still holds: a batch that finds the index lock taken reports
//! [`WatchEvent::Busy`] and tries again. Readers never wait: the stores are WAL databases opened
//! read-only, so a search sees the newest committed revision.
//!
//! When nothing changes the watcher's thread sleeps in a blocking receive: no timers, no polling
//! (unless the polling fallback is in use).

pub mod scope;
pub mod slot;

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use notify::Watcher as _;
use serde::Serialize;

use crate::indexing::{index_all, IndexAllError, IndexAllSummary, IndexPlan};
pub use scope::{Dirty, Scope};

/// At most this long changes are collected after the first one before a batch is indexed …
pub const DEBOUNCE: Duration = Duration::from_millis(1000);
/// … and a batch closes earlier once the files have been quiet this long.
pub const QUIET: Duration = Duration::from_millis(250);
/// How often the polling fallback looks at the files.
pub const POLL_INTERVAL: Duration = Duration::from_secs(2);
/// How long a batch waits before trying again when another process holds the index lock.
pub const BUSY_RETRY: Duration = Duration::from_secs(2);
/// Set to `1` to use polling even where native notifications work (network file systems).
pub const POLL_ENV: &str = "KNOWLEDGE_WATCH_POLL";

#[derive(Debug, Clone)]
pub struct WatchOptions {
    pub debounce: Duration,
    pub poll_interval: Duration,
    /// Poll instead of native notifications.
    pub force_poll: bool,
    /// Index the whole plan once when the watch starts (changes made while nobody watched).
    pub catch_up: bool,
}

impl Default for WatchOptions {
    fn default() -> Self {
        WatchOptions {
            debounce: DEBOUNCE,
            poll_interval: POLL_INTERVAL,
            force_poll: std::env::var(POLL_ENV).is_ok_and(|v| v == "1"),
            catch_up: true,
        }
    }
}

/// How changes are noticed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    Native,
    Poll,
}

/// What the watcher reports to its front end.
#[derive(Debug)]
pub enum WatchEvent {
    /// A batch was indexed.
    Indexed(Box<Batch>),
    /// Another process holds the index lock; the batch is retried.
    Busy(String),
    /// Indexing failed; the next change tries again.
    Failed(String),
}

#[derive(Debug, Clone, Serialize)]
pub struct Batch {
    pub dirty_sessions: bool,
    pub dirty_code: bool,
    pub dirty_skills: bool,
    /// Events added to the episodes index by this batch.
    pub new_events: u64,
    pub elapsed_ms: u64,
    pub summary: IndexAllSummary,
}

#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    #[error("nothing to watch: none of the indexed roots exists (run `knowledge index` with --sessions, --code or --skills)")]
    NoRoots,
    #[error("cannot watch {0}: {1}")]
    Watch(PathBuf, notify::Error),
    #[error("cannot start the watcher thread: {0}")]
    Thread(std::io::Error),
}

/// A running watch; dropping it stops the watcher and waits for a batch in progress.
pub struct Watch {
    backend: Backend,
    roots: Vec<PathBuf>,
    watcher: Option<Box<dyn notify::Watcher + Send>>,
    thread: Option<JoinHandle<()>>,
}

impl Watch {
    /// Start watching the plan's roots; `report` is called on the watcher's thread.
    pub fn start(
        data_dir: &Path,
        plan: &IndexPlan,
        opts: WatchOptions,
        report: impl FnMut(WatchEvent) + Send + 'static,
    ) -> Result<Watch, WatchError> {
        let scope = Scope::new(data_dir, plan);
        let roots = scope.roots();
        if roots.is_empty() {
            return Err(WatchError::NoRoots);
        }
        let (tx, rx) = mpsc::channel::<notify::Result<notify::Event>>();
        let (watcher, backend) = if opts.force_poll {
            (poll_watcher(&roots, tx, opts.poll_interval)?, Backend::Poll)
        } else {
            match native_watcher(&roots, tx.clone()) {
                Ok(w) => (w, Backend::Native),
                // No inotify, or its watch limit reached: poll instead.
                Err(_) => (poll_watcher(&roots, tx, opts.poll_interval)?, Backend::Poll),
            }
        };
        let data_dir = data_dir.to_path_buf();
        let plan = plan.clone();
        let thread = std::thread::Builder::new()
            .name("knowledge-watch".into())
            .spawn(move || run(&data_dir, &plan, &scope, &opts, rx, report))
            .map_err(WatchError::Thread)?;
        Ok(Watch {
            backend,
            roots,
            watcher: Some(watcher),
            thread: Some(thread),
        })
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The folders watched (canonical, nested roots folded into their parents).
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        // Dropping the watcher closes the channel, which ends the thread's receive loop.
        self.watcher.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A background watch for the explorer or `knowledge mcp` over the roots `knowledge index` last
/// indexed into this data dir, catching up first on what changed while nobody watched.
/// `Ok(None)` when nothing was ever indexed here with the CLI: a watch never starts indexing
/// folders the person did not choose.
pub fn background(
    data_dir: &Path,
    on_event: impl FnMut(WatchEvent) + Send + 'static,
) -> Result<Option<Watch>, WatchError> {
    let Some(plan) = crate::saved_plan::load(data_dir) else {
        return Ok(None);
    };
    Watch::start(data_dir, &plan, WatchOptions::default(), on_event).map(Some)
}

fn native_watcher(
    roots: &[PathBuf],
    tx: mpsc::Sender<notify::Result<notify::Event>>,
) -> Result<Box<dyn notify::Watcher + Send>, WatchError> {
    let mut w =
        notify::recommended_watcher(tx).map_err(|e| WatchError::Watch(roots[0].clone(), e))?;
    for r in roots {
        w.watch(r, notify::RecursiveMode::Recursive)
            .map_err(|e| WatchError::Watch(r.clone(), e))?;
    }
    Ok(Box::new(w))
}

fn poll_watcher(
    roots: &[PathBuf],
    tx: mpsc::Sender<notify::Result<notify::Event>>,
    interval: Duration,
) -> Result<Box<dyn notify::Watcher + Send>, WatchError> {
    let config = notify::Config::default().with_poll_interval(interval);
    let mut w =
        notify::PollWatcher::new(tx, config).map_err(|e| WatchError::Watch(roots[0].clone(), e))?;
    for r in roots {
        w.watch(r, notify::RecursiveMode::Recursive)
            .map_err(|e| WatchError::Watch(r.clone(), e))?;
    }
    Ok(Box::new(w))
}

/// The watcher's loop: wait for a change, collect for the debounce window, index, report.
fn run(
    data_dir: &Path,
    plan: &IndexPlan,
    scope: &Scope,
    opts: &WatchOptions,
    rx: Receiver<notify::Result<notify::Event>>,
    mut report: impl FnMut(WatchEvent),
) {
    let mut dirty = if opts.catch_up {
        Dirty::everything()
    } else {
        Dirty::default()
    };
    loop {
        if !dirty.any() {
            // Idle: block until the file system says something.
            match rx.recv() {
                Ok(ev) => dirty.merge(classify(scope, ev)),
                Err(_) => return,
            }
            if !dirty.any() {
                continue;
            }
            let window = Instant::now() + opts.debounce;
            while let Some(left) = window.checked_duration_since(Instant::now()) {
                match rx.recv_timeout(left.min(QUIET)) {
                    Ok(ev) => dirty.merge(classify(scope, ev)),
                    Err(RecvTimeoutError::Timeout) => break,
                    Err(RecvTimeoutError::Disconnected) => return,
                }
            }
        }
        match index_batch(data_dir, plan, &dirty) {
            Ok(batch) => {
                dirty = Dirty::default();
                report(WatchEvent::Indexed(Box::new(batch)));
            }
            Err(IndexAllError::Busy(..)) => {
                report(WatchEvent::Busy(
                    "another indexer holds the lock; trying again".to_string(),
                ));
                // Keep what is dirty and wait, still collecting changes.
                let until = Instant::now() + BUSY_RETRY;
                while let Some(left) = until.checked_duration_since(Instant::now()) {
                    match rx.recv_timeout(left) {
                        Ok(ev) => dirty.merge(classify(scope, ev)),
                        Err(RecvTimeoutError::Timeout) => break,
                        Err(RecvTimeoutError::Disconnected) => return,
                    }
                }
            }
            Err(e) => {
                dirty = Dirty::default();
                report(WatchEvent::Failed(e.to_string()));
            }
        }
    }
}

fn classify(scope: &Scope, ev: notify::Result<notify::Event>) -> Dirty {
    match ev {
        Ok(ev) => scope.classify(&ev.kind, &ev.paths),
        // A dropped event (queue overflow) may hide any change: index everything.
        Err(_) => Dirty::everything(),
    }
}

/// One incremental pass over the stages that changed: only the changed transcripts (read from
/// where the index stopped), the code roots, and the skills and actors store, which is derived
/// from the episodes and skips itself when nothing moved. Episodes commit first, so an event is
/// searchable before the derived store is rebuilt.
pub fn index_batch(
    data_dir: &Path,
    plan: &IndexPlan,
    dirty: &Dirty,
) -> Result<Batch, IndexAllError> {
    let started = Instant::now();
    let stage_plan = IndexPlan {
        sessions: if dirty.all_sessions {
            plan.sessions.clone()
        } else {
            dirty
                .session_files
                .iter()
                .filter(|p| p.is_file())
                .cloned()
                .collect()
        },
        code: if dirty.code {
            plan.code.clone()
        } else {
            Vec::new()
        },
        skills: plan.skills.clone(),
        agents: plan.agents.clone(),
        rebuild: false,
    };
    let summary = index_all(data_dir, &stage_plan, &mut |_| {})?;
    Ok(Batch {
        dirty_sessions: dirty.sessions(),
        dirty_code: dirty.code,
        dirty_skills: dirty.skills,
        new_events: summary.episodes.as_ref().map_or(0, |e| e.events_added),
        elapsed_ms: started.elapsed().as_millis() as u64,
        summary,
    })
}
