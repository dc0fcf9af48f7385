//! The weight file of the trained evaluation: its byte layout, reading with located
//! errors, writing, and the bundled copy.
//!
//! Layout (little-endian; version 1), documented for other programs in `book-format.md`:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `TBKEVAL\x1a` |
//! | 8 | 4 | version (1) |
//! | 12 | 4 | pattern set (1: the 11 patterns of [`super::pattern::PATTERNS`]) |
//! | 16 | 4 | phases `P` |
//! | 20 | 4 | weights per phase `S` (pattern slots; the bias is extra) |
//! | 24 | 4 | scale: weight units per disc |
//! | 28 | 4 | Multi-ProbCut depths `D` (0: no table) |
//! | 32 | 4 | note length `N` |
//! | 36 | N | note (UTF-8: how the weights were made) |
//! | … | 4·P·D | ProbCut σ (f32, discs) per phase, then per deep depth 0..D |
//! | … | 2·P·(1+S) | per phase: the bias, then the `S` slot weights (i16) |
//! | end−4 | 4 | CRC-32 of every byte before it |
//!
//! The bundled file is stored gzip-compressed; [`Weights::from_bytes`] accepts either.
// Input handling: every narrowing or sign-changing conversion is checked (`try_from`,
// `from_le_bytes`), never a silent `as`.
#![deny(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_possible_wrap)]

use std::io::Read;
use std::path::Path;

use super::pattern::pattern_set;

/// File magic.
pub const MAGIC: &[u8; 8] = b"TBKEVAL\x1a";
/// The version this build reads and writes.
pub const VERSION: u32 = 1;
/// The pattern set this build evaluates.
pub const PATTERN_SET: u32 = 1;
/// Game phases: one per two plies.
pub const PHASES: usize = 30;
/// Weight units per disc.
pub const SCALE: i32 = 64;
/// Longest note a weight file may carry (a line or a paragraph on how it was made).
pub const MAX_NOTE: usize = 1 << 16;
/// Most ProbCut depths a weight file may carry.
pub const MAX_PROBCUT_DEPTHS: usize = 64;

/// The phase of a position with `empties` empty squares (0..PHASES).
#[inline]
pub fn phase_of(empties: u32) -> usize {
    usize::try_from((60 - empties.min(60)) / 2).map_or(0, |p| p.min(PHASES - 1))
}

/// The empties a phase covers, most first.
pub fn phase_empties(phase: usize) -> (u32, u32) {
    let hi = 60u32.saturating_sub(2 * u32::try_from(phase).unwrap_or(30));
    (hi, hi.saturating_sub(1))
}

/// A damaged, foreign or incompatible weight file.
#[derive(Debug, thiserror::Error)]
pub enum WeightsError {
    /// The file could not be read.
    #[error("{file}: {source}")]
    Io {
        /// The file.
        file: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The bytes are not a valid weight file.
    #[error("{file}: byte {offset}: {message}")]
    Invalid {
        /// The file.
        file: String,
        /// Byte offset of the fault (in the decompressed data).
        offset: usize,
        /// What is wrong.
        message: String,
    },
}

/// Trained weights as stored: per phase a bias and one weight per pattern slot, in
/// units of 1/[`SCALE`] disc, plus the Multi-ProbCut table.
#[derive(Clone, Debug, PartialEq)]
pub struct Weights {
    /// How the weights were made (free text).
    pub note: String,
    /// Per phase: the bias followed by the slot weights (`1 + slot_count` each).
    pub values: Vec<i16>,
    /// ProbCut σ in discs, `probcut[phase * probcut_depths + depth]`; 0 = no cut.
    pub probcut: Vec<f32>,
    /// Deep depths in the ProbCut table.
    pub probcut_depths: usize,
}

impl Weights {
    /// Weights per phase, the bias included.
    pub fn phase_len() -> usize {
        1 + pattern_set().slot_count
    }

    /// All zero (an evaluation that always says 0).
    pub fn zero() -> Weights {
        Weights {
            note: String::new(),
            values: vec![0; PHASES * Weights::phase_len()],
            probcut: Vec::new(),
            probcut_depths: 0,
        }
    }

