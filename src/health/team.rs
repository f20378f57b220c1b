//! `knowledge doctor`'s look at the team server (docs/TEAM.md): for each team URL this data
//! dir's commands use (`--team URL` for searching; `KNOWLEDGE_TEAM_URL`, else `[team] url`, for
//! pushing), whether the server answers, runs a PostgreSQL the schema needs, holds a schema this
//! build understands, lets the URL's role do what that URL is for, and keeps `kn_event` in its
//! shared buffers — each finding with the fix docs/TEAM.md gives.
//!
//! Without it, doctor reported a healthy data dir while every team search degraded: a server
//! that is down or refuses the role is only said by the lane that fails, and a server short of
//! shared buffers never fails at all, its episodes lane just misses the lane timeout (issue 36:
//! 600,000 events at the default 128 MB).

use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use super::doctor::Problem;
use crate::team::roles::{self, GroupRoles};
use crate::team::server::{self, ServerFacts, MIN_SERVER_VERSION};
use crate::team::{default_machine, schema, TeamUrl};

/// What a team URL is used for, which decides the rights it needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Purpose {
    Search,
    Push,
}

/// A team URL this data dir's commands use, and where it was given.
#[derive(Debug, Clone)]
pub struct TeamTarget {
    pub url: String,
    /// `--team`, `KNOWLEDGE_TEAM_URL` or `[team] url in PATH`.
    pub from: String,
    pub purpose: Purpose,
    /// The machine a push URL pushes (`[team] machine`, else the host name).
    pub machine: Option<String>,
}

/// One team URL's check, as `doctor --json` shows it under `team`.
#[derive(Debug, Clone, Serialize)]
pub struct TeamReport {
    /// The URL without its password.
    pub url: String,
    pub from: String,
    pub purpose: Purpose,
    pub machine: Option<String>,
    pub reachable: bool,
    pub error: Option<String>,
    pub server: Option<ServerFacts>,
    /// The schema version this build reads and writes.
    pub known_schema_version: i32,
    pub lane_timeout_ms: u64,
    pub problems: Vec<Problem>,
}

/// The team URLs of `data_dir`'s commands: `--team` (set on this process), then the push URL.
pub fn targets(data_dir: &Path) -> Vec<TeamTarget> {
    let mut out = Vec::new();
    if let Some(t) = crate::config::team_searched() {
        out.push(TeamTarget {
            url: t.url.clone(),
            from: "--team".into(),
            purpose: Purpose::Search,
            machine: None,
        });
    }
    // A broken config.toml is doctor's own finding; the environment's URL is still checked.
    let team = crate::config::Config::load(data_dir)
        .map(|c| c.team)
        .unwrap_or_default();
    let env = std::env::var("KNOWLEDGE_TEAM_URL")
        .ok()
        .filter(|u| !u.trim().is_empty());
    let push = match (env, team.url) {
        (Some(url), _) => Some((url, "KNOWLEDGE_TEAM_URL".to_string())),
        (None, Some(url)) => Some((
            url,
            format!(
                "[team] url in {}",
                crate::config::Config::path(data_dir).display()
            ),
        )),
        (None, None) => None,
    };
    if let Some((url, from)) = push {
        out.push(TeamTarget {
            url,
            from,
            purpose: Purpose::Push,
            machine: Some(team.machine.unwrap_or_else(default_machine)),
        });
    }
    out
}

/// Check every team URL of `data_dir` (none: nothing is asked of any server).
pub fn check_all(data_dir: &Path) -> Vec<TeamReport> {
    let lane_timeout = crate::engine::EngineConfig::load(data_dir)
        .map(|c| c.lane_timeout)
        .unwrap_or(Duration::from_millis(250));
    targets(data_dir)
        .iter()
        .map(|t| check(t, lane_timeout))
        .collect()
}

/// Check one team URL.
pub fn check(target: &TeamTarget, lane_timeout: Duration) -> TeamReport {
    let mut report = TeamReport {
        url: String::new(),
        from: target.from.clone(),
        purpose: target.purpose,
        machine: target.machine.clone(),
        reachable: false,
        error: None,
        server: None,
        known_schema_version: schema::VERSION,
        lane_timeout_ms: lane_timeout.as_millis() as u64,
        problems: Vec::new(),
    };
    let url = match TeamUrl::parse(&target.url) {
        Ok(u) => u,
        Err(e) => {
            let why = match &e {
                crate::team::TeamError::BadUrl(why) => why.to_string(),
                e => e.to_string(),
            };
            report.error = Some(e.to_string());
            report.problems.push(Problem {
                problem: format!("the team URL of {} cannot be used: {why}", target.from),
                fix: format!("correct it in {} (docs/TEAM.md, section 3)", target.from),
            });
            return report;
        }
    };
    report.url = url.to_string();
    if let Some(m) = target.machine.as_deref() {
        // A push refuses such a name before connecting; said here with where it came from.
        if let Err(e) = crate::team::check_machine(m) {
            report.problems.push(Problem {
                problem: format!("the machine this data dir pushes as: {e}"),
                fix: "set `[team] machine = \"NAME\"` in config.toml (or give push --machine)"
                    .into(),
            });
        }
    }
    match server::read(&url) {
        Ok(facts) => {
            report.reachable = true;
            let found = judge(&facts, target, &report.url, lane_timeout);
            report.problems.extend(found);
            report.server = Some(facts);
        }
        Err(e) => {
            report.error = Some(e.to_string());
            report.problems.push(Problem {
                problem: format!("{e} (the URL of {})", target.from),
                fix: format!(
                    "start the server, or check the host, port, database and credentials of {} \
                     (docs/TEAM.md: its TLS table lists each refusal and its fix)",
                    target.from
                ),
            });
        }
    }
    report
}

