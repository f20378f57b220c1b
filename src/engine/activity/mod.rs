//! The activity view, computed: who worked where and when over a period, which skills they used,
//! how many sessions failed, and how the lanes fared in the request log.
//!
//! Everything comes through the lanes: the episodes lane lists the sessions under the filters
//! (`EpisodesSource::activity_sessions`), the skills lane — the agent-knowledge store, which
//! counts each session's events per hour at index time — says who wrote how many events in each
//! hour and which skills were used (`SkillsSource::activity`), and the request log gives the lane
//! health. This module only joins and counts, so the explorer and `knowledge stats --chart` draw
//! the same numbers. Days are local days (`utc_offset_s`), built from whole hours.

pub mod report;

use std::collections::{BTreeMap, HashMap, HashSet};

pub use report::*;

use super::profiles;
use super::Engine;
use crate::contract::{ActorKind, Lane, Outcome};
use crate::lanes::{ActivityQuery, ActivitySession, SkillsActivity};
use crate::sources::agent_knowledge::ms_to_rfc3339;

const DAY_MS: i64 = 86_400_000;
const HOUR_MS: i64 = 3_600_000;
/// The longest period counted, in days (a longer one is cut to its last days, with a warning).
pub const MAX_DAYS: i64 = 366;
/// Title length of an actor's label in the report.
const LABEL_TITLE_CHARS: usize = 60;

/// Which days to count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Period {
    /// Today and the days before it.
    LastDays(u32),
    /// From `since` to `until` (ms, either open: 90 days back, through today).
    Range {
        since_ms: Option<i64>,
        until_ms: Option<i64>,
    },
}

/// What to count: a period, a search's workspace and outcome filters, and how many rows each
/// list keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActivityRequest {
    pub period: Period,
    pub now_ms: i64,
    /// Local time's offset from UTC, seconds east.
    pub utc_offset_s: i32,
    pub workspaces: Vec<String>,
    /// The session outcome to count; `None` for any.
    pub outcome: Option<Outcome>,
    /// Rows kept per list (actors, workspaces, skills).
    pub top: usize,
}

impl ActivityRequest {
    pub fn last_days(days: u32, now_ms: i64, utc_offset_s: i32) -> Self {
        ActivityRequest {
            period: Period::LastDays(days),
            now_ms,
            utc_offset_s,
            workspaces: Vec::new(),
            outcome: None,
            top: 20,
        }
    }
}

/// The local day holding `ms` (days since the epoch).
fn day_of(ms: i64, offset_ms: i64) -> i64 {
    (ms + offset_ms).div_euclid(DAY_MS)
}

/// The first and the last-plus-one local day of the period, cut to [`MAX_DAYS`].
fn day_range(req: &ActivityRequest, warnings: &mut Vec<String>) -> (i64, i64) {
    let off = i64::from(req.utc_offset_s) * 1000;
    let today = day_of(req.now_ms, off);
    let (first, end) = match req.period {
        Period::LastDays(n) => (today + 1 - i64::from(n.max(1)), today + 1),
        Period::Range { since_ms, until_ms } => {
            // `until` is inclusive of its instant: the day holding it is counted.
            let end = until_ms.map_or(today + 1, |u| day_of(u, off) + 1);
            let first = since_ms.map_or(end - 90, |s| day_of(s, off));
            (first.min(end - 1), end)
        }
    };
    if end - first > MAX_DAYS {
        warnings.push(format!(
            "the period is {} days long: only its last {MAX_DAYS} are counted",
            end - first
        ));
        return (end - MAX_DAYS, end);
    }
    (first, end)
}

#[derive(Default)]
struct ActorAcc {
    sessions: HashMap<String, u64>,
    events: u64,
    last_hour: i64,
}

impl Engine {
    /// Count the activity of a period through the lanes; a lane that cannot answer leaves its
    /// part empty and says why in `warnings`.
    pub fn activity(&self, req: &ActivityRequest) -> ActivityReport {
        let started = std::time::Instant::now();
        let mut warnings = Vec::new();
        let off = i64::from(req.utc_offset_s) * 1000;
        let (first_day, end_day) = day_range(req, &mut warnings);
        let q = ActivityQuery {
            since_ms: first_day * DAY_MS - off,
            until_ms: end_day * DAY_MS - off,
            workspaces: req.workspaces.clone(),
            outcome: req.outcome,
        };
        let sessions: HashMap<String, ActivitySession> = match self.episodes.activity_sessions(&q) {
            Ok(rows) => rows
                .into_iter()
                .map(|s| (s.session_id.clone(), s))
                .collect(),
            Err(f) => {
                warnings.push(format!("episodes: {f}"));
                HashMap::new()
            }
        };
        let activity = self.skills.activity(&q).unwrap_or_else(|f| {
            warnings.push(format!("actors: {f}"));
            SkillsActivity::default()
        });
        let mut report = count(req, &q, (first_day, end_day), &sessions, &activity);
        self.name_actors(&mut report.actors);
        report.health = self.lane_health(&report.days, &mut warnings);
        report.warnings = warnings;
        self.log_activity(started, report.events);
        report
    }

