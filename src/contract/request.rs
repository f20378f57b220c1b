//! `knowledge.search/v1` requests: validation from untrusted JSON into [`SearchRequest`].
//!
//! Validation walks a `serde_json::Value` by hand instead of deriving `Deserialize` so that every
//! rejection names the exact field (`filters.since`, `include[1]`) and unknown fields become
//! warnings rather than errors (DECISIONS §8). All problems are reported at once, not the first.

use chrono::{DateTime, FixedOffset};
use serde_json::{Map, Value};

use super::codes::{Code, Issue};
use super::strict_json::{self, StrictJsonError};

pub const SEARCH_SCHEMA: &str = "knowledge.search/v1";
pub const MAX_QUERY_CHARS: usize = 2000;
pub const LIMIT_RANGE: (u64, u64) = (1, 50);
pub const MAX_TOKENS_RANGE: (u64, u64) = (500, 20000);
pub const SNIPPET_CHARS_RANGE: (u64, u64) = (80, 1000);
pub const DEFAULT_LIMIT: u32 = 10;
pub const DEFAULT_MAX_TOKENS: u32 = 4000;
pub const DEFAULT_SNIPPET_CHARS: u32 = 240;
/// Most values one filter list (`filters.workspaces`, `filters.session_ids`, …) may hold: a
/// list is an OR of its values, and thousands of them would exceed what SQLite evaluates.
pub const MAX_FILTER_VALUES: usize = 100;
/// Longest filter value, in characters (a path, an id, a skill name).
pub const MAX_FILTER_VALUE_CHARS: usize = 1024;

mod vocab;
pub use vocab::{Include, Lane, Mode, OutcomeFilter, Provenance};

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filters {
    /// Workspace roots, normalised without a trailing separator.
    pub workspaces: Vec<String>,
    pub session_ids: Vec<String>,
    pub actor_ids: Vec<String>,
    pub since: Option<DateTime<FixedOffset>>,
    pub until: Option<DateTime<FixedOffset>>,
    pub outcome: Option<OutcomeFilter>,
    pub skills: Vec<String>,
    pub paths: Vec<String>,
}

impl Filters {
    pub fn outcome(&self) -> OutcomeFilter {
        self.outcome.unwrap_or(OutcomeFilter::Any)
    }
}

/// A validated request: nothing in it can be out of range.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchRequest {
    pub request_id: Option<String>,
    pub query: String,
    pub mode: Mode,
    pub filters: Filters,
    pub include: Include,
    pub limit: u32,
    pub max_tokens: u32,
    pub snippet_chars: u32,
    pub provenance: Provenance,
    pub trace: bool,
}

impl SearchRequest {
    /// A request with every default, for front ends that build one from a query box.
    pub fn new(query: impl Into<String>) -> Self {
        SearchRequest {
            request_id: None,
            query: query.into(),
            mode: Mode::Auto,
            filters: Filters::default(),
            include: Lane::ALL.into_iter().collect(),
            limit: DEFAULT_LIMIT,
            max_tokens: DEFAULT_MAX_TOKENS,
            snippet_chars: DEFAULT_SNIPPET_CHARS,
            provenance: Provenance::Strict,
            trace: false,
        }
    }

    /// The request as contract JSON (used by front ends that build requests from flags).
    pub fn to_json(&self) -> Value {
        let times = |t: &Option<DateTime<FixedOffset>>| match t {
            Some(t) => Value::String(t.to_rfc3339()),
            None => Value::Null,
        };
        serde_json::json!({
            "schema": SEARCH_SCHEMA,
            "request_id": self.request_id,
            "query": self.query,
            "mode": self.mode.as_str(),
            "filters": {
                "workspaces": self.filters.workspaces,
                "session_ids": self.filters.session_ids,
                "actor_ids": self.filters.actor_ids,
                "since": times(&self.filters.since),
                "until": times(&self.filters.until),
                "outcome": self.filters.outcome().as_str(),
                "skills": self.filters.skills,
                "paths": self.filters.paths,
            },
            "include": self.include.iter().map(|l| l.as_str()).collect::<Vec<_>>(),
            "limit": self.limit,
            "budget": {"max_tokens": self.max_tokens, "snippet_chars": self.snippet_chars},
            "provenance": self.provenance.as_str(),
            "trace": self.trace,
        })
    }
}

