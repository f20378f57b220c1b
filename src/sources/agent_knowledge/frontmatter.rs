//! A small, lenient YAML-frontmatter reader for `SKILL.md` and agent definition files.
//!
//! The crate has no YAML dependency, and real files are not always valid YAML (VoltAgent agents
//! put an unquoted `: ` inside a description). Claude Code still loads those, so this reader never
//! fails: it understands what skill and agent files actually use (plain, quoted and block scalars,
//! `- a` and `[a, b]` lists), keeps nested maps as raw text, takes the rest of the line as the
//! value when a line is not valid YAML, and with no closed `---` fence returns empty metadata and
//! the whole file as the body.

/// One frontmatter value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FmValue {
    Str(String),
    List(Vec<String>),
    /// A nested map or anything else kept as its source text.
    Raw(String),
}

/// Parsed frontmatter (keys in file order) and the markdown body after it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Frontmatter {
    pub fields: Vec<(String, FmValue)>,
    pub body: String,
    /// True when a `---` … `---` block was found (even if some of its lines were not YAML).
    pub present: bool,
}

impl Frontmatter {
    /// The first value of any of `keys`.
    pub fn get(&self, keys: &[&str]) -> Option<&FmValue> {
        keys.iter().find_map(|k| {
            self.fields
                .iter()
                .find(|(name, _)| name == k)
                .map(|(_, v)| v)
        })
    }

    /// A scalar as a trimmed, non-empty string (a list is joined with `, `).
    pub fn get_str(&self, keys: &[&str]) -> Option<String> {
        let s = match self.get(keys)? {
            FmValue::Str(s) | FmValue::Raw(s) => s.trim().to_string(),
            FmValue::List(items) => items.join(", "),
        };
        (!s.is_empty()).then_some(s)
    }

    /// A list; a scalar is split on commas (or on whitespace when it has no comma and no
    /// parenthesised pattern such as `Bash(git *)`).
    pub fn get_list(&self, keys: &[&str]) -> Vec<String> {
        match self.get(keys) {
            Some(FmValue::List(items)) => items.clone(),
            Some(FmValue::Str(s)) => split_scalar_list(s),
            _ => Vec::new(),
        }
    }
}

fn split_scalar_list(s: &str) -> Vec<String> {
    let parts: Vec<&str> = if s.contains(',') || s.contains('(') {
        s.split(',').collect()
    } else {
        s.split_whitespace().collect()
    };
    parts
        .into_iter()
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect()
}

/// Split `text` into frontmatter and body. Never fails.
pub fn parse(text: &str) -> Frontmatter {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines: Vec<&str> = text.split('\n').collect();
    if lines.first().map(|l| fence(l)) != Some("---") {
        return Frontmatter {
            body: text.to_string(),
            ..Frontmatter::default()
        };
    }
    let Some(close) = lines
        .iter()
        .skip(1)
        .position(|l| matches!(fence(l), "---" | "..."))
        .map(|p| p + 1)
    else {
        // Never closed: Claude Code loads the body with empty metadata.
        return Frontmatter {
            body: text.to_string(),
            ..Frontmatter::default()
        };
    };
    let head: Vec<&str> = lines[1..close]
        .iter()
        .map(|l| l.trim_end_matches('\r'))
        .collect();
    let body = lines[close + 1..].join("\n");
    Frontmatter {
        fields: parse_fields(&head),
        body,
        present: true,
    }
}

fn fence(l: &str) -> &str {
    l.trim_end_matches('\r').trim_end()
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches([' ', '\t']).len()
}

/// `key:` at column 0 → (key, rest after the colon).
fn split_key(line: &str) -> Option<(&str, &str)> {
    if line.starts_with([' ', '\t', '#', '-']) {
        return None;
    }
    let colon = line.find(':')?;
    let key = line[..colon].trim();
    let rest = &line[colon + 1..];
    let key_ok = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'));
    (key_ok && (rest.is_empty() || rest.starts_with([' ', '\t']))).then_some((key, rest))
}

