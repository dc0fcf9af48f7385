//! Board diagrams as SVG: the one renderer behind `thorbook show --svg` and the
//! explorer's page. A diagram is a self-contained SVG document (no fonts or scripts
//! fetched), with coordinates, the discs, the last move, and marks on squares: the
//! legal moves, or text such as book values.

use std::fmt::Write;

use crate::board::{Color, Squares};
use crate::position::Position;
use crate::square::{Move, Square};

/// What to draw on a square besides its disc.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Mark {
    /// A legal move: a small dot.
    Legal,
    // Only `show --svg` writes texts; the drawer keeps them for every caller.
    #[cfg_attr(not(feature = "cli"), allow(dead_code))]
    /// A short text (a book value, a score), drawn in the square; `best` draws it bold.
    Text {
        /// The text (a few characters).
        text: String,
        /// Emphasise it.
        best: bool,
    },
}

/// A diagram to draw.
#[derive(Clone, Debug, Default)]
pub(crate) struct Diagram {
    /// The position.
    pub position: Option<Position>,
    /// The move that led to it, outlined.
    pub last_move: Option<Move>,
    /// Marks on squares.
    pub marks: Vec<(Square, Mark)>,
    /// Draw a1–h8 coordinates around the board.
    pub coordinates: bool,
}

const CELL: u32 = 48;
const MARGIN: u32 = 24;

impl Diagram {
    /// A diagram of `pos` with coordinates and its legal moves marked.
    pub(crate) fn with_legal_moves(pos: Position, last_move: Option<Move>) -> Diagram {
        let marks = Squares(pos.board.legal_moves()).map(|sq| (sq, Mark::Legal)).collect();
        Diagram { position: Some(pos), last_move, marks, coordinates: true }
    }

    /// The SVG document. Squares carry `data-square="f5"` so a page can attach clicks.
    pub(crate) fn to_svg(&self) -> String {
        let pos = self.position.unwrap_or(Position::START);
        let margin = if self.coordinates { MARGIN } else { 0 };
        let side = 8 * CELL + 2 * margin;
        let mut s = String::with_capacity(16 * 1024);
        let _ = write!(
            s,
            r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {side} {side}" width="{side}" height="{side}" role="img" aria-label="Othello board, {} to move">"##,
            escape(&pos.side.to_string())
        );
        let _ = write!(s, r##"<rect width="{side}" height="{side}" fill="#f4f1e8"/>"##);
        let _ = write!(
            s,
            r##"<rect x="{margin}" y="{margin}" width="{}" height="{}" fill="#2e7d4f" stroke="#1b4d30" stroke-width="2"/>"##,
            8 * CELL,
            8 * CELL
        );
        let (black, white) = match pos.side {
            Color::Black => (pos.board.player, pos.board.opponent),
            Color::White => (pos.board.opponent, pos.board.player),
        };
        for sq in Square::ALL {
            let (x, y) = (margin + sq.col() as u32 * CELL, margin + sq.row() as u32 * CELL);
            let _ = write!(
                s,
                r##"<rect class="sq" data-square="{sq}" x="{x}" y="{y}" width="{CELL}" height="{CELL}" fill="#2e7d4f" stroke="#1b4d30" stroke-width="1"/>"##
            );
            let (cx, cy) = (x + CELL / 2, y + CELL / 2);
            let bit = sq.bit();
            if (black | white) & bit != 0 {
                let (fill, stroke) = if black & bit != 0 { ("#111", "#000") } else { ("#fafafa", "#888") };
                let _ = write!(
                    s,
                    r##"<circle cx="{cx}" cy="{cy}" r="{}" fill="{fill}" stroke="{stroke}" stroke-width="1.5" pointer-events="none"/>"##,
                    CELL / 2 - 5
                );
            }
        }
        for (sq, mark) in &self.marks {
            let (cx, cy) = (margin + sq.col() as u32 * CELL + CELL / 2, margin + sq.row() as u32 * CELL + CELL / 2);
            match mark {
                Mark::Legal => {
                    let color = if pos.side == Color::Black { "#111" } else { "#fafafa" };
                    let _ = write!(
                        s,
                        r##"<circle class="legal" cx="{cx}" cy="{cy}" r="5" fill="{color}" fill-opacity="0.55" pointer-events="none"/>"##
                    );
                }
                Mark::Text { text, best } => {
                    let weight = if *best { "bold" } else { "normal" };
                    let color = if *best { "#ffe066" } else { "#e8f5e9" };
                    let _ = write!(
                        s,
                        r##"<text x="{cx}" y="{}" font-family="sans-serif" font-size="15" font-weight="{weight}" fill="{color}" text-anchor="middle" pointer-events="none">{}</text>"##,
                        cy + 5,
                        escape(text)
                    );
                }
            }
        }
        if let Some(Move::Place(sq)) = self.last_move {
            let (x, y) = (margin + sq.col() as u32 * CELL, margin + sq.row() as u32 * CELL);
            let _ = write!(
                s,
                r##"<rect class="last" x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#e53935" stroke-width="3" pointer-events="none"/>"##,
                x + 2,
                y + 2,
                CELL - 4,
                CELL - 4
            );
        }
        if self.coordinates {
            for i in 0..8u32 {
                let c = (b'a' + i as u8) as char;
                let at = margin + i * CELL + CELL / 2;
                let _ = write!(
                    s,
                    r##"<text x="{at}" y="{}" font-family="sans-serif" font-size="13" fill="#333" text-anchor="middle">{c}</text>"##,
                    margin - 8
                );
                let _ = write!(
                    s,
                    r##"<text x="{}" y="{}" font-family="sans-serif" font-size="13" fill="#333" text-anchor="middle">{}</text>"##,
                    margin / 2,
                    at + 5,
                    i + 1
                );
            }
        }
        s.push_str("</svg>\n");
        s
    }
}

/// Escapes text for SVG/XML content and attributes.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

impl Position {
    /// The board as an SVG drawing (the explorer's and `board --svg`'s), the legal
    /// moves marked and `last_move` ringed: what a notebook or a web page shows.
    pub fn to_svg(&self, last_move: Option<Move>) -> String {
        Diagram::with_legal_moves(*self, last_move).to_svg()
    }
}
