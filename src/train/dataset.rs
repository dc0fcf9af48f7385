//! Training positions and their targets, from games.
//!
//! A WTHOR game stores black's theoretical score: its disc count under perfect play
//! from the position with 24 empties (P3). That value is exact for that position and,
//! for the positions before it, a far better target than the final result: it drops
//! every error made after move 36. Positions with at most `solve_at` empties are
//! solved exactly instead (milliseconds each); those between `solve_at` and 24
//! empties keep the theoretical score as an approximation.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

use rayon::prelude::*;

use super::{Progress, ProgressFn, Stage};
use crate::board::Board;
use crate::eval::weights::{phase_of, PHASES};
use crate::eval::Evaluator;
use crate::search::{Solver, TranspositionTable};
use crate::square::Move;
use crate::thor::ThorGame;

/// Empties at which WTHOR's theoretical score is exact.
pub const THEORETICAL_EMPTIES: u32 = 24;

/// A game to learn from.
#[derive(Clone, Debug)]
pub struct TrainGame {
    /// Moves from the start, passes included.
    pub moves: Vec<Move>,
    /// Black's theoretical disc count at [`THEORETICAL_EMPTIES`] empties.
    pub theoretical: u8,
}

impl TrainGame {
    /// From a replayed Thor game.
    pub fn from_thor(game: &ThorGame) -> TrainGame {
        TrainGame { moves: game.moves_with_passes(), theoretical: game.raw.theoretical_score }
    }
}

/// A position and its target: the final disc differential for the side to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Labeled {
    /// The position (side to move has a legal move).
    pub board: Board,
    /// Target score for the side to move.
    pub target: i8,
    /// True when the target is exact (a solve, or the theoretical score at 24 empties).
    pub exact: bool,
}

/// Labeled positions grouped by evaluation phase.
#[derive(Clone, Debug, Default)]
pub struct Dataset {
    /// `phases[p]`: the positions of phase `p`.
    pub phases: Vec<Vec<Labeled>>,
}

impl Dataset {
    /// Groups positions by phase, keeping their order.
    pub fn from_positions(positions: impl IntoIterator<Item = Labeled>) -> Dataset {
        let mut phases = vec![Vec::new(); PHASES];
        for l in positions {
            phases[phase_of(l.board.empty_count())].push(l);
        }
        Dataset { phases }
    }

    /// Number of positions.
    pub fn len(&self) -> usize {
        self.phases.iter().map(Vec::len).sum()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Labels `games` in parallel (on the current rayon pool); the result does not
    /// depend on the thread count, nor on `order`, an evaluation that only speeds the
    /// solves up. Games that never reach 24 empties are skipped.
    pub fn collect(
        games: &[TrainGame],
        labels: &Labeling,
        order: Option<&dyn Evaluator>,
        progress: ProgressFn,
    ) -> Dataset {
        let solve_at = labels.solve_at;
        let done = AtomicU64::new(0);
        let total = games.len() as u64;
        let stop = AtomicBool::new(false);
        // One table per chunk of games: allocating one per rayon split costs more
        // than the solves of a few games.
        let labeled: Vec<Vec<Labeled>> = games
            .par_chunks(64)
            .map(|chunk| {
                let tt = TranspositionTable::new(if solve_at > 0 { 16 } else { 1 });
                let mut out = Vec::with_capacity(chunk.len() * 60);
                for game in chunk {
                    let mut solver = Solver::new(&tt, &stop, 1);
                    if let Some(eval) = order {
                        solver = solver.with_eval(eval);
                    }
                    out.extend(label_game(game, labels, &mut solver));
                    let n = done.fetch_add(1, Relaxed) + 1;
                    if n.is_multiple_of(256) || n == total {
                        progress(Progress { stage: Stage::Collect, done: n, total });
                    }
                }
                out
            })
            .collect();
        Dataset::from_positions(labeled.into_iter().flatten())
    }
}

/// Magic of a labeled-position cache file.
const CACHE_MAGIC: &[u8; 8] = b"TBKLABL1";
/// Bytes per cached position: player, opponent, target, exact.
const CACHE_RECORD: usize = 18;

/// A fingerprint of games and labeling settings: a cache is reused only for the same.
pub fn games_digest(games: &[TrainGame], labels: &Labeling) -> u64 {
    let mut h = crc32fast::Hasher::new();
    h.update(&labels.solve_at.to_le_bytes());
    h.update(&[labels.children as u8]);
    h.update(&(games.len() as u64).to_le_bytes());
    let mut h2 = crc32fast::Hasher::new_with_initial(0x5bd1_e995);
    for g in games {
        let bytes: Vec<u8> = g.moves.iter().map(|m| m.square().map_or(64, |s| s.index() as u8)).collect();
        h.update(&bytes);
        h.update(&[g.theoretical]);
        h2.update(&bytes);
    }
    (h.finalize() as u64) << 32 | h2.finalize() as u64
}

impl Dataset {
    /// The cache file bytes for `sets` labeled from games with `digest`.
    pub fn cache_bytes(digest: u64, sets: &[&Dataset]) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(CACHE_MAGIC);
        out.extend_from_slice(&digest.to_le_bytes());
        out.extend_from_slice(&(sets.len() as u32).to_le_bytes());
        for set in sets {
            out.extend_from_slice(&(set.len() as u64).to_le_bytes());
            for l in set.phases.iter().flatten() {
                out.extend_from_slice(&l.board.player.to_le_bytes());
                out.extend_from_slice(&l.board.opponent.to_le_bytes());
                out.push(l.target as u8);
                out.push(l.exact as u8);
            }
        }
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    /// Reads cache bytes written for `digest`: `None` when they belong to other games
    /// or settings, an error naming the byte when they are damaged.
    pub fn from_cache_bytes(file: &str, bytes: &[u8], digest: u64) -> Result<Option<Vec<Dataset>>, String> {
        let bad = |at: usize, what: &str| format!("{file}: byte {at}: {what}");
        if bytes.len() < 24 || &bytes[..8] != CACHE_MAGIC {
            return Err(bad(0, "not a thorbook label cache"));
        }
        let body = &bytes[..bytes.len() - 4];
        let stored = u32::from_le_bytes(bytes[bytes.len() - 4..].try_into().expect("4 bytes"));
        if crc32fast::hash(body) != stored {
            return Err(bad(bytes.len() - 4, "checksum mismatch (damaged cache; delete it to relabel)"));
        }
        if u64::from_le_bytes(body[8..16].try_into().expect("8 bytes")) != digest {
            return Ok(None);
        }
        let count = u32::from_le_bytes(body[16..20].try_into().expect("4 bytes")) as usize;
        let mut at = 20;
        let mut out = Vec::new();
        for _ in 0..count {
            let n = body.get(at..at + 8).ok_or_else(|| bad(at, "truncated"))?;
            let n = u64::from_le_bytes(n.try_into().expect("8 bytes")) as usize;
            at += 8;
            let len =
                n.checked_mul(CACHE_RECORD).filter(|&l| at + l <= body.len()).ok_or_else(|| bad(at, "truncated"))?;
            let mut rows = Vec::with_capacity(n);
            for r in body[at..at + len].chunks_exact(CACHE_RECORD) {
                let player = u64::from_le_bytes(r[0..8].try_into().expect("8 bytes"));
                let opponent = u64::from_le_bytes(r[8..16].try_into().expect("8 bytes"));
                let board = Board::new(player, opponent).ok_or_else(|| bad(at, "overlapping discs"))?;
                rows.push(Labeled { board, target: r[16] as i8, exact: r[17] != 0 });
            }
            at += len;
            out.push(Dataset::from_positions(rows));
        }
        Ok(Some(out))
    }
}

/// How positions are labeled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Labeling {
    /// Positions with at most this many empties are solved exactly.
    pub solve_at: u32,
    /// Also label every child of a solved position (all its moves are solved
    /// exactly): several times more exact endgame positions for a few times the cost.
    pub children: bool,
}

