//! OpenHands CLI (V1, built on the software-agent-sdk) conversations:
//! `$OPENHANDS_CONVERSATIONS_DIR/<conversation id as 32 hex>/` (default
//! `$OPENHANDS_PERSISTENCE_DIR/conversations`, else `~/.openhands/conversations`), one folder per
//! conversation holding `base_state.json` (the conversation's state, rewritten in place) and
//! `events/event-<idx:05d>-<event id>.json`, one immutable event per file (the index is padded to
//! five digits and may grow past them).
//!
//! `base_state.json` is `{id (uuid), agent{kind, llm{model, …}, tools}, workspace{kind,
//! working_dir}, persistence_dir, max_iterations, execution_status, leaf_event_id?, stats, …}`.
//! An event is `{kind, id, timestamp (ISO 8601 without a zone: the writer's local
//! `datetime.now()`), source: user|agent|environment, parent_id?}` and by kind:
//! `MessageEvent{llm_message{role, content[{type:"text", text}], reasoning_content?,
//! thinking_blocks[]}, activated_skills[], sender?}`, `ActionEvent{thought[{type, text}],
//! reasoning_content?, thinking_blocks[], action{kind, …} | null, tool_name, tool_call_id,
//! tool_call{id, name, arguments (JSON text)}}`, `ObservationEvent{observation{kind,
//! content[{type, text}], is_error, exit_code? (terminal)}, tool_name, tool_call_id, action_id}`,
//! `AgentErrorEvent{error, tool_name, tool_call_id}`, `UserRejectObservation{rejection_reason,
//! tool_name, tool_call_id}`, `ConversationErrorEvent{code, detail}`, `Condensation{summary?}`,
//! `PauseEvent`, `InterruptEvent`, and kinds that carry nothing to read (`SystemPromptEvent`,
//! `ConversationStateUpdateEvent`, `TokenEvent`, `CondensationRequest`, …).
//!
//! Events map to: a user message → `user/message` (`/…`: `user/command`; one with a `sender`,
//! written by another agent, → `agent/prompt`), an agent message → `assistant/message`, its
//! reasoning (`reasoning_content`, else the text of `thinking_blocks`) → `assistant/thinking`;
//! an action's reasoning, its `thought` text (`assistant/message`) and the call
//! (`assistant/tool_use`, named `tool_name`, its input the `action` without `kind`, else the
//! call's `arguments`); an observation → `tool/result` named by its call, failed on `is_error`
//! or a terminal's non-zero `exit_code`; an agent error and a rejected action → failed
//! `tool/result`s; a conversation error → `system/error`; a condensation's summary →
//! `system/summary`; a pause or interrupt is an abort, the `finish` tool a task reported
//! complete. Facts: `terminal` (`execute_bash`, `bash`) → command; `file_editor`
//! (`str_replace_editor`, `planning_file_editor`) with `create`/`str_replace`/`insert`/
//! `undo_edit` → file edit, `apply_patch` → file edit per patched file; `task` → spawn
//! (`subagent_type`, `description`), `delegate` → a spawn per task; `invoke_skill` and a
//! message's `activated_skills` → skill use.
//!
//! Times: an event's `timestamp` carries no zone; it is read as UTC (the writer's local clock,
//! which on a machine not on UTC shifts every time by its offset: no zone is written anywhere to
//! correct it), normalised to milliseconds. The session id is `base_state.id` (the folder's
//! name is the same uuid as hex, used when the state cannot be read), the cwd
//! `workspace.working_dir`, the model `agent.llm.model`. Resume: `openhands --resume <id>`.
//!
//! The store is `base_state.json` ([`StoreKind::Rewritten`]): the events folder is read beside
//! it, and counts in its fingerprint through [`AgentReader::parts_modified`] (the folder's
//! mtime, which a new or removed event file moves, and the mtime of the last event file, the
//! only one a writer can still be filling: the SDK writes one event at a time under a lock and
//! never rewrites one). Any change re-reads the conversation whole. An event file that is
//! torn, too large, not a regular file (a FIFO) or unreadable is counted and skipped.
//! Conversations are trees in newer SDKs (`parent_id`; `base_state.leaf_event_id` is the head):
//! when the head is among the events, those off its branch are read and marked abandoned.
//!
//! Checked against the software-agent-sdk source (read, nothing copied):
//! `conversation/persistence_const.py` (names), `conversation/event_store.py` (the writer),
//! `conversation/state.py`, `event/**` and the tools' definitions; the CLI's `locations.py` for
//! the folders and its hint for the resume command. No real conversation folder was available
//! (../shared/realdata has no OpenHands sample), so not confirmed: the exact bytes the CLI
//! writes (that `kind` is on every event and action, as the SDK's discriminated models
//! serialise); what releases before the event tree wrote; sub-conversations a `task` or
//! `delegate` tool keeps in `subagents/<hex>/` (seen in a third-party reader only: each is read
//! as a conversation of its own, not linked to its parent); the meaning of a `sender` on a
//! user message; tools of other toolsets (browser, Gemini-style file tools) beyond their name
//! and input.

