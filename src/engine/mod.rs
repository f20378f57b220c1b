//! The engine: one blocking facade that every front end calls.
//!
//! `Engine::search` runs the whole pipeline of the crate doc. It opens every store read-only; the
//! only writes it ever makes are dispatch assignments and outbox files (and its own log).

pub mod activity;
pub mod actors;
pub mod budget;
pub mod counts;
pub mod dispatch;
pub mod filters;
pub mod finish;
pub mod fusion;
pub mod layered;
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
use crate::lanes::{CodeSource, EpisodesSource, SkillsSource};
pub use crate::lanes::{Episode, EpisodeError, EpisodeEvent, EpisodeSession};
use layered::Layered;
pub use layered::{Both, Searched};

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
    /// A team index to answer from (`--team URL`): its episodes and code are searched beside
    /// this machine's (or alone, `team_only`); lookups ask the local stores first
    /// (docs/TEAM.md).
    pub team: Option<String>,
    /// `--team-only`: the team index in place of this machine's episodes and code.
    pub team_only: bool,
    /// This machine's name in the team index (`[team] machine`; `None`: the host name): its
    /// rows there are this data dir's, pushed, and are not shown twice.
    pub machine: Option<String>,
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
            team: None,
            team_only: false,
            machine: None,
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
            team: crate::config::team_searched().map(|t| t.url.clone()),
            team_only: crate::config::team_searched().is_some_and(|t| t.only),
            machine: file.team.machine.clone(),
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

/// The engine with its three lanes. Everything the engine reads goes through them: searches,
/// and the lookups of what a hit points at (see `layered.rs` for which store answers those).
pub struct Engine {
    pub config: EngineConfig,
    pub episodes: Arc<dyn EpisodesSource>,
    pub code: Arc<dyn CodeSource>,
    pub skills: Arc<dyn SkillsSource>,
    builtin: BuiltinLanes,
    logger: log::RequestLog,
}

/// The built-in sources over this data dir's stores, whatever the lanes were given instead: what
/// `knowledge doctor` and `knowledge status` examine, and which roots a file on disk may be
/// read under.
pub struct BuiltinLanes {
    pub episodes: Arc<dyn EpisodesSource>,
    pub code: Arc<dyn CodeSource>,
    pub skills: Arc<dyn SkillsSource>,
    /// Whether each store (episodes, code, agent knowledge) opened.
    pub opened: [bool; 3],
}

impl Engine {
    /// Open the engine over a data dir with the built-in sources. Missing stores do not fail:
    /// their lanes degrade. Front ends use `open_engine` (`wiring.rs`), which also attaches the
    /// external sources the config names.
    pub fn open(config: EngineConfig) -> Engine {
        let (episodes, episode_store) = crate::lanes::builtin::episodes_lane(&config.episodes_db());
        let (code, code_store) = crate::lanes::builtin::code_lane(&config.code_db());
        let (skills, knowledge_store) = crate::lanes::builtin::skills_lane(&config.knowledge_db());
        let logger = log::RequestLog::new(config.log.then(|| config.log_path()));
        let builtin = BuiltinLanes {
            episodes: episodes.clone(),
            code: code.clone(),
            skills: skills.clone(),
            opened: [
                episode_store.is_some(),
                code_store.is_some(),
                knowledge_store.is_some(),
            ],
        };
        Engine {
            config,
            episodes,
            code,
            skills,
            builtin,
            logger,
        }
    }

    /// Put external sources in their lanes in place of the built-in indexes: each lane then
    /// searches the external source and looks things up in the built-in store first
    /// (`layered.rs`).
    pub fn attach(
        &mut self,
        episodes: Option<Arc<dyn EpisodesSource>>,
        code: Option<Arc<dyn CodeSource>>,
        skills: Option<Arc<dyn SkillsSource>>,
    ) {
        self.attach_searching(episodes, code, skills, Searched::External);
    }

    /// Put external sources in their lanes, searched as `searched` says (beside the built-in
    /// indexes with [`Searched::Both`]).
    pub fn attach_searching(
        &mut self,
        episodes: Option<Arc<dyn EpisodesSource>>,
        code: Option<Arc<dyn CodeSource>>,
        skills: Option<Arc<dyn SkillsSource>>,
        searched: Searched,
    ) {
        if let Some(external) = episodes {
            self.episodes = Arc::new(Layered {
                builtin: self.builtin.episodes.clone(),
                external,
                searched: searched.clone(),
            });
        }
        if let Some(external) = code {
            self.code = Arc::new(Layered {
                builtin: self.builtin.code.clone(),
                external,
                searched: searched.clone(),
            });
        }
        if let Some(external) = skills {
            self.skills = Arc::new(Layered {
                builtin: self.builtin.skills.clone(),
                external,
                searched,
            });
        }
    }

    /// Load what the lanes' vector arms need (the embedding table, each store's vector codes)
    /// on a background thread, so a long-running front end's first search does not wait for it.
    pub fn warm_semantic(&self) {
        if !self.config.semantic {
            return;
        }
        let (episodes, code) = (self.episodes.clone(), self.code.clone());
        std::thread::spawn(move || {
            episodes.warm();
            code.warm();
        });
    }

    /// The built-in sources of this data dir.
    pub fn builtin(&self) -> &BuiltinLanes {
        &self.builtin
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

    /// The episodes lane reads the event: the built-in index, then the external source that
    /// replaced it in the lane, if any (`layered.rs`).
    fn read_episode(
        &self,
        session_id: &str,
        seq: u64,
        context: u64,
    ) -> Result<Episode, EpisodeError> {
        self.episodes.episode(session_id, seq, context)
    }
}
