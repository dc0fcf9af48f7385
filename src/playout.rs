//! One game loop for self-play on bare boards: a chooser picks each move and the loop
//! plays it, with the passes a side left without a move must make. The training
//! positions (`train::selfplay`) and the Python datasets' random and self-play games
//! (`dataset`) play through it, each with its own chooser. (The engine's self-play
//! plays on a [`Game`](crate::engine::Game), whose clocks, book and transcript it
//! needs.)

use crate::board::Board;
use crate::square::Square;

/// One move as [`play_out`] played it.
pub(crate) struct Played {
    /// The move.
    pub(crate) square: Square,
    /// The position after it, with the pass played when the next side had no move.
    pub(crate) after: Board,
    /// Whether that pass was played.
    pub(crate) passed: bool,
}

/// Plays `board` out. While the side to move has a move, `choose(board, legal, ply)`
/// picks it (`ply`: moves played so far, passes not counted; `None` ends the game
/// there), and `played` sees each move once it is made. A side without a move passes:
/// at the start (the position after an opening may be one) without a report, later
/// as [`Played::passed`]. Returns the last position.
pub(crate) fn play_out(
    mut board: Board,
    mut choose: impl FnMut(&Board, u64, u32) -> Option<Square>,
    mut played: impl FnMut(&Played),
) -> Board {
    if board.legal_moves() == 0 && !board.is_game_over() {
        board = board.pass();
    }
    let mut ply = 0;
    loop {
        let moves = board.legal_moves();
        if moves == 0 {
            return board;
        }
        let Some(square) = choose(&board, moves, ply) else { return board };
        let mut after = board.play_flips(square, board.flips(square));
        let passed = after.legal_moves() == 0 && !after.is_game_over();
        if passed {
            after = after.pass();
        }
        played(&Played { square, after, passed });
        board = after;
        ply += 1;
    }
}
