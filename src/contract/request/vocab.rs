//! The request's closed vocabularies: the routing mode a caller may force, the lanes it may
//! include, the outcome filter and a request's provenance. Apart from `request.rs` so the
//! validator reads as validation; each spells itself as the contract does.

use std::collections::BTreeSet;

use crate::contract::kinds::Outcome;

/// The routing intent a caller may force; `Auto` lets the heuristic decide (§6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    Auto,
    FindAgent,
    FindSkill,
    FindCode,
    FindKnowledge,
}

spelled!(Mode, "mode" {
    Auto => "auto",
    FindAgent => "find_agent",
    FindSkill => "find_skill",
    FindCode => "find_code",
    FindKnowledge => "find_knowledge",
});

/// One of the three lanes. The order of the variants is the lane priority of invariant 10.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Lane {
    Episodes,
    Code,
    Skills,
}

spelled!(Lane, "lane" { Episodes => "episodes", Code => "code", Skills => "skills" });

/// The lanes a request asked for.
pub type Include = BTreeSet<Lane>;

/// The `filters.outcome` a request asks for: a session [`Outcome`] to keep, or `any`. Not the
/// session's own outcome, which can be `unknown` but never `any`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OutcomeFilter {
    Success,
    Failure,
    Any,
}

spelled!(OutcomeFilter, "outcome filter" { Success => "success", Failure => "failure", Any => "any" });

impl OutcomeFilter {
    /// The session outcome a session must have to pass (`None`: any).
    pub fn wanted(self) -> Option<Outcome> {
        match self {
            OutcomeFilter::Success => Some(Outcome::Success),
            OutcomeFilter::Failure => Some(Outcome::Failure),
            OutcomeFilter::Any => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Provenance {
    /// Snippets kept; every item carries its locator (the default).
    Strict,
    /// Locators only, no snippets.
    Locator,
}

spelled!(Provenance, "provenance" { Strict => "strict", Locator => "locator" });
