//! Adapters that put external services behind the lane traits. They own their transports (MCP
//! over stdio to a local child process), so the engine and the built-in sources never do.

pub mod mcp;
