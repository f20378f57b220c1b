//! Where a comment or a string literal of source code is. They are the only places of code
//! where a value is a literal (`password = "X"`, not `password = get()`), and the only places
//! where people write sentences (`# the admin password is X`, `"the token is X"`), so both the
//! assignment rules and the sentence rules ask here. A line tells most of it; a block comment
//! opened on an earlier line (`/*` … `*/`) is looked for a few kilobytes back, so a huge file
//! costs no more per word than a small one.

/// What byte `pos` of a line of source code is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Region {
    Code,
    Comment,
    /// A string literal opened by this quote.
    Literal(char),
    /// A block comment opened on an earlier line, closed by this mark.
    Block(&'static str),
}

/// How far back before a line a block comment left open is looked for.
const BLOCK_LOOKBACK: usize = 4096;

/// Whether byte `pos` of source code sits inside a string literal or a comment on its line.
pub(super) fn literal_or_comment(text: &str, pos: usize, single_quoted_strings: bool) -> bool {
    region(text, pos, single_quoted_strings) != Region::Code
}

/// Where the comment or string literal holding byte `pos` of source code ends: the literal's
/// closing quote, a block comment's `*/`, else the end of the line; `None` when `pos` is code.
pub(super) fn sentence_end(text: &str, pos: usize, single_quoted_strings: bool) -> Option<usize> {
    let line_end = text[pos..].find('\n').map_or(text.len(), |i| pos + i);
    let rest = &text[pos..line_end];
    let len = match region(text, pos, single_quoted_strings) {
        Region::Code => return None,
        Region::Comment => rest.find("*/").unwrap_or(rest.len()),
        Region::Block(close) => rest.find(close).unwrap_or(rest.len()),
        Region::Literal(q) => {
            let mut escaped = false;
            rest.char_indices()
                .find(|&(_, c)| {
                    let closes = !escaped && c == q;
                    escaped = !escaped && c == '\\';
                    closes
                })
                .map_or(rest.len(), |(i, _)| i)
        }
    };
    Some(pos + len)
}

fn region(text: &str, pos: usize, single_quoted_strings: bool) -> Region {
    let line_start = text[..pos].rfind('\n').map_or(0, |i| i + 1);
    line_region(text, line_start, pos, single_quoted_strings)
        .or_else(|| open_block(text, line_start, single_quoted_strings))
        .unwrap_or(Region::Code)
}

/// What byte `pos` is in as its own line tells (`None`: code).
fn line_region(
    text: &str,
    line_start: usize,
    pos: usize,
    single_quoted_strings: bool,
) -> Option<Region> {
    let before = &text[line_start..pos];
    let trimmed = before.trim_start();
    if ["//", "/*", "* ", "# ", "--", "<!--"]
        .iter()
        .any(|p| trimmed.starts_with(p))
        || trimmed == "*"
        || trimmed == "#"
    {
        return Some(Region::Comment);
    }
    let mut quote: Option<char> = None;
    let mut chars = before.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(_), '\\') => {
                chars.next();
            }
            (Some(q), c) if c == q => quote = None,
            (None, '"' | '`') => quote = Some(c),
            (None, '\'') if single_quoted_strings => quote = Some(c),
            (None, '/') if chars.peek() == Some(&'/') => return Some(Region::Comment),
            (None, '#') if single_quoted_strings && chars.peek() == Some(&' ') => {
                return Some(Region::Comment)
            }
            _ => {}
        }
    }
    quote.map(Region::Literal)
}

/// The block comment an earlier line opened and none closed before `line_start`: a `/*` that
/// is code on its own line (not in a string: `"src/*.rs"`) with no `*/` after it. (A Python
/// docstring's `"""` opens and closes alike, so which one is open cannot be told from a few
/// lines: its inner lines are read as code.)
fn open_block(text: &str, line_start: usize, single_quoted_strings: bool) -> Option<Region> {
    let mut from = line_start.saturating_sub(BLOCK_LOOKBACK);
    while !text.is_char_boundary(from) {
        from += 1;
    }
    let window = &text[from..line_start];
    let open = from + window.rfind("/*")?;
    if text[open..line_start].contains("*/") {
        return None;
    }
    // A path's `/*` (`dist/*`, `src/**/*.rs`) follows a name; a comment's, a space or the line
    // start.
    let own_line = text[..open].rfind('\n').map_or(0, |i| i + 1);
    let after_a_name = text[own_line..open]
        .chars()
        .next_back()
        .is_some_and(|c| c.is_alphanumeric() || matches!(c, '/' | '.' | '*' | '_' | '-'));
    (!after_a_name && line_region(text, own_line, open, single_quoted_strings).is_none())
        .then_some(Region::Block("*/"))
}
