//! Titles that say what happened in a root session.
//!
//! A root session without a summary record used to be titled by its first prompt, and on real
//! transcripts that is often `continue`, `yes`, `ok`, `/clear`, `Hey` or a pasted log: a list of
//! actors reading «continue» says nothing. The title is now the first prompt that says something
//! (acknowledgements in any of the languages people write to agents in, bare slash commands,
//! pasted output and redaction placeholders are skipped), else the first assistant message that
//! states the task, else the files the session edited most. Subagent and team-member titles are
//! found elsewhere (`profiles.rs`: their task description) and are not touched here.
//!
//! Everything here but [`session_title`] is a pure function over texts, so the rules are tested
//! table by table; [`session_title`] reads the texts through the episodes store, each source only
//! when the one before gave nothing.

use std::collections::HashMap;

use crate::lanes::{EpisodesSource, SessionRow};

/// Prompts looked at for a title (the first ones of the session).
const PROMPTS: usize = 40;
/// Assistant messages looked at when no prompt says anything.
const ASSISTANT: usize = 12;
/// Edited-file facts looked at for the last fallback.
const EDITS: usize = 2_000;
/// Files named in a title made of edited paths.
const PATHS_NAMED: usize = 3;

/// Words that acknowledge or steer without saying what the work is ("continue", "да",
/// "продолжай", "继续"…), lower case. A prompt made only of these is not a title.
const ACKNOWLEDGEMENTS: &[&str] = &[
    // English
    "continue",
    "cont",
    "go",
    "on",
    "ahead",
    "proceed",
    "yes",
    "y",
    "yep",
    "yeah",
    "yup",
    "ok",
    "okay",
    "alright",
    "allright",
    "k",
    "kk",
    "sure",
    "thanks",
    "thank",
    "you",
    "thx",
    "ty",
    "please",
    "pls",
    "next",
    "done",
    "good",
    "great",
    "nice",
    "cool",
    "perfect",
    "fine",
    "right",
    "correct",
    "agreed",
    "approve",
    "approved",
    "lgtm",
    "hi",
    "hello",
    "hey",
    "start",
    "begin",
    "again",
    "retry",
    "try",
    "more",
    "keep",
    "going",
    "do",
    "it",
    "that",
    "this",
    "same",
    "and",
    "now",
    "step",
    "no",
    "nope",
    "stop",
    "wait",
    "hmm",
    "so",
    "then",
    "let's",
    "lets",
    "carry",
    "resume",
    "all",
    "the",
    "way",
    "a",
    "an",
    // Russian
    "да",
    "ага",
    "угу",
    "ок",
    "окей",
    "хорошо",
    "ладно",
    "продолжай",
    "продолжи",
    "продолжаем",
    "продолжить",
    "продолжайте",
    "дальше",
    "давай",
    "давайте",
    "далее",
    "го",
    "вперёд",
    "вперед",
    "спасибо",
    "привет",
    "здравствуй",
    "здравствуйте",
    "нет",
    "стоп",
    "ещё",
    "еще",
    "снова",
    "норм",
    "отлично",
    "супер",
    "согласен",
    "делай",
    "сделай",
    "это",
    "так",
    "и",
    "пожалуйста",
    "начни",
    "начинай",
    "старт",
    "можно",
    "погнали",
    "поехали",
    "ну",
    "а",
    // German, Spanish, French, Portuguese, Italian
    "ja",
    "weiter",
    "mach",
    "danke",
    "hallo",
    "gut",
    "bitte",
    "sí",
    "si",
    "vale",
    "continúa",
    "continua",
    "sigue",
    "gracias",
    "hola",
    "oui",
    "merci",
    "bonjour",
    "vas-y",
    "sim",
    "obrigado",
    "continuar",
    "grazie",
    "ciao",
    "avanti",
    // Chinese, Japanese, Korean
    "继续",
    "好",
    "好的",
    "是",
    "是的",
    "对",
    "谢谢",
    "你好",
    "嗯",
    "可以",
    "はい",
    "続けて",
    "お願いします",
    "ありがとう",
    "네",
    "계속",
    "감사합니다",
];

/// A root session's title: its summary or custom title, else what its prompts, the assistant's
/// first statement of the task or its edited files say. Redacted again, one line, clipped.
pub fn session_title(row: &SessionRow, episodes: &dyn EpisodesSource) -> Option<String> {
    if let Some(t) = row.title.as_deref().and_then(super::profiles::clean) {
        return Some(t);
    }
    let id = &row.session_id;
    let texts = |human: bool, n: usize| episodes.session_texts(id, human, n).unwrap_or_default();
    from_prompts(&texts(true, PROMPTS))
        .or_else(|| from_assistant(&texts(false, ASSISTANT)))
        .or_else(|| {
            let paths = episodes.edited_paths(id, EDITS).unwrap_or_default();
            from_paths(&paths, row.cwd.as_deref())
        })
        .and_then(|t| super::profiles::clean(&t))
}

