//! `knowledge.dispatch/v1` and `knowledge.handoff/v1` (contract §14, §14.1): the request checked
//! once at the boundary, and the documents the engine returns and writes to the outbox.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::codes::{Code, Issue};
use super::kinds::{ActorKind, DispatchRun, Execution, ReviewStatus};

pub const DISPATCH_SCHEMA: &str = "knowledge.dispatch/v1";
pub const HANDOFF_SCHEMA: &str = "knowledge.handoff/v1";
pub const MAX_TASK_CHARS: usize = 8000;
/// Most entries `task.acceptance` and `task.constraints` may each hold.
pub const MAX_TASK_LIST_ITEMS: usize = 50;
/// Longest entry of `task.acceptance` or `task.constraints`, in characters.
pub const MAX_TASK_ITEM_CHARS: usize = 2000;

/// Who the task goes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// The skill named by the task (most uses), else the best actor of a search on the task.
    Auto,
    /// An explicit actor id (`actor:…`), checked to exist.
    Actor(String),
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Task {
    pub text: String,
    #[serde(default)]
    pub acceptance: Vec<String>,
    #[serde(default)]
    pub constraints: Vec<String>,
}

/// A checked dispatch request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DispatchRequest {
    pub request_id: Option<String>,
    pub task: Task,
    pub target: Target,
    pub dry_run: bool,
}

