//! TLS to the team server (issue 20): libpq's `sslmode` and `sslrootcert` in the URL against a
//! real PostgreSQL with `ssl=on` and only `hostssl` lines for TCP, its certificate signed by a
//! CA the test makes with `openssl` (Debian's postgresql-15 depends on it). `require` is
//! encrypted (`pg_stat_ssl` says so), `verify-full` passes with the team's CA and is refused
//! with another CA or another host name, `disable` is refused by the server, and each refusal
//! names its cause and fix without the URL's password.

mod common;

use std::process::Command;

use common::pg::{cluster, Cluster};
use common::team_db::{count, free_port, synthetic, tls_server, TlsServer};
use knowledge::team::tls::{Refusal, RootFileError, TlsError};
use knowledge::team::{TeamError, TeamUrl, Unreached, UrlError};

const PASSWORD: &str = "Tls-Pw-7319-secret";

/// A role `user` with [`PASSWORD`] owning a new database (CREATEROLE: its first push makes the
/// schema and the team roles).
fn owner_db(s: &TlsServer, user: &str) -> String {
    s.cluster.sql(
        "postgres",
        &format!(
            "DO $$ BEGIN CREATE ROLE {user} LOGIN CREATEROLE PASSWORD '{PASSWORD}'; \
             EXCEPTION WHEN duplicate_object THEN NULL; END $$"
        ),
    );
    let db = s.cluster.database(user);
    s.cluster
        .sql("postgres", &format!("ALTER DATABASE {db} OWNER TO {user}"));
    db
}

fn connect(url: &str) -> Result<postgres::Client, TeamError> {
    TeamUrl::parse(url).expect("url").connect()
}

/// Whether this session's own connection is encrypted, as the server sees it.
fn encrypted(c: &mut postgres::Client) -> bool {
    c.query_one(
        "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
        &[],
    )
    .expect("pg_stat_ssl")
    .get(0)
}

fn refusal(url: &str) -> String {
    refused(url).to_string()
}

/// Why `url` could not connect, checking that the error does not show its password.
fn refused(url: &str) -> TeamError {
    match connect(url) {
        Ok(_) => panic!("connected, but should be refused: {url}"),
        Err(e) => {
            let msg = e.to_string();
            eprintln!("refused: {msg}");
            assert!(
                !msg.contains(PASSWORD),
                "the password is in the error: {msg}"
            );
            e
        }
    }
}

#[test]
fn require_and_the_default_prefer_connect_encrypted() {
    let Some(s) = tls_server() else { return };
    let db = owner_db(s, "tls_req");
    for tls in ["sslmode=require", ""] {
        let mut c = connect(&s.url("localhost", "tls_req", PASSWORD, &db, tls))
            .unwrap_or_else(|e| panic!("{tls:?}: {e}"));
        assert!(encrypted(&mut c), "{tls:?} is not encrypted");
    }
}

#[test]
fn verify_full_with_the_teams_ca_passes_in_both_url_forms() {
    let Some(s) = tls_server() else { return };
    let db = owner_db(s, "tls_full");
    let ca = s.ca.display();
    let kv = s.url(
        "localhost",
        "tls_full",
        PASSWORD,
        &db,
        &format!("sslmode=verify-full sslrootcert='{ca}'"),
    );
    assert!(encrypted(&mut connect(&kv).expect("key=value form")));
    let uri = format!(
        "postgresql://tls_full:{PASSWORD}@127.0.0.1:{}/{db}?sslmode=verify-full&sslrootcert={ca}",
        s.port
    );
    assert!(encrypted(
        &mut connect(&uri).expect("URI form, an IP in the certificate")
    ));
}

#[test]
fn verify_full_with_another_ca_is_refused_naming_the_ca_file() {
    let Some(s) = tls_server() else { return };
    let db = owner_db(s, "tls_wrongca");
    let other = s.other_ca.display().to_string();
    let tls = format!("sslmode=verify-full sslrootcert={other}");
    let e = refused(&s.url("localhost", "tls_wrongca", PASSWORD, &db, &tls));
    assert!(
        matches!(
            &e,
            TeamError::Unreachable {
                why: Unreached::Refused {
                    explained: Some(Refusal::UnknownIssuer { ca, .. }),
                    ..
                },
                ..
            } if *ca == other
        ),
        "{e}"
    );
    let msg = e.to_string();
    assert!(msg.contains("not signed by the CA in"), "{msg}");
    assert!(msg.contains(&other), "names the CA file: {msg}");
    assert!(
        msg.contains("sslrootcert=PATH"),
        "says how to fix it: {msg}"
    );
    // The same CA is refused by `require` too: given a root, libpq's `require` checks it.
    let tls = format!("sslmode=require sslrootcert={other}");
    let msg = refusal(&s.url("localhost", "tls_wrongca", PASSWORD, &db, &tls));
    assert!(msg.contains("not signed by the CA in"), "{msg}");
}

