//! The request log: one JSON line per request with its id, timings, counts and codes.
//!
//! By contract (§10) it never holds the query text or any snippet; the types here make that
//! hard to get wrong: a [`LogLine`] has no string field that could carry user text except the
//! caller-chosen `request_id`, which is clipped and stripped of control characters.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct LogLine {
    pub at: String,
    pub op: &'static str,
    pub request_id: Option<String>,
    pub ms: f64,
    pub lanes: Vec<LaneLog>,
    pub returned: u32,
    pub truncated: bool,
    pub codes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct LaneLog {
    pub lane: &'static str,
    pub ms: f64,
    pub items: u32,
    pub degraded: bool,
}

/// Appends log lines to a file; a failure to log never fails a request.
pub struct RequestLog {
    path: Option<PathBuf>,
    lock: Mutex<()>,
}

impl RequestLog {
    pub fn new(path: Option<PathBuf>) -> Self {
        RequestLog {
            path,
            lock: Mutex::new(()),
        }
    }

    pub fn write(&self, mut line: LogLine) {
        let Some(path) = &self.path else { return };
        line.request_id = line.request_id.map(|id| {
            id.chars()
                .filter(|c| !c.is_control())
                .take(64)
                .collect::<String>()
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
        if let Ok(mut f) = OpenOptions::new().create(true).append(true).open(path) {
            let _ = writeln!(f, "{text}");
        }
    }
}
