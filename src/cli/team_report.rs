//! The team server in `knowledge doctor` and `knowledge stats --chart` (docs/TEAM.md): the
//! checks are `health::team`'s; this file adds their findings to doctor's report and lays them
//! out, and says beside a chart whether the team index it was asked about answers.
//!
//! Its own file so that doctor's and the chart's commands each call it in a line or two: the
//! team is the one part of either report that needs a network.

use std::fmt::Write;
use std::path::Path;

use anyhow::Result;
use knowledge::engine::activity::ActivityReport;
use knowledge::health::doctor::DoctorReport;
use knowledge::health::team::{self, Purpose, TeamReport};

use super::render::clean;

/// Check the team URLs of `data_dir` and count their findings among `report`'s problems.
pub fn doctor(data_dir: &Path, report: &mut DoctorReport) -> Vec<TeamReport> {
    let checked = team::check_all(data_dir);
    for t in &checked {
        report.problems.extend(t.problems.iter().cloned());
    }
    report.healthy = report.problems.is_empty();
    checked
}

/// `doctor --json`: the report with a `team` member (one entry a team URL).
pub fn doctor_json(report: &DoctorReport, checked: &[TeamReport]) -> Result<serde_json::Value> {
    let mut doc = serde_json::to_value(report)?;
    if let Some(o) = doc.as_object_mut() {
        o.insert("team".into(), serde_json::to_value(checked)?);
    }
    Ok(doc)
}

/// The team section of doctor's text (empty without a team URL).
pub fn doctor_text(checked: &[TeamReport]) -> String {
    let mut o = String::new();
    if !checked.is_empty() {
        o.push('\n');
    }
    for t in checked {
        let purpose = match t.purpose {
            Purpose::Search => "searches".to_string(),
            Purpose::Push => format!(
                "pushes machine {}",
                t.machine.as_deref().map(clean).unwrap_or_default()
            ),
        };
        let url = if t.url.is_empty() {
            "(unusable URL)"
        } else {
            &t.url
        };
        let _ = writeln!(o, "team ({}, {purpose}): {}", clean(&t.from), clean(url));
        let Some(s) = &t.server else {
            let _ = writeln!(
                o,
                "  down: {}",
                clean(t.error.as_deref().unwrap_or("not checked"))
            );
            continue;
        };
        let schema = s.schema_version.map_or_else(
            || "schema version unknown (this role may not read it)".to_string(),
            |v| {
                format!(
                    "schema version {v} (this knowledge: {})",
                    t.known_schema_version
                )
            },
        );
        let _ = writeln!(
            o,
            "  reachable: PostgreSQL {}, {schema}",
            clean(&s.server_version)
        );
        if let Some(r) = &s.rights {
            let search = if r.owner || r.searches {
                "searches every machine"
            } else if r.pushes {
                "reads only its own machine"
            } else {
                "may not search"
            };
            let push = match (r.owner, &r.machine) {
                (true, _) => "pushes any machine (owner)".to_string(),
                (false, Some(m)) if r.pushes => format!("pushes machine {}", clean(m)),
                _ => "may not push".to_string(),
            };
            let _ = writeln!(o, "  role {}: {search}; {push}", clean(&r.role));
            let events = s
                .events_estimate
                .map(|n| format!(", ~{n} events"))
                .unwrap_or_default();
            let _ = writeln!(
                o,
                "  shared_buffers {}; kn_event with its indexes {}{events}",
                team::size(s.shared_buffers),
                team::size(s.event_bytes)
            );
        }
    }
    o
}

/// Beside a chart of this machine's index, whether the team index of `--team` answers: the
/// activity view does not chart the team's sessions, so without this line a chart looks the
/// same whether the team server is up or down. Down, the reason is one of the report's
/// warnings (so `--json` says it too); up, the returned line says so.
pub fn chart_note(report: &mut ActivityReport) -> Option<String> {
    let url = knowledge::config::team_searched()?;
    // A one-shot chart waits for the team no longer than a second.
    match team::probe_within(&url.url, std::time::Duration::from_secs(1)) {
        Ok((shown, version)) => Some(format!(
            "team: the team index at {} answers (schema version {version}); this chart counts \
             this machine's index, not the team's",
            clean(&shown)
        )),
        Err(e) => {
            let why = match e {
                knowledge::team::TeamError::BadUrl(why) => format!("the --team URL: {why}"),
                e => format!("the team server is down or refuses: {e}"),
            };
            report.warnings.push(format!(
                "team: {why}; this chart counts this machine's index alone"
            ));
            None
        }
    }
}
