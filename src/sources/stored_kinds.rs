//! The contract's closed vocabularies (`contract::kinds`) as store cells: written and read as
//! the same text the wire shows, in SQLite and in the team's PostgreSQL.
//!
//! A reader asks for the enum (`row.get::<_, Outcome>(i)`) so a value becomes typed at the
//! store's edge, not after it has travelled as a string through the engine.

use crate::contract::kinds::{ActorKind, EventKind, Outcome, ReviewStatus};

macro_rules! stored_as_text {
    ($ty:ty, $from:path) => {
        impl rusqlite::types::FromSql for $ty {
            fn column_result(
                v: rusqlite::types::ValueRef<'_>,
            ) -> rusqlite::types::FromSqlResult<Self> {
                v.as_str().map($from)
            }
        }

        impl rusqlite::types::ToSql for $ty {
            fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
                Ok(rusqlite::types::ToSqlOutput::from(self.as_str()))
            }
        }

        impl<'a> postgres::types::FromSql<'a> for $ty {
            fn from_sql(
                ty: &postgres::types::Type,
                raw: &'a [u8],
            ) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
                <&str as postgres::types::FromSql>::from_sql(ty, raw).map($from)
            }
            fn accepts(ty: &postgres::types::Type) -> bool {
                <&str as postgres::types::FromSql>::accepts(ty)
            }
        }
    };
}

stored_as_text!(Outcome, Outcome::from_stored);
stored_as_text!(ActorKind, ActorKind::from_stored);
stored_as_text!(EventKind, EventKind::parse);

/// A plan's review status: a word this build never writes is a failed read, not a guess (a
/// status decides whether a person may still decide).
impl rusqlite::types::FromSql for ReviewStatus {
    fn column_result(v: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        let s = v.as_str()?;
        ReviewStatus::parse(s).ok_or_else(|| {
            rusqlite::types::FromSqlError::Other(format!("unknown review status {s:?}").into())
        })
    }
}

impl rusqlite::types::ToSql for ReviewStatus {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        Ok(rusqlite::types::ToSqlOutput::from(self.as_str()))
    }
}
