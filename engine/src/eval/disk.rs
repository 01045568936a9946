//! The persistent node cache: node results on disk under their keys, shared by every process
//! that points at the same folder (the CLI's builds and tiled tasks, the editor).
//!
//! A key hashes everything a result depends on (`eval`'s module doc), so an entry is never
//! stale: a different graph, parameter, input, file, resolution or window is a different key.
//! What can go wrong is the file itself, so nothing read is trusted until checked:
//!
//! * **Format**: `OROGENC1` magic, a format version ([`FORMAT`]), the key again (a file
//!   renamed onto another key is refused), each field's shape, the raw length (which must
//!   equal what the shapes say), the compressed length (which must equal the rest of the
//!   file), and a BLAKE3 checksum of the raw samples. The samples are stored as four byte
//!   planes (every sample's lowest byte first, then the next: the exponent bytes of a smooth
//!   terrain compress well) compressed with LZ4 (`lz4_flex`).
//! * **Damage** (truncation, a flipped byte, another version, a shape that does not match)
//!   reads as a miss with its reason; the node is recomputed and the entry rewritten.
//! * **Writes** go to a temporary file in the entry's folder, renamed over the entry when
//!   complete: a reader (or a second build writing the same key at the same time) sees the
//!   old entry, the new one, or none, never half of one. Both writers of one key write the
//!   same bytes (evaluation is deterministic), so the race has no loser.
//! * **Space**: no entry is written when the file system would have less than
//!   [`DiskCache::reserve_bytes`] free afterwards, and a write that fails anyway (the disk
//!   filled meanwhile) removes its temporary file; the build goes on without caching that
//!   result. After a run that stored something the folder is trimmed to its limit, least
//!   recently used entries first (a hit refreshes an entry's modification time).

use super::{Key, NodeFields};
use crate::field::Field;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// Version of the entry format; entries of another version are ignored (and trimmed away).
pub const FORMAT: u32 = 1;
const MAGIC: &[u8; 8] = b"OROGENC1";
/// Magic, version, key, field count.
const HEAD: usize = 8 + 4 + 16 + 4;
/// Largest result an entry may claim to hold (a damaged length must not allocate wildly).
const MAX_RAW_BYTES: u64 = 1 << 36;
/// Default size limit of a cache folder.
pub const DEFAULT_LIMIT_BYTES: u64 = 10 << 30;

/// Why a lookup found nothing usable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Miss {
    /// No entry under the key.
    Absent,
    /// An entry that failed a check (named): ignored, to be recomputed and rewritten.
    Damaged(String),
}

/// What to store: results worth keeping, or every result (tests, and a user who wants every
/// node's result kept).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Store {
    /// A result whose computation took longer than reading it back would (see
    /// [`DiskCache::worth_storing`]).
    #[default]
    Costly,
    /// Every computed result.
    All,
}

/// Counters of one cache handle (all runs through it).
#[derive(Debug, Default)]
pub struct Counters {
    pub hits: AtomicU64,
    pub misses: AtomicU64,
    pub damaged: AtomicU64,
    pub stored: AtomicU64,
    pub stored_bytes: AtomicU64,
    pub refused: AtomicU64,
}

/// A cache folder.
#[derive(Debug)]
pub struct DiskCache {
    dir: PathBuf,
    /// Size limit of the folder's entries, in bytes.
    pub limit_bytes: u64,
    /// Free space the file system must keep after a write.
    pub reserve_bytes: u64,
    pub store: Store,
    pub counters: Counters,
    /// The first reason a write was refused or failed (reported once by the caller).
    refusal: std::sync::Mutex<Option<String>>,
}

/// Summary of a cache folder.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub entries: usize,
    pub bytes: u64,
    /// Entries of another format version, or stray temporary files.
    pub stale: usize,
}

