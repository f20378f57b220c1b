//! A JSONL agent's line rules behind one trait: what its reader remembers between lines and
//! what it makes of one record. The shared line parser (`parser::TranscriptParser`) holds the
//! rules of the file's agent as a [`LineState`] without knowing which agent it is, and saves
//! them with its cursor; so a new JSONL agent is its module (its state, `impl LineRules`, and
//! `AgentReader::line_state` returning it) plus its line in the registry, and nothing here
//! names an agent.
//!
//! A saved state is the agent's state as JSON with its [`LineRules::FORMAT`] under `format`
//! (first); an agent without line rules saves `{"format":"not_lines"}`. A saved state is
//! restored by asking each registered reader for its fresh rules and keeping the one whose
//! format is named; a format no reader has is an error, and the indexer then reads the file
//! again from its start.

use std::any::Any;
use std::fmt;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::agents::Agent;
use super::model::ParsedEvent;
use super::parser::{Ctx, Handled};

/// The saved format of an agent without line rules (a database, Markdown).
const NOT_LINES: &str = "not_lines";

/// An agent's per-file state and its rules for one record.
pub(crate) trait LineRules:
    Default + Clone + fmt::Debug + Serialize + DeserializeOwned + Send + Sync + 'static
{
    /// The name this state is saved under. Saved cursors hold it: renaming it makes the next
    /// run read that agent's growing files again in full.
    const FORMAT: &'static str;

    /// Feeds one record to the rules.
    fn feed(&mut self, cx: &mut Ctx, record: &Value, out: &mut Vec<ParsedEvent>) -> Handled;

    /// Whether the lines fed since this state was restored from a cursor changed what the
    /// earlier lines' place in the conversation is (a Pi branch, a Gemini rewind): the read
    /// then starts over (see `conversation`).
    fn rewrites_past(&self) -> bool {
        false
    }

    /// Takes the conversation a whole read of the file surveyed, so a second read marks what
    /// is not in it; true when something read is not (a second read is needed).
    fn adopt(&mut self, _survey: &mut Self) -> bool {
        false
    }
}

/// [`LineRules`] without its type, so the parser can hold any agent's.
trait AnyRules: fmt::Debug + Send + Sync {
    fn format(&self) -> &'static str;
    fn feed(&mut self, cx: &mut Ctx, record: &Value, out: &mut Vec<ParsedEvent>) -> Handled;
    fn rewrites_past(&self) -> bool;
    fn adopt(&mut self, survey: &mut dyn AnyRules) -> bool;
    fn as_any_mut(&mut self) -> &mut dyn Any;
    fn save(&self) -> serde_json::Result<Value>;
    fn load(&mut self, saved: Value) -> serde_json::Result<()>;
    fn clone_box(&self) -> Box<dyn AnyRules>;
}

impl<R: LineRules> AnyRules for R {
    fn format(&self) -> &'static str {
        R::FORMAT
    }
    fn feed(&mut self, cx: &mut Ctx, record: &Value, out: &mut Vec<ParsedEvent>) -> Handled {
        LineRules::feed(self, cx, record, out)
    }
    fn rewrites_past(&self) -> bool {
        LineRules::rewrites_past(self)
    }
    fn adopt(&mut self, survey: &mut dyn AnyRules) -> bool {
        match survey.as_any_mut().downcast_mut::<R>() {
            Some(survey) => LineRules::adopt(self, survey),
            None => false,
        }
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
    fn save(&self) -> serde_json::Result<Value> {
        serde_json::to_value(self)
    }
    fn load(&mut self, saved: Value) -> serde_json::Result<()> {
        *self = R::deserialize(saved)?;
        Ok(())
    }
    fn clone_box(&self) -> Box<dyn AnyRules> {
        Box::new(self.clone())
    }
}

/// The line rules of one file's agent, or none (an agent whose reader is not line-based: it is
/// never fed a line, and a record fed anyway is unknown).
pub struct LineState(Option<Box<dyn AnyRules>>);

