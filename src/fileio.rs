//! File plumbing shared by the Thor and book layers: read-only memory maps and atomic
//! writes (a temporary file in the same directory, flushed, then renamed over the
//! target, so a reader never sees a half-written file and a crash loses nothing), and
//! the 64-bit `Digest` that names inputs (checkpoints, resumable runs); and the civil
//! date of a file's timestamps (`civil_from_days`).
// Input handling: every narrowing or sign-changing conversion is checked (`try_from`,
// `from_le_bytes`), never a silent `as`.
#![deny(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_possible_wrap)]

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use memmap2::Mmap;

/// An I/O error and the file it happened on: the one way every thorbook error names
/// the file behind a failed read or write (as ripgrep's `ignore::Error::WithPath`
/// does).
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", path.display())]
#[non_exhaustive]
pub struct IoError {
    /// The file or directory.
    pub path: PathBuf,
    /// The cause.
    #[source]
    pub source: std::io::Error,
}

impl IoError {
    /// `source`, which happened on `path`.
    pub(crate) fn new(path: impl Into<PathBuf>, source: std::io::Error) -> IoError {
        IoError { path: path.into(), source }
    }

    /// A closure that wraps an I/O error on `path` (for `map_err`).
    pub(crate) fn at(path: &Path) -> impl Fn(std::io::Error) -> IoError + '_ {
        move |source| IoError::new(path, source)
    }
}

/// Maps a file read-only; `None` for an empty file (mapping zero bytes fails on some
/// systems).
pub(crate) fn map_file(path: &Path) -> std::io::Result<Option<Mmap>> {
    let file = File::open(path)?;
    if file.metadata()?.len() == 0 {
        return Ok(None);
    }
    // SAFETY: the map is read-only and thorbook never writes to a file it has mapped
    // (writes go to a temporary and are renamed). Another process truncating the file
    // while it is mapped is outside what any memory-mapped reader can defend against.
    let map = unsafe { Mmap::map(&file)? };
    Ok(Some(map))
}

/// Bytes that live in the binary, in a memory map, or in memory.
pub enum Bytes {
    /// Embedded in the binary.
    Static(&'static [u8]),
    /// A read-only memory map.
    Mapped(Mmap),
    /// Owned.
    Owned(Vec<u8>),
}

impl AsRef<[u8]> for Bytes {
    fn as_ref(&self) -> &[u8] {
        match self {
            Bytes::Static(b) => b,
            Bytes::Mapped(m) => m,
            Bytes::Owned(v) => v,
        }
    }
}

/// Tells the kernel that `bytes` will be read soon (`madvise(MADV_WILLNEED)`), so that
/// the disk reads of several cold pages of a memory map run at once instead of one
/// page fault after another.
pub(crate) fn will_need(bytes: &[u8]) {
    advise(bytes, Advice::WillNeed);
}

/// Tells the kernel that `bytes` are read at random (`madvise(MADV_RANDOM)`): a page
/// fault then reads its page, not the read-ahead window around it (8 MiB on some
/// disks: a cold query of a 1.5 GB book read 1.2 GB of it). Scans ask for their
/// windows with [`will_need`].
pub(crate) fn random_access(bytes: &[u8]) {
    advise(bytes, Advice::Random);
}

/// What [`advise`] tells the kernel.
#[derive(Clone, Copy)]
enum Advice {
    WillNeed,
    Random,
}

/// `madvise` over the pages that hold `bytes` (nothing where there is no `madvise`, or
/// under Miri, which cannot run foreign calls). Advice only: nothing changes for memory
/// that is not a file map, and a refusal is ignored.
fn advise(bytes: &[u8], advice: Advice) {
    #[cfg(all(unix, not(miri)))]
    {
        // The smallest page size of the systems thorbook runs on: on larger pages an
        // address that is not page-aligned is refused (EINVAL), which costs nothing.
        const PAGE: usize = 4096;
        if bytes.is_empty() {
            return;
        }
        let advice = match advice {
            Advice::WillNeed => libc::MADV_WILLNEED,
            Advice::Random => libc::MADV_RANDOM,
        };
        let start = bytes.as_ptr() as usize;
        let aligned = start & !(PAGE - 1);
        let len = bytes.len() + (start - aligned);
        // SAFETY: MADV_WILLNEED and MADV_RANDOM are advice about pages of this
        // process's own mappings (the range starts at most a page before `bytes`,
        // inside the page that holds its first byte, which is mapped): they change how
        // pages are read ahead, never the contents or the validity of any memory, so no
        // reference is affected.
        unsafe {
            libc::madvise(aligned as *mut libc::c_void, len, advice);
        }
    }
    #[cfg(not(all(unix, not(miri))))]
    let _ = (bytes, advice);
}

/// A file's bytes, memory-mapped (an empty file gives an empty buffer).
pub fn read_mapped(path: &Path) -> std::io::Result<Bytes> {
    Ok(match map_file(path)? {
        Some(m) => Bytes::Mapped(m),
        None => Bytes::Owned(Vec::new()),
    })
}

/// Writes `bytes` to `path` atomically and durably: temporary file beside it, fsync,
/// rename, then fsync of the directory so the rename itself survives a crash.
pub(crate) fn atomic_write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = AtomicFile::create(path)?;
    f.write_all(bytes)?;
    f.commit()
}

