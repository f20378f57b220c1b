//! The event model of the episodes lane (L1).
//!
//! Parsers of every transcript format (Claude Code, Codex) turn lines into [`ParsedEvent`]s and
//! fill a [`SessionMeta`]; the indexer stores both and knows nothing of the formats. Keeping this
//! the only meeting point is what lets a new format (or a new era of an old one) be added without
//! touching storage or search.

use serde::{Deserialize, Serialize};

/// Which agent wrote a transcript: the registry's typed key (see [`super::agents`]).
pub use super::agents::Agent as TranscriptKind;

/// What an event is (`role/kind`): defined with the contract's other closed vocabularies.
pub use crate::contract::kinds::EventType;

/// One searchable event of a session.
///
/// `event_type` is `role/kind`. The kinds used (documented in `docs/EVENTS.md`):
///
/// | event_type | what it is | written by a person? |
/// |---|---|---|
/// | `user/message` | a prompt a person typed | yes |
/// | `user/command` | a slash command (`<command-name>` wrappers) a person ran | yes |
/// | `assistant/message` | visible assistant text | no |
/// | `assistant/thinking` | reasoning / thinking blocks | no |
/// | `assistant/tool_use` | a tool call (name + input summary) | no |
/// | `tool/result` | a tool's output (`is_error` tells failures) | no |
/// | `system/skill` | an injected skill body (`isMeta`, `Base directory for this skill`) | no |
/// | `system/hook` | hook feedback and stop-hook summaries | no |
/// | `system/context` | injected context: `<environment_context>`, AGENTS.md, developer/IDE text | no |
/// | `system/summary` | compaction summaries and `summary` records | no |
/// | `system/notification` | `<task-notification>`, async agent notices | no |
/// | `team/message` | a `<teammate-message>` from a team member | no (the teammate wrote it) |
/// | `system/error` | API errors, aborted turns, error events | no |
/// | `agent/prompt` | the task a parent agent gave a subagent | no |
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParsedEvent {
    pub event_type: EventType,
    /// RFC 3339 time of the line, as written (UTC `Z` or with offset); `None` when absent.
    pub time: Option<String>,
    /// The searchable text of the event, not yet redacted (the indexer redacts before storing).
    pub text: String,
    /// True only for text a person typed (`user/message`, `user/command`).
    pub human: bool,
    /// Tool name for `assistant/tool_use` and, where the call could be paired, `tool/result`.
    pub tool_name: Option<String>,
    /// Tool call id (`toolu_…`, Codex `call_id`), to pair calls and results.
    pub tool_use_id: Option<String>,
    /// A tool result that reported failure (`is_error:true`, non-zero exit code, …).
    pub is_error: bool,
    /// Inline sidechain agent id (Claude era 1: `isSidechain:true` lines in the main file).
    pub sidechain_agent: Option<String>,
    /// Structured facts for the derived layer (L3); never raw text beyond names.
    pub facts: Vec<Fact>,
}

impl ParsedEvent {
    pub fn new(event_type: EventType, time: Option<String>, text: String) -> Self {
        ParsedEvent {
            human: event_type.is_human(),
            event_type,
            time,
            text,
            tool_name: None,
            tool_use_id: None,
            is_error: false,
            sidechain_agent: None,
            facts: Vec::new(),
        }
    }
}

/// Structured facts found in an event, used to derive skills and actors without raw text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "fact", rename_all = "snake_case")]
pub enum Fact {
    /// A skill was used: `Skill` tool call, skill attachment, or injected skill body.
    /// `name` as invoked, e.g. `elixir:hex-docs-search` or `clean-bom-crlf`.
    SkillUse { name: String, via: String },
    /// A subagent or teammate was spawned (`Task`/`Agent` tool_use, Codex collab spawn).
    Spawn {
        tool_use_id: Option<String>,
        subagent_type: Option<String>,
        name: Option<String>,
        description: Option<String>,
        team_name: Option<String>,
    },
    /// The spawned agent's id became known (tool result `agentId`, progress record, Codex
    /// `new_thread_id`), linking a parent's call to a child transcript.
    AgentLink {
        tool_use_id: Option<String>,
        agent_id: String,
    },
    /// A file was edited or written (Edit/Write/MultiEdit input, apply_patch, patch_apply_end).
    FileEdit { path: String },
    /// A message from a named team member (`<teammate-message teammate_id="alice">`).
    TeammateMessage { teammate_id: String },
    /// A shell command was run (Bash tool, Codex shell / exec_command_end); the first word only.
    Command { program: String },
    /// The event is not part of the session's conversation as the agent now holds it: a Pi
    /// branch the person left (`branch`), Gemini CLI messages dropped by `$rewindTo` or a
    /// checkpoint (`rewound`), the earlier text of a message appended again changed
    /// (`replaced`). It stays searchable (what ran there did run) but no longer counts for the
    /// session's outcome. See `docs/EVENTS.md` ("The conversation").
    Abandoned { reason: String },
}