/// The first prompt that says something, from its first line of prose on.
pub fn from_prompts(prompts: &[String]) -> Option<String> {
    prompts.iter().find_map(|p| prose_from(p, 2))
}

/// The first assistant message that states something, cut at its first sentence.
pub fn from_assistant(messages: &[String]) -> Option<String> {
    messages.iter().find_map(|m| {
        let text = prose_from(m, 4)?;
        Some(first_sentence(&text).to_string())
    })
}

/// `edited a.rs, b.rs`: the files edited most often (ties in first-edit order), relative to the
/// session's working directory when under it.
pub fn from_paths(paths: &[String], cwd: Option<&str>) -> Option<String> {
    let mut counts: HashMap<&str, (usize, usize)> = HashMap::new();
    for (i, p) in paths.iter().enumerate() {
        let e = counts.entry(p.as_str()).or_insert((0, i));
        e.0 += 1;
    }
    let mut ranked: Vec<(&str, (usize, usize))> = counts.into_iter().collect();
    ranked.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.1 .1.cmp(&b.1 .1)));
    let named: Vec<String> = ranked
        .iter()
        .take(PATHS_NAMED)
        .map(|(p, _)| relative(p, cwd))
        .collect();
    (!named.is_empty()).then(|| format!("edited {}", named.join(", ")))
}

fn relative(path: &str, cwd: Option<&str>) -> String {
    let Some(cwd) = cwd.map(|c| c.trim_end_matches(['/', '\\'])) else {
        return path.to_string();
    };
    match path.strip_prefix(cwd) {
        Some(rest) if rest.starts_with(['/', '\\']) && rest.len() > 1 => rest[1..].to_string(),
        _ => path.to_string(),
    }
}

/// The text from its first line of prose on, when that line says something (at least
/// `min_words` words with letters that are not all acknowledgements); `None` for a bare slash
/// command, a pasted log, a redaction placeholder or an acknowledgement.
fn prose_from(text: &str, min_words: usize) -> Option<String> {
    let trimmed = text.trim();
    if is_bare_command(trimmed) {
        return None;
    }
    // `/orchestrator @CLAUDE.md fix the login`: the request is what follows the command.
    let trimmed = without_command(trimmed);
    let lines: Vec<&str> = trimmed.lines().collect();
    let start = lines
        .iter()
        .position(|l| !looks_like_output(l) && says_something(l, min_words))?;
    // A pasted log with a question after it: the question, not the log.
    let rest: Vec<&str> = lines[start..]
        .iter()
        .copied()
        .filter(|l| !looks_like_output(l))
        .collect();
    let text = rest
        .join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    // `read @a.ts @b.ts in full. This is one big mess…`: from the first sentence that says
    // more than which files to look at; a prompt that only names files says nothing.
    let from = sentence_starts(&text)
        .into_iter()
        .find(|&i| !only_names_files(first_sentence(&text[i..])))?;
    // Nor does a title start with the files it names (`@CLAUDE.md fix the login`).
    let mut title = &text[from..];
    while let Some(first) = title.split_whitespace().next() {
        if !is_file_reference(first) {
            break;
        }
        title = title[first.len()..].trim_start();
    }
    (!title.is_empty()).then(|| title.to_string())
}

/// The text after a leading slash command (`/handgemacht:create-beads`), which names the
/// command, not the work.
fn without_command(text: &str) -> &str {
    let Some(first) = text.split_whitespace().next() else {
        return text;
    };
    let command = first.len() > 1 && first.starts_with('/') && !first[1..].contains('/');
    if command {
        text[first.len()..].trim_start()
    } else {
        text
    }
}

/// Where each sentence of `text` starts (after `.`, `!` or `?` and a space).
fn sentence_starts(text: &str) -> Vec<usize> {
    let mut starts = vec![0];
    let mut rest = 0;
    while rest < text.len() {
        let end = rest + first_sentence(&text[rest..]).len();
        let next = text[end..]
            .char_indices()
            .find(|(_, c)| !c.is_whitespace())
            .map(|(i, _)| end + i);
        match next {
            Some(n) if n > rest => {
                starts.push(n);
                rest = n;
            }
            _ => break,
        }
    }
    starts
}

