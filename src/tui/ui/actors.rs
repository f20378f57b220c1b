//! The actor ranking: rank, name, kind, score, confidence, skills, dispatch mode and
//! availability, and evidence. The selected actor unfolds its evidence links; Enter on a link
//! moves the focus to that item in its lane (where it is marked `◆`).

use knowledge::contract::{Actor, Lane};
use knowledge::text::sanitize::one_line;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};
use ratatui::Frame;

use super::layout;
use super::text::{fit, fit_spans, short_session, short_time};
use super::theme::Theme;
use crate::tui::state::{App, Focus};

/// Column widths: rank, name, kind, score, confidence, skills, dispatch (0 = hidden).
fn columns(w: usize) -> [usize; 7] {
    // The actor column carries the kind too ("subagent of «…»"), so it takes the room.
    if w >= 130 {
        [4, 62, 0, 7, 5, 22, 22]
    } else if w >= 100 {
        [4, 46, 0, 7, 5, 16, 20]
    } else if w >= 70 {
        [4, 32, 0, 7, 5, 0, 20]
    } else {
        [4, 22, 0, 7, 0, 0, 0]
    }
}

fn cell(s: &str, w: usize) -> String {
    if w == 0 {
        return String::new();
    }
    let t = fit(s, w.saturating_sub(1));
    let pad = w.saturating_sub(super::text::width(&t));
    format!("{t}{}", " ".repeat(pad))
}

fn evidence_summary(a: &Actor) -> String {
    let count = |lane: Lane| a.evidence.iter().filter(|e| e.lane == lane).count();
    let mut parts = Vec::new();
    for (lane, short) in [
        (Lane::Episodes, "ep"),
        (Lane::Code, "code"),
        (Lane::Skills, "skill"),
    ] {
        let n = count(lane);
        if n > 0 {
            parts.push(format!("{n} {short}"));
        }
    }
    if parts.is_empty() {
        "—".to_string()
    } else {
        parts.join(" · ")
    }
}

/// The actor as a person reads it (`engine::profiles::label`), with titles shortened until the
/// whole line fits `width` columns so the workspace and the day stay visible.
pub fn display_name(a: &Actor) -> String {
    knowledge::engine::profiles::label(a, knowledge::engine::profiles::TITLE_CHARS)
}

/// The longest form of the label that fits: titles shortened to 24 characters first, then the
/// day left out, then the workspace, then the titles shortened further.
fn fitted_name(a: &Actor, width: usize) -> String {
    use knowledge::engine::profiles::{label_with, TITLE_CHARS};
    let fits = |l: &String| super::text::width(l) <= width;
    for (ws, day) in [(true, true), (true, false), (false, false)] {
        let mut chars = TITLE_CHARS;
        while chars >= 24 {
            let l = label_with(a, chars, ws, day);
            if fits(&l) {
                return l;
            }
            chars -= 4;
        }
    }
    let mut chars = 20;
    loop {
        let l = label_with(a, chars, false, false);
        if chars <= 8 || fits(&l) {
            return l;
        }
        chars -= 4;
    }
}

fn row(a: &Actor, rank: usize, cols: [usize; 7], theme: Theme) -> Vec<Span<'static>> {
    let skills = if a.skills.is_empty() {
        "—".to_string()
    } else {
        a.skills
            .iter()
            .map(|s| format!("{}×{}", one_line(&s.name), s.uses))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (mark, dstyle) = if a.dispatch.available {
        ("✓", theme.ok())
    } else {
        ("✗ n/a", theme.dim())
    };
    vec![
        Span::styled(cell(&format!("{rank:>2}"), cols[0]), theme.dim()),
        Span::styled(
            cell(&fitted_name(a, cols[1].saturating_sub(1)), cols[1]),
            theme.accent(),
        ),
        Span::raw(cell(a.kind.as_str(), cols[2])),
        Span::raw(cell(&format!("{:.4}", a.score), cols[3])),
        Span::raw(cell(&format!("{:.2}", a.confidence), cols[4])),
        Span::raw(cell(&skills, cols[5])),
        Span::styled(
            cell(&format!("{} {mark}", a.dispatch.mode), cols[6]),
            dstyle,
        ),
        Span::styled(evidence_summary(a), theme.evidence()),
    ]
}

