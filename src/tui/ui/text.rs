//! Text helpers for drawing: display width, cutting to a width with `…`, match highlighting
//! (the index's own tokenizer decides what matched), wrapping styled text, and the short forms
//! of times and session ids. Everything here expects text that already went through
//! `knowledge::text::sanitize`.

use knowledge::text::snippet;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// Display width of a string in terminal cells.
pub fn width(s: &str) -> usize {
    Span::raw(s).width()
}

fn char_width(c: char) -> usize {
    let mut buf = [0u8; 4];
    width(c.encode_utf8(&mut buf))
}

/// `s` cut to at most `max` cells, ending in `…` when cut.
pub fn fit(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut w = 0;
    for c in s.chars() {
        let cw = char_width(c);
        if w + cw > max - 1 {
            break;
        }
        out.push(c);
        w += cw;
    }
    out.push('…');
    out
}

/// Spans cut to at most `max` cells in total, ending in `…` when cut.
pub fn fit_spans(spans: Vec<Span<'static>>, max: usize) -> Vec<Span<'static>> {
    let total: usize = spans.iter().map(|s| s.width()).sum();
    if total <= max {
        return spans;
    }
    if max == 0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut left = max - 1;
    let mut last_style = Style::default();
    for s in spans {
        if left == 0 {
            break;
        }
        last_style = s.style;
        let w = s.width();
        if w <= left {
            left -= w;
            out.push(s);
        } else {
            let mut part = String::new();
            let mut pw = 0;
            for c in s.content.chars() {
                let cw = char_width(c);
                if pw + cw > left {
                    break;
                }
                part.push(c);
                pw += cw;
            }
            out.push(Span::styled(part, s.style));
            left = 0;
        }
    }
    out.push(Span::styled("…", last_style));
    out
}

/// `text` split into spans with the words matching `terms` in `hl`.
pub fn highlighted(text: &str, terms: &[String], base: Style, hl: Style) -> Vec<Span<'static>> {
    let mut out = Vec::new();
    let mut at = 0;
    if !terms.is_empty() {
        for (s, e) in snippet::match_ranges(text, terms) {
            if s < at || e > text.len() || !text.is_char_boundary(s) || !text.is_char_boundary(e) {
                continue;
            }
            if s > at {
                out.push(Span::styled(text[at..s].to_string(), base));
            }
            out.push(Span::styled(text[s..e].to_string(), hl));
            at = e;
        }
    }
    if at < text.len() || out.is_empty() {
        out.push(Span::styled(text[at..].to_string(), base));
    }
    out
}

/// Whether any word of `text` matches `terms`.
pub fn has_match(text: &str, terms: &[String]) -> bool {
    !terms.is_empty() && !snippet::match_ranges(text, terms).is_empty()
}

/// Tabs as spaces (a terminal would move the cursor on a tab).
pub fn expand_tabs(s: &str) -> String {
    if s.contains('\t') {
        s.replace('\t', "    ")
    } else {
        s.to_string()
    }
}

