//! The closed vocabularies of the documents: a session's outcome, and the rest as they join.
//!
//! Each is checked once where it enters (a transcript's derivation, a store's cell, a config
//! file) and stays an enum from there to the wire, where serde spells it as before. Defined here,
//! below the engine and the sources, so a store, the engine and every front end name the same
//! type and the compiler finds each place that must handle a new value.

use serde::{Deserialize, Serialize};

/// How a session ended, as derived from its transcript (`sources::episodes::outcome`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Outcome {
    Success,
    Failure,
    /// Nothing decided it, or the source does not say.
    #[default]
    Unknown,
}

spelled!(Outcome { Success => "success", Failure => "failure", Unknown => "unknown" });

impl Outcome {
    /// A stored outcome. The indexers write only the three words; anything else cannot be
    /// vouched for, so it is `unknown` rather than a failed read of the whole row.
    pub fn from_stored(s: &str) -> Outcome {
        match s {
            "success" => Outcome::Success,
            "failure" => Outcome::Failure,
            _ => Outcome::Unknown,
        }
    }
}

/// What the code lane's index could do for a query: both arms (`full`), the lexical arm alone,
/// or not enough to trust the lane (`degraded`, which marks the lane and warns).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Capability {
    Full,
    Lexical,
    Degraded,
}

spelled!(Capability { Full => "full", Lexical => "lexical", Degraded => "degraded" });

/// What an actor is (contract §5.3): the root session of a transcript, a subagent it spawned, a
/// member of its agent team, or an agent of another harness. It decides the dispatch mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ActorKind {
    RootSession,
    Subagent,
    TeamMember,
    AutoclawAgent,
    /// A kind this build does not know (a store or a package written by another).
    Unknown,
}

impl ActorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ActorKind::RootSession => "root_session",
            ActorKind::Subagent => "subagent",
            ActorKind::TeamMember => "team_member",
            ActorKind::AutoclawAgent => "autoclaw_agent",
            ActorKind::Unknown => "unknown",
        }
    }

    /// A kind as a store, an actor id or a package spells it; one not known here is `unknown`
    /// (and has no dispatch mode), not a failed read.
    pub fn from_stored(s: &str) -> ActorKind {
        match s {
            "root_session" => ActorKind::RootSession,
            "subagent" => ActorKind::Subagent,
            "team_member" => ActorKind::TeamMember,
            "autoclaw_agent" => ActorKind::AutoclawAgent,
            _ => ActorKind::Unknown,
        }
    }

    /// The dispatch mode the contract gives the kind (§5.3).
    pub fn dispatch_mode(self) -> DispatchMode {
        match self {
            ActorKind::TeamMember => DispatchMode::TeamTask,
            ActorKind::RootSession | ActorKind::Subagent => DispatchMode::SpawnReplica,
            ActorKind::AutoclawAgent => DispatchMode::ExternalHandoff,
            ActorKind::Unknown => DispatchMode::None,
        }
    }
}

/// How a lead hands a task to an actor (contract §5.3, KD-4); `none` when it cannot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DispatchMode {
    SpawnReplica,
    TeamTask,
    ExternalHandoff,
    None,
}

impl DispatchMode {
    /// The modes an environment can offer (`[dispatch] available` in the config).
    pub const OFFERED: [DispatchMode; 3] = [
        DispatchMode::SpawnReplica,
        DispatchMode::TeamTask,
        DispatchMode::ExternalHandoff,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            DispatchMode::SpawnReplica => "spawn_replica",
            DispatchMode::TeamTask => "team_task",
            DispatchMode::ExternalHandoff => "external_handoff",
            DispatchMode::None => "none",
        }
    }

    /// A mode an environment can offer, by name (`None` for `none` and for any other word).
    pub fn offered(s: &str) -> Option<DispatchMode> {
        DispatchMode::OFFERED.into_iter().find(|m| m.as_str() == s)
    }

    /// A mode as a package spells it; one not known here is `none`.
    pub fn from_stored(s: &str) -> DispatchMode {
        DispatchMode::offered(s).unwrap_or(DispatchMode::None)
    }
}