#[test]
fn verify_full_to_another_host_name_is_refused_but_verify_ca_passes() {
    let Some(s) = tls_server() else { return };
    let db = owner_db(s, "tls_name");
    let ca = s.ca.display();
    let full = format!("sslmode=verify-full sslrootcert={ca}");
    let msg = refusal(&s.url("team-db.example", "tls_name", PASSWORD, &db, &full));
    assert!(msg.contains("not for host team-db.example"), "{msg}");
    assert!(
        msg.contains("localhost"),
        "names what the certificate is for: {msg}"
    );
    assert!(msg.contains("subjectAltName"), "says how to fix it: {msg}");
    let ca_only = format!("sslmode=verify-ca sslrootcert={ca}");
    let mut c = connect(&s.url("team-db.example", "tls_name", PASSWORD, &db, &ca_only))
        .expect("verify-ca does not compare the host name");
    assert!(encrypted(&mut c));
}

#[test]
fn disable_to_a_hostssl_only_server_is_refused_saying_to_use_tls() {
    let Some(s) = tls_server() else { return };
    let db = owner_db(s, "tls_plain");
    let msg = refusal(&s.url("localhost", "tls_plain", PASSWORD, &db, "sslmode=disable"));
    assert!(msg.contains("hostssl"), "{msg}");
    assert!(
        msg.contains("sslmode=verify-full"),
        "says how to fix it: {msg}"
    );
}

#[test]
fn knowledge_push_over_verify_full_sends_and_a_wrong_ca_fails_without_the_password() {
    let Some(s) = tls_server() else { return };
    let db = owner_db(s, "tls_push");
    let (_tmp, data) = synthetic(3, 6, "");
    let url = |ca: &std::path::Path| {
        format!(
            "postgresql://tls_push:{PASSWORD}@localhost:{}/{db}?sslmode=verify-full&sslrootcert={}",
            s.port,
            ca.display()
        )
    };
    let push = |url: String| {
        Command::new(env!("CARGO_BIN_EXE_knowledge"))
            .arg("--data-dir")
            .arg(&data)
            .args(["push", "--machine", "tls-laptop", "--to", &url])
            .output()
            .expect("run knowledge push")
    };
    let out = push(url(&s.ca));
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(
        !format!("{stdout}{stderr}").contains(PASSWORD),
        "{stdout}{stderr}"
    );
    let events = count(
        &s.cluster,
        &db,
        "SELECT count(*) FROM kn_event WHERE machine = 'tls-laptop'",
    );
    assert!(events > 0, "nothing arrived over TLS");

    let out = push(url(&s.other_ca));
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !out.status.success(),
        "pushed to a server the CA did not sign: {said}"
    );
    assert!(said.contains("not signed by the CA in"), "{said}");
    assert!(
        !said.contains(PASSWORD),
        "the password is in the output: {said}"
    );
}

#[test]
fn require_to_a_server_without_tls_is_refused_and_prefer_falls_back_to_plain() {
    if tls_server().is_none() {
        return;
    }
    let port = free_port().expect("port");
    // initdb's pg_hba.conf (--auth=trust) admits loopback TCP; ssl stays off.
    let plain = Cluster::start_custom(Some(port), |_| {
        Ok("-c listen_addresses=127.0.0.1".to_string())
    })
    .expect("a cluster without TLS");
    let url = |mode: &str| {
        format!("host=localhost hostaddr=127.0.0.1 port={port} user=admin dbname=postgres {mode}")
    };
    let msg = refusal(&url("sslmode=require"));
    assert!(msg.contains("the server does not accept TLS"), "{msg}");
    assert!(msg.contains("turn on ssl"), "says how to fix it: {msg}");
    let mut c = connect(&url("sslmode=prefer")).expect("prefer connects without TLS");
    assert!(!encrypted(&mut c), "encrypted by a server with ssl off?");
    plain.stop();
}