/// A sentence that names files (`@prompt.md`, `src/a.rs`, `theme.ts`) and says fewer than four
/// words of its own besides: what to read, not what to do.
fn only_names_files(sentence: &str) -> bool {
    let words: Vec<&str> = sentence.split_whitespace().collect();
    let refs = words.iter().filter(|w| is_file_reference(w)).count();
    if refs == 0 {
        return false;
    }
    let own = words
        .iter()
        .filter(|w| !is_file_reference(w))
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .filter(|w| w.chars().any(char::is_alphabetic))
        .filter(|w| !ACKNOWLEDGEMENTS.contains(&w.as_str()))
        .count();
    own < 4
}

/// `@CLAUDE.md`, `src/tui/app.rs`, `theme.ts`: a word that names a file or folder.
fn is_file_reference(word: &str) -> bool {
    let w =
        word.trim_matches(|c: char| matches!(c, ',' | ';' | ':' | '(' | ')' | '"' | '\'' | '`'));
    let w = w.trim_end_matches(['.', '!', '?']);
    if w.starts_with('@') && w.len() > 1 {
        return true;
    }
    if w.contains('/') || w.contains('\\') {
        return w.chars().any(char::is_alphanumeric);
    }
    // `name.ext`: letters before the dot, a short alphanumeric extension after it.
    match w.rsplit_once('.') {
        Some((stem, ext)) => {
            !stem.is_empty()
                && stem.chars().any(char::is_alphabetic)
                && (1..=5).contains(&ext.len())
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
                && ext.chars().any(|c| c.is_ascii_alphabetic())
        }
        None => false,
    }
}

/// `/clear`, `/model`: a slash command with nothing after it.
fn is_bare_command(text: &str) -> bool {
    text.starts_with('/') && !text.contains(char::is_whitespace)
}

/// Lines of a log, a stack trace, a shell session, JSON or a table rather than words.
fn looks_like_output(line: &str) -> bool {
    let l = line.trim();
    if l.is_empty() {
        return true;
    }
    const PREFIXES: &[&str] = &[
        "Traceback",
        "at ",
        "File \"",
        "$ ",
        "# ",
        "{",
        "}",
        "[",
        "]",
        "<",
        "|",
        "npm ERR",
        "error[",
        "warning:",
        "ERROR",
        "WARN",
        "INFO",
        "DEBUG",
        "TRACE",
        "FATAL",
        "panicked",
        "thread '",
        "+++",
        "---",
        "@@",
        "diff --git",
        "PS ",
        ">>>",
        "tool_result",
    ];
    if PREFIXES.iter().any(|p| l.starts_with(p)) {
        return true;
    }
    // `KeyError: 'x'`, `TypeError: …`, `error: linker failed`: an error line, not a question.
    let head = l.split_whitespace().next().unwrap_or("");
    if head.ends_with(':') && (head.contains("Error") || head.contains("Exception")) {
        return true;
    }
    let mut chars = l.chars();
    let timestamp = chars.by_ref().take(4).all(|c| c.is_ascii_digit())
        && matches!(chars.next(), Some('-' | '/' | ':' | '.'));
    if timestamp {
        return true;
    }
    let visible: Vec<char> = l.chars().filter(|c| !c.is_whitespace()).collect();
    let letters = visible.iter().filter(|c| c.is_alphabetic()).count();
    letters * 2 < visible.len()
}

/// At least `min_words` words with letters, not all acknowledgements; a run of ideographs
/// counts a word per two characters (Chinese and Japanese put no spaces between words).
fn says_something(line: &str, min_words: usize) -> bool {
    let words: Vec<String> = line
        .split_whitespace()
        .filter(|w| !is_placeholder(w))
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric() && c != '-' && c != '\'')
                .to_lowercase()
        })
        .filter(|w| w.chars().any(char::is_alphabetic))
        .collect();
    if words.is_empty() || words.iter().all(|w| ACKNOWLEDGEMENTS.contains(&w.as_str())) {
        return false;
    }
    let count: usize = words
        .iter()
        .map(|w| {
            let ideographs = w.chars().filter(|c| is_ideograph(*c)).count();
            if ideographs >= 2 {
                ideographs / 2
            } else {
                1
            }
        })
        .sum();
    count >= min_words
}

