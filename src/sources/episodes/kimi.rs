//! Kimi CLI (MoonshotAI `kimi-cli`) sessions: `$KIMI_SHARE_DIR` (default `~/.kimi`)
//! `/sessions/<md5 of the work dir>/…`, written by `soul/context.py` as the model's context,
//! one OpenAI-style message per line.
//!
//! Two layouts: up to 0.4x a flat `<session id>.jsonl` with each `ReadContext` sub-agent's
//! transcript beside it as `<session id>_read_<n>.jsonl`; since then `<session id>/context.jsonl`
//! (with `wire.jsonl`) and sub-agents in `<session id>/subagents/<agent id>/context.jsonl`. Lines
//! are `{role: user|assistant|tool, content (a string or [{type:"text"|"think"}]),
//! tool_calls?[{type:"function", id:"<Tool>:<n>", function:{name, arguments (JSON text)}}],
//! tool_call_id?}` interleaved with `_checkpoint`, `_usage` and `_system_prompt` records. A
//! tool result is written by `tool_result_to_message`: `<system>ERROR: …</system>` opens a
//! failed one. The lines hold no ids, no times and no working directory: the session id is the
//! file's (or its folder's) name, the times those of the turns in the `wire.jsonl` beside it
//! (see [`wire`]; the file's mtime when there is none), and the cwd the `work_dirs` entry of
//! `<share>/kimi.json` whose md5 names the session's folder.

use std::path::{Path, PathBuf};

use md5::{Digest, Md5};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::agent::{
    file_mtime, AgentReader, Env, EventSink, FillCwd, Head, NoIdsSink, Rank, ReadEnd, ReadLimits,
    Recognised, Resume,
};
use super::agents::Agent;
use super::discover::{parent_session_of, Layout, TranscriptFile};
use super::model::{EventType, Fact, ParsedEvent, SessionMeta};
use super::parser::{
    cap_chars, command_program, content_text, read_jsonl, render_tool_input, str_of, Ctx, Handled,
    TranscriptParser,
};

/// Kimi-specific state kept between lines: whether the first prompt (a sub-agent's task) was
/// seen.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct KimiState {
    seen_prompt: bool,
}

/// Whether a head record is one of Kimi CLI's context records.
fn is_kimi_record(v: &Value) -> bool {
    matches!(
        str_of(v, "role"),
        Some("_checkpoint") | Some("_usage") | Some("_system_prompt")
    )
}

/// The line rules of this agent's files (see `line_rules`): [`feed`] on this state.
impl crate::sources::episodes::line_rules::LineRules for KimiState {
    const FORMAT: &'static str = "kimi";
    fn feed(&mut self, cx: &mut Ctx, rec: &Value, out: &mut Vec<ParsedEvent>) -> Handled {
        feed(cx, self, rec, out)
    }
}

pub(crate) fn feed(
    cx: &mut Ctx,
    st: &mut KimiState,
    rec: &Value,
    out: &mut Vec<ParsedEvent>,
) -> Handled {
    let content = rec.get("content").unwrap_or(&Value::Null);
    match str_of(rec, "role") {
        Some("_checkpoint") | Some("_usage") | Some("_system_prompt") => Handled::Known,
        Some("user") => {
            let text = content_text(content);
            let kind = if text.trim_start().starts_with("<system") {
                EventType::SystemContext
            } else {
                if !st.seen_prompt && !text.trim().is_empty() {
                    st.seen_prompt = true;
                    cx.meta.agent_description = Some(cap_chars(text.trim(), 300));
                }
                EventType::UserMessage
            };
            cx.emit(out, ParsedEvent::new(kind, None, text));
            Handled::Known
        }
        Some("assistant") => {
            assistant(cx, rec, content, out);
            Handled::Known
        }
        Some("tool") => {
            let text = content_text(content);
            let mut ev = ParsedEvent::new(EventType::ToolResult, None, text);
            ev.tool_use_id = str_of(rec, "tool_call_id").map(str::to_string);
            ev.tool_name = ev.tool_use_id.as_deref().and_then(|id| cx.tool_name(id));
            let head = ev.text.trim_start();
            ev.is_error =
                head.starts_with("<system>ERROR") || head.starts_with("<system>Command failed");
            if let Some(agent) = ev
                .text
                .split("Transcript saved to: ")
                .nth(1)
                .and_then(read_id)
            {
                ev.facts.push(Fact::AgentLink {
                    tool_use_id: ev.tool_use_id.clone(),
                    agent_id: agent,
                });
            }
            cx.emit(out, ev);
            Handled::Known
        }
        Some(_) => Handled::Unknown,
        None => Handled::Broken,
    }
}

/// The `read_<n>` of a saved sub-agent transcript path (`…/<sid>_read_<n>.jsonl`).
fn read_id(rest: &str) -> Option<String> {
    let path = rest.split(['<', '\n']).next()?.trim();
    let stem = Path::new(path).file_stem()?.to_str()?;
    let (_, n) = stem.rsplit_once("_read_")?;
    (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).then(|| format!("read_{n}"))
}

