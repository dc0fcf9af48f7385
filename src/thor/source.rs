//! Where game archives come from: files on disk (memory-mapped), directories of them,
//! or the archives bundled into the binary from `data/thor/`; and what a file holds,
//! recognised by its content ([`SourceFormat`], [`Compression`]) with the file name as
//! a hint.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::format::{GAME_RECORD_LEN, HEADER_LEN, PLAYER_RECORD_LEN, TOURNAMENT_RECORD_LEN};
use super::text::TextFormat;
use super::{Anomaly, AnomalyKind, IoStep, ThorError};
use crate::fileio::{read_mapped, Bytes};

/// What a file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SourceFormat {
    /// A WTHOR file: games (`.wtb`, `.wtd`), players (`.JOU`) or tournaments (`.TRN`).
    Wthor,
    /// Games as text.
    Text(TextFormat),
}

impl std::fmt::Display for SourceFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SourceFormat::Wthor => "WTHOR",
            SourceFormat::Text(TextFormat::Ggf) => "GGF",
            SourceFormat::Text(TextFormat::Transcript) => "transcript",
            SourceFormat::Text(TextFormat::Jsonl) => "JSON lines",
            SourceFormat::Text(TextFormat::Logistello) => "Logistello",
        })
    }
}

/// How a file is compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Compression {
    /// Not compressed.
    None,
    /// gzip (`1f 8b`).
    Gzip,
    /// bzip2 (`BZh`), as GGS ships its archives.
    Bzip2,
}

/// Bytes of a streaming read's buffers.
const BUF: usize = 1 << 16;

/// Bytes looked at to recognise a file.
const SNIFF_LEN: usize = 4096;

impl Compression {
    fn detect(bytes: &[u8]) -> Compression {
        if bytes.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if bytes.len() >= 4 && bytes.starts_with(b"BZh") && (b'1'..=b'9').contains(&bytes[3]) {
            Compression::Bzip2
        } else {
            Compression::None
        }
    }

    /// A reader of the decompressed bytes of `input`. Concatenated members (as
    /// `cat a.gz b.gz` and parallel compressors write) are read as one stream.
    fn decode<'a>(self, input: impl BufRead + Send + 'a) -> Box<dyn BufRead + Send + 'a> {
        match self {
            Compression::None => Box::new(input),
            Compression::Gzip => Box::new(BufReader::with_capacity(BUF, flate2::read::MultiGzDecoder::new(input))),
            Compression::Bzip2 => Box::new(BufReader::with_capacity(BUF, bzip2::read::MultiBzDecoder::new(input))),
        }
    }
}

/// The file name without a compression suffix, lower-cased.
fn base_name(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    for suffix in [".bz2", ".gz"] {
        if let Some(base) = lower.strip_suffix(suffix) {
            return base.to_string();
        }
    }
    lower
}

fn has_wthor_extension(name: &str) -> bool {
    let base = base_name(name);
    [".wtb", ".wtd", ".jou", ".trn"].iter().any(|e| base.ends_with(e))
}

/// Whether `bytes` (a whole uncompressed file) have the size a WTHOR header declares.
fn wthor_sizes_agree(bytes: &[u8]) -> bool {
    let Some(head) = bytes.first_chunk::<HEADER_LEN>() else { return false };
    let n1 = u32::from_le_bytes([head[4], head[5], head[6], head[7]]) as usize;
    let n2 = usize::from(u16::from_le_bytes([head[8], head[9]]));
    let body = bytes.len() - HEADER_LEN;
    (n1 > 0 && body == n1 * GAME_RECORD_LEN)
        || (n2 > 0 && (body == n2 * PLAYER_RECORD_LEN || body == n2 * TOURNAMENT_RECORD_LEN))
}

