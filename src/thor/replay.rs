//! Replaying a WTHOR game record: decoding the move bytes, inferring passes (they are
//! not stored: when the side to move has no legal move, the other side plays), and
//! classifying the result.

use serde::Serialize;

use super::format::RawGame;
use super::AnomalyKind;
use crate::position::Position;
use crate::square::{Move, Square};

/// How a game's move list ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Hash, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// 60 moves, the board is full.
    Finished,
    /// Neither side can move before the board is full.
    FinishedEarly,
    /// The list ends while a side can still move: the stored score is not a final score.
    Unfinished,
}

impl Outcome {
    /// How a move list that ends at `board` ends. A list that ends just before a
    /// forced pass is still unfinished, not a pass.
    pub(crate) fn at(board: &crate::board::Board) -> Outcome {
        if !board.is_game_over() {
            Outcome::Unfinished
        } else if board.empty_count() == 0 {
            Outcome::Finished
        } else {
            Outcome::FinishedEarly
        }
    }

    /// Finished or finished early.
    pub(crate) fn is_finished(self) -> bool {
        self != Outcome::Unfinished
    }
}

/// The result of replaying a game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Replay {
    /// Moves in the stored list.
    pub move_count: u8,
    /// Passes inferred.
    pub passes: u8,
    /// How the list ends.
    pub outcome: Outcome,
    /// The last position.
    pub last: Position,
}

impl Replay {
    /// Black's disc count with empties to the winner in the last position: the real
    /// score a finished game must store.
    pub fn black_final_discs(&self) -> u8 {
        let b = &self.last.board;
        let discs = b.final_discs();
        let mover_is_black = self.last.side == crate::board::Color::Black;
        u8::try_from(if mover_is_black { discs } else { 64 - discs }).expect("at most 64 discs")
    }
}

/// A problem found while replaying, at a 1-based ply of the stored move list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameFault {
    /// 1-based index in the stored move list.
    pub ply: usize,
    /// What is wrong.
    pub kind: AnomalyKind,
}

/// Decodes a WTHOR move byte (`10 * row + col`, both 1..=8).
#[inline]
pub(crate) fn decode_square(byte: u8) -> Option<Square> {
    let (row, col) = (byte / 10, byte % 10);
    if (1..=8).contains(&row) && (1..=8).contains(&col) {
        Square::from_coords(col - 1, row - 1)
    } else {
        None
    }
}

/// Encodes a square as a WTHOR move byte.
pub fn encode_square(sq: Square) -> u8 {
    (sq.row() + 1) * 10 + sq.col() + 1
}

/// The stored moves as squares (up to the first zero), checking that each byte is a
/// square and that nothing but zeros follows the first zero.
pub(crate) fn decode_moves(raw: &RawGame) -> Result<([Square; 60], usize), GameFault> {
    let mut squares = [Square::new(0); 60];
    let len = raw.moves.iter().position(|&b| b == 0).unwrap_or(60);
    for (i, &byte) in raw.moves[..len].iter().enumerate() {
        squares[i] = decode_square(byte).ok_or(GameFault { ply: i + 1, kind: AnomalyKind::NotASquare { byte } })?;
    }
    if let Some(off) = raw.moves[len..].iter().position(|&b| b != 0) {
        return Err(GameFault { ply: len + 1, kind: AnomalyKind::ZeroInMiddle { next: raw.moves[len + off] } });
    }
    Ok((squares, len))
}

/// Replays a game, calling `visit(position, move)` for every position it passes
/// through with the move played from it (`Some(Move::Pass)` for an inferred pass,
/// `None` for the last position).
pub(crate) fn replay_with(raw: &RawGame, mut visit: impl FnMut(&Position, Option<Move>)) -> Result<Replay, GameFault> {
    let (squares, len) = decode_moves(raw)?;
    let mut pos = Position::START;
    let mut passes = 0u8;
    for (i, &sq) in squares[..len].iter().enumerate() {
        let fault = |kind| GameFault { ply: i + 1, kind };
        let mut moves = pos.board.legal_moves();
        // Only a side without a move can have passed (checked first: replay is hot).
        if moves == 0 {
            if pos.board.is_game_over() {
                return Err(fault(AnomalyKind::AfterGameOver { square: sq }));
            }
            visit(&pos, Some(Move::Pass));
            passes += 1;
            pos = pos.with_inferred_pass(Move::Place(sq));
            moves = pos.board.legal_moves();
        }
        if moves & sq.bit() == 0 {
            let occupied = pos.board.empties() & sq.bit() == 0;
            return Err(fault(if occupied {
                AnomalyKind::Occupied { square: sq }
            } else {
                AnomalyKind::Illegal { square: sq, color: pos.side }
            }));
        }
        visit(&pos, Some(Move::Place(sq)));
        let flipped = crate::board::flips(pos.board.player, pos.board.opponent, sq);
        pos = Position { board: pos.board.play_flips(sq, flipped), side: !pos.side };
    }
    visit(&pos, None);
    Ok(Replay {
        move_count: u8::try_from(len).expect("at most 60 moves"),
        passes,
        outcome: Outcome::at(&pos.board),
        last: pos,
    })
}

