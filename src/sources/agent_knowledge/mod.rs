//! The agent-knowledge store (L3): a derived SQLite database, `knowledge.sqlite`.
//!
//! It answers "which skill applies, who used it, who edited this path" without holding any raw
//! session or code text: only ids and locators (`session_id` + `seq`, paths), names, tags,
//! outcomes and counts, plus catalog text (skill and agent descriptions from their own files).
//! Everything in it can be rebuilt at any time from `episodes.sqlite` and the catalog
//! ([`build()`]); the one exception is `ak_assignment` (dispatch plans), which every rebuild
//! carries over. The layout and the identity and counting rules are documented in `docs/L3.md`.
//!
//! * [`catalog`]: `SKILL.md` / legacy command / agent definition scanning.
//! * [`frontmatter`]: the lenient YAML-frontmatter reader the catalog uses.
//! * [`facts`]: where a build reads the facts of L1 ([`facts::FactsSource`]; the built-in store
//!   is [`facts::EpisodesFacts`]).
//! * [`derive`]: actors, skill uses and edits from those facts, as they are read ([`uses`]:
//!   naming and de-duplication of skill uses, path normalisation).
//! * [`build()`]: writes the store atomically.
//! * [`reader`]: the read-only [`AgentKnowledgeStore`].
//! * [`assignments`]: `ak_assignment`, the dispatch plans, and every statement that writes them.
//! * [`audit`]: the check that no session text reached L3.

pub mod assignments;
pub mod audit;
pub mod build;
pub mod catalog;
#[cfg(test)]
mod catalog_tests;
pub mod derive;
pub mod facts;
pub mod frontmatter;
pub mod reader;
pub mod schema;
pub mod skill_vectors;
pub mod uses;

use std::path::PathBuf;

pub use build::{build, build_from, build_with, BuildSummary};
pub use catalog::{
    default_agent_roots, default_skill_roots, scan_agents, scan_skills, AgentDoc, SkillDoc,
};
pub use reader::{
    ActorFacts, ActorRow, AgentKnowledgeStats, AgentKnowledgeStore, SkillRow, SkillSearch,
};

/// Why the store could not be built or read.
#[derive(Debug, thiserror::Error)]
pub enum AgentKnowledgeError {
    #[error("the agent-knowledge store {0} does not exist yet; run `knowledge index`")]
    Missing(PathBuf),
    #[error("the agent-knowledge store {path} cannot be written or read: {source}")]
    Sql {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error("the skill catalog of {path} cannot be searched: {source}")]
    SkillIndex {
        path: PathBuf,
        #[source]
        source: reader::SkillIndexError,
    },
    #[error("the episodes index {path} cannot be read: {source}")]
    Episodes {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    /// Another episodes source (or the built-in one, past opening it) failed or broke its order.
    #[error("{source_name} cannot be read: {source}")]
    Facts {
        source_name: String,
        #[source]
        source: facts::FactsError,
    },
    #[error(
        "the existing store {path} cannot be read, so its assignments cannot be carried over \
         (move it aside to rebuild): {source}"
    )]
    Preserve {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error("cannot write {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Milliseconds since the epoch → RFC 3339 UTC with milliseconds; `None` outside the years RFC
/// 3339 can write (0000–9999), where chrono writes `+10000-…` or `-0001-…`, which sort and read
/// as no time does.
pub fn ms_to_rfc3339(ms: i64) -> Option<String> {
    use chrono::TimeZone;
    const FIRST: i64 = -62_167_219_200_000; // 0000-01-01T00:00:00.000Z
    const LAST: i64 = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z
    if !(FIRST..=LAST).contains(&ms) {
        return None;
    }
    chrono::Utc
        .timestamp_millis_opt(ms)
        .single()
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
}

#[cfg(test)]
mod time_tests {
    use super::ms_to_rfc3339;

    #[test]
    fn times_rfc_3339_cannot_write_are_none() {
        assert_eq!(
            ms_to_rfc3339(0).as_deref(),
            Some("1970-01-01T00:00:00.000Z")
        );
        assert_eq!(
            ms_to_rfc3339(253_402_300_799_999).as_deref(),
            Some("9999-12-31T23:59:59.999Z")
        );
        assert_eq!(ms_to_rfc3339(253_402_300_800_005), None);
        assert_eq!(ms_to_rfc3339(-62_198_755_200_000), None);
        assert_eq!(ms_to_rfc3339(i64::MIN), None);
    }
}
