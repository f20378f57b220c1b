//! A throwaway PostgreSQL cluster for the team tests: `initdb` into a temp dir as an
//! unprivileged user (initdb refuses root; under root the cluster runs as `nobody`), listening
//! only on a unix socket in that dir, started once per test binary and stopped at exit. Where
//! the PostgreSQL binaries are absent, [`installed`] decides (`needs.rs`): a plain `cargo test`
//! skips the test with a note ([`cluster`] returns `None`); with `KNOWLEDGE_REQUIRE_POSTGRES=1`,
//! which `.ci/run` sets after installing them, the test fails. A server that is installed but
//! cannot start fails the test either way.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};

pub struct Cluster {
    bin: PathBuf,
    pub dir: PathBuf,
    pub socket: PathBuf,
    run_as: Option<String>,
    /// Server options after the defaults (`-c` settings given later win).
    extra: String,
    /// The port (of the socket file, and of TCP where `extra` listens on it); PostgreSQL's
    /// default when `None`.
    pub port: Option<u16>,
    _tmp: tempfile::TempDir,
}

/// The directory holding `initdb` and `pg_ctl`, if PostgreSQL is installed.
fn bin_dir() -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("bin"))
        .filter(|b| b.join("initdb").exists() && b.join("pg_ctl").exists())
        .collect();
    found.sort();
    found.pop()
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