impl LineState {
    /// The fresh rules of `R`.
    pub(crate) fn of<R: LineRules>() -> LineState {
        LineState(Some(Box::new(R::default())))
    }

    /// No line rules.
    pub(crate) fn not_lines() -> LineState {
        LineState(None)
    }

    /// The fresh line state of `agent`, as its reader says.
    pub(crate) fn new(agent: Agent) -> LineState {
        agent.reader().line_state()
    }

    /// The rules as `R`, when they are `R`'s (a reader that sets its state from outside the
    /// lines: OpenHands' branch).
    pub(crate) fn get_mut<R: LineRules>(&mut self) -> Option<&mut R> {
        self.0.as_mut()?.as_any_mut().downcast_mut::<R>()
    }

    pub(crate) fn format(&self) -> &'static str {
        self.0.as_ref().map_or(NOT_LINES, |r| r.format())
    }

    /// See [`LineRules::rewrites_past`].
    pub(crate) fn rewrites_past(&self) -> bool {
        self.0.as_ref().is_some_and(|r| r.rewrites_past())
    }

    /// See [`LineRules::adopt`]; false when the two are not the same agent's.
    pub(crate) fn adopt_conversation(&mut self, survey: &mut LineState) -> bool {
        match (self.0.as_mut(), survey.0.as_mut()) {
            (Some(rules), Some(survey)) => rules.adopt(survey.as_mut()),
            _ => false,
        }
    }

    /// Feeds one record to the agent's line rules.
    pub(crate) fn feed(
        &mut self,
        cx: &mut Ctx,
        record: &Value,
        out: &mut Vec<ParsedEvent>,
    ) -> Handled {
        match self.0.as_mut() {
            Some(rules) => rules.feed(cx, record, out),
            None => Handled::Unknown,
        }
    }
}

impl Clone for LineState {
    fn clone(&self) -> LineState {
        LineState(self.0.as_ref().map(|r| r.clone_box()))
    }
}

impl fmt::Debug for LineState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Some(rules) => rules.fmt(f),
            None => f.write_str(NOT_LINES),
        }
    }
}

