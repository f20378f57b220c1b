//! Tokens and stems: the single place where text becomes search terms.
//!
//! Indexing and querying must agree exactly, so both go through [`Tokenizer`]: words are runs of
//! Unicode letters/digits, identifiers are split on `_`, case changes and letter/digit boundaries,
//! everything is lowercased with `ё`→`е`, and each part is stemmed with Snowball (Russian for
//! Cyrillic, English for ASCII Latin). A compound identifier also yields its whole lowercased
//! (and stemmed) spelling, so `getUserName` and `getusername` meet. A word that alternates
//! letters and digits three or more times (hashes, ids, base64) is one opaque term instead.
//! Dotted numbers (`176.99.5.35`, `v1.2.3`) yield their digit groups, so an IP query matches.
//! Terms are capped at [`MAX_TERM_BYTES`]. [`query_terms`] additionally drops stopwords.
//!
//! The stored form ([`index_text`]) is a space-separated list of terms made only of lowercase
//! letters and digits, so the full-text index's tokenizer (Tantivy's `SimpleTokenizer`, and
//! PostgreSQL's parser for the team index) keeps each term intact. A user's query never reaches
//! an index as syntax: the lanes build their queries from these terms.

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use rust_stemmers::{Algorithm, Stemmer};

/// Longest term kept, in bytes (cut at a char boundary).
pub const MAX_TERM_BYTES: usize = 64;

/// Stem cache size bound; the cache is cleared when it grows past this many words.
const STEM_CACHE_MAX: usize = 50_000;

/// Only words up to this many bytes are cached.
const STEM_CACHE_WORD_MAX: usize = 32;

/// A word with this many letter/digit alternations (`a1b2c3`, hashes, base64) is kept whole
/// instead of being split into meaningless fragments.
const MAX_ALNUM_SWITCHES: usize = 3;

/// One search term and the byte range (in the original text) of the word part it came from.
/// For the extra whole-identifier term of a compound identifier the range covers the identifier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub term: String,
    pub start: usize,
    pub end: usize,
}

/// Query stopwords, compared with the lowercased, `ё`-folded word before stemming.
#[rustfmt::skip]
const STOPWORDS: &[&str] = &[
    // Russian function words.
    "а", "без", "бы", "был", "была", "были", "было", "быть", "в", "вам", "вас", "во", "вот", "все",
    "вы", "где", "да", "для", "до", "его", "ее", "если", "есть", "еще", "же",
    "за", "и", "из", "или", "им", "их", "к", "как", "какая", "какие", "какой", "когда", "кого",
    "ко", "кому", "кто", "ли", "мне", "мы", "на", "над", "надо", "нам", "нас", "него", "нее",
    "ним", "них", "но", "ну", "о", "об", "обо", "он", "она", "они", "оно", "от", "по",
    "под", "почему", "при", "про", "с", "со", "так", "там", "то", "того", "тоже", "только", "ты",
    "у", "уже", "чем", "через", "что", "чтобы", "чье", "чья", "эта", "эти", "это", "этот", "я",
    "зачем", "куда", "откуда", "сколько",
    // English function words.
    "a", "about", "am", "an", "and", "are", "as", "at", "be", "been", "being", "but", "by", "can",
    "could", "did", "do", "does", "done", "for", "from", "had", "has", "have", "he", "her", "him",
    "his", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "of", "on", "or", "our",
    "she", "should", "so", "than", "that", "the", "their", "them", "then", "there", "these",
    "they", "this", "those", "to", "was", "we", "were", "what", "when", "where", "which", "who",
    "whom", "whose", "why", "will", "with", "would", "you", "your",
];

pub(crate) fn is_stopword(folded: &str) -> bool {
    STOPWORDS.contains(&folded)
}

/// One emitted term, before it is copied anywhere.
struct TermEvent<'a> {
    /// Final (stemmed, capped) term.
    term: &'a str,
    /// True for the plain lowercased word part that is a stopword (never for compounds).
    stopword: bool,
    start: usize,
    end: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Lower,
    Upper,
    /// Letter without case (CJK, etc.).
    Caseless,
    Digit,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Script {
    Latin,
    Cyrillic,
    Other,
    Digit,
}

fn is_word_char(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_alphanumeric() || c == '_'
    } else {
        matches!(c, 'А'..='я' | 'ё' | 'Ё') || c.is_alphanumeric()
    }
}

