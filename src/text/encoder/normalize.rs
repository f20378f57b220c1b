//! The text normalisation the encoder's SentencePiece model was trained with (`nmt_nfkc`), as the
//! wheel applies it: the model's precompiled character map (a darts-clone double-array trie of
//! UTF-8 keys and a table of NUL-terminated replacements; the longest key wins), then the
//! whitespace rules: leading, trailing and repeated spaces dropped, every space written as `▁`
//! and one `▁` put before the text. The vectors depend on it: "ｆｕｌｌ" must segment as "full".
//! No lowercasing: the vocabulary has cased pieces.

/// The word-start mark that stands for a space in the pieces.
pub const SPACE: &str = "\u{2581}";

/// The precompiled character map, read in place.
pub(super) struct CharsMap<'a> {
    /// The double array; empty when the model has no map (text is then kept as is).
    units: &'a [u32],
    /// NUL-terminated replacement strings, addressed by the trie's values.
    replacements: &'a [u8],
}

impl<'a> CharsMap<'a> {
    /// Splits the `charsmap` section: u32 trie byte length, the trie, the replacements.
    pub fn new(units: &'a [u32], replacements: &'a [u8]) -> Self {
        CharsMap {
            units,
            replacements,
        }
    }

    /// What `data[pos..]` starts with, normalised, and how many bytes of `data` that consumed
    /// (`pos < data.len()`, on a character boundary).
    fn prefix<'d>(&self, data: &'d [u8], pos: usize) -> (&'d [u8], usize)
    where
        'a: 'd,
    {
        let (mut best_len, mut best_value) = (0, 0usize);
        if let Some(&root) = self.units.first() {
            let mut node = offset(root);
            for (i, &c) in data[pos..].iter().enumerate() {
                node ^= c as usize;
                let Some(&unit) = self.units.get(node) else {
                    break;
                };
                if unit & 0x8000_00FF != c as u32 {
                    break;
                }
                node ^= offset(unit);
                if unit & 0x100 != 0 {
                    let Some(&leaf) = self.units.get(node) else {
                        break;
                    };
                    best_len = i + 1;
                    best_value = (leaf & 0x7FFF_FFFF) as usize;
                }
            }
        }
        if best_len == 0 || best_value >= self.replacements.len() {
            let len = utf8_len(data[pos]).min(data.len() - pos);
            return (&data[pos..pos + len], len);
        }
        let rest = &self.replacements[best_value..];
        let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
        (&rest[..end], best_len)
    }

    /// The text as the segmenter sees it: mapped, spaces as `▁`, one `▁` in front; empty when
    /// nothing but whitespace is left.
    pub fn normalize(&self, text: &str) -> String {
        let data = text.as_bytes();
        let mut pos = 0;
        while pos < data.len() {
            let (p, used) = self.prefix(data, pos);
            if p != b" " {
                break;
            }
            pos += used;
        }
        if pos >= data.len() {
            return String::new();
        }
        let mut out: Vec<u8> = Vec::with_capacity(data.len() + 8);
        out.extend_from_slice(SPACE.as_bytes());
        let mut after_space = true;
        while pos < data.len() {
            let (mut p, used) = self.prefix(data, pos);
            pos += used;
            if after_space {
                while let [b' ', rest @ ..] = p {
                    p = rest;
                }
            }
            let Some(&last) = p.last() else {
                continue;
            };
            for &b in p {
                if b == b' ' {
                    out.extend_from_slice(SPACE.as_bytes());
                } else {
                    out.push(b);
                }
            }
            after_space = last == b' ';
        }
        while out.ends_with(SPACE.as_bytes()) {
            out.truncate(out.len() - SPACE.len());
        }
        String::from_utf8(out)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }
}

/// A double-array unit's child offset.
fn offset(unit: u32) -> usize {
    ((unit >> 10) << ((unit & 0x200) >> 6)) as usize
}

/// Bytes of the UTF-8 character that starts with `first`.
fn utf8_len(first: u8) -> usize {
    match first {
        0x00..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => 1,
    }
}
