//! Stable discs: discs that no sequence of moves can flip. The endgame solver uses a
//! lower bound on the opponent's stable discs to cut nodes whose best possible score
//! (64 − 2 × stable) cannot reach alpha.
//!
//! The bound is the classic one: edge discs that are stable within their edge (from a
//! table over all 3^8 edge configurations), discs whose four lines are full, then a
//! growing step: a disc is stable when, along each of the four axes, its line is full
//! or a neighbour on that axis is a stable disc of its colour or the board's edge.

use std::sync::OnceLock;

/// `EDGE[p][o]`: the bits of `p` stable within an 8-square line where `p` and `o` are
/// the two colours (bit i = square i of the line).
fn edge_table() -> &'static [u8] {
    static TABLE: OnceLock<Vec<u8>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table = vec![0u8; 1 << 16];
        let mut done = vec![false; 1 << 16];
        for p in 0..256u32 {
            for o in 0..256u32 {
                if p & o == 0 {
                    edge_stable(p as u8, o as u8, &mut table, &mut done);
                }
            }
        }
        table
    })
}

/// Flips along a line for a disc of `p` placed at `x`.
fn line_flips(p: u8, o: u8, x: u32) -> u8 {
    let mut flips = 0u8;
    for dir in [-1i32, 1] {
        let mut run = 0u8;
        let mut i = x as i32 + dir;
        while (0..8).contains(&i) && o & (1 << i) != 0 {
            run |= 1 << i;
            i += dir;
        }
        if (0..8).contains(&i) && p & (1 << i) != 0 {
            flips |= run;
        }
    }
    flips
}

fn edge_stable(p: u8, o: u8, table: &mut [u8], done: &mut [bool]) -> u8 {
    let idx = (p as usize) << 8 | o as usize;
    if done[idx] {
        return table[idx];
    }
    let mut stable = p;
    let empty = !(p | o);
    for x in 0..8 {
        if empty & (1 << x) == 0 {
            continue;
        }
        // A move by `p` can flip none of p's discs, but later moves might.
        let f = line_flips(p, o, x);
        stable &= edge_stable(p | f | (1 << x), o & !f, table, done);
        // A move by `o` (legal through another direction even if it flips nothing here).
        let f = line_flips(o, p, x);
        stable &= !f & edge_stable(p & !f, o | f | (1 << x), table, done);
        if stable == 0 {
            break;
        }
    }
    table[idx] = stable;
    done[idx] = true;
    stable
}

/// Packs the a-file (squares a1..a8) into a byte.
#[inline]
fn a_file_to_byte(b: u64) -> u8 {
    ((b & 0x0101_0101_0101_0101).wrapping_mul(0x0102_0408_1020_4080) >> 56) as u8
}

/// Unpacks a byte into the a-file (bit k → square a(k+1)).
#[inline]
fn byte_to_a_file(x: u8) -> u64 {
    // A multiplication would carry between overlapping partial products; a table cannot.
    static TABLE: [u64; 256] = {
        let mut t = [0u64; 256];
        let mut x = 0;
        while x < 256 {
            let mut k = 0;
            while k < 8 {
                if x & (1 << k) != 0 {
                    t[x] |= 1u64 << (8 * k);
                }
                k += 1;
            }
            x += 1;
        }
        t
    };
    TABLE[x as usize]
}

/// Discs of `p` stable within the four edges: nothing can ever flip them, since an
/// edge disc can only be flipped along its edge.
#[inline]
pub(crate) fn edge_stable_discs(p: u64, o: u64) -> u64 {
    let t = edge_table();
    let get = |pp: u8, oo: u8| t[(pp as usize) << 8 | oo as usize];
    let row1 = get(p as u8, o as u8) as u64;
    let row8 = (get((p >> 56) as u8, (o >> 56) as u8) as u64) << 56;
    let col_a = byte_to_a_file(get(a_file_to_byte(p), a_file_to_byte(o)));
    let col_h = byte_to_a_file(get(a_file_to_byte(p >> 7), a_file_to_byte(o >> 7))) << 7;
    row1 | row8 | col_a | col_h
}

/// Squares whose row is full.
#[inline]
fn full_rows(occ: u64) -> u64 {
    let mut f = occ;
    f &= f >> 1;
    f &= f >> 2;
    f &= f >> 4;
    (f & 0x0101_0101_0101_0101).wrapping_mul(0xFF)
}

/// Squares whose column is full.
#[inline]
fn full_columns(occ: u64) -> u64 {
    let mut f = occ;
    f &= f >> 8;
    f &= f >> 16;
    f &= f >> 32;
    (f & 0xFF).wrapping_mul(0x0101_0101_0101_0101)
}

/// Squares whose diagonal along `step` (9: towards h8, 7: towards a8) is full: the
/// ray in each direction must be occupied up to the board's edge.
#[inline]
fn full_diagonals(occ: u64, step: u32) -> u64 {
    // Squares with no neighbour upward / downward along the diagonal.
    let (top, bottom) = if step == 9 {
        (0xFF80_8080_8080_8080u64, 0x0101_0101_0101_01FFu64)
    } else {
        (0xFF01_0101_0101_0101u64, 0x8080_8080_8080_80FFu64)
    };
    let mut up = occ;
    let mut down = occ;
    for _ in 0..7 {
        up &= (up >> step) | top;
        down &= (down << step) | bottom;
    }
    up & down
}

