//! Synthetic session trees at contract scale and beyond, in the real Claude Code and Codex
//! on-disk formats, for benchmarks. Deterministic (a fixed-seed xorshift), so runs compare.

use std::fmt::Write as _;
use std::fs;
use std::io::{self, Write};
use std::path::Path;

pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.max(1))
    }
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

pub const WORDS: &[&str] = &[
    "fix",
    "the",
    "mysql",
    "connection",
    "timeout",
    "in",
    "config",
    "deploy",
    "failed",
    "because",
    "retry",
    "cache",
    "invalidate",
    "user",
    "session",
    "token",
    "refresh",
    "webhook",
    "stripe",
    "signature",
    "payment",
    "cart",
    "service",
    "getUserName",
    "returns",
    "undefined",
    "handler",
    "migration",
    "schema",
    "table",
    "index",
    "query",
    "slow",
    "доступ",
    "к",
    "базе",
    "данных",
    "восстановлен",
    "пароль",
    "сервер",
    "деплой",
    "упал",
    "ошибка",
    "исправил",
    "проверил",
    "кодировка",
    "BOM",
    "CRLF",
    "тесты",
    "прошли",
    "nginx",
    "docker",
    "kubernetes",
    "pod",
    "restart",
    "memory",
    "leak",
    "profile",
    "latency",
    "p95",
    "budget",
    "router",
    "policy",
];

pub const TOOLS: &[&str] = &["Bash", "Read", "Edit", "Grep", "Write"];

const SYLLABLES: &[&str] = &[
    "ka", "lo", "mi", "ser", "tor", "ven", "dra", "pol", "quin", "sta", "rex", "bal", "cor", "dum",
    "fel", "gri", "hos", "jun", "ler", "mon", "nix", "pra", "rus", "sil", "tam", "vor",
];

/// A Zipf-like pick from a vocabulary of ~17k generated words (real text is not 60 words), with
/// the topical words of [`WORDS`] mixed in at 10 %.
fn word(rng: &mut Rng) -> String {
    if rng.below(10) == 0 {
        return rng.pick(WORDS).to_string();
    }
    // rank ~ 1/u: small ranks are frequent, the long tail is rare.
    let u = (rng.below(1_000_000) + 1) as f64 / 1_000_000.0;
    let rank = ((1.0 / u) as u64).min(17_575);
    let n = SYLLABLES.len() as u64;
    format!(
        "{}{}{}",
        SYLLABLES[(rank % n) as usize],
        SYLLABLES[((rank / n) % n) as usize],
        SYLLABLES[((rank / (n * n)) % n) as usize]
    )
}

pub fn sentence(rng: &mut Rng, n: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        if i > 0 {
            s.push(' ');
        }
        s.push_str(&word(rng));
    }
    s
}

/// Write `sessions` sessions with about `events_per_session` events each under `root`.
/// Returns the number of bytes written.
pub fn generate(root: &Path, sessions: usize, events_per_session: usize) -> io::Result<u64> {
    let mut rng = Rng::new(0x5eed);
    let mut bytes = 0u64;
    for s in 0..sessions {
        let codex = s % 4 == 3;
        let ws = format!("/srv/ws{}", s % 12);
        let day = 1 + (s % 28);
        if codex {
            let dir = root.join(format!("codex/sessions/2026/10/{day:02}"));
            fs::create_dir_all(&dir)?;
            let id = format!("01990000-0000-7000-8000-{s:012}");
            let path = dir.join(format!("rollout-2026-10-{day:02}T10-00-00-{id}.jsonl"));
            bytes += write_codex(&path, &id, &ws, day, events_per_session, &mut rng)?;
        } else {
            let dir = root.join(format!("claude/projects/-srv-ws{}", s % 12));
            fs::create_dir_all(&dir)?;
            let id = format!("00000000-0000-4000-8000-{s:012}");
            let path = dir.join(format!("{id}.jsonl"));
            bytes += write_claude(&path, &id, &ws, day, events_per_session, &mut rng)?;
        }
    }
    Ok(bytes)
}

