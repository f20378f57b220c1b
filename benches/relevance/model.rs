//! The relevance benchmark's questions, how a response is scored against their labels, and the
//! tallies per group (lane × intent × kind). Kept apart from the runner so the scoring rules can
//! be read in one place.

use std::collections::BTreeMap;

use knowledge::contract::SearchResponse;
use serde::Deserialize;
use serde_json::{json, Value};

/// One labelled question (see `questions.toml` for the format).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Question {
    pub id: String,
    pub world: String,
    pub query: String,
    pub intent: String,
    pub lang: String,
    pub kind: String,
    #[serde(default)]
    pub episodes: Vec<String>,
    #[serde(default)]
    pub code: Vec<String>,
    #[serde(default)]
    pub skills: Vec<String>,
    #[serde(default)]
    pub actors: Vec<String>,
    /// `tuning` (questions.toml), `heldout` (heldout.toml), `heldout2` (heldout2.toml) or
    /// `heldout3` (heldout3.toml): set by the runner, not the file.
    #[serde(skip)]
    pub set: &'static str,
}

#[derive(Deserialize)]
struct File {
    q: Vec<Question>,
}

/// The question files and the set each one is reported as: the tuning set, the first held-out
/// set, the second one (`heldout2.toml`, written before issue 19's part 2 because the first had
/// already been run against it), and the third (`heldout3.toml`, written before issue 33's change:
/// rare-identifier and lexical questions) and the fourth (`heldout4.toml`). The relevance bench
/// and issue 33's `lexical_spike` ask them all.
pub const SETS: [(&str, &str); 5] = [
    ("questions.toml", "tuning"),
    ("heldout.toml", "heldout"),
    ("heldout2.toml", "heldout2"),
    // Written before issue 33's change (ranked retrieval); never tuned on.
    ("heldout3.toml", "heldout3"),
    // Written after issue 33's rare-identifier rule landed, by someone who did not see the rule or
    // heldout3, to judge it.
    ("heldout4.toml", "heldout4"),
];

pub const LANES: [&str; 4] = ["episodes", "code", "skills", "actors"];
const INTENTS: [&str; 4] = ["find_agent", "find_code", "find_skill", "find_knowledge"];
const KINDS: [&str; 5] = [
    "lexical",
    "crosslingual",
    "paraphrase",
    "absent",
    "rare_identifier",
];

/// Parse and check a question file of set `set`: every field in range, every question labelled
/// (an `absent` question, about something not in the world, labels nothing).
pub fn parse(text: &str, set: &'static str) -> Result<Vec<Question>, String> {
    let file: File = toml::from_str(text).map_err(|e| e.to_string())?;
    let mut ids = std::collections::HashSet::new();
    for q in &file.q {
        let bad = |what: &str| Err(format!("question {:?}: {what}", q.id));
        if !ids.insert(q.id.clone()) {
            return bad("duplicate id");
        }
        if !["demo", "real"].contains(&q.world.as_str()) {
            return bad("world must be demo or real");
        }
        if !INTENTS.contains(&q.intent.as_str()) {
            return bad("unknown intent");
        }
        if !KINDS.contains(&q.kind.as_str()) {
            return bad("unknown kind");
        }
        if !["ru", "en"].contains(&q.lang.as_str()) {
            return bad("lang must be ru or en");
        }
        let labels_none = q.episodes.is_empty()
            && q.code.is_empty()
            && q.skills.is_empty()
            && q.actors.is_empty();
        if labels_none != (q.kind == "absent") {
            return bad("an absent question labels no lane, any other labels one");
        }
    }
    let mut questions = file.q;
    questions.iter_mut().for_each(|q| q.set = set);
    Ok(questions)
}

impl Question {
    fn labels(&self, lane: &str) -> &[String] {
        match lane {
            "episodes" => &self.episodes,
            "code" => &self.code,
            "skills" => &self.skills,
            _ => &self.actors,
        }
    }

    /// The groups this question counts in, within its set: all, its intent, its kind, its
    /// language, its world.
    pub fn group_keys(&self) -> Vec<String> {
        let set = self.set;
        vec![
            format!("{set} all"),
            format!("{set} intent {}", self.intent),
            format!("{set} kind {}", self.kind),
            format!("{set} lang {}", self.lang),
            format!("{set} world {}", self.world),
        ]
    }
}