/// The text format of the first bytes of a file, if they are text of one.
fn sniff_text(head: &[u8], name: &str) -> Option<TextFormat> {
    if head.iter().any(|&b| b < 0x09 || (0x0e..0x20).contains(&b) && b != 0x1b) {
        return None;
    }
    let text = String::from_utf8_lossy(head);
    let text = text.trim_start_matches('\u{feff}');
    let base = base_name(name);
    let hint = if base.ends_with(".ggf") {
        Some(TextFormat::Ggf)
    } else if base.ends_with(".jsonl") || base.ends_with(".json") {
        Some(TextFormat::Jsonl)
    } else if base.ends_with(".txt") || base.ends_with(".trans") {
        Some(TextFormat::Transcript)
    } else if base.ends_with(".gam") {
        Some(TextFormat::Logistello)
    } else {
        None
    };
    for line in text.lines() {
        let line = line.trim_start();
        if line.is_empty() {
            continue;
        }
        if line.starts_with("(;") {
            return Some(TextFormat::Ggf);
        }
        if line.starts_with('{') {
            return Some(TextFormat::Jsonl);
        }
        // `+d3-c3…`: a sign, then a square.
        if line.starts_with(['+', '-']) && line.get(1..3).is_some_and(|sq| sq.parse::<crate::square::Square>().is_ok())
        {
            return Some(TextFormat::Logistello);
        }
        if line.starts_with(['#', '%', ';']) {
            continue;
        }
        let first: String = line.chars().take(2).collect();
        return if first.parse::<crate::square::Move>().is_ok() { Some(TextFormat::Transcript) } else { hint };
    }
    // Nothing but blank or comment lines: the name decides (an empty transcript).
    hint.or(Some(TextFormat::Transcript))
}

/// The bundled archives: a few recent years plus the player and tournament files.
const BUNDLED: [(&str, &[u8]); 5] = [
    ("WTH_2013.wtb", include_bytes!("../../data/thor/WTH_2013.wtb")),
    ("WTH_2014.wtb", include_bytes!("../../data/thor/WTH_2014.wtb")),
    ("WTH_2015.wtb", include_bytes!("../../data/thor/WTH_2015.wtb")),
    ("WTHOR.JOU", include_bytes!("../../data/thor/WTHOR.JOU")),
    ("WTHOR.TRN", include_bytes!("../../data/thor/WTHOR.TRN")),
];

/// The bytes of one WTHOR file and the name used in messages.
pub struct Source {
    /// File name or path as the user gave it.
    pub name: String,
    data: Bytes,
    /// The file, for a source read from disk: text is streamed from it rather than
    /// from the map, so that a gigabyte archive read once does not stay resident.
    path: Option<PathBuf>,
}

impl Source {
    /// Bytes from memory (the bundled archives).
    pub(crate) fn from_static(name: &str, bytes: &'static [u8]) -> Source {
        Source { name: name.to_string(), data: Bytes::from_static(bytes), path: None }
    }

    /// Bytes already in memory (an upload, standard input, a fuzzer's input).
    pub fn from_vec(name: &str, bytes: Vec<u8>) -> Source {
        Source { name: name.to_string(), data: Bytes::from(bytes), path: None }
    }

    /// A file on disk, memory-mapped.
    pub fn open(path: &Path) -> Result<Source, Anomaly> {
        let name = path.display().to_string();
        match read_mapped(path) {
            Ok(data) => Ok(Source { name, data, path: Some(path.to_path_buf()) }),
            Err(e) => Err(Anomaly::file(&name, AnomalyKind::io(IoStep::Read, &e))),
        }
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        self.data.as_ref()
    }

