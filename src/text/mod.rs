//! Text handling shared by every lane: tokens and stems, text vectors for the semantic arm (the
//! static table and the full sentence encoder), snippets, secret redaction and terminal
//! sanitising.

pub mod embed;
pub mod encoder;
pub mod redact;
pub mod sanitize;
pub mod snippet;
pub mod tokens;
