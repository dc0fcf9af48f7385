//! The search's parts against independent truth: the solver against plain alpha-beta,
//! the midgame search's moves, threads, node budgets and stored bounds.

use std::sync::atomic::AtomicBool;

use super::endgame::EVAL_ORDER_MIN;
use super::{Limits, Search, Selectivity, Solver, TableKey, TranspositionTable, SEEDED_SOLVE_FROM};
use crate::board::Board;
use crate::eval::PatternEval;
use crate::square::Move;
use crate::testutil::{plain_alpha_beta, random_position, Rng};

#[test]
fn solver_equals_plain_alpha_beta_on_random_positions() {
    let mut rng = Rng(2024);
    for i in 0..120 {
        let empties = 4 + (i % 9) as u32; // 4..=12
        let b = random_position(&mut rng, empties);
        let want = plain_alpha_beta(&b, -64, 64);
        let tt = TranspositionTable::new(4);
        let stop = AtomicBool::new(false);
        let mut solver = Solver::new(&tt, &stop, 1);
        assert_eq!(solver.solve(&b, -64, 64).score, want, "{b:?}");
        // Null windows around the truth bracket it from both sides.
        assert!(solver.nws(&b, want - 1) > want - 1);
        assert!(solver.nws(&b, want) <= want);
        // Win/draw/loss mode agrees in sign.
        assert_eq!(solver.solve(&b, -1, 1).score.signum(), want.signum());
    }
}

#[test]
fn evaluation_ordering_keeps_the_solver_exact() {
    // Above EVAL_ORDER_MIN empties the trained evaluation orders moves; the scores
    // must equal those of the fastest-first solver (itself checked against plain
    // alpha-beta above), with full and null windows.
    let eval = PatternEval::bundled();
    let mut rng = Rng(77);
    let stop = AtomicBool::new(false);
    for i in 0..12 {
        let empties = EVAL_ORDER_MIN + (i % 4) as u32;
        let b = random_position(&mut rng, empties);
        let tt = TranspositionTable::new(16);
        let want = Solver::new(&tt, &stop, 1).solve(&b, -64, 64).score;
        let tt = TranspositionTable::new(16);
        let mut solver = Solver::new(&tt, &stop, 1).with_eval(&eval);
        assert_eq!(solver.solve(&b, -64, 64).score, want, "{b:?}");
        assert!(solver.nws(&b, want - 1) > want - 1);
        assert!(solver.nws(&b, want) <= want);
    }
}

#[test]
fn exact_labels_are_the_full_window_solve_on_either_route() {
    // Below SEEDED_SOLVE_FROM the full-window solve itself; from it the seeded solve,
    // which must land on the same score (the full-window solver is checked against
    // plain alpha-beta above), a pass to make and a finished game included.
    let eval = PatternEval::bundled();
    let stop = AtomicBool::new(false);
    let mut rng = Rng(4848);
    let mut boards: Vec<Board> =
        (0..10).map(|i| random_position(&mut rng, SEEDED_SOLVE_FROM - 2 + (i % 4) as u32)).collect();
    // Finished games on both routes. The other side wiped out with 40 empties left:
    // over, 64–0 for the side to move (its 24 discs and the empties).
    boards.push(Board { player: 0x00FF_FFFF, opponent: 0 });
    // And below SEEDED_SOLVE_FROM, 10 empties: the side to move wiped out, 0–64.
    boards.push(Board { player: 0, opponent: (1 << 54) - 1 });
    // A pass to make at 16 empties (a 2014 Thor game's).
    let pass = Board { player: 0x00FC_FC9C_B4AC_04FE, opponent: 0x3E00_0060_4850_F800 };
    assert!(pass.legal_moves() == 0 && !pass.is_game_over() && pass.empty_count() == SEEDED_SOLVE_FROM);
    boards.push(pass);
    let mut seeded = 0;
    for b in &boards {
        let tt = TranspositionTable::new(16);
        let want = Solver::new(&tt, &stop, 1).with_eval(&eval).solve(b, -64, 64).score;
        let tt = TranspositionTable::new(16);
        assert_eq!(super::exact_score(&eval, &tt, &stop, b), Some(want), "{b:?}");
        seeded += usize::from(b.empty_count() >= SEEDED_SOLVE_FROM);
    }
    // The pass's value is the other side's after it, negated.
    let after = super::exact_score(&eval, &TranspositionTable::new(16), &stop, &pass.pass());
    assert_eq!(after.map(|v| -v), super::exact_score(&eval, &TranspositionTable::new(16), &stop, &pass));
    assert!(seeded >= 6, "{seeded} seeded solves");
    assert_eq!(super::exact_score(&eval, &TranspositionTable::new(1), &stop, &boards[10]), Some(64));
    assert_eq!(super::exact_score(&eval, &TranspositionTable::new(1), &stop, &boards[11]), Some(-64));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert_eq!(super::exact_score(&eval, &TranspositionTable::new(1), &stop, &boards[2]), None);
}

