//! `knowledge push`: this data dir to the team index, with a progress bar on a terminal and a
//! summary at the end (docs/TEAM.md).

use std::io::IsTerminal;
use std::path::Path;

use anyhow::{anyhow, Result};
use knowledge::config::Config;
use knowledge::team::push::{push, Progress, PushPlan};
use knowledge::team::{default_machine, TeamUrl};

use super::args::PushArgs;

pub fn run(data_dir: &Path, args: PushArgs) -> Result<i32> {
    let config = Config::load(data_dir)?;
    let Some(url) = args.to.clone().or(config.team.url.clone()) else {
        eprintln!(
            "knowledge: push: no team index: give --to URL, set KNOWLEDGE_TEAM_URL, or `[team] \
             url` in {}",
            data_dir.join("config.toml").display()
        );
        return Ok(2);
    };
    let url = match TeamUrl::parse(&url) {
        Ok(u) => u,
        Err(e) => {
            eprintln!("knowledge: push: {e}");
            return Ok(2);
        }
    };
    let plan = PushPlan {
        machine: args
            .machine
            .or(config.team.machine.clone())
            .unwrap_or_else(default_machine),
        person: std::env::var("USER").ok().filter(|u| !u.is_empty()),
    };
    let bar = std::io::stderr().is_terminal().then(|| {
        let b = indicatif::ProgressBar::new(0);
        b.set_style(
            indicatif::ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        b.set_message(format!("pushing to {url}"));
        b
    });
    let started = std::time::Instant::now();
    let out = push(data_dir, &url, &plan, &mut |p| {
        if let Some(b) = &bar {
            match p {
                Progress::Sessions { done, total } => {
                    b.set_length(total);
                    b.set_position(done);
                }
                Progress::Chunks { done } => b.set_message(format!("code: {done} chunks")),
            }
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let s = out.map_err(|e| anyhow!("push: {e}"))?;
    let secs = started.elapsed().as_secs_f64();
    if args.json {
        super::render::print_json(&s, false)?;
        return Ok(0);
    }
    let mut lines = vec![format!(
        "pushed machine {} to {url} in {secs:.1}s: {} events in {} batch(es), {} code chunks",
        s.machine, s.events_sent, s.batches, s.chunks_sent
    )];
    if s.episodes_skipped {
        lines.push("episodes: unchanged since the last push".to_string());
    } else {
        lines.push(format!(
            "sessions: {} new, {} grown, {} re-read and replaced, {} updated, {} unchanged, {} \
             removed",
            s.sessions_new,
            s.sessions_grown,
            s.sessions_replaced,
            s.sessions_updated,
            s.sessions_unchanged,
            s.sessions_removed
        ));
    }
    if s.code_skipped {
        lines.push("code: unchanged since the last push".to_string());
    }
    if s.schema_before == 0 {
        lines.push("the team index was empty: its schema was created".to_string());
    }
    if s.redacted_again > 0 {
        lines.push(format!(
            "{} secret(s) the local index still held were redacted before sending",
            s.redacted_again
        ));
    }
    super::render::write_out(&format!("{}\n", lines.join("\n")))?;
    Ok(0)
}
