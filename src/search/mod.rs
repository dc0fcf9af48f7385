//! Search: the exact endgame solver ([`endgame`]), the midgame principal-variation
//! search with iterative deepening and time control ([`midgame`]), and the shared
//! transposition table ([`tt`]).

pub mod endgame;
pub mod midgame;
pub mod moves;
pub mod tt;

pub use endgame::{RootMove, Solved, Solver};
pub use midgame::{Limits, Search, SearchResult, Selectivity};
pub use moves::MAX_MOVES;

/// The largest thread count a search accepts.
pub const MAX_THREADS: usize = 256;

/// Checks a thread count: 1..=[`MAX_THREADS`].
pub fn check_threads(threads: usize) -> Result<(), String> {
    if (1..=MAX_THREADS).contains(&threads) {
        Ok(())
    } else {
        Err(format!("threads must be 1..={MAX_THREADS}, got {threads}"))
    }
}
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
