//! The closed vocabularies of the documents: a session's outcome, and the rest as they join.
//!
//! Each is checked once where it enters (a transcript's derivation, a store's cell, a config
//! file) and stays an enum from there to the wire, where serde spells it as before. Defined here,
//! below the engine and the sources, so a store, the engine and every front end name the same
//! type and the compiler finds each place that must handle a new value.

use serde::{Deserialize, Serialize};

/// How a session ended, as derived from its transcript (`sources::episodes::outcome`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Success,
    Failure,
    /// Nothing decided it, or the source does not say.
    #[default]
    Unknown,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::Failure => "failure",
            Outcome::Unknown => "unknown",
        }
    }

    /// A stored outcome. The indexers write only the three words; anything else cannot be
    /// vouched for, so it is `unknown` rather than a failed read of the whole row.
    pub fn from_stored(s: &str) -> Outcome {
        match s {
            "success" => Outcome::Success,
            "failure" => Outcome::Failure,
            _ => Outcome::Unknown,
        }
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// What the code lane's index could do for a query: both arms (`full`), the lexical arm alone,
/// or not enough to trust the lane (`degraded`, which marks the lane and warns).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Capability {
    Full,
    Lexical,
    Degraded,
}

impl Capability {
    pub fn as_str(self) -> &'static str {
        match self {
            Capability::Full => "full",
            Capability::Lexical => "lexical",
            Capability::Degraded => "degraded",
        }
    }
}

impl std::fmt::Display for Capability {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// What an actor is (contract §5.3): the root session of a transcript, a subagent it spawned, a
/// member of its agent team, or an agent of another harness. It decides the dispatch mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ActorKind {
    RootSession,
    Subagent,
    TeamMember,
    AutoclawAgent,
    /// A kind this build does not know (a store or a package written by another).
    Unknown,
}

impl ActorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ActorKind::RootSession => "root_session",
            ActorKind::Subagent => "subagent",
            ActorKind::TeamMember => "team_member",
            ActorKind::AutoclawAgent => "autoclaw_agent",
            ActorKind::Unknown => "unknown",
        }
    }

    /// A kind as a store, an actor id or a package spells it; one not known here is `unknown`
    /// (and has no dispatch mode), not a failed read.
    pub fn from_stored(s: &str) -> ActorKind {
        match s {
            "root_session" => ActorKind::RootSession,
            "subagent" => ActorKind::Subagent,
            "team_member" => ActorKind::TeamMember,
            "autoclaw_agent" => ActorKind::AutoclawAgent,
            _ => ActorKind::Unknown,
        }
    }

    /// The dispatch mode the contract gives the kind (§5.3).
    pub fn dispatch_mode(self) -> DispatchMode {
        match self {
            ActorKind::TeamMember => DispatchMode::TeamTask,
            ActorKind::RootSession | ActorKind::Subagent => DispatchMode::SpawnReplica,
            ActorKind::AutoclawAgent => DispatchMode::ExternalHandoff,
            ActorKind::Unknown => DispatchMode::None,
        }
    }
}

/// How a lead hands a task to an actor (contract §5.3, KD-4); `none` when it cannot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DispatchMode {
    SpawnReplica,
    TeamTask,
    ExternalHandoff,
    None,
}

impl DispatchMode {
    /// The modes an environment can offer (`[dispatch] available` in the config).
    pub const OFFERED: [DispatchMode; 3] = [
        DispatchMode::SpawnReplica,
        DispatchMode::TeamTask,
        DispatchMode::ExternalHandoff,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            DispatchMode::SpawnReplica => "spawn_replica",
            DispatchMode::TeamTask => "team_task",
            DispatchMode::ExternalHandoff => "external_handoff",
            DispatchMode::None => "none",
        }
    }

    /// A mode an environment can offer, by name (`None` for `none` and for any other word).
    pub fn offered(s: &str) -> Option<DispatchMode> {
        DispatchMode::OFFERED.into_iter().find(|m| m.as_str() == s)
    }

    /// A mode as a package spells it; one not known here is `none`.
    pub fn from_stored(s: &str) -> DispatchMode {
        DispatchMode::offered(s).unwrap_or(DispatchMode::None)
    }
}

/// The kinds and modes travel as their text; reading a package back is lenient (`from_stored`)
/// so a file another build wrote stays readable.
macro_rules! text_serde {
    ($ty:ty) => {
        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.pad(self.as_str())
            }
        }

        impl Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = std::borrow::Cow::<'de, str>::deserialize(d)?;
                Ok(<$ty>::from_stored(&s))
            }
        }
    };
}

text_serde!(ActorKind);
text_serde!(DispatchMode);
