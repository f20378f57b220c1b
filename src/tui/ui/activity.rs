//! The activity view, drawn from the engine's report with ratatui's own chart widgets: a bar a
//! day (sessions; the selected day highlighted), sparklines of events and failed sessions, the
//! share of failed sessions as a gauge, who worked (actors by events with ✓/✗ sessions),
//! workspaces, skills used most, and lane health from the request log as sparklines. A pure
//! function of the state, like every screen.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Bar, BarChart, BarGroup, Block, LineGauge, Paragraph, Sparkline};
use ratatui::Frame;

use super::text::fit;
use super::theme::Theme;
use crate::tui::state::{ActivityPane, ActivityView, App};
use knowledge::engine::activity::ActivityReport;
use knowledge::text::sanitize::one_line;

pub fn draw(frame: &mut Frame, r: Rect, app: &App, v: &ActivityView, theme: Theme) {
    let title = format!(" Activity · {} ", v.period.label());
    let inner = super::view_block(frame, r, &title, theme);
    if inner.height == 0 || inner.width == 0 {
        return;
    }
    let Some(report) = v.report.as_deref() else {
        let text = match (&v.error, v.loading) {
            (Some(e), _) => Span::styled(fit(&one_line(e), inner.width as usize), theme.error()),
            (None, true) => {
                Span::styled(format!("{} counting…", super::spinner(app)), theme.accent())
            }
            (None, false) => Span::raw("nothing to show"),
        };
        frame.render_widget(Paragraph::new(Line::from(text)), inner);
        return;
    };
    let h = inner.height;
    let chart_h = match h {
        0..=11 => h.saturating_sub(4).min(4),
        12..=23 => 6,
        _ => 10,
    };
    let logged = report.health.stats.as_ref().map_or(0, |s| s.requests) > 0;
    let health_h = match (logged, h) {
        (_, 0..=17) => 0,
        (false, _) => 1,
        (true, 18..=29) => 2,
        (true, _) => 5,
    };
    let spark_h = if h >= 18 { 2 } else { 0 };
    let rows = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(chart_h),
        Constraint::Length(1),
        Constraint::Length(spark_h),
        Constraint::Min(0),
        Constraint::Length(health_h),
    ])
    .split(inner);
    summary(frame, rows[0], app, report, theme);
    days_chart(frame, rows[1], v, report, theme);
    day_line(frame, rows[2], v, report, theme);
    if spark_h > 0 {
        sparklines(frame, rows[3], v, report, theme);
    }
    lists(frame, rows[4], app, v, report, theme);
    if health_h > 0 {
        health(frame, rows[5], report, theme);
    }
}

fn summary(frame: &mut Frame, r: Rect, app: &App, rep: &ActivityReport, theme: Theme) {
    let agents: Vec<String> = rep
        .agents
        .iter()
        .map(|a| format!("{} {}", one_line(&a.source), a.sessions))
        .collect();
    let mut text = format!(
        "{} sessions · {} events · agents {}",
        rep.sessions,
        rep.events,
        if agents.is_empty() {
            "-".to_string()
        } else {
            agents.join(", ")
        }
    );
    if let Some(w) = rep.warnings.first() {
        text.push_str(&format!(" · ⚠ {}", app.paths.show_in_text(&one_line(w))));
    }
    let gauge_w = if r.width >= 70 { 30 } else { 0 };
    let cols = Layout::horizontal([Constraint::Min(0), Constraint::Length(gauge_w)]).split(r);
    frame.render_widget(
        Paragraph::new(Line::from(fit(&text, cols[0].width as usize))),
        cols[0],
    );
    if gauge_w > 0 {
        let label = format!("failed {}/{} ", rep.failed_sessions, rep.sessions);
        frame.render_widget(
            LineGauge::default()
                .ratio(rep.failed_share.clamp(0.0, 1.0))
                .label(label)
                .filled_style(theme.error())
                .unfilled_style(theme.dim()),
            cols[1],
        );
    }
}

/// The first day shown and the bar width, so the selected day is always on screen.
fn bar_window(width: u16, n: usize, selected: usize) -> (usize, u16, u16) {
    let width = width as usize;
    if n == 0 || width == 0 {
        return (0, 1, 0);
    }
    let (bar, gap) = if n * 4 <= width {
        ((width / n).saturating_sub(1).clamp(1, 6), 1)
    } else if n * 2 <= width {
        (1, 1)
    } else {
        (1, 0)
    };
    let fits = (width / (bar + gap)).max(1);
    let first = (selected + 1)
        .saturating_sub(fits)
        .min(n.saturating_sub(fits));
    (first, bar as u16, gap as u16)
}

