//! `knowledge index`, `knowledge demo` and the bare command: building the stores and showing them.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use knowledge::demo;
use knowledge::engine::EngineConfig;
use knowledge::indexing::{default_plan, index_all, IndexAllSummary, IndexPlan, Stage};
use knowledge::sources::agent_knowledge::{default_agent_roots, default_skill_roots};

use super::args::{DemoArgs, IndexArgs};
use super::render;

pub fn run(data_dir: &Path, a: IndexArgs) -> Result<i32> {
    // A broken config.toml is said before any work, not found out by the first search.
    knowledge::engine::EngineConfig::load(data_dir)?;
    let given =
        !(a.sessions.is_empty() && a.code.is_empty() && a.skills.is_empty() && a.agents.is_empty());
    let plan = if given {
        for p in a
            .sessions
            .iter()
            .chain(&a.code)
            .chain(&a.skills)
            .chain(&a.agents)
        {
            if !p.exists() {
                anyhow::bail!(
                    "{}: no such file or directory (check the path given to --sessions, --code, \
                     --skills or --agents)",
                    p.display()
                );
            }
        }
        // Absolute, so that a watch or a later run from another directory names every file the
        // way the index does.
        let abs = |v: &[PathBuf]| -> Vec<PathBuf> {
            v.iter()
                .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone()))
                .collect()
        };
        let code = abs(&a.code);
        let mut skills = abs(&a.skills);
        skills.extend(default_skill_roots(&code));
        let mut agents = abs(&a.agents);
        agents.extend(default_agent_roots(&code));
        // A repository indexed for its code brings the history an agent keeps in it (Aider).
        let mut sessions = abs(&a.sessions);
        for store in knowledge::sources::episodes::agents::project_stores(&code) {
            if !sessions.contains(&store) {
                sessions.push(store);
            }
        }
        IndexPlan {
            sessions,
            code,
            skills,
            agents,
            rebuild: a.rebuild,
        }
    } else {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        let mut plan = default_plan(&cwd);
        plan.rebuild = a.rebuild;
        // A bare `index` adds to what this data dir already follows, never drops it: the roots
        // an earlier run indexed (the demo's, or ones named with flags) stay in the plan, so
        // their skills and code are not rebuilt away.
        if let Some(saved) = knowledge::saved_plan::load(data_dir) {
            let keep = |mine: &mut Vec<PathBuf>, before: Vec<PathBuf>| {
                for p in before {
                    if p.exists() && !mine.contains(&p) {
                        mine.push(p);
                    }
                }
            };
            keep(&mut plan.sessions, saved.sessions);
            keep(&mut plan.code, saved.code);
            keep(&mut plan.skills, saved.skills);
            keep(&mut plan.agents, saved.agents);
        }
        if plan.sessions.is_empty() {
            // The registry's roots, so the message names every agent looked for.
            let env = knowledge::sources::episodes::agent::Env::current();
            let looked: Vec<String> = knowledge::sources::episodes::agents::roots_in(&env)
                .into_iter()
                .map(|(_, r)| r.display().to_string())
                .collect();
            eprintln!(
                "knowledge: no agent's sessions found (looked for {}, and \
                 .aider.chat.history.md in this repository); pass --sessions PATH",
                looked.join(", ")
            );
        }
        plan
    };
    // Watching starts before the first pass so that nothing written during it is missed.
    let watching = if a.watch {
        Some(super::watch_cmd::start(data_dir, &plan)?)
    } else {
        None
    };
    let summary = run_plan(data_dir, &plan, a.quiet)?;
    if a.json && a.watch {
        render::print_json(&summary, false)?;
    } else if a.json {
        render::print_json(&summary, true)?;
    } else {
        print_summary(data_dir, &summary);
    }
    if let Some(w) = watching {
        return super::watch_cmd::follow(w, a.json);
    }
    // Everything readable is indexed; a file that was not is an error a script must see.
    let unreadable = unreadable(&summary).len();
    if unreadable > 0 {
        eprintln!(
            "knowledge: {unreadable} files could not be read and are not indexed (named above; \
             `knowledge doctor` lists them)"
        );
        return Ok(1);
    }
    Ok(0)
}

