//! The library's layers point one way (docs/ARCHITECTURE.md, "Arrows run one way"): front ends →
//! the composition root (`wiring.rs`) → engine → lanes → sources → text and contract. A module
//! that reaches up (the engine into `health/`, a lane source into the engine, a source into
//! `team/`) makes a cycle the compiler accepts; this test is what refuses it. It reads the
//! source tree, so it sees `crate::` paths in code and in doc links alike: a doc link upwards is
//! a dependency a reader follows too.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Each layer and the top-level modules it may name (itself included).
const LAYERS: &[(&str, &[&str])] = &[
    ("contract", &["contract"]),
    ("text", &["text"]),
    ("sources", &["contract", "sources", "text"]),
    ("lanes", &["contract", "lanes", "sources", "text"]),
    (
        "engine",
        &["config", "contract", "engine", "lanes", "sources", "text"],
    ),
    (
        "adapters",
        &["adapters", "config", "contract", "lanes", "sources", "text"],
    ),
    (
        "team",
        &["config", "contract", "lanes", "sources", "team", "text"],
    ),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read the source tree") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level modules `text` names as `crate::<module>`, and whether it groups them
/// (`use crate::{a, b}`), which this test cannot check and so refuses.
fn named_modules(text: &str) -> (BTreeSet<String>, bool) {
    let mut names = BTreeSet::new();
    let mut grouped = false;
    for (at, _) in text.match_indices("crate::") {
        if at > 0
            && (text.as_bytes()[at - 1].is_ascii_alphanumeric() || text.as_bytes()[at - 1] == b'_')
        {
            continue; // `knowledge_crate::` or the like: not this crate's root
        }
        let rest = &text[at + "crate::".len()..];
        if rest.starts_with('{') {
            grouped = true;
            continue;
        }
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            names.insert(name);
        }
    }
    (names, grouped)
}

#[test]
fn no_layer_names_a_module_above_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut wrong = Vec::new();
    for (layer, allowed) in LAYERS {
        let mut files = Vec::new();
        rust_files(&src.join(layer), &mut files);
        assert!(!files.is_empty(), "no source files under src/{layer}");
        for file in files {
            let text = std::fs::read_to_string(&file).expect("read a source file");
            let (names, grouped) = named_modules(&text);
            let shown = file.strip_prefix(&src).unwrap_or(&file).display();
            if grouped {
                wrong.push(format!(
                    "{shown}: `crate::{{…}}` groups modules; name each with its own path"
                ));
            }
            for name in names.iter().filter(|n| !allowed.contains(&n.as_str())) {
                wrong.push(format!("{shown} (layer {layer}) names crate::{name}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "modules reaching up a layer:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_check_sees_paths_and_groups() {
    let (names, grouped) = named_modules(
        "use crate::engine::Engine;\n/// [`crate::health::stats`]\nlet x = my_crate::foo;",
    );
    assert_eq!(
        names.into_iter().collect::<Vec<_>>(),
        vec!["engine".to_string(), "health".to_string()]
    );
    assert!(!grouped);
    assert!(named_modules("use crate::{engine, lanes};").1);
}
