use super::*;

fn embedder() -> &'static Embedder {
    shared().expect("the compiled-in table parses")
}

#[test]
fn vectors_match_the_table_builders_reference() {
    let raw = include_str!("../../../assets/embeddings/parity.json");
    let parity: serde_json::Value = serde_json::from_str(raw).unwrap();
    assert_eq!(parity["dims"].as_u64(), Some(embedder().dims() as u64));
    let cases = parity["cases"].as_array().unwrap();
    assert!(cases.len() >= 8);
    for case in cases {
        let text = case["text"].as_str().unwrap();
        let want: Vec<f32> = case["vector"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap() as f32)
            .collect();
        let zero = want.iter().all(|x| *x == 0.0);
        match embedder().embed(text) {
            None => assert!(zero, "{text:?}: no vector here, the reference has one"),
            Some(got) => {
                let cos = dot(&got, &want);
                assert!(cos >= 0.999, "{text:?}: cosine {cos} with the reference");
            }
        }
    }
}

#[test]
fn a_russian_question_is_nearest_to_its_english_answer() {
    let e = embedder();
    let q = e.embed("кто исправил ошибку в тестах").unwrap();
    let answer = e
        .embed("Fixed the failing unit tests in the parser")
        .unwrap();
    for other in [
        "added a dark theme to the settings page",
        "updated the README install steps",
        "bumped the dependency versions",
    ] {
        let o = e.embed(other).unwrap();
        assert!(dot(&q, &answer) > dot(&q, &o), "{other:?} beat the answer");
    }
}

#[test]
fn text_without_words_has_no_vector() {
    assert!(embedder().embed("").is_none());
    assert!(embedder().embed("!!! ... ???").is_none());
}

#[test]
fn long_texts_get_windows_and_a_window_can_be_recomputed() {
    let e = embedder();
    let text = "the release was reverted after the deploy failed ".repeat(60);
    let windows = e.embed_windows(&text);
    assert_eq!(windows.len(), MAX_WINDOWS);
    let (idx, v) = &windows[2];
    let again = e.embed_window(&text, *idx).unwrap();
    assert!((dot(v, &again) - 1.0).abs() < 1e-5);
    assert_eq!(e.embed_windows("short text").len(), 1);
}

#[test]
fn sign_codes_hold_one_bit_per_dimension() {
    assert_eq!(
        sign_code(&[1.0, -1.0, 0.5, 0.0, 0.1, 0.1, 0.1, 0.1, -2.0]),
        [0b1111_0101, 0]
    );
    assert_eq!(code_len(256), 32);
}

#[test]
fn a_damaged_table_is_refused_not_read() {
    let bytes: &'static [u8] = Box::leak(TABLE_BYTES[..1000].to_vec().into_boxed_slice());
    assert!(matches!(Table::parse(bytes), Err(TableError::Size(..))));
    assert_eq!(Table::parse(b"nope").err(), Some(TableError::Header));
}

#[test]
fn every_word_has_a_vector_and_a_query_is_embedded_like_a_text() {
    let e = embedder();
    // Words the first table had no row for, a made-up word and a Russian inflection.
    for word in [
        "сертификат",
        "аккаунта",
        "резервное",
        "zanzibarquokka",
        "вебхука",
    ] {
        assert!(e.word_vector(word).is_some(), "{word} has no vector");
    }
    assert_eq!(e.word_source("сертификата"), WordSource::Stem);
    assert_eq!(e.word_source("zanzibarquokka"), WordSource::Pieces);
    assert_eq!(
        e.embed_query("ошибку в тестах"),
        e.embed("ошибку в тестах"),
        "a question and an event are embedded alike"
    );
    let q = e.embed_query("продлить сертификат").expect("known words");
    let answer = e.embed("renewed the TLS certificate").expect("vector");
    let other = e
        .embed("added a dark theme to the settings page")
        .expect("vector");
    assert!(dot(&q, &answer) > dot(&q, &other));
}

#[test]
fn the_table_stems_russian_words_as_this_build_does() {
    let raw = include_str!("../../../assets/embeddings/parity.json");
    let parity: serde_json::Value = serde_json::from_str(raw).unwrap();
    let pairs = parity["stems"].as_array().expect("stem pairs");
    assert!(pairs.len() >= 1000);
    let same = pairs
        .iter()
        .filter(|p| russian_stem(p[0].as_str().unwrap()).as_deref() == p[1].as_str())
        .count();
    // Snowball versions differ on a handful of rare endings; a word whose stem differs still
    // gets its pieces.
    assert!(
        same * 100 >= pairs.len() * 99,
        "{same} of {} stems agree",
        pairs.len()
    );
}
