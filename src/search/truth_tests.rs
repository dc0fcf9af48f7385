//! The search against independent truth through its crate-private parts: the
//! problem-set runner of `thorbook solve` against plain alpha-beta and the FFO
//! positions' listed scores, and the windowed exact solver against the WTHOR
//! theoretical scores. (`tests/search.rs` checks the public `Engine` the same way.)

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use crate::board::{Board, Squares};
use crate::eval::{EvalSource, PatternEval};
use crate::obf::{parse_obf, Problem};
use crate::search::problems::{Goal, ProblemSolver};
use crate::search::{Limits, Search, Settings, Solver, TranspositionTable};
use crate::testutil::{plain_alpha_beta, random_position, Rng};
use crate::thor::{bundled_sources, expand_paths, LoadOptions, Source, ThorDatabase};
use crate::{Color, Move, Position};

/// `../shared/<rel>`; tests that call it are ignored and named `shared_*` (`.ci/run`
/// runs them), and without the data they fail here rather than pass unchecked.
fn shared(rel: &str) -> PathBuf {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join("shared").join(rel);
    assert!(p.exists(), "{} is absent: this test needs the shared data next to the repository", p.display());
    p
}

/// The exact score of `board` proved inside `(want - 1, want + 1)` on 2 threads,
/// after a depth-10 search that seeds the move ordering, as the exact search does:
/// `want` when it is the score, a value outside the window otherwise.
fn verify_exact(board: &Board, want: i32) -> i32 {
    let tt = TranspositionTable::new(64);
    let eval = PatternEval::bundled();
    let stop = AtomicBool::new(false);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().expect("a pool of 2 threads");
    pool.install(|| {
        Search::new(&eval, &tt, &stop, 2).run(board, Limits { depth: Some(10), ..Default::default() }, false);
        Solver::new(&tt, &stop, 2).solve(board, want - 1, want + 1).score
    })
}

