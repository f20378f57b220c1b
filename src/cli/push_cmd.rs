//! `knowledge push`: this data dir to the team index, with a progress bar on a terminal and a
//! summary at the end (docs/TEAM.md). `push --watch` keeps the local index following its folders
//! (the same background watch as the explorer's, `watch::background`) and pushes whenever the
//! stores' revision changes, whoever indexed; Ctrl-C or SIGTERM stops it at a batch boundary.

use std::io::IsTerminal;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Result};
use knowledge::config::Config;
use knowledge::team::push::{local_revision, push_until, PushPlan, PushProgress, PushSummary};
use knowledge::team::{check_machine, default_machine, TeamUrl};
use knowledge::watch::WatchEvent;

use super::args::PushArgs;

/// How often `push --watch` looks at the stores' revision (an index batch wakes it at once).
const LOOK_EVERY: Duration = Duration::from_millis(500);
/// After a failed push, the wait before the next try doubles up to this.
const RETRY_MAX: Duration = Duration::from_secs(30);

pub fn run(data_dir: &Path, args: PushArgs) -> Result<i32> {
    let config = Config::load(data_dir)?;
    let Some(url) = args.to.clone().or(config.team.url.clone()) else {
        eprintln!(
            "knowledge: push: no team index: give --to URL, set KNOWLEDGE_TEAM_URL, or `[team] \
             url` in {}",
            data_dir.join("config.toml").display()
        );
        return Ok(2);
    };
    let url = match TeamUrl::parse(&url) {
        Ok(u) => u,
        Err(e) => {
            eprintln!("knowledge: push: {e}");
            return Ok(2);
        }
    };
    // A bad name is said as the fault of where it came from, not of the URL's.
    let (machine, from) = match (args.machine, config.team.machine.clone()) {
        (Some(m), _) => (m, "--machine".to_string()),
        (None, Some(m)) => (
            m,
            format!(
                "[team] machine in {}",
                data_dir.join("config.toml").display()
            ),
        ),
        (None, None) => (
            default_machine(),
            "this machine's host name (give --machine NAME)".to_string(),
        ),
    };
    if let Err(e) = check_machine(&machine) {
        eprintln!("knowledge: push: {}: {e}", super::render::clean(&from));
        return Ok(2);
    }
    let plan = PushPlan {
        machine,
        person: std::env::var("USER").ok().filter(|u| !u.is_empty()),
    };
    if args.watch {
        return watch(data_dir, &url, &plan, args.json);
    }
    let never = AtomicBool::new(false);
    let started = Instant::now();
    let s = push_once(data_dir, &url, &plan, &never)?;
    print_summary(&s, &url, started.elapsed().as_secs_f64(), args.json)?;
    Ok(0)
}

