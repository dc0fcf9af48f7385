//! Static evaluation: the [`Evaluator`] interface the search calls; [`PatternEval`],
//! the trained evaluation every search uses by default (its patterns and counts,
//! the `features` module, and its weight file, [`Weights`]); and
//! [`ClassicEval`], the hand-weighted evaluation it replaced, kept as a baseline for
//! matches and error measurements.
//!
//! Scores are estimated final disc differentials for the side to move, kept strictly
//! inside (−64, 64) so that an estimate is never mistaken for a proven result.

pub(crate) mod features;
pub(crate) mod trained;
pub(crate) mod weights;

pub use features::InstanceIndices;
pub use trained::PatternEval;
pub use weights::{WeightParts, Weights, WeightsError, WeightsFault};

use crate::board::{adjacent_empties, masks, Board, Squares};
use crate::square::Square;
use crate::stability::stable_discs;

/// A static evaluation of positions.
pub trait Evaluator: Sync {
    /// Estimated final disc differential for the side to move, in (−64, 64).
    fn evaluate(&self, board: &Board) -> i32;

    /// The estimate in discs before rounding (for error measurements and GUIs); the
    /// rounded [`Evaluator::evaluate`] unless the evaluation has finer steps.
    fn discs(&self, board: &Board) -> f64 {
        f64::from(self.evaluate(board))
    }

    /// A short name for logs and benchmarks.
    fn name(&self) -> &'static str;

    /// A digest that changes whenever the evaluation's values do (a weight file's
    /// CRC-32): stores of analyses ([`crate::engine::review::AnalysisStore`]) key their
    /// entries by it. `None`, the default, for an evaluation that cannot say: its
    /// analyses are never stored or reused.
    fn identity(&self) -> Option<u32> {
        None
    }

    /// Multi-ProbCut: the standard deviation, in discs, of a depth-`depth` search's
    /// score around the score of its shallow companion search, at `empties` empties;
    /// `None` where no cut is fitted (the search then searches everything).
    fn probcut_sigma(&self, _empties: u32, _depth: u32) -> Option<f32> {
        None
    }

    /// The value of `board` for the side that just moved into it, one ply deeper: the
    /// lowest [`Evaluator::evaluate`] after a reply of the side to move (after its pass
    /// when it has none). `replies` are `board`'s legal moves: the solver, which orders
    /// its moves by this, has counted them already.
    fn after_best_reply(&self, board: &Board, replies: u64) -> i32 {
        if replies == 0 {
            return self.evaluate(&board.pass());
        }
        Squares(replies).map(|sq| self.evaluate(&board.play_flips(sq, board.flips(sq)))).min().unwrap_or(0)
    }
}

/// [`Evaluator::after_best_reply`] from features read once and updated per reply,
/// rather than each reply's position read afresh (the same values: see
/// [`IncrementalEvaluator`]).
#[inline]
pub(crate) fn after_best_reply_incremental<E: IncrementalEvaluator>(eval: &E, board: &Board, replies: u64) -> i32 {
    let features = eval.features(board);
    if replies == 0 {
        return eval.evaluate_features(&board.pass(), &eval.after_pass(&features));
    }
    let mut best = i32::MAX;
    for sq in Squares(replies) {
        let f = board.flips(sq);
        best = best.min(eval.evaluate_features(&board.play_flips(sq, f), &eval.after_move(&features, sq, f)));
    }
    best
}

/// An evaluation whose view of a position follows the search move by move: the
/// search reads [`IncrementalEvaluator::features`] once at its root, derives each
/// child's from its parent's, and evaluates leaves from them, which costs less than
/// reading every leaf afresh. `evaluate_features(b, f)` equals `evaluate(b)` whenever
/// `f` was derived along any line of moves leading to `b`.
pub trait IncrementalEvaluator: Evaluator {
    /// What is kept per position (nothing for an evaluation without state).
    type Features: Copy + Send + Sync + 'static;

    /// The features of a position, read afresh.
    fn features(&self, board: &Board) -> Self::Features;

    /// The features after the side to move places a disc on `square`, flipping
    /// `flips`.
    fn after_move(&self, before: &Self::Features, square: Square, flips: u64) -> Self::Features;

    /// The features after a pass.
    fn after_pass(&self, before: &Self::Features) -> Self::Features;

    /// [`Evaluator::evaluate`] of `board` from its features.
    fn evaluate_features(&self, board: &Board, features: &Self::Features) -> i32;

