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
        f.write_str(self.as_str())
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
        f.write_str(self.as_str())
    }
}