/// The outcome of validation: the checked request and its warnings, or every error found.
pub type Validated = Result<(SearchRequest, Vec<Issue>), Vec<Issue>>;

/// Validate request text (malformed JSON is an invalid request naming the field `$`).
pub fn validate_search(text: &str) -> Validated {
    match strict_json::parse(text) {
        Ok(v) => validate_search_value(&v),
        Err(e) => Err(vec![unparsable(e)]),
    }
}

/// The error for a request text that is not one JSON document (shared with dispatch).
pub(crate) fn unparsable(e: StrictJsonError) -> Issue {
    match e {
        StrictJsonError::Malformed { line, column } => Issue::field(
            Code::InvalidRequest,
            "$",
            format!("$: malformed JSON at line {line} column {column}"),
        ),
        StrictJsonError::DuplicateKey { field } => {
            let shown = clip(&field);
            Issue::field(
                Code::InvalidRequest,
                &shown,
                format!("{shown}: the key appears twice; give it once"),
            )
        }
    }
}

/// Validate an already parsed request document.
pub fn validate_search_value(v: &Value) -> Validated {
    let mut c = Checker::default();
    let Some(obj) = v.as_object() else {
        c.error("$", "the request must be a JSON object");
        return Err(c.errors);
    };
    c.unknown_fields(obj, "", TOP_FIELDS);

    match obj.get("schema") {
        Some(Value::String(s)) if s == SEARCH_SCHEMA => {}
        Some(Value::String(s)) => c.error(
            "schema",
            format!("must be exactly \"{SEARCH_SCHEMA}\", got \"{}\"", clip(s)),
        ),
        Some(_) => c.error("schema", format!("must be the string \"{SEARCH_SCHEMA}\"")),
        None => c.error("schema", format!("is required: \"{SEARCH_SCHEMA}\"")),
    }
    let request_id = c.opt_string(obj, "request_id", "request_id");
    let query = c.query(obj.get("query"));
    let mode = c.enum_field(obj, "mode", "mode", Mode::parse, Mode::Auto, MODES);

    let filters = match obj.get("filters") {
        None | Some(Value::Null) => Filters::default(),
        Some(Value::Object(f)) => c.filters(f),
        Some(_) => {
            c.error("filters", "must be an object");
            Filters::default()
        }
    };
    let include = c.include(obj.get("include"));
    let limit = c.int_in(obj.get("limit"), "limit", LIMIT_RANGE, DEFAULT_LIMIT);
    let (max_tokens, snippet_chars) = match obj.get("budget") {
        None | Some(Value::Null) => (DEFAULT_MAX_TOKENS, DEFAULT_SNIPPET_CHARS),
        Some(Value::Object(b)) => {
            c.unknown_fields(b, "budget.", &["max_tokens", "snippet_chars"]);
            (
                c.int_in(
                    b.get("max_tokens"),
                    "budget.max_tokens",
                    MAX_TOKENS_RANGE,
                    DEFAULT_MAX_TOKENS,
                ),
                c.int_in(
                    b.get("snippet_chars"),
                    "budget.snippet_chars",
                    SNIPPET_CHARS_RANGE,
                    DEFAULT_SNIPPET_CHARS,
                ),
            )
        }
        Some(_) => {
            c.error("budget", "must be an object");
            (DEFAULT_MAX_TOKENS, DEFAULT_SNIPPET_CHARS)
        }
    };
    let provenance = c.enum_field(
        obj,
        "provenance",
        "provenance",
        |s| match s {
            "strict" => Some(Provenance::Strict),
            "locator" => Some(Provenance::Locator),
            _ => None,
        },
        Provenance::Strict,
        "strict, locator",
    );
    let trace = match obj.get("trace") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            c.error("trace", "must be true or false");
            false
        }
    };

    if !c.errors.is_empty() {
        return Err(c.errors);
    }
    Ok((
        SearchRequest {
            request_id,
            query,
            mode,
            filters,
            include,
            limit,
            max_tokens,
            snippet_chars,
            provenance,
            trace,
        },
        c.warnings,
    ))
}

