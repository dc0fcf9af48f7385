//! GGF, the Generic Game Format of GGS and NBoard, for Othello games:
//! `(;GM[Othello]PB[..]PW[..]TY[8]BO[8 <64 squares> <side>]B[F5]W[D6//1.2]…;)`.
//!
//! Reading keeps what a game needs (players, start board, moves with passes, result,
//! time control) and checks every move by replay; errors name the byte offset and, for
//! moves, the ply. Writing produces what NBoard and GGS read.
// Input handling: every narrowing or sign-changing conversion is checked (`try_from`,
// `from_le_bytes`), never a silent `as`.
#![deny(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_possible_wrap)]

use super::game::{Game, GameError};
use crate::board::Color;
use crate::square::Move;

/// An Othello game read from GGF.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GgfGame {
    /// Black's name (`PB`).
    pub black: String,
    /// White's name (`PW`).
    pub white: String,
    /// The result as written (`RE`), if any.
    pub result: Option<String>,
    /// The time control as written (`TI`), if any.
    pub time: Option<String>,
    /// The game, replayed and checked, from the `BO` start position.
    pub game: Game,
}

use crate::thor::ggf::{err, escape, parse_board, tags};
use crate::thor::{GgfError, TextFault};

/// Parses one GGF game (the first in `text`).
pub fn parse(text: &str) -> Result<GgfGame, GgfError> {
    let (found, _) = tags(text, 0)?;
    let (mut black, mut white, mut result, mut time) = (String::new(), String::new(), None, None);
    let mut game: Option<Game> = None;
    let mut pending_moves: Vec<(usize, Color, String)> = Vec::new();
    for tag in found {
        let (value_start, value) = (tag.offset, tag.value.into_owned());
        match tag.name {
            "GM" if !value.eq_ignore_ascii_case("othello") => return Err(err(value_start, TextFault::NotOthello)),
            "TY" if !value.trim_start().starts_with('8') => return Err(err(value_start, TextFault::NotEightByEight)),
            "PB" => black = value,
            "PW" => white = value,
            "RE" => result = Some(value),
            "TI" => time = Some(value),
            "BO" => game = Some(Game::new(parse_board(&value, value_start)?)),
            name @ ("B" | "W") => {
                let color = if name == "B" { Color::Black } else { Color::White };
                pending_moves.push((value_start, color, value));
            }
            _ => {}
        }
    }
    let mut game = game.unwrap_or_default();
    for (ply, (offset, color, value)) in pending_moves.into_iter().enumerate() {
        let word = value.split('/').next().unwrap_or("").trim();
        let mv: Move = word.parse().map_err(|_| err(offset, TextFault::NotAMoveAt { ply: ply + 1 }))?;
        game.play_for(color, mv).map_err(|e| {
            let ply = ply + 1;
            err(
                offset,
                match e {
                    GameError::Play(e) => TextFault::Play { ply, source: e.cause },
                    GameError::NotYourTurn { to_move, named } => {
                        TextFault::WrongSide { ply, expected: to_move, found: named }
                    }
                },
            )
        })?;
    }
    Ok(GgfGame { black, white, result, time, game })
}

/// A move as GGF and NBoard write it: `F5`, or `PA` for a pass.
pub(crate) fn move_text(mv: Move) -> String {
    match mv {
        Move::Pass => "PA".into(),
        Move::Place(sq) => sq.to_string().to_ascii_uppercase(),
    }
}

/// Writes `game` as GGF, with the players' names and a time control (`TI`) if given.
pub(crate) fn write(game: &Game, black: &str, white: &str, time: Option<&str>) -> String {
    let start = game.start();
    let board = start.squares_text('*', 'O', '-');
    let side = if start.side == Color::Black { '*' } else { 'O' };
    let mut out = format!("(;GM[Othello]PC[thorbook]PB[{}]PW[{}]", escape(black), escape(white));
    if let Some(t) = time {
        out.push_str(&format!("TI[{}]", escape(t)));
    }
    out.push_str(&format!("TY[8]BO[8 {board} {side}]"));
    for (pos, mv) in game.positions().iter().zip(game.moves()) {
        let tag = if pos.side == Color::Black { 'B' } else { 'W' };
        out.push_str(&format!("{tag}[{}]", move_text(mv)));
    }
    out.push_str(";)");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::position::Position;

    const NBOARD_EXAMPLE: &str = "(;GM[Othello]PC[NBoard]DT[2014-02-21 20:52:27 GMT]PB[./mEdax]PW[chris]RE[?]TI[15:00]TY[8]BO[8 ---------------------------O*------*O--------------------------- *]B[F5]W[F6]B[D3]W[C5]B[E6]W[F7]B[E7]W[F4];)";

    #[test]
    fn nboard_games_parse_and_round_trip() {
        let g = parse(NBOARD_EXAMPLE).unwrap();
        assert_eq!((g.black.as_str(), g.white.as_str()), ("./mEdax", "chris"));
        assert_eq!(g.game.start(), Position::START);
        assert_eq!(g.game.position(), Position::from_moves("f5f6d3c5e6f7e7f4").unwrap());
        let again = parse(&write(&g.game, &g.black, &g.white, g.time.as_deref())).unwrap();
        assert_eq!((again.game, again.black, again.white, again.time), (g.game, g.black, g.white, g.time));
    }

    #[test]
    fn bad_games_are_located_errors() {
        let e =
            parse("(;GM[Othello]BO[8 ---------------------------O*------*O--------------------------- *]B[F5]W[A1];)")
                .unwrap_err();
        assert!(matches!(e.fault, TextFault::Play { ply: 2, .. }), "{e}");
        assert_eq!(parse("(;GM[Chess];)").unwrap_err().fault, TextFault::NotOthello);
        assert_eq!(parse("(;GM[Othello]PB[x").unwrap_err().fault, TextFault::UnclosedTag);
        assert_eq!(parse("nothing here").unwrap_err().fault, TextFault::NoGameStart);
        let short = TextFault::Board(crate::ParseError::Board(crate::BoardTextFault::Squares { found: 4 }));
        assert_eq!(parse("(;GM[Othello]BO[8 --- *];)").unwrap_err().fault, short);
        assert_eq!(parse("(;GM[Othello]B[F5]").unwrap_err().fault, TextFault::Unterminated);
    }
}
