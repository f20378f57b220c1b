//! Streaming line reader for transcript files.
//!
//! Transcripts are append-only JSONL files that can be huge (40 MB+), contain single lines of many
//! megabytes (base64 screenshots), and are read while the agent is still writing them. This reader
//! therefore never buffers more than `max_line_bytes` of one line (longer lines are skipped and
//! reported by length only), and never consumes a trailing line that has no `'\n'` yet: the
//! returned offset points just after the last complete line so an incremental run resumes there.

use std::io::{self, Read, Seek, SeekFrom};

/// Default per-line cap: lines longer than this are skipped as [`LineItem::Oversized`].
pub const DEFAULT_MAX_LINE_BYTES: usize = 8 * 1024 * 1024;

/// Size of the read buffer.
const CHUNK: usize = 64 * 1024;

/// One physical line handed to the callback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineItem<'a> {
    /// A complete line (without its `'\n'` and a trailing `'\r'`). NUL bytes and broken JSON
    /// are passed through for the parser to count.
    Line(&'a [u8]),
    /// A complete line longer than the cap; its content was not kept. `len` excludes the `'\n'`.
    Oversized { len: u64 },
}

/// Reads complete lines from `reader`, starting at byte `start_offset` (the reader is seeked
/// there, so it may be a freshly opened file or already positioned).
///
/// Empty lines are skipped silently. Returns the offset just after the last complete line: a
/// trailing line without `'\n'` is not consumed (not even reported).
pub fn read_lines<R: Read + Seek>(
    reader: R,
    start_offset: u64,
    max_line_bytes: usize,
    f: impl FnMut(LineItem<'_>),
) -> io::Result<u64> {
    read_impl(reader, start_offset, max_line_bytes, false, false, f)
}

/// Like [`read_lines`] but empty lines are delivered too (as empty [`LineItem::Line`]s): in a
/// Markdown history a blank line is structure (Aider).
pub fn read_lines_with_blanks<R: Read + Seek>(
    reader: R,
    start_offset: u64,
    max_line_bytes: usize,
    f: impl FnMut(LineItem<'_>),
) -> io::Result<u64> {
    read_impl(reader, start_offset, max_line_bytes, false, true, f)
}

/// Like [`read_lines`] but also delivers a trailing line without `'\n'` (for files known to be
/// finished, e.g. one-off tools and tests). Returns the end offset of everything consumed.
pub fn read_all_lines<R: Read + Seek>(
    reader: R,
    start_offset: u64,
    max_line_bytes: usize,
    f: impl FnMut(LineItem<'_>),
) -> io::Result<u64> {
    read_impl(reader, start_offset, max_line_bytes, true, false, f)
}

fn read_impl<R: Read + Seek>(
    mut reader: R,
    start_offset: u64,
    max_line_bytes: usize,
    deliver_partial: bool,
    keep_empty: bool,
    mut f: impl FnMut(LineItem<'_>),
) -> io::Result<u64> {
    reader.seek(SeekFrom::Start(start_offset))?;
    let mut buf = vec![0u8; CHUNK];
    // The current line: kept while under the cap, only counted once over it.
    let mut line: Vec<u8> = Vec::new();
    let mut line_len: u64 = 0;
    let mut oversized = false;
    let mut pos = start_offset;
    let mut committed = start_offset;
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let mut chunk = buf.get(..n).unwrap_or(&[]);
        while !chunk.is_empty() {
            let nl = chunk.iter().position(|&b| b == b'\n');
            let take = nl.unwrap_or(chunk.len());
            let (part, rest) = chunk.split_at(take);
            line_len += part.len() as u64;
            if !oversized {
                if line.len() + part.len() > max_line_bytes {
                    oversized = true;
                    line = Vec::new();
                } else {
                    line.extend_from_slice(part);
                }
            }
            pos += part.len() as u64;
            if nl.is_some() {
                pos += 1;
                emit(&mut f, &line, line_len, oversized, keep_empty);
                committed = pos;
                line.clear();
                line_len = 0;
                oversized = false;
                chunk = rest.get(1..).unwrap_or(&[]);
            } else {
                chunk = rest;
            }
        }
    }
    if deliver_partial && line_len > 0 {
        emit(&mut f, &line, line_len, oversized, keep_empty);
        committed = pos;
    }
    Ok(committed)
}

fn emit(
    f: &mut impl FnMut(LineItem<'_>),
    line: &[u8],
    len: u64,
    oversized: bool,
    keep_empty: bool,
) {
    if oversized {
        f(LineItem::Oversized { len });
        return;
    }
    let bytes = line.strip_suffix(b"\r").unwrap_or(line);
    if keep_empty || !bytes.is_empty() {
        f(LineItem::Line(bytes));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    type Collected = (Vec<String>, Vec<u64>, u64);

    fn collect(data: &[u8], start: u64, cap: usize, all: bool) -> Collected {
        let mut lines = Vec::new();
        let mut big = Vec::new();
        let mut cb = |item: LineItem<'_>| match item {
            LineItem::Line(bytes) => lines.push(String::from_utf8_lossy(bytes).into_owned()),
            LineItem::Oversized { len } => big.push(len),
        };
        let end = if all {
            read_all_lines(Cursor::new(data), start, cap, &mut cb)
        } else {
            read_lines(Cursor::new(data), start, cap, &mut cb)
        };
        (lines, big, end.unwrap_or(u64::MAX))
    }

    #[test]
    fn complete_lines_and_end_offset() {
        let (lines, big, end) = collect(b"a\nbb\r\n\ncc\n", 0, 100, false);
        assert_eq!(lines, vec!["a", "bb", "cc"]);
        assert!(big.is_empty());
        assert_eq!(end, 10);
    }

    #[test]
    fn trailing_partial_line_is_not_consumed() {
        let (lines, _, end) = collect(b"{\"a\":1}\n{\"b\":", 0, 100, false);
        assert_eq!(lines.len(), 1);
        assert_eq!(end, 8);
        // A later run resumes at the returned offset once the line is complete.
        let (lines, _, end) = collect(b"{\"a\":1}\n{\"b\":2}\n", 8, 100, false);
        assert_eq!(lines, vec!["{\"b\":2}"]);
        assert_eq!(end, 16);
        let (lines, _, end) = collect(b"{\"a\":1}\n{\"b\":", 0, 100, true);
        assert_eq!(lines.len(), 2);
        assert_eq!(end, 13);
    }

    #[test]
    fn oversized_line_is_skipped_without_buffering() {
        let mut data = b"ok\n".to_vec();
        data.extend(std::iter::repeat_n(b'x', 200_000));
        data.extend_from_slice(b"\nafter\n");
        let (lines, big, end) = collect(&data, 0, 1000, false);
        assert_eq!(lines, vec!["ok", "after"]);
        assert_eq!(big, vec![200_000]);
        assert_eq!(end, data.len() as u64);
    }

    #[test]
    fn oversized_partial_line_is_not_reported() {
        let mut data = b"ok\n".to_vec();
        data.extend(std::iter::repeat_n(b'x', 5000));
        let (lines, big, end) = collect(&data, 0, 1000, false);
        assert_eq!(lines.len(), 1);
        assert!(big.is_empty());
        assert_eq!(end, 3);
    }

    #[test]
    fn nul_bytes_pass_through() {
        let data = b"\0\0\0\n{\"x\":1}\n";
        let (lines, _, end) = collect(data, 0, 100, false);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines.first().map(|l| l.as_bytes()), Some(&b"\0\0\0"[..]));
        assert_eq!(end, data.len() as u64);
    }
}