    /// What the file holds and how it is compressed, recognised by its content (the
    /// name only decides between formats the content leaves open, such as an empty
    /// file). A file none of the readers knows is [`AnomalyKind::UnknownFormat`].
    pub fn format(&self) -> Result<(SourceFormat, Compression), Anomaly> {
        let bytes = self.bytes();
        let compression = Compression::detect(bytes);
        let mut head = Vec::with_capacity(SNIFF_LEN);
        let read = compression.decode(bytes).take(SNIFF_LEN as u64).read_to_end(&mut head);
        if let Err(e) = read {
            return Err(Anomaly::file(&self.name, AnomalyKind::io(IoStep::Decompress, &e)));
        }
        if has_wthor_extension(&self.name) {
            return Ok((SourceFormat::Wthor, compression));
        }
        if let Some(text) = sniff_text(&head, &self.name) {
            return Ok((SourceFormat::Text(text), compression));
        }
        if compression == Compression::None && wthor_sizes_agree(bytes) {
            return Ok((SourceFormat::Wthor, compression));
        }
        Err(Anomaly::file(&self.name, AnomalyKind::UnknownFormat))
    }

    /// The decompressed bytes as a stream: read from the file for a source on disk,
    /// from memory otherwise.
    pub(crate) fn reader(&self, compression: Compression) -> std::io::Result<Box<dyn BufRead + Send + '_>> {
        Ok(match &self.path {
            Some(path) => compression.decode(BufReader::with_capacity(BUF, std::fs::File::open(path)?)),
            None => compression.decode(self.bytes()),
        })
    }
}

/// Whether a file found in a directory is one to read: a WTHOR name, or content a
/// reader recognises.
fn is_archive(path: &Path) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if name.starts_with('.') {
        return false;
    }
    if has_wthor_extension(&name) {
        return true;
    }
    let mut head = Vec::with_capacity(SNIFF_LEN);
    let Ok(file) = std::fs::File::open(path) else { return true };
    if file.take(SNIFF_LEN as u64).read_to_end(&mut head).is_err() {
        return true;
    }
    match Compression::detect(&head) {
        Compression::None => sniff_text(&head, &name).is_some() && !head.is_empty(),
        _ => true,
    }
}

/// The bundled archives (2013–2015, players, tournaments).
pub fn bundled_sources() -> Vec<Source> {
    BUNDLED.iter().map(|(name, bytes)| Source::from_static(name, bytes)).collect()
}

/// Expands files and directories into archive paths: a directory contributes its WTHOR
/// files (`.wtb`, `.wtd`, `.JOU`, `.TRN`, any case) and every file whose content is a
/// game archive (GGF, transcripts, JSON lines, compressed or not), sorted by name; not
/// its subdirectories or hidden files.
pub fn expand_paths(paths: &[PathBuf]) -> Result<Vec<PathBuf>, ThorError> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let entries = std::fs::read_dir(p).map_err(crate::fileio::IoError::at(p))?;
            let mut found: Vec<PathBuf> =
                entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|f| f.is_file() && is_archive(f)).collect();
            if found.is_empty() {
                return Err(ThorError::NoArchives { dir: p.clone() });
            }
            found.sort();
            out.extend(found);
        } else if p.exists() {
            out.push(p.clone());
        } else {
            return Err(ThorError::Missing { path: p.clone() });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each text format is recognised by its first line, whatever the file is called;
    /// the name decides only where the content does not.
    #[test]
    fn text_formats_are_recognised_by_content() {
        let cases: [(&[u8], &str, Option<TextFormat>); 7] = [
            (b"+d3-c3+c4-e3: -04 10\n", "games.txt", Some(TextFormat::Logistello)),
            (b"# book\n-d3+c3\n", "x", Some(TextFormat::Logistello)),
            (b"f5d6c3 +4\n", "book.gam", Some(TextFormat::Transcript)),
            (b"(;GM[Othello]\n", "x.txt", Some(TextFormat::Ggf)),
            (b"{\"moves\": \"f5\"}\n", "x.gam", Some(TextFormat::Jsonl)),
            (b"# nothing yet\n", "empty.gam", Some(TextFormat::Logistello)),
            (b"-- f5\n", "x", Some(TextFormat::Transcript)),
        ];
        for (head, name, want) in cases {
            assert_eq!(sniff_text(head, name), want, "{:?} named {name}", String::from_utf8_lossy(head));
        }
    }
}
