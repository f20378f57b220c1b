//! Snippets: the short window of a hit shown in CLI/TUI/MCP results, and the byte ranges of the
//! matching words for highlighting.
//!
//! Matching uses the same tokenizer as the index, so a snippet centres on the word that made the
//! document match (`доступа` for the query `доступ`), not on a raw substring. Windows are counted
//! in chars, cut on char boundaries (preferring word boundaries) and never panic on any text.

use super::tokens;

/// Marker shown where text was cut.
pub const ELLIPSIS: char = '…';

/// How far (in chars) a cut may move to land on a word boundary.
const WORD_SLACK: usize = 15;

/// At most `max` characters of `text`, ending with [`ELLIPSIS`] when cut (the one clipping
/// helper for titles, labels and outbound snippets).
pub fn clip_chars(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push(ELLIPSIS);
    out
}

/// A window of at most `max_chars` chars (the `…` markers included) around the first word of
/// `text` whose term is one of `terms` (terms as produced by [`tokens::query_terms`]), with
/// whitespace runs collapsed to one space. Without a match, the start of the text.
pub fn cut(text: &str, terms: &[String], max_chars: usize) -> String {
    if max_chars == 0 {
        return String::new();
    }
    let (ms, me) = tokens::first_match(text, terms).unwrap_or((0, 0));

    // Work on a bounded region around the match so huge texts stay cheap.
    let reach = max_chars.saturating_mul(8).saturating_add(64);
    let lo = floor_boundary(text, ms.saturating_sub(reach));
    let hi = ceil_boundary(text, me.saturating_add(reach).min(text.len()));
    let cut_before = text[..lo].chars().any(|c| !c.is_whitespace());
    let cut_after = text[hi..].chars().any(|c| !c.is_whitespace());

    // Collapse whitespace, remembering where the match lands.
    let mut chars: Vec<char> = Vec::with_capacity(hi - lo);
    let (mut a, mut b) = (None, None);
    for (off, c) in text[lo..hi].char_indices() {
        let at = lo + off;
        if at == ms && a.is_none() {
            a = Some(chars.len());
        }
        if at == me && b.is_none() {
            b = Some(chars.len());
        }
        if c.is_whitespace() {
            if chars.last().is_some_and(|&l| l != ' ') {
                chars.push(' ');
            }
        } else {
            chars.push(c);
        }
    }
    if chars.last() == Some(&' ') {
        chars.pop();
    }
    let n = chars.len();
    let a = a.unwrap_or(0).min(n);
    let b = b.unwrap_or(n).clamp(a, n);

    if n <= max_chars && !cut_before && !cut_after {
        return chars.into_iter().collect();
    }

    // Start about a third of the budget before the match (or at the start without one).
    let mut s = a.saturating_sub(max_chars / 3);
    let lead = |s: usize| usize::from(s > 0 || cut_before);
    let mut e = (s + max_chars.saturating_sub(lead(s) + 1)).min(n);
    if e == n && !cut_after {
        // The end is shown: give the unused room to context before the match.
        let room = max_chars.saturating_sub(lead(s) + (e - s));
        s = s.saturating_sub(room);
        if s == 0 && !cut_before {
            e = (s + max_chars).min(n);
        }
    }
    let trail = |e: usize| usize::from(e < n || cut_after);
    if lead(s) + trail(e) >= max_chars {
        // No room for markers: plain chars from the match.
        return chars[a.min(n)..].iter().take(max_chars).collect();
    }

    // Prefer word boundaries, without cutting into the match.
    if s > 0 && s < e && chars[s - 1] != ' ' && chars[s] != ' ' {
        if let Some(k) = (s..(s + WORD_SLACK).min(a)).find(|&k| chars[k] == ' ') {
            s = k + 1;
            // Re-spend the room the move freed at the end.
            e = (s + max_chars.saturating_sub(lead(s) + 1)).min(n);
            if e == n && !cut_after {
                e = (s + max_chars.saturating_sub(lead(s))).min(n);
            }
        }
    }
    // Keep the total within the limit whatever the adjustments above did.
    while (e - s) + lead(s) + trail(e) > max_chars && e > s {
        e -= 1;
    }
    if e > s && e < n && chars[e - 1] != ' ' && chars[e] != ' ' {
        let floor = b.max(s + 1);
        if let Some(k) = (floor..e).rev().take(WORD_SLACK).find(|&k| chars[k] == ' ') {
            e = k;
        }
    }
    while s < e && chars[s] == ' ' {
        s += 1;
    }
    while e > s && chars[e - 1] == ' ' {
        e -= 1;
    }

    let mut out = String::with_capacity((e - s) * 2 + 8);
    if lead(s) == 1 {
        out.push(ELLIPSIS);
    }
    out.extend(&chars[s..e]);
    if trail(e) == 1 {
        out.push(ELLIPSIS);
    }
    out
}