use std::collections::{BTreeSet, HashMap};
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::agent::{
    AgentReader, Env, EventSink, Head, Rank, ReadEnd, ReadLimits, Recognised, Resume, StoreKind,
};
use super::agents::Agent;
use super::discover::{Layout, TranscriptFile};
use super::model::{EventType, Fact, ParsedEvent, SessionMeta};
use super::parser::{
    cap_chars, command_program, content_text, patch_files, render_tool_input, str_of, Ctx, Handled,
    TranscriptParser,
};

/// The conversation's state file, the store.
const BASE_STATE: &str = "base_state.json";
/// The folder of its events.
const EVENTS_DIR: &str = "events";
/// Largest `base_state.json` read (a few KB in practice; its `stats` grow with use).
const MAX_STATE_BYTES: u64 = 16 * 1024 * 1024;
/// Most event bytes held for one conversation, as the bytes read (an event is parsed only while
/// it is fed); the event files past it are counted oversized.
const MAX_CONVERSATION_BYTES: u64 = 256 * 1024 * 1024;
/// The SDK's `ROOT_PARENT_ID`: a `parent_id` that says "a root", not a parent's id.
const ROOT_PARENT: &str = "__root__";

/// What the rules keep for one read: the ids of the events off the conversation's active branch
/// (set by the reader before the events are fed).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct OpenHandsState {
    off_branch: BTreeSet<String>,
}

/// An event's `timestamp` as UTC RFC 3339 with milliseconds: a time without a zone is read as
/// UTC; one with a zone is converted.
fn utc_time(v: Option<&Value>) -> Option<String> {
    let s = v?.as_str()?.trim();
    let utc = match chrono::DateTime::parse_from_rfc3339(s) {
        Ok(t) => t.with_timezone(&chrono::Utc),
        Err(_) => chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S%.f")
            .ok()?
            .and_utc(),
    };
    // A year RFC 3339 cannot write (`-0001`, `+10000`) is no time.
    let year = chrono::Datelike::year(&utc);
    (0..=9999)
        .contains(&year)
        .then(|| utc.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
}

/// A conversation folder's name as its id: 32 hex digits (`uuid.hex`) → the dashed uuid;
/// a dashed uuid as it is.
fn conversation_id(name: &str) -> Option<String> {
    let hex: String = name.chars().filter(|c| *c != '-').collect();
    let dashes = name.len() - hex.len();
    if hex.len() != 32 || !hex.chars().all(|c| c.is_ascii_hexdigit()) || !matches!(dashes, 0 | 4) {
        return None;
    }
    if dashes == 4 {
        return Some(name.to_ascii_lowercase());
    }
    let h = hex.to_ascii_lowercase();
    Some(format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    ))
}

/// Whether `dir` is named as a conversation folder.
fn is_conversation_dir(dir: &Path) -> bool {
    dir.file_name()
        .and_then(|n| n.to_str())
        .and_then(conversation_id)
        .is_some()
}

/// `<conversation>/base_state.json`.
fn is_base_state(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == BASE_STATE)
        && path.parent().is_some_and(is_conversation_dir)
}

/// The index of an event file's name (`event-<5+ digits>-<id>.json`, the SDK's
/// `EVENT_NAME_RE`), or `None` for any other name.
fn event_index(name: &str) -> Option<u64> {
    let rest = name.strip_prefix("event-")?.strip_suffix(".json")?;
    let (idx, id) = rest.split_once('-')?;
    let ok = idx.len() >= 5
        && idx.len() <= 19
        && idx.bytes().all(|b| b.is_ascii_digit())
        && id.len() >= 8
        && id.chars().all(|c| c.is_ascii_hexdigit() || c == '-');
    ok.then(|| idx.parse().ok()).flatten()
}

