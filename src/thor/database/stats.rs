//! Statistics of the games that reach a position: results, scores and the moves
//! played next, from the database's index (no replay).

use std::cmp::Ordering;

use serde::Serialize;

use super::{GameFilter, Reach, ThorDatabase};
use crate::position::Position;
use crate::results::win_rate;
use crate::square::Move;

/// Statistics of the games that reach a position.
#[derive(Clone, Debug, Serialize, Default)]
pub struct PositionStats {
    /// Games reaching the position.
    pub games: usize,
    /// Of those, games whose result the source does not give: left out of the wins,
    /// draws and scores below.
    pub results_unknown: usize,
    /// Won by black (stored real score above 32).
    pub black_wins: usize,
    /// Drawn.
    pub draws: usize,
    /// Won by white.
    pub white_wins: usize,
    /// Mean of black's final discs (NaN when no result is known).
    pub average_black_discs: f64,
    /// Median of black's stored score.
    pub median_black_discs: f64,
    /// Games whose move list ends in this position.
    pub ended_here: usize,
    /// Moves played from the position, most played first, in the query's orientation.
    pub moves: Vec<MoveStats>,
}

/// How one move from a position fared.
#[derive(Clone, Debug, Serialize)]
pub struct MoveStats {
    /// The move, in the query's orientation (`pass` for a forced pass).
    #[serde(rename = "move")]
    pub mv: Move,
    /// Games that played it.
    pub games: usize,
    /// Share of the games that continued from the position.
    pub share: f64,
    /// Black wins among them.
    pub black_wins: usize,
    /// Draws among them.
    pub draws: usize,
    /// (wins + draws / 2) / games with a known result, for black (NaN when none).
    pub black_win_rate: f64,
    /// Mean black score.
    pub average_black_discs: f64,
}

impl ThorDatabase {
    /// Statistics of the games that reach `pos` and pass `filter`'s other conditions.
    pub fn stats(&self, pos: &Position, filter: &GameFilter) -> PositionStats {
        let reaching: Vec<Reach> = self
            .games_reaching(pos)
            .into_iter()
            .filter(|r| self.matches_fields(self.own_game(r.game), filter))
            .collect();
        let scores: Vec<Option<u8>> = reaching.iter().map(|r| self.own_game(r.game).black_discs()).collect();
        let mut stats = summarize(&scores);
        stats.ended_here = reaching.iter().filter(|r| r.next.is_none()).count();
        let continuing = stats.games - stats.ended_here;
        let mut by_move: std::collections::BTreeMap<Move, Vec<Option<u8>>> = Default::default();
        for r in &reaching {
            if let Some(mv) = r.next {
                by_move.entry(mv).or_default().push(self.own_game(r.game).black_discs());
            }
        }
        stats.moves = by_move
            .into_iter()
            .map(|(mv, scores)| {
                let s = summarize(&scores);
                let decided = (s.games - s.results_unknown) as u64;
                MoveStats {
                    mv,
                    games: s.games,
                    share: s.games as f64 / continuing.max(1) as f64,
                    black_wins: s.black_wins,
                    draws: s.draws,
                    black_win_rate: win_rate(s.black_wins as u64, s.draws as u64, decided).unwrap_or(f64::NAN),
                    average_black_discs: s.average_black_discs,
                }
            })
            .collect();
        // Ties in the order of the moves' names (a1, a2, …, h8, pass), as the
        // command line and the explorer have always listed them.
        let name_order = |m: &Move| match m {
            Move::Place(sq) => (sq.col(), sq.row()),
            Move::Pass => (8, 0),
        };
        stats.moves.sort_by(|a, b| b.games.cmp(&a.games).then_with(|| name_order(&a.mv).cmp(&name_order(&b.mv))));
        stats
    }
}

fn summarize(all: &[Option<u8>]) -> PositionStats {
    let scores: Vec<u8> = all.iter().flatten().copied().collect();
    let mut s = PositionStats { games: all.len(), results_unknown: all.len() - scores.len(), ..Default::default() };
    if scores.is_empty() {
        if !all.is_empty() {
            s.average_black_discs = f64::NAN;
            s.median_black_discs = f64::NAN;
        }
        return s;
    }
    for &sc in &scores {
        match sc.cmp(&32) {
            Ordering::Greater => s.black_wins += 1,
            Ordering::Equal => s.draws += 1,
            Ordering::Less => s.white_wins += 1,
        }
    }
    s.average_black_discs = scores.iter().map(|&x| x as f64).sum::<f64>() / scores.len() as f64;
    let mut sorted = scores.to_vec();
    sorted.sort_unstable();
    let n = sorted.len();
    s.median_black_discs =
        if n % 2 == 1 { sorted[n / 2] as f64 } else { (sorted[n / 2 - 1] as f64 + sorted[n / 2] as f64) / 2.0 };
    s
}
