//! The teacher's sentence head, for session gists and the query's gist vector only.
//!
//! Why: USE-multilingual v3 (the table's teacher) makes a sentence vector as `head(sum of token
//! features / sqrt(n))`, a head of three small dense layers. The static table keeps only the
//! sum, so a text's vector is a plain sum of word rows, in which frequent words weigh as much as
//! the topic. The head is what weighs them; it costs about a million multiply-adds a text, too
//! much for every event window of a large index, but cheap for a few texts a session and once a
//! query. So only the gist arm uses it; event vectors, the code lane and their thresholds stay
//! as they are. `scripts/fit_gist_head.py` writes `assets/embeddings/gist_head.bin`: a map `R`
//! from the table's sum (plus the row count and 1) back to the teacher's 512-dim feature sum —
//! the table dropped its PCA basis and centring —, and the head's six matrices (int8, one scale
//! per column), copied from the encoder's wheel (Apache-2.0, `assets/embeddings/NOTICE`).

use std::sync::OnceLock;

use super::{normalise, Embedder, Vector};

static HEAD_BYTES: &[u8] = include_bytes!("../../../assets/embeddings/gist_head.bin");

/// The head's output width (the teacher's sentence vector).
pub const HEAD_DIMS: usize = 512;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum HeadError {
    #[error("the gist head is truncated or has a bad header")]
    Header,
    #[error("the gist head has version {0}; this build reads version 1")]
    Version(u32),
    #[error("the gist head's matrix {0} has shape {1}x{2}, expected {3}x{4}")]
    Shape(&'static str, usize, usize, usize, usize),
    #[error("the gist head is for a {0}-dim table, the table has {1} dims")]
    TableDims(usize, usize),
}

/// A dense matrix, row-major (`rows` inputs × `cols` outputs).
struct Dense {
    cols: usize,
    w: Vec<f32>,
}

impl Dense {
    /// `out += x · W`, skipping the zero inputs (after a ReLU, most of them).
    fn add_product(&self, x: &[f32], out: &mut [f32]) {
        for (xi, row) in x.iter().zip(self.w.chunks_exact(self.cols)) {
            if *xi != 0.0 {
                out.iter_mut().zip(row).for_each(|(o, w)| *o += xi * w);
            }
        }
    }
}

/// The map back to the teacher's feature sum and the head, unpacked to f32 once a process.
pub struct Head {
    table_dims: usize,
    r: Dense,
    d0: Dense,
    p1: Dense,
    d1: Dense,
    p3: Dense,
    d2: Dense,
    d3: Dense,
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], HeadError> {
        let end = self.at.checked_add(n).ok_or(HeadError::Header)?;
        let s = self.b.get(self.at..end).ok_or(HeadError::Header)?;
        self.at = end;
        Ok(s)
    }
    fn u32(&mut self) -> Result<usize, HeadError> {
        let s = self.take(4)?;
        Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]) as usize)
    }
    fn f32s(&mut self, n: usize) -> Result<Vec<f32>, HeadError> {
        let s = self.take(n.checked_mul(4).ok_or(HeadError::Header)?)?;
        Ok(s.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }
    /// One int8 matrix with a scale per column, checked against its expected shape.
    fn dense(&mut self, name: &'static str, rows: usize, cols: usize) -> Result<Dense, HeadError> {
        let (r, c) = (self.u32()?, self.u32()?);
        if (r, c) != (rows, cols) {
            return Err(HeadError::Shape(name, r, c, rows, cols));
        }
        let scale = self.f32s(cols)?;
        let q = self.take(rows * cols)?;
        let w = q
            .chunks_exact(cols)
            .flat_map(|row| row.iter().zip(&scale).map(|(v, s)| f32::from(*v as i8) * s))
            .collect();
        Ok(Dense { cols, w })
    }
}

impl Head {
    /// Parse a head file (format in `scripts/fit_gist_head.py`).
    pub fn parse(bytes: &[u8]) -> Result<Head, HeadError> {
        let mut rd = Reader { b: bytes, at: 0 };
        if rd.take(4)? != b"KGHD" {
            return Err(HeadError::Header);
        }
        let version = rd.u32()?;
        if version != 1 {
            return Err(HeadError::Version(version as u32));
        }
        let table_dims = rd.u32()?;
        if table_dims == 0 || table_dims > 4096 {
            return Err(HeadError::Header);
        }
        let r = Dense {
            cols: HEAD_DIMS,
            w: rd.f32s((table_dims + 2) * HEAD_DIMS)?,
        };
        let head = Head {
            table_dims,
            r,
            d0: rd.dense("d0", 512, 320)?,
            p1: rd.dense("p1", 512, 320)?,
            d1: rd.dense("d1", 320, 320)?,
            p3: rd.dense("p3", 320, 512)?,
            d2: rd.dense("d2", 320, 512)?,
            d3: rd.dense("d3", 512, 512)?,
        };
        if rd.at != bytes.len() {
            return Err(HeadError::Header);
        }
        Ok(head)
    }

