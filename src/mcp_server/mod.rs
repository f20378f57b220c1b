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
//! code references, `render` writes the text renderings and `stdio` answers the lines rmcp
//! cannot decode.

mod code_ref;
mod handler;
mod render;
mod stdio;
mod tools;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use rmcp::ServiceExt;

use knowledge::engine::EngineConfig;
use knowledge::watch::slot::EngineSlot;
use knowledge::watch::WatchEvent;

/// Serve the engine over MCP on stdin/stdout until the client disconnects; with `watch`, the
/// roots last indexed into the data dir are followed and answers come from the newest revision.
pub fn run(data_dir: &Path, allow_commit: bool, watch: bool) -> Result<i32> {
    let config = EngineConfig::load(data_dir)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(handler::MAX_PARALLEL * 2)
        .thread_name("knowledge-mcp")
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let reopen = config.clone();
    let warm = |engine: knowledge::engine::Engine| {
        engine.warm_semantic();
        engine
    };
    let engine = Arc::new(EngineSlot::new(
        warm(knowledge::open_engine(config)),
        move || warm(knowledge::open_engine(reopen.clone())),
    ));
    // Nothing may print on stdout; a watch that cannot start leaves the index as it is.
    let watch = if watch {
        let slot = engine.clone();
        knowledge::watch::background(data_dir, move |ev| {
            if matches!(ev, WatchEvent::Indexed(_)) {
                slot.refresh();
            }
        })
        .ok()
        .flatten()
    } else {
        None
    };
    let server = handler::KnowledgeServer::new(engine.clone(), allow_commit);
    let served = runtime.block_on(async move {
        let stdio::FilteredStdio {
            from_client,
            to_client,
            writer,
        } = stdio::start();
        let served = async {
            let service = server
                .serve((from_client, to_client))
                .await
                .context("the MCP handshake on stdio failed")?;
            service.waiting().await.context("the MCP service stopped")?;
            Ok::<(), anyhow::Error>(())
        }
        .await;
        // The last replies (rmcp's and the parse errors) are still on their way to stdout.
        let _ = tokio::time::timeout(Duration::from_secs(2), writer).await;
        served
    });
    runtime.shutdown_timeout(Duration::from_secs(2));
    drop(watch);
    // The engine (and any external source's child process) goes last, outside the runtime.
    drop(engine);
    served.map(|()| 0)
}
