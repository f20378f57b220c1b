//! The optional config file `<data_dir>/config.toml`: lane timeout, external MCP sources,
//! dispatch availability, semantic search on or off and TUI key overrides. A missing file means
//! the defaults; a broken one is an error that names the file, the line and the key.
//!
//! [`DataDir`] names every file of a data dir once, for the indexer, the engine and `doctor`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::contract::DispatchMode;

/// The config file last loaded: its path, size and mtime when read, and what it said.
type Loaded = (PathBuf, (u64, Option<std::time::SystemTime>), Config);
static LAST_LOADED: std::sync::Mutex<Option<Loaded>> = std::sync::Mutex::new(None);

/// The whole file. Every section is optional.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub lanes: LanesConfig,
    #[serde(default)]
    pub sources: SourcesConfig,
    #[serde(default)]
    pub dispatch: DispatchConfig,
    #[serde(default)]
    pub search: SearchConfig,
    /// TUI key overrides: action name → key list (e.g. `search = ["enter", "ctrl-s"]`).
    #[serde(default)]
    pub keys: BTreeMap<String, Vec<String>>,
    /// `[team]`: where `knowledge push` sends this data dir (docs/TEAM.md).
    #[serde(default)]
    pub team: TeamConfig,
}

/// `[team]`: the team index `knowledge push` writes to.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TeamConfig {
    /// The PostgreSQL URL (`KNOWLEDGE_TEAM_URL` and `push --to` win over it).
    pub url: Option<String>,
    /// This machine's name in the team index (default: the host name).
    pub machine: Option<String>,
}

/// The team index a process searches (`--team URL`, with `--team-only`).
#[derive(Debug, Clone, PartialEq)]
pub struct TeamSearch {
    pub url: String,
    /// The team index alone, not beside this machine's episodes and code.
    pub only: bool,
}

static TEAM_SEARCH: std::sync::OnceLock<TeamSearch> = std::sync::OnceLock::new();

/// Answer from this team index in every engine this process opens (`--team URL`, set once by
/// the binary before any engine is opened): beside this machine's indexes, or alone (`only`).
pub fn search_team(url: String, only: bool) {
    let _ = TEAM_SEARCH.set(TeamSearch { url, only });
}

/// The team index set by [`search_team`], if any.
pub fn team_searched() -> Option<&'static TeamSearch> {
    TEAM_SEARCH.get()
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LanesConfig {
    /// Per-lane timeout in milliseconds (default 250).
    pub timeout_ms: Option<u64>,
}

/// `[search]`: how the built-in lanes search.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SearchConfig {
    /// The vector arm of the episodes and code lanes (default true); `false` keeps them lexical
    /// and makes `knowledge index` drop the stored vectors.
    pub semantic: Option<bool>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SourcesConfig {
    pub episodes: Option<McpSource>,
    pub code: Option<McpSource>,
}

/// An external source: an MCP server started as a local child process speaking stdio.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct McpSource {
    /// The program to start.
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The search tool's name (`ragraf_search` for code, e.g. `session_query` for episodes).
    pub tool: Option<String>,
    /// A name for the lane's `source` field (default: `mcp:<command>`).
    pub name: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DispatchConfig {
    /// Dispatch modes this environment offers: `spawn_replica`, `team_task`, `external_handoff`.
    #[serde(default)]
    pub available: Vec<String>,
}

/// A data dir and the files in it. Every file name is written here only, so the indexer that
/// writes a store and the engine that reads it cannot disagree about where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataDir(PathBuf);

impl DataDir {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        DataDir(path.into())
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
    /// The episodes index (L1).
    pub fn episodes_db(&self) -> PathBuf {
        self.0.join("episodes.sqlite")
    }
    /// The code index (L2).
    pub fn code_db(&self) -> PathBuf {
        self.0.join("code.sqlite")
    }
    /// The skills and actors store (L3), also holding the dispatch assignments.
    pub fn knowledge_db(&self) -> PathBuf {
        self.0.join("knowledge.sqlite")
    }
    /// One handoff package per committed assignment.
    pub fn outbox_dir(&self) -> PathBuf {
        self.0.join("outbox")
    }
    /// The request log (rotated generations sit beside it).
    pub fn log_path(&self) -> PathBuf {
        self.0.join("logs").join("knowledge.log")
    }
    /// Held by the OS while an indexer runs.
    pub fn index_lock(&self) -> PathBuf {
        self.0.join("index.lock")
    }
    /// The roots the last `knowledge index` was given.
    pub fn saved_plan(&self) -> PathBuf {
        self.0.join("plan.json")
    }
    /// The optional config file.
    pub fn config_file(&self) -> PathBuf {
        self.0.join("config.toml")
    }
}

/// Which dispatch modes the current environment really offers (KD-4); all false by default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DispatchAvailability {
    pub spawn_replica: bool,
    pub team_task: bool,
    pub external_handoff: bool,
}