/// `[REDACTED]`, `[REDACTED_PROMPT]`, `<redacted>`: text that stands for text.
fn is_placeholder(word: &str) -> bool {
    let inner = word
        .trim_matches(|c: char| c.is_ascii_punctuation() && c != '[' && c != '<')
        .trim_start_matches(['[', '<'])
        .trim_end_matches([']', '>']);
    let bracketed = word.starts_with(['[', '<']);
    let shouting = !inner.is_empty()
        && inner
            .chars()
            .all(|c| c.is_ascii_uppercase() || c == '_' || c == ':' || c.is_ascii_digit());
    (bracketed && shouting) || inner.eq_ignore_ascii_case("redacted")
}

fn is_ideograph(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30ff | 0x3400..=0x4dbf | 0x4e00..=0x9fff | 0xac00..=0xd7af)
}

/// Up to the first `.`, `!` or `?` followed by a space (or `。`), else the whole text.
fn first_sentence(text: &str) -> &str {
    let mut prev_end: Option<usize> = None;
    for (i, c) in text.char_indices() {
        if let Some(end) = prev_end {
            if c.is_whitespace() {
                return &text[..end];
            }
            prev_end = None;
        }
        match c {
            '.' | '!' | '?' => prev_end = Some(i + c.len_utf8()),
            '。' | '！' | '？' => return &text[..i + c.len_utf8()],
            _ => {}
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn acknowledgements_commands_and_pasted_output_are_skipped_in_any_language() {
        let table: &[(&[&str], Option<&str>)] = &[
            (&["continue", "fix the login redirect"], Some("fix the login redirect")),
            (&["yes", "ok", "Go ahead"], None),
            (&["да", "продолжай", "почини доступ к MySQL"], Some("почини доступ к MySQL")),
            (&["继续", "修复登录页面的重定向问题"], Some("修复登录页面的重定向问题")),
            (&["/clear", "Can you add the initials to NavUser"], Some("Can you add the initials to NavUser")),
            (&["/model", "/compact"], None),
            (&["Hey", "Can you audit this codebase?"], Some("Can you audit this codebase?")),
            (&["Start", "Step 1", "Step 2"], None),
            (&["[REDACTED_PROMPT]"], None),
            (&["tool_result"], None),
            (
                &["Traceback (most recent call last):\n  File \"a.py\", line 3\nKeyError: 'x'\nwhy does this fail on empty input?"],
                Some("why does this fail on empty input?"),
            ),
            (&["2026-10-21 05:51:02 ERROR db refused\n2026-10-21 05:51:03 ERROR db refused"], None),
            (&["Open README"], Some("Open README")),
            (&["/review fix the flaky test in ci"], Some("fix the flaky test in ci")),
            // A command's own arguments, file mentions and path lists are not the request.
            (&["/orchestrator @CLAUDE.md"], None),
            (&["@prompt.md really ULTRATHINK this"], None),
            (
                &["/orchestrator @CLAUDE.md fix the login redirect loop"],
                Some("fix the login redirect loop"),
            ),
            (&["src/a.rs src/b.rs", "@notes.md", "fix it"], Some("fix it")),
            (
                &["alright, read @a.ts @src/tui/b.ts in full. i feel like this is one big mess"],
                Some("i feel like this is one big mess"),
            ),
            (
                &["Evaluate @packages/services and create a new package"],
                Some("Evaluate @packages/services and create a new package"),
            ),
        ];
        for (prompts, want) in table {
            assert_eq!(from_prompts(&s(prompts)).as_deref(), *want, "{prompts:?}");
        }
    }

    #[test]
    fn the_assistant_states_the_task_in_its_first_sentence() {
        let msgs = s(&[
            "Ok, running.",
            "Continuing.",
            "I'll add the two initials to the NavUser avatar. Let me find the component first.",
        ]);
        assert_eq!(
            from_assistant(&msgs).as_deref(),
            Some("I'll add the two initials to the NavUser avatar.")
        );
        assert_eq!(from_assistant(&s(&["Ok", "Done."])), None);
    }

    #[test]
    fn edited_paths_rank_by_count_and_read_relative_to_the_workspace() {
        let paths = s(&[
            "/w/src/a.rs",
            "/w/src/b.rs",
            "/w/src/b.rs",
            "/other/c.rs",
            "/w/d.rs",
        ]);
        assert_eq!(
            from_paths(&paths, Some("/w/")).as_deref(),
            Some("edited src/b.rs, src/a.rs, /other/c.rs")
        );
        assert_eq!(from_paths(&[], Some("/w")), None);
    }

    #[test]
    fn sentences_end_at_punctuation_followed_by_space() {
        assert_eq!(first_sentence("Fix v1.2 now. Then more"), "Fix v1.2 now.");
        assert_eq!(first_sentence("修复。然后"), "修复。");
        assert_eq!(first_sentence("no end"), "no end");
    }
}
