//! Positions from engine self-play: games that leave a Thor game at a random ply and
//! go on with shallow searches and occasional random moves, reaching positions no
//! human game reached — the kind a search meets in its own tree.
//!
//! Everything depends only on the seed, the openings and the evaluation: game `i`
//! draws its opening, its departure ply and its random moves from its own generator,
//! and every search starts from an empty table. The games are played by the one
//! game loop of bare-board self-play (`playout`), with this module's chooser.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use super::positions::TrainGame;
use super::{stage_count, ProgressFn, Stage};
use crate::board::{Board, Squares};
use crate::eval::IncrementalEvaluator;
use crate::playout::play_out;
use crate::rng::Draws;
use crate::search::batch::map_with_tables;
use crate::search::{Limits, Search, TableError, TranspositionTable};
use crate::setting::{check, OutOfRange, Setting};
use crate::square::{Move, Square};

/// Which self-play positions training makes, and how their games are played (the
/// engine's self-play has its own `engine::selfplay::SelfPlayConfig`).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SelfPlayPositions {
    /// Games to play.
    pub games: usize,
    /// The ply at which a game leaves its Thor game is drawn from this range.
    pub leave_at: (u32, u32),
    /// Search depth of the moves.
    pub depth: u32,
    /// Share of moves played at random instead of searched.
    pub randomness: f64,
    /// Seed of the draws.
    pub seed: u64,
}

impl Default for SelfPlayPositions {
    fn default() -> Self {
        SelfPlayPositions { games: 0, leave_at: (8, 30), depth: 4, randomness: 0.1, seed: 1 }
    }
}

impl SelfPlayPositions {
    /// Checks every setting; the message names the one at fault.
    pub(crate) fn validate(&self) -> Result<(), OutOfRange> {
        check(Setting::SelfPlayGames, self.games, 0..=10_000_000)?;
        if self.leave_at.0 > self.leave_at.1 || self.leave_at.1 > 59 {
            return Err(OutOfRange::new(
                Setting::LeaveAt,
                format!("{} to {}", self.leave_at.0, self.leave_at.1),
                "a range within 0 to 59",
            ));
        }
        check(Setting::SelfPlayDepth, self.depth, 1..=20)?;
        if !(self.randomness.is_finite() && (0.0..=1.0).contains(&self.randomness)) {
            return Err(OutOfRange::new(Setting::SelfPlayRandomness, self.randomness, "from 0 to 1"));
        }
        Ok(())
    }
}

/// A self-play worker's table.
pub(crate) const TABLE_MIB: usize = 2;

/// The positions of `config.games` self-play games (every position where the side to
/// move has a legal move, after the departure), in game order; empty without openings.
/// Each worker has a table of `table_mib`; one that cannot be had is the error.
pub(crate) fn self_play_positions<E: IncrementalEvaluator>(
    openings: &[TrainGame],
    eval: &E,
    config: &SelfPlayPositions,
    stop: &AtomicBool,
    progress: ProgressFn,
    table_mib: usize,
) -> Result<Vec<Board>, TableError> {
    if openings.is_empty() {
        return Ok(Vec::new());
    }
    let count = stage_count(Stage::SelfPlay, config.games as u64, 64, progress);
    let games = map_with_tables(0..config.games, table_mib, |table, i| {
        let tt = table.get()?;
        if stop.load(Relaxed) {
            return Ok::<_, TableError>(Vec::new());
        }
        let out = play_one(openings, eval, config, i as u64, tt);
        count.add(1);
        Ok(out)
    })?;
    count.finish();
    Ok(games.into_iter().flatten().collect())
}

fn play_one<E: IncrementalEvaluator>(
    openings: &[TrainGame],
    eval: &E,
    config: &SelfPlayPositions,
    index: u64,
    tt: &mut TranspositionTable,
) -> Vec<Board> {
    let mut draws = Draws::for_game(config.seed, index);
    let opening = &openings[draws.below(openings.len() as u64) as usize];
    let (lo, hi) = config.leave_at;
    let leave = lo + draws.below(u64::from(hi - lo + 1)) as u32;
    let mut board = Board::START;
    for mv in opening.moves.iter().take(leave as usize) {
        board = match *mv {
            Move::Pass => board.pass(),
            Move::Place(sq) => match board.play(sq) {
                Some(b) => b,
                None => return Vec::new(),
            },
        };
    }
    let stop = AtomicBool::new(false);
    let mut out = Vec::with_capacity(60);
    play_out(
        board,
        |board, moves, _| {
            out.push(*board);
            Some(if draws.unit() < config.randomness {
                let k = draws.below(u64::from(moves.count_ones())) as usize;
                Squares(moves).nth(k).expect("k is below the move count")
            } else {
                tt.clear();
                let limits = Limits { depth: Some(config.depth), ..Limits::default() };
                match Search::new(eval, tt, &stop, 1).run(board, limits, false).best_move() {
                    Some(Move::Place(sq)) => sq,
                    _ => Square::new(moves.trailing_zeros() as u8),
                }
            })
        },
        |_| {},
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::PatternEval;

    fn openings() -> Vec<TrainGame> {
        crate::train::bundled_games().into_iter().take(20).collect()
    }

    #[test]
    fn self_play_is_reproducible_and_leaves_the_games() {
        let openings = openings();
        let eval = PatternEval::bundled();
        let stop = AtomicBool::new(false);
        let config = SelfPlayPositions { games: 12, depth: 2, ..SelfPlayPositions::default() };
        let a = self_play_positions(&openings, &eval, &config, &stop, &|_| {}, TABLE_MIB).unwrap();
        let b = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap()
            .install(|| self_play_positions(&openings, &eval, &config, &stop, &|_| {}, TABLE_MIB))
            .unwrap();
        assert_eq!(a, b);
        assert!(a.len() > 12 * 25, "{} positions", a.len());
        assert!(a.iter().all(|p| p.legal_moves() != 0));
        // Most positions are not in the games they left.
        let known: std::collections::HashSet<Board> =
            openings.iter().flat_map(|g| g.positions()).map(|t| t.board.canonical().0).collect();
        let new = a.iter().filter(|p| !known.contains(&p.canonical().0)).count();
        assert!(new * 2 > a.len(), "{new} of {} positions are new", a.len());
        let other =
            self_play_positions(&openings, &eval, &SelfPlayPositions { seed: 2, ..config }, &stop, &|_| {}, TABLE_MIB)
                .unwrap();
        assert_ne!(a, other);
    }

    #[test]
    fn a_table_that_cannot_be_had_is_an_error_not_a_panic() {
        let config = SelfPlayPositions { games: 4, depth: 2, ..SelfPlayPositions::default() };
        let stop = AtomicBool::new(false);
        let got = self_play_positions(&openings(), &PatternEval::bundled(), &config, &stop, &|_| {}, 0);
        assert!(matches!(got, Err(TableError::Size { mib: 0 })), "{got:?}");
    }
}
