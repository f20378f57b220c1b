//! The message vectors' file beside the store (`episodes.vectors`): a flat, append-only run of
//! fixed-size records that a one-shot process maps and scans in place, with no parse and no
//! SQLite row per vector.
//!
//! Layout: a 64-byte header (magic, version, dimensions, the id of the store it was built from),
//! then records of [`RECORD`] bytes. A vector record holds the event id, its session key and seq,
//! the window of the message it covers, the int8 vector's scale and the message's two hub terms
//! (English and Russian), then [`DIMS`] int8 values. A tombstone record `(key, from_seq)` says
//! that every earlier record of session `key` at `seq >= from_seq` is dead: the embed pass writes
//! one before it (re-)embeds a session from `from_seq`, so a session re-embedded after a rewrite
//! or a killed run never answers twice. Records are only appended; a file made anew (another
//! store, another version, compaction) is written beside and renamed into place, so a reader's
//! map never changes under it.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use memmap2::Mmap;

use crate::text::encoder::DIMS;

/// The file's magic and layout version.
const MAGIC: &[u8; 8] = b"KNMSGV01";
const VERSION: u32 = 1;
/// Bytes before the first record.
pub(super) const HEADER: usize = 64;
/// Bytes of a record's fields before its vector.
const FIELDS: usize = 40;
/// Bytes of one record.
pub(super) const RECORD: usize = FIELDS + DIMS;

const KIND_VECTOR: u8 = 1;
const KIND_TOMBSTONE: u8 = 2;

/// The file beside the store at `db`.
pub fn path_for(db: &Path) -> PathBuf {
    db.with_extension("vectors")
}

/// One message window's vector, as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct VectorRecord {
    pub event: i64,
    pub key: i64,
    pub seq: u32,
    pub window: u8,
    pub scale: f32,
    pub hub_en: f32,
    pub hub_ru: f32,
    pub values: [i8; DIMS],
}

/// A unit vector as int8 values and the scale that gives them back (`value × scale`).
pub fn quantize(v: &[f32; DIMS]) -> ([i8; DIMS], f32) {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    if max == 0.0 || !max.is_finite() {
        return ([0; DIMS], 0.0);
    }
    let scale = max / 127.0;
    let mut out = [0i8; DIMS];
    for (o, x) in out.iter_mut().zip(v) {
        *o = (x / scale).round().clamp(-127.0, 127.0) as i8;
    }
    (out, scale)
}

fn header(store_id: &str) -> [u8; HEADER] {
    let mut h = [0u8; HEADER];
    h[..8].copy_from_slice(MAGIC);
    h[8..12].copy_from_slice(&VERSION.to_le_bytes());
    h[12..16].copy_from_slice(&(DIMS as u32).to_le_bytes());
    let id = store_id.as_bytes();
    let n = id.len().min(HEADER - 17);
    h[16] = n as u8;
    h[17..17 + n].copy_from_slice(&id[..n]);
    h
}

/// Whether `bytes` begin with the header of this layout for `store_id`.
fn header_matches(bytes: &[u8], store_id: &str) -> bool {
    bytes.len() >= HEADER && bytes[..HEADER] == header(store_id)
}

fn encode_vector(r: &VectorRecord) -> [u8; RECORD] {
    let mut b = [0u8; RECORD];
    b[0..8].copy_from_slice(&r.key.to_le_bytes());
    b[8..16].copy_from_slice(&r.event.to_le_bytes());
    b[16..20].copy_from_slice(&r.seq.to_le_bytes());
    b[20..24].copy_from_slice(&r.scale.to_le_bytes());
    b[24..28].copy_from_slice(&r.hub_en.to_le_bytes());
    b[28..32].copy_from_slice(&r.hub_ru.to_le_bytes());
    b[32] = KIND_VECTOR;
    b[33] = r.window;
    for (o, v) in b[FIELDS..].iter_mut().zip(r.values) {
        *o = v as u8;
    }
    b
}

fn encode_tombstone(key: i64, from_seq: u32) -> [u8; RECORD] {
    let mut b = [0u8; RECORD];
    b[0..8].copy_from_slice(&key.to_le_bytes());
    b[16..20].copy_from_slice(&from_seq.to_le_bytes());
    b[32] = KIND_TOMBSTONE;
    b
}

/// A record's bytes, read in place.
#[derive(Clone, Copy)]
pub(super) struct Raw<'a>(pub &'a [u8]);