/// The time of event `i` of a session on October `day` (one a second).
pub fn ts(day: usize, i: usize) -> String {
    format!(
        "2026-10-{day:02}T{:02}:{:02}:{:02}.000Z",
        (i / 3600) % 24,
        (i / 60) % 60,
        i % 60
    )
}

pub fn write_claude(
    path: &Path,
    id: &str,
    ws: &str,
    day: usize,
    n: usize,
    rng: &mut Rng,
) -> io::Result<u64> {
    let mut out = String::new();
    let mut parent = String::from("null");
    for i in 0..n {
        let uuid = format!("\"u-{id}-{i}\"");
        let common = format!(
            "\"parentUuid\":{parent},\"isSidechain\":false,\"userType\":\"external\",\"cwd\":\"{ws}\",\"sessionId\":\"{id}\",\"version\":\"2.1.39\",\"gitBranch\":\"main\",\"uuid\":{uuid},\"timestamp\":\"{}\"",
            ts(day, i)
        );
        let words = 8 + rng.below(40) as usize;
        match i % 4 {
            0 => {
                let _ = writeln!(
                    out,
                    "{{{common},\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":\"{}\"}}}}",
                    sentence(rng, words)
                );
            }
            1 => {
                let tool = rng.pick(TOOLS);
                let _ = writeln!(
                    out,
                    "{{{common},\"type\":\"assistant\",\"message\":{{\"id\":\"msg_{i}\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude\",\"content\":[{{\"type\":\"tool_use\",\"id\":\"toolu_{id}_{i}\",\"name\":\"{tool}\",\"input\":{{\"command\":\"{}\",\"file_path\":\"{ws}/src/{}.rs\"}}}}],\"stop_reason\":null,\"usage\":{{\"input_tokens\":10,\"output_tokens\":20}}}}}}",
                    sentence(rng, 6),
                    rng.pick(WORDS)
                );
            }
            2 => {
                let err = rng.below(10) == 0;
                let _ = writeln!(
                    out,
                    "{{{common},\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":[{{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_{id}_{}\",\"content\":\"{}\",\"is_error\":{err}}}]}},\"toolUseResult\":{{\"stdout\":\"ok\",\"stderr\":\"\",\"interrupted\":false,\"isImage\":false}}}}",
                    i - 1,
                    sentence(rng, words * 2)
                );
            }
            _ => {
                let _ = writeln!(
                    out,
                    "{{{common},\"type\":\"assistant\",\"message\":{{\"id\":\"msg_{i}\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude\",\"content\":[{{\"type\":\"text\",\"text\":\"{}\"}}],\"stop_reason\":\"end_turn\",\"usage\":{{\"input_tokens\":10,\"output_tokens\":20}}}}}}",
                    sentence(rng, words)
                );
            }
        }
        parent = uuid;
    }
    let mut f = fs::File::create(path)?;
    f.write_all(out.as_bytes())?;
    Ok(out.len() as u64)
}

pub fn write_codex(
    path: &Path,
    id: &str,
    ws: &str,
    day: usize,
    n: usize,
    rng: &mut Rng,
) -> io::Result<u64> {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{{\"timestamp\":\"{}\",\"type\":\"session_meta\",\"payload\":{{\"id\":\"{id}\",\"timestamp\":\"{}\",\"cwd\":\"{ws}\",\"originator\":\"codex_cli_rs\",\"cli_version\":\"0.135.0\",\"source\":\"cli\"}}}}",
        ts(day, 0),
        ts(day, 0)
    );
    for i in 1..n {
        let t = ts(day, i);
        let words = 8 + rng.below(40) as usize;
        match i % 3 {
            0 => {
                let text = sentence(rng, words);
                let _ = writeln!(out, "{{\"timestamp\":\"{t}\",\"type\":\"response_item\",\"payload\":{{\"type\":\"message\",\"role\":\"user\",\"content\":[{{\"type\":\"input_text\",\"text\":\"{text}\"}}]}}}}");
                let _ = writeln!(out, "{{\"timestamp\":\"{t}\",\"type\":\"event_msg\",\"payload\":{{\"type\":\"user_message\",\"message\":\"{text}\",\"kind\":\"plain\"}}}}");
            }
            1 => {
                let _ = writeln!(out, "{{\"timestamp\":\"{t}\",\"type\":\"response_item\",\"payload\":{{\"type\":\"function_call\",\"name\":\"shell\",\"arguments\":\"{{\\\"command\\\":[\\\"bash\\\",\\\"-lc\\\",\\\"{}\\\"]}}\",\"call_id\":\"call_{i}\"}}}}", sentence(rng, 5));
                let _ = writeln!(out, "{{\"timestamp\":\"{t}\",\"type\":\"response_item\",\"payload\":{{\"type\":\"function_call_output\",\"call_id\":\"call_{i}\",\"output\":\"{}\"}}}}", sentence(rng, words));
            }
            _ => {
                let text = sentence(rng, words);
                let _ = writeln!(out, "{{\"timestamp\":\"{t}\",\"type\":\"response_item\",\"payload\":{{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{{\"type\":\"output_text\",\"text\":\"{text}\"}}]}}}}");
                let _ = writeln!(out, "{{\"timestamp\":\"{t}\",\"type\":\"event_msg\",\"payload\":{{\"type\":\"agent_message\",\"message\":\"{text}\"}}}}");
            }
        }
    }
    let mut f = fs::File::create(path)?;
    f.write_all(out.as_bytes())?;
    Ok(out.len() as u64)
}

const IDENTS: &[&str] = &[
    "connect",
    "mysqlDsn",
    "getUserName",
    "computeTotals",
    "verifySignature",
    "retryPolicy",
    "cacheKey",
    "loadConfig",
    "parseHeader",
    "renderInvoice",
    "refreshToken",
    "openSession",
    "closePool",
    "migrateSchema",
    "routeRequest",
    "applyPatch",
    "checkEncoding",
    "scheduleJob",
];

/// Write a code tree of about `chunks` symbol chunks (10 functions per file, three languages)
/// under `root`. Returns (files, bytes).
pub fn generate_code(root: &Path, chunks: usize) -> io::Result<(usize, u64)> {
    let mut rng = Rng::new(0xc0de);
    let files = chunks.div_ceil(10);
    let mut bytes = 0u64;
    for f in 0..files {
        let dir = root.join(format!("pkg{:03}", f % 200));
        fs::create_dir_all(&dir)?;
        let mut out = String::new();
        let (ext, lang) = match f % 3 {
            0 => ("rs", 0),
            1 => ("py", 1),
            _ => ("ts", 2),
        };
        for i in 0..10 {
            let name = format!("{}{}_{f}_{i}", rng.pick(IDENTS), i);
            let body: Vec<String> = (0..6).map(|_| sentence(&mut rng, 8)).collect();
            match lang {
                0 => {
                    let _ = writeln!(out, "/// {}\npub fn {name}(x: u32) -> u32 {{", body[0]);
                    for b in &body[1..] {
                        let _ = writeln!(out, "    // {b}\n    let _v = x + 1;");
                    }
                    let _ = writeln!(out, "    x\n}}\n");
                }
                1 => {
                    let _ = writeln!(out, "def {name}(x):\n    \"\"\"{}\"\"\"", body[0]);
                    for b in &body[1..] {
                        let _ = writeln!(out, "    # {b}\n    x = x + 1");
                    }
                    let _ = writeln!(out, "    return x\n");
                }
                _ => {
                    let _ = writeln!(
                        out,
                        "// {}\nexport function {name}(x: number): number {{",
                        body[0]
                    );
                    for b in &body[1..] {
                        let _ = writeln!(out, "  // {b}\n  x = x + 1;");
                    }
                    let _ = writeln!(out, "  return x;\n}}\n");
                }
            }
        }
        fs::write(dir.join(format!("mod{f}.{ext}")), &out)?;
        bytes += out.len() as u64;
    }
    Ok((files, bytes))
}
