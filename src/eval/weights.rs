//! The weight file of the trained evaluation: its byte layout, reading with located
//! errors, writing, and the bundled copy.
//!
//! Layout (little-endian; version 3, or 2 for weights without leaf corrections),
//! documented for other programs in `book-format.md`:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `TBKEVAL\x1a` |
//! | 8 | 4 | version (2) |
//! | 12 | 4 | feature set (2: the patterns and counts of [`super::features`]) |
//! | 16 | 4 | phases `P` (1..=60; phase = (60 − empties) · P / 60) |
//! | 20 | 4 | weights per phase `S` (feature slots; the bias is extra) |
//! | 24 | 4 | scale: weight units per disc |
//! | 28 | 4 | Multi-ProbCut depths `D` (0: no table) |
//! | 32 | 4 | note length `N` |
//! | 36 | N | note (UTF-8: how the weights were made) |
//! | … | 4·P·D | ProbCut σ (f32, discs) per phase, then per deep depth 0..D |
//! | … | 2·P·(1+S) | per phase: the bias, then the `S` slot weights (i16) |
//! | end−4 | 4 | CRC-32 of every byte before it |
//!
//! Version 1 (30 phases of two plies, 11 patterns and no counts) is refused with a
//! message saying so: its weights mean nothing to this feature set.
//!
//! The bundled file is stored gzip-compressed; [`Weights::from_bytes`] accepts either.
// Input handling: every narrowing or sign-changing conversion is checked (`try_from`,
// `from_le_bytes`), never a silent `as`.
#![deny(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_possible_wrap)]

use std::io::Read;
use std::path::{Path, PathBuf};

use super::features::feature_set;
use crate::fileio::IoError;

/// File magic.
pub(crate) const MAGIC: &[u8; 8] = b"TBKEVAL\x1a";
/// The version this build writes for weights with search-leaf corrections; weights
/// without them are written as version 2, so that their file and digest stay as they
/// were. Both are read.
pub(crate) const VERSION: u32 = 3;
/// The version without search-leaf corrections.
pub(crate) const VERSION_WITHOUT_LEAF: u32 = 2;
/// Entries of the search-leaf correction: one per number of empties, 0..=60.
pub(crate) const LEAF_ENTRIES: usize = 61;
/// The largest search-leaf correction, in weight units ([`SCALE`] a disc): 8 discs.
pub(crate) const MAX_LEAF_CORRECTION: i16 = 8 * 64;
/// The feature set this build evaluates.
pub(crate) const FEATURE_SET: u32 = 2;
/// Game phases a weight file may have at most: one per ply.
pub(crate) const MAX_PHASES: usize = 60;
#[cfg(any(feature = "cli", feature = "testing", test))]
/// Phases of newly trained weights: one per two plies. The parity of the empties is
/// not left to the phase: the `parity` count and a per-empties intercept in training
/// fit odd and even positions apart, and 60 phases measured no better on held-out games
/// (static error at 24 empties 5.59 discs either way) for twice the file.
pub(crate) const DEFAULT_PHASES: usize = 30;
/// Weight units per disc.
pub(crate) const SCALE: i32 = 64;
/// Longest note a weight file may carry (a line or a paragraph on how it was made).
pub(crate) const MAX_NOTE: usize = 1 << 16;
/// Most ProbCut depths a weight file may carry.
pub(crate) const MAX_PROBCUT_DEPTHS: usize = 64;

/// The bundled weights (gzip), trained by `thorbook train` on the Thor archives and
/// calibrated by `thorbook calibrate`; see docs/research/2026-11-28-the-bundled-weights-recipe.md for the commands that rebuild
/// them.
static BUNDLED: &[u8] = include_bytes!("../../data/eval.tbe.gz");
#[cfg(any(feature = "cli", feature = "testing", test))]
/// The digest of the bundled weights ([`Weights::digest`]; a test checks it against
/// them whenever they change).
const BUNDLED_DIGEST: u32 = 0xf25c_3d4f;

/// The phase of a position with `empties` empty squares among `phases` (0..phases):
/// `(60 − empties) · phases / 60`, a finished board counting as one empty.
#[inline]
pub(crate) fn phase_of(empties: u32, phases: usize) -> usize {
    let played = usize::try_from(60 - empties.clamp(1, 60)).unwrap_or(0);
    (played * phases / 60).min(phases.saturating_sub(1))
}

