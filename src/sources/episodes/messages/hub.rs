//! The hub term of a message: its mean cosine to a fixed set of generic questions, one set per
//! query language.
//!
//! Why: in a sentence encoder's space a short filler message ("ok, do it", "thanks", a bare
//! command) sits near every question, so it would answer every query. How near a message is to
//! questions about nothing in particular is a property of the message alone, computed once when
//! it is embedded and subtracted from its cosine to the query at search time.
//!
//! The questions below were written for this purpose, about nothing any session or benchmark
//! question is about; they must never be taken from the relevance questions.

use crate::text::encoder::{Encoder, DIMS};

/// Generic questions in English.
const ENGLISH: &[&str] = &[
    "what did we do?",
    "how does this work?",
    "can you help me with this?",
    "what is the problem here?",
    "why does it not work?",
    "what happened last time?",
    "where is it?",
    "who did that?",
    "what should I do next?",
    "is it done yet?",
    "how do I fix it?",
    "what was the result?",
    "can you explain this to me?",
    "what changed?",
    "when did we do that?",
    "which one is better?",
    "what did you find?",
    "how long will it take?",
    "did it work?",
    "what is going on?",
    "show me what you did",
    "tell me more about it",
    "what was the plan?",
    "how did we solve it?",
];

/// Generic questions in Russian.
const RUSSIAN: &[&str] = &[
    "что мы сделали?",
    "как это работает?",
    "можешь помочь с этим?",
    "в чём тут проблема?",
    "почему это не работает?",
    "что было в прошлый раз?",
    "где это находится?",
    "кто это сделал?",
    "что делать дальше?",
    "это уже готово?",
    "как это исправить?",
    "какой был результат?",
    "объясни мне это",
    "что изменилось?",
    "когда мы это делали?",
    "что из этого лучше?",
    "что ты нашёл?",
    "сколько это займёт?",
    "получилось?",
    "что происходит?",
    "покажи, что ты сделал",
    "расскажи подробнее",
    "какой был план?",
    "как мы это решили?",
];

/// The mean of each set's vectors: a message's mean cosine to a set is its dot product with the
/// set's mean.
pub struct HubCentres {
    pub english: [f32; DIMS],
    pub russian: [f32; DIMS],
}

impl HubCentres {
    pub fn new(enc: &Encoder) -> Self {
        HubCentres {
            english: mean(enc, ENGLISH),
            russian: mean(enc, RUSSIAN),
        }
    }

    /// (English, Russian) hub terms of the unit vector `v`.
    pub fn terms(&self, v: &[f32; DIMS]) -> (f32, f32) {
        (dot(&self.english, v), dot(&self.russian, v))
    }
}

fn mean(enc: &Encoder, texts: &[&str]) -> [f32; DIMS] {
    let mut out = [0f32; DIMS];
    for t in texts {
        for (o, x) in out.iter_mut().zip(enc.encode(t)) {
            *o += x;
        }
    }
    let n = texts.len().max(1) as f32;
    out.iter_mut().for_each(|o| *o /= n);
    out
}

fn dot(a: &[f32; DIMS], b: &[f32; DIMS]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Whether a query is to be corrected with the Russian set: it holds a Cyrillic letter.
pub fn is_russian(query: &str) -> bool {
    query.chars().any(|c| matches!(c, '\u{0400}'..='\u{04FF}'))
}