fn problems(name: &str) -> Vec<Problem> {
    let path = shared(&format!("ffo/{name}"));
    parse_obf(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Each problem through the library's problem solver (the pipeline of `solve`), its
/// score and move checked against the file's listed ones here, not by the solver.
fn check_problem_set(name: &str, threads: usize) {
    let set = problems(name);
    assert!(!set.is_empty(), "{name} holds no problems");
    let solver = ProblemSolver::new(&with!(Settings::default(), threads: threads, hash_mib: 64), Goal::Exact).unwrap();
    let mut seen = 0;
    let totals = solver.run(&set, &mut |r| {
        let p = &set[seen];
        seen += 1;
        assert_eq!(Some(r.score), p.best_score(), "{name} line {}", p.line);
        let best: Move = r.best_move.parse().unwrap();
        assert!(p.best_moves().contains(&best), "{name} line {}: {best} is not among {:?}", p.line, p.best_moves());
    });
    assert_eq!((seen, totals.positions, totals.wrong_scores, totals.wrong_moves), (set.len(), set.len(), 0, 0));
}

#[test]
fn problem_solver_matches_plain_alpha_beta_and_flags_wrong_listings() {
    let mut rng = Rng(77);
    let (mut set, mut truths) = (Vec::new(), Vec::new());
    for i in 0..24 {
        let board = random_position(&mut rng, 6 + (i % 7) as u32);
        let mut scores: Vec<(Move, i32)> = Squares(board.legal_moves())
            .map(|sq| (Move::Place(sq), -plain_alpha_beta(&board.play(sq).unwrap(), -64, 64)))
            .collect();
        if scores.is_empty() {
            continue;
        }
        truths.push(scores.iter().map(|&(_, s)| s).max().unwrap());
        // Every fifth problem lists a wrong best score: the solver must say so.
        if set.len() % 5 == 0 {
            scores[0].1 = 65;
        }
        set.push(Problem { line: set.len() + 1, position: Position { board, side: Color::Black }, scores });
    }
    let planted = set.iter().filter(|p| p.best_score() == Some(65)).count();
    for threads in [1, 2] {
        let settings = with!(Settings::default(), threads: threads, hash_mib: 8, eval: EvalSource::Classic);
        let exact = ProblemSolver::new(&settings, Goal::Exact).unwrap();
        let mut results = Vec::new();
        let totals = exact.run(&set, &mut |r| results.push(r.clone()));
        for ((p, r), &truth) in set.iter().zip(&results).zip(&truths) {
            assert_eq!(r.score, truth, "line {} on {threads} threads", p.line);
            assert_eq!(r.score_ok, Some(p.best_score() == Some(r.score)));
        }
        assert_eq!(totals.wrong_scores, planted);
        assert_eq!(totals.positions, set.len());
        let wld = ProblemSolver::new(&settings, Goal::WinDrawLoss).unwrap();
        for p in set.iter().take(8) {
            let r = wld.solve(p);
            assert!((-1..=1).contains(&r.score));
            assert_eq!(r.move_ok, None);
        }
    }
}

#[test]
#[ignore = "needs ../shared/ffo"]
fn shared_ffo_1_to_19_exact_scores_and_best_moves() {
    check_problem_set("fforum-1-19.obf", 1);
}

#[test]
#[ignore = "needs ../shared/ffo"]
fn shared_ffo_20_to_39_exact_scores_and_best_moves() {
    check_problem_set("fforum-20-39.obf", 2);
}

/// Replays games to the position with `depth` empties and checks that the exact solve
/// gives the stored theoretical score (black's discs, empties to the winner).
fn check_theoretical_scores(db: &ThorDatabase, sample: usize) -> usize {
    let step = (db.games().len() / sample).max(1);
    let mut checked = 0;
    for g in db.games().iter().step_by(step).take(sample) {
        let depth = g.depth as u32;
        let mut pos = Position::START;
        let mut reached = None;
        for mv in g.moves_with_passes() {
            if pos.board.empty_count() == depth && !pos.board.must_pass() {
                reached = Some(pos);
                break;
            }
            pos = pos.try_play(mv).unwrap();
        }
        let Some(pos) = reached else { continue };
        let Some(stored) = g.theoretical_discs().map(i32::from) else { continue };
        let want = if pos.side == Color::Black { 2 * stored - 64 } else { 64 - 2 * stored };
        // A window of one point around the stored score: a result inside it proves the
        // score exact, a wrong stored score (or a wrong solver) falls outside it. A
        // shallow search first seeds the table's move ordering, as the exact search does.
        let t = std::time::Instant::now();
        let got = verify_exact(&pos.board, want);
        eprintln!("theoretical score of game {} verified in {:.2} s", g.record, t.elapsed().as_secs_f64());
        assert_eq!(got, want, "game {} of {}: {}", g.record, db.files()[g.file as usize].name, pos.to_board_text());
        checked += 1;
    }
    checked
}

fn shared_database() -> ThorDatabase {
    let dir = shared("thor");
    let sources: Vec<Source> = expand_paths(&[dir]).unwrap().iter().map(|p| Source::open(p).unwrap()).collect();
    ThorDatabase::load(&sources, with!(LoadOptions::default(), strict: true, index: false)).unwrap()
}

/// A few games (24-empty solves take seconds each); the 100-game sample is ignored below.
#[test]
fn thor_theoretical_scores_match_exact_solves() {
    let db = ThorDatabase::load(&bundled_sources(), with!(LoadOptions::default(), strict: true, index: false)).unwrap();
    assert_eq!(check_theoretical_scores(&db, 4), 4);
}

#[test]
#[ignore = "needs ../shared/thor"]
fn shared_thor_theoretical_scores_match_exact_solves() {
    assert!(check_theoretical_scores(&shared_database(), 8) >= 6);
}

#[test]
#[ignore = "needs ../shared/thor; 100 exact 24-empty solves take several minutes"]
fn theoretical_scores_of_a_hundred_archive_games() {
    assert!(check_theoretical_scores(&shared_database(), 100) >= 90);
}

/// The problem-set runner refuses the settings the engine refuses (`tests/search.rs`
/// checks the engine's typed causes).
#[test]
fn the_problem_solver_refuses_bad_settings() {
    let missing = EvalSource::File("/nonexistent/weights.bin".into());
    for s in [
        with!(Settings::default(), threads: 0),
        with!(Settings::default(), hash_mib: 0),
        with!(Settings::default(), hash_mib: 1 << 40),
        with!(Settings::default(), eval: missing),
    ] {
        assert!(ProblemSolver::new(&s, Goal::Exact).is_err(), "{s:?}");
    }
}
