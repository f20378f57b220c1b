//! Secrets in a Markdown table. A cell names no key of its own: its key is its column's header
//! (`| user | password |` over `| bob | X |`) or the cell before it in a key/value row
//! (`| token | X |`), so neither the assignment rules (no separator) nor the sentence rules (no
//! verb, and `|` is no value) read it. A table also lists what secrets ARE (`| password |
//! string | required |`, `| Token | Purpose |`), so a cell goes only when it looks like a
//! credential, as a value said in a sentence must ([`prose::value_shaped`]).

use std::borrow::Cow;

use super::{prose, replace_ranges, value, TextKind};

/// Longest header or key cell read as a secret's name: a column named by a sentence is no key.
const MAX_KEY_CHARS: usize = 40;

/// Prepositions after which a header's words qualify the name before them (`Token for CI`).
const QUALIFIERS: &[&str] = &[
    "for", "of", "on", "in", "at", "to", "from", "от", "для", "на", "к", "у", "из",
];

/// Redacts the cells of Markdown tables that a secret-named header or key cell names.
pub(super) fn redact<'a>(text: Cow<'a, str>, count: &mut usize) -> Cow<'a, str> {
    if !text.contains('|') {
        return text;
    }
    let spans = secret_cells(&text);
    replace_ranges(text, &spans, count)
}

/// A line's cells: the byte range of each cell's content, between unescaped pipes.
fn cells(line: &str, at: usize) -> Vec<(usize, usize)> {
    let bytes = line.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 1,
            b'|' => {
                out.push((at + start, at + i));
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    out.push((at + start, at + line.len()));
    // The pipes that open and close a row bound no cell.
    if line.trim_start().starts_with('|') {
        out.remove(0);
    }
    if line.trim_end().ends_with('|') && !line.trim_end().ends_with("\\|") {
        out.pop();
    }
    out
}

/// `|---|:--:|`, `--- | ---`: the row under a table's header.
fn is_delimiter_row(line: &str) -> bool {
    let t = line.trim();
    t.contains('-')
        && t.contains('|')
        && t.split('|')
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .all(|c| {
                let c = c.strip_prefix(':').unwrap_or(c);
                let c = c.strip_suffix(':').unwrap_or(c);
                !c.is_empty() && c.bytes().all(|b| b == b'-')
            })
}

/// The ranges of every secret cell of `text`, in order.
fn secret_cells(text: &str) -> Vec<(usize, usize)> {
    let mut lines = Vec::new();
    let mut at = 0;
    for line in text.split('\n') {
        lines.push((at, line.strip_suffix('\r').unwrap_or(line)));
        at += line.len() + 1;
    }
    let mut out = Vec::new();
    // The secret columns of the table being read: (column, whether it names a password).
    let mut columns: Vec<(usize, bool)> = Vec::new();
    let mut in_table = false;
    let mut i = 0;
    while i < lines.len() {
        let (at, line) = lines[i];
        if !line.contains('|') {
            in_table = false;
            i += 1;
            continue;
        }
        let row = cells(line, at);
        if !in_table && lines.get(i + 1).is_some_and(|(_, l)| is_delimiter_row(l)) {
            columns = row
                .iter()
                .enumerate()
                .filter_map(|(c, &(s, e))| secret_name(&text[s..e]).map(|p| (c, p)))
                .collect();
            in_table = true;
            i += 2;
            continue;
        }
        let is_row = in_table || line.trim_start().starts_with('|');
        if is_row {
            let mut taken = Vec::new();
            if in_table {
                for &(c, password) in &columns {
                    if let Some(&(s, e)) = row.get(c) {
                        taken.extend(secret_value(text, s, e, password));
                    }
                }
            }
            // `| token | X |`: a key cell and its value beside it.
            for pair in row.windows(2) {
                let (ks, ke) = pair[0];
                if let Some(password) = secret_name(&text[ks..ke]) {
                    let (s, e) = pair[1];
                    taken.extend(secret_value(text, s, e, password));
                }
            }
            taken.sort_unstable();
            taken.dedup();
            out.extend(taken);
        }
        i += 1;
    }
    out
}

/// Whether a header or key cell names a secret (`password`, `API key`, `DB_PASSWORD`, `Токен`),
/// and whether it names a password, which asks less of its value; `Primary key`, `Token count`
/// or `Key ID` name something else.
fn secret_name(cell: &str) -> Option<bool> {
    let name = strip_marks(cell.trim()).0;
    if name.is_empty() || name.chars().count() > MAX_KEY_CHARS {
        return None;
    }
    // What qualifies the name after it is not the name: `Password (prod)`, `Пароль от БД`,
    // `Token for CI`.
    let name = name.split('(').next().unwrap_or(name);
    let mut words: Vec<&str> = name.split_whitespace().collect();
    if let Some(p) = words
        .iter()
        .skip(1)
        .position(|w| QUALIFIERS.contains(&w.to_lowercase().as_str()))
    {
        words.truncate(p + 1);
    }
    let last = words.last()?;
    // `DB_PASSWORD`, `api-key`, `apiToken`: the compound's last part is the word.
    let mut parts = super::keys::last_segment(last);
    if !prose::is_secret_word(&parts) {
        parts = last.to_lowercase();
        if !prose::is_secret_word(&parts) {
            return None;
        }
    }
    let password = prose::is_password_word(&parts);
    // The word before it: `Primary key`, or the compound's part before it (`primary_key`).
    let before = match words.len() {
        1 => last
            .get(..last.len().saturating_sub(parts.len()))
            .map(super::keys::last_segment)
            .filter(|b| !b.is_empty()),
        n => Some(words[n - 2].to_lowercase()),
    };
    if !password && before.is_some_and(|b| prose::names_no_secret(&b)) {
        return None;
    }
    Some(password)
}

/// The cell's value when it looks like a secret, as one token once the Markdown or quotes
/// around it are taken off.
fn secret_value(text: &str, s: usize, e: usize, password: bool) -> Option<(usize, usize)> {
    let cell = &text[s..e];
    let trimmed = cell.trim();
    let (v, quoted) = strip_marks(trimmed);
    if v.is_empty() || v.contains(char::is_whitespace) {
        return None;
    }
    if !prose::value_shaped(v, password) || value::is_exempt(v, quoted, None, TextKind::Prose) {
        return None;
    }
    // `v` is a slice of `text`: where it starts there.
    let start = v.as_ptr() as usize - text.as_ptr() as usize;
    Some((start, start + v.len()))
}

/// A cell without the emphasis, code span or quotes around it (`**Password**`, `` `X` ``);
/// whether it was quoted or a code span.
fn strip_marks(cell: &str) -> (&str, bool) {
    let mut v = cell;
    let mut quoted = false;
    loop {
        let Some(m) = ["**", "__", "`", "*", "_", "\"", "'"]
            .iter()
            .find(|m| v.len() > 2 * m.len() && v.starts_with(**m) && v.ends_with(**m))
        else {
            return (v.trim(), quoted);
        };
        quoted |= matches!(*m, "`" | "\"" | "'");
        v = v[m.len()..v.len() - m.len()].trim();
    }
}
