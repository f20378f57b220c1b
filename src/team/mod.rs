//! A team on one index: every machine pushes its redacted episodes and code chunks to one
//! PostgreSQL database, and anyone with the search role answers from it through the same lane
//! traits as the local stores (`knowledge search --team URL`, the explorer, `knowledge mcp`).
//!
//! - `schema.rs`: the migrations (versioned SQL in `migrations/`), applied on an empty database
//!   and refused on a newer one;
//! - `roles.rs`: the group roles the schema grants to, and whether this role may make them;
//! - `server.rs`: a server's version, schema, this role's rights and `shared_buffers`, for
//!   `knowledge doctor`;
//! - `push.rs`: `knowledge push`, incremental by each store's revision and per-session
//!   watermarks, atomic per batch, redaction checked again;
//! - `source.rs`: the team as a source behind the episodes and code lanes (a `tsvector` of our own
//!   token stream, so the team matches the same stems as the local index);
//! - the lanes go into an engine (beside this machine's indexes or in their place) in the
//!   crate's composition root, `wiring.rs`;
//! - `tls.rs`: libpq's `sslmode`/`sslrootcert` on rustls, and handshake failures explained.
//!
//! Who may see what is row-level security (docs/TEAM.md): a push role writes and reads only its
//! own machine's rows, the search role reads everything and writes nothing.

mod code;
mod conn;
mod error;
mod mirrors;
pub mod push;
pub mod roles;
pub mod schema;
pub mod server;
mod skills;
pub mod source;
pub mod tiers;
pub mod tls;
pub mod tsv;
mod vectors;

use std::fmt;
use std::time::Duration;

pub use error::{describe, TeamError, Unreached, UrlError};

/// How long a connection attempt may take before the team source is unavailable.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// A team database URL (`postgresql://user:${PGPASSWORD}@host/db?sslmode=verify-full`, or
/// `host=/run/pg user=…`), checked once (its CA file read then); shown without its password.
#[derive(Clone)]
pub struct TeamUrl {
    config: postgres::Config,
    tls: tls::Tls,
    shown: String,
}

impl TeamUrl {
    pub fn parse(url: &str) -> Result<TeamUrl, TeamError> {
        if let Some(why) = not_a_postgres_url(url) {
            return Err(TeamError::BadUrl(why));
        }
        let (rest, settings) = tls::split(url).map_err(|e| TeamError::BadUrl(e.into()))?;
        let mut config: postgres::Config = rest
            .parse()
            .map_err(|e| TeamError::BadUrl(UrlError::Parse(e)))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        if config.get_application_name().is_none() {
            config.application_name("knowledge");
        }
        // The port is shown when it is not PostgreSQL's: "cannot be reached" is about a host
        // *and* a port, and a wrong port is the usual cause.
        let ports = config.get_ports();
        let hosts: Vec<String> = config
            .get_hosts()
            .iter()
            .enumerate()
            .map(|(i, h)| {
                let host = match h {
                    postgres::config::Host::Tcp(h) => h.clone(),
                    #[cfg(unix)]
                    postgres::config::Host::Unix(p) => p.display().to_string(),
                };
                let port = ports.get(i).or(ports.first().filter(|_| ports.len() == 1));
                match port {
                    Some(p) if *p != 5432 => format!("{host}:{p}"),
                    _ => host,
                }
            })
            .collect();
        let shown = format!(
            "postgresql://{}@{}/{}",
            config.get_user().unwrap_or(""),
            hosts.join(","),
            config.get_dbname().unwrap_or("")
        );
        #[cfg(unix)]
        let unix_only = config
            .get_hosts()
            .iter()
            .all(|h| matches!(h, postgres::config::Host::Unix(_)))
            && config.get_hostaddrs().is_empty();
        #[cfg(not(unix))]
        let unix_only = false;
        let tls = tls::prepare(&settings, unix_only).map_err(|e| TeamError::BadUrl(e.into()))?;
        config.ssl_mode(match (&tls.config, tls.mode) {
            (None, _) => postgres::config::SslMode::Disable,
            (Some(_), tls::SslMode::Prefer) => postgres::config::SslMode::Prefer,
            (Some(_), _) => postgres::config::SslMode::Require,
        });
        Ok(TeamUrl { config, tls, shown })
    }