/// Every file a pass could not read, with why: transcripts, then code files.
pub fn unreadable(s: &IndexAllSummary) -> Vec<(&str, &str)> {
    s.episodes
        .iter()
        .flat_map(|e| &e.failed)
        .chain(s.code.iter().flat_map(|c| &c.failed))
        .map(|(path, why)| (path.as_str(), why.as_str()))
        .collect()
}

/// Run a plan with one progress bar per stage on a terminal.
pub fn run_plan(data_dir: &Path, plan: &IndexPlan, quiet: bool) -> Result<IndexAllSummary> {
    let show = !quiet && std::io::stderr().is_terminal();
    let mut bar: Option<(Stage, ProgressBar)> = None;
    let summary = index_all(data_dir, plan, &mut |p| {
        if !show {
            return;
        }
        if bar.as_ref().map(|(s, _)| *s) != Some(p.stage) {
            if let Some((_, b)) = bar.take() {
                b.finish_and_clear();
            }
            let b = ProgressBar::new(0);
            b.set_style(
                ProgressStyle::with_template(&format!(
                    "{{spinner}} indexing {} [{{bar:30}}] {{pos}}/{{len}} {} {{msg}}",
                    p.stage.label(),
                    p.stage.unit()
                ))
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            bar = Some((p.stage, b));
        }
        if let Some((_, b)) = &bar {
            b.set_length(p.total);
            b.set_position(p.done);
            if p.bytes_total > 0 {
                b.set_message(format!(
                    "{:.1}/{:.1} MB",
                    p.bytes_done as f64 / 1e6,
                    p.bytes_total as f64 / 1e6
                ));
            }
        }
    })
    .map_err(|e| {
        let hint = if knowledge::indexing::is_damaged_store(&e) {
            " (a store file is damaged: `knowledge index --rebuild` rebuilds it from your files)"
        } else {
            ""
        };
        anyhow::Error::new(e).context(format!("indexing into {}{hint}", data_dir.display()))
    })?;
    if let Some((_, b)) = bar {
        b.finish_and_clear();
    }
    // The explorer, `knowledge mcp` and `knowledge doctor` watch and check these roots.
    let _ = knowledge::saved_plan::save(data_dir, plan);
    Ok(summary)
}

fn print_summary(data_dir: &Path, s: &IndexAllSummary) {
    if let Some(e) = &s.episodes {
        let l = &e.lines;
        eprintln!(
            "sessions: {} files ({} new, {} appended, {} rewritten, {} unchanged, {} moved, {} \
             copies stored once, {} gone from disk and kept, {} gone while indexing) in {} ms; \
             {} sessions, {} events added",
            e.files_seen,
            e.files_new,
            e.files_appended,
            e.files_rewritten,
            e.files_unchanged,
            e.files_moved,
            e.files_copies,
            e.files_gone,
            e.files_vanished,
            e.elapsed_ms,
            e.sessions,
            e.events_added
        );
        eprintln!(
            "  {} lines read: {} broken, {} of unknown type, {} oversized, {} with an absurd id \
             skipped; {} secrets redacted",
            l.lines,
            l.skipped_broken,
            l.skipped_unknown,
            l.skipped_oversized,
            l.skipped_bad_id,
            e.secrets_redacted
        );
        for (path, why) in &e.failed {
            eprintln!(
                "  could not read {}: {}",
                render::clean(path),
                render::clean(why)
            );
        }
    }
    if let Some(c) = &s.code {
        let skipped: Vec<String> = c.skipped.iter().map(|(k, v)| format!("{v} {k}")).collect();
        eprintln!(
            "code: {} files ({} new, {} changed, {} unchanged, {} deleted) in {} ms; {} chunks, \
             {} secrets redacted{}",
            c.files_seen,
            c.files_new,
            c.files_changed,
            c.files_unchanged,
            c.files_deleted,
            c.elapsed_ms,
            c.chunks,
            c.secrets_redacted,
            if skipped.is_empty() {
                String::new()
            } else {
                format!("; skipped {}", skipped.join(", "))
            }
        );
        for (path, why) in &c.failed {
            eprintln!(
                "  could not read {}: {}",
                render::clean(path),
                render::clean(why)
            );
        }
    }
    if let Some(k) = s.agent_knowledge.as_ref().filter(|k| k.unchanged) {
        eprintln!(
            "skills and actors: unchanged ({} skills, {} actors, {} skill uses)",
            k.skills, k.actors, k.skill_uses
        );
    } else if let Some(k) = &s.agent_knowledge {
        let how = match (k.rederived_sessions, &k.full_build_because) {
            (Some(n), _) => format!(" ({n} changed sessions derived again)"),
            (None, Some(why)) => format!(" (everything derived: {why})"),
            (None, None) => String::new(),
        };
        eprintln!(
            "skills and actors: {} skills, {} agent definitions, {} actors, {} skill uses, {} \
             edits, {} assignments kept, in {} ms{how}",
            k.skills,
            k.agent_defs,
            k.actors,
            k.skill_uses,
            k.edits,
            k.assignments_preserved,
            k.elapsed_ms
        );
        for w in &k.warnings {
            eprintln!("  {}", render::clean(w));
        }
    }
    if let Some(m) = &s.messages {
        eprintln!(
            "message vectors: {} messages of {} sessions embedded ({} vectors) in {} ms",
            m.messages, m.sessions, m.vectors, m.elapsed_ms
        );
    }
    eprintln!("data dir: {}", data_dir.display());
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
    let summary = run_plan(&data_dir, &world.plan(), false)?;
    print_summary(&data_dir, &summary);
    let engine = knowledge::open_engine(EngineConfig::load(&data_dir)?);
    if !a.print && std::io::stdout().is_terminal() && std::io::stdin().is_terminal() {
        engine.warm_semantic();
        return crate::tui::run(engine, Some(a.query.clone()), true);
    }
    // A person reads this, not a model: five items a lane with their snippets, no token squeeze.
    let mut req = knowledge::contract::SearchRequest::new(a.query.clone());
    req.limit = 5;
    req.max_tokens = 20_000;
    let resp = engine.search(&req);
    outln!("{}", render::response(&resp))?;
    eprintln!(
        "keep exploring: knowledge --data-dir {} search -q \"who fixed getUserName\" --pretty",
        data_dir.display()
    );
    Ok(0)
}

/// The bare `knowledge`: the explorer on a terminal, else what is indexed and what to run.
pub fn explore(data_dir: &Path, watch: bool) -> Result<i32> {
    if std::io::stdout().is_terminal() && std::io::stdin().is_terminal() {
        let engine = knowledge::open_engine(EngineConfig::load(data_dir)?);
        engine.warm_semantic();
        return crate::tui::run(engine, None, watch);
    }
    status(data_dir)
}

/// What is indexed and what to run next: the engine's counts, the numbers `doctor` reports.
pub fn status(data_dir: &Path) -> Result<i32> {
    use knowledge::engine::counts::StoreState;
    let engine = knowledge::open_engine(EngineConfig::load(data_dir)?);
    let counts = engine.store_counts();
    /// A store that is there and cannot be read, said as such (not as "nothing indexed").
    fn trouble<T>(store: &str, state: &StoreState<T>) -> Result<bool> {
        match state {
            StoreState::Damaged { reason } => outln!(
                "{store}: damaged ({}); run `knowledge index --rebuild`",
                render::clean(reason)
            )?,
            StoreState::Unreadable { reason } => {
                outln!("{store}: cannot be read ({})", render::clean(reason))?
            }
            StoreState::Missing | StoreState::Counted { .. } => return Ok(false),
        }
        Ok(true)
    }
    let mut any = trouble("episodes", &counts.episodes)?;
    any |= trouble("code", &counts.code)?;
    trouble("skills and actors", &counts.knowledge)?;
    if let Some(st) = counts.episodes.counts() {
        outln!(
            "episodes: {} sessions, {} events ({})",
            st.sessions,
            st.events,
            st.index_rev.as_deref().unwrap_or_default()
        )?;
        any = true;
    }
    if let Some(st) = counts.code.counts() {
        outln!(
            "code: {} files, {} chunks in {} roots ({})",
            st.files,
            st.chunks,
            st.roots.len(),
            st.index_rev.as_deref().unwrap_or_default()
        )?;
        any = true;
    }
    if let Some(st) = counts.knowledge.counts() {
        outln!(
            "skills and actors: {} skills, {} actors, {} skill uses",
            st.skills,
            st.actors,
            st.skill_uses
        )?;
    }
    if any {
        outln!("search with: knowledge search -q \"who fixed …\" --pretty")?;
    } else {
        outln!(
            "nothing indexed in {} yet: run `knowledge index` (or `knowledge demo`)",
            data_dir.display()
        )?;
    }
    Ok(0)
}