/// The labeled positions of one game (empty when it never reaches 24 empties).
pub fn label_game(game: &TrainGame, labels: &Labeling, solver: &mut Solver) -> Vec<Labeled> {
    let solve_at = labels.solve_at;
    // Replay: each position with whether black is to move.
    let mut positions = Vec::with_capacity(61);
    let mut board = Board::START;
    let mut black = true;
    for &mv in &game.moves {
        positions.push((board, black));
        board = match mv {
            Move::Pass => board.pass(),
            Move::Place(sq) => match board.play(sq) {
                Some(b) => b,
                None => return Vec::new(),
            },
        };
        black = !black;
    }
    positions.push((board, black));
    if !positions.iter().any(|(b, _)| b.empty_count() == THEORETICAL_EMPTIES) {
        return Vec::new();
    }
    let theoretical_black = 2 * game.theoretical as i32 - 64;
    let mut out = Vec::with_capacity(60);
    for &(b, black) in &positions {
        if b.legal_moves() == 0 {
            continue;
        }
        let empties = b.empty_count();
        let (target, exact) = if empties <= solve_at && labels.children {
            let moves = solver.solve_root(&b, -64, 64, true);
            for m in &moves {
                if let crate::square::Move::Place(sq) = m.mv {
                    let child = b.play(sq).expect("a legal root move");
                    if child.legal_moves() != 0 {
                        out.push(Labeled { board: child, target: -m.score as i8, exact: true });
                    }
                }
            }
            (moves.first().map_or(0, |m| m.score), true)
        } else if empties <= solve_at {
            (solver.solve(&b, -64, 64).score, true)
        } else {
            (if black { theoretical_black } else { -theoretical_black }, empties == THEORETICAL_EMPTIES)
        };
        out.push(Labeled { board: b, target: target as i8, exact });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::TranspositionTable;

    #[test]
    fn targets_follow_the_side_to_move_and_solves_are_exact() {
        // A game of lowest-square moves with a made-up theoretical score of 40
        // (black +16), played to 20 empties.
        let mut game = TrainGame { moves: Vec::new(), theoretical: 40 };
        let mut b = crate::Position::START.play_sequence(&game.moves).unwrap();
        while b.board.empty_count() > 20 {
            let mv = match b.board.legal_moves() {
                0 => Move::Pass,
                m => Move::Place(crate::Square::new(m.trailing_zeros() as u8)),
            };
            game.moves.push(mv);
            b = b.play_sequence(&[mv]).unwrap();
        }
        let tt = TranspositionTable::new(4);
        let stop = AtomicBool::new(false);
        let mut solver = Solver::new(&tt, &stop, 1);
        let labeling = Labeling { solve_at: 21, children: false };
        let labeled = label_game(&game, &labeling, &mut solver);
        assert_eq!(labeled[0].board, Board::START);
        assert_eq!(labeled[0].target, 16);
        assert_eq!(labeled[1].target, -16);
        let at24 = labeled.iter().find(|l| l.board.empty_count() == 24).unwrap();
        assert!(at24.exact);
        for l in labeled.iter().filter(|l| l.board.empty_count() <= 21) {
            let mut s = Solver::new(&tt, &stop, 1);
            assert_eq!(l.target as i32, s.solve(&l.board, -64, 64).score);
            assert!(l.exact);
        }
        // A game cut before 24 empties teaches nothing.
        game.moves.truncate(20);
        assert!(label_game(&game, &labeling, &mut solver).is_empty());
    }
}
