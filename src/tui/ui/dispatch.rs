//! The dispatch pane (task, acceptance and constraints editors; the dry run's target, context
//! pack, handoff package, warnings and risks) and the outbox view (every package, newest first,
//! and one package in full). Documents are drawn from their JSON so the pane shows exactly what
//! would be written.

use knowledge::text::sanitize::{for_terminal, one_line};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};
use ratatui::Frame;
use ratatui_textarea::TextArea;
use serde_json::Value;

use super::layout;
use super::text::{fit, fit_spans, short_time, wrap};
use super::theme::Theme;
use crate::tui::keymap::Context;
use crate::tui::state::{App, DispatchField, DispatchView, OutboxView};

fn s(v: &Value, ptr: &str) -> Option<String> {
    v.pointer(ptr).and_then(Value::as_str).map(one_line)
}

fn strings(v: &Value, ptr: &str) -> Vec<String> {
    v.pointer(ptr)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|x| match x.as_str() {
                    Some(t) => one_line(t),
                    None => one_line(&x.to_string()),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The dry run's response as readable rows.
pub fn preview_lines(app: &App, p: &Value, width: usize, theme: Theme) -> Vec<Line<'static>> {
    let mut out: Vec<Line<'static>> = Vec::new();
    let w = width.max(10);
    let head = |t: &str| Line::from(Span::styled(t.to_string(), theme.title(true)));
    let kv = |out: &mut Vec<Line<'static>>, k: &str, v: String| {
        // A key column, then the value wrapped with a hanging indent.
        let kw = (k.chars().count() + 3).max(14);
        let vw = w.saturating_sub(kw).max(8);
        let value = app.paths.show_in_text(&v);
        for (i, line) in wrap(&[Span::raw(value)], vw).into_iter().enumerate() {
            let key = if i == 0 {
                format!("  {k:<width$}", width = kw - 2)
            } else {
                " ".repeat(kw)
            };
            let mut spans = vec![Span::styled(key, theme.dim())];
            spans.extend(line.spans);
            out.push(Line::from(spans));
        }
    };
    out.push(head("TARGET"));
    match p.get("target").filter(|t| !t.is_null()) {
        Some(t) => {
            let who: Vec<String> = ["/name", "/kind", "/source"]
                .iter()
                .filter_map(|p| s(t, p))
                .filter(|x| !x.is_empty())
                .collect();
            kv(&mut out, "actor", who.join(" · "));
            if let Some(title) = s(t, "/title").filter(|x| !x.is_empty()) {
                kv(&mut out, "worked on", format!("«{title}»"));
            }
            if let Some(ws) = s(t, "/workspace").filter(|x| !x.is_empty()) {
                kv(&mut out, "workspace", ws);
            }
            kv(&mut out, "id", s(t, "/actor_id").unwrap_or_default());
            let avail = t
                .pointer("/dispatch/available")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            kv(
                &mut out,
                "dispatch",
                format!(
                    "{} {}",
                    s(t, "/dispatch/mode").unwrap_or_default(),
                    if avail {
                        "✓ available here"
                    } else {
                        "✗ not available here"
                    }
                ),
            );
            for why in strings(t, "/why") {
                kv(&mut out, "why", why);
            }
        }
        None => kv(&mut out, "actor", "none found".to_string()),
    }
    if let Some(cp) = p.get("context_pack").filter(|c| !c.is_null()) {
        out.push(head("CONTEXT PACK"));
        kv(&mut out, "goal", s(cp, "/goal").unwrap_or_default());
        for a in strings(cp, "/acceptance") {
            kv(&mut out, "acceptance", format!("• {a}"));
        }
        for c in strings(cp, "/constraints") {
            kv(&mut out, "constraint", format!("• {c}"));
        }
        for e in cp
            .get("prior_episodes")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let id = s(e, "/id").unwrap_or_else(|| {
                format!(
                    "ep:{}:{}",
                    s(e, "/session_id").unwrap_or_default(),
                    e.get("seq").and_then(Value::as_u64).unwrap_or(0)
                )
            });
            let snip = s(e, "/snippet").unwrap_or_default();
            kv(&mut out, "episode", format!("{id} {snip}"));
        }
        for c in cp
            .get("code_refs")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            kv(
                &mut out,
                "code",
                format!(
                    "{}:{}",
                    s(c, "/path").unwrap_or_default(),
                    c.get("start_line").and_then(Value::as_u64).unwrap_or(0)
                ),
            );
        }
        for sk in cp
            .get("skills")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            kv(
                &mut out,
                "skill",
                format!(
                    "{} ×{}",
                    s(sk, "/name").unwrap_or_default(),
                    sk.get("uses").and_then(Value::as_u64).unwrap_or(0)
                ),
            );
        }
        for r in strings(cp, "/risks") {
            kv(&mut out, "risk", format!("• {r}"));
        }
    }
    if let Some(h) = p.get("handoff").filter(|h| !h.is_null()) {
        out.push(head("HANDOFF PACKAGE"));
        kv(
            &mut out,
            "execution",
            s(h, "/execution").unwrap_or_else(|| "not_executed".into()),
        );
        kv(
            &mut out,
            "assignment",
            s(h, "/assignment_id").unwrap_or_default(),
        );
        kv(&mut out, "requires", s(h, "/requires").unwrap_or_default());
        for (i, call) in h
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            kv(
                &mut out,
                "tool call",
                format!("{}. {}", i + 1, s(call, "/tool").unwrap_or_default()),
            );
            if let Some(args) = call.get("arguments").and_then(Value::as_object) {
                for (k, v) in args {
                    let text = match v.as_str() {
                        Some(t) => one_line(t),
                        None => one_line(&v.to_string()),
                    };
                    kv(&mut out, &format!("  {}", one_line(k)), text);
                }
            }
        }
    }
    let warnings = p.get("warnings").and_then(Value::as_array);
    for wv in warnings.into_iter().flatten() {
        let m = s(wv, "/message").unwrap_or_default();
        out.push(Line::from(Span::styled(
            fit(&format!("⚠ {}", app.paths.show_in_text(&m)), w),
            theme.warn(),
        )));
    }
    for e in p
        .get("errors")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let m = s(e, "/message").unwrap_or_default();
        out.push(Line::from(Span::styled(
            fit(&format!("✗ {}", app.paths.show_in_text(&m)), w),
            theme.error(),
        )));
    }
    out
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

