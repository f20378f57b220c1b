//! Unit tests of the parent module, kept apart so the module reads in one sitting.

use super::*;

fn terms(text: &str) -> Vec<String> {
    tokenize(text).into_iter().map(|t| t.term).collect()
}

fn one(word: &str) -> String {
    let t = terms(word);
    assert_eq!(t.len(), 1, "{word:?} gave {t:?}");
    t[0].clone()
}

#[test]
fn identifiers_split_and_keep_whole() {
    let cases: &[(&str, &[&str])] = &[
        ("getUserName", &["get", "user", "name", "getusernam"]),
        ("get_user_name", &["get", "user", "name", "getusernam"]),
        ("GET_USER_NAME", &["get", "user", "name", "getusernam"]),
        ("GetUser", &["get", "user", "getus"]),
        ("HTTPServer", &["http", "server", "httpserver"]),
        (
            "XMLHttpRequest",
            &["xml", "http", "request", "xmlhttprequest"],
        ),
        ("IOError", &["io", "error", "ioerror"]),
        ("URLs", &["url"]),
        ("sha256", &["sha", "256", "sha256"]),
        ("_private", &["privat"]),
        ("__", &[]),
        ("plain", &["plain"]),
    ];
    for (input, want) in cases {
        assert_eq!(terms(input), *want, "input {input:?}");
    }
    // A lone word equal to the joined identifier meets the compound term.
    assert_eq!(one("getusername"), "getusernam");
    assert_eq!(one("GETUSERNAME"), "getusernam");
}

#[test]
fn stems_russian_and_english() {
    let groups: &[&[&str]] = &[
        &["доступа", "доступы", "доступ", "Доступ", "ДОСТУПОМ"],
        &["fixing", "fixed", "fix", "Fixes"],
        &["базам", "база", "баз"],
        &["ёлка", "елка", "Ёлка"],
        &["пароль", "пароля", "паролем"],
        &["users", "user"],
    ];
    for group in groups {
        let first = one(group[0]);
        for w in group.iter() {
            assert_eq!(one(w), first, "{w:?} vs {:?}", group[0]);
        }
    }
    assert_eq!(one("базам"), "баз");
    assert_eq!(one("fixing"), "fix");
}

#[test]
fn numbers_and_ips_keep_digits() {
    assert_eq!(terms("176.99.5.35"), ["176", "99", "5", "35"]);
    assert_eq!(terms("v1.2.3"), ["v", "1", "v1", "2", "3"]);
    assert_eq!(terms("port 8080"), ["port", "8080"]);
}

#[test]
fn offsets_point_at_the_source_word() {
    let text = "Ну, getUserName — ёж!";
    for t in tokenize(text) {
        assert!(text.is_char_boundary(t.start) && text.is_char_boundary(t.end));
        assert!(t.start < t.end);
    }
    let toks = tokenize(text);
    let user = toks
        .iter()
        .find(|t| t.term == "user")
        .map(|t| &text[t.start..t.end]);
    assert_eq!(user, Some("User"));
    let whole = toks
        .iter()
        .find(|t| t.term == "getusernam")
        .map(|t| &text[t.start..t.end]);
    assert_eq!(whole, Some("getUserName"));
    let ezh = toks
        .iter()
        .find(|t| t.term == "еж")
        .map(|t| &text[t.start..t.end]);
    assert_eq!(ezh, Some("ёж"));
}

#[test]
fn long_terms_are_capped_and_hashes_kept_whole() {
    let long = "a".repeat(200);
    assert_eq!(one(&long).len(), MAX_TERM_BYTES);
    let cyr = "ж".repeat(100);
    let t = one(&cyr);
    assert!(t.len() <= MAX_TERM_BYTES && t.len() >= MAX_TERM_BYTES - 1);
    assert_eq!(one("3f2a9c1b7e"), "3f2a9c1b7e");
    assert_eq!(one("A1B2C3"), "a1b2c3");
    // Same hash in a query meets the indexed term.
    assert_eq!(query_terms("commit 3F2A9C1B7E"), ["commit", "3f2a9c1b7e"]);
}

