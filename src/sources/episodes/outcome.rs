//! How a session ended: `success`, `failure` or `unknown`.
//!
//! Kept apart from the format parsers so the rule is written once, is the same for Claude Code and
//! Codex, and can be tested on its own. The parsers only report signals (a person's message, a tool
//! result, an aborted turn, a completed task); [`OutcomeTracker`] folds them into a few bytes of
//! state that survive serialisation, so a growing file resumed later gets the same answer as one
//! read in a single pass. The rule is documented in `docs/EVENTS.md` ("Session outcome").

use serde::{Deserialize, Serialize};

pub use crate::contract::kinds::Outcome;

/// The latest decisive signal seen. `User*` come from a person; the rest are machine signals.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Signal {
    #[default]
    None,
    UserPositive,
    UserNegative,
    Aborted,
    Recovered,
    TaskComplete,
    TaskFailed,
}

impl Signal {
    fn is_machine(self) -> bool {
        !matches!(self, Signal::UserPositive | Signal::UserNegative)
    }
}

/// Folds outcome signals, in file order, into the session's outcome.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutcomeTracker {
    base: Signal,
    /// The last tool result was an error and nothing resolved it yet.
    pending_error: bool,
    /// An assistant event was seen: later person messages are replies, not the opening task.
    seen_assistant: bool,
}

impl OutcomeTracker {
    /// Any assistant output (text, thinking, tool call).
    pub fn assistant_activity(&mut self) {
        self.seen_assistant = true;
    }

    /// A prompt a person typed (not a slash command). The opening task is never a verdict ("X
    /// doesn't work, fix it"). A new prompt after a complaint, an abort or a failed tool means the
    /// person moved on: that failure is dropped and what happens next decides. A positive verdict
    /// stands until contradicted.
    pub fn human_message(&mut self, text: &str) {
        if matches!(
            self.base,
            Signal::Aborted | Signal::TaskFailed | Signal::UserNegative
        ) {
            self.base = Signal::None;
        }
        self.pending_error = false;
        if !self.seen_assistant {
            return;
        }
        match verdict(text) {
            Some(true) => {
                self.base = Signal::UserPositive;
                self.pending_error = false;
            }
            Some(false) => {
                self.base = Signal::UserNegative;
                self.pending_error = false;
            }
            None => {}
        }
    }

    pub fn tool_result(&mut self, is_error: bool) {
        if is_error {
            self.pending_error = true;
        } else if self.pending_error {
            self.pending_error = false;
            if self.base.is_machine() {
                self.base = Signal::Recovered;
            }
        }
    }

    /// A turn the person interrupted or the agent aborted.
    pub fn aborted(&mut self) {
        self.base = Signal::Aborted;
    }

    /// The agent reported its task complete (Codex `task_complete`); `failed` when it carried an error.
    pub fn task_complete(&mut self, failed: bool) {
        if failed {
            self.base = Signal::TaskFailed;
        } else if self.base.is_machine() && !self.pending_error {
            self.base = Signal::TaskComplete;
        }
    }

    pub fn signal(&self) -> Signal {
        self.base
    }

    pub fn outcome(&self) -> Outcome {
        if self.pending_error {
            return Outcome::Failure;
        }
        match self.base {
            Signal::UserPositive | Signal::Recovered | Signal::TaskComplete => Outcome::Success,
            Signal::UserNegative | Signal::Aborted | Signal::TaskFailed => Outcome::Failure,
            Signal::None => Outcome::Unknown,
        }
    }
}

/// Phrases that say the work does not work. Checked before [`POSITIVE`] ("не работает" contains
/// "работает", "not working" contains "working").
const NEGATIVE: &[&str] = &[
    "doesn't work",
    "does not work",
    "doesnt work",
    "didn't work",
    "did not work",
    "didnt work",
    "not working",
    "still failing",
    "still fails",
    "still failed",
    "still broken",
    "still not",
    "still no",
    "still doesn't",
    "still doesnt",
    "still getting",
    "still seeing",
    "still the same",
    "same error",
    "is broken",
    "it's broken",
    "failed again",
    "fails again",
    "didn't help",
    "did not help",
    "no luck",
    "nope",
    "не работает",
    "не работают",
    "не заработало",
    "не помогло",
    "не получилось",
    "всё ещё",
    "все еще",
    "по-прежнему",
    "опять ошибка",
    "снова ошибка",
    "сломалось",
];

