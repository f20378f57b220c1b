//! LZ4 block compression with a match table kept between texts.
//!
//! `lz4_flex::block::compress_into` builds its 4,096-slot table (8 KB) zeroed for every text it
//! packs: for the short texts an index stores by the thousand that zeroing was most of the
//! compressing (docs/PERFORMANCE.md, issue 18, third pass). This is the same algorithm as
//! lz4_flex 0.11's encoder for inputs under 64 KB (same hash, same slot, same search steps,
//! same sequence encoding), so it writes the very bytes stores already hold; only the table
//! differs. Each slot holds `base + position`, `base` moving past every text packed, and a slot
//! below `base` (written for an earlier text) reads as 0 — exactly what a freshly zeroed table
//! reads — so no text sees another's positions and none needs the table cleared.

/// Inputs this long or longer take lz4_flex's other table (32-bit, its own hash): left to it.
pub(super) const MAX_INPUT: usize = u16::MAX as usize - 1;

const SLOTS: usize = 4096;
/// The last match must start at least this far from the end (LZ4's format rule).
const MFLIMIT: usize = 12;
/// The last five bytes are literals, and a match may not reach the byte before them.
const END_OFFSET: usize = 6;
const MIN_LENGTH: usize = MFLIMIT + 1;
const MINMATCH: usize = 4;
/// After 32 misses the search step grows by one (lz4_flex's acceleration).
const STEP_SHIFT: usize = 5;

pub(super) struct Encoder {
    table: Box<[u32; SLOTS]>,
    base: u32,
}

impl Encoder {
    pub(super) fn new() -> Self {
        Self {
            table: Box::new([0; SLOTS]),
            base: 0,
        }
    }

    /// Appends the LZ4 block of `input` (at most [`MAX_INPUT`] bytes) to `out` and returns its
    /// length; `None` as soon as the block is longer than `limit` bytes (`out` then holds a part
    /// of it).
    pub(super) fn compress(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        limit: usize,
    ) -> Option<usize> {
        debug_assert!(input.len() <= MAX_INPUT);
        if (u32::MAX - self.base) as usize <= input.len() {
            // Once per ~4 GB packed by this thread: positions would no longer fit above `base`.
            self.table.fill(0);
            self.base = 0;
        }
        let start = out.len();
        let encoded = self.sequences(input, out, start + limit);
        self.base += input.len() as u32;
        encoded.map(|()| out.len() - start).filter(|&n| n <= limit)
    }

    #[inline]
    fn get(&self, slot: usize) -> usize {
        self.table[slot].saturating_sub(self.base) as usize
    }

    #[inline]
    fn put(&mut self, slot: usize, pos: usize) {
        self.table[slot] = self.base + pos as u32;
    }

    /// `out` grows to at most `end` bytes; `None` once it would be longer.
    fn sequences(&mut self, input: &[u8], out: &mut Vec<u8>, end: usize) -> Option<()> {
        if input.len() < MIN_LENGTH {
            last_literals(out, input, 0);
            return Some(());
        }
        let end_pos_check = input.len() - MFLIMIT;
        let mut literal_start = 0;
        // A block may not start with a match.
        self.put(slot_at(input, 0), 0);
        let mut cur = 1;
        loop {
            let mut non_match_count = 1 << STEP_SHIFT;
            let mut next_cur = cur;
            let mut candidate;
            loop {
                let step = non_match_count >> STEP_SHIFT;
                non_match_count += 1;
                cur = next_cur;
                next_cur += step;
                if cur > end_pos_check {
                    last_literals(out, input, literal_start);
                    return Some(());
                }
                let slot = slot_at(input, cur);
                candidate = self.get(slot);
                self.put(slot, cur);
                // Every candidate is before `cur` and, the input being under 64 KB, within a
                // 16-bit offset: only the bytes decide.
                if batch(input, candidate) == batch(input, cur) {
                    break;
                }
            }
            let offset = (cur - candidate) as u16;
            while candidate > 0 && cur > literal_start && input[cur - 1] == input[candidate - 1] {
                cur -= 1;
                candidate -= 1;
            }
            let lit_len = cur - literal_start;
            cur += MINMATCH;
            candidate += MINMATCH;
            let dup_len = same_bytes(input, cur, candidate);
            cur += dup_len;
            self.put(slot_at(input, cur - 2), cur - 2);

            out.push(((lit_len.min(15) as u8) << 4) | dup_len.min(15) as u8);
            if lit_len >= 15 {
                write_length(out, lit_len - 15);
            }
            out.extend_from_slice(&input[literal_start..literal_start + lit_len]);
            out.extend_from_slice(&offset.to_le_bytes());
            if dup_len >= 15 {
                write_length(out, dup_len - 15);
            }
            if out.len() > end {
                return None;
            }
            literal_start = cur;
        }
    }
}

/// The table slot of the four bytes at `pos` (lz4_flex's `HashTable4KU16`: Knuth's
/// multiplicative hash, top 16 bits, then 12 of them).
#[inline]
fn slot_at(input: &[u8], pos: usize) -> usize {
    (batch(input, pos).wrapping_mul(2_654_435_761) >> 20) as usize
}

