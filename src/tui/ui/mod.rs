//! Rendering: `draw(frame, &App)` is a pure function of the state, so a `TestBackend` snapshot
//! shows exactly what a person sees. Regions come from `layout` (shared with `update`); every
//! string that came from a session, a file or the index goes through `knowledge::text::sanitize`
//! before it is drawn.

pub mod activity;
pub mod actors;
pub mod dispatch;
pub mod lanes;
pub mod layout;
pub mod outbox;
pub mod popups;
pub mod query;
pub mod status;
pub mod text;
pub mod theme;
pub mod views;

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};
use ratatui::Frame;

use super::state::{App, View};
use theme::Theme;

/// Below this size only a note is drawn.
pub const MIN_WIDTH: u16 = 20;
pub const MIN_HEIGHT: u16 = 4;

/// Spinner frames shown while a search or a load is pending.
pub const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

pub fn spinner(app: &App) -> &'static str {
    SPINNER[(app.tick % SPINNER.len() as u64) as usize]
}

/// Draw the whole screen.
pub fn draw(frame: &mut Frame, app: &App) {
    let area = frame.area();
    if area.width == 0 || area.height == 0 {
        return;
    }
    let theme = Theme::new(app.no_color);
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        let note = text::fit("knowledge: enlarge the terminal", area.width as usize);
        frame.render_widget(Paragraph::new(Line::from(note)), area);
        return;
    }
    let l = layout::main_layout(area, app);
    match app.top_view() {
        None => {
            query::draw(frame, &l, app, theme);
            for (lane, r) in &l.lanes {
                lanes::draw(frame, *r, app, *lane, l.tabbed, theme);
            }
            if let Some(r) = l.actors {
                actors::draw(frame, r, app, theme);
            }
        }
        Some(View::Episode(v)) => views::draw_episode(frame, l.body, app, v, theme),
        Some(View::Code(v)) => views::draw_code(frame, l.body, app, v, theme),
        Some(View::Dispatch(v)) => dispatch::draw_dispatch(frame, l.body, app, v, theme),
        Some(View::Outbox(v)) => outbox::draw(frame, l.body, app, v, theme),
        Some(View::Activity(v)) => activity::draw(frame, l.body, app, v, theme),
    }
    if let Some(r) = l.status {
        status::draw(frame, r, app, theme);
    }
    popups::draw(frame, l.body, app, theme);
}

/// A full-screen view's frame: a focused border titled `title` (fitted to the width). Returns
/// the area inside.
pub fn view_block(frame: &mut Frame, r: Rect, title: &str, theme: Theme) -> Rect {
    let block = Block::bordered()
        .border_style(theme.border(true))
        .title(Span::styled(
            text::fit(title, r.width.saturating_sub(4) as usize),
            theme.title(true),
        ));
    let inner = block.inner(r);
    frame.render_widget(block, r);
    inner
}

/// `lines` drawn in `r` from row `scroll`, never scrolled past the last screenful.
pub fn scrolled(frame: &mut Frame, r: Rect, lines: Vec<Line<'static>>, scroll: usize) {
    let max = lines.len().saturating_sub(r.height as usize);
    let rows: Vec<Line> = lines.into_iter().skip(scroll.min(max)).collect();
    frame.render_widget(Paragraph::new(rows), r);
}

/// The text of a rendered buffer, one line per row, trailing spaces trimmed (for tests and the
/// tmux check).
#[cfg(test)]
pub fn buffer_text(buf: &ratatui::buffer::Buffer) -> String {
    let area = buf.area;
    let mut out = String::new();
    for y in area.top()..area.bottom() {
        let mut line = String::new();
        let mut skip = 0usize;
        for x in area.left()..area.right() {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let sym = buf[(x, y)].symbol();
            line.push_str(sym);
            skip = text::width(sym).saturating_sub(1);
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
