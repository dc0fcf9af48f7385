//! The 8 symmetries of the board (the dihedral group of the square) on squares,
//! bitboards and boards, and the canonical form used to merge equivalent positions.
//!
//! A [`Transform`] is encoded in 3 bits applied in this order: bit 2 transposes
//! (swaps column and row, the a1–h8 diagonal), then bit 0 mirrors columns (a↔h),
//! then bit 1 mirrors rows (1↔8).

use crate::board::Board;
use crate::square::{Move, Square};

/// One of the 8 symmetries of the square; its discriminant is its 3-bit code.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
#[repr(u8)]
pub enum Transform {
    /// Identity.
    Identity = 0,
    /// Mirror columns: a ↔ h.
    MirrorColumns = 1,
    /// Mirror rows: 1 ↔ 8.
    MirrorRows = 2,
    /// Rotation by 180 degrees.
    Rotate180 = 3,
    /// Reflection in the a1–h8 diagonal.
    Transpose = 4,
    /// Transpose then mirror columns: a quarter turn.
    RotateA = 5,
    /// Transpose then mirror rows: the other quarter turn.
    RotateB = 6,
    /// Reflection in the a8–h1 diagonal.
    AntiTranspose = 7,
}

impl Transform {
    /// All 8 in code order, identity first.
    pub const ALL: [Transform; 8] = [
        Transform::Identity,
        Transform::MirrorColumns,
        Transform::MirrorRows,
        Transform::Rotate180,
        Transform::Transpose,
        Transform::RotateA,
        Transform::RotateB,
        Transform::AntiTranspose,
    ];

    /// The transform with code `code` (0..8).
    pub(crate) fn from_code(code: u8) -> Option<Transform> {
        Transform::ALL.get(usize::from(code)).copied()
    }

    /// Code 0..8, stable (books and files may store it).
    pub(crate) fn code(self) -> u8 {
        self as u8
    }

    /// The transform that undoes `self`.
    ///
    /// Without a transpose, both mirrors are their own inverse. With one, undoing
    /// "transpose, then mirror" needs the mirrors swapped: mirroring columns after a
    /// transpose equals mirroring rows before it.
    pub fn inverse(self) -> Transform {
        if (self as u8) & 4 == 0 {
            self
        } else {
            Transform::ALL[usize::from(4 | ((self as u8 & 1) << 1) | ((self as u8 >> 1) & 1))]
        }
    }

    /// The image of a square.
    #[inline]
    pub fn square(self, sq: Square) -> Square {
        let (mut c, mut r) = (sq.col(), sq.row());
        if (self as u8) & 4 != 0 {
            std::mem::swap(&mut c, &mut r);
        }
        if (self as u8) & 1 != 0 {
            c = 7 - c;
        }
        if (self as u8) & 2 != 0 {
            r = 7 - r;
        }
        Square::from_coords(c, r).expect("coordinates stay on the board")
    }

    /// The image of a move (a pass stays a pass).
    pub fn apply_move(self, mv: Move) -> Move {
        match mv {
            Move::Place(sq) => Move::Place(self.square(sq)),
            Move::Pass => Move::Pass,
        }
    }

    /// The image of a bitboard.
    #[inline]
    pub(crate) fn bits(self, mut b: u64) -> u64 {
        if (self as u8) & 4 != 0 {
            b = transpose(b);
        }
        if (self as u8) & 1 != 0 {
            b = mirror_columns(b);
        }
        if (self as u8) & 2 != 0 {
            b = b.swap_bytes();
        }
        b
    }

    /// The image of a board.
    #[inline]
    pub fn board(self, b: &Board) -> Board {
        Board { player: self.bits(b.player), opponent: self.bits(b.opponent) }
    }
}