#[cfg(any(feature = "cli", feature = "testing", test))]
/// The empties a phase covers among `phases`, most first.
pub(crate) fn phase_empties(phase: usize, phases: usize) -> (u32, u32) {
    let covered: Vec<u32> = (1..=60).rev().filter(|&e| phase_of(e, phases) == phase).collect();
    (covered.first().copied().unwrap_or(0), covered.last().copied().unwrap_or(0))
}

/// A damaged, foreign or incompatible weight file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WeightsError {
    /// The file could not be read.
    #[error(transparent)]
    Io(#[from] IoError),
    /// The bytes are not a valid weight file.
    #[error("{}: byte {offset}: {fault}", file.display())]
    Invalid {
        /// The file (`(bundled weights)` for the embedded ones).
        file: PathBuf,
        /// Byte offset of the fault (in the decompressed data).
        offset: usize,
        /// What is wrong.
        #[source]
        fault: WeightsFault,
    },
}

/// What is wrong with the bytes of a weight file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WeightsFault {
    /// Gzip data that does not decompress.
    #[error("damaged gzip data")]
    Gzip(#[source] std::io::Error),
    /// Gzip data that decompresses to more than any weight file.
    #[error("decompresses to more than {largest} bytes, the most a weight file holds")]
    Bomb {
        /// The largest valid file.
        largest: usize,
    },
    /// Not a weight file.
    #[error("not a thorbook weight file (magic TBKEVAL)")]
    Magic,
    /// Version 1, the retired evaluation.
    #[error(
        "version 1: weights of the older evaluation (30 phases of two plies, 11 patterns, no counts), \
         which this build no longer evaluates; train new ones with `thorbook train`"
    )]
    RetiredVersion,
    /// A version this build does not read.
    #[error("version {found}, this build reads versions {VERSION_WITHOUT_LEAF} and {VERSION}")]
    Version {
        /// The file's.
        found: u32,
    },
    /// Another feature set.
    #[error("feature set {found}, this build evaluates set {FEATURE_SET}")]
    FeatureSet {
        /// The file's.
        found: u32,
    },
    /// A phase count out of range.
    #[error("{found} phases, expected 1 to {MAX_PHASES}")]
    Phases {
        /// The file's.
        found: usize,
    },
    /// Another number of weights per phase.
    #[error("{found} weights per phase, expected {expected}")]
    Slots {
        /// The file's.
        found: u32,
        /// This build's.
        expected: usize,
    },
    /// Another fixed-point scale.
    #[error("scale {found}, expected {SCALE}")]
    Scale {
        /// The file's.
        found: u32,
    },
    /// Too many ProbCut depths.
    #[error("{found} ProbCut depths (at most {MAX_PROBCUT_DEPTHS})")]
    ProbCutDepths {
        /// The file's.
        found: usize,
    },
    /// A note longer than allowed.
    #[error("note of {found} bytes (at most {MAX_NOTE})")]
    NoteLength {
        /// The file's.
        found: usize,
    },
    /// A length other than the header describes.
    #[error("file is {found} bytes, its header describes {expected}")]
    Length {
        /// The file's.
        found: usize,
        /// The header's.
        expected: usize,
    },
    /// The checksum fails.
    #[error("checksum {stored:08x} does not match the data ({actual:08x})")]
    Checksum {
        /// Stored.
        stored: u32,
        /// Computed.
        actual: u32,
    },
    /// The note is not UTF-8.
    #[error("note is not UTF-8")]
    NoteUtf8,
    /// A ProbCut σ out of range.
    #[error("ProbCut σ {found} out of range (0 to 64)")]
    Sigma {
        /// The file's.
        found: f32,
    },
    /// A search-leaf correction out of range.
    #[error("search-leaf correction {found} beyond ±{MAX_LEAF_CORRECTION}")]
    LeafCorrection {
        /// The file's.
        found: i16,
    },
    /// Another number of values than the phases need.
    #[error("{found} values, {expected} for the phases")]
    Values {
        /// Given.
        found: usize,
        /// Phases times weights per phase.
        expected: usize,
    },
    /// Another number of ProbCut σ than phases times depths.
    #[error("{found} ProbCut σ, {expected} for the phases and depths")]
    ProbCutLength {
        /// Given.
        found: usize,
        /// Phases times ProbCut depths.
        expected: usize,
    },
    /// A search-leaf correction of another length than none or one per empties.
    #[error("search-leaf correction of {found} entries, expected 0 or {LEAF_ENTRIES}")]
    LeafCorrectionLength {
        /// Given.
        found: usize,
    },
    /// Version 3 with an all-zero correction table.
    #[error("version 3 without a search-leaf correction (such weights are version 2)")]
    EmptyLeafCorrection,
}

