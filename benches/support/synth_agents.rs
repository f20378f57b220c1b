//! Synthetic session trees for every JSONL (and Markdown) agent, each in its agent's real
//! on-disk format and default layout, for the per-agent indexing benchmark: Claude Code and
//! Codex through `synth.rs`, and Gemini CLI, Pi, Qwen Code, Copilot CLI, Cursor agent
//! transcripts, Aider, Kimi CLI, Kimi Code, iFlow CLI, Continue and Amp (one JSON document per
//! session), Cline, Roo Code and Kilo Code's VS Code task folders and OpenHands conversation
//! folders (an event a file) here. Every session has the same shape whatever the agent (a user
//! prompt, then rounds of a tool call, its result and an answer, one result in ten an error),
//! with the same Zipf vocabulary, so the agents' MB/s compare readers, not data. Deterministic.

use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use super::synth::{self, ts, Rng};

/// The JSONL and Markdown agents the generator writes, by their registry names.
pub const AGENTS: &[&str] = &[
    "claude",
    "codex",
    "gemini",
    "pi",
    "qwen",
    "copilot",
    "cursor",
    "aider",
    "kimi",
    "kimi_code",
    "iflow",
    "continue",
    "amp",
    "cline",
    "roo_code",
    "kilo_code",
    "openhands",
];

fn ms(day: usize, i: usize) -> u64 {
    // 2026-10-01T00:00:00Z, then a day per session day and a second per event.
    1_790_812_800_000 + (day as u64 - 1) * 86_400_000 + i as u64 * 1000
}

fn write(path: &Path, body: &str) -> io::Result<u64> {
    std::fs::create_dir_all(path.parent().expect("parent"))?;
    std::fs::write(path, body)?;
    Ok(body.len() as u64)
}

/// Writes `sessions` sessions of about `events` events each of `agent` under `root` (the
/// agent's root, as its default layout has it: `root` plays `~/.gemini/tmp`, `~/.pi/agent/
/// sessions`, …). Returns the bytes written and the root to index.
pub fn generate(
    agent: &str,
    root: &Path,
    sessions: usize,
    events: usize,
) -> io::Result<(u64, PathBuf)> {
    let mut rng = Rng::new(0x5eed ^ agent.len() as u64);
    let mut bytes = 0;
    for s in 0..sessions {
        let ws = format!("/srv/ws{}", s % 12);
        let day = 1 + (s % 28);
        bytes += match agent {
            "claude" => {
                let id = format!("00000000-0000-4000-8000-{s:012}");
                let path = root.join(format!("-srv-ws{}/{id}.jsonl", s % 12));
                std::fs::create_dir_all(path.parent().expect("parent"))?;
                synth::write_claude(&path, &id, &ws, day, events, &mut rng)?
            }
            "codex" => {
                let id = format!("01990000-0000-7000-8000-{s:012}");
                let path = root.join(format!(
                    "2026/10/{day:02}/rollout-2026-10-{day:02}T10-00-00-{id}.jsonl"
                ));
                std::fs::create_dir_all(path.parent().expect("parent"))?;
                synth::write_codex(&path, &id, &ws, day, events, &mut rng)?
            }
            "gemini" => gemini(root, s, &ws, day, events, &mut rng)?,
            "pi" => pi(root, s, &ws, day, events, &mut rng)?,
            "qwen" => qwen(root, s, &ws, day, events, &mut rng)?,
            "copilot" => copilot(root, s, &ws, day, events, &mut rng)?,
            "cursor" => cursor(root, s, &ws, day, events, &mut rng)?,
            "aider" => aider(root, s, day, events, &mut rng)?,
            "kimi" => kimi(root, s, &ws, day, events, &mut rng)?,
            "kimi_code" => kimi_code(root, s, &ws, day, events, &mut rng)?,
            "iflow" => iflow(root, s, &ws, day, events, &mut rng)?,
            "continue" => continue_session(root, s, &ws, day, events, &mut rng)?,
            "amp" => amp(root, s, &ws, day, events, &mut rng)?,
            "cline" | "roo_code" | "kilo_code" => {
                vscode_task(agent, root, s, &ws, day, events, &mut rng)?
            }
            "openhands" => openhands(root, s, &ws, day, events, &mut rng)?,
            other => panic!("no generator for {other}"),
        };
    }
    Ok((bytes, root.to_path_buf()))
}

/// The words of one message (8–48, as the Claude and Codex generators use).
fn text(rng: &mut Rng, scale: usize) -> String {
    let n = (8 + rng.below(40) as usize) * scale;
    synth::sentence(rng, n)
}

fn json(s: &str) -> String {
    serde_json::to_string(s).expect("string")
}

