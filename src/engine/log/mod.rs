//! The request log: one JSON line per request with its id, timings, counts and codes.
//!
//! By contract (§10) it never holds the query text or any snippet; the types here make that
//! hard to get wrong: a [`LogLine`] has no string field that could carry user text except the
//! caller-chosen `request_id`, which is clipped and stripped of control characters. Every other
//! string is an engine-chosen name (operation, lane, reason class, issue code).
//!
//! The file rotates: once it passes a size bound it becomes `knowledge.log.1` (the older
//! generations shift up and the oldest is dropped), so a long-running server never fills the disk.

pub mod stats;

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::contract::{Code, Lane, LaneHeader, SearchRequest, SearchResponse, Trace};

/// Rotate once the live file reaches this size.
pub const MAX_LOG_BYTES: u64 = 4 * 1024 * 1024;
/// Rotated generations kept beside the live file (`.1` newest … `.3` oldest).
pub const LOG_GENERATIONS: u32 = 3;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LogLine {
    pub at: String,
    pub op: String,
    pub request_id: Option<String>,
    pub ms: f64,
    #[serde(deserialize_with = "known_lanes")]
    pub lanes: Vec<LaneLog>,
    pub returned: u32,
    pub truncated: bool,
    pub codes: Vec<String>,
}

/// A line's lanes, without those this build does not know (a later build's, read back by this
/// one): the request still counts, only that lane is left out. Any other fault fails the line.
fn known_lanes<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<LaneLog>, D::Error> {
    let mut lanes = Vec::new();
    for v in Vec::<serde_json::Value>::deserialize(d)? {
        let unknown = v
            .get("lane")
            .and_then(|l| l.as_str())
            .is_some_and(|l| Lane::parse(l).is_none());
        if !unknown {
            lanes.push(serde_json::from_value(v).map_err(serde::de::Error::custom)?);
        }
    }
    Ok(lanes)
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LaneLog {
    pub lane: Lane,
    pub ms: f64,
    /// Candidates the lane answered with (before fusion and budget).
    pub items: u32,
    /// Items of this lane in the response (after the budget): evidence the caller got.
    #[serde(default)]
    pub returned: u32,
    pub degraded: bool,
    /// Why the lane degraded, as a class (`timeout`, an issue code, `capability_degraded`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Appends log lines to a file; a failure to log never fails a request.
pub struct RequestLog {
    path: Option<PathBuf>,
    max_bytes: u64,
    generations: u32,
    lock: Mutex<()>,
}

impl RequestLog {
    pub fn new(path: Option<PathBuf>) -> Self {
        Self::with_rotation(path, MAX_LOG_BYTES, LOG_GENERATIONS)
    }

    /// A log that rotates at `max_bytes`, keeping `generations` old files.
    pub fn with_rotation(path: Option<PathBuf>, max_bytes: u64, generations: u32) -> Self {
        RequestLog {
            path,
            max_bytes,
            generations,
            lock: Mutex::new(()),
        }
    }

    pub fn write(&self, mut line: LogLine) {
        let Some(path) = &self.path else { return };
        // The client chooses the request id: it may hold what a log must never (a secret).
        line.request_id = line.request_id.map(|id| {
            let id: String = id.chars().filter(|c| !c.is_control()).take(64).collect();
            crate::text::redact::redact(&id).text
        });
        let Ok(text) = serde_json::to_string(&line) else {
            return;
        };
        let _guard = self.lock.lock();
        // Only the `logs/` folder is made: a data dir that does not exist (a mistyped
        // `--data-dir`) is never created by a reader.
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir(dir);
        }
        if std::fs::metadata(path).is_ok_and(|m| m.len() >= self.max_bytes) {
            rotate(path, self.generations);
        }
        if let Some(mut f) = open_for_append(path) {
            let _ = writeln!(f, "{text}");
        }
    }
}

/// The log file opened for appending, when it is (or becomes) a regular file. A FIFO put in
/// its place would block the open until a reader came (every search and `get-episode` hung on
/// one), a device such as `/dev/zero` takes writes forever: both are refused, and the request
/// goes unlogged.
fn open_for_append(path: &Path) -> Option<std::fs::File> {
    let mut options = OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).ok()?;
    file.metadata().ok()?.is_file().then_some(file)
}