/// What a parser learned about the session a file belongs to.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionMeta {
    /// The session id from the records (`sessionId`, Codex `session_meta.id`); `None` until seen.
    pub session_id: Option<String>,
    /// Working directory from the records (never decoded from a directory name). First one seen.
    pub cwd: Option<String>,
    /// Time of the first record with a time.
    pub created_at: Option<String>,
    /// Time of the last record with a time.
    pub last_event_at: Option<String>,
    /// Agent preset / flavour: Claude `agentType` for subagents, Codex `originator`, else `None`.
    pub agent_preset: Option<String>,
    pub version: Option<String>,
    pub git_branch: Option<String>,
    pub title: Option<String>,
    pub entrypoint: Option<String>,
    pub model: Option<String>,
    /// For a subagent transcript: its agent id (`agentId`, Codex thread id of a spawned thread).
    pub agent_id: Option<String>,
    /// For a subagent transcript: the parent session id (Claude: the file's `sessionId`; Codex:
    /// `parent_thread_id`).
    pub parent_session_id: Option<String>,
    /// Subagent name / nickname / description when the transcript or sidecar says it.
    pub agent_name: Option<String>,
    pub agent_description: Option<String>,
    /// The spawning tool call id (`.meta.json` `toolUseId`).
    pub spawn_tool_use_id: Option<String>,
    /// Team name when the lines carry `teamName`.
    pub team_name: Option<String>,
}

/// Counters of one parse; bad lines are counted, never fatal.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParseStats {
    pub lines: u64,
    pub events: u64,
    /// Not JSON, truncated, NUL-filled, or a known type with a malformed body.
    pub skipped_broken: u64,
    /// Valid JSON of a record type the parser does not know.
    pub skipped_unknown: u64,
    /// Lines over the line-size cap (base64 images and the like), skipped without buffering them.
    pub skipped_oversized: u64,
    /// Known records that carry nothing searchable (progress, snapshots, token counts, …).
    pub ignored: u64,
    /// Records whose session, agent or record id is empty or absurdly long (see `bounds`).
    #[serde(default)]
    pub skipped_bad_id: u64,
}

impl ParseStats {
    pub fn add(&mut self, other: &ParseStats) {
        self.lines += other.lines;
        self.events += other.events;
        self.skipped_broken += other.skipped_broken;
        self.skipped_unknown += other.skipped_unknown;
        self.skipped_oversized += other.skipped_oversized;
        self.ignored += other.ignored;
        self.skipped_bad_id += other.skipped_bad_id;
    }

    /// What was counted after `before` was taken (the counters of one resumed read).
    pub fn since(&self, before: &ParseStats) -> ParseStats {
        ParseStats {
            lines: self.lines.saturating_sub(before.lines),
            events: self.events.saturating_sub(before.events),
            skipped_broken: self.skipped_broken.saturating_sub(before.skipped_broken),
            skipped_unknown: self.skipped_unknown.saturating_sub(before.skipped_unknown),
            skipped_oversized: self
                .skipped_oversized
                .saturating_sub(before.skipped_oversized),
            ignored: self.ignored.saturating_sub(before.ignored),
            skipped_bad_id: self.skipped_bad_id.saturating_sub(before.skipped_bad_id),
        }
    }

    /// Lines or records that produced nothing because they could not be read.
    pub fn skipped(&self) -> u64 {
        self.skipped_broken + self.skipped_unknown + self.skipped_oversized + self.skipped_bad_id
    }
}
