//! The bitboard core: [`Board`] (side to move and opponent), move generation, flips,
//! play, pass, game end, disc counts and the final score.
//!
//! A `Board` is relative to the side to move, which is what search, hashing and books
//! need; [`crate::position::Position`] adds the absolute colour for notation and games.
//! Everything here is allocation-free and branch-light: it is the hot path of perft,
//! search and Thor replay.

use std::fmt;

use crate::square::{Move, Square};

/// A disc colour, also used for the side to move.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Color {
    /// Black moves first.
    Black,
    /// White.
    White,
}

/// The other colour: `!Color::Black` is white.
impl std::ops::Not for Color {
    type Output = Color;

    #[inline]
    fn not(self) -> Color {
        match self {
            Color::Black => Color::White,
            Color::White => Color::Black,
        }
    }
}

impl Color {
    /// `X` for black, `O` for white (FFO/Edax board text).
    pub(crate) fn symbol(self) -> char {
        match self {
            Color::Black => 'X',
            Color::White => 'O',
        }
    }
}

impl fmt::Display for Color {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Color::Black => "black",
            Color::White => "white",
        })
    }
}

/// Named square sets.
pub(crate) mod masks {
    /// a1, h1, a8, h8.
    pub(crate) const CORNERS: u64 = 0x8100_0000_0000_0081;
    /// All 28 edge squares.
    pub(crate) const EDGES: u64 = 0xFF81_8181_8181_81FF;
    /// Every square except the a- and h-files: stops horizontal wrap-around.
    pub(crate) const NOT_A_H_FILES: u64 = 0x7E7E_7E7E_7E7E_7E7E;
    /// The four centre squares d4, e4, d5, e5.
    pub(crate) const CENTER: u64 = 0x0000_0018_1800_0000;
}

/// A position relative to the side to move: `player` has the move, `opponent` waits.
///
/// Invariant: `player & opponent == 0`. 16 bytes, `Copy`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Board {
    /// Discs of the side to move.
    pub player: u64,
    /// Discs of the other side.
    pub opponent: u64,
}

/// Rays from each square in the 8 directions, without the square itself. Directions
/// 0..4 go towards higher indices (+1, +7, +8, +9), 4..8 towards lower ones
/// (-1, -7, -8, -9): `flips` scans the first group from the low end and the second
/// from the high end.
static RAYS: [[u64; 8]; 64] = build_rays();

const fn build_rays() -> [[u64; 8]; 64] {
    // (dcol, drow) per direction, in the order documented on RAYS.
    const DIRS: [(i32, i32); 8] = [(1, 0), (-1, 1), (0, 1), (1, 1), (-1, 0), (1, -1), (0, -1), (-1, -1)];
    let mut rays = [[0u64; 8]; 64];
    let mut sq = 0;
    while sq < 64 {
        let mut d = 0;
        while d < 8 {
            let (dc, dr) = DIRS[d];
            let mut c = (sq % 8) as i32 + dc;
            let mut r = (sq / 8) as i32 + dr;
            let mut ray = 0u64;
            while c >= 0 && c < 8 && r >= 0 && r < 8 {
                ray |= 1u64 << (r * 8 + c);
                c += dc;
                r += dr;
            }
            rays[sq][d] = ray;
            d += 1;
        }
        sq += 1;
    }
    rays
}

crate::cpu::dispatched! {
    /// Squares where a disc of `p` would flip at least one disc of `o` (legal moves).
    ///
    /// Kogge–Stone flood with doubling: for each of the 8 directions, three shift steps
    /// cover runs of up to six opponent discs. The x86-64-v3 copy runs the eight
    /// directions as four-lane AVX2 shifts (`crate::cpu`).
    pub(crate) fn legal_moves(p: u64, o: u64) -> u64 = legal_moves_body / legal_moves_v3, legal_moves_v4, legal_moves_base;
}