fn classify(c: char) -> (Class, Script) {
    if c.is_ascii() {
        return if c.is_ascii_digit() {
            (Class::Digit, Script::Digit)
        } else if c.is_ascii_uppercase() {
            (Class::Upper, Script::Latin)
        } else {
            (Class::Lower, Script::Latin)
        };
    }
    match c {
        'а'..='я' | 'ё' => return (Class::Lower, Script::Cyrillic),
        'А'..='Я' | 'Ё' => return (Class::Upper, Script::Cyrillic),
        _ => {}
    }
    if c.is_numeric() {
        return (Class::Digit, Script::Digit);
    }
    let script = match c as u32 {
        0x0400..=0x052F | 0x1C80..=0x1C8F | 0x2DE0..=0x2DFF | 0xA640..=0xA69F => Script::Cyrillic,
        0x00C0..=0x024F | 0x1E00..=0x1EFF => Script::Latin,
        _ => Script::Other,
    };
    let class = if c.is_uppercase() {
        Class::Upper
    } else if c.is_lowercase() {
        Class::Lower
    } else {
        Class::Caseless
    };
    (class, script)
}

/// Tokenizer with its stemmers and scratch buffers; reuse one per thread for speed.
pub struct Tokenizer {
    en: Stemmer,
    ru: Stemmer,
    /// Byte ranges of the current word's parts.
    parts: Vec<(usize, usize)>,
    /// Lowercased part being stemmed.
    folded: String,
    /// Lowercased concatenation of all parts of the current word.
    whole: String,
    stems: StemCache,
}

impl Default for Tokenizer {
    fn default() -> Self {
        Self::new()
    }
}

impl Tokenizer {
    pub fn new() -> Self {
        Tokenizer {
            en: Stemmer::create(Algorithm::English),
            ru: Stemmer::create(Algorithm::Russian),
            parts: Vec::with_capacity(8),
            folded: String::with_capacity(64),
            whole: String::with_capacity(64),
            stems: StemCache::default(),
        }
    }

    /// All terms of `text` with their byte ranges.
    pub fn tokenize(&mut self, text: &str) -> Vec<Token> {
        let mut out = Vec::with_capacity(text.len() / 6 + 1);
        self.for_each_term(text, false, |e| {
            out.push(Token {
                term: e.term.to_owned(),
                start: e.start,
                end: e.end,
            });
            true
        });
        out
    }

    /// Terms joined by single spaces: the form the full-text indexes store.
    pub fn index_text(&mut self, text: &str) -> String {
        let mut out = String::with_capacity(text.len() + 16);
        self.for_each_term(text, false, |e| {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(e.term);
            true
        });
        out
    }

    /// Distinct query terms in order of first appearance, stopwords removed unless that would
    /// leave nothing.
    pub fn query_terms(&mut self, query: &str) -> Vec<String> {
        let mut kept: Vec<String> = Vec::new();
        let mut all: Vec<String> = Vec::new();
        self.for_each_term(query, true, |e| {
            if !all.iter().any(|t| t == e.term) {
                all.push(e.term.to_owned());
            }
            if !e.stopword && !kept.iter().any(|t| t == e.term) {
                kept.push(e.term.to_owned());
            }
            true
        });
        if kept.is_empty() {
            all
        } else {
            kept
        }
    }

    /// Byte range of the first word part (or whole identifier) whose term is one of `terms`.
    pub fn first_match(&mut self, text: &str, terms: &[String]) -> Option<(usize, usize)> {
        let mut found = None;
        if terms.is_empty() {
            return None;
        }
        self.for_each_term(text, false, |e| {
            if terms.iter().any(|t| t == e.term) {
                found = Some((e.start, e.end));
                return false;
            }
            true
        });
        found
    }