/// The kinds and modes travel as their text; reading a package back is lenient (`from_stored`)
/// so a file another build wrote stays readable.
macro_rules! text_serde {
    ($ty:ty) => {
        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.pad(self.as_str())
            }
        }

        impl Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = std::borrow::Cow::<'de, str>::deserialize(d)?;
                Ok(<$ty>::from_stored(&s))
            }
        }
    };
}

text_serde!(ActorKind);
text_serde!(DispatchMode);

/// What an event is: `role/kind`, stored and shown as [`EventType::as_str`]. A new agent maps
/// its records onto these; a new kind is a new variant, and the compiler points at every place
/// that must handle it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventType {
    UserMessage,
    UserCommand,
    /// A task a parent agent gave a subagent (Codex spawned threads).
    AgentPrompt,
    AssistantMessage,
    AssistantThinking,
    AssistantToolUse,
    ToolResult,
    SystemSkill,
    SystemHook,
    SystemContext,
    SystemSummary,
    SystemNotification,
    SystemError,
    TeamMessage,
}

spelled!(EventType, "event type" {
    UserMessage => "user/message",
    UserCommand => "user/command",
    AgentPrompt => "agent/prompt",
    AssistantMessage => "assistant/message",
    AssistantThinking => "assistant/thinking",
    AssistantToolUse => "assistant/tool_use",
    ToolResult => "tool/result",
    SystemSkill => "system/skill",
    SystemHook => "system/hook",
    SystemContext => "system/context",
    SystemSummary => "system/summary",
    SystemNotification => "system/notification",
    SystemError => "system/error",
    TeamMessage => "team/message",
});

impl EventType {
    /// Text a person typed.
    pub fn is_human(self) -> bool {
        matches!(self, EventType::UserMessage | EventType::UserCommand)
    }

    /// Output of the assistant (text, reasoning, a tool call).
    pub fn is_assistant(self) -> bool {
        matches!(
            self,
            EventType::AssistantMessage
                | EventType::AssistantThinking
                | EventType::AssistantToolUse
        )
    }
}

/// `ev.event_type == "tool/result"`: compares with the stored form.
impl PartialEq<&str> for EventType {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// An event's type as a lane and the wire carry it: one of ours ([`EventType`], from every
/// built-in and team store), or the type an external source gave it (a session-query server
/// names its own, `event` when it names none), kept as the source said. Only display and the
/// `why` lines read it; a rule that depends on the type asks [`EventKind::known`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum EventKind {
    Known(EventType),
    Foreign(String),
}

impl EventKind {
    /// A stored or received type: ours when it is one of ours, else kept as written.
    pub fn parse(s: &str) -> EventKind {
        match EventType::parse(s) {
            Some(t) => EventKind::Known(t),
            None => EventKind::Foreign(s.to_string()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            EventKind::Known(t) => t.as_str(),
            EventKind::Foreign(s) => s,
        }
    }

    /// The type when it is one of ours.
    pub fn known(&self) -> Option<EventType> {
        match self {
            EventKind::Known(t) => Some(*t),
            EventKind::Foreign(_) => None,
        }
    }
}

impl From<EventType> for EventKind {
    fn from(t: EventType) -> EventKind {
        EventKind::Known(t)
    }
}

impl From<&str> for EventKind {
    fn from(s: &str) -> EventKind {
        EventKind::parse(s)
    }
}

impl From<String> for EventKind {
    fn from(s: String) -> EventKind {
        match EventType::parse(&s) {
            Some(t) => EventKind::Known(t),
            None => EventKind::Foreign(s),
        }
    }
}

/// `item.event_type == "tool/result"`: compares with the written form.
impl PartialEq<&str> for EventKind {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl std::fmt::Display for EventKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

impl Serialize for EventKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for EventKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(EventKind::from)
    }
}

/// Where a plan stands (contract §dispatch): recorded and waiting for a person, or decided.
/// Decisions are final; the outbox file and the assignment row say the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReviewStatus {
    RecordedPlan,
    Approved,
    Rejected,
}