/// Styled text wrapped to `width` cells, preferring to break after spaces.
pub fn wrap(spans: &[Span<'static>], width: usize) -> Vec<Line<'static>> {
    let cells: Vec<(char, Style, usize)> = spans
        .iter()
        .flat_map(|s| s.content.chars().map(move |c| (c, s.style, char_width(c))))
        .collect();
    if width == 0 {
        return vec![Line::default()];
    }
    let mut lines: Vec<Vec<(char, Style, usize)>> = Vec::new();
    let mut cur: Vec<(char, Style, usize)> = Vec::new();
    let mut cur_w = 0;
    for cell in cells {
        if cur_w + cell.2 > width && !cur.is_empty() {
            let split = cur
                .iter()
                .rposition(|c| c.0 == ' ')
                .filter(|&p| p > 0 && p + 1 < cur.len());
            let tail = match split {
                Some(p) => cur.split_off(p + 1),
                None => Vec::new(),
            };
            while cur.last().is_some_and(|c| c.0 == ' ') && cur.len() > 1 {
                cur.pop();
            }
            lines.push(std::mem::replace(&mut cur, tail));
            cur_w = cur.iter().map(|c| c.2).sum();
        }
        cur_w += cell.2;
        cur.push(cell);
    }
    lines.push(cur);
    lines.into_iter().map(group).collect()
}

fn group(cells: Vec<(char, Style, usize)>) -> Line<'static> {
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut buf = String::new();
    let mut style: Option<Style> = None;
    for (c, s, _) in cells {
        if style != Some(s) {
            if let Some(st) = style {
                spans.push(Span::styled(std::mem::take(&mut buf), st));
            }
            style = Some(s);
        }
        buf.push(c);
    }
    if let Some(st) = style {
        spans.push(Span::styled(buf, st));
    }
    Line::from(spans)
}

/// `2026-10-14T09:31:05.027Z` → `2026-10-14 09:31`.
pub fn short_time(t: &str) -> String {
    let t = knowledge::text::sanitize::one_line(t);
    if t.len() >= 16 && t.is_char_boundary(10) && t.is_char_boundary(16) {
        format!("{} {}", &t[..10], &t[11..16])
    } else {
        t
    }
}

/// A session id short enough for a list row: the first 8 characters, plus the agent part of a
/// subagent's id (`5af11f95/agent-a3f1c9`).
pub fn short_session(id: &str) -> String {
    let id = knowledge::text::sanitize::one_line(id);
    let (root, sub) = match id.split_once('/') {
        Some((r, s)) => (r, Some(s)),
        None => (id.as_str(), None),
    };
    let head: String = root.chars().take(8).collect();
    match sub {
        Some(s) => format!("{head}/{}", s.chars().take(12).collect::<String>()),
        None => head,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::Modifier;

    #[test]
    fn fit_cuts_with_an_ellipsis() {
        assert_eq!(fit("hello", 10), "hello");
        assert_eq!(fit("hello world", 6), "hello…");
        assert_eq!(fit("доступ к базе", 7), "доступ…");
        assert_eq!(fit("漢字漢字", 5), "漢字…");
        assert_eq!(fit("abc", 0), "");
        assert_eq!(fit("abc", 1), "…");
    }

    #[test]
    fn wrap_prefers_spaces_and_keeps_styles() {
        let b = Style::new().add_modifier(Modifier::BOLD);
        let spans = vec![
            Span::raw("one two "),
            Span::styled("three", b),
            Span::raw(" four"),
        ];
        let lines = wrap(&spans, 9);
        let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        assert_eq!(text, vec!["one two", "three", "four"]);
        assert_eq!(lines[1].spans[0].style, b);
        let lines = wrap(&[Span::raw("abcdefghij")], 4);
        assert_eq!(lines.len(), 3);
        assert!(wrap(&[Span::raw("x")], 0).len() == 1);
    }

    #[test]
    fn highlight_marks_stemmed_matches() {
        let terms = knowledge::text::tokens::query_terms("доступ");
        let hl = Style::new().add_modifier(Modifier::BOLD);
        let spans = highlighted("нет доступа к базе", &terms, Style::new(), hl);
        let marked: Vec<&str> = spans
            .iter()
            .filter(|s| s.style == hl)
            .map(|s| s.content.as_ref())
            .collect();
        assert_eq!(marked, vec!["доступа"]);
        assert!(has_match("нет доступа", &terms));
    }

    #[test]
    fn short_forms() {
        assert_eq!(short_time("2026-10-14T09:31:05.027Z"), "2026-10-14 09:31");
        assert_eq!(short_time("garbage"), "garbage");
        assert_eq!(
            short_session("5af11f95-d95e-4618/agent-a3f1c9e0b7d24e815"),
            "5af11f95/agent-a3f1c9"
        );
    }
}
