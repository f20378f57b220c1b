//! The engine reporting on itself: `stats` reads the request log (latency, zero results,
//! degradations, evidence mix, budget truncations — contract §11), `doctor` inspects the data dir
//! (what is indexed, how old, how big, what is stale or unreachable, and what to run about it),
//! and `team` the team server its team URLs point at.
//! Each produces a plain serialisable report; printing it is the front end's job.

pub mod agents;
pub mod doctor;
pub mod stats;
pub mod team;
mod transcripts;
