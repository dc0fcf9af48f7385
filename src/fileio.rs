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

/// The file system refused a lock (not "another process holds it"): the run goes on
/// unlocked and its freshness rule guards it (a checkpoint's digest, a store's re-read
/// before each append). Its OS error number, when it gave one (ENOSYS on Lustre mounted
/// without `flock`, ENOLCK on NFS without a lock manager, EOPNOTSUPP).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LockRefused {
    /// The OS error number.
    pub os_error: Option<i32>,
}

impl std::fmt::Display for LockRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.os_error {
            Some(code) => write!(f, "the file system refuses locks ({})", std::io::Error::from_raw_os_error(code)),
            None => write!(f, "the file system refuses locks"),
        }
    }
}

/// How an exclusive lock on a file stands once asked for: held, or refused by a file
/// system that cannot lock. Every file thorbook locks (leaf files, self-play output,
/// the label store) goes through [`try_lock`] or [`lock`], so one rule says which
/// errors mean "cannot lock" ([`refusal`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub(crate) enum Lock {
    /// This process holds the lock.
    Held,
    /// The file system cannot lock; the file is used unlocked.
    Refused(LockRefused),
}

impl Lock {
    /// The refusal, when the file system refused.
    pub(crate) fn refused(self) -> Option<LockRefused> {
        match self {
            Lock::Held => None,
            Lock::Refused(r) => Some(r),
        }
    }
}

/// Why [`try_lock`] did not lock.
#[derive(Debug)]
pub(crate) enum TryLockFault {
    /// Another process (or another open of the file) holds the lock.
    Busy,
    /// Locking failed for a reason other than a file system that cannot lock.
    Io(std::io::Error),
}

/// The refusal `e` stands for, if it says the file system cannot lock rather than that
/// something went wrong: ENOSYS and ENOLCK (what Lustre and NFS answer), and
/// `Unsupported` (EOPNOTSUPP, and platforms without locks). Any other error is a real
/// failure: taking it for a refusal would let two runs append to one file.
pub(crate) fn refusal(e: &std::io::Error) -> Option<LockRefused> {
    #[cfg(unix)]
    let by_number = matches!(e.raw_os_error(), Some(libc::ENOSYS | libc::ENOLCK));
    #[cfg(not(unix))]
    let by_number = false;
    (by_number || e.kind() == std::io::ErrorKind::Unsupported).then_some(LockRefused { os_error: e.raw_os_error() })
}

/// Takes `file`'s exclusive lock without waiting.
pub(crate) fn try_lock(file: &File) -> Result<Lock, TryLockFault> {
    match injected_refusal(file).map_or_else(|| file.try_lock(), |e| Err(std::fs::TryLockError::Error(e))) {
        Ok(()) => Ok(Lock::Held),
        Err(std::fs::TryLockError::WouldBlock) => Err(TryLockFault::Busy),
        Err(std::fs::TryLockError::Error(e)) => refusal(&e).map(Lock::Refused).ok_or(TryLockFault::Io(e)),
    }
}

#[cfg(any(feature = "cli", feature = "testing", test))]
/// Takes `file`'s exclusive lock, waiting for another holder to let it go.
pub(crate) fn lock(file: &File) -> std::io::Result<Lock> {
    match injected_refusal(file).map_or_else(|| file.lock(), Err) {
        Ok(()) => Ok(Lock::Held),
        Err(e) => refusal(&e).map(Lock::Refused).ok_or(e),
    }
}

#[cfg(any(feature = "cli", feature = "testing", test))]
/// Whether some open of `file` holds its exclusive lock, asked by taking a shared lock
/// (let go of at once when it is had); `None` when no answer can be had, as where the
/// file system cannot lock.
pub(crate) fn held_elsewhere(file: &File) -> Option<bool> {
    match injected_refusal(file).map_or_else(|| file.try_lock_shared(), |e| Err(std::fs::TryLockError::Error(e))) {
        Ok(()) => Some(false),
        Err(std::fs::TryLockError::WouldBlock) => Some(true),
        Err(std::fs::TryLockError::Error(_)) => None,
    }
}

#[cfg(any(feature = "cli", feature = "testing", test))]
/// Lets go of a lock [`lock`] or [`try_lock`] took (nothing when it was refused).
pub(crate) fn unlock(file: &File, lock: Lock) -> std::io::Result<()> {
    match lock {
        Lock::Held => file.unlock(),
        Lock::Refused(_) => Ok(()),
    }
}

/// Files whose locks fail as a file system that cannot lock answers, by device and
/// inode, with the OS error ([`inject_lock_refusal`]).
#[cfg(test)]
static INJECTED_REFUSALS: std::sync::Mutex<Vec<((u64, u64), i32)>> = std::sync::Mutex::new(Vec::new());

