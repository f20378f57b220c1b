//! Command-line front end: parses arguments (clap), calls the engine, prints contract JSON on
//! stdout and human-readable errors on stderr.
//!
//! Exit codes: 0 a response (also a degraded one), 2 an invalid request or usage error (the
//! error document still on stdout), 1 an internal failure.

/// `println!` that hands back the write error (a closed pipe, a full disk) instead of panicking.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::cli::render::write_out(&format!("{}\n", format_args!($($arg)*)))
    };
}

mod args;
mod chart_cmd;
mod dispatch_cmd;
mod health_cmd;
mod index_cmd;
mod push_cmd;
mod render;
mod search_cmd;
mod team_report;
mod watch_cmd;

use std::path::PathBuf;

pub use args::{Cli, Command};

/// Run the CLI and return the process exit code.
pub fn run() -> i32 {
    let parsed = command()
        .try_get_matches()
        .and_then(|m| <Cli as clap::FromArgMatches>::from_arg_matches(&m));
    let cli = match parsed {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    let data_dir = data_dir(cli.data_dir.clone());
    // A data dir that is a file fails every command in its own words ("Not a directory",
    // "does not exist"): said once, here, as what it is. `search` says it in its error document,
    // `doctor` in its report.
    let own_dir = !matches!(
        cli.command,
        Some(
            Command::Demo(_)
                | Command::Completions(_)
                | Command::Man
                | Command::Search(_)
                | Command::Doctor(_)
        )
    );
    if own_dir {
        if let Some(why) = not_a_folder(&data_dir) {
            eprintln!("knowledge: {why}");
            return 2;
        }
        // One config load for every command, so none runs on a `config.toml` another refuses
        // (`stats --json` read only the log, `stats --chart` the config too). `dispatch` says it
        // in its error document.
        let own_words = matches!(cli.command, Some(Command::Dispatch(_)));
        let config = (!own_words).then(|| knowledge::config::Config::load(&data_dir));
        match config {
            Some(Err(e)) if e.is_about_the_data_dir() => {
                let source = std::error::Error::source(&e).map(|s| s.to_string());
                eprintln!(
                    "knowledge: the data dir {} cannot be read: {} (give --data-dir a folder \
                     you may read and write)",
                    render::clean(&data_dir.display().to_string()),
                    source.unwrap_or_default()
                );
                return 2;
            }
            Some(Err(e)) => {
                eprintln!(
                    "knowledge: error: {} (fix the file, or move it away to use the defaults)",
                    render::clean(&e.to_string())
                );
                return 2;
            }
            _ => {}
        }
    }
    if let Some(url) = cli.team.clone() {
        knowledge::config::search_team(url, cli.team_only);
    }
    // A reader never creates the data dir; with a team index, an episode or a file can still
    // be read from the team (a lead who never indexed this machine).
    let reads_only = match cli.command {
        Some(Command::GetEpisode(_) | Command::Code(_)) => cli.team.is_none(),
        Some(Command::Outbox(_)) => true,
        _ => false,
    };
    if reads_only {
        if let Some(why) = missing_data_dir(&data_dir) {
            eprintln!("knowledge: {why}");
            return 2;
        }
    }
    let result = match cli.command {
        Some(Command::Index(a)) => index_cmd::run(&data_dir, a),
        Some(Command::Search(a)) => search_cmd::run(&data_dir, a),
        Some(Command::GetEpisode(a)) => search_cmd::get_episode(&data_dir, a),
        Some(Command::Demo(a)) => index_cmd::demo(a),
        Some(Command::Code(a)) => search_cmd::code(&data_dir, a),
        Some(Command::Dispatch(a)) => dispatch_cmd::run(&data_dir, a),
        Some(Command::Outbox(a)) => dispatch_cmd::outbox(&data_dir, a),
        Some(Command::Mcp(a)) => crate::mcp_server::run(&data_dir, a.allow_commit, !a.no_watch),
        Some(Command::Stats(a)) => health_cmd::run_stats(&data_dir, a),
        Some(Command::Doctor(a)) => health_cmd::run_doctor(&data_dir, a),
        Some(Command::Push(a)) => push_cmd::run(&data_dir, a),
        Some(Command::Completions(a)) => completions(a.shell),
        Some(Command::Man) => man_page(),
        None => index_cmd::explore(&data_dir, !cli.no_watch),
    };
    match result {
        Ok(code) => code,
        // The reader went away (`| head`): like other CLI tools, stop quietly.
        Err(e) if render::is_closed_pipe(&e) => 0,
        // A config.toml the person can fix is a usage error, not an internal failure.
        // An error can quote what a file held (a package's word, a config line): shown clean.
        Err(e) if e.chain().any(|c| c.is::<knowledge::config::ConfigError>()) => {
            eprintln!("knowledge: error: {}", render::clean(&chain(&e)));
            2
        }
        Err(e) => {
            eprintln!("knowledge: error: {}", render::clean(&chain(&e)));
            1
        }
    }
}

/// An error and its causes in one line, each cause once: most of the library's errors already
/// name their cause in their own text (`cannot read X: <why>`), and `{:#}` would repeat it.
fn chain(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

/// The command line as clap sees it, with the version line naming the store schemas (a store
/// written by another schema is rebuilt by the next `knowledge index`).
pub fn command() -> clap::Command {
    use clap::CommandFactory;
    // clap keeps the version for the life of the process; it is built once.
    let version: &'static str = Box::leak(version_text().into_boxed_str());
    Cli::command().version(version)
}

/// `0.1.0 (stores: episodes schema 4, code schema 1, agent knowledge schema 2)`.
pub fn version_text() -> String {
    format!(
        "{} (stores: episodes schema {}, code schema {}, agent knowledge schema {})",
        env!("CARGO_PKG_VERSION"),
        knowledge::sources::episodes::store::SCHEMA_VERSION,
        knowledge::sources::code::store::SCHEMA_VERSION,
        knowledge::sources::agent_knowledge::schema::SCHEMA_VERSION,
    )
}

fn completions(shell: clap_complete::Shell) -> anyhow::Result<i32> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut command(), "knowledge", &mut out);
    render::write_out(&String::from_utf8_lossy(&out))?;
    Ok(0)
}