impl DispatchAvailability {
    pub fn available(&self, mode: DispatchMode) -> bool {
        match mode {
            DispatchMode::SpawnReplica => self.spawn_replica,
            DispatchMode::TeamTask => self.team_task,
            DispatchMode::ExternalHandoff => self.external_handoff,
            DispatchMode::None => false,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is not a valid config: {message}")]
    Parse { path: PathBuf, message: String },
}

impl ConfigError {
    /// Whether the data dir itself is what failed (its parent is a file, it may not be entered,
    /// a symlink loop), not the config file: the person should be told about the folder.
    pub fn is_about_the_data_dir(&self) -> bool {
        use std::io::ErrorKind;
        // ELOOP: a data dir that is a symlink loop (its `ErrorKind` is not stable yet).
        #[cfg(unix)]
        let eloop = Some(libc::ELOOP);
        #[cfg(not(unix))]
        let eloop = None;
        matches!(self, ConfigError::Read { source, .. } if matches!(
            source.kind(),
            ErrorKind::PermissionDenied | ErrorKind::NotADirectory
        ) || source.raw_os_error() == eloop && eloop.is_some())
    }
}

impl Config {
    pub fn path(data_dir: &Path) -> PathBuf {
        DataDir::new(data_dir).config_file()
    }

    /// Load `<data_dir>/config.toml`; a missing file is the default config. One run asks for
    /// it from several places (the command checks it before any work, the indexer and the
    /// engine read their settings): the file is parsed once, and again only when its size or
    /// mtime changes.
    pub fn load(data_dir: &Path) -> Result<Config, ConfigError> {
        let path = Config::path(data_dir);
        let stamp = match std::fs::metadata(&path) {
            Ok(m) => (m.len(), m.modified().ok()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Config::default()),
            Err(source) => return Err(ConfigError::Read { path, source }),
        };
        let mut last = LAST_LOADED.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((p, s, cfg)) = last.as_ref() {
            if *p == path && *s == stamp {
                return Ok(cfg.clone());
            }
        }
        // A FIFO or a device where the config was must not hang every command.
        let read = crate::sources::regular_file::read_limited(&path, 1024 * 1024);
        let text = match read.map(String::from_utf8) {
            Ok(Ok(t)) => t,
            Ok(Err(e)) => {
                return Err(ConfigError::Read {
                    path,
                    source: std::io::Error::new(std::io::ErrorKind::InvalidData, e),
                })
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Config::default()),
            Err(source) => return Err(ConfigError::Read { path, source }),
        };
        // The parser quotes the line it stopped at, which may hold the team URL's password.
        let cfg = Config::parse(&text).map_err(|message| ConfigError::Parse {
            path: path.clone(),
            message: crate::text::redact::redact(&message).text,
        })?;
        *last = Some((path, stamp, cfg.clone()));
        Ok(cfg)
    }

    pub fn parse(text: &str) -> Result<Config, String> {
        let cfg: Config = toml::from_str(text).map_err(|e| e.to_string())?;
        for mode in &cfg.dispatch.available {
            if DispatchMode::offered(mode).is_none() {
                return Err(format!(
                    "dispatch.available: unknown mode \"{mode}\"; allowed: spawn_replica, \
                     team_task, external_handoff"
                ));
            }
        }
        Ok(cfg)
    }

    /// The explorer's key overrides in `<data_dir>/config.toml` (none without the file). The
    /// explorer reads them itself: the engine has no use for them.
    pub fn key_overrides(data_dir: &Path) -> Result<BTreeMap<String, Vec<String>>, ConfigError> {
        Ok(Config::load(data_dir)?.keys)
    }

    pub fn semantic(&self) -> bool {
        self.search.semantic.unwrap_or(true)
    }

    pub fn lane_timeout(&self) -> Duration {
        Duration::from_millis(self.lanes.timeout_ms.unwrap_or(250).clamp(10, 60_000))
    }

    /// Declared modes, plus what the environment shows: Claude Code agent teams enabled means
    /// a lead can create team tasks (`CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS=1`).
    pub fn dispatch_availability(&self) -> DispatchAvailability {
        let has = |m: DispatchMode| self.dispatch.available.iter().any(|x| x == m.as_str());
        let teams = std::env::var("CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS").is_ok_and(|v| v == "1");
        DispatchAvailability {
            spawn_replica: has(DispatchMode::SpawnReplica),
            team_task: has(DispatchMode::TeamTask) || teams,
            external_handoff: has(DispatchMode::ExternalHandoff),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_parses_config_toml_once_and_again_only_when_it_changes() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = Config::path(dir.path());
        std::fs::create_dir_all(path.parent().expect("dir")).expect("mkdir");
        std::fs::write(&path, "[search]\nsemantic = false\n").expect("write");
        assert!(!Config::load(dir.path()).expect("load").semantic());
        // Same size and mtime, other text: the second load is the first one's parse.
        let mtime = std::fs::metadata(&path)
            .and_then(|m| m.modified())
            .expect("mtime");
        std::fs::write(&path, "[search]\nsemantic = true_\n").expect("rewrite");
        std::fs::File::options()
            .write(true)
            .open(&path)
            .and_then(|f| f.set_modified(mtime))
            .expect("same mtime");
        assert!(!Config::load(dir.path())
            .expect("not parsed again")
            .semantic());
        // A changed file is read again (here: broken, and said so).
        std::fs::write(&path, "[search]\nsemantic = true\n").expect("rewrite");
        assert!(Config::load(dir.path()).expect("load").semantic());
        std::fs::write(&path, "[search]\nsemantic = maybe\n").expect("break");
        assert!(Config::load(dir.path()).is_err());
    }
}
