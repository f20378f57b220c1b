//! Spans for documents and config files, found with line scanners rather than grammars.
//!
//! Markdown is cut at ATX headings (`#` … `######`, outside fenced code), each section named by
//! its heading. YAML and JSON are cut at their top-level keys, TOML and INI at `[section]`
//! headers; comment lines right above a key or section go with it. A file with fewer than two
//! such anchors gets no spans here and is chunked by window. `.env` and `.properties` files are
//! always windows (one key per line is too small to be a chunk).

use super::chunk::{meaningful, Span};
use super::lang::ConfigFormat;

/// One section per heading; text before the first heading is a nameless `doc` span.
pub fn markdown_spans(lines: &[&str]) -> Vec<Span> {
    let mut heads: Vec<(usize, String)> = Vec::new();
    let mut fence: Option<char> = None;
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        let indent = line.len() - t.len();
        if indent <= 3 && (t.starts_with("```") || t.starts_with("~~~")) {
            let c = t.chars().next().unwrap_or('`');
            fence = match fence {
                None => Some(c),
                Some(open) if open == c => None,
                other => other,
            };
            continue;
        }
        if fence.is_some() || indent > 3 {
            continue;
        }
        if let Some(text) = atx_heading(t) {
            heads.push((i, text));
        }
    }
    let mut spans = Vec::new();
    if lines.is_empty() {
        return spans;
    }
    let first = heads.first().map_or(lines.len(), |h| h.0);
    if first > 0 && lines[..first].iter().any(|l| meaningful(l)) {
        spans.push(Span::new(0, first - 1, "doc", None, None));
    }
    for (k, (start, text)) in heads.iter().enumerate() {
        let end = heads.get(k + 1).map_or(lines.len(), |h| h.0) - 1;
        let symbol = (!text.is_empty()).then(|| text.clone());
        spans.push(Span::new(*start, end, "doc", symbol, Some("heading")));
    }
    spans
}

fn atx_heading(t: &str) -> Option<String> {
    let level = t.chars().take_while(|&c| c == '#').count();
    if level == 0 || level > 6 {
        return None;
    }
    let rest = &t[level..];
    if !(rest.is_empty() || rest.starts_with(' ') || rest.starts_with('\t')) {
        return None;
    }
    let text = rest.trim().trim_end_matches('#').trim_end();
    Some(text.chars().take(200).collect())
}

/// Key or section spans of a config file; empty when the file has no usable structure.
pub fn config_spans(format: ConfigFormat, lines: &[&str]) -> Vec<Span> {
    let (anchors, kind) = match format {
        ConfigFormat::Yaml => (yaml_keys(lines), "key"),
        ConfigFormat::Json => (json_keys(lines), "key"),
        ConfigFormat::Toml | ConfigFormat::Ini => (section_headers(lines), "section"),
        ConfigFormat::KeyValue => return Vec::new(),
    };
    if anchors.len() < 2 && !matches!(format, ConfigFormat::Toml | ConfigFormat::Ini) {
        return Vec::new();
    }
    if anchors.is_empty() {
        return Vec::new();
    }
    let comment = |l: &str| {
        let t = l.trim_start();
        t.starts_with('#') || t.starts_with(';') || t.starts_with("//")
    };
    // Pull each anchor up over the comment lines right above it.
    let starts: Vec<usize> = anchors
        .iter()
        .enumerate()
        .map(|(k, (line, _))| {
            let floor = if k == 0 { 0 } else { anchors[k - 1].0 + 1 };
            let mut s = *line;
            while s > floor && comment(lines[s - 1]) {
                s -= 1;
            }
            s
        })
        .collect();
    let mut spans = Vec::new();
    if starts[0] > 0 && lines[..starts[0]].iter().any(|l| meaningful(l)) {
        spans.push(Span::new(0, starts[0] - 1, "config", None, None));
    }
    for (k, (_, name)) in anchors.iter().enumerate() {
        let end = starts.get(k + 1).map_or(lines.len(), |&s| s) - 1;
        spans.push(Span::new(
            starts[k],
            end,
            "config",
            Some(name.clone()),
            Some(kind),
        ));
    }
    spans
}

