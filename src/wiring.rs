//! The composition root: which sources an engine's lanes get. The engine and the lane sources
//! below it know nothing of each other's wiring; this module alone puts the built-in indexes,
//! the team index (`--team URL`, beside them or alone) or the external MCP sources behind the
//! lanes. A team URL that cannot be read leaves lanes that fail with the reason, so every front
//! end says what is wrong.

use std::sync::Arc;

use crate::contract::Code;
use crate::engine::{Both, Engine, EngineConfig, Searched};
use crate::lanes::{SourceFailure, Unavailable};

/// The engine for a config: the built-in sources, with the team index (`--team URL`, beside
/// them or alone) or the external MCP sources the config names (`[sources.code]`,
/// `[sources.episodes]`) in their place.
pub fn open_engine(config: EngineConfig) -> Engine {
    let mut engine = Engine::open(config);
    if engine.config.team.is_some() {
        attach_team(&mut engine);
    } else {
        let (episodes, code) =
            crate::adapters::mcp::wire(&engine.config.sources, engine.config.lane_timeout);
        engine.attach(episodes, code, None);
    }
    engine
}

/// Attach the team lanes of `engine.config.team` (nothing when it is not set).
fn attach_team(engine: &mut Engine) {
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
                    .unwrap_or_else(crate::team::default_machine),
            ),
            // Under the lane's deadline, so the local answer is never lost to a slow server.
            wait: engine.config.lane_timeout * 4 / 5,
        })
    };
    // A lookup after the search (a session row, an actor's facts) waits for a connect under
    // way no longer than the search did.
    let patience = engine.config.lane_timeout * 4 / 5;
    match crate::team::source::lanes(&url, patience) {
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
