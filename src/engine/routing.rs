//! Deterministic routing (contract §6): cue words, matched on stems, choose the intent and the
//! lane weights. No model is involved, so the same query always routes the same way.

use std::sync::OnceLock;

use crate::contract::{Include, Lane, Mode};
use crate::text::tokens;

/// The routing decision for one request.
#[derive(Debug, Clone, PartialEq)]
pub struct Route {
    pub intent: Mode,
    /// Weight of each lane (episodes, code, skills), used by RRF.
    pub weights: [f64; 3],
    pub confidence: f64,
    pub reason: String,
    /// The included lanes, highest weight first.
    pub lanes: Vec<Lane>,
}

impl Route {
    pub fn weight(&self, lane: Lane) -> f64 {
        self.weights[lane as usize]
    }
}

/// Lane weights of each intent, as the contract's table gives them.
pub fn weights_of(intent: Mode) -> [f64; 3] {
    match intent {
        Mode::FindAgent => [1.0, 0.4, 0.6],
        Mode::FindCode => [0.3, 1.0, 0.2],
        Mode::FindSkill => [0.5, 0.2, 1.0],
        Mode::FindKnowledge | Mode::Auto => [0.8, 0.8, 0.4],
    }
}

const AGENT_CUES: &[&str] = &[
    "кто",
    "когда",
    "почему",
    "решал",
    "делал",
    "чинил",
    "исправлял",
    "сессия",
    "агент",
    "навык",
    "who",
    "when",
    "why",
    "solved",
    "did",
    "fixed",
    "session",
    "agent",
    "subagent",
    "teammate",
];
const CODE_CUES: &[&str] = &[
    "где",
    "функция",
    "класс",
    "символ",
    "вызывает",
    "затронет",
    "impact",
    "схема",
    "таблица",
    "маршрут",
    "политика",
    "файл",
    "where",
    "function",
    "class",
    "symbol",
    "calls",
    "affect",
    "schema",
    "table",
    "route",
    "policy",
    "defined",
    "file",
    "method",
];
const SKILL_CUES: &[&str] = &[
    "навык",
    "skill",
    "whentouse",
    "применял",
    "инструкция",
    "skills",
    "applied",
    "instruction",
    "playbook",
];

struct Cues {
    agent: Vec<String>,
    code: Vec<String>,
    skill: Vec<String>,
}

fn cues() -> &'static Cues {
    static CUES: OnceLock<Cues> = OnceLock::new();
    CUES.get_or_init(|| {
        let stems = |words: &[&str]| -> Vec<String> {
            words
                .iter()
                .flat_map(|w| tokens::tokenize(w).into_iter().map(|t| t.term))
                .collect()
        };
        Cues {
            agent: stems(AGENT_CUES),
            code: stems(CODE_CUES),
            skill: stems(SKILL_CUES),
        }
    })
}

/// Route a query. `mode` other than `auto` wins over the heuristic.
pub fn route(query: &str, mode: Mode, include: &Include) -> Route {
    let russian = query
        .chars()
        .any(|c| matches!(c, 'а'..='я' | 'А'..='Я' | 'ё' | 'Ё'));
    let (intent, confidence, reason, weights) = if mode != Mode::Auto {
        let reason = if russian {
            format!("режим {} задан в запросе", mode.as_str())
        } else {
            format!("mode {} was set by the caller", mode.as_str())
        };
        (mode, 1.0, reason, weights_of(mode))
    } else {
        heuristic(query, russian)
    };
    let mut lanes: Vec<Lane> = include.iter().copied().collect();
    lanes.sort_by(|a, b| {
        weights[*b as usize]
            .total_cmp(&weights[*a as usize])
            .then(a.cmp(b))
    });
    Route {
        intent,
        weights,
        confidence,
        reason,
        lanes,
    }
}

fn heuristic(query: &str, russian: bool) -> (Mode, f64, String, [f64; 3]) {
    let c = cues();
    // (stem, the word as the person wrote it), so the reason quotes their words.
    let terms: Vec<(String, String)> = tokens::tokenize(query)
        .into_iter()
        .map(|t| {
            let word = query.get(t.start..t.end).unwrap_or(&t.term).to_lowercase();
            (t.term, word)
        })
        .collect();
    let hits = |list: &[String]| -> Vec<String> {
        let mut found: Vec<String> = Vec::new();
        for (stem, word) in &terms {
            if list.contains(stem) && !found.contains(word) {
                found.push(word.clone());
            }
        }
        found
    };
    let code = hits(&c.code);
    let skill = hits(&c.skill);
    // `навык` is a cue of both tables; it speaks of the skill, so it counts for skill only.
    let agent: Vec<String> = hits(&c.agent)
        .into_iter()
        .filter(|w| !skill.contains(w))
        .collect();
    // Ranked by hit count; ties broken towards the narrower intent (skill, then agent, then code).
    let mut ranked = [
        (Mode::FindSkill, skill.len()),
        (Mode::FindAgent, agent.len()),
        (Mode::FindCode, code.len()),
    ];
    ranked.sort_by_key(|r| std::cmp::Reverse(r.1));
    let (top, top_n) = ranked[0];
    let (second, second_n) = ranked[1];
    let cue_list = |m: Mode| match m {
        Mode::FindAgent => agent.join(", "),
        Mode::FindCode => code.join(", "),
        _ => skill.join(", "),
    };
    if top_n == 0 {
        let reason = if russian {
            "нет слов-признаков; эпизоды и код с равным весом".to_string()
        } else {
            "no cue words; episodes and code weighted equally".to_string()
        };
        return (
            Mode::FindKnowledge,
            0.5,
            reason,
            weights_of(Mode::FindKnowledge),
        );
    }
    if second_n > 0 {
        // A mixed question keeps both themes: each lane gets the larger of the two weights.
        let (a, b) = (weights_of(top), weights_of(second));
        let weights = [a[0].max(b[0]), a[1].max(b[1]), a[2].max(b[2])];
        let confidence = if top_n > second_n { 0.6 } else { 0.5 };
        let reason = if russian {
            format!(
                "смешанный вопрос: признаки {} ({}) и {} ({}); включены обе темы, уверенность ниже",
                top.as_str(),
                cue_list(top),
                second.as_str(),
                cue_list(second)
            )
        } else {
            format!(
                "mixed question: {} cues ({}) and {} cues ({}); both kept, lower confidence",
                top.as_str(),
                cue_list(top),
                second.as_str(),
                cue_list(second)
            )
        };
        return (top, confidence, reason, weights);
    }
    let confidence = if top_n >= 2 { 0.86 } else { 0.75 };
    let reason = if russian {
        format!("признаки {}: {}", top.as_str(), cue_list(top))
    } else {
        format!("{} cues: {}", top.as_str(), cue_list(top))
    };
    (top, confidence, reason, weights_of(top))
}
