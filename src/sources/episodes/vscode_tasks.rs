//! Cline, Roo Code and Kilo Code's task folders, one layout read by one module: the VS Code
//! extensions keep each task in `<globalStorage>/<extension id>/tasks/<taskId>/` (Cline
//! `saoudrizwan.claude-dev`, Roo Code `rooveterinaryinc.roo-cline`, Kilo Code's extension before
//! it moved to OpenCode's database `kilocode.kilo-code`), Cline's CLI and JetBrains plugin the
//! same folders under `~/.cline/data/tasks/` (`CLINE_DATA_DIR`, else `$CLINE_DIR/data`), the Roo
//! Code CLI under `~/.vscode-mock/global-storage/tasks/`. Each agent is a small [`Flavour`] of
//! this reader: its extension id, where its index is, how a child task names its parent.
//!
//! A task folder holds `ui_messages.json` (`ClineMessage[]`: `{ts (ms), type: ask|say, ask|say,
//! text, partial?, images?}`, what the person saw, each with its real time),
//! `api_conversation_history.json` (the Anthropic-shaped messages sent to the model, with the
//! `<environment_details>` the extension adds), `task_metadata.json` (`files_in_context`,
//! `model_usage[{ts, model_id, model_provider_id, mode}]`) and, in Roo Code, `history_item.json`
//! (`{id, rootTaskId?, parentTaskId?, task, ts, workspace, mode, status, childIds[] …}`). Cline
//! keeps its history items in one index beside `tasks/`: `state/taskHistory.json`
//! (`HistoryItem[]`: `{id, ts, task, cwdOnTaskInitialization, modelId …}`). Every file is
//! rewritten whole (`JSON.stringify`) on every change.
//!
//! The store is `ui_messages.json`: the events are read from it (see [`ui`]), with their times.
//! The session id is the folder's name (Cline: `Date.now()`; Roo, Kilo: a UUID). The cwd is the
//! history item's (`cwdOnTaskInitialization`, `workspace`), else the `# Current Working
//! Directory (<path>) Files` / `# Current Workspace Directory (<path>) Files` line of the first
//! environment details. A Roo Code task whose history item names a `parentTaskId` is that
//! task's subagent (`new_task`), titled with its task. The sidecars count in the store's
//! fingerprint ([`AgentReader::parts_modified`]), so a history item written alone is seen.
//!
//! Cline's SDK/CLI sessions (2026) are another layout, read by [`sdk`]:
//! `~/.cline/data/sessions/<id>/<id>.json` (a manifest) and `<id>.messages.json`, a subagent's
//! `<agentId>.messages.json` beside its root's.
//!
//! Checked against cline/cline @ 21cb8d2525be (`apps/vscode/src/shared/ExtensionMessage.ts`,
//! `HistoryItem.ts`, `core/storage/disk.ts`, `sdk/legacy-state-reader.ts`,
//! `sdk/packages/core/docs/messages-contract-v1.md`, `services/session-artifacts.ts`,
//! `session/models/session-graph.ts`, `apps/cli/src/commands/program.ts`) and RooCodeInc/Roo-Code
//! @ cb836567180a (`packages/types/src/{message,history,vscode-extension-host}.ts`,
//! `src/core/tools/{NewTaskTool,SkillTool}.ts`, `apps/cli/src/index.ts`,
//! `packages/core/src/cli`). Not confirmed: no classic task folder is public under a licence this
//! project may use, so the fixtures follow the writers' types, not a capture; Kilo Code's legacy
//! extension is read as Roo Code's fork (its sources were not fetched).

mod sdk;
mod ui;

use std::collections::HashMap;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use serde_json::Value;

use super::agent::{
    file_mtime, AgentReader, Env, EventSink, Head, Rank, ReadEnd, ReadLimits, Recognised, Resume,
    StoreKind,
};
use super::agents::Agent;
use super::discover::{Layout, TranscriptFile};
use super::model::ParseStats;
use super::parser::{cap_chars, str_of, Ctx};

/// Largest file read whole (a long task's UI messages hold every diff shown); a larger one is
/// counted oversized.
const MAX_JSON_BYTES: u64 = 64 * 1024 * 1024;
/// How much of the model conversation is searched for the environment details' working
/// directory (it is in the first user message).
const ENV_DETAILS_BYTES: u64 = 1024 * 1024;

/// The store of a task folder.
pub(crate) const UI_MESSAGES: &str = "ui_messages.json";
const API_HISTORY: &str = "api_conversation_history.json";
const HISTORY_ITEM: &str = "history_item.json";
const TASK_METADATA: &str = "task_metadata.json";