    /// Byte ranges of every word part whose term is one of `terms`, in text order.
    pub fn match_ranges(&mut self, text: &str, terms: &[String]) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        if terms.is_empty() {
            return out;
        }
        self.for_each_term(text, false, |e| {
            if terms.iter().any(|t| t == e.term) {
                out.push((e.start, e.end));
            }
            true
        });
        out
    }

    /// Call `f` for every term of `text` until it returns false; stopword flags are computed
    /// only when `stopwords`.
    fn for_each_term(
        &mut self,
        text: &str,
        stopwords: bool,
        mut f: impl FnMut(TermEvent<'_>) -> bool,
    ) {
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            // Skip separators quickly on ASCII; decode only when needed.
            let b = bytes[i];
            if b < 0x80 {
                if b.is_ascii_alphanumeric() || b == b'_' {
                    let end = word_end(text, i);
                    if !self.word(text, i, end, stopwords, &mut f) {
                        return;
                    }
                    i = end;
                } else {
                    i += 1;
                }
                continue;
            }
            let Some(c) = text[i..].chars().next() else {
                break;
            };
            if is_word_char(c) {
                let end = word_end(text, i);
                if !self.word(text, i, end, stopwords, &mut f) {
                    return;
                }
                i = end;
            } else {
                i += c.len_utf8();
            }
        }
    }

    /// Handle one word `text[start..end]` (a run of word chars, `_` included).
    fn word(
        &mut self,
        text: &str,
        start: usize,
        end: usize,
        stopwords: bool,
        f: &mut impl FnMut(TermEvent<'_>) -> bool,
    ) -> bool {
        let word = &text[start..end];
        self.split_parts(word, start);
        if self.parts.is_empty() {
            return true; // only underscores
        }
        if alnum_switches(word) >= MAX_ALNUM_SWITCHES {
            // Hash-like: one opaque term, not stemmed.
            self.whole.clear();
            for c in word.chars().filter(|&c| c != '_') {
                push_folded(&mut self.whole, c);
            }
            let term = cap(&self.whole);
            let event = TermEvent {
                term,
                stopword: false,
                start,
                end,
            };
            return term.is_empty() || f(event);
        }
        self.whole.clear();
        let compound = self.parts.len() > 1;
        for k in 0..self.parts.len() {
            let (ps, pe) = self.parts[k];
            self.folded.clear();
            for c in text[ps..pe].chars() {
                push_folded(&mut self.folded, c);
            }
            if self.folded.is_empty() {
                continue;
            }
            if compound {
                self.whole.push_str(&self.folded);
            }
            let stopword = stopwords && is_stopword(&self.folded);
            let term = self.stems.stem(&self.en, &self.ru, &self.folded);
            let event = TermEvent {
                term,
                stopword,
                start: ps,
                end: pe,
            };
            if !term.is_empty() && !f(event) {
                return false;
            }
        }
        if compound && !self.whole.is_empty() {
            let term = self.stems.stem(&self.en, &self.ru, &self.whole);
            if !f(TermEvent {
                term,
                stopword: false,
                start,
                end,
            }) {
                return false;
            }
        }
        true
    }

    /// Fill `self.parts` with the byte ranges (absolute) of the identifier parts of `word`.
    fn split_parts(&mut self, word: &str, base: usize) {
        self.parts.clear();
        let mut part_start: Option<usize> = None;
        let mut prev: Option<(Class, Script)> = None;
        let mut iter = word.char_indices();
        while let Some((off, c)) = iter.next() {
            let at = base + off;
            if c == '_' {
                if let Some(ps) = part_start.take() {
                    self.parts.push((ps, at));
                }
                prev = None;
                continue;
            }
            let cur = classify(c);
            let boundary = match prev {
                None => false,
                Some((pc, ps)) => {
                    let (cc, cs) = cur;
                    (pc == Class::Digit) != (cc == Class::Digit)
                        || ps != cs
                        || (pc != Class::Upper && cc == Class::Upper)
                        || (pc == Class::Upper && cc == Class::Upper && lower_run_follows(&iter))
                }
            };
            if boundary {
                if let Some(ps) = part_start.take() {
                    self.parts.push((ps, at));
                }
            }
            if part_start.is_none() {
                part_start = Some(at);
            }
            prev = Some(cur);
        }
        if let Some(ps) = part_start {
            self.parts.push((ps, base + word.len()));
        }
    }
}

/// True when the next two chars are lowercase letters: `HTTPServer` splits before `S`, while
/// `URLs` and `IDs` stay whole.
fn lower_run_follows(rest: &std::str::CharIndices<'_>) -> bool {
    let mut la = rest.clone().map(|(_, c)| c);
    let is_lower = |c: Option<char>| c.is_some_and(|c| c != '_' && classify(c).0 == Class::Lower);
    is_lower(la.next()) && is_lower(la.next())
}

/// End (exclusive byte offset) of the word starting at `start`.
fn word_end(text: &str, start: usize) -> usize {
    let bytes = text.as_bytes();
    let mut i = start;
    while i < bytes.len() {
        let b = bytes[i];
        if b < 0x80 {
            if b.is_ascii_alphanumeric() || b == b'_' {
                i += 1;
                continue;
            }
            break;
        }
        match text[i..].chars().next() {
            Some(c) if is_word_char(c) => i += c.len_utf8(),
            _ => break,
        }
    }
    i
}

/// Number of letter↔digit alternations in a word (underscores ignored).
fn alnum_switches(word: &str) -> usize {
    let mut switches = 0;
    let mut prev: Option<bool> = None;
    for c in word.chars().filter(|&c| c != '_') {
        let digit = c.is_ascii_digit() || (!c.is_ascii() && c.is_numeric());
        if prev.is_some_and(|p| p != digit) {
            switches += 1;
        }
        prev = Some(digit);
    }
    switches
}

