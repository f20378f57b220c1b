//! The command line, declared once with clap; `knowledge --help` is generated from these docs.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Who fixed what, where is it in the code, which skill applies.
///
/// Searches past Claude Code and Codex sessions (episodes), code (chunks) and skills without
/// mixing their evidence. Run `knowledge demo` to see it on the bundled demo world.
#[derive(Debug, Parser)]
#[command(name = "knowledge", version)]
pub struct Cli {
    /// Where the indexes, outbox and logs live [default: $XDG_DATA_HOME/knowledge]
    #[arg(long, global = true, env = "KNOWLEDGE_DATA_DIR", value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// The explorer without watching the indexed folders for new sessions and edits
    #[arg(long)]
    pub no_watch: bool,
    /// Answer from a team index (PostgreSQL URL) beside this machine's episodes and code:
    /// search, the explorer and `mcp` (docs/TEAM.md)
    #[arg(long, global = true, value_name = "URL")]
    pub team: Option<String>,
    /// With --team: the team index alone, not this machine's episodes and code
    #[arg(long, global = true, requires = "team")]
    pub team_only: bool,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build or update the indexes (incremental: unchanged files are skipped)
    Index(IndexArgs),
    /// Search: a contract request in, the contract response out
    Search(SearchArgs),
    /// Show one event in full (redacted) with its neighbours
    GetEpisode(GetEpisodeArgs),
    /// Lines of a code reference, redacted, with the file's freshness (`PATH:START[-END]`)
    Code(CodeArgs),
    /// Index the bundled demo world into a temporary data dir and open the explorer on it
    Demo(DemoArgs),
    /// Serve the engine over MCP (stdio) for a lead agent
    Mcp(McpArgs),
    /// Choose an actor for a task and prepare its handoff package (dry run unless --commit)
    Dispatch(DispatchArgs),
    /// Review handoff packages: list, show, approve, reject (nothing is ever executed)
    Outbox(OutboxArgs),
    /// Request metrics from the request log: latency, zero results, degradations, evidence mix
    Stats(StatsArgs),
    /// What is indexed, how fresh, how big, what is broken and what to run about it
    Doctor(DoctorArgs),
    /// Copy this data dir's redacted episodes and code chunks to the team index (PostgreSQL)
    Push(PushArgs),
    /// Print a shell completion script (bash, zsh or fish) on stdout
    Completions(CompletionsArgs),
    /// Print the manual page (roff) on stdout: `knowledge man | man -l -`
    Man,
}