/// How far an outbox package can scroll in `body`.
pub fn package_max_scroll(app: &App, doc: &Value, body: Rect) -> usize {
    let inner = layout::inner(body);
    let n = package_lines(app, doc, inner.width as usize, Theme::new(true)).len();
    n.saturating_sub(inner.height as usize)
}

pub fn draw_dispatch(frame: &mut Frame, r: Rect, app: &App, v: &DispatchView, theme: Theme) {
    let target = match (&v.chosen, v.use_actor) {
        (Some((_, name)), true) => format!("target {name}"),
        _ => "target auto".to_string(),
    };
    let block = Block::bordered()
        .border_style(theme.border(true))
        .title(Span::styled(
            fit(
                &format!(" Dispatch · {target} "),
                r.width.saturating_sub(4) as usize,
            ),
            theme.title(true),
        ));
    let inner = block.inner(r);
    frame.render_widget(block, r);
    if inner.width < 4 || inner.height < 3 {
        return;
    }
    let (left, right) = split(inner);
    // Target line, then the three editors.
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
            left.width as usize,
        ))),
        Rect::new(left.x, left.y, left.width, 1),
    );
    let rest = Rect::new(
        left.x,
        left.y + 1,
        left.width,
        left.height.saturating_sub(1),
    );
    let h = rest.height;
    let hs = if h >= 15 {
        [h - 10, 5, 5]
    } else {
        [h.div_ceil(3), h / 3, h - h.div_ceil(3) - h / 3]
    };
    let mut y = rest.y;
    for ((title, t, f), hh) in [
        ("Task", &v.task, DispatchField::Task),
        ("Acceptance", &v.acceptance, DispatchField::Acceptance),
        ("Constraints", &v.constraints, DispatchField::Constraints),
    ]
    .into_iter()
    .zip(hs)
    {
        field_box(
            frame,
            Rect::new(rest.x, y, rest.width, hh),
            title,
            t,
            v.field == f,
            theme,
        );
        y += hh;
    }
    // The preview.
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
    let pblock = Block::bordered()
        .border_style(theme.border(focused))
        .title(Span::styled(title, theme.title(focused)));
    let pin = pblock.inner(right);
    frame.render_widget(pblock, right);
    let lines = preview_text(app, v, pin.width as usize, theme);
    let max = lines.len().saturating_sub(pin.height as usize);
    let rows: Vec<Line> = lines.into_iter().skip(v.scroll.min(max)).collect();
    frame.render_widget(Paragraph::new(rows), pin);
}

