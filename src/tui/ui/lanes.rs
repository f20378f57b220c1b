//! The three lane panes. Each title carries the lane's `index_rev`, its item count and its
//! health (degraded with the reason, stale, timed out); an empty lane says why it is empty.
//! Items take two rows: a locator line and the snippet with the matching words highlighted.
//! Items that are evidence of the selected actor carry `◆`.

use knowledge::contract::{Lane, LaneHeader, Outcome, SearchResponse};
use knowledge::text::sanitize::one_line;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};
use ratatui::Frame;

use super::layout;
use super::text::{fit, fit_spans, highlighted, short_session, short_time, wrap};
use super::theme::Theme;
use crate::tui::state::{App, Focus};

/// The lane's header in the response (`None` when it was not requested).
pub fn header(resp: &SearchResponse, lane: Lane) -> Option<&LaneHeader> {
    match lane {
        Lane::Episodes => Some(&resp.lanes.episodes.header),
        Lane::Code => Some(&resp.lanes.code.header),
        Lane::Skills => resp.lanes.skills.as_ref().map(|s| &s.header),
    }
}

/// The health flags of a lane: `⚠ degraded`, `⏱ timed out`, `stale`.
pub fn health(resp: &SearchResponse, lane: Lane) -> Vec<&'static str> {
    let mut out = Vec::new();
    if let Some(h) = header(resp, lane) {
        let timed_out = h
            .degradation_reason
            .as_deref()
            .is_some_and(|r| r.starts_with("timed out"));
        if timed_out {
            out.push("⏱ timed out");
        } else if h.degraded {
            out.push("⚠ degraded");
        }
    }
    if lane == Lane::Code && resp.lanes.code.freshness.stale {
        out.push("stale");
    }
    out
}

fn short_rev(rev: &str) -> String {
    let tail = rev.rsplit(':').next().unwrap_or(rev);
    one_line(&tail.chars().take(8).collect::<String>())
}

fn title_name(lane: Lane) -> &'static str {
    match lane {
        Lane::Episodes => "Episodes",
        Lane::Code => "Code",
        Lane::Skills => "Skills",
    }
}

