//! Watch mode follows every agent of the registry (issue 18), through the built binary with the
//! real watcher: `knowledge index --watch` with no roots named, on a home holding every agent's
//! store at its default place (`common::agent_home`), then, while it runs, each agent writes a
//! new message into its store in its own format — a line appended to a JSONL session, a legacy
//! Gemini `.json` rewritten whole, a row inserted into a SQLite store in WAL mode (the writer
//! never checkpoints), a run appended to Aider's history in a repository — and new sessions
//! appear in new folders (a Claude Code or Qwen Code project, a Codex day, a Gemini project's
//! `chats/`, a Copilot `session-state/<id>/`, a Pi `sessions/<cwd>/`, a Cursor transcript). Each
//! new message must become searchable under its agent's name and the agent's own session id.

mod common;

use std::time::{Duration, Instant};

use common::agent_home::{
    append, claude_line, codex_message, AgentHome, CLAUDE_SESSION, CODEX_SESSION,
};
use common::watching::{items, search, Watcher, DEADLINE};
use knowledge::sources::episodes::agents::Agent;

/// What one write must make findable.
struct Expect {
    what: &'static str,
    agent: Agent,
    word: &'static str,
    /// The agent's own session id; `None` where it is derived (Aider's runs).
    session: Option<&'static str>,
}

impl Expect {
    fn new(
        agent: Agent,
        what: &'static str,
        word: &'static str,
        session: Option<&'static str>,
    ) -> Expect {
        Expect {
            what,
            agent,
            word,
            session,
        }
    }
}

const GEMINI_SESSION: &str = "3f2a9c1e-7b4d-4e0a-9a51-2c8e6d0f1b77";
const GEMINI_LEGACY: &str = "8d0c1a22-5e6f-4a1b-9c2d-3e4f5a6b7c8d";
const GEMINI_NEW: &str = "5e550000-9e11-4a1b-9c2d-00000000a0a0";
const PI_SESSION: &str = "0199e1a4-7c2b-7d3e-9f10-4a5b6c7d8e9f";
const PI_NEW: &str = "0199f000-0000-7000-8000-0000000000b1";
const QWEN_SESSION: &str = "7e8f9a0b1c2d4e3f8a9b0c1d2e3f4a5b";
const COPILOT_SESSION: &str = "5b6c7d8e-1a2b-4c3d-8e9f-0a1b2c3d4e5f";
const COPILOT_NEW: &str = "c0b10000-1a2b-4c3d-8e9f-00000000c0b1";
const OPENCODE_SESSION: &str = "ses_1a2b3c4d5ffeRootSessionAbCd";
const CURSOR_COMPOSER: &str = "7a1d4b6c-2222-4d3e-8f9a-0b1c2d3e4f5a";
const CURSOR_TRANSCRIPT: &str = "c0ffee01-aaaa-4bbb-8ccc-000000000001";
const CLAUDE_NEW: &str = "0a11ce00-0000-4000-8000-0000000c1de2";
const CODEX_NEW: &str = "0199aaaa-0000-7000-8000-0000000c0de2";
const QWEN_NEW: &str = "9a8b7c6d5e4f40318a9b0c1d2e3f4a5b";
const CURSOR_NEW: &str = "c0ffee01-aaaa-4bbb-8ccc-0000000000ff";
const KIMI_SESSION: &str = "3c2b1a09-8f7e-4d6c-9b5a-4e3d2c1b0a99";
const KIMI_WORKDIR: &str = "3ded63a930cb31774327e9b947f57361";
const KIMI_NEW: &str = "4d3c2b1a-0000-4d6c-9b5a-0000000000b2";
const KIMI_CODE_SESSION: &str = "session_5b2e7c1a-3d4f-4a6b-8c9d-0e1f2a3b4c5d";
const KIMI_CODE_WORKDIR: &str = "wd_billing_4a952e781f24";
const KIMI_CODE_NEW: &str = "session_6c3f8d2b-0000-4a6b-8c9d-0000000000d4";
const IFLOW_SESSION: &str = "session-2a3b4c5d-6e7f-4a8b-9c0d-1e2f3a4b5c6d";
const IFLOW_NEW: &str = "session-3b4c5d6e-0000-4a8b-9c0d-0000000000c3";
const CONTINUE_SESSION: &str = "2e3f4a5b-6c7d-4e8f-9a0b-1c2d3e4f5a6b";
const CONTINUE_NEW: &str = "4a5b6c7d-0000-4e8f-9a0b-0000000000e5";
const AMP_THREAD: &str = "T-019fb1c2-3d4e-7f50-8a6b-7c8d9e0f1a2b";
const AMP_NEW: &str = "T-019fc000-0000-7000-8000-0000000000f6";
const OPENHANDS_CONVERSATION: &str = "7d3e9f10-2a4b-4c5d-8e6f-0a1b2c3d4e5f";
const CRUSH_SESSION: &str = "6f1c2d3e-4a5b-4c6d-8e7f-90a1b2c3d4e5";
const ZED_THREAD: &str = "0f9e8d7c-6b5a-4c3d-8e2f-1a0b9c8d7e6f";
const OPENHANDS_NEW: &str = "8e4f0a21-0000-4c5d-8e6f-0000000000a7";
/// VS Code's globalStorage in the home, where the extensions keep their task folders.
const VSCODE: &str = ".config/Code/User/globalStorage";
const CLINE_TASK: &str = "1785315600000";
const CLINE_NEW: &str = "1785700000000_w4tch";
const ROO_TASK: &str = "5f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b";
const ROO_NEW: &str = "9d0e1f2a-0000-4b5c-8d9e-0000000000b8";
const KILO_SESSION: &str = "ses_0a1b2c3d4ffeKiloRootSession";
const KILO_NEW: &str = "0e1f2a3b-0000-4c5d-8e9f-0000000000c9";

