//! Request documents parsed strictly: a key given twice is an error naming it.
//!
//! `serde_json` keeps the last of two equal keys without a word, so `{"query":"a","query":"b"}`
//! searched for `b` and a request that said two things was answered as if it said one. The
//! validators parse through here instead; everything else about the JSON is `serde_json`'s
//! (including its nesting limit).

use std::cell::RefCell;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// Why a request text is not one JSON document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StrictJsonError {
    Malformed {
        line: usize,
        column: usize,
    },
    /// `field` is the key's path (`query`, `filters.since`, `task.acceptance[0].x`).
    DuplicateKey {
        field: String,
    },
}

/// Parses `text` as one JSON document, refusing duplicate keys.
pub fn parse(text: &str) -> Result<Value, StrictJsonError> {
    let duplicate = RefCell::new(None);
    let mut de = serde_json::Deserializer::from_str(text);
    let parsed = Node {
        path: String::new(),
        duplicate: &duplicate,
    }
    .deserialize(&mut de)
    .and_then(|v| de.end().map(|()| v));
    parsed.map_err(|e| match duplicate.into_inner() {
        Some(field) => StrictJsonError::DuplicateKey { field },
        None => StrictJsonError::Malformed {
            line: e.line(),
            column: e.column(),
        },
    })
}

/// One value being read, with its path for the error message.
struct Node<'a> {
    path: String,
    duplicate: &'a RefCell<Option<String>>,
}

impl<'a> Node<'a> {
    fn child(&self, path: String) -> Node<'a> {
        Node {
            path,
            duplicate: self.duplicate,
        }
    }
}

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(v) =
            seq.next_element_seed(self.child(format!("{}[{}]", self.path, out.len())))?
        {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = if self.path.is_empty() {
                key.clone()
            } else {
                format!("{}.{key}", self.path)
            };
            if out.contains_key(&key) {
                let message = format!("duplicate key {path}");
                *self.duplicate.borrow_mut() = Some(path);
                return Err(de::Error::custom(message));
            }
            let value = map.next_value_seed(self.child(path))?;
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_keys_are_named_by_path() {
        let dup = |t: &str| match parse(t) {
            Err(StrictJsonError::DuplicateKey { field }) => field,
            other => format!("{other:?}"),
        };
        assert_eq!(dup(r#"{"query":"a","query":"b"}"#), "query");
        assert_eq!(dup(r#"{"filters":{"since":1,"since":2}}"#), "filters.since");
        assert_eq!(dup(r#"{"a":[{"x":1},{"x":1,"x":2}]}"#), "a[1].x");
    }

    #[test]
    fn everything_else_is_serde_json() {
        let text = r#"{"a":[1,-2,2.5,"s",null,true,{"b":{}}]}"#;
        assert_eq!(parse(text).ok(), serde_json::from_str(text).ok());
        assert!(matches!(
            parse("{\"a\": "),
            Err(StrictJsonError::Malformed { line: 1, .. })
        ));
        assert!(matches!(
            parse("{} {}"),
            Err(StrictJsonError::Malformed { .. })
        ));
        let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
        assert!(matches!(
            parse(&deep),
            Err(StrictJsonError::Malformed { .. })
        ));
    }
}
