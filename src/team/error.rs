//! What goes wrong with a team index: each failure a kind of its own, with the error under it
//! (PostgreSQL's, the local store's, the TLS settings') kept as its source. The text is made
//! only when it is shown, the same text a person always read.

use std::time::Duration;

use super::roles;
use super::tls::{Refusal, TlsError};

#[derive(Debug, thiserror::Error)]
pub enum TeamError {
    #[error("team URL: {0}")]
    BadUrl(#[source] UrlError),
    #[error("the team index at {url} cannot be reached: {why}")]
    Unreachable {
        url: String,
        #[source]
        why: Unreached,
    },
    #[error(
        "the team index has schema version {found}, newer than this knowledge understands \
         ({known}): upgrade knowledge on this machine"
    )]
    NewerSchema { found: i32, known: i32 },
    #[error(
        "the team index has no knowledge schema yet and this role cannot create it ({}): run \
         `knowledge push` once as the database owner (docs/TEAM.md)",
        describe(.0)
    )]
    CannotMigrate(#[source] postgres::Error),
    #[error(
        "the team index has no knowledge schema yet, and its first push creates the group \
         role(s) {groups}, which role {role} may not do (it has no CREATEROLE): as a superuser, \
         run `ALTER ROLE {role} CREATEROLE;` and push again, or create the group roles first: \
         `{create}` (docs/TEAM.md, section 1)",
        groups = .missing.join(" and "),
        create = roles::create_sql(.missing)
    )]
    CannotCreateRoles { role: String, missing: Vec<String> },
    /// A push role that kn_pusher maps to another machine (`pushes`), or to none.
    #[error(
        "this role may not push machine {machine}: {} (the database owner maps each push \
         role to its machine in kn_pusher, docs/TEAM.md)",
        pushes_what(.pushes)
    )]
    NotYourMachine {
        machine: String,
        pushes: Option<String>,
    },
    #[error("{name:?} is not a machine name: use 1 to 64 letters, digits, '.', '_' or '-'")]
    BadMachine { name: String },
    #[error("another push of machine {0} is running")]
    Busy(String),
    #[error("team index: {}", describe(.0))]
    Sql(#[from] postgres::Error),
    /// A query of a team lane failed on the server at `url` (shown without its password).
    #[error("team index: {url}: {}", describe(.source))]
    Query {
        url: String,
        #[source]
        source: postgres::Error,
    },
    /// Migration `number` (1-based) failed.
    #[error("team index: migration {number}: {}", describe(.source))]
    Migration {
        number: usize,
        #[source]
        source: postgres::Error,
    },
    /// Rows could not be written into a COPY.
    #[error("team index: {0}")]
    Copy(#[source] std::io::Error),
    #[error("team index: cannot start a {thread} thread: {source}")]
    Thread {
        thread: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("team index: no connection")]
    NoConnection,
    #[error("team index: the connection thread stopped unexpectedly")]
    ConnectionThreadStopped,
    #[error("local store {store}: {source}")]
    Local {
        store: &'static str,
        #[source]
        source: rusqlite::Error,
    },
    #[error("local store {store}: the reader stopped before the end")]
    ReaderStopped { store: &'static str },
}

/// Why a team URL cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum UrlError {
    #[error("it is empty: {forms}", forms = URL_FORMS)]
    Empty,
    /// `POSTGRESQL://`: libpq reads the scheme in lower case only.
    #[error(
        "{0}:// is not a PostgreSQL URL as libpq reads it: write the scheme in lower case \
         ({lower}://…)",
        lower = .0.to_ascii_lowercase()
    )]
    SchemeCase(String),
    #[error("{0}://… is not a PostgreSQL URL: {forms}", forms = URL_FORMS)]
    OtherScheme(String),
    /// Neither a URL nor key=value pairs (nothing of the text is echoed: it may hold a password).
    #[error(
        "not a PostgreSQL URL (it starts with neither postgresql:// nor postgres://) nor \
         key=value pairs (its first word holds no '='): {forms}",
        forms = URL_FORMS
    )]
    Neither,
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// What `postgres::Config` refuses in the rest of the URL.
    #[error("{}", describe(.0))]
    Parse(#[source] postgres::Error),
}

/// The two forms libpq reads, for an error about a text that is neither.
const URL_FORMS: &str = "give postgresql://USER@HOST/DATABASE (or postgres://…), or key=value \
                         pairs (host=HOST dbname=DATABASE user=USER)";

/// Why a connection to the team server was not made.
#[derive(Debug, thiserror::Error)]
pub enum Unreached {
    /// The connection failed; `explained` is what the URL's TLS settings make of the failure,
    /// when they explain it.
    #[error("{}", refused(.explained, .source))]
    Refused {
        explained: Option<Refusal>,
        #[source]
        source: postgres::Error,
    },
    /// The whole connect budget passed without an answer.
    #[error(
        "no answer within {} s (the host accepted the connection but did not speak \
         PostgreSQL): check the host and port, or raise connect_timeout=SECONDS in the URL",
        .0.as_secs()
    )]
    Silent(Duration),
    /// A probe that waits less than a connect may take gave up.
    #[error(
        "no answer within {} ms (`knowledge doctor` waits for the whole connect and says more)",
        .0.as_millis()
    )]
    NotWaited(Duration),
}

fn pushes_what(pushes: &Option<String>) -> String {
    match pushes {
        Some(m) => format!("it pushes machine {m}"),
        None => "it is not a push role".to_string(),
    }
}

fn refused(explained: &Option<Refusal>, e: &postgres::Error) -> String {
    match explained {
        Some(why) => why.to_string(),
        None => describe(e),
    }
}

/// A PostgreSQL error in one line, with the server's message when it sent one.
pub fn describe(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => {
            let mut s = e.to_string();
            let mut src = std::error::Error::source(e);
            while let Some(inner) = src {
                s.push_str(": ");
                s.push_str(&inner.to_string());
                src = inner.source();
            }
            s
        }
    }
}
