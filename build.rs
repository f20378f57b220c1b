//! Derives the embedding table's lookup layout (`src/text/embed/layout.rs`) from the committed
//! table into `OUT_DIR`, so the binary carries it beside the table and no process builds it. A
//! table the layout cannot be derived from gets an empty layout: the binary still builds, and
//! opening the table at run time reports what is wrong with it (the lanes then answer lexically).

#[allow(dead_code)]
#[path = "src/text/embed/layout.rs"]
mod layout;

use std::path::PathBuf;

const TABLE: &str = "assets/embeddings/table.kemb";

fn main() {
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
