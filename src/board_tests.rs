use super::*;
use crate::testutil::{naive_flips, naive_moves, random_games, Rng};

#[test]
fn start_position_has_four_moves() {
    let b = Board::START;
    let moves: Vec<String> = Squares(b.legal_moves()).map(|s| s.to_string()).collect();
    assert_eq!(moves, ["d3", "c4", "f5", "e6"]);
    assert_eq!(b.player_count(), 2);
    assert_eq!(b.empty_count(), 60);
}

#[test]
fn movegen_and_flips_match_naive_reference_on_random_games() {
    let mut positions = 0usize;
    let mut passes = 0usize;
    let mut ends = 0usize;
    for board in random_games(0x5eed_0001, 2_000) {
        positions += 1;
        let moves = board.legal_moves();
        assert_eq!(moves, naive_moves(board.player, board.opponent), "{board:?}");
        for sq in Square::ALL {
            let f = if board.empties() & sq.bit() != 0 { flips(board.player, board.opponent, sq) } else { 0 };
            assert_eq!(f, naive_flips(board.player, board.opponent, sq), "{board:?} at {sq}");
            assert_eq!(board.is_legal(sq), moves & sq.bit() != 0);
        }
        if moves == 0 {
            if board.opponent_moves() == 0 {
                ends += 1;
            } else {
                passes += 1;
            }
        }
    }
    assert!(positions >= 100_000, "only {positions} positions");
    assert!(passes > 100 && ends == 2_000, "passes {passes}, ends {ends}");
}

#[test]
fn flips_on_random_boards_match_naive_reference() {
    // Arbitrary disc patterns (not reachable by play) stress edge wrap-around.
    let mut rng = Rng(42);
    for _ in 0..20_000 {
        let a = rng.next_u64();
        let b = rng.next_u64();
        let p = a & b;
        let o = a & !b & rng.next_u64();
        assert_eq!(legal_moves(p, o), naive_moves(p, o));
        let empty = !(p | o);
        for sq in Squares(empty) {
            assert_eq!(flips(p, o, sq), naive_flips(p, o, sq));
        }
    }
}

/// Every copy of the kernels this CPU can run (`crate::cpu`) against the naive
/// references, on arbitrary disc patterns: the dispatcher's choice cannot change a
/// result. (On a CPU without AVX2 or AVX-512 those copies cannot run here; CI runs
/// the suite on such a CPU under emulation.)
#[test]
fn every_copy_this_cpu_runs_matches_the_naive_reference() {
    use crate::cpu::{level, Level};
    let mut rng = Rng(7);
    let mut checked = 0;
    for _ in 0..5_000 {
        let (a, b) = (rng.next_u64(), rng.next_u64());
        let (p, o) = (a & b, a & !b & rng.next_u64());
        let want = naive_moves(p, o);
        assert_eq!(legal_moves_base(p, o), want);
        #[cfg(target_arch = "x86_64")]
        {
            if level() >= Level::V3 {
                // SAFETY: the CPU has the v3 features (checked just above).
                assert_eq!(unsafe { legal_moves_v3(p, o) }, want);
            }
            if level() >= Level::V4 {
                // SAFETY: the CPU has the v4 features.
                assert_eq!(unsafe { legal_moves_v4(p, o) }, want);
            }
        }
        for sq in Squares(!(p | o)) {
            let want = naive_flips(p, o, sq);
            assert_eq!(flips_base(p, o, sq), want);
            #[cfg(target_arch = "x86_64")]
            {
                if level() >= Level::V3 {
                    // SAFETY: as above.
                    assert_eq!(unsafe { flips_v3(p, o, sq) }, want);
                }
                if level() >= Level::V4 {
                    // SAFETY: as above.
                    assert_eq!(unsafe { flips_v4(p, o, sq) }, want);
                }
            }
            checked += 1;
        }
    }
    assert!(checked > 100_000);
}

#[test]
fn final_score_gives_empties_to_winner() {
    let b = Board { player: 0xFF, opponent: 0xFF00 };
    assert_eq!(b.final_score(), 0);
    let b = Board { player: 0xFFFF, opponent: 0x1_0000 };
    assert_eq!(b.final_score(), 16 - 1 + 47);
    assert_eq!(b.pass().final_score(), -(16 - 1 + 47));
    assert_eq!(b.final_discs(), 16 + 47);
    let full = Board { player: u64::MAX >> 30, opponent: !(u64::MAX >> 30) };
    assert_eq!(full.final_score(), 34 - 30);
}

#[test]
fn adjacent_empties_match_naive() {
    let mut rng = Rng(7);
    for _ in 0..5_000 {
        let o = rng.next_u64() & rng.next_u64();
        let empty = !o & rng.next_u64();
        let mut want = 0u64;
        for sq in Squares(empty) {
            let (c, r) = (sq.col() as i32, sq.row() as i32);
            for dc in -1..=1 {
                for dr in -1..=1 {
                    let (nc, nr) = (c + dc, r + dr);
                    if (dc, dr) != (0, 0)
                        && (0..8).contains(&nc)
                        && (0..8).contains(&nr)
                        && o & (1u64 << (nr * 8 + nc)) != 0
                    {
                        want |= sq.bit();
                    }
                }
            }
        }
        assert_eq!(adjacent_empties(o, empty), want);
    }
}

#[test]
fn last_flip_count_equals_the_flips_of_the_last_move() {
    // Every square as the last empty one, for both sides, on random fillings and on the
    // extremes: no disc, every disc, every disc but one, a single disc.
    let mut rng = Rng(0x1a57);
    for sq in Square::ALL {
        let full = !sq.bit();
        let mut fillings: Vec<u64> = (0..400).map(|_| rng.next_u64() & full).collect();
        fillings.extend([0, full]);
        fillings.extend(Square::ALL.iter().map(|s| full & !s.bit()));
        fillings.extend(Square::ALL.iter().map(|s| s.bit() & full));
        for p in fillings {
            let o = full & !p;
            assert_eq!(last_flip_count(p, sq), naive_flips(p, o, sq).count_ones(), "{p:#018x} playing {sq}");
            assert_eq!(last_flip_count(o, sq), naive_flips(o, p, sq).count_ones(), "{o:#018x} playing {sq}");
        }
    }
}

#[test]
fn predecessors_are_exactly_the_positions_a_move_leads_from() {
    let (mut positions, mut listed, mut passes) = (0usize, 0usize, 0usize);
    for board in random_games(0x5eed_0007, 300) {
        // Complete: every position a move leads from is listed with its move.
        for (mv, child) in board.successors() {
            let before = child.predecessors();
            assert!(before.contains(&(mv, board)), "{board:?} --{mv}--> {child:?} not undone");
            passes += usize::from(mv == Move::Pass);
        }
        // Sound and without repeats: each listed position leads here by its move.
        let before = board.predecessors();
        for (i, (mv, b)) in before.iter().enumerate() {
            assert!(b.successors().any(|s| s == (*mv, board)), "{b:?} --{mv}--> {board:?} listed");
            assert!(!before[..i].contains(&(*mv, *b)), "{b:?} listed twice");
        }
        positions += 1;
        listed += before.len();
    }
    assert!(positions > 15_000 && listed > positions && passes > 10, "{positions} {listed} {passes}");
}