/// Push the lowercased, `ё`-folded form of `c`, keeping only letters and digits.
fn push_folded(out: &mut String, c: char) {
    if c.is_ascii() {
        out.push(c.to_ascii_lowercase());
        return;
    }
    match c {
        'а'..='я' => return out.push(c),
        // `А`..`Я` map to `а`..`я` at a fixed distance of 0x20.
        'А'..='Я' => return out.push(char::from_u32(c as u32 + 0x20).unwrap_or(c)),
        'ё' | 'Ё' => return out.push('е'),
        _ => {}
    }
    for l in c.to_lowercase() {
        match l {
            'ё' => out.push('е'),
            l if l.is_alphanumeric() => out.push(l),
            _ => {}
        }
    }
}

/// FxHash-style hasher: stems are looked up for nearly every word, SipHash is too slow here.
/// The embedding table's word and piece maps use it too.
#[derive(Default)]
pub(crate) struct FastHasher(u64);

/// A map keyed by short strings with [`FastHasher`].
pub(crate) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

impl Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Memo of folded word → capped stem, plus a scratch slot for words not cached.
#[derive(Default)]
struct StemCache {
    map: HashMap<Box<str>, Box<str>, BuildHasherDefault<FastHasher>>,
    scratch: String,
}

impl StemCache {
    fn stem(&mut self, en: &Stemmer, ru: &Stemmer, folded: &str) -> &str {
        if folded.len() > STEM_CACHE_WORD_MAX {
            self.scratch.clear();
            self.scratch.push_str(cap(&stem(en, ru, folded)));
            return &self.scratch;
        }
        if !self.map.contains_key(folded) {
            if self.map.len() >= STEM_CACHE_MAX {
                self.map.clear();
            }
            let stemmed: Box<str> = cap(&stem(en, ru, folded)).into();
            self.map.insert(folded.into(), stemmed);
        }
        self.map.get(folded).map_or("", |s| s)
    }
}

/// Stem a folded word: English for ASCII letters, Russian for Cyrillic letters, else as is.
fn stem<'a>(en: &Stemmer, ru: &Stemmer, word: &'a str) -> std::borrow::Cow<'a, str> {
    if word.bytes().all(|b| b.is_ascii_lowercase()) {
        en.stem(word)
    } else if word.chars().all(|c| matches!(c, 'а'..='я')) {
        ru.stem(word)
    } else {
        std::borrow::Cow::Borrowed(word)
    }
}

/// Cut a term to at most [`MAX_TERM_BYTES`] bytes at a char boundary.
fn cap(term: &str) -> &str {
    if term.len() <= MAX_TERM_BYTES {
        return term;
    }
    let mut end = MAX_TERM_BYTES;
    while !term.is_char_boundary(end) {
        end -= 1;
    }
    &term[..end]
}

thread_local! {
    static TOKENIZER: RefCell<Tokenizer> = RefCell::new(Tokenizer::new());
}

fn with_tokenizer<R>(f: impl FnOnce(&mut Tokenizer) -> R) -> R {
    TOKENIZER.with(|t| match t.try_borrow_mut() {
        Ok(mut t) => f(&mut t),
        Err(_) => f(&mut Tokenizer::new()),
    })
}

/// All terms of `text` with byte offsets; see the module docs for the rules.
pub fn tokenize(text: &str) -> Vec<Token> {
    with_tokenizer(|t| t.tokenize(text))
}

/// The terms of `text` joined by spaces: what the full-text indexes store.
pub fn index_text(text: &str) -> String {
    with_tokenizer(|t| t.index_text(text))
}

/// Distinct terms of a query, in order, without stopwords (unless only stopwords remain).
pub fn query_terms(query: &str) -> Vec<String> {
    with_tokenizer(|t| t.query_terms(query))
}

/// Byte range of the first word in `text` whose term is one of `terms` (see
/// [`Tokenizer::first_match`]).
pub fn first_match(text: &str, terms: &[String]) -> Option<(usize, usize)> {
    with_tokenizer(|t| t.first_match(text, terms))
}

/// Byte ranges of every word part of `text` whose term is one of `terms`, in text order
/// (see [`Tokenizer::match_ranges`]).
pub fn term_ranges(text: &str, terms: &[String]) -> Vec<(usize, usize)> {
    with_tokenizer(|t| t.match_ranges(text, terms))
}

mod identifiers;
pub use identifiers::identifier_terms;

#[cfg(test)]
mod tests;
