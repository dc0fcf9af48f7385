//! The analysis store: every position a review searched, with every legal move's
//! value, keyed by the position (up to the 8 symmetries) and the settings that
//! searched it, so that reviewing a game again, or another game through the same
//! positions, searches nothing twice (Egaroucid #631).
//!
//! On disk a store is a file of JSON lines, one position each, appended as positions
//! are searched (one `write` per line, so concurrent reviews appending to one store
//! do not interleave lines on a local file system):
//!
//! ```text
//! {"settings":"thorbook 0.1.0 | Strength { .. } | eval 1a2b3c4d","board":"0000000810000000/0000001008000000","depth":12,"exact":false,"moves":[["d3",2],["c4",2],["e6",2],["f5",2]]}
//! ```
//!
//! `board` is the canonical image of the position (side to move first, then the
//! opponent, as hexadecimal bitboards) and `moves` are in that image's orientation,
//! best first. `settings` names everything that changes a value: thorbook's version,
//! the search's strength (depth, exact threshold, width) and the evaluation's digest.
//! A store is a cache: a damaged line (a write cut short by a crash) is skipped and
//! counted, never an error, and the line after it starts clean.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::board::Board;
use crate::fileio::IoError;
use crate::square::Move;

/// Appended lines between two `fsync`s: a crash loses at most these (searches, not
/// data), and a review of short searches does not wait on the disk for each.
const SYNC_EVERY: usize = 32;

/// What a search found in one position: every legal move's value, best first.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct StoredAnalysis {
    /// Depth of the search (the empties for an exact one).
    pub depth: u32,
    /// Solved to the end.
    pub exact: bool,
    /// Every legal move and its value for the side to move, best first.
    pub moves: Vec<(Move, i32)>,
}

/// One line of the file.
#[derive(Serialize, Deserialize)]
struct Line {
    settings: String,
    board: String,
    depth: u32,
    exact: bool,
    moves: Vec<(String, i32)>,
}

/// Analyses of positions kept across reviews, in memory and, when opened from a file,
/// on disk. Shared by reference between threads (`--all` reviews games in parallel
/// through one store).
pub struct AnalysisStore {
    path: Option<PathBuf>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The settings strings seen, an entry's key holding the index.
    settings: Vec<String>,
    entries: HashMap<(u32, Board), StoredAnalysis>,
    file: Option<File>,
    /// Lines appended since the last `fsync`.
    unsynced: usize,
    /// Lines of the file that could not be read.
    damaged: usize,
    /// The first of them (1-based).
    first_damaged: Option<usize>,
}

impl State {
    fn settings_id(&mut self, settings: &str) -> u32 {
        match self.settings.iter().position(|s| s == settings) {
            Some(i) => u32::try_from(i).unwrap_or(u32::MAX),
            None => {
                self.settings.push(settings.to_string());
                u32::try_from(self.settings.len() - 1).unwrap_or(u32::MAX)
            }
        }
    }
}

impl std::fmt::Debug for AnalysisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnalysisStore").field("path", &self.path).field("positions", &self.len()).finish()
    }
}

impl AnalysisStore {
    /// A store kept in memory only (gone with the value).
    pub fn in_memory() -> AnalysisStore {
        AnalysisStore { path: None, state: Mutex::new(State::default()) }
    }

