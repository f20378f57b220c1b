//! `knowledge index --watch` in the foreground: one line per indexed batch for a person (or one
//! JSON line for a script). The background watch the explorer and `knowledge mcp` run is
//! [`knowledge::watch::background`], so no front end imports another.

use std::path::Path;
use std::sync::mpsc;

use anyhow::{Context, Result};
use knowledge::indexing::IndexPlan;
use knowledge::watch::{Backend, Watch, WatchEvent, WatchOptions};

use super::render;

/// A watch for `knowledge index --watch` and the channel its reports arrive on.
pub struct Following {
    watch: Watch,
    reports: mpsc::Receiver<WatchEvent>,
}

/// Start watching the plan's roots (the first pass is the caller's, so no catch-up here).
pub fn start(data_dir: &Path, plan: &IndexPlan) -> Result<Following> {
    let (tx, reports) = mpsc::channel();
    let opts = WatchOptions {
        catch_up: false,
        ..WatchOptions::default()
    };
    let watch = Watch::start(data_dir, plan, opts, move |ev| {
        let _ = tx.send(ev);
    })
    .context("cannot start watching")?;
    Ok(Following { watch, reports })
}

/// Print what each batch did until the process is stopped.
pub fn follow(f: Following, json: bool) -> Result<i32> {
    let Following { watch, reports: rx } = f;
    eprintln!(
        "watching {} folders ({}); Ctrl-C to stop",
        watch.roots().len(),
        backend_label(watch.backend())
    );
    while let Ok(ev) = rx.recv() {
        match ev {
            WatchEvent::Indexed(b) if json => render::print_json(&b, false)?,
            WatchEvent::Indexed(b) => {
                let mut what = Vec::new();
                if b.dirty_sessions {
                    what.push(format!("{} new events", b.new_events));
                }
                if let Some(c) = &b.summary.code {
                    what.push(format!(
                        "{} code files re-chunked, {} deleted",
                        c.files_new + c.files_changed,
                        c.files_deleted
                    ));
                }
                if let Some(k) = b.summary.agent_knowledge.as_ref().filter(|k| !k.unchanged) {
                    what.push(format!("{} skills, {} actors", k.skills, k.actors));
                }
                let unreadable = super::index_cmd::unreadable(&b.summary);
                if !unreadable.is_empty() {
                    what.push(format!("{} files could not be read", unreadable.len()));
                }
                eprintln!(
                    "indexed in {} ms: {}",
                    b.elapsed_ms,
                    if what.is_empty() {
                        "nothing changed".to_string()
                    } else {
                        what.join("; ")
                    }
                );
                for (path, why) in unreadable {
                    eprintln!(
                        "  could not read {}: {}",
                        render::clean(path),
                        render::clean(why)
                    );
                }
            }
            WatchEvent::Busy(why) => eprintln!("waiting: {}", render::clean(&why)),
            WatchEvent::Failed(why) => eprintln!("indexing failed: {}", render::clean(&why)),
        }
    }
    drop(watch);
    Ok(0)
}

fn backend_label(b: Backend) -> &'static str {
    match b {
        Backend::Native => "file-system notifications",
        Backend::Poll => "polling",
    }
}