pub fn draw(frame: &mut Frame, r: Rect, app: &App, lane: Lane, tabbed: bool, theme: Theme) {
    let focused = app.focus == Focus::Lane(lane);
    let resp = app.response();
    let n = app.lane_len(lane);
    let title: Line = if tabbed {
        let mut spans = Vec::new();
        for (i, (l, label)) in layout::tab_labels(app).into_iter().enumerate() {
            if i > 0 {
                spans.push(Span::styled("│", theme.border(false)));
            }
            let style = if l == lane {
                theme.selected(focused)
            } else {
                theme.dim()
            };
            spans.push(Span::styled(label, style));
        }
        Line::from(spans)
    } else {
        Line::from(Span::styled(
            format!(" {} {n} ", title_name(lane)),
            theme.title(focused),
        ))
    };
    // Health first (it must survive a narrow pane), then why, then the revision.
    let mut right = Vec::new();
    if let Some(resp) = resp {
        for flag in health(resp, lane) {
            let style = if flag == "stale" {
                theme.warn()
            } else {
                theme.error()
            };
            right.push(Span::styled(format!(" {flag} "), style));
        }
        let degraded = header(resp, lane).filter(|h| h.degraded);
        if let Some(r) = degraded.and_then(|h| h.degradation_reason.as_deref()) {
            // With items on show the body cannot say why: the title does.
            if n > 0 {
                let why = app.paths.show_in_text(&one_line(r));
                right.push(Span::styled(format!("{why} "), theme.error()));
            }
        }
        if let Some(rev) = header(resp, lane).and_then(|h| h.index_rev.as_deref()) {
            right.push(Span::styled(
                format!(" rev {} ", short_rev(rev)),
                theme.dim(),
            ));
        }
    }
    let room = (r.width as usize).saturating_sub(4);
    let title_w = title.width().min(room);
    let right = fit_spans(right, room.saturating_sub(title_w + 1));
    let block = Block::bordered()
        .border_style(theme.border(focused))
        .title(Line::from(fit_spans(title.spans, room)))
        .title_top(Line::from(right).right_aligned());
    let inner = block.inner(r);
    frame.render_widget(block, r);
    if inner.width == 0 || inner.height == 0 {
        return;
    }
    if n == 0 {
        let text = empty_text(app, lane, theme);
        frame.render_widget(Paragraph::new(text).wrap(Wrap { trim: false }), inner);
        return;
    }
    let cursor = *app.cursors.lane(lane);
    let cap = layout::lane_capacity(r, n);
    let per = layout::item_rows(r, n);
    let w = inner.width as usize;
    let mut lines: Vec<Line> = Vec::with_capacity(cap * per);
    for i in cursor.offset..(cursor.offset + cap).min(n) {
        let selected = i == cursor.selected;
        let (head, body, evidence, id) = item_lines(app, lane, i, theme);
        let pointed = app.actor_pinned && app.selected_evidence() == Some((lane, id));
        let mark = match (evidence, pointed) {
            (_, true) => "◈",
            (true, false) => "◆",
            _ => " ",
        };
        let gutter = format!("{}{mark}", if selected { "▶" } else { " " });
        let gstyle = if evidence {
            theme.evidence()
        } else {
            theme.accent()
        };
        let mut first = vec![Span::styled(gutter, gstyle)];
        first.extend(head);
        let mut rows = vec![Line::from(fit_spans(first, w))];
        let body_w = w.saturating_sub(2).max(1);
        let mut wrapped = wrap(&body, body_w);
        let room = per - 1;
        if wrapped.len() > room {
            wrapped.truncate(room);
            if let Some(last) = wrapped.pop() {
                let mut spans = last.spans;
                spans.push(Span::raw("…"));
                wrapped.push(Line::from(fit_spans(spans, body_w)));
            }
        }
        wrapped.resize(room, Line::default());
        for l in wrapped {
            let mut spans = vec![Span::raw("  ")];
            spans.extend(l.spans);
            rows.push(Line::from(spans));
        }
        for mut row in rows {
            if selected {
                let s = theme.selected(focused);
                row = row.patch_style(s);
                // Fill the rest of the row so the selection reads as a bar.
                let pad = w.saturating_sub(row.width());
                row.spans.push(Span::styled(" ".repeat(pad), s));
            }
            lines.push(row);
        }
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

/// The locator line and the snippet of lane item `i`, whether it is evidence of the selected
/// actor, and its id.
fn item_lines(
    app: &App,
    lane: Lane,
    i: usize,
    theme: Theme,
) -> (Vec<Span<'static>>, Vec<Span<'static>>, bool, &str) {
    let terms = &app.search.terms;
    let hl = theme.matched();
    match lane {
        Lane::Episodes => {
            let it = &app.episodes()[i];
            let time = it
                .time
                .as_deref()
                .map(|t| list_time(app, t))
                .unwrap_or_else(|| "—".into());
            let outcome = match it.session.outcome {
                Some(Outcome::Success) => " ✓",
                Some(Outcome::Failure) => " ✗",
                Some(Outcome::Unknown) | None => "",
            };
            let head = vec![
                Span::styled(time, theme.dim()),
                Span::raw(" "),
                Span::styled(
                    format!("{}:{}", short_session(&it.session_id), it.seq),
                    theme.accent(),
                ),
                // The agent before the event type: in a narrow pane the type is what is cut.
                Span::styled(agent_label(&it.surface), theme.dim()),
                Span::raw(format!(" {}", one_line(it.event_type.as_str()))),
                Span::styled(outcome, theme.dim()),
                Span::styled(arm_marker(&it.why), theme.dim()),
            ];
            let body = snippet(app, it.snippet.as_deref(), terms, hl, theme);
            (head, body, app.is_evidence(lane, &it.id), it.id.as_str())
        }
        Lane::Code => {
            let it = &app.code()[i];
            let mut head = vec![Span::styled(
                format!(
                    "{}:{}-{}",
                    app.paths.show(&one_line(&it.path)),
                    it.start_line,
                    it.end_line
                ),
                theme.accent(),
            )];
            if let Some(s) = &it.symbol {
                head.push(Span::raw(format!(" {}", one_line(s))));
            }
            head.push(Span::styled(
                format!(" {}", one_line(&it.source_kind)),
                theme.dim(),
            ));
            head.push(Span::styled(arm_marker(&it.why), theme.dim()));
            let body = snippet(app, it.snippet.as_deref(), terms, hl, theme);
            (head, body, app.is_evidence(lane, &it.id), it.id.as_str())
        }
        Lane::Skills => {
            let it = &app.skills()[i];
            let head = vec![
                Span::styled(one_line(&it.name), theme.accent()),
                Span::styled(
                    format!(" · {} use{}", it.uses, if it.uses == 1 { "" } else { "s" }),
                    theme.dim(),
                ),
            ];
            let body = highlighted(&one_line(&it.description), terms, Style::new(), hl);
            (head, body, app.is_evidence(lane, &it.id), it.id.as_str())
        }
    }
}

/// Which arm of a hybrid lane found an item, from its `why`: nothing for the lexical arm alone
/// (the lanes' only arm before), ` vec` for the vector arm alone, ` lex+vec` for both.
pub fn arm_marker(why: &[String]) -> &'static str {
    let lexical = why.iter().any(|w| w.starts_with("lex:"));
    let vector = why.iter().any(|w| w.starts_with("vec:"));
    match (lexical, vector) {
        (true, true) => " lex+vec",
        (false, true) => " vec",
        _ => "",
    }
}

/// A list time: `10-21 05:51` in the current year, `2025-10-21 05:51` otherwise.
pub fn list_time(app: &App, t: &str) -> String {
    let full = short_time(t);
    let year =
        chrono::DateTime::from_timestamp_millis(app.now_ms).map(|d| d.format("%Y-").to_string());
    match year {
        Some(y) if app.now_ms > 0 && full.starts_with(&y) => full[y.len()..].to_string(),
        _ => full,
    }
}

fn snippet(
    app: &App,
    s: Option<&str>,
    terms: &[String],
    hl: Style,
    theme: Theme,
) -> Vec<Span<'static>> {
    match s
        .map(|s| app.paths.show_in_text(&one_line(s)))
        .filter(|s| !s.is_empty())
    {
        Some(s) => highlighted(&s, terms, Style::new(), hl),
        None => vec![Span::styled("(no text)", theme.dim())],
    }
}