#[inline]
fn batch(input: &[u8], pos: usize) -> u32 {
    u32::from_ne_bytes(input[pos..pos + 4].try_into().expect("four bytes"))
}

/// How many bytes from `cur` on repeat those from `candidate` on, stopping before the last
/// literals.
#[inline]
fn same_bytes(input: &[u8], cur: usize, candidate: usize) -> usize {
    let a = &input[cur..input.len() - END_OFFSET];
    let b = &input[candidate..candidate + a.len()];
    let mut n = 0;
    while n + 8 <= a.len() {
        let x = u64::from_le_bytes(a[n..n + 8].try_into().expect("eight bytes"))
            ^ u64::from_le_bytes(b[n..n + 8].try_into().expect("eight bytes"));
        if x != 0 {
            return n + (x.trailing_zeros() / 8) as usize;
        }
        n += 8;
    }
    n + a[n..]
        .iter()
        .zip(&b[n..])
        .take_while(|(x, y)| x == y)
        .count()
}

/// A length beyond the token's 15: bytes of 255, then the rest.
#[inline]
fn write_length(out: &mut Vec<u8>, mut n: usize) {
    while n >= 0xFF {
        out.push(0xFF);
        n -= 0xFF;
    }
    out.push(n as u8);
}

fn last_literals(out: &mut Vec<u8>, input: &[u8], start: usize) {
    let lit_len = input.len() - start;
    out.push((lit_len.min(15) as u8) << 4);
    if lit_len >= 15 {
        write_length(out, lit_len - 15);
    }
    out.extend_from_slice(&input[start..]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn block(e: &mut Encoder, input: &[u8]) -> Vec<u8> {
        // Bytes before the block stay as they are.
        let mut out = vec![0xAA; 3];
        let n = e
            .compress(input, &mut out, usize::MAX / 2)
            .expect("no limit");
        assert_eq!((out.len(), &out[..3]), (n + 3, &[0xAA; 3][..]));
        out.split_off(3)
    }

    /// Texts with a lot to share and texts with little, of many lengths, one encoder for all.
    fn texts() -> Vec<Vec<u8>> {
        let mut v = Vec::new();
        let words = [
            "error ",
            "cargo ",
            "test ",
            "failed\n",
            "/src/main.rs:",
            "42 ",
            "ок ",
        ];
        let mut seed = 0x9e37_79b9_u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for len in (0..600)
            .chain((600..66_000).step_by(997))
            .chain([MAX_INPUT])
        {
            let mut t = Vec::with_capacity(len + 16);
            while t.len() < len {
                let r = next();
                if r % 5 == 0 {
                    t.push((r >> 8) as u8);
                } else {
                    t.extend_from_slice(words[(r >> 16) as usize % words.len()].as_bytes());
                }
            }
            t.truncate(len);
            v.push(t);
            // Runs of one byte: long matches, 255-byte length extensions.
            v.push(vec![b'a'; len]);
        }
        v
    }

    #[test]
    fn blocks_are_byte_for_byte_lz4_flex_s() {
        let mut e = Encoder::new();
        for t in texts() {
            assert_eq!(
                block(&mut e, &t),
                lz4_flex::block::compress(&t),
                "{} bytes",
                t.len()
            );
        }
    }

    #[test]
    fn the_table_starts_over_when_positions_run_out() {
        let texts = texts();
        let mut e = Encoder::new();
        e.base = u32::MAX - 70_000;
        for t in texts.iter().filter(|t| t.len() > 20_000).take(6) {
            assert_eq!(block(&mut e, t), lz4_flex::block::compress(t));
        }
        assert!(e.base < 1 << 20, "the table was started over");
    }

    #[test]
    fn a_block_over_the_limit_stops_early() {
        let mut e = Encoder::new();
        let noise: Vec<u8> = (0..5_000u32)
            .flat_map(|i| (i.wrapping_mul(2_654_435_761)).to_le_bytes())
            .collect();
        let mut out = Vec::new();
        assert_eq!(e.compress(&noise, &mut out, 100), None);
        // The next text is packed as if nothing had been cut short.
        let t = texts().swap_remove(800);
        assert_eq!(block(&mut e, &t), lz4_flex::block::compress(&t));
    }

    proptest! {
        #[test]
        fn any_input_packs_as_lz4_flex_does_and_decodes(
            parts in proptest::collection::vec(
                prop_oneof![
                    proptest::collection::vec(any::<u8>(), 0..40),
                    proptest::collection::vec(0u8..3, 0..300),
                    "[a-c ]{0,80}".prop_map(String::into_bytes),
                ],
                0..40,
            ),
        ) {
            let input: Vec<u8> = parts.concat();
            let mut e = Encoder::new();
            // A first text leaves its positions in the table for the second to ignore.
            block(&mut e, &input.iter().rev().copied().collect::<Vec<_>>());
            let b = block(&mut e, &input);
            prop_assert_eq!(&b, &lz4_flex::block::compress(&input));
            prop_assert_eq!(lz4_flex::block::decompress(&b, input.len()).unwrap(), input);
        }
    }
}