spelled!(ReviewStatus {
    RecordedPlan => "recorded_plan",
    Approved => "approved",
    Rejected => "rejected",
});

/// Whether a dispatch call only planned (`dry_run`) or recorded the plan (`commit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DispatchRun {
    DryRun,
    Commit,
}

/// What became of a handoff package: never run by `knowledge` (contract: `not_executed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Execution {
    NotExecuted,
}

/// How a code item's lines are vouched for: as the code index states them (contract `stated`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChunkProvenance {
    Stated,
}

/// How a lane's hits were fused: reciprocal rank fusion (contract `rrf`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FusionStrategy {
    Rrf,
}

/// How duplicates were removed before fusion: by item id (contract `by id`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dedup {
    ById,
}

spelled!(DispatchRun { DryRun => "dry_run", Commit => "commit" });
spelled!(Execution { NotExecuted => "not_executed" });
spelled!(ChunkProvenance { Stated => "stated" });
spelled!(FusionStrategy { Rrf => "rrf" });
spelled!(Dedup { ById => "by id" });

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_kind_is_ours_when_it_can_be_and_kept_as_written_when_not() {
        for t in EventType::ALL {
            let kind = EventKind::parse(t.as_str());
            assert_eq!(kind, EventKind::Known(t));
            assert_eq!(kind.known(), Some(t));
            assert_eq!(serde_json::to_string(&kind).unwrap(), format!("\"{t}\""));
        }
        let foreign: EventKind = serde_json::from_str("\"message.user\"").unwrap();
        assert_eq!(foreign, EventKind::Foreign("message.user".into()));
        assert_eq!(foreign.known(), None);
        assert_eq!(serde_json::to_string(&foreign).unwrap(), "\"message.user\"");
        assert_eq!(EventKind::from("tool/result"), "tool/result");
    }

    /// A word and only a word: serde's derived form would take `{"approved": null}` for
    /// `approved`, and a package file edited that way would pass as decided.
    #[test]
    fn a_vocabulary_reads_only_its_words() {
        let read =
            |json: &str| serde_json::from_str::<ReviewStatus>(json).map_err(|e| e.to_string());
        assert_eq!(read("\"approved\""), Ok(ReviewStatus::Approved));
        for (json, says) in [
            (
                r#"{"approved": null}"#,
                "invalid type: map, expected a string",
            ),
            ("1", "invalid type: integer `1`, expected a string"),
            ("null", "invalid type: null, expected a string"),
            ("\"pending\"", "unknown variant `pending`, expected one of"),
            ("\"Approved\"", "unknown variant `Approved`"),
        ] {
            let e = read(json).expect_err(json);
            assert!(e.contains(says), "{json}: {e}");
        }
        assert!(serde_json::from_str::<Outcome>(r#"{"success": null}"#).is_err());
        assert!(serde_json::from_str::<Execution>(r#"{"not_executed": null}"#).is_err());
        let lane = serde_json::from_str::<crate::contract::Lane>("\"team\"").unwrap_err();
        assert!(lane.to_string().contains("unknown lane `team`"), "{lane}");
        assert!(serde_json::from_str::<crate::contract::Lane>(r#"{"code": null}"#).is_err());
    }

    /// `as_str` is what serde writes, for every vocabulary spelled by hand.
    #[test]
    fn each_vocabulary_is_spelled_as_serde_writes_it() {
        fn same<T: Serialize + std::fmt::Display>(v: T) {
            assert_eq!(serde_json::to_string(&v).unwrap(), format!("\"{v}\""));
        }
        [DispatchRun::DryRun, DispatchRun::Commit]
            .into_iter()
            .for_each(same);
        same(Execution::NotExecuted);
        same(ChunkProvenance::Stated);
        same(FusionStrategy::Rrf);
        same(Dedup::ById);
        [
            ReviewStatus::RecordedPlan,
            ReviewStatus::Approved,
            ReviewStatus::Rejected,
        ]
        .into_iter()
        .for_each(same);
        [Outcome::Success, Outcome::Failure, Outcome::Unknown]
            .into_iter()
            .for_each(same);
    }
}