/// Replays a game without visiting positions.
pub fn replay(raw: &RawGame) -> Result<Replay, GameFault> {
    replay_with(raw, |_, _| {})
}

/// Checks what replay alone can check: the move list and, for finished games, the real
/// score. Returns the replay and every fault found (a replay fault stops the game).
pub(crate) fn validate(raw: &RawGame) -> (Option<Replay>, Vec<GameFault>) {
    let mut faults = Vec::new();
    if raw.black_score > 64 {
        faults.push(GameFault { ply: 0, kind: AnomalyKind::ScoreOutOfRange { field: "real", value: raw.black_score } });
    }
    if raw.theoretical_score > 64 {
        faults.push(GameFault {
            ply: 0,
            kind: AnomalyKind::ScoreOutOfRange { field: "theoretical", value: raw.theoretical_score },
        });
    }
    match replay(raw) {
        Ok(r) => {
            if r.outcome.is_finished() && r.black_final_discs() != raw.black_score {
                faults.push(GameFault {
                    ply: 0,
                    kind: AnomalyKind::ScoreMismatch { stored: raw.black_score, replayed: r.black_final_discs() },
                });
            }
            (Some(r), faults)
        }
        Err(f) => {
            faults.push(f);
            (None, faults)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::square::parse_move_sequence;

    pub(crate) fn raw_from(seq: &str, black_score: u8) -> RawGame {
        let mut moves = [0u8; 60];
        for (i, mv) in parse_move_sequence(seq).unwrap().into_iter().enumerate() {
            moves[i] = encode_square(mv.square().unwrap());
        }
        RawGame { tournament: 0, black: 0, white: 0, black_score, theoretical_score: 0, moves }
    }

    #[test]
    fn square_codes_round_trip() {
        for sq in Square::ALL {
            assert_eq!(decode_square(encode_square(sq)), Some(sq));
        }
        assert_eq!(decode_square(56), Some("f5".parse().unwrap()));
        for bad in [0, 9, 10, 19, 20, 89, 90, 91, 255] {
            assert_eq!(decode_square(bad), None, "{bad}");
        }
    }

    #[test]
    fn short_unfinished_game() {
        let r = replay(&raw_from("f5d6c3d3c4", 40)).unwrap();
        assert_eq!((r.move_count, r.passes, r.outcome), (5, 0, Outcome::Unfinished));
    }

    #[test]
    fn bad_bytes_are_located() {
        let mut raw = raw_from("f5d6c3", 0);
        raw.moves[1] = 19;
        assert_eq!(replay(&raw).unwrap_err(), GameFault { ply: 2, kind: AnomalyKind::NotASquare { byte: 19 } });
        let mut raw = raw_from("f5d6c3", 0);
        raw.moves[5] = 34;
        assert_eq!(replay(&raw).unwrap_err(), GameFault { ply: 4, kind: AnomalyKind::ZeroInMiddle { next: 34 } });
        let raw = raw_from("f5d6f5", 0);
        assert_eq!(
            replay(&raw).unwrap_err(),
            GameFault { ply: 3, kind: AnomalyKind::Occupied { square: "f5".parse().unwrap() } }
        );
        let raw = raw_from("f5d6a1", 0);
        let err = replay(&raw).unwrap_err();
        assert_eq!(err.ply, 3);
        assert_eq!(err.kind.to_string(), "a1 is not legal for black");
    }

    #[test]
    fn passes_are_inferred_and_early_ends_detected() {
        // The shortest game: black wipes white out in 9 moves.
        let r = replay(&raw_from("d3c3b3d2e1d6d7e3f4", 0)).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(r.outcome, Outcome::FinishedEarly);
        assert_eq!(r.black_final_discs(), 64);
        let (_, faults) = validate(&raw_from("d3c3b3d2e1d6d7e3f4", 13));
        assert!(matches!(faults[0].kind, AnomalyKind::ScoreMismatch { stored: 13, replayed: 64 }));
    }
}