#[test]
fn a_unix_socket_is_never_encrypted_whatever_the_mode() {
    let Some(c) = cluster() else { return };
    // libpq's rule: TLS is for TCP; the socket's file permissions guard a local connection.
    let mut client = connect(&format!(
        "{} sslmode=verify-full",
        c.url("admin", "postgres")
    ))
    .expect("verify-full over a unix socket connects");
    assert!(!encrypted(&mut client));
}

/// The refusal of a URL that must not parse, checked to hold no password.
fn bad_url(url: &str) -> String {
    refused_url(url).to_string()
}

/// Why `url` is refused, checking that the refusal does not show its password.
fn refused_url(url: &str) -> TeamError {
    match TeamUrl::parse(url) {
        Ok(u) => panic!("parsed, but should be refused: {u}"),
        Err(e) => {
            let msg = e.to_string();
            assert!(!msg.contains(PASSWORD), "the password is in: {msg}");
            e
        }
    }
}

/// Why the CA file of `url` is refused.
fn refused_root(url: &str) -> RootFileError {
    match refused_url(url) {
        TeamError::BadUrl(UrlError::Tls(TlsError::RootFile { why, .. })) => why,
        e => panic!("not refused for its CA file: {e}"),
    }
}

#[test]
fn an_sslrootcert_fifo_directory_device_or_huge_file_is_refused_without_hanging() {
    let dir = tempfile::tempdir().expect("tmp");
    let fifo = dir.path().join("ca.fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    let huge = dir.path().join("huge.crt");
    let f = std::fs::File::create(&huge).expect("huge");
    f.set_len(17 << 20).expect("a sparse 17 MiB file");
    let url = |p: &std::path::Path| {
        format!(
            "postgresql://u:{PASSWORD}@db.example/t?sslmode=verify-full&sslrootcert={}",
            p.display()
        )
    };
    // Opening the FIFO would block until a writer came: the test would never end.
    let msg = bad_url(&url(&fifo));
    assert!(
        msg.contains("sslrootcert=") && msg.contains("not a regular file"),
        "{msg}"
    );
    let why = refused_root(&url(&fifo));
    assert!(matches!(why, RootFileError::NotRegular), "{why}");
    let why = refused_root(&url(std::path::Path::new("/dev/zero")));
    assert!(matches!(why, RootFileError::NotRegular), "{why}");
    let why = refused_root(&url(dir.path()));
    assert!(matches!(why, RootFileError::Directory), "{why}");
    let why = refused_root(&url(&huge));
    assert!(matches!(why, RootFileError::TooLarge(_)), "{why}");
    assert!(why.to_string().contains("over 16 MiB"), "{why}");
}

#[test]
fn an_sslrootcert_holding_a_key_or_nothing_says_what_to_give() {
    let dir = tempfile::tempdir().expect("tmp");
    let key = dir.path().join("server.key");
    std::fs::write(
        &key,
        "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIG7n\n-----END PRIVATE KEY-----\n",
    )
    .expect("key");
    let empty = dir.path().join("empty.crt");
    std::fs::write(&empty, "").expect("empty");
    let url = |p: &std::path::Path| {
        format!(
            "host=db user=u password={PASSWORD} sslmode=verify-ca sslrootcert='{}'",
            p.display()
        )
    };
    let why = refused_root(&url(&key));
    assert!(matches!(why, RootFileError::PrivateKey), "{why}");
    let why = refused_root(&url(&empty));
    assert!(matches!(why, RootFileError::NoCertificate), "{why}");
}

#[test]
fn sslmode_typos_and_unknown_options_name_the_field_without_the_password() {
    let base = format!("postgresql://u:{PASSWORD}@db.example/t");
    for (q, says) in [
        ("?sslmode=requre", "sslmode=\"requre\""),
        ("?sslmode=", "sslmode=\"\""),
        ("?sslmode=require&sslmode=bogus", "sslmode=\"bogus\""),
        ("?SSLMODE=require", "SSLMODE"),
    ] {
        let msg = bad_url(&format!("{base}{q}"));
        assert!(msg.contains(says), "{q}: {msg}");
    }
    let e = refused_url(&format!("host=db password={PASSWORD} sslmode=requre"));
    assert!(
        matches!(&e, TeamError::BadUrl(UrlError::Tls(TlsError::BadMode(m))) if m == "requre"),
        "{e}"
    );
    assert!(e.to_string().contains("sslmode=\"requre\""), "{e}");
}

#[test]
fn a_question_mark_or_sslmode_inside_the_password_stays_in_the_password() {
    // libpq reads the credentials up to the '@': a '?' before it is the password's, so the
    // password's tail is neither taken for a sslmode nor echoed in an error.
    let url = format!("postgresql://u:x?sslmode={PASSWORD}@db.example:5433/t?sslmode=require");
    let parsed = TeamUrl::parse(&url).unwrap_or_else(|e| panic!("{e}"));
    assert!(!parsed.to_string().contains(PASSWORD), "{parsed}");
    let msg = bad_url(&format!(
        "postgresql://u:a?b&{PASSWORD}@db.example/t?sslmode=requre"
    ));
    assert!(msg.contains("sslmode=\"requre\""), "{msg}");
}

#[test]
fn a_server_that_accepts_and_never_answers_times_out_instead_of_hanging() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    // Accepted by the kernel's backlog and never read: the handshake gets no answer.
    let url =
        format!("postgresql://u:{PASSWORD}@127.0.0.1:{port}/t?sslmode=require&connect_timeout=1");
    let e = TeamUrl::parse(&url)
        .expect("url")
        .connect()
        .err()
        .expect("connected to a silent port");
    assert!(
        matches!(
            e,
            TeamError::Unreachable {
                why: Unreached::Silent(_),
                ..
            }
        ),
        "{e}"
    );
    let msg = e.to_string();
    assert!(!msg.contains(PASSWORD), "{msg}");
    assert!(msg.contains("no answer within 4 s"), "{msg}");
    drop(listener);
}