fn parse_fields(lines: &[&str]) -> Vec<(String, FmValue)> {
    let mut fields = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some((key, rest)) = split_key(lines[i]) else {
            i += 1;
            continue;
        };
        // Lines that belong to this key: indented, blank, or list items at column 0.
        let mut end = i + 1;
        while end < lines.len() {
            let l = lines[end];
            if l.trim().is_empty() || indent_of(l) > 0 || l.starts_with("- ") || l == "-" {
                end += 1;
            } else {
                break;
            }
        }
        let value = parse_value(rest.trim(), &lines[i + 1..end]);
        fields.push((key.to_string(), value));
        i = end;
    }
    fields
}

fn parse_value(rest: &str, cont: &[&str]) -> FmValue {
    if let Some(header) = block_header(rest) {
        return FmValue::Str(block_scalar(header, cont));
    }
    if rest.is_empty() || rest.starts_with('#') {
        return nested(cont);
    }
    if rest.starts_with('"') || rest.starts_with('\'') {
        let mut joined = rest.to_string();
        for l in cont {
            joined.push('\n');
            joined.push_str(l.trim());
        }
        if let Some(s) = whole_quoted(&joined) {
            return FmValue::Str(s);
        }
        // Text after the closing quote: take the line as written. An unclosed quote: the text
        // after it.
        if quoted(&joined).is_some() {
            return plain(rest, cont);
        }
        return plain(&rest[1..], cont);
    }
    if rest.starts_with('[') {
        if let Some(items) = flow_list(rest) {
            return FmValue::List(items);
        }
        return FmValue::Str(rest.to_string());
    }
    if rest.starts_with('{') {
        return FmValue::Raw(rest.to_string());
    }
    plain(rest, cont)
}

/// Plain scalar, folded over indented continuation lines. An unquoted `: ` inside is not valid
/// YAML, but the rest of the line is clearly the value.
fn plain(rest: &str, cont: &[&str]) -> FmValue {
    let mut out = strip_comment(rest).to_string();
    for l in cont {
        let t = l.trim();
        if t.is_empty() {
            out.push('\n');
        } else {
            if !out.is_empty() && !out.ends_with('\n') {
                out.push(' ');
            }
            out.push_str(strip_comment(t));
        }
    }
    FmValue::Str(out.trim().to_string())
}

/// ` # comment` ends a plain scalar.
fn strip_comment(s: &str) -> &str {
    match s.find(" #") {
        Some(p) => s[..p].trim_end(),
        None => s,
    }
}

/// A value with nothing after the colon: a block list, a nested map (kept raw) or empty.
fn nested(cont: &[&str]) -> FmValue {
    let items: Vec<&str> = cont
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect();
    if items.is_empty() {
        return FmValue::Str(String::new());
    }
    if items.iter().all(|l| l.starts_with("- ") || *l == "-") {
        let list = items
            .iter()
            .map(|l| unquote(l.trim_start_matches('-').trim()))
            .filter(|s| !s.is_empty())
            .collect();
        return FmValue::List(list);
    }
    FmValue::Raw(cont.join("\n").trim_end().to_string())
}

#[derive(Clone, Copy)]
struct BlockHeader {
    folded: bool,
    chomp: char,
    indent: Option<usize>,
}

/// `|`, `|-`, `>+`, `|2-`, … optionally followed by a comment.
fn block_header(rest: &str) -> Option<BlockHeader> {
    let head = strip_comment(rest).trim();
    let mut chars = head.chars();
    let folded = match chars.next()? {
        '|' => false,
        '>' => true,
        _ => return None,
    };
    let mut h = BlockHeader {
        folded,
        chomp: ' ',
        indent: None,
    };
    for c in chars {
        match c {
            '-' | '+' => h.chomp = c,
            d if d.is_ascii_digit() && d != '0' => h.indent = d.to_digit(10).map(|n| n as usize),
            _ => return None,
        }
    }
    Some(h)
}

