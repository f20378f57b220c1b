//! `knowledge search` and `knowledge get-episode`.
//!
//! Flags are turned into a contract request document and go through the same validation as a
//! `--request` file, so both paths reject the same things with the same messages.

use std::io::Read;
use std::path::Path;

use anyhow::{Context, Result};
use knowledge::contract::{Code, Issue};
use knowledge::engine::search::SearchOutcome;
use knowledge::engine::EngineConfig;
use knowledge::lanes::parse_episode_id;
use serde_json::{json, Map, Value};

use super::args::{CodeArgs, GetEpisodeArgs, SearchArgs};
use super::render;

pub fn run(data_dir: &Path, a: SearchArgs) -> Result<i32> {
    let text = match (&a.request, &a.query) {
        (Some(src), _) => match read_request(src) {
            Ok(t) => t,
            Err(e) => {
                let why = format!("{e:#}");
                let issue = Issue::field(Code::InvalidRequest, "$", format!("$: {why}"));
                render::print_json(&SearchOutcome::refused(issue).to_json(), a.pretty)?;
                eprintln!("knowledge: {}", render::clean(&why));
                return Ok(2);
            }
        },
        (None, Some(_)) => request_from_flags(&a).to_string(),
        (None, None) => {
            eprintln!(
                "knowledge: give --query TEXT or --request FILE|- (see knowledge search --help)"
            );
            return Ok(2);
        }
    };
    // With a team index, a machine that never indexed (a lead's fresh laptop) still answers:
    // the team's half, and the local lanes' warnings naming the index that is not there.
    let team = knowledge::config::team_searched().is_some();
    let missing = super::missing_data_dir(data_dir).filter(|_| !team);
    if let Some(why) = super::not_a_folder(data_dir).or(missing) {
        let issue = Issue::new(Code::IndexNotReady, why.clone());
        render::print_json(&SearchOutcome::refused(issue).to_json(), a.pretty)?;
        eprintln!("knowledge: {why}");
        return Ok(2);
    }
    let config = match EngineConfig::load(data_dir) {
        Ok(c) => c,
        Err(e) => {
            let issue = config_issue(&e);
            render::print_json(&SearchOutcome::refused(issue).to_json(), a.pretty)?;
            return Err(e.into());
        }
    };
    let engine = knowledge::open_engine(config);
    let outcome = engine.search_json(&text);
    let doc = outcome.to_json();
    render::print_json(&doc, a.pretty)?;
    match outcome {
        SearchOutcome::Ok(_) => Ok(0),
        SearchOutcome::Invalid(e) => {
            for err in &e.errors {
                eprintln!("knowledge: {}: {}", err.code, render::clean(&err.message));
            }
            Ok(2)
        }
    }
}

/// The error document's issue for a `config.toml` that does not load: an agent parses stdout, so
/// the reason is there too, not only on stderr (the exit code stays 2, a usage error).
pub fn config_issue(e: &knowledge::config::ConfigError) -> Issue {
    Issue::field(
        Code::InvalidRequest,
        "config.toml",
        format!("config.toml: {e} (fix the file, or move it away to use the defaults)"),
    )
}

/// The request text from a file or stdin (`-`); a text that is not UTF-8 is refused, saying
/// where its first bad byte is.
pub fn read_request(src: &str) -> Result<String> {
    let bytes = if src == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .context("cannot read the request from stdin")?;
        bytes
    } else {
        knowledge::sources::regular_file::read(Path::new(src))
            .with_context(|| format!("cannot read the request file {src}"))?
    };
    String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "the request is not valid UTF-8 (a bad byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