/// The globalStorage folder of each extension (VS Code lowercases the id).
const CLINE_EXT: &str = "saoudrizwan.claude-dev";
const ROO_EXT: &str = "rooveterinaryinc.roo-cline";
pub(crate) const KILO_EXT: &str = "kilocode.kilo-code";

/// What sets one agent's task folders apart.
pub(crate) struct Flavour {
    pub agent: Agent,
    /// Its folder under a VS Code `globalStorage`.
    pub extension: &'static str,
}

pub(crate) const CLINE: Flavour = Flavour {
    agent: Agent::Cline,
    extension: CLINE_EXT,
};
pub(crate) const ROO: Flavour = Flavour {
    agent: Agent::RooCode,
    extension: ROO_EXT,
};
pub(crate) const KILO: Flavour = Flavour {
    agent: Agent::KiloCode,
    extension: KILO_EXT,
};

/// Every `User/globalStorage` a VS Code build keeps on Linux: the desktop apps under
/// `$XDG_CONFIG_HOME` (default `~/.config`) and the remote servers under the home.
pub(crate) fn global_storages(env: &Env) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let config = env.dir_or_home("XDG_CONFIG_HOME", ".config");
    if let Some(config) = config {
        for app in ["Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf"] {
            out.push(config.join(app).join("User/globalStorage"));
        }
    }
    if let Some(home) = env.home() {
        for server in [
            ".vscode-server",
            ".vscode-server-insiders",
            ".vscodium-server",
            ".cursor-server",
            ".windsurf-server",
        ] {
            out.push(home.join(server).join("data/User/globalStorage"));
        }
    }
    out
}

/// `tasks/` of `flavour`'s extension in every globalStorage.
pub(crate) fn extension_task_roots(flavour: &Flavour, env: &Env) -> Vec<PathBuf> {
    global_storages(env)
        .into_iter()
        .map(|g| g.join(flavour.extension).join("tasks"))
        .collect()
}

/// Cline's data folder for the CLI and JetBrains: `CLINE_DATA_DIR`, else `$CLINE_DIR/data`,
/// else `~/.cline/data` (`resolveDataDirFromEnv`).
fn cline_data_dir(env: &Env) -> Option<PathBuf> {
    env.dir("CLINE_DATA_DIR")
        .or_else(|| env.dir("CLINE_DIR").map(|d| d.join("data")))
        .or_else(|| env.home().map(|h| h.join(".cline/data")))
}

/// The agent whose task folder (`<ext>/tasks/<id>/`) holds `path`, by the folder's place, and
/// how sure that is; `None` when `path` is not a task folder's `ui_messages.json`.
fn task_folder_agent(path: &Path) -> Option<(Agent, Rank)> {
    if path.file_name()? != UI_MESSAGES {
        return None;
    }
    let task = path.parent()?;
    let id = task.file_name()?.to_str()?;
    // `_index.json`'s folder and the like are no tasks.
    if id.starts_with('_') || id.starts_with('.') {
        return None;
    }
    let tasks = task.parent()?;
    if tasks.file_name()? != "tasks" {
        return None;
    }
    let owner = tasks.parent();
    let owner_name = owner.and_then(Path::file_name).and_then(|n| n.to_str());
    let above = owner
        .and_then(Path::parent)
        .and_then(Path::file_name)
        .and_then(|n| n.to_str());
    let by_place = match (owner_name, above) {
        (Some(CLINE_EXT), _) | (Some("data"), Some(".cline")) => Some(Agent::Cline),
        (Some(ROO_EXT), _) | (Some("global-storage"), Some(".vscode-mock")) => Some(Agent::RooCode),
        (Some(KILO_EXT), _) => Some(Agent::KiloCode),
        _ => None,
    };
    if let Some(agent) = by_place {
        return Some((agent, Rank::Name));
    }
    // A copy elsewhere (`--sessions`): Roo Code writes a history item beside it; a folder without
    // one is read as Cline's when the file opens as UI messages.
    if task.join(HISTORY_ITEM).is_file() {
        return Some((Agent::RooCode, Rank::Record(0)));
    }
    opens_as_ui_messages(path).then_some((Agent::Cline, Rank::Record(0)))
}

/// Whether the file opens as a `ClineMessage[]` (`[{"ts":…,"type":"say",…`).
fn opens_as_ui_messages(path: &Path) -> bool {
    let Ok(file) = crate::sources::regular_file::open(path) else {
        return false;
    };
    let mut head = Vec::new();
    if file.take(4096).read_to_end(&mut head).is_err() {
        return false;
    }
    let head = String::from_utf8_lossy(&head);
    head.trim_start().starts_with('[')
        && head.contains("\"ts\"")
        && (head.contains("\"say\"") || head.contains("\"ask\""))
}

