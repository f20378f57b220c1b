//! Turning one file into [`Chunk`]s.
//!
//! The structure comes from the original text (a grammar's symbols, Markdown headings, config
//! keys and sections); the stored text comes from a line-preserving redaction of the whole file,
//! so a multi-line secret (a PEM block) split across chunks is still hidden and `start_line` /
//! `end_line` always point at the same lines on disk. Lines no structured span covers (imports,
//! top-level statements, preambles) become window chunks; long spans are split into windows that
//! keep their symbol name. A chunk id is a hash of where the chunk is (root, path, symbol and part,
//! or the window's first line) and of its text, so an unchanged chunk keeps its id.

use std::collections::HashMap;

use sha2::{Digest, Sha256};

use super::lang::{self, FileKind, Lang};
use super::model::{Chunk, CodeIndexOptions};
use super::{syntax, textual};
use crate::text::redact::{self, TextKind};

/// A window never grows past this many bytes (it ends early instead).
const WINDOW_MAX_BYTES: usize = 16 * 1024;
/// A chunk's stored text is cut at this many bytes (a single enormous line).
const CHUNK_MAX_BYTES: usize = 64 * 1024;

/// A structured piece of a file, in 0-based inclusive line indices, before it gets its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    pub start: usize,
    pub end: usize,
    /// `symbol`, `doc`, `config` or `window`.
    pub source_kind: &'static str,
    pub symbol: Option<String>,
    pub symbol_kind: Option<String>,
}

impl Span {
    pub fn new(
        start: usize,
        end: usize,
        source_kind: &'static str,
        symbol: Option<String>,
        symbol_kind: Option<&str>,
    ) -> Self {
        Span {
            start,
            end: end.max(start),
            source_kind,
            symbol,
            symbol_kind: symbol_kind.map(str::to_string),
        }
    }
}

/// The chunks of one file and what making them took.
#[derive(Debug, Clone, Default)]
pub struct ChunkedFile {
    pub chunks: Vec<Chunk>,
    pub lines: u64,
    pub secrets: u64,
    /// The file has a grammar but parsing failed, so it was chunked by window.
    pub parse_fallback: bool,
}

/// Split text into lines: `\n` separated, a trailing `\r` dropped, no empty last line for a
/// final newline.
pub fn split_lines(text: &str) -> Vec<&str> {
    if text.is_empty() {
        return Vec::new();
    }
    let body = text.strip_suffix('\n').unwrap_or(text);
    body.split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect()
}

/// True when a line has something worth indexing (a letter or digit).
pub fn meaningful(line: &str) -> bool {
    line.chars().any(char::is_alphanumeric)
}

/// How redaction reads a file of this kind: in source code only literals hold secrets, in
/// config and shell files every value does, anything else is prose.
pub fn redaction_kind(kind: FileKind) -> TextKind {
    match kind {
        FileKind::Code(Lang::Bash) | FileKind::Config(_) => TextKind::Config,
        FileKind::Code(l) => TextKind::Code {
            single_quoted_strings: matches!(
                l,
                Lang::Python | Lang::JavaScript | Lang::TypeScript | Lang::Tsx | Lang::Php
            ),
        },
        FileKind::Markdown | FileKind::Text => TextKind::Prose,
    }
}

/// The kind of a file at root-relative (or any) `path` with this `content`, for redaction.
pub fn file_text_kind(path: &str, content: &str) -> TextKind {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let head_end = content
        .char_indices()
        .nth(256)
        .map_or(content.len(), |(i, _)| i);
    redaction_kind(lang::file_kind(name, &content[..head_end]))
}

/// Redact a file's `text` as its `kind` reads, keeping its line structure: returns exactly one
/// output line per input line (see [`split_lines`]) and the number of values replaced.
pub fn redact_lines(text: &str, kind: TextKind) -> (Vec<String>, u64) {
    let (whole, count) = redact::redact_cow_as(text, kind);
    // Redaction never adds or removes a line (a multi-line secret becomes one marker a line).
    let lines = split_lines(&whole)
        .into_iter()
        .map(str::to_string)
        .collect();
    (lines, count as u64)
}

