//! The full-screen terminal explorer (being built).

use anyhow::Result;
use knowledge::engine::Engine;

/// Open the explorer over `engine`, with `query` typed into the query box when given.
pub fn run(engine: Engine, query: Option<String>) -> Result<i32> {
    let _ = (engine, query);
    anyhow::bail!("the terminal explorer is not part of this build yet; use `knowledge search`")
}
