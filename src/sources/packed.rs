//! Stored text in fewer bytes: event text is the largest part of `episodes.sqlite`, so the
//! indexer stores each long text LZ4-compressed (a pure-Rust block codec, no C library, no
//! dictionary), and every connection the stores open gets the SQL function that gives it back.
//!
//! A stored value is either TEXT (short texts, and texts LZ4 cannot shrink, stay as they are) or
//! a BLOB: the format byte [`LZ4`], then the length of the text as a little-endian u32, then the
//! LZ4 block. Readers never see either form: the store's `events` view turns both into the text
//! (`store::SCHEMA`), so every query over `events.text` is unchanged, and `knowledge index`
//! upgrades a store of plain text in place (`store::open_rw`), from stored text only.

use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::types::{Value, ValueRef};
use rusqlite::Connection;

mod encoder;

/// The first byte of a packed value: an LZ4 block follows its u32 length.
const LZ4: u8 = 1;

/// Shorter texts are stored as they are: LZ4 saves next to nothing on them.
const MIN_PACKED: usize = 96;

/// A packed text never unpacks to more than this (event text is bounded far below it, see
/// `episodes::bounds`): a damaged length cannot make a reader allocate gigabytes.
const MAX_UNPACKED: usize = 64 << 20;

/// The SQL function that gives a stored value back as text (`unpack_text(text)`).
pub const UNPACK_FN: &str = "unpack_text";

/// The SQL function that packs a text as the indexer stores it (`pack_text(text)`), for the
/// in-place upgrade of a store written before packing.
pub const PACK_FN: &str = "pack_text";

#[derive(Debug, thiserror::Error)]
pub enum PackError {
    #[error("a stored text is damaged (unknown format {0})")]
    Format(u8),
    #[error("a stored text is damaged (it names {0} bytes, more than any text holds)")]
    TooLong(usize),
    #[error("a stored text is damaged: {0}")]
    Lz4(String),
    #[error("a stored text is damaged: it does not unpack to UTF-8")]
    Utf8,
}

/// The value to store for `text`: the text itself when packing does not pay, else the packed
/// bytes.
pub fn pack(text: &str) -> Value {
    match pack_bytes(text) {
        Some(b) => Value::Blob(b),
        None => Value::Text(text.to_string()),
    }
}

/// The packed bytes of `text`, or `None` when it is to be stored as it is.
///
/// Texts under 64 KB (nearly all) go through [`encoder::Encoder`], one per thread, which writes
/// lz4_flex's bytes without zeroing an 8 KB table per text — that zeroing was 38M of the 52M
/// instructions packing cost on a 2.9 MB Claude world (docs/PERFORMANCE.md, issue 18, third
/// pass); longer ones through lz4_flex itself.
pub fn pack_bytes(text: &str) -> Option<Vec<u8>> {
    if text.len() < MIN_PACKED || text.len() > MAX_UNPACKED {
        return None;
    }
    // Packed only when the value (block and 5-byte head) is shorter than the text.
    let limit = text.len() - 6;
    if text.len() > encoder::MAX_INPUT {
        let block = lz4_flex::block::compress(text.as_bytes());
        return (block.len() <= limit).then(|| framed(text.len(), &block));
    }
    ENCODER.with(|cell| {
        let (encoder, scratch) = &mut *cell.borrow_mut();
        scratch.clear();
        encoder.compress(text.as_bytes(), scratch, limit)?;
        Some(framed(text.len(), scratch))
    })
}

fn framed(len: usize, block: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(block.len() + 5);
    out.push(LZ4);
    out.extend_from_slice(&(len as u32).to_le_bytes());
    out.extend_from_slice(block);
    out
}

thread_local! {
    /// The thread's encoder and the buffer its blocks are written to (kept: under 72 KB, LZ4's
    /// bound for the longest text the encoder takes).
    static ENCODER: std::cell::RefCell<(encoder::Encoder, Vec<u8>)> =
        std::cell::RefCell::new((encoder::Encoder::new(), Vec::new()));
}

/// The text of a packed value (see [`pack`]).
pub fn unpack(packed: &[u8]) -> Result<String, PackError> {
    let (&format, rest) = packed.split_first().ok_or(PackError::Format(0))?;
    if format != LZ4 || rest.len() < 4 {
        return Err(PackError::Format(format));
    }
    let len = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
    if len > MAX_UNPACKED {
        return Err(PackError::TooLong(len));
    }
    let mut out = vec![0u8; len];
    let n = lz4_flex::block::decompress_into(&rest[4..], &mut out)
        .map_err(|e| PackError::Lz4(e.to_string()))?;
    if n != len {
        return Err(PackError::Lz4(format!("{n} bytes where {len} were stored")));
    }
    String::from_utf8(out).map_err(|_| PackError::Utf8)
}