    /// The teacher-space unit vector of a text whose table rows sum to `sum` (`rows` rows
    /// looked up); `None` for a sum of the wrong width or a degenerate result.
    pub fn apply(&self, sum: &[f32], rows: usize) -> Option<Vector> {
        if sum.len() != self.table_dims || rows == 0 {
            return None;
        }
        let n = rows as f32;
        let mut x = Vec::with_capacity(self.table_dims + 2);
        x.extend_from_slice(sum);
        x.extend([n, 1.0]);
        let mut pooled = vec![0f32; HEAD_DIMS];
        self.r.add_product(&x, &mut pooled);
        // The encoder divides its feature sum by sqrt(tokens), BOS and EOS included; the row
        // count stands in for the token count.
        let root = (n + 2.0).sqrt();
        pooled.iter_mut().for_each(|p| *p /= root);
        let mut y0 = vec![0f32; 320];
        self.d0.add_product(&pooled, &mut y0);
        relu(&mut y0);
        let mut y1 = vec![0f32; 320];
        self.p1.add_product(&pooled, &mut y1);
        self.d1.add_product(&y0, &mut y1);
        relu(&mut y1);
        let mut y2 = vec![0f32; 512];
        self.d2.add_product(&y1, &mut y2);
        relu(&mut y2);
        let mut z = vec![0f32; HEAD_DIMS];
        self.p3.add_product(&y1, &mut z);
        self.d3.add_product(&y2, &mut z);
        z.iter_mut().for_each(|v| *v = v.tanh());
        normalise(z)
    }
}

fn relu(v: &mut [f32]) {
    v.iter_mut().for_each(|x| *x = x.max(0.0));
}

/// The compiled-in head, unpacked on first use; `None` (with the reason) when it is unusable
/// or does not fit the table, so gists fall back to the table's own vectors.
pub fn shared(emb: &Embedder) -> Result<&'static Head, &'static HeadError> {
    static CELL: OnceLock<Result<Head, HeadError>> = OnceLock::new();
    CELL.get_or_init(|| {
        let head = Head::parse(HEAD_BYTES)?;
        if head.table_dims != emb.dims() {
            return Err(HeadError::TableDims(head.table_dims, emb.dims()));
        }
        Ok(head)
    })
    .as_ref()
}

impl Embedder {
    /// The gist-space vector of a text's first window (a gist's part): the head over the
    /// window's row sum, else the table's own unit vector when the head is unusable.
    pub fn gist_text_vector(&self, text: &str) -> Option<Vector> {
        let (sum, rows) = self.window_sum(text, 0)?;
        match shared(self) {
            Ok(head) => head.apply(&sum, rows),
            Err(_) => normalise(sum),
        }
    }

    /// The gist-space vector of a query (the words [`Embedder::embed_query`] uses).
    pub fn gist_query_vector(&self, text: &str) -> Option<Vector> {
        let (sum, rows) = self.query_sum(text)?;
        match shared(self) {
            Ok(head) => head.apply(&sum, rows),
            Err(_) => normalise(sum),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn embedder() -> &'static Embedder {
        super::super::shared().expect("the compiled-in table parses")
    }

    #[test]
    fn the_compiled_in_head_reproduces_the_fitting_scripts_vectors() {
        let raw = include_str!("../../../assets/embeddings/gist_head_parity.json");
        let parity: serde_json::Value = serde_json::from_str(raw).unwrap();
        let cases = parity["cases"].as_array().unwrap();
        assert!(cases.len() >= 8);
        assert!(shared(embedder()).is_ok(), "the head fits the table");
        for case in cases {
            let text = case["text"].as_str().unwrap();
            let want: Vec<f32> = case["vector"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap() as f32)
                .collect();
            assert_eq!(want.len(), HEAD_DIMS);
            match embedder().gist_text_vector(text) {
                None => assert!(want.iter().all(|x| *x == 0.0), "{text:?}: no vector here"),
                Some(got) => {
                    let cos = super::super::dot(&got, &want);
                    assert!(cos >= 0.999, "{text:?}: cosine {cos} with the reference");
                }
            }
        }
    }

    #[test]
    fn a_russian_question_is_nearest_to_its_english_answer_in_gist_space() {
        let e = embedder();
        let q = e.gist_query_vector("кто исправил ошибку в тестах").unwrap();
        let answer = e
            .gist_text_vector("Fixed the failing unit tests in the parser")
            .unwrap();
        assert_eq!(q.len(), HEAD_DIMS);
        for other in [
            "added a dark theme to the settings page",
            "updated the README install steps",
            "bumped the dependency versions",
        ] {
            let o = e.gist_text_vector(other).unwrap();
            let (near, far) = (super::super::dot(&q, &answer), super::super::dot(&q, &o));
            assert!(near > far, "{other:?} ({far}) beat the answer ({near})");
        }
    }

    #[test]
    fn a_damaged_head_is_an_error_not_a_panic() {
        assert_eq!(Head::parse(b"").err(), Some(HeadError::Header));
        assert_eq!(
            Head::parse(b"XXXX\x01\0\0\0").err(),
            Some(HeadError::Header)
        );
        let mut v = HEAD_BYTES.to_vec();
        v[4] = 9;
        assert_eq!(Head::parse(&v).err(), Some(HeadError::Version(9)));
        let cut = &HEAD_BYTES[..HEAD_BYTES.len() - 1];
        assert_eq!(Head::parse(cut).err(), Some(HeadError::Header));
    }
}
