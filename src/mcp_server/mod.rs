//! `knowledge mcp`: the MCP stdio server for the lead agent (being built).

use std::path::Path;

use anyhow::Result;

/// Serve the engine over MCP on stdin/stdout until the client disconnects.
pub fn run(data_dir: &Path, allow_commit: bool) -> Result<i32> {
    let _ = (data_dir, allow_commit);
    anyhow::bail!("the MCP server is not part of this build yet")
}
