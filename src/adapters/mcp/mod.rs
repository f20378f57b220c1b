//! External sources over MCP: a lane backed by a local child process that speaks MCP on stdio.
//!
//! The code lane can read from a RAGRAF-compatible server ([`McpCodeSource`], `ragraf_search`,
//! contract §5.2) and the episodes lane from a session-query server ([`McpEpisodesSource`],
//! §5.1), configured under `[sources.code]` / `[sources.episodes]` in `config.toml`. Both
//! implement the same lane traits as the built-in indexes, so the engine degrades them the same
//! way. [`client::McpClient`] owns the child process and the deadlines; [`answer`] reads what a
//! server says without trusting it.

pub mod answer;
pub mod client;
pub mod code;
pub mod episodes;

use std::sync::Arc;
use std::time::Duration;

pub use client::McpClient;
pub use code::McpCodeSource;
pub use episodes::McpEpisodesSource;

use crate::config::{McpSource, SourcesConfig};
use crate::engine::lanes::{CodeSource, EpisodesSource};

/// The lane's `source` name: the configured one, else `mcp:<command>`.
pub fn source_name(source: &McpSource) -> String {
    source
        .name
        .clone()
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| format!("mcp:{}", source.command))
}

/// The deadline of one call for a lane timeout: a little shorter, so that the adapter gives up
/// (and stops a hung server) before the engine abandons the lane.
pub fn call_deadline(lane_timeout: Duration) -> Duration {
    let margin = (lane_timeout / 10).max(Duration::from_millis(5));
    lane_timeout
        .saturating_sub(margin)
        .max(Duration::from_millis(5))
}

/// The configured external sources in place of the built-in ones (`Engine::open`).
pub fn wire(
    sources: &SourcesConfig,
    lane_timeout: Duration,
    episodes: Arc<dyn EpisodesSource>,
    code: Arc<dyn CodeSource>,
) -> (Arc<dyn EpisodesSource>, Arc<dyn CodeSource>) {
    let deadline = call_deadline(lane_timeout);
    let episodes: Arc<dyn EpisodesSource> = match &sources.episodes {
        Some(src) => Arc::new(McpEpisodesSource::new(src, deadline)),
        None => episodes,
    };
    let code: Arc<dyn CodeSource> = match &sources.code {
        Some(src) => Arc::new(McpCodeSource::new(src, deadline)),
        None => code,
    };
    (episodes, code)
}
