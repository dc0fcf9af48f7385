//! Questions asked of a book: the moves of a position with their book values and
//! leaf, the principal line through the book, and the engine's choice of book move.

use serde::Serialize;

use super::trust::Trust;
use super::Book;
use crate::board::{Color, Squares};
use crate::position::Position;
use crate::results::win_rate;
use crate::square::Move;

/// The principal variation through the book: at each position its best option (the
/// first of [`book_moves`]: the most played among equals, a book move before the leaf,
/// then the first in square order, so the line starts with the move listed first),
/// ending with the leaf move.
pub fn book_line<D: AsRef<[u8]>>(book: &Book<D>, from: &Position, max_len: usize) -> Vec<Move> {
    let mut line = Vec::new();
    let mut pos = *from;
    while line.len() < max_len {
        if book.probe(&pos.board).is_none() {
            break;
        }
        let choices = moves(book, &pos, Detail::Order);
        // The best option: the value under negamax (a corrected back-up stores less).
        let best = choices.first().filter(|c| c.in_book).map(|c| c.mv);
        match best {
            Some(mv) => {
                line.push(mv);
                pos = pos.try_play(mv).expect("book moves are legal");
            }
            None => {
                // The leaf as `book_moves` lists it: only when legal here (a damaged
                // book's leaf code may name any square).
                if let Some(leaf) = choices.iter().find(|c| c.leaf) {
                    line.push(leaf.mv);
                }
                break;
            }
        }
    }
    line
}

/// A move from a book position as the query shows it.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct BookMove {
    /// The move in the query's orientation.
    #[serde(rename = "move")]
    pub mv: Move,
    /// Score for the side to move (book value of the child, or the leaf score).
    pub score: i32,
    /// True for a book move (the child is a book position).
    pub in_book: bool,
    /// True for the searched best move leaving the book.
    pub leaf: bool,
    /// Leaf search depth (leaf moves only; a book move's depth is its trust's
    /// `leaf_depth`).
    pub depth: Option<u8>,
    /// Whether the score is exact (a solved leaf, or a book child whose value is proven).
    pub exact: bool,
    /// Games that played it (book moves).
    pub games: u32,
    /// Black's win rate (wins + draws / 2) in those games.
    pub black_win_rate: Option<f64>,
    /// How far the score can be trusted: proven or not, the depth of the leaf that
    /// decides it, an uncertainty in discs and a grade.
    pub trust: Trust,
}

/// The book moves and the leaf of `pos` (best first); empty if not a book position.
pub fn book_moves<D: AsRef<[u8]>>(book: &Book<D>, pos: &Position) -> Vec<BookMove> {
    moves(book, pos, Detail::Trust)
}

/// [`book_moves`] in the same order with the same scores, without each move's trust
/// (its `trust` is [`Trust::proven_only`]'s): for walks over many positions that need
/// no grade, such as a repertoire.
#[cfg(any(feature = "cli", feature = "testing", test))]
pub(crate) fn book_moves_ordered<D: AsRef<[u8]>>(book: &Book<D>, pos: &Position) -> Vec<BookMove> {
    moves(book, pos, Detail::Order)
}

/// How much [`moves`] works out about each move.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Detail {
    /// Everything, the trust of each move included (which follows the line below each
    /// child down to its deciding leaf: a probe of every child at every ply of it).
    Trust,
    /// Only what orders the moves and says whether a score is exact: a book line and a
    /// choice need no more, and on a large book the trust of every move along a line
    /// is thousands of probes (a cold `book query` on 10^8 positions read 298 MB).
    /// `trust` is then that of [`Trust::proven_only`].
    Order,
}

fn moves<D: AsRef<[u8]>>(book: &Book<D>, pos: &Position, detail: Detail) -> Vec<BookMove> {
    let mut out = Vec::new();
    let Some(hit) = book.probe(&pos.board) else { return out };
    book.prefetch_children(&pos.board);
    let mut memo = std::collections::HashMap::new();
    for (mv, child) in pos.board.successors() {
        if let Some(c) = book.probe(&child) {
            let r = c.record;
            // The child's record counts results for its side to move: the other colour.
            // Positions no game reached (deviation) have no win rate.
            let child_mover = win_rate(r.wins.into(), r.draws.into(), r.games.into());
            let black = child_mover.map(|m| if pos.side == Color::Black { 1.0 - m } else { m });
            let trust = match detail {
                Detail::Trust => Trust::of_position(book, &child, &mut memo),
                Detail::Order => Trust::proven_only(book, &child, &mut memo),
            };
            out.push(BookMove {
                mv,
                score: -c.value(),
                in_book: true,
                leaf: false,
                depth: None,
                exact: trust.exact,
                games: r.games,
                black_win_rate: black,
                trust,
            });
        } else if hit.leaf_move() == Some(mv) {
            out.push(BookMove {
                mv,
                score: hit.record.leaf_score as i32,
                in_book: false,
                leaf: true,
                depth: Some(hit.record.leaf_depth),
                exact: hit.record.leaf_exact(),
                games: 0,
                black_win_rate: None,
                trust: hit
                    .record
                    .leaf_level()
                    .map_or_else(|| Trust::of_position(book, &pos.board, &mut memo), Trust::of_leaf),
            });
        }
    }
    out.sort_by_key(|m| std::cmp::Reverse((m.score, m.games)));
    out
}

