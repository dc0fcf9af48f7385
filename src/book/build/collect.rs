//! A build plan's positions collected in bounded memory: every position of every game
//! (canonical board, games, wins, draws) goes into one fixed buffer; when it fills, the
//! buffer is sorted by key and board and equal positions are folded together; when
//! folding no longer frees half of it, it is spilled as a sorted run to the work
//! directory. The runs are then merged in key order, positions below the game minimum
//! dropped and key collisions refused, and each position is handed on as it comes. The
//! result is the same, position for position, as collecting in memory (the tests'
//! naive reference), whatever the budget. Plans, builds, updates and learning all
//! collect here.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use rayon::slice::ParallelSliceMut;

use super::nodes::{decode_node, encode_node, io, PositionsError, PositionsFault, NODE_FIELDS};
use super::{BuildError, GameLine, Node};
use crate::board::{Board, Color};
use crate::position::Position;

#[cfg(any(feature = "cli", feature = "testing", test))]
/// The memory a plan's collection may use for its buffer by default, in MiB: with the
/// keys a plan keeps (8 bytes a position), planning 10^8 positions stays within 2 GiB.
pub(crate) const DEFAULT_SORT_MIB: u32 = 768;
/// [`DEFAULT_SORT_MIB`] in bytes.
#[cfg(test)]
pub(crate) const DEFAULT_SORT_BUDGET: usize = (DEFAULT_SORT_MIB as usize) << 20;

/// The smallest budget accepted: a buffer of 64 positions (tests force many runs).
const MIN_ENTRIES: usize = 64;

/// Positions are buffered as [`Node`]s and spilled in `nodes.bin`'s encoding of them,
/// ordered by key and board.
fn order(n: &Node) -> (u64, Board) {
    (n.key, n.board)
}

fn fold(into: &mut Node, other: &Node) {
    into.games = into.games.saturating_add(other.games);
    into.wins = into.wins.saturating_add(other.wins);
    into.draws = into.draws.saturating_add(other.draws);
}

/// What the collection saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Collected {
    /// Positions handed on (at or above the game minimum).
    pub positions: u64,
    /// Sorted runs spilled to disk (0: everything fitted in the buffer).
    pub runs: usize,
}

/// Sorted runs on disk, removed when dropped.
struct Runs {
    dir: PathBuf,
    paths: Vec<PathBuf>,
}

impl Drop for Runs {
    fn drop(&mut self) {
        for p in &self.paths {
            let _ = std::fs::remove_file(p);
        }
    }
}

impl Runs {
    fn spill(&mut self, entries: &[Node]) -> Result<(), PositionsError> {
        let path = self.dir.join(format!(".collect-{}-{:04}.run", std::process::id(), self.paths.len()));
        let file = File::create(&path).map_err(io(&path))?;
        self.paths.push(path.clone());
        let mut out = BufWriter::with_capacity(1 << 20, file);
        for e in entries {
            out.write_all(&encode_node(e)).map_err(io(&path))?;
        }
        out.flush().map_err(io(&path))
    }
}

/// A run being merged: its reader and its next entry.
struct RunReader {
    path: PathBuf,
    reader: BufReader<File>,
    read: u64,
}

impl RunReader {
    fn next(&mut self) -> Result<Option<Node>, PositionsError> {
        let mut b = [0u8; NODE_FIELDS];
        match self.reader.read_exact(&mut b) {
            Ok(()) => {
                let index = self.read;
                self.read += 1;
                let bad = |problem| PositionsError::file(&self.path, PositionsFault::Position { index, problem });
                decode_node(&b).map(Some).map_err(bad)
            }
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
            Err(e) => Err(io(&self.path)(e)),
        }
    }
}

/// Sorts `buf` and folds equal positions together, in place; the number left.
fn sort_and_fold(buf: &mut [Node]) -> usize {
    buf.par_sort_unstable_by_key(order);
    let mut kept = 0;
    for i in 0..buf.len() {
        if kept > 0 && order(&buf[kept - 1]) == order(&buf[i]) {
            let e = buf[i];
            fold(&mut buf[kept - 1], &e);
        } else {
            buf[kept] = buf[i];
            kept += 1;
        }
    }
    kept
}

#[cfg(any(feature = "cli", feature = "testing", test))]
/// Collects the positions of `games` up to `max_ply` in a buffer of at most
/// `budget` bytes, spilling sorted runs to `dir`, and hands each position reached by at
/// least `min_games` games to `sink` in (key, board) order.
pub(crate) fn collect(
    games: impl Iterator<Item = impl std::borrow::Borrow<GameLine>>,
    max_ply: u32,
    min_games: u32,
    dir: &Path,
    budget: usize,
    sink: &mut dyn FnMut(&Node) -> Result<(), PositionsError>,
) -> Result<Collected, PositionsError> {
    let mut collector = Collector::new(dir, budget)?;
    for (g, game) in games.enumerate() {
        collector.add_game(g, game.borrow(), max_ply)?;
    }
    collector.finish(min_games, sink)
}

/// The one collector of positions (plans, builds, updates and learning): positions
/// added one at a time, with their counts, are folded by canonical board in a bounded
/// buffer and sorted runs on disk, then handed on in key order by
/// [`Collector::finish`].
pub(crate) struct Collector {
    buf: Vec<Node>,
    capacity: usize,
    runs: Runs,
}

