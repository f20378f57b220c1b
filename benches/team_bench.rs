//! The team index's speed (run with `cargo bench --bench team_bench`): a throwaway PostgreSQL
//! cluster (as the tests start it, `tests/common/pg.rs`), a synthetic world of
//! `KNOWLEDGE_BENCH_SESSIONS` sessions (default 1,000) indexed once and pushed as
//! `KNOWLEDGE_BENCH_MACHINES` machines (default 10), then
//!
//! - push throughput: events/s of each machine's first push (one after another, as each laptop
//!   pushes its own), and of a second, idempotent push;
//! - team search: P50/P95/max of `Engine::search` through the team lanes over every machine,
//!   and each query's median.
//!
//! The cluster runs with `shared_buffers = 1GB` (docs/TEAM.md, "Server settings"), or
//! `KNOWLEDGE_BENCH_SHARED_BUFFERS`.
//!
//! Figures go to `docs/PERFORMANCE.md` ("Team index").

#[path = "../tests/common/needs.rs"]
mod needs;

#[path = "../tests/common/pg.rs"]
mod pg;

#[path = "../tests/common/team_db.rs"]
mod team_db;

use std::time::Instant;

use knowledge::contract::{Lane, SearchRequest};
use knowledge::engine::EngineConfig;
use knowledge::team::push::{push, PushPlan};
use knowledge::team::TeamUrl;

const QUERIES: &[&str] = &[
    "who fixed the mysql access",
    "кто чинил доступ к MySQL",
    "webhook signature retry",
    "grafana dashboard token",
    "migration failed rollback",
    "nginx upstream timeout",
];