/// How a player picks among book moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct BookChoice {
    /// Pick among moves within this many discs of the best (0: the best), weighted
    /// toward the best: a move `d` discs below it weighs `randomness + 1 − d`.
    pub randomness: i32,
    /// Never pick a move whose score is below −`max_loss` (64: any move).
    pub max_loss: i32,
    /// Leave the book when its best playable move scores more than this many discs
    /// below the position's stored value (a book whose values do not agree with its
    /// moves — merged, imported or damaged — is not trusted there; Egaroucid's safety).
    pub max_drop: i32,
}

/// The default [`BookChoice::max_drop`]: a consistent book has no drop at all.
pub(crate) const DEFAULT_MAX_DROP: i32 = 2;

impl Default for BookChoice {
    fn default() -> BookChoice {
        BookChoice { randomness: 0, max_loss: 64, max_drop: DEFAULT_MAX_DROP }
    }
}

/// A book move to play in `pos`: among the book moves and leaf (each checked legal, so
/// a damaged book cannot suggest an illegal move) that lose by at most `max_loss`, those
/// within `randomness` of the best, one picked by `seed` with weights falling linearly
/// with the loss ([`BookChoice::randomness`]; the best, most played first, when only
/// one qualifies). `None` when the book has nothing to play here, or when its best
/// playable move is more than [`BookChoice::max_drop`] below the stored value.
pub fn choose_move<D: AsRef<[u8]>>(book: &Book<D>, pos: &Position, choice: BookChoice, seed: u64) -> Option<BookMove> {
    let moves: Vec<BookMove> = moves(book, pos, Detail::Order)
        .into_iter()
        .filter(|m| m.score >= -choice.max_loss && pos.try_play(m.mv).is_ok())
        .collect();
    let best = moves.first()?.score;
    let stored = book.probe(&pos.board)?.value();
    if best < stored - choice.max_drop.max(0) {
        return None;
    }
    let r = choice.randomness.max(0);
    let weights: Vec<u64> = moves
        .iter()
        .take_while(|m| m.score >= best - r)
        .map(|m| u64::try_from(r + 1 - (best - m.score)).unwrap_or(0))
        .collect();
    let mut pick = seed % weights.iter().sum::<u64>();
    let mut chosen = moves.first()?;
    for (m, w) in moves.iter().zip(&weights) {
        if pick < *w {
            chosen = m;
            break;
        }
        pick -= w;
    }
    // The trust of the move chosen, in full.
    let mut chosen = chosen.clone();
    if chosen.in_book {
        let child = pos.try_play(chosen.mv).ok()?.board;
        chosen.trust = Trust::of_position(book, &child, &mut std::collections::HashMap::new());
    }
    Some(chosen)
}

/// Everything a book says about a position, as `book query --json` and the explorer's
/// API show it.
#[derive(Clone, Debug, Serialize)]
pub struct BookQuery {
    /// The position, its side to move included (in JSON, `board` as board text and
    /// `side_to_move`, `black` or `white`).
    #[serde(flatten, serialize_with = "position_fields")]
    pub position: Position,
    /// Whether the position is a book position.
    pub in_book: bool,
    /// Its value for the side to move.
    pub value: Option<i32>,
    /// Games of the source archives that reached it.
    pub games: Option<u32>,
    /// Book moves and the leaf, best first.
    pub moves: Vec<BookMove>,
    /// Legal moves the book knows nothing about.
    pub not_in_book: Vec<Move>,
    /// The principal line through the book (in JSON, as one string of moves).
    #[serde(serialize_with = "crate::square::serialize_moves")]
    pub line: Vec<Move>,
}

/// The position as the JSON has always shown it: two fields, one of them derived.
fn position_fields<S: serde::Serializer>(pos: &Position, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeStruct;
    let mut fields = s.serialize_struct("Position", 2)?;
    fields.serialize_field("board", &pos.to_board_text())?;
    fields.serialize_field("side_to_move", &pos.side)?;
    fields.end()
}

/// The book's view of `pos`.
pub fn query<D: AsRef<[u8]>>(book: &Book<D>, pos: &Position) -> BookQuery {
    let hit = book.probe(&pos.board);
    let moves = book_moves(book, pos);
    let listed: Vec<Move> = moves.iter().map(|m| m.mv).collect();
    let not_in_book: Vec<Move> =
        Squares(pos.board.legal_moves()).map(Move::Place).filter(|m| !listed.contains(m)).collect();
    BookQuery {
        position: *pos,
        in_book: hit.is_some(),
        value: hit.map(|h| h.value()),
        games: hit.map(|h| h.record.games),
        moves,
        not_in_book,
        line: book_line(book, pos, 60),
    }
}

#[cfg(any(feature = "explorer", test))]
/// The symmetry of the start position that turns `first` into f5 (the identity when
/// there is no first move or it is not one of the four openings).
pub(crate) fn turn_to_f5(first: Option<Move>) -> crate::symmetry::Transform {
    let f5 = Move::Place("f5".parse().expect("a square"));
    crate::symmetry::Transform::ALL
        .into_iter()
        .find(|t| {
            t.board(&crate::board::Board::START) == crate::board::Board::START
                && first.map(|m| t.apply_move(m)) == Some(f5)
        })
        .unwrap_or(crate::symmetry::Transform::Identity)
}
