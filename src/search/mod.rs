//! Search: the exact endgame solver ([`endgame`]), the midgame principal-variation
//! search with iterative deepening and time control ([`midgame`]), and the shared
//! transposition table ([`tt`]), and how hard to search: playing [`level`]s and the
//! [`settings`] every command and pipeline shares.

pub mod endgame;
pub mod level;
pub mod midgame;
pub mod moves;
pub mod problems;
pub mod settings;
pub mod tt;

pub use endgame::{RootMove, Solved, Solver};
pub use level::{Level, LevelSpec};
pub use midgame::{Limits, Search, SearchResult, Selectivity};
pub use moves::MAX_MOVES;
pub use settings::{Settings, SettingsError, Strength, Width, MAX_THREADS};
pub use tt::TranspositionTable;

use crate::board::Board;
use crate::square::Move;

/// The principal variation stored in the table from `board`: best moves while the
/// table has them (at most `max_len`), passes included.
pub fn table_pv(tt: &TranspositionTable, board: &Board, max_len: usize) -> Vec<Move> {
    let mut pv = Vec::new();
    let mut b = *board;
    while pv.len() < max_len {
        let moves = b.legal_moves();
        if moves == 0 {
            if b.opponent_moves() == 0 {
                break;
            }
            pv.push(Move::Pass);
            b = b.pass();
            continue;
        }
        let Some(sq) = tt.probe(b.key()).and_then(|e| e.best) else { break };
        if moves & sq.bit() == 0 {
            break;
        }
        pv.push(Move::Place(sq));
        b = b.play(sq).expect("checked legal");
    }
    pv
}