/// Phrases that say the work is fine.
const POSITIVE: &[&str] = &[
    "it works",
    "it worked",
    "works now",
    "working now",
    "that works",
    "that worked",
    "works!",
    "works great",
    "works fine",
    "works perfectly",
    "thanks",
    "thank you",
    "thx",
    "fixed",
    "perfect",
    "great",
    "awesome",
    "excellent",
    "lgtm",
    "looks good",
    "all green",
    "well done",
    "solved",
    "работает",
    "заработало",
    "спасибо",
    "отлично",
    "супер",
    "получилось",
    "исправлено",
];

/// Only the head of a message is read: a verdict comes first; pasted logs after it do not count.
const VERDICT_HEAD_CHARS: usize = 300;

/// `Some(false)` when the text says it does not work, `Some(true)` when it says it works or
/// thanks, `None` otherwise. Phrases match on word boundaries, case-insensitively.
pub fn verdict(text: &str) -> Option<bool> {
    let head = verdict_head(text);
    // One pass finds every occurrence of every phrase (overlapping ones too, so a phrase inside a
    // longer one is still seen); the 68 substring searches it replaces were 7 % of indexing a
    // Claude Code world (docs/PERFORMANCE.md, issue 18, third pass).
    let mut positive = false;
    for m in phrases().find_overlapping_iter(&head) {
        if on_word_boundaries(&head, m.start(), m.end()) {
            if m.pattern().as_usize() < NEGATIVE.len() {
                return Some(false);
            }
            positive = true;
        }
    }
    positive.then_some(true)
}

/// The head a verdict reads: its first characters, lowercased, with typographic apostrophes
/// made plain.
fn verdict_head(text: &str) -> String {
    text.chars()
        .take(VERDICT_HEAD_CHARS)
        .map(|c| if c == '\u{2019}' { '\'' } else { c })
        .collect::<String>()
        .to_lowercase()
}

/// [`NEGATIVE`] then [`POSITIVE`], as one automaton (a pattern's index tells its list).
fn phrases() -> &'static aho_corasick::AhoCorasick {
    static PHRASES: std::sync::OnceLock<aho_corasick::AhoCorasick> = std::sync::OnceLock::new();
    PHRASES.get_or_init(|| {
        aho_corasick::AhoCorasick::new(NEGATIVE.iter().chain(POSITIVE))
            .expect("the phrases are a few short literals")
    })
}