/// Reverses the bits of each byte: column c ↔ 7 - c.
#[inline]
pub(crate) fn mirror_columns(mut b: u64) -> u64 {
    b = ((b >> 1) & 0x5555_5555_5555_5555) | ((b & 0x5555_5555_5555_5555) << 1);
    b = ((b >> 2) & 0x3333_3333_3333_3333) | ((b & 0x3333_3333_3333_3333) << 2);
    ((b >> 4) & 0x0F0F_0F0F_0F0F_0F0F) | ((b & 0x0F0F_0F0F_0F0F_0F0F) << 4)
}

/// Reflects in the a1–h8 diagonal: (col, row) ↔ (row, col). Three delta swaps.
#[inline]
pub(crate) fn transpose(mut b: u64) -> u64 {
    let mut t = (b ^ (b >> 7)) & 0x00AA_00AA_00AA_00AA;
    b ^= t ^ (t << 7);
    t = (b ^ (b >> 14)) & 0x0000_CCCC_0000_CCCC;
    b ^= t ^ (t << 14);
    t = (b ^ (b >> 28)) & 0x0000_0000_F0F0_F0F0;
    b ^ t ^ (t << 28)
}

impl Board {
    /// The canonical image: the least of the 8 images (ordered by player, then
    /// opponent bits), with the transform that maps `self` onto it.
    ///
    /// A move found on the canonical board maps back with `transform.inverse()`.
    #[inline]
    pub fn canonical(&self) -> (Board, Transform) {
        let mut best = *self;
        let mut best_t = Transform::Identity;
        // Compute the images with shared intermediate steps rather than 8 from scratch.
        let t = Board { player: transpose(self.player), opponent: transpose(self.opponent) };
        for (base, code) in [(*self, 0u8), (t, 4u8)] {
            let m = Board { player: mirror_columns(base.player), opponent: mirror_columns(base.opponent) };
            let images = [
                (base, code),
                (m, code | 1),
                (Board { player: base.player.swap_bytes(), opponent: base.opponent.swap_bytes() }, code | 2),
                (Board { player: m.player.swap_bytes(), opponent: m.opponent.swap_bytes() }, code | 3),
            ];
            for (img, c) in images {
                if (img.player, img.opponent) < (best.player, best.opponent) {
                    best = img;
                    best_t = Transform::ALL[usize::from(c)];
                }
            }
        }
        (best, best_t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::Squares;
    use crate::testutil::random_games;

    #[test]
    fn square_and_bitboard_transforms_agree() {
        for t in Transform::ALL {
            for sq in Square::ALL {
                assert_eq!(t.bits(sq.bit()), t.square(sq).bit(), "{t:?} {sq}");
                assert_eq!(t.inverse().square(t.square(sq)), sq, "{t:?} {sq}");
            }
        }
    }

    #[test]
    fn transforms_are_eight_distinct_symmetries() {
        let a1 = "b1".parse::<Square>().unwrap();
        let images: std::collections::BTreeSet<_> = Transform::ALL.iter().map(|t| t.square(a1)).collect();
        assert_eq!(images.len(), 8);
        assert_eq!(Transform::Rotate180.square(a1), "g8".parse().unwrap());
        assert_eq!(Transform::Transpose.square("f5".parse().unwrap()), "e6".parse().unwrap());
        assert_eq!(Transform::AntiTranspose.square("f5".parse().unwrap()), "d3".parse().unwrap());
    }

    #[test]
    fn legal_moves_commute_with_transforms() {
        for b in random_games(3, 200) {
            for t in Transform::ALL {
                let img = t.board(&b);
                assert_eq!(img.legal_moves(), t.bits(b.legal_moves()));
                for sq in Squares(b.legal_moves()) {
                    assert_eq!(img.flips(t.square(sq)), t.bits(b.flips(sq)));
                }
            }
        }
    }

    #[test]
    fn canonical_is_shared_by_all_images_and_maps_back() {
        for b in random_games(11, 300) {
            let (canon, t) = b.canonical();
            assert_eq!(t.board(&b), canon);
            for u in Transform::ALL {
                assert_eq!(u.board(&b).canonical().0, canon);
            }
            assert_eq!(t.inverse().board(&canon), b);
        }
    }
}
