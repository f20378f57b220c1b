//! `knowledge dispatch` and `knowledge outbox`: preparing handoff packages and reviewing them.
//! Same exit codes as `search`: 0 a response, 2 an invalid request, 1 an internal failure.

use std::path::Path;

use anyhow::Result;
use knowledge::contract::{Code, Issue};
use knowledge::engine::dispatch::DispatchOutcome;
use knowledge::engine::outbox::{self, Decision, OutboxError};
use knowledge::engine::EngineConfig;
use serde_json::json;

use super::args::{DispatchArgs, OutboxArgs, OutboxCommand};
use super::render;

pub fn run(data_dir: &Path, a: DispatchArgs) -> Result<i32> {
    let text = match (&a.request, &a.task) {
        (Some(src), _) => match super::search_cmd::read_request(src) {
            Ok(t) => t,
            Err(e) => {
                let why = format!("{e:#}");
                let issue = Issue::field(Code::InvalidRequest, "$", format!("$: {why}"));
                render::print_json(&DispatchOutcome::refused(issue).to_json(), a.pretty)?;
                eprintln!("knowledge: {}", render::clean(&why));
                return Ok(2);
            }
        },
        (None, Some(task)) => {
            let mut req = json!({
                "schema": "knowledge.dispatch/v1",
                "task": {"text": task, "acceptance": a.acceptance, "constraints": a.constraints},
                "target": "auto",
                "dry_run": !a.commit,
            });
            if let Some(actor) = &a.actor {
                req["target"] = json!(actor);
            }
            req.to_string()
        }
        (None, None) => {
            eprintln!(
                "knowledge: give --task TEXT or --request FILE|- (see knowledge dispatch --help)"
            );
            return Ok(2);
        }
    };
    let config = match EngineConfig::load(data_dir) {
        Ok(c) => c,
        Err(e) => {
            let issue = super::search_cmd::config_issue(&e);
            render::print_json(&DispatchOutcome::refused(issue).to_json(), a.pretty)?;
            return Err(e.into());
        }
    };
    let engine = knowledge::open_engine(config);
    let outcome = engine.dispatch_json(&text, true);
    let doc = outcome.to_json();
    render::print_json(&doc, a.pretty)?;
    match outcome {
        DispatchOutcome::Invalid(e) => {
            for err in &e.errors {
                eprintln!("knowledge: {}: {}", err.code, render::clean(&err.message));
            }
            Ok(2)
        }
        DispatchOutcome::Ok(r) => {
            if let Some(asg) = &r.assignment {
                eprintln!(
                    "{} {} → {} (review it: knowledge outbox show {})",
                    if asg.created {
                        "recorded"
                    } else {
                        "already recorded"
                    },
                    asg.assignment_id,
                    render::clean(&asg.outbox_path),
                    asg.assignment_id
                );
            }
            Ok(
                if r.errors
                    .iter()
                    .any(|e| e.code == knowledge::contract::Code::Internal)
                {
                    1
                } else {
                    0
                },
            )
        }
    }
}

fn user() -> String {
    std::env::var("USER")
        .or_else(|_| std::env::var("USERNAME"))
        .unwrap_or_else(|_| "unknown".to_string())
}

pub fn outbox(data_dir: &Path, a: OutboxArgs) -> Result<i32> {
    let config = EngineConfig::load(data_dir)?;
    let result = match a.command {
        OutboxCommand::List { json } => {
            let (entries, bad) = outbox::list(&config);
            if json {
                render::print_json(&entries, true)?;
            } else if entries.is_empty() {
                outln!("the outbox is empty ({})", config.outbox_dir().display())?;
            } else {
                for e in &entries {
                    outln!(
                        "{}  {:<13} {}  {} [{}] — {}",
                        e.assignment_id,
                        e.status,
                        e.created_at,
                        render::clean(&e.actor_name),
                        e.dispatch_mode,
                        render::clean(&e.task.chars().take(80).collect::<String>())
                    )?;
                }
            }
            for b in bad {
                eprintln!("knowledge: skipped {}", render::clean(&b));
            }
            return Ok(0);
        }
        OutboxCommand::Show { id } => outbox::show(&config, &id).map(|(_, h)| (h, None)),
        OutboxCommand::Approve { id, by } => {
            outbox::decide(&config, &id, &Decision::Approve, &by.unwrap_or_else(user))
                .map(|(h, changed)| (h, Some(changed)))
        }
        OutboxCommand::Reject { id, reason, by } => outbox::decide(
            &config,
            &id,
            &Decision::Reject { reason },
            &by.unwrap_or_else(user),
        )
        .map(|(h, changed)| (h, Some(changed))),
    };
    match result {
        Ok((h, changed)) => {
            render::print_json(&h, true)?;
            if let Some(changed) = changed {
                eprintln!(
                    "{} is {}{} (nothing was executed)",
                    h.assignment_id,
                    h.review.status,
                    if changed { "" } else { " already" }
                );
            }
            Ok(0)
        }
        Err(e @ (OutboxError::NotFound(_) | OutboxError::AlreadyDecided { .. })) => {
            eprintln!("knowledge: {e}");
            Ok(2)
        }
        Err(e) => Err(e.into()),
    }
}
