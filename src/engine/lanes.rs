//! The lane boundary: what the engine asks a source and what a source answers.
//!
//! Built-in indexes and external MCP adapters implement the same traits, so the engine treats a
//! failing or slow source the same way whatever it is: that lane is degraded, the others answer.

use crate::contract::Code;
use crate::sources::episodes::search::{EpisodeHit, LaneStats};

/// The part of a request a lane needs, already checked.
#[derive(Debug, Clone, Default)]
pub struct LaneRequest {
    /// Stemmed, stopword-free query terms.
    pub terms: Vec<String>,
    /// The query as the person wrote it (external sources do their own tokenising).
    pub query: String,
    pub workspaces: Vec<String>,
    pub session_ids: Vec<String>,
    pub actor_ids: Vec<String>,
    pub skills: Vec<String>,
    pub paths: Vec<String>,
    pub since_ms: Option<i64>,
    pub until_ms: Option<i64>,
    pub outcome: Option<String>,
    /// Candidate depth K (DECISIONS §2).
    pub depth: usize,
    pub snippet_chars: usize,
    /// The query's text vector for the built-in lanes' vector arm (`None`: semantic search is
    /// off, or no word of the query is in the embedding table).
    pub vector: Option<crate::text::embed::Vector>,
}

/// Why a source could not answer; becomes the lane's degradation.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceFailure {
    pub code: Code,
    pub reason: String,
}

impl SourceFailure {
    pub fn new(code: Code, reason: impl Into<String>) -> Self {
        SourceFailure {
            code,
            reason: reason.into(),
        }
    }
}

/// An episodes answer: the lane's revision, coverage counts and hits, best first.
#[derive(Debug, Clone)]
pub struct EpisodesAnswer {
    pub stats: LaneStats,
    pub hits: Vec<EpisodeHit>,
}

pub trait EpisodesSource: Send + Sync {
    /// The `source` name reported in the lane.
    fn name(&self) -> String;
    fn search(&self, req: &LaneRequest) -> Result<EpisodesAnswer, SourceFailure>;
}

/// A code chunk hit from any code source.
#[derive(Debug, Clone, PartialEq)]
pub struct CodeHit {
    pub chunk_id: String,
    pub path: String,
    pub start_line: u64,
    pub end_line: u64,
    pub source_kind: String,
    pub symbol: Option<String>,
    pub score: f64,
    pub why: Vec<String>,
    pub snippet: String,
    pub mtime: Option<String>,
    pub mtime_ms: Option<i64>,
    /// The repository root (workspace) the chunk belongs to.
    pub root: String,
}

#[derive(Debug, Clone)]
pub struct CodeAnswer {
    pub index_rev: Option<String>,
    pub capability: String,
    pub capability_reason: Option<String>,
    pub stale: bool,
    pub stale_paths: Vec<String>,
    pub drift: Option<serde_json::Value>,
    pub hits: Vec<CodeHit>,
}

pub trait CodeSource: Send + Sync {
    fn name(&self) -> String;
    fn search(&self, req: &LaneRequest) -> Result<CodeAnswer, SourceFailure>;
}

/// A skill hit from the agent-knowledge store.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillHit {
    pub name: String,
    pub path: String,
    pub description: String,
    pub when_to_use: Option<String>,
    pub content_hash: String,
    pub bm25: f64,
    pub uses: u64,
    /// (actor_id, session_id, seq) of recorded uses.
    pub used_by: Vec<(String, String, u64)>,
    pub why: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct SkillsAnswer {
    pub index_rev: Option<String>,
    pub hits: Vec<SkillHit>,
}

pub trait SkillsSource: Send + Sync {
    fn name(&self) -> String;
    fn search(&self, req: &LaneRequest) -> Result<SkillsAnswer, SourceFailure>;
}

/// A source that is not configured or could not be opened: it always fails the same way.
pub struct Unavailable {
    pub name: String,
    pub failure: SourceFailure,
}

impl EpisodesSource for Unavailable {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn search(&self, _: &LaneRequest) -> Result<EpisodesAnswer, SourceFailure> {
        Err(self.failure.clone())
    }
}

impl CodeSource for Unavailable {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn search(&self, _: &LaneRequest) -> Result<CodeAnswer, SourceFailure> {
        Err(self.failure.clone())
    }
}

impl SkillsSource for Unavailable {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn search(&self, _: &LaneRequest) -> Result<SkillsAnswer, SourceFailure> {
        Err(self.failure.clone())
    }
}