    /// The store in `path`, created (with its directory) when missing; what it holds
    /// is read now, and what is searched from now on is appended to it.
    pub fn open(path: &Path) -> Result<AnalysisStore, IoError> {
        let at = IoError::at(path);
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(IoError::at(dir))?;
        }
        let mut file = OpenOptions::new().read(true).append(true).create(true).open(path).map_err(&at)?;
        let mut text = Vec::new();
        file.read_to_end(&mut text).map_err(&at)?;
        let mut state = State::default();
        for (i, line) in text.split(|&b| b == b'\n').enumerate() {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match std::str::from_utf8(line).ok().and_then(parse_line) {
                Some((settings, board, analysis)) => {
                    let id = state.settings_id(&settings);
                    state.entries.insert((id, board), analysis);
                }
                None => {
                    state.damaged += 1;
                    state.first_damaged.get_or_insert(i + 1);
                }
            }
        }
        // A last line cut short by a crash: what is appended next starts a line of its
        // own, and the damaged one stays skipped.
        if text.last().is_some_and(|&b| b != b'\n') {
            file.write_all(b"\n").map_err(&at)?;
        }
        state.file = Some(file);
        Ok(AnalysisStore { path: Some(path.to_path_buf()), state: Mutex::new(state) })
    }

    /// Positions held (under every settings).
    pub fn len(&self) -> usize {
        self.lock().entries.len()
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Lines of the file that could not be read and were skipped, and the first of
    /// them (1-based): a write cut short, or a file edited by hand.
    pub fn damaged_lines(&self) -> (usize, Option<usize>) {
        let s = self.lock();
        (s.damaged, s.first_damaged)
    }

    /// Writes what was appended through to the disk.
    pub fn sync(&self) -> Result<(), IoError> {
        let mut s = self.lock();
        s.unsynced = 0;
        match (&s.file, &self.path) {
            (Some(f), Some(path)) => f.sync_data().map_err(IoError::at(path)),
            _ => Ok(()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The analysis of `board` (any orientation) under `settings`, its moves turned to
    /// `board`'s orientation.
    pub(crate) fn get(&self, settings: &str, board: &Board) -> Option<StoredAnalysis> {
        let (canonical, t) = board.canonical();
        let s = self.lock();
        let id = u32::try_from(s.settings.iter().position(|x| x == settings)?).ok()?;
        let stored = s.entries.get(&(id, canonical))?;
        let back = t.inverse();
        Some(StoredAnalysis {
            moves: stored.moves.iter().map(|&(m, v)| (back.apply_move(m), v)).collect(),
            ..stored.clone()
        })
    }

    /// Keeps the analysis of `board` (moves in `board`'s orientation) under
    /// `settings`, appending it to the file.
    pub(crate) fn put(&self, settings: &str, board: &Board, analysis: &StoredAnalysis) -> Result<(), IoError> {
        let (canonical, t) = board.canonical();
        let stored = StoredAnalysis {
            moves: analysis.moves.iter().map(|&(m, v)| (t.apply_move(m), v)).collect(),
            ..analysis.clone()
        };
        let line = Line {
            settings: settings.to_string(),
            board: format!("{:016x}/{:016x}", canonical.player, canonical.opponent),
            depth: stored.depth,
            exact: stored.exact,
            moves: stored.moves.iter().map(|(m, v)| (m.to_string(), *v)).collect(),
        };
        let mut text = serde_json::to_vec(&line).map_err(std::io::Error::other).map_err(self.io_at())?;
        text.push(b'\n');
        let mut s = self.lock();
        let id = s.settings_id(settings);
        if s.entries.insert((id, canonical), stored).is_some() {
            // Found again by a review that raced another to the same position.
            return Ok(());
        }
        let Some(file) = s.file.as_mut() else { return Ok(()) };
        file.write_all(&text).map_err(self.io_at())?;
        s.unsynced += 1;
        if s.unsynced >= SYNC_EVERY {
            s.unsynced = 0;
            if let Some(f) = &s.file {
                f.sync_data().map_err(self.io_at())?;
            }
        }
        Ok(())
    }

    fn io_at(&self) -> impl Fn(std::io::Error) -> IoError + '_ {
        move |source| IoError::new(self.path.clone().unwrap_or_default(), source)
    }
}

impl Drop for AnalysisStore {
    fn drop(&mut self) {
        // Best effort: `sync` is how a caller learns of a failure.
        let _ = self.sync();
    }
}

/// A line's settings, canonical board and analysis; `None` when anything is wrong.
fn parse_line(text: &str) -> Option<(String, Board, StoredAnalysis)> {
    let line: Line = serde_json::from_str(text).ok()?;
    let (p, o) = line.board.split_once('/')?;
    let board = Board { player: u64::from_str_radix(p, 16).ok()?, opponent: u64::from_str_radix(o, 16).ok()? };
    if board.player & board.opponent != 0 || line.moves.is_empty() {
        return None;
    }
    let legal = board.legal_moves();
    let moves = line
        .moves
        .iter()
        .map(|(m, v)| {
            let mv: Move = m.parse().ok()?;
            // A value outside the scale, or a move not legal here, is damage.
            let legal_here = mv.square().is_some_and(|sq| legal & sq.bit() != 0);
            (legal_here && (-64..=64).contains(v)).then_some((mv, *v))
        })
        .collect::<Option<Vec<_>>>()?;
    Some((line.settings, board, StoredAnalysis { depth: line.depth, exact: line.exact, moves }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::position::Position;
    use crate::symmetry::Transform;

    fn analysis_of(pos: &Position) -> StoredAnalysis {
        let moves: Vec<(Move, i32)> = crate::board::Squares(pos.board.legal_moves())
            .enumerate()
            .map(|(i, sq)| (Move::Place(sq), 10 - i as i32))
            .collect();
        StoredAnalysis { depth: 7, exact: false, moves }
    }

    #[test]
    fn a_stored_analysis_comes_back_in_every_orientation_and_after_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/reviews.jsonl");
        let pos = Position::START.play_sequence(&crate::square::parse_move_sequence("f5d6c3d3c4").unwrap()).unwrap();
        let analysis = analysis_of(&pos);
        {
            let store = AnalysisStore::open(&path).unwrap();
            store.put("s", &pos.board, &analysis).unwrap();
            assert_eq!(store.get("s", &pos.board), Some(analysis.clone()));
            assert_eq!(store.get("other settings", &pos.board), None);
        }
        let store = AnalysisStore::open(&path).unwrap();
        assert_eq!((store.len(), store.damaged_lines()), (1, (0, None)));
        for t in Transform::ALL {
            let turned = t.board(&pos.board);
            let want: Vec<(Move, i32)> = analysis.moves.iter().map(|&(m, v)| (t.apply_move(m), v)).collect();
            assert_eq!(store.get("s", &turned).map(|a| a.moves), Some(want), "{t:?}");
        }
    }

    #[test]
    fn damaged_lines_are_skipped_and_counted_and_appending_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("reviews.jsonl");
        let pos = Position::START.play_sequence(&crate::square::parse_move_sequence("f5d6").unwrap()).unwrap();
        AnalysisStore::open(&path).unwrap().put("s", &pos.board, &analysis_of(&pos)).unwrap();
        let good = std::fs::read_to_string(&path).unwrap();
        // Garbage, a move that is not legal there, then a line cut short by a crash.
        let bad_move = good.replacen("[\"", "[\"a1\",0],[\"", 1);
        std::fs::write(&path, format!("{good}garbage\n{bad_move}{}", &good[..good.len() / 2])).unwrap();
        let store = AnalysisStore::open(&path).unwrap();
        assert_eq!((store.len(), store.damaged_lines()), (1, (3, Some(2))));
        let other = Position::START.play_sequence(&crate::square::parse_move_sequence("f5f6").unwrap()).unwrap();
        store.put("s", &other.board, &analysis_of(&other)).unwrap();
        drop(store);
        let store = AnalysisStore::open(&path).unwrap();
        assert_eq!((store.len(), store.damaged_lines().0), (2, 3));
    }
}