#[test]
fn a_peer_that_is_not_postgresql_is_not_only_blamed_on_its_tls_settings() {
    // An HTTP server (or a proxy) on the port answers the TLS request with 'H', which the
    // client cannot tell from a PostgreSQL server with ssl=off: the fix names both.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let http = std::thread::spawn(move || {
        use std::io::{Read, Write};
        let (mut c, _) = listener.accept().expect("accept");
        let mut buf = [0u8; 8];
        let _ = c.read(&mut buf);
        let _ = c.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n");
    });
    let url = format!("postgresql://u:{PASSWORD}@127.0.0.1:{port}/t?sslmode=require");
    let e = TeamUrl::parse(&url)
        .expect("url")
        .connect()
        .err()
        .expect("an HTTP peer");
    let msg = e.to_string();
    assert!(!msg.contains(PASSWORD), "{msg}");
    assert!(msg.contains("check the host and port"), "{msg}");
    http.join().expect("http thread");
}

#[test]
fn verify_full_to_an_ip_address_host_checks_the_ip_in_the_certificate() {
    let Some(s) = tls_server() else { return };
    let db = owner_db(s, "tls_ip");
    let url = format!(
        "postgresql://tls_ip:{PASSWORD}@127.0.0.1:{}/{db}?sslmode=verify-full&sslrootcert={}",
        s.port,
        s.ca.display()
    );
    let mut c = connect(&url).unwrap_or_else(|e| panic!("{e}"));
    assert!(encrypted(&mut c));
    // The certificate names 127.0.0.1 and localhost only: another name at the same address fails.
    let other = s.url(
        "ip6-localhost",
        "tls_ip",
        PASSWORD,
        &db,
        &format!("sslmode=verify-full sslrootcert={}", s.ca.display()),
    );
    let msg = refusal(&other);
    assert!(msg.contains("not for host ip6-localhost"), "{msg}");
}

#[test]
fn a_bad_pgsslmode_is_named_as_the_environments_and_the_url_overrides_it() {
    // In a child process: setting PGSSLMODE here would reach the other tests' threads.
    let data = tempfile::tempdir().expect("tmp");
    let push = |url: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_knowledge"))
            .arg("--data-dir")
            .arg(data.path())
            .args(["push", "--machine", "m", "--to", url])
            .env("PGSSLMODE", "requre")
            .output()
            .expect("run knowledge push");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let msg = push(&format!("postgresql://u:{PASSWORD}@127.0.0.1:1/t"));
    assert!(
        msg.contains("PGSSLMODE") && msg.contains("\"requre\""),
        "{msg}"
    );
    assert!(!msg.contains(PASSWORD), "{msg}");
    // The URL's own sslmode wins: the push gets as far as the (closed) port.
    let msg = push(&format!(
        "postgresql://u:{PASSWORD}@127.0.0.1:1/t?sslmode=disable"
    ));
    assert!(
        !msg.contains("PGSSLMODE") && msg.contains("cannot be reached"),
        "{msg}"
    );
}