/// Whether `flavour`'s agent claims `path`, and where it sits.
pub(crate) fn recognise_task(flavour: &Flavour, path: &Path) -> Option<Recognised> {
    let (agent, rank) = task_folder_agent(path)?;
    (agent == flavour.agent).then_some(Recognised {
        layout: Layout::Main,
        rank,
    })
}

/// The latest change of a task folder's sidecars (its history item, metadata and model
/// conversation), which count in the store's fingerprint.
pub(crate) fn sidecars_modified(path: &Path) -> Option<SystemTime> {
    if path.file_name()? != UI_MESSAGES {
        return None;
    }
    [HISTORY_ITEM, TASK_METADATA, API_HISTORY]
        .iter()
        .filter_map(|n| {
            std::fs::metadata(path.with_file_name(n))
                .ok()?
                .modified()
                .ok()
        })
        .max()
}

/// The store a changed file of a task folder belongs to: its `ui_messages.json`.
pub(crate) fn task_of_change(changed: &Path) -> Option<PathBuf> {
    let name = changed.file_name()?.to_str()?;
    if ![UI_MESSAGES, HISTORY_ITEM, TASK_METADATA, API_HISTORY].contains(&name) {
        return None;
    }
    let task = changed.parent()?;
    let id = task.file_name()?.to_str()?;
    let in_tasks = task.parent()?.file_name()? == "tasks";
    (in_tasks && !id.starts_with('_') && !id.starts_with('.'))
        .then(|| changed.with_file_name(UI_MESSAGES))
}

/// What is known of a task beside its UI messages.
#[derive(Debug, Default, Clone)]
struct TaskInfo {
    cwd: Option<String>,
    task: Option<String>,
    model: Option<String>,
    mode: Option<String>,
    parent: Option<String>,
}

