//! The connection every team lane shares the shape of: made on first use, on a thread of its
//! own, and waited for no longer than the lane may wait.
//!
//! A team host that accepts the TCP connection and then says nothing (a wrong port, a stuck
//! proxy) holds a connect for the whole connect budget (seconds). The lane's search already
//! gave up on it after its timeout, but every later lookup of the same answer (a session row,
//! an actor's facts) waited on the same connection, so the answer came after the budget, not
//! after the lane timeout. Here a connect runs on its own thread; a call waits for it at most
//! `patience` from the moment it started (the lane timeout for the search lanes), and a call
//! made after that fails at once, saying the server is still being connected to. A long-lived
//! front end (the explorer, `mcp`) gets the connection when it arrives; a connect that fails
//! slowly keeps the server aside for a while, so no call waits on it again.

use std::collections::HashMap;
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use super::{schema, tsv, TeamError, TeamUrl};
use crate::contract::Code;
use crate::lanes::SourceFailure;

/// A connection and the schema version of its database.
type Connected = (postgres::Client, i32);

/// One lazily made connection of a team lane.
pub struct TeamConn {
    url: TeamUrl,
    /// How long a call may wait for a connection being made, from when it started.
    patience: Duration,
    /// The connection and the schema version of its database.
    client: Mutex<Option<Connected>>,
    /// The connect under way on its own thread, if one is.
    pending: Mutex<Option<Pending>>,
    /// Document frequencies by (table, term), with when they were counted.
    dfs: Mutex<DfCache>,
    /// The last connection attempt that failed slowly, and why.
    slow: Mutex<Option<(Instant, SourceFailure)>>,
}

struct Pending {
    started: Instant,
    result: mpsc::Receiver<Result<Connected, SourceFailure>>,
}

/// A connection attempt this slow to fail marks the server as unreachable for [`SLOW_BACKOFF`].
const SLOW_CONNECT: Duration = Duration::from_secs(1);
const SLOW_BACKOFF: Duration = Duration::from_secs(15);

/// Patience of a connection with no lane deadline: longer than any connect budget (the connect
/// gives up by itself).
const UNHURRIED: Duration = Duration::from_secs(3600);