/// Trained weights as stored: per phase a bias and one weight per feature slot, in
/// units of 1/`SCALE` disc, plus the Multi-ProbCut table and the search-leaf
/// correction. Every `Weights` is valid (read from a file, the bundled ones, or checked
/// from [`WeightParts`]), so evaluating and writing them never fail.
#[derive(Clone, Debug, PartialEq)]
pub struct Weights {
    pub(crate) note: String,
    pub(crate) phases: usize,
    pub(crate) values: Vec<i16>,
    pub(crate) probcut: Vec<f32>,
    pub(crate) probcut_depths: usize,
    pub(crate) leaf_correction: Vec<i16>,
}

/// The parts of [`Weights`], to edit: [`Weights::into_parts`], then
/// `Weights::try_from(parts)`, which checks each invariant and names the first broken
/// with a [`WeightsFault`].
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct WeightParts {
    /// How the weights were made (free text, at most 64 KiB).
    pub note: String,
    /// Number of phases (1 to 60).
    pub phases: usize,
    /// Per phase: the bias followed by the slot weights (`phases` times
    /// [`Weights::phase_len`]).
    pub values: Vec<i16>,
    /// ProbCut σ in discs (0 to 64; 0 = no cut), `probcut[phase * probcut_depths +
    /// depth]`: `phases` times `probcut_depths` long.
    pub probcut: Vec<f32>,
    /// Deep depths in the ProbCut table (at most 64).
    pub probcut_depths: usize,
    /// What a search adds to the evaluation of its leaves, per number of empties at the
    /// leaf (0 to 60), in weight units: the side that makes a search's last choice
    /// picks among its moves the one the evaluation underrates most for the other
    /// side, so an uncorrected search leans toward whoever moves last, and its score
    /// swings with the parity of its depth (`thorbook calibrate` measures it). Empty
    /// (no correction) or 61 long, each within ±512 (8 discs).
    pub leaf_correction: Vec<i16>,
}

impl TryFrom<WeightParts> for Weights {
    type Error = WeightsFault;

    fn try_from(p: WeightParts) -> Result<Weights, WeightsFault> {
        check_phases(p.phases)?;
        check_note_length(p.note.len())?;
        let values = p.phases * Weights::phase_len();
        if p.values.len() != values {
            return Err(WeightsFault::Values { found: p.values.len(), expected: values });
        }
        check_probcut_depths(p.probcut_depths)?;
        if p.probcut.len() != p.phases * p.probcut_depths {
            return Err(WeightsFault::ProbCutLength { found: p.probcut.len(), expected: p.phases * p.probcut_depths });
        }
        p.probcut.iter().try_for_each(|&s| check_sigma(s))?;
        if !p.leaf_correction.is_empty() && p.leaf_correction.len() != LEAF_ENTRIES {
            return Err(WeightsFault::LeafCorrectionLength { found: p.leaf_correction.len() });
        }
        p.leaf_correction.iter().try_for_each(|&c| check_leaf_correction(c))?;
        let WeightParts { note, phases, values, probcut, probcut_depths, leaf_correction } = p;
        Ok(Weights { note, phases, values, probcut, probcut_depths, leaf_correction })
    }
}

// Each invariant of `Weights`, checked once here: by `Weights::try_from` and by the
// file reader, which names the byte of the field at fault.

fn check_phases(phases: usize) -> Result<(), WeightsFault> {
    if (1..=MAX_PHASES).contains(&phases) {
        Ok(())
    } else {
        Err(WeightsFault::Phases { found: phases })
    }
}

