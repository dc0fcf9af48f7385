//! Where WTHOR bytes come from: files on disk (memory-mapped), directories of them, or
//! the archives bundled into the binary from `data/thor/`.

use std::path::{Path, PathBuf};

use super::{Anomaly, AnomalyKind, ThorError};
use crate::fileio::{read_mapped, Bytes};

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
}

impl Source {
    /// Bytes from memory (the bundled archives).
    pub(crate) fn from_static(name: &str, bytes: &'static [u8]) -> Source {
        Source { name: name.to_string(), data: Bytes::Static(bytes) }
    }

    /// Bytes already in memory (an upload, standard input, a fuzzer's input).
    pub fn from_vec(name: &str, bytes: Vec<u8>) -> Source {
        Source { name: name.to_string(), data: Bytes::Owned(bytes) }
    }

    /// A file on disk, memory-mapped.
    pub fn open(path: &Path) -> Result<Source, Anomaly> {
        let name = path.display().to_string();
        match read_mapped(path) {
            Ok(data) => Ok(Source { name, data }),
            Err(e) => Err(Anomaly::file(&name, AnomalyKind::Io { message: e.to_string() })),
        }
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        self.data.as_ref()
    }
}

/// The bundled archives (2013–2015, players, tournaments).
pub fn bundled_sources() -> Vec<Source> {
    BUNDLED.iter().map(|(name, bytes)| Source::from_static(name, bytes)).collect()
}

fn is_wthor_name(p: &Path) -> bool {
    let ext = p.extension().map(|e| e.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    matches!(ext.as_str(), "wtb" | "wtd" | "jou" | "trn")
}

/// Expands files and directories into WTHOR file paths: a directory contributes its
/// `.wtb`, `.wtd`, `.JOU` and `.TRN` files (any case), sorted by name.
pub fn expand_paths(paths: &[PathBuf]) -> Result<Vec<PathBuf>, ThorError> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let entries = std::fs::read_dir(p)
                .map_err(|e| ThorError::Path { path: p.display().to_string(), message: e.to_string() })?;
            let mut found: Vec<PathBuf> =
                entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|f| f.is_file() && is_wthor_name(f)).collect();
            if found.is_empty() {
                return Err(ThorError::Path {
                    path: p.display().to_string(),
                    message: "directory holds no WTHOR files (.wtb, .wtd, .JOU, .TRN)".into(),
                });
            }
            found.sort();
            out.extend(found);
        } else if p.exists() {
            out.push(p.clone());
        } else {
            return Err(ThorError::Path { path: p.display().to_string(), message: "no such file or directory".into() });
        }
    }
    Ok(out)
}
