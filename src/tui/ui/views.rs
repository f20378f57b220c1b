//! The drill-in views. An episode: session metadata, then the opened event and its neighbours,
//! wrapped, with the query's words highlighted. A code reference: the file around the chunk with
//! line numbers, the chunk's lines marked, and how fresh the lines are. The text is built by
//! pure functions that `update` also uses (for scrolling and next/previous match).

use knowledge::engine::{EpisodeEvent, EpisodeSession};
use knowledge::text::sanitize::{for_terminal, one_line};
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::text::{expand_tabs, fit_spans, has_match, highlighted, short_time, wrap};
use super::theme::Theme;
use crate::tui::state::{App, CodeView, EpisodeView};

/// A view's text: its rows, the rows with a match, and the row to show first.
pub struct ViewText {
    pub lines: Vec<Line<'static>>,
    pub matches: Vec<usize>,
    pub focus: usize,
}

fn theme_of(app: &App) -> Theme {
    Theme::new(app.no_color)
}

/// The episode view's rows at `width` columns.
pub fn episode_text(app: &App, v: &EpisodeView, width: usize) -> ViewText {
    let theme = theme_of(app);
    let mut text = ViewText {
        lines: Vec::new(),
        matches: Vec::new(),
        focus: 0,
    };
    let Some(ep) = &v.episode else {
        return text;
    };
    text.lines = session_lines(app, &ep.session, theme);
    text.lines.push(Line::default());
    for ev in &ep.events {
        let opened = ev.seq == v.seq;
        if opened {
            text.focus = text.lines.len();
        }
        event_lines(app, ev, opened, width, &mut text);
        text.lines.push(Line::default());
    }
    text
}

/// The session an episode belongs to: id, source, outcome, title, directory, agent, file.
fn session_lines(app: &App, s: &EpisodeSession, theme: Theme) -> Vec<Line<'static>> {
    let kv = |k: &str, v: String| {
        Line::from(vec![
            Span::styled(format!("{k:<9}"), theme.dim()),
            Span::raw(v),
        ])
    };
    let mut lines = vec![kv(
        "session",
        format!(
            "{} · {} · outcome {} · {} events{}",
            one_line(&s.session_id),
            one_line(&s.source),
            s.outcome,
            s.events,
            if s.live { " · live" } else { "" }
        ),
    )];
    if let Some(t) = s.title.as_deref().filter(|t| !t.is_empty()) {
        lines.push(kv("title", one_line(t)));
    }
    lines.push(kv(
        "cwd",
        app.paths.show(&one_line(s.cwd.as_deref().unwrap_or("—"))),
    ));
    if let Some(c) = &s.created_at {
        lines.push(kv("created", short_time(c)));
    }
    if s.agent_name.is_some() || s.parent_session_id.is_some() {
        let name = s
            .agent_name
            .as_deref()
            .or(s.agent_preset.as_deref())
            .unwrap_or("subagent");
        let parent = s
            .parent_session_id
            .as_deref()
            .map(|p| format!(" of session {}", one_line(p)))
            .unwrap_or_default();
        lines.push(kv("agent", format!("{}{parent}", one_line(name))));
    }
    lines.push(kv("file", app.paths.show(&one_line(&s.path))));
    lines
}

/// One event: its heading (the opened one marked), then its text wrapped, with the rows that
/// match the query recorded in `text.matches`.
fn event_lines(app: &App, ev: &EpisodeEvent, opened: bool, width: usize, text: &mut ViewText) {
    let theme = theme_of(app);
    let mut head = vec![
        Span::styled(if opened { "▶ " } else { "  " }, theme.accent()),
        Span::styled(format!("#{} ", ev.seq), theme.accent()),
        Span::styled(
            ev.time
                .as_deref()
                .map(short_time)
                .unwrap_or_else(|| "—".into()),
            theme.dim(),
        ),
        Span::raw(format!(" {}", one_line(ev.event_type.as_str()))),
    ];
    if let Some(t) = &ev.tool_name {
        head.push(Span::styled(format!(" [{}]", one_line(t)), theme.accent()));
    }
    if ev.human {
        head.push(Span::styled(" · by a person", theme.dim()));
    }
    if ev.is_error {
        head.push(Span::styled(" · error", theme.error()));
    }
    let mut head = Line::from(fit_spans(head, width));
    if opened {
        head = head.patch_style(theme.focus_line());
    }
    text.lines.push(head);
    let base = if opened {
        theme.focus_line()
    } else {
        Style::new()
    };
    let body = app.paths.show_in_text(&for_terminal(&ev.text));
    let body = if body.trim().is_empty() {
        "(no text)".to_string()
    } else {
        body
    };
    let terms = &app.search.terms;
    let text_w = width.saturating_sub(4).max(1);
    for raw in body.lines() {
        let raw = expand_tabs(raw);
        let matched = has_match(&raw, terms);
        let spans = highlighted(&raw, terms, base, theme.matched());
        for (k, l) in wrap(&spans, text_w).into_iter().enumerate() {
            if matched && k == 0 {
                text.matches.push(text.lines.len());
            }
            let mut row = vec![Span::raw("    ")];
            row.extend(l.spans);
            text.lines.push(Line::from(row));
        }
    }
}

