//! Popups drawn over everything: the help overlay (generated from the keymap), the filter form,
//! the confirmation dialog (what will be written, then y/n), the copy menu and the one-line
//! prompt. Each is clipped to the screen, so nothing overlaps outside its box.

use knowledge::contract::{Lane, OutcomeFilter};
use knowledge::text::sanitize::one_line;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Wrap};
use ratatui::Frame;
use ratatui_textarea::TextArea;

use super::layout::centered;
use super::text::{fit, fit_spans, wrap};
use super::theme::Theme;
use crate::tui::keymap::Context;
use crate::tui::state::{App, ConfirmDialog, CopyMenu, FilterField, FilterForm, Overlay, Prompt};

pub fn draw(frame: &mut Frame, body: Rect, app: &App, theme: Theme) {
    match &app.overlay {
        None => {}
        Some(Overlay::Help { scroll }) => help(frame, body, app, *scroll, theme),
        Some(Overlay::Filters(f)) => filters(frame, body, app, f, theme),
        Some(Overlay::Confirm(d)) => confirm(frame, body, app, d, theme),
        Some(Overlay::Copy(m)) => copy_menu(frame, body, app, m, theme),
        Some(Overlay::Prompt(p)) => prompt(frame, body, p, theme),
    }
}

fn boxed(frame: &mut Frame, r: Rect, title: &str, theme: Theme) -> Rect {
    frame.render_widget(Clear, r);
    let block = Block::bordered()
        .border_style(theme.border(true))
        .title(Span::styled(
            fit(&format!(" {title} "), r.width.saturating_sub(2) as usize),
            theme.title(true),
        ));
    let inner = block.inner(r);
    frame.render_widget(block, r);
    inner
}

/// The help text: every context of the keymap with its keys.
pub fn help_lines(app: &App, theme: Theme) -> Vec<Line<'static>> {
    let mut out = vec![
        Line::from(Span::styled(
            "knowledge — who fixed what, where is it in the code, which skill applies",
            theme.accent(),
        )),
        Line::from(Span::styled(
            "Keys are set in <data dir>/config.toml under [keys]; see docs/TUI.md.",
            theme.dim(),
        )),
    ];
    for (ctx, rows) in app.keymap.sections() {
        out.push(Line::default());
        out.push(Line::from(Span::styled(
            ctx.title().to_string(),
            theme.title(true),
        )));
        for (keys, desc) in rows {
            out.push(Line::from(vec![
                Span::styled(format!("  {keys:<22}"), theme.key()),
                Span::raw(desc.to_string()),
            ]));
        }
    }
    out
}

fn help_area(body: Rect) -> Rect {
    centered(body, 76, body.height.saturating_sub(2).max(3))
}

/// How far the help can scroll over `body`.
pub fn help_max_scroll(app: &App, body: Rect) -> usize {
    let rows = help_area(body).height.saturating_sub(2) as usize;
    help_lines(app, Theme::new(true)).len().saturating_sub(rows)
}

fn help(frame: &mut Frame, body: Rect, app: &App, scroll: usize, theme: Theme) {
    let r = help_area(body);
    let inner = boxed(frame, r, "Help", theme);
    let lines = help_lines(app, theme);
    let max = lines.len().saturating_sub(inner.height as usize);
    let rows: Vec<Line> = lines
        .into_iter()
        .skip(scroll.min(max))
        .map(|l| Line::from(fit_spans(l.spans, inner.width as usize)))
        .collect();
    frame.render_widget(Paragraph::new(rows), inner);
}

fn value_line(
    label: &str,
    value: Vec<Span<'static>>,
    focused: bool,
    theme: Theme,
    w: usize,
) -> Line<'static> {
    let mut spans = vec![
        Span::styled(if focused { "▶ " } else { "  " }, theme.accent()),
        Span::styled(format!("{label:<12}"), theme.title(focused)),
    ];
    spans.extend(value);
    Line::from(fit_spans(spans, w))
}