/// No letter or digit right before `start` or right after `end`.
fn on_word_boundaries(hay: &str, start: usize, end: usize) -> bool {
    let before_ok = hay[..start]
        .chars()
        .next_back()
        .is_none_or(|c| !c.is_alphanumeric());
    let after_ok = hay[end..]
        .chars()
        .next()
        .is_none_or(|c| !c.is_alphanumeric());
    before_ok && after_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule as first written: each list's phrases searched one by one.
    fn verdict_by_each_phrase(text: &str) -> Option<bool> {
        let head = verdict_head(text);
        if NEGATIVE.iter().any(|p| contains_phrase(&head, p)) {
            return Some(false);
        }
        POSITIVE
            .iter()
            .any(|p| contains_phrase(&head, p))
            .then_some(true)
    }

    /// `needle` occurs in `hay` with no letter or digit right before or after it.
    fn contains_phrase(hay: &str, needle: &str) -> bool {
        let mut from = 0;
        while let Some(rel) = hay.get(from..).and_then(|h| h.find(needle)) {
            let start = from + rel;
            if on_word_boundaries(hay, start, start + needle.len()) {
                return true;
            }
            // Advance past the first char of this match.
            from = start
                + hay
                    .get(start..)
                    .and_then(|s| s.chars().next())
                    .map_or(1, char::len_utf8);
        }
        false
    }

    #[test]
    fn one_pass_finds_the_verdict_each_phrase_search_finds() {
        let mut texts: Vec<String> = Vec::new();
        let fillers = [
            "", " ", "x", "1", ",", "!", "\n", "é", "ё", "-", "'", "\u{2019}",
        ];
        for p in NEGATIVE.iter().chain(POSITIVE) {
            for a in fillers {
                for b in fillers {
                    texts.push(format!("{a}{p}{b}"));
                    texts.push(format!("ok {a}{}{b} then", p.to_uppercase()));
                }
            }
        }
        // Phrases inside or overlapping others: "не работает" holds "работает", "still not
        // working" holds "still not" and "not working", "nope" holds "no".
        for p in NEGATIVE {
            for q in POSITIVE {
                texts.push(format!("{q} {p}"));
                texts.push(format!("{p}{q}"));
                texts.push(format!("{q}, {p}"));
            }
        }
        texts.push("x".repeat(299) + " thanks");
        texts.push("x".repeat(290) + " thanks");
        texts.push("ё".repeat(295) + " nope");
        for t in &texts {
            assert_eq!(verdict(t), verdict_by_each_phrase(t), "{t:?}");
        }
    }

    #[test]
    fn verdict_phrases() {
        assert_eq!(verdict("спасибо, работает"), Some(true));
        assert_eq!(verdict("всё равно не работает"), Some(false));
        assert_eq!(verdict("It works! thanks"), Some(true));
        assert_eq!(verdict("still failing with the same trace"), Some(false));
        assert_eq!(verdict("thanks, but it still doesn't work"), Some(false));
        assert_eq!(verdict("it doesn’t work"), Some(false));
        assert_eq!(verdict("explain how the auth module is wired"), None);
        assert_eq!(verdict("make the greatest common divisor fn"), None);
        assert_eq!(verdict("fix the bug"), None);
    }

    #[test]
    fn opening_prompt_is_not_a_verdict() {
        let mut t = OutcomeTracker::default();
        t.human_message("login doesn't work, fix it");
        assert_eq!(t.outcome(), Outcome::Unknown);
        t.assistant_activity();
        t.human_message("still not working");
        assert_eq!(t.outcome(), Outcome::Failure);
        t.human_message("works now, thanks");
        assert_eq!(t.outcome(), Outcome::Success);
    }

    #[test]
    fn tool_errors_and_recovery() {
        let mut t = OutcomeTracker::default();
        t.assistant_activity();
        t.tool_result(false);
        assert_eq!(t.outcome(), Outcome::Unknown);
        t.tool_result(true);
        assert_eq!(t.outcome(), Outcome::Failure);
        t.tool_result(false);
        assert_eq!(t.outcome(), Outcome::Success);
        assert_eq!(t.signal(), Signal::Recovered);
    }

    #[test]
    fn user_complaint_is_not_overridden_by_recovery_or_task_complete() {
        let mut t = OutcomeTracker::default();
        t.assistant_activity();
        t.human_message("doesn't work");
        t.tool_result(true);
        t.tool_result(false);
        t.task_complete(false);
        assert_eq!(t.outcome(), Outcome::Failure);
    }

    #[test]
    fn complaint_then_new_instruction_is_decided_by_what_follows() {
        let mut t = OutcomeTracker::default();
        t.assistant_activity();
        t.human_message("still not working");
        t.human_message("ok, create a pull request");
        assert_eq!(t.outcome(), Outcome::Unknown);
        t.tool_result(true);
        t.tool_result(false);
        assert_eq!(t.outcome(), Outcome::Success);
        t.human_message("thanks!");
        t.human_message("now add docs");
        assert_eq!(t.signal(), Signal::UserPositive);
    }

    #[test]
    fn aborted_then_moved_on() {
        let mut t = OutcomeTracker::default();
        t.assistant_activity();
        t.aborted();
        assert_eq!(t.outcome(), Outcome::Failure);
        t.human_message("ok, try the other file");
        assert_eq!(t.outcome(), Outcome::Unknown);
        t.task_complete(false);
        assert_eq!(t.outcome(), Outcome::Success);
        t.task_complete(true);
        assert_eq!(t.outcome(), Outcome::Failure);
    }

    #[test]
    fn serde_round_trip() {
        let mut t = OutcomeTracker::default();
        t.assistant_activity();
        t.tool_result(true);
        let s = serde_json::to_string(&t).unwrap_or_default();
        let back: OutcomeTracker = serde_json::from_str(&s).unwrap_or_default();
        assert_eq!(back, t);
        assert_eq!(Outcome::Failure.as_str(), "failure");
    }
}