fn assistant(cx: &mut Ctx, rec: &Value, content: &Value, out: &mut Vec<ParsedEvent>) {
    let parts: Vec<&Value> = match content {
        Value::Array(items) => items.iter().collect(),
        other => vec![other],
    };
    for part in parts {
        match str_of(part, "type") {
            Some("think") => {
                let text = str_of(part, "think").unwrap_or("").to_string();
                cx.emit(
                    out,
                    ParsedEvent::new(EventType::AssistantThinking, None, text),
                );
            }
            _ => {
                let text = content_text(part);
                cx.emit(
                    out,
                    ParsedEvent::new(EventType::AssistantMessage, None, text),
                );
            }
        }
    }
    for call in rec
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let id = str_of(call, "id").unwrap_or("");
        let f = call.get("function").unwrap_or(&Value::Null);
        let name = str_of(f, "name").unwrap_or("tool");
        let args = match f.get("arguments") {
            Some(Value::String(s)) => serde_json::from_str(s).unwrap_or(Value::Null),
            Some(v) => v.clone(),
            None => Value::Null,
        };
        cx.remember_tool(id, name);
        let mut ev = ParsedEvent::new(
            EventType::AssistantToolUse,
            None,
            render_tool_input(name, &args),
        );
        ev.tool_name = Some(name.to_string());
        ev.tool_use_id = (!id.is_empty()).then(|| id.to_string());
        ev.facts = call_facts(name, id, &args);
        cx.emit(out, ev);
    }
}

/// Facts of a Kimi CLI or Kimi Code tool call: shell programs, edited files, skills,
/// sub-agents (Kimi CLI's `ReadContext{subagent_name}`, Kimi Code's `Agent{subagent_type}`).
pub(crate) fn call_facts(name: &str, id: &str, args: &Value) -> Vec<Fact> {
    let arg = |k: &str| str_of(args, k).map(str::to_string);
    match name {
        "Bash" | "Shell" => arg("command")
            .as_deref()
            .and_then(command_program)
            .map(|program| vec![Fact::Command { program }])
            .unwrap_or_default(),
        "WriteFile" | "StrReplaceFile" | "Edit" | "Write" => arg("path")
            .or_else(|| arg("file_path"))
            .map(|path| vec![Fact::FileEdit { path }])
            .unwrap_or_default(),
        "Skill" => arg("skill")
            .map(|name| {
                vec![Fact::SkillUse {
                    name,
                    via: "tool".into(),
                }]
            })
            .unwrap_or_default(),
        "ReadContext" | "Task" | "Agent" => vec![Fact::Spawn {
            tool_use_id: (!id.is_empty()).then(|| id.to_string()),
            subagent_type: arg("subagent_name")
                .or_else(|| arg("subagent_type"))
                .or_else(|| Some(name.to_string())),
            name: None,
            description: arg("description").map(|d| cap_chars(&d, 300)),
            team_name: None,
        }],
        _ => Vec::new(),
    }
}

/// The Kimi CLI reader.
pub struct Reader;

/// The `sessions` folder above `path` and the work-dir folder (`<md5>`) right under it.
fn sessions_dir(path: &Path) -> Option<(&Path, &str)> {
    let mut child: Option<&Path> = None;
    for dir in path.ancestors().skip(1) {
        if dir.file_name().is_some_and(|n| n == "sessions") {
            return Some((dir, child?.file_name()?.to_str()?));
        }
        child = Some(dir);
    }
    None
}