const TOP_FIELDS: &[&str] = &[
    "schema",
    "request_id",
    "query",
    "mode",
    "filters",
    "include",
    "limit",
    "budget",
    "provenance",
    "trace",
];
const FILTER_FIELDS: &[&str] = &[
    "workspaces",
    "session_ids",
    "actor_ids",
    "since",
    "until",
    "outcome",
    "skills",
    "paths",
];
const MODES: &str = "auto, find_agent, find_skill, find_code, find_knowledge";

/// Collects errors and warnings while walking one request.
#[derive(Default)]
struct Checker {
    errors: Vec<Issue>,
    warnings: Vec<Issue>,
}

impl Checker {
    fn error(&mut self, field: &str, message: impl Into<String>) {
        let message = format!("{field}: {}", message.into());
        self.errors
            .push(Issue::field(Code::InvalidRequest, field, message));
    }

    fn unknown_fields(&mut self, obj: &Map<String, Value>, prefix: &str, known: &[&str]) {
        for key in obj.keys().filter(|k| !known.contains(&k.as_str())) {
            let field = format!("{prefix}{}", clip(key));
            self.warnings.push(Issue::field(
                Code::IgnoredField,
                &field,
                format!("unknown field {field} was ignored"),
            ));
        }
    }

    fn query(&mut self, v: Option<&Value>) -> String {
        let s = match v {
            Some(Value::String(s)) => s,
            None | Some(Value::Null) => {
                self.error("query", "is required (1…2000 characters)");
                return String::new();
            }
            Some(_) => {
                self.error("query", "must be a string");
                return String::new();
            }
        };
        if s.contains('\0') {
            self.error("query", "must not contain a NUL character");
        } else if s.trim().is_empty() {
            self.error("query", "must not be empty or whitespace only");
        } else if s.chars().count() > MAX_QUERY_CHARS {
            self.error(
                "query",
                format!(
                    "is {} characters; at most {MAX_QUERY_CHARS} are allowed",
                    s.chars().count()
                ),
            );
        }
        s.clone()
    }

