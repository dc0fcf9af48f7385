//! Opening names: the established names of Othello openings with their defining lines,
//! and the name of any position or line — matched by position, so in all 8
//! orientations and through transpositions, the most specific (longest) line winning.
//!
//! The table is written from public opening lists (the names and their moves are
//! facts of the game's literature); every line is given from f5, the others follow by
//! symmetry.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::board::Board;
use crate::position::Position;
use crate::square::{parse_move_sequence, Move};

/// A named opening.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Opening {
    /// Its name (alternative names after a comma).
    pub name: &'static str,
    /// Its defining line from the start, from f5.
    pub line: &'static str,
    /// Plies in the line.
    pub plies: usize,
}

/// (name, line from f5). Longer lines name variations of shorter ones.
const TABLE: &[(&str, &str)] = &[
    ("Diagonal Opening", "f5f6"),
    ("Snake, Peasant", "f5f6e6f4g6"),
    ("Pyramid, Checkerboarding Peasant", "f5f6e6f4g6c5g4g5f3e3c4"),
    ("Heath, Tobidashi", "f5f6e6f4g5"),
    ("Mimura Variation II", "f5f6e6f4g5e7f7c5e3f3c4d3c2"),
    ("Heath-Bat", "f5f6e6f4g5e7e3"),
    ("Iwasaki Variation", "f5f6e6f4g5e7d7"),
    ("Heath-Chimney", "f5f6e6f4g5d6"),
    ("Raccoon Dog", "f5f6e6f4g4"),
    ("Hamilton", "f5f6e6f4g3f3g4"),
    ("Lollipop", "f5f6e6f4g3d6"),
    ("Cow", "f5f6e6f4e3"),
    ("Chimney", "f5f6e6f4e3d6"),
    ("Cow Bat, Bat, Cambridge", "f5f6e6f4e3c5g5"),
    ("Bat (Piau Continuation 2)", "f5f6e6f4e3c5g5g3g4f3g6"),
    ("Melnikov, Bat (Piau Continuation 1)", "f5f6e6f4e3c5g5g3g4f3c4"),
    ("Bat (Kling Continuation)", "f5f6e6f4e3c5g5f3g4g6g3d6f7h5h4h3e7"),
    ("Bat (Kling Alternative)", "f5f6e6f4e3c5g5d6g6"),
    ("Rose-v-Toth", "f5f6e6f4e3c5c4"),
    ("Tanida", "f5f6e6f4e3c5c4e7"),
    ("Aircraft, Feldborg", "f5f6e6f4e3c5c4e7g4"),
    ("Sailboat", "f5f6e6f4e3c5c4e7b5e2"),
    ("Maruoka", "f5f6e6f4e3c5c4d3f3e2"),
    ("Landau", "f5f6e6f4e3c5c4d3c3"),
    ("Buffalo, Kenichi Variation", "f5f6e6f4c3"),
    ("Maruoka Buffalo", "f5f6e6f4c3d7f3"),
    ("Tanida Buffalo", "f5f6e6f4c3d6f3c4c5b4"),
    ("Hokuriku Buffalo", "f5f6e6f4c3c4"),
    ("Wing Variation", "f5f6d3f4"),
    ("Semi-Wing Variation", "f5f6c4f4"),
    ("Parallel Opening", "f5f4"),
    ("Perpendicular Opening", "f5d6"),
    ("Mimura", "f5d6c5f4e3d3"),
    ("Shaman, Danish", "f5d6c5f4e3c6f3"),
    ("Inoue", "f5d6c5f4e3c6e6"),
    ("IAGO", "f5d6c5f4e3c6e6f6"),
    ("Bhagat", "f5d6c5f4e3c6d7"),
    ("Rose", "f5d6c5f4e3c6d3f6e6d7"),
    ("Flat", "f5d6c5f4e3c6d3f6e6d7g4"),
    ("Rotating Flat", "f5d6c5f4e3c6d3f6e6d7g4c4"),
    ("Murakami Variation", "f5d6c5f4e3c6d3f6e6d7g4c4g6"),
    ("Rotating Flat (Kling Continuation)", "f5d6c5f4e3c6d3f6e6d7g4c4g5c3f7d2e7f2"),
    ("Rose-Birth", "f5d6c5f4e3c6d3f6e6d7g3c4"),
    ("Brightstein", "f5d6c5f4e3c6d3f6e6d7g3c4g5c3b4e2"),
    ("Rose-Birdie, Rose-Tamenori", "f5d6c5f4e3c6d3f6e6d7g3c4b4"),
    ("Rose-Tamenori-Kling", "f5d6c5f4e3c6d3f6e6d7g3c4b4c3"),
    ("Greenberg, Dawg", "f5d6c5f4e3c6d3f6e6d7e7"),
    ("Ralle", "f5d6c5f4e3c6d3f3"),
    ("Horse", "f5d6c5f4d3"),
    ("No-Cat", "f5d6c4g5"),
    ("Swallow", "f5d6c4g5c6"),
    ("No-Cat (Continuation)", "f5d6c4g5c6c5d7d3b4c3e3f3"),
    ("Italian", "f5d6c4d3e6"),
    ("Cat", "f5d6c4d3c5"),
    ("Sakaguchi", "f5d6c4d3c5f4e3f3c2c6"),
    ("Berner", "f5d6c4d3c5f4e3f3c2b4b3"),
    ("Ganglion", "f5d6c3g5"),
    ("Tiger", "f5d6c3d3c4"),
    ("Stephenson", "f5d6c3d3c4f4f6"),
    ("No-Kung", "f5d6c3d3c4f4f6g5"),
    ("No-Kung (Continuation)", "f5d6c3d3c4f4f6g5e3f3g4h3g3f2"),
    ("COMP'OTH", "f5d6c3d3c4f4f6f3"),
    ("Kung", "f5d6c3d3c4f4f6b4"),
    ("Leader's Tiger", "f5d6c3d3c4f4e6"),
    ("Brightwell", "f5d6c3d3c4f4e3"),
    ("Ishii", "f5d6c3d3c4f4c5b4b5c6f3e6e3"),
    ("Mainline Tiger", "f5d6c3d3c4f4c5b4b5c6f3e6e3g6f6g5d7g3"),
    ("Rose-Bill", "f5d6c3d3c4f4c5b3c2"),
    ("Tamenori", "f5d6c3d3c4f4c5b3c2e6"),
    ("Aubrey, Tanaka", "f5d6c3d3c4b3"),
];

