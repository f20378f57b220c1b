//! `knowledge stats --chart`: the explorer's activity view as text — sessions and events per
//! day as sparklines, who worked where, skills used most, the share of failed sessions and lane
//! health from the request log — or as the engine's JSON document with `--json`. The numbers are
//! the engine's (`Engine::activity`); this file only lays them out.

use std::fmt::Write;
use std::path::Path;

use anyhow::Result;
use knowledge::engine::activity::{ActivityReport, ActivityRequest, Period};
use knowledge::engine::log::stats::parse_since;
use knowledge::engine::EngineConfig;

use super::args::StatsArgs;
use super::render::{self, clean};

pub fn run(data_dir: &Path, a: &StatsArgs) -> Result<i32> {
    let now = chrono::Utc::now();
    let offset = chrono::Local::now().offset().local_minus_utc();
    let mut req = ActivityRequest::last_days(a.days, now.timestamp_millis(), offset);
    if let Some(t) = &a.since {
        let since = parse_since(t, now).map_err(anyhow::Error::msg)?;
        req.period = Period::Range {
            since_ms: Some(since.timestamp_millis()),
            until_ms: None,
        };
    }
    req.workspaces = a
        .workspaces
        .iter()
        .map(|w| knowledge::contract::request::normalize_root(w))
        .collect();
    let engine = knowledge::open_engine(EngineConfig::load(data_dir)?);
    let mut report = engine.activity(&req);
    let team = super::team_report::chart_note(&mut report);
    if a.json {
        render::print_json(&report, true)?;
    } else {
        let team = team.map(|t| format!("{t}\n")).unwrap_or_default();
        render::write_out(&format!("{}{team}", chart_text(&report)))?;
    }
    Ok(0)
}

const BLOCKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// One block a value, scaled to the largest; a blank for zero, so quiet days show as gaps.
fn spark(values: &[f64]) -> String {
    let max = values.iter().copied().fold(0.0, f64::max);
    values
        .iter()
        .map(|v| {
            if *v <= 0.0 || max <= 0.0 {
                ' '
            } else {
                let i = ((v / max) * (BLOCKS.len() - 1) as f64).round() as usize;
                BLOCKS[i.min(BLOCKS.len() - 1)]
            }
        })
        .collect()
}

fn counts(values: impl Iterator<Item = u64>) -> Vec<f64> {
    values.map(|v| v as f64).collect()
}

fn pct(rate: f64) -> String {
    format!("{:.1} %", rate * 100.0)
}

pub fn chart_text(r: &ActivityReport) -> String {
    let mut o = String::new();
    let first = r.days.first().map_or("", |d| d.day.as_str());
    let last = r.days.last().map_or("", |d| d.day.as_str());
    let _ = writeln!(
        o,
        "activity {first} … {last} ({} days): {} sessions, {} events, {} failed ({})",
        r.days.len(),
        r.sessions,
        r.events,
        r.failed_sessions,
        pct(r.failed_share)
    );
    let max_of = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    let sessions = counts(r.days.iter().map(|d| d.sessions));
    let events = counts(r.days.iter().map(|d| d.events));
    let failed = counts(r.days.iter().map(|d| d.failed_sessions));
    let _ = writeln!(
        o,
        "\n  {:<18}{}  max {}",
        "sessions per day",
        spark(&sessions),
        max_of(&sessions)
    );
    let _ = writeln!(
        o,
        "  {:<18}{}  max {}",
        "events per day",
        spark(&events),
        max_of(&events)
    );
    let _ = writeln!(
        o,
        "  {:<18}{}  max {}",
        "failed sessions",
        spark(&failed),
        max_of(&failed)
    );
    if !r.actors.is_empty() {
        let _ = writeln!(
            o,
            "\nwho worked (by events):\n  {:>8} {:>4} {:>4}  actor",
            "events", "✓", "✗"
        );
        for a in &r.actors {
            let _ = writeln!(
                o,
                "  {:>8} {:>4} {:>4}  {}",
                a.events,
                a.successes,
                a.failures,
                clean(&a.label)
            );
        }
    }
    if !r.workspaces.is_empty() {
        let _ = writeln!(o, "\nworkspaces:");
        for w in &r.workspaces {
            let _ = writeln!(
                o,
                "  {:>8} events {:>5} sessions {:>4} failed  {}",
                w.events,
                w.sessions,
                w.failed_sessions,
                clean(&w.workspace)
            );
        }
    }
    if !r.agents.is_empty() {
        let parts: Vec<String> = r
            .agents
            .iter()
            .map(|a| {
                format!(
                    "{} {} sessions / {} events",
                    clean(&a.source),
                    a.sessions,
                    a.events
                )
            })
            .collect();
        let _ = writeln!(o, "\nagents: {}", parts.join(" · "));
    }
    if !r.skills.is_empty() {
        let _ = writeln!(o, "\nskills used most:");
        for s in &r.skills {
            let _ = writeln!(
                o,
                "  {:>6} uses {:>4} failed  {}",
                s.uses,
                s.failures,
                clean(&s.skill)
            );
        }
    }
    let h = &r.health;
    let _ = writeln!(o, "\nlane health (request log, per day):");
    let searches = counts(h.searches.iter().copied());
    let _ = writeln!(
        o,
        "  {:<18}{}  max {}",
        "searches",
        spark(&searches),
        max_of(&searches)
    );
    let _ = writeln!(
        o,
        "  {:<18}{}  max {}",
        "zero results",
        spark(&h.zero_result_rate),
        pct(max_of(&h.zero_result_rate))
    );
    for l in &h.lanes {
        let _ = writeln!(
            o,
            "  {:<18}{}  max {:.1} ms",
            format!("{} p50", l.lane),
            spark(&l.p50_ms),
            max_of(&l.p50_ms)
        );
        let _ = writeln!(
            o,
            "  {:<18}{}  max {}",
            format!("{} degraded", l.lane),
            spark(&l.degradation_rate),
            pct(max_of(&l.degradation_rate))
        );
    }
    for w in &r.warnings {
        let _ = writeln!(o, "warning: {}", clean(w));
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparklines_scale_to_the_largest_value_and_leave_quiet_days_blank() {
        assert_eq!(spark(&[0.0, 1.0, 4.0, 8.0]), " ▂▅█");
        assert_eq!(spark(&[0.0, 0.0]), "  ");
        assert_eq!(spark(&[]), "");
    }
}
