//! The `knowledge` binary: argument parsing and the choice of front end. Everything it does is a
//! call into the library's engine; see `src/cli/` for the subcommands.

mod cli;
mod mcp_server;
mod tui;

fn main() {
    let code = cli::run();
    std::process::exit(code);
}
