//! `knowledge stats` and the activity view's request figures: operational metrics (contract §11:
//! latency, zero results, degradations, evidence mix, budget truncations) computed from the
//! request log and its rotated generations. The log holds no query text, so neither does anything computed here.

use std::collections::BTreeMap;
use std::io::{BufRead, Read, Seek};
use std::path::Path;

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;

use super::{log_files, LogLine, MAX_LOG_BYTES};
use crate::contract::Lane;

/// At most this much of each log file is read (its newest part): four times the size at which
/// the log rotates.
pub const MAX_READ_BYTES: u64 = 4 * MAX_LOG_BYTES;

/// Latency percentiles in milliseconds (nearest rank).
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Latency {
    pub count: u64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
}

impl Latency {
    fn of(mut ms: Vec<f64>) -> Latency {
        ms.sort_by(f64::total_cmp);
        let at = |p: f64| -> f64 {
            if ms.is_empty() {
                return 0.0;
            }
            let rank = ((p * ms.len() as f64).ceil() as usize).clamp(1, ms.len());
            (ms[rank - 1] * 10.0).round() / 10.0
        };
        Latency {
            count: ms.len() as u64,
            p50_ms: at(0.50),
            p95_ms: at(0.95),
            p99_ms: at(0.99),
        }
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LaneReport {
    pub lane: Lane,
    pub latency: Latency,
    pub degraded: u64,
    /// Degraded answers over the requests where the lane ran.
    pub degradation_rate: f64,
    /// Degradations by reason class (`timeout`, an issue code, `capability_degraded`).
    pub reasons: BTreeMap<String, u64>,
}

/// Everything `knowledge stats` shows.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct StatsReport {
    pub since: Option<String>,
    pub first_at: Option<String>,
    pub last_at: Option<String>,
    pub requests: u64,
    /// Requests by operation (`search`, `get_episode`).
    pub by_operation: BTreeMap<String, u64>,
    pub latency_by_operation: BTreeMap<String, Latency>,
    pub lanes: Vec<LaneReport>,
    /// Searches that returned nothing, over all searches.
    pub zero_result_rate: f64,
    /// Searches whose answer carried both episode and code evidence (contract §11).
    pub both_evidence_rate: f64,
    /// Searches the token budget cut short.
    pub budget_truncations: u64,
    pub budget_truncation_rate: f64,
    /// Log lines that could not be read (another version's format, a torn write).
    pub unreadable_lines: u64,
}

/// A `--since` value: an RFC 3339 time or a span back from now (`30m`, `12h`, `7d`).
pub fn parse_since(text: &str, now: DateTime<Utc>) -> Result<DateTime<Utc>, String> {
    let t = text.trim();
    if let Ok(at) = DateTime::parse_from_rfc3339(t) {
        return Ok(at.with_timezone(&Utc));
    }
    let bad = || {
        format!(
            "--since {t:?}: expected an RFC 3339 time (2026-05-01T00:00:00Z) or a span such as \
             30m, 12h or 7d"
        )
    };
    let split = t.char_indices().last().map_or(0, |(i, _)| i);
    let (num, unit) = t.split_at(split);
    let n: i64 = num.parse().map_err(|_| bad())?;
    let span = match unit {
        "s" => Duration::try_seconds(n),
        "m" => Duration::try_minutes(n),
        "h" => Duration::try_hours(n),
        "d" => Duration::try_days(n),
        _ => None,
    }
    .ok_or_else(bad)?;
    // A span past the calendar's start (`99999999999d`) is refused, not a panic.
    now.checked_sub_signed(span).ok_or_else(bad)
}

/// Read the log at `path` (with its rotated generations) and compute the report.
pub fn stats(log_path: &Path, since: Option<DateTime<Utc>>) -> std::io::Result<StatsReport> {
    let (mut lines, unreadable) = read_log(log_path)?;
    if let Some(since) = since {
        lines.retain(|l| DateTime::parse_from_rfc3339(&l.at).is_ok_and(|at| at >= since));
    }
    let mut report = summarise(&lines);
    report.since = since.map(|s| s.to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
    report.unreadable_lines = unreadable;
    Ok(report)
}

/// Every readable line of the log and its rotated generations, oldest first, and how many
/// lines could not be read.
pub fn read_log(log_path: &Path) -> std::io::Result<(Vec<LogLine>, u64)> {
    let mut lines = Vec::new();
    let mut unreadable = 0;
    for file in log_files(log_path) {
        // A FIFO or device in place of the log would block or never end: refused.
        let mut f = crate::sources::regular_file::open(&file)?;
        // Rotation keeps each file near `MAX_LOG_BYTES`; of a bigger one (written by hand, or
        // grown by another program) only the newest `MAX_READ_BYTES` are read.
        let len = f.metadata()?.len();
        let cut = len.saturating_sub(MAX_READ_BYTES);
        f.seek(std::io::SeekFrom::Start(cut))?;
        let mut reader = std::io::BufReader::new(f.take(MAX_READ_BYTES));
        if cut > 0 {
            // The first line read is the tail of one cut in the middle.
            let mut torn = Vec::new();
            reader.read_until(b'\n', &mut torn)?;
            unreadable += 1;
        }
        for raw in reader.lines() {
            let Ok(raw) = raw else {
                unreadable += 1;
                continue;
            };
            if raw.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<LogLine>(&raw) {
                Ok(l) => lines.push(l),
                Err(_) => unreadable += 1,
            }
        }
    }
    Ok((lines, unreadable))
}

/// One report per day of `days` (each `(since_ms, until_ms)`, until exclusive) over the lines
/// logged in it: the activity view's lane-health sparklines.
pub fn by_day(lines: &[LogLine], days: &[(i64, i64)]) -> Vec<StatsReport> {
    let mut per_day: Vec<Vec<LogLine>> = vec![Vec::new(); days.len()];
    for l in lines {
        let Ok(at) = DateTime::parse_from_rfc3339(&l.at) else {
            continue;
        };
        let ms = at.timestamp_millis();
        // Days are in order: find the one holding `ms`.
        let i = days.partition_point(|(_, until)| *until <= ms);
        if days.get(i).is_some_and(|(since, _)| *since <= ms) {
            per_day[i].push(l.clone());
        }
    }
    per_day.iter().map(|d| summarise(d)).collect()
}

/// The report over parsed log lines.
pub fn summarise(lines: &[LogLine]) -> StatsReport {
    let mut by_operation = BTreeMap::new();
    let mut op_ms: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut lane_ms: BTreeMap<Lane, Vec<f64>> = BTreeMap::new();
    let mut lane_degraded: BTreeMap<Lane, BTreeMap<String, u64>> = BTreeMap::new();
    let (mut searches, mut zero, mut both, mut truncated) = (0u64, 0u64, 0u64, 0u64);
    for l in lines {
        *by_operation.entry(l.op.clone()).or_insert(0) += 1;
        op_ms.entry(l.op.clone()).or_default().push(l.ms);
        for lane in &l.lanes {
            lane_ms.entry(lane.lane).or_default().push(lane.ms);
            let reasons = lane_degraded.entry(lane.lane).or_default();
            if lane.degraded {
                let reason = lane.reason.clone().unwrap_or_else(|| "unknown".into());
                *reasons.entry(reason).or_insert(0) += 1;
            }
        }
        if l.op != "search" {
            continue;
        }
        searches += 1;
        zero += u64::from(l.returned == 0);
        truncated += u64::from(l.truncated);
        let evidence = |lane: Lane| l.lanes.iter().any(|x| x.lane == lane && x.returned > 0);
        both += u64::from(evidence(Lane::Episodes) && evidence(Lane::Code));
    }
    let rate = |n: u64, of: u64| {
        if of == 0 {
            0.0
        } else {
            (n as f64 / of as f64 * 1000.0).round() / 1000.0
        }
    };
    let mut lanes: Vec<LaneReport> = lane_ms
        .into_iter()
        .map(|(lane, ms)| {
            let reasons = lane_degraded.remove(&lane).unwrap_or_default();
            let degraded: u64 = reasons.values().sum();
            let ran = ms.len() as u64;
            LaneReport {
                lane,
                latency: Latency::of(ms),
                degraded,
                degradation_rate: rate(degraded, ran),
                reasons,
            }
        })
        .collect();
    // By name, as the report always listed them (`code`, `episodes`, `skills`).
    lanes.sort_by_key(|r| r.lane.as_str());
    StatsReport {
        since: None,
        first_at: lines.iter().map(|l| l.at.clone()).min(),
        last_at: lines.iter().map(|l| l.at.clone()).max(),
        requests: lines.len() as u64,
        by_operation,
        latency_by_operation: op_ms
            .into_iter()
            .map(|(op, ms)| (op, Latency::of(ms)))
            .collect(),
        lanes,
        zero_result_rate: rate(zero, searches),
        both_evidence_rate: rate(both, searches),
        budget_truncations: truncated,
        budget_truncation_rate: rate(truncated, searches),
        unreadable_lines: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_use_the_nearest_rank() {
        let l = Latency::of((1..=100).map(f64::from).collect());
        assert_eq!((l.p50_ms, l.p95_ms, l.p99_ms), (50.0, 95.0, 99.0));
        assert_eq!(Latency::of(vec![7.0]).p99_ms, 7.0);
        assert_eq!(Latency::of(Vec::new()).count, 0);
    }

    fn search(ms: f64, lanes: &[(&str, u32, Option<&str>)], truncated: bool) -> LogLine {
        use crate::engine::log::LaneLog;
        LogLine {
            at: "2026-05-01T00:00:00.000Z".into(),
            op: "search".into(),
            request_id: None,
            ms,
            lanes: lanes
                .iter()
                .map(|(lane, returned, reason)| LaneLog {
                    lane: Lane::parse(lane).expect("a lane"),
                    ms: ms / 2.0,
                    items: *returned,
                    returned: *returned,
                    degraded: reason.is_some(),
                    reason: reason.map(str::to_string),
                })
                .collect(),
            returned: lanes.iter().map(|l| l.1).sum(),
            truncated,
            codes: Vec::new(),
        }
    }

    #[test]
    fn degradations_are_counted_by_lane_and_reason() {
        let lines = vec![
            search(10.0, &[("episodes", 3, None), ("code", 2, None)], false),
            search(
                20.0,
                &[("episodes", 1, None), ("code", 0, Some("timeout"))],
                true,
            ),
            search(
                30.0,
                &[("episodes", 0, None), ("code", 0, Some("timeout"))],
                false,
            ),
            search(
                40.0,
                &[
                    ("episodes", 0, Some("KNOWLEDGE_INDEX_NOT_READY")),
                    ("code", 4, None),
                ],
                false,
            ),
        ];
        let r = summarise(&lines);
        assert_eq!(r.requests, 4);
        assert_eq!(r.zero_result_rate, 0.25);
        assert_eq!(r.both_evidence_rate, 0.25);
        assert_eq!(r.budget_truncations, 1);
        let code = r.lanes.iter().find(|l| l.lane == Lane::Code).unwrap();
        assert_eq!(code.degraded, 2);
        assert_eq!(code.degradation_rate, 0.5);
        assert_eq!(code.reasons.get("timeout"), Some(&2));
        let ep = r.lanes.iter().find(|l| l.lane == Lane::Episodes).unwrap();
        assert_eq!(ep.reasons.get("KNOWLEDGE_INDEX_NOT_READY"), Some(&1));
        assert_eq!(r.latency_by_operation["search"].p50_ms, 20.0);
    }

    #[test]
    fn since_takes_a_time_or_a_span() {
        let now = DateTime::parse_from_rfc3339("2026-05-02T00:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(
            parse_since("1d", now).unwrap().to_rfc3339(),
            "2026-05-01T00:00:00+00:00"
        );
        assert_eq!(
            parse_since("2026-04-01T10:00:00+02:00", now)
                .unwrap()
                .to_rfc3339(),
            "2026-04-01T08:00:00+00:00"
        );
        assert!(parse_since("yesterday", now).unwrap_err().contains("30m"));
        assert!(parse_since("5w", now).is_err());
        assert!(parse_since("99999999999d", now).unwrap_err().contains("7d"));
        assert!(parse_since("-99999999999d", now).is_err());
    }

    /// A lane this build does not know (a later build's log) leaves the request in the figures;
    /// only that lane is left out.
    #[test]
    fn a_line_with_an_unknown_lane_still_counts() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("knowledge.log");
        let line = |lane: &str| {
            format!(
                r#"{{"at":"2026-05-01T00:00:00.000Z","op":"search","request_id":null,"ms":10.0,"lanes":[{{"lane":"{lane}","ms":5.0,"items":1,"returned":1,"degraded":false,"reason":null}},{{"lane":"code","ms":5.0,"items":1,"returned":1,"degraded":false,"reason":null}}],"returned":2,"truncated":false,"codes":[]}}"#
            )
        };
        std::fs::write(&log, format!("{}\n{}\n", line("team"), line("episodes"))).unwrap();
        let (lines, unreadable) = read_log(&log).unwrap();
        assert_eq!((lines.len(), unreadable), (2, 0));
        assert_eq!(lines[0].lanes.len(), 1);
        let r = summarise(&lines);
        assert_eq!(r.requests, 2);
        assert_eq!(
            r.lanes
                .iter()
                .find(|l| l.lane == Lane::Code)
                .unwrap()
                .latency
                .count,
            2
        );
        std::fs::write(
            &log,
            line("episodes").replace(r#""items":1"#, r#""items":"x""#),
        )
        .unwrap();
        assert_eq!(
            read_log(&log).unwrap().1,
            1,
            "any other fault fails the line"
        );
    }
}
