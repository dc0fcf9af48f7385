//! The search against independent truth: FFO exact scores, WTHOR theoretical scores,
//! a plain alpha-beta without enhancements, and legality of every returned move.

use thorbook::book::BookSource;
use thorbook::engine::{Engine, EngineConfig};
use thorbook::eval::EvalSource;
use thorbook::obf::{parse_obf, Problem};
use thorbook::search::{Limits, Settings};
use thorbook::testutil::problems::{Goal, ProblemSolver};
use thorbook::testutil::searches::verify_exact;
use thorbook::testutil::{plain_alpha_beta, random_position, Rng};
use thorbook::thor::{bundled_sources, expand_paths, LoadOptions, Source, ThorDatabase};
use thorbook::{Color, Move, Position};

use crate::util::{shared, thorbook};

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
        let mut scores: Vec<(Move, i32)> = thorbook::board::Squares(board.legal_moves())
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

/// Bad settings are refused with their typed cause, by the engine and by the solver
/// of problem files alike.
#[test]
fn bad_settings_are_refused_with_their_typed_cause() {
    use thorbook::engine::EngineError;
    use thorbook::eval::WeightsError;
    use thorbook::search::{SettingsError, TableError};
    use thorbook::setting::Setting;
    let missing = EvalSource::File("/nonexistent/weights.bin".into());
    let bad = [
        with!(Settings::default(), threads: 0),
        with!(Settings::default(), hash_mib: 0),
        with!(Settings::default(), hash_mib: 1 << 40),
        with!(Settings::default(), eval: missing),
    ];
    for (i, s) in bad.into_iter().enumerate() {
        assert!(ProblemSolver::new(&s, Goal::Exact).is_err(), "settings {i}");
        let err = Engine::new(with!(EngineConfig::default(), search: s, book: BookSource::None)).err().unwrap();
        let typed = match i {
            0 => matches!(&err, EngineError::Settings(SettingsError::OutOfRange(e)) if e.setting == Setting::Threads),
            1 => matches!(&err, EngineError::Settings(SettingsError::Table(TableError::Size { mib: 0 }))),
            2 => {
                matches!(&err, EngineError::Settings(SettingsError::Table(TableError::Size { mib }) ) if *mib == 1 << 40)
            }
            _ => matches!(&err, EngineError::Eval(WeightsError::Io(e)) if e.path.ends_with("weights.bin")),
        };
        assert!(typed, "settings {i}: {err:?}");
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

#[test]
#[ignore = "needs ../shared/ffo"]
fn shared_ffo_every_listed_move_score_of_some_positions() {
    let set = problems("fforum-1-19.obf");
    let config = with!(EngineConfig::default(), book: BookSource::None, search: Settings::default().with_hash_mib(32));
    let mut engine = Engine::new(config).unwrap();
    for p in set.iter().step_by(6) {
        engine.new_game();
        let moves = engine.search_all_moves(&p.position, with!(Limits::default(), exact: true)).moves;
        assert_eq!(moves.len(), p.scores.len(), "line {}", p.line);
        for &(mv, score) in &p.scores {
            let got = moves.iter().find(|m| m.mv == mv).unwrap_or_else(|| panic!("{mv} missing"));
            assert_eq!(got.score, score, "line {} move {mv}", p.line);
        }
    }
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

#[test]
#[ignore = "needs ../shared/ffo"]
fn shared_cli_solves_ffo_1_to_19() {
    let path = shared("ffo/fforum-1-19.obf");
    let out = thorbook(&["solve", path.to_str().unwrap(), "--threads", "2"]);
    assert!(out.ok().contains("wrong scores 0, wrong moves 0"), "{}", out.stdout);
}

#[test]
fn cli_analyze_bestmove() {
    let out = thorbook(&["analyze", "--moves", "f5d6c3d3c4", "--depth", "6", "--json"]);
    let v: serde_json::Value = serde_json::from_str(out.ok()).unwrap();
    assert_eq!(v["moves"].as_array().unwrap().len(), 6);

    let out = thorbook(&["bestmove", "--moves", "f5d6c3d3c4", "--time", "0.2", "--json"]);
    let v: serde_json::Value = serde_json::from_str(out.ok()).unwrap();
    let mv: thorbook::square::Square = v["move"].as_str().unwrap().parse().unwrap();
    assert!(Position::from_moves("f5d6c3d3c4").unwrap().board.is_legal(mv));

    let err = thorbook(&["bestmove", "--moves", "f5", "--time=-1"]).fails().to_string();
    assert!(err.contains("--time must be a positive number of seconds"), "{err}");
    let err = thorbook(&["solve", "/no/such.obf"]).fails().to_string();
    assert!(err.contains("/no/such.obf"), "{err}");
}

/// One precedence rule for every command: an explicit depth, exact threshold or width
/// wins, then the level's, and only then the command's own fallback (the engine's,
/// a book build's, a deviation's — the input book's header — and a measurement's).
#[test]
fn the_same_settings_give_the_same_limits_in_every_command() {
    use thorbook::book::BuildConfig;
    use thorbook::book::BuildParams;
    use thorbook::search::{Level, Settings, Strength, Width};
    use thorbook::testutil::build_steps::{leaf_strength, leaf_strength_over, recorded};
    use thorbook::testutil::train_steps::measure_strength;

    let book =
        BuildParams { max_ply: 20, depth: 4, exact_at: 10, min_games: 2, selectivity_tenths: 20, ..Default::default() };
    let sigma1 = Width::from_sigmas(1.0).unwrap();
    let mut checked = 0;
    for level in [None, Some(1), Some(5), Some(8)] {
        for depth in [None, Some(3), Some(20)] {
            for exact_at in [None, Some(0), Some(30)] {
                for width in [None, Some(Width::Full), Some(sigma1)] {
                    let level = level.map(|n| Level::new(n).unwrap());
                    let s = with!(
                        Settings::default(),
                        level: level,
                        depth: depth,
                        exact_at: exact_at,
                        width: width,
                        hash_mib: 1,
                    );
                    let build = with!(BuildConfig::default(), max_ply: 8, min_games: 1, search: s.clone());
                    let mut strengths: Vec<(&str, Strength)> = vec![
                        ("engine", s.effective_strength().unwrap()),
                        ("book build", leaf_strength(&build).unwrap()),
                        ("book deviate", leaf_strength_over(&s, recorded(&book)).unwrap()),
                    ];
                    if let Some(m) = measure_strength(&s).unwrap() {
                        strengths.push(("eval-error", m));
                    }
                    // A level alone is the level's own strength.
                    let spec = level.map(|l| Settings::at_level(l).effective_strength().unwrap());
                    let want_depth = depth.or(spec.and_then(|l| l.depth));
                    let want_exact = exact_at.or(spec.and_then(|l| l.exact_at));
                    let selectivity = |w| match w {
                        Width::Full => None,
                        Width::Selective(s) => Some(s),
                    };
                    let want_width = width.map(selectivity).or(spec.map(|l| l.selectivity));
                    for (command, st) in strengths {
                        let case = format!("{command}: {s:?}");
                        if want_depth.is_some() {
                            assert_eq!(st.depth, want_depth, "{case}");
                        }
                        if want_exact.is_some() {
                            assert_eq!(st.exact_at, want_exact, "{case}");
                        }
                        if let Some(w) = want_width {
                            assert_eq!(st.selectivity, w, "{case}");
                        }
                        checked += 1;
                    }
                }
            }
        }
    }
    assert!(checked > 400, "{checked}");
    // Where nothing is said, each command keeps its own fallback: the deviation the
    // book's settings.
    let open = leaf_strength_over(&with!(Settings::default(), hash_mib: 1), recorded(&book)).unwrap();
    assert_eq!((open.depth, open.exact_at), (Some(4), Some(10)));
    assert_eq!(open.selectivity, thorbook::search::Selectivity::from_sigmas(2.0));
    // A time budget alone deepens until the budget in every command (a measurement
    // searches rather than ignoring it).
    let timed = with!(Settings::default(), time: Some(std::time::Duration::from_millis(50)), hash_mib: 1);
    let build = with!(BuildConfig::default(), max_ply: 8, min_games: 1, search: timed.clone());
    for st in [
        timed.effective_strength().unwrap(),
        leaf_strength(&build).unwrap(),
        leaf_strength_over(&timed, recorded(&book)).unwrap(),
        measure_strength(&timed).unwrap().expect("a timed measurement searches"),
    ] {
        assert_eq!((st.depth, st.time), (None, timed.time), "{st:?}");
    }
}

/// A refusal reads the same in every command that takes the setting.
#[test]
fn refusals_are_the_same_words_everywhere() {
    let commands: [&[&str]; 4] = [
        &["bestmove"],
        &["book", "build", "-o", "/nonexistent/never-written.tbk"],
        &["book", "deviate", "--error", "2", "--budget", "4", "-o", "/nonexistent/never-written.tbk"],
        &["eval-error"],
    ];
    for (flag, value, words) in [
        ("--selectivity", "99", "--selectivity must be 0 (full width) or from 0.1 to 10 standard deviations, got 99"),
        ("--level", "15", "--level must be from 1 to 14, got 15"),
        ("--depth", "0", "--depth must be from 1 to 60, got 0"),
        ("--exact-at", "61", "--exact-at must be from 0 to 60, got 61"),
        ("--threads", "0", "--threads must be from 1 to 256, got 0"),
        ("--time", "0", "--time must be a positive number of seconds up to a year, got 0"),
        ("--hash-mib", "0", "a transposition table of 0 MiB is out of range"),
    ] {
        for command in commands {
            let mut args = command.to_vec();
            args.extend([flag, value]);
            let err = thorbook(&args).fails().to_string();
            assert!(err.contains(words), "{args:?}: {err}");
        }
    }
}

/// Every move's PV in `analyze` starts with that move, and the book line stands as the
/// best move's PV only when it starts with it (at the start position the book's four
/// symmetric moves tie, and its line used to be shown as d3's PV while starting e6).
#[test]
fn analyze_pvs_start_with_their_move() {
    for moves in ["", "f5", "f5d6c3"] {
        let out = thorbook(&["analyze", "--moves", moves, "--level", "3", "--json"]);
        let v: serde_json::Value = serde_json::from_str(out.ok()).unwrap();
        let line = v["book_line"].as_str().unwrap();
        for m in v["moves"].as_array().unwrap() {
            let (mv, pv) = (m["move"].as_str().unwrap(), m["pv"].as_str().unwrap());
            assert!(pv.starts_with(mv), "{moves}: {m}");
            if pv.len() > 2 && !line.is_empty() && line.starts_with(mv) {
                assert_eq!(pv, line, "{moves}: {m}");
            }
        }
    }
}

/// Runs `thorbook ARGS`, sends it SIGINT after `after`, and returns its exit code and
/// output (a hung process fails the test after a minute).
fn interrupted(args: &[&str], after: std::time::Duration) -> (Option<i32>, String, String) {
    use std::io::Read;
    let mut child = crate::util::spawn_thorbook(args);
    std::thread::sleep(after);
    let killed = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(start.elapsed().as_secs() < 60, "{args:?} did not stop on SIGINT");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let (mut out, mut err) = (String::new(), String::new());
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    (status.code(), out, err)
}

/// Ctrl-C (SIGINT) stops `solve`, `bestmove` and `analyze`: each prints what it found
/// (the problems solved, a legal move of the last finished iteration) and exits 130.
#[test]
fn ctrl_c_stops_solve_bestmove_and_analyze_with_what_they_found() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(5);
    let mut obf = String::new();
    for _ in 0..8 {
        let b = random_position(&mut rng, 30);
        let text: String = (0..64)
            .map(|i| {
                if b.player >> i & 1 == 1 {
                    'X'
                } else if b.opponent >> i & 1 == 1 {
                    'O'
                } else {
                    '-'
                }
            })
            .collect();
        obf.push_str(&format!("{text} X;\n"));
    }
    let file = dir.path().join("hard.obf");
    std::fs::write(&file, obf).unwrap();
    let wait = std::time::Duration::from_millis(1500);
    let (code, out, err) = interrupted(&["solve", file.to_str().unwrap(), "--threads", "1", "--hash-mib", "16"], wait);
    assert_eq!(code, Some(130), "{out}\n{err}");
    assert!(
        out.contains("nodes/s") && err.contains("interrupted:") && err.contains("of 8 positions solved"),
        "{out}\n{err}"
    );
    let long = ["--moves", "f5d6c3d3c4f4", "--no-book", "--depth", "40", "--exact-at", "0", "--hash-mib", "16"];
    for command in ["bestmove", "analyze"] {
        let mut args = vec![command];
        args.extend(long);
        let (code, out, err) = interrupted(&args, wait);
        assert_eq!(code, Some(130), "{command}: {out}\n{err}");
        let pos = Position::from_moves("f5d6c3d3c4f4").unwrap();
        let first = out.split_whitespace().find_map(|w| w.parse::<Move>().ok().filter(|m| pos.try_play(*m).is_ok()));
        assert!(first.is_some(), "{command} printed no legal move: {out}");
    }
}
