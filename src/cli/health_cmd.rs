//! `knowledge stats` and `knowledge doctor`: the engine's reports on itself, as text for a
//! person or JSON for a script. Paths and error messages are sanitised before printing.

use std::fmt::Write;
use std::path::Path;

use anyhow::{Context, Result};
use knowledge::config::DataDir;
use knowledge::engine::log::stats::{parse_since, stats, Latency, StatsReport};
use knowledge::health::doctor::{doctor, DoctorReport};

use super::args::{DoctorArgs, StatsArgs};
use super::render::{self, clean};

pub fn run_stats(data_dir: &Path, a: StatsArgs) -> Result<i32> {
    if a.chart {
        return super::chart_cmd::run(data_dir, &a);
    }
    let since = match &a.since {
        Some(t) => Some(parse_since(t, chrono::Utc::now()).map_err(anyhow::Error::msg)?),
        None => None,
    };
    let log = DataDir::new(data_dir).log_path();
    let report =
        stats(&log, since).with_context(|| format!("reading the request log {}", log.display()))?;
    if a.json {
        render::print_json(&report, true)?;
    } else {
        render::write_out(&stats_text(&report, &log))?;
    }
    Ok(0)
}

fn latency(l: &Latency) -> String {
    format!(
        "{:>6} requests  p50 {:>7.1} ms  p95 {:>7.1} ms  p99 {:>7.1} ms",
        l.count, l.p50_ms, l.p95_ms, l.p99_ms
    )
}

fn pct(rate: f64) -> String {
    format!("{:.1} %", rate * 100.0)
}

fn stats_text(r: &StatsReport, log: &Path) -> String {
    let mut o = String::new();
    if r.requests == 0 {
        let _ = writeln!(
            o,
            "no requests logged in {}{} yet",
            log.display(),
            r.since
                .as_deref()
                .map(|s| format!(" since {s}"))
                .unwrap_or_default()
        );
        return o;
    }
    let _ = writeln!(
        o,
        "{} requests from {} to {}",
        r.requests,
        clean(r.first_at.as_deref().unwrap_or("-")),
        clean(r.last_at.as_deref().unwrap_or("-"))
    );
    let _ = writeln!(o, "\nby operation:");
    for (op, l) in &r.latency_by_operation {
        let _ = writeln!(o, "  {:<12}{}", clean(op), latency(l));
    }
    let _ = writeln!(o, "\nby lane:");
    for lane in &r.lanes {
        let _ = writeln!(o, "  {:<12}{}", lane.lane, latency(&lane.latency));
        let reasons: Vec<String> = lane
            .reasons
            .iter()
            .map(|(why, n)| format!("{} {n}", clean(why)))
            .collect();
        let _ = writeln!(
            o,
            "  {:<12}degraded {} ({}){}",
            "",
            lane.degraded,
            pct(lane.degradation_rate),
            if reasons.is_empty() {
                String::new()
            } else {
                format!(": {}", reasons.join(", "))
            }
        );
    }
    let _ = writeln!(o, "\nsearches:");
    let _ = writeln!(o, "  zero results          {}", pct(r.zero_result_rate));
    let _ = writeln!(o, "  episode + code both   {}", pct(r.both_evidence_rate));
    let _ = writeln!(
        o,
        "  budget truncations    {} ({})",
        r.budget_truncations,
        pct(r.budget_truncation_rate)
    );
    if r.unreadable_lines > 0 {
        let _ = writeln!(o, "({} log lines could not be read)", r.unreadable_lines);
    }
    o
}

pub fn run_doctor(data_dir: &Path, a: DoctorArgs) -> Result<i32> {
    let mut report = doctor(data_dir);
    let team = super::team_report::doctor(data_dir, &mut report);
    if a.json {
        render::print_json(&super::team_report::doctor_json(&report, &team)?, true)?;
    } else {
        let team = super::team_report::doctor_text(&team);
        render::write_out(&doctor_text(&report, &team))?;
    }
    Ok(if report.healthy { 0 } else { 1 })
}

fn age(secs: Option<u64>) -> String {
    match secs {
        None => "never written".into(),
        Some(s) if s < 120 => format!("{s} s ago"),
        Some(s) if s < 7200 => format!("{} min ago", s / 60),
        Some(s) if s < 172_800 => format!("{} h ago", s / 3600),
        Some(s) => format!("{} days ago", s / 86_400),
    }
}

fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

fn doctor_text(r: &DoctorReport, team: &str) -> String {
    let mut o = String::new();
    let i = &r.indexed;
    let _ = writeln!(o, "data dir: {}", clean(&r.data_dir));
    let _ = writeln!(
        o,
        "episodes: {} transcript files, {} sessions ({} live), {} events",
        i.transcript_files, i.sessions, i.live_sessions, i.events
    );
    if let Some(c) = &i.message_vectors {
        let _ = writeln!(o, "          {}", c.describe());
    }
    let _ = writeln!(o, "code:     {} files, {} chunks", i.code_files, i.chunks);
    let _ = writeln!(
        o,
        "skills:   {} skills, {} actors, {} skill uses",
        i.skills, i.actors, i.skill_uses
    );
    for (label, roots) in [
        ("session root", &i.session_roots),
        ("code root", &i.code_roots),
        ("skill folder", &i.skill_roots),
    ] {
        for root in roots {
            let _ = writeln!(o, "  {label}: {}", clean(root));
        }
    }
    for a in &r.agents {
        let roots = if a.roots.is_empty() {
            "no root found on this machine".to_string()
        } else {
            a.roots
                .iter()
                .map(|r| clean(r))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let _ = writeln!(
            o,
            "  agent {}: {} stores, {} sessions; {roots}",
            a.label, a.stores, a.sessions
        );
    }
    let _ = writeln!(o, "\nstores:");
    for s in &r.stores {
        if !s.exists {
            let _ = writeln!(o, "  {:<10}missing", s.store);
            continue;
        }
        let _ = writeln!(
            o,
            "  {:<10}{}  written {}  {}",
            s.store,
            s.index_rev.as_deref().unwrap_or("(no index_rev)"),
            age(s.age_seconds),
            mb(s.bytes)
        );
    }
    let _ = writeln!(o, "  {:<10}{}", "log", mb(r.log_bytes));
    let _ = writeln!(
        o,
        "\nfreshness: {} of {} code files stale, {} of {} transcripts changed since indexing",
        r.stale_code_files.count,
        r.stale_code_files.checked,
        r.changed_transcripts.count,
        r.changed_transcripts.checked
    );
    let _ = writeln!(
        o,
        "config: {}{}",
        clean(&r.config.path),
        match (&r.config.error, r.config.exists) {
            (Some(_), _) => " (broken)",
            (None, true) => " (ok)",
            (None, false) => " (none: defaults)",
        }
    );
    for s in &r.sources {
        let _ = writeln!(
            o,
            "source {} {}: {}",
            s.lane,
            clean(&s.name),
            if s.reachable {
                "reachable".to_string()
            } else {
                format!("unreachable: {}", clean(s.error.as_deref().unwrap_or("")))
            }
        );
    }
    o.push_str(team);
    if r.problems.is_empty() {
        let _ = writeln!(o, "\nhealthy: no problems found");
    } else {
        let _ = writeln!(o, "\n{} problems:", r.problems.len());
        for p in &r.problems {
            let _ = writeln!(o, "  - {}\n    fix: {}", clean(&p.problem), clean(&p.fix));
        }
    }
    o
}