/// What one response scored: per labelled lane the 1-based rank of the first accepted item
/// (`None`: not returned), and facts about the whole response.
pub struct Ranks {
    pub lanes: BTreeMap<&'static str, Option<usize>>,
    pub lane_empty: BTreeMap<&'static str, bool>,
    pub routed: String,
    pub no_items: bool,
    pub both_evidence: bool,
}

impl Ranks {
    pub fn of(q: &Question, resp: &SearchResponse) -> Ranks {
        let mut lanes = BTreeMap::new();
        let mut lane_empty = BTreeMap::new();
        for lane in LANES {
            let labels = q.labels(lane);
            let keys = item_keys(resp, lane);
            if labels.is_empty() {
                if q.kind == "absent" {
                    lane_empty.insert(lane, keys.is_empty());
                }
                continue;
            }
            lane_empty.insert(lane, keys.is_empty());
            let rank = keys
                .iter()
                .position(|k| labels.iter().any(|l| accepts(lane, l, k)))
                .map(|i| i + 1);
            lanes.insert(lane, rank);
        }
        let ep = resp.lanes.episodes.items.len();
        let code = resp.lanes.code.items.len();
        let skills = resp.lanes.skills.as_ref().map_or(0, |s| s.items.len());
        Ranks {
            lanes,
            lane_empty,
            routed: resp.routing.intent.as_str().to_string(),
            no_items: ep + code + skills == 0,
            both_evidence: ep > 0 && code > 0,
        }
    }

    pub fn describe(&self) -> String {
        let mut out = format!("routed {:<15}", self.routed);
        for (lane, rank) in &self.lanes {
            let r = rank.map_or("-".to_string(), |r| r.to_string());
            out.push_str(&format!(" {lane}:{r}"));
        }
        out
    }
}

/// The key a label is compared with, for each item of a lane, in lane order.
fn item_keys(resp: &SearchResponse, lane: &str) -> Vec<String> {
    match lane {
        "episodes" => resp
            .lanes
            .episodes
            .items
            .iter()
            .map(|i| i.session_id.clone())
            .collect(),
        "code" => resp
            .lanes
            .code
            .items
            .iter()
            .map(|i| {
                let root = i.root.as_deref().unwrap_or_default();
                let repo = root.rsplit(['/', '\\']).next().unwrap_or_default();
                format!("{repo}/{}", i.path)
            })
            .collect(),
        "skills" => resp
            .lanes
            .skills
            .as_ref()
            .map(|s| s.items.iter().map(|i| i.name.clone()).collect())
            .unwrap_or_default(),
        _ => resp
            .actors
            .iter()
            .map(|a| {
                // actor:<source>:<kind>:<root session>:<name>
                let mut parts = a.actor_id.splitn(4, ':').skip(3);
                let rest = parts.next().unwrap_or_default();
                let session = rest.rsplit_once(':').map_or(rest, |(s, _)| s);
                format!("{}@{}", a.name, session)
            })
            .collect(),
    }
}

/// Whether a label accepts an item key: a session id covers its subagents' ids, an actor label
/// names the first characters of its root session.
fn accepts(lane: &str, label: &str, key: &str) -> bool {
    match lane {
        "episodes" => key.starts_with(label),
        "actors" => match (label.split_once('@'), key.split_once('@')) {
            (Some((ln, ls)), Some((kn, ks))) => ln == kn && ks.starts_with(ls),
            _ => false,
        },
        _ => key == label,
    }
}

/// Sums over the questions of one group.
#[derive(Default)]
pub struct Tally {
    pub questions: usize,
    pub routed_right: usize,
    pub no_items: usize,
    pub both_evidence: usize,
    pub lanes: BTreeMap<&'static str, LaneTally>,
    /// Absent questions (nothing in the world answers them): per lane, how often it came back
    /// empty — "nothing relevant" instead of the nearest vector.
    pub absent: usize,
    pub absent_empty: BTreeMap<&'static str, usize>,
    pub absent_no_items: usize,
}

#[derive(Default, Clone, Copy)]
pub struct LaneTally {
    pub n: usize,
    pub at1: usize,
    pub at5: usize,
    pub rr: f64,
    pub empty: usize,
}