    /// The weights of one phase (bias first).
    pub fn phase(&self, phase: usize) -> &[i16] {
        let n = Weights::phase_len();
        &self.values[phase * n..(phase + 1) * n]
    }

    /// The file bytes (uncompressed).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(40 + self.note.len() + self.values.len() * 2 + self.probcut.len() * 4);
        out.extend_from_slice(MAGIC);
        for v in [
            VERSION,
            PATTERN_SET,
            u32::try_from(PHASES).expect("30 phases"),
            u32::try_from(pattern_set().slot_count).expect("the pattern set has fewer than 2^32 slots"),
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
        for w in &self.values {
            out.extend_from_slice(&w.to_le_bytes());
        }
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    /// The file bytes, gzip-compressed (how the bundled copy is stored).
    pub fn to_gzip_bytes(&self) -> Vec<u8> {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        std::io::Write::write_all(&mut enc, &self.to_bytes()).expect("writing to memory");
        enc.finish().expect("writing to memory")
    }

    /// The size of the largest valid file: the longest note and the most ProbCut depths.
    fn largest_file_len() -> usize {
        36 + MAX_NOTE + 4 * PHASES * MAX_PROBCUT_DEPTHS + 2 * PHASES * (1 + pattern_set().slot_count) + 4
    }

    /// Parses a weight file (plain or gzip-compressed); `file` names it in errors.
    pub fn from_bytes(file: &str, bytes: &[u8]) -> Result<Weights, WeightsError> {
        let invalid =
            |offset: usize, message: String| WeightsError::Invalid { file: file.to_string(), offset, message };
        let plain;
        let bytes = if bytes.starts_with(&[0x1f, 0x8b]) {
            // Decompress no further than the largest valid file: a small gzip bomb must
            // not make thorbook allocate gigabytes before the sizes are checked.
            let largest = Weights::largest_file_len();
            let mut out = Vec::new();
            flate2::read::GzDecoder::new(bytes)
                .take(u64::try_from(largest).unwrap_or(u64::MAX).saturating_add(1))
                .read_to_end(&mut out)
                .map_err(|e| invalid(0, format!("damaged gzip data: {e}")))?;
            if out.len() > largest {
                return Err(invalid(
                    0,
                    format!("decompresses to more than {largest} bytes, the most a weight file holds"),
                ));
            }
            plain = out;
            &plain[..]
        } else {
            bytes
        };
        if bytes.len() < 40 || &bytes[..8] != MAGIC {
            return Err(invalid(0, "not a thorbook weight file (magic TBKEVAL)".into()));
        }
        let field = |i: usize| u32::from_le_bytes(bytes[8 + 4 * i..12 + 4 * i].try_into().expect("4 bytes"));
        let version = field(0);
        if version != VERSION {
            return Err(invalid(8, format!("version {version}, this build reads version {VERSION}")));
        }
        if field(1) != PATTERN_SET {
            return Err(invalid(12, format!("pattern set {}, this build evaluates set {PATTERN_SET}", field(1))));
        }
        if field(2) as usize != PHASES {
            return Err(invalid(16, format!("{} phases, expected {PHASES}", field(2))));
        }
        let slots = pattern_set().slot_count;
        if field(3) as usize != slots {
            return Err(invalid(20, format!("{} weights per phase, expected {slots}", field(3))));
        }
        if i32::try_from(field(4)) != Ok(SCALE) {
            return Err(invalid(24, format!("scale {}, expected {SCALE}", field(4))));
        }
        let depths = field(5) as usize;
        if depths > MAX_PROBCUT_DEPTHS {
            return Err(invalid(28, format!("{depths} ProbCut depths (at most {MAX_PROBCUT_DEPTHS})")));
        }
        let note_len = field(6) as usize;
        if note_len > MAX_NOTE {
            return Err(invalid(32, format!("note of {note_len} bytes (at most {MAX_NOTE})")));
        }
        let values_len = PHASES * (1 + slots);
        let expected = 36usize
            .checked_add(note_len)
            .and_then(|n| n.checked_add(4 * PHASES * depths + 2 * values_len + 4))
            .ok_or_else(|| invalid(32, "note length out of range".into()))?;
        if bytes.len() != expected {
            return Err(invalid(
                bytes.len().min(expected),
                format!("file is {} bytes, its header describes {expected}", bytes.len()),
            ));
        }
        let body = &bytes[..expected - 4];
        let stored = u32::from_le_bytes(bytes[expected - 4..].try_into().expect("4 bytes"));
        let actual = crc32fast::hash(body);
        if stored != actual {
            return Err(invalid(expected - 4, format!("checksum {stored:08x} does not match the data ({actual:08x})")));
        }
        let note = std::str::from_utf8(&bytes[36..36 + note_len])
            .map_err(|e| invalid(36 + e.valid_up_to(), "note is not UTF-8".into()))?
            .to_string();
        let mut at = 36 + note_len;
        let mut probcut = Vec::with_capacity(PHASES * depths);
        for _ in 0..PHASES * depths {
            let s = f32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
            if !(s.is_finite() && (0.0..=64.0).contains(&s)) {
                return Err(invalid(at, format!("ProbCut σ {s} out of range 0..=64")));
            }
            probcut.push(s);
            at += 4;
        }
        let values = bytes[at..at + 2 * values_len].chunks_exact(2).map(|c| i16::from_le_bytes([c[0], c[1]])).collect();
        Ok(Weights { note, values, probcut, probcut_depths: depths })
    }

    /// Reads a weight file.
    pub fn load(path: &Path) -> Result<Weights, WeightsError> {
        let name = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|source| WeightsError::Io { file: name.clone(), source })?;
        Weights::from_bytes(&name, &bytes)
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

    fn sample() -> Weights {
        let mut w = Weights::zero();
        for (i, v) in w.values.iter_mut().enumerate() {
            *v = i16::try_from(i64::try_from(i).unwrap() * 7919 % 2001 - 1000).unwrap();
        }
        w.note = "test weights".into();
        w.probcut_depths = 3;
        w.probcut = (0..PHASES * 3).map(|i| i as f32 / 10.0).collect();
        w
    }

    #[test]
    fn round_trip_plain_and_gzip() {
        let w = sample();
        assert_eq!(Weights::from_bytes("w", &w.to_bytes()).unwrap(), w);
        let gz = w.to_gzip_bytes();
        assert!(gz.len() < w.to_bytes().len());
        assert_eq!(Weights::from_bytes("w.gz", &gz).unwrap(), w);
    }

    #[test]
    fn a_gzip_bomb_and_an_overlong_note_are_refused() {
        let mut bomb = MAGIC.to_vec();
        bomb.resize(Weights::largest_file_len() + 4096, 0);
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        std::io::Write::write_all(&mut enc, &bomb).unwrap();
        let gz = enc.finish().unwrap();
        assert!(gz.len() < 64 * 1024, "a small file");
        let err = Weights::from_bytes("bomb.tbe.gz", &gz).unwrap_err().to_string();
        assert!(err.contains("byte 0: decompresses to more than"), "{err}");
        let mut long_note = sample().to_bytes();
        long_note[32..36].copy_from_slice(&u32::try_from(MAX_NOTE + 1).unwrap().to_le_bytes());
        let err = Weights::from_bytes("note.tbe", &long_note).unwrap_err().to_string();
        assert!(err.contains("byte 32: note of 65537 bytes (at most 65536)"), "{err}");
    }

    #[test]
    fn damage_is_located() {
        let bytes = sample().to_bytes();
        let err = |b: &[u8]| Weights::from_bytes("x.tbe", b).unwrap_err().to_string();
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
    fn phases_cover_the_game() {
        assert_eq!(phase_of(60), 0);
        assert_eq!(phase_of(59), 0);
        assert_eq!(phase_of(58), 1);
        assert_eq!(phase_of(1), PHASES - 1);
        assert_eq!(phase_of(0), PHASES - 1);
        for p in 0..PHASES {
            let (hi, lo) = phase_empties(p);
            assert_eq!(phase_of(hi), p);
            assert_eq!(phase_of(lo), p);
        }
    }
}