/// A contract request from the flags; only the flags given are set.
fn request_from_flags(a: &SearchArgs) -> Value {
    let mut req = Map::new();
    req.insert("schema".into(), json!("knowledge.search/v1"));
    req.insert("query".into(), json!(a.query));
    if let Some(m) = &a.mode {
        req.insert("mode".into(), json!(m));
    }
    let mut filters = Map::new();
    if !a.workspaces.is_empty() {
        filters.insert("workspaces".into(), json!(a.workspaces));
    }
    if !a.sessions.is_empty() {
        filters.insert("session_ids".into(), json!(a.sessions));
    }
    if let Some(s) = &a.since {
        filters.insert("since".into(), json!(s));
    }
    if let Some(u) = &a.until {
        filters.insert("until".into(), json!(u));
    }
    if let Some(o) = &a.outcome {
        filters.insert("outcome".into(), json!(o));
    }
    if !filters.is_empty() {
        req.insert("filters".into(), Value::Object(filters));
    }
    if !a.include.is_empty() {
        req.insert("include".into(), json!(a.include));
    }
    if let Some(l) = a.limit {
        req.insert("limit".into(), json!(l));
    }
    let mut budget = Map::new();
    if let Some(t) = a.max_tokens {
        budget.insert("max_tokens".into(), json!(t));
    }
    if let Some(s) = a.snippet_chars {
        budget.insert("snippet_chars".into(), json!(s));
    }
    if !budget.is_empty() {
        req.insert("budget".into(), Value::Object(budget));
    }
    if a.locator {
        req.insert("provenance".into(), json!("locator"));
    }
    if a.trace {
        req.insert("trace".into(), json!(true));
    }
    Value::Object(req)
}

pub fn get_episode(data_dir: &Path, a: GetEpisodeArgs) -> Result<i32> {
    let Some((session_id, seq)) = parse_episode_id(&a.id) else {
        eprintln!(
            "knowledge: {}: not an episode id; expected ep:<session_id>:<seq>",
            render::clean(&a.id)
        );
        return Ok(2);
    };
    let engine = knowledge::open_engine(EngineConfig::load(data_dir)?);
    let episode = match engine.get_episode(&session_id, seq, a.context.min(50)) {
        Ok(ep) => ep,
        Err(e) => {
            eprintln!("knowledge: {e}");
            return Ok(if e.is_not_found() { 2 } else { 1 });
        }
    };
    if a.json {
        render::print_json(&episode, true)?;
    } else {
        render::write_out(&render::episode(&episode))?;
    }
    Ok(0)
}

/// `path:start[-end]` → (path, start, end).
fn parse_locator(s: &str) -> Option<(String, u64, Option<u64>)> {
    let (path, range) = s.rsplit_once(':')?;
    let (start, end) = match range.split_once('-') {
        Some((a, b)) => (a.parse().ok()?, Some(b.parse().ok()?)),
        None => (range.parse().ok()?, None),
    };
    let ordered = end.is_none_or(|e| e >= start);
    (!path.is_empty() && start >= 1 && ordered).then(|| (path.to_string(), start, end))
}

pub fn code(data_dir: &Path, a: CodeArgs) -> Result<i32> {
    let Some((path, start, end)) = parse_locator(&a.locator) else {
        eprintln!(
            "knowledge: {}: expected PATH:START or PATH:START-END (1-based lines, END ≥ START)",
            render::clean(&a.locator)
        );
        return Ok(2);
    };
    let engine = knowledge::open_engine(EngineConfig::load(data_dir)?);
    // The rules every front end shares: the index, else the external code source, else a
    // regular text file under an indexed root (or, with no code index, under the working dir).
    let lines = match engine.read_code(&path, start, end.or(Some(start.saturating_add(40))), None) {
        Ok(l) => l,
        Err(e @ knowledge::engine::read_code::ReadCodeError::Unavailable(_)) => {
            eprintln!("knowledge: {}", render::clean(&e.to_string()));
            return Ok(1);
        }
        Err(e) => {
            eprintln!("knowledge: {}", render::clean(&e.to_string()));
            return Ok(2);
        }
    };
    if lines.lines.is_empty() {
        eprintln!(
            "knowledge: {}: the file has {} lines; nothing at {start}",
            render::clean(&path),
            lines.total_lines
        );
        return Ok(2);
    }
    if a.json {
        render::print_json(&lines, true)?;
        return Ok(0);
    }
    outln!(
        "{}/{} lines {}-{}{}",
        render::clean(&lines.root),
        render::clean(&lines.path),
        lines.start_line,
        lines.end_line,
        if lines.freshness.stale {
            " (STALE: the file changed since it was indexed)"
        } else {
            ""
        }
    )?;
    for (i, line) in lines.lines.iter().enumerate() {
        outln!(
            "{:>6}  {}",
            lines.start_line + i as u64,
            knowledge::text::sanitize::for_terminal(line)
        )?;
    }
    Ok(0)
}