impl Collector {
    /// A collector whose buffer takes at most `budget` bytes, spilling runs to `dir`.
    pub(crate) fn new(dir: &Path, budget: usize) -> Result<Collector, PositionsError> {
        let capacity = (budget / std::mem::size_of::<Node>()).max(MIN_ENTRIES);
        let mut buf: Vec<Node> = Vec::new();
        buf.try_reserve_exact(capacity).map_err(|_| PositionsError::Memory { bytes: budget })?;
        Ok(Collector { buf, capacity, runs: Runs { dir: dir.to_path_buf(), paths: Vec::new() } })
    }

    /// Adds a position (canonical board, its key and counts).
    pub(crate) fn add(&mut self, node: Node) -> Result<(), PositionsError> {
        if self.buf.len() == self.capacity {
            let kept = sort_and_fold(&mut self.buf);
            self.buf.truncate(kept);
            if kept > self.capacity / 2 {
                self.runs.spill(&self.buf)?;
                self.buf.clear();
            }
        }
        self.buf.push(node);
        Ok(())
    }

    /// Adds every position of game number `g` up to `max_ply`, each counted once with
    /// the game's result for the side to move.
    pub(crate) fn add_game(&mut self, g: usize, game: &GameLine, max_ply: u32) -> Result<(), PositionsError> {
        let mut pos = Position::START;
        let black = game.black_score.map(i32::from);
        for ply in 0..=max_ply as usize {
            let board = pos.board.canonical().0;
            let mover = black.map(|b| if pos.side == Color::Black { b } else { 64 - b });
            self.add(Node {
                key: board.key(),
                board,
                games: 1,
                wins: u32::from(mover.is_some_and(|m| m > 32)),
                draws: u32::from(mover == Some(32)),
            })?;
            let Some(&mv) = game.moves.get(ply) else { break };
            if ply == max_ply as usize {
                break;
            }
            pos = pos.try_play(mv).map_err(|e| BuildError::Game { game: g, source: e.at(ply + 1) })?;
        }
        Ok(())
    }

    /// Hands each position reached by at least `min_games` games to `sink` in (key,
    /// board) order, two boards of one key being an error.
    pub(crate) fn finish(
        self,
        min_games: u32,
        sink: &mut dyn FnMut(&Node) -> Result<(), PositionsError>,
    ) -> Result<Collected, PositionsError> {
        let Collector { mut buf, mut runs, .. } = self;
        let kept = sort_and_fold(&mut buf);
        buf.truncate(kept);
        let mut out = Output { min_games: min_games.max(1), last: None, positions: 0, sink };
        if runs.paths.is_empty() {
            for e in &buf {
                out.push(*e)?;
            }
            return Ok(Collected { positions: out.finish()?, runs: 0 });
        }
        runs.spill(&buf)?;
        drop(buf);
        let spilled = runs.paths.len();
        let mut readers = runs
            .paths
            .iter()
            .map(|p| {
                let file = File::open(p).map_err(io(p))?;
                Ok(RunReader { path: p.clone(), reader: BufReader::with_capacity(1 << 20, file), read: 0 })
            })
            .collect::<Result<Vec<_>, PositionsError>>()?;
        let mut heap = BinaryHeap::new();
        for (i, r) in readers.iter_mut().enumerate() {
            if let Some(e) = r.next()? {
                heap.push(Reverse(((e.key, e.board), i, HeapEntry(e))));
            }
        }
        let mut current: Option<Node> = None;
        while let Some(Reverse((_, i, HeapEntry(e)))) = heap.pop() {
            match &mut current {
                Some(c) if order(c) == order(&e) => fold(c, &e),
                _ => {
                    if let Some(done) = current.replace(e) {
                        out.push(done)?;
                    }
                }
            }
            if let Some(next) = readers[i].next()? {
                heap.push(Reverse(((next.key, next.board), i, HeapEntry(next))));
            }
        }
        if let Some(done) = current {
            out.push(done)?;
        }
        Ok(Collected { positions: out.finish()?, runs: spilled })
    }
}

/// An entry in the merge's heap, ordered by its (key, board) beside it.
struct HeapEntry(Node);

impl PartialEq for HeapEntry {
    fn eq(&self, _: &HeapEntry) -> bool {
        true
    }
}
impl Eq for HeapEntry {}
impl PartialOrd for HeapEntry {
    fn partial_cmp(&self, other: &HeapEntry) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for HeapEntry {
    fn cmp(&self, _: &HeapEntry) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

/// The merged positions on their way out: the game minimum applied, key collisions
/// refused (two boards with one key).
struct Output<'s> {
    min_games: u32,
    last: Option<Node>,
    positions: u64,
    sink: &'s mut dyn FnMut(&Node) -> Result<(), PositionsError>,
}

impl Output<'_> {
    fn push(&mut self, e: Node) -> Result<(), PositionsError> {
        if e.games < self.min_games {
            return Ok(());
        }
        if let Some(last) = self.last.replace(e) {
            if last.key == e.key {
                return Err(BuildError::collision(&last, &e).into());
            }
            self.emit(last)?;
        }
        Ok(())
    }

    fn emit(&mut self, e: Node) -> Result<(), PositionsError> {
        self.positions += 1;
        (self.sink)(&e)
    }

    fn finish(mut self) -> Result<u64, PositionsError> {
        if let Some(last) = self.last.take() {
            self.emit(last)?;
        }
        Ok(self.positions)
    }
}