/// The code view's rows (`width` is used to cut long lines).
pub fn code_text(app: &App, v: &CodeView, width: usize) -> ViewText {
    let theme = theme_of(app);
    let mut lines = Vec::new();
    let mut matches = Vec::new();
    let Some(t) = &v.text else {
        return ViewText {
            lines,
            matches,
            focus: 0,
        };
    };
    let last = t.first_line + t.lines.len() as u64;
    let num_w = last.to_string().len().max(3);
    let terms = &app.search.terms;
    for (i, raw) in t.lines.iter().enumerate() {
        let n = t.first_line + i as u64;
        let in_chunk = v.end_line > 0 && (v.start_line..=v.end_line).contains(&n);
        let text = expand_tabs(&for_terminal(raw).replace('\n', " "));
        if has_match(&text, terms) {
            matches.push(lines.len());
        }
        let base = if in_chunk {
            theme.focus_line()
        } else {
            Style::new()
        };
        let mut spans = vec![
            Span::styled(if in_chunk { "▌" } else { " " }, theme.evidence()),
            Span::styled(format!("{n:>num_w$} │ "), theme.dim()),
        ];
        spans.extend(highlighted(&text, terms, base, theme.matched()));
        lines.push(Line::from(fit_spans(spans, width)));
    }
    let focus = v.start_line.saturating_sub(t.first_line) as usize;
    ViewText {
        lines,
        matches,
        focus,
    }
}

fn frame_block(
    frame: &mut Frame,
    r: Rect,
    title: String,
    info: Vec<Span<'static>>,
    theme: Theme,
) -> Rect {
    let inner = super::view_block(frame, r, &title, theme);
    if inner.height > 0 {
        let info_r = Rect::new(inner.x, inner.y, inner.width, 1);
        frame.render_widget(
            Paragraph::new(Line::from(fit_spans(info, inner.width as usize))),
            info_r,
        );
    }
    Rect::new(
        inner.x,
        inner.y + 1.min(inner.height),
        inner.width,
        inner.height.saturating_sub(1),
    )
}

fn body(frame: &mut Frame, r: Rect, lines: Vec<Line<'static>>, scroll: usize, mark: Option<usize>) {
    let rows: Vec<Line> = lines
        .into_iter()
        .enumerate()
        .skip(scroll)
        .take(r.height as usize)
        .map(|(i, mut l)| {
            if Some(i) == mark {
                if let Some(first) = l.spans.first_mut() {
                    let w = first.width();
                    if w >= 1 {
                        first.content = format!("»{}", " ".repeat(w - 1)).into();
                    }
                }
            }
            l
        })
        .collect();
    frame.render_widget(Paragraph::new(rows), r);
}

fn loading_or_error(
    frame: &mut Frame,
    r: Rect,
    app: &App,
    loading: bool,
    error: Option<&str>,
    theme: Theme,
) -> bool {
    if let Some(e) = error {
        let msg = app.paths.show_in_text(&one_line(e));
        frame.render_widget(
            Paragraph::new(Span::styled(format!("✗ {msg}"), theme.error()))
                .wrap(ratatui::widgets::Wrap { trim: true }),
            r,
        );
        return true;
    }
    if loading {
        frame.render_widget(
            Paragraph::new(Span::styled(
                format!("{} loading…", super::spinner(app)),
                theme.accent(),
            )),
            r,
        );
        return true;
    }
    false
}

pub fn draw_episode(frame: &mut Frame, r: Rect, app: &App, v: &EpisodeView, theme: Theme) {
    let title = format!(" Episode ep:{}:{} ", one_line(&v.session_id), v.seq);
    let t = episode_text(app, v, r.width.saturating_sub(2) as usize);
    let info = vec![
        Span::styled(format!("±{} events", v.context), theme.dim()),
        Span::styled(
            format!(
                " · {} match{}",
                t.matches.len(),
                if t.matches.len() == 1 { "" } else { "es" }
            ),
            theme.dim(),
        ),
        Span::styled(
            if v.loading && v.episode.is_some() {
                format!(" · {} reloading", super::spinner(app))
            } else {
                String::new()
            },
            theme.accent(),
        ),
    ];
    let inner = frame_block(frame, r, title, info, theme);
    if v.episode.is_none()
        && loading_or_error(frame, inner, app, v.loading, v.error.as_deref(), theme)
    {
        return;
    }
    body(frame, inner, t.lines, v.scroll, v.match_row);
}

pub fn draw_code(frame: &mut Frame, r: Rect, app: &App, v: &CodeView, theme: Theme) {
    let title = format!(" {} ", app.paths.show(&one_line(&v.title)));
    let mut info = Vec::new();
    if let Some(t) = &v.text {
        let (style, mark) = if t.freshness == "fresh" {
            (theme.ok(), "✓ ")
        } else {
            (theme.warn(), "⚠ ")
        };
        info.push(Span::styled(
            format!("{mark}{}", one_line(&t.freshness)),
            style,
        ));
        if v.end_line > 0 {
            info.push(Span::styled(
                format!(
                    " · lines {}-{} of {}",
                    v.start_line, v.end_line, t.total_lines
                ),
                theme.dim(),
            ));
        } else {
            info.push(Span::styled(
                format!(" · {} lines", t.total_lines),
                theme.dim(),
            ));
        }
        if let Some(rev) = &t.index_rev {
            info.push(Span::styled(
                format!(" · rev {}", one_line(rev)),
                theme.dim(),
            ));
        }
    }
    let inner = frame_block(frame, r, title, info, theme);
    if v.text.is_none() && loading_or_error(frame, inner, app, v.loading, v.error.as_deref(), theme)
    {
        return;
    }
    let t = code_text(app, v, inner.width as usize);
    body(frame, inner, t.lines, v.scroll, v.match_row);
}
