//! The status line: progress, the latest message (or the response's warnings), per-lane timings
//! and key hints for the current screen, all taken from the keymap.

use knowledge::contract::Lane;
use knowledge::text::sanitize::one_line;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::text::{fit_spans, width};
use super::theme::Theme;
use crate::tui::keymap::Context;
use crate::tui::state::{App, Level};

/// How long messages stay (ms): info, then warnings and errors.
const INFO_MS: i64 = 8_000;
const WARN_MS: i64 = 30_000;

fn hint_actions(ctx: Context) -> &'static [(&'static str, &'static str)] {
    match ctx {
        Context::Query => &[
            ("search", "search"),
            ("next_pane", "results"),
            ("activity", "activity"),
            ("help", "help"),
            ("quit", "quit"),
        ],
        Context::Results => &[
            ("open", "open"),
            ("copy_menu", "copy"),
            ("dispatch", "dispatch"),
            ("activity", "activity"),
            ("outbox", "outbox"),
            ("help", "help"),
            ("quit", "quit"),
        ],
        Context::View => &[
            ("back", "back"),
            ("next_match", "next match"),
            ("open_editor", "editor"),
            ("copy_menu", "copy"),
            ("help", "help"),
        ],
        Context::DispatchEdit => &[
            ("next_field", "next field"),
            ("preview", "preview"),
            ("toggle_target", "target"),
            ("commit", "commit"),
            ("back", "close"),
        ],
        Context::DispatchPreview => &[
            ("commit", "commit"),
            ("copy_menu", "copy"),
            ("toggle_target", "target"),
            ("back", "close"),
        ],
        Context::Outbox => &[
            ("open", "open"),
            ("approve", "approve"),
            ("reject", "reject"),
            ("refresh", "reload"),
            ("back", "back"),
        ],
        Context::Activity => &[
            ("open", "search this"),
            ("decrease", "day"),
            ("next_pane", "pane"),
            ("cycle_period", "period"),
            ("back", "back"),
        ],
        Context::Filters | Context::FiltersText | Context::FiltersChoice => &[
            ("apply", "apply"),
            ("next_field", "next"),
            ("toggle", "toggle"),
            ("reset_filters", "reset"),
            ("back", "cancel"),
        ],
        Context::Confirm => &[("confirm", "yes"), ("cancel", "no")],
        Context::Copy | Context::Help => &[("back", "close")],
        Context::Prompt => &[("apply", "ok"), ("back", "cancel")],
        Context::Global => &[],
    }
}

/// The key hints of the current screen, as spans.
pub fn hints(app: &App, theme: Theme) -> Vec<Span<'static>> {
    let ctxs = app.contexts();
    let mut spans = Vec::new();
    for (key, label) in app.keymap.hints(&ctxs, hint_actions(ctxs[0])) {
        if !spans.is_empty() {
            spans.push(Span::styled(" · ", theme.dim()));
        }
        spans.push(Span::styled(key, theme.key()));
        spans.push(Span::raw(format!(" {label}")));
    }
    spans
}

fn message(app: &App, theme: Theme) -> Vec<Span<'static>> {
    let mut spans = Vec::new();
    if app.live.pending() {
        let n = app.live.new_events;
        let text = match n {
            0 => "↻ index updated  ".to_string(),
            1 => "↻ 1 new event  ".to_string(),
            n => format!("↻ {n} new events  "),
        };
        spans.push(Span::styled(text, theme.accent()));
    }
    if app.search.pending() {
        spans.push(Span::styled(
            format!("{} searching  ", super::spinner(app)),
            theme.accent(),
        ));
    }
    let recent = app.status.message.as_ref().filter(|m| {
        let age = app.now_ms.saturating_sub(m.at_ms);
        match m.level {
            Level::Info => age <= INFO_MS,
            _ => age <= WARN_MS,
        }
    });
    if let Some(m) = recent {
        let (mark, style) = match m.level {
            Level::Info => ("", theme.ok()),
            Level::Warn => ("⚠ ", theme.warn()),
            Level::Error => ("✗ ", theme.error()),
        };
        spans.push(Span::styled(
            format!("{mark}{}", app.paths.show_in_text(&one_line(&m.text))),
            style,
        ));
        return spans;
    }
    if let Some(resp) = app.response() {
        if !resp.warnings.is_empty() {
            let first = &resp.warnings[0];
            let lane = first.lane.map_or("", Lane::as_str);
            spans.push(Span::styled(
                format!(
                    "⚠ {} warning{}: {}{}",
                    resp.warnings.len(),
                    if resp.warnings.len() == 1 { "" } else { "s" },
                    if lane.is_empty() {
                        String::new()
                    } else {
                        format!("{lane}: ")
                    },
                    app.paths.show_in_text(&one_line(&first.message))
                ),
                theme.warn(),
            ));
        } else {
            let n = resp.limits.returned;
            spans.push(Span::styled(
                format!(
                    "{n} item{} · {} actor{}",
                    if n == 1 { "" } else { "s" },
                    resp.actors.len(),
                    if resp.actors.len() == 1 { "" } else { "s" }
                ),
                theme.ok(),
            ));
        }
    }
    spans
}

fn timings(app: &App) -> Option<String> {
    let resp = app.response()?;
    let trace = resp.trace.as_ref()?;
    let lanes: Vec<String> = trace
        .lanes
        .iter()
        .map(|l| format!("{} {:.0}ms", l.lane, l.ms))
        .collect();
    Some(format!("⏱ {}", lanes.join(" · ")))
}

pub fn draw(frame: &mut Frame, r: Rect, app: &App, theme: Theme) {
    let w = r.width as usize;
    let hint = hints(app, theme);
    let hint_w: usize = hint.iter().map(|s| s.width()).sum();
    let hint = if hint_w > w * 45 / 100 {
        fit_spans(hint, w * 45 / 100)
    } else {
        hint
    };
    let hint_w: usize = hint.iter().map(|s| s.width()).sum();
    let mut left = message(app, theme);
    let room = w.saturating_sub(hint_w + 2);
    if let Some(t) = timings(app).filter(|_| !app.search.pending()) {
        let used: usize = left.iter().map(|s| s.width()).sum();
        if used + width(&t) + 2 <= room {
            left.push(Span::styled(format!("  {t}"), theme.dim()));
        }
    }
    let left = fit_spans(left, room);
    let used: usize = left.iter().map(|s| width(&s.content)).sum();
    let mut spans = left;
    spans.push(Span::raw(" ".repeat(w.saturating_sub(used + hint_w))));
    spans.extend(hint);
    frame.render_widget(Paragraph::new(Line::from(spans)), r);
}