/// `<conversation>/events/event-….json`: the conversation's `base_state.json`.
fn base_state_of_event(path: &Path) -> Option<PathBuf> {
    event_index(path.file_name()?.to_str()?)?;
    let events = path.parent()?;
    let conversation = events.parent()?;
    (events.file_name()? == EVENTS_DIR && is_conversation_dir(conversation))
        .then(|| conversation.join(BASE_STATE))
}

/// A conversation's event files, in index order.
fn event_files(events: &Path) -> Vec<(u64, PathBuf)> {
    let mut files: Vec<(u64, PathBuf)> = std::fs::read_dir(events)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let idx = event_index(e.file_name().to_str()?)?;
            Some((idx, e.path()))
        })
        .collect();
    files.sort();
    files
}

mod records;

/// The ids of the events off the branch that ends at `leaf` (the SDK's `path_to_root`: an
/// event's parent is its `parent_id`, `__root__` none, and an event without one follows the
/// event before it). Empty when `leaf` is not among the events.
fn off_branch(events: &[Link], leaf: &str) -> BTreeSet<String> {
    let ids: Vec<Option<&str>> = events
        .iter()
        .map(|e| e.id.as_ref().and_then(Value::as_str))
        .collect();
    let index: HashMap<&str, usize> = ids
        .iter()
        .enumerate()
        .filter_map(|(i, id)| Some(((*id)?, i)))
        .collect();
    let Some(&start) = index.get(leaf) else {
        return BTreeSet::new();
    };
    let mut on = vec![false; events.len()];
    let mut cur = Some(start);
    while let Some(i) = cur {
        if on[i] {
            break; // a cycle
        }
        on[i] = true;
        cur = match &events[i].parent_id {
            Some(Value::String(p)) if p == ROOT_PARENT => None,
            Some(Value::String(p)) => index.get(p.as_str()).copied(),
            _ => i.checked_sub(1),
        };
    }
    ids.iter()
        .zip(on)
        .filter(|(_, on)| !on)
        .filter_map(|(id, _)| id.map(str::to_string))
        .collect()
}

/// What the event tree needs of an event, read without parsing the rest of it.
#[derive(Debug, Default, Deserialize)]
struct Link {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    parent_id: Option<Value>,
}

impl Link {
    /// The event's id and parent, `None` when the file is not a JSON object (torn, empty).
    fn of(bytes: &[u8]) -> Option<Link> {
        let text = super::bounds::valid_utf8(bytes);
        if text.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
            return None;
        }
        serde_json::from_slice(&text).ok().or_else(|| {
            // A lone surrogate escape (a string cut inside an emoji), repaired.
            let v = super::bounds::json_document(&text)?;
            Some(Link {
                id: v.get("id").cloned(),
                parent_id: v.get("parent_id").cloned(),
            })
        })
    }
}

/// Reads one conversation: its state, then its events in index order. The events are held as
/// the bytes read, their tree read from their ids alone ([`Link`]), and each is parsed only while
/// it is fed: a conversation costs its bytes, not a parsed tree many times their size.
fn read_conversation(
    file: &TranscriptFile,
    limits: ReadLimits,
    sink: &mut dyn EventSink,
) -> io::Result<ReadEnd> {
    let f = crate::sources::regular_file::open(&file.path)?;
    let size = f.metadata()?.len();
    drop(f);
    let mut parser = TranscriptParser::new(Agent::OpenHands);
    let mut out: Vec<ParsedEvent> = Vec::new();
    let state = match crate::sources::regular_file::read_limited(&file.path, MAX_STATE_BYTES) {
        Ok(bytes) => match super::bounds::json_document(&bytes) {
            Some(v @ Value::Object(_)) => Some(v),
            _ => {
                parser.feed(b"{", &mut out);
                None
            }
        },
        Err(e) if e.kind() == io::ErrorKind::InvalidData => {
            parser.feed_oversized(size);
            None
        }
        Err(e) => return Err(e),
    };
    let dir = file.path.parent().unwrap_or(Path::new("."));
    let mut events: Vec<Vec<u8>> = Vec::new();
    let mut links: Vec<Link> = Vec::new();
    let mut held: u64 = 0;
    for (_, path) in event_files(&dir.join(EVENTS_DIR)) {
        let left = MAX_CONVERSATION_BYTES.saturating_sub(held);
        let limit = (limits.max_line_bytes as u64).min(left);
        match crate::sources::regular_file::read_limited(&path, limit) {
            Ok(bytes) => match Link::of(&bytes) {
                Some(link) => {
                    held += bytes.len() as u64;
                    links.push(link);
                    events.push(bytes);
                }
                // Torn (a writer still filling it), empty or not an object.
                _ => parser.feed(b"{", &mut out),
            },
            Err(e) if e.kind() == io::ErrorKind::InvalidData => parser.feed_oversized(0),
            // Not a regular file, gone since the listing, unreadable: counted, never fatal.
            Err(_) => parser.feed(b"{", &mut out),
        }
    }
    if let Some(leaf) = state.as_ref().and_then(|s| str_of(s, "leaf_event_id")) {
        let off = off_branch(&links, leaf);
        if let Some(st) = parser.line_state_mut().get_mut::<OpenHandsState>() {
            st.off_branch = off;
        }
    }
    if let Some(state) = &state {
        parser.count_line();
        parser.feed_record(state, &mut out);
    }
    drop(links);
    for bytes in events {
        match super::bounds::json_document(&bytes) {
            Some(ev @ Value::Object(_)) => {
                parser.count_line();
                parser.feed_record(&ev, &mut out);
            }
            _ => parser.feed(b"{", &mut out),
        }
    }
    for ev in out {
        sink.event(ev);
    }
    sink.end_session(parser.meta().clone(), parser.outcome());
    Ok(ReadEnd {
        start: 0,
        end: size,
        resumed: false,
        cursor: String::new(),
        lines: *parser.stats(),
        total: *parser.stats(),
    })
}