/// Counted document frequencies: (table, term) → (rows, when counted).
type DfCache = HashMap<(&'static str, String), (u64, Instant)>;

/// How long a counted document frequency is used before it is counted again.
const DF_TTL: Duration = Duration::from_secs(300);

impl TeamConn {
    /// A connection whose calls wait for the connect as long as it takes.
    pub fn new(url: TeamUrl) -> Arc<TeamConn> {
        TeamConn::with_patience(url, UNHURRIED)
    }

    /// A connection whose calls wait for a connect under way at most `patience` from its start.
    pub fn with_patience(url: TeamUrl, patience: Duration) -> Arc<TeamConn> {
        Arc::new(TeamConn {
            url,
            patience,
            client: Mutex::new(None),
            pending: Mutex::new(None),
            dfs: Mutex::new(HashMap::new()),
            slow: Mutex::new(None),
        })
    }

    /// Run `f` on the connection (made, and its schema checked, when there is none); a failure
    /// drops it so the next call connects again.
    pub(super) fn with<T>(
        &self,
        f: impl FnOnce(&mut postgres::Client) -> Result<T, postgres::Error>,
    ) -> Result<T, SourceFailure> {
        self.with_version(|c, _| f(c))
    }

    /// [`TeamConn::with`], also given the database's schema version (a version-1 index has no
    /// vector codes and no agent knowledge).
    pub(super) fn with_version<T>(
        &self,
        f: impl FnOnce(&mut postgres::Client, i32) -> Result<T, postgres::Error>,
    ) -> Result<T, SourceFailure> {
        let mut guard = self.client.lock().unwrap_or_else(|p| p.into_inner());
        if guard.is_none() {
            *guard = Some(self.connected()?);
        }
        let Some((client, version)) = guard.as_mut() else {
            return Err(fail(TeamError::NoConnection));
        };
        match f(client, *version) {
            Ok(v) => Ok(v),
            Err(source) => {
                *guard = None;
                Err(fail(TeamError::Query {
                    url: self.url.to_string(),
                    source,
                }))
            }
        }
    }

    /// The connect under way (started here when there is none), waited for at most what is
    /// left of [`TeamConn::patience`].
    fn connected(&self) -> Result<Connected, SourceFailure> {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        if pending.is_none() {
            if let Some((at, why)) = self.slow.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
                if at.elapsed() < SLOW_BACKOFF {
                    return Err(why.clone());
                }
            }
            *pending = Some(self.start_connect()?);
        }
        let Some(p) = pending.as_ref() else {
            return Err(fail(TeamError::NoConnection));
        };
        let left = self.patience.saturating_sub(p.started.elapsed());
        match p.result.recv_timeout(left) {
            Ok(result) => {
                let took = p.started.elapsed();
                *pending = None;
                let mut slow = self.slow.lock().unwrap_or_else(|p| p.into_inner());
                match &result {
                    Ok(_) => *slow = None,
                    // A server that made us wait (a connect timeout) is not asked again for a
                    // while: every lookup would wait as long. A refusal is cheap to retry.
                    Err(why) if took >= SLOW_CONNECT => *slow = Some((Instant::now(), why.clone())),
                    Err(_) => {}
                }
                result
            }
            Err(mpsc::RecvTimeoutError::Timeout) => Err(SourceFailure::new(
                Code::SourceUnavailable,
                format!(
                    "{} did not answer within {} ms (still connecting)",
                    self.url,
                    self.patience.as_millis()
                ),
            )),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                *pending = None;
                Err(fail(TeamError::ConnectionThreadStopped))
            }
        }
    }

    /// Starts connecting on a thread of its own: connect, settings, schema check.
    fn start_connect(&self) -> Result<Pending, SourceFailure> {
        let url = self.url.clone();
        let (tx, rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("team-lane-connect".into())
            .spawn(move || {
                let _ = tx.send(open(&url));
            })
            .map_err(|source| {
                fail(TeamError::Thread {
                    thread: "connection",
                    source,
                })
            })?;
        Ok(Pending {
            started: Instant::now(),
            result: rx,
        })
    }

    pub(super) fn name(&self, lane: &str) -> String {
        format!("team.{lane}:{}", self.url)
    }

    /// How many rows of `table` (`kn_event`, `kn_chunk`) each term's `tsv` matches, counted up
    /// to `cap + 1` (more only says "common"), in one round trip. Kept for [`DF_TTL`]: document
    /// frequencies move slowly, and a term asked again costs nothing.
    pub(super) fn frequencies(
        &self,
        table: &'static str,
        terms: &[String],
        cap: u64,
    ) -> Result<Vec<u64>, SourceFailure> {
        let now = Instant::now();
        let mut known: HashMap<&str, u64> = HashMap::new();
        {
            let cache = self.dfs.lock().unwrap_or_else(|p| p.into_inner());
            for t in terms {
                if let Some((df, at)) = cache.get(&(table, t.clone())) {
                    if now.duration_since(*at) < DF_TTL {
                        known.insert(t.as_str(), *df);
                    }
                }
            }
        }
        let missing: Vec<String> = terms
            .iter()
            .filter(|t| !known.contains_key(t.as_str()))
            .map(|t| tsv::term(t))
            .collect();
        if !missing.is_empty() {
            let sql = format!(
                "SELECT (SELECT count(*) FROM (SELECT 1 FROM {table}
                         WHERE tsv @@ CAST(t AS tsquery) LIMIT $2) x)
                 FROM unnest($1::text[]) WITH ORDINALITY AS u(t, i) ORDER BY i"
            );
            let limit = (cap + 1) as i64;
            let counts = self.with(|c| c.query(&sql, &[&missing, &limit]))?;
            let mut cache = self.dfs.lock().unwrap_or_else(|p| p.into_inner());
            let asked = terms.iter().filter(|t| !known.contains_key(t.as_str()));
            for (t, r) in asked.zip(counts.iter()) {
                let df = r.get::<_, i64>(0).max(0) as u64;
                cache.insert((table, t.clone()), (df, now));
            }
            for t in terms {
                if let Some((df, _)) = cache.get(&(table, t.clone())) {
                    known.entry(t.as_str()).or_insert(*df);
                }
            }
        }
        Ok(terms
            .iter()
            .map(|t| known.get(t.as_str()).copied().unwrap_or(0))
            .collect())
    }
}

/// A new connection to `url`, ready for the lanes' queries, with its schema version.
fn open(url: &TeamUrl) -> Result<Connected, SourceFailure> {
    let mut c = url.connect().map_err(fail)?;
    // A search's queries take milliseconds: JIT compiling one (PostgreSQL does once a plan's
    // estimated cost passes `jit_above_cost`, 100,000: the frequency count of a query of 15
    // terms or more is estimated so) costs more than it saves.
    c.batch_execute("SET jit = off")
        .map_err(|e| fail(TeamError::Sql(e)))?;
    let v = schema::check(&mut c).map_err(fail)?;
    if v == 0 {
        return Err(SourceFailure::new(
            Code::IndexNotReady,
            format!("{url} holds no team index yet (run `knowledge push --to …` on a machine)"),
        ));
    }
    Ok((c, v))
}

pub(super) fn fail(e: TeamError) -> SourceFailure {
    SourceFailure::caused(Code::SourceUnavailable, e)
}