/// `~/.gemini/tmp/<slot>/chats/session-*.jsonl`: a header, messages re-appended once their tool
/// calls finish (the same id twice), `$set` checkpoint lines.
fn gemini(root: &Path, s: usize, ws: &str, day: usize, n: usize, rng: &mut Rng) -> io::Result<u64> {
    // The file name takes the id's first 8 characters: they differ per session.
    let id = format!("{s:08x}-3f2a-4000-8000-000000000000");
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{{\"sessionId\":\"{id}\",\"projectHash\":\"{:064x}\",\"startTime\":\"{}\",\"lastUpdated\":\"{}\",\"kind\":\"main\"}}",
        s,
        ts(day, 0),
        ts(day, 0)
    );
    for i in 0..n {
        let t = ts(day, i);
        let mid = format!("m-{s}-{i}");
        if i % 3 == 0 {
            let _ = writeln!(out, "{{\"id\":\"{mid}\",\"timestamp\":\"{t}\",\"type\":\"user\",\"content\":[{{\"text\":{}}}]}}", json(&text(rng, 1)));
        } else {
            let said = json(&text(rng, 1));
            let tokens = "\"tokens\":{\"input\":900,\"output\":30,\"cached\":0,\"thoughts\":0,\"tool\":0,\"total\":930},\"model\":\"gemini-3-flash-preview\"";
            let _ = writeln!(out, "{{\"id\":\"{mid}\",\"timestamp\":\"{t}\",\"type\":\"gemini\",\"content\":{said},\"thoughts\":[],{tokens}}}");
            if i % 3 == 1 {
                let status = if rng.below(10) == 0 {
                    "error"
                } else {
                    "success"
                };
                let result = json(&text(rng, 2));
                let _ = writeln!(out, "{{\"id\":\"{mid}\",\"timestamp\":\"{t}\",\"type\":\"gemini\",\"content\":{said},\"thoughts\":[],{tokens},\"toolCalls\":[{{\"id\":\"run_shell_command_{s}_{i}\",\"name\":\"run_shell_command\",\"args\":{{\"command\":{}}},\"result\":[{{\"functionResponse\":{{\"id\":\"run_shell_command_{s}_{i}\",\"name\":\"run_shell_command\",\"response\":{{\"output\":{result}}}}}}}],\"status\":\"{status}\",\"timestamp\":\"{t}\"}}]}}", json(&synth::sentence(rng, 5)));
            }
        }
        let _ = writeln!(out, "{{\"$set\":{{\"lastUpdated\":\"{t}\"}}}}");
    }
    let slot = root.join(format!("ws{}", s % 12));
    write(&slot.join(".project_root"), ws)?;
    write(
        &slot.join(format!(
            "chats/session-2026-10-{day:02}T10-00-{}.jsonl",
            &id[..8]
        )),
        &out,
    )
}

/// `~/.pi/agent/sessions/--<cwd>--/<ts>_<id>.jsonl`: a `session` header, then `message` entries
/// chained by `parentId` (user, assistant with a `toolCall`, `toolResult`).
fn pi(root: &Path, s: usize, ws: &str, day: usize, n: usize, rng: &mut Rng) -> io::Result<u64> {
    let id = format!("0199e1a4-0000-7000-8000-{s:012}");
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"{}\",\"cwd\":\"{ws}\"}}",
        ts(day, 0)
    );
    let mut parent = "null".to_string();
    let usage = "\"api\":\"anthropic-messages\",\"provider\":\"anthropic\",\"model\":\"claude-sonnet-4-5\",\"usage\":{\"input\":900,\"output\":40,\"cacheRead\":0,\"cacheWrite\":0,\"totalTokens\":940,\"cost\":{\"total\":0.003}}";
    for i in 0..n {
        let eid = format!("\"{s:04x}{i:04x}\"");
        let (t, m) = (ts(day, i), ms(day, i));
        let message = match i % 4 {
            0 => format!("{{\"role\":\"user\",\"content\":[{{\"type\":\"text\",\"text\":{}}}],\"timestamp\":{m}}}", json(&text(rng, 1))),
            1 => format!("{{\"role\":\"assistant\",\"content\":[{{\"type\":\"toolCall\",\"id\":\"toolu_{s}_{i}\",\"name\":\"bash\",\"arguments\":{{\"command\":{}}}}}],{usage},\"stopReason\":\"toolUse\",\"timestamp\":{m}}}", json(&synth::sentence(rng, 6))),
            2 => format!("{{\"role\":\"toolResult\",\"toolCallId\":\"toolu_{s}_{}\",\"toolName\":\"bash\",\"content\":[{{\"type\":\"text\",\"text\":{}}}],\"isError\":{},\"timestamp\":{m}}}", i - 1, json(&text(rng, 2)), rng.below(10) == 0),
            _ => format!("{{\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":{}}}],{usage},\"stopReason\":\"stop\",\"timestamp\":{m}}}", json(&text(rng, 1))),
        };
        let _ = writeln!(out, "{{\"type\":\"message\",\"id\":{eid},\"parentId\":{parent},\"timestamp\":\"{t}\",\"message\":{message}}}");
        parent = eid;
    }
    let dir = format!("--srv-ws{}--", s % 12);
    write(
        &root
            .join(dir)
            .join(format!("2026-10-{day:02}T10-00-00-000Z_{id}.jsonl")),
        &out,
    )
}

