//! The encoder's one matrix product, `c += a · b`, chosen by the shape of `a`.
//!
//! The products over a text's pieces go to `matrixmultiply`, whose packed kernels are near the
//! CPU's peak even for a query's dozen rows. The head of the network multiplies one row (the
//! pooled features) by matrices of up to 1280 × 512: there the cost is reading the weights once,
//! and `matrixmultiply`'s packing (a copy of the weights first) doubled it, so a single row
//! goes through a kernel that reads the weights in place, in order, compiled a second time with
//! AVX2 and FMA for CPUs that have them (the release build targets baseline x86-64). Measured
//! (`benches/encoder_bench.rs`): a query's P50 3.2 → 2.3 ms; the in-place kernel for the
//! dozen-row products too was slower than `matrixmultiply` (4.0 ms).

/// Rows of `a` up to which the in-place kernel is used (see the module doc).
const FEW_ROWS: usize = 1;

/// `c (m × n, row-major) += a (m × k, row stride lda) · b (k × n, row-major)`.
pub(super) fn matmul(
    m: usize,
    k: usize,
    n: usize,
    a: &[f32],
    lda: usize,
    b: &[f32],
    c: &mut [f32],
) {
    if m == 0 || n == 0 {
        return;
    }
    assert!(
        lda >= k && a.len() >= (m - 1) * lda + k,
        "matmul: a too short"
    );
    assert!(
        b.len() >= k * n && c.len() >= m * n,
        "matmul: b or c too short"
    );
    if m <= FEW_ROWS {
        return with_fma(|| in_place(m, k, n, a, lda, b, c));
    }
    // SAFETY: the asserts above keep every element sgemm reads or writes inside the slices.
    unsafe {
        matrixmultiply::sgemm(
            m,
            k,
            n,
            1.0,
            a.as_ptr(),
            lda as isize,
            1,
            b.as_ptr(),
            n as isize,
            1,
            1.0,
            c.as_mut_ptr(),
            n as isize,
            1,
        );
    }
}

/// Run `f` compiled with AVX2 and FMA when the CPU has them.
#[inline(always)]
fn with_fma<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx2,fma")]
        fn fast<R>(f: impl FnOnce() -> R) -> R {
            f()
        }
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU was just checked to have the features `fast` is compiled for.
            return unsafe { fast(f) };
        }
    }
    f()
}

/// The product for few rows, reading `b` once, in order: four of its rows at a time are
/// multiplied into every row of `c` (which stays in cache), so each row of `c` is loaded and
/// stored once per four rows of `b`.
#[inline(always)]
fn in_place(m: usize, k: usize, n: usize, a: &[f32], lda: usize, b: &[f32], c: &mut [f32]) {
    let mut p = 0;
    while p + 4 <= k {
        let (b0, rest) = b[p * n..(p + 4) * n].split_at(n);
        let (b1, rest) = rest.split_at(n);
        let (b2, b3) = rest.split_at(n);
        for i in 0..m {
            let ar = &a[i * lda + p..i * lda + p + 4];
            let (a0, a1, a2, a3) = (ar[0], ar[1], ar[2], ar[3]);
            let row = &mut c[i * n..(i + 1) * n];
            for ((((o, x0), x1), x2), x3) in row.iter_mut().zip(b0).zip(b1).zip(b2).zip(b3) {
                *o += a0 * x0 + a1 * x1 + a2 * x2 + a3 * x3;
            }
        }
        p += 4;
    }
    for p in p..k {
        let bp = &b[p * n..(p + 1) * n];
        for i in 0..m {
            let ap = a[i * lda + p];
            for (o, x) in c[i * n..(i + 1) * n].iter_mut().zip(bp) {
                *o += ap * x;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The in-place kernel and `matrixmultiply` agree with a plain triple loop.
    #[test]
    fn both_kernels_agree_with_the_definition() {
        let mut x = 0x2545_F491u32;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x % 2001) as f32 / 1000.0 - 1.0
        };
        for (m, k, n) in [(1, 7, 16), (5, 33, 48), (16, 64, 32), (40, 20, 24)] {
            let lda = k + 3;
            let a: Vec<f32> = (0..m * lda).map(|_| next()).collect();
            let b: Vec<f32> = (0..k * n).map(|_| next()).collect();
            let mut c: Vec<f32> = (0..m * n).map(|_| next()).collect();
            let mut want = c.clone();
            for i in 0..m {
                for j in 0..n {
                    want[i * n + j] += (0..k).map(|p| a[i * lda + p] * b[p * n + j]).sum::<f32>();
                }
            }
            matmul(m, k, n, &a, lda, &b, &mut c);
            for (got, want) in c.iter().zip(&want) {
                assert!((got - want).abs() < 1e-4, "{m}x{k}x{n}: {got} vs {want}");
            }
        }
    }
}