impl DiskCache {
    /// The cache in `dir` (created when missing) with a size limit.
    pub fn open(dir: &Path, limit_bytes: u64) -> std::io::Result<Self> {
        std::fs::create_dir_all(dir.join(format!("v{FORMAT}")))?;
        Ok(Self {
            dir: dir.to_path_buf(),
            limit_bytes,
            reserve_bytes: 1 << 30,
            store: Store::Costly,
            counters: Counters::default(),
            refusal: std::sync::Mutex::new(None),
        })
    }

    /// The cache folder a user gets by default: `$OROGEN_CACHE` when set (`off` or an empty
    /// value: no cache), else `$XDG_CACHE_HOME/orogen`, else `~/.cache/orogen` (on Windows
    /// `%LOCALAPPDATA%\orogen\cache`). `None` when caching is off or no folder is known.
    #[must_use]
    pub fn default_dir() -> Option<PathBuf> {
        match std::env::var_os("OROGEN_CACHE") {
            Some(v) if v.is_empty() || v == "off" || v == "0" => return None,
            Some(v) => return Some(PathBuf::from(v)),
            None => {}
        }
        let nonempty = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        if cfg!(windows) {
            return nonempty("LOCALAPPDATA").map(|d| PathBuf::from(d).join("orogen").join("cache"));
        }
        nonempty("XDG_CACHE_HOME")
            .map(|d| PathBuf::from(d).join("orogen"))
            .or_else(|| nonempty("HOME").map(|h| PathBuf::from(h).join(".cache").join("orogen")))
    }

    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, key: &Key) -> PathBuf {
        let hex = hex(key);
        self.dir
            .join(format!("v{FORMAT}"))
            .join(&hex[..2])
            .join(format!("{hex}.bin"))
    }

    /// The result stored under `key`, checked; a hit refreshes the entry's age.
    pub fn get(&self, key: &Key) -> Result<NodeFields, Miss> {
        let path = self.path(key);
        let r = read_entry(&path, key);
        match &r {
            // The file could not be opened or read (too many open files, an I/O error):
            // nothing says the entry is bad, so it stays.
            Err(Miss::Damaged(why)) if why.starts_with("cannot ") => {
                self.counters.misses.fetch_add(1, Ordering::Relaxed);
            }
            Ok(_) => {
                self.counters.hits.fetch_add(1, Ordering::Relaxed);
                // Least recently used eviction reads modification times; a failure to touch
                // only makes this entry look older.
                if let Ok(f) = std::fs::File::options().append(true).open(&path) {
                    let _ = f.set_modified(SystemTime::now());
                }
            }
            Err(Miss::Absent) => {
                self.counters.misses.fetch_add(1, Ordering::Relaxed);
            }
            Err(Miss::Damaged(_)) => {
                self.counters.damaged.fetch_add(1, Ordering::Relaxed);
                let _ = crate::io::owned::remove_file_no_follow(&path);
            }
        }
        r
    }

    /// Whether a result that took `took` to compute is worth a place in the cache: under
    /// [`Store::Costly`], when computing it took longer than writing it once and reading it
    /// back will (byte planes, LZ4, BLAKE3 and the file both ways), estimated as 5 ms plus 8 ns
    /// a byte from timing a tiled build's entries. Cheap nodes (colours, arithmetic, noise on
    /// a tile) are recomputed; erosion, flow, sky view and other costly nodes are kept.
    #[must_use]
    pub fn worth_storing(&self, fields: &NodeFields, took: Duration) -> bool {
        match self.store {
            Store::All => true,
            Store::Costly => {
                let bytes: usize = fields.iter().map(|f| f.byte_size()).sum();
                let io = Duration::from_millis(5) + Duration::from_nanos(bytes as u64 * 8);
                took > io
            }
        }
    }

    /// Stores `fields` under `key`; whether it was written. Never fails the caller: a write
    /// that cannot be made (no space, no permission) is counted, its first reason kept, and
    /// nothing is left behind.
    pub fn put(&self, key: &Key, fields: &NodeFields) -> bool {
        let bytes = encode(key, fields);
        let path = self.path(key);
        if let Err(why) = self.write(&path, &bytes) {
            self.counters.refused.fetch_add(1, Ordering::Relaxed);
            if let Ok(mut r) = self.refusal.lock() {
                r.get_or_insert(why);
            }
            return false;
        }
        self.counters.stored.fetch_add(1, Ordering::Relaxed);
        self.counters
            .stored_bytes
            .fetch_add(bytes.len() as u64, Ordering::Relaxed);
        true
    }

    fn write(&self, path: &Path, bytes: &[u8]) -> Result<(), String> {
        let dir = path.parent().unwrap_or(&self.dir);
        // The version and fan-out folders must be real folders: a link planted in their
        // place would make entries land outside the cache.
        crate::io::owned::ensure_dir(dir)?;
        if let Some(version) = dir.parent() {
            crate::io::owned::ensure_dir(version)?;
        }
        if let Some(free) = free_bytes(dir) {
            if free < bytes.len() as u64 + self.reserve_bytes {
                return Err(format!(
                    "{} has {} free; a {} entry would leave less than the {} the cache keeps free",
                    self.dir.display(),
                    human(free),
                    human(bytes.len() as u64),
                    human(self.reserve_bytes)
                ));
            }
        }
        let fail = |e: std::io::Error| format!("cannot write to {}: {e}", self.dir.display());
        let mut tmp = tempfile::Builder::new()
            .prefix(".tmp-")
            .tempfile_in(dir)
            .map_err(fail)?;
        tmp.as_file_mut().write_all(bytes).map_err(fail)?;
        tmp.as_file_mut().flush().map_err(fail)?;
        // No fsync: after a crash an entry that lost its data fails its checksum and is
        // recomputed, so durability is not worth a sync per result.
        tmp.persist(path).map_err(|e| fail(e.error))?;
        Ok(())
    }

    /// The first reason a write was refused, once (later calls give `None`).
    pub fn take_refusal(&self) -> Option<String> {
        self.refusal.lock().ok().and_then(|mut r| r.take())
    }

    /// Entries, their total size, and stale files.
    #[must_use]
    pub fn usage(&self) -> Usage {
        let mut u = Usage::default();
        for e in self.files() {
            if e.current {
                u.entries += 1;
                u.bytes += e.bytes;
            } else {
                u.stale += 1;
            }
        }
        u
    }

    /// Removes stale files (other versions, temporaries older than an hour) and then the least
    /// recently used entries until the folder is within `limit` bytes. Returns (files removed,
    /// bytes freed). Safe beside other processes using the folder: a file another process
    /// removed first is skipped, and a reader that opened an entry keeps reading it.
    pub fn trim(&self, limit: u64) -> (usize, u64) {
        let mut files = self.files();
        let mut removed = (0, 0);
        let hour_ago = SystemTime::now() - Duration::from_secs(3600);
        files.retain(|f| {
            let stale = !f.current && (f.entry_of_other_version || f.modified < hour_ago);
            if stale && crate::io::owned::remove_file_no_follow(&f.path) {
                removed.0 += 1;
                removed.1 += f.bytes;
            }
            f.current
        });
        let mut total: u64 = files.iter().map(|f| f.bytes).sum();
        files.sort_by_key(|f| f.modified);
        for f in files {
            if total <= limit {
                break;
            }
            total -= f.bytes;
            if crate::io::owned::remove_file_no_follow(&f.path) {
                removed.0 += 1;
                removed.1 += f.bytes;
            }
        }
        removed
    }

    /// Removes every entry (of every version), temporary file and `--explain` record.
    pub fn clear(&self) -> (usize, u64) {
        let mut removed = (0, 0);
        let builds = self.dir.join("builds");
        let records = if crate::io::owned::is_real_dir(&builds) {
            std::fs::read_dir(&builds).ok()
        } else {
            // A link in place of the records' folder is removed itself, never followed.
            let _ = crate::io::owned::remove_file_no_follow(&builds);
            None
        };
        for r in records.into_iter().flatten().flatten() {
            let bytes = r
                .file_type()
                .ok()
                .filter(std::fs::FileType::is_file)
                .and_then(|_| r.metadata().ok())
                .map_or(0, |m| m.len());
            if crate::io::owned::remove_file_no_follow(&r.path()) {
                removed.0 += 1;
                removed.1 += bytes;
            }
        }
        for f in self.files() {
            if crate::io::owned::remove_file_no_follow(&f.path) {
                removed.0 += 1;
                removed.1 += f.bytes;
            }
        }
        removed
    }

    /// Every file under the cache folder's version folders.
    fn files(&self) -> Vec<CacheFile> {
        let mut out = Vec::new();
        let Ok(versions) = std::fs::read_dir(&self.dir) else {
            return out;
        };
        for v in versions.flatten() {
            // Only real folders are walked: a link in the cache folder (to another user's
            // folder, say) is never followed, so nothing behind it is ever removed.
            if !v.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let name = v.file_name().to_string_lossy().into_owned();
            let Some(version) = name.strip_prefix('v').and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            for (path, meta) in walk(&v.path()) {
                let is_entry = path.extension().is_some_and(|e| e == "bin");
                out.push(CacheFile {
                    current: version == FORMAT && is_entry,
                    entry_of_other_version: version != FORMAT,
                    bytes: meta.len(),
                    modified: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                    path,
                });
            }
        }
        out
    }
}