/// `~/.qwen/projects/<cwd>/chats/<id>.jsonl`: Claude's envelope with Gemini-style `parts`.
fn qwen(root: &Path, s: usize, ws: &str, day: usize, n: usize, rng: &mut Rng) -> io::Result<u64> {
    let id = format!("7e8f9a0b1c2d4e3f8a9b{s:012x}");
    let mut out = String::new();
    let mut parent = "null".to_string();
    for i in 0..n {
        let uuid = format!("\"q-{s}-{i}\"");
        let common = format!("\"uuid\":{uuid},\"parentUuid\":{parent},\"sessionId\":\"{id}\",\"timestamp\":\"{}\",\"cwd\":\"{ws}\",\"version\":\"0.21.13\",\"gitBranch\":\"main\"", ts(day, i));
        let line = match i % 4 {
            0 => {
                let said = json(&text(rng, 1));
                format!("{{{common},\"type\":\"user\",\"message\":{{\"role\":\"user\",\"parts\":[{{\"text\":{said}}}]}}}}")
            }
            1 => format!("{{{common},\"type\":\"assistant\",\"model\":\"qwen3-coder-plus\",\"message\":{{\"role\":\"model\",\"parts\":[{{\"functionCall\":{{\"id\":\"call_{s}_{i}\",\"name\":\"run_shell_command\",\"args\":{{\"command\":{}}}}}}}]}}}}", json(&synth::sentence(rng, 6))),
            2 => format!("{{{common},\"type\":\"tool_result\",\"message\":{{\"role\":\"user\",\"parts\":[{{\"functionResponse\":{{\"id\":\"call_{s}_{}\",\"name\":\"run_shell_command\",\"response\":{{\"output\":{}}}}}}}]}}}}", i - 1, json(&text(rng, 2))),
            _ => format!("{{{common},\"type\":\"assistant\",\"model\":\"qwen3-coder-plus\",\"message\":{{\"role\":\"model\",\"parts\":[{{\"text\":{}}}]}}}}", json(&text(rng, 1))),
        };
        let _ = writeln!(out, "{line}");
        parent = uuid;
    }
    write(
        &root.join(format!("-srv-ws{}/chats/{id}.jsonl", s % 12)),
        &out,
    )
}

/// `~/.copilot/session-state/<id>/events.jsonl`: `session.start`, then `user.message`,
/// `assistant.message` with `toolRequests`, `tool.execution_start` / `_complete` events.
fn copilot(
    root: &Path,
    s: usize,
    ws: &str,
    day: usize,
    n: usize,
    rng: &mut Rng,
) -> io::Result<u64> {
    let id = format!("5b6c7d8e-0000-4000-8000-{s:012}");
    let mut out = String::new();
    let _ = writeln!(out, "{{\"type\":\"session.start\",\"data\":{{\"sessionId\":\"{id}\",\"version\":1,\"producer\":\"copilot-agent\",\"copilotVersion\":\"1.0.68\",\"startTime\":\"{}\",\"context\":{{\"cwd\":\"{ws}\"}}}},\"id\":\"ev-{s}-0\",\"timestamp\":\"{}\",\"parentId\":null}}", ts(day, 0), ts(day, 0));
    for i in 1..n {
        let head = format!(
            "\"id\":\"ev-{s}-{i}\",\"timestamp\":\"{}\",\"parentId\":\"ev-{s}-{}\"",
            ts(day, i),
            i - 1
        );
        let line = match i % 4 {
            1 => {
                let said = json(&text(rng, 1));
                format!("{{\"type\":\"user.message\",\"data\":{{\"content\":{said},\"transformedContent\":{said},\"attachments\":[],\"interactionId\":\"int-{i}\"}},{head}}}")
            }
            2 => format!("{{\"type\":\"assistant.message\",\"data\":{{\"messageId\":\"m-{i}\",\"content\":{},\"toolRequests\":[{{\"toolCallId\":\"call_{s}_{i}\",\"name\":\"bash\",\"arguments\":{{\"command\":{}}},\"type\":\"function\"}}],\"interactionId\":\"int-{i}\"}},{head}}}", json(&synth::sentence(rng, 8)), json(&synth::sentence(rng, 5))),
            3 => format!("{{\"type\":\"tool.execution_complete\",\"data\":{{\"toolCallId\":\"call_{s}_{}\",\"success\":{},\"result\":{{\"content\":{},\"detailedContent\":null}}}},{head}}}", i - 1, rng.below(10) != 0, json(&text(rng, 2))),
            _ => format!("{{\"type\":\"assistant.message\",\"data\":{{\"messageId\":\"m-{i}\",\"content\":{},\"toolRequests\":[],\"interactionId\":\"int-{i}\"}},{head}}}", json(&text(rng, 1))),
        };
        let _ = writeln!(out, "{line}");
    }
    write(&root.join(format!("{id}/events.jsonl")), &out)
}

