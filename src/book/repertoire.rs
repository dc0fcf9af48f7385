//! A repertoire: the smallest set of lines through a book that lets a player of one
//! colour play the book's best move in every position the opponent can reach with
//! the replies worth preparing for (book moves within `error` discs of the best, or
//! played in at least `min_games` games). On the player's own turns one move, the
//! book's best; on the opponent's, every such reply. A line ends where the book does,
//! at `max_ply`, or at a position already prepared through another line (a
//! transposition, or the same position in another orientation). Replies that give one
//! position up to symmetry (the four first moves) are one reply, listed once.
//!
//! The walk is depth first in the book's order (best first, then most played, then
//! square order), so the same book and settings always give the same repertoire.

use std::collections::HashMap;

use serde::Serialize;

use super::query::{book_moves_ordered, turn_to_f5, BookMove};
use super::Book;
use crate::board::Color;
use crate::position::Position;
use crate::setting::{check, OutOfRange, Setting};
use crate::square::Move;
use crate::symmetry::Transform;

/// What to prepare.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RepertoireConfig {
    /// The colour the player has.
    pub color: Color,
    /// Opponent replies within this many discs of the book's best are prepared for.
    pub error: i32,
    /// Opponent replies played in at least this many games are prepared for too
    /// (`None`: the error alone decides).
    pub min_games: Option<u32>,
    /// Plies from the start after which lines stop.
    pub max_ply: usize,
}

impl RepertoireConfig {
    /// Checks the ranges; the error names the setting.
    pub(crate) fn validate(&self) -> Result<(), OutOfRange> {
        check(Setting::Error, self.error, 0..=128)?;
        check(Setting::MaxPly, self.max_ply, 1..=60)?;
        if let Some(g) = self.min_games {
            check(Setting::MinGames, g, 1..=u32::MAX)?;
        }
        Ok(())
    }
}

/// One position of the repertoire's tree: the move that reached it and what follows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct RepertoireNode {
    /// The move played to reach this node (from its parent), in the orientation of
    /// the line from the start.
    #[serde(rename = "move")]
    pub mv: Move,
    /// Who played it.
    pub by: Color,
    /// The book's value of the move, for the side that played it.
    pub value: i32,
    /// Games that played it (0 for the book's searched leaf move).
    pub games: u32,
    /// The line continues elsewhere: this position was prepared earlier (the ply of
    /// the first line through it, 1-based, in transcript order).
    pub transposes_to: Option<usize>,
    /// The continuations.
    pub children: Vec<RepertoireNode>,
}

/// A repertoire and its counts.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Repertoire {
    /// The moves from the start position.
    pub roots: Vec<RepertoireNode>,
    /// Distinct positions (up to symmetry) the player must know a move in.
    pub positions: usize,
    /// Lines: the transcripts from the start to each end.
    pub lines: Vec<Vec<Move>>,
}

impl Repertoire {
    /// Turns the whole repertoire, as WTHOR shows games, so that its first line starts
    /// with f5 (the book answers in whatever orientation it lists first).
    pub fn turn_to_f5(&mut self) {
        fn turn(nodes: &mut [RepertoireNode], t: Transform) {
            for n in nodes {
                n.mv = t.apply_move(n.mv);
                turn(&mut n.children, t);
            }
        }
        let t = turn_to_f5(self.lines.first().and_then(|l| l.first()).copied());
        for line in &mut self.lines {
            line.iter_mut().for_each(|m| *m = t.apply_move(*m));
        }
        turn(&mut self.roots, t);
    }

    /// As `book repertoire --json` and the explorer's `/api/repertoire` give it: the
    /// settings, the counts, the transcripts and the tree.
    pub fn to_json(&self, config: &RepertoireConfig) -> serde_json::Value {
        serde_json::json!({
            "color": config.color.to_string(),
            "error": config.error,
            "min_games": config.min_games,
            "max_ply": config.max_ply,
            "positions": self.positions,
            "lines": self.lines.iter().map(|l| crate::square::format_moves(l)).collect::<Vec<_>>(),
            "longest": self.longest(),
            "tree": self.roots,
        })
    }

    /// The longest line, in plies.
    pub fn longest(&self) -> usize {
        self.lines.iter().map(Vec::len).max().unwrap_or(0)
    }
}

/// The repertoire of `config` in `book` from the start position.
pub(crate) fn repertoire<D: AsRef<[u8]>>(book: &Book<D>, config: &RepertoireConfig) -> Repertoire {
    let mut walk = Walk { book, config, seen: HashMap::new(), positions: 0, lines: Vec::new() };
    let mut line = Vec::new();
    let roots = walk.children(&Position::START, &mut line);
    if roots.is_empty() {
        walk.lines.clear();
    }
    Repertoire { roots, positions: walk.positions, lines: walk.lines }
}

struct Walk<'a, D: AsRef<[u8]>> {
    book: &'a Book<D>,
    config: &'a RepertoireConfig,
    /// Positions expanded (canonical key) and the index of the first line through
    /// each, 1-based.
    seen: HashMap<u64, usize>,
    positions: usize,
    lines: Vec<Vec<Move>>,
}

