//! The activity view's document: what happened over a period, counted from the stores. Plain
//! serialisable data (`knowledge stats --chart --json` prints it as is); the explorer and the
//! CLI draw it, neither computes anything from it but layout.

use serde::Serialize;

use crate::contract::{ActorKind, Lane};
use crate::engine::log::stats::StatsReport;

/// Everything the activity view shows.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct ActivityReport {
    /// The period, RFC 3339 (until exclusive): whole local days.
    pub since: String,
    pub until: String,
    /// One entry per day of the period, oldest first (days without activity included).
    pub days: Vec<DayActivity>,
    /// Sessions with events in the period (subagent transcripts count as their own sessions).
    pub sessions: u64,
    pub events: u64,
    pub failed_sessions: u64,
    /// `failed_sessions / sessions` (0 without sessions).
    pub failed_share: f64,
    /// Workspaces by events, most first.
    pub workspaces: Vec<WorkspaceActivity>,
    /// Agents (harnesses: `claude`, `codex`) by events.
    pub agents: Vec<AgentActivity>,
    /// Actors by events, then failures, most first.
    pub actors: Vec<ActorActivity>,
    /// Skills by uses, most first.
    pub skills: Vec<SkillActivity>,
    /// The request log over the same days.
    pub health: LaneHealth,
    /// Why a part is empty (a lane that could not answer, a cut period).
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct DayActivity {
    /// `YYYY-MM-DD` in local time.
    pub day: String,
    pub since_ms: i64,
    pub until_ms: i64,
    pub sessions: u64,
    pub events: u64,
    pub failed_sessions: u64,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct WorkspaceActivity {
    pub workspace: String,
    pub sessions: u64,
    pub events: u64,
    pub failed_sessions: u64,
    /// The ids of the actors who worked there most, by events.
    pub actors: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct AgentActivity {
    pub source: String,
    pub sessions: u64,
    pub events: u64,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct ActorActivity {
    pub actor_id: String,
    pub name: String,
    /// `None`: the skills lane does not know the actor.
    pub kind: Option<ActorKind>,
    pub source: String,
    /// How a person reads the actor (`profiles::label_of`).
    pub label: String,
    /// What the work was about (`None` when nothing says it).
    pub title: Option<String>,
    /// The workspace of the actor's busiest session in the period.
    pub workspace: Option<String>,
    pub sessions: u64,
    pub events: u64,
    /// Sessions of the actor that ended in success / failure.
    pub successes: u64,
    pub failures: u64,
    /// The last hour with events in the period, RFC 3339.
    pub last_active: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct SkillActivity {
    pub skill: String,
    pub uses: u64,
    /// Uses in sessions that failed.
    pub failures: u64,
}

/// Lane health per day from the request log: the figures of `knowledge stats` as series.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct LaneHealth {
    /// Searches per day.
    pub searches: Vec<u64>,
    /// Searches that returned nothing, per day (0…1).
    pub zero_result_rate: Vec<f64>,
    pub lanes: Vec<LaneSeries>,
    /// The whole period as `knowledge stats` reports it.
    pub stats: Option<StatsReport>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LaneSeries {
    pub lane: Lane,
    /// Median latency per day (0 on a day without requests).
    pub p50_ms: Vec<f64>,
    /// Degraded answers over requests, per day (0…1).
    pub degradation_rate: Vec<f64>,
}
