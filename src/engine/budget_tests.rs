//! The budget's token estimator against the version it replaced (which built a `String` and a
//! `Vec` per word): the one-pass rewrite must count exactly the same on every kind of text, or
//! every response's budget would move.

use super::estimate_tokens;

/// The estimator as it was before the one-pass rewrite (kept only as this test's reference;
/// its rules follow the estimator's, only the way of counting is the old one).
fn reference_estimate(text: &str) -> usize {
    let mut total = 0usize;
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_ascii_alphanumeric() {
            let mut word = String::new();
            while let Some(&d) = chars.peek() {
                if !d.is_ascii_alphanumeric() {
                    break;
                }
                word.push(d);
                chars.next();
            }
            total += reference_word_tokens(&word);
        } else if c.is_ascii_punctuation() {
            let mut n = 0usize;
            while chars.peek().is_some_and(|d| d.is_ascii_punctuation()) {
                chars.next();
                n += 1;
            }
            total += if n <= 4 { 1 } else { n.div_ceil(2) };
        } else if c.is_whitespace() {
            let mut n = 0usize;
            let mut only_space = true;
            while let Some(&d) = chars.peek() {
                if !d.is_whitespace() {
                    break;
                }
                only_space &= d == ' ';
                chars.next();
                n += 1;
            }
            if !(n == 1 && only_space) {
                total += 1;
            }
        } else if is_cyrillic(c) {
            let mut n = 0usize;
            while chars.peek().is_some_and(|d| is_cyrillic(*d)) {
                chars.next();
                n += 1;
            }
            total += n.div_ceil(2);
        } else {
            chars.next();
            total += c.len_utf8();
        }
    }
    (total as f64 * super::CALIBRATION).ceil() as usize
}

fn is_cyrillic(c: char) -> bool {
    matches!(c, '\u{0400}'..='\u{04FF}')
}

fn reference_word_tokens(word: &str) -> usize {
    #[derive(PartialEq, Clone, Copy)]
    enum Class {
        Lower,
        Upper,
        Digit,
    }
    let class = |c: char| {
        if c.is_ascii_digit() {
            Class::Digit
        } else if c.is_ascii_uppercase() {
            Class::Upper
        } else {
            Class::Lower
        }
    };
    // Parts: maximal runs of one class, but a single capital starts a lowercase part (`User`).
    let mut parts: Vec<(Class, usize)> = Vec::new();
    for c in word.chars() {
        let k = class(c);
        match parts.last_mut() {
            Some((last, n)) if *last == k => *n += 1,
            Some((Class::Upper, 1)) if k == Class::Lower => {
                if let Some(p) = parts.last_mut() {
                    *p = (Class::Lower, 2);
                }
            }
            _ => parts.push((k, 1)),
        }
    }
    let len = word.len();
    if parts.len() > 1 && len < 3 * parts.len() {
        return (len + 2 * parts.len()).div_ceil(3);
    }
    parts
        .iter()
        .map(|(k, n)| match k {
            Class::Lower => n.div_ceil(7),
            Class::Upper => n.div_ceil(4),
            Class::Digit => n.div_ceil(2),
        })
        .sum()
}

#[test]
fn the_one_pass_estimate_counts_exactly_what_the_old_one_did() {
    let pieces = [
        "getUserName",
        "HTTPServer",
        "a1b2c3",
        "x",
        "ID",
        "Users",
        "abcdefghijklmno",
        "0xDEADbeef",
        "dGhpcyBpcyBiYXNlNjQ=",
        " ",
        "  ",
        "\n",
        "\t ",
        "\u{a0}",
        "\u{3000}",
        "\":\"",
        "},{",
        "!!!!!!!",
        ".",
        "деплой",
        "упал",
        "Ошибка",
        "ё",
        "😀",
        "日本語",
        "é",
        "\r\n",
        "-->",
        "_",
    ];
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut next = |n: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n as u64) as usize
    };
    for _ in 0..5_000 {
        let len = next(24);
        let text: String = (0..len).map(|_| pieces[next(pieces.len())]).collect();
        assert_eq!(
            estimate_tokens(&text),
            reference_estimate(&text),
            "{text:?}"
        );
    }
    let json = r#"{"schema":"knowledge.search/v1","lanes":{"episodes":{"items":[{"id":"ep:s1:42","snippet":"кто чинил доступ к MySQL — fixed the getUserName() bug\n\tin  src/a.rs"}]}}}"#;
    assert_eq!(estimate_tokens(json), reference_estimate(json));
    assert_eq!(estimate_tokens(""), 0);
}