impl<'a> Raw<'a> {
    fn i64_at(&self, at: usize) -> i64 {
        i64::from_le_bytes(self.0[at..at + 8].try_into().unwrap_or([0; 8]))
    }
    fn u32_at(&self, at: usize) -> u32 {
        u32::from_le_bytes(self.0[at..at + 4].try_into().unwrap_or([0; 4]))
    }
    fn f32_at(&self, at: usize) -> f32 {
        f32::from_bits(self.u32_at(at))
    }
    pub fn key(&self) -> i64 {
        self.i64_at(0)
    }
    pub fn event(&self) -> i64 {
        self.i64_at(8)
    }
    pub fn seq(&self) -> u32 {
        self.u32_at(16)
    }
    pub fn scale(&self) -> f32 {
        self.f32_at(20)
    }
    /// The hub term for a query in Russian (`ru`) or another language.
    pub fn hub(&self, ru: bool) -> f32 {
        self.f32_at(if ru { 28 } else { 24 })
    }
    pub fn is_vector(&self) -> bool {
        self.0[32] == KIND_VECTOR
    }
    pub fn is_tombstone(&self) -> bool {
        self.0[32] == KIND_TOMBSTONE
    }
    pub fn window(&self) -> u8 {
        self.0[33]
    }
    /// The int8 values.
    pub fn values(&self) -> &'a [i8] {
        let bytes = &self.0[FIELDS..RECORD];
        // SAFETY: i8 and u8 have the same size and alignment; the slice is `DIMS` bytes.
        unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<i8>(), bytes.len()) }
    }
    pub fn record(&self) -> VectorRecord {
        let mut values = [0i8; DIMS];
        values.copy_from_slice(self.values());
        VectorRecord {
            event: self.event(),
            key: self.key(),
            seq: self.seq(),
            window: self.window(),
            scale: self.scale(),
            hub_en: self.hub(false),
            hub_ru: self.hub(true),
            values,
        }
    }
}

/// The file mapped for reading: only whole records up to its length when it was opened.
pub struct Mapped {
    map: Option<Mmap>,
    /// (length, modification time) when mapped: a reader maps again when either moves.
    pub(super) stamp: (u64, Option<std::time::SystemTime>),
}

impl Mapped {
    /// Maps the file beside `db` if it is this store's (`store_id`); `None` when it is missing or
    /// another store's or layout's.
    pub fn open(db: &Path, store_id: &str) -> io::Result<Option<Mapped>> {
        let path = path_for(db);
        let file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let meta = file.metadata()?;
        if !meta.is_file() || (meta.len() as usize) < HEADER {
            return Ok(None);
        }
        // SAFETY: the file is only ever appended to in place; a file made anew is renamed over
        // it, which leaves this map on the old inode.
        let map = unsafe { Mmap::map(&file)? };
        if !header_matches(&map, store_id) {
            return Ok(None);
        }
        Ok(Some(Mapped {
            map: Some(map),
            stamp: (meta.len(), meta.modified().ok()),
        }))
    }

    /// The file's (length, modification time) now, to tell whether a map is stale.
    pub fn stamp_of(db: &Path) -> (u64, Option<std::time::SystemTime>) {
        match std::fs::metadata(path_for(db)) {
            Ok(m) => (m.len(), m.modified().ok()),
            Err(_) => (0, None),
        }
    }

    fn bytes(&self) -> &[u8] {
        self.map.as_deref().unwrap_or(&[])
    }

    /// The number of whole records.
    pub fn len(&self) -> usize {
        self.bytes().len().saturating_sub(HEADER) / RECORD
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Record `i` (below [`Mapped::len`]).
    pub(super) fn raw(&self, i: usize) -> Raw<'_> {
        let at = HEADER + i * RECORD;
        Raw(&self.bytes()[at..at + RECORD])
    }

    /// The tombstones, by session key: (record index, from seq).
    pub(super) fn tombstones(&self) -> HashMap<i64, Vec<(usize, u32)>> {
        let mut out: HashMap<i64, Vec<(usize, u32)>> = HashMap::new();
        for i in 0..self.len() {
            let r = self.raw(i);
            if r.is_tombstone() {
                out.entry(r.key()).or_default().push((i, r.seq()));
            }
        }
        out
    }

    /// The vector records no later tombstone killed, in file order.
    pub fn live(&self) -> Vec<VectorRecord> {
        let dead = self.tombstones();
        (0..self.len())
            .map(|i| (i, self.raw(i)))
            .filter(|(i, r)| r.is_vector() && !is_dead(&dead, *i, r))
            .map(|(_, r)| r.record())
            .collect()
    }
}