fn check_note_length(len: usize) -> Result<(), WeightsFault> {
    if len <= MAX_NOTE {
        Ok(())
    } else {
        Err(WeightsFault::NoteLength { found: len })
    }
}

fn check_probcut_depths(depths: usize) -> Result<(), WeightsFault> {
    if depths <= MAX_PROBCUT_DEPTHS {
        Ok(())
    } else {
        Err(WeightsFault::ProbCutDepths { found: depths })
    }
}

fn check_sigma(s: f32) -> Result<(), WeightsFault> {
    if s.is_finite() && (0.0..=64.0).contains(&s) {
        Ok(())
    } else {
        Err(WeightsFault::Sigma { found: s })
    }
}

fn check_leaf_correction(c: i16) -> Result<(), WeightsFault> {
    if c.unsigned_abs() <= MAX_LEAF_CORRECTION.unsigned_abs() {
        Ok(())
    } else {
        Err(WeightsFault::LeafCorrection { found: c })
    }
}

impl Weights {
    /// Weights per phase, the bias included.
    pub fn phase_len() -> usize {
        1 + feature_set().slot_count
    }

    /// The parts, to edit and check again with `Weights::try_from`.
    pub fn into_parts(self) -> WeightParts {
        let Weights { note, phases, values, probcut, probcut_depths, leaf_correction } = self;
        WeightParts { note, phases, values, probcut, probcut_depths, leaf_correction }
    }

    /// How the weights were made.
    pub fn note(&self) -> &str {
        &self.note
    }

    #[cfg(any(feature = "cli", feature = "testing", test))]
    /// Sets the note, cut (at a character) to the 64 KiB a file holds.
    pub(crate) fn set_note(&mut self, mut note: String) {
        if note.len() > MAX_NOTE {
            let cut = (0..=MAX_NOTE).rev().find(|&i| note.is_char_boundary(i)).unwrap_or(0);
            note.truncate(cut);
        }
        self.note = note;
    }

    /// Number of phases.
    pub fn phases(&self) -> usize {
        self.phases
    }

    /// Per phase, the bias and then the slot weights, in units of 1/64 disc.
    pub fn values(&self) -> &[i16] {
        &self.values
    }

    /// The ProbCut σ table in discs, `[phase * probcut_depths + depth]`.
    pub fn probcut(&self) -> &[f32] {
        &self.probcut
    }

    /// Deep depths in the ProbCut table.
    pub fn probcut_depths(&self) -> usize {
        self.probcut_depths
    }

    /// The search-leaf correction per number of empties at the leaf, in units of 1/64
    /// disc: empty, or one per number of empties from 0 to 60
    /// ([`WeightParts::leaf_correction`]).
    pub fn leaf_correction(&self) -> &[i16] {
        &self.leaf_correction
    }

    #[cfg(any(feature = "cli", feature = "testing", test))]
    /// All zero (an evaluation that always says 0), with `phases` phases.
    pub(crate) fn zero(phases: usize) -> Weights {
        assert!((1..=MAX_PHASES).contains(&phases), "1..=60 phases, got {phases}");
        Weights {
            note: String::new(),
            phases,
            values: vec![0; phases * Weights::phase_len()],
            probcut: Vec::new(),
            probcut_depths: 0,
            leaf_correction: Vec::new(),
        }
    }

    /// The search-leaf correction at `empties` (0 without one), in weight units.
    pub(crate) fn leaf_correction_at(&self, empties: u32) -> i16 {
        usize::try_from(empties).ok().and_then(|e| self.leaf_correction.get(e)).copied().unwrap_or(0)
    }

    /// Whether the file carries a search-leaf correction (version 3).
    fn has_leaf_correction(&self) -> bool {
        self.leaf_correction.iter().any(|&c| c != 0)
    }

    /// The weights of one phase (bias first).
    pub(crate) fn phase(&self, phase: usize) -> &[i16] {
        let n = Weights::phase_len();
        &self.values[phase * n..(phase + 1) * n]
    }

    #[cfg(any(feature = "cli", feature = "testing", test))]
    /// The weights of one phase (bias first), to write.
    pub(crate) fn phase_mut(&mut self, phase: usize) -> &mut [i16] {
        let n = Weights::phase_len();
        &mut self.values[phase * n..(phase + 1) * n]
    }

