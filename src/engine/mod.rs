//! The engine: one blocking facade that every front end calls.
//!
//! `Engine::search` runs the whole pipeline of the crate doc. It opens every store read-only; the
//! only writes it ever makes are dispatch assignments and outbox files (and its own log).

pub mod actors;
pub mod budget;
pub mod builtin;
pub mod dispatch;
pub mod filters;
pub mod finish;
pub mod items;
pub mod lanes;
pub mod log;
pub mod outbox;
pub mod profiles;
pub mod read_code;
pub mod routing;
pub mod search;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::contract::Code;
use crate::sources::code::search::CodeStore;
use crate::sources::episodes::search::{EpisodeStore, EpisodeStoreError};
use crate::sources::knowledge::KnowledgeStore;
use builtin::{BuiltinCode, BuiltinEpisodes, BuiltinSkills};
use lanes::{CodeSource, EpisodesSource, SkillsSource, SourceFailure, Unavailable};

/// Where the engine's stores live and how it behaves.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    pub data_dir: PathBuf,
    /// Per-lane timeout (contract §11: 250 ms by default).
    pub lane_timeout: Duration,
    /// Write the request log under `<data_dir>/logs/`.
    pub log: bool,
    /// Dispatch modes the environment offers (config or detection; default none).
    pub dispatch: actors::DispatchAvailability,
    /// External sources from the config file (none: the built-in indexes).
    pub sources: crate::config::SourcesConfig,
    /// TUI key overrides from the config file.
    pub keys: std::collections::BTreeMap<String, Vec<String>>,
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
            dispatch: actors::DispatchAvailability::default(),
            sources: Default::default(),
            keys: Default::default(),
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
            keys: file.keys.clone(),
            semantic: file.semantic(),
            ..EngineConfig::new(data_dir)
        })
    }
    pub fn episodes_db(&self) -> PathBuf {
        self.data_dir.join("episodes.sqlite")
    }
    pub fn code_db(&self) -> PathBuf {
        self.data_dir.join("code.sqlite")
    }
    pub fn knowledge_db(&self) -> PathBuf {
        self.data_dir.join("knowledge.sqlite")
    }
    pub fn outbox_dir(&self) -> PathBuf {
        self.data_dir.join("outbox")
    }
    pub fn log_path(&self) -> PathBuf {
        self.data_dir.join("logs").join("knowledge.log")
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
    knowledge_store: Option<Arc<KnowledgeStore>>,
    logger: log::RequestLog,
}

