//! Why an MCP source could not answer: each failure of starting, calling or stopping the server
//! a kind of its own, with the error under it (the spawn's, the handshake's, the call's) kept
//! as its source. The text, made only when it is shown, names the source's command.

use std::time::Duration;

use rmcp::service::ClientInitializeError;
use rmcp::ServiceError;

/// An MCP source's failure: its command and what went wrong.
#[derive(Debug, thiserror::Error)]
#[error("MCP source `{command}`: {why}")]
pub struct McpFailure {
    pub command: String,
    #[source]
    pub why: McpError,
}

#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error("could not start the async runtime for MCP sources")]
    NoRuntime,
    #[error("cannot start the server: {}", short(.0))]
    Spawn(#[source] std::io::Error),
    #[error("the server's stdio could not be opened")]
    NoStdio,
    #[error("the MCP handshake failed: {}", short(.0))]
    Handshake(#[source] Box<ClientInitializeError>),
    #[error("the server did not finish starting within {} ms", .0.as_millis())]
    StartTimeout(Duration),
    #[error("the server did not start")]
    DidNotStart,
    /// A call waited this long for a server still starting.
    #[error("the server is still starting after {} ms", .0.as_millis())]
    StillStarting(Duration),
    /// The call failed because the server's process ended.
    #[error("the server exited (crashed) during the call")]
    Exited(#[source] ServiceError),
    #[error("the call failed: {}", short(.0))]
    Call(#[source] ServiceError),
    /// The call's deadline passed; the server was stopped.
    #[error("no answer within {} ms; the server was stopped", .0.as_millis())]
    NoAnswer(Duration),
}

/// An error in one line of at most 200 characters.
fn short(e: &dyn std::fmt::Display) -> String {
    let line = crate::text::sanitize::one_line(&e.to_string());
    let mut out: String = line.chars().take(200).collect();
    if line.chars().count() > 200 {
        out.push('…');
    }
    out
}
