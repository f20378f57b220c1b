//! USE-multilingual v3's network, in the layer order of the wheel's numpy backend: each piece's
//! row of the 6-bit table (dequantised by its chunk's scale and offset); one projection of it,
//! layer-normalised over all three CNN branches at once; per branch (n-grams of 2, 3 and 5
//! pieces, with 0, 1 and 2 pieces of left context) two convolutions with ReLU and a residual,
//! zero outside the text; the piece's features [row | branch 2 | branch 3 | branch 5]
//! layer-normalised; their sum through a linear map, divided by √n; then a small MLP with
//! skip connections, tanh, and unit length.
//!
//! A text is processed in blocks of [`BLOCK`] pieces with [`HALO`] pieces of context each side
//! (two convolutions reaching two pieces each), so memory stays small on a long message and a
//! block's work stays in cache; the features of a block are summed as they are made.

use std::ops::Range;

use super::matmul::matmul;

/// Width of a piece's row in the table and of the output vector.
pub const DIMS: usize = 512;
/// Width of one CNN branch.
pub(super) const CNN: usize = 256;
/// Width of a piece's features: the row and the three branches.
pub(super) const FEAT: usize = DIMS + 3 * CNN;
/// Width of the MLP's hidden layer.
pub(super) const HIDDEN: usize = 320;
/// The branches' n-gram orders and their left context, in the order their features are laid out.
pub(super) const ORDERS: [(usize, usize); 3] = [(2, 0), (3, 1), (5, 2)];
/// Pieces per block of the forward pass.
const BLOCK: usize = 128;
/// Context pieces each side of a block: two convolutions each reaching two pieces.
const HALO: usize = 4;
/// Bytes of one packed table row (512 six-bit codes).
pub(super) const ROW_BYTES: usize = DIMS / 4 * 3;

/// One CNN branch's weights (row-major, applied as `x · W`).
pub(super) struct Branch<'a> {
    pub order: usize,
    pub left: usize,
    pub w1: &'a [f32],
    pub b1: &'a [f32],
    pub w2: &'a [f32],
    pub b2: &'a [f32],
}

/// The network's weights, read in place from the mapped assets.
pub(super) struct Weights<'a> {
    /// Packed six-bit rows, one per piece id.
    pub table: &'a [u8],
    pub chunk_scale: &'a [f32],
    pub chunk_lo: &'a [f32],
    /// The three branches' input projections side by side (DIMS × 3·CNN).
    pub proj: &'a [f32],
    pub proj_b: &'a [f32],
    pub ln_g_all: &'a [f32],
    pub ln_b_all: &'a [f32],
    pub branches: [Branch<'a>; 3],
    pub ln_g: &'a [f32],
    pub ln_b: &'a [f32],
    pub cnn_w: &'a [f32],
    pub cnn_b: &'a [f32],
    pub d0: &'a [f32],
    pub p1: &'a [f32],
    pub d1: &'a [f32],
    pub d2: &'a [f32],
    pub p3: &'a [f32],
    pub d3: &'a [f32],
    pub eps: f32,
}