/// The log line of a search: timings, counts, codes and per-lane evidence; never the query.
pub fn search_line(
    req: &SearchRequest,
    resp: &SearchResponse,
    traces: Option<&Trace>,
    ms: f64,
) -> LogLine {
    let lanes = traces
        .map(|t| {
            t.lanes
                .iter()
                .map(|l| {
                    let lane = l.lane;
                    let (header, returned) = match lane {
                        Lane::Episodes => (
                            Some(&resp.lanes.episodes.header),
                            resp.lanes.episodes.items.len(),
                        ),
                        Lane::Code => (Some(&resp.lanes.code.header), resp.lanes.code.items.len()),
                        Lane::Skills => (
                            resp.lanes.skills.as_ref().map(|s| &s.header),
                            resp.lanes.skills.as_ref().map_or(0, |s| s.items.len()),
                        ),
                    };
                    LaneLog {
                        lane,
                        ms: l.ms,
                        items: l.items,
                        returned: returned as u32,
                        degraded: l.degraded,
                        reason: l
                            .degraded
                            .then(|| degradation_class(resp, lane, header).to_string()),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    let mut codes: Vec<String> = resp
        .errors
        .iter()
        .chain(resp.warnings.iter())
        .map(|i| i.code.as_str().to_string())
        .collect();
    codes.dedup();
    LogLine {
        at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        op: "search".to_string(),
        request_id: req.request_id.clone(),
        ms,
        lanes,
        returned: resp.limits.returned,
        truncated: resp.limits.truncated,
        codes,
    }
}

/// Why a lane degraded, as a class the log may hold (never the free-text reason, which can name
/// paths): a timeout, the code of the lane's own issue, or the code lane's degraded capability.
fn degradation_class(
    resp: &SearchResponse,
    lane: Lane,
    header: Option<&LaneHeader>,
) -> &'static str {
    let reason = header.and_then(|h| h.degradation_reason.as_deref());
    if reason.is_some_and(|r| r.starts_with("timed out")) {
        return "timeout";
    }
    let own_issue =
        resp.errors.iter().chain(resp.warnings.iter()).find(|i| {
            i.lane == Some(lane) && !matches!(i.code, Code::LaneDegraded | Code::StaleIndex)
        });
    match own_issue {
        Some(i) => i.code.as_str(),
        None if lane == Lane::Code => "capability_degraded",
        None => Code::LaneDegraded.as_str(),
    }
}

/// `<log>.N` for generation N (1 is the newest rotated file).
pub fn generation_path(path: &Path, n: u32) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{n}"));
    PathBuf::from(name)
}

/// The live log and its rotated generations that exist, oldest first.
pub fn log_files(path: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = (1..=LOG_GENERATIONS)
        .rev()
        .map(|n| generation_path(path, n))
        .filter(|p| p.exists())
        .collect();
    if path.exists() {
        files.push(path.to_path_buf());
    }
    files
}

fn rotate(path: &Path, generations: u32) {
    if generations == 0 {
        let _ = std::fs::remove_file(path);
        return;
    }
    let _ = std::fs::remove_file(generation_path(path, generations));
    for n in (1..generations).rev() {
        let _ = std::fs::rename(generation_path(path, n), generation_path(path, n + 1));
    }
    let _ = std::fs::rename(path, generation_path(path, 1));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(op: &str) -> LogLine {
        LogLine {
            at: "2026-01-01T00:00:00.000Z".into(),
            op: op.into(),
            request_id: Some("id\u{1b}[31m".into()),
            ms: 1.0,
            lanes: Vec::new(),
            returned: 0,
            truncated: false,
            codes: Vec::new(),
        }
    }

    #[test]
    fn the_log_rotates_and_keeps_a_bounded_number_of_generations() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("logs/knowledge.log");
        let log = RequestLog::with_rotation(Some(path.clone()), 300, 2);
        for _ in 0..40 {
            log.write(line("search"));
        }
        let files = log_files(&path);
        assert_eq!(files.len(), 3, "{files:?}");
        assert!(!generation_path(&path, 3).exists());
        for f in &files {
            let len = std::fs::metadata(f).unwrap().len();
            assert!(len < 300 + 200, "{} is {len} bytes", f.display());
        }
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains('\u{1b}'), "control characters reach the log");
    }

    #[test]
    fn a_secret_in_a_request_id_never_reaches_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("logs/knowledge.log");
        let log = RequestLog::new(Some(path.clone()));
        let mut l = line("search");
        l.request_id = Some("req password=Rq2!CNRYq02".into());
        log.write(l);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("CNRY"), "{text}");
    }
}