/// `~/.cursor/projects/<cwd>/agent-transcripts/<id>/<id>.jsonl`: `role` + `message.content`
/// blocks (text, `tool_use`, `tool_result`), no times.
fn cursor(
    root: &Path,
    s: usize,
    _ws: &str,
    _day: usize,
    n: usize,
    rng: &mut Rng,
) -> io::Result<u64> {
    let id = format!("c0ffee01-0000-4000-8000-{s:012}");
    let mut out = String::new();
    for i in 0..n {
        let line = match i % 4 {
            0 => format!("{{\"role\":\"user\",\"message\":{{\"content\":[{{\"type\":\"text\",\"text\":{}}}]}}}}", json(&format!("<user_query>\n{}\n</user_query>", text(rng, 1)))),
            1 => format!("{{\"role\":\"assistant\",\"message\":{{\"content\":[{{\"type\":\"tool_use\",\"name\":\"Shell\",\"input\":{{\"command\":{}}}}}]}}}}", json(&synth::sentence(rng, 6))),
            2 => format!("{{\"role\":\"user\",\"message\":{{\"content\":[{{\"type\":\"tool_result\",\"tool_use_id\":\"t{i}\",\"is_error\":{},\"content\":[{{\"type\":\"text\",\"text\":{}}}]}}]}}}}", rng.below(10) == 0, json(&text(rng, 2))),
            _ => format!("{{\"role\":\"assistant\",\"message\":{{\"content\":[{{\"type\":\"text\",\"text\":{}}}]}}}}", json(&text(rng, 1))),
        };
        let _ = writeln!(out, "{line}");
    }
    write(
        &root.join(format!(
            "-srv-ws{}/agent-transcripts/{id}/{id}.jsonl",
            s % 12
        )),
        &out,
    )
}

/// `<repo>/.aider.chat.history.md`: one file per repository, a run per session (`# aider chat
/// started at`, `####` prompts, the answer, `>` tool output), appended one after another.
fn aider(root: &Path, s: usize, day: usize, n: usize, rng: &mut Rng) -> io::Result<u64> {
    let path = root.join(format!("repo{}/.aider.chat.history.md", s % 12));
    let mut out = String::new();
    let _ = write!(
        out,
        "\n# aider chat started at 2026-10-{day:02} {:02}:{:02}:00\n\n> aider --model gpt-4o  \n> Aider v0.86.1  \n\n",
        s / 60 % 24,
        s % 60
    );
    for i in 0..n {
        match i % 3 {
            0 => {
                let _ = write!(out, "#### {}  \n\n", text(rng, 1));
            }
            1 => {
                let _ = write!(out, "{}\n\n", text(rng, 2));
            }
            _ => {
                let _ = write!(
                    out,
                    "> Applied edit to src/{}.py  \n> {}  \n\n",
                    synth::sentence(rng, 1),
                    text(rng, 1)
                );
            }
        }
    }
    std::fs::create_dir_all(path.parent().expect("parent"))?;
    use std::io::Write as _;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)?;
    f.write_all(out.as_bytes())?;
    Ok(out.len() as u64)
}