impl Engine {
    /// Open the engine over a data dir with the built-in sources. Missing stores do not fail:
    /// their lanes degrade. Front ends use [`crate::open_engine`], which also attaches the
    /// external MCP sources the config names.
    pub fn open(config: EngineConfig) -> Engine {
        let (episodes, episode_store): (Arc<dyn EpisodesSource>, _) =
            match EpisodeStore::open(&config.episodes_db()) {
                Ok(store) => {
                    let store = Arc::new(store);
                    (
                        Arc::new(BuiltinEpisodes {
                            store: store.clone(),
                        }),
                        Some(store),
                    )
                }
                Err(e) => (
                    Arc::new(Unavailable {
                        name: "builtin.episodes".to_string(),
                        failure: not_ready(e),
                    }),
                    None,
                ),
            };
        let (code, code_store): (Arc<dyn CodeSource>, _) =
            match builtin::open_code(&config.code_db()) {
                Ok(store) => {
                    let store = Arc::new(store);
                    (
                        Arc::new(BuiltinCode {
                            store: store.clone(),
                        }),
                        Some(store),
                    )
                }
                Err(failure) => (
                    Arc::new(Unavailable {
                        name: "builtin.code".to_string(),
                        failure: SourceFailure {
                            reason: format!(
                                "{} (index code with `knowledge index --code ROOT`)",
                                failure.reason
                            ),
                            ..failure
                        },
                    }),
                    None,
                ),
            };
        let (skills, knowledge_store): (Arc<dyn SkillsSource>, _) =
            match builtin::open_knowledge(&config.knowledge_db()) {
                Ok(store) => {
                    let store = Arc::new(store);
                    (
                        Arc::new(BuiltinSkills {
                            store: store.clone(),
                        }),
                        Some(store),
                    )
                }
                Err(failure) => (
                    Arc::new(Unavailable {
                        name: "builtin.skills+agent-knowledge".to_string(),
                        failure,
                    }),
                    None,
                ),
            };
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

    pub fn knowledge_store(&self) -> Option<&KnowledgeStore> {
        self.knowledge_store.as_deref()
    }

    pub fn data_dir(&self) -> &Path {
        &self.config.data_dir
    }
}

fn not_ready(e: EpisodeStoreError) -> SourceFailure {
    match e {
        EpisodeStoreError::Missing(_) => SourceFailure::new(Code::IndexNotReady, e.to_string()),
        EpisodeStoreError::Sql(_) => SourceFailure::new(Code::SourceUnavailable, e.to_string()),
    }
}

/// One event in full with its neighbours (`knowledge get-episode`, the TUI drill-in, MCP).
#[derive(Debug, Clone, serde::Serialize)]
pub struct Episode {
    pub id: String,
    pub session_id: String,
    pub seq: u64,
    pub session: EpisodeSession,
    pub events: Vec<EpisodeEvent>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct EpisodeSession {
    pub session_id: String,
    pub source: String,
    pub path: String,
    pub cwd: Option<String>,
    pub created_at: Option<String>,
    pub title: Option<String>,
    pub parent_session_id: Option<String>,
    pub agent_name: Option<String>,
    pub agent_preset: Option<String>,
    pub outcome: String,
    pub live: bool,
    pub events: u64,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct EpisodeEvent {
    pub id: String,
    pub seq: u64,
    pub event_type: String,
    pub time: Option<String>,
    pub tool_name: Option<String>,
    pub is_error: bool,
    pub human: bool,
    pub text: String,
}

#[derive(Debug, thiserror::Error)]
pub enum EpisodeError {
    #[error("no episodes index: run `knowledge index` first")]
    NoIndex,
    #[error("no session {0} in the episodes index")]
    NoSession(String),
    #[error("session {0} has no event {1}")]
    NoEvent(String, u64),
    #[error(
        "session {0} is not in the built-in episodes index; the episodes lane comes from the \
         external source {1}, which answers searches only: open the event there"
    )]
    External(String, String),
    #[error(transparent)]
    Store(#[from] EpisodeStoreError),
}

impl EpisodeError {
    pub fn is_not_found(&self) -> bool {
        matches!(
            self,
            EpisodeError::NoSession(_) | EpisodeError::NoEvent(..) | EpisodeError::External(..)
        )
    }
}

impl Engine {
    /// The event `seq` of a session with `context` neighbours each side, redacted again.
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

    fn read_episode(
        &self,
        session_id: &str,
        seq: u64,
        context: u64,
    ) -> Result<Episode, EpisodeError> {
        // With an external session-query source the built-in index may not hold the session:
        // say where it lives instead of claiming it does not exist.
        let external = self
            .config
            .sources
            .episodes
            .as_ref()
            .map(|_| EpisodeError::External(session_id.to_string(), self.episodes.name()));
        let Some(store) = self.episode_store() else {
            return Err(external.unwrap_or(EpisodeError::NoIndex));
        };
        let s = match store.session(session_id)? {
            Some(s) => s,
            None => {
                return Err(
                    external.unwrap_or_else(|| EpisodeError::NoSession(session_id.to_string()))
                )
            }
        };
        let events = store.event_with_context(session_id, seq, context)?;
        if !events.iter().any(|e| e.seq == seq) {
            return Err(EpisodeError::NoEvent(session_id.to_string(), seq));
        }
        let redact = |t: &str| crate::text::redact::redact(t).text;
        Ok(Episode {
            id: items::episode_id(session_id, seq),
            session_id: session_id.to_string(),
            seq,
            session: EpisodeSession {
                session_id: s.session_id,
                source: s.source,
                path: s.path,
                cwd: s.cwd,
                created_at: s.created_at,
                title: s.title.as_deref().map(redact),
                parent_session_id: s.parent_session_id,
                agent_name: s.agent_name,
                agent_preset: s.agent_preset,
                outcome: s.outcome,
                live: s.live,
                events: s.events,
            },
            events: events
                .into_iter()
                .map(|e| EpisodeEvent {
                    id: items::episode_id(&e.session_id, e.seq),
                    seq: e.seq,
                    event_type: e.event_type,
                    time: e.time,
                    tool_name: e.tool_name,
                    is_error: e.is_error,
                    human: e.human,
                    text: redact(&e.text),
                })
                .collect(),
        })
    }
}
