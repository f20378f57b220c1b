//! Validate documents against one `$defs` entry of the contract schemas in `assets/schema/`.
//!
//! ```ignore
//! mod common;
//! common::schema::validate("knowledge_search.v1.schema.json", "response", &doc)?;
//! ```

use serde_json::{json, Value};
use std::path::PathBuf;

/// Path of a schema file: a bare file name is looked up in `assets/schema/`, anything with a
/// `/` is taken relative to the crate root.
pub fn schema_path(schema_file: &str) -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    if schema_file.contains('/') {
        root.join(schema_file)
    } else {
        root.join("assets").join("schema").join(schema_file)
    }
}

/// Reads and parses a JSON file relative to the crate root (e.g. `assets/contracts/x.json`).
pub fn load_json(path_from_root: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(path_from_root);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// Builds a validator for `#/$defs/<def>` of `schema_file`: a wrapper schema
/// `{"$ref": "#/$defs/<def>", "$defs": <the file's $defs>}` (draft 2020-12, formats checked,
/// no network).
pub fn validator(schema_file: &str, def: &str) -> jsonschema::Validator {
    let path = schema_path(schema_file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let doc: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
    let defs = doc
        .get("$defs")
        .cloned()
        .unwrap_or_else(|| panic!("{schema_file} has no $defs"));
    assert!(defs.get(def).is_some(), "{schema_file} has no $defs/{def}");
    let wrapper = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$ref": format!("#/$defs/{def}"),
        "$defs": defs,
    });
    jsonschema::draft202012::options()
        .should_validate_formats(true)
        .build(&wrapper)
        .unwrap_or_else(|e| panic!("{schema_file}#/$defs/{def} does not compile: {e}"))
}

/// Validates `instance` against `#/$defs/<def>` of `schema_file`. On failure returns every error,
/// one per line, as `<instance path>: <message>`.
pub fn validate(schema_file: &str, def: &str, instance: &Value) -> Result<(), String> {
    let validator = validator(schema_file, def);
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| {
            let at = e.instance_path().to_string();
            format!("{}: {e}", if at.is_empty() { "/" } else { at.as_str() })
        })
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("\n"))
    }
}