/// Give `conn` the two functions (every store connection gets them: a view over packed text is
/// read through them).
pub fn register(conn: &Connection) -> rusqlite::Result<()> {
    let flags = FunctionFlags::SQLITE_UTF8
        | FunctionFlags::SQLITE_DETERMINISTIC
        | FunctionFlags::SQLITE_INNOCUOUS;
    conn.create_scalar_function(UNPACK_FN, 1, flags, |ctx: &Context<'_>| {
        Ok(match ctx.get_raw(0) {
            ValueRef::Blob(b) => {
                Value::Text(unpack(b).map_err(|e| rusqlite::Error::UserFunctionError(Box::new(e)))?)
            }
            ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
            ValueRef::Null => Value::Null,
            ValueRef::Integer(i) => Value::Text(i.to_string()),
            ValueRef::Real(r) => Value::Text(r.to_string()),
        })
    })?;
    conn.create_scalar_function(PACK_FN, 1, flags, |ctx: &Context<'_>| {
        Ok(match ctx.get_raw(0) {
            ValueRef::Text(t) => pack(&String::from_utf8_lossy(t)),
            other => Value::from(other),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn long_text() -> String {
        "the deploy failed because the mysql connection timed out; retried the migration. "
            .repeat(20)
    }

    #[test]
    fn long_text_is_packed_smaller_and_comes_back_exactly() {
        let text = long_text();
        let Value::Blob(b) = pack(&text) else {
            panic!("a long repetitive text is packed")
        };
        assert!(b.len() * 4 < text.len(), "{} of {}", b.len(), text.len());
        assert_eq!(unpack(&b).unwrap(), text);
    }

    /// The old framing: `lz4_flex::block::compress` behind the format byte and length.
    fn framed_as_before(text: &str) -> Option<Vec<u8>> {
        if text.len() < MIN_PACKED || text.len() > MAX_UNPACKED {
            return None;
        }
        let block = lz4_flex::block::compress(text.as_bytes());
        if block.len() + 5 >= text.len() {
            return None;
        }
        let mut out = vec![LZ4];
        out.extend_from_slice(&(text.len() as u32).to_le_bytes());
        out.extend_from_slice(&block);
        Some(out)
    }

    #[test]
    fn packed_bytes_are_those_stored_before_the_reused_buffer() {
        // Sizes on both sides of the packing floor and of lz4's 64 KB table switch (where the
        // thread's encoder hands over to lz4_flex), big before small so a longer text's
        // positions and bytes sit in the encoder's table and buffer.
        let mut texts: Vec<String> = Vec::new();
        for (i, n) in [
            2_000_000, 70_000, 65_534, 65_535, 65_536, 5_000, 97, 96, 95, 300, 1_100_000,
        ]
        .into_iter()
        .enumerate()
        {
            let base = format!("line {i}: cargo test failed, see target/debug/build-{i}.log\n");
            texts.push(base.repeat(n / base.len() + 1)[..n].to_string());
            // Little to share: the framing must fall back to text exactly as before.
            let noise: String = (0..n / 3)
                .map(|k| char::from_u32(0x4e00 + ((k * 7919 + i) % 20_000) as u32).unwrap())
                .collect();
            texts.push(noise);
        }
        for n in (0..3_000).step_by(37) {
            texts.push(long_text()[..n.min(long_text().len())].to_string());
        }
        for t in &texts {
            assert_eq!(
                pack_bytes(t),
                framed_as_before(t),
                "a text of {} bytes",
                t.len()
            );
            if let Some(b) = pack_bytes(t) {
                assert_eq!(&unpack(&b).unwrap(), t);
            }
        }
        let threads: Vec<_> = (0..4)
            .map(|k| {
                let texts = texts.clone();
                std::thread::spawn(move || {
                    texts
                        .iter()
                        .skip(k)
                        .all(|t| pack_bytes(t) == framed_as_before(t))
                })
            })
            .collect();
        for t in threads {
            assert!(t.join().unwrap(), "every thread packs as before");
        }
    }

    #[test]
    fn short_or_incompressible_text_stays_text() {
        assert_eq!(pack("ls -la"), Value::Text("ls -la".into()));
        // Every byte different: LZ4 finds nothing to share.
        let noise: String = (0..200u32)
            .map(|i| char::from_u32(0x4e00 + i * 7).unwrap())
            .collect();
        assert!(matches!(pack(&noise), Value::Text(_)));
    }

    #[test]
    fn damaged_values_are_errors_not_panics() {
        let Value::Blob(mut b) = pack(&long_text()) else {
            panic!("packed")
        };
        assert!(matches!(
            unpack(&[9, 0, 0, 0, 0]),
            Err(PackError::Format(9))
        ));
        assert!(unpack(&[]).is_err());
        let mut huge = b.clone();
        huge[1..5].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(unpack(&huge), Err(PackError::TooLong(_))));
        let cut = b.len() / 2;
        b.truncate(cut);
        assert!(unpack(&b).is_err());
    }

    #[test]
    fn the_sql_functions_round_trip_and_pass_plain_text_through() {
        let c = Connection::open_in_memory().unwrap();
        register(&c).unwrap();
        let text = long_text();
        let (kind, back): (String, String) = c
            .query_row(
                "SELECT typeof(pack_text(?1)), unpack_text(pack_text(?1))",
                [&text],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!((kind.as_str(), back), ("blob", text));
        let plain: String = c
            .query_row("SELECT unpack_text('héllo')", [], |r| r.get(0))
            .unwrap();
        assert_eq!(plain, "héllo");
        let err = c.query_row("SELECT unpack_text(x'0900000000')", [], |r| {
            r.get::<_, String>(0)
        });
        assert!(err.is_err(), "a damaged value is an error");
    }
}
