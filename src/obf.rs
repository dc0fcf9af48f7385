//! Problem files in the FFO/Edax `.obf` format: one position per line, 64 squares and
//! the side to move, then optionally `;`-separated ` MV:+S` fields giving the exact
//! score of moves (best first). Blank lines and lines starting with `%` or `#` are
//! comments.
// Input handling: every narrowing or sign-changing conversion is checked (`try_from`,
// `from_le_bytes`), never a silent `as`.
#![deny(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_possible_wrap)]

use thiserror::Error;

use crate::position::Position;
use crate::square::{Move, ParseError};

/// One problem: a position and the scores listed for its moves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// 1-based line number in its file.
    pub line: usize,
    /// The position.
    pub position: Position,
    /// Listed moves with their exact scores for the side to move, as given.
    pub scores: Vec<(Move, i32)>,
}

impl Problem {
    /// The best listed score, if any.
    pub fn best_score(&self) -> Option<i32> {
        self.scores.iter().map(|&(_, s)| s).max()
    }

    /// The listed moves that reach the best score.
    pub fn best_moves(&self) -> Vec<Move> {
        let best = self.best_score();
        self.scores.iter().filter(|&&(_, s)| Some(s) == best).map(|&(m, _)| m).collect()
    }
}

/// A line that is not a problem.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("line {line}: {fault}")]
#[non_exhaustive]
pub struct ObfError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub fault: ObfFault,
}

/// What is wrong with a line of an `.obf` file.
#[derive(Debug, Clone, Copy, Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum ObfFault {
    /// The board text before the first `;`.
    #[error("{0}")]
    Board(ParseError),
    /// A field that is not `MOVE:SCORE`.
    #[error("field {field} is not MOVE:SCORE")]
    NotScoredMove {
        /// 1-based field after the board.
        field: usize,
    },
    /// A move that does not parse.
    #[error("field {field}: {source}")]
    Move {
        /// 1-based field after the board.
        field: usize,
        /// Why.
        source: ParseError,
    },
    /// A score that is not a whole number.
    #[error("field {field}: the score is not a whole number")]
    Score {
        /// 1-based field after the board.
        field: usize,
    },
}

/// Parses a whole `.obf` text.
pub fn parse_obf(text: &str) -> Result<Vec<Problem>, ObfError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('%') || line.starts_with('#') {
            continue;
        }
        let err = |fault| ObfError { line: i + 1, fault };
        let mut fields = line.split(';');
        let head = fields.next().unwrap_or_default();
        let position = Position::parse_board_text(head).map_err(|e| err(ObfFault::Board(e)))?;
        let mut scores = Vec::new();
        for (k, f) in fields.map(str::trim).filter(|f| !f.is_empty()).enumerate() {
            let field = k + 1;
            let (mv, score) = f.split_once(':').ok_or_else(|| err(ObfFault::NotScoredMove { field }))?;
            let mv: Move = mv.trim().parse().map_err(|source| err(ObfFault::Move { field, source }))?;
            let score: i32 = score.trim().parse().map_err(|_| err(ObfFault::Score { field }))?;
            scores.push((mv, score));
        }
        out.push(Problem { line: i + 1, position, scores });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_scored_lines_and_reports_bad_ones() {
        let text = "% comment\n--XXXXX--OOOXX-O-OOOXXOX-OXOXOXXOXXXOXXX--XOXOXX-XXXOOO--OOOOO-- X; G8:+18; H1:+12;\n";
        let p = parse_obf(text).unwrap();
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].line, 2);
        assert_eq!(p[0].scores, vec![("g8".parse().unwrap(), 18), ("h1".parse().unwrap(), 12)]);
        assert_eq!(p[0].best_moves(), vec!["g8".parse().unwrap()]);
        let bad = parse_obf("--XXXXX--OOOXX-O-OOOXXOX-OXOXOXXOXXXOXXX--XOXOXX-XXXOOO--OOOOO-- X; G8+18;").unwrap_err();
        assert_eq!(bad, ObfError { line: 1, fault: ObfFault::NotScoredMove { field: 1 } });
        assert_eq!(bad.to_string(), "line 1: field 1 is not MOVE:SCORE");
    }
}
