//! The encoder's asset container (`assets/encoder/*.kenc`, written by `scripts/build_encoder.py`):
//! a header naming typed sections, each read in place from a memory map, so opening the 65 MB of
//! weights costs a look at one page of header and a one-shot call pages in only what it touches.
//!
//! Layout (little endian): `b"KENC"`, u32 version, u32 section count, u32 0, then one 64-byte
//! entry per section (name NUL-padded to 32 bytes, u32 dtype, u32 rows, u32 cols, u32 0,
//! u64 offset, u64 byte length); every section starts at a multiple of 64.

use std::fs::File;
use std::ops::Range;
use std::path::{Path, PathBuf};

use memmap2::Mmap;

use super::EncoderError;

const MAGIC: &[u8; 4] = b"KENC";
/// The container version this reader understands; the script writes the same number.
pub const VERSION: u32 = 1;
const ENTRY: usize = 64;
const HEADER: usize = 16;

/// A section's element type, as the script numbers them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Dtype {
    F32 = 1,
    U32 = 2,
    U8 = 3,
    /// Six-bit codes packed four to three bytes (a row of 512 codes is 384 bytes).
    Q6 = 4,
    F64 = 5,
}

impl Dtype {
    /// Bytes of one row of `cols` elements.
    fn row_bytes(self, cols: usize) -> Option<usize> {
        match self {
            Dtype::F32 | Dtype::U32 => cols.checked_mul(4),
            Dtype::U8 => Some(cols),
            Dtype::Q6 => cols.is_multiple_of(4).then_some(cols / 4 * 3),
            Dtype::F64 => cols.checked_mul(8),
        }
    }
}

struct Section {
    name: String,
    dtype: u32,
    rows: usize,
    cols: usize,
    bytes: Range<usize>,
}

/// One mapped container file and its section directory.
pub(super) struct AssetFile {
    path: PathBuf,
    map: Mmap,
    sections: Vec<Section>,
}

impl AssetFile {
    /// Maps `path` and reads its directory (the data is not touched).
    pub fn open(path: &Path) -> Result<AssetFile, EncoderError> {
        let file = File::open(path).map_err(|source| EncoderError::Open {
            path: path.to_path_buf(),
            source,
        })?;
        // SAFETY: the map is read-only and the assets are not written while the program runs;
        // a file truncated underneath would fault, as any mapped asset would.
        let map = unsafe { Mmap::map(&file) }.map_err(|source| EncoderError::Open {
            path: path.to_path_buf(),
            source,
        })?;
        let bad = |reason: String| EncoderError::Format {
            path: path.to_path_buf(),
            reason,
        };
        if cfg!(target_endian = "big") {
            return Err(bad(
                "the assets are little-endian; this machine is not".into()
            ));
        }
        if map.len() < HEADER || &map[..4] != MAGIC {
            return Err(bad("not an encoder asset (no KENC header)".into()));
        }
        let version = u32_at(&map, 4);
        if version != VERSION {
            return Err(bad(format!(
                "container version {version}, this build reads {VERSION}: rebuild with \
                 scripts/build_encoder.py"
            )));
        }
        let count = u32_at(&map, 8) as usize;
        if HEADER + count * ENTRY > map.len() {
            return Err(bad(format!("{count} sections do not fit in the file")));
        }
        let mut sections = Vec::with_capacity(count);
        for i in 0..count {
            let e = &map[HEADER + i * ENTRY..HEADER + (i + 1) * ENTRY];
            let name_len = e[..32].iter().position(|&b| b == 0).unwrap_or(32);
            let name = String::from_utf8_lossy(&e[..name_len]).into_owned();
            let offset = u64_at(e, 48);
            let len = u64_at(e, 56);
            let end = offset
                .checked_add(len)
                .filter(|&end| end <= map.len() as u64);
            let Some(end) = end else {
                return Err(bad(format!("section {name} runs past the end of the file")));
            };
            if !offset.is_multiple_of(8) {
                return Err(bad(format!("section {name} is not aligned")));
            }
            sections.push(Section {
                name,
                dtype: u32_at(e, 32),
                rows: u32_at(e, 36) as usize,
                cols: u32_at(e, 40) as usize,
                bytes: offset as usize..end as usize,
            });
        }
        Ok(AssetFile {
            path: path.to_path_buf(),
            map,
            sections,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The byte range of section `name`, checked to hold `dtype` with the given shape (`None`:
    /// any); returns the section's (rows, cols) too.
    pub fn section(
        &self,
        name: &str,
        dtype: Dtype,
        rows: Option<usize>,
        cols: Option<usize>,
    ) -> Result<(Range<usize>, usize, usize), EncoderError> {
        let bad = |reason: String| EncoderError::Format {
            path: self.path.clone(),
            reason,
        };
        let s = self
            .sections
            .iter()
            .find(|s| s.name == name)
            .ok_or_else(|| bad(format!("no section {name}")))?;
        if s.dtype != dtype as u32 {
            return Err(bad(format!(
                "section {name} has type {}, not {dtype:?}",
                s.dtype
            )));
        }
        let shape_ok = rows.is_none_or(|r| r == s.rows) && cols.is_none_or(|c| c == s.cols);
        let want = dtype.row_bytes(s.cols).and_then(|b| b.checked_mul(s.rows));
        if !shape_ok || want != Some(s.bytes.len()) {
            return Err(bad(format!(
                "section {name} is {}x{} in {} bytes; expected {}x{}",
                s.rows,
                s.cols,
                s.bytes.len(),
                rows.map_or("?".into(), |r| r.to_string()),
                cols.map_or("?".into(), |c| c.to_string()),
            )));
        }
        Ok((s.bytes.clone(), s.rows, s.cols))
    }

    pub fn bytes(&self, r: &Range<usize>) -> &[u8] {
        &self.map[r.clone()]
    }

    /// A section of f32 read in place (its range came from [`AssetFile::section`], so it is
    /// aligned: the map starts on a page and sections on multiples of 8).
    pub fn f32s(&self, r: &Range<usize>) -> &[f32] {
        // SAFETY: every bit pattern is a valid f32; align_to only returns a middle part that
        // is aligned, and the asserts below make a misaligned section a panic, not a short read.
        let (pre, mid, post) = unsafe { self.bytes(r).align_to::<f32>() };
        assert!(pre.is_empty() && post.is_empty(), "misaligned f32 section");
        mid
    }

    pub fn u32s(&self, r: &Range<usize>) -> &[u32] {
        // SAFETY: as for `f32s`: every bit pattern is a valid u32.
        let (pre, mid, post) = unsafe { self.bytes(r).align_to::<u32>() };
        assert!(pre.is_empty() && post.is_empty(), "misaligned u32 section");
        mid
    }

    pub fn f64s(&self, r: &Range<usize>) -> &[f64] {
        // SAFETY: as for `f32s`: every bit pattern is a valid f64.
        let (pre, mid, post) = unsafe { self.bytes(r).align_to::<f64>() };
        assert!(pre.is_empty() && post.is_empty(), "misaligned f64 section");
        mid
    }
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}