    /// Titles and labels of the listed actors, through the lanes (built-in first, then an
    /// external source: `layered.rs`).
    fn name_actors(&self, actors: &mut [ActorActivity]) {
        for a in actors.iter_mut() {
            let mut p = profiles::profile(&a.actor_id, &[], &*self.episodes, &*self.skills);
            a.title = p.title.clone();
            p.workspace = a.workspace.clone();
            p.last_active = None;
            a.label = profiles::label_of(
                &a.actor_id,
                a.kind.unwrap_or(ActorKind::Unknown),
                &a.name,
                &p,
                LABEL_TITLE_CHARS,
                false,
                false,
            );
        }
    }

    fn lane_health(&self, days: &[DayActivity], warnings: &mut Vec<String>) -> LaneHealth {
        let log = self.config.log_path();
        let lines = match crate::engine::log::stats::read_log(&log) {
            Ok((lines, _)) => lines,
            Err(e) => {
                warnings.push(format!("request log: {e}"));
                Vec::new()
            }
        };
        let spans: Vec<(i64, i64)> = days.iter().map(|d| (d.since_ms, d.until_ms)).collect();
        let per_day = crate::engine::log::stats::by_day(&lines, &spans);
        let (since, until) = (
            spans.first().map_or(0, |s| s.0),
            spans.last().map_or(0, |s| s.1),
        );
        let in_period: Vec<_> = lines
            .into_iter()
            .filter(|l| {
                chrono::DateTime::parse_from_rfc3339(&l.at)
                    .is_ok_and(|t| (since..until).contains(&t.timestamp_millis()))
            })
            .collect();
        let mut lanes: Vec<LaneSeries> = Lane::ALL
            .into_iter()
            .map(|lane| LaneSeries {
                lane,
                p50_ms: Vec::with_capacity(days.len()),
                degradation_rate: Vec::with_capacity(days.len()),
            })
            .collect();
        for day in &per_day {
            for series in lanes.iter_mut() {
                let r = day.lanes.iter().find(|l| l.lane == series.lane);
                series.p50_ms.push(r.map_or(0.0, |r| r.latency.p50_ms));
                series
                    .degradation_rate
                    .push(r.map_or(0.0, |r| r.degradation_rate));
            }
        }
        LaneHealth {
            searches: per_day
                .iter()
                .map(|d| d.by_operation.get("search").copied().unwrap_or(0))
                .collect(),
            zero_result_rate: per_day.iter().map(|d| d.zero_result_rate).collect(),
            lanes,
            stats: Some(crate::engine::log::stats::summarise(&in_period)),
        }
    }

    fn log_activity(&self, started: std::time::Instant, events: u64) {
        self.logger.write(super::log::LogLine {
            at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            op: "activity".to_string(),
            request_id: None,
            ms: started.elapsed().as_secs_f64() * 1000.0,
            lanes: Vec::new(),
            returned: events.min(u64::from(u32::MAX)) as u32,
            truncated: false,
            codes: Vec::new(),
        });
    }
}