    /// A new connection, encrypted as the URL's `sslmode` says (libpq's meaning, `prefer` by
    /// default; never over a unix socket).
    ///
    /// `connect_timeout` bounds only each TCP connect: a peer that accepts and then says nothing
    /// (a wrong port, a stuck proxy) would hold the TLS handshake or the startup forever, so the
    /// whole attempt runs on its own thread and is given up after every host's timeout and one
    /// more for the handshake (the abandoned thread ends when the peer closes or we exit).
    pub fn connect(&self) -> Result<postgres::Client, TeamError> {
        let (config, tls) = (self.config.clone(), self.tls.clone());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("team-connect".into())
            .spawn(move || {
                let connected = match &tls.config {
                    None => config.connect(postgres::NoTls),
                    Some(c) => {
                        config.connect(tokio_postgres_rustls::MakeRustlsConnect::new((**c).clone()))
                    }
                };
                let _ = tx.send(connected.map_err(|e| Unreached::Refused {
                    explained: tls::explain(&e, &tls),
                    source: e,
                }));
            })
            .map_err(|source| TeamError::Thread {
                thread: "connection",
                source,
            })?;
        let per_host = self
            .config
            .get_connect_timeout()
            .copied()
            .unwrap_or(CONNECT_TIMEOUT);
        let hosts = self.config.get_hosts().len().max(1) as u32;
        let budget = per_host * hosts + CONNECT_TIMEOUT;
        let unreachable = |why: Unreached| TeamError::Unreachable {
            url: self.shown.clone(),
            why,
        };
        match rx.recv_timeout(budget) {
            Ok(result) => result.map_err(unreachable),
            Err(_) => Err(unreachable(Unreached::Silent(budget))),
        }
    }
}

/// Why `url` is not a team URL at all, when it is neither a `postgresql://` URL nor key=value
/// pairs. Said before either parser sees it: the key=value one would report a detail of its own
/// syntax ("has no '=' and value") about an `http://` URL, echoing it, password and all. So
/// nothing of the text is echoed here but a scheme.
fn not_a_postgres_url(url: &str) -> Option<UrlError> {
    let t = url.trim_start();
    if t.trim_end().is_empty() {
        return Some(UrlError::Empty);
    }
    if t.starts_with("postgresql://") || t.starts_with("postgres://") {
        return None;
    }
    let scheme = t.find("://").map(|i| &t[..i]).filter(|s| {
        !s.is_empty()
            && s.len() <= 32
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.' | ':'))
    });
    match scheme {
        Some(s) if s.eq_ignore_ascii_case("postgresql") || s.eq_ignore_ascii_case("postgres") => {
            Some(UrlError::SchemeCase(s.to_string()))
        }
        Some(s) => Some(UrlError::OtherScheme(s.to_string())),
        None => {
            let first = t.split_whitespace().next().unwrap_or_default();
            (!first.contains('=')).then_some(UrlError::Neither)
        }
    }
}

impl fmt::Display for TeamUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown)
    }
}

impl fmt::Debug for TeamUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown)
    }
}

/// This machine's name when `--machine` does not give one: the host name.
pub fn default_machine() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}

/// A machine name: 1 to 64 characters of letters, digits, `.`, `_` and `-`.
pub fn check_machine(name: &str) -> Result<(), TeamError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(())
    } else {
        Err(TeamError::BadMachine {
            name: name.to_string(),
        })
    }
}

/// A stored sign code as the text of a `bit(128)`: bit `i` (from the left) is dimension `i`'s
/// sign, as [`crate::text::embed::sign_code`] packs it (dimension `i` in byte `i / 8`, bit
/// `i % 8`). A query's code goes through the same function, so `bit_count(a # b)` is the Hamming
/// distance the local scan ranks by.
pub fn code_bits(code: &[u8]) -> String {
    (0..code.len() * 8)
        .map(|i| {
            if code[i / 8] >> (i % 8) & 1 == 1 {
                '1'
            } else {
                '0'
            }
        })
        .collect()
}