/// A file written as a stream and put in place atomically and durably by
/// [`AtomicFile::commit`] (as [`atomic_write`]); dropped uncommitted, its temporary file
/// is removed and `path` is untouched.
pub(crate) struct AtomicFile {
    path: PathBuf,
    tmp: PathBuf,
    file: Option<std::io::BufWriter<File>>,
}

/// A hidden work file of this process beside `path` (`.NAME.PID.KIND` in its
/// directory): on the same file system, so that a rename puts it in place, and named
/// by the process, so that two runs never share one.
pub(crate) fn work_path(path: &Path, kind: &str) -> PathBuf {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    dir.join(format!(".{name}.{}.{kind}", std::process::id()))
}

impl AtomicFile {
    /// Starts writing what will become `path`.
    pub(crate) fn create(path: &Path) -> std::io::Result<AtomicFile> {
        let tmp = work_path(path, "tmp");
        let file = std::io::BufWriter::with_capacity(1 << 20, File::create(&tmp)?);
        Ok(AtomicFile { path: path.to_path_buf(), tmp, file: Some(file) })
    }

    fn file(&mut self) -> &mut std::io::BufWriter<File> {
        self.file.as_mut().expect("present until commit")
    }

    /// Overwrites bytes already written at `offset` (a header filled in last).
    pub(crate) fn write_at(&mut self, offset: u64, bytes: &[u8]) -> std::io::Result<()> {
        use std::io::Seek;
        let f = self.file();
        let end = f.stream_position()?;
        f.seek(std::io::SeekFrom::Start(offset))?;
        f.write_all(bytes)?;
        f.seek(std::io::SeekFrom::Start(end))?;
        Ok(())
    }

    /// Flushes, syncs and renames the file into place, then syncs the directory.
    pub(crate) fn commit(mut self) -> std::io::Result<()> {
        let file = self.file.take().expect("present until commit");
        let file = file.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&self.tmp, &self.path)?;
        let dir = self.path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        sync_dir(dir)
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file().write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file().flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Flushes a directory's entries (a rename) to disk. Directories cannot be opened for
/// syncing everywhere (Windows); there the rename is as durable as the system makes it.
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    File::open(dir)?.sync_all()?;
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.bin");
        atomic_write(&path, b"first").unwrap();
        atomic_write(&path, b"second").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"second");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        assert_eq!(&map_file(&path).unwrap().unwrap()[..], b"second");
    }

    /// The digest is xxh3-64 (its published value for "abc"), fed in any split.
    #[test]
    fn digest_is_xxh3_of_the_bytes_in_any_split() {
        assert_eq!(Digest::of(b"abc"), 0x78af_5f94_892f_3950);
        let mut d = Digest::new();
        d.update(b"a");
        d.update(b"");
        d.update(b"bc");
        assert_eq!(d.finish(), Digest::of(b"abc"));
        assert_ne!(Digest::of(b"abd"), Digest::of(b"abc"));
    }

    #[test]
    fn atomic_write_into_missing_directory_fails_cleanly() {
        let dir = tempfile::tempdir().unwrap();
        assert!(atomic_write(&dir.path().join("no/such/dir/out.bin"), b"x").is_err());
    }
}

/// A 64-bit digest of a byte stream (xxh3-64). Not cryptographic: it tells the inputs
/// of a resumable run apart (a stale checkpoint, another plan), where a 32-bit checksum
/// would collide after tens of thousands of inputs.
#[derive(Clone, Default)]
pub(crate) struct Digest(xxhash_rust::xxh3::Xxh3);

impl std::fmt::Debug for Digest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Digest({:016x})", self.0.digest())
    }
}

impl Digest {
    /// A digest of nothing yet.
    pub(crate) fn new() -> Digest {
        Digest::default()
    }

    /// Adds bytes.
    pub(crate) fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// The digest of every byte added.
    pub(crate) fn finish(self) -> u64 {
        self.0.digest()
    }

    /// The digest of `bytes`.
    pub(crate) fn of(bytes: &[u8]) -> u64 {
        let mut d = Digest::new();
        d.update(bytes);
        d.finish()
    }
}

/// The civil date (year, month 1..=12, day 1..=31) of a day counted from 1970-01-01,
/// in the proleptic Gregorian calendar (Howard Hinnant's days-to-civil: 400-year eras
/// of 146,097 days, years starting in March so that leap days come last).
pub(crate) fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = u32::try_from(doy - (153 * mp + 2) / 5 + 1).unwrap_or(1);
    let month = u32::try_from(if mp < 10 { mp + 3 } else { mp - 9 }).unwrap_or(1);
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}
