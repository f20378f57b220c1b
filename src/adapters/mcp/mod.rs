//! External sources over MCP: a lane backed by a local child process that speaks MCP on stdio.
//!
//! The code lane can read from a RAGRAF-compatible server ([`McpCodeSource`], `ragraf_search`,
//! contract §5.2) and the episodes lane from a session-query server ([`McpEpisodesSource`],
//! §5.1), configured under `[sources.code]` / `[sources.episodes]` in `config.toml`. Both
//! implement the same lane traits as the built-in indexes, so the engine degrades them the same
//! way, and reads through them the same way (RAGRAF's `ragraf_code` for lines of a file; a
//! session-query server has no tool to read an event, and says so). Both are one [`McpLane`]
//! over a [`Protocol`]; [`client::McpClient`] owns the child process and the deadlines;
//! [`answer`] reads what a server says without trusting it.

pub mod answer;
pub mod client;
pub mod code;
pub mod episodes;
pub mod error;

use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

pub use client::McpClient;
pub use code::{McpCodeSource, Ragraf};
pub use episodes::{McpEpisodesSource, SessionQuery};

use crate::config::{McpSource, SourcesConfig};
use crate::lanes::{CodeSource, EpisodesSource};

/// The lane's `source` name: the configured one, else `mcp:<command>`.
pub fn source_name(source: &McpSource) -> String {
    source
        .name
        .clone()
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| format!("mcp:{}", source.command))
}

/// What kind of server a lane talks to.
pub trait Protocol {
    /// The search tool called unless the config names another.
    const DEFAULT_TOOL: &'static str;
}

/// A lane over an external MCP server speaking protocol `P`.
pub struct McpLane<P> {
    name: String,
    tool: String,
    client: McpClient,
    protocol: PhantomData<P>,
}

impl<P: Protocol> McpLane<P> {
    /// A lane for `source`; each search call must finish within `call_timeout`.
    pub fn new(source: &McpSource, call_timeout: Duration) -> McpLane<P> {
        McpLane {
            name: source_name(source),
            tool: source
                .tool
                .clone()
                .unwrap_or_else(|| P::DEFAULT_TOOL.to_string()),
            client: McpClient::new(source, call_timeout),
            protocol: PhantomData,
        }
    }
}

/// The deadline of one call for a lane timeout: a little shorter, so that the adapter gives up
/// (and stops a hung server) before the engine abandons the lane.
pub fn call_deadline(lane_timeout: Duration) -> Duration {
    let margin = (lane_timeout / 10).max(Duration::from_millis(5));
    lane_timeout
        .saturating_sub(margin)
        .max(Duration::from_millis(5))
}

/// The external episodes and code sources for `Engine::attach` (`None`: the lane keeps its own).
pub type ExternalLanes = (Option<Arc<dyn EpisodesSource>>, Option<Arc<dyn CodeSource>>);

/// The external sources the config names (`[sources.episodes]`, `[sources.code]`), for
/// `Engine::attach`.
pub fn wire(sources: &SourcesConfig, lane_timeout: Duration) -> ExternalLanes {
    let deadline = call_deadline(lane_timeout);
    let episodes = sources
        .episodes
        .as_ref()
        .map(|src| -> Arc<dyn EpisodesSource> { Arc::new(McpEpisodesSource::new(src, deadline)) });
    let code = sources
        .code
        .as_ref()
        .map(|src| -> Arc<dyn CodeSource> { Arc::new(McpCodeSource::new(src, deadline)) });
    (episodes, code)
}