/// The counts of a period from the lanes' answers (pure: the tests feed it rows).
fn count(
    req: &ActivityRequest,
    q: &ActivityQuery,
    (first_day, end_day): (i64, i64),
    sessions: &HashMap<String, ActivitySession>,
    activity: &SkillsActivity,
) -> ActivityReport {
    let off = i64::from(req.utc_offset_s) * 1000;
    let n_days = (end_day - first_day).max(0) as usize;
    let mut days: Vec<DayActivity> = (0..n_days)
        .map(|i| {
            let d = first_day + i as i64;
            let since_ms = d * DAY_MS - off;
            DayActivity {
                day: day_label(since_ms + off),
                since_ms,
                until_ms: since_ms + DAY_MS,
                ..Default::default()
            }
        })
        .collect();
    let mut day_sessions: Vec<HashSet<&str>> = vec![HashSet::new(); n_days];
    let mut session_events: HashMap<&str, u64> = HashMap::new();
    let mut actors: HashMap<&str, ActorAcc> = HashMap::new();
    for b in &activity.buckets {
        let Some(s) = sessions.get(&b.session_id) else {
            continue;
        };
        let ms = b.hour * HOUR_MS;
        if ms < q.since_ms || ms >= q.until_ms {
            continue;
        }
        let i = (day_of(ms, off) - first_day) as usize;
        let Some(day) = days.get_mut(i) else { continue };
        day.events += b.events;
        if day_sessions[i].insert(&s.session_id) && s.outcome == Outcome::Failure {
            day.failed_sessions += 1;
        }
        *session_events.entry(&s.session_id).or_default() += b.events;
        if let Some(actor) = &b.actor_id {
            let a = actors.entry(actor).or_default();
            a.events += b.events;
            *a.sessions.entry(s.session_id.clone()).or_default() += b.events;
            a.last_hour = a.last_hour.max(b.hour);
        }
    }
    for (day, set) in days.iter_mut().zip(&day_sessions) {
        day.sessions = set.len() as u64;
    }
    let failed = |id: &str| {
        sessions
            .get(id)
            .is_some_and(|s| s.outcome == Outcome::Failure)
    };
    let total_sessions = session_events.len() as u64;
    let failed_sessions = session_events.keys().filter(|s| failed(s)).count() as u64;
    let events: u64 = session_events.values().sum();

    let mut actor_rows: Vec<ActorActivity> = actors
        .iter()
        .map(|(id, acc)| actor_row(id, acc, sessions, activity))
        .collect();
    actor_rows.sort_by(|a, b| {
        (b.events, b.failures)
            .cmp(&(a.events, a.failures))
            .then_with(|| a.actor_id.cmp(&b.actor_id))
    });

    let mut by_workspace: BTreeMap<String, WorkspaceActivity> = BTreeMap::new();
    let mut by_agent: BTreeMap<String, AgentActivity> = BTreeMap::new();
    for (id, n) in &session_events {
        let s = &sessions[*id];
        let w = s
            .cwd
            .clone()
            .unwrap_or_else(|| "(no workspace)".to_string());
        let row = by_workspace
            .entry(w.clone())
            .or_insert_with(|| WorkspaceActivity {
                workspace: w,
                ..Default::default()
            });
        row.sessions += 1;
        row.events += n;
        row.failed_sessions += u64::from(s.outcome == Outcome::Failure);
        let agent = by_agent
            .entry(s.source.clone())
            .or_insert_with(|| AgentActivity {
                source: s.source.clone(),
                ..Default::default()
            });
        agent.sessions += 1;
        agent.events += n;
    }
    for a in &actor_rows {
        if let Some(w) = a.workspace.as_ref().and_then(|w| by_workspace.get_mut(w)) {
            if w.actors.len() < 3 {
                w.actors.push(a.actor_id.clone());
            }
        }
    }
    let mut workspaces: Vec<WorkspaceActivity> = by_workspace.into_values().collect();
    workspaces.sort_by(|a, b| b.events.cmp(&a.events).then(a.workspace.cmp(&b.workspace)));
    let mut agents: Vec<AgentActivity> = by_agent.into_values().collect();
    agents.sort_by(|a, b| b.events.cmp(&a.events).then(a.source.cmp(&b.source)));

    let mut skills: BTreeMap<&str, SkillActivity> = BTreeMap::new();
    for u in &activity.uses {
        if !sessions.contains_key(&u.session_id) {
            continue;
        }
        let row = skills.entry(&u.skill).or_insert_with(|| SkillActivity {
            skill: u.skill.clone(),
            ..Default::default()
        });
        row.uses += 1;
        row.failures += u64::from(failed(&u.session_id));
    }
    let mut skills: Vec<SkillActivity> = skills.into_values().collect();
    skills.sort_by(|a, b| b.uses.cmp(&a.uses).then(a.skill.cmp(&b.skill)));

    let top = req.top.max(1);
    actor_rows.truncate(top);
    workspaces.truncate(top);
    skills.truncate(top);
    ActivityReport {
        since: ms_to_rfc3339(q.since_ms).unwrap_or_default(),
        until: ms_to_rfc3339(q.until_ms).unwrap_or_default(),
        days,
        sessions: total_sessions,
        events,
        failed_sessions,
        failed_share: if total_sessions == 0 {
            0.0
        } else {
            (failed_sessions as f64 / total_sessions as f64 * 1000.0).round() / 1000.0
        },
        workspaces,
        agents,
        actors: actor_rows,
        skills,
        health: LaneHealth::default(),
        warnings: Vec::new(),
    }
}

fn actor_row(
    id: &str,
    acc: &ActorAcc,
    sessions: &HashMap<String, ActivitySession>,
    activity: &SkillsActivity,
) -> ActorActivity {
    let known = activity.actors.iter().find(|a| a.actor_id == id);
    let outcome_of = |o: Outcome| {
        acc.sessions
            .keys()
            .filter(|s| sessions.get(*s).is_some_and(|s| s.outcome == o))
            .count() as u64
    };
    let busiest = acc
        .sessions
        .iter()
        .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
        .and_then(|(s, _)| sessions.get(s));
    ActorActivity {
        actor_id: id.to_string(),
        name: known.map_or_else(|| "?".to_string(), |a| a.name.clone()),
        kind: known.map(|a| a.kind),
        source: known.map_or_else(String::new, |a| a.source.clone()),
        label: String::new(),
        title: None,
        workspace: busiest.and_then(|s| s.cwd.clone()),
        sessions: acc.sessions.len() as u64,
        events: acc.events,
        successes: outcome_of(Outcome::Success),
        failures: outcome_of(Outcome::Failure),
        last_active: ms_to_rfc3339(acc.last_hour * HOUR_MS),
    }
}

/// `YYYY-MM-DD` of a local-time instant given as ms.
fn day_label(local_ms: i64) -> String {
    ms_to_rfc3339(local_ms)
        .map(|t| t.chars().take(10).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