/// Whether record `i` is killed by a tombstone written after it.
pub(super) fn is_dead(tombs: &HashMap<i64, Vec<(usize, u32)>>, i: usize, r: &Raw<'_>) -> bool {
    tombs
        .get(&r.key())
        .is_some_and(|t| t.iter().any(|(at, from)| *at > i && *from <= r.seq()))
}

/// The writer's handle: records are appended and made durable by [`Appender::sync`].
pub struct Appender {
    file: File,
    path: PathBuf,
    records: usize,
}

impl Appender {
    /// Opens the file beside `db` for appending, made anew (empty, with this store's header) when
    /// it is missing, another store's or another layout's. Returns whether it was made anew (every
    /// session must then be embedded). A torn last record (a killed write) is cut off.
    pub fn open(db: &Path, store_id: &str) -> io::Result<(Appender, bool)> {
        let path = path_for(db);
        let fresh = !read_header(&path).is_some_and(|h| header_matches(&h, store_id));
        if fresh {
            replace(&path, store_id, std::iter::empty())?;
        }
        let file = OpenOptions::new().read(true).write(true).open(&path)?;
        let len = file.metadata()?.len() as usize;
        let records = len.saturating_sub(HEADER) / RECORD;
        let whole = (HEADER + records * RECORD) as u64;
        if whole != len as u64 {
            file.set_len(whole)?;
        }
        Ok((
            Appender {
                file,
                path,
                records,
            },
            fresh,
        ))
    }

    /// Records in the file.
    pub fn records(&self) -> usize {
        self.records
    }

    /// Appends a tombstone for session `key` from `from_seq`, then `vectors`.
    pub fn append(
        &mut self,
        tombstone: Option<(i64, u32)>,
        vectors: &[VectorRecord],
    ) -> io::Result<()> {
        let mut buf = Vec::with_capacity((vectors.len() + 1) * RECORD);
        if let Some((key, from)) = tombstone {
            buf.extend_from_slice(&encode_tombstone(key, from));
        }
        for v in vectors {
            buf.extend_from_slice(&encode_vector(v));
        }
        use std::io::Seek;
        self.file.seek(io::SeekFrom::End(0))?;
        self.file.write_all(&buf)?;
        self.records += buf.len() / RECORD;
        Ok(())
    }

    /// Makes everything appended durable (before the store forgets what it covers).
    pub fn sync(&self) -> io::Result<()> {
        self.file.sync_data()
    }

    /// Rewrites the file with only its live records when more than a quarter are dead (tombstoned
    /// or tombstones). Returns whether it did.
    pub fn compact(&mut self, db: &Path, store_id: &str) -> io::Result<bool> {
        let Some(mapped) = Mapped::open(db, store_id)? else {
            return Ok(false);
        };
        let live = mapped.live();
        if (mapped.len() - live.len()) * 4 <= mapped.len() {
            return Ok(false);
        }
        drop(mapped);
        replace(&self.path, store_id, live.iter())?;
        let (fresh, _) = Appender::open(db, store_id)?;
        *self = fresh;
        Ok(true)
    }
}

/// The first [`HEADER`] bytes of the file at `path`, if it is a regular file that long.
fn read_header(path: &Path) -> Option<[u8; HEADER]> {
    use std::io::Read;
    if !std::fs::symlink_metadata(path).ok()?.is_file() {
        return None;
    }
    let mut h = [0u8; HEADER];
    File::open(path).ok()?.read_exact(&mut h).ok()?;
    Some(h)
}

/// Writes a file of `records` under this store's header beside `path` and renames it into place.
fn replace<'a>(
    path: &Path,
    store_id: &str,
    records: impl Iterator<Item = &'a VectorRecord>,
) -> io::Result<()> {
    let new = path.with_extension("vectors-new");
    if std::fs::symlink_metadata(path).is_ok_and(|m| !m.is_file()) {
        // A folder or a link where the file goes: the file is derived, so it is removed.
        let _ = std::fs::remove_dir_all(path).or_else(|_| std::fs::remove_file(path));
    }
    {
        let mut out = io::BufWriter::new(File::create(&new)?);
        out.write_all(&header(store_id))?;
        for r in records {
            out.write_all(&encode_vector(r))?;
        }
        out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    }
    // The file takes the store's permissions, as the full-text index does.
    if let Ok(meta) = std::fs::metadata(path.with_extension("sqlite")) {
        let _ = std::fs::set_permissions(&new, meta.permissions());
    }
    std::fs::rename(&new, path)
}