/// A task folder's `ui_messages.json` rewritten whole with one more message of the assistant.
fn rewrite_ui(task: &std::path::Path, text: &str, expect: Expect) -> Expect {
    let path = task.join("ui_messages.json");
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).expect("read")).expect("json");
    doc.as_array_mut().expect("messages").push(
        serde_json::json!({"ts": 1785700000000_i64, "type": "say", "say": "text", "text": text}),
    );
    std::fs::write(&path, doc.to_string()).expect("rewrite");
    expect
}

/// An OpenHands event file's body, as the SDK writes it.
fn openhands_message(id: &str, parent: &str, source: &str, text: &str) -> String {
    let role = if source == "user" {
        "user"
    } else {
        "assistant"
    };
    serde_json::json!({"kind": "MessageEvent", "id": id,
        "timestamp": "2026-08-03T09:20:00.000001", "source": source, "parent_id": parent,
        "llm_message": {"role": role, "content": [{"type": "text", "text": text}]},
        "activated_skills": [], "extended_content": []})
    .to_string()
}

/// The writes of `agent` into the stores it already has in `h`, in the agent's own format.
/// Exhaustive, so a new agent in the registry does not compile here until its watch is tested.
fn write_in_place(h: &AgentHome, agent: Agent) -> Vec<Expect> {
    let home = &h.home;
    let e = |what, word, session| Expect::new(agent, what, word, session);
    match agent {
        Agent::Claude => {
            append(
                &home.join(format!(
                    ".claude/projects/-home-dev-shop/{CLAUDE_SESSION}.jsonl"
                )),
                &claude_line(
                    CLAUDE_SESSION,
                    "c1de0000-0000-4000-8000-000000000002",
                    Some("c1de0000-0000-4000-8000-000000000001"),
                    "assistant",
                    "The quokkaledger retry sends the charge twice.",
                    "/home/dev/shop",
                ),
            );
            vec![e("a line appended", "quokkaledger", Some(CLAUDE_SESSION))]
        }
        Agent::Codex => {
            append(
                &home.join(format!(
                    ".codex/sessions/2026/05/02/rollout-2026-05-02T09-00-00-{CODEX_SESSION}.jsonl"
                )),
                &codex_message("assistant", "The marmotvault lock holds the migration."),
            );
            vec![e("a line appended", "marmotvault", Some(CODEX_SESSION))]
        }
        Agent::Gemini => {
            let tmp = home.join(".gemini/tmp");
            let chats = tmp.join("billing-api/chats");
            append(
                &chats.join("session-2026-05-12T09-14-3f2a9c1e.jsonl"),
                &serde_json::json!({"id": "d4a3b2c1-4444-4d5e-8f60-000000000099",
                    "timestamp": "2026-05-12T09:17:00.000Z", "type": "gemini",
                    "content": "The pangolinquill renderer batches the line items now.",
                    "thoughts": [], "model": "gemini-3-flash-preview",
                    "tokens": {"input": 900, "output": 12, "cached": 0, "thoughts": 0, "tool": 0, "total": 912}})
                .to_string(),
            );
            append(
                &chats.join("session-2026-05-12T09-14-3f2a9c1e.jsonl"),
                r#"{"$set":{"lastUpdated":"2026-05-12T09:17:00.000Z"}}"#,
            );
            // The legacy form: the whole document rewritten with one more message.
            let legacy = std::fs::read_dir(&tmp)
                .expect("ls tmp")
                .flatten()
                .map(|d| {
                    d.path()
                        .join("chats/session-2026-03-02T10-00-8d0c1a22.json")
                })
                .find(|p| p.is_file())
                .expect("the legacy session");
            let mut doc: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&legacy).expect("read")).expect("json");
            doc["messages"].as_array_mut().expect("messages").push(
                serde_json::json!({"id": "leg-0099",
                    "timestamp": "2026-03-02T10:07:00.000Z", "type": "user",
                    "content": [{"text": "Also rotate the tapirbeacon token."}]}),
            );
            doc["lastUpdated"] = "2026-03-02T10:07:00.000Z".into();
            std::fs::write(&legacy, serde_json::to_vec_pretty(&doc).expect("json"))
                .expect("rewrite");
            vec![
                e("a message appended", "pangolinquill", Some(GEMINI_SESSION)),
                e(
                    "a legacy .json rewritten",
                    "tapirbeacon",
                    Some(GEMINI_LEGACY),
                ),
            ]
        }
        Agent::Pi => {
            let sessions = home.join(".pi/agent/sessions");
            append(
                &sessions.join(
                    "--home-dev-ledger--/2026-06-03T08-00-00-000Z_0199e1a4-7c2b-7d3e-9f10-4a5b6c7d8e9f.jsonl",
                ),
                &pi_message("a0000014", "a0000013", "assistant", "The ibexcounter total fits now."),
            );
            vec![e("a message appended", "ibexcounter", Some(PI_SESSION))]
        }
        Agent::Qwen => {
            append(
                &home.join(format!(".qwen/projects/-home-dev-mailer/chats/{QWEN_SESSION}.jsonl")),
                &serde_json::json!({"uuid": "q-13", "parentUuid": "q-12", "sessionId": QWEN_SESSION,
                    "timestamp": "2026-08-18T10:02:00.000Z", "type": "assistant",
                    "cwd": "/home/dev/mailer", "version": "0.21.13", "gitBranch": "main",
                    "model": "qwen3-coder-plus",
                    "message": {"role": "model", "parts": [{"text": "The lemurstamp header is set once now."}]}})
                .to_string(),
            );
            vec![e("a line appended", "lemurstamp", Some(QWEN_SESSION))]
        }
        Agent::Copilot => {
            let state = home.join(".copilot/session-state");
            append(
                &state.join(COPILOT_SESSION).join("events.jsonl"),
                &serde_json::json!({"type": "user.message",
                    "data": {"content": "Log the walrusbadge delivery id too.",
                        "transformedContent": "Log the walrusbadge delivery id too.",
                        "attachments": [], "interactionId": "int-3"},
                    "id": "ev-20", "timestamp": "2026-04-21T14:03:00.000Z", "parentId": "ev-19"})
                .to_string(),
            );
            vec![e("an event appended", "walrusbadge", Some(COPILOT_SESSION))]
        }
        Agent::Aider => {
            let history = h.repo().join(".aider.chat.history.md");
            append(
                &history,
                "\n# aider chat started at 2026-10-02 11:00:00\n\n\
                 #### why does the koalafender check fail on CI  \n\n\
                 The check reads the wrong env file.\n",
            );
            vec![e("a run appended in the repository", "koalafender", None)]
        }
        Agent::OpenCode => {
            h.opencode
                .execute_batch(
                    "INSERT INTO part VALUES ('prt_e5d4c3b2d003Text00000099',
                       'msg_e5d4c3b2d001UserThanks01', 'ses_1a2b3c4d5ffeRootSessionAbCd',
                       1780000070000, 1780000070000,
                       '{\"type\":\"text\",\"text\":\"And the otterbrass test too.\"}');",
                )
                .expect("OpenCode writes a part (into its WAL)");
            vec![e(
                "a row written to the WAL",
                "otterbrass",
                Some(OPENCODE_SESSION),
            )]
        }
        Agent::Cursor => {
            h.cursor
                .execute_batch(&format!(
                    "INSERT INTO cursorDiskKV VALUES ('bubbleId:{CURSOR_COMPOSER}:s-0099',
                       '{{\"_v\":3,\"type\":2,\"bubbleId\":\"s-0099\",\"text\":\"The bisonlattice key is per locale.\"}}');"
                ))
                .expect("Cursor writes a bubble (into its WAL)");
            append(
                &home.join(format!(
                    ".cursor/projects/-home-dev-shop/agent-transcripts/{CURSOR_TRANSCRIPT}/{CURSOR_TRANSCRIPT}.jsonl"
                )),
                &serde_json::json!({"role": "assistant", "message": {"content": [
                    {"type": "text", "text": "The heronmantle token now rotates weekly."}]}})
                .to_string(),
            );
            vec![
                e(
                    "a bubble written to the IDE store's WAL",
                    "bisonlattice",
                    Some(CURSOR_COMPOSER),
                ),
                e(
                    "a transcript line appended",
                    "heronmantle",
                    Some(CURSOR_TRANSCRIPT),
                ),
            ]
        }
        Agent::Kimi => {
            append(
                &home.join(format!(
                    ".kimi/sessions/{KIMI_WORKDIR}/{KIMI_SESSION}/context.jsonl"
                )),
                &kimi_assistant("The cheetahspindle step is rejected at parse time."),
            );
            vec![e(
                "a context line appended",
                "cheetahspindle",
                Some(KIMI_SESSION),
            )]
        }
        Agent::KimiCode => {
            append(
                &home.join(format!(
                    ".kimi-code/sessions/{KIMI_CODE_WORKDIR}/{KIMI_CODE_SESSION}/agents/main/wire.jsonl"
                )),
                &kimi_code_text("The ocelotledger rounding moved to the exporter."),
            );
            vec![e(
                "a wire record appended",
                "ocelotledger",
                Some(KIMI_CODE_SESSION),
            )]
        }
        Agent::IFlow => {
            append(
                &home.join(format!(
                    ".iflow/projects/-home-dev-invoices/{IFLOW_SESSION}.jsonl"
                )),
                &iflow_line(
                    IFLOW_SESSION,
                    "f1000000-0000-4000-8000-000000000099",
                    Some("f1000000-0000-4000-8000-000000000007"),
                    "The gazellevoucher total is rounded once now.",
                ),
            );
            vec![e("a line appended", "gazellevoucher", Some(IFLOW_SESSION))]
        }
        Agent::Continue => {
            // Continue rewrites the whole session document on every save.
            let path = home.join(format!(".continue/sessions/{CONTINUE_SESSION}.json"));
            let mut doc: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&path).expect("read")).expect("json");
            doc["history"]
                .as_array_mut()
                .expect("history")
                .push(serde_json::json!({
                "message": {"role": "assistant",
                    "content": "The quetzalbalance report now lists the one-day matches."},
                "contextItems": []}));
            std::fs::write(&path, serde_json::to_vec_pretty(&doc).expect("json")).expect("rewrite");
            vec![e(
                "a session document rewritten",
                "quetzalbalance",
                Some(CONTINUE_SESSION),
            )]
        }
        Agent::Amp => {
            // Amp rewrites the whole thread as it goes on.
            let path = home.join(format!(".local/share/amp/threads/{AMP_THREAD}.json"));
            let mut doc: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&path).expect("read")).expect("json");
            doc["messages"].as_array_mut().expect("messages").push(
                serde_json::json!({"role": "assistant", "messageId": 99,
                    "state": {"type": "complete", "stopReason": "end_turn"},
                    "content": [{"type": "text",
                        "text": "The wombatledger backfill runs after the migration now."}]}),
            );
            doc["v"] = 42.into();
            std::fs::write(&path, serde_json::to_vec_pretty(&doc).expect("json")).expect("rewrite");
            vec![e("a thread rewritten", "wombatledger", Some(AMP_THREAD))]
        }
        Agent::Cline => {
            // The extension rewrites the task's UI messages whole.
            vec![rewrite_ui(
                &home.join(format!(
                    "{VSCODE}/saoudrizwan.claude-dev/tasks/{CLINE_TASK}"
                )),
                "The marmotinvoice totals round per currency now.",
                e(
                    "a task's UI messages rewritten",
                    "marmotinvoice",
                    Some(CLINE_TASK),
                ),
            )]
        }
        Agent::RooCode => vec![rewrite_ui(
            &home.join(format!(
                "{VSCODE}/rooveterinaryinc.roo-cline/tasks/{ROO_TASK}"
            )),
            "The ocelotbackoff retries stop after five tries.",
            e(
                "a task's UI messages rewritten",
                "ocelotbackoff",
                Some(ROO_TASK),
            ),
        )],
        Agent::KiloCode => {
            h.kilo
                .execute_batch(&format!(
                    "INSERT INTO message VALUES ('msg_f001KiloWatch0000000001', '{KILO_SESSION}',
                       1785600095000, 1785600095000,
                       '{{\"role\":\"user\",\"time\":{{\"created\":1785600095000}},\"agent\":\"code\"}}');
                     INSERT INTO part VALUES ('prt_f002KiloWatch0000000001', 'msg_f001KiloWatch0000000001',
                       '{KILO_SESSION}', 1785600095000, 1785600095000,
                       '{{\"type\":\"text\",\"text\":\"Now import the pangolinrefunds table too.\"}}');"
                ))
                .expect("Kilo writes a message (into its WAL)");
            vec![e(
                "a row written to kilo.db's WAL",
                "pangolinrefunds",
                Some(KILO_SESSION),
            )]
        }
        Agent::Goose => {
            h.goose
                .execute_batch(
                    "INSERT INTO messages (message_id, session_id, role, content_json,
                       created_timestamp, metadata_json) VALUES ('msg_u9', '20260904_1', 'user',
                       '[{\"type\":\"text\",\"text\":\"Round the gannetfloor refunds too.\"}]',
                       1788510900, '{\"userVisible\":true}');",
                )
                .expect("Goose writes a message (into its WAL)");
            vec![e(
                "a row written to the WAL",
                "gannetfloor",
                Some("20260904_1"),
            )]
        }
        Agent::Crush => {
            h.crush
                .execute_batch(&format!(
                    "INSERT INTO messages (id, session_id, role, parts, created_at, updated_at)
                     VALUES ('msg-u9', '{CRUSH_SESSION}', 'user',
                       '[{{\"type\":\"text\",\"data\":{{\"text\":\"Round the pelicanvault refunds too.\"}}}}]',
                       1788600900, 1788600900);"
                ))
                .expect("Crush writes a message (into its WAL)");
            vec![e(
                "a row written to the WAL",
                "pelicanvault",
                Some(CRUSH_SESSION),
            )]
        }
        Agent::Zed => {
            // Zed saves the whole thread again, compressed, one message longer.
            let doc: Vec<u8> = h
                .zed
                .query_row(
                    "SELECT data FROM threads WHERE id = ?1",
                    [ZED_THREAD],
                    |r| r.get(0),
                )
                .expect("thread");
            let mut doc: serde_json::Value = serde_json::from_slice(
                &ruzstd::decoding::StreamingDecoder::new(doc.as_slice())
                    .map(|d| std::io::Read::bytes(d).collect::<Result<Vec<u8>, _>>())
                    .expect("zstd")
                    .expect("read"),
            )
            .expect("json");
            doc["messages"]
                .as_array_mut()
                .expect("messages")
                .push(serde_json::json!({
                "Agent": {"content": [{"Text": "The marmotledger refunds round half to even."}],
                    "tool_results": {}, "reasoning_details": null}}));
            let packed = ruzstd::encoding::compress_to_vec(
                doc.to_string().as_bytes(),
                ruzstd::encoding::CompressionLevel::Fastest,
            );
            h.zed
                .execute(
                    "UPDATE threads SET data = ?2, updated_at = '2026-09-06T10:20:00+00:00'
                     WHERE id = ?1",
                    rusqlite::params![ZED_THREAD, packed],
                )
                .expect("Zed saves the thread (into its WAL)");
            vec![e("a thread saved again", "marmotledger", Some(ZED_THREAD))]
        }
        Agent::OpenHands => {
            // A new event file beside the others; the state file is left as it was.
            let events = home.join(format!(
                ".openhands/conversations/{}/events",
                OPENHANDS_CONVERSATION.replace('-', "")
            ));
            let id = "e0000000-0000-4000-8000-0000000000ff";
            std::fs::write(
                events.join(format!("event-00013-{id}.json")),
                openhands_message(
                    id,
                    "e0000000-0000-4000-8000-00000000000c",
                    "agent",
                    "The wombatledger refunds settle in the account currency now.",
                ),
            )
            .expect("event");
            vec![e(
                "an event file added",
                "wombatledger",
                Some(OPENHANDS_CONVERSATION),
            )]
        }
    }
}