/// Why a lane shows nothing.
fn empty_text(app: &App, lane: Lane, theme: Theme) -> Vec<Line<'static>> {
    let Some(resp) = app.response() else {
        if lane == Lane::Episodes && !app.search.pending() {
            return vec![
                Line::from(Span::styled("Ask in the box above, e.g.", theme.dim())),
                Line::from("  who fixed the MySQL access?"),
                Line::from("  где код getUserName?"),
                Line::from("  which skill cleans BOM/CRLF?"),
            ];
        }
        return vec![Line::from(Span::styled(
            if app.search.pending() { "…" } else { "—" },
            theme.dim(),
        ))];
    };
    let Some(h) = header(resp, lane) else {
        return vec![Line::from(Span::styled(
            "not requested (filters: include)",
            theme.dim(),
        ))];
    };
    let reason = h
        .degradation_reason
        .as_deref()
        .map(|r| app.paths.show_in_text(&one_line(r)))
        .unwrap_or_else(|| "no match for the query".to_string());
    let style = if h.degraded {
        theme.error()
    } else {
        theme.dim()
    };
    let mark = if h.degraded { "⚠ " } else { "" };
    vec![Line::from(Span::styled(
        fit(&format!("{mark}{reason}"), 2000),
        style,
    ))]
}

/// Which agent an episode came from (` Gemini CLI ·`, between the locator and the event type),
/// from the registry; an external source's surface that names no known agent shows nothing.
fn agent_label(surface: &str) -> String {
    knowledge::sources::episodes::agents::Agent::from_source(surface)
        .map(|a| format!(" {} ·", a.label()))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::arm_marker;

    #[test]
    fn arm_marker_names_the_arms() {
        let why = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            arm_marker(&why(&["lex: match in user/message", "bm25: 3.10"])),
            ""
        );
        assert_eq!(arm_marker(&why(&["vec: 0.71"])), " vec");
        assert_eq!(arm_marker(&why(&["lex: user", "vec: 0.52"])), " lex+vec");
    }
}
