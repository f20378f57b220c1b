//! Error and warning codes of the contract (§9) and the one shape every warning/error takes.

use serde::{Deserialize, Serialize};

use super::request::Lane;

/// A contract code. The names are the wire values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Code {
    #[serde(rename = "KNOWLEDGE_INVALID_REQUEST")]
    InvalidRequest,
    #[serde(rename = "KNOWLEDGE_NO_SOURCE")]
    NoSource,
    #[serde(rename = "KNOWLEDGE_LANE_DEGRADED")]
    LaneDegraded,
    #[serde(rename = "KNOWLEDGE_INDEX_NOT_READY")]
    IndexNotReady,
    #[serde(rename = "KNOWLEDGE_STALE_INDEX")]
    StaleIndex,
    #[serde(rename = "KNOWLEDGE_SOURCE_UNAVAILABLE")]
    SourceUnavailable,
    #[serde(rename = "KNOWLEDGE_BUDGET_EXCEEDED")]
    BudgetExceeded,
    #[serde(rename = "KNOWLEDGE_INTERNAL")]
    Internal,
    /// Not in the contract's table: an unknown request field that was ignored (DECISIONS §8).
    #[serde(rename = "KNOWLEDGE_IGNORED_FIELD")]
    IgnoredField,
}

impl Code {
    pub fn as_str(self) -> &'static str {
        match self {
            Code::InvalidRequest => "KNOWLEDGE_INVALID_REQUEST",
            Code::NoSource => "KNOWLEDGE_NO_SOURCE",
            Code::LaneDegraded => "KNOWLEDGE_LANE_DEGRADED",
            Code::IndexNotReady => "KNOWLEDGE_INDEX_NOT_READY",
            Code::StaleIndex => "KNOWLEDGE_STALE_INDEX",
            Code::SourceUnavailable => "KNOWLEDGE_SOURCE_UNAVAILABLE",
            Code::BudgetExceeded => "KNOWLEDGE_BUDGET_EXCEEDED",
            Code::Internal => "KNOWLEDGE_INTERNAL",
            Code::IgnoredField => "KNOWLEDGE_IGNORED_FIELD",
        }
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One entry of `warnings[]` or `errors[]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Issue {
    pub code: Code,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lane: Option<Lane>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    pub message: String,
}

impl Issue {
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Issue {
            code,
            lane: None,
            field: None,
            message: message.into(),
        }
    }
    pub fn lane(code: Code, lane: Lane, message: impl Into<String>) -> Self {
        Issue {
            lane: Some(lane),
            ..Issue::new(code, message)
        }
    }
    pub fn field(code: Code, field: &str, message: impl Into<String>) -> Self {
        Issue {
            field: Some(field.to_string()),
            ..Issue::new(code, message)
        }
    }
}
