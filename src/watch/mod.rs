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
//!
//! Two things wake it on a timer all the same, and only while they last:
//! - A root whose folder was deleted or moved away loses its native watch with it (inotify
//!   watches an inode, not a path), and a folder made again under the same name was never
//!   watched: such a root is looked for every [`WatchOptions::poll_interval`] until it exists,
//!   then watched again and indexed in full (its first files may predate the new watch).
//! - A batch that failed (a read-only data dir, a full disk) keeps its changes and is tried
//!   again after [`FAILED_RETRY`], doubling up to [`FAILED_RETRY_MAX`] (changes arriving
//!   meanwhile join it); the failure is reported once until it changes or a batch succeeds.

pub mod scope;
pub mod slot;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
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
/// The first wait before a failed batch is tried again …
pub const FAILED_RETRY: Duration = Duration::from_secs(1);
/// … doubling up to this.
pub const FAILED_RETRY_MAX: Duration = Duration::from_secs(16);
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
    /// Indexing failed; the changes are kept and tried again (said once per distinct failure).
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

/// The watcher, shared by the front end's [`Watch`] (which drops it to stop) and the watch
/// thread (which arms a root again).
type SharedWatcher = Arc<Mutex<Option<Box<dyn notify::Watcher + Send>>>>;

/// A running watch; dropping it stops the watcher and waits for a batch in progress.
pub struct Watch {
    backend: Backend,
    roots: Vec<PathBuf>,
    watcher: SharedWatcher,
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
        let watcher: SharedWatcher = Arc::new(Mutex::new(Some(watcher)));
        // Polling finds a folder made again by itself; a native watch has to be armed again.
        let rearm = Rearm {
            roots: roots.clone(),
            gone: BTreeSet::new(),
            watcher: (backend == Backend::Native).then(|| watcher.clone()),
        };
        let thread = std::thread::Builder::new()
            .name("knowledge-watch".into())
            .spawn(move || {
                let mut follow = Follow { scope, rearm };
                run(&data_dir, &plan, &mut follow, &opts, rx, report)
            })
            .map_err(WatchError::Thread)?;
        Ok(Watch {
            backend,
            roots,
            watcher,
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
        let watcher = match self.watcher.lock() {
            Ok(mut w) => w.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        };
        drop(watcher);
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

/// Roots whose native watch went with their folder, armed again once the folder is back.
struct Rearm {
    roots: Vec<PathBuf>,
    gone: BTreeSet<PathBuf>,
    /// `None` with polling, which needs no re-arming.
    watcher: Option<SharedWatcher>,
}

impl Rearm {
    /// Note a root deleted or moved away (its own watch reports it under the root's path).
    fn note(&mut self, ev: &notify::Event) {
        if self.watcher.is_none()
            || !matches!(
                ev.kind,
                notify::EventKind::Remove(_)
                    | notify::EventKind::Modify(notify::event::ModifyKind::Name(_))
            )
        {
            return;
        }
        for p in &ev.paths {
            if self.roots.contains(p) {
                self.gone.insert(p.clone());
            }
        }
    }

    /// Watch again every gone root that exists again; whether any was.
    fn retry(&mut self) -> bool {
        let Some(watcher) = &self.watcher else {
            return false;
        };
        let Ok(mut guard) = watcher.lock() else {
            return false;
        };
        let Some(w) = guard.as_mut() else {
            return false;
        };
        let before = self.gone.len();
        self.gone.retain(|root| {
            if !root.is_dir() {
                return true;
            }
            // The old watch may linger on a moved folder's inode.
            let _ = w.unwatch(root);
            w.watch(root, notify::RecursiveMode::Recursive).is_err()
        });
        self.gone.len() < before
    }
}

/// What the loop needs to turn notifications into work.
struct Follow {
    scope: Scope,
    rearm: Rearm,
}

impl Follow {
    fn take(&mut self, ev: notify::Result<notify::Event>) -> Dirty {
        match ev {
            Ok(ev) => {
                self.rearm.note(&ev);
                let mut dirty = self.scope.classify(&ev.kind, &ev.paths);
                dirty.merge(self.retry());
                dirty
            }
            // A dropped event (queue overflow) may hide any change: index everything.
            Err(_) => Dirty::everything(),
        }
    }

    /// Arm the roots that are back; what was written in them before that is found by a full
    /// pass.
    fn retry(&mut self) -> Dirty {
        if self.rearm.retry() {
            Dirty::everything()
        } else {
            Dirty::default()
        }
    }

    /// How long the idle wait may block: forever, unless a root is waited for.
    fn idle_timeout(&self, opts: &WatchOptions) -> Option<Duration> {
        (!self.rearm.gone.is_empty()).then_some(opts.poll_interval)
    }
}

/// Receive until `until`, merging what arrives; `false` when the watcher is gone.
fn collect(
    follow: &mut Follow,
    rx: &Receiver<notify::Result<notify::Event>>,
    dirty: &mut Dirty,
    until: Instant,
) -> bool {
    while let Some(left) = until.checked_duration_since(Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(ev) => dirty.merge(follow.take(ev)),
            Err(RecvTimeoutError::Timeout) => break,
            Err(RecvTimeoutError::Disconnected) => return false,
        }
    }
    true
}

/// The watcher's loop: wait for a change, collect for the debounce window, index, report.
fn run(
    data_dir: &Path,
    plan: &IndexPlan,
    follow: &mut Follow,
    opts: &WatchOptions,
    rx: Receiver<notify::Result<notify::Event>>,
    mut report: impl FnMut(WatchEvent),
) {
    let mut dirty = if opts.catch_up {
        Dirty::everything()
    } else {
        Dirty::default()
    };
    // The failure last reported, and the wait before the next try.
    let mut failing: Option<(String, Duration)> = None;
    loop {
        if !dirty.any() {
            // Idle: block until the file system says something (or a gone root is looked for).
            match follow.idle_timeout(opts) {
                None => match rx.recv() {
                    Ok(ev) => dirty.merge(follow.take(ev)),
                    Err(_) => return,
                },
                Some(t) => match rx.recv_timeout(t) {
                    Ok(ev) => dirty.merge(follow.take(ev)),
                    Err(RecvTimeoutError::Timeout) => dirty.merge(follow.retry()),
                    Err(RecvTimeoutError::Disconnected) => return,
                },
            }
            if !dirty.any() {
                continue;
            }
            let window = Instant::now() + opts.debounce;
            while let Some(left) = window.checked_duration_since(Instant::now()) {
                match rx.recv_timeout(left.min(QUIET)) {
                    Ok(ev) => dirty.merge(follow.take(ev)),
                    Err(RecvTimeoutError::Timeout) => break,
                    Err(RecvTimeoutError::Disconnected) => return,
                }
            }
        }
        match index_batch(data_dir, plan, &dirty) {
            Ok(batch) => {
                dirty = Dirty::default();
                failing = None;
                report(WatchEvent::Indexed(Box::new(batch)));
            }
            Err(IndexAllError::Busy(..)) => {
                report(WatchEvent::Busy(
                    "another indexer holds the lock; trying again".to_string(),
                ));
                // Keep what is dirty and wait, still collecting changes.
                if !collect(follow, &rx, &mut dirty, Instant::now() + BUSY_RETRY) {
                    return;
                }
            }
            Err(e) => {
                // Keep what is dirty: the pending lines are indexed once the cause is fixed,
                // without waiting for another change.
                let why = e.to_string();
                let wait = match failing.take() {
                    Some((before, wait)) if before == why => (wait * 2).min(FAILED_RETRY_MAX),
                    _ => {
                        report(WatchEvent::Failed(why.clone()));
                        FAILED_RETRY
                    }
                };
                failing = Some((why, wait));
                if !collect(follow, &rx, &mut dirty, Instant::now() + wait) {
                    return;
                }
            }
        }
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
