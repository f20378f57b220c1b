//! The dispatch pane: task, acceptance and constraints editors, and the dry run's target, context
//! pack, handoff package, warnings and risks, drawn from the typed response so the pane shows
//! exactly what would be written (the outbox view reuses the same rows for a stored package).

use knowledge::contract::dispatch::{
    ContextPack, DispatchResponse, DispatchTarget, Handoff, HandoffTarget,
};
use knowledge::contract::{DispatchInfo, Issue};
use knowledge::text::sanitize::one_line;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};
use ratatui::Frame;
use ratatui_textarea::TextArea;

use super::layout;
use super::text::{fit, fit_spans, wrap};
use super::theme::Theme;
use crate::tui::keymap::Context;
use crate::tui::state::{App, DispatchField, DispatchView};

/// Rows of a document for reading: section headings, then `key  value` rows with the value
/// wrapped under a hanging indent. Every string is made one line and its paths shortened.
pub(super) struct Rows<'a> {
    app: &'a App,
    theme: Theme,
    width: usize,
    pub lines: Vec<Line<'static>>,
}

/// A target as the rows show it: the dry run's (with its reasons) or a package's.
pub(super) struct TargetFacts<'a> {
    actor_id: &'a str,
    name: &'a str,
    kind: &'a str,
    source: Option<&'a str>,
    title: Option<&'a str>,
    workspace: Option<&'a str>,
    dispatch: &'a DispatchInfo,
    why: &'a [String],
}

impl<'a> From<&'a DispatchTarget> for TargetFacts<'a> {
    fn from(t: &'a DispatchTarget) -> Self {
        TargetFacts {
            actor_id: &t.actor_id,
            name: &t.name,
            kind: t.kind.as_str(),
            source: Some(&t.source),
            title: t.title.as_deref(),
            workspace: t.workspace.as_deref(),
            dispatch: &t.dispatch,
            why: &t.why,
        }
    }
}

impl<'a> From<&'a HandoffTarget> for TargetFacts<'a> {
    fn from(t: &'a HandoffTarget) -> Self {
        TargetFacts {
            actor_id: &t.actor_id,
            name: &t.name,
            kind: t.kind.as_str(),
            source: None,
            title: None,
            workspace: None,
            dispatch: &t.dispatch,
            why: &[],
        }
    }
}

impl<'a> Rows<'a> {
    pub(super) fn new(app: &'a App, width: usize, theme: Theme) -> Self {
        Rows {
            app,
            theme,
            width: width.max(10),
            lines: Vec::new(),
        }
    }

    fn head(&mut self, title: &str) {
        self.lines.push(Line::from(Span::styled(
            title.to_string(),
            self.theme.title(true),
        )));
    }

    /// A key column, then the value wrapped with a hanging indent.
    fn kv(&mut self, k: &str, v: String) {
        let kw = (k.chars().count() + 3).max(14);
        let vw = self.width.saturating_sub(kw).max(8);
        let value = self.app.paths.show_in_text(&v);
        for (i, line) in wrap(&[Span::raw(value)], vw).into_iter().enumerate() {
            let key = if i == 0 {
                format!("  {k:<width$}", width = kw - 2)
            } else {
                " ".repeat(kw)
            };
            let mut spans = vec![Span::styled(key, self.theme.dim())];
            spans.extend(line.spans);
            self.lines.push(Line::from(spans));
        }
    }

    fn no_target(&mut self) {
        self.head("TARGET");
        self.kv("actor", "none found".to_string());
    }

    pub(super) fn target(&mut self, t: TargetFacts) {
        self.head("TARGET");
        let who: Vec<String> = [Some(t.name), Some(t.kind), t.source]
            .into_iter()
            .flatten()
            .map(one_line)
            .filter(|x| !x.is_empty())
            .collect();
        self.kv("actor", who.join(" · "));
        if let Some(title) = t.title.map(one_line).filter(|x| !x.is_empty()) {
            self.kv("worked on", format!("«{title}»"));
        }
        if let Some(ws) = t.workspace.map(one_line).filter(|x| !x.is_empty()) {
            self.kv("workspace", ws);
        }
        self.kv("id", one_line(t.actor_id));
        let here = if t.dispatch.available {
            "✓ available here"
        } else {
            "✗ not available here"
        };
        self.kv("dispatch", format!("{} {here}", t.dispatch.mode));
        for why in t.why {
            self.kv("why", one_line(why));
        }
    }