impl<D: AsRef<[u8]>> Walk<'_, D> {
    /// The nodes below `pos` (reached by `line`); records a line where nothing follows.
    fn children(&mut self, pos: &Position, line: &mut Vec<Move>) -> Vec<RepertoireNode> {
        let mut pos = *pos;
        if pos.board.legal_moves() == 0 && !pos.board.is_game_over() {
            pos = pos.pass();
        }
        if line.len() >= self.config.max_ply || pos.board.is_game_over() {
            return Vec::new();
        }
        let options = book_moves_ordered(self.book, &pos);
        let Some(best) = options.first() else { return Vec::new() };
        let chosen: Vec<&BookMove> = if pos.side == self.config.color {
            self.positions += 1;
            vec![best]
        } else {
            options
                .iter()
                .filter(|m| {
                    m.in_book
                        && (best.score - m.score <= self.config.error
                            || self.config.min_games.is_some_and(|g| m.games >= g))
                })
                .collect()
        };
        let mut nodes = Vec::with_capacity(chosen.len());
        let mut siblings = Vec::with_capacity(chosen.len());
        for m in chosen {
            let child = pos.try_play(m.mv).expect("book moves are legal");
            let key = child.board.canonical_key();
            // Replies that are one position up to a symmetry of this one (the four first
            // moves) are one reply: the first stands for them all.
            if siblings.contains(&key) {
                continue;
            }
            siblings.push(key);
            line.push(m.mv);
            let mut node = RepertoireNode {
                mv: m.mv,
                by: pos.side,
                value: m.score,
                games: m.games,
                transposes_to: None,
                children: Vec::new(),
            };
            match self.seen.get(&key) {
                Some(&first) => {
                    node.transposes_to = Some(first);
                    self.lines.push(line.clone());
                }
                None => {
                    self.seen.insert(key, self.lines.len() + 1);
                    node.children = if m.in_book { self.children(&child, line) } else { Vec::new() };
                    if node.children.is_empty() {
                        self.lines.push(line.clone());
                    }
                }
            }
            line.pop();
            nodes.push(node);
        }
        nodes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::book::bundled;
    use crate::book::query::book_moves;

    fn config(color: Color, error: i32) -> RepertoireConfig {
        RepertoireConfig { color, error, min_games: None, max_ply: 12 }
    }

    /// Checks a repertoire against its definition by replaying every line: on the
    /// player's turns the book's best move, on the opponent's a reply the settings
    /// prepare for; and every prepared reply of every position on a line leads to a
    /// position on some line (itself, or where a transposition joins it).
    #[test]
    fn every_line_follows_the_definition_and_every_reply_is_prepared() {
        let book = bundled().unwrap();
        for color in [Color::Black, Color::White] {
            let cfg = config(color, 2);
            let r = repertoire(&book, &cfg);
            assert!(!r.lines.is_empty());
            let on_lines: std::collections::HashSet<u64> =
                r.lines.iter().flat_map(|l| replay(l)).map(|p| p.board.canonical_key()).collect();
            for line in &r.lines {
                assert!(line.len() <= cfg.max_ply);
                let positions = replay(line);
                for (i, &mv) in line.iter().enumerate() {
                    let mut pos = positions[i];
                    if pos.board.legal_moves() == 0 {
                        pos = pos.pass();
                    }
                    let options = book_moves(&book, &pos);
                    if pos.side == color {
                        assert_eq!(mv, options[0].mv, "{color}'s move {} of {line:?} is not the best", i + 1);
                        continue;
                    }
                    let m = options.iter().find(|m| m.mv == mv).unwrap();
                    assert!(m.in_book && options[0].score - m.score <= 2, "reply {} of {line:?}", i + 1);
                    for other in options.iter().filter(|o| o.in_book && options[0].score - o.score <= 2) {
                        let key = pos.try_play(other.mv).unwrap().board.canonical_key();
                        assert!(
                            on_lines.contains(&key),
                            "{color}: the reply {} after {:?} is not prepared",
                            other.mv,
                            &line[..i]
                        );
                    }
                }
            }
            // Deterministic.
            assert_eq!(repertoire(&book, &cfg), r);
        }
    }

    fn replay(line: &[Move]) -> Vec<Position> {
        let mut out = vec![Position::START];
        let mut pos = Position::START;
        for &mv in line {
            pos = pos.with_inferred_pass(mv).try_play(mv).unwrap();
            out.push(pos);
        }
        out
    }

    #[test]
    fn a_wider_error_prepares_more_and_a_shorter_reach_fewer() {
        let book = bundled().unwrap();
        let narrow = repertoire(&book, &config(Color::White, 0));
        let wide = repertoire(&book, &config(Color::White, 4));
        assert!(wide.lines.len() > narrow.lines.len());
        assert!(wide.positions >= narrow.positions);
        let short = repertoire(&book, &RepertoireConfig { max_ply: 6, ..config(Color::White, 4) });
        assert!(short.longest() <= 6 && short.positions < wide.positions);
    }
}