/// Top-level YAML mapping keys (column 0, not comments, list items or directives).
fn yaml_keys(lines: &[&str]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(first) = line.chars().next() else {
            continue;
        };
        if first.is_whitespace() || matches!(first, '#' | '-' | '%' | '!' | '{' | '[' | '.') {
            continue;
        }
        let key = if let Some(rest) = line.strip_prefix('"').or_else(|| line.strip_prefix('\'')) {
            let quote = first;
            let Some(close) = rest.find(quote) else {
                continue;
            };
            if !rest[close + 1..].trim_start().starts_with(':') {
                continue;
            }
            &rest[..close]
        } else {
            let Some(colon) = line.find(':') else {
                continue;
            };
            let after = &line[colon + 1..];
            if !(after.is_empty() || after.starts_with(' ') || after.starts_with('\t')) {
                continue;
            }
            line[..colon].trim()
        };
        if !key.is_empty() {
            out.push((i, key.chars().take(200).collect()));
        }
    }
    out
}

/// `[section]` / `[[array.table]]` header lines.
fn section_headers(lines: &[&str]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim();
        let Some(inner) = t.strip_prefix('[') else {
            continue;
        };
        let inner = inner.strip_prefix('[').unwrap_or(inner);
        let Some(close) = inner.find(']') else {
            continue;
        };
        let name = inner[..close].trim();
        let tail = inner[close..].trim_start_matches(']').trim();
        if name.is_empty() || !(tail.is_empty() || tail.starts_with('#') || tail.starts_with(';')) {
            continue;
        }
        out.push((i, name.chars().take(200).collect()));
    }
    out
}

/// Keys of the top-level JSON object, with the line each starts on.
fn json_keys(lines: &[&str]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut depth: i64 = 0;
    let mut in_str = false;
    let mut escaped = false;
    let mut current = String::new();
    let mut str_line = 0;
    // A string just closed at depth 1: waiting to see whether a `:` follows.
    let mut pending: Option<(usize, String)> = None;
    for (i, line) in lines.iter().enumerate() {
        for c in line.chars() {
            if in_str {
                if escaped {
                    escaped = false;
                    current.push(c);
                } else if c == '\\' {
                    escaped = true;
                } else if c == '"' {
                    in_str = false;
                    if depth == 1 {
                        pending = Some((str_line, std::mem::take(&mut current)));
                    }
                } else if depth == 1 && current.len() < 200 {
                    current.push(c);
                }
                continue;
            }
            if c.is_whitespace() {
                continue;
            }
            if c == ':' {
                if let Some(p) = pending.take() {
                    out.push(p);
                }
                continue;
            }
            pending = None;
            match c {
                '"' => {
                    in_str = true;
                    current.clear();
                    str_line = i;
                }
                '{' | '[' => depth += 1,
                '}' | ']' => depth -= 1,
                _ => {}
            }
        }
    }
    // Keys that share a line with the previous key (minified JSON) add no structure.
    out.dedup_by(|b, a| a.0 == b.0);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(spans: &[Span]) -> Vec<(Option<String>, usize, usize)> {
        spans
            .iter()
            .map(|s| (s.symbol.clone(), s.start + 1, s.end + 1))
            .collect()
    }

    #[test]
    fn markdown_by_heading() {
        let md = [
            "intro",
            "# Title",
            "text",
            "```",
            "# not a heading",
            "```",
            "## Setup ##",
            "x",
        ];
        let spans = markdown_spans(&md);
        assert_eq!(
            named(&spans),
            vec![
                (None, 1, 1),
                (Some("Title".into()), 2, 6),
                (Some("Setup".into()), 7, 8)
            ]
        );
    }

    #[test]
    fn yaml_by_top_level_key() {
        let y = [
            "# db settings",
            "database:",
            "  host: x",
            "",
            "cache:",
            "  ttl: 5",
            "- item",
        ];
        let spans = config_spans(ConfigFormat::Yaml, &y);
        assert_eq!(
            named(&spans),
            vec![
                (Some("database".into()), 1, 4),
                (Some("cache".into()), 5, 7)
            ]
        );
    }

    #[test]
    fn toml_and_json() {
        let t = [
            "name = 'x'",
            "",
            "[server]",
            "port = 1",
            "# next",
            "[[bin]]",
            "path = 'a'",
        ];
        let spans = config_spans(ConfigFormat::Toml, &t);
        assert_eq!(
            named(&spans),
            vec![
                (None, 1, 2),
                (Some("server".into()), 3, 4),
                (Some("bin".into()), 5, 7)
            ]
        );
        let j = [
            "{",
            "  \"a\": {\"x\": 1},",
            "  \"b\": [",
            "    \"s:t\"",
            "  ]",
            "}",
        ];
        let spans = config_spans(ConfigFormat::Json, &j);
        assert_eq!(
            named(&spans),
            vec![(Some("a".into()), 2, 2), (Some("b".into()), 3, 6)]
        );
        assert!(config_spans(ConfigFormat::Json, &["{\"a\":1,\"b\":2}"]).is_empty());
    }
}