    /// The value of `board` as a leaf of a midgame search: the evaluation corrected
    /// for the choice the search makes at the leaf's parent
    /// ([`Weights::leaf_correction`]); [`IncrementalEvaluator::evaluate_features`]
    /// for an evaluation without a correction.
    fn evaluate_leaf(&self, board: &Board, features: &Self::Features) -> i32 {
        self.evaluate_features(board, features)
    }
}

/// Which evaluation an engine or command uses.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum EvalSource {
    /// The bundled trained weights.
    #[default]
    Bundled,
    /// Trained weights from a file.
    File(std::path::PathBuf),
    /// The hand-weighted [`ClassicEval`] (a baseline).
    Classic,
}

impl EvalSource {
    /// Loads the evaluation.
    pub(crate) fn load(&self) -> Result<AnyEval, WeightsError> {
        Ok(match self {
            EvalSource::Bundled => AnyEval::Pattern(PatternEval::bundled()),
            EvalSource::File(path) => AnyEval::Pattern(PatternEval::load(path)?),
            EvalSource::Classic => AnyEval::Classic(ClassicEval),
        })
    }
}

/// What the classic evaluation calls itself where a weight file gives its CRC-32.
const CLASSIC_DIGEST: u32 = u32::from_le_bytes(*b"CLAS");

/// An evaluation chosen at run time (what the command line and the protocols use).
#[derive(Clone, Debug)]
pub enum AnyEval {
    /// Trained patterns.
    Pattern(PatternEval),
    /// Hand-weighted features.
    Classic(ClassicEval),
}

impl AnyEval {
    /// Which evaluation this is: the weight file's CRC-32, or a fixed tag for the
    /// classic evaluation. Books and checkpoints record it.
    pub(crate) fn digest(&self) -> u32 {
        match self {
            AnyEval::Pattern(e) => e.digest(),
            AnyEval::Classic(_) => CLASSIC_DIGEST,
        }
    }
}

impl Evaluator for AnyEval {
    fn identity(&self) -> Option<u32> {
        Some(self.digest())
    }

    #[inline]
    fn evaluate(&self, board: &Board) -> i32 {
        match self {
            AnyEval::Pattern(e) => e.evaluate(board),
            AnyEval::Classic(e) => e.evaluate(board),
        }
    }

    fn after_best_reply(&self, board: &Board, replies: u64) -> i32 {
        match self {
            AnyEval::Pattern(e) => e.after_best_reply(board, replies),
            AnyEval::Classic(e) => e.after_best_reply(board, replies),
        }
    }

    fn discs(&self, board: &Board) -> f64 {
        match self {
            AnyEval::Pattern(e) => e.discs(board),
            AnyEval::Classic(e) => e.discs(board),
        }
    }

    fn name(&self) -> &'static str {
        match self {
            AnyEval::Pattern(e) => e.name(),
            AnyEval::Classic(e) => e.name(),
        }
    }

    #[inline]
    fn probcut_sigma(&self, empties: u32, depth: u32) -> Option<f32> {
        match self {
            AnyEval::Pattern(e) => e.probcut_sigma(empties, depth),
            AnyEval::Classic(e) => e.probcut_sigma(empties, depth),
        }
    }
}

impl IncrementalEvaluator for AnyEval {
    /// The trained evaluation's state; unused (and not updated) for the classic one.
    type Features = InstanceIndices;

    fn features(&self, board: &Board) -> InstanceIndices {
        match self {
            AnyEval::Pattern(e) => e.features(board),
            AnyEval::Classic(_) => InstanceIndices::default(),
        }
    }

    #[inline]
    fn after_move(&self, before: &InstanceIndices, square: Square, flips: u64) -> InstanceIndices {
        match self {
            AnyEval::Pattern(e) => e.after_move(before, square, flips),
            AnyEval::Classic(_) => *before,
        }
    }

    #[inline]
    fn after_pass(&self, before: &InstanceIndices) -> InstanceIndices {
        match self {
            AnyEval::Pattern(e) => e.after_pass(before),
            AnyEval::Classic(_) => *before,
        }
    }

    #[inline]
    fn evaluate_features(&self, board: &Board, features: &InstanceIndices) -> i32 {
        match self {
            AnyEval::Pattern(e) => e.evaluate_features(board, features),
            AnyEval::Classic(e) => e.evaluate(board),
        }
    }