fn header(cols: [usize; 7], theme: Theme) -> Line<'static> {
    let names = ["#", "actor", "kind", "score", "conf", "skills", "dispatch"];
    let mut spans: Vec<Span> = names
        .iter()
        .zip(cols)
        .map(|(n, w)| Span::styled(cell(n, w), theme.dim()))
        .collect();
    spans.push(Span::styled("evidence", theme.dim()));
    Line::from(spans)
}

/// One evidence link row: the lane, the id and what the item is.
fn evidence_row(
    app: &App,
    lane: Lane,
    id: &str,
    k: usize,
    selected: bool,
    theme: Theme,
) -> Vec<Span<'static>> {
    let what = match lane {
        Lane::Episodes => app.episodes().iter().find(|x| x.id == id).map(|x| {
            format!(
                "{} {}:{} {} — {}",
                x.time.as_deref().map(short_time).unwrap_or_default(),
                short_session(&x.session_id),
                x.seq,
                one_line(x.event_type.as_str()),
                one_line(x.snippet.as_deref().unwrap_or(""))
            )
        }),
        Lane::Code => app.code().iter().find(|x| x.id == id).map(|x| {
            format!(
                "{}:{} {}",
                app.paths.show(&one_line(&x.path)),
                x.start_line,
                x.symbol.as_deref().map(one_line).unwrap_or_default()
            )
        }),
        Lane::Skills => app
            .skills()
            .iter()
            .find(|x| x.id == id)
            .map(|x| format!("{} — {}", one_line(&x.name), one_line(&x.description))),
    }
    .unwrap_or_else(|| one_line(id));
    vec![
        Span::styled(
            format!("   {}↳ {}. ", if selected { "▶" } else { " " }, k + 1),
            theme.dim(),
        ),
        Span::styled(format!("{lane:<8} "), theme.evidence()),
        Span::raw(what),
    ]
}

pub fn draw(frame: &mut Frame, r: Rect, app: &App, theme: Theme) {
    let focused = app.focus == Focus::Actors;
    let actors = app.actors();
    let mut block = Block::bordered()
        .border_style(theme.border(focused))
        .title(Span::styled(
            format!(" Actors {} ", actors.len()),
            theme.title(focused),
        ));
    if focused && !actors.is_empty() && r.width > 50 {
        let keys = app
            .keymap
            .key_label(&app.contexts(), "open")
            .map(|k| format!(" {k}: follow evidence "))
            .unwrap_or_default();
        block = block.title_top(Line::from(Span::styled(keys, theme.dim())).right_aligned());
    }
    let inner = block.inner(r);
    frame.render_widget(block, r);
    if inner.width == 0 || inner.height == 0 {
        return;
    }
    if actors.is_empty() {
        let msg = match app.response() {
            None => "who did the work shows here, with links to the evidence".to_string(),
            Some(_) => "no actor: no episode, skill or edit in the results names one".to_string(),
        };
        frame.render_widget(
            Paragraph::new(Span::styled(msg, theme.dim())).wrap(Wrap { trim: true }),
            inner,
        );
        return;
    }
    let w = inner.width as usize;
    let cols = columns(w.saturating_sub(2));
    let mut lines = Vec::new();
    let has_header = inner.height >= 3;
    if has_header {
        let mut h = vec![Span::raw("  ")];
        h.extend(header(cols, theme).spans);
        lines.push(Line::from(fit_spans(h, w)));
    }
    let rows = app.actor_rows();
    let cap = layout::actor_capacity(r);
    let cur = (app.cursors.actors.actor, app.cursors.actors.evidence);
    for &(i, ev) in rows.iter().skip(app.cursors.actors.offset).take(cap) {
        let a = &actors[i];
        let selected = (i, ev) == cur && app.actor_pinned;
        let mut spans = match ev {
            None => {
                let mark = if i == cur.0 && app.actor_pinned {
                    "▶ "
                } else {
                    "  "
                };
                let mut s = vec![Span::styled(mark, theme.accent())];
                s.extend(row(a, i + 1, cols, theme));
                s
            }
            Some(k) => {
                let e = &a.evidence[k];
                evidence_row(app, e.lane, &e.id, k, selected, theme)
            }
        };
        spans = fit_spans(spans, w);
        let mut line = Line::from(spans);
        if selected {
            let s: Style = theme.selected(focused);
            line = line.patch_style(s);
            let pad = w.saturating_sub(line.width());
            line.spans.push(Span::styled(" ".repeat(pad), s));
        }
        lines.push(line);
    }
    frame.render_widget(Paragraph::new(lines), inner);
}
