//! Zobrist hashing: fixed 64-bit keys, incremental updates on play and pass, and the
//! canonical key shared by the 8 images of a position.
//!
//! The key of a [`Board`] is the XOR of one constant per (square, side-to-move disc)
//! and one per (square, opponent disc). The constants come from a fixed-seed SplitMix64
//! stream evaluated at compile time, so keys are identical on every machine and run.
//! **Books store these keys: changing the seed or the order of generation is a
//! breaking change of the book format** (a test pins the start key).
//!
//! From scratch, a key is 16 table lookups (one per byte of each bitboard) in tables
//! that XOR the square constants of every byte value; that is the same function as the
//! square-by-square definition, only faster.

use crate::board::{Board, Squares};
use crate::square::Square;

const SEED: u64 = 0x7468_6F72_626F_6F6B; // "thorbook"

const fn splitmix64(state: u64) -> (u64, u64) {
    let s = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    (s, mix64(s))
}

/// SplitMix64's finaliser: a well-mixed 64-bit function of `z` (the keys' generator,
/// and the seeded random choices of books and audits).
pub(crate) const fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Per-square constants: `[0]` for the side to move's discs, `[1]` for the opponent's.
pub(crate) static SQUARE_KEYS: [[u64; 64]; 2] = build_square_keys();

/// The key XORed into Thor/position indexes when white is to move, so that a board
/// and its colour-swapped twin (same relative board, other colour) differ.
pub(crate) const WHITE_TO_MOVE: u64 = {
    let (_, z) = splitmix64(SEED ^ 0xFFFF_FFFF);
    z
};

const fn build_square_keys() -> [[u64; 64]; 2] {
    let mut keys = [[0u64; 64]; 2];
    let mut state = SEED;
    let mut side = 0;
    while side < 2 {
        let mut sq = 0;
        while sq < 64 {
            let (s, z) = splitmix64(state);
            state = s;
            keys[side][sq] = z;
            sq += 1;
        }
        side += 1;
    }
    keys
}

/// `BYTE_KEYS[side][byte_index][value]`: XOR of the square keys of the bits of `value`
/// placed in byte `byte_index`.
static BYTE_KEYS: [[[u64; 256]; 8]; 2] = build_byte_keys();

const fn build_byte_keys() -> [[[u64; 256]; 8]; 2] {
    let squares = build_square_keys();
    let mut table = [[[0u64; 256]; 8]; 2];
    let mut side = 0;
    while side < 2 {
        let mut byte = 0;
        while byte < 8 {
            let mut v = 0;
            while v < 256 {
                let mut k = 0u64;
                let mut bit = 0;
                while bit < 8 {
                    if v & (1 << bit) != 0 {
                        k ^= squares[side][byte * 8 + bit];
                    }
                    bit += 1;
                }
                table[side][byte][v] = k;
                v += 1;
            }
            byte += 1;
        }
        side += 1;
    }
    table
}

/// The key of one side's disc set (`side` 0 = to move, 1 = opponent).
#[inline]
fn set_key(side: usize, bits: u64) -> u64 {
    let t = &BYTE_KEYS[side];
    let b = bits.to_le_bytes();
    t[0][b[0] as usize]
        ^ t[1][b[1] as usize]
        ^ t[2][b[2] as usize]
        ^ t[3][b[3] as usize]
        ^ t[4][b[4] as usize]
        ^ t[5][b[5] as usize]
        ^ t[6][b[6] as usize]
        ^ t[7][b[7] as usize]
}

impl Board {
    /// The Zobrist key of this board (relative to the side to move).
    #[inline]
    pub fn key(&self) -> u64 {
        set_key(0, self.player) ^ set_key(1, self.opponent)
    }

    /// The key of the canonical image: equal for all 8 symmetric images.
    #[inline]
    pub fn canonical_key(&self) -> u64 {
        self.canonical().0.key()
    }
}

/// A board's key kept up to date move by move, with the key of the same board seen
/// from the other side (`swapped`), which is what a pass or a move turns it into.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct IncrementalKey {
    /// Key of the board as it is.
    pub key: u64,
    /// Key of the board with player and opponent exchanged.
    pub swapped: u64,
}

impl IncrementalKey {
    /// Keys of `board`, from scratch.
    pub fn new(board: &Board) -> IncrementalKey {
        IncrementalKey { key: board.key(), swapped: board.pass().key() }
    }

    /// Keys after a pass.
    #[inline]
    pub fn pass(self) -> IncrementalKey {
        IncrementalKey { key: self.swapped, swapped: self.key }
    }

    /// Keys after the side to move plays `sq`, flipping `flipped`.
    ///
    /// Flipped discs change owner and the turn changes, so each flipped square
    /// contributes both of its constants; the new disc is the new opponent's.
    #[inline]
    pub fn play(self, sq: Square, flipped: u64) -> IncrementalKey {
        let mut delta = 0u64;
        for s in Squares(flipped) {
            delta ^= SQUARE_KEYS[0][s.index()] ^ SQUARE_KEYS[1][s.index()];
        }
        IncrementalKey {
            key: self.swapped ^ delta ^ SQUARE_KEYS[1][sq.index()],
            swapped: self.key ^ delta ^ SQUARE_KEYS[0][sq.index()],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::symmetry::Transform;
    use crate::testutil::{random_games, Rng};

    fn key_by_definition(b: &Board) -> u64 {
        let mut k = 0;
        for s in Squares(b.player) {
            k ^= SQUARE_KEYS[0][s.index()];
        }
        for s in Squares(b.opponent) {
            k ^= SQUARE_KEYS[1][s.index()];
        }
        k
    }

    /// Books store keys: this value must never change.
    #[test]
    fn start_key_is_pinned() {
        assert_eq!(Board::START.key(), 0xd882_292b_5bdd_2f7a, "{:#x}", Board::START.key());
    }

    #[test]
    fn table_key_equals_definition() {
        for b in random_games(5, 100) {
            assert_eq!(b.key(), key_by_definition(&b));
        }
    }

    #[test]
    fn incremental_equals_from_scratch_along_random_games() {
        let mut rng = Rng(99);
        for _ in 0..500 {
            let mut b = Board::START;
            let mut k = IncrementalKey::new(&b);
            loop {
                assert_eq!(k, IncrementalKey::new(&b));
                let moves = b.legal_moves();
                if moves == 0 {
                    if b.opponent_moves() == 0 {
                        break;
                    }
                    b = b.pass();
                    k = k.pass();
                    continue;
                }
                let sq = rng.pick(moves);
                let f = b.flips(sq);
                b = b.play_flips(sq, f);
                k = k.play(sq, f);
            }
        }
    }

    #[test]
    fn canonical_key_is_equal_for_all_images() {
        let mut distinct = std::collections::HashSet::new();
        for b in random_games(8, 200) {
            let k = b.canonical_key();
            for t in Transform::ALL {
                assert_eq!(t.board(&b).canonical_key(), k);
            }
            distinct.insert(k);
        }
        // Keys separate positions: 200 games give thousands of distinct positions.
        assert!(distinct.len() > 10_000, "{}", distinct.len());
    }
}