fn man_page() -> anyhow::Result<i32> {
    let mut out = Vec::new();
    clap_mangen::Man::new(command()).render(&mut out)?;
    render::write_out(&String::from_utf8_lossy(&out))?;
    Ok(0)
}

/// Why a command that only reads cannot run on `data_dir`: it does not exist (readers never
/// create it, so a mistyped `--data-dir` is an error, not a new empty index).
pub fn missing_data_dir(data_dir: &std::path::Path) -> Option<String> {
    if let Some(why) = not_a_folder(data_dir) {
        return Some(why);
    }
    (!data_dir.is_dir()).then(|| {
        format!(
            "no data dir at {}: nothing is indexed there (a mistyped --data-dir? `knowledge \
             index` creates it)",
            render::clean(&data_dir.display().to_string())
        )
    })
}

/// Why `data_dir` cannot be a data dir although something is there: a file (or a FIFO, a
/// device) where the folder should be.
pub fn not_a_folder(data_dir: &std::path::Path) -> Option<String> {
    let meta = std::fs::metadata(data_dir).ok()?;
    (!meta.is_dir()).then(|| {
        let what = if meta.is_file() {
            "a file"
        } else {
            "not a folder"
        };
        format!(
            "the data dir {} is {what}: give --data-dir (or KNOWLEDGE_DATA_DIR) a folder, or \
             move it away",
            render::clean(&data_dir.display().to_string())
        )
    })
}

/// `--data-dir`, else `KNOWLEDGE_DATA_DIR` (clap reads it), else the XDG data dir.
pub fn data_dir(flag: Option<PathBuf>) -> PathBuf {
    if let Some(d) = flag {
        return d;
    }
    if let Some(x) = std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(x).join("knowledge");
    }
    match std::env::var_os("HOME") {
        Some(h) => PathBuf::from(h).join(".local/share/knowledge"),
        None => PathBuf::from(".knowledge"),
    }
}
