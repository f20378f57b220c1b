//! The encoder's own checks on the committed assets (the parity with the wheel on 200 texts is
//! `tests/encoder_parity.rs`).

use super::*;

fn encoder() -> &'static Encoder {
    Encoder::shared().expect("the committed assets in assets/encoder")
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn vectors_are_unit_length_and_deterministic() {
    let enc = encoder();
    let a = enc.encode("where did we stop the logs from filling the disk?");
    let norm: f32 = a.iter().map(|v| v * v).sum();
    assert!((norm - 1.0).abs() < 1e-4, "norm² {norm}");
    assert_eq!(
        a,
        enc.encode("where did we stop the logs from filling the disk?")
    );
}

#[test]
fn full_width_forms_and_extra_spaces_segment_as_plain_text() {
    let enc = encoder();
    assert_eq!(enc.pieces("ｆｕｌｌ  ｔｅｘｔ "), enc.pieces("full text"));
    assert_eq!(enc.pieces("\t  full\n\ntext  "), enc.pieces("full text"));
}

#[test]
fn an_empty_text_is_one_unknown_piece() {
    let enc = encoder();
    assert_eq!(enc.pieces(""), vec![enc.at.bos, enc.at.unk, enc.at.eos]);
    assert_eq!(enc.pieces(" \n\t "), enc.pieces(""));
    let v = enc.encode("");
    assert!(v.iter().all(|x| x.is_finite()));
}

#[test]
fn the_forward_pass_does_not_depend_on_its_blocks() {
    // A text of 300+ pieces spans three blocks of the default size; the context rows around a
    // block must give the same features as one pass over the whole text.
    let enc = encoder();
    let text = "the watcher registers the same directory twice after a rename ".repeat(30);
    let ids = enc.pieces(&text);
    assert!(ids.len() > 300, "{}", ids.len());
    let w = enc.weights();
    let whole = w.forward_in_blocks(&ids, ids.len());
    for block in [1, 2, 5, 128] {
        let blocked = w.forward_in_blocks(&ids, block);
        assert!(cosine(&whole, &blocked) > 0.99999, "block {block}");
    }
    assert_eq!(enc.encode(&text), w.forward(&ids));
}

#[test]
fn russian_and_english_questions_land_near_each_other() {
    let enc = encoder();
    let en = enc.encode("who fixed the failing tests");
    let ru = enc.encode("кто исправил падающие тесты");
    let other = enc.encode("a recipe for apple pie with cinnamon");
    assert!(cosine(&en, &ru) > cosine(&en, &other) + 0.2);
}

#[test]
fn a_missing_folder_says_where_it_looked() {
    let dir = tempfile::tempdir().unwrap();
    let err = Encoder::open(dir.path()).err().expect("no assets there");
    assert!(matches!(err, EncoderError::Open { .. }), "{err}");
    std::fs::write(dir.path().join(MODEL_FILE), b"not an asset").unwrap();
    std::fs::write(dir.path().join(TABLE_FILE), b"not an asset").unwrap();
    let err = Encoder::open(dir.path()).err().expect("not an asset");
    assert!(err.to_string().contains("no KENC header"), "{err}");
}
