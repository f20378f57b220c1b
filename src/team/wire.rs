//! The team index in an engine's lanes (`--team URL`): beside this machine's built-in indexes
//! (`Searched::Both`, the default) or in their place (`--team-only`). A URL that cannot be read
//! leaves lanes that fail with the reason, so every front end says what is wrong.

use std::sync::Arc;

use crate::contract::Code;
use crate::engine::lanes::{SourceFailure, Unavailable};
use crate::engine::{Both, Engine, Searched};

/// Attach the team lanes of `engine.config.team` (nothing when it is not set).
pub fn attach(engine: &mut Engine) {
    let Some(url) = engine.config.team.clone() else {
        return;
    };
    let searched = if engine.config.team_only {
        Searched::External
    } else {
        Searched::Both(Both {
            own_machine: Some(
                engine
                    .config
                    .machine
                    .clone()
                    .unwrap_or_else(super::default_machine),
            ),
            // Under the lane's deadline, so the local answer is never lost to a slow server.
            wait: engine.config.lane_timeout * 4 / 5,
        })
    };
    // A lookup after the search (a session row, an actor's facts) waits for a connect under
    // way no longer than the search did.
    let patience = engine.config.lane_timeout * 4 / 5;
    match super::source::lanes(&url, patience) {
        Ok((episodes, code, skills)) => {
            engine.attach_searching(Some(episodes), Some(code), Some(skills), searched);
        }
        Err(e) => {
            let failure = SourceFailure::caused(Code::SourceUnavailable, e);
            let lane = |name: &str| {
                Arc::new(Unavailable {
                    name: name.to_string(),
                    failure: failure.clone(),
                })
            };
            engine.attach_searching(
                Some(lane("team.episodes") as _),
                Some(lane("team.code") as _),
                Some(lane("team.skills") as _),
                searched,
            );
        }
    }
}
