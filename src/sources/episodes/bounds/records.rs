//! A session kept as one JSON document (a Continue session, an Amp thread, a legacy Gemini CLI
//! session, Cline's `ui_messages.json` and SDK `messages.json`), read a record at a time.
//!
//! Parsed whole into a `serde_json::Value`, a document costs many times its size: a 60 MB
//! document of small numbers took 2.2 GB, and every indexing worker may hold one. Here the
//! document is only split: one linear scan finds the list of records and each other top-level
//! value as slices of the bytes already read (no copy), and each record is parsed on its own
//! when it is fed. A record (or a top-level value) larger than the limit a JSONL line has, or
//! opening more containers than one may, is skipped and counted as oversized, as such a line
//! is; past [`MAX_RECORDS`] records the rest are counted the same way. A document then costs its
//! bytes, a slice per record and one record parsed. A document whose brackets or strings do not
//! close (torn mid-write) is not split; a record that is not JSON is the caller's broken line.

use std::io;

use serde_json::{Map, Value};

use crate::sources::episodes::agent::{EventSink, ReadEnd};
use crate::sources::episodes::discover::TranscriptFile;

use super::{repair_lone_surrogates, too_many_containers, valid_utf8};

/// Most records of one document kept (a slice each); real sessions hold thousands.
pub const MAX_RECORDS: usize = 1_000_000;

/// A document split into its records, each still text.
#[derive(Debug, Default)]
pub struct Records<'a> {
    /// The top-level object without the list (`None` for a document that is a list).
    pub header: Option<Map<String, Value>>,
    /// The list's records, in order.
    pub items: Vec<&'a str>,
    /// Records and top-level values skipped: over the limit, or past [`MAX_RECORDS`].
    pub oversized: u64,
}

/// A record as the caller feeds it.
#[derive(Debug, PartialEq)]
pub enum Record {
    Parsed(Value),
    /// Over the limit or too nested: skipped unparsed, counted as oversized.
    Oversized,
    /// Not JSON: counted as broken.
    Broken,
}

impl Records<'_> {
    /// Each record parsed in turn ([`parse_record`]).
    pub fn parsed(&self, max_record: usize) -> impl Iterator<Item = Record> + '_ {
        self.items
            .iter()
            .map(move |raw| parse_record(raw, max_record))
    }
}

/// One record parsed: [`Record::Oversized`] when it is over `max_record` bytes or opens more
/// containers than a line may ([`super::MAX_CONTAINERS_PER_LINE`]), [`Record::Broken`] when it
/// is not JSON even with its lone surrogate escapes repaired.
pub fn parse_record(raw: &str, max_record: usize) -> Record {
    if raw.len() > max_record || too_many_containers(raw.as_bytes()) {
        return Record::Oversized;
    }
    match serde_json::from_str(raw) {
        Ok(v) => Record::Parsed(v),
        Err(e) if e.is_syntax() => repair_lone_surrogates(raw.as_bytes())
            .and_then(|fixed| serde_json::from_slice(&fixed).ok())
            .map_or(Record::Broken, Record::Parsed),
        Err(_) => Record::Broken,
    }
}

/// Splits the document in `bytes` (invalid UTF-8 costs its characters) and hands the parts to
/// `f`: for an object, the records under `list` (none when it is absent or not a list) and the
/// other values as the header (each over `max_record` bytes, or not JSON, dropped and counted
/// in `oversized`); for a list, its records. `None` (and `f` not called) when the document is
/// neither, or does not close.
pub fn with_records<T>(
    bytes: &[u8],
    list: &str,
    max_record: usize,
    f: impl FnOnce(Records<'_>) -> T,
) -> Option<T> {
    let text = valid_utf8(bytes);
    let text = std::str::from_utf8(&text).ok()?;
    split(text, list, max_record).map(f)
}

fn split<'a>(text: &'a str, list: &str, max_record: usize) -> Option<Records<'a>> {
    let b = text.as_bytes();
    let start = skip_ws(b, 0);
    let (records, end) = match b.get(start)? {
        b'[' => {
            let (items, dropped, end) = elements(b, text, start)?;
            let r = Records {
                header: None,
                items,
                oversized: dropped,
            };
            (r, end)
        }
        b'{' => object(b, text, start, list, max_record)?,
        _ => return None,
    };
    (skip_ws(b, end) == b.len()).then_some(records)
}

