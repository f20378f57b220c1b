//! SentencePiece unigram segmentation over the encoder's own vocabulary: the split of a
//! normalised text into pieces whose summed log-probabilities (the model's scores) are highest,
//! found by Viterbi over character positions, exactly as the wheel does it (ties go to the
//! piece found first: the earlier start, then the shorter piece). A character no piece starts
//! with becomes one unknown piece scored below every real one.
//!
//! The pieces are kept sorted by their UTF-8 bytes in the asset, so the pieces that start at a
//! position are found by narrowing one sorted range a character at a time: nothing is built at
//! load time and a one-shot call reads only the pages its binary searches land on.

/// The vocabulary, read in place.
pub(super) struct Vocabulary<'a> {
    /// All pieces' bytes, concatenated in sorted order.
    pub bytes: &'a [u8],
    /// End offset in `bytes` of each sorted piece (its start is the previous end).
    pub ends: &'a [u32],
    /// The piece id of each sorted piece.
    pub ids: &'a [u32],
    /// Each piece's score, by id.
    pub scores: &'a [f32],
    /// The score of a character no piece starts with (the lowest score less 10).
    pub unk_score: f64,
    pub unk_id: u32,
}

impl Vocabulary<'_> {
    fn piece(&self, k: usize) -> &[u8] {
        let start = if k == 0 { 0 } else { self.ends[k - 1] as usize };
        &self.bytes[start..self.ends[k] as usize]
    }

    /// The pieces of a normalised text, best split first to last; `[unk]` for an empty text.
    pub fn segment(&self, normalized: &str) -> Vec<u32> {
        let bounds: Vec<usize> = normalized
            .char_indices()
            .map(|(i, _)| i)
            .chain(std::iter::once(normalized.len()))
            .collect();
        let chars = bounds.len() - 1;
        if chars == 0 {
            return vec![self.unk_id];
        }
        let text = normalized.as_bytes();
        // best[p]: the best score of a split of the first p characters; (start_of, piece_of)[p]:
        // the last piece of that split.
        let mut best = vec![-1e38f64; chars + 1];
        best[0] = 0.0;
        let mut start_of = vec![0usize; chars + 1];
        let mut piece_of = vec![0u32; chars + 1];
        for i in 0..chars {
            let base = best[i];
            let (mut lo, mut hi) = (0usize, self.ends.len());
            let mut depth = 0usize;
            let mut has_single = false;
            for j in i + 1..=chars {
                let next = &text[bounds[j - 1]..bounds[j]];
                (lo, hi) = self.narrow(lo, hi, depth, next);
                if lo >= hi {
                    break;
                }
                depth += next.len();
                if self.piece(lo).len() == depth {
                    let id = self.ids[lo];
                    let score = base + f64::from(self.scores[id as usize]);
                    if score > best[j] {
                        best[j] = score;
                        start_of[j] = i;
                        piece_of[j] = id;
                    }
                    has_single |= j == i + 1;
                }
            }
            if !has_single {
                let score = base + self.unk_score;
                if score > best[i + 1] {
                    best[i + 1] = score;
                    start_of[i + 1] = i;
                    piece_of[i + 1] = self.unk_id;
                }
            }
        }
        let mut ids = Vec::new();
        let mut p = chars;
        while p > 0 {
            ids.push(piece_of[p]);
            p = start_of[p];
        }
        ids.reverse();
        ids
    }

    /// Of the sorted pieces `lo..hi`, which all share their first `depth` bytes, the range whose
    /// next bytes are `next`.
    fn narrow(&self, lo: usize, hi: usize, depth: usize, next: &[u8]) -> (usize, usize) {
        let head = |k: usize| {
            let p = self.piece(k);
            &p[depth.min(p.len())..(depth + next.len()).min(p.len())]
        };
        let span = hi - lo;
        let first = lo + partition_point(span, |k| head(lo + k) < next);
        let last = first + partition_point(hi - first, |k| head(first + k) <= next);
        (first, last)
    }
}

/// The number of leading indices in `0..n` for which `pred` holds (it holds on a prefix).
fn partition_point(n: usize, pred: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}