struct CacheFile {
    path: PathBuf,
    bytes: u64,
    modified: SystemTime,
    current: bool,
    entry_of_other_version: bool,
}

/// Files two levels down (the fan-out folders, then their files), without following a link:
/// a fan-out folder that is a link is skipped, and a link among the files is listed as
/// itself (its own metadata: removing it removes the link, never what it points to).
fn walk(dir: &Path) -> Vec<(PathBuf, std::fs::Metadata)> {
    let mut out = Vec::new();
    let Ok(subs) = std::fs::read_dir(dir) else {
        return out;
    };
    for sub in subs.flatten() {
        if !sub.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let Ok(files) = std::fs::read_dir(sub.path()) else {
            continue;
        };
        for f in files.flatten() {
            let Ok(meta) = std::fs::symlink_metadata(f.path()) else {
                continue;
            };
            if meta.file_type().is_file() || meta.file_type().is_symlink() {
                out.push((f.path(), meta));
            }
        }
    }
    out
}

pub use crate::io::owned::{free_bytes, human};

pub(crate) fn hex(key: &[u8]) -> String {
    use std::fmt::Write as _;
    key.iter().fold(String::with_capacity(32), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// An entry's bytes: header, shapes, lengths, checksum, compressed byte planes.
fn encode(key: &Key, fields: &NodeFields) -> Vec<u8> {
    let raw_len: usize = fields.iter().map(|f| f.data().len() * 4).sum();
    let mut raw = Vec::with_capacity(raw_len);
    for f in fields.iter() {
        for v in f.data() {
            raw.extend_from_slice(&v.to_le_bytes());
        }
    }
    let checksum = blake3::hash(&raw);
    let planes = shuffle(&raw);
    drop(raw);
    let packed = lz4_flex::block::compress(&planes);
    let mut out = Vec::with_capacity(HEAD + fields.len() * 12 + 48 + packed.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT.to_le_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(&(fields.len() as u32).to_le_bytes());
    for f in fields.iter() {
        for v in [f.width(), f.height(), f.channels()] {
            out.extend_from_slice(&(v as u32).to_le_bytes());
        }
    }
    out.extend_from_slice(&(raw_len as u64).to_le_bytes());
    out.extend_from_slice(&(packed.len() as u64).to_le_bytes());
    out.extend_from_slice(checksum.as_bytes());
    out.extend_from_slice(&packed);
    out
}

/// Reads and checks the entry at `path` for `key`.
fn read_entry(path: &Path, key: &Key) -> Result<NodeFields, Miss> {
    // An entry is a regular file the cache wrote: a link (or a FIFO, which would block) in its
    // place is damage, never followed or opened.
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Miss::Absent),
        Ok(m) if !m.file_type().is_file() => {
            return Err(Miss::Damaged("not a regular file".to_owned()));
        }
        _ => {}
    }
    let mut file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Miss::Absent),
        Err(e) => return Err(Miss::Damaged(format!("cannot open: {e}"))),
    };
    let len = file
        .metadata()
        .map_err(|e| Miss::Damaged(format!("cannot read: {e}")))?
        .len();
    // The compressed part can be at most a little larger than the raw samples.
    if len > MAX_RAW_BYTES + MAX_RAW_BYTES / 128 + 4096 {
        return Err(Miss::Damaged(format!(
            "{len} bytes is larger than any entry"
        )));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.read_to_end(&mut bytes)
        .map_err(|e| Miss::Damaged(format!("cannot read: {e}")))?;
    decode(&bytes, key)
}

