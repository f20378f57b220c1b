//! The header: the query box (ratatui-textarea), the mode and filters line, and the routing line
//! (intent, confidence, lanes with their weights, the reason).

use knowledge::text::sanitize::one_line;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};
use ratatui::Frame;

use super::layout::MainLayout;
use super::text::{fit, fit_spans};
use super::theme::Theme;
use crate::tui::keymap::Context;
use crate::tui::state::{App, Focus};

pub fn draw(frame: &mut Frame, l: &MainLayout, app: &App, theme: Theme) {
    draw_box(frame, l.query, l.query_bordered, app, theme);
    if let Some(r) = l.info {
        frame.render_widget(Paragraph::new(info_line(app, theme, r.width)), r);
    }
    if let Some(r) = l.routing {
        frame.render_widget(Paragraph::new(routing_line(app, theme, r.width)), r);
    }
}

fn draw_box(frame: &mut Frame, r: Rect, bordered: bool, app: &App, theme: Theme) {
    let focused = app.focus == Focus::Query && app.views.is_empty();
    let inner = if bordered {
        let right = if app.search.pending() {
            format!(" {} searching ", super::spinner(app))
        } else {
            match app.search.elapsed_ms {
                Some(ms) if app.response().is_some() => format!(" {ms:.0} ms "),
                _ => String::new(),
            }
        };
        let title = format!(" knowledge · {} ", app.paths.show(&one_line(&app.data_dir)));
        let block = Block::bordered()
            .border_style(theme.border(focused))
            .title(Span::styled(
                fit(&title, r.width.saturating_sub(14) as usize),
                theme.title(focused),
            ))
            .title_top(Line::from(Span::styled(right, theme.accent())).right_aligned());
        let inner = block.inner(r);
        frame.render_widget(block, r);
        inner
    } else {
        r
    };
    if inner.width == 0 || inner.height == 0 {
        return;
    }
    let prompt = Span::styled("› ", theme.accent());
    let field = Rect::new(
        inner.x + 2.min(inner.width),
        inner.y,
        inner.width.saturating_sub(2),
        1,
    );
    frame.render_widget(Paragraph::new(Line::from(prompt)), inner);
    if focused {
        frame.render_widget(&app.query, field);
    } else {
        let q = app.query_text();
        let line = if q.is_empty() {
            Line::from(Span::styled(
                app.query.placeholder_text().to_string(),
                theme.dim(),
            ))
        } else {
            Line::from(fit(&q, field.width as usize))
        };
        frame.render_widget(Paragraph::new(line), field);
    }
}

fn info_line(app: &App, theme: Theme, width: u16) -> Line<'static> {
    let f = &app.filters;
    let mut spans = vec![
        Span::styled(" mode ", theme.dim()),
        Span::styled(f.mode.as_str().to_string(), theme.accent()),
        Span::styled("  filters ", theme.dim()),
    ];
    let active = f.summary();
    if active.is_empty() {
        spans.push(Span::raw("none"));
    } else {
        let shown: Vec<String> = active.iter().map(|s| app.paths.show_in_text(s)).collect();
        spans.push(Span::styled(shown.join(" · "), theme.warn()));
    }
    let ctx = [Context::Results, Context::Query];
    let keys: Vec<String> = [("filters", "filters"), ("cycle_mode", "mode")]
        .iter()
        .filter_map(|(a, label)| {
            app.keymap
                .key_label(&ctx, a)
                .map(|k| format!("{k} {label}"))
        })
        .collect();
    if !keys.is_empty() {
        spans.push(Span::styled(
            format!("  ({})", keys.join(", ")),
            theme.dim(),
        ));
    }
    Line::from(fit_spans(spans, width as usize))
}

fn routing_line(app: &App, theme: Theme, width: u16) -> Line<'static> {
    let Some(resp) = app.response() else {
        let hint = if app.search.pending() {
            " routing …"
        } else {
            " routing: ask a question; the lanes are weighted by what it asks for"
        };
        return Line::from(Span::styled(fit(hint, width as usize), theme.dim()));
    };
    let r = &resp.routing;
    let mut spans = vec![
        Span::styled(" routing ", theme.dim()),
        Span::styled(r.intent.as_str(), theme.accent()),
        Span::raw(format!(" {:.2}", r.confidence)),
        Span::styled("  lanes ", theme.dim()),
    ];
    let lanes: Vec<String> = r
        .lanes
        .iter()
        .map(|l| {
            let w = resp.fusion.weights.get(l.as_str()).copied().unwrap_or(0.0);
            format!("{} {w:.2}", l.as_str())
        })
        .collect();
    spans.push(Span::raw(lanes.join(" · ")));
    spans.push(Span::styled("  — ", theme.dim()));
    spans.push(Span::raw(one_line(&r.reason)));
    Line::from(fit_spans(spans, width as usize))
}