    /// The file bytes (uncompressed).
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(40 + self.note.len() + self.values.len() * 2 + self.probcut.len() * 4);
        out.extend_from_slice(MAGIC);
        let leaf = self.has_leaf_correction();
        for v in [
            if leaf { VERSION } else { VERSION_WITHOUT_LEAF },
            FEATURE_SET,
            u32::try_from(self.phases).expect("at most 60 phases"),
            u32::try_from(feature_set().slot_count).expect("the feature set has fewer than 2^32 slots"),
            SCALE.unsigned_abs(),
            u32::try_from(self.probcut_depths).expect("at most 64 ProbCut depths"),
            u32::try_from(self.note.len())
                .ok()
                .filter(|&n| n as usize <= MAX_NOTE)
                .expect("a note of at most MAX_NOTE bytes"),
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(self.note.as_bytes());
        for s in &self.probcut {
            out.extend_from_slice(&s.to_le_bytes());
        }
        if leaf {
            for e in 0..LEAF_ENTRIES {
                out.extend_from_slice(&self.leaf_correction.get(e).copied().unwrap_or(0).to_le_bytes());
            }
        }
        for w in &self.values {
            out.extend_from_slice(&w.to_le_bytes());
        }
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    /// The file bytes, gzip-compressed (how the bundled copy is stored).
    pub(crate) fn to_gzip_bytes(&self) -> Vec<u8> {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        std::io::Write::write_all(&mut enc, &self.to_bytes()).expect("writing to memory");
        enc.finish().expect("writing to memory")
    }

    /// The size of the largest valid file: the most phases, the longest note and the
    /// most ProbCut depths.
    fn largest_file_len() -> usize {
        36 + MAX_NOTE
            + 4 * MAX_PHASES * MAX_PROBCUT_DEPTHS
            + 2 * LEAF_ENTRIES
            + 2 * MAX_PHASES * Weights::phase_len()
            + 4
    }

    /// Parses a weight file (plain or gzip-compressed); `file` names it in errors.
    pub(crate) fn from_bytes(file: &Path, bytes: &[u8]) -> Result<Weights, WeightsError> {
        let invalid =
            |offset: usize, fault: WeightsFault| WeightsError::Invalid { file: file.to_path_buf(), offset, fault };
        let plain;
        let bytes = if bytes.starts_with(&[0x1f, 0x8b]) {
            // Decompress no further than the largest valid file: a small gzip bomb must
            // not make thorbook allocate gigabytes before the sizes are checked.
            let largest = Weights::largest_file_len();
            let mut out = Vec::new();
            flate2::read::GzDecoder::new(bytes)
                .take(u64::try_from(largest).unwrap_or(u64::MAX).saturating_add(1))
                .read_to_end(&mut out)
                .map_err(|e| invalid(0, WeightsFault::Gzip(e)))?;
            if out.len() > largest {
                return Err(invalid(0, WeightsFault::Bomb { largest }));
            }
            plain = out;
            &plain[..]
        } else {
            bytes
        };
        if bytes.len() < 40 || &bytes[..8] != MAGIC {
            return Err(invalid(0, WeightsFault::Magic));
        }
        let field = |i: usize| u32::from_le_bytes(bytes[8 + 4 * i..12 + 4 * i].try_into().expect("4 bytes"));
        let version = field(0);
        if version == 1 {
            return Err(invalid(8, WeightsFault::RetiredVersion));
        }
        if version != VERSION && version != VERSION_WITHOUT_LEAF {
            return Err(invalid(8, WeightsFault::Version { found: version }));
        }
        let leaf_len = if version == VERSION { 2 * LEAF_ENTRIES } else { 0 };
        if field(1) != FEATURE_SET {
            return Err(invalid(12, WeightsFault::FeatureSet { found: field(1) }));
        }
        let phases = field(2) as usize;
        check_phases(phases).map_err(|fault| invalid(16, fault))?;
        let slots = feature_set().slot_count;
        if field(3) as usize != slots {
            return Err(invalid(20, WeightsFault::Slots { found: field(3), expected: slots }));
        }
        if i32::try_from(field(4)) != Ok(SCALE) {
            return Err(invalid(24, WeightsFault::Scale { found: field(4) }));
        }
        let depths = field(5) as usize;
        check_probcut_depths(depths).map_err(|fault| invalid(28, fault))?;
        let note_len = field(6) as usize;
        check_note_length(note_len).map_err(|fault| invalid(32, fault))?;
        let values_len = phases * (1 + slots);
        let expected = 36usize
            .checked_add(note_len)
            .and_then(|n| n.checked_add(4 * phases * depths + leaf_len + 2 * values_len + 4))
            .ok_or_else(|| invalid(32, WeightsFault::NoteLength { found: note_len }))?;
        if bytes.len() != expected {
            return Err(invalid(bytes.len().min(expected), WeightsFault::Length { found: bytes.len(), expected }));
        }
        let body = &bytes[..expected - 4];
        let stored = u32::from_le_bytes(bytes[expected - 4..].try_into().expect("4 bytes"));
        let actual = crc32fast::hash(body);
        if stored != actual {
            return Err(invalid(expected - 4, WeightsFault::Checksum { stored, actual }));
        }
        let note = std::str::from_utf8(&bytes[36..36 + note_len])
            .map_err(|e| invalid(36 + e.valid_up_to(), WeightsFault::NoteUtf8))?
            .to_string();
        let mut at = 36 + note_len;
        let mut probcut = Vec::with_capacity(phases * depths);
        for _ in 0..phases * depths {
            let s = f32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
            check_sigma(s).map_err(|fault| invalid(at, fault))?;
            probcut.push(s);
            at += 4;
        }
        let mut leaf_correction = Vec::with_capacity(leaf_len / 2);
        for c in bytes[at..at + leaf_len].chunks_exact(2) {
            let v = i16::from_le_bytes([c[0], c[1]]);
            check_leaf_correction(v).map_err(|fault| invalid(at, fault))?;
            leaf_correction.push(v);
            at += 2;
        }
        if leaf_len > 0 && leaf_correction.iter().all(|&c| c == 0) {
            return Err(invalid(at - leaf_len, WeightsFault::EmptyLeafCorrection));
        }
        let values = bytes[at..at + 2 * values_len].chunks_exact(2).map(|c| i16::from_le_bytes([c[0], c[1]])).collect();
        Ok(Weights { note, phases, values, probcut, probcut_depths: depths, leaf_correction })
    }

    #[cfg(any(feature = "cli", feature = "testing", test))]
    /// Whether `digest` names the bundled weights, without decoding them (a tenth of
    /// a second: `book info` only names the evaluation a book was built with).
    pub(crate) fn is_bundled_digest(digest: u32) -> bool {
        digest == BUNDLED_DIGEST
    }

    /// The bundled weights.
    pub fn bundled() -> Weights {
        Weights::from_bytes(Path::new("(bundled weights)"), BUNDLED)
            .expect("the bundled weights are checked by the tests")
    }

    /// Reads a weight file.
    pub fn load(path: &Path) -> Result<Weights, WeightsError> {
        let bytes = std::fs::read(path).map_err(IoError::at(path))?;
        Weights::from_bytes(path, &bytes)
    }

    /// Writes the weight file atomically and durably, gzip-compressed when the name
    /// ends in `.gz`; returns the number of bytes written. How weights edited through
    /// [`Weights::into_parts`] and `Weights::try_from` reach an engine
    /// ([`EvalSource::File`](crate::eval::EvalSource::File)).
    pub fn save(&self, path: &Path) -> Result<usize, WeightsError> {
        let gz = path.extension().is_some_and(|e| e == "gz");
        let bytes = if gz { self.to_gzip_bytes() } else { self.to_bytes() };
        crate::fileio::atomic_write(path, &bytes).map_err(IoError::at(path))?;
        Ok(bytes.len())
    }

    /// CRC-32 of the uncompressed file: identifies the evaluation (books record it).
    pub fn digest(&self) -> u32 {
        let bytes = self.to_bytes();
        u32::from_le_bytes(bytes[bytes.len() - 4..].try_into().expect("4 bytes"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_from_parts_name_each_broken_invariant_and_never_panic_later() {
        let parts = Weights::bundled().into_parts();
        let fault = |edit: &dyn Fn(&mut WeightParts)| {
            let mut p = parts.clone();
            edit(&mut p);
            Weights::try_from(p).err()
        };
        assert_eq!(Weights::try_from(parts.clone()).unwrap(), Weights::bundled());
        assert!(matches!(fault(&|p| p.phases = 0), Some(WeightsFault::Phases { found: 0 })));
        assert!(matches!(fault(&|p| p.phases = 61), Some(WeightsFault::Phases { found: 61 })));
        assert!(matches!(
            fault(&|p| {
                p.values.pop();
            }),
            Some(WeightsFault::Values { .. })
        ));
        assert!(matches!(fault(&|p| p.probcut_depths = 65), Some(WeightsFault::ProbCutDepths { found: 65 })));
        assert!(matches!(
            fault(&|p| {
                p.probcut.pop();
            }),
            Some(WeightsFault::ProbCutLength { .. })
        ));
        assert!(matches!(fault(&|p| p.probcut[3] = f32::NAN), Some(WeightsFault::Sigma { .. })));
        assert!(matches!(fault(&|p| p.probcut[3] = 65.0), Some(WeightsFault::Sigma { .. })));
        assert!(matches!(
            fault(&|p| {
                p.leaf_correction.pop();
            }),
            Some(WeightsFault::LeafCorrectionLength { found: 60 })
        ));
        assert!(matches!(fault(&|p| p.leaf_correction[9] = 513), Some(WeightsFault::LeafCorrection { found: 513 })));
        assert!(matches!(fault(&|p| p.note = "x".repeat(MAX_NOTE + 1)), Some(WeightsFault::NoteLength { .. })));
        // What passes evaluates and writes: no correction, one phase, the longest note.
        let mut one = parts.clone();
        one.phases = 1;
        one.values.truncate(Weights::phase_len());
        one.probcut.truncate(one.probcut_depths);
        one.leaf_correction.clear();
        one.note = "é".repeat(MAX_NOTE / 2);
        let w = Weights::try_from(one).unwrap();
        assert_eq!(Weights::from_bytes(Path::new("w"), &w.to_bytes()).unwrap(), w);
        let _ = crate::eval::PatternEval::new(&w).digest();
        // A note grown in the crate is cut at a character, never past what a file holds.
        let mut w = w;
        w.set_note(format!("a{}", "é".repeat(MAX_NOTE)));
        assert!(w.note().len() <= MAX_NOTE && w.note().len() >= MAX_NOTE - 1);
        assert_eq!(w.digest(), Weights::from_bytes(Path::new("w"), &w.to_bytes()).unwrap().digest());
    }

    #[test]
    fn the_bundled_digest_is_that_of_the_bundled_weights() {
        assert_eq!(Weights::bundled().digest(), BUNDLED_DIGEST);
    }

    fn sample() -> Weights {
        let mut w = Weights::zero(DEFAULT_PHASES);
        for (i, v) in w.values.iter_mut().enumerate() {
            *v = i16::try_from(i64::try_from(i).unwrap() * 7919 % 2001 - 1000).unwrap();
        }
        w.note = "test weights".into();
        w.probcut_depths = 3;
        w.probcut = (0..DEFAULT_PHASES * 3).map(|i| i as f32 / 10.0).collect();
        w
    }

    #[test]
    fn round_trip_plain_and_gzip() {
        let w = sample();
        assert_eq!(Weights::from_bytes(Path::new("w"), &w.to_bytes()).unwrap(), w);
        let gz = w.to_gzip_bytes();
        assert!(gz.len() < w.to_bytes().len());
        assert_eq!(Weights::from_bytes(Path::new("w.gz"), &gz).unwrap(), w);
    }

    #[test]
    fn a_leaf_correction_makes_version_3_and_its_absence_version_2() {
        let plain = sample();
        let bytes = plain.to_bytes();
        assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()), VERSION_WITHOUT_LEAF);
        let mut corrected = sample();
        corrected.leaf_correction = (0..LEAF_ENTRIES).map(|e| i16::try_from(e).unwrap() - 30).collect();
        let v3 = corrected.to_bytes();
        assert_eq!(u32::from_le_bytes(v3[8..12].try_into().unwrap()), VERSION);
        assert_eq!(v3.len(), bytes.len() + 2 * LEAF_ENTRIES);
        let back = Weights::from_bytes(Path::new("w"), &v3).unwrap();
        assert_eq!(back, corrected);
        assert_eq!(back.leaf_correction_at(40), 10);
        assert_eq!(Weights::from_bytes(Path::new("w"), &bytes).unwrap().leaf_correction_at(40), 0);
        assert_ne!(plain.digest(), corrected.digest());
        // Out of range, or a version 3 file without a correction: refused, located.
        let at = 36 + corrected.note.len() + 4 * corrected.probcut.len();
        let mut far = v3.clone();
        far[at + 2..at + 4].copy_from_slice(&(MAX_LEAF_CORRECTION + 1).to_le_bytes());
        let n = far.len();
        let crc = crc32fast::hash(&far[..n - 4]);
        far[n - 4..].copy_from_slice(&crc.to_le_bytes());
        let err = Weights::from_bytes(Path::new("w"), &far).unwrap_err().to_string();
        assert!(err.contains(&format!("byte {}: search-leaf correction", at + 2)), "{err}");
    }

    #[test]
    fn a_gzip_bomb_and_an_overlong_note_are_refused() {
        let mut bomb = MAGIC.to_vec();
        bomb.resize(Weights::largest_file_len() + 4096, 0);
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        std::io::Write::write_all(&mut enc, &bomb).unwrap();
        let gz = enc.finish().unwrap();
        assert!(gz.len() < 64 * 1024, "a small file");
        let err = Weights::from_bytes(Path::new("bomb.tbe.gz"), &gz).unwrap_err().to_string();
        assert!(err.contains("byte 0: decompresses to more than"), "{err}");
        let mut long_note = sample().to_bytes();
        long_note[32..36].copy_from_slice(&u32::try_from(MAX_NOTE + 1).unwrap().to_le_bytes());
        let err = Weights::from_bytes(Path::new("note.tbe"), &long_note).unwrap_err().to_string();
        assert!(err.contains("byte 32: note of 65537 bytes (at most 65536)"), "{err}");
    }

    #[test]
    fn damage_is_located() {
        let bytes = sample().to_bytes();
        let err = |b: &[u8]| Weights::from_bytes(Path::new("x.tbe"), b).unwrap_err().to_string();
        assert!(err(&bytes[..20]).contains("x.tbe: byte 0: not a thorbook weight file"));
        let mut v = bytes.clone();
        v[8] = 9;
        assert!(err(&v).contains("byte 8: version 9"));
        let mut v = bytes.clone();
        let n = v.len();
        v[n - 10] ^= 1;
        assert!(err(&v).contains(&format!("byte {}: checksum", n - 4)));
        assert!(err(&bytes[..bytes.len() - 1]).contains("header describes"));
        let mut gz = sample().to_gzip_bytes();
        gz.truncate(gz.len() / 2);
        assert!(err(&gz).contains("damaged gzip data"));
    }

    #[test]
    fn version_1_files_are_refused_with_a_reason() {
        let mut v1 = sample().to_bytes();
        v1[8..12].copy_from_slice(&1u32.to_le_bytes());
        let err = Weights::from_bytes(Path::new("old.tbe"), &v1).unwrap_err().to_string();
        assert!(err.contains("old.tbe: byte 8: version 1") && err.contains("thorbook train"), "{err}");
    }

    #[test]
    fn phases_cover_the_game() {
        for phases in [1, 30, 60] {
            assert_eq!(phase_of(60, phases), 0);
            assert_eq!(phase_of(1, phases), phases - 1);
            assert_eq!(phase_of(0, phases), phases - 1);
            let mut seen = vec![0; phases];
            for e in 1..=60 {
                seen[phase_of(e, phases)] += 1;
            }
            assert!(seen.iter().all(|&n| n == 60 / phases), "{phases}: {seen:?}");
            for p in 0..phases {
                let (hi, lo) = phase_empties(p, phases);
                assert_eq!((phase_of(hi, phases), phase_of(lo, phases)), (p, p));
                assert_eq!(hi - lo + 1, u32::try_from(60 / phases).unwrap());
            }
        }
        // One phase per ply: odd and even numbers of empties never share one.
        assert_ne!(phase_of(24, 60), phase_of(23, 60));
        assert_eq!(phase_of(24, 30), phase_of(23, 30));
    }
}
