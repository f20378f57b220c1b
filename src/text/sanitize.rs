//! Terminal sanitising (contract DECISIONS §13): indexed text is untrusted data, so before the
//! TUI or CLI draws it we remove anything a terminal would interpret or that could disguise text.
//!
//! Removed: ANSI/VT escape sequences (CSI, OSC, DCS/SOS/PM/APC strings, two- and three-char ESC
//! sequences), 8-bit C1 controls U+0080–U+009F (the C1 CSI/OSC/DCS/… introducers swallow their
//! sequence too), other control characters except `\n` and `\t`, `\r`, bidi embedding/override/
//! isolate characters (U+202A–U+202E, U+2066–U+2069), bidi marks (U+200E, U+200F, U+061C),
//! zero-width characters (U+200B–U+200D, U+2060, U+FEFF) and invisible Unicode tag characters
//! (U+E0000–U+E007F). An unterminated string sequence ends at the
//! next newline so that one stray `ESC ]` cannot hide the rest of a document.

/// `text` made safe to print on a terminal; `\n` and `\t` are kept.
pub fn for_terminal(text: &str) -> String {
    if !text.chars().any(needs_work) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    clean_into(text, &mut out);
    out
}

/// [`for_terminal`] for a single list row: newlines and tabs become spaces, whitespace runs
/// collapse to one space and the ends are trimmed.
pub fn one_line(text: &str) -> String {
    let clean = for_terminal(text);
    let mut out = String::with_capacity(clean.len());
    for word in clean.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// JSON text made safe to print: C1 controls, bidi and zero-width characters (which JSON leaves
/// raw and a terminal may act on or hide text with) become `\uXXXX` escapes. The JSON value is
/// unchanged: in serialized JSON such characters can only stand inside strings.
pub fn json_for_terminal(json: &str) -> String {
    if !json
        .chars()
        .any(|c| ('\u{80}'..='\u{9f}').contains(&c) || is_invisible_format(c))
    {
        return json.to_owned();
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if ('\u{80}'..='\u{9f}').contains(&c) || is_invisible_format(c) {
            let mut buf = [0u16; 2];
            for unit in c.encode_utf16(&mut buf) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether `c` is dropped or starts something that is.
fn needs_work(c: char) -> bool {
    match c {
        '\n' | '\t' => false,
        c if (c as u32) < 0x20 || c == '\u{7f}' => true,
        '\u{80}'..='\u{9f}' => true,
        c => is_invisible_format(c),
    }
}

/// Bidi controls and tag characters that can make displayed text differ from its content.
pub fn is_invisible_format(c: char) -> bool {
    matches!(
        c,
        '\u{202a}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}'
            | '\u{200e}'
            | '\u{200f}'
            | '\u{061c}'
            | '\u{e0000}'..='\u{e007f}'
            // Zero-width characters hide inside words and markers (`</untrusted_\u{200b}content>`).
            | '\u{200b}'..='\u{200d}'
            | '\u{2060}'
            | '\u{feff}'
    )
}

/// What kind of escape sequence a byte after ESC (or a C1 introducer) starts.
enum Seq {
    /// Control Sequence: parameters/intermediates then one final byte 0x40–0x7E.
    Csi,
    /// String up to ST (`ESC \`, U+009C) or, for OSC, BEL.
    Str,
}

fn clean_into(text: &str, out: &mut String) {
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let seq = match c {
            '\u{1b}' => match chars.peek().copied() {
                Some('[') => {
                    chars.next();
                    Some(Seq::Csi)
                }
                Some(']' | 'P' | 'X' | '^' | '_') => {
                    chars.next();
                    Some(Seq::Str)
                }
                Some(' '..='/') => {
                    // nF: intermediates then one final byte (e.g. `ESC ( B`).
                    while chars.next_if(|c| matches!(c, ' '..='/')).is_some() {}
                    chars.next_if(|c| matches!(c, '0'..='~'));
                    None
                }
                Some('0'..='~') => {
                    // Fp/Fe/Fs two-char sequences (`ESC 7`, `ESC c`, `ESC M`, …).
                    chars.next();
                    None
                }
                _ => None, // lone ESC
            },
            '\u{9b}' => Some(Seq::Csi),
            '\u{9d}' | '\u{90}' | '\u{98}' | '\u{9e}' | '\u{9f}' => Some(Seq::Str),
            '\n' | '\t' => {
                out.push(c);
                None
            }
            c if needs_work(c) => None,
            c => {
                out.push(c);
                None
            }
        };
        match seq {
            Some(Seq::Csi) => {
                // Parameter and intermediate bytes, then the final byte. Anything else ends the
                // sequence without being swallowed.
                while chars
                    .next_if(|c| matches!(c, '0'..='?' | ' '..='/'))
                    .is_some()
                {}
                chars.next_if(|c| matches!(c, '@'..='~'));
            }
            Some(Seq::Str) => {
                while let Some(&n) = chars.peek() {
                    match n {
                        '\u{7}' | '\u{9c}' => {
                            chars.next();
                            break;
                        }
                        '\u{1b}' => {
                            chars.next();
                            chars.next_if_eq(&'\\');
                            break;
                        }
                        '\n' => break,
                        _ => {
                            chars.next();
                        }
                    }
                }
            }
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_are_removed() {
        let cases: &[(&str, &str)] = &[
            ("plain text", "plain text"),
            ("\u{1b}[31mred\u{1b}[0m", "red"),
            ("\u{1b}[1;38;5;196mbold\u{1b}[m!", "bold!"),
            ("\u{1b}[2J\u{1b}[Hclear", "clear"),
            ("\u{1b}[?1049hscreen", "screen"),
            ("\u{1b}]0;evil title\u{7}after", "after"),
            ("\u{1b}]8;;http://x\u{1b}\\link\u{1b}]8;;\u{1b}\\", "link"),
            ("\u{1b}]52;c;ZXZpbA==\u{7}clip", "clip"),
            ("\u{1b}Pq#0;2;0;0;0\u{1b}\\dcs", "dcs"),
            ("\u{1b}_apc payload\u{1b}\\ok", "ok"),
            ("\u{1b}^pm\u{1b}\\ok", "ok"),
            ("\u{1b}Xsos\u{9c}ok", "ok"),
            ("\u{1b}(Bcharset", "charset"),
            ("\u{1b}7save\u{1b}8", "save"),
            ("\u{1b}cfull reset", "full reset"),
            ("\u{9b}31mc1 csi", "c1 csi"),
            ("\u{9d}0;title\u{9c}c1 osc", "c1 osc"),
            ("a\u{85}b\u{80}c", "abc"),
            ("lone esc\u{1b}", "lone esc"),
            ("\u{1b}[31", ""),
            ("\u{1b}]unterminated\nnext line", "\nnext line"),
            (
                "bell\u{7} bs\u{8} nul\u{0} del\u{7f} cr\r\n",
                "bell bs nul del cr\n",
            ),
            ("keep\ttab\nand newline", "keep\ttab\nand newline"),
            ("user\u{202e}gnp.exe", "usergnp.exe"),
            ("a\u{2066}b\u{2069}c\u{200f}d\u{61c}e", "abcde"),
            ("tag\u{e0041}\u{e0042}s", "tags"),
            ("Привет, мир 🙂 漢字", "Привет, мир 🙂 漢字"),
        ];
        for (input, want) in cases {
            assert_eq!(for_terminal(input), *want, "input {input:?}");
        }
    }

    #[test]
    fn one_line_flattens() {
        assert_eq!(one_line("  a\n\tb \r\n c  "), "a b c");
        assert_eq!(one_line("\u{1b}[1mtitle\u{1b}[0m\nbody"), "title body");
        assert_eq!(one_line(""), "");
    }

    #[test]
    fn output_never_contains_controls() {
        let pieces = [
            "\u{1b}", "[", "]", "P", "\\", "\u{7}", "\u{9b}", "\u{9c}", "\u{9d}", "m", "0", ";",
            "\n", "\t", "\r", "ж", "🙂", "\u{202e}", "(", "x", "\u{0}", "?",
        ];
        let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
        for _ in 0..5000 {
            let mut s = String::new();
            for _ in 0..(seed % 16) {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                s.push_str(pieces[(seed % pieces.len() as u64) as usize]);
            }
            seed = seed.wrapping_add(1);
            let out = for_terminal(&s);
            assert!(!out.chars().any(needs_work), "{s:?} -> {out:?}");
            assert_eq!(for_terminal(&out), out, "not idempotent for {s:?}");
            let line = one_line(&s);
            assert!(!line.contains('\n') && !line.contains('\t'), "{s:?}");
        }
    }
}
