//! Hamming distances between sign codes at the speed of the CPU's `popcnt` instruction.
//!
//! The release build targets baseline x86-64, which has no `popcnt`: there `count_ones` is a
//! dozen shifts and masks per 64-bit word, and the vector scans (a million codes a query at
//! 2,000 sessions, the cross-lingual expansion's 60k rows a Russian word) spent most of their
//! instructions on it. A scan runs inside [`with_popcnt`], which compiles its body a second time
//! with `popcnt` enabled and picks that copy when the CPU has the instruction; the distances are
//! the same either way, only the instructions that count the bits differ.

/// Bits that differ between two codes of equal length.
#[inline(always)]
pub fn distance(a: &[u64], b: &[u64]) -> u32 {
    a.iter().zip(b).map(|(x, y)| (x ^ y).count_ones()).sum()
}

/// Run `scan` (a loop over [`distance`]) compiled with `popcnt` when the CPU has it.
#[inline(always)]
pub fn with_popcnt<R>(scan: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "popcnt")]
        fn fast<R>(scan: impl FnOnce() -> R) -> R {
            scan()
        }
        if std::is_x86_feature_detected!("popcnt") {
            // SAFETY: the CPU was just checked to have the one feature `fast` is compiled for.
            return unsafe { fast(scan) };
        }
    }
    scan()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_are_the_same_with_and_without_popcnt() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let codes: Vec<[u64; 2]> = (0..1000).map(|_| [next(), next()]).collect();
        let slow: Vec<u32> = codes.windows(2).map(|w| distance(&w[0], &w[1])).collect();
        let fast: Vec<u32> =
            with_popcnt(|| codes.windows(2).map(|w| distance(&w[0], &w[1])).collect());
        assert_eq!(slow, fast);
        assert_eq!(distance(&[u64::MAX, 0], &[0, 0]), 64);
        assert_eq!(distance(&[0b1011], &[0b0001]), 2);
    }
}
