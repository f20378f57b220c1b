//! Where a comment or a string literal of source code is, read from its line alone. They are
//! the only places of code where a value is a literal (`password = "X"`, not `password =
//! get()`), and the only places where people write sentences (`# the admin password is X`,
//! `"the token is X"`), so both the assignment rules and the sentence rules ask here.

/// What byte `pos` of a line of source code is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Region {
    Code,
    Comment,
    /// A string literal opened by this quote.
    Literal(char),
}

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
    let before = &text[line_start..pos];
    let trimmed = before.trim_start();
    if ["//", "/*", "* ", "# ", "--", "<!--"]
        .iter()
        .any(|p| trimmed.starts_with(p))
        || trimmed == "*"
        || trimmed == "#"
    {
        return Region::Comment;
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
            (None, '/') if chars.peek() == Some(&'/') => return Region::Comment,
            (None, '#') if single_quoted_strings && chars.peek() == Some(&' ') => {
                return Region::Comment
            }
            _ => {}
        }
    }
    quote.map_or(Region::Code, Region::Literal)
}
