//! What a team server is, read in one short connection: its PostgreSQL version, the schema
//! version of the team database, what the URL's role may do there, and the one setting a team
//! search depends on (`shared_buffers` against the size of `kn_event` and its indexes).
//!
//! It exists for `knowledge doctor` (`health/team.rs` judges these facts): a search or a push
//! only says what is wrong when it fails, and a slow server never fails, it only makes the
//! episodes lane miss its deadline. Everything here is readable by any role that may connect
//! (catalog views, size functions, settings), so the search role and a push role get the same
//! report as the owner.

use super::roles::{GroupRoles, Rights};
use super::{schema, TeamError, TeamUrl};

/// A server's facts, as `doctor --json` shows them.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ServerFacts {
    /// `SHOW server_version`.
    pub server_version: String,
    /// `server_version_num` (150000 for 15.0).
    pub server_version_num: i32,
    /// The URL's role, quoted as SQL needs it.
    pub role: String,
    /// The team database's schema version (0: nobody pushed yet; `None`: there is a schema
    /// and this role may not read it, so it is no role of the team's).
    pub schema_version: Option<i32>,
    /// May the role create the schema's tables (the database owner may)?
    pub may_create_tables: bool,
    /// Whether the role may create roles, and the group roles the cluster lacks.
    pub may_create_roles: bool,
    pub missing_groups: Vec<String>,
    /// What the role may do, once there is a schema to do it in.
    pub rights: Option<Rights>,
    /// `shared_buffers` in bytes.
    pub shared_buffers: i64,
    /// `kn_event` with its indexes and TOAST, in bytes (0 without a schema).
    pub event_bytes: i64,
    /// The planner's estimate of `kn_event`'s rows (`None` before its first analyze).
    pub events_estimate: Option<i64>,
}

/// The oldest server the team schema runs on (`bit_count`, `starts_with`).
pub const MIN_SERVER_VERSION: i32 = 150_000;

/// How long any one of these questions may take: a server that holds a lock on a catalog
/// must not hold `doctor`.
const STATEMENT_TIMEOUT: &str = "SET statement_timeout = '5s'";

/// Connect to `url` and read its facts.
pub fn read(url: &TeamUrl) -> Result<ServerFacts, TeamError> {
    let mut client = url.connect()?;
    client.batch_execute(STATEMENT_TIMEOUT)?;
    let row = client.query_one(
        "SELECT current_setting('server_version'),
                current_setting('server_version_num')::int,
                coalesce(has_schema_privilege(current_schema(), 'CREATE'), false),
                (SELECT s.setting::bigint * pg_size_bytes(s.unit)
                 FROM pg_settings s WHERE s.name = 'shared_buffers')",
        &[],
    )?;
    // The schema's tables are granted to the group roles alone: a login role in neither
    // cannot read its version, which says what it needs to hear (no rights), not an error.
    let readable: Option<bool> = client
        .query_one(
            "SELECT has_table_privilege(to_regclass('kn_schema')::oid, 'SELECT')",
            &[],
        )?
        .get(0);
    let schema_version = match readable {
        Some(false) => None,
        _ => Some(schema::version(&mut client)?),
    };
    let groups = GroupRoles::read(&mut client)?;
    let (rights, event_bytes, events_estimate) = if schema_version != Some(0) {
        let sizes = client.query_one(
            "SELECT pg_total_relation_size('kn_event'),
                    (SELECT CASE WHEN reltuples < 0 THEN NULL ELSE reltuples::bigint END
                     FROM pg_class WHERE oid = 'kn_event'::regclass)",
            &[],
        )?;
        (Some(Rights::read(&mut client)?), sizes.get(0), sizes.get(1))
    } else {
        (None, 0, None)
    };
    Ok(ServerFacts {
        server_version: row.get(0),
        server_version_num: row.get(1),
        role: groups.role,
        schema_version,
        may_create_tables: row.get(2),
        may_create_roles: groups.may_create,
        missing_groups: groups.missing,
        rights,
        shared_buffers: row.get::<_, Option<i64>>(3).unwrap_or(0),
        event_bytes,
        events_estimate,
    })
}

/// Connect to `url` and read its schema version: the least that says a server is up and is a
/// team index (`stats --chart --team`).
pub fn probe(url: &TeamUrl) -> Result<i32, TeamError> {
    let mut client = url.connect()?;
    client.batch_execute(STATEMENT_TIMEOUT)?;
    schema::version(&mut client)
}