impl Weights<'_> {
    /// The unit vector of a text given as its piece ids (with `<s>` and `</s>`; not empty).
    pub fn forward(&self, ids: &[u32]) -> [f32; DIMS] {
        self.forward_in_blocks(ids, BLOCK)
    }

    /// [`Weights::forward`] in blocks of `block` pieces (the result does not depend on it).
    pub(super) fn forward_in_blocks(&self, ids: &[u32], block: usize) -> [f32; DIMS] {
        let n = ids.len();
        let block = block.max(1);
        let mut sum = vec![0f32; FEAT];
        let mut s = Scratch::default();
        for b0 in (0..n).step_by(block) {
            self.block(ids, b0..(b0 + block).min(n), &mut s, &mut sum);
        }
        self.head(&sum, n)
    }

    /// Adds the layer-normalised features of pieces `block` to `sum`.
    fn block(&self, ids: &[u32], block: Range<usize>, s: &mut Scratch, sum: &mut [f32]) {
        let ext = block.start.saturating_sub(HALO)..(block.end + HALO).min(ids.len());
        let m = ext.len();
        let (off, rows) = (block.start - ext.start, block.len());

        refill(&mut s.emb, m * DIMS);
        for (r, &id) in ids[ext].iter().enumerate() {
            self.dequantize(id, &mut s.emb[r * DIMS..(r + 1) * DIMS]);
        }
        let proj = 3 * CNN;
        fill_rows(&mut s.x, m, self.proj_b);
        matmul(m, DIMS, proj, &s.emb, DIMS, self.proj, &mut s.x);
        for row in s.x.chunks_exact_mut(proj) {
            layer_norm(row, self.ln_g_all, self.ln_b_all, self.eps);
        }

        refill(&mut s.feats, rows * FEAT);
        for r in 0..rows {
            s.feats[r * FEAT..r * FEAT + DIMS]
                .copy_from_slice(&s.emb[(off + r) * DIMS..(off + r + 1) * DIMS]);
        }
        for (bi, br) in self.branches.iter().enumerate() {
            refill(&mut s.xs, m * CNN);
            for r in 0..m {
                let from = r * proj + bi * CNN;
                s.xs[r * CNN..(r + 1) * CNN].copy_from_slice(&s.x[from..from + CNN]);
            }
            let k = br.order * CNN;
            window(&s.xs, m, br, 0..m, &mut s.cols);
            fill_rows(&mut s.h, m, br.b1);
            matmul(m, k, CNN, &s.cols, k, br.w1, &mut s.h);
            for (h, x) in s.h.iter_mut().zip(&s.xs) {
                *h = h.max(0.0) + x;
            }
            window(&s.h, m, br, off..off + rows, &mut s.cols);
            fill_rows(&mut s.c2, rows, br.b2);
            matmul(rows, k, CNN, &s.cols, k, br.w2, &mut s.c2);
            for r in 0..rows {
                let out = &mut s.feats[r * FEAT + DIMS + bi * CNN..][..CNN];
                let c2 = &s.c2[r * CNN..(r + 1) * CNN];
                let h = &s.h[(off + r) * CNN..(off + r + 1) * CNN];
                for ((o, c), h) in out.iter_mut().zip(c2).zip(h) {
                    *o = c.max(0.0) + h;
                }
            }
        }
        for row in s.feats.chunks_exact_mut(FEAT) {
            layer_norm(row, self.ln_g, self.ln_b, self.eps);
            for (acc, v) in sum.iter_mut().zip(row.iter()) {
                *acc += v;
            }
        }
    }

    /// The sentence vector from the summed features of `n` pieces.
    fn head(&self, sum: &[f32], n: usize) -> [f32; DIMS] {
        let len = n as f32;
        let mut mean: Vec<f32> = self.cnn_b.iter().map(|b| b * len).collect();
        matmul(1, FEAT, DIMS, sum, FEAT, self.cnn_w, &mut mean);
        let inv = 1.0 / len.sqrt();
        mean.iter_mut().for_each(|v| *v *= inv);

        let mut y0 = vec![0f32; HIDDEN];
        matmul(1, DIMS, HIDDEN, &mean, DIMS, self.d0, &mut y0);
        relu(&mut y0);
        let mut y1 = vec![0f32; HIDDEN];
        matmul(1, DIMS, HIDDEN, &mean, DIMS, self.p1, &mut y1);
        matmul(1, HIDDEN, HIDDEN, &y0, HIDDEN, self.d1, &mut y1);
        relu(&mut y1);
        let mut y2 = vec![0f32; DIMS];
        matmul(1, HIDDEN, DIMS, &y1, HIDDEN, self.d2, &mut y2);
        relu(&mut y2);
        let mut z = [0f32; DIMS];
        matmul(1, HIDDEN, DIMS, &y1, HIDDEN, self.p3, &mut z);
        matmul(1, DIMS, DIMS, &y2, DIMS, self.d3, &mut z);
        z.iter_mut().for_each(|v| *v = v.tanh());
        let norm2: f32 = z.iter().map(|v| v * v).sum();
        let inv = 1.0 / norm2.max(self.eps).sqrt();
        z.iter_mut().for_each(|v| *v *= inv);
        z
    }

    /// Piece `id`'s table row: code · scale + offset of the row's chunk (row id mod chunks).
    fn dequantize(&self, id: u32, out: &mut [f32]) {
        let id = id as usize;
        let chunk = id % self.chunk_scale.len();
        let (scale, lo) = (self.chunk_scale[chunk], self.chunk_lo[chunk]);
        let packed = &self.table[id * ROW_BYTES..(id + 1) * ROW_BYTES];
        for (group, out) in packed.chunks_exact(3).zip(out.chunks_exact_mut(4)) {
            let bits = u32::from(group[0]) | u32::from(group[1]) << 8 | u32::from(group[2]) << 16;
            for (i, o) in out.iter_mut().enumerate() {
                *o = ((bits >> (6 * i)) & 63) as f32 * scale + lo;
            }
        }
    }
}

/// Buffers reused across the blocks of one text.
#[derive(Default)]
struct Scratch {
    emb: Vec<f32>,
    x: Vec<f32>,
    xs: Vec<f32>,
    cols: Vec<f32>,
    h: Vec<f32>,
    c2: Vec<f32>,
    feats: Vec<f32>,
}

fn refill(v: &mut Vec<f32>, len: usize) {
    v.clear();
    v.resize(len, 0.0);
}

/// `rows` copies of `row`, one after another.
fn fill_rows(v: &mut Vec<f32>, rows: usize, row: &[f32]) {
    v.clear();
    for _ in 0..rows {
        v.extend_from_slice(row);
    }
}

/// For each of `rows`, the branch's window of `src` rows (m × CNN) side by side: rows
/// `t - left .. t - left + order`, zero where that falls outside `0..m`.
fn window(src: &[f32], m: usize, br: &Branch, rows: Range<usize>, out: &mut Vec<f32>) {
    let width = br.order * CNN;
    refill(out, rows.len() * width);
    for (r, t) in rows.enumerate() {
        for k in 0..br.order {
            let Some(s) = (t + k).checked_sub(br.left).filter(|&s| s < m) else {
                continue;
            };
            out[r * width + k * CNN..][..CNN].copy_from_slice(&src[s * CNN..(s + 1) * CNN]);
        }
    }
}

fn relu(v: &mut [f32]) {
    v.iter_mut().for_each(|x| *x = x.max(0.0));
}

/// Layer norm of one row in place: zero mean, unit variance (plus `eps`), then `· g + b`.
fn layer_norm(row: &mut [f32], g: &[f32], b: &[f32], eps: f32) {
    let n = row.len() as f64;
    let mean = (row.iter().map(|&v| f64::from(v)).sum::<f64>() / n) as f32;
    row.iter_mut().for_each(|v| *v -= mean);
    let var = (row
        .iter()
        .map(|&v| f64::from(v) * f64::from(v))
        .sum::<f64>()
        / n) as f32;
    let inv = 1.0 / (var + eps).sqrt();
    for ((v, g), b) in row.iter_mut().zip(g).zip(b) {
        *v = *v * inv * g + b;
    }
}