/// Byte ranges of the words of `text` that match `terms`, sorted and merged where they overlap
/// (a matching identifier and its matching parts give one range), for highlighting.
pub fn match_ranges(text: &str, terms: &[String]) -> Vec<(usize, usize)> {
    let mut ranges = tokens::term_ranges(text, terms);
    ranges.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(ranges.len());
    for (s, e) in ranges {
        match merged.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => merged.push((s, e)),
        }
    }
    merged
}

fn floor_boundary(text: &str, mut i: usize) -> usize {
    i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_boundary(text: &str, mut i: usize) -> usize {
    i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::tokens::query_terms;

    fn count(s: &str) -> usize {
        s.chars().count()
    }

    #[test]
    fn short_text_is_returned_whole_and_collapsed() {
        let t = query_terms("доступ");
        assert_eq!(
            cut("  починил\n\n доступ\tк базе  ", &t, 80),
            "починил доступ к базе"
        );
        assert_eq!(cut("", &t, 10), "");
        assert_eq!(cut("abc", &t, 0), "");
    }

    #[test]
    fn window_centres_on_the_first_stem_match() {
        let filler = "lorem ipsum dolor sit amet ".repeat(20);
        let text = format!("{filler}Кто-то починил доступа к базам данных. {filler}");
        let t = query_terms("доступ");
        let s = cut(&text, &t, 60);
        assert!(count(&s) <= 60, "{s:?}");
        assert!(s.contains("доступа"), "{s:?}");
        assert!(s.starts_with(ELLIPSIS) && s.ends_with(ELLIPSIS), "{s:?}");
        // Word boundaries: no partial word right after the leading marker.
        let first_word = s
            .trim_start_matches(ELLIPSIS)
            .split(' ')
            .next()
            .unwrap_or("");
        assert!(text.contains(&format!(" {first_word} ")), "{s:?}");
    }

    #[test]
    fn no_match_gives_the_start() {
        let text = "first words here, ".repeat(30);
        let s = cut(&text, &query_terms("absent"), 40);
        assert!(s.starts_with("first words"), "{s:?}");
        assert!(s.ends_with(ELLIPSIS) && count(&s) <= 40, "{s:?}");
        let s = cut(&text, &[], 40);
        assert!(s.starts_with("first words"), "{s:?}");
    }

    #[test]
    fn match_near_the_end_uses_room_before_it() {
        let text = format!("{}the fix landed", "word ".repeat(100));
        let s = cut(&text, &query_terms("fixed"), 40);
        assert!(s.ends_with("the fix landed"), "{s:?}");
        assert!(
            s.starts_with(ELLIPSIS) && count(&s) <= 40 && count(&s) >= 30,
            "{s:?}"
        );
    }

    #[test]
    fn limits_hold_for_every_budget_and_multibyte_text() {
        let texts = [
            "ёжик 🙂🙂🙂 漢字漢字 доступ доступа доступы ".repeat(20),
            "x".repeat(500),
            format!("{}доступ{}", "ж".repeat(300), "🙂".repeat(300)),
            "a  \n\n\t  b".repeat(50),
            "доступ".to_string(),
            " \u{3000} доступ \u{a0} ".to_string(),
        ];
        let terms = query_terms("доступ 🙂 x");
        for text in &texts {
            for max in 0..70 {
                let s = cut(text, &terms, max);
                assert!(count(&s) <= max, "max {max} {s:?}");
                assert!(!s.contains("  "), "{s:?}");
                if max >= 10 && text.contains("доступ") {
                    assert!(s.contains("доступ") || s.contains('ж'), "max {max} {s:?}");
                }
            }
        }
    }

    #[test]
    fn huge_text_is_cheap_and_correct() {
        let text = format!("{}needle{}", "hay ".repeat(500_000), " hay".repeat(500_000));
        let s = cut(&text, &query_terms("needle"), 50);
        assert!(s.contains("needle") && count(&s) <= 50, "{s:?}");
    }

    #[test]
    fn ranges_cover_matching_words() {
        let text = "Fixed getUserName; fixing Доступа. доступ";
        let r = match_ranges(text, &query_terms("fix доступ user"));
        let words: Vec<&str> = r.iter().map(|&(s, e)| &text[s..e]).collect();
        assert_eq!(words, ["Fixed", "User", "fixing", "Доступа", "доступ"]);
        // A matching whole identifier absorbs its parts.
        let r = match_ranges(text, &query_terms("getUserName"));
        let words: Vec<&str> = r.iter().map(|&(s, e)| &text[s..e]).collect();
        assert_eq!(words, ["getUserName"]);
        assert!(match_ranges(text, &[]).is_empty());
    }
}
