//! How text becomes the words the embedding table is looked up with. It mirrors `words_of` in
//! `scripts/build_embeddings.py` exactly (the table's words were chosen and its parity vectors
//! computed that way), which is why it does not reuse the search tokenizer: that one stems and
//! folds `ё`, the table holds surface forms.

use std::ops::ControlFlow;

/// Longer runs are hashes, ids or blobs: they carry no meaning a table row could hold.
pub const MAX_WORD_CHARS: usize = 32;

/// Lowercased words of `text`: runs of letters and digits, identifiers split at case and
/// letter/digit changes (`parseConfig` → `parse`, `config`; `HTTPServer` → `http`, `server`).
/// `f` returns `Break` to stop early (a window of a long tool output needs only its words).
pub fn for_each_word(text: &str, mut f: impl FnMut(&str) -> ControlFlow<()>) {
    let mut lower = String::new();
    for run in text.split(|c: char| !c.is_alphanumeric()) {
        if run.is_empty() || run.chars().count() > MAX_WORD_CHARS {
            continue;
        }
        let chars: Vec<(usize, char)> = run.char_indices().collect();
        let mut start = 0;
        for i in 1..chars.len() {
            let (at, c) = chars[i];
            let prev = chars[i - 1].1;
            let next = chars.get(i + 1).map(|x| x.1);
            let boundary = (prev.is_lowercase() && c.is_uppercase())
                || (prev.is_uppercase()
                    && c.is_uppercase()
                    && next.is_some_and(char::is_lowercase))
                || (prev.is_numeric() != c.is_numeric());
            if boundary {
                if emit(&run[start..at], &mut lower, &mut f).is_break() {
                    return;
                }
                start = at;
            }
        }
        if emit(&run[start..], &mut lower, &mut f).is_break() {
            return;
        }
    }
}

fn emit(
    part: &str,
    lower: &mut String,
    f: &mut impl FnMut(&str) -> ControlFlow<()>,
) -> ControlFlow<()> {
    lower.clear();
    lower.extend(part.chars().flat_map(char::to_lowercase));
    f(lower)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for_each_word(text, |w| {
            out.push(w.to_string());
            ControlFlow::Continue(())
        });
        out
    }

    #[test]
    fn identifiers_split_like_the_table_builder() {
        assert_eq!(
            words("parseConfig snake_case HTTPServer v2beta Ёжик"),
            ["parse", "config", "snake", "case", "http", "server", "v", "2", "beta", "ёжик"]
        );
    }

    #[test]
    fn long_runs_are_not_words() {
        assert_eq!(words(&"a".repeat(33)), Vec::<String>::new());
        assert_eq!(words("ok deadbeefdeadbeefdeadbeefdeadbeef1"), ["ok"]);
    }
}
