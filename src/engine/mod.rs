//! The engine: one blocking facade that every front end calls.
//!
//! `Engine::search` runs the whole pipeline of the crate doc. It opens every store read-only; the
//! only writes it ever makes are dispatch assignments and outbox files (and its own log).

pub mod activity;
pub mod actors;
pub mod budget;
pub mod builtin;
pub mod dispatch;
pub mod filters;
pub mod finish;
pub mod fusion;
pub mod lanes;
pub mod log;
pub mod outbox;
pub mod profiles;
pub mod read_code;
pub mod routing;
pub mod search;
pub mod titles;

/// The item builders under their first name (front ends and tests parse ids and order through it).
pub use fusion::items;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::config::DataDir;
use crate::sources::agent_knowledge::AgentKnowledgeStore;
use crate::sources::code::search::CodeStore;
use crate::sources::episodes::search::EpisodeStore;
use lanes::{CodeSource, EpisodesSource, SkillsSource};
pub use lanes::{Episode, EpisodeError, EpisodeEvent, EpisodeSession};

/// Where the engine's stores live and how it behaves.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    pub data_dir: PathBuf,
    /// Per-lane timeout (contract §11: 250 ms by default).
    pub lane_timeout: Duration,
    /// Write the request log under `<data_dir>/logs/`.
    pub log: bool,
    /// Dispatch modes the environment offers (config or detection; default none).
    pub dispatch: crate::config::DispatchAvailability,
    /// External sources from the config file (none: the built-in indexes).
    pub sources: crate::config::SourcesConfig,
    /// `[search] semantic`: the built-in lanes run their vector arm and Russian query words are
    /// expanded to their English translations (default on; docs/RELEVANCE.md, "Semantic arm").
    pub semantic: bool,
}

impl EngineConfig {
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        EngineConfig {
            data_dir: data_dir.into(),
            lane_timeout: Duration::from_millis(250),
            log: true,
            dispatch: crate::config::DispatchAvailability::default(),
            sources: Default::default(),
            semantic: true,
        }
    }

    /// The config for a data dir, with `<data_dir>/config.toml` applied when it exists.
    pub fn load(data_dir: impl Into<PathBuf>) -> Result<Self, crate::config::ConfigError> {
        let data_dir = data_dir.into();
        let file = crate::config::Config::load(&data_dir)?;
        Ok(EngineConfig {
            lane_timeout: file.lane_timeout(),
            dispatch: file.dispatch_availability(),
            sources: file.sources.clone(),
            semantic: file.semantic(),
            ..EngineConfig::new(data_dir)
        })
    }
    /// The files of the data dir.
    pub fn files(&self) -> DataDir {
        DataDir::new(&self.data_dir)
    }
    pub fn episodes_db(&self) -> PathBuf {
        self.files().episodes_db()
    }
    pub fn code_db(&self) -> PathBuf {
        self.files().code_db()
    }
    pub fn knowledge_db(&self) -> PathBuf {
        self.files().knowledge_db()
    }
    pub fn outbox_dir(&self) -> PathBuf {
        self.files().outbox_dir()
    }
    pub fn log_path(&self) -> PathBuf {
        self.files().log_path()
    }
}

/// The engine with its three sources.
pub struct Engine {
    pub config: EngineConfig,
    pub episodes: Arc<dyn EpisodesSource>,
    pub code: Arc<dyn CodeSource>,
    pub skills: Arc<dyn SkillsSource>,
    episode_store: Option<Arc<EpisodeStore>>,
    code_store: Option<Arc<CodeStore>>,
    knowledge_store: Option<Arc<AgentKnowledgeStore>>,
    logger: log::RequestLog,
}

impl Engine {
    /// Open the engine over a data dir with the built-in sources. Missing stores do not fail:
    /// their lanes degrade. Front ends use [`crate::open_engine`], which also attaches the
    /// external MCP sources the config names.
    pub fn open(config: EngineConfig) -> Engine {
        let (episodes, episode_store) = builtin::episodes_lane(&config.episodes_db());
        let (code, code_store) = builtin::code_lane(&config.code_db());
        let (skills, knowledge_store) = builtin::skills_lane(&config.knowledge_db());
        let logger = log::RequestLog::new(config.log.then(|| config.log_path()));
        Engine {
            config,
            episodes,
            code,
            skills,
            episode_store,
            code_store,
            knowledge_store,
            logger,
        }
    }

    /// Load what the lanes' vector arms need (the embedding table, each store's vector codes)
    /// on a background thread, so a long-running front end's first search does not wait for it.
    pub fn warm_semantic(&self) {
        if !self.config.semantic {
            return;
        }
        let (episodes, code) = (self.episode_store.clone(), self.code_store.clone());
        std::thread::spawn(move || {
            if let Some(s) = episodes {
                let _ = s.warm_vectors();
            }
            if let Some(s) = code {
                let _ = s.warm_vectors();
            }
        });
    }

    /// The built-in episode store, when it exists (for `get-episode` and the TUI drill-in).
    pub fn episode_store(&self) -> Option<&EpisodeStore> {
        self.episode_store.as_deref()
    }

    pub fn code_store(&self) -> Option<&CodeStore> {
        self.code_store.as_deref()
    }

    pub fn knowledge_store(&self) -> Option<&AgentKnowledgeStore> {
        self.knowledge_store.as_deref()
    }

    pub fn data_dir(&self) -> &Path {
        &self.config.data_dir
    }
}

impl Engine {
    /// The event `seq` of a session with `context` neighbours each side, redacted again: from
    /// the built-in index when it holds the session, else from the episodes lane's source.
    pub fn get_episode(
        &self,
        session_id: &str,
        seq: u64,
        context: u64,
    ) -> Result<Episode, EpisodeError> {
        let started = std::time::Instant::now();
        let out = self.read_episode(session_id, seq, context);
        let returned = out.as_ref().map_or(0, |e| e.events.len() as u32);
        self.logger.write(log::LogLine {
            at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            op: "get_episode".to_string(),
            request_id: None,
            ms: started.elapsed().as_secs_f64() * 1000.0,
            lanes: Vec::new(),
            returned,
            truncated: false,
            codes: Vec::new(),
        });
        out
    }

    /// The rule set of [`Engine::get_episode`]: the built-in index, then the episodes lane
    /// (the same index, or the external source that replaced it in the lane).
    fn read_episode(
        &self,
        session_id: &str,
        seq: u64,
        context: u64,
    ) -> Result<Episode, EpisodeError> {
        if self.config.sources.episodes.is_some() {
            if let Some(store) = self.episode_store() {
                match builtin::read_episode(store, session_id, seq, context) {
                    Err(EpisodeError::NoSession(_)) => {}
                    found => return found,
                }
            }
        }
        self.episodes.episode(session_id, seq, context)
    }
}
