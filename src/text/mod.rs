//! Text handling shared by every lane: tokens and stems, text vectors for the semantic arm,
//! snippets, secret redaction and terminal sanitising.

pub mod embed;
pub mod redact;
pub mod sanitize;
pub mod snippet;
pub mod tokens;