/// A little-endian reader over an entry's bytes that names what ran short.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], Miss> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let Some(end) = end else {
            return Err(Miss::Damaged(format!("truncated in its {what}")));
        };
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn u32(&mut self, what: &str) -> Result<u32, Miss> {
        let mut b = [0u8; 4];
        b.copy_from_slice(self.take(4, what)?);
        Ok(u32::from_le_bytes(b))
    }

    fn u64(&mut self, what: &str) -> Result<u64, Miss> {
        let mut b = [0u8; 8];
        b.copy_from_slice(self.take(8, what)?);
        Ok(u64::from_le_bytes(b))
    }
}

fn decode(bytes: &[u8], key: &Key) -> Result<NodeFields, Miss> {
    let bad = |m: String| Err(Miss::Damaged(m));
    let mut c = Cursor { bytes, at: 0 };
    if c.take(8, "header")? != MAGIC {
        return bad("not a cache entry (wrong magic)".into());
    }
    let version = c.u32("header")?;
    if version != FORMAT {
        return bad(format!(
            "format version {version}, this build reads {FORMAT}"
        ));
    }
    if c.take(16, "header")? != key {
        return bad("holds another key".into());
    }
    let count = c.u32("header")? as usize;
    if count > 64 {
        return bad(format!("claims {count} fields"));
    }
    let mut shapes = Vec::with_capacity(count);
    let mut expected: u64 = 0;
    for _ in 0..count {
        let (w, h, ch) = (c.u32("shapes")?, c.u32("shapes")?, c.u32("shapes")?);
        let n = u64::from(w)
            .checked_mul(u64::from(h))
            .and_then(|n| n.checked_mul(u64::from(ch)))
            .and_then(|n| n.checked_mul(4))
            .filter(|&n| n > 0 && n <= MAX_RAW_BYTES);
        let Some(n) = n else {
            return bad(format!("a field of {w}×{h}×{ch} samples"));
        };
        expected = expected.saturating_add(n);
        shapes.push((w as usize, h as usize, ch as usize));
    }
    let raw_len = c.u64("lengths")?;
    let packed_len = c.u64("lengths")?;
    if raw_len != expected || raw_len > MAX_RAW_BYTES {
        return bad(format!(
            "{raw_len} bytes of samples for shapes that hold {expected}"
        ));
    }
    let checksum = c.take(32, "checksum")?.to_vec();
    if packed_len != (bytes.len() - c.at) as u64 {
        return bad(format!(
            "truncated or extended: {} compressed bytes, the header says {packed_len}",
            bytes.len() - c.at
        ));
    }
    // LZ4 expands at most 255-fold: a larger claim is damage, not a reason to allocate.
    if raw_len > packed_len.saturating_mul(255).saturating_add(64) {
        return bad(format!(
            "{raw_len} bytes of samples from {packed_len} compressed"
        ));
    }
    let mut planes = vec![0u8; raw_len as usize];
    match lz4_flex::block::decompress_into(&bytes[c.at..], &mut planes) {
        Ok(n) if n == planes.len() => {}
        Ok(n) => return bad(format!("decompressed to {n} bytes, not {raw_len}")),
        Err(e) => return bad(format!("does not decompress: {e}")),
    }
    let raw = unshuffle(&planes);
    drop(planes);
    if blake3::hash(&raw).as_bytes()[..] != checksum[..] {
        return bad("checksum mismatch".into());
    }
    let mut at = 0;
    let mut fields = Vec::with_capacity(count);
    for (w, h, ch) in shapes {
        let n = w * h * ch;
        let data: Vec<f32> = raw[at..at + n * 4]
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        at += n * 4;
        let f = Field::from_channels(w, h, ch, data)
            .ok_or_else(|| Miss::Damaged("a field's shape does not match its samples".into()))?;
        fields.push(Arc::new(f));
    }
    Ok(fields.into())
}