#[derive(Debug, Args)]
pub struct PushArgs {
    /// The team index: a PostgreSQL URL [default: `[team] url` in config.toml]
    #[arg(long, env = "KNOWLEDGE_TEAM_URL", value_name = "URL")]
    pub to: Option<String>,
    /// This machine's name in the team index [default: `[team] machine`, else the host name]
    #[arg(long, value_name = "NAME")]
    pub machine: Option<String>,
    /// Print the summary as JSON (with --watch: one JSON line a push)
    #[arg(long)]
    pub json: bool,
    /// Keep following the local index: watch its folders as `knowledge index --watch` does and
    /// push every change within seconds, until Ctrl-C
    #[arg(long)]
    pub watch: bool,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Only requests since this RFC 3339 time or span back from now (30m, 12h, 7d)
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,
    /// The activity view as text: sessions and events per day, who worked where, skills,
    /// failed sessions and lane health (over --days, or --since)
    #[arg(long)]
    pub chart: bool,
    /// With --chart: the last N days, today included
    #[arg(long, default_value_t = 30, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=366))]
    pub days: u32,
    /// With --chart: only this workspace root (repeatable)
    #[arg(long = "workspace", short = 'w', value_name = "ROOT")]
    pub workspaces: Vec<String>,
    /// Print JSON
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Print JSON
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct DispatchArgs {
    /// A full knowledge.dispatch/v1 request from a file, or `-` for stdin
    #[arg(long, value_name = "FILE|-", conflicts_with = "task")]
    pub request: Option<String>,
    /// The task text
    #[arg(long, value_name = "TEXT")]
    pub task: Option<String>,
    /// An acceptance criterion (repeatable)
    #[arg(long = "acceptance", value_name = "TEXT")]
    pub acceptance: Vec<String>,
    /// A constraint (repeatable)
    #[arg(long = "constraint", value_name = "TEXT")]
    pub constraints: Vec<String>,
    /// Send to this actor instead of choosing automatically
    #[arg(long, value_name = "ACTOR_ID")]
    pub actor: Option<String>,
    /// Record the plan and write the package to the outbox (still executes nothing)
    #[arg(long)]
    pub commit: bool,
    /// Indented JSON
    #[arg(long)]
    pub pretty: bool,
}

#[derive(Debug, Args)]
pub struct OutboxArgs {
    #[command(subcommand)]
    pub command: OutboxCommand,
}

#[derive(Debug, Subcommand)]
pub enum OutboxCommand {
    /// Every package, newest first, with its status
    List {
        /// Print JSON
        #[arg(long)]
        json: bool,
    },
    /// One package in full (JSON)
    Show {
        /// The assignment id (or a unique prefix of it)
        id: String,
    },
    /// Approve a recorded plan for the lead agent to execute
    Approve {
        id: String,
        /// Who decides [default: $USER]
        #[arg(long, value_name = "NAME")]
        by: Option<String>,
    },
    /// Reject a recorded plan
    Reject {
        id: String,
        /// Why
        #[arg(long, value_name = "TEXT")]
        reason: Option<String>,
        /// Who decides [default: $USER]
        #[arg(long, value_name = "NAME")]
        by: Option<String>,
    },
}

#[derive(Debug, Args)]
pub struct McpArgs {
    /// Let `knowledge_dispatch` commit assignments (record plans and write the outbox)
    #[arg(long)]
    pub allow_commit: bool,
    /// Do not watch the indexed folders (answer from the index as it is)
    #[arg(long)]
    pub no_watch: bool,
}

#[derive(Debug, Args)]
pub struct IndexArgs {
    /// A transcript root (repeatable) [default: ~/.claude/projects, ~/.codex/sessions,
    /// ~/.codex/archived_sessions]
    #[arg(long = "sessions", value_name = "PATH")]
    pub sessions: Vec<PathBuf>,
    /// A repository root to index as code (repeatable) [default: the git repository you are in]
    #[arg(long = "code", value_name = "ROOT")]
    pub code: Vec<PathBuf>,
    /// A folder of SKILL.md skills (repeatable) [default: ~/.claude/skills, plugin caches,
    /// ~/.agents/skills, and .claude/skills of the indexed repositories]
    #[arg(long = "skills", value_name = "DIR")]
    pub skills: Vec<PathBuf>,
    /// A folder of agent definitions (*.md) (repeatable) [default: ~/.claude/agents and
    /// .claude/agents of the indexed repositories]
    #[arg(long = "agents", value_name = "DIR")]
    pub agents: Vec<PathBuf>,
    /// No progress bar, only the summary
    #[arg(long)]
    pub quiet: bool,
    /// Print the summary as JSON
    #[arg(long)]
    pub json: bool,
    /// Rebuild the episodes and code indexes from scratch (and move a damaged skills-and-actors
    /// store aside): the way out when a store file is damaged
    #[arg(long)]
    pub rebuild: bool,
    /// Keep running: index again whenever a transcript, code file or skill changes
    #[arg(long)]
    pub watch: bool,
}

#[derive(Debug, Args)]
pub struct SearchArgs {
    /// A full knowledge.search/v1 request from a file, or `-` for stdin
    #[arg(long, value_name = "FILE|-", conflicts_with = "query")]
    pub request: Option<String>,
    /// The question (a literal: no query syntax)
    #[arg(long, short = 'q', value_name = "TEXT")]
    pub query: Option<String>,
    /// auto, find_agent, find_skill, find_code or find_knowledge
    #[arg(long, value_name = "MODE")]
    pub mode: Option<String>,
    /// Only this workspace root (repeatable)
    #[arg(long = "workspace", short = 'w', value_name = "ROOT")]
    pub workspaces: Vec<String>,
    /// Only this session and its subagents (repeatable)
    #[arg(long = "session", value_name = "ID")]
    pub sessions: Vec<String>,
    /// Lanes to include (repeatable): episodes, code, skills
    #[arg(long = "include", value_name = "LANE")]
    pub include: Vec<String>,
    /// Items per lane, 1…50
    #[arg(long, value_name = "N")]
    pub limit: Option<u64>,
    /// Events/files since this RFC 3339 time
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,
    /// Events/files until this RFC 3339 time
    #[arg(long, value_name = "TIME")]
    pub until: Option<String>,
    /// success, failure or any
    #[arg(long, value_name = "OUTCOME")]
    pub outcome: Option<String>,
    /// Token budget of the response, 500…20000
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u64>,
    /// Snippet length, 80…1000 characters
    #[arg(long, value_name = "N")]
    pub snippet_chars: Option<u64>,
    /// Locators only, no snippets
    #[arg(long)]
    pub locator: bool,
    /// Add per-lane timings
    #[arg(long)]
    pub trace: bool,
    /// Indented JSON
    #[arg(long)]
    pub pretty: bool,
}

#[derive(Debug, Args)]
pub struct GetEpisodeArgs {
    /// An episode id `ep:<session_id>:<seq>` (or `<session_id>:<seq>`)
    pub id: String,
    /// Neighbouring events on each side
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub context: u64,
    /// Print JSON instead of text
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// The query to run on the demo world
    #[arg(
        long,
        short = 'q',
        default_value = "кто чинил доступ к MySQL на 176.99.5.35"
    )]
    pub query: String,
    /// The demo world to use [default: the bundled fixtures/demo]
    #[arg(long, value_name = "DIR")]
    pub world: Option<PathBuf>,
    /// Keep the demo data dir here instead of a temporary one
    #[arg(long, value_name = "DIR")]
    pub into: Option<PathBuf>,
    /// Print the answer instead of opening the explorer
    #[arg(long)]
    pub print: bool,
}

#[derive(Debug, Args)]
pub struct CodeArgs {
    /// `path:start[-end]` (root-relative or absolute path, 1-based lines)
    pub locator: String,
    /// Print JSON instead of numbered lines
    #[arg(long)]
    pub json: bool,
}