/// The team index at `url` (shown without its password) and its schema version, or why it
/// cannot be read: what `stats --chart --team` says about the team beside a chart of this
/// machine's index, waited for at most `wait`: a host that accepts and says nothing holds a
/// connect for the whole connect budget (seconds), and a chart should not wait for it.
pub fn probe_within(url: &str, wait: Duration) -> Result<(String, i32), crate::team::TeamError> {
    let parsed = TeamUrl::parse(url)?;
    let shown = parsed.to_string();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("team-probe".into())
        .spawn(move || {
            let _ = tx.send(server::probe(&parsed));
        })
        .map_err(|source| crate::team::TeamError::Thread {
            thread: "probe",
            source,
        })?;
    match rx.recv_timeout(wait) {
        Ok(found) => found.map(|v| (shown, v)),
        Err(_) => Err(crate::team::TeamError::Unreachable {
            url: shown,
            why: crate::team::Unreached::NotWaited(wait),
        }),
    }
}

fn judge(f: &ServerFacts, t: &TeamTarget, shown: &str, lane_timeout: Duration) -> Vec<Problem> {
    let at = format!("the team index at {shown} ({})", t.from);
    let mut out = Vec::new();
    if f.server_version_num < MIN_SERVER_VERSION {
        out.push(Problem {
            problem: format!(
                "{at} runs PostgreSQL {}: the team schema needs 15 or newer (bit_count, \
                 starts_with)",
                f.server_version
            ),
            fix: "upgrade the server to PostgreSQL 15 or newer (docs/TEAM.md, section 1)".into(),
        });
    }
    out.extend(schema_problem(f, t, &at));
    if let Some(r) = &f.rights {
        out.extend(rights_problem(r, t, &f.role));
    }
    if f.schema_version != Some(0) && f.shared_buffers > 0 && f.event_bytes > f.shared_buffers {
        let events = f
            .events_estimate
            .map(|n| format!(", ~{} events", thousands(n)))
            .unwrap_or_default();
        out.push(Problem {
            problem: format!(
                "{at}: shared_buffers is {}, smaller than kn_event with its indexes ({}{events}): \
                 a search of a common term reads its rows from outside PostgreSQL's shared \
                 buffers, and the episodes lane can miss its {} ms",
                size(f.shared_buffers),
                size(f.event_bytes),
                lane_timeout.as_millis()
            ),
            fix: format!(
                "in the server's postgresql.conf: shared_buffers = {} (the events with room to \
                 grow, at most ~25 % of its RAM), then restart PostgreSQL (docs/TEAM.md, Server \
                 settings); until then, `[lanes] timeout_ms = 1000` in config.toml waits longer",
                recommended(f.event_bytes)
            ),
        });
    }
    out
}

fn schema_problem(f: &ServerFacts, t: &TeamTarget, at: &str) -> Option<Problem> {
    let owner = f.rights.as_ref().is_some_and(|r| r.owner);
    // A schema this role may not read is a matter of its rights (`rights_problem`).
    let v = f.schema_version?;
    if v > schema::VERSION {
        return Some(Problem {
            problem: format!(
                "{at} has schema version {v}, newer than this knowledge understands ({})",
                schema::VERSION
            ),
            fix: "upgrade knowledge on this machine".into(),
        });
    }
    if v == 0 && t.purpose == Purpose::Push {
        if !f.may_create_tables {
            return Some(Problem {
                problem: format!(
                    "{at} has no knowledge schema yet, and role {} may not create its tables \
                     (it is not the database owner)",
                    f.role
                ),
                fix: "push once as the database owner, then with this role (docs/TEAM.md, \
                      sections 1 and 2)"
                    .into(),
            });
        }
        let groups = GroupRoles {
            role: f.role.clone(),
            may_create: f.may_create_roles,
            missing: f.missing_groups.clone(),
        };
        return groups.blocks_first_push().map(|e| Problem {
            problem: format!("{at}: {e}"),
            fix: format!(
                "as a superuser: `ALTER ROLE {} CREATEROLE;`, or `{}` (docs/TEAM.md, section 1)",
                f.role,
                roles::create_sql(&f.missing_groups)
            ),
        });
    }
    if v == 0 {
        return Some(Problem {
            problem: format!(
                "{at} has no knowledge schema yet: nobody has pushed to it, so a team search \
                 finds nothing"
            ),
            fix: "run `knowledge push` once as the database owner (docs/TEAM.md, section 1)".into(),
        });
    }
    // The owner's next push upgrades an older schema; anyone else waits for it.
    (v < schema::VERSION && !(owner && t.purpose == Purpose::Push)).then(|| Problem {
        problem: format!(
            "{at} has schema version {v}, older than this knowledge's ({})",
            schema::VERSION
        ),
        fix: "run `knowledge push` once as the database owner: it brings the schema up to date"
            .into(),
    })
}