fn env_num(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn main() {
    // Sized to hold the team index (kn_event and its indexes are ~400 MB at 10 × 1,000
    // sessions), as docs/TEAM.md tells a real server: at PostgreSQL's default 128 MB every
    // search read most of its matching rows from outside the shared buffers.
    // `KNOWLEDGE_BENCH_SHARED_BUFFERS=128MB` measures the default.
    let shared_buffers =
        std::env::var("KNOWLEDGE_BENCH_SHARED_BUFFERS").unwrap_or_else(|_| "1GB".into());
    let Some(c) = pg::cluster_sized(&shared_buffers) else {
        return;
    };
    println!("[team] cluster: shared_buffers = {shared_buffers}");
    let sessions = env_num("KNOWLEDGE_BENCH_SESSIONS", 1000);
    let machines = env_num("KNOWLEDGE_BENCH_MACHINES", 10);
    let started = Instant::now();
    let (_tmp, data) = team_db::synthetic(sessions, 40, "[search]\nsemantic = false\n");
    println!(
        "[team] world: {sessions} sessions generated and indexed in {:.1}s",
        started.elapsed().as_secs_f64()
    );
    let db = c.database("bench");
    let url = TeamUrl::parse(&c.url("admin", &db)).expect("url");
    let mut events = 0u64;
    let mut secs = 0.0;
    let (client0, server0) = (own_cpu(), server_cpu(c));
    for m in 0..machines {
        let plan = PushPlan {
            machine: format!("machine-{m:02}"),
            person: None,
        };
        let (t, server_before) = (Instant::now(), server_cpu(c));
        let s = push(&data, &url, &plan, &mut |_| {}).expect("push");
        let took = t.elapsed().as_secs_f64();
        // Each push on its own: the database grows by one machine a push, so a later push
        // inserts into larger indexes than the first (and than a push into an empty database).
        println!(
            "[team] push {m:02}: {} events in {took:.2}s = {:.0} events/s, server {:.2} CPU-s \
             (load average {})",
            s.events_sent,
            s.events_sent as f64 / took,
            server_cpu(c) - server_before,
            loadavg()
        );
        secs += took;
        events += s.events_sent;
    }
    let (client, server) = (own_cpu() - client0, server_cpu(c) - server0);
    println!(
        "[team] push: {machines} machines × {sessions} sessions, {events} events in {secs:.1}s \
         = {:.0} events/s (load average {})",
        events as f64 / secs,
        loadavg()
    );
    println!(
        "[team] push CPU: this process {client:.1}s ({:.0} events per CPU-second), the server \
         {server:.1}s ({:.0} events per CPU-second)",
        events as f64 / client,
        events as f64 / server
    );
    push_stages(&data);
    push_as_owner_alone(c, &data);
    push_over_tls(&data);
    push_as_role(c, &data);
    let t = Instant::now();
    let again = push(
        &data,
        &url,
        &PushPlan {
            machine: "machine-00".into(),
            person: None,
        },
        &mut |_| {},
    )
    .expect("push again");
    println!(
        "[team] second push of one machine: {} events sent in {:.3}s",
        again.events_sent,
        t.elapsed().as_secs_f64()
    );
    c.sql(&db, "ANALYZE");
    search_figures(c, &db, &data, sessions * machines, events);
}

/// Team search speed: P50/P95/max of `Engine::search` over the episodes and code lanes with the
/// team index alone (`--team-only`) and beside this machine's index (`--team`), the two kinds
/// interleaved round by round so both see the same load; then the lexical lane query's plan.
/// Searches run as a search role, as a lead's do (row-level security applies to it, not to the
/// owner).
fn search_figures(c: &pg::Cluster, db: &str, data: &std::path::Path, sessions: usize, events: u64) {
    c.sql(db, "CREATE ROLE bench_lead LOGIN IN ROLE knowledge_search");
    let engine = |only: bool| {
        let mut config = EngineConfig::new(data);
        config.log = false;
        config.semantic = false;
        config.team = Some(c.url("bench_lead", db));
        config.team_only = only;
        config.machine = Some("machine-00".into());
        config.lane_timeout = std::time::Duration::from_secs(10);
        knowledge::open_engine(config)
    };
    let kinds = [("team only", engine(true)), ("local + team", engine(false))];
    let mut ms: Vec<Vec<f64>> = vec![Vec::new(); kinds.len()];
    // Each query's times of the first kind (team only), to say which one makes the P95.
    let mut per_query: Vec<Vec<f64>> = vec![Vec::new(); QUERIES.len()];
    for round in 0..5 {
        for (qi, q) in QUERIES.iter().enumerate() {
            for (k, (name, engine)) in kinds.iter().enumerate() {
                let mut req = SearchRequest::new(*q);
                req.include = [Lane::Episodes, Lane::Code].into_iter().collect();
                let t = Instant::now();
                let resp = engine.search(&req);
                let took = t.elapsed().as_secs_f64() * 1000.0;
                if round > 0 {
                    ms[k].push(took);
                    if k == 0 {
                        per_query[qi].push(took);
                    }
                }
                assert!(
                    resp.lanes.episodes.items.is_empty() || !resp.lanes.episodes.header.degraded,
                    "{name}: {q}: degraded"
                );
            }
        }
    }
    for ((name, _), ms) in kinds.iter().zip(ms.iter_mut()) {
        ms.sort_by(f64::total_cmp);
        println!(
            "[team] search ({name}) over {sessions} sessions ({events} events): P50 {:.1} ms, \
             P95 {:.1} ms, max {:.1} ms ({} queries, load average {})",
            pct(ms, 0.5),
            pct(ms, 0.95),
            ms[ms.len() - 1],
            ms.len(),
            loadavg()
        );
    }
    for (q, ms) in QUERIES.iter().zip(per_query.iter_mut()) {
        ms.sort_by(f64::total_cmp);
        println!(
            "[team]     {q:?} (team only): median {:.1} ms, max {:.1} ms",
            pct(ms, 0.5),
            ms[ms.len() - 1]
        );
    }
    let mut client =
        postgres::Client::connect(&c.url("bench_lead", db), postgres::NoTls).expect("pg");
    let terms = knowledge::text::tokens::query_terms(QUERIES[0]);
    let q = terms
        .iter()
        .map(|t| format!("'{t}'"))
        .collect::<Vec<_>>()
        .join(" | ")
        .replace('\'', "''");
    let plan = client
        .query(
            &format!(
                "EXPLAIN (ANALYZE, BUFFERS) SELECT e.machine, e.session_id, e.seq,
                        ts_rank(e.tsv, '{q}'::tsquery, 1) AS rank
                 FROM kn_event e WHERE e.tsv @@ '{q}'::tsquery
                 ORDER BY rank DESC, e.machine, e.session_id, e.seq LIMIT 180"
            ),
            &[],
        )
        .expect("explain");
    println!("[team] plan of the lexical arm for {:?}:", QUERIES[0]);
    for r in plan {
        println!("    {}", r.get::<_, String>(0));
    }
}

/// The load average now (the machine is shared: wall-clock figures are read beside it).
fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// CPU seconds this process used so far (every thread).
fn own_cpu() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
    t(u.ru_utime) + t(u.ru_stime)
}

/// CPU seconds the cluster's server used so far: the postmaster, its live children and the
/// children it reaped (a backend's time goes to the postmaster's `cutime` when it ends).
fn server_cpu(c: &pg::Cluster) -> f64 {
    let Some(pid) = std::fs::read_to_string(c.dir.join("postmaster.pid"))
        .ok()
        .and_then(|s| s.lines().next().map(str::to_string))
    else {
        return 0.0;
    };
    // SAFETY: sysconf has no preconditions.
    let tick = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    // (ppid, utime + stime, cutime + cstime) of one process, from /proc/PID/stat.
    let stat = |p: &str| -> Option<(String, f64, f64)> {
        let s = std::fs::read_to_string(format!("/proc/{p}/stat")).ok()?;
        let f: Vec<&str> = s.rsplit_once(')')?.1.split_whitespace().collect();
        let n = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
        Some((f.get(1)?.to_string(), n(11) + n(12), n(13) + n(14)))
    };
    let Some((_, own, reaped)) = stat(&pid) else {
        return 0.0;
    };
    let mut total = own + reaped;
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if let Some((_, t, _)) = stat(&name).filter(|(ppid, _, _)| *ppid == pid) {
            total += t;
        }
    }
    total / tick
}