#[inline(always)]
fn legal_moves_body(p: u64, o: u64) -> u64 {
    let empty = !(p | o);
    let inner = o & masks::NOT_A_H_FILES;
    let moves = flood_left(p, inner, 1)
        | flood_right(p, inner, 1)
        | flood_left(p, o, 8)
        | flood_right(p, o, 8)
        | flood_left(p, inner, 7)
        | flood_right(p, inner, 7)
        | flood_left(p, inner, 9)
        | flood_right(p, inner, 9);
    moves & empty
}

#[inline(always)]
fn flood_left(p: u64, m: u64, s: u32) -> u64 {
    let mut f = m & (p << s);
    f |= m & (f << s);
    let pre = m & (m << s);
    f |= pre & (f << (2 * s));
    f |= pre & (f << (2 * s));
    f << s
}

#[inline(always)]
fn flood_right(p: u64, m: u64, s: u32) -> u64 {
    let mut f = m & (p >> s);
    f |= m & (f >> s);
    let pre = m & (m >> s);
    f |= pre & (f >> (2 * s));
    f |= pre & (f >> (2 * s));
    f >> s
}

crate::cpu::dispatched! {
    /// Discs of `o` flipped when `p` plays on the empty square `sq` (0 if the move is
    /// illegal).
    ///
    /// Per ray, the first square that is not an opponent disc is found with one
    /// trailing/leading-zero count; the run before it flips when that square is `p`'s.
    pub(crate) fn flips(p: u64, o: u64, sq: Square) -> u64 = flips_body / flips_v3, flips_v4, flips_base;
}

#[inline(always)]
fn flips_body(p: u64, o: u64, sq: Square) -> u64 {
    let rays = &RAYS[sq.index()];
    let mut flipped = 0u64;
    let mut d = 0;
    while d < 4 {
        let ray = rays[d];
        let stop = ray & !o;
        let first = stop & stop.wrapping_neg();
        let run = first.wrapping_sub(1) & ray;
        flipped |= run & 0u64.wrapping_sub(((first & p) != 0) as u64);
        d += 1;
    }
    while d < 8 {
        let ray = rays[d];
        // Bit 0 is a sentinel so leading_zeros stays below 64; `first & ray` rejects it.
        let stop = (ray & !o) | 1;
        let first = (1u64 << 63) >> stop.leading_zeros();
        let run = ray & (first.wrapping_neg() << 1);
        flipped |= run & 0u64.wrapping_sub(((first & p & ray) != 0) as u64);
        d += 1;
    }
    flipped
}

/// One CPU level's copies of the move-generation kernels, for a recursion that chooses
/// its level once rather than at every call: monomorphised over a `Kernels`, it calls
/// that level's copies directly, as a native build calls its only ones (perft measured
/// 8% faster so than through the dispatchers). An instance exists only where the CPU
/// has its level, which is what makes its methods sound to call.
pub(crate) trait Kernels: Copy {
    /// [`legal_moves`] in this level's copy.
    fn legal_moves(self, p: u64, o: u64) -> u64;
    /// [`flips`] in this level's copy.
    fn flips(self, p: u64, o: u64, sq: Square) -> u64;
}

/// The build's own copies: every CPU has them.
#[derive(Clone, Copy)]
pub(crate) struct BaselineKernels;

impl Kernels for BaselineKernels {
    #[inline(always)]
    fn legal_moves(self, p: u64, o: u64) -> u64 {
        legal_moves_base(p, o)
    }

    #[inline(always)]
    fn flips(self, p: u64, o: u64, sq: Square) -> u64 {
        flips_base(p, o, sq)
    }
}