fn rights_problem(r: &roles::Rights, t: &TeamTarget, quoted: &str) -> Option<Problem> {
    let literal = r.role.replace('\'', "''");
    match t.purpose {
        Purpose::Search if r.owner || r.searches => None,
        Purpose::Search if r.pushes => Some(Problem {
            problem: format!(
                "role {} (--team) is a push role: a search with it reads only its own machine's \
                 rows{}",
                r.role,
                r.machine
                    .as_ref()
                    .map(|m| format!(" ({m})"))
                    .unwrap_or_default()
            ),
            fix: format!(
                "give --team the lead's search role (docs/TEAM.md, section 2), or as the \
                 database owner: GRANT knowledge_search TO {quoted};"
            ),
        }),
        Purpose::Search => Some(Problem {
            problem: format!(
                "role {} (--team) may not search the team index: it is not a member of \
                 knowledge_search",
                r.role
            ),
            fix: format!(
                "as the database owner: GRANT knowledge_search TO {quoted}; (docs/TEAM.md, \
                 section 2)"
            ),
        }),
        Purpose::Push => {
            let machine = t.machine.clone().unwrap_or_default();
            let may = |why: String, fix: String| {
                Some(Problem {
                    problem: format!(
                        "role {} ({}) may not push machine {machine}: {why}",
                        r.role, t.from
                    ),
                    fix,
                })
            };
            if r.owner {
                return None;
            }
            if !r.pushes {
                return may(
                    "it is not a member of knowledge_push".into(),
                    format!(
                        "as the database owner: GRANT knowledge_push TO {quoted}; INSERT INTO \
                         kn_pusher VALUES ('{literal}', '{machine}'); (docs/TEAM.md, section 2)"
                    ),
                );
            }
            match &r.machine {
                Some(m) if *m == machine => None,
                Some(m) => may(
                    format!("it pushes machine {m}"),
                    format!(
                        "push as machine {m} (`[team] machine = \"{m}\"`), or as the database \
                         owner: UPDATE kn_pusher SET machine = '{machine}' WHERE role = \
                         '{literal}';"
                    ),
                ),
                None => may(
                    "kn_pusher maps no machine to it".into(),
                    format!(
                        "as the database owner: INSERT INTO kn_pusher VALUES ('{literal}', \
                         '{machine}'); (docs/TEAM.md, section 2)"
                    ),
                ),
            }
        }
    }
}

/// Bytes as PostgreSQL's units say them (MB and GB of 1024).
pub fn size(bytes: i64) -> String {
    const MB: f64 = 1024.0 * 1024.0;
    let b = bytes as f64;
    if b >= 1024.0 * MB {
        format!("{:.1} GB", b / (1024.0 * MB))
    } else {
        format!("{:.1} MB", b / MB)
    }
}

/// A `shared_buffers` for `event_bytes` of events: half as much again, in steps of 256 MB.
fn recommended(event_bytes: i64) -> String {
    const STEP: i64 = 256 * 1024 * 1024;
    let want = event_bytes.saturating_mul(3) / 2;
    let mb = ((want + STEP - 1) / STEP).max(1) * 256;
    if mb % 1024 == 0 {
        format!("{}GB", mb / 1024)
    } else {
        format!("{mb}MB")
    }
}

fn thousands(n: i64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recommended_shared_buffers_hold_the_events_with_room_to_grow() {
        let mb = 1024 * 1024;
        assert_eq!(recommended(mb), "256MB");
        assert_eq!(recommended(400 * mb), "768MB");
        assert_eq!(recommended(560 * mb), "1GB");
        assert_eq!(recommended(10 * 1024 * mb), "15GB");
        assert_eq!(thousands(600_000), "600,000");
        assert_eq!(size(128 * mb), "128.0 MB");
    }
}
