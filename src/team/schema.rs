//! The team database's schema, versioned in the repository (`migrations/NNNN_*.sql`, applied in
//! order, each in one transaction with the version it reaches). `knowledge push` applies what a
//! database lacks; a database newer than this build is refused with a clear message, never
//! written to.

use super::TeamError;

/// The migrations in order; the index + 1 is the version each one reaches.
const MIGRATIONS: &[&str] = &[
    include_str!("migrations/0001_init.sql"),
    include_str!("migrations/0002_knowledge_vectors.sql"),
    include_str!("migrations/0003_push_speed.sql"),
];

/// The schema version this build reads and writes.
pub const VERSION: i32 = MIGRATIONS.len() as i32;

/// A fixed key for the advisory lock under which migrations run (two first pushes at once).
const MIGRATION_LOCK: i64 = 0x6b6e_6f77_0001;

/// The database's schema version (0: none yet).
pub fn version(client: &mut postgres::Client) -> Result<i32, TeamError> {
    let exists: bool = client
        .query_one("SELECT to_regclass('kn_schema') IS NOT NULL", &[])?
        .get(0);
    if !exists {
        return Ok(0);
    }
    let row = client.query_opt("SELECT max(version) FROM kn_schema", &[])?;
    Ok(row.and_then(|r| r.get::<_, Option<i32>>(0)).unwrap_or(0))
}

/// Refuse a database this build does not understand; `Ok(found)` otherwise.
pub fn check(client: &mut postgres::Client) -> Result<i32, TeamError> {
    let found = version(client)?;
    if found > VERSION {
        return Err(TeamError::NewerSchema {
            found,
            known: VERSION,
        });
    }
    Ok(found)
}

/// Bring the database to [`VERSION`]; returns the version it had.
pub fn migrate(client: &mut postgres::Client) -> Result<i32, TeamError> {
    let before = check(client)?;
    if before == VERSION {
        return Ok(before);
    }
    let mut tx = client.transaction()?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])?;
    // Another first push may have migrated while this one waited for the lock.
    let now = version_in(&mut tx)?;
    if now == 0 {
        super::roles::check_first_push(&mut tx)?;
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(now as usize) {
        tx.batch_execute(sql).map_err(|e| match e.code() {
            Some(c) if *c == postgres::error::SqlState::INSUFFICIENT_PRIVILEGE => {
                TeamError::CannotMigrate(e)
            }
            _ => TeamError::Migration {
                number: i + 1,
                source: e,
            },
        })?;
        if i > 0 {
            tx.execute("UPDATE kn_schema SET version = $1", &[&(i as i32 + 1)])?;
        }
    }
    tx.commit()?;
    Ok(before)
}

fn version_in(tx: &mut postgres::Transaction<'_>) -> Result<i32, TeamError> {
    let exists: bool = tx
        .query_one("SELECT to_regclass('kn_schema') IS NOT NULL", &[])?
        .get(0);
    if !exists {
        return Ok(0);
    }
    let v: Option<i32> = tx
        .query_one("SELECT max(version) FROM kn_schema", &[])?
        .get(0);
    Ok(v.unwrap_or(0))
}