macro_rules! level_kernels {
    ($name:ident, $level:ident, $legal:ident, $flips:ident) => {
        /// The copies of one x86-64 level; made only where the CPU has it.
        #[cfg(target_arch = "x86_64")]
        #[derive(Clone, Copy)]
        pub(crate) struct $name(());

        #[cfg(target_arch = "x86_64")]
        impl $name {
            /// The kernels, when this CPU runs this level.
            pub(crate) fn new() -> Option<$name> {
                (crate::cpu::level() >= crate::cpu::Level::$level).then_some($name(()))
            }
        }

        #[cfg(target_arch = "x86_64")]
        impl Kernels for $name {
            #[inline(always)]
            fn legal_moves(self, p: u64, o: u64) -> u64 {
                // SAFETY: an instance exists only where the CPU has the level (`new`).
                unsafe { $legal(p, o) }
            }

            #[inline(always)]
            fn flips(self, p: u64, o: u64, sq: Square) -> u64 {
                // SAFETY: as above.
                unsafe { $flips(p, o, sq) }
            }
        }
    };
}

level_kernels!(V3Kernels, V3, legal_moves_v3, flips_v3);
level_kernels!(V4Kernels, V4, legal_moves_v4, flips_v4);

/// How many discs `p` flips by playing `sq` when `sq` is the only empty square and
/// every other disc is the opponent's: the last move of a game, where the solver needs
/// the count only. Per line through `sq`, `p`'s discs on it are gathered into a byte
/// (a shift for the row, a multiplication for the others: each column or row of the
/// line lands on its own bit, with no carries), and a table gives the
/// opponent's discs that byte encloses on either side of `sq`. Squares of a diagonal's
/// byte that lie off the board read as opponent discs with no disc of `p` beyond them,
/// which flips nothing, as the edge does. Equal to `flips(p, !p & !sq, sq).count_ones()`.
#[inline]
pub(crate) fn last_flip_count(p: u64, sq: Square) -> u32 {
    const FILE_A: u64 = 0x0101_0101_0101_0101;
    let (row, col) = (sq.index() / 8, sq.index() % 8);
    let lines = &LAST_FLIP_LINES[sq.index()];
    let by_col = |line: u64| ((p & line).wrapping_mul(FILE_A) >> 56) as usize;
    let row_byte = ((p >> (8 * row)) & 0xFF) as usize;
    let col_byte = (((p >> col) & FILE_A).wrapping_mul(0x0102_0408_1020_4080) >> 56) as usize;
    let table = &LAST_FLIPS;
    u32::from(table[col][row_byte] + table[row][col_byte] + table[col][by_col(lines[0])] + table[col][by_col(lines[1])])
}

/// The two diagonals through each square (a1–h8 direction, then a8–h1), without the
/// square: the [`RAYS`] of directions +9 and −9, and +7 and −7.
static LAST_FLIP_LINES: [[u64; 2]; 64] = {
    let rays = build_rays();
    let mut lines = [[0; 2]; 64];
    let mut sq = 0;
    while sq < 64 {
        lines[sq] = [rays[sq][3] | rays[sq][7], rays[sq][1] | rays[sq][5]];
        sq += 1;
    }
    lines
};

/// `LAST_FLIPS[i][byte]`: the discs flipped along a line of eight by placing on square
/// `i` of it, where `byte` holds the mover's discs and every other square of the line is
/// the opponent's.
static LAST_FLIPS: [[u8; 256]; 8] = {
    let mut table = [[0; 256]; 8];
    let mut i = 0;
    while i < 8 {
        let mut byte = 0;
        while byte < 256 {
            let mut count = 0;
            // Towards lower squares, then higher: a run of opponent discs counts when a
            // disc of the mover closes it.
            let mut j = i as i32 - 1;
            while j >= 0 && byte & (1 << j) == 0 {
                j -= 1;
            }
            if j >= 0 {
                count += i as i32 - 1 - j;
            }
            let mut j = i + 1;
            while j < 8 && byte & (1 << j) == 0 {
                j += 1;
            }
            if j < 8 {
                count += (j - i - 1) as i32;
            }
            table[i][byte] = count as u8;
            byte += 1;
        }
        i += 1;
    }
    table
};