fn filters(frame: &mut Frame, body: Rect, app: &App, f: &FilterForm, theme: Theme) {
    let r = centered(body, 72, 18);
    let inner = boxed(frame, r, "Filters", theme);
    if inner.height == 0 {
        return;
    }
    let w = inner.width as usize;
    let cur = f.current();
    // Rows: a line, or a focused text field drawn after its label.
    let mut rows: Vec<(Line<'static>, Option<&TextArea<'static>>)> = Vec::new();
    for field in FilterField::ALL {
        let focused = field == cur;
        let choice = |on: bool, text: &str| {
            if on {
                Span::styled(format!("[{text}] "), theme.selected(focused))
            } else {
                Span::styled(format!(" {text}  "), theme.dim())
            }
        };
        let plain = ratatui::style::Style::new();
        match field {
            FilterField::Workspaces | FilterField::Since | FilterField::Until => {
                let (label, t) = match field {
                    FilterField::Workspaces => ("workspaces", &f.workspaces),
                    FilterField::Since => ("since", &f.since),
                    _ => ("until", &f.until),
                };
                if focused {
                    rows.push((value_line(label, vec![], true, theme, w), Some(t)));
                } else {
                    let text = text_value(t);
                    let span = if text.is_empty() {
                        Span::styled(t.placeholder_text().to_string(), theme.dim())
                    } else {
                        Span::raw(app.paths.show_in_text(&text))
                    };
                    rows.push((value_line(label, vec![span], false, theme, w), None));
                }
            }
            FilterField::Outcome => {
                let spans = [
                    OutcomeFilter::Any,
                    OutcomeFilter::Success,
                    OutcomeFilter::Failure,
                ]
                .iter()
                .map(|o| choice(*o == f.outcome, o.as_str()))
                .collect();
                rows.push((value_line("outcome", spans, focused, theme, w), None));
            }
            FilterField::Lane(l) => {
                let on = f.include[l as usize];
                let label = if l == Lane::Episodes { "include" } else { "" };
                let spans = vec![Span::styled(
                    format!("[{}] {}", if on { "x" } else { " " }, l.as_str()),
                    if focused { theme.selected(true) } else { plain },
                )];
                rows.push((value_line(label, spans, focused, theme, w), None));
            }
            FilterField::Mode => {
                let spans = knowledge::contract::Mode::ALL
                    .iter()
                    .map(|m| choice(*m == f.mode, m.as_str()))
                    .collect();
                rows.push((value_line("mode", spans, focused, theme, w), None));
            }
            FilterField::Limit => {
                let spans = vec![Span::styled(
                    format!("‹ {} ›", f.limit),
                    if focused { theme.selected(true) } else { plain },
                )];
                rows.push((value_line("limit", spans, focused, theme, w), None));
            }
        }
    }
    rows.push((Line::default(), None));
    if let Some(e) = &f.error {
        rows.push((
            Line::from(Span::styled(fit(&format!("✗ {e}"), w), theme.error())),
            None,
        ));
    } else if cur == FilterField::Workspaces && !f.known_workspaces.is_empty() {
        let known: Vec<String> = f
            .known_workspaces
            .iter()
            .map(|k| app.paths.show(&one_line(k)))
            .collect();
        let text = fit(&format!("in the results: {}", known.join(", ")), w);
        rows.push((Line::from(Span::styled(text, theme.dim())), None));
    } else if cur == FilterField::Since || cur == FilterField::Until {
        let text = fit("2026-09-01 · 2026-09-01T10:00:00+03:00 · 7d · 12h · 2w", w);
        rows.push((Line::from(Span::styled(text, theme.dim())), None));
    }
    let room = inner.height.saturating_sub(1);
    for (i, (line, field)) in rows.into_iter().enumerate().take(room as usize) {
        let y = inner.y + i as u16;
        frame.render_widget(Paragraph::new(line), Rect::new(inner.x, y, inner.width, 1));
        if let Some(t) = field {
            let fr = Rect::new(
                inner.x + 14.min(inner.width),
                y,
                inner.width.saturating_sub(14),
                1,
            );
            if fr.width > 0 {
                frame.render_widget(t, fr);
            }
        }
    }
    let ctx = app.contexts();
    let hints: Vec<String> = [
        ("apply", "apply"),
        ("next_field", "next"),
        ("toggle", "toggle"),
        ("reset_filters", "reset"),
        ("back", "cancel"),
    ]
    .iter()
    .filter_map(|(a, l)| {
        app.keymap
            .key_label(&[ctx[0], Context::Filters, Context::FiltersChoice], a)
            .map(|k| format!("{k} {l}"))
    })
    .collect();
    if inner.height >= 2 {
        let last = Rect::new(inner.x, inner.bottom() - 1, inner.width, 1);
        frame.render_widget(
            Paragraph::new(Span::styled(fit(&hints.join(" · "), w), theme.dim())),
            last,
        );
    }
}

fn text_value(t: &TextArea<'static>) -> String {
    one_line(&t.lines().join(" "))
}

fn confirm_area(body: Rect) -> Rect {
    centered(body, 100, body.height.saturating_sub(2).max(5))
}

