//! What the built-in stores hold, counted: `knowledge doctor` reports these numbers and the bare
//! `knowledge` off a terminal prints them, so both ask the engine the same question instead of
//! opening the stores themselves.
//!
//! A store is missing (never built), damaged (its file is there but SQLite cannot read it as the
//! store: truncated, zeroed, another file), unreadable (the file's permissions refuse it), or
//! counted. The three need different fixes, so they are never folded into one "not there".

use std::path::Path;

use super::Engine;
use crate::sources::agent_knowledge::AgentKnowledgeStats;
use crate::sources::code::model::CodeStats;
use crate::sources::episodes::search::LaneStats;

/// One store's state.
#[derive(Debug, Clone)]
pub enum StoreState<T> {
    /// No file: nothing was indexed into this store yet.
    Missing,
    /// The file exists, SQLite cannot read it as this store (`knowledge index --rebuild`).
    Damaged { reason: String },
    /// The file exists and the permissions refuse reading it.
    Unreadable { reason: String },
    /// What the store holds.
    Counted { counts: T },
}

impl<T> StoreState<T> {
    pub fn counts(&self) -> Option<&T> {
        match self {
            StoreState::Counted { counts } => Some(counts),
            _ => None,
        }
    }
}

/// The three built-in stores.
#[derive(Debug, Clone)]
pub struct StoreCounts {
    pub episodes: StoreState<LaneStats>,
    pub code: StoreState<CodeStats>,
    pub knowledge: StoreState<AgentKnowledgeStats>,
}

impl Engine {
    /// Count what each built-in store holds (a few `count(*)` queries on the open stores).
    pub fn store_counts(&self) -> StoreCounts {
        let (config, lanes) = (&self.config, self.builtin());
        let opened = lanes.opened;
        StoreCounts {
            episodes: state(
                &config.episodes_db(),
                opened[0].then(|| lanes.episodes.stats().map_err(|f| f.to_string())),
                |p| crate::sources::episodes::search::EpisodeStore::open(p).err(),
            ),
            code: state(
                &config.code_db(),
                opened[1].then(|| lanes.code.stats().map_err(|f| f.to_string())),
                |p| crate::sources::code::search::CodeStore::open(p).err(),
            ),
            knowledge: state(
                &config.knowledge_db(),
                opened[2].then(|| lanes.skills.stats().map_err(|f| f.to_string())),
                |p| crate::sources::agent_knowledge::AgentKnowledgeStore::open(p).err(),
            ),
        }
    }
}

/// A store's state from its stats (`None`: it did not open when the engine started; `reopen`
/// gives the reason it does not open now).
fn state<T, E: std::fmt::Display, O: std::fmt::Display>(
    db: &Path,
    stats: Option<Result<T, E>>,
    reopen: impl FnOnce(&Path) -> Option<O>,
) -> StoreState<T> {
    let reason = match stats {
        Some(Ok(counts)) => return StoreState::Counted { counts },
        Some(Err(e)) => e.to_string(),
        None if !db.exists() => return StoreState::Missing,
        None => match reopen(db) {
            Some(e) => e.to_string(),
            None => "it did not open when the engine started".to_string(),
        },
    };
    // Opened without blocking: a FIFO in the store's place must not hang the question.
    match crate::sources::regular_file::open(db) {
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => StoreState::Unreadable {
            reason: format!("{}: {e}", db.display()),
        },
        _ => StoreState::Damaged { reason },
    }
}