/// A lower bound on the discs of `p` that can never be flipped.
pub(crate) fn stable_discs(p: u64, o: u64) -> u64 {
    let occ = p | o;
    let full_h = full_rows(occ);
    let full_v = full_columns(occ);
    let full_d9 = full_diagonals(occ, 9);
    let full_d7 = full_diagonals(occ, 7);
    let mut stable = (edge_stable_discs(p, o) | (p & full_h & full_v & full_d7 & full_d9)) & p;
    if stable == 0 {
        return 0;
    }
    // Grow: along each axis, a neighbour that is stable (or the edge, or a full line).
    loop {
        let s = stable;
        let h = full_h | (s << 1) & !0x0101_0101_0101_0101 | (s >> 1) & !0x8080_8080_8080_8080 | 0x8181_8181_8181_8181;
        let v = full_v | (s << 8) | (s >> 8) | 0xFF00_0000_0000_00FF;
        let d9 =
            full_d9 | (s << 9) & !0x0101_0101_0101_0101 | (s >> 9) & !0x8080_8080_8080_8080 | 0xFF81_8181_8181_81FF;
        let d7 =
            full_d7 | (s << 7) & !0x8080_8080_8080_8080 | (s >> 7) & !0x0101_0101_0101_0101 | 0xFF81_8181_8181_81FF;
        stable |= p & h & v & d9 & d7;
        if stable == s {
            return stable;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::{Board, Squares};
    use crate::testutil::{random_games, Rng};

    /// Discs that stay `p`'s over every continuation, by exhaustive play (tiny trees only).
    fn never_flipped(b: Board, p_is_player: bool, depth: u32) -> u64 {
        let mine = if p_is_player { b.player } else { b.opponent };
        if depth == 0 || b.is_game_over() {
            return mine;
        }
        let moves = b.legal_moves();
        if moves == 0 {
            return mine & never_flipped(b.pass(), !p_is_player, depth);
        }
        let mut keep = mine;
        for sq in Squares(moves) {
            keep &= never_flipped(b.play(sq).unwrap(), !p_is_player, depth - 1);
        }
        keep
    }

    #[test]
    fn stable_discs_are_never_flipped() {
        let mut rng = Rng(77);
        let mut found = 0;
        for _ in 0..300 {
            let empties = 6 + rng.below(3) as u32;
            let b = crate::testutil::random_position(&mut rng, empties);
            let s = stable_discs(b.player, b.opponent);
            assert_eq!(s & !b.player, 0);
            let truth = never_flipped(b, true, 64);
            assert_eq!(s & !truth, 0, "claimed stable but flippable: {b:?} {s:#x} {truth:#x}");
            found += s.count_ones();
        }
        assert!(found > 1000, "the bound finds stable discs: {found}");
    }

    #[test]
    fn file_packing_round_trips() {
        for x in 0..=255u8 {
            assert_eq!(a_file_to_byte(byte_to_a_file(x)), x);
            assert_eq!(byte_to_a_file(x) & !0x0101_0101_0101_0101, 0);
        }
    }

    #[test]
    fn full_lines_match_naive() {
        let mut rng = Rng(5);
        for _ in 0..20_000 {
            let occ = rng.next_u64() | rng.next_u64() | rng.next_u64();
            for (step, got) in [(9, full_diagonals(occ, 9)), (7, full_diagonals(occ, 7))] {
                for sq in 0..64 {
                    let (c, r) = (sq % 8, sq / 8);
                    let dc = if step == 9 { 1 } else { -1 };
                    let mut full = true;
                    for dir in [-1, 1] {
                        let (mut cc, mut rr) = (c, r);
                        while (0..8).contains(&cc) && (0..8).contains(&rr) {
                            full &= occ & (1u64 << (rr * 8 + cc)) != 0;
                            cc += dc * dir;
                            rr += dir;
                        }
                    }
                    assert_eq!(got & (1u64 << sq) != 0, full, "step {step} sq {sq} occ {occ:#x}");
                }
            }
            let rows = full_rows(occ);
            let cols = full_columns(occ);
            for sq in 0..64 {
                let row = 0xFFu64 << (sq / 8 * 8);
                let col = 0x0101_0101_0101_0101u64 << (sq % 8);
                assert_eq!(rows & (1 << sq) != 0, occ & row == row);
                assert_eq!(cols & (1 << sq) != 0, occ & col == col);
            }
        }
    }

    #[test]
    fn corners_and_full_boards() {
        for b in random_games(4, 50) {
            let s = stable_discs(b.player, b.opponent);
            assert_eq!(s & crate::board::masks::CORNERS, b.player & crate::board::masks::CORNERS);
            if b.empty_count() == 0 {
                assert_eq!(s, b.player);
            }
        }
    }
}