/// The object at `at`: its header and the records of its `list`; and where it ends.
fn object<'a>(
    b: &[u8],
    text: &'a str,
    at: usize,
    list: &str,
    max_record: usize,
) -> Option<(Records<'a>, usize)> {
    let mut out = Records {
        header: Some(Map::new()),
        ..Records::default()
    };
    let mut i = skip_ws(b, at + 1);
    if b.get(i) == Some(&b'}') {
        return Some((out, i + 1));
    }
    loop {
        let key_end = value_end(b, i).filter(|_| b.get(i) == Some(&b'"'))?;
        let key: String = serde_json::from_str(text.get(i..key_end)?).ok()?;
        i = skip_ws(b, key_end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        let v = skip_ws(b, i + 1);
        let v_end = value_end(b, v)?;
        if key == list {
            if b.get(v) == Some(&b'[') {
                let (items, dropped, _) = elements(b, text, v)?;
                out.items = items;
                out.oversized += dropped;
            }
        } else {
            match parse_record(text.get(v..v_end)?, max_record) {
                Record::Parsed(value) => {
                    out.header.get_or_insert_with(Map::new).insert(key, value);
                }
                _ => out.oversized += 1,
            }
        }
        i = skip_ws(b, v_end);
        match b.get(i)? {
            b',' => i = skip_ws(b, i + 1),
            b'}' => return Some((out, i + 1)),
            _ => return None,
        }
    }
}

/// The elements of the list at `at` as slices (at most [`MAX_RECORDS`], the rest counted), and
/// where the list ends.
fn elements<'a>(b: &[u8], text: &'a str, at: usize) -> Option<(Vec<&'a str>, u64, usize)> {
    let mut items = Vec::new();
    let mut dropped = 0u64;
    let mut i = skip_ws(b, at + 1);
    if b.get(i) == Some(&b']') {
        return Some((items, dropped, i + 1));
    }
    loop {
        let end = value_end(b, i)?;
        if items.len() < MAX_RECORDS {
            items.push(text.get(i..end)?);
        } else {
            dropped += 1;
        }
        i = skip_ws(b, end);
        match b.get(i)? {
            b',' => i = skip_ws(b, i + 1),
            b']' => return Some((items, dropped, i + 1)),
            _ => return None,
        }
    }
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while b
        .get(i)
        .is_some_and(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
    {
        i += 1;
    }
    i
}

/// Where the value starting at `at` ends: past its closing quote or bracket, or before the
/// delimiter after a number or a literal; `None` when it does not close.
fn value_end(b: &[u8], at: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, &c) in b.iter().enumerate().skip(at) {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => {
                    in_string = false;
                    if depth == 0 {
                        return Some(i + 1);
                    }
                }
                _ => {}
            }
            continue;
        }
        match c {
            b'"' => in_string = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' if depth == 0 => return (i > at).then_some(i),
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            b',' | b' ' | b'\t' | b'\n' | b'\r' if depth == 0 => return (i > at).then_some(i),
            _ => {}
        }
    }
    // A number or literal that ends the text.
    (depth == 0 && !in_string && b.len() > at).then_some(b.len())
}