/// `~/.kimi/sessions/<md5 of cwd>/<id>/context.jsonl` (OpenAI-style messages, `_checkpoint`
/// records, no times) with the `wire.jsonl` beside it (`TurnBegin` per prompt, a timed record
/// per streamed piece), and the work dirs in `~/.kimi/kimi.json` (`root` plays `~/.kimi`).
fn kimi(root: &Path, s: usize, ws: &str, day: usize, n: usize, rng: &mut Rng) -> io::Result<u64> {
    use md5::{Digest, Md5};
    let id = format!("3c2b1a09-0000-4d6c-9b5a-{s:012}");
    let md5 = |p: &str| -> String {
        Md5::digest(p.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    };
    let dirs: Vec<String> = (0..12)
        .map(|k| format!("{{\"path\":\"/srv/ws{k}\",\"kaos\":\"local\",\"last_session_id\":null}}"))
        .collect();
    let mut bytes = write(
        &root.join("kimi.json"),
        &format!("{{\"work_dirs\":[{}],\"thinking\":false}}", dirs.join(",")),
    )?;
    let (mut context, mut wire) = (String::new(), String::new());
    let _ = writeln!(
        wire,
        "{{\"type\": \"metadata\", \"protocol_version\": \"1.10\"}}"
    );
    for i in 0..n {
        let secs = ms(day, i) as f64 / 1000.0;
        match i % 4 {
            0 => {
                let said = json(&text(rng, 1));
                let _ = writeln!(context, "{{\"role\": \"_checkpoint\", \"id\": {i}}}");
                let _ = writeln!(context, "{{\"role\": \"user\", \"content\": {said}}}");
                let _ = writeln!(wire, "{{\"timestamp\": {secs}, \"message\": {{\"type\": \"TurnBegin\", \"payload\": {{\"user_input\": {said}}}}}}}");
            }
            1 => {
                let args = json(&format!(
                    "{{\"command\": {}}}",
                    json(&synth::sentence(rng, 6))
                ));
                let _ = writeln!(context, "{{\"role\": \"assistant\", \"content\": [], \"tool_calls\": [{{\"type\": \"function\", \"id\": \"Bash:{i}\", \"function\": {{\"name\": \"Bash\", \"arguments\": {args}}}}}]}}");
                let _ = writeln!(wire, "{{\"timestamp\": {secs}, \"message\": {{\"type\": \"ToolCall\", \"payload\": {{\"type\": \"function\", \"id\": \"Bash:{i}\", \"function\": {{\"name\": \"Bash\", \"arguments\": {args}}}}}}}}}");
            }
            2 => {
                let out = text(rng, 2);
                let out = if rng.below(10) == 0 {
                    format!("<system>ERROR: Command failed with exit code: 1.</system>\n{out}")
                } else {
                    out
                };
                let _ = writeln!(context, "{{\"role\": \"tool\", \"content\": [{{\"type\": \"text\", \"text\": {}}}], \"tool_call_id\": \"Bash:{}\"}}", json(&out), i - 1);
                let _ = writeln!(wire, "{{\"timestamp\": {secs}, \"message\": {{\"type\": \"ToolResult\", \"payload\": {{\"tool_call_id\": \"Bash:{}\", \"return_value\": {{\"is_error\": false, \"output\": {}}}}}}}}}", i - 1, json(&out));
            }
            _ => {
                let said = json(&text(rng, 1));
                let _ = writeln!(context, "{{\"role\": \"assistant\", \"content\": [{{\"type\": \"text\", \"text\": {said}}}]}}");
                let _ = writeln!(wire, "{{\"timestamp\": {secs}, \"message\": {{\"type\": \"ContentPart\", \"payload\": {{\"type\": \"text\", \"text\": {said}}}}}}}");
            }
        }
    }
    let session = root.join("sessions").join(md5(ws)).join(&id);
    bytes += write(&session.join("wire.jsonl"), &wire)?;
    bytes += write(&session.join("context.jsonl"), &context)?;
    Ok(bytes)
}

/// `~/.kimi-code/sessions/wd_<slug>_<hash>/session_<uuid>/agents/main/wire.jsonl` (+ the
/// session's `state.json`): a `metadata` header, then `turn.prompt` and
/// `context.append_message` per prompt and `context.append_loop_event` records (`tool.call`,
/// `tool.result`, `content.part`), each with its `time`.
fn kimi_code(
    root: &Path,
    s: usize,
    ws: &str,
    day: usize,
    n: usize,
    rng: &mut Rng,
) -> io::Result<u64> {
    let id = format!("session_5b2e7c1a-0000-4a6b-8c9d-{s:012}");
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{{\"type\":\"metadata\",\"protocol_version\":\"1.4\",\"created_at\":{}}}",
        ms(day, 0)
    );
    for i in 0..n {
        let (t, step) = (ms(day, i), i / 4 + 1);
        let ev = |event: String| {
            format!("{{\"type\":\"context.append_loop_event\",\"event\":{event},\"time\":{t}}}")
        };
        let line = match i % 4 {
            0 => {
                let said = format!("[{{\"type\":\"text\",\"text\":{}}}]", json(&text(rng, 1)));
                let _ = writeln!(out, "{{\"type\":\"turn.prompt\",\"input\":{said},\"origin\":{{\"kind\":\"user\"}},\"time\":{t}}}");
                format!("{{\"type\":\"context.append_message\",\"message\":{{\"role\":\"user\",\"content\":{said},\"toolCalls\":[],\"origin\":{{\"kind\":\"user\"}}}},\"time\":{t}}}")
            }
            1 => ev(format!("{{\"type\":\"tool.call\",\"uuid\":\"Bash_{i}\",\"turnId\":\"{}\",\"step\":{step},\"stepUuid\":\"st-{s}-{step}\",\"toolCallId\":\"Bash_{i}\",\"name\":\"Bash\",\"args\":{{\"command\":{}}},\"description\":\"Running a command\"}}", i / 4, json(&synth::sentence(rng, 6)))),
            2 => ev(format!("{{\"type\":\"tool.result\",\"parentUuid\":\"Bash_{0}\",\"toolCallId\":\"Bash_{0}\",\"result\":{{\"output\":{1},\"isError\":{2}}}}}", i - 1, json(&text(rng, 2)), rng.below(10) == 0)),
            _ => ev(format!("{{\"type\":\"content.part\",\"uuid\":\"cp-{s}-{i}\",\"turnId\":\"{}\",\"step\":{step},\"stepUuid\":\"st-{s}-{step}\",\"part\":{{\"type\":\"text\",\"text\":{}}}}}", i / 4, json(&text(rng, 1)))),
        };
        let _ = writeln!(out, "{line}");
    }
    let session = root
        .join(format!("wd_ws{}_{:012x}", s % 12, s % 12))
        .join(&id);
    let state = format!(
        "{{\"createdAt\":\"{}\",\"updatedAt\":\"{}\",\"title\":\"Session {s}\",\"isCustomTitle\":false,\"agents\":{{\"main\":{{\"type\":\"main\",\"parentAgentId\":null}}}},\"custom\":{{}},\"workDir\":\"{ws}\"}}",
        ts(day, 0),
        ts(day, n)
    );
    Ok(write(&session.join("state.json"), &state)?
        + write(&session.join("agents/main/wire.jsonl"), &out)?)
}

/// `~/.iflow/projects/<cwd>/session-<uuid>.jsonl`: Claude Code's envelope, Gemini CLI's tools,
/// a `tool_result` whose `content` is iFlow's `{callId, responseParts, resultDisplay}` object.
fn iflow(root: &Path, s: usize, ws: &str, day: usize, n: usize, rng: &mut Rng) -> io::Result<u64> {
    let id = format!("session-2a3b4c5d-0000-4a8b-9c0d-{s:012}");
    let mut out = String::new();
    let mut parent = "null".to_string();
    for i in 0..n {
        let uuid = format!("\"f-{s}-{i}\"");
        let head = format!("\"uuid\":{uuid},\"parentUuid\":{parent},\"sessionId\":\"{id}\",\"timestamp\":\"{}\",\"isSidechain\":false,\"userType\":\"external\",\"cwd\":\"{ws}\",\"gitBranch\":null,\"version\":\"0.4.2\"", ts(day, i));
        let assistant = |content: String| {
            format!("{{{head},\"type\":\"assistant\",\"message\":{{\"id\":\"response-{s}-{i}\",\"type\":\"message\",\"role\":\"assistant\",\"content\":{content},\"model\":\"glm-4.7\",\"stop_reason\":null,\"usage\":{{\"input_tokens\":0,\"output_tokens\":0}}}}}}")
        };
        let line = match i % 4 {
            0 => format!("{{{head},\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":{}}}}}", json(&text(rng, 1))),
            1 => assistant(format!("[{{\"type\":\"tool_use\",\"id\":\"call_{s}_{i}\",\"name\":\"run_shell_command\",\"input\":{{\"command\":{}}}}}]", json(&synth::sentence(rng, 6)))),
            2 => {
                let error = rng.below(10) == 0;
                let (key, status) = if error { ("error", "error") } else { ("output", "success") };
                let call = format!("call_{s}_{}", i - 1);
                format!("{{{head},\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":[{{\"tool_use_id\":\"{call}\",\"type\":\"tool_result\",\"content\":{{\"callId\":\"{call}\",\"responseParts\":{{\"functionResponse\":{{\"id\":\"{call}\",\"name\":\"run_shell_command\",\"response\":{{\"{key}\":{}}}}}}},\"resultDisplay\":\"\"}}}}]}},\"toolUseResult\":{{\"toolName\":\"run_shell_command\",\"status\":\"{status}\",\"timestamp\":{}}}}}", json(&text(rng, 2)), ms(day, i))
            }
            _ => assistant(format!("[{{\"type\":\"text\",\"text\":{}}}]", json(&text(rng, 1)))),
        };
        let _ = writeln!(out, "{line}");
        parent = uuid;
    }
    write(&root.join(format!("-srv-ws{}/{id}.jsonl", s % 12)), &out)
}

/// `~/.continue/sessions/<sessionId>.json` (the world's root holds `.continue/`): one document
/// as the IDE writes it (`JSON.stringify(…, 2)`), each call's output on its state and repeated
/// by a `tool` message; the index `sessions.json` beside it lists every session so far.
fn continue_session(
    root: &Path,
    s: usize,
    ws: &str,
    day: usize,
    n: usize,
    rng: &mut Rng,
) -> io::Result<u64> {
    use serde_json::json;
    let id = format!("7c1e2d3f-0000-4c6d-8e7f-{s:012}");
    let mut history = Vec::new();
    let mut output = String::new();
    for i in 0..n {
        let call = format!("toolu_{s}_{}", i - i % 4 + 1);
        let item = match i % 4 {
            0 => {
                json!({"message": {"role": "user", "content": [{"type": "text", "text": text(rng, 1)}]},
                "contextItems": []})
            }
            1 => {
                output = text(rng, 2);
                let command = synth::sentence(rng, 6);
                let status = if rng.below(10) == 0 {
                    "errored"
                } else {
                    "done"
                };
                let function = json!({"name": "run_terminal_command",
                    "arguments": json!({"command": command}).to_string()});
                json!({"message": {"role": "assistant", "content": "",
                        "toolCalls": [{"id": call, "type": "function", "function": function}]},
                    "contextItems": [],
                    "toolCallStates": [{"toolCallId": call, "status": status,
                        "toolCall": {"id": call, "type": "function", "function": function},
                        "parsedArgs": {"command": command},
                        "output": [{"content": output, "name": "Terminal", "description": command}]}]})
            }
            2 => json!({"message": {"role": "tool", "content": output, "toolCallId": call},
                "contextItems": []}),
            _ => {
                json!({"message": {"role": "assistant", "content": text(rng, 1)}, "contextItems": []})
            }
        };
        history.push(item);
    }
    let doc = json!({"sessionId": id, "title": format!("Session {s}"), "workspaceDirectory": ws,
        "history": history, "mode": "agent"});
    let sessions = root.join(".continue/sessions");
    let index = sessions.join("sessions.json");
    let mut entries: Vec<serde_json::Value> = std::fs::read(&index)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    entries.push(json!({"sessionId": id, "title": format!("Session {s}"),
        "dateCreated": ms(day, 0).to_string(), "workspaceDirectory": ws, "messageCount": n / 4}));
    let body = serde_json::to_string_pretty(&doc).expect("json");
    write(
        &index,
        &serde_json::to_string_pretty(&entries).expect("json"),
    )?;
    write(&sessions.join(format!("{id}.json")), &body)
}

/// `~/.local/share/amp/threads/T-<uuid>.json`: one thread document, its calls answered by
/// `tool_result` blocks on the user messages that follow (an exit code 1 one time in ten).
fn amp(root: &Path, s: usize, ws: &str, day: usize, n: usize, rng: &mut Rng) -> io::Result<u64> {
    use serde_json::json;
    let id = format!("T-019fb1c2-0000-7000-8000-{s:012}");
    let mut messages = Vec::new();
    for i in 0..n {
        let t = ms(day, i);
        let call = format!("TU-{s}-{}", i - i % 4 + 1);
        let message = match i % 4 {
            0 => json!({"role": "user", "messageId": i, "meta": {"sentAt": t},
                "content": [{"type": "text", "text": text(rng, 1)}]}),
            1 => json!({"role": "assistant", "messageId": i,
                "state": {"type": "complete", "stopReason": "tool_use"},
                "usage": {"model": "claude-sonnet-4-5", "timestamp": ts(day, i)},
                "content": [{"type": "tool_use", "id": call, "name": "shell_command",
                    "input": {"command": synth::sentence(rng, 6), "workdir": ws}, "complete": true}]}),
            2 => {
                let exit = i32::from(rng.below(10) == 0);
                json!({"role": "user", "messageId": i, "content": [{"type": "tool_result",
                    "toolUseID": call, "run": {"status": "done",
                        "result": {"output": text(rng, 2), "exitCode": exit}}}]})
            }
            _ => json!({"role": "assistant", "messageId": i,
                "state": {"type": "complete", "stopReason": "end_turn"},
                "usage": {"model": "claude-sonnet-4-5", "timestamp": ts(day, i)},
                "content": [{"type": "text", "text": text(rng, 1), "startTime": t}]}),
        };
        messages.push(message);
    }
    let doc = json!({"v": n, "id": id, "created": ms(day, 0), "title": format!("Thread {s}"),
        "env": {"initial": {"trees": [{"uri": format!("file://{ws}"), "displayName": ws}]}},
        "meta": {"agentMode": "smart"}, "messages": messages});
    write(
        &root.join(format!("{id}.json")),
        &serde_json::to_string_pretty(&doc).expect("json"),
    )
}

/// `<globalStorage>/<extension>/tasks/<id>/ui_messages.json` (Cline, Roo Code, Kilo Code's
/// legacy extension): the task, then rounds of a command, its output (one in ten a failed edit
/// instead) and an answer; Roo Code's `history_item.json`, Cline's index entry, Kilo's
/// environment details beside it.
fn vscode_task(
    agent: &str,
    root: &Path,
    s: usize,
    ws: &str,
    day: usize,
    n: usize,
    rng: &mut Rng,
) -> io::Result<u64> {
    use serde_json::json;
    let ext = match agent {
        "cline" => "saoudrizwan.claude-dev",
        "roo_code" => "rooveterinaryinc.roo-cline",
        _ => "kilocode.kilo-code",
    };
    let id = match agent {
        "cline" => format!("{}", ms(day, 0) + s as u64),
        _ => format!("{s:08x}-5f1c-4d5e-8a7b-000000000000"),
    };
    let dir = root.join(ext).join("tasks").join(&id);
    let mut messages = Vec::new();
    let mut task = String::new();
    for i in 0..n {
        let t = ms(day, i);
        let message = match i % 4 {
            0 if i == 0 => {
                task = text(rng, 1);
                json!({"ts": t, "type": "say", "say": "task", "text": task})
            }
            0 => json!({"ts": t, "type": "say", "say": "user_feedback", "text": text(rng, 1)}),
            1 => json!({"ts": t, "type": "ask", "ask": "command", "text": synth::sentence(rng, 6)}),
            2 if rng.below(10) == 0 => {
                json!({"ts": t, "type": "say", "say": "diff_error", "text": text(rng, 2)})
            }
            2 => json!({"ts": t, "type": "say", "say": "command_output", "text": text(rng, 2)}),
            _ => json!({"ts": t, "type": "say", "say": "text", "text": text(rng, 1)}),
        };
        messages.push(message);
    }
    let mut bytes = write(
        &dir.join("ui_messages.json"),
        &serde_json::to_string(&messages).expect("json"),
    )?;
    match agent {
        "roo_code" => {
            let item = json!({"id": id, "number": s + 1, "ts": ms(day, 0), "task": task,
                "tokensIn": 1000, "tokensOut": 100, "totalCost": 0.01, "workspace": ws,
                "mode": "code", "status": "completed"});
            bytes += write(&dir.join("history_item.json"), &item.to_string())?;
        }
        "kilo_code" => {
            let details = format!(
                "<environment_details>\n# Current Workspace Directory ({ws}) Files\n</environment_details>"
            );
            let api = json!([{"role": "user", "content": [{"type": "text", "text": task},
                {"type": "text", "text": details}]}]);
            bytes += write(&dir.join("api_conversation_history.json"), &api.to_string())?;
        }
        _ => {
            // Cline's index of every task, rewritten with each one added.
            let index = root.join(ext).join("state/taskHistory.json");
            let mut items: Vec<serde_json::Value> = std::fs::read(&index)
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok())
                .unwrap_or_default();
            items.push(
                json!({"id": id, "ts": ms(day, 0), "task": task, "tokensIn": 1000,
                "tokensOut": 100, "totalCost": 0.01, "cwdOnTaskInitialization": ws}),
            );
            write(&index, &serde_json::to_string(&items).expect("json"))?;
        }
    }
    Ok(bytes)
}

/// `~/.openhands/conversations/<hex>/`: `base_state.json` and `events/event-<idx:05>-<id>.json`,
/// one event a file as the software-agent-sdk writes them: the user's message, then rounds of a
/// terminal action, its observation (exit code 1 one time in ten) and the agent's answer.
fn openhands(
    root: &Path,
    s: usize,
    ws: &str,
    day: usize,
    n: usize,
    rng: &mut Rng,
) -> io::Result<u64> {
    use serde_json::json;
    let id = format!("{s:08x}-2a4b-4c5d-8e6f-0a1b2c3d4e5f");
    let dir = root.join(id.replace('-', ""));
    let event_id = |i: usize| format!("e{s:07x}-0000-4000-8000-{i:012x}");
    // The writer's local time, no zone.
    let time = |i: usize| ts(day, i).trim_end_matches('Z').to_string();
    let mut bytes = 0;
    for i in 0..n {
        let parent = if i == 0 {
            "__root__".to_string()
        } else {
            event_id(i - 1)
        };
        let call = format!("toolu_{s}_{}", i - i % 4 + 1);
        let text_block = |t: String| json!([{"cache_prompt": false, "type": "text", "text": t}]);
        let event = match i % 4 {
            0 => json!({"kind": "MessageEvent", "source": "user",
                "llm_message": {"role": "user", "content": text_block(text(rng, 1))},
                "activated_skills": [], "extended_content": []}),
            1 => {
                let command = synth::sentence(rng, 6);
                json!({"kind": "ActionEvent", "source": "agent",
                    "thought": text_block(synth::sentence(rng, 8)), "thinking_blocks": [],
                    "action": {"kind": "TerminalAction", "command": command, "is_input": false},
                    "tool_name": "terminal", "tool_call_id": call,
                    "tool_call": {"id": call, "name": "terminal",
                        "arguments": json!({"command": command}).to_string()}})
            }
            2 => {
                let exit = i32::from(rng.below(10) == 0);
                json!({"kind": "ObservationEvent", "source": "environment",
                    "observation": {"kind": "TerminalObservation",
                        "content": text_block(text(rng, 2)), "is_error": false, "exit_code": exit},
                    "action_id": event_id(i - 1), "tool_name": "terminal", "tool_call_id": call})
            }
            _ => json!({"kind": "MessageEvent", "source": "agent",
                "llm_message": {"role": "assistant", "content": text_block(text(rng, 1))},
                "activated_skills": []}),
        };
        let mut event = event;
        event["id"] = json!(event_id(i));
        event["timestamp"] = json!(time(i));
        event["parent_id"] = json!(parent);
        bytes += write(
            &dir.join(format!("events/event-{i:05}-{}.json", event_id(i))),
            &event.to_string(),
        )?;
    }
    let state = json!({"id": id, "agent": {"kind": "Agent",
            "llm": {"model": "litellm_proxy/anthropic/claude-sonnet-4-5", "usage_id": "agent"}},
        "workspace": {"kind": "LocalWorkspace", "working_dir": ws},
        "max_iterations": 500, "execution_status": "finished",
        "leaf_event_id": event_id(n.saturating_sub(1)), "stats": {}});
    bytes += write(&dir.join("base_state.json"), &state.to_string())?;
    Ok(bytes)
}
