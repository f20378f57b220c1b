//! The explorer's styles in one place. With `NO_COLOR` set every style is made of modifiers only
//! (bold, reversed, underlined, dim); meaning never depends on colour alone, since selections,
//! evidence and matches also carry symbols (`▶`, `◆`) or modifiers.

use ratatui::style::{Color, Modifier, Style};

#[derive(Debug, Clone, Copy)]
pub struct Theme {
    pub color: bool,
}

impl Theme {
    pub fn new(no_color: bool) -> Self {
        Theme { color: !no_color }
    }

    fn pick(&self, colored: Style, plain: Style) -> Style {
        if self.color {
            colored
        } else {
            plain
        }
    }

    pub fn border(&self, focused: bool) -> Style {
        match (focused, self.color) {
            (true, true) => Style::new().fg(Color::Cyan),
            (true, false) => Style::new().add_modifier(Modifier::BOLD),
            (false, true) => Style::new().fg(Color::DarkGray),
            (false, false) => Style::new(),
        }
    }

    pub fn title(&self, focused: bool) -> Style {
        let s = Style::new().add_modifier(Modifier::BOLD);
        if focused && self.color {
            s.fg(Color::Cyan)
        } else {
            s
        }
    }

    pub fn dim(&self) -> Style {
        self.pick(
            Style::new().fg(Color::DarkGray),
            Style::new().add_modifier(Modifier::DIM),
        )
    }

    /// The selected row: reversed in the focused pane, bold elsewhere.
    pub fn selected(&self, focused: bool) -> Style {
        if focused {
            self.pick(
                Style::new()
                    .bg(Color::Rgb(40, 52, 72))
                    .add_modifier(Modifier::BOLD),
                Style::new().add_modifier(Modifier::REVERSED),
            )
        } else {
            Style::new().add_modifier(Modifier::BOLD)
        }
    }

    /// A word that matched the query.
    pub fn matched(&self) -> Style {
        self.pick(
            Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
        )
    }

    /// An item that is evidence of the selected actor.
    pub fn evidence(&self) -> Style {
        self.pick(
            Style::new().fg(Color::Magenta).add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::BOLD),
        )
    }

    pub fn error(&self) -> Style {
        self.pick(
            Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::BOLD),
        )
    }

    pub fn warn(&self) -> Style {
        self.pick(Style::new().fg(Color::Yellow), Style::new())
    }

    pub fn ok(&self) -> Style {
        self.pick(Style::new().fg(Color::Green), Style::new())
    }

    pub fn accent(&self) -> Style {
        self.pick(
            Style::new().fg(Color::Cyan),
            Style::new().add_modifier(Modifier::BOLD),
        )
    }

    /// A key in a hint (`enter`, `y`).
    pub fn key(&self) -> Style {
        self.pick(
            Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            Style::new().add_modifier(Modifier::BOLD),
        )
    }

    /// The line of a file that belongs to the chunk (code view), or the event opened.
    pub fn focus_line(&self) -> Style {
        self.pick(
            Style::new().bg(Color::Rgb(30, 40, 30)),
            Style::new().add_modifier(Modifier::BOLD),
        )
    }
}
