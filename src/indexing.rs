//! `knowledge index` as one library call: episodes, then code, then the derived agent-knowledge
//! store (which reads the fresh episodes index), with progress reported per stage so any front
//! end can draw it.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::config::DataDir;
use crate::sources::agent_knowledge::{self, BuildSummary};
use crate::sources::code::index::index_code;
use crate::sources::code::model::{CodeIndexOptions, CodeIndexSummary};
use crate::sources::episodes::gist;
use crate::sources::episodes::index::{index_episodes, IndexOptions, IndexSummary};
use crate::sources::vectors;

/// What to index. Empty lists mean "nothing of that kind" (the CLI fills in defaults).
#[derive(Debug, Clone, Default)]
pub struct IndexPlan {
    pub sessions: Vec<PathBuf>,
    pub code: Vec<PathBuf>,
    pub skills: Vec<PathBuf>,
    pub agents: Vec<PathBuf>,
    /// Start the stores derived from files (episodes, code) from scratch, and move a damaged
    /// agent-knowledge store aside: the way out of a store that no longer opens.
    pub rebuild: bool,
}

/// Which stage a progress report is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Sessions,
    Code,
    AgentKnowledge,
    /// The sentence vectors of the sessions' messages (after everything is searchable).
    Messages,
}

impl Stage {
    pub fn label(self) -> &'static str {
        match self {
            Stage::Sessions => "sessions",
            Stage::Code => "code",
            Stage::AgentKnowledge => "skills and actors",
            Stage::Messages => "message vectors",
        }
    }

    /// What the stage counts.
    pub fn unit(self) -> &'static str {
        match self {
            Stage::Messages => "messages",
            _ => "files",
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct IndexProgress {
    pub stage: Stage,
    pub done: u64,
    pub total: u64,
    pub bytes_done: u64,
    pub bytes_total: u64,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct IndexAllSummary {
    pub episodes: Option<IndexSummary>,
    pub code: Option<CodeIndexSummary>,
    /// Serialised as `knowledge` (the name `knowledge index --json` has always printed).
    #[serde(rename = "knowledge")]
    pub agent_knowledge: Option<BuildSummary>,
    /// Rows given text vectors in this run (none when semantic search is off).
    pub vectors: Option<VectorSummary>,
    /// Messages given sentence vectors in this run (none when semantic search is off).
    pub messages: Option<crate::sources::episodes::messages::embed::EmbedSummary>,
}

/// What the vector step did: rows embedded from stored text per store (rows the indexers did not
/// embed as they stored them, or all rows of a store indexed before vectors or under the older
/// layout), and its wall time.
#[derive(Debug, Clone, Default, Serialize)]
pub struct VectorSummary {
    pub events: u64,
    pub chunks: u64,
    /// Sessions whose gist was (re)written.
    pub gists: u64,
    pub elapsed_ms: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum IndexAllError {
    #[error("cannot create the data dir {0}: {1}")]
    DataDir(PathBuf, std::io::Error),
    #[error(
        "the data dir {0} exists but cannot be written ({1}): give yourself write access \
         (chmod u+rwx {0}), or index into another --data-dir"
    )]
    NotWritable(PathBuf, std::io::Error),
    #[error(
        "another `knowledge index`{} is writing to this data dir ({}); wait for it to finish",
        .0.map(|pid| format!(" (pid {pid})")).unwrap_or_default(),
        .1.display()
    )]
    Busy(Option<u32>, PathBuf),
    #[error("cannot move the damaged store {0} aside: {1}")]
    Rebuild(PathBuf, std::io::Error),
    #[error(transparent)]
    Episodes(#[from] crate::sources::episodes::index::IndexError),
    #[error(transparent)]
    Code(#[from] crate::sources::code::model::CodeIndexError),
    #[error(transparent)]
    AgentKnowledge(#[from] crate::sources::agent_knowledge::AgentKnowledgeError),
    #[error("cannot store text vectors in {0}: {1}")]
    Vectors(PathBuf, rusqlite::Error),
    #[error(transparent)]
    Messages(#[from] crate::sources::episodes::messages::embed::EmbedError),
}

/// Index everything the plan names into `data_dir`.
pub fn index_all(
    data_dir: &Path,
    plan: &IndexPlan,
    progress: &mut dyn FnMut(IndexProgress),
) -> Result<IndexAllSummary, IndexAllError> {
    std::fs::create_dir_all(data_dir).map_err(|e| data_dir_error(data_dir, e))?;
    writable(data_dir)?;
    // One indexer at a time: two runs over the same files would both add their events.
    let dir = DataDir::new(data_dir);
    let _lock = IndexLock::take(&dir)?;
    if plan.rebuild {
        clear_for_rebuild(&dir)?;
    }
    let mut out = IndexAllSummary::default();
    let semantic = semantic_on(&dir);
    if !plan.sessions.is_empty() || !dir.episodes_db().exists() {
        out.episodes = Some(index_episodes(
            &dir.episodes_db(),
            &IndexOptions {
                semantic,
                ..IndexOptions::new(plan.sessions.clone())
            },
            &mut |p| {
                progress(IndexProgress {
                    stage: Stage::Sessions,
                    done: p.done,
                    total: p.total,
                    bytes_done: p.bytes_done,
                    bytes_total: p.bytes_total,
                })
            },
        )?);
    }
    if !plan.code.is_empty() {
        out.code = Some(index_code(
            &dir.code_db(),
            &plan.code,
            &CodeIndexOptions {
                exclude_dirs: std::fs::canonicalize(data_dir).into_iter().collect(),
                semantic,
                ..CodeIndexOptions::default()
            },
            &mut |p| {
                progress(IndexProgress {
                    stage: Stage::Code,
                    done: p.done,
                    total: p.total,
                    bytes_done: p.bytes_done,
                    bytes_total: p.bytes_total,
                })
            },
        )?);
    }
    out.vectors = embed_stores(&dir, semantic)?;
    progress(IndexProgress {
        stage: Stage::AgentKnowledge,
        done: 0,
        total: 1,
        bytes_done: 0,
        bytes_total: 0,
    });
    out.agent_knowledge = Some(agent_knowledge::build(
        &dir.knowledge_db(),
        &dir.episodes_db(),
        &plan.skills,
        &plan.agents,
    )?);
    progress(IndexProgress {
        stage: Stage::AgentKnowledge,
        done: 1,
        total: 1,
        bytes_done: 0,
        bytes_total: 0,
    });
    // Last: everything above is searchable while the messages are embedded.
    out.messages = crate::sources::episodes::messages::embed::embed_if_on(
        &dir.episodes_db(),
        semantic,
        &mut |done, total| {
            progress(IndexProgress {
                stage: Stage::Messages,
                done,
                total,
                bytes_done: 0,
                bytes_total: 0,
            })
        },
    )?;
    Ok(out)
}

/// Whether the data dir's config asks for semantic search (on unless it says otherwise).
fn semantic_on(dir: &DataDir) -> bool {
    crate::config::Config::load(dir.path())
        .map(|c| c.semantic())
        .unwrap_or(true)
}

/// Give every stored event and chunk without a vector its vectors, from the stored (redacted)
/// text: `knowledge index` thus also upgrades an index built before vectors existed (or under
/// an older vector layout), without re-reading any transcript or file; rows the indexers already
/// embedded are skipped. With `[search] semantic = false` the vectors are dropped.
fn embed_stores(dir: &DataDir, semantic: bool) -> Result<Option<VectorSummary>, IndexAllError> {
    let started = std::time::Instant::now();
    // The table is parsed only when it is needed.
    let embedder = semantic
        .then(|| crate::text::embed::shared().ok())
        .flatten();
    let mut summary = VectorSummary::default();
    for (db, table, count) in [
        (dir.episodes_db(), vectors::EVENTS, &mut summary.events),
        (dir.code_db(), vectors::CHUNKS, &mut summary.chunks),
    ] {
        if !db.exists() {
            continue;
        }
        let fail = |e| IndexAllError::Vectors(db.clone(), e);
        let mut conn = crate::sources::sqlite::open_writer(&db).map_err(fail)?;
        match embedder {
            Some(emb) => *count = vectors::backfill(&mut conn, &table, emb).map_err(fail)?,
            None => vectors::drop_all(&conn, &table).map_err(fail)?,
        }
        // Each session's gist (what it was about, for questions in other words).
        if table.name == vectors::EVENTS.name {
            match embedder {
                Some(emb) => summary.gists = gist::backfill(&mut conn, emb).map_err(fail)?,
                None => gist::drop_all(&conn).map_err(fail)?,
            }
        }
    }
    summary.elapsed_ms = started.elapsed().as_millis() as u64;
    Ok(embedder.map(|_| summary))
}

/// The default plan on a real machine: the agents' transcript folders, the git repository the
/// command runs in (if any), and the skill and agent folders that exist.
pub fn default_plan(cwd: &Path) -> IndexPlan {
    let repo = git_root(cwd);
    let repos: Vec<PathBuf> = repo.into_iter().collect();
    let mut sessions = crate::sources::episodes::discover::default_roots();
    // Agents that keep their history inside the project (Aider): the repository and the cwd.
    let projects: Vec<PathBuf> = repos.iter().cloned().chain([cwd.to_path_buf()]).collect();
    for store in crate::sources::episodes::agents::project_stores(&projects) {
        if !sessions.contains(&store) {
            sessions.push(store);
        }
    }
    IndexPlan {
        sessions,
        code: repos.clone(),
        skills: agent_knowledge::default_skill_roots(&repos),
        agents: agent_knowledge::default_agent_roots(&repos),
        rebuild: false,
    }
}

/// The enclosing git work tree of `dir`, if any.
pub fn git_root(dir: &Path) -> Option<PathBuf> {
    let mut cur = Some(dir);
    while let Some(d) = cur {
        if d.join(".git").exists() {
            return Some(d.to_path_buf());
        }
        cur = d.parent();
    }
    None
}

/// Whether an indexing error comes from a store file SQLite cannot read (damaged, or not a
/// database at all): then `knowledge index --rebuild` is the way out.
pub fn is_damaged_store(err: &IndexAllError) -> bool {
    use std::error::Error as _;
    let mut source = err.source();
    while let Some(e) = source {
        if let Some(rusqlite::Error::SqliteFailure(f, _)) = e.downcast_ref::<rusqlite::Error>() {
            return matches!(
                f.code,
                rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt
            );
        }
        source = e.source();
    }
    false
}

/// Removes the episodes and code stores and their full-text indexes (every row in them is
/// derived from files on disk) and moves an agent-knowledge store that does not open aside as `<name>.damaged` (its dispatch
/// assignments are not derived; the outbox packages hold them too).
fn clear_for_rebuild(dir: &DataDir) -> Result<(), IndexAllError> {
    // The full-text indexes first (whatever they are: a folder, a file in its place), so a
    // failure leaves the stores they are derived from.
    for db in [dir.episodes_db(), dir.code_db()] {
        crate::sources::lexical::remove(&db)
            .map_err(|e| IndexAllError::Rebuild(crate::sources::lexical::dir_for(&db), e))?;
    }
    for db in [dir.episodes_db(), dir.code_db()] {
        for suffix in ["", "-wal", "-shm"] {
            let path = PathBuf::from(format!("{}{suffix}", db.display()));
            match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(IndexAllError::Rebuild(path, e))
                }
                _ => {}
            }
        }
    }
    let knowledge = dir.knowledge_db();
    let opens = |p: &Path| {
        crate::sources::sqlite::open_ro(p)
            .and_then(|c| c.query_row("PRAGMA quick_check", [], |r| r.get::<_, String>(0)))
            .is_ok_and(|verdict| verdict == "ok")
    };
    if knowledge.exists() && !opens(&knowledge) {
        let aside = PathBuf::from(format!("{}.damaged", knowledge.display()));
        std::fs::rename(&knowledge, &aside).map_err(|e| IndexAllError::Rebuild(knowledge, e))?;
    }
    Ok(())
}

/// A data dir that exists and refuses a write is said as such, not as "cannot create" it.
fn data_dir_error(data_dir: &Path, e: std::io::Error) -> IndexAllError {
    if data_dir.is_dir() {
        IndexAllError::NotWritable(data_dir.to_path_buf(), e)
    } else {
        IndexAllError::DataDir(data_dir.to_path_buf(), e)
    }
}

/// Whether this process may create files in the data dir (the stores' WAL files are made next
/// to them): asked before any store is opened, so a read-only data dir is one clear error and
/// not a SQLite one about a read-only database.
fn writable(data_dir: &Path) -> Result<(), IndexAllError> {
    let probe = data_dir.join(format!(".write-check-{}", std::process::id()));
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        // Left by a process of the same pid that was killed: the dir is writable.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(IndexAllError::NotWritable(data_dir.to_path_buf(), e)),
    }
}

/// `<data_dir>/index.lock`, locked by the OS while an indexer runs. The lock goes when the
/// process does (even on `kill -9` or a reboot), so no stale lock can block a later run; the
/// pid written into the file only names the holder in the "busy" message.
struct IndexLock {
    _file: std::fs::File,
}

impl IndexLock {
    fn take(dir: &DataDir) -> Result<IndexLock, IndexAllError> {
        use std::io::Write;
        let data_dir = dir.path();
        let path = dir.index_lock();
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| data_dir_error(data_dir, e))?;
        match file.try_lock() {
            Ok(()) => {
                let _ = file.set_len(0);
                let _ = write!(file, "{}", std::process::id());
                Ok(IndexLock { _file: file })
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                let pid = std::fs::read_to_string(&path)
                    .ok()
                    .and_then(|s| s.trim().parse().ok());
                Err(IndexAllError::Busy(pid, path))
            }
            Err(std::fs::TryLockError::Error(e)) => Err(data_dir_error(data_dir, e)),
        }
    }
}
