//! The attacks `knowledge` survives, one module a family, one test an attack. Each test was
//! written to fail against the build that had the hole, and passes now.
//!
//! - `earlier`: a symlink out of a repository, a second indexer, quoted evidence ending its
//!   quotation, terminal controls in JSON output, secrets typed into a dispatched task.
//! - `data`: a transcript moved or copied (never stored twice), lines inserted or edited in
//!   place (re-read, not misread as an append), an absurd id or path (bounded, the record
//!   skipped and counted), invalid UTF-8 and lone surrogates (replaced, the event kept), an
//!   empty Codex session id, a line of 300k tiny blocks (bounded work).
//! - `hangs`: a closed pipe or a full disk on stdout, a FIFO where a code file or an outbox
//!   package was, garbage lines to the MCP server.
//! - `limits`: oversized filter lists and values, dispatch acceptance and constraints, a stale
//!   or corrupt index, a mistyped data dir, a data dir inside a code root, invalid UTF-8 and
//!   duplicate keys on stdin.
//! - `stores`: a store truncated, zeroed or random; a data dir that does not exist; the log
//!   replaced by a FIFO or a symlink to `/dev/zero`; a broken `config.toml`.
//! - `mcp`: requests that reuse an id, a key given twice inside `arguments`.
//! - `agent_stores`: an agent's side file that is a FIFO or `/dev/zero`, a bad row in an
//!   agent's database, a WAL database in a read-only directory, an unreadable directory.
//! - `documents`: a session kept as one JSON document tens of MB large (read a record at a
//!   time, in bounded memory), escape sequences in the ids, names and titles a store chooses.
//! - `vanished`: a store deleted or renamed mid-run is counted, not a failure.
//! - `fuzz`: properties over the line parser and the request validator, bounded in time.

#[path = "../common/mod.rs"]
mod common;

mod agent_stores;
mod data;
mod documents;
mod earlier;
mod fuzz;
mod hangs;
mod limits;
mod mcp;
mod stores;
mod vanished;