/// A new session of `agent` in a folder that did not exist when the watch started (the layout a
/// new project, day or session gets), in the agent's own format. Aider and OpenCode keep every
/// session in the store they already have (the history file, the database): theirs are written
/// in place. Exhaustive, like [`write_in_place`].
fn write_new_session(h: &AgentHome, agent: Agent) -> Vec<Expect> {
    let home = &h.home;
    let e = |what, word, session| Expect::new(agent, what, word, session);
    match agent {
        Agent::Claude => {
            append(
                &home.join(format!(
                    ".claude/projects/-home-dev-reports/{CLAUDE_NEW}.jsonl"
                )),
                &claude_line(
                    CLAUDE_NEW,
                    "c1de0000-0000-4000-8000-000000000101",
                    None,
                    "user",
                    "Why is the antelopegrid report empty?",
                    "/home/dev/reports",
                ),
            );
            vec![e("a new project folder", "antelopegrid", Some(CLAUDE_NEW))]
        }
        Agent::Codex => {
            let rollout = home.join(format!(
                ".codex/sessions/2026/05/09/rollout-2026-05-09T08-00-00-{CODEX_NEW}.jsonl"
            ));
            append(
                &rollout,
                &serde_json::json!({"timestamp": "2026-05-09T08:00:00.000Z",
                    "type": "session_meta", "payload": {"id": CODEX_NEW,
                    "timestamp": "2026-05-09T08:00:00.000Z", "cwd": "/home/dev/infra",
                    "originator": "codex_cli_rs", "cli_version": "0.135.0", "source": "cli"}})
                .to_string(),
            );
            append(
                &rollout,
                &codex_message("user", "Pin the beaverlantern image tag."),
            );
            vec![e("a new day folder", "beaverlantern", Some(CODEX_NEW))]
        }
        Agent::Gemini => {
            let tmp = home.join(".gemini/tmp");
            let fresh = tmp.join("newproj/chats/session-2026-06-01T10-00-5e550000.jsonl");
            append(
                &fresh,
                &serde_json::json!({"sessionId": GEMINI_NEW, "projectHash": "00aa",
                    "startTime": "2026-06-01T10:00:00.000Z",
                    "lastUpdated": "2026-06-01T10:00:00.000Z", "kind": "main"})
                .to_string(),
            );
            append(
                &fresh,
                &serde_json::json!({"id": "e5b40000-5555-4e6f-9a70-000000000001",
                    "timestamp": "2026-06-01T10:00:01.000Z", "type": "user",
                    "content": [{"text": "Why does the narwhalsprocket job skip Mondays?"}]})
                .to_string(),
            );
            vec![e(
                "a new project's chats folder",
                "narwhalsprocket",
                Some(GEMINI_NEW),
            )]
        }
        Agent::Pi => {
            let sessions = home.join(".pi/agent/sessions");
            let fresh = sessions.join(format!(
                "--home-dev-newproj--/2026-06-05T09-00-00-000Z_{PI_NEW}.jsonl"
            ));
            append(
                &fresh,
                &serde_json::json!({"type": "session", "version": 3, "id": PI_NEW,
                    "timestamp": "2026-06-05T09:00:00.000Z", "cwd": "/home/dev/newproj"})
                .to_string(),
            );
            append(
                &fresh,
                &pi_message(
                    "f0000001",
                    "",
                    "user",
                    "Make the gazellebucket upload resumable.",
                ),
            );
            vec![e("a new session folder", "gazellebucket", Some(PI_NEW))]
        }
        Agent::Qwen => {
            append(
                &home.join(format!(".qwen/projects/-home-dev-api/chats/{QWEN_NEW}.jsonl")),
                &serde_json::json!({"uuid": "q-new-01", "parentUuid": null, "sessionId": QWEN_NEW,
                    "timestamp": "2026-08-19T09:00:00.000Z", "type": "user", "cwd": "/home/dev/api",
                    "version": "0.21.13", "gitBranch": "main",
                    "message": {"role": "user", "parts": [{"text": "Add a cheetahmortar health check."}]}})
                .to_string(),
            );
            vec![e("a new project folder", "cheetahmortar", Some(QWEN_NEW))]
        }
        Agent::Copilot => {
            let state = home.join(".copilot/session-state");
            let fresh = state.join(COPILOT_NEW).join("events.jsonl");
            append(
                &fresh,
                &serde_json::json!({"type": "session.start",
                    "data": {"sessionId": COPILOT_NEW, "version": 1, "producer": "copilot-agent",
                        "copilotVersion": "1.0.68", "startTime": "2026-04-22T09:00:00.000Z",
                        "context": {"cwd": "/home/dev/webhooks"}},
                    "id": "ev-01", "timestamp": "2026-04-22T09:00:00.000Z", "parentId": null})
                .to_string(),
            );
            append(
                &fresh,
                &serde_json::json!({"type": "user.message",
                    "data": {"content": "Why is the yakpendulum queue empty?",
                        "transformedContent": "Why is the yakpendulum queue empty?",
                        "attachments": [], "interactionId": "int-1"},
                    "id": "ev-02", "timestamp": "2026-04-22T09:00:05.000Z", "parentId": "ev-01"})
                .to_string(),
            );
            vec![e(
                "a new session-state folder",
                "yakpendulum",
                Some(COPILOT_NEW),
            )]
        }
        Agent::Aider | Agent::OpenCode | Agent::Goose | Agent::Crush | Agent::Zed => Vec::new(),
        Agent::Cursor => {
            append(
                &home.join(format!(
                    ".cursor/projects/-home-dev-shop/agent-transcripts/{CURSOR_NEW}/{CURSOR_NEW}.jsonl"
                )),
                &serde_json::json!({"role": "user", "message": {"content": [
                    {"type": "text", "text": "<user_query>\nWhy does the dingoharp import stall?\n</user_query>"}]}})
                .to_string(),
            );
            vec![e("a new transcript folder", "dingoharp", Some(CURSOR_NEW))]
        }
        Agent::Kimi => {
            let context = home.join(format!(
                ".kimi/sessions/{KIMI_WORKDIR}/{KIMI_NEW}/context.jsonl"
            ));
            append(&context, r#"{"role": "_checkpoint", "id": 0}"#);
            append(
                &context,
                &serde_json::json!({"role": "user",
                    "content": "Why does the mongoosetrellis job run twice?"})
                .to_string(),
            );
            vec![e("a new session folder", "mongoosetrellis", Some(KIMI_NEW))]
        }
        Agent::KimiCode => {
            let wire = home.join(format!(
                ".kimi-code/sessions/{KIMI_CODE_WORKDIR}/{KIMI_CODE_NEW}/agents/main/wire.jsonl"
            ));
            append(
                &wire,
                r#"{"type":"metadata","protocol_version":"1.4","created_at":1785700000000}"#,
            );
            append(
                &wire,
                &serde_json::json!({"type": "context.append_message", "message": {"role": "user",
                    "content": [{"type": "text", "text": "Why is the pangolinvoucher total negative?"}],
                    "toolCalls": [], "origin": {"kind": "user"}}, "time": 1785700001000_i64})
                .to_string(),
            );
            vec![e(
                "a new session folder",
                "pangolinvoucher",
                Some(KIMI_CODE_NEW),
            )]
        }
        Agent::IFlow => {
            append(
                &home.join(format!(
                    ".iflow/projects/-home-dev-payroll/{IFLOW_NEW}.jsonl"
                )),
                &iflow_line(
                    IFLOW_NEW,
                    "f2000000-0000-4000-8000-000000000001",
                    None,
                    "Why is the jackalmeridian payslip blank?",
                ),
            );
            vec![e("a new project folder", "jackalmeridian", Some(IFLOW_NEW))]
        }
        Agent::Continue => {
            // Every session sits in the one `sessions/` folder.
            let doc = serde_json::json!({"sessionId": CONTINUE_NEW, "title": "New Session",
                "workspaceDirectory": "/home/dev/ledger", "history": [
                    {"message": {"role": "user",
                        "content": "Why does the tamarinjournal import skip weekends?"},
                     "contextItems": []}]});
            std::fs::write(
                home.join(format!(".continue/sessions/{CONTINUE_NEW}.json")),
                serde_json::to_vec_pretty(&doc).expect("json"),
            )
            .expect("write");
            vec![e(
                "a new session file",
                "tamarinjournal",
                Some(CONTINUE_NEW),
            )]
        }
        Agent::Amp => {
            // Every thread sits in the one `threads/` folder.
            let doc = serde_json::json!({"v": 1, "id": AMP_NEW, "created": 1785300000000_i64,
                "env": {"initial": {"trees": [{"uri": "file:///home/dev/payments",
                    "displayName": "payments"}]}},
                "messages": [{"role": "user", "messageId": 1,
                    "meta": {"sentAt": 1785300001000_i64},
                    "content": [{"type": "text",
                        "text": "Why does the lynxmargin fee round down?"}]}]});
            std::fs::write(
                home.join(format!(".local/share/amp/threads/{AMP_NEW}.json")),
                serde_json::to_vec_pretty(&doc).expect("json"),
            )
            .expect("write");
            vec![e("a new thread file", "lynxmargin", Some(AMP_NEW))]
        }
        Agent::Cline => {
            // A new SDK session: its folder, transcript and manifest.
            let dir = home.join(format!(".cline/data/sessions/{CLINE_NEW}"));
            std::fs::create_dir_all(&dir).expect("mkdir");
            let messages = serde_json::json!({"version": 1, "agent": "lead", "sessionId": CLINE_NEW,
                "messages": [{"id": "m1", "role": "user", "ts": 1785700000000_i64,
                    "content": [{"type": "text", "text": "Why does the wallabyaudit job time out?"}]}]});
            std::fs::write(
                dir.join(format!("{CLINE_NEW}.messages.json")),
                messages.to_string(),
            )
            .expect("messages");
            let manifest = serde_json::json!({"version": 1, "session_id": CLINE_NEW,
                "started_at": "2026-08-02T09:06:40.000Z", "cwd": "/home/dev/ledger"});
            std::fs::write(dir.join(format!("{CLINE_NEW}.json")), manifest.to_string())
                .expect("manifest");
            vec![e(
                "a new SDK session folder",
                "wallabyaudit",
                Some(CLINE_NEW),
            )]
        }
        Agent::RooCode | Agent::KiloCode => {
            // A new task folder: its history item (Roo Code), then its UI messages.
            let (ext, id, word) = match agent {
                Agent::RooCode => ("rooveterinaryinc.roo-cline", ROO_NEW, "narwhalqueue"),
                _ => ("kilocode.kilo-code", KILO_NEW, "tapirexport"),
            };
            let dir = home.join(format!("{VSCODE}/{ext}/tasks/{id}"));
            std::fs::create_dir_all(&dir).expect("mkdir");
            if agent == Agent::RooCode {
                let item = serde_json::json!({"id": id, "number": 3, "ts": 1785700000000_i64,
                    "task": "queue", "tokensIn": 0, "tokensOut": 0, "totalCost": 0,
                    "workspace": "/home/dev/webhooks"});
                std::fs::write(dir.join("history_item.json"), item.to_string()).expect("item");
            }
            let ui = serde_json::json!([{"ts": 1785700000000_i64, "type": "say", "say": "task",
                "text": format!("Why does the {word} job stall?")}]);
            std::fs::write(dir.join("ui_messages.json"), ui.to_string()).expect("ui");
            vec![e("a new task folder", word, Some(id))]
        }
        Agent::OpenHands => {
            // A new conversation folder: its events, then its state.
            let dir = home.join(format!(
                ".openhands/conversations/{}",
                OPENHANDS_NEW.replace('-', "")
            ));
            std::fs::create_dir_all(dir.join("events")).expect("mkdir");
            let id = "f0000000-0000-4000-8000-000000000001";
            std::fs::write(
                dir.join(format!("events/event-00000-{id}.json")),
                openhands_message(
                    id,
                    "__root__",
                    "user",
                    "Why does the lynxmargin fee round down?",
                ),
            )
            .expect("event");
            let state = serde_json::json!({"id": OPENHANDS_NEW,
                "agent": {"kind": "Agent", "llm": {"model": "anthropic/claude-sonnet-4-5"}},
                "workspace": {"kind": "LocalWorkspace", "working_dir": "/home/dev/payments"},
                "execution_status": "running", "max_iterations": 500});
            std::fs::write(dir.join("base_state.json"), state.to_string()).expect("state");
            vec![e(
                "a new conversation folder",
                "lynxmargin",
                Some(OPENHANDS_NEW),
            )]
        }
    }
}

/// One Kimi CLI assistant record of a session's `context.jsonl`.
/// A Kimi Code wire record: the model's text streamed as a loop event.
fn kimi_code_text(text: &str) -> String {
    serde_json::json!({"type": "context.append_loop_event", "event": {"type": "content.part",
        "uuid": "7d1e0000-0000-4000-8000-000000000099", "turnId": "1", "step": 1,
        "stepUuid": "7d1e0000-0000-4000-8000-000000000098", "part": {"type": "text", "text": text}},
        "time": 1785612990000_i64})
    .to_string()
}

fn kimi_assistant(text: &str) -> String {
    serde_json::json!({"role": "assistant", "content": [{"type": "text", "text": text}]})
        .to_string()
}

/// One iFlow line (Claude Code's envelope with a `session-` id): a user message when there is
/// no parent, else the assistant's answer.
fn iflow_line(session: &str, uuid: &str, parent: Option<&str>, text: &str) -> String {
    let (kind, message) = match parent {
        None => ("user", serde_json::json!({"role": "user", "content": text})),
        Some(_) => (
            "assistant",
            serde_json::json!({"role": "assistant", "type": "message",
                "content": [{"type": "text", "text": text}]}),
        ),
    };
    serde_json::json!({"uuid": uuid, "parentUuid": parent, "sessionId": session,
        "timestamp": "2026-07-04T08:00:00.000Z", "type": kind, "isSidechain": false,
        "userType": "external", "message": message, "cwd": "/home/dev/invoices"})
    .to_string()
}

/// One Pi `message` entry on the active branch (`parent` empty for the first).
fn pi_message(id: &str, parent: &str, role: &str, text: &str) -> String {
    let parent = (!parent.is_empty()).then_some(parent);
    let mut message = serde_json::json!({"role": role,
        "content": [{"type": "text", "text": text}], "timestamp": 1780650000000_u64});
    if role == "assistant" {
        message["api"] = "anthropic-messages".into();
        message["provider"] = "anthropic".into();
        message["model"] = "claude-sonnet-4-5".into();
        message["stopReason"] = "stop".into();
    }
    serde_json::json!({"type": "message", "id": id, "parentId": parent,
        "timestamp": "2026-06-05T09:00:10.000Z", "message": message})
    .to_string()
}

/// Whether the episodes lane returns `want`'s word from its agent and session.
fn found(data: &std::path::Path, want: &Expect) -> Result<(), String> {
    let resp = search(data, want.word, "episodes");
    let hits = items(&resp, "episodes");
    let ok = hits.iter().any(|it| {
        let surface = it["surface"].as_str().unwrap_or("");
        Agent::from_source(surface) == Some(want.agent)
            && want
                .session
                .is_none_or(|s| it["session_id"].as_str() == Some(s))
    });
    if ok {
        return Ok(());
    }
    let seen: Vec<String> = hits
        .iter()
        .map(|it| format!("{} {}", it["surface"], it["session_id"]))
        .collect();
    Err(format!(
        "{} ({}): {} not found from {:?}; hits {seen:?}",
        want.agent.label(),
        want.what,
        want.word,
        want.session
    ))
}

/// Polls until every write is searchable (or fails at the deadline naming the missed ones).
fn wait_for_all(h: &AgentHome, watch: &Watcher, expects: &[Expect], phase: &str) {
    let started = Instant::now();
    loop {
        let missing: Vec<String> = expects
            .iter()
            .filter_map(|want| found(&h.data(), want).err())
            .collect();
        if missing.is_empty() {
            return;
        }
        assert!(
            started.elapsed() < DEADLINE,
            "the watcher missed, {phase}:\n{}\nwatcher said: {:?}",
            missing.join("\n"),
            watch.lines()
        );
        std::thread::sleep(Duration::from_millis(300));
    }
}

#[test]
fn watch_follows_every_agent_in_the_registry() {
    let h = AgentHome::new();
    std::fs::create_dir_all(h.data()).expect("data dir");
    std::fs::write(
        h.data().join("config.toml"),
        "[lanes]\ntimeout_ms = 10000\n",
    )
    .expect("config");
    // No roots named: the watch finds every agent's default store in the home, and the history
    // Aider keeps in the repository it runs in.
    let watch = Watcher::spawn(h.command(&["index", "--watch", "--quiet"]));
    assert!(
        watch.banner.contains("file-system notifications"),
        "the real watcher, not polling: {}",
        watch.banner
    );
    // The first pass has stored the fixtures' episodes once one of their words is searchable.
    let started = Instant::now();
    while search(&h.data(), "reconciliation", "episodes")["lanes"]["episodes"]["items"]
        .as_array()
        .is_none_or(Vec::is_empty)
    {
        assert!(started.elapsed() < DEADLINE, "{:?}", watch.lines());
        std::thread::sleep(Duration::from_millis(200));
    }

    // First only writes into stores the watch already knows, so that no new folder triggers a
    // full pass that would hide a change the watch did not map to its store; then new sessions
    // in new folders.
    let in_place: Vec<Expect> = Agent::ALL
        .into_iter()
        .flat_map(|a| write_in_place(&h, a))
        .collect();
    wait_for_all(&h, &watch, &in_place, "in place");
    let new: Vec<Expect> = Agent::ALL
        .into_iter()
        .flat_map(|a| write_new_session(&h, a))
        .collect();
    wait_for_all(&h, &watch, &new, "in new folders");
    let expects: Vec<&Expect> = in_place.iter().chain(&new).collect();
    let agents: std::collections::BTreeSet<&str> =
        expects.iter().map(|e| e.agent.as_str()).collect();
    assert_eq!(agents.len(), Agent::ALL.len(), "every agent wrote");
}