/// Four byte planes of little-endian `f32` samples: byte 0 of every sample, then byte 1, …
fn shuffle(raw: &[u8]) -> Vec<u8> {
    let n = raw.len() / 4;
    let mut out = vec![0u8; raw.len()];
    for (i, s) in raw.chunks_exact(4).enumerate() {
        for (b, &v) in s.iter().enumerate() {
            out[b * n + i] = v;
        }
    }
    out
}

fn unshuffle(planes: &[u8]) -> Vec<u8> {
    let n = planes.len() / 4;
    let mut out = vec![0u8; planes.len()];
    for (i, s) in out.chunks_exact_mut(4).enumerate() {
        for (b, v) in s.iter_mut().enumerate() {
            *v = planes[b * n + i];
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> NodeFields {
        let h = Field::from_fn(37, 19, |x, y| (x as f32 * 0.37).sin() * 100.0 + y as f32);
        let c = Field::from_channels(5, 4, 3, (0..60).map(|i| i as f32 / 60.0).collect())
            .expect("shape");
        vec![Arc::new(h), Arc::new(c)].into()
    }

    fn same(a: &NodeFields, b: &NodeFields) -> bool {
        a.len() == b.len()
            && a.iter().zip(b.iter()).all(|(x, y)| {
                (x.width(), x.height(), x.channels()) == (y.width(), y.height(), y.channels())
                    && x.data()
                        .iter()
                        .map(|v| v.to_bits())
                        .eq(y.data().iter().map(|v| v.to_bits()))
            })
    }

    #[test]
    fn entries_round_trip_bit_for_bit() {
        let key = [7u8; 16];
        let f = sample();
        let back = decode(&encode(&key, &f), &key).expect("decode");
        assert!(same(&f, &back));
    }

    #[test]
    fn damaged_entries_are_refused_with_their_reason() {
        let key = [7u8; 16];
        let good = encode(&key, &sample());
        let reason = |b: &[u8], k: &Key| match decode(b, k) {
            Err(Miss::Damaged(m)) => m,
            other => panic!("accepted a damaged entry: {other:?}"),
        };
        assert_eq!(
            reason(&good[..good.len() - 1], &key),
            format!(
                "truncated or extended: {} compressed bytes, the header says {}",
                good.len() - 1 - (HEAD + 2 * 12 + 16 + 32),
                good.len() - (HEAD + 2 * 12 + 16 + 32)
            )
        );
        assert_eq!(reason(&good[..20], &key), "truncated in its header");
        assert_eq!(reason(&good, &[8u8; 16]), "holds another key");
        let mut v2 = good.clone();
        v2[8] = 2;
        assert_eq!(reason(&v2, &key), "format version 2, this build reads 1");
        // A flipped byte anywhere never gives other samples: it is refused, or (in the
        // compressed part, where a match may point at other bytes of the same content) it
        // decompresses to the very samples the checksum was made of.
        let f = sample();
        let mut refused = 0;
        for at in 0..good.len() {
            let mut b = good.clone();
            b[at] ^= 0x10;
            match decode(&b, &key) {
                Err(_) => refused += 1,
                Ok(back) => assert!(same(&f, &back), "a flipped byte at {at} gave other samples"),
            }
        }
        assert!(
            refused * 10 >= good.len() * 9,
            "{refused} of {} refused",
            good.len()
        );
    }
}
