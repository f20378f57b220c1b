//! The outbox view: every handoff package, newest first (a file that is not a package is listed
//! with why), and one package in full with its review decision, the way the dispatch pane
//! previews it.

use knowledge::text::sanitize::{for_terminal, one_line};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::dispatch::Rows;
use super::layout;
use super::text::{fit, fit_spans, short_time, wrap};
use super::theme::Theme;
use crate::tui::action::OutboxPackage;
use crate::tui::state::{App, OutboxDetail, OutboxRow, OutboxView};

/// Widths of the status, created, id and target columns (the task takes the rest).
const COLUMNS: [usize; 4] = [16, 17, 28, 18];

/// How far an outbox package can scroll in `body`.
pub fn package_max_scroll(app: &App, pkg: &OutboxPackage, body: Rect) -> usize {
    let inner = layout::inner(body);
    let n = package_lines(app, pkg, inner.width as usize, Theme::new(true)).len();
    n.saturating_sub(inner.height as usize)
}

/// A handoff package for review: its decision, its file, then target, context pack and the
/// package itself the way the dispatch preview shows them, then the task in full.
pub fn package_lines(
    app: &App,
    pkg: &OutboxPackage,
    width: usize,
    theme: Theme,
) -> Vec<Line<'static>> {
    let h = &pkg.handoff;
    let mut rows = Rows::new(app, width, theme);
    let out = &mut rows.lines;
    out.push(Line::from(Span::styled("REVIEW", theme.title(true))));
    let status = h.review.status.to_string();
    out.push(Line::from(vec![
        Span::styled(format!("  {:<12}", "status"), theme.dim()),
        Span::styled(status.clone(), status_style(&status, theme)),
    ]));
    for (k, v) in [
        ("decided by", h.review.decided_by.as_deref()),
        ("decided at", h.review.decided_at.as_deref()),
        ("reason", h.review.reason.as_deref()),
        ("created", Some(h.created_at.as_str())),
        ("file", Some(pkg.path.as_str())),
    ] {
        if let Some(v) = v {
            let v = app.paths.show_in_text(&one_line(v));
            out.extend(wrap(
                &[
                    Span::styled(format!("  {k:<12}"), theme.dim()),
                    Span::raw(v),
                ],
                width,
            ));
        }
    }
    rows.target((&h.target).into());
    rows.context_pack(&h.context_pack);
    rows.handoff(h);
    let out = &mut rows.lines;
    out.push(Line::default());
    out.push(Line::from(Span::styled("TASK", theme.title(true))));
    for l in for_terminal(&h.task.text).lines() {
        out.extend(wrap(&[Span::raw(format!("  {l}"))], width));
    }
    rows.lines
}

fn status_style(status: &str, theme: Theme) -> ratatui::style::Style {
    match status {
        "approved" => theme.ok(),
        "rejected" | "unreadable" => theme.error(),
        _ => theme.warn(),
    }
}

pub fn draw(frame: &mut Frame, r: Rect, app: &App, v: &OutboxView, theme: Theme) {
    match &v.detail {
        Some(d) => draw_package(frame, r, app, d, theme),
        None => draw_list(frame, r, app, v, theme),
    }
}

fn draw_package(frame: &mut Frame, r: Rect, app: &App, d: &OutboxDetail, theme: Theme) {
    let name = if d.id.is_empty() {
        "(unreadable)".to_string()
    } else {
        one_line(&d.id)
    };
    let inner = super::view_block(frame, r, &format!(" Package {name} "), theme);
    let lines: Vec<Line> = if let Some(e) = &d.error {
        vec![Line::from(Span::styled(
            format!("✗ {}", app.paths.show_in_text(&one_line(e))),
            theme.error(),
        ))]
    } else if let Some(pkg) = &d.doc {
        package_lines(app, pkg, inner.width as usize, theme)
    } else {
        vec![Line::from(Span::styled(
            format!("{} loading…", super::spinner(app)),
            theme.accent(),
        ))]
    };
    super::scrolled(frame, inner, lines, d.scroll);
}

fn draw_list(frame: &mut Frame, r: Rect, app: &App, v: &OutboxView, theme: Theme) {
    let unreadable = v.entries.iter().filter(|e| e.unreadable.is_some()).count();
    let packages = v.entries.len() - unreadable;
    let mut title = format!(
        " Outbox · {packages} package{}",
        if packages == 1 { "" } else { "s" }
    );
    if unreadable > 0 {
        title.push_str(&format!(" · {unreadable} unreadable"));
    }
    title.push_str(&format!(
        " · {}/outbox ",
        app.paths
            .show(&one_line(app.data_dir.trim_end_matches('/')))
    ));
    let inner = super::view_block(frame, r, &title, theme);
    if inner.height == 0 {
        return;
    }
    let note = |text: String, style| vec![Line::from(Span::styled(text, style))];
    let lines = if let Some(e) = &v.error {
        note(
            format!("✗ {}", app.paths.show_in_text(&one_line(e))),
            theme.error(),
        )
    } else if v.loading && v.entries.is_empty() {
        note(format!("{} loading…", super::spinner(app)), theme.accent())
    } else if v.entries.is_empty() {
        note(
            "the outbox is empty: commit a dispatch to write a package here".to_string(),
            theme.dim(),
        )
    } else {
        table(app, v, inner, theme)
    };
    frame.render_widget(Paragraph::new(lines), inner);
}

/// The column headings, then the rows that fit from the scroll offset.
fn table(app: &App, v: &OutboxView, inner: Rect, theme: Theme) -> Vec<Line<'static>> {
    let w = inner.width as usize;
    let mut h: Vec<Span> = ["status", "created", "id", "target"]
        .iter()
        .zip(COLUMNS)
        .map(|(t, c)| Span::styled(format!("  {:<c$}", t, c = c - 2), theme.dim()))
        .collect();
    h.push(Span::styled("  task", theme.dim()));
    let mut lines = vec![Line::from(fit_spans(h, w))];
    let rows = (inner.height as usize).saturating_sub(1);
    for (i, e) in v
        .entries
        .iter()
        .enumerate()
        .skip(v.cursor.offset)
        .take(rows)
    {
        let selected = i == v.cursor.selected;
        let mut line = Line::from(fit_spans(row_spans(app, e, selected, theme), w));
        if selected {
            line = line.patch_style(theme.selected(true));
        }
        lines.push(line);
    }
    lines
}

/// One package as a table row; an unreadable file says why across the other columns.
fn row_spans(app: &App, e: &OutboxRow, selected: bool, theme: Theme) -> Vec<Span<'static>> {
    let cell = |t: &str, c: usize| format!("{:<c$}", fit(t, c - 1), c = c);
    let mut spans = vec![
        Span::raw(if selected { "▶ " } else { "  " }),
        Span::styled(
            cell(&e.status, COLUMNS[0] - 2),
            status_style(&e.status, theme),
        ),
    ];
    match &e.unreadable {
        Some(why) => spans.push(Span::raw(app.paths.show_in_text(&one_line(why)))),
        None => spans.extend([
            Span::styled(cell(&short_time(&e.created_at), COLUMNS[1]), theme.dim()),
            Span::styled(cell(&e.id, COLUMNS[2]), theme.accent()),
            Span::raw(cell(&e.target, COLUMNS[3])),
            Span::raw(e.task.clone()),
        ]),
    }
    spans
}
