//! Derives the embedding table's lookup layout (`src/text/embed/layout.rs`) from the committed
//! table into `OUT_DIR`, so the binary carries it beside the table and no process builds it. A
//! table the layout cannot be derived from gets an empty layout: the binary still builds, and
//! opening the table at run time reports what is wrong with it (the lanes then answer lexically).
//! It also hashes the sources whose rules decide what the agent-knowledge store holds into
//! `KNOWLEDGE_DERIVATION_ID` (see [`DERIVATION_SOURCES`]).

#[allow(dead_code)]
#[path = "src/text/embed/layout.rs"]
mod layout;

use std::path::PathBuf;

const TABLE: &str = "assets/embeddings/table.kemb";

/// The sources whose rules decide what the agent-knowledge store (L3) holds: its derivation, the
/// ids of actors, the redaction of names and text, the tokens of the skill catalog. Their hash is
/// the store's code identity (`KNOWLEDGE_DERIVATION_ID`): a store another build of these derived is
/// derived again in full, never kept family by family.
const DERIVATION_SOURCES: &[&str] = &[
    "src/sources/agent_knowledge",
    "src/sources/actor_id.rs",
    "src/sources/episodes/meta_redact",
    "src/sources/episodes/meta_redact.rs",
    "src/text/redact",
    "src/text/redact.rs",
    "src/text/tokens",
    "src/text/tokens.rs",
];

fn main() {
    derivation_id();
    println!("cargo:rerun-if-changed={TABLE}");
    println!("cargo:rerun-if-changed=src/text/embed/layout.rs");
    let out =
        PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("table.kemi");
    let derived = match std::fs::read(TABLE) {
        Ok(bytes) => layout::derive(&bytes).unwrap_or_else(|e| {
            println!("cargo:warning=the embedding table {TABLE} is unreadable ({e:?}): semantic search will be off");
            Vec::new()
        }),
        Err(e) => {
            println!("cargo:warning=cannot read {TABLE}: {e}");
            Vec::new()
        }
    };
    std::fs::write(&out, derived).expect("write the table layout into OUT_DIR");
}

/// Hashes every file of [`DERIVATION_SOURCES`] (paths and bytes, in path order) into
/// `KNOWLEDGE_DERIVATION_ID`.
fn derivation_id() {
    use std::hash::{Hash, Hasher};
    let mut files: Vec<PathBuf> = Vec::new();
    for root in DERIVATION_SOURCES {
        println!("cargo:rerun-if-changed={root}");
        collect(&PathBuf::from(root), &mut files);
    }
    files.sort();
    // SipHash with fixed keys: the same sources give the same id on every machine.
    #[allow(deprecated)]
    let mut h = std::hash::SipHasher::new();
    for f in &files {
        f.to_string_lossy().hash(&mut h);
        std::fs::read(f).unwrap_or_default().hash(&mut h);
    }
    println!(
        "cargo:rustc-env=KNOWLEDGE_DERIVATION_ID={:016x}",
        h.finish()
    );
}

fn collect(path: &std::path::Path, out: &mut Vec<PathBuf>) {
    match std::fs::read_dir(path) {
        Ok(entries) => {
            for e in entries.flatten() {
                collect(&e.path(), out);
            }
        }
        Err(_) if path.is_file() => out.push(path.to_path_buf()),
        Err(_) => {}
    }
}
