//! The contract's documents: wire types (serde) exactly as `knowledge.search/v1` spells them, and
//! validation that turns untrusted JSON into checked types once, at the boundary.
//!
//! Everything past [`validate_search`] works on [`SearchRequest`], which cannot hold an invalid
//! value; front ends never build responses by hand.

#[macro_use]
mod spelled;
pub mod codes;
pub mod dispatch;
pub mod kinds;
pub mod request;
pub mod response;
pub mod strict_json;

pub use codes::{Code, Issue};
pub use kinds::{
    ActorKind, Capability, ChunkProvenance, Dedup, DispatchMode, DispatchRun, EventKind, EventType,
    Execution, FusionStrategy, Outcome, ReviewStatus,
};
pub use request::{
    validate_search, Filters, Include, Lane, Mode, OutcomeFilter, Provenance, SearchRequest,
    SEARCH_SCHEMA,
};
pub use response::*;
