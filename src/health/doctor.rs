//! `knowledge doctor`: what the data dir holds and what is wrong with it. Every problem found
//! comes with the command (or edit) that fixes it; the report is healthy when there are none.
//!
//! It only reads: stores are opened read-only, files are stat-ed (and hashed when only their
//! mtime moved), external sources receive one probe search.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::Serialize;

use super::agents::{agent_reports, AgentReport};
use super::transcripts::{transcripts, Transcripts};
use crate::config::{DataDir, SourcesConfig};
use crate::engine::counts::StoreState;
use crate::engine::{Engine, EngineConfig};
use crate::lanes::{LaneRequest, SourceFailure};
use crate::sources::agent_knowledge::AgentKnowledgeStats;
use crate::sources::code::model::CodeStats;
use crate::sources::code::read::{file_is_stale, FileFingerprint};
use crate::sources::episodes::search::LaneStats;
use crate::sources::sqlite::open_ro;

/// At most this many example paths per finding.
pub(super) const EXAMPLES: usize = 10;
/// How long an external source may take to start and answer the probe.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, Serialize)]
pub struct DoctorReport {
    pub data_dir: String,
    pub healthy: bool,
    pub indexed: Indexed,
    pub stores: Vec<StoreReport>,
    pub stale_code_files: Finding,
    pub changed_transcripts: Finding,
    /// Transcripts under the session roots that cannot be opened for reading (permissions, a
    /// FIFO or device in place of the file): indexing skips them until that is fixed.
    pub unreadable_transcripts: Finding,
    /// Stores the last index could not read (a malformed agent database), unchanged since:
    /// indexing again fails the same way until the store itself is repaired.
    pub failed_stores: Finding,
    pub sources: Vec<SourceReport>,
    /// Every agent of the registry: its default roots on this machine and its indexed sessions.
    pub agents: Vec<AgentReport>,
    pub config: ConfigReport,
    /// Bytes of the request log with its rotated generations.
    pub log_bytes: u64,
    pub problems: Vec<Problem>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Indexed {
    pub session_roots: Vec<String>,
    pub code_roots: Vec<String>,
    pub skill_roots: Vec<String>,
    pub transcript_files: u64,
    pub sessions: u64,
    pub live_sessions: u64,
    pub events: u64,
    /// How many stored messages have sentence vectors (`None`: the store cannot tell).
    pub message_vectors: Option<crate::sources::episodes::messages::Coverage>,
    pub code_files: u64,
    pub chunks: u64,
    pub skills: u64,
    pub actors: u64,
    pub skill_uses: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct StoreReport {
    pub store: &'static str,
    pub path: String,
    pub exists: bool,
    pub index_rev: Option<String>,
    /// Seconds since the store was last written.
    pub age_seconds: Option<u64>,
    /// The database with its WAL and shared-memory files.
    pub bytes: u64,
}

/// Files that no longer match the index, with a few examples.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Finding {
    pub checked: u64,
    pub count: u64,
    pub examples: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SourceReport {
    pub lane: &'static str,
    pub name: String,
    pub reachable: bool,
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ConfigReport {
    pub path: String,
    pub exists: bool,
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Problem {
    pub problem: String,
    pub fix: String,
}

/// Examine `data_dir`.
pub fn doctor(data_dir: &Path) -> DoctorReport {
    let files = DataDir::new(data_dir);
    let config_path = files.config_file();
    let mut problems = Vec::new();
    // A data dir that is a file, or that cannot be entered, is said below as what it is, not
    // as a broken config file.
    let not_a_folder = data_dir.exists() && !data_dir.is_dir();
    let (config, config_error) = match EngineConfig::load(data_dir) {
        Ok(c) => (c, None),
        Err(e) if not_a_folder || e.is_about_the_data_dir() => (EngineConfig::new(data_dir), None),
        Err(e) => (EngineConfig::new(data_dir), Some(e.to_string())),
    };
    if let Some(e) = &config_error {
        problems.push(Problem {
            problem: format!("the config file is broken: {e}"),
            fix: format!(
                "edit {} (or move it away to use the defaults)",
                config_path.display()
            ),
        });
    }
    let plan = crate::saved_plan::load(data_dir).unwrap_or_default();
    if let Some(why) = crate::saved_plan::unreadable(data_dir) {
        problems.push(Problem {
            problem: format!(
                "the roots the last index was given cannot be read ({why}), so nothing is \
                 checked against them"
            ),
            fix: "knowledge index (writes them again), or remove the file".into(),
        });
    }
    let mut indexed = Indexed {
        session_roots: display_all(&plan.sessions),
        skill_roots: display_all(&plan.skills),
        ..Indexed::default()
    };
    let unreadable = std::fs::read_dir(data_dir)
        .err()
        .filter(|e| e.kind() == std::io::ErrorKind::PermissionDenied);
    if let Some(e) = unreadable {
        problems.push(Problem {
            problem: format!("the data dir {} cannot be read: {e}", data_dir.display()),
            fix: "give --data-dir (or KNOWLEDGE_DATA_DIR) a folder you may read and write, or \
                  fix its permissions"
                .into(),
        });
    } else if data_dir.exists() && !data_dir.is_dir() {
        problems.push(Problem {
            problem: format!(
                "the data dir {} is a file, not a folder: nothing can be indexed there",
                data_dir.display()
            ),
            fix: "pass --data-dir (or KNOWLEDGE_DATA_DIR) a folder, or move the file away".into(),
        });
    } else if !data_dir.is_dir() {
        problems.push(Problem {
            problem: format!(
                "the data dir {} does not exist: nothing was indexed there",
                data_dir.display()
            ),
            fix: "knowledge index --sessions PATH (creates it), or pass the --data-dir (or \
                  KNOWLEDGE_DATA_DIR) you indexed into"
                .into(),
        });
    }
    let engine = Engine::open(config.clone());
    let (stores, episodes_read) = examine_stores(&engine, &files, &mut indexed, &mut problems);

    problems.extend(super::outbox::unreadable_packages(&config));
    let stale_code_files = stale_code(&files.code_db());
    if stale_code_files.count > 0 {
        problems.push(stale_code_problem(&stale_code_files, &indexed.code_roots));
    }
    // A damaged episodes store has no file list to compare with: every transcript would look new.
    let Transcripts {
        indexed: transcript_files,
        changed: changed_transcripts,
        unreadable: unreadable_transcripts,
        failed: failed_stores,
        found,
    } = match episodes_read.then(|| transcripts(&files.episodes_db(), &plan.sessions)) {
        Some(Ok(t)) => t,
        // Its counts read, its file list does not: damaged past the first pages.
        Some(Err(e)) => {
            problems.push(damaged("episodes", &files.episodes_db(), &e.to_string()));
            Transcripts::default()
        }
        None => Transcripts::default(),
    };
    indexed.transcript_files = transcript_files;
    // The store reads but its full-text index does not: the episodes lane answers nothing.
    if episodes_read {
        let store = crate::sources::episodes::search::EpisodeStore::open(&files.episodes_db());
        indexed.message_vectors = store.as_ref().ok().and_then(|s| s.message_coverage().ok());
        let checked = store.and_then(|store| store.check_lexical());
        problems.extend(unsearchable("episodes", checked, ("events", "transcript")));
    }
    // The same for the code store: the code lane answers nothing without its full-text index.
    if files.code_db().is_file() {
        let checked = crate::sources::code::CodeStore::open(&files.code_db())
            .and_then(|store| store.check_lexical());
        problems.extend(unsearchable("code", checked, ("chunks", "repository")));
    }
    if changed_transcripts.count > 0 {
        problems.push(Problem {
            problem: format!(
                "{} transcripts grew or appeared since the last index (e.g. {})",
                changed_transcripts.count,
                changed_transcripts.examples.join(", ")
            ),
            fix: "knowledge index (or keep `knowledge index --watch` running)".into(),
        });
    }
    if unreadable_transcripts.count > 0 {
        problems.push(Problem {
            problem: format!(
                "{} transcripts or folders cannot be read, so they are not indexed (e.g. {})",
                unreadable_transcripts.count,
                unreadable_transcripts.examples.join("; ")
            ),
            fix: "let yourself read them (chmod u+r FILE, chmod u+rx FOLDER) or move what is \
                  not a transcript out of the session root, then knowledge index"
                .into(),
        });
    }
    if failed_stores.count > 0 {
        problems.push(Problem {
            problem: format!(
                "{} stores could not be read by the last index and are unchanged since, so \
                 indexing again fails the same way (e.g. {})",
                failed_stores.count,
                failed_stores.examples.join("; ")
            ),
            fix: "they are the agents' own files (knowledge never changes them): repair or \
                  remove them with the agent that wrote them (a SQLite database: `sqlite3 FILE \
                  .recover`), or move them out of the session root"
                .into(),
        });
    }
    problems.extend(gone_roots(&plan));

    let agents = agent_reports(
        &files.episodes_db(),
        &crate::sources::episodes::agent::Env::current(),
        &found,
    );
    let sources = probe_sources(&config.sources);
    problems.extend(
        sources
            .iter()
            .filter(|s| !s.reachable)
            .map(|s| unreachable_source(s, &config_path)),
    );

    let log_bytes = crate::engine::log::log_files(&files.log_path())
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();
    DoctorReport {
        data_dir: data_dir.display().to_string(),
        healthy: problems.is_empty(),
        indexed,
        stores,
        stale_code_files,
        changed_transcripts,
        unreadable_transcripts,
        failed_stores,
        sources,
        agents,
        config: ConfigReport {
            path: config_path.display().to_string(),
            exists: config_path.exists(),
            error: config_error,
        },
        log_bytes,
        problems,
    }
}

/// The stores, with the problem a missing one is and its fix.
const STORES: [(&str, &str, &str); 3] = [
    (
        "episodes",
        "no episodes index: past sessions cannot be searched",
        "knowledge index (or knowledge index --sessions PATH)",
    ),
    (
        "code",
        "no code index: the code lane is degraded",
        "knowledge index --code ROOT",
    ),
    (
        "knowledge",
        "no skills and actors store: the skills lane is degraded",
        "knowledge index",
    ),
];

/// The three stores on disk, with what each holds counted into `indexed` (the engine's
/// counts); a store that is missing, damaged or unreadable is a problem with its own fix.
/// Returns whether the episodes store was read, so its freshness can be checked.
fn examine_stores(
    engine: &Engine,
    files: &DataDir,
    indexed: &mut Indexed,
    problems: &mut Vec<Problem>,
) -> (Vec<StoreReport>, bool) {
    let counts = engine.store_counts();
    let episodes_read = counts.episodes.counts().is_some();
    let paths = [files.episodes_db(), files.code_db(), files.knowledge_db()];
    let examined = [
        examine(counts.episodes, indexed),
        examine(counts.code, indexed),
        examine(counts.knowledge, indexed),
    ];
    let reports = STORES
        .iter()
        .zip(paths)
        .zip(examined)
        .map(|((&(store, problem, fix), path), examined)| {
            let mut report = store_report(store, &path);
            match examined {
                Ok(index_rev) => report.index_rev = index_rev,
                Err(Some(p)) => problems.push(p(store, &path)),
                Err(None) => problems.push(Problem {
                    problem: problem.into(),
                    fix: fix.into(),
                }),
            }
            report
        })
        .collect();
    (reports, episodes_read)
}

/// What a store's stats add to the report: its counts, and its index revision.
trait StoreStats {
    fn count_into(self, indexed: &mut Indexed) -> Option<String>;
}

impl StoreStats for LaneStats {
    fn count_into(self, indexed: &mut Indexed) -> Option<String> {
        indexed.sessions = self.sessions;
        indexed.live_sessions = self.live;
        indexed.events = self.events;
        self.index_rev
    }
}

impl StoreStats for CodeStats {
    fn count_into(self, indexed: &mut Indexed) -> Option<String> {
        indexed.code_files = self.files;
        indexed.chunks = self.chunks;
        indexed.code_roots = self.roots;
        self.index_rev
    }
}

impl StoreStats for AgentKnowledgeStats {
    fn count_into(self, indexed: &mut Indexed) -> Option<String> {
        indexed.skills = self.skills;
        indexed.actors = self.actors;
        indexed.skill_uses = self.skill_uses;
        self.index_rev
    }
}

/// A store file SQLite cannot read as the store, and the command that rebuilds it.
fn damaged(store: &str, path: &Path, reason: &str) -> Problem {
    Problem {
        problem: format!(
            "the {store} store {} is damaged (it exists, but is not a readable {store} store): \
             {reason}",
            path.display()
        ),
        fix: "knowledge index --rebuild (rebuilds every store from the files on disk; dispatch \
              assignments are kept)"
            .into(),
    }
}

/// The problem a store that is there but cannot be used is, given its name and path.
type StoreProblem = Box<dyn FnOnce(&str, &Path) -> Problem>;

/// A store's index revision (its counts go into `indexed`), or the problem it is (`None`: it
/// is missing).
fn examine<S: StoreStats>(
    state: StoreState<S>,
    indexed: &mut Indexed,
) -> Result<Option<String>, Option<StoreProblem>> {
    match state {
        StoreState::Counted { counts } => Ok(counts.count_into(indexed)),
        StoreState::Missing => Err(None),
        StoreState::Damaged { reason } => Err(Some(Box::new(move |store, path| {
            damaged(store, path, &reason)
        }))),
        StoreState::Unreadable { reason } => Err(Some(Box::new(move |store, path| Problem {
            problem: format!("the {store} store cannot be read: {reason}"),
            fix: format!(
                "give yourself read and write access: chmod u+rw {} (or run as its owner)",
                path.display()
            ),
        }))),
    }
}

fn stale_code_problem(stale: &Finding, code_roots: &[String]) -> Problem {
    Problem {
        problem: format!(
            "{} indexed code files changed or disappeared since indexing (e.g. {})",
            stale.count,
            stale.examples.join(", ")
        ),
        fix: format!(
            "knowledge index {}",
            code_roots
                .iter()
                .map(|r| format!("--code {r}"))
                .collect::<Vec<_>>()
                .join(" ")
        ),
    }
}

/// Every indexed root (sessions, code, skills) that no longer exists.
fn gone_roots(plan: &crate::indexing::IndexPlan) -> Vec<Problem> {
    plan.sessions
        .iter()
        .chain(&plan.code)
        .chain(&plan.skills)
        .filter(|p| !p.exists())
        .map(|root| Problem {
            problem: format!("an indexed root is gone: {}", root.display()),
            fix: "index again with the roots that exist: knowledge index --sessions … --code …"
                .into(),
        })
        .collect()
}

fn unreachable_source(s: &SourceReport, config_path: &Path) -> Problem {
    Problem {
        problem: format!(
            "the external {} source {} is unreachable: {}",
            s.lane,
            s.name,
            s.error.as_deref().unwrap_or("no answer")
        ),
        fix: format!(
            "check [sources.{}] in {} (command, args, tool)",
            s.lane,
            config_path.display()
        ),
    }
}

fn display_all(paths: &[PathBuf]) -> Vec<String> {
    paths.iter().map(|p| p.display().to_string()).collect()
}

fn store_report(store: &'static str, db: &Path) -> StoreReport {
    let files = [db.to_path_buf(), sidecar(db, "-wal"), sidecar(db, "-shm")];
    let metas: Vec<std::fs::Metadata> = files
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .collect();
    let written = metas.iter().take(2).filter_map(|m| m.modified().ok()).max();
    StoreReport {
        store,
        path: db.display().to_string(),
        exists: db.exists(),
        index_rev: None,
        age_seconds: written
            .and_then(|t| SystemTime::now().duration_since(t).ok())
            .map(|d| d.as_secs()),
        bytes: metas.iter().map(|m| m.len()).sum(),
    }
}

fn sidecar(db: &Path, suffix: &str) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Every indexed code file checked against the disk, as the code lane checks returned hits.
fn stale_code(db: &Path) -> Finding {
    let mut out = Finding::default();
    let Ok(conn) = open_ro(db) else { return out };
    let rows: Vec<(String, String, FileFingerprint)> = conn
        .prepare("SELECT root, path, size, mtime_ns, sha256 FROM files ORDER BY root, path")
        .and_then(|mut stmt| {
            let rows = stmt
                .query_map([], |r| {
                    Ok((
                        r.get(0)?,
                        r.get(1)?,
                        FileFingerprint {
                            size: r.get::<_, i64>(2)?.max(0) as u64,
                            mtime_ns: r.get(3)?,
                            sha256: r.get(4)?,
                        },
                    ))
                })?
                .collect();
            rows
        })
        .unwrap_or_default();
    for (root, path, row) in rows {
        out.checked += 1;
        if file_is_stale(&Path::new(&root).join(&path), &row) {
            out.count += 1;
            if out.examples.len() < EXAMPLES {
                out.examples.push(format!("{root}/{path}"));
            }
        }
    }
    out
}

/// One probe search through each configured external source, with a startup allowance.
fn probe_sources(sources: &SourcesConfig) -> Vec<SourceReport> {
    if sources.episodes.is_none() && sources.code.is_none() {
        return Vec::new();
    }
    let (episodes, code) = crate::adapters::mcp::wire(sources, PROBE_TIMEOUT);
    let req = LaneRequest {
        terms: vec!["doctor".into()],
        query: "knowledge doctor probe".into(),
        workspaces: Vec::new(),
        session_ids: Vec::new(),
        actor_ids: Vec::new(),
        skills: Vec::new(),
        paths: Vec::new(),
        since_ms: None,
        until_ms: None,
        outcome: None,
        depth: 1,
        snippet_chars: 80,
        vector: None,
        sentence: Default::default(),
    };
    let mut out = Vec::new();
    let report = |lane, name, res: Result<(), SourceFailure>| SourceReport {
        lane,
        name,
        reachable: res.is_ok(),
        error: res.err().map(|f| f.to_string()),
    };
    if let Some(episodes) = episodes {
        let res = episodes.search(&req).map(|_| ());
        out.push(report("episodes", episodes.name(), res));
    }
    if let Some(code) = code {
        let res = code.search(&req).map(|_| ());
        out.push(report("code", code.name(), res));
    }
    out
}

/// A lane's full-text index that does not open as its store's: what `knowledge index` does
/// about it (made anew from the stored `rows`; no `source` they came from is read again).
fn unsearchable<E: std::fmt::Display>(
    lane: &str,
    checked: Result<(), E>,
    (rows, source): (&str, &str),
) -> Option<Problem> {
    let e = checked.err()?;
    Some(Problem {
        problem: format!("{lane}: {e}"),
        fix: format!(
            "run `knowledge index`: it makes the full-text index anew from the stored {rows} \
             (no {source} is read again)"
        ),
    })
}
