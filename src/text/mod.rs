//! Text handling shared by every lane: tokens and stems, snippets, secret redaction and
//! terminal sanitising.

pub mod redact;
pub mod sanitize;
pub mod snippet;
pub mod tokens;