fn days_chart(frame: &mut Frame, r: Rect, v: &ActivityView, rep: &ActivityReport, theme: Theme) {
    if r.height == 0 {
        return;
    }
    let focused = v.pane == ActivityPane::Days;
    let (first, bar, gap) = bar_window(r.width, rep.days.len(), v.day);
    let fits = (r.width / (bar + gap).max(1)) as usize;
    let base = if focused { theme.accent() } else { theme.dim() };
    let bars: Vec<Bar> = rep
        .days
        .iter()
        .enumerate()
        .skip(first)
        .take(fits.max(1))
        .map(|(i, d)| {
            let selected = i == v.day;
            let style = if selected {
                theme.selected(focused).add_modifier(Modifier::REVERSED)
            } else {
                base
            };
            let label = if bar >= 2 {
                d.day.get(8..10).unwrap_or("").to_string()
            } else {
                String::new()
            };
            Bar::default()
                .value(d.sessions)
                .label(Line::from(label))
                .text_value(if bar >= 2 {
                    d.sessions.to_string()
                } else {
                    String::new()
                })
                .style(style)
        })
        .collect();
    // The selected day is marked under its bar (visible without colours too).
    let rows = Layout::vertical([Constraint::Min(0), Constraint::Length(1)]).split(r);
    let chart = BarChart::default()
        .data(BarGroup::default().bars(&bars))
        .bar_width(bar)
        .bar_gap(gap)
        .label_style(theme.dim());
    frame.render_widget(chart, rows[0]);
    let col = v.day.saturating_sub(first) as u16 * (bar + gap) + bar.saturating_sub(1) / 2;
    if v.day >= first && col < rows[1].width {
        let at = Rect {
            x: rows[1].x + col,
            width: 1,
            ..rows[1]
        };
        frame.render_widget(
            Paragraph::new(Span::styled("▲", theme.selected(focused))),
            at,
        );
    }
}

fn day_line(frame: &mut Frame, r: Rect, v: &ActivityView, rep: &ActivityReport, theme: Theme) {
    let Some(d) = rep.days.get(v.day) else {
        return;
    };
    let text = format!(
        "▶ {} · {} sessions · {} events · {} failed   (h/l day · enter: search that day)",
        d.day, d.sessions, d.events, d.failed_sessions
    );
    let style = if v.pane == ActivityPane::Days {
        theme.title(true)
    } else {
        Style::default()
    };
    frame.render_widget(
        Paragraph::new(Line::from(Span::styled(
            fit(&text, r.width as usize),
            style,
        ))),
        r,
    );
}

fn labelled_spark(
    frame: &mut Frame,
    r: Rect,
    label: &str,
    data: &[u64],
    style: Style,
    theme: Theme,
) {
    let cols = Layout::horizontal([Constraint::Length(16), Constraint::Min(0)]).split(r);
    frame.render_widget(
        Paragraph::new(Line::from(Span::styled(fit(label, 16), theme.dim()))),
        cols[0],
    );
    let w = cols[1].width as usize;
    let tail = &data[data.len().saturating_sub(w)..];
    frame.render_widget(Sparkline::default().data(tail).style(style), cols[1]);
}

fn sparklines(frame: &mut Frame, r: Rect, _v: &ActivityView, rep: &ActivityReport, theme: Theme) {
    let rows = Layout::vertical([Constraint::Length(1), Constraint::Length(1)]).split(r);
    let events: Vec<u64> = rep.days.iter().map(|d| d.events).collect();
    let failed: Vec<u64> = rep.days.iter().map(|d| d.failed_sessions).collect();
    labelled_spark(frame, rows[0], "events/day", &events, theme.accent(), theme);
    labelled_spark(frame, rows[1], "failed/day", &failed, theme.error(), theme);
}

fn pane_block(pane: ActivityPane, v: &ActivityView, theme: Theme) -> Block<'static> {
    let focused = v.pane == pane;
    Block::bordered()
        .border_style(theme.border(focused))
        .title(Span::styled(
            format!(" {} ", pane.title()),
            theme.title(focused),
        ))
}

fn list_lines(
    rows: Vec<String>,
    selected: usize,
    focused: bool,
    height: usize,
    width: usize,
    theme: Theme,
) -> Vec<Line<'static>> {
    let offset = selected.saturating_sub(height.saturating_sub(1));
    rows.into_iter()
        .enumerate()
        .skip(offset)
        .take(height)
        .map(|(i, text)| {
            let mark = if i == selected { "▶" } else { " " };
            let line = fit(&format!("{mark}{text}"), width);
            if i == selected {
                Line::from(Span::styled(line, theme.selected(focused)))
            } else {
                Line::from(line)
            }
        })
        .collect()
}

