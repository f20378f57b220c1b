//! `knowledge index`, `knowledge demo` and the bare status: building the stores and showing them.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use knowledge::demo;
use knowledge::engine::{Engine, EngineConfig};
use knowledge::sources::episodes::discover::default_roots;
use knowledge::sources::episodes::index::{index_episodes, IndexOptions, IndexSummary};

use super::args::{DemoArgs, IndexArgs};
use super::render;

pub fn run(data_dir: &Path, a: IndexArgs) -> Result<i32> {
    let roots = if a.sessions.is_empty() {
        let found = default_roots();
        if found.is_empty() {
            eprintln!(
                "knowledge: no transcript folders found (looked for ~/.claude/projects, \
                 ~/.codex/sessions, ~/.codex/archived_sessions); pass --sessions PATH"
            );
        }
        found
    } else {
        for r in &a.sessions {
            if !r.exists() {
                anyhow::bail!(
                    "--sessions {}: no such file or directory (point it at a folder of \
                     transcripts, e.g. ~/.claude/projects)",
                    r.display()
                );
            }
        }
        a.sessions.clone()
    };
    let summary = index_all(data_dir, &roots, a.quiet)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        print_summary(data_dir, &summary);
    }
    Ok(0)
}

/// Index transcript roots into `data_dir`, with a progress bar on a terminal.
pub fn index_all(data_dir: &Path, roots: &[PathBuf], quiet: bool) -> Result<IndexSummary> {
    std::fs::create_dir_all(data_dir)
        .with_context(|| format!("cannot create the data dir {}", data_dir.display()))?;
    let config = EngineConfig::new(data_dir);
    let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
        let bar = ProgressBar::new(0);
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} indexing sessions [{bar:30}] {bytes}/{total_bytes} {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        bar
    });
    let summary = index_episodes(
        &config.episodes_db(),
        &IndexOptions::new(roots.to_vec()),
        &mut |p| {
            if let Some(bar) = &bar {
                bar.set_length(p.bytes_total);
                bar.set_position(p.bytes_done);
                bar.set_message(format!("{}/{} files", p.done, p.total));
            }
        },
    )?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    Ok(summary)
}

fn print_summary(data_dir: &Path, s: &IndexSummary) {
    let l = &s.lines;
    eprintln!(
        "indexed {} files ({} new, {} appended, {} rewritten, {} unchanged) in {} ms",
        s.files_seen,
        s.files_new,
        s.files_appended,
        s.files_rewritten,
        s.files_unchanged,
        s.elapsed_ms
    );
    eprintln!(
        "  {} sessions, {} events added, {} lines read ({} broken, {} unknown type, {} oversized \
         skipped), {} secrets redacted",
        s.sessions,
        s.events_added,
        l.lines,
        l.skipped_broken,
        l.skipped_unknown,
        l.skipped_oversized,
        s.secrets_redacted
    );
    for (path, why) in &s.failed {
        eprintln!(
            "  could not read {}: {}",
            render::clean(path),
            render::clean(why)
        );
    }
    eprintln!("  index_rev {} in {}", s.index_rev, data_dir.display());
}

pub fn demo(a: DemoArgs) -> Result<i32> {
    let world_src = a.world.clone().unwrap_or_else(demo::bundled_world);
    if !world_src.is_dir() {
        anyhow::bail!(
            "the demo world {} is missing; run from a checkout of the project or pass --world DIR",
            world_src.display()
        );
    }
    let base = match &a.into {
        Some(d) => d.clone(),
        None => std::env::temp_dir().join(format!("knowledge-demo-{}", std::process::id())),
    };
    let world = demo::materialize(&world_src, &base.join("world"))
        .with_context(|| format!("cannot copy the demo world into {}", base.display()))?;
    let data_dir = base.join("data");
    let summary = index_all(&data_dir, &world.sessions_roots(), false)?;
    print_summary(&data_dir, &summary);
    let engine = Engine::open(EngineConfig::load(&data_dir)?);
    if !a.print && std::io::stdout().is_terminal() && std::io::stdin().is_terminal() {
        return crate::tui::run(engine, Some(a.query.clone()));
    }
    let req = knowledge::contract::SearchRequest::new(a.query.clone());
    let resp = engine.search(&req);
    println!("{}", render::response(&resp));
    eprintln!(
        "demo data dir: {} (try: knowledge --data-dir {} search -q \"who fixed getUserName\" --pretty)",
        data_dir.display(),
        data_dir.display()
    );
    Ok(0)
}

/// The bare `knowledge`: the explorer on a terminal, else what is indexed and what to run.
pub fn explore(data_dir: &Path) -> Result<i32> {
    if std::io::stdout().is_terminal() && std::io::stdin().is_terminal() {
        let engine = Engine::open(EngineConfig::load(data_dir)?);
        return crate::tui::run(engine, None);
    }
    status(data_dir)
}

/// What is indexed and what to run next.
pub fn status(data_dir: &Path) -> Result<i32> {
    let config = EngineConfig::load(data_dir)?;
    let db = config.episodes_db();
    if db.exists() {
        let engine = Engine::open(config);
        if let Some(store) = engine.episode_store() {
            let st = store.stats()?;
            println!(
                "{}: {} sessions, {} events ({})",
                data_dir.display(),
                st.sessions,
                st.events,
                st.index_rev.unwrap_or_default()
            );
        }
        println!("search with: knowledge search -q \"who fixed …\" --pretty");
    } else {
        println!(
            "nothing indexed in {} yet: run `knowledge index` (or `knowledge demo`)",
            data_dir.display()
        );
    }
    Ok(0)
}