    #[inline]
    fn evaluate_leaf(&self, board: &Board, features: &InstanceIndices) -> i32 {
        match self {
            AnyEval::Pattern(e) => e.evaluate_leaf(board, features),
            AnyEval::Classic(e) => e.evaluate(board),
        }
    }
}

/// Hand-weighted features, interpolated between the opening and the endgame.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClassicEval;

/// Corner → its X-square and C-squares.
const CORNER_NEIGHBOURS: [(u64, u64, u64); 4] = [
    (1 << 0, 1 << 9, (1 << 1) | (1 << 8)),
    (1 << 7, 1 << 14, (1 << 6) | (1 << 15)),
    (1 << 56, 1 << 49, (1 << 57) | (1 << 48)),
    (1 << 63, 1 << 54, (1 << 62) | (1 << 55)),
];

impl ClassicEval {
    /// The feature sum in 1/16 discs.
    fn raw(board: &Board) -> i32 {
        let (p, o) = (board.player, board.opponent);
        let empty = board.empties();
        let n_empty = empty.count_ones() as i32;
        // 0 at the start, 1 near the end.
        let phase = (60 - n_empty).clamp(0, 60);

        let mob_p = board.legal_moves();
        let mob_o = board.opponent_moves();
        // Corner moves are worth more than their count.
        let mobility = (mob_p.count_ones() as i32 + (mob_p & masks::CORNERS).count_ones() as i32)
            - (mob_o.count_ones() as i32 + (mob_o & masks::CORNERS).count_ones() as i32);
        let potential = adjacent_empties(o, empty).count_ones() as i32 - adjacent_empties(p, empty).count_ones() as i32;
        let corners = (p & masks::CORNERS).count_ones() as i32 - (o & masks::CORNERS).count_ones() as i32;
        let mut x_squares = 0;
        let mut c_squares = 0;
        for (corner, x, c) in CORNER_NEIGHBOURS {
            if empty & corner != 0 {
                x_squares += (o & x).count_ones() as i32 - (p & x).count_ones() as i32;
                c_squares += (o & c).count_ones() as i32 - (p & c).count_ones() as i32;
            }
        }
        let stable = if (p | o) & masks::EDGES & !masks::CENTER != 0 {
            stable_discs(p, o).count_ones() as i32 - stable_discs(o, p).count_ones() as i32
        } else {
            0
        };
        let discs = p.count_ones() as i32 - o.count_ones() as i32;
        let parity = if n_empty % 2 == 1 { 1 } else { -1 };

        let w = |open: i32, end: i32| open + (end - open) * phase / 60;
        w(40, 22) * mobility
            + w(14, 8) * potential
            + w(120, 80) * corners
            + w(60, 20) * x_squares
            + w(18, 8) * c_squares
            + w(24, 40) * stable
            + w(-2, 6) * discs
            + w(0, 16) * parity
    }
}

impl Evaluator for ClassicEval {
    fn identity(&self) -> Option<u32> {
        Some(CLASSIC_DIGEST)
    }

    fn evaluate(&self, board: &Board) -> i32 {
        (ClassicEval::raw(board) / 16).clamp(-63, 63)
    }

    fn name(&self) -> &'static str {
        "classic"
    }
}

impl IncrementalEvaluator for ClassicEval {
    type Features = ();

    fn features(&self, _: &Board) {}

    #[inline]
    fn after_move(&self, _: &(), _: Square, _: u64) {}

    #[inline]
    fn after_pass(&self, _: &()) {}

    #[inline]
    fn evaluate_features(&self, board: &Board, _: &()) -> i32 {
        self.evaluate(board)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::random_games;

    #[test]
    fn evaluation_is_bounded_and_symmetric() {
        for b in random_games(21, 100) {
            let v = ClassicEval.evaluate(&b);
            assert!((-63..=63).contains(&v));
            for t in crate::symmetry::Transform::ALL {
                assert_eq!(ClassicEval.evaluate(&t.board(&b)), v);
            }
        }
    }

    #[test]
    fn a_corner_is_good() {
        let b = crate::Position::from_moves("f5d6c3d3c4f4f6f3e6e7").unwrap().board;
        let with_corner = Board { player: b.player | 1, opponent: b.opponent };
        assert!(ClassicEval.evaluate(&with_corner) > ClassicEval.evaluate(&b));
    }
}