    fn opt_string(&mut self, obj: &Map<String, Value>, key: &str, field: &str) -> Option<String> {
        match obj.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if s.contains('\0') => {
                self.error(field, "must not contain a NUL character");
                None
            }
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => {
                self.error(field, "must be a string");
                None
            }
        }
    }

    fn enum_field<T: Copy>(
        &mut self,
        obj: &Map<String, Value>,
        key: &str,
        field: &str,
        parse: impl Fn(&str) -> Option<T>,
        default: T,
        allowed: &str,
    ) -> T {
        match obj.get(key) {
            None | Some(Value::Null) => default,
            Some(Value::String(s)) => parse(s).unwrap_or_else(|| {
                self.error(
                    field,
                    format!("unknown value \"{}\"; allowed: {allowed}", clip(s)),
                );
                default
            }),
            Some(_) => {
                self.error(field, format!("must be a string, one of: {allowed}"));
                default
            }
        }
    }

    fn int_in(&mut self, v: Option<&Value>, field: &str, range: (u64, u64), default: u32) -> u32 {
        let (lo, hi) = range;
        match v {
            None | Some(Value::Null) => default,
            Some(Value::Number(n)) => match n.as_u64() {
                Some(x) if (lo..=hi).contains(&x) => x as u32,
                _ => {
                    self.error(
                        field,
                        format!("must be an integer from {lo} to {hi}, got {n}"),
                    );
                    default
                }
            },
            Some(_) => {
                self.error(field, format!("must be an integer from {lo} to {hi}"));
                default
            }
        }
    }

    fn strings(&mut self, v: Option<&Value>, field: &str) -> Vec<String> {
        let items = match v {
            None | Some(Value::Null) => return Vec::new(),
            Some(Value::Array(a)) => a,
            Some(_) => {
                self.error(field, "must be an array of strings");
                return Vec::new();
            }
        };
        if items.len() > MAX_FILTER_VALUES {
            self.error(
                field,
                format!(
                    "has {} values; at most {MAX_FILTER_VALUES} are allowed",
                    items.len()
                ),
            );
            return Vec::new();
        }
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let f = format!("{field}[{i}]");
            match item {
                Value::String(s) if s.trim().is_empty() => self.error(&f, "must not be empty"),
                Value::String(s) if s.contains('\0') => {
                    self.error(&f, "must not contain a NUL character")
                }
                Value::String(s) if s.chars().count() > MAX_FILTER_VALUE_CHARS => self.error(
                    &f,
                    format!(
                        "is {} characters; at most {MAX_FILTER_VALUE_CHARS} are allowed",
                        s.chars().count()
                    ),
                ),
                Value::String(s) => out.push(s.clone()),
                _ => self.error(&f, "must be a string"),
            }
        }
        out
    }

    fn time(&mut self, v: Option<&Value>, field: &str) -> Option<DateTime<FixedOffset>> {
        match v {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => match DateTime::parse_from_rfc3339(s) {
                Ok(t) => Some(t),
                Err(_) => {
                    self.error(
                        field,
                        format!(
                            "\"{}\" is not an RFC 3339 time (e.g. 2026-09-01T00:00:00+03:00)",
                            clip(s)
                        ),
                    );
                    None
                }
            },
            Some(_) => {
                self.error(field, "must be an RFC 3339 time string or null");
                None
            }
        }
    }

    fn filters(&mut self, f: &Map<String, Value>) -> Filters {
        self.unknown_fields(f, "filters.", FILTER_FIELDS);
        let workspaces = self
            .strings(f.get("workspaces"), "filters.workspaces")
            .into_iter()
            .map(|w| normalize_root(&w))
            .collect();
        let since = self.time(f.get("since"), "filters.since");
        let until = self.time(f.get("until"), "filters.until");
        if let (Some(s), Some(u)) = (since, until) {
            if s > u {
                self.error("filters.until", "must not be earlier than filters.since");
            }
        }
        let outcome = match f.get("outcome") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => OutcomeFilter::parse(s).or_else(|| {
                self.error(
                    "filters.outcome",
                    format!(
                        "unknown value \"{}\"; allowed: success, failure, any",
                        clip(s)
                    ),
                );
                None
            }),
            Some(_) => {
                self.error("filters.outcome", "must be one of: success, failure, any");
                None
            }
        };
        Filters {
            workspaces,
            session_ids: self.strings(f.get("session_ids"), "filters.session_ids"),
            actor_ids: self.strings(f.get("actor_ids"), "filters.actor_ids"),
            since,
            until,
            outcome,
            skills: self.strings(f.get("skills"), "filters.skills"),
            paths: self.strings(f.get("paths"), "filters.paths"),
        }
    }

    fn include(&mut self, v: Option<&Value>) -> Include {
        let items = match v {
            None | Some(Value::Null) => return Lane::ALL.into_iter().collect(),
            Some(Value::Array(a)) => a,
            Some(_) => {
                self.error("include", "must be an array of: episodes, code, skills");
                return Lane::ALL.into_iter().collect();
            }
        };
        if items.is_empty() {
            self.error(
                "include",
                "must name at least one of: episodes, code, skills",
            );
        }
        let mut set = Include::new();
        for (i, item) in items.iter().enumerate() {
            match item.as_str().and_then(Lane::parse) {
                Some(l) => {
                    set.insert(l);
                }
                None => self.error(
                    &format!("include[{i}]"),
                    format!(
                        "unknown lane {}; allowed: episodes, code, skills",
                        clip(&item.to_string())
                    ),
                ),
            }
        }
        set
    }
}

/// A root without trailing separators (`/srv/app/` → `/srv/app`; `/` stays `/`).
pub fn normalize_root(s: &str) -> String {
    let t = s.trim();
    let trimmed = t.trim_end_matches(['/', '\\']);
    if trimmed.is_empty() && !t.is_empty() {
        t[..1].to_string()
    } else {
        trimmed.to_string()
    }
}

/// Echo at most 80 characters of an untrusted value in a message.
fn clip(s: &str) -> String {
    let mut out: String = s.chars().take(80).filter(|c| !c.is_control()).collect();
    if s.chars().count() > 80 {
        out.push('…');
    }
    out
}