impl Serialize for LineState {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut saved = Map::new();
        saved.insert("format".into(), Value::from(self.format()));
        if let Some(rules) = &self.0 {
            match rules.save().map_err(serde::ser::Error::custom)? {
                Value::Object(fields) => saved.extend(fields),
                other => {
                    return Err(serde::ser::Error::custom(format!(
                        "the {} line state is not an object: {other}",
                        rules.format()
                    )))
                }
            }
        }
        saved.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for LineState {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<LineState, D::Error> {
        let mut saved = Map::<String, Value>::deserialize(deserializer)?;
        let format = match saved.remove("format") {
            Some(Value::String(format)) => format,
            _ => return Err(serde::de::Error::missing_field("format")),
        };
        if format == NOT_LINES {
            return Ok(LineState::not_lines());
        }
        let mut state = Agent::ALL
            .into_iter()
            .map(LineState::new)
            .find(|s| s.format() == format)
            .ok_or_else(|| {
                serde::de::Error::custom(format!("no agent's line state is saved as `{format}`"))
            })?;
        if let Some(rules) = state.0.as_mut() {
            rules
                .load(Value::Object(saved))
                .map_err(serde::de::Error::custom)?;
        }
        Ok(state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fresh state of every agent as the enum that held them before (issue 37) saved it:
    /// cursors written by an earlier build still restore, so nothing is read again in full.
    const SAVED_BEFORE: &[(&str, &str)] = &[
        (
            "codex",
            r#"{"format":"codex","seen_meta":false,"subagent":false,"dedupe":{"entries":[]},"failed_calls":[]}"#,
        ),
        (
            "gemini",
            r#"{"format":"gemini","subagent":false,"seen":[]}"#,
        ),
        ("pi", r#"{"format":"pi","leaf":null}"#),
        ("qwen", r#"{"format":"qwen","emitted":[]}"#),
        ("copilot", r#"{"format":"copilot"}"#),
        ("kimi", r#"{"format":"kimi","seen_prompt":false}"#),
        ("kimi_code", r#"{"format":"kimi_code","seen_task":false}"#),
        (
            "iflow",
            r#"{"format":"iflow","claude":{"subagent_file":null,"last_command":null,"queued":{"entries":[]}},"calls":[]}"#,
        ),
        ("continue", r#"{"format":"continue","calls":[]}"#),
        ("amp", r#"{"format":"amp"}"#),
        ("openhands", r#"{"format":"open_hands","off_branch":[]}"#),
        (
            "claude",
            r#"{"format":"claude","subagent_file":null,"last_command":null,"queued":{"entries":[]}}"#,
        ),
        ("aider", r#"{"format":"not_lines"}"#),
        ("opencode", r#"{"format":"not_lines"}"#),
        ("goose", r#"{"format":"not_lines"}"#),
        ("crush", r#"{"format":"not_lines"}"#),
        ("zed", r#"{"format":"not_lines"}"#),
        ("cursor", r#"{"format":"cursor","seen_prompt":false}"#),
        ("cline", r#"{"format":"not_lines"}"#),
        ("roo_code", r#"{"format":"not_lines"}"#),
        ("kilo_code", r#"{"format":"not_lines"}"#),
    ];

    #[test]
    fn every_agents_state_saves_as_before_and_restores() {
        for agent in Agent::ALL {
            let before = SAVED_BEFORE
                .iter()
                .find(|(name, _)| *name == agent.as_str())
                .map(|(_, saved)| *saved);
            let saved = serde_json::to_string(&LineState::new(agent)).expect("saves");
            match before {
                Some(before) => assert_eq!(saved, before, "{agent:?}"),
                // An agent added since: its state saves under a format of its own.
                None => assert!(saved.starts_with(r#"{"format":""#), "{agent:?}: {saved}"),
            }
            let restored: LineState = serde_json::from_str(&saved).expect("restores");
            assert_eq!(restored.format(), LineState::new(agent).format());
            assert_eq!(serde_json::to_string(&restored).expect("saves"), saved);
        }
    }

    #[test]
    fn every_format_is_one_agents() {
        let mut formats: Vec<&str> = Agent::ALL
            .into_iter()
            .map(|a| LineState::new(a).format())
            .filter(|f| *f != NOT_LINES)
            .collect();
        let n = formats.len();
        formats.sort();
        formats.dedup();
        assert_eq!(formats.len(), n, "two agents save their line state alike");
    }

    /// A saved parser whose rules are another agent's (a damaged cursor) is told apart, so the
    /// file is read again from its start rather than through the wrong rules.
    #[test]
    fn a_parser_saved_with_another_agents_rules_is_not_its_own() {
        use crate::sources::episodes::parser::TranscriptParser;
        let mut saved = serde_json::to_value(TranscriptParser::new(Agent::Claude)).unwrap();
        let restored: TranscriptParser = serde_json::from_value(saved.clone()).unwrap();
        assert!(restored.rules_are_its_agents());
        for other in [
            serde_json::json!({"format": "not_lines"}),
            serde_json::to_value(LineState::new(Agent::Codex)).unwrap(),
        ] {
            saved["format"] = other.clone();
            let restored: TranscriptParser = serde_json::from_value(saved.clone()).unwrap();
            assert!(!restored.rules_are_its_agents(), "{other}");
        }
    }

    #[test]
    fn an_unknown_or_missing_format_is_an_error_not_a_guess() {
        assert!(serde_json::from_str::<LineState>(r#"{"format":"no_such_agent"}"#).is_err());
        assert!(serde_json::from_str::<LineState>(r#"{"leaf":null}"#).is_err());
        assert!(serde_json::from_str::<LineState>(r#"{"format":"pi","leaf":7}"#).is_err());
    }
}