impl Cluster {
    fn cmd(&self, tool: &str) -> Command {
        let exe = self.bin.join(tool);
        match &self.run_as {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.arg("-u").arg(user).arg("--").arg(exe);
                c
            }
            None => Command::new(exe),
        }
    }

    fn start() -> Result<Cluster, String> {
        Cluster::start_custom(None, |_| Ok(String::new()))
    }

    /// A cluster whose `prepare` writes what its server options need (certificates, an hba
    /// file) into the temp dir it is given, before that dir is handed to the server's user, and
    /// returns those options; stopped when the test binary exits.
    pub fn start_custom(
        port: Option<u16>,
        prepare: impl FnOnce(&Path) -> Result<String, String>,
    ) -> Result<Cluster, String> {
        let bin = bin_dir().ok_or("no PostgreSQL binaries under /usr/lib/postgresql")?;
        let tmp = tempfile::Builder::new()
            .prefix("kpg")
            .tempdir_in("/tmp")
            .map_err(|e| e.to_string())?;
        let dir = tmp.path().join("data");
        let socket = tmp.path().join("sock");
        std::fs::create_dir_all(&socket).map_err(|e| e.to_string())?;
        let extra = prepare(tmp.path())?;
        let run_as = is_root().then(|| "nobody".to_string());
        if let Some(user) = &run_as {
            let ok = Command::new("chown")
                .arg("-R")
                .arg(user)
                .arg(tmp.path())
                .status()
                .map_err(|e| e.to_string())?
                .success();
            if !ok {
                return Err(format!("chown {} to {user} failed", tmp.path().display()));
            }
        }
        let cluster = Cluster {
            bin,
            dir,
            socket,
            run_as,
            extra,
            port,
            _tmp: tmp,
        };
        let out = cluster
            .cmd("initdb")
            .args([
                "-U",
                "admin",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
                "-D",
            ])
            .arg(&cluster.dir)
            .output()
            .map_err(|e| format!("initdb: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "initdb failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        cluster.pg_ctl_start()?;
        if let Ok(mut g) = STOP_DIR.lock() {
            g.push((
                cluster.bin.clone(),
                cluster.dir.clone(),
                cluster.run_as.clone(),
            ));
        }
        static AT_EXIT: std::sync::Once = std::sync::Once::new();
        // SAFETY: registering a plain extern "C" fn with no captured state.
        AT_EXIT.call_once(|| unsafe {
            libc::atexit(stop_at_exit);
        });
        Ok(cluster)
    }

    fn pg_ctl_start(&self) -> Result<(), String> {
        let mut opts = format!(
            "-k {} -c listen_addresses='' -c fsync=off -c max_connections=60",
            self.socket.display()
        );
        if let Some(size) = SHARED_BUFFERS.get() {
            opts.push_str(&format!(" -c shared_buffers={size}"));
        }
        if let Some(port) = self.port {
            opts.push_str(&format!(" -p {port}"));
        }
        if !self.extra.is_empty() {
            opts.push(' ');
            opts.push_str(&self.extra);
        }
        let out = self
            .cmd("pg_ctl")
            .arg("-D")
            .arg(&self.dir)
            .arg("-o")
            .arg(opts)
            .arg("-l")
            .arg(self.dir.join("server.log"))
            .args(["-w", "start"])
            .output()
            .map_err(|e| format!("pg_ctl start: {e}"))?;
        if !out.status.success() {
            let log = std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default();
            return Err(format!(
                "pg_ctl start failed: {}{log}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(())
    }

    /// Stop the server (`immediate`: a crash, as far as clients can tell).
    pub fn stop(&self) {
        let _ = self
            .cmd("pg_ctl")
            .arg("-D")
            .arg(&self.dir)
            .args(["-m", "immediate", "-w", "stop"])
            .output();
    }

    /// Start it again after [`Cluster::stop`].
    pub fn restart(&self) {
        self.pg_ctl_start().expect("restart");
    }

    /// A client program of this cluster's PostgreSQL (`createuser`, `createdb`, `psql`), run as
    /// this process's user and connecting as the superuser `admin` over the unix socket, as
    /// `sudo -u postgres createuser …` does on a Debian server.
    pub fn client_tool(&self, tool: &str) -> Command {
        let mut c = Command::new(self.bin.join(tool));
        c.env("PGHOST", &self.socket).env("PGUSER", "admin");
        if let Some(port) = self.port {
            c.env("PGPORT", port.to_string());
        }
        c
    }

    /// A URL for `user` on database `db`.
    pub fn url(&self, user: &str, db: &str) -> String {
        let port = self.port.map(|p| format!(" port={p}")).unwrap_or_default();
        format!(
            "host={}{port} user={user} dbname={db}",
            self.socket.display()
        )
    }

    /// Run SQL as the superuser on `db`.
    pub fn sql(&self, db: &str, sql: &str) {
        let mut c = postgres::Client::connect(&self.url("admin", db), postgres::NoTls)
            .expect("connect as admin");
        c.batch_execute(sql)
            .unwrap_or_else(|e| panic!("{sql}: {e:?}"));
    }

    /// A new, empty database for one test.
    pub fn database(&self, tag: &str) -> String {
        static N: AtomicU32 = AtomicU32::new(0);
        let name = format!("t_{tag}_{}", N.fetch_add(1, Ordering::SeqCst));
        self.sql("postgres", &format!("CREATE DATABASE {name}"));
        name
    }
}

static STOP_DIR: Mutex<Vec<(PathBuf, PathBuf, Option<String>)>> = Mutex::new(Vec::new());

extern "C" fn stop_at_exit() {
    if let Ok(guard) = STOP_DIR.lock() {
        for (bin, dir, run_as) in guard.iter() {
            let exe = bin.join("pg_ctl");
            let mut c = match run_as {
                Some(u) => {
                    let mut c = Command::new("runuser");
                    c.arg("-u").arg(u).arg("--").arg(exe);
                    c
                }
                None => Command::new(exe),
            };
            let _ = c
                .arg("-D")
                .arg(dir)
                .args(["-m", "immediate", "-w", "stop"])
                .output();
            // The cluster lives in a static, whose temp dir is never dropped: remove it here.
            if let Some(root) = dir.parent() {
                let _ = std::fs::remove_dir_all(root);
            }
        }
    }
}

/// `shared_buffers` of this binary's cluster when set before it starts (else PostgreSQL's
/// 128 MB): the bench sizes it to hold the team index, as docs/TEAM.md tells a real server.
static SHARED_BUFFERS: OnceLock<String> = OnceLock::new();

/// [`cluster`], started with `shared_buffers` of `size` (e.g. `1GB`) if it is not running yet.
pub fn cluster_sized(size: &str) -> Option<&'static Cluster> {
    let _ = SHARED_BUFFERS.set(size.to_string());
    cluster()
}

/// Whether the team tests go on: the PostgreSQL binaries are here. The one place their absence
/// is decided: a note that the test is skipped and `false`, or, with
/// `KNOWLEDGE_REQUIRE_POSTGRES` set, a failure saying how to install them.
pub fn installed() -> bool {
    super::needs::POSTGRES.met(bin_dir().is_some())
}

/// The cluster of this test binary, started on first use (a failure if it cannot start);
/// `None`, after [`installed`] said why, where PostgreSQL is not installed.
pub fn cluster() -> Option<&'static Cluster> {
    static CLUSTER: OnceLock<Cluster> = OnceLock::new();
    if !installed() {
        return None;
    }
    Some(CLUSTER.get_or_init(|| {
        Cluster::start().unwrap_or_else(|e| panic!("a PostgreSQL test cluster: {e}"))
    }))
}