/// The OpenHands CLI reader.
pub struct Reader;

impl AgentReader for Reader {
    fn line_state(&self) -> crate::sources::episodes::line_rules::LineState {
        crate::sources::episodes::line_rules::LineState::of::<OpenHandsState>()
    }
    fn agent(&self) -> Agent {
        Agent::OpenHands
    }

    fn name(&self) -> &'static str {
        "openhands"
    }

    fn label(&self) -> &'static str {
        "OpenHands CLI"
    }

    fn store_kind(&self, _path: &Path) -> StoreKind {
        StoreKind::Rewritten
    }

    /// `$OPENHANDS_CONVERSATIONS_DIR`, else `$OPENHANDS_PERSISTENCE_DIR/conversations`, else
    /// `~/.openhands/conversations`.
    fn roots(&self, env: &Env) -> Vec<PathBuf> {
        env.dir("OPENHANDS_CONVERSATIONS_DIR")
            .or_else(|| {
                env.dir_or_home("OPENHANDS_PERSISTENCE_DIR", ".openhands")
                    .map(|d| d.join("conversations"))
            })
            .into_iter()
            .collect()
    }

    /// A conversation's `base_state.json`, by its name and its folder's (a torn one too).
    fn recognise(&self, path: &Path, _head: &mut Head<'_>) -> Option<Recognised> {
        is_base_state(path).then_some(Recognised {
            layout: Layout::Main,
            rank: Rank::Name,
        })
    }

    /// An event file is read with its conversation's state, never on its own.
    fn is_aside(&self, path: &Path) -> bool {
        base_state_of_event(path).is_some()
    }

    fn read(
        &self,
        file: &TranscriptFile,
        _from: Option<Resume<'_>>,
        limits: ReadLimits,
        sink: &mut dyn EventSink,
    ) -> io::Result<ReadEnd> {
        read_conversation(file, limits, sink)
    }

    /// `base_state.id`, else the folder's name as a uuid (never the file's stem).
    fn file_session_id(&self, file: &TranscriptFile, meta: &SessionMeta) -> Option<String> {
        meta.session_id.clone().or_else(|| {
            file.path
                .parent()?
                .file_name()?
                .to_str()
                .and_then(conversation_id)
        })
    }

    fn resume_command(&self, quoted_session_id: &str) -> Option<String> {
        Some(format!("openhands --resume {quoted_session_id}"))
    }

    /// The events folder's mtime (a new or removed event moves it) and the last event file's (a
    /// writer may still be filling it): one listing and two `stat`s, no read.
    fn parts_modified(&self, path: &Path) -> Option<std::time::SystemTime> {
        if !is_base_state(path) {
            return None;
        }
        let events = path.parent()?.join(EVENTS_DIR);
        let mtime = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
        let last = event_files(&events).pop().and_then(|(_, p)| mtime(&p));
        mtime(&events).max(last)
    }

    /// The state file, or an event file: its conversation's state file.
    fn store_of_change(&self, changed: &Path) -> Option<PathBuf> {
        if is_base_state(changed) {
            return Some(changed.to_path_buf());
        }
        base_state_of_event(changed)
    }
}

#[cfg(test)]
mod tests;