    pub(super) fn context_pack(&mut self, cp: &ContextPack) {
        self.head("CONTEXT PACK");
        self.kv("goal", one_line(&cp.goal));
        for a in &cp.acceptance {
            self.kv("acceptance", format!("• {}", one_line(a)));
        }
        for c in &cp.constraints {
            self.kv("constraint", format!("• {}", one_line(c)));
        }
        for e in &cp.prior_episodes {
            let snip = e.snippet.as_deref().map(one_line).unwrap_or_default();
            self.kv("episode", format!("{} {snip}", one_line(&e.id)));
        }
        for c in &cp.code_refs {
            self.kv("code", format!("{}:{}", one_line(&c.path), c.start_line));
        }
        for sk in &cp.skills {
            self.kv("skill", format!("{} ×{}", one_line(&sk.name), sk.uses));
        }
        for r in &cp.risks {
            self.kv("risk", format!("• {}", one_line(r)));
        }
    }

    pub(super) fn handoff(&mut self, h: &Handoff) {
        self.head("HANDOFF PACKAGE");
        self.kv("execution", h.execution.to_string());
        self.kv("assignment", one_line(&h.assignment_id));
        self.kv("requires", one_line(&h.requires));
        for (i, call) in h.tool_calls.iter().enumerate() {
            self.kv("tool call", format!("{}. {}", i + 1, one_line(&call.tool)));
            // The arguments are the tool's own JSON (free-form by the contract).
            for (k, v) in call.arguments.as_object().into_iter().flatten() {
                let text = match v.as_str() {
                    Some(t) => one_line(t),
                    None => one_line(&v.to_string()),
                };
                self.kv(&format!("  {}", one_line(k)), text);
            }
        }
    }

    fn issues(&mut self, warnings: &[Issue], errors: &[Issue]) {
        for (mark, list, style) in [
            ("⚠", warnings, self.theme.warn()),
            ("✗", errors, self.theme.error()),
        ] {
            for i in list {
                let m = self.app.paths.show_in_text(&one_line(&i.message));
                self.lines.push(Line::from(Span::styled(
                    fit(&format!("{mark} {m}"), self.width),
                    style,
                )));
            }
        }
    }
}

/// The dry run's response as readable rows.
pub fn preview_lines(
    app: &App,
    p: &DispatchResponse,
    width: usize,
    theme: Theme,
) -> Vec<Line<'static>> {
    let mut rows = Rows::new(app, width, theme);
    match &p.target {
        Some(t) => rows.target(t.into()),
        None => rows.no_target(),
    }
    rows.context_pack(&p.context_pack);
    if let Some(h) = &p.handoff {
        rows.handoff(h);
    }
    rows.issues(&p.warnings, &p.errors);
    rows.lines
}

fn field_box(
    frame: &mut Frame,
    r: Rect,
    title: &str,
    t: &TextArea<'static>,
    focused: bool,
    theme: Theme,
) {
    if r.height == 0 {
        return;
    }
    let block = Block::bordered()
        .border_style(theme.border(focused))
        .title(Span::styled(
            format!(" {}{title} ", if focused { "▶ " } else { "" }),
            theme.title(focused),
        ));
    let inner = block.inner(r);
    frame.render_widget(block, r);
    if focused {
        frame.render_widget(t, inner);
    } else if t.is_empty() {
        frame.render_widget(
            Paragraph::new(Span::styled(t.placeholder_text().to_string(), theme.dim())),
            inner,
        );
    } else {
        let lines: Vec<Line> = t
            .lines()
            .iter()
            .map(|l| Line::from(fit(&one_line(l), inner.width as usize)))
            .collect();
        frame.render_widget(Paragraph::new(lines), inner);
    }
}

/// The editors' and the preview's areas inside the dispatch pane: side by side when wide.
fn split(inner: Rect) -> (Rect, Rect) {
    if inner.width >= 100 {
        let lw = inner.width * 42 / 100;
        (
            Rect::new(inner.x, inner.y, lw, inner.height),
            Rect::new(inner.x + lw, inner.y, inner.width - lw, inner.height),
        )
    } else {
        let lh = (inner.height / 2).clamp(3, 12).min(inner.height);
        (
            Rect::new(inner.x, inner.y, inner.width, lh),
            Rect::new(inner.x, inner.y + lh, inner.width, inner.height - lh),
        )
    }
}