#[test]
fn odd_input_never_panics() {
    let samples = [
        "",
        " ",
        "\u{0}",
        "İstanbul",
        "ß",
        "ǅ",
        "x\u{301}y",
        "漢字かな",
        "🙂🙂",
        "a\u{200d}b",
        "١٢٣",
        "Ⅻ",
        "µs",
        "ﬁle",
        "\u{10FFFF}",
        "_a_1_Б_",
    ];
    for s in samples {
        for t in tokenize(s) {
            assert!(
                !t.term.is_empty() && t.term.len() <= MAX_TERM_BYTES,
                "{s:?}"
            );
            assert!(s.get(t.start..t.end).is_some(), "{s:?}");
        }
        let _ = index_text(s);
        let _ = query_terms(s);
    }
}

#[test]
fn query_terms_dedupe_and_drop_stopwords() {
    assert_eq!(
        query_terms("кто чинил доступ к базам?"),
        ["чин", "доступ", "баз"]
    );
    assert_eq!(
        query_terms("Who fixed the fixing of the server?"),
        ["fix", "server"]
    );
    assert_eq!(query_terms("доступа доступы доступ"), ["доступ"]);
    // Only stopwords: keep them.
    assert_eq!(query_terms("кто что где"), ["кто", "что", "где"]);
    assert_eq!(query_terms("the who"), ["the", "who"]);
    // Stopword parts of identifiers drop, the whole identifier stays.
    assert_eq!(query_terms("isValid"), ["valid", "isvalid"]);
    assert!(query_terms("").is_empty());
    assert!(query_terms("  ?!  ").is_empty());
}

#[test]
fn stopwords_are_in_folded_form() {
    for w in STOPWORDS {
        let mut folded = String::new();
        w.chars().for_each(|c| push_folded(&mut folded, c));
        assert_eq!(&folded, w);
    }
}

#[test]
fn identifier_terms_are_the_compounds_and_letter_digit_words_as_written() {
    let got = identifier_terms(
        "why did set_text_map_propagator and getUserName fail on utf8mb4 in the quiet night",
    );
    assert_eq!(got.len(), 3, "{got:?}");
    assert!(got.iter().all(|t| !t.contains(' ')));
    // Their whole spellings, as the index holds them; no part and no ordinary word.
    let whole = |w: &str| {
        tokenize(w)
            .into_iter()
            .find(|t| (t.start, t.end) == (0, w.len()))
            .map(|t| t.term)
    };
    for w in ["set_text_map_propagator", "getUserName"] {
        let term = whole(w).expect("a whole term");
        assert!(got.contains(&term), "{w}: {got:?}");
    }
    assert!(identifier_terms("why did the quiet night fail twice").is_empty());
    assert!(identifier_terms("").is_empty());
}

#[test]
fn identifier_phrases_are_the_words_joined_as_names_are() {
    let got = identifier_terms(
        "who ran hello.sh with --fail-under-lines on cpython-312, step-by-step, из-за src/db.rs",
    );
    for phrase in ["hello sh", "fail under line", "db rs"] {
        assert!(
            got.iter().any(|t| t.ends_with(phrase) || t == phrase),
            "{phrase}: {got:?}"
        );
    }
    assert!(
        got.iter()
            .any(|t| t.starts_with("cpython") && t.contains("312")),
        "{got:?}"
    );
    // Hyphenated prose is not a name.
    assert!(!got.iter().any(|t| t.contains("step")), "{got:?}");
    assert!(!got.iter().any(|t| t.contains("из")), "{got:?}");
    // A sentence's last word and its full stop are one word, not a name.
    assert!(identifier_terms("it ran. then it stopped.").is_empty());
}