/// One push with a progress bar when stderr is a terminal.
fn push_once(
    data_dir: &Path,
    url: &TeamUrl,
    plan: &PushPlan,
    stop: &AtomicBool,
) -> Result<PushSummary> {
    let bar = std::io::stderr().is_terminal().then(|| {
        let b = indicatif::ProgressBar::new(0);
        b.set_style(
            indicatif::ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        b.set_message(format!("pushing to {url}"));
        b
    });
    let out = push_until(data_dir, url, plan, stop, &mut |p| {
        if let Some(b) = &bar {
            match p {
                PushProgress::Sessions { done, total } => {
                    b.set_length(total);
                    b.set_position(done);
                }
                PushProgress::Chunks { done } => b.set_message(format!("code: {done} chunks")),
                PushProgress::Knowledge { rows } => {
                    b.set_message(format!("agent knowledge: {rows} rows"))
                }
            }
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    out.map_err(|e| anyhow!("push: {e}"))
}

fn print_summary(s: &PushSummary, url: &TeamUrl, secs: f64, json: bool) -> Result<()> {
    if json {
        return super::render::print_json(s, false);
    }
    let mut lines = vec![format!(
        "pushed machine {} to {url} in {secs:.1}s: {} events ({} vector codes) in {} batch(es), \
         {} code chunks ({} vector codes)",
        s.machine,
        s.events_sent,
        s.event_vectors_sent,
        s.batches,
        s.chunks_sent,
        s.chunk_vectors_sent
    )];
    if s.episodes_skipped {
        lines.push("episodes: unchanged since the last push".to_string());
    } else {
        lines.push(format!(
            "sessions: {} new, {} grown, {} re-read and replaced, {} updated, {} unchanged, {} \
             removed",
            s.sessions_new,
            s.sessions_grown,
            s.sessions_replaced,
            s.sessions_updated,
            s.sessions_unchanged,
            s.sessions_removed
        ));
    }
    if s.code_skipped {
        lines.push("code: unchanged since the last push".to_string());
    }
    if s.knowledge_skipped {
        lines.push("agent knowledge: unchanged since the last push".to_string());
    } else if s.knowledge_rows > 0 {
        lines.push(format!(
            "agent knowledge: {} skills, {} actors, {} skill uses ({} rows in all)",
            s.skills_sent, s.actors_sent, s.skill_uses_sent, s.knowledge_rows
        ));
    }
    if s.schema_before == 0 {
        lines.push("the team index was empty: its schema was created".to_string());
    } else if s.schema_before < knowledge::team::schema::VERSION {
        lines.push(format!(
            "the team index's schema was upgraded from version {} to {}",
            s.schema_before,
            knowledge::team::schema::VERSION
        ));
    }
    if s.redacted_again > 0 {
        lines.push(format!(
            "{} secret(s) the local index still held were redacted before sending",
            s.redacted_again
        ));
    }
    if s.interrupted {
        lines.push("stopped before the end: the next push carries on".to_string());
    }
    super::render::write_out(&format!("{}\n", lines.join("\n")))
}

/// Set by SIGINT / SIGTERM; a second signal ends the process at once.
static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_stop_signal(sig: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
    // SAFETY: signal() is async-signal-safe; the default action makes a second Ctrl-C final.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
    }
}

fn catch_stop_signals() {
    let handler = on_stop_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    // SAFETY: the handler only stores to an atomic and resets its own disposition.
    unsafe {
        libc::signal(libc::SIGINT, handler);
        libc::signal(libc::SIGTERM, handler);
    }
}

/// `push --watch`: push now, then again whenever the local stores' revision changes.
fn watch(data_dir: &Path, url: &TeamUrl, plan: &PushPlan, json: bool) -> Result<i32> {
    catch_stop_signals();
    let (tx, woken) = mpsc::channel::<()>();
    let wake = tx.clone();
    let following = knowledge::watch::background(data_dir, move |ev| match ev {
        WatchEvent::Indexed(_) => {
            let _ = wake.send(());
        }
        WatchEvent::Busy(_) => {}
        WatchEvent::Failed(why) => {
            eprintln!("indexing failed: {}", super::render::clean(&why));
        }
    })
    .map_err(|e| anyhow!("push --watch: {e}"))?;
    match &following {
        Some(w) => eprintln!(
            "pushing machine {} to {url} as the index follows {} folders; Ctrl-C to stop",
            plan.machine,
            w.roots().len()
        ),
        None => eprintln!(
            "pushing machine {} to {url} whenever the index changes (this data dir was never \
             indexed with `knowledge index`, so nothing is watched here: another process \
             indexes it); Ctrl-C to stop",
            plan.machine
        ),
    }
    let mut pushed: Option<String> = None;
    let mut retry_at: Option<(Instant, Duration)> = None;
    let mut last_error = String::new();
    while !STOP.load(Ordering::SeqCst) {
        let rev = local_revision(data_dir);
        let due = retry_at.is_none_or(|(at, _)| Instant::now() >= at);
        if pushed.as_deref() != Some(rev.as_str()) && due {
            let started = Instant::now();
            match push_once(data_dir, url, plan, &STOP) {
                Ok(s) => {
                    if !s.interrupted {
                        pushed = Some(rev);
                    }
                    retry_at = None;
                    last_error.clear();
                    let sent = s.events_sent + s.chunks_sent + s.knowledge_rows;
                    if json || sent > 0 || s.sessions_removed > 0 || s.interrupted {
                        print_summary(&s, url, started.elapsed().as_secs_f64(), json)?;
                    }
                }
                Err(e) => {
                    let why = e.to_string();
                    if why != last_error {
                        eprintln!("knowledge: {why} (trying again)");
                        last_error = why;
                    }
                    let wait =
                        retry_at.map_or(Duration::from_secs(1), |(_, w)| (w * 2).min(RETRY_MAX));
                    retry_at = Some((Instant::now() + wait, wait));
                }
            }
        }
        let _ = woken.recv_timeout(LOOK_EVERY);
    }
    drop(tx);
    // Dropping the watch lets an index batch in progress finish (the local stores stay whole).
    drop(following);
    eprintln!("push --watch stopped");
    Ok(0)
}
