//! `knowledge.search/v1` response types, spelled exactly as the contract's §4 example.
//!
//! Optional fields are skipped when absent so that a `provenance: locator` item really has no
//! `snippet`, and an episodes item can never carry `path` (invariants 3 and 4 hold by type).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use super::codes::Issue;
use super::kinds::{
    ActorKind, Capability, ChunkProvenance, Dedup, DispatchMode, EventKind, FusionStrategy, Outcome,
};
use super::request::{Lane, Mode};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchResponse {
    pub schema: String,
    pub request_id: Option<String>,
    pub query: String,
    /// `false` only when no source could answer (KC-5).
    pub found: bool,
    pub routing: Routing,
    pub lanes: Lanes,
    pub actors: Vec<Actor>,
    pub fusion: Fusion,
    pub limits: Limits,
    pub warnings: Vec<Issue>,
    pub errors: Vec<Issue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<Trace>,
}

impl SearchResponse {
    /// The ids of one lane's items, in order.
    pub fn lane_ids(&self, lane: Lane) -> Vec<&str> {
        match lane {
            Lane::Episodes => self
                .lanes
                .episodes
                .items
                .iter()
                .map(|i| i.id.as_str())
                .collect(),
            Lane::Code => self
                .lanes
                .code
                .items
                .iter()
                .map(|i| i.id.as_str())
                .collect(),
            Lane::Skills => self
                .lanes
                .skills
                .iter()
                .flat_map(|s| s.items.iter().map(|i| i.id.as_str()))
                .collect(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Routing {
    pub intent: Mode,
    pub lanes: Vec<Lane>,
    pub confidence: f64,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Lanes {
    pub episodes: EpisodesLane,
    pub code: CodeLane,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skills: Option<SkillsLane>,
}

/// What every lane carries whatever its source (invariant 2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaneHeader {
    pub source: String,
    pub index_rev: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed_at: Option<String>,
    pub degraded: bool,
    pub degradation_reason: Option<String>,
}

impl LaneHeader {
    pub fn degraded(source: &str, reason: impl Into<String>) -> Self {
        LaneHeader {
            source: source.to_string(),
            index_rev: None,
            observed_at: None,
            degraded: true,
            degradation_reason: Some(reason.into()),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpisodesLane {
    #[serde(flatten)]
    pub header: LaneHeader,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts: Option<EpisodeCounts>,
    pub items: Vec<EpisodeItem>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct EpisodeCounts {
    pub sessions: u64,
    pub indexed_docs: u64,
    pub live: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpisodeItem {
    pub id: String,
    pub session_id: String,
    pub seq: u64,
    pub event_type: EventKind,
    /// Absent when the record had no time (legacy Codex items).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    pub surface: String,
    pub score: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
    /// Left out when the budget reduced the item to its locator (the smallest budgets).
    #[serde(default, skip_serializing_if = "SessionInfo::is_left_out")]
    pub session: SessionInfo,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub why: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionInfo {
    pub cwd: Option<String>,
    pub created_at: Option<String>,
    pub agent_preset: Option<String>,
    pub live: bool,
    pub persisted: bool,
    /// Not in the contract's example; an optional v1 addition (§15): the session's derived
    /// outcome, so people can see why an `outcome` filter kept it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    /// An optional v1 addition: the machine whose index holds the session, when the episodes
    /// lane asks a team index (`knowledge search --team`: this machine's own items name it
    /// too); absent when this machine's index answers alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
    /// Set by the budget when the item is reduced to its locator: the block is not serialized.
    #[serde(skip)]
    pub left_out: bool,
}

impl SessionInfo {
    pub fn is_left_out(&self) -> bool {
        self.left_out
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CodeLane {
    #[serde(flatten)]
    pub header: LaneHeader,
    pub capability: Capability,
    pub freshness: Freshness,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drift: Option<serde_json::Value>,
    pub items: Vec<CodeItem>,
}

/// How the freshness of the code lane's items (or of lines read) was checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Freshness {
    pub stale: bool,
    /// Always `fingerprint`: size + mtime, then the content hash.
    pub verified_by: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CodeItem {
    pub id: String,
    pub chunk_id: String,
    /// Relative to the repository root (`root`).
    pub path: String,
    /// An optional v1 addition (§15): the repository root the path is relative to, so a
    /// `README.md` of one workspace is never confused with another's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    pub start_line: u64,
    pub end_line: u64,
    pub source_kind: String,
    pub provenance: ChunkProvenance,
    pub score: f64,
    pub why: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mtime: Option<String>,
    /// An optional v1 addition: the machine whose index holds the chunk, when the code lane
    /// asks a team index (`--team`: this machine's own items name it too); absent when this
    /// machine's index answers alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillsLane {
    #[serde(flatten)]
    pub header: LaneHeader,
    pub items: Vec<SkillItem>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillItem {
    pub id: String,
    pub name: String,
    pub path: String,
    pub description: String,
    pub when_to_use: Option<String>,
    pub content_hash: String,
    pub score: f64,
    pub uses: u64,
    pub used_by: Vec<UsedBy>,
    pub why: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsedBy {
    pub actor_id: String,
    pub episode_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Actor {
    pub actor_id: String,
    pub name: String,
    pub kind: ActorKind,
    pub source: String,
    pub confidence: f64,
    pub score: f64,
    pub why: Vec<String>,
    pub evidence: Vec<EvidenceRef>,
    pub skills: Vec<SkillUses>,
    pub dispatch: DispatchInfo,
    /// What the work was about, for a person (additive in v1; see `engine::profiles`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A subagent's or team member's root session title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_title: Option<String>,
    /// The working directory of the actor's (root) session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// RFC 3339 time of the actor's last event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_active: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvidenceRef {
    pub lane: Lane,
    pub id: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillUses {
    pub name: String,
    pub uses: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DispatchInfo {
    pub mode: DispatchMode,
    pub available: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fusion {
    pub strategy: FusionStrategy,
    pub k: u32,
    pub weights: BTreeMap<String, f64>,
    pub dedup: Dedup,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    pub requested: u32,
    pub returned: u32,
    pub truncated: bool,
    pub budget: BudgetUse,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dropped: Vec<Dropped>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BudgetUse {
    pub max_tokens: u32,
    pub used_tokens: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dropped {
    pub lane: Lane,
    pub id: String,
    pub what: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    pub lanes: Vec<LaneTrace>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaneTrace {
    pub lane: Lane,
    pub ms: f64,
    pub items: u32,
    pub degraded: bool,
    pub cache_hit: bool,
}

/// The document returned for an invalid request (exit code 2 on the CLI).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorResponse {
    pub schema: String,
    pub request_id: Option<String>,
    pub found: bool,
    pub warnings: Vec<Issue>,
    pub errors: Vec<Issue>,
}
