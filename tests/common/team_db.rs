//! What the team tests (`tests/team_*.rs`) and the team bench set up alike: a synthetic data
//! dir indexed from the bench's generator, a push as a machine, counts on the throwaway cluster
//! (`pg.rs`), and a `knowledge push` process killed after a delay (the `kill -9` tests).
#![allow(dead_code)]

#[path = "../../benches/support/synth.rs"]
#[allow(dead_code)]
pub mod synth;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use knowledge::team::push::{push, PushPlan, PushSummary};
use knowledge::team::{TeamError, TeamUrl};

use super::pg::Cluster;

/// A synthetic world of `sessions` sessions × `events` events, indexed into a data dir with
/// `config` as its `config.toml`: (the temp dir holding both, the data dir).
pub fn synthetic(sessions: usize, events: usize, config: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("tmp");
    let tree = tmp.path().join("tree");
    synth::generate(&tree, sessions, events).expect("synthetic world");
    let data = tmp.path().join("data");
    std::fs::create_dir_all(&data).expect("data");
    std::fs::write(data.join("config.toml"), config).expect("config");
    knowledge::indexing::index_all(
        &data,
        &knowledge::indexing::IndexPlan {
            sessions: vec![tree.join("claude"), tree.join("codex")],
            ..Default::default()
        },
        &mut |_| {},
    )
    .expect("index");
    (tmp, data)
}

/// Push `data` to `url` as `machine` (the person: "tester").
pub fn push_as(data: &Path, url: &str, machine: &str) -> Result<PushSummary, TeamError> {
    let plan = PushPlan {
        machine: machine.to_string(),
        person: Some("tester".into()),
    };
    push(data, &TeamUrl::parse(url).expect("url"), &plan, &mut |_| {})
}

pub fn client(c: &Cluster, user: &str, db: &str) -> postgres::Client {
    postgres::Client::connect(&c.url(user, db), postgres::NoTls).expect("connect")
}

/// The one number `sql` selects, as the superuser.
pub fn count(c: &Cluster, db: &str, sql: &str) -> i64 {
    client(c, "admin", db)
        .query_one(sql, &[])
        .expect(sql)
        .get(0)
}

/// Whether `db` has its team schema yet.
pub fn has_schema(c: &Cluster, db: &str) -> bool {
    count(
        c,
        db,
        "SELECT count(*) FROM pg_tables WHERE tablename = 'kn_session'",
    ) > 0
}

/// Start `knowledge push --machine MACHINE --to URL` on `data` and SIGKILL it after `delay`;
/// whether it was still running then (killed mid-way).
pub fn kill_push_after(data: &Path, url: &str, machine: &str, delay: Duration) -> bool {
    let mut child = Command::new(env!("CARGO_BIN_EXE_knowledge"))
        .arg("--data-dir")
        .arg(data)
        .args(["push", "--machine", machine, "--to", url])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn push");
    std::thread::sleep(delay);
    let running = child.try_wait().expect("wait").is_none();
    let _ = child.kill(); // SIGKILL
    let _ = child.wait();
    running
}

/// A cluster that speaks TLS on a loopback port: its certificate (for `localhost` and
/// 127.0.0.1) is signed by `ca`; `other_ca` signed nothing it shows. Its pg_hba.conf has only
/// `hostssl` lines for TCP (a plain connection is refused) with passwords; the superuser
/// `admin` still comes in over the unix socket.
pub struct TlsServer {
    pub cluster: Cluster,
    pub port: u16,
    pub ca: PathBuf,
    pub other_ca: PathBuf,
}

impl TlsServer {
    /// A key=value URL over TCP to `host` for `user`:`password` with the given TLS parameters.
    pub fn url(&self, host: &str, user: &str, password: &str, db: &str, tls: &str) -> String {
        format!(
            "host={host} hostaddr=127.0.0.1 port={} user={user} password={password} \
             dbname={db} {tls}",
            self.port
        )
    }
}

fn openssl(dir: &Path, args: &[&str]) -> Result<(), String> {
    let out = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .map_err(|e| format!("openssl (Debian's postgresql-15 depends on it): {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "openssl {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// A self-signed CA `name`.crt/.key in `dir`.
fn make_ca(dir: &Path, name: &str) -> Result<(), String> {
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-days",
            "3",
            "-subj",
            &format!("/CN={name}"),
            "-keyout",
            &format!("{name}.key"),
            "-out",
            &format!("{name}.crt"),
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
        ],
    )
}

fn write_tls_files(root: &Path) -> Result<String, String> {
    let dir = root.join("tls");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    make_ca(&dir, "team-ca")?;
    make_ca(&dir, "other-ca")?;
    openssl(
        &dir,
        &[
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-subj",
            "/CN=localhost",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
        ],
    )?;
    std::fs::write(
        dir.join("server.ext"),
        "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n\
         keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n",
    )
    .map_err(|e| e.to_string())?;
    openssl(
        &dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "team-ca.crt",
            "-CAkey",
            "team-ca.key",
            "-CAcreateserial",
            "-days",
            "3",
            "-extfile",
            "server.ext",
            "-out",
            "server.crt",
        ],
    )?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        dir.join("server.key"),
        std::fs::Permissions::from_mode(0o600),
    )
    .map_err(|e| e.to_string())?;
    std::fs::write(
        dir.join("pg_hba.conf"),
        "local all all trust\nhostssl all all 127.0.0.1/32 scram-sha-256\n",
    )
    .map_err(|e| e.to_string())?;
    let d = dir.display();
    Ok(format!(
        "-c listen_addresses=127.0.0.1 -c ssl=on -c ssl_cert_file={d}/server.crt \
         -c ssl_key_file={d}/server.key -c hba_file={d}/pg_hba.conf"
    ))
}

/// A loopback port nothing listens on now.
pub fn free_port() -> Result<u16, String> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    Ok(l.local_addr().map_err(|e| e.to_string())?.port())
}

/// This test binary's TLS server, started on first use; `None` (the caller skips, and
/// `pg::installed` says why) where PostgreSQL is not installed.
pub fn tls_server() -> Option<&'static TlsServer> {
    static SERVER: std::sync::OnceLock<TlsServer> = std::sync::OnceLock::new();
    if !super::pg::installed() {
        return None;
    }
    Some(SERVER.get_or_init(|| {
        let port = free_port().unwrap_or_else(|e| panic!("a free port: {e}"));
        let cluster = Cluster::start_custom(Some(port), write_tls_files)
            .unwrap_or_else(|e| panic!("a PostgreSQL test cluster with TLS: {e}"));
        let tls = cluster.dir.parent().expect("tmp").join("tls");
        TlsServer {
            port,
            ca: tls.join("team-ca.crt"),
            other_ca: tls.join("other-ca.crt"),
            cluster,
        }
    }))
}
