//! `knowledge index` as one library call: episodes, then code, then the derived agent-knowledge
//! store (which reads the fresh episodes index), with progress reported per stage so any front
//! end can draw it.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::engine::EngineConfig;
use crate::sources::code::index::index_code;
use crate::sources::code::model::{CodeIndexOptions, CodeIndexSummary};
use crate::sources::episodes::index::{index_episodes, IndexOptions, IndexSummary};
use crate::sources::knowledge::{self, BuildSummary};
use crate::sources::vectors;

/// What to index. Empty lists mean "nothing of that kind" (the CLI fills in defaults).
#[derive(Debug, Clone, Default)]
pub struct IndexPlan {
    pub sessions: Vec<PathBuf>,
    pub code: Vec<PathBuf>,
    pub skills: Vec<PathBuf>,
    pub agents: Vec<PathBuf>,
}

/// Which stage a progress report is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Sessions,
    Code,
    Knowledge,
}

impl Stage {
    pub fn label(self) -> &'static str {
        match self {
            Stage::Sessions => "sessions",
            Stage::Code => "code",
            Stage::Knowledge => "skills and actors",
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Progress {
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
    pub knowledge: Option<BuildSummary>,
    /// Rows given text vectors in this run (none when semantic search is off).
    pub vectors: Option<VectorSummary>,
}

/// What the vector step did: rows embedded per store (new rows, or all rows of a store indexed
/// before vectors existed), and its wall time.
#[derive(Debug, Clone, Default, Serialize)]
pub struct VectorSummary {
    pub events: u64,
    pub chunks: u64,
    pub elapsed_ms: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum IndexAllError {
    #[error("cannot create the data dir {0}: {1}")]
    DataDir(PathBuf, std::io::Error),
    #[error(
        "another `knowledge index` (pid {0}) is writing to this data dir; wait for it to finish \
         (or remove {1} if that process is gone)"
    )]
    Busy(u32, PathBuf),
    #[error(transparent)]
    Episodes(#[from] crate::sources::episodes::index::IndexError),
    #[error(transparent)]
    Code(#[from] crate::sources::code::model::CodeIndexError),
    #[error(transparent)]
    Knowledge(#[from] crate::sources::knowledge::KnowledgeError),
    #[error("cannot store text vectors in {0}: {1}")]
    Vectors(PathBuf, rusqlite::Error),
}

/// Index everything the plan names into `data_dir`.
pub fn index_all(
    data_dir: &Path,
    plan: &IndexPlan,
    progress: &mut dyn FnMut(Progress),
) -> Result<IndexAllSummary, IndexAllError> {
    std::fs::create_dir_all(data_dir)
        .map_err(|e| IndexAllError::DataDir(data_dir.to_path_buf(), e))?;
    // One indexer at a time: two runs over the same files would both add their events.
    let _lock = IndexLock::take(data_dir)?;
    let config = EngineConfig::new(data_dir);
    let mut out = IndexAllSummary::default();
    if !plan.sessions.is_empty() || !config.episodes_db().exists() {
        out.episodes = Some(index_episodes(
            &config.episodes_db(),
            &IndexOptions::new(plan.sessions.clone()),
            &mut |p| {
                progress(Progress {
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
            &config.code_db(),
            &plan.code,
            &CodeIndexOptions::default(),
            &mut |p| {
                progress(Progress {
                    stage: Stage::Code,
                    done: p.done,
                    total: p.total,
                    bytes_done: p.bytes_done,
                    bytes_total: p.bytes_total,
                })
            },
        )?);
    }
    out.vectors = embed_stores(&config)?;
    progress(Progress {
        stage: Stage::Knowledge,
        done: 0,
        total: 1,
        bytes_done: 0,
        bytes_total: 0,
    });
    out.knowledge = Some(knowledge::build(
        &config.knowledge_db(),
        &config.episodes_db(),
        &plan.skills,
        &plan.agents,
    )?);
    progress(Progress {
        stage: Stage::Knowledge,
        done: 1,
        total: 1,
        bytes_done: 0,
        bytes_total: 0,
    });
    Ok(out)
}

/// Give every stored event and chunk without a vector its vectors, from the stored (redacted)
/// text: `knowledge index` thus also upgrades an index built before vectors existed, without
/// re-reading any transcript or file. With `[search] semantic = false` the vectors are dropped.
fn embed_stores(config: &EngineConfig) -> Result<Option<VectorSummary>, IndexAllError> {
    let semantic = crate::config::Config::load(&config.data_dir)
        .map(|c| c.semantic())
        .unwrap_or(true);
    let started = std::time::Instant::now();
    let embedder = crate::text::embed::shared().ok().filter(|_| semantic);
    let mut summary = VectorSummary::default();
    for (db, table, count) in [
        (config.episodes_db(), vectors::EVENTS, &mut summary.events),
        (config.code_db(), vectors::CHUNKS, &mut summary.chunks),
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
    }
    summary.elapsed_ms = started.elapsed().as_millis() as u64;
    Ok(embedder.map(|_| summary))
}

/// The default plan on a real machine: the agents' transcript folders, the git repository the
/// command runs in (if any), and the skill and agent folders that exist.
pub fn default_plan(cwd: &Path) -> IndexPlan {
    let repo = git_root(cwd);
    let repos: Vec<PathBuf> = repo.into_iter().collect();
    IndexPlan {
        sessions: crate::sources::episodes::discover::default_roots(),
        code: repos.clone(),
        skills: knowledge::default_skill_roots(&repos),
        agents: knowledge::default_agent_roots(&repos),
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

/// `<data_dir>/index.lock`, holding the indexer's pid while it runs; a lock left by a process
/// that no longer exists is taken over.
struct IndexLock {
    path: PathBuf,
}

impl IndexLock {
    fn take(data_dir: &Path) -> Result<IndexLock, IndexAllError> {
        use std::io::Write;
        let path = data_dir.join("index.lock");
        for _ in 0..2 {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(mut f) => {
                    let _ = write!(f, "{}", std::process::id());
                    return Ok(IndexLock { path });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let pid: Option<u32> = std::fs::read_to_string(&path)
                        .ok()
                        .and_then(|s| s.trim().parse().ok());
                    match pid {
                        Some(pid) if process_alive(pid) => {
                            return Err(IndexAllError::Busy(pid, path));
                        }
                        _ => {
                            let _ = std::fs::remove_file(&path);
                        }
                    }
                }
                Err(e) => return Err(IndexAllError::DataDir(data_dir.to_path_buf(), e)),
            }
        }
        Err(IndexAllError::Busy(0, path))
    }
}

impl Drop for IndexLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Whether a process with this pid exists (Linux `/proc`; elsewhere assume it does).
fn process_alive(pid: u32) -> bool {
    if cfg!(target_os = "linux") {
        Path::new(&format!("/proc/{pid}")).exists()
    } else {
        true
    }
}
