//! Helpers for the unit tests of the format modules: one-pass parses, and the check that a
//! parse resumed at every line equals it.

use super::*;

/// Parses `text` (JSONL) in one pass; for unit tests of the format modules.
pub(crate) fn parse_str(kind: TranscriptKind, text: &str) -> (Vec<ParsedEvent>, TranscriptParser) {
    let mut parser = TranscriptParser::new(kind);
    let mut events = Vec::new();
    for line in text.lines() {
        parser.feed(line.as_bytes(), &mut events);
    }
    (events, parser)
}

/// Parses `text` twice: in one pass, and split at every line with the state serialised and
/// restored in between; asserts both give the same events, meta, stats and outcome.
pub(crate) fn assert_resumable(kind: TranscriptKind, text: &str) {
    let (one_pass, full) = parse_str(kind, text);
    let mut parser = TranscriptParser::new(kind);
    let mut events = Vec::new();
    for line in text.lines() {
        let state = serde_json::to_string(&parser).unwrap_or_default();
        parser = serde_json::from_str(&state).unwrap_or_else(|_| TranscriptParser::new(kind));
        parser.feed(line.as_bytes(), &mut events);
    }
    assert_eq!(events, one_pass);
    assert_eq!(parser.meta(), full.meta());
    assert_eq!(parser.stats(), full.stats());
    assert_eq!(parser.outcome(), full.outcome());
}