/// Chunk one file. `root` is the canonical root, `rel` the root-relative path.
pub fn chunk_file(root: &str, rel: &str, content: &str, opts: &CodeIndexOptions) -> ChunkedFile {
    let original = split_lines(content);
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let head_end = content
        .char_indices()
        .nth(256)
        .map_or(content.len(), |(i, _)| i);
    let kind = lang::file_kind(name, &content[..head_end]);
    let text_kind = redaction_kind(kind);
    let (red, secrets) = redact_lines(content, text_kind);
    let mut parse_fallback = false;
    let (mut spans, gap_kind) = match kind {
        FileKind::Code(l) => match syntax::symbol_spans(l, content, &original) {
            Some(s) => (s, "window"),
            None => {
                parse_fallback = true;
                (Vec::new(), "window")
            }
        },
        FileKind::Markdown => (textual::markdown_spans(&original), "doc"),
        FileKind::Config(f) => (textual::config_spans(f, &original), "config"),
        FileKind::Text => (Vec::new(), "window"),
    };
    let n = original.len();
    spans.retain(|s| s.start < n);
    for s in &mut spans {
        s.end = s.end.min(n.saturating_sub(1));
    }
    let mut covered = vec![false; n];
    for s in &spans {
        for c in &mut covered[s.start..=s.end] {
            *c = true;
        }
    }
    let mut gaps = Vec::new();
    let mut i = 0;
    while i < n {
        if covered[i] {
            i += 1;
            continue;
        }
        let start = i;
        while i < n && !covered[i] {
            i += 1;
        }
        if let Some((s, e)) = trim_range(&original, start, i - 1) {
            gaps.push(Span::new(s, e, gap_kind, None, None));
        }
    }
    spans.extend(gaps);
    spans.sort_by_key(|s| (s.start, s.end));

    let mut out = ChunkedFile {
        lines: n as u64,
        secrets,
        parse_fallback,
        ..ChunkedFile::default()
    };
    let mut seen: HashMap<String, u32> = HashMap::new();
    for span in spans {
        let limit = match span.source_kind {
            "window" => opts.window_lines,
            "symbol" => opts.symbol_max_lines,
            _ => opts.window_lines * 2,
        }
        .max(1);
        let parts = if span.end - span.start < limit {
            vec![(span.start, span.end)]
        } else {
            windows(&red, span.start, span.end, opts)
        };
        let split = parts.len() > 1;
        for (part, (s, e)) in parts.into_iter().enumerate() {
            let Some((s, e)) = trim_range(&original, s, e) else {
                continue;
            };
            let text = join_capped(&red[s..=e]);
            let symbol = span
                .symbol
                .as_deref()
                .map(|sym| redact::redact_cow_as(sym, text_kind).0.into_owned());
            let place = match (&symbol, split) {
                (Some(sym), true) => format!("{sym}#{part}"),
                (Some(sym), false) => sym.clone(),
                (None, _) => format!("@{}", s + 1),
            };
            let key = format!("{root}\0{rel}\0{}\0{place}\0{text}", span.source_kind);
            let n_seen = seen.entry(key.clone()).or_insert(0);
            *n_seen += 1;
            let id_input = if *n_seen > 1 {
                format!("{key}\0{n_seen}")
            } else {
                key
            };
            out.chunks.push(Chunk {
                chunk_id: chunk_id(&id_input),
                path: rel.to_string(),
                root: root.to_string(),
                start_line: s as u64 + 1,
                end_line: e as u64 + 1,
                source_kind: span.source_kind.to_string(),
                symbol,
                symbol_kind: span.symbol_kind.clone(),
                text,
            });
        }
    }
    out
}