/// A handoff package for review: its decision, its file, then target, context pack and the
/// package itself the way the dispatch preview shows them.
pub fn package_lines(app: &App, doc: &Value, width: usize, theme: Theme) -> Vec<Line<'static>> {
    let mut out = vec![Line::from(Span::styled("REVIEW", theme.title(true)))];
    let status = s(doc, "/review/status").unwrap_or_default();
    let style = match status.as_str() {
        "approved" => theme.ok(),
        "rejected" => theme.error(),
        _ => theme.warn(),
    };
    out.push(Line::from(vec![
        Span::styled(format!("  {:<12}", "status"), theme.dim()),
        Span::styled(status, style),
    ]));
    for (k, ptr) in [
        ("decided by", "/review/decided_by"),
        ("decided at", "/review/decided_at"),
        ("reason", "/review/reason"),
        ("created", "/created_at"),
        ("file", "/path"),
    ] {
        if let Some(v) = s(doc, ptr) {
            let v = app.paths.show_in_text(&v);
            out.extend(wrap(
                &[
                    Span::styled(format!("  {k:<12}"), theme.dim()),
                    Span::raw(v),
                ],
                width,
            ));
        }
    }
    let view = serde_json::json!({
        "target": doc.get("target"),
        "context_pack": doc.get("context_pack"),
        "handoff": doc,
    });
    out.extend(preview_lines(app, &view, width, theme));
    out.push(Line::default());
    out.push(Line::from(Span::styled("TASK", theme.title(true))));
    let task = doc
        .pointer("/task/text")
        .and_then(Value::as_str)
        .unwrap_or("");
    for l in for_terminal(task).lines() {
        out.extend(wrap(&[Span::raw(format!("  {l}"))], width));
    }
    out
}

pub fn draw_outbox(frame: &mut Frame, r: Rect, app: &App, v: &OutboxView, theme: Theme) {
    if let Some(d) = &v.detail {
        let block = Block::bordered()
            .border_style(theme.border(true))
            .title(Span::styled(
                fit(
                    &format!(" Package {} ", one_line(&d.id)),
                    (r.width as usize).saturating_sub(2),
                ),
                theme.title(true),
            ));
        let inner = block.inner(r);
        frame.render_widget(block, r);
        let lines: Vec<Line> = if let Some(e) = &d.error {
            vec![Line::from(Span::styled(
                format!("✗ {}", one_line(e)),
                theme.error(),
            ))]
        } else if let Some(doc) = &d.doc {
            package_lines(app, doc, inner.width as usize, theme)
        } else {
            vec![Line::from(Span::styled(
                format!("{} loading…", super::spinner(app)),
                theme.accent(),
            ))]
        };
        let max = lines.len().saturating_sub(inner.height as usize);
        let rows: Vec<Line> = lines.into_iter().skip(d.scroll.min(max)).collect();
        frame.render_widget(Paragraph::new(rows), inner);
        return;
    }
    let title = format!(
        " Outbox · {} package{} · {}/outbox ",
        v.entries.len(),
        if v.entries.len() == 1 { "" } else { "s" },
        app.paths
            .show(&one_line(app.data_dir.trim_end_matches('/')))
    );
    let block = Block::bordered()
        .border_style(theme.border(true))
        .title(Span::styled(
            fit(&title, r.width.saturating_sub(4) as usize),
            theme.title(true),
        ));
    let inner = block.inner(r);
    frame.render_widget(block, r);
    if inner.height == 0 {
        return;
    }
    let w = inner.width as usize;
    let mut lines = Vec::new();
    if let Some(e) = &v.error {
        lines.push(Line::from(Span::styled(
            format!("✗ {}", app.paths.show_in_text(&one_line(e))),
            theme.error(),
        )));
    } else if v.loading && v.entries.is_empty() {
        lines.push(Line::from(Span::styled(
            format!("{} loading…", super::spinner(app)),
            theme.accent(),
        )));
    } else if v.entries.is_empty() {
        lines.push(Line::from(Span::styled(
            "the outbox is empty: commit a dispatch to write a package here",
            theme.dim(),
        )));
    } else {
        let cols = [16usize, 17, 28, 18];
        let head = ["status", "created", "id", "target"];
        let mut h: Vec<Span> = head
            .iter()
            .zip(cols)
            .map(|(t, c)| Span::styled(format!("  {:<c$}", t, c = c - 2), theme.dim()))
            .collect();
        h.push(Span::styled("  task", theme.dim()));
        lines.push(Line::from(fit_spans(h, w)));
        let rows = (inner.height as usize).saturating_sub(1);
        for (i, e) in v
            .entries
            .iter()
            .enumerate()
            .skip(v.cursor.offset)
            .take(rows)
        {
            let selected = i == v.cursor.selected;
            let sstyle = match e.status.as_str() {
                "approved" => theme.ok(),
                "rejected" => theme.error(),
                _ => theme.warn(),
            };
            let cell = |t: &str, c: usize| format!("{:<c$}", fit(t, c - 1), c = c);
            let spans = vec![
                Span::raw(if selected { "▶ " } else { "  " }),
                Span::styled(cell(&e.status, cols[0] - 2), sstyle),
                Span::styled(cell(&short_time(&e.created_at), cols[1]), theme.dim()),
                Span::styled(cell(&e.id, cols[2]), theme.accent()),
                Span::raw(cell(&e.target, cols[3])),
                Span::raw(e.task.clone()),
            ];
            let mut line = Line::from(fit_spans(spans, w));
            if selected {
                line = line.patch_style(theme.selected(true));
            }
            lines.push(line);
        }
    }
    frame.render_widget(Paragraph::new(lines), inner);
}
