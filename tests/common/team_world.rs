//! The demo world on a team index: its data dir pushed (`knowledge::team::push`) into a
//! database of the throwaway PostgreSQL cluster (`pg::cluster`), and searched with a search
//! role from a lead's data dir that holds no index of its own (`--team-only`), so everything an
//! answer holds comes from PostgreSQL. The KC checks run on it through [`kc::World`]
//! (`tests/team_kc.rs`).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use knowledge::engine::{Engine, EngineConfig};
use knowledge::team::push::{push, PushPlan};
use knowledge::team::TeamUrl;

use super::kc::{hex, Local, World};
use super::pg::{cluster, Cluster};

/// The machine the demo world is pushed as.
pub const MACHINE: &str = "laptop-kc";

/// A world pushed to a team database, and the lead who searches it.
pub struct Team {
    pub cluster: &'static Cluster,
    pub db: String,
    /// The search role's URL.
    pub url: String,
    /// The lead's data dir: a config, no index.
    pub lead: tempfile::TempDir,
    pushed: Local,
}

impl Team {
    /// The demo world pushed once per test binary (`None`: PostgreSQL is not installed).
    pub fn shared() -> Option<&'static Team> {
        static SHARED: OnceLock<Option<Team>> = OnceLock::new();
        SHARED
            .get_or_init(|| Team::push(Local::shared(), "kcshared"))
            .as_ref()
    }

    /// A fresh copy of the demo world pushed to its own database (checks that read the
    /// stores' bytes).
    pub fn fresh() -> Option<Team> {
        Team::push(Local::fresh(), "kcfresh")
    }

    /// Push `world` as [`MACHINE`] into a new database and make a search role for it.
    pub fn push(world: Local, tag: &str) -> Option<Team> {
        let cluster = cluster()?;
        let db = cluster.database(tag);
        let owner = TeamUrl::parse(&cluster.url("admin", &db)).expect("url");
        let plan = PushPlan {
            machine: MACHINE.to_string(),
            person: Some("kc".into()),
        };
        push(world.data_dir(), &owner, &plan, &mut |_| {}).expect("push the world");
        let role = format!("{db}_lead");
        cluster.sql(
            &db,
            &format!("CREATE ROLE {role} LOGIN IN ROLE knowledge_search"),
        );
        let lead = tempfile::tempdir().expect("lead dir");
        std::fs::write(
            lead.path().join("config.toml"),
            super::world::GENEROUS_LANES,
        )
        .expect("config");
        Some(Team {
            cluster,
            url: cluster.url(&role, &db),
            db,
            lead,
            pushed: world,
        })
    }

    /// An engine over `data_dir` searching this team index (alone with `only`).
    pub fn engine_at(&self, data_dir: &Path, only: bool) -> Engine {
        team_engine(data_dir, &self.url, only)
    }

    /// The demo world that was pushed (its data dir holds this machine's copy).
    pub fn pushed(&self) -> &Local {
        &self.pushed
    }

    /// One value per row of every team table, as the superuser sees it.
    fn tables(&self, each_row: &str) -> Vec<(String, String)> {
        let mut c =
            postgres::Client::connect(&self.cluster.url("admin", &self.db), postgres::NoTls)
                .expect("connect");
        let tables: Vec<String> = c
            .query(
                "SELECT tablename::text FROM pg_tables WHERE tablename LIKE 'kn\\_%'
                 ORDER BY tablename",
                &[],
            )
            .expect("tables")
            .iter()
            .map(|r| r.get(0))
            .collect();
        tables
            .into_iter()
            .map(|t| {
                let sql = format!("SELECT {each_row} FROM {t} t");
                let v: String = c.query_one(&sql, &[]).expect(&sql).get(0);
                (t, v)
            })
            .collect()
    }
}

/// An engine over `data_dir` (its config.toml applied) searching the team index at `url`,
/// beside the local indexes or alone (`only`).
pub fn team_engine(data_dir: &Path, url: &str, only: bool) -> Engine {
    let mut config = EngineConfig::load(data_dir).expect("config");
    config.team = Some(url.to_string());
    config.team_only = only;
    knowledge::open_engine(config)
}

impl Local {
    /// The data dir of this machine's copy of the world.
    pub fn data_dir(&self) -> &PathBuf {
        match self {
            Local::Shared(w) => &w.data_dir,
            Local::Fresh(w) => &w.data_dir,
        }
    }
}

impl World for Team {
    fn engine(&self) -> Engine {
        self.engine_at(self.lead.path(), true)
    }
    fn empty(&self, scratch: &Path) -> Engine {
        // A database nobody pushed to yet: no schema.
        let db = self.cluster.database("kcempty");
        team_engine(scratch, &self.cluster.url("admin", &db), true)
    }
    fn repo(&self, name: &str) -> String {
        self.pushed.repo(name)
    }
    fn cli(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_knowledge"));
        c.arg("--data-dir")
            .arg(self.lead.path())
            .args(["--team", &self.url, "--team-only"]);
        c
    }
    fn stored(&self) -> Vec<(String, Vec<u8>)> {
        self.tables("coalesce(string_agg(t::text, E'\\n'), '')")
            .into_iter()
            .map(|(t, text)| (t, text.into_bytes()))
            .collect()
    }
    fn ranks_code_by_bm25(&self) -> bool {
        false
    }
    fn digest(&self) -> Vec<(String, String)> {
        self.tables("coalesce(string_agg(t::text, E'\\n' ORDER BY t::text), '')")
            .into_iter()
            .map(|(t, text)| (t, hex(text.as_bytes())))
            .collect()
    }
}