fn preview_text(app: &App, v: &DispatchView, width: usize, theme: Theme) -> Vec<Line<'static>> {
    if let Some(e) = &v.error {
        vec![Line::from(Span::styled(
            format!("✗ {}", app.paths.show_in_text(&one_line(e))),
            theme.error(),
        ))]
    } else if let Some(p) = &v.preview {
        preview_lines(app, p, width, theme)
    } else {
        vec![Line::from(Span::styled(
            "waiting for the dry run…",
            theme.dim(),
        ))]
    }
}

/// How far the preview can scroll in the dispatch pane drawn in `body`.
pub fn preview_max_scroll(app: &App, v: &DispatchView, body: Rect) -> usize {
    let inner = layout::inner(body);
    if inner.width < 4 || inner.height < 3 {
        return 0;
    }
    let pin = layout::inner(split(inner).1);
    let n = preview_text(app, v, pin.width as usize, Theme::new(true)).len();
    n.saturating_sub(pin.height as usize)
}

pub fn draw_dispatch(frame: &mut Frame, r: Rect, app: &App, v: &DispatchView, theme: Theme) {
    let target = match (&v.chosen, v.use_actor) {
        (Some((_, name)), true) => format!("target {name}"),
        _ => "target auto".to_string(),
    };
    let inner = super::view_block(frame, r, &format!(" Dispatch · {target} "), theme);
    if inner.width < 4 || inner.height < 3 {
        return;
    }
    let (left, right) = split(inner);
    draw_target_choice(
        frame,
        Rect::new(left.x, left.y, left.width, 1),
        app,
        v,
        theme,
    );
    let editors = Rect::new(
        left.x,
        left.y + 1,
        left.width,
        left.height.saturating_sub(1),
    );
    draw_editors(frame, editors, v, theme);
    draw_preview(frame, right, app, v, theme);
}

/// The target switch: the chosen actor or `auto`, and the key that toggles them.
fn draw_target_choice(frame: &mut Frame, r: Rect, app: &App, v: &DispatchView, theme: Theme) {
    let alt = match &v.chosen {
        Some((id, name)) => {
            let (a, b) = if v.use_actor {
                ("◉", "○")
            } else {
                ("○", "◉")
            };
            format!("{a} {} ({})  {b} auto", one_line(name), one_line(id))
        }
        None => "◉ auto (no actor selected)".to_string(),
    };
    let key = app
        .keymap
        .key_label(&app.contexts(), "toggle_target")
        .map(|k| format!("  [{k}]"))
        .unwrap_or_default();
    frame.render_widget(
        Paragraph::new(Line::from(fit_spans(
            vec![Span::raw(alt), Span::styled(key, theme.dim())],
            r.width as usize,
        ))),
        r,
    );
}

/// The task, acceptance and constraints editors, the task taking what the other two leave.
fn draw_editors(frame: &mut Frame, r: Rect, v: &DispatchView, theme: Theme) {
    let h = r.height;
    let heights = if h >= 15 {
        [h - 10, 5, 5]
    } else {
        [h.div_ceil(3), h / 3, h - h.div_ceil(3) - h / 3]
    };
    let mut y = r.y;
    for ((title, t, f), hh) in [
        ("Task", &v.task, DispatchField::Task),
        ("Acceptance", &v.acceptance, DispatchField::Acceptance),
        ("Constraints", &v.constraints, DispatchField::Constraints),
    ]
    .into_iter()
    .zip(heights)
    {
        field_box(
            frame,
            Rect::new(r.x, y, r.width, hh),
            title,
            t,
            v.field == f,
            theme,
        );
        y += hh;
    }
}

/// The dry run's preview, titled with its state (loading, stale after an edit).
fn draw_preview(frame: &mut Frame, r: Rect, app: &App, v: &DispatchView, theme: Theme) {
    let focused = v.field == DispatchField::Preview;
    let mut title = " Preview (dry run) ".to_string();
    if v.loading {
        title = format!(" Preview {} ", super::spinner(app));
    } else if v.dirty {
        let k = app
            .keymap
            .key_label(&[Context::DispatchEdit], "preview")
            .unwrap_or_default();
        title = format!(" Preview (task edited: {k} to refresh) ");
    }
    if focused {
        title = format!(" ▶{title}");
    }
    let block = Block::bordered()
        .border_style(theme.border(focused))
        .title(Span::styled(title, theme.title(focused)));
    let inner = block.inner(r);
    frame.render_widget(block, r);
    let lines = preview_text(app, v, inner.width as usize, theme);
    super::scrolled(frame, inner, lines, v.scroll);
}
