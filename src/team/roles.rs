//! The cluster-wide group roles the team schema grants to (`knowledge_push`, `knowledge_search`),
//! and whether the role at hand may make them.
//!
//! The first push creates them inside its migration. PostgreSQL refuses `CREATE ROLE` to a role
//! without `CREATEROLE` with "permission denied to create role", which says nothing about the
//! database owner's missing attribute or the other way out (a superuser making the two roles
//! first), and used to surface as "run `knowledge push` once as the database owner" to the owner
//! itself. So the push looks first and names what is missing and both fixes.

use super::TeamError;

/// The group roles, in the order the schema creates them.
pub const GROUPS: [&str; 2] = ["knowledge_push", "knowledge_search"];

/// What stands between this role and the group roles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupRoles {
    /// The current role, quoted as SQL needs it.
    pub role: String,
    /// Whether it may create roles (`CREATEROLE`, or a superuser).
    pub may_create: bool,
    /// The group roles the cluster does not have yet.
    pub missing: Vec<String>,
}

impl GroupRoles {
    pub fn read(client: &mut impl postgres::GenericClient) -> Result<GroupRoles, TeamError> {
        let groups: Vec<&str> = GROUPS.to_vec();
        let row = client.query_one(
            "SELECT quote_ident(current_user),
                    coalesce((SELECT rolsuper OR rolcreaterole FROM pg_roles
                              WHERE rolname = current_user), false),
                    ARRAY(SELECT g FROM unnest($1::text[]) g
                          WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = g))",
            &[&groups],
        )?;
        Ok(GroupRoles {
            role: row.get(0),
            may_create: row.get(1),
            missing: row.get(2),
        })
    }

    /// The error a first push gives when the schema's roles cannot be made by this role.
    pub fn blocks_first_push(&self) -> Option<TeamError> {
        (!self.may_create && !self.missing.is_empty()).then(|| TeamError::CannotCreateRoles {
            role: self.role.clone(),
            missing: self.missing.clone(),
        })
    }
}

/// `CREATE ROLE … NOLOGIN;` for each of `missing`: what a superuser runs instead.
pub fn create_sql(missing: &[String]) -> String {
    missing
        .iter()
        .map(|g| format!("CREATE ROLE {g} NOLOGIN;"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Refuse a first push this role cannot complete, before anything is written.
pub fn check_first_push(client: &mut impl postgres::GenericClient) -> Result<(), TeamError> {
    match GroupRoles::read(client)?.blocks_first_push() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// What the current role may do in a team database that has its schema, as the server's
/// row-level policies decide it (migrations/0001_init.sql): read through `knowledge_search`,
/// write its one machine through `knowledge_push` and `kn_pusher`, or everything as the owner.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Rights {
    pub role: String,
    /// A superuser, a role with BYPASSRLS or the tables' owner: every machine's rows.
    pub owner: bool,
    /// Has the privileges of `knowledge_search` (the policies follow inherited membership).
    pub searches: bool,
    /// Has the privileges of `knowledge_push`.
    pub pushes: bool,
    /// The machine `kn_pusher` maps this role to.
    pub machine: Option<String>,
}

impl Rights {
    pub fn read(client: &mut impl postgres::GenericClient) -> Result<Rights, TeamError> {
        // pg_has_role fails on a role that does not exist: asked of each group found, so a
        // missing one is a plain `false`. kn_my_machine() reads kn_pusher, which a role in
        // neither group may not.
        let row = client.query_one(
            "SELECT current_user::text,
                    coalesce((SELECT rolsuper OR rolbypassrls FROM pg_roles
                              WHERE rolname = current_user), false)
                      OR coalesce((SELECT tableowner = current_user FROM pg_tables
                                   WHERE tablename = 'kn_event'), false),
                    coalesce((SELECT bool_or(pg_has_role(current_user, oid, 'USAGE'))
                              FROM pg_roles WHERE rolname = 'knowledge_search'), false),
                    coalesce((SELECT bool_or(pg_has_role(current_user, oid, 'USAGE'))
                              FROM pg_roles WHERE rolname = 'knowledge_push'), false),
                    CASE WHEN has_table_privilege(to_regclass('kn_pusher')::oid, 'SELECT')
                         THEN kn_my_machine() END",
            &[],
        )?;
        Ok(Rights {
            role: row.get(0),
            owner: row.get(1),
            searches: row.get(2),
            pushes: row.get(3),
            machine: row.get(4),
        })
    }
}