/// First 16 hex digits of the SHA-256 of `input`.
fn chunk_id(input: &str) -> String {
    let digest = Sha256::digest(input.as_bytes());
    digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// Narrow `[start, end]` by its blank lines at both ends; `None` when no line in it is
/// [`meaningful`] (a lone `}` is kept inside a range, but is not a chunk by itself).
pub fn trim_range<S: AsRef<str>>(lines: &[S], start: usize, end: usize) -> Option<(usize, usize)> {
    let end = end.min(lines.len().checked_sub(1)?);
    if start > end || !(start..=end).any(|i| meaningful(lines[i].as_ref())) {
        return None;
    }
    let blank = |i: usize| lines[i].as_ref().trim().is_empty();
    let s = (start..=end).find(|&i| !blank(i))?;
    let e = (s..=end).rev().find(|&i| !blank(i))?;
    Some((s, e))
}

/// Windows of `opts.window_lines` lines (fewer when they grow past [`WINDOW_MAX_BYTES`]) with
/// `opts.window_overlap` lines of overlap, covering `[start, end]`.
fn windows(
    lines: &[String],
    start: usize,
    end: usize,
    opts: &CodeIndexOptions,
) -> Vec<(usize, usize)> {
    let size = opts.window_lines.max(1);
    let overlap = opts.window_overlap.min(size / 2);
    let mut out = Vec::new();
    let mut s = start;
    loop {
        let mut e = s;
        let mut bytes = lines.get(s).map_or(0, String::len);
        while e < end && e + 1 - s < size {
            let next = lines.get(e + 1).map_or(0, String::len);
            if bytes + next > WINDOW_MAX_BYTES {
                break;
            }
            bytes += next;
            e += 1;
        }
        out.push((s, e));
        if e >= end {
            break;
        }
        let back = overlap.min(e - s);
        s = (e + 1 - back).max(s + 1);
    }
    out
}

/// Lines joined with `\n`, cut to [`CHUNK_MAX_BYTES`] at a char boundary.
fn join_capped(lines: &[String]) -> String {
    let mut text = lines.join("\n");
    if text.len() > CHUNK_MAX_BYTES {
        let mut cut = CHUNK_MAX_BYTES;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> CodeIndexOptions {
        CodeIndexOptions::default()
    }

    #[test]
    fn lines_split_like_an_editor() {
        assert_eq!(split_lines("a\r\nb\n"), vec!["a", "b"]);
        assert_eq!(split_lines("a\n\nb"), vec!["a", "", "b"]);
        assert!(split_lines("").is_empty());
    }

    #[test]
    fn redaction_keeps_line_count() {
        let text = "key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\nabc\n-----END RSA PRIVATE KEY-----\npassword=hunter2\nok\n";
        let (lines, n) = redact_lines(text, TextKind::Config);
        assert_eq!(lines.len(), split_lines(text).len());
        assert!(n >= 2);
        let joined = lines.join("\n");
        assert!(!joined.contains("hunter2") && !joined.contains("MIIEpAIBAAKCAQEA7"));
        assert_eq!(lines[6], "ok");
    }

    #[test]
    fn text_files_get_overlapping_windows() {
        let text: String = (1..=100).map(|i| format!("line {i}\n")).collect();
        let f = chunk_file("/r", "notes.txt", &text, &opts());
        let ranges: Vec<(u64, u64)> = f
            .chunks
            .iter()
            .map(|c| (c.start_line, c.end_line))
            .collect();
        assert_eq!(ranges, vec![(1, 40), (36, 75), (71, 100)]);
        assert!(f.chunks.iter().all(|c| c.source_kind == "window"));
    }

    #[test]
    fn ids_are_stable_and_unique() {
        let text = "a\n\nb\n\na\n";
        let one = chunk_file("/r", "x.txt", text, &opts());
        let two = chunk_file("/r", "x.txt", text, &opts());
        assert_eq!(one.chunks, two.chunks);
        let other = chunk_file("/q", "x.txt", text, &opts());
        assert_ne!(one.chunks[0].chunk_id, other.chunks[0].chunk_id);
        assert_eq!(one.chunks[0].chunk_id.len(), 16);
    }

    #[test]
    fn weird_input_does_not_panic() {
        for text in [
            "",
            "\n\n\n",
            "\u{0}\u{1}",
            "fn (",
            "class {{{{",
            "ü\r\n\r\n",
        ] {
            for name in ["a.rs", "a.py", "a.md", "a.json", "a.yaml", "a.php", "a.txt"] {
                let _ = chunk_file("/r", name, text, &opts());
            }
        }
        let long_line = "x".repeat(200_000);
        let f = chunk_file("/r", "min.json", &long_line, &opts());
        assert!(f.chunks.iter().all(|c| c.text.len() <= CHUNK_MAX_BYTES));
    }
}