/// The whole exact search `thorbook solve` runs (seeding iterations, the selective
/// full-depth passes where the empties allow them, the exact pass from a narrow
/// window, on 1 and 2 threads) against plain full-window alpha-beta on random
/// positions of 6 to 14 empties: the same score, and a best move whose own plain
/// value reaches it. The win/draw/loss solve agrees with it in sign.
#[test]
fn exact_search_equals_plain_alpha_beta_up_to_14_empties() {
    let eval = PatternEval::bundled();
    let stop = AtomicBool::new(false);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let mut rng = Rng(9393);
    for i in 0..45 {
        let b = random_position(&mut rng, 6 + (i % 9) as u32);
        let want = plain_alpha_beta(&b, -64, 64);
        let threads = 1 + i % 2;
        let tt = TranspositionTable::new(16);
        let exact = Limits { exact: true, ..Limits::default() };
        let r = pool.install(|| Search::new(&eval, &tt, &stop, threads).run(&b, exact, false));
        assert!(r.exact);
        let best = r.moves[0];
        assert_eq!(best.score, want, "{b:?} on {threads} threads");
        let child = match best.mv {
            Move::Place(sq) => b.play(sq).expect("the search's move is legal"),
            Move::Pass => b.pass(),
        };
        assert_eq!(-plain_alpha_beta(&child, -64, 64), want, "{b:?}: {} does not reach {want}", best.mv);
        let tt = TranspositionTable::new(1);
        assert_eq!(Solver::new(&tt, &stop, 1).solve(&b, -1, 1).score.signum(), want.signum(), "{b:?}");
    }
}

/// The table only speeds the search up: with one bucket (four entries, every probe
/// colliding) and with 1 GiB, the exact search of random positions of 14 to 20 empties
/// — where the selective passes run and the exact pass leans on the table for its
/// window and moves — gives the same scores, on 1 and 2 threads.
#[test]
fn a_table_of_one_bucket_and_of_a_gib_give_the_same_scores() {
    let eval = PatternEval::bundled();
    let stop = AtomicBool::new(false);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let big = TranspositionTable::new(1024);
    assert_eq!(big.entries(), 4 << 24);
    let mut rng = Rng(1024);
    let exact = Limits { exact: true, ..Limits::default() };
    for i in 0..14 {
        let b = random_position(&mut rng, 14 + (i % 7) as u32);
        let threads = 1 + i % 2;
        let large = pool.install(|| Search::new(&eval, &big, &stop, threads).run(&b, exact, false));
        let tiny = TranspositionTable::one_bucket();
        assert_eq!(tiny.entries(), 4);
        let small = pool.install(|| Search::new(&eval, &tiny, &stop, threads).run(&b, exact, false));
        assert!(large.exact && small.exact);
        assert_eq!(small.score(), large.score(), "{b:?} on {threads} threads");
        let tiny = TranspositionTable::one_bucket();
        assert_eq!(Solver::new(&tiny, &stop, 1).solve(&b, -64, 64).score, large.score().unwrap(), "{b:?}");
    }
}

#[test]
fn midgame_search_always_returns_a_legal_move() {
    let mut rng = Rng(99);
    for i in 0..40 {
        let b = random_position(&mut rng, 20 + (i % 35));
        let tt = TranspositionTable::new(8);
        let eval = PatternEval::bundled();
        let stop = AtomicBool::new(false);
        for depth in [1, 3, 6] {
            let r =
                Search::new(&eval, &tt, &stop, 1).run(&b, Limits { depth: Some(depth), ..Default::default() }, false);
            match r.best_move().unwrap() {
                Move::Place(sq) => assert!(b.is_legal(sq), "{sq} at depth {depth}: {b:?}"),
                Move::Pass => assert!(b.legal_moves() == 0),
            }
            assert!(r.score().unwrap().abs() <= 64);
        }
    }
}

