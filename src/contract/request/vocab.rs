//! The request's closed vocabularies: the routing mode a caller may force, the lanes it may
//! include, the outcome filter and a request's provenance. Apart from `request.rs` so the
//! validator reads as validation; each spells itself as the contract does.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

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

impl Mode {
    pub const ALL: [Mode; 5] = [
        Mode::Auto,
        Mode::FindAgent,
        Mode::FindSkill,
        Mode::FindCode,
        Mode::FindKnowledge,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Auto => "auto",
            Mode::FindAgent => "find_agent",
            Mode::FindSkill => "find_skill",
            Mode::FindCode => "find_code",
            Mode::FindKnowledge => "find_knowledge",
        }
    }
    pub fn parse(s: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.as_str() == s)
    }
}

/// One of the three lanes. The order of the variants is the lane priority of invariant 10.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Lane {
    Episodes,
    Code,
    Skills,
}

impl Lane {
    pub const ALL: [Lane; 3] = [Lane::Episodes, Lane::Code, Lane::Skills];
    pub fn as_str(self) -> &'static str {
        match self {
            Lane::Episodes => "episodes",
            Lane::Code => "code",
            Lane::Skills => "skills",
        }
    }
    pub fn parse(s: &str) -> Option<Lane> {
        Lane::ALL.into_iter().find(|l| l.as_str() == s)
    }
}

impl std::fmt::Display for Lane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

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

impl OutcomeFilter {
    pub fn as_str(self) -> &'static str {
        match self {
            OutcomeFilter::Success => "success",
            OutcomeFilter::Failure => "failure",
            OutcomeFilter::Any => "any",
        }
    }
    pub fn parse(s: &str) -> Option<OutcomeFilter> {
        [
            OutcomeFilter::Success,
            OutcomeFilter::Failure,
            OutcomeFilter::Any,
        ]
        .into_iter()
        .find(|o| o.as_str() == s)
    }
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

impl Provenance {
    pub fn as_str(self) -> &'static str {
        match self {
            Provenance::Strict => "strict",
            Provenance::Locator => "locator",
        }
    }
}

/// Mode and Lane travel as their words, and only as their words (see `spelled`).
macro_rules! as_word {
    ($ty:ident) => {
        impl Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let word = std::borrow::Cow::<'de, str>::deserialize(d)?;
                $ty::parse(&word).ok_or_else(|| {
                    let words: Vec<&str> = $ty::ALL.iter().map(|v| v.as_str()).collect();
                    serde::de::Error::custom(format!(
                        "unknown {} `{word}`, expected one of {}",
                        stringify!($ty).to_lowercase(),
                        words.join(", ")
                    ))
                })
            }
        }
    };
}

as_word!(Mode);
as_word!(Lane);
