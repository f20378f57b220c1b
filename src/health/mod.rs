//! The engine reporting on itself: `doctor` inspects the data dir
//! (what is indexed, how old, how big, what is stale or unreachable, and what to run about it),
//! and `team` the team server its team URLs point at. (`knowledge stats` reads the request log
//! through `engine::log::stats`, beside the log's writer, which the activity view reads too.)
//! Each produces a plain serialisable report; printing it is the front end's job.

pub mod agents;
pub mod doctor;
mod outbox;
pub mod team;
mod transcripts;