/// Reads a store that is one JSON document holding a list of records (a legacy Gemini CLI
/// session's `messages`, a Continue session's `history`, an Amp thread's `messages`) through
/// [`read_document`](crate::sources::episodes::agent::read_document), a record at a time: the
/// document without `list` is fed first, as the header record, then each element of `list`,
/// each counted as a line; a record or header value over `max_record` bytes (the JSONL line
/// limit) is skipped and counted as oversized, one that is not JSON as broken. A file that is
/// not a JSON object (torn mid-write, not a session) is one broken line; nothing is fatal.
pub(crate) fn read_json_document(
    file: &TranscriptFile,
    max: u64,
    max_record: usize,
    parser: crate::sources::episodes::parser::TranscriptParser,
    list: &str,
    sink: &mut dyn EventSink,
) -> io::Result<ReadEnd> {
    crate::sources::episodes::agent::read_document(
        file,
        max,
        parser,
        sink,
        |bytes, parser, events| {
            let read = with_records(bytes, list, max_record, |mut records| {
                // A list alone is not one of these documents.
                let Some(header) = records.header.take() else {
                    return false;
                };
                parser.count_line();
                parser.feed_record(&Value::Object(header), events);
                for _ in 0..records.oversized {
                    parser.feed_oversized(0);
                }
                for record in records.parsed(max_record) {
                    match record {
                        Record::Parsed(v) => {
                            parser.count_line();
                            parser.feed_record(&v, events);
                        }
                        Record::Oversized => parser.feed_oversized(0),
                        Record::Broken => parser.feed(b"{", events),
                    }
                }
                true
            });
            if read != Some(true) {
                parser.feed(b"{", events);
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    type Split = (Option<Value>, Vec<Record>, u64);

    fn split_of(doc: &str, max: usize) -> Option<Split> {
        with_records(doc.as_bytes(), "messages", max, |r| {
            let items = r.parsed(max).collect();
            (r.header.clone().map(Value::Object), items, r.oversized)
        })
    }

    fn n_of(items: &[Record]) -> Vec<i64> {
        items
            .iter()
            .filter_map(|r| match r {
                Record::Parsed(v) => v["n"].as_i64(),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn an_object_is_its_header_and_its_records_in_order() {
        let doc = "{\"messages\" : [ {\"n\":1} ,\n{\"n\":2,\"t\":\"a]},\\\"[\"} ],\"id\":\"s\",\
                   \"env\":{\"cwd\":\"/w\"},\"v\":-1.5e3,\"ok\":true }\n";
        let (header, items, oversized) = split_of(doc, 1000).expect("a document");
        assert_eq!(
            header,
            Some(json!({"id": "s", "env": {"cwd": "/w"}, "v": -1500.0, "ok": true}))
        );
        assert_eq!(n_of(&items), [1, 2]);
        assert_eq!(oversized, 0);
        // A list alone; an empty one; a list key holding something else.
        let (header, items, _) = split_of(r#"[{"n":1}, 7]"#, 1000).expect("a list");
        assert_eq!((header, items.len()), (None, 2));
        assert_eq!(split_of("[]", 10).map(|s| s.1.len()), Some(0));
        let (header, items, _) = split_of(r#"{"messages":{"a":[1]},"id":"s"}"#, 1000).expect("obj");
        assert!(items.is_empty());
        assert_eq!(header, Some(json!({"id": "s"})));
    }

    #[test]
    fn a_torn_or_scalar_document_is_not_split_and_a_bad_record_is_broken() {
        for torn in [
            r#"{"messages":[{"n":1}"#,
            r#"{"messages":[{"n":1}],"id":"s"#,
            r#"{"messages":[{"n":1}]} x"#,
            "42",
            "",
            "{\"a\" 1}",
        ] {
            assert!(split_of(torn, 1000).is_none(), "{torn}");
        }
        let (_, items, _) = split_of(r#"[{"n":1},{"n":},{"n":3}]"#, 1000).expect("a list");
        assert_eq!(items[1], Record::Broken);
        assert_eq!(n_of(&items), [1, 3]);
    }

    #[test]
    fn a_record_or_value_over_the_limit_is_skipped_and_counted_not_parsed() {
        let zeros = vec!["0"; 5000].join(",");
        let doc =
            format!(r#"{{"id":"s","junk":[{zeros}],"messages":[{{"n":1}},[{zeros}],{{"n":3}}]}}"#);
        let (header, items, oversized) = split_of(&doc, 1000).expect("a document");
        assert_eq!(header, Some(json!({"id": "s"})));
        assert_eq!(oversized, 1, "the header's value");
        assert_eq!(items.len(), 3);
        assert_eq!(items[1], Record::Oversized);
        assert_eq!(n_of(&items), [1, 3]);
    }

    #[test]
    fn invalid_utf8_and_lone_surrogates_cost_characters_not_the_document() {
        let mut doc = br#"{"id":"s","messages":[{"t":"a"#.to_vec();
        doc.push(0xff);
        doc.extend(br#""},{"t":"x\ud83d y"}]}"#);
        let texts = with_records(&doc, "messages", 1000, |r| {
            r.parsed(1000)
                .filter_map(|r| match r {
                    Record::Parsed(v) => v["t"].as_str().map(str::to_string),
                    _ => None,
                })
                .collect::<Vec<_>>()
        })
        .expect("a document");
        assert_eq!(texts, ["a\u{fffd}", "x\u{fffd} y"]);
    }
}