fn lists(
    frame: &mut Frame,
    r: Rect,
    app: &App,
    v: &ActivityView,
    rep: &ActivityReport,
    theme: Theme,
) {
    if r.height < 3 {
        return;
    }
    let panes = [
        ActivityPane::Actors,
        ActivityPane::Workspaces,
        ActivityPane::Skills,
    ];
    let shown: Vec<ActivityPane> = if r.width >= 100 {
        panes.to_vec()
    } else {
        // Narrow: the focused list (the actors while the days have the keyboard).
        vec![if v.pane == ActivityPane::Days {
            ActivityPane::Actors
        } else {
            v.pane
        }]
    };
    let constraints: Vec<Constraint> = shown
        .iter()
        .map(|p| match p {
            ActivityPane::Actors if shown.len() > 1 => Constraint::Percentage(50),
            _ => Constraint::Fill(1),
        })
        .collect();
    let areas = Layout::horizontal(constraints).split(r);
    for (pane, area) in shown.iter().zip(areas.iter()) {
        let block = pane_block(*pane, v, theme);
        let inner = block.inner(*area);
        frame.render_widget(block, *area);
        let (h, w) = (inner.height as usize, inner.width as usize);
        let (rows, selected): (Vec<String>, usize) = match pane {
            ActivityPane::Actors => (
                rep.actors
                    .iter()
                    .map(|a| {
                        format!(
                            "{:>6} ✓{:<2} ✗{:<2} {}",
                            a.events,
                            a.successes,
                            a.failures,
                            app.paths.show_in_text(&one_line(&a.label))
                        )
                    })
                    .collect(),
                v.actor,
            ),
            ActivityPane::Workspaces => (
                rep.workspaces
                    .iter()
                    .map(|ws| {
                        format!(
                            "{:>6} {:>3}s ✗{:<2} {}",
                            ws.events,
                            ws.sessions,
                            ws.failed_sessions,
                            app.paths.show(&one_line(&ws.workspace))
                        )
                    })
                    .collect(),
                v.workspace,
            ),
            _ => (
                rep.skills
                    .iter()
                    .map(|s| format!("{:>4}× ✗{:<2} {}", s.uses, s.failures, one_line(&s.skill)))
                    .collect(),
                v.skill,
            ),
        };
        let lines = if rows.is_empty() {
            vec![Line::from(Span::styled(
                fit(" none in this period", w),
                theme.dim(),
            ))]
        } else {
            list_lines(rows, selected, v.pane == *pane, h, w, theme)
        };
        frame.render_widget(Paragraph::new(lines), inner);
    }
}

fn health(frame: &mut Frame, r: Rect, rep: &ActivityReport, theme: Theme) {
    let h = &rep.health;
    let to_u64 = |v: &[f64], scale: f64| {
        v.iter()
            .map(|x| (x * scale).round() as u64)
            .collect::<Vec<_>>()
    };
    let mut series: Vec<(String, Vec<u64>, Style)> = vec![(
        "searches/day".to_string(),
        h.searches.clone(),
        theme.accent(),
    )];
    series.push((
        "zero results".to_string(),
        to_u64(&h.zero_result_rate, 1000.0),
        theme.warn(),
    ));
    for l in &h.lanes {
        series.push((
            format!("{} p50 ms", l.lane),
            to_u64(&l.p50_ms, 10.0),
            theme.ok(),
        ));
    }
    let rows = r.height as usize;
    if rows == 0 {
        return;
    }
    let logged = h.stats.as_ref().map_or(0, |s| s.requests);
    let title = if logged == 0 {
        "lane health (request log): no requests logged in this period".to_string()
    } else {
        format!("lane health (request log): {logged} requests")
    };
    let header = Line::from(Span::styled(
        fit(&title, r.width as usize),
        theme.title(false),
    ));
    if logged == 0 {
        frame.render_widget(Paragraph::new(header), r);
        return;
    }
    if rows == 1 {
        frame.render_widget(Paragraph::new(header), r);
        return;
    }
    let constraints: Vec<Constraint> = std::iter::repeat_n(Constraint::Length(1), rows).collect();
    let cells = Layout::vertical(constraints).split(r);
    frame.render_widget(Paragraph::new(header), cells[0]);
    // Two series a row, side by side, as room allows.
    let per_row = 2usize;
    for (row, chunk) in series.chunks(per_row).enumerate().take(rows - 1) {
        let cols = Layout::horizontal(vec![Constraint::Ratio(1, per_row as u32); per_row])
            .split(cells[row + 1]);
        for ((label, data, style), area) in chunk.iter().zip(cols.iter()) {
            labelled_spark(frame, *area, label, data, *style, theme);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bar_window_keeps_the_selected_day_on_screen() {
        assert_eq!(bar_window(120, 30, 29), (0, 3, 1));
        let (first, bar, gap) = bar_window(40, 90, 89);
        let fits = 40 / (bar + gap) as usize;
        assert!(first <= 89 && 89 < first + fits, "{first} {fits}");
        let (first, _, _) = bar_window(40, 90, 0);
        assert_eq!(first, 0);
    }
}
