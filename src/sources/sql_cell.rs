//! Reading an agent's SQLite cells as what they may be.
//!
//! An agent's database is written by another program, and SQLite's column types are only
//! advice: a `time_created` may hold text or a real, a `data` cell invalid UTF-8, a key a
//! blob. rusqlite's typed `get` fails on each of them, and one failed row used to end the
//! whole read (0 of N sessions indexed, a whole `state.vscdb` refused). These take any storage
//! class: text is decoded lossily where a bad byte may cost a character (message bodies), ids
//! and keys must be exact (they are looked up again), and numbers are read from integers,
//! reals or numeric text. What cannot be read is `None`, for the reader to count and skip.

use rusqlite::types::ValueRef;
use rusqlite::Row;

/// A cell's text, whatever its storage class: invalid UTF-8 costs a character; a number is
/// written out; NULL is `None`.
pub fn lossy_text(v: ValueRef<'_>) -> Option<String> {
    match v {
        ValueRef::Null => None,
        ValueRef::Integer(i) => Some(i.to_string()),
        ValueRef::Real(f) => Some(f.to_string()),
        ValueRef::Text(b) | ValueRef::Blob(b) => Some(String::from_utf8_lossy(b).into_owned()),
    }
}

/// A cell's text only when it is exactly text (valid UTF-8, stored as text or blob, or an
/// integer): an id or key that is looked up again must round-trip unchanged.
pub fn exact_text(v: ValueRef<'_>) -> Option<String> {
    match v {
        ValueRef::Integer(i) => Some(i.to_string()),
        ValueRef::Text(b) | ValueRef::Blob(b) => std::str::from_utf8(b).ok().map(str::to_string),
        ValueRef::Null | ValueRef::Real(_) => None,
    }
}

/// A cell's integer: an integer, a real (truncated), or text holding either; else `None`.
pub fn int(v: ValueRef<'_>) -> Option<i64> {
    match v {
        ValueRef::Integer(i) => Some(i),
        ValueRef::Real(f) => real_to_int(f),
        ValueRef::Text(b) | ValueRef::Blob(b) => {
            let s = std::str::from_utf8(b).ok()?.trim();
            s.parse::<i64>()
                .ok()
                .or_else(|| s.parse::<f64>().ok().and_then(real_to_int))
        }
        ValueRef::Null => None,
    }
}

fn real_to_int(f: f64) -> Option<i64> {
    (f.is_finite() && f.abs() < 9.0e18).then_some(f as i64)
}

/// Column `i` of `row` through `read` (`None` when the column is missing too).
pub fn col<T>(row: &Row<'_>, i: usize, read: fn(ValueRef<'_>) -> Option<T>) -> Option<T> {
    row.get_ref(i).ok().and_then(read)
}

/// A JSON number of milliseconds as an integer, whether the writer stored it as an integer, a
/// float or a numeric string.
pub fn json_ms(v: Option<&serde_json::Value>) -> Option<i64> {
    match v? {
        serde_json::Value::Number(n) => n.as_i64().or_else(|| n.as_f64().and_then(real_to_int)),
        serde_json::Value::String(s) => int(ValueRef::Text(s.as_bytes())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_storage_class_is_read_or_refused_never_an_error() {
        assert_eq!(int(ValueRef::Integer(7)), Some(7));
        assert_eq!(int(ValueRef::Real(7.9)), Some(7));
        assert_eq!(
            int(ValueRef::Text(b" 1700000000000 ")),
            Some(1_700_000_000_000)
        );
        assert_eq!(int(ValueRef::Text(b"1.7e12")), Some(1_700_000_000_000));
        assert_eq!(int(ValueRef::Text(b"yesterday")), None);
        assert_eq!(int(ValueRef::Real(f64::NAN)), None);
        assert_eq!(int(ValueRef::Blob(&[0xff, 0x31])), None);
        assert_eq!(int(ValueRef::Null), None);
        assert_eq!(
            lossy_text(ValueRef::Text(b"ok \xff end")).as_deref(),
            Some("ok \u{fffd} end")
        );
        assert_eq!(lossy_text(ValueRef::Real(1.5)).as_deref(), Some("1.5"));
        assert_eq!(exact_text(ValueRef::Text(b"ses_\xff")), None);
        assert_eq!(
            exact_text(ValueRef::Blob(b"ses_1")).as_deref(),
            Some("ses_1")
        );
        assert_eq!(
            json_ms(Some(&serde_json::json!(1.7e12))),
            Some(1_700_000_000_000)
        );
        assert_eq!(
            json_ms(Some(&serde_json::json!("1700000000000"))),
            Some(1_700_000_000_000)
        );
        assert_eq!(json_ms(Some(&serde_json::json!({"x": 1}))), None);
    }
}
