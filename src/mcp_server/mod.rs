//! `knowledge mcp`: the engine served over MCP on stdio for a lead agent (contract §1, §2).
//!
//! Four tools — `knowledge_search`, `knowledge_dispatch`, `knowledge_get_episode`,
//! `knowledge_code` — call the same engine as the CLI and the TUI and return the same contract
//! documents, as structured content plus a text rendering in which text from sessions and files
//! is delimited and labelled as untrusted data. stdout carries protocol messages only; nothing
//! here prints, and the engine's own request log (ids, timings, counts, codes — never query text
//! or snippets) is the only log. Configuration for Claude Code and Codex is in `docs/MCP.md`.
//!
//! `tools` declares the tools and their schemas, `handler` answers the calls, `code_ref` reads
//! code references and `render` writes the text renderings.

mod code_ref;
mod handler;
mod render;
mod tools;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use rmcp::ServiceExt;

use knowledge::engine::EngineConfig;

/// Serve the engine over MCP on stdin/stdout until the client disconnects.
pub fn run(data_dir: &Path, allow_commit: bool) -> Result<i32> {
    let config = EngineConfig::load(data_dir)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(handler::MAX_PARALLEL * 2)
        .thread_name("knowledge-mcp")
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let engine = Arc::new(knowledge::open_engine(config));
    engine.warm_semantic();
    let server = handler::KnowledgeServer::new(engine.clone(), allow_commit);
    let served = runtime.block_on(async move {
        let service = server
            .serve(rmcp::transport::stdio())
            .await
            .context("the MCP handshake on stdio failed")?;
        service.waiting().await.context("the MCP service stopped")?;
        Ok::<(), anyhow::Error>(())
    });
    runtime.shutdown_timeout(Duration::from_secs(2));
    // The engine (and any external source's child process) goes last, outside the runtime.
    drop(engine);
    served.map(|()| 0)
}