/// Every named opening, in table order.
pub fn all() -> impl Iterator<Item = Opening> {
    TABLE.iter().map(|&(name, line)| Opening { name, line, plies: line.len() / 2 })
}

/// Canonical key of the position each opening reaches → the opening (the longest
/// line when two lines reach the same position).
fn index() -> &'static HashMap<u64, Opening> {
    static INDEX: OnceLock<HashMap<u64, Opening>> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut map: HashMap<u64, Opening> = HashMap::new();
        for o in all() {
            let moves = parse_move_sequence(o.line).expect("the table's lines are valid");
            let pos = Position::START.play_sequence(&moves).expect("the table's lines are legal");
            let key = pos.board.canonical_key();
            let keep = map.get(&key).is_none_or(|old| o.plies > old.plies);
            if keep {
                map.insert(key, o);
            }
        }
        map
    })
}

/// The opening whose defining position is `board` (any orientation), if any.
pub fn at(board: &Board) -> Option<Opening> {
    index().get(&board.canonical_key()).copied()
}

/// The most specific opening a line from the start passes through: the named
/// position reached last (so a transposition into a named position names it too).
/// Illegal moves end the line where they occur.
pub fn name_line(moves: &[Move]) -> Option<Opening> {
    let mut pos = Position::START;
    let mut found = None;
    for &mv in moves {
        match pos.try_play(mv) {
            Ok(next) => pos = next,
            Err(_) => break,
        }
        if let Some(o) = at(&pos.board) {
            found = Some(o);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::symmetry::Transform;

    fn position_of(line: &str) -> Board {
        Position::START.play_sequence(&parse_move_sequence(line).unwrap()).unwrap().board
    }

    #[test]
    fn every_named_opening_is_recognised_in_all_8_orientations() {
        for o in all() {
            let moves = parse_move_sequence(o.line).unwrap();
            let key = position_of(o.line).canonical_key();
            for t in Transform::ALL {
                // Only the 4 transforms that fix the start position give legal lines from
                // it; the others are the same openings as seen from the other diagonal.
                if t.board(&Board::START) != Board::START {
                    continue;
                }
                let turned: Vec<Move> = moves.iter().map(|&m| t.apply_move(m)).collect();
                let named = name_line(&turned).unwrap_or_else(|| panic!("{} not recognised under {t:?}", o.name));
                assert_eq!(position_of(named.line).canonical_key(), key, "{} under {t:?}: {}", o.name, named.name);
            }
            // And from the position alone, in each of its 8 images.
            let board = position_of(o.line);
            for t in Transform::ALL {
                let named = at(&t.board(&board)).unwrap();
                assert_eq!(position_of(named.line).canonical_key(), key, "{}", o.name);
            }
        }
    }

    #[test]
    fn the_most_specific_name_wins_and_transpositions_are_named() {
        let line = |s: &str| parse_move_sequence(s).unwrap();
        assert_eq!(name_line(&line("f5d6c3d3c4")).unwrap().name, "Tiger");
        assert_eq!(name_line(&line("f5d6c3d3c4f4f6")).unwrap().name, "Stephenson");
        // Past the named lines, the last named position keeps its name.
        assert_eq!(name_line(&line("f5d6c3d3c4f4f6f3e6")).unwrap().name, "COMP'OTH");
        // From c4 (the position turned about the diagonal) and from d3, e6.
        assert_eq!(name_line(&line("c4e3f6e6f5")).unwrap().name, "Tiger");
        assert_eq!(name_line(&line("e6f4c3c4d3")).unwrap().name, "Tiger");
        assert_eq!(name_line(&line("d3c5f6f5e6")).unwrap().name, "Tiger");
        // Transpositions: the Tiger and the Cow reached in other move orders.
        assert_eq!(name_line(&line("f5d6c4d3c3")).unwrap().name, "Tiger");
        assert_eq!(name_line(&line("f5f4e3f6e6")).unwrap().name, "Cow");
        assert!(name_line(&line("")).is_none());
        assert_eq!(all().count(), TABLE.len());
        for name in [
            "Tiger",
            "Rose",
            "Buffalo",
            "Cow",
            "Heath",
            "Cat",
            "Snake",
            "Aubrey",
            "Brightwell",
            "Stephenson",
            "Leader's Tiger",
        ] {
            assert!(all().any(|o| o.name.split(", ").any(|n| n.starts_with(name))), "{name}");
        }
    }
}