fn nonblank(v: &Value, key: &str) -> Option<String> {
    str_of(v, key)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// A history item (Roo Code's `history_item.json`, an entry of Cline's `taskHistory.json`).
fn task_info(item: &Value) -> TaskInfo {
    TaskInfo {
        cwd: nonblank(item, "cwdOnTaskInitialization").or_else(|| nonblank(item, "workspace")),
        task: nonblank(item, "task"),
        model: nonblank(item, "modelId"),
        mode: nonblank(item, "mode"),
        parent: nonblank(item, "parentTaskId"),
    }
}

/// Reads a task folder's `ui_messages.json` (and its sidecars) into `sink`: one session.
pub(crate) fn read_task(
    file: &TranscriptFile,
    limits: ReadLimits,
    sink: &mut dyn EventSink,
) -> io::Result<ReadEnd> {
    let path = &file.path;
    let id = path
        .parent()
        .and_then(Path::file_name)
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string();
    let f = crate::sources::regular_file::open(path)?;
    let size = f.metadata()?.len();
    let mut cx = Ctx::default();
    let mut bytes = Vec::new();
    if size > MAX_JSON_BYTES {
        cx.stats.lines += 1;
        cx.stats.skipped_oversized += 1;
    } else {
        f.take(MAX_JSON_BYTES).read_to_end(&mut bytes)?;
    }

    let mut info = match read_json(&path.with_file_name(HISTORY_ITEM)) {
        Some(item) => task_info(&item),
        None => cline_index_entry(path, &id).unwrap_or_default(),
    };
    if let Some(meta) = read_json(&path.with_file_name(TASK_METADATA)) {
        let usage = meta.get("model_usage").and_then(Value::as_array);
        if let Some(last) = usage.and_then(|u| u.last()) {
            if let Some(model) = nonblank(last, "model_id") {
                info.model = Some(model);
            }
            if info.mode.is_none() {
                info.mode = nonblank(last, "mode");
            }
        }
    }
    if info.cwd.is_none() {
        info.cwd = env_details_cwd(&path.with_file_name(API_HISTORY))
            .or_else(|| env_details_in(&String::from_utf8_lossy(&bytes)));
    }

    cx.meta.session_id = (!id.is_empty()).then(|| id.clone());
    cx.meta.cwd = info.cwd.clone();
    cx.meta.model = info.model.as_deref().map(|m| cap_chars(m, 200));
    cx.meta.agent_preset = info.mode.clone();
    if let Some(task) = &info.task {
        cx.set_title(task, 1);
    }
    let child = info.parent.is_some();
    let mut events = Vec::new();
    if !bytes.is_empty() {
        ui::read_messages(&mut cx, &bytes, limits.max_line_bytes, child, &mut events);
    }
    if let Some(parent) = info.parent.filter(|p| *p != id) {
        cx.meta.parent_session_id = Some(parent);
        cx.meta.agent_id = Some(id.clone());
        cx.meta.agent_name = info.mode.clone();
        cx.meta.agent_description = info
            .task
            .as_deref()
            .or(cx.meta.title.as_deref())
            .map(|t| cap_chars(t, 500));
    }
    if cx.meta.last_event_at.is_none() {
        cx.meta.last_event_at = file_mtime(path);
    }
    for ev in events {
        sink.event(ev);
    }
    super::bounds::bound_meta(&mut cx.meta);
    let outcome = cx.outcome.outcome();
    let stats: ParseStats = cx.stats;
    sink.end_session(cx.meta, outcome);
    Ok(ReadEnd {
        start: 0,
        end: size,
        resumed: false,
        cursor: String::new(),
        lines: stats,
        total: stats,
    })
}

/// The most a side file holding one object (a history item, task metadata, an SDK manifest) may
/// hold: a JSONL line's limit. Real ones are a few KB; parsed whole, a large one would cost many
/// times its size.
const SIDE_JSON_BYTES: u64 = super::lines::DEFAULT_MAX_LINE_BYTES as u64;

/// A small JSON side file, parsed; `None` when absent, over [`SIDE_JSON_BYTES`] or not JSON.
fn read_json(path: &Path) -> Option<Value> {
    let bytes = crate::sources::regular_file::read_limited(path, SIDE_JSON_BYTES).ok()?;
    super::bounds::json_document(&bytes)
}

/// The working directory the extension wrote into the first environment details of the model
/// conversation (`# Current Working Directory (/path) Files`, Roo and Kilo: `# Current
/// Workspace Directory (/path) Files`).
fn env_details_cwd(api_history: &Path) -> Option<String> {
    let f = crate::sources::regular_file::open(api_history).ok()?;
    let mut head = Vec::new();
    f.take(ENV_DETAILS_BYTES).read_to_end(&mut head).ok()?;
    env_details_in(&String::from_utf8_lossy(&head))
}

/// [`env_details_cwd`] in text (JSON-escaped or not).
pub(crate) fn env_details_in(text: &str) -> Option<String> {
    for marker in [
        "# Current Working Directory (",
        "# Current Workspace Directory (",
    ] {
        let Some(at) = text.find(marker) else {
            continue;
        };
        let rest = &text[at + marker.len()..];
        let end = rest.find(") Files")?;
        let raw = &rest[..end];
        let path = raw.replace("\\\\", "\\");
        let path = path.trim();
        if !path.is_empty() && !path.contains('\n') && !path.contains("\\n") {
            return Some(path.to_string());
        }
    }
    None
}

/// Cline's index entry of task `id`: `state/taskHistory.json` beside `tasks/`.
fn cline_index_entry(path: &Path, id: &str) -> Option<TaskInfo> {
    let index = path.ancestors().nth(3)?.join("state/taskHistory.json");
    index_by_id(&index)?.get(id).cloned()
}

/// The index as it was last read: its path, its file, size and time, and each task's info.
/// The tasks of one folder are read one after another, so keeping the last index read makes it
/// one parse per folder, not one per task.
type TaskIndex = (
    PathBuf,
    Option<(u64, u64)>,
    u64,
    SystemTime,
    Arc<HashMap<String, TaskInfo>>,
);

static LAST_INDEX: Mutex<Option<TaskIndex>> = Mutex::new(None);

fn index_by_id(index: &Path) -> Option<Arc<HashMap<String, TaskInfo>>> {
    let meta = std::fs::metadata(index).ok()?;
    let (id, len, modified) = (
        crate::sources::regular_file::file_id(index),
        meta.len(),
        meta.modified().ok()?,
    );
    let mut last = LAST_INDEX.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((p, i, l, m, map)) = last.as_ref() {
        if p == index && *i == id && *l == len && *m == modified {
            return Some(map.clone());
        }
    }
    // Entry by entry (`bounds::records`: an index of every task can be large), one of another
    // shape or over the line limit costing itself, not the index.
    let bytes =
        crate::sources::regular_file::read_limited(index, MAX_JSON_BYTES).unwrap_or_default();
    let max = super::lines::DEFAULT_MAX_LINE_BYTES;
    let map: HashMap<String, TaskInfo> =
        super::bounds::records::with_records(&bytes, "", max, |r| {
            r.parsed(max)
                .filter_map(|e| match e {
                    super::bounds::records::Record::Parsed(e) => {
                        Some((nonblank(&e, "id")?, task_info(&e)))
                    }
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    let map = Arc::new(map);
    *last = Some((index.to_path_buf(), id, len, modified, map.clone()));
    Some(map)
}

/// The Cline reader: the extension's and the CLI's task folders, and the SDK's sessions.
pub struct ClineReader;

impl AgentReader for ClineReader {
    fn agent(&self) -> Agent {
        Agent::Cline
    }

    fn name(&self) -> &'static str {
        "cline"
    }

    fn label(&self) -> &'static str {
        "Cline"
    }

    fn store_kind(&self, _path: &Path) -> StoreKind {
        StoreKind::Rewritten
    }

    /// `<globalStorage>/saoudrizwan.claude-dev/tasks` of every VS Code build, then the CLI's
    /// `<data>/tasks` and `<data>/sessions` (`CLINE_SESSION_DATA_DIR` moves the latter).
    fn roots(&self, env: &Env) -> Vec<PathBuf> {
        let mut roots = extension_task_roots(&CLINE, env);
        if let Some(data) = cline_data_dir(env) {
            roots.push(data.join("tasks"));
            roots.push(
                env.dir("CLINE_SESSION_DATA_DIR")
                    .unwrap_or_else(|| data.join("sessions")),
            );
        }
        roots
    }

    fn recognise(&self, path: &Path, _head: &mut Head<'_>) -> Option<Recognised> {
        recognise_task(&CLINE, path).or_else(|| sdk::recognise(path))
    }

    fn read(
        &self,
        file: &TranscriptFile,
        _from: Option<Resume<'_>>,
        limits: ReadLimits,
        sink: &mut dyn EventSink,
    ) -> io::Result<ReadEnd> {
        if sdk::is_messages_file(&file.path) {
            return sdk::read_session(file, limits, sink);
        }
        read_task(file, limits, sink)
    }

    /// `cline --id <session-id>` ("Resume an existing session by ID"); for a task of the VS
    /// Code extension it is the CLI's command, which reads the same tasks only once they are
    /// under `~/.cline/data` (not confirmed for the extension's own folders).
    fn resume_command(&self, quoted_session_id: &str) -> Option<String> {
        Some(format!("cline --id {quoted_session_id}"))
    }

    fn parts_modified(&self, path: &Path) -> Option<SystemTime> {
        sidecars_modified(path).or_else(|| sdk::manifest_modified(path))
    }

    fn store_of_change(&self, changed: &Path) -> Option<PathBuf> {
        task_of_change(changed).or_else(|| sdk::session_of_change(changed))
    }
}

/// The Roo Code reader: the extension's task folders and the Roo Code CLI's.
pub struct RooReader;

impl AgentReader for RooReader {
    fn agent(&self) -> Agent {
        Agent::RooCode
    }

    fn name(&self) -> &'static str {
        "roo_code"
    }

    fn label(&self) -> &'static str {
        "Roo Code"
    }

    fn store_kind(&self, _path: &Path) -> StoreKind {
        StoreKind::Rewritten
    }

    /// `<globalStorage>/rooveterinaryinc.roo-cline/tasks` of every VS Code build (the setting
    /// `roo-cline.customStoragePath` moves it: name it with `--sessions`), then the CLI's
    /// `~/.vscode-mock/global-storage/tasks`.
    fn roots(&self, env: &Env) -> Vec<PathBuf> {
        let mut roots = extension_task_roots(&ROO, env);
        if let Some(home) = env.home() {
            roots.push(home.join(".vscode-mock/global-storage/tasks"));
        }
        roots
    }

    fn recognise(&self, path: &Path, _head: &mut Head<'_>) -> Option<Recognised> {
        recognise_task(&ROO, path)
    }

    fn read(
        &self,
        file: &TranscriptFile,
        _from: Option<Resume<'_>>,
        limits: ReadLimits,
        sink: &mut dyn EventSink,
    ) -> io::Result<ReadEnd> {
        read_task(file, limits, sink)
    }

    /// The Roo Code CLI's `roo --session-id <id>` ("Resume a specific task by session ID").
    fn resume_command(&self, quoted_session_id: &str) -> Option<String> {
        Some(format!("roo --session-id {quoted_session_id}"))
    }

    fn parts_modified(&self, path: &Path) -> Option<SystemTime> {
        sidecars_modified(path)
    }

    fn store_of_change(&self, changed: &Path) -> Option<PathBuf> {
        task_of_change(changed)
    }
}

#[cfg(test)]
mod tests;
