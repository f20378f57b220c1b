//! The terminal's lifecycle: raw mode, the alternate screen, mouse capture and bracketed paste on
//! the way in; all of it undone on the way out, on an error (a guard) and on a panic (a hook
//! that restores before the panic message prints). `$EDITOR` runs with the terminal suspended.

use std::io::{self, Stdout};
use std::process::Command;

use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
};
use crossterm::execute;
use crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;

pub type Term = Terminal<CrosstermBackend<Stdout>>;

fn enter() -> io::Result<()> {
    enable_raw_mode()?;
    execute!(
        io::stdout(),
        EnterAlternateScreen,
        EnableMouseCapture,
        EnableBracketedPaste
    )
}

/// Put the terminal back the way it was (safe to call more than once).
pub fn restore() {
    let _ = execute!(
        io::stdout(),
        DisableBracketedPaste,
        DisableMouseCapture,
        LeaveAlternateScreen,
        crossterm::cursor::Show
    );
    let _ = disable_raw_mode();
}

/// Restores the terminal when dropped (early returns and errors).
pub struct Guard;

impl Drop for Guard {
    fn drop(&mut self) {
        restore();
    }
}

/// Restore the terminal before a panic of the UI thread is reported, so the message is
/// readable. Panics of other threads are left to them: the workers turn theirs into an error in
/// the status line, and printing over the screen would only garble it.
pub fn install_panic_hook() {
    let previous = std::panic::take_hook();
    let ui = std::thread::current().id();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().id() == ui {
            restore();
            previous(info);
        }
    }));
}

pub fn setup() -> io::Result<(Term, Guard)> {
    let guard = Guard; // restores even when entering fails halfway
    enter()?;
    let term = Terminal::new(CrosstermBackend::new(io::stdout()))?;
    Ok((term, guard))
}

/// The editor command: `$VISUAL`, else `$EDITOR`, else `vi`, split on whitespace.
pub fn editor_command() -> Vec<String> {
    let raw = std::env::var("VISUAL")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .or_else(|| {
            std::env::var("EDITOR")
                .ok()
                .filter(|v| !v.trim().is_empty())
        })
        .unwrap_or_else(|| "vi".to_string());
    raw.split_whitespace().map(str::to_string).collect()
}

/// Suspend the terminal, run `$EDITOR +line path`, and come back.
pub fn run_editor(term: &mut Term, path: &str, line: u64) -> Result<(), String> {
    let cmd = editor_command();
    let Some((program, args)) = cmd.split_first() else {
        return Err("no editor: set $EDITOR".to_string());
    };
    restore();
    let status = Command::new(program)
        .args(args)
        .arg(format!("+{line}"))
        .arg(path)
        .status();
    let back = enter().and_then(|_| term.clear());
    let result = match status {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(format!("{program} exited with {s}")),
        Err(e) => Err(format!(
            "cannot start the editor {program}: {e} (set $EDITOR)"
        )),
    };
    back.map_err(|e| format!("cannot restore the terminal: {e}"))?;
    result
}