fn block_scalar(h: BlockHeader, cont: &[&str]) -> String {
    let indent = h.indent.unwrap_or_else(|| {
        cont.iter()
            .find(|l| !l.trim().is_empty())
            .map(|l| indent_of(l))
            .unwrap_or(0)
    });
    let lines: Vec<&str> = cont
        .iter()
        .map(|l| {
            if l.trim().is_empty() {
                ""
            } else {
                l.get(indent.min(indent_of(l))..).unwrap_or("")
            }
        })
        .collect();
    let mut out = String::new();
    if h.folded {
        let mut prev_blank = true;
        for l in &lines {
            if l.is_empty() {
                out.push('\n');
                prev_blank = true;
            } else if l.starts_with([' ', '\t']) {
                // More-indented lines keep their line breaks.
                if !prev_blank && !out.ends_with('\n') {
                    out.push('\n');
                }
                out.push_str(l);
                out.push('\n');
                prev_blank = true;
            } else {
                if !prev_blank && !out.ends_with('\n') {
                    out.push(' ');
                }
                out.push_str(l);
                prev_blank = false;
            }
        }
        if !out.ends_with('\n') {
            out.push('\n');
        }
    } else {
        for l in &lines {
            out.push_str(l);
            out.push('\n');
        }
    }
    match h.chomp {
        '+' => out,
        '-' => out.trim_end_matches('\n').to_string(),
        _ => {
            let t = out.trim_end_matches('\n');
            if t.is_empty() {
                String::new()
            } else {
                format!("{t}\n")
            }
        }
    }
}

/// A double- or single-quoted scalar (possibly over several lines) → its value and the text
/// after the closing quote; `None` when the quote is never closed.
fn quoted(s: &str) -> Option<(String, &str)> {
    let mut it = s.char_indices().peekable();
    let (_, q) = it.next()?;
    let mut out = String::new();
    while let Some((at, c)) = it.next() {
        match c {
            '\n' => {
                // Line folding inside a flow scalar.
                if !out.ends_with(' ') && !out.is_empty() {
                    out.push(' ');
                }
            }
            '\\' if q == '"' => match it.next().map(|(_, c)| c) {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('"') => out.push('"'),
                Some('\\') => out.push('\\'),
                Some('/') => out.push('/'),
                Some('u') => {
                    let hex: String = (0..4).filter_map(|_| it.next().map(|(_, c)| c)).collect();
                    match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                        Some(ch) => out.push(ch),
                        None => {
                            out.push_str("\\u");
                            out.push_str(&hex);
                        }
                    }
                }
                Some(other) => {
                    out.push('\\');
                    out.push(other);
                }
                None => return None,
            },
            '\'' if q == '\'' && it.peek().map(|(_, c)| *c) == Some('\'') => {
                it.next();
                out.push('\'');
            }
            c if c == q => return Some((out, s.get(at + c.len_utf8()..).unwrap_or(""))),
            c => out.push(c),
        }
    }
    None
}

/// A quoted value followed by nothing but a comment.
fn whole_quoted(s: &str) -> Option<String> {
    let (v, rest) = quoted(s)?;
    let rest = rest.trim();
    (rest.is_empty() || rest.starts_with('#')).then_some(v)
}

fn unquote(s: &str) -> String {
    if s.starts_with('"') || s.starts_with('\'') {
        if let Some(v) = whole_quoted(s) {
            return v;
        }
    }
    strip_comment(s).to_string()
}