/// The work directory whose md5 names the session's folder, from `<share>/kimi.json`.
fn work_dir(path: &Path) -> Option<String> {
    let (sessions, slot) = sessions_dir(path)?;
    let meta =
        crate::sources::regular_file::read_side_file(&sessions.parent()?.join("kimi.json")).ok()?;
    let v: Value = serde_json::from_str(&meta).ok()?;
    v.get("work_dirs")?.as_array()?.iter().find_map(|wd| {
        let p = str_of(wd, "path")?;
        let hash: String = Md5::digest(p.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let named = match str_of(wd, "kaos").filter(|k| *k != "local") {
            Some(kaos) => format!("{kaos}_{hash}"),
            None => hash,
        };
        (named == slot).then(|| p.to_string())
    })
}

impl AgentReader for Reader {
    fn line_state(&self) -> crate::sources::episodes::line_rules::LineState {
        crate::sources::episodes::line_rules::LineState::of::<KimiState>()
    }
    fn agent(&self) -> Agent {
        Agent::Kimi
    }

    fn name(&self) -> &'static str {
        "kimi"
    }

    fn label(&self) -> &'static str {
        "Kimi CLI"
    }

    /// `$KIMI_SHARE_DIR/sessions`, else `~/.kimi/sessions`.
    fn roots(&self, env: &Env) -> Vec<PathBuf> {
        env.dir_or_home("KIMI_SHARE_DIR", ".kimi")
            .map(|d| vec![d.join("sessions")])
            .unwrap_or_default()
    }

    /// A `.jsonl` whose head holds Kimi's `_checkpoint`/`_usage`/`_system_prompt` records (a
    /// context that has none yet is claimed by place: `context.jsonl` under `sessions/`).
    /// `<sid>_read_<n>.jsonl` and `subagents/<id>/context.jsonl` are sub-agents.
    fn recognise(&self, path: &Path, head: &mut Head<'_>) -> Option<Recognised> {
        let name = path.file_name()?.to_str()?;
        let stem = name.strip_suffix(".jsonl")?;
        if name == "wire.jsonl" {
            return None;
        }
        let by_place = name == "context.jsonl" && sessions_dir(path).is_some();
        let rank = match head.first(is_kimi_record) {
            Some(i) => Rank::Record(i),
            None if by_place => Rank::Name,
            None => return None,
        };
        let layout = if let Some((sid, n)) = stem.rsplit_once("_read_") {
            Layout::Subagent {
                parent_session_hint: Some(sid.to_string()),
                agent_id_hint: Some(format!("read_{n}")),
                sidecar: None,
            }
        } else if name == "context.jsonl" && parent_session_of(path).is_some() {
            Layout::Subagent {
                parent_session_hint: parent_session_of(path),
                agent_id_hint: path.parent()?.file_name()?.to_str().map(str::to_string),
                sidecar: None,
            }
        } else {
            Layout::Main
        };
        Some(Recognised { layout, rank })
    }

    /// The `wire.jsonl` beside a session's `context.jsonl` (its times, read with it); Kimi
    /// Code's `agents/<id>/wire.jsonl` is a session of its own.
    fn is_aside(&self, path: &Path) -> bool {
        path.file_name().is_some_and(|n| n == "wire.jsonl")
            && sessions_dir(path).is_some()
            && path
                .parent()
                .and_then(Path::parent)
                .is_none_or(|d| d.file_name().is_none_or(|n| n != "agents"))
    }

    fn read(
        &self,
        file: &TranscriptFile,
        from: Option<Resume<'_>>,
        limits: ReadLimits,
        sink: &mut dyn EventSink,
    ) -> std::io::Result<ReadEnd> {
        let mut cwd = FillCwd {
            inner: sink,
            cwd: work_dir(&file.path),
        };
        let mut wrapped = NoIdsSink {
            inner: &mut cwd,
            subagent: matches!(file.layout, Layout::Subagent { .. }),
            mtime: file_mtime(&file.path),
        };
        // The cursor holds the parser's and the wire's; one from before the wire was resumed
        // is the parser's alone (its wire is then read whole, once).
        let saved = from.and_then(|r| serde_json::from_str::<KimiCursor>(r.cursor).ok());
        let (from, wire) = match (&saved, from) {
            (Some(c), Some(r)) => {
                let parser = Resume {
                    offset: r.offset,
                    cursor: &c.parser,
                };
                // A parser cursor that no longer parses is a full read, of the wire too.
                let resumes = serde_json::from_str::<TranscriptParser>(&c.parser)
                    .is_ok_and(|p| p.kind() == Agent::Kimi && p.rules_are_its_agents());
                (Some(parser), resumes.then(|| c.wire.clone()))
            }
            (None, from) => (from, None),
            (Some(_), None) => (None, None),
        };
        let times = WireTimes::beside(&file.path, wire, limits.max_line_bytes);
        let mut timed = WireTimeSink::new(&mut wrapped, times, from.is_some());
        let mut end = read_jsonl(file, from, limits, &mut timed, || {
            TranscriptParser::new(Agent::Kimi)
        })?;
        end.cursor = serde_json::to_string(&KimiCursor {
            parser: std::mem::take(&mut end.cursor),
            wire: timed.cursor(),
        })
        .unwrap_or_default();
        Ok(end)
    }

    /// `<sid>.jsonl`, or `<sid>/context.jsonl`.
    fn file_session_id(&self, file: &TranscriptFile, _meta: &SessionMeta) -> Option<String> {
        let named = if file.path.file_name()? == "context.jsonl" {
            file.path.parent()?.file_name()?
        } else {
            file.path.file_stem()?
        };
        Some(crate::sources::episodes::bounds::safe_id(&named.to_string_lossy()).into_owned())
            .filter(|s| !s.is_empty())
    }

    fn resume_command(&self, quoted_session_id: &str) -> Option<String> {
        Some(format!("kimi --session {quoted_session_id}"))
    }
}

mod wire;
use wire::{WireCursor, WireTimeSink, WireTimes};

/// A Kimi CLI context's resume cursor: the line parser's, and where the wire beside it stopped.
#[derive(Serialize, Deserialize)]
struct KimiCursor {
    parser: String,
    wire: WireCursor,
}

#[cfg(test)]
mod tests;