/// The midgame search splits nodes between threads (young brothers wait) from
/// moderate depths: on 2 threads the exact searches of random positions at 14–20
/// empties — midgame iterations up to depth 10, then the solve, as the engine runs
/// them — give the scores of one thread; and deep selective searches of midgame
/// positions, which split at every level, return a legal move with a score in range.
#[test]
fn parallel_search_keeps_exact_scores_and_gives_legal_moves() {
    let eval = PatternEval::bundled();
    let stop = AtomicBool::new(false);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let mut rng = Rng(404);
    for i in 0..21 {
        let b = random_position(&mut rng, 14 + (i % 7) as u32);
        let exact = Limits { exact: true, ..Default::default() };
        let tt = TranspositionTable::new(16);
        let one = Search::new(&eval, &tt, &stop, 1).run(&b, exact, false);
        let tt = TranspositionTable::new(16);
        let two = pool.install(|| Search::new(&eval, &tt, &stop, 2).run(&b, exact, false));
        assert!(one.exact && two.exact);
        assert_eq!(two.score(), one.score(), "{b:?}");
    }
    for i in 0..6 {
        let b = random_position(&mut rng, 30 + 4 * i);
        let tt = TranspositionTable::new(16);
        let limits = Limits { depth: Some(11), selectivity: Selectivity::from_sigmas(1.5), ..Default::default() };
        let r = pool.install(|| Search::new(&eval, &tt, &stop, 2).run(&b, limits, false));
        assert_eq!(r.depth, 11);
        match r.best_move().unwrap() {
            Move::Place(sq) => assert!(b.is_legal(sq), "{sq}: {b:?}"),
            Move::Pass => assert_eq!(b.legal_moves(), 0),
        }
        assert!(r.score().unwrap().abs() < 64);
    }
}

/// A node budget is shared by the threads of a search: on 2 threads the search stops
/// within a few stop checks of it (it used to give each helper the whole remaining
/// budget: 5 M asked, 19.4 M searched), in the midgame and in the solver's splits.
#[test]
fn a_node_budget_holds_across_threads() {
    // Each of the 2 threads notices the budget within one check interval of its
    // midgame searcher (2,048 nodes) and of its solver (1,024): allow several.
    const SLACK: u64 = 16_384;
    let eval = PatternEval::bundled();
    let stop = AtomicBool::new(false);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let mut rng = Rng(11);
    for (empties, exact) in [(40, false), (36, false), (24, true), (22, true)] {
        let board = random_position(&mut rng, empties);
        for budget in [300_000u64, 3_000_000] {
            let tt = TranspositionTable::new(16);
            let limits = Limits { nodes: Some(budget), exact, depth: (!exact).then_some(40), ..Default::default() };
            let r = pool.install(|| Search::new(&eval, &tt, &stop, 2).run(&board, limits, false));
            assert!(
                r.nodes >= budget && r.nodes <= budget + SLACK,
                "{empties} empties, budget {budget}: {} nodes searched",
                r.nodes
            );
            assert!(!r.moves.is_empty(), "a stopped search still returns a move");
        }
    }
}

/// A search stopped by its node budget at a random point stores no false bound: every
/// exact bound the table then holds for a position within three plies of the root
/// contains the position's true score (solved afresh with another table), on 1 and 2
/// threads.
#[test]
fn a_stopped_search_stores_no_false_bound() {
    let eval = PatternEval::bundled();
    let stop = AtomicBool::new(false);
    let mut rng = Rng(29);
    let mut checked = 0;
    for case in 0..80 {
        let threads = 1 + case % 2;
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let board = random_position(&mut rng, 15 + (case as u32 % 3));
        let budget = 200 + rng.below(40_000);
        let tt = TranspositionTable::new(4);
        let limits = Limits { nodes: Some(budget), exact: true, ..Default::default() };
        pool.install(|| Search::new(&eval, &tt, &stop, threads).run(&board, limits, false));
        let mut frontier = vec![board];
        for _ in 0..=3 {
            let mut next = Vec::new();
            for b in frontier {
                if let Some(e) = tt.probe(TableKey::of(&b)).filter(|e| e.answers(b.empty_count(), 0)) {
                    let fresh = TranspositionTable::new(4);
                    let exact = Solver::new(&fresh, &stop, 1).solve(&b, -64, 64).score;
                    assert!(
                        e.lower <= exact && exact <= e.upper,
                        "case {case}: budget {budget} on {threads} threads stored [{}, {}] for {:x} {:x} (exact {exact})",
                        e.lower,
                        e.upper,
                        b.player,
                        b.opponent
                    );
                    checked += 1;
                }
                next.extend(b.successors().map(|(_, c)| c));
            }
            frontier = next;
        }
    }
    assert!(checked > 200, "too few stored bounds checked: {checked}");
}