/// The dialog's summary rows, its body rows, and how many body rows fit, at inner size `inner`.
fn confirm_parts(
    app: &App,
    d: &ConfirmDialog,
    inner: Rect,
    theme: Theme,
) -> (Vec<Line<'static>>, Vec<Line<'static>>, usize) {
    let w = inner.width as usize;
    let mut lines: Vec<Line<'static>> = Vec::new();
    for (k, v) in &d.summary {
        let vw = w.saturating_sub(11).max(8);
        for (i, l) in wrap(&[Span::raw(one_line(v))], vw).into_iter().enumerate() {
            let key = if i == 0 {
                format!("{k:<11}")
            } else {
                " ".repeat(11)
            };
            let mut spans = vec![Span::styled(key, theme.dim())];
            spans.extend(l.spans);
            lines.push(Line::from(spans));
        }
    }
    let body_lines: Vec<Line<'static>> = d
        .body
        .lines()
        .flat_map(|l| wrap(&[Span::raw(app.paths.show_in_text(l))], w))
        .collect();
    let room = (inner.height as usize).saturating_sub(lines.len() + 2);
    (lines, body_lines, room)
}

/// How far the dialog's document can scroll over `body`.
pub fn confirm_max_scroll(app: &App, d: &ConfirmDialog, body: Rect) -> usize {
    let inner = super::layout::inner(confirm_area(body));
    let (_, body_lines, room) = confirm_parts(app, d, inner, Theme::new(true));
    body_lines.len().saturating_sub(room)
}

fn confirm(frame: &mut Frame, body: Rect, app: &App, d: &ConfirmDialog, theme: Theme) {
    let r = confirm_area(body);
    let inner = boxed(frame, r, &d.title, theme);
    if inner.height == 0 {
        return;
    }
    let w = inner.width as usize;
    let (mut lines, body_lines, room) = confirm_parts(app, d, inner, theme);
    if !d.body.is_empty() {
        lines.push(Line::from(Span::styled("─".repeat(w), theme.border(false))));
        let max = body_lines.len().saturating_sub(room);
        lines.extend(body_lines.into_iter().skip(d.scroll.min(max)).take(room));
    }
    let yes = app.keymap.key_label(&[Context::Confirm], "confirm");
    let no = app.keymap.key_label(&[Context::Confirm], "cancel");
    let prompt = match (yes, no) {
        (Some(y), Some(n)) => format!("{y} = yes, write it · {n} = no"),
        (Some(y), None) => format!("{y} = yes, write it"),
        _ => "no key is bound to confirm: see [keys] in config.toml".to_string(),
    };
    let rows_for_text = inner.height.saturating_sub(1);
    frame.render_widget(
        Paragraph::new(lines),
        Rect::new(inner.x, inner.y, inner.width, rows_for_text),
    );
    frame.render_widget(
        Paragraph::new(Span::styled(fit(&prompt, w), theme.warn())),
        Rect::new(inner.x, inner.bottom() - 1, inner.width, 1),
    );
}

fn copy_menu(frame: &mut Frame, body: Rect, app: &App, m: &CopyMenu, theme: Theme) {
    let h = m.choices.len() as u16 + 2;
    let r = centered(body, 64, h);
    let inner = boxed(frame, r, "Copy", theme);
    let w = inner.width as usize;
    let lines: Vec<Line> = m
        .choices
        .iter()
        .map(|c| {
            let key = app
                .keymap
                .key_label(&[Context::Copy], c.action)
                .unwrap_or_else(|| "·".into());
            let preview = one_line(&c.text);
            Line::from(fit_spans(
                vec![
                    Span::styled(format!(" {key:<3}"), theme.key()),
                    Span::styled(format!("{:<16}", c.label), theme.title(false)),
                    Span::styled(app.paths.show_in_text(&preview), theme.dim()),
                ],
                w,
            ))
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

fn prompt(frame: &mut Frame, body: Rect, p: &Prompt, theme: Theme) {
    let r = centered(body, 70, 4);
    let inner = boxed(frame, r, &p.title, theme);
    if inner.height == 0 {
        return;
    }
    frame.render_widget(&p.input, Rect::new(inner.x, inner.y, inner.width, 1));
    if inner.height >= 2 {
        frame.render_widget(
            Paragraph::new(Span::styled("enter ok · esc cancel", theme.dim()))
                .wrap(Wrap { trim: true }),
            Rect::new(inner.x, inner.y + 1, inner.width, 1),
        );
    }
}