/// Empty squares adjacent to at least one disc of `o` (potential mobility).
#[inline]
pub(crate) fn adjacent_empties(o: u64, empty: u64) -> u64 {
    const NOT_H: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    const NOT_A: u64 = 0xFEFE_FEFE_FEFE_FEFE;
    // Discs on the h-file have no neighbour to their right, those on the a-file none to the left.
    let (l, r) = (o & NOT_A, o & NOT_H);
    let around = (r << 1) | (l >> 1) | (o << 8) | (o >> 8) | (l << 7) | (r >> 7) | (r << 9) | (l >> 9);
    around & empty
}

impl Board {
    /// The standard start position, black (the side to move) on d5 and e4.
    pub const START: Board = Board { player: 0x0000_0008_1000_0000, opponent: 0x0000_0010_0800_0000 };

    /// A board from the two disc sets. `None` if they overlap.
    pub fn new(player: u64, opponent: u64) -> Option<Board> {
        (player & opponent == 0).then_some(Board { player, opponent })
    }

    /// Legal moves of the side to move, as a square set.
    #[inline]
    pub fn legal_moves(&self) -> u64 {
        legal_moves(self.player, self.opponent)
    }

    /// Legal moves of the side that waits.
    #[inline]
    pub fn opponent_moves(&self) -> u64 {
        legal_moves(self.opponent, self.player)
    }

    /// Whether `sq` is a legal move for the side to move.
    #[inline]
    pub fn is_legal(&self, sq: Square) -> bool {
        self.empties() & sq.bit() != 0 && flips(self.player, self.opponent, sq) != 0
    }

    /// Discs flipped by the side to move playing `sq` (0 if illegal or occupied).
    #[inline]
    pub fn flips(&self, sq: Square) -> u64 {
        if self.empties() & sq.bit() == 0 {
            return 0;
        }
        flips(self.player, self.opponent, sq)
    }

    /// The board after the side to move plays `sq` flipping `flipped`; the turn passes.
    /// The caller guarantees that `flipped == self.flips(sq) != 0`.
    #[inline]
    pub(crate) fn play_flips(&self, sq: Square, flipped: u64) -> Board {
        Board { player: self.opponent ^ flipped, opponent: self.player | flipped | sq.bit() }
    }

    /// The board after the side to move plays `sq`, or `None` if it is not legal.
    #[inline]
    pub fn play(&self, sq: Square) -> Option<Board> {
        let f = self.flips(sq);
        (f != 0).then(|| self.play_flips(sq, f))
    }

    /// The board with the turn handed to the opponent (a pass).
    #[inline]
    pub fn pass(&self) -> Board {
        Board { player: self.opponent, opponent: self.player }
    }

    /// The positions after each legal move, lowest square first, or after the pass
    /// when the side to move must pass; nothing when the game is over.
    pub fn successors(&self) -> impl Iterator<Item = (Move, Board)> {
        let board = *self;
        let moves = board.legal_moves();
        let pass = (moves == 0 && board.opponent_moves() != 0).then(|| (Move::Pass, board.pass()));
        Squares(moves)
            .map(move |sq| (Move::Place(sq), board.play_flips(sq, flips(board.player, board.opponent, sq))))
            .chain(pass)
    }