/// `[a, "b c", 'd']` → items; `None` when the bracket is never closed.
fn flow_list(s: &str) -> Option<Vec<String>> {
    let inner = strip_comment(s)
        .trim()
        .strip_prefix('[')?
        .strip_suffix(']')?;
    let mut items = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    for c in inner.chars() {
        match (quote, c) {
            (None, '"' | '\'') => {
                quote = Some(c);
                cur.push(c);
            }
            (Some(q), c) if c == q => {
                quote = None;
                cur.push(c);
            }
            (None, ',') => {
                items.push(unquote(cur.trim()));
                cur.clear();
            }
            _ => cur.push(c),
        }
    }
    if !cur.trim().is_empty() {
        items.push(unquote(cur.trim()));
    }
    Some(items.into_iter().filter(|i| !i.is_empty()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(fm: &Frontmatter, k: &str) -> Option<String> {
        fm.get_str(&[k])
    }

    #[test]
    fn plain_quoted_and_lists() {
        let fm = parse(
            "---\nname: api-designer\ndescription: \"Use when \\\"x\\\": y\"\n\
             tools: Read, Write, Edit\nskills: [a, 'b c', \"d\"]\nhooks:\n  - one\n  - 'two'\n---\nBody\n",
        );
        assert!(fm.present);
        assert_eq!(s(&fm, "name").as_deref(), Some("api-designer"));
        assert_eq!(s(&fm, "description").as_deref(), Some("Use when \"x\": y"));
        assert_eq!(fm.get_list(&["tools"]), vec!["Read", "Write", "Edit"]);
        assert_eq!(fm.get_list(&["skills"]), vec!["a", "b c", "d"]);
        assert_eq!(fm.get_list(&["hooks"]), vec!["one", "two"]);
        assert_eq!(fm.body, "Body\n");
    }

    #[test]
    fn block_scalars() {
        let fm = parse("---\na: |-\n  line one\n  line two\n\nb: >-\n  folded one\n  folded two\n\n  para\nc: |\n  kept\n---\n");
        assert_eq!(s(&fm, "a").as_deref(), Some("line one\nline two"));
        assert_eq!(
            fm.get(&["b"]),
            Some(&FmValue::Str("folded one folded two\npara".into()))
        );
        assert_eq!(fm.get(&["c"]), Some(&FmValue::Str("kept\n".into())));
    }

    #[test]
    fn malformed_lines_fall_back_to_rest_of_line() {
        let fm = parse("---\nname: x\ndescription: Triggers on: 'a', 'b'. More: yes\n: junk\n\tbad indent\n---\nB");
        assert_eq!(
            s(&fm, "description").as_deref(),
            Some("Triggers on: 'a', 'b'. More: yes")
        );
        assert_eq!(fm.body, "B");
    }

    #[test]
    fn nested_map_is_raw_and_unclosed_is_body() {
        let fm = parse("---\nmetadata:\n  author: me\n  tags: [x]\nname: n\n---\n");
        assert!(matches!(fm.get(&["metadata"]), Some(FmValue::Raw(_))));
        assert_eq!(s(&fm, "name").as_deref(), Some("n"));
        let open = parse("---\nname: n\nno close");
        assert!(!open.present);
        assert!(open.fields.is_empty());
        assert_eq!(open.body, "---\nname: n\nno close");
        let none = parse("# Title\n\ntext");
        assert!(!none.present);
    }

    #[test]
    fn odd_input_never_panics() {
        for t in [
            "",
            "---",
            "---\n---",
            "---\r\nname: a\r\n---\r\nb",
            "\u{feff}---\nx: \"\\u12\n---",
            "---\nk: |9\n é\n---",
            "---\nk: [\n---",
            "---\nk: 'it''s'\n---",
            "---\n- a\n---",
        ] {
            let _ = parse(t);
        }
        assert_eq!(
            parse("---\r\nname: a\r\n---\r\nb")
                .get_str(&["name"])
                .as_deref(),
            Some("a")
        );
        assert_eq!(
            parse("---\nk: 'it''s'\n---").get_str(&["k"]).as_deref(),
            Some("it's")
        );
    }
}