impl DispatchRequest {
    pub fn dry_run(task: Task) -> Self {
        DispatchRequest {
            request_id: None,
            task,
            target: Target::Auto,
            dry_run: true,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DispatchResponse {
    pub schema: String,
    pub request_id: Option<String>,
    pub mode: DispatchRun,
    pub target: Option<DispatchTarget>,
    pub context_pack: ContextPack,
    pub evidence: DispatchEvidence,
    pub warnings: Vec<Issue>,
    pub assignment: Option<Assignment>,
    /// The handoff package this plan becomes (also written to the outbox on commit).
    pub handoff: Option<Handoff>,
    pub errors: Vec<Issue>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DispatchTarget {
    pub actor_id: String,
    pub name: String,
    pub kind: ActorKind,
    pub source: String,
    pub why: Vec<String>,
    pub dispatch: super::DispatchInfo,
    /// What the actor's work was about, for the person approving the package (additive in v1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The working directory of the actor's (root) session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ContextPack {
    pub goal: String,
    pub acceptance: Vec<String>,
    pub constraints: Vec<String>,
    pub prior_episodes: Vec<PriorEpisode>,
    pub code_refs: Vec<CodeRef>,
    pub skills: Vec<super::SkillUses>,
    pub risks: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PriorEpisode {
    pub id: String,
    pub session_id: String,
    pub seq: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
    pub why: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CodeRef {
    pub id: String,
    /// The repository root `path` is relative to (an optional v1 addition).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    pub path: String,
    pub start_line: u64,
    pub end_line: u64,
    pub why: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DispatchEvidence {
    pub episodes: Vec<String>,
    pub code: Vec<String>,
    pub skills: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Assignment {
    pub assignment_id: String,
    pub status: ReviewStatus,
    /// False when the same commit was already recorded (KD-2).
    pub created: bool,
    pub outbox_path: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Handoff {
    pub schema: String,
    pub assignment_id: String,
    pub target: HandoffTarget,
    pub task: Task,
    pub tool_calls: Vec<ToolCall>,
    pub execution: Execution,
    pub requires: String,
    pub context_pack: ContextPack,
    pub review: Review,
    pub created_at: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HandoffTarget {
    pub actor_id: String,
    pub name: String,
    pub kind: ActorKind,
    pub dispatch: super::DispatchInfo,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub tool: String,
    pub arguments: Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Review {
    pub status: ReviewStatus,
    pub decided_by: Option<String>,
    pub decided_at: Option<String>,
    pub reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DispatchErrorResponse {
    pub schema: String,
    pub request_id: Option<String>,
    pub warnings: Vec<Issue>,
    pub errors: Vec<Issue>,
}

/// Validate a dispatch request document; every problem names its field.
pub fn validate_dispatch(text: &str) -> Result<(DispatchRequest, Vec<Issue>), Vec<Issue>> {
    let v: Value = match super::strict_json::parse(text) {
        Ok(v) => v,
        Err(e) => return Err(vec![super::request::unparsable(e)]),
    };
    validate_dispatch_value(&v)
}

pub fn validate_dispatch_value(v: &Value) -> Result<(DispatchRequest, Vec<Issue>), Vec<Issue>> {
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    let err = |errors: &mut Vec<Issue>, field: &str, msg: String| {
        errors.push(Issue::field(
            Code::InvalidRequest,
            field,
            format!("{field}: {msg}"),
        ))
    };
    let Some(obj) = v.as_object() else {
        err(&mut errors, "$", "the request must be a JSON object".into());
        return Err(errors);
    };
    for key in obj.keys() {
        if ![
            "schema",
            "request_id",
            "task",
            "target",
            "actor_id",
            "dry_run",
        ]
        .contains(&key.as_str())
        {
            warnings.push(Issue::field(
                Code::IgnoredField,
                key,
                format!("unknown field {key} was ignored"),
            ));
        }
    }
    if obj.get("schema").and_then(Value::as_str) != Some(DISPATCH_SCHEMA) {
        err(
            &mut errors,
            "schema",
            format!("must be exactly \"{DISPATCH_SCHEMA}\""),
        );
    }
    let request_id = obj
        .get("request_id")
        .and_then(Value::as_str)
        .map(str::to_string);
    let task = match obj.get("task") {
        Some(Value::Object(t)) => task_from(t, &mut errors),
        _ => {
            err(&mut errors, "task", "is required: {\"text\": \"…\"}".into());
            None
        }
    };
    let target_field = match obj.get("target") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s == "auto" => None,
        Some(Value::String(s)) if s.starts_with("actor:") && s.len() > 6 => Some(s.clone()),
        Some(_) => {
            err(
                &mut errors,
                "target",
                "must be \"auto\" or \"actor:<id>\"".into(),
            );
            None
        }
    };
    let actor_field = match obj.get("actor_id") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if !s.trim().is_empty() && !s.contains('\0') => Some(s.clone()),
        Some(_) => {
            err(
                &mut errors,
                "actor_id",
                "must be an actor id string or null".into(),
            );
            None
        }
    };
    if let (Some(t), Some(a)) = (&target_field, &actor_field) {
        if t != a {
            err(
                &mut errors,
                "actor_id",
                "names a different actor than target; give one".into(),
            );
        }
    }
    let dry_run = match obj.get("dry_run") {
        None | Some(Value::Null) => true,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            err(&mut errors, "dry_run", "must be true or false".into());
            true
        }
    };
    match (task, errors.is_empty()) {
        (Some(task), true) => Ok((
            DispatchRequest {
                request_id,
                task,
                target: match target_field.or(actor_field) {
                    Some(a) => Target::Actor(a),
                    None => Target::Auto,
                },
                dry_run,
            },
            warnings,
        )),
        _ => Err(errors),
    }
}

fn task_from(t: &Map<String, Value>, errors: &mut Vec<Issue>) -> Option<Task> {
    let mut push = |field: &str, msg: &str| {
        errors.push(Issue::field(
            Code::InvalidRequest,
            field,
            format!("{field}: {msg}"),
        ))
    };
    let text = match t.get("text") {
        Some(Value::String(s)) if s.contains('\0') => {
            push("task.text", "must not contain a NUL character");
            return None;
        }
        Some(Value::String(s)) if s.trim().is_empty() => {
            push("task.text", "must not be empty");
            return None;
        }
        Some(Value::String(s)) if s.chars().count() > MAX_TASK_CHARS => {
            push("task.text", "is longer than 8000 characters");
            return None;
        }
        Some(Value::String(s)) => s.clone(),
        _ => {
            push("task.text", "is required");
            return None;
        }
    };
    let mut list = |key: &str| -> Vec<String> {
        match t.get(key) {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) if a.len() > MAX_TASK_LIST_ITEMS => {
                push(
                    &format!("task.{key}"),
                    &format!(
                        "has {} entries; at most {MAX_TASK_LIST_ITEMS} are allowed",
                        a.len()
                    ),
                );
                Vec::new()
            }
            Some(Value::Array(a)) => {
                let mut out = Vec::new();
                for (i, item) in a.iter().enumerate() {
                    let field = format!("task.{key}[{i}]");
                    match item.as_str() {
                        Some(s) if s.contains('\0') => push(&field, "must not contain NUL"),
                        Some(s) if s.chars().count() > MAX_TASK_ITEM_CHARS => push(
                            &field,
                            &format!("is longer than {MAX_TASK_ITEM_CHARS} characters"),
                        ),
                        Some(s) => out.push(s.to_string()),
                        None => push(&field, "must be a string without NUL"),
                    }
                }
                out
            }
            Some(_) => {
                push(&format!("task.{key}"), "must be an array of strings");
                Vec::new()
            }
        }
    };
    let acceptance = list("acceptance");
    let constraints = list("constraints");
    Some(Task {
        text,
        acceptance,
        constraints,
    })
}