    /// The positions one move (or a pass) leads from to this one, with that move,
    /// each once: every `b` whose `successors()` holds `(mv, *self)`. The side that
    /// waits here moved: for each of its discs off the centre, and each choice of how
    /// far along each line its discs were flipped (a disc of its own must close every
    /// run), the position before is checked by playing the move again. Lets a book
    /// find the positions whose leaf move leads into a new one without holding the
    /// boards of all its positions.
    pub(crate) fn predecessors(&self) -> Vec<(Move, Board)> {
        let mover = self.opponent;
        let mut found = Vec::new();
        for sq in Squares(mover & !masks::CENTER) {
            // opts[d][..counts[d]]: what the move may have flipped along direction d.
            let mut opts = [[0u64; 8]; 8];
            let mut counts = [1usize; 8];
            for (d, ray) in RAYS[sq.index()].iter().enumerate() {
                let (mut rest, mut prefix) = (*ray, 0u64);
                while rest != 0 {
                    let next = if d < 4 { rest & rest.wrapping_neg() } else { 1u64 << (63 - rest.leading_zeros()) };
                    if next & mover == 0 {
                        break;
                    }
                    if prefix != 0 {
                        opts[d][counts[d]] = prefix;
                        counts[d] += 1;
                    }
                    prefix |= next;
                    rest &= !next;
                }
            }
            let mut choice = [0usize; 8];
            loop {
                let flipped = (0..8).fold(0, |acc, d| acc | opts[d][choice[d]]);
                if flipped != 0 {
                    let before = Board { player: mover & !sq.bit() & !flipped, opponent: self.player | flipped };
                    if flips(before.player, before.opponent, sq) == flipped {
                        found.push((Move::Place(sq), before));
                    }
                }
                // The next choice, as an odometer over the directions.
                let Some(d) = (0..8).find(|&d| choice[d] + 1 < counts[d]) else { break };
                choice[d] += 1;
                choice[..d].fill(0);
            }
        }
        let before = self.pass();
        if before.legal_moves() == 0 && before.opponent_moves() != 0 {
            found.push((Move::Pass, before));
        }
        found
    }

    /// Empty squares.
    #[inline]
    pub fn empties(&self) -> u64 {
        !(self.player | self.opponent)
    }

    /// Number of empty squares.
    #[inline]
    pub fn empty_count(&self) -> u32 {
        self.empties().count_ones()
    }

    /// Discs of the side to move.
    #[inline]
    pub(crate) fn player_count(&self) -> u32 {
        self.player.count_ones()
    }

    /// Discs of the opponent.
    #[inline]
    pub(crate) fn opponent_count(&self) -> u32 {
        self.opponent.count_ones()
    }

    /// True if the side to move must pass (no move, but the opponent has one).
    #[inline]
    pub fn must_pass(&self) -> bool {
        self.legal_moves() == 0 && self.opponent_moves() != 0
    }

    /// True when neither side can move.
    #[inline]
    pub fn is_game_over(&self) -> bool {
        self.legal_moves() == 0 && self.opponent_moves() == 0
    }

    /// The final disc differential for the side to move, empty squares to the winner
    /// (the WTHOR/FFO/federation rule). Meaningful when the game is over.
    #[inline]
    pub fn final_score(&self) -> i32 {
        let p = self.player_count() as i32;
        let o = self.opponent_count() as i32;
        let e = 64 - p - o;
        let diff = p - o;
        match diff.cmp(&0) {
            std::cmp::Ordering::Greater => diff + e,
            std::cmp::Ordering::Less => diff - e,
            std::cmp::Ordering::Equal => 0,
        }
    }

    /// The side to move's disc count with empties given to the winner, as stored in
    /// WTHOR (black's score when black is `player`). Always `(64 + final_score) / 2`.
    #[inline]
    pub(crate) fn final_discs(&self) -> i32 {
        (64 + self.final_score()) / 2
    }
}

impl fmt::Debug for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "Board {{ player: {:#018x}, opponent: {:#018x} }}", self.player, self.opponent)?;
        for row in 0..8u8 {
            for col in 0..8u8 {
                let bit = 1u64 << (row * 8 + col);
                let c = if self.player & bit != 0 {
                    'P'
                } else if self.opponent & bit != 0 {
                    'o'
                } else {
                    '.'
                };
                write!(f, "{c}")?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}

/// Iterates the squares of a bitboard, lowest first.
#[derive(Clone, Copy)]
pub struct Squares(pub u64);

impl Iterator for Squares {
    type Item = Square;

    #[inline]
    fn next(&mut self) -> Option<Square> {
        if self.0 == 0 {
            return None;
        }
        let sq = Square::new(self.0.trailing_zeros() as u8);
        self.0 &= self.0 - 1;
        Some(sq)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.0.count_ones() as usize;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Squares {}

#[cfg(test)]
#[path = "board_tests.rs"]
mod tests;