/// Where a push's time goes on this machine's side: reading the events from SQLite, redacting
/// them again and making their token stream (the rest of a push is COPY and the server's
/// inserts). Each stage over every event of the world, one after another.
fn push_stages(data: &std::path::Path) {
    let conn =
        knowledge::sources::sqlite::open_ro(&data.join("episodes.sqlite")).expect("episodes");
    let t = Instant::now();
    let texts: Vec<(String, Option<String>)> = conn
        .prepare("SELECT text, tool_name FROM events ORDER BY session_id, seq")
        .expect("select")
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    let read = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let redacted: Vec<String> = texts
        .iter()
        .map(|(text, _)| knowledge::text::redact::redact(text).text)
        .collect();
    let redact = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let mut bytes = 0usize;
    for (text, (_, tool)) in redacted.iter().zip(&texts) {
        bytes += knowledge::text::tokens::index_text(text).len();
        if let Some(tool) = tool {
            bytes += knowledge::text::tokens::index_text(tool).len();
        }
    }
    let tokens = t.elapsed().as_secs_f64();
    let n = texts.len() as f64;
    println!(
        "[team] push stages over {} events: read {:.0} ev/s, redact again {:.0} ev/s, token \
         stream {:.0} ev/s ({bytes} bytes of terms)",
        texts.len(),
        n / read,
        n / redact,
        n / tokens
    );
}

/// A first push as the owner into a database of its own: the owner's path against the push
/// role's below on equal terms (both into empty indexes).
fn push_as_owner_alone(c: &pg::Cluster, data: &std::path::Path) {
    let db = &c.database("bench_owner");
    let url = TeamUrl::parse(&c.url("admin", db)).expect("url");
    let plan = PushPlan {
        machine: "laptop".into(),
        person: None,
    };
    let (t, server_before) = (Instant::now(), server_cpu(c));
    let s = push(data, &url, &plan, &mut |_| {}).expect("push as the owner");
    let secs = t.elapsed().as_secs_f64();
    println!(
        "[team] push as the owner into an empty database: {} events, {} batches in {secs:.1}s \
         = {:.0} events/s, server {:.2} CPU-s (load average {})",
        s.events_sent,
        s.batches,
        s.events_sent as f64 / secs,
        server_cpu(c) - server_before,
        loadavg()
    );
}

/// The same first push as the owner, over TCP with `sslmode=verify-full` to a second cluster
/// (`ssl=on`, hostssl only, a password): what TLS (and TCP instead of the unix socket) costs.
fn push_over_tls(data: &std::path::Path) {
    let Some(s) = team_db::tls_server() else {
        return;
    };
    s.cluster.sql(
        "postgres",
        "CREATE ROLE bench_tls LOGIN CREATEROLE PASSWORD 'bench-tls-pw'",
    );
    let db = s.cluster.database("bench_tls");
    s.cluster.sql(
        "postgres",
        &format!("ALTER DATABASE {db} OWNER TO bench_tls"),
    );
    let tls = format!("sslmode=verify-full sslrootcert={}", s.ca.display());
    let url =
        TeamUrl::parse(&s.url("localhost", "bench_tls", "bench-tls-pw", &db, &tls)).expect("url");
    let plan = PushPlan {
        machine: "laptop".into(),
        person: None,
    };
    let (t, server_before) = (Instant::now(), server_cpu(&s.cluster));
    let sum = push(data, &url, &plan, &mut |_| {}).expect("push over TLS");
    let secs = t.elapsed().as_secs_f64();
    println!(
        "[team] push as the owner over TLS (verify-full, TCP): {} events in {secs:.1}s = {:.0} \
         events/s, server {:.2} CPU-s (load average {})",
        sum.events_sent,
        sum.events_sent as f64 / secs,
        server_cpu(&s.cluster) - server_before,
        loadavg()
    );
}

/// A first push as a push role (row-level security on, rows through a staging table), as a
/// laptop pushes, into a database of its own (the search figures stay over the machines above).
fn push_as_role(c: &pg::Cluster, data: &std::path::Path) {
    let db = &c.database("bench_role");
    let mut owner = TeamUrl::parse(&c.url("admin", db))
        .expect("url")
        .connect()
        .expect("connect");
    knowledge::team::schema::migrate(&mut owner).expect("schema");
    c.sql(
        db,
        "CREATE ROLE bench_laptop LOGIN IN ROLE knowledge_push;
         INSERT INTO kn_pusher VALUES ('bench_laptop', 'laptop');",
    );
    let url = TeamUrl::parse(&c.url("bench_laptop", db)).expect("url");
    let plan = PushPlan {
        machine: "laptop".into(),
        person: None,
    };
    let (t, server_before) = (Instant::now(), server_cpu(c));
    let s = push(data, &url, &plan, &mut |_| {}).expect("push as a push role");
    let secs = t.elapsed().as_secs_f64();
    println!(
        "[team] push as a push role: {} events, {} batches in {secs:.1}s = {:.0} events/s, \
         server {:.2} CPU-s (load average {})",
        s.events_sent,
        s.batches,
        s.events_sent as f64 / secs,
        server_cpu(c) - server_before,
        loadavg()
    );
}