#[cfg(test)]
fn file_id(file: &File) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    let m = file.metadata().expect("metadata of an open file");
    (m.dev(), m.ino())
}

/// Makes every lock taken on the existing file at `path`, by any thread, fail with OS
/// error `errno` (until `None`): how the tests stand in for Lustre or NFS. Keyed by the
/// file itself, so tests running side by side on other files are unaffected.
#[cfg(test)]
pub(crate) fn inject_lock_refusal(path: &Path, errno: Option<i32>) {
    let id = file_id(&File::open(path).expect("the file whose locks are to fail"));
    let mut all = INJECTED_REFUSALS.lock().unwrap_or_else(|p| p.into_inner());
    all.retain(|&(f, _)| f != id);
    all.extend(errno.map(|e| (id, e)));
}

#[cfg(test)]
fn injected_refusal(file: &File) -> Option<std::io::Error> {
    let id = file_id(file);
    let all = INJECTED_REFUSALS.lock().unwrap_or_else(|p| p.into_inner());
    all.iter().find(|&&(f, _)| f == id).map(|&(_, e)| std::io::Error::from_raw_os_error(e))
}

#[cfg(not(test))]
fn injected_refusal(_: &File) -> Option<std::io::Error> {
    None
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

/// Bytes that live in the binary, in a memory map ([`read_mapped`]), or in memory:
/// what a book or an archive is read from, whatever holds it. Opaque, so that the
/// memory-map crate is not part of thorbook's API.
pub struct Bytes(Held);

/// Where [`Bytes`] live.
enum Held {
    Static(&'static [u8]),
    Mapped(Mmap),
    Owned(Vec<u8>),
}

impl Bytes {
    /// Bytes embedded in the binary (or otherwise living as long as the program).
    pub const fn from_static(bytes: &'static [u8]) -> Bytes {
        Bytes(Held::Static(bytes))
    }
}

impl From<Vec<u8>> for Bytes {
    fn from(bytes: Vec<u8>) -> Bytes {
        Bytes(Held::Owned(bytes))
    }
}

impl AsRef<[u8]> for Bytes {
    fn as_ref(&self) -> &[u8] {
        match &self.0 {
            Held::Static(b) => b,
            Held::Mapped(m) => m,
            Held::Owned(v) => v,
        }
    }
}

impl std::ops::Deref for Bytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.as_ref()
    }
}

impl std::fmt::Debug for Bytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let held = match self.0 {
            Held::Static(_) => "static",
            Held::Mapped(_) => "mapped",
            Held::Owned(_) => "owned",
        };
        write!(f, "Bytes({held}, {} bytes)", self.as_ref().len())
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
    Ok(Bytes(match map_file(path)? {
        Some(m) => Held::Mapped(m),
        None => Held::Owned(Vec::new()),
    }))
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
    fn one_rule_says_which_lock_errors_mean_cannot_lock() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let file = File::create(&path).unwrap();
        for errno in [libc::ENOSYS, libc::ENOLCK, libc::EOPNOTSUPP] {
            inject_lock_refusal(&path, Some(errno));
            let refused = Lock::Refused(LockRefused { os_error: Some(errno) });
            assert_eq!(try_lock(&file).unwrap(), refused, "errno {errno}");
            assert_eq!(lock(&file).unwrap(), refused, "errno {errno}");
            unlock(&file, refused).unwrap();
        }
        // Any other failure is a failure, never taken for a file system that cannot lock.
        for errno in [libc::EIO, libc::EBADF, libc::EINTR] {
            inject_lock_refusal(&path, Some(errno));
            assert!(matches!(try_lock(&file), Err(TryLockFault::Io(e)) if e.raw_os_error() == Some(errno)));
            assert_eq!(lock(&file).unwrap_err().raw_os_error(), Some(errno));
        }
        inject_lock_refusal(&path, None);
        assert_eq!(try_lock(&file).unwrap(), Lock::Held);
        let second = File::open(dir.path().join("f")).unwrap();
        assert!(matches!(try_lock(&second), Err(TryLockFault::Busy)));
        assert_eq!(held_elsewhere(&second), Some(true));
        unlock(&file, Lock::Held).unwrap();
        assert_eq!(held_elsewhere(&second), Some(false));
        assert_eq!(try_lock(&second).unwrap(), Lock::Held);
        inject_lock_refusal(&path, Some(libc::ENOLCK));
        assert_eq!(held_elsewhere(&file), None);
        inject_lock_refusal(&path, None);
        assert_eq!(
            LockRefused { os_error: Some(libc::ENOLCK) }.to_string(),
            format!("the file system refuses locks ({})", std::io::Error::from_raw_os_error(libc::ENOLCK))
        );
    }

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