impl Tally {
    pub fn add(&mut self, q: &Question, r: &Ranks) {
        self.questions += 1;
        self.routed_right += usize::from(r.routed == q.intent);
        self.no_items += usize::from(r.no_items);
        self.both_evidence += usize::from(r.both_evidence);
        if q.kind == "absent" {
            self.absent += 1;
            self.absent_no_items += usize::from(r.no_items);
            for (lane, empty) in &r.lane_empty {
                *self.absent_empty.entry(lane).or_default() += usize::from(*empty);
            }
        }
        for (lane, rank) in &r.lanes {
            let t = self.lanes.entry(lane).or_default();
            t.n += 1;
            t.at1 += usize::from(*rank == Some(1));
            t.at5 += usize::from(rank.is_some_and(|r| r <= 5));
            t.rr += rank.map_or(0.0, |r| 1.0 / r as f64);
            t.empty += usize::from(r.lane_empty.get(lane).copied().unwrap_or(false));
        }
    }
}

impl LaneTally {
    fn ratio(&self, x: usize) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            x as f64 / self.n as f64
        }
    }
    fn mrr(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.rr / self.n as f64
        }
    }
}

fn share(x: usize, n: usize) -> f64 {
    if n == 0 {
        0.0
    } else {
        x as f64 / n as f64
    }
}

pub fn print_table(groups: &BTreeMap<String, Tally>) {
    println!(
        "{:<22} {:>4} {:>7} {:>7} {:>7} | {:<8} {:>3} {:>5} {:>5} {:>5} {:>6}",
        "group", "n", "routed", "no-item", "ep+code", "lane", "n", "R@1", "R@5", "MRR", "empty"
    );
    for (name, t) in groups {
        if t.absent > 0 {
            let empty: Vec<String> = LANES
                .iter()
                .map(|l| {
                    let e = t.absent_empty.get(l).copied().unwrap_or(0);
                    format!("{l} {:.2}", share(e, t.absent))
                })
                .collect();
            println!(
                "{:<22} {:>4} nothing relevant (lane empty): {}; no item at all {:.2}",
                name,
                t.absent,
                empty.join(", "),
                share(t.absent_no_items, t.absent)
            );
        }
        let mut first = true;
        for lane in LANES {
            let Some(l) = t.lanes.get(lane) else {
                continue;
            };
            let head = if first {
                format!(
                    "{:<22} {:>4} {:>7.2} {:>7.2} {:>7.2}",
                    name,
                    t.questions,
                    share(t.routed_right, t.questions),
                    share(t.no_items, t.questions),
                    share(t.both_evidence, t.questions)
                )
            } else {
                format!("{:<22} {:>4} {:>7} {:>7} {:>7}", "", "", "", "", "")
            };
            first = false;
            println!(
                "{head} | {:<8} {:>3} {:>5.2} {:>5.2} {:>5.2} {:>6.2}",
                lane,
                l.n,
                l.ratio(l.at1),
                l.ratio(l.at5),
                l.mrr(),
                l.ratio(l.empty)
            );
        }
    }
}

pub fn to_json(groups: &BTreeMap<String, Tally>) -> Value {
    let mut out = serde_json::Map::new();
    for (name, t) in groups {
        let lanes: serde_json::Map<String, Value> = t
            .lanes
            .iter()
            .map(|(lane, l)| {
                (
                    lane.to_string(),
                    json!({"n": l.n, "recall_at_1": l.ratio(l.at1), "recall_at_5": l.ratio(l.at5),
                           "mrr": l.mrr(), "empty": l.ratio(l.empty)}),
                )
            })
            .collect();
        let absent: serde_json::Map<String, Value> = t
            .absent_empty
            .iter()
            .map(|(lane, e)| (lane.to_string(), json!(share(*e, t.absent))))
            .collect();
        out.insert(
            name.clone(),
            json!({"questions": t.questions, "routed_right": share(t.routed_right, t.questions),
                   "no_items": share(t.no_items, t.questions),
                   "both_evidence": share(t.both_evidence, t.questions), "lanes": lanes,
                   "absent": t.absent, "absent_empty": absent}),
        );
    }
    Value::Object(out)
}
