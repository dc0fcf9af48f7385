//! The trained evaluation through the binary: `train`, `eval`, `eval-error`, weight
//! files given to the engine, damaged weight files.

use crate::util::thorbook;
use thorbook::eval::{EvalSource, Evaluator, PatternEval, Weights};
use thorbook::symmetry::Transform;
use thorbook::Position;

#[test]
fn train_on_the_bundled_archives_then_use_the_weights() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("w.tbe");
    let report = dir.path().join("report.json");
    let labels = dir.path().join("labels.bin");
    let out_s = out.to_str().unwrap();
    let train = |extra: &[&str]| {
        let mut args = vec![
            "train",
            "-o",
            out_s,
            "--solve-at",
            "10",
            "--iterations",
            "10",
            "--probcut-positions",
            "3",
            "--probcut-depth",
            "4",
            "--threads",
            "2",
            "--labels",
            labels.to_str().unwrap(),
            "--report",
            report.to_str().unwrap(),
        ];
        args.extend(extra);
        thorbook(&args)
    };
    let run = train(&[]);
    let table = run.ok();
    assert!(table.contains("validation"), "{table}");
    assert!(run.stderr.contains("round 0:"), "{}", run.stderr);
    // Its stderr is not a terminal, as on a batch cluster: each stage ends with a line.
    for stage in ["exact solves", "fitting phases", "probcut searches"] {
        assert!(
            run.stderr.lines().any(|l| l.starts_with(&format!("{stage}: ")) && l.contains("(100.0%), done in ")),
            "no end of `{stage}` in {}",
            run.stderr
        );
    }
    // The report: every number of empties with its phase, and the trained weights beat
    // "always 0" on the held-out games where the targets are exact.
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let rows = json["report"]["empties"].as_array().unwrap();
    assert_eq!(rows.len(), 60);
    assert_eq!(json["report"]["phases"], 30);
    let at8 = rows.iter().find(|r| r["empties"] == 8).unwrap();
    assert_eq!(at8["phase"], 26);
    assert_eq!(rows.iter().find(|r| r["empties"] == 9).unwrap()["phase"], 25);
    let exact = &at8["validation_exact"];
    assert!(exact["positions"].as_u64().unwrap() > 50, "{at8}");
    assert!(exact["mae"].as_f64().unwrap() < 8.0, "{at8}");
    assert!(exact["signed"].as_f64().is_some());

    let weights = Weights::load(&out).unwrap();
    assert_eq!((weights.phases(), weights.probcut_depths()), (30, 32));
    assert!(weights.note().starts_with("thorbook"), "{}", weights.note());
    let eval = PatternEval::new(&weights);
    let pos = Position::from_moves("f5d6c3d3c4f4f6").unwrap();
    for t in Transform::ALL {
        assert_eq!(eval.evaluate(&t.board(&pos.board)), eval.evaluate(&pos.board));
    }

    // The solves were kept: a second run labels nothing new and gives the same weights.
    let again = train(&[]);
    again.ok();
    assert!(again.stderr.contains("exact and 0 search labels kept"), "{}", again.stderr);
    assert_eq!(Weights::load(&out).unwrap(), weights);

    // Weighted by tournament: every game whose tournament holds `world` (any case)
    // weighs 0.25 — as many as the exported games say — and the fit moves.
    let export = thorbook(&["thor", "export", "--format", "jsonl"]);
    let worlds = export
        .ok()
        .lines()
        .filter(|l| {
            let g: serde_json::Value = serde_json::from_str(l).unwrap();
            g["tournament"].as_str().is_some_and(|t| t.to_lowercase().contains("world"))
        })
        .count();
    assert!(worlds > 100, "{worlds} world games");
    let weighted = train(&["--tournament-weight", "World=0.25", "--tournament-weight", "championnat=2"]);
    weighted.ok();
    assert!(
        weighted.stderr.contains(&format!("{worlds} games of tournaments containing `world` weigh 0.25")),
        "{}",
        weighted.stderr
    );
    let reweighted = Weights::load(&out).unwrap();
    assert!(reweighted.note().contains(" weighing "), "{}", reweighted.note());
    // The fit moved: positions of the games evaluate otherwise (the note alone differs
    // in any case, so the weights themselves are compared through their values).
    let (before, after) = (PatternEval::new(&weights), PatternEval::new(&reweighted));
    let moved = export
        .stdout
        .lines()
        .take(50)
        .filter_map(|l| {
            let g: serde_json::Value = serde_json::from_str(l).unwrap();
            let moves = g["moves"].as_str()?.get(..40)?.to_string();
            Position::from_moves(&moves).ok()
        })
        .filter(|p| before.evaluate(&p.board) != after.evaluate(&p.board))
        .count();
    assert!(moved >= 25, "the weights moved {moved} of 50 evaluations");
    // A name that matches nothing, or an absurd weight, is a usage error before any work.
    let none = train(&["--tournament-weight", "nowhere=0.5"]);
    assert!(none.fails().contains("no game's tournament contains `nowhere`"), "{}", none.stderr);
    assert_eq!(none.status, 2);
    // A WTHOR archive without WTHOR.TRN has no names to match: the error says so.
    let unnamed = train(&["data/thor/WTH_2013.wtb", "--tournament-weight", "world=0.5"]);
    assert!(unnamed.fails().contains("give WTHOR.TRN among the paths"), "{}", unnamed.stderr);
    for bad in ["world=0", "world=-1", "world=x", "=0.5", "world"] {
        let run = train(&["--tournament-weight", bad]);
        assert_eq!(run.status, 2, "{bad}: {}", run.stderr);
    }
    // A sample of the games: `--every 2` trains on half of them (the held-out share
    // taken from that half), and an offset not below it is a usage error.
    let games = |run: &crate::util::Run| -> u64 {
        let line = run.stderr.lines().find(|l| l.ends_with(" validation games")).expect("no games line");
        let n: Vec<u64> = line.split(' ').filter_map(|w| w.trim_end_matches(',').parse().ok()).collect();
        n.iter().sum()
    };
    let half = train(&["--every", "2", "--shuffle-seed", "3"]);
    half.ok();
    assert_eq!(games(&half), games(&run).div_ceil(2), "{}", half.stderr);
    assert_eq!(train(&["--every", "2", "--offset", "2"]).status, 2);
    train(&[]).ok(); // the unweighted weights back, for what follows
    assert_eq!(Weights::load(&out).unwrap(), weights);

    // The command line evaluates with it, and so does the engine.
    let v: serde_json::Value =
        serde_json::from_str(thorbook(&["eval", "--moves", "f5d6c3d3c4f4f6", "--eval", out_s, "--json"]).ok()).unwrap();
    assert_eq!(v["score"].as_i64().unwrap(), eval.evaluate(&pos.board) as i64);
    assert_eq!(v["digest"].as_str().unwrap(), format!("{:08x}", weights.digest()));
    let best = thorbook(&["bestmove", "--moves", "f5d6c3d3c4f4f6", "--no-book", "--level", "5", "--eval", out_s]);
    assert!(best.ok().trim().len() >= 2);

    // Bad settings are refused before any work.
    for (args, message) in [
        (vec!["--phases", "7"], "--phases must be a divisor of 60, got 7"),
        (vec!["--without", "nonsense"], "--without must be one of the feature names"),
        (vec!["--bootstrap-rounds", "1", "--bootstrap-selectivity", "40"], "--bootstrap-selectivity"),
        (vec!["--move-loss", "20"], "--move-loss must be from 0 to 10 discs, got 20"),
        (vec!["--backward-depth", "4"], "--backward-depth must be from 5 to 30"),
        (vec!["--backward-depth", "6", "--backward-share", "0"], "--backward-share must be in (0, 1]"),
        (vec!["--backward-depth", "6", "--bootstrap-rounds", "1"], "cannot be used with"),
        (vec!["--backward-share", "0.5"], "--backward-depth"),
    ] {
        let err = train(&args).fails().to_string();
        assert!(err.contains(message), "{args:?}: {err}");
    }

    // Labels that flow backward: round 0 learns the midgame from searches only, and a
    // second run finds every one of them in the store.
    let backward = ["--backward-depth", "5", "--backward-share", "0.05"];
    let run = train(&backward);
    run.ok();
    let round = run.stderr.lines().find(|l| l.starts_with("round 0:")).unwrap().to_string();
    assert!(round.contains(" 0 theoretical targets") && !round.contains(" 0 search"), "{round}");
    let weights = Weights::load(&out).unwrap();
    let again = train(&backward);
    again.ok();
    assert!(again.stderr.contains("round 0:") && again.stderr.contains("; 0 new labels"), "{}", again.stderr);
    assert_eq!(Weights::load(&out).unwrap(), weights);
}

/// Scores for the side to move along the main line f5 d6 c3 d3 c4 f4 f6 f3 (a draw
/// under perfect play), turned to black's view: a parity bias shows as a swing
/// between consecutive positions (the weights before one phase per ply swung by 3.1
/// discs on average at level 6: +3, 0, +4, +1, +3, 0, +3, −1).
#[test]
fn the_main_line_scores_do_not_swing_with_the_side_to_move() {
    let line = ["f5", "d6", "c3", "d3", "c4", "f4", "f6", "f3"];
    let mut black_view = Vec::new();
    for n in 1..=line.len() {
        let moves = line[..n].concat();
        let v: serde_json::Value = serde_json::from_str(
            thorbook(&["bestmove", "--moves", &moves, "--no-book", "--level", "6", "--json"]).ok(),
        )
        .unwrap();
        let score = v["score"].as_i64().unwrap();
        // After an odd number of moves white is to move.
        black_view.push(if n % 2 == 1 { -score } else { score });
    }
    let swing: f64 =
        black_view.windows(2).map(|w| (w[1] - w[0]).abs() as f64).sum::<f64>() / (black_view.len() - 1) as f64;
    assert!(swing < 2.0, "scores for black {black_view:?} swing by {swing:.2} discs on average");
    assert!(black_view.iter().all(|v| v.abs() <= 4), "a drawn line scored {black_view:?}");
}

#[test]
fn eval_explains_and_agrees_with_the_library() {
    let pos = Position::from_moves("f5f6e6f4e3").unwrap();
    let eval = PatternEval::bundled();
    let v: serde_json::Value =
        serde_json::from_str(thorbook(&["eval", "--moves", "f5f6e6f4e3", "--json", "--verbose"]).ok()).unwrap();
    assert_eq!(v["score"].as_i64().unwrap(), eval.evaluate(&pos.board) as i64);
    let parts = v["patterns"].as_array().unwrap();
    assert!(parts.iter().any(|p| p["pattern"] == "mobility" && p["squares"].as_array().unwrap().is_empty()));
    let sum: f64 = v["bias"].as_f64().unwrap() + parts.iter().map(|p| p["discs"].as_f64().unwrap()).sum::<f64>();
    assert!((sum - eval.discs(&pos.board)).abs() < 1e-6);
    let text = thorbook(&["eval", "--board", &pos.to_board_text(), "--verbose"]);
    assert!(text.ok().contains("corner2x5"));
}

#[test]
fn damaged_or_foreign_weight_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let zeros = dir.path().join("zeros.tbe");
    crate::util::zero_weights(60).save(&zeros).unwrap();
    let good = std::fs::read(&zeros).unwrap();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("empty.tbe", Vec::new(), "byte 0: not a thorbook weight file"),
        ("short.tbe", good[..good.len() / 2].to_vec(), "header describes"),
        (
            "flip.tbe",
            {
                let mut b = good.clone();
                let n = b.len();
                b[n - 100] ^= 0x40;
                b
            },
            "checksum",
        ),
        (
            "version.tbe",
            {
                let mut b = good.clone();
                b[8] = 7;
                b
            },
            "byte 8: version 7",
        ),
    ];
    for (name, bytes, message) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let p = path.to_str().unwrap();
        for args in [vec!["eval", "--eval", p], vec!["bestmove", "--no-book", "--eval", p]] {
            let err = thorbook(&args).fails().to_string();
            assert!(err.contains(name) && err.contains(message), "{args:?}: {err}");
        }
    }
}

#[test]
fn eval_error_measures_both_evaluations() {
    let mut errors = Vec::new();
    for extra in [vec![], vec!["--classic-eval"]] {
        let mut args = vec!["eval-error", "--every", "60", "--solve-at", "10", "--json"];
        args.extend(extra.iter());
        let v: serde_json::Value = serde_json::from_str(thorbook(&args).ok()).unwrap();
        let rows = v["empties"].as_array().unwrap();
        assert_eq!(rows.len(), 60);
        let measured: u64 = rows.iter().map(|r| r["positions"].as_u64().unwrap()).sum();
        assert!(measured > 1000, "{measured}");
        // Error at 24 empties, where the targets are exact.
        let at24 = rows.iter().find(|r| r["empties"] == 24).unwrap();
        assert!(at24["signed"].as_f64().is_some());
        errors.push(at24["mae"].as_f64().unwrap());
        let groups: Vec<&str> = v["summary"].as_array().unwrap().iter().map(|g| g["group"].as_str().unwrap()).collect();
        assert!(groups.contains(&"<= 10 empties, odd") && groups.contains(&"24 empties"), "{groups:?}");
    }
    // The trained evaluation is the more accurate one (the flag is not ignored).
    assert!(errors[0] < errors[1] - 1.0, "{errors:?}");
    let classic = thorbook(&["eval", "--classic-eval"]);
    assert!(classic.fails().contains("eval-error --classic-eval"));
    let bad = thorbook(&["eval-error", "--selectivity", "99"]);
    assert!(bad.fails().contains("--selectivity"));
    let bad = thorbook(&["eval-error", "--solve-empties", "40"]);
    assert!(bad.fails().contains("--solve-empties"));
}

/// Solving more empties on request (as `--solve-empties 23` does for the parity
/// neighbour of the exact scores at 24): the positions at 20 empties get exact targets
/// and a label store keeps them, so a second run solves nothing (the targets
/// themselves are checked against the solver in `train::measure`'s unit tests).
#[test]
fn eval_error_solves_extra_empties_and_keeps_them() {
    let dir = tempfile::tempdir().unwrap();
    let labels = dir.path().join("labels.bin");
    let args = ["eval-error", "--every", "400", "--solve-at", "4", "--solve-empties", "20", "--exact-only", "--json"];
    let mut with_store = args.to_vec();
    with_store.extend(["--labels", labels.to_str().unwrap()]);
    let first = thorbook(&with_store);
    let v: serde_json::Value = serde_json::from_str(first.ok()).unwrap();
    let at20 = v["empties"].as_array().unwrap().iter().find(|r| r["empties"] == 20).unwrap().clone();
    assert!(at20["positions"].as_u64().unwrap() >= 10, "{at20}");
    assert!(v["summary"].as_array().unwrap().iter().any(|g| g["group"] == "20 empties"));
    let again = thorbook(&with_store);
    assert_eq!(again.ok(), first.ok(), "the same figures from the kept solves");
    assert!(again.stderr.contains("exact and 0 search labels kept"), "{}", again.stderr);
}

/// A `0x`-prefixed hexadecimal field of `--positions-out`.
fn hex(s: &str) -> u64 {
    u64::from_str_radix(s.strip_prefix("0x").unwrap(), 16).unwrap()
}

/// The JSON report of `eval-error` run with `args` (which ask for `--json`) and
/// `--positions-out csv`.
fn eval_error_json_writing(args: &[&str], csv: &std::path::Path) -> serde_json::Value {
    let mut with_out = args.to_vec();
    with_out.extend(["--positions-out", csv.to_str().unwrap()]);
    serde_json::from_str(thorbook(&with_out).ok()).unwrap()
}

/// `eval-error --positions-out`: one CSV row per position and depth, whose targets are
/// the games' exact theoretical scores (found again here by replaying every bundled
/// game to 24 empties), whose boards are canonical images with their keys, and whose
/// errors average to the summary's; the report names each search's width. An
/// unwritable path fails before anything is measured.
#[test]
fn eval_error_writes_every_position_it_measures() {
    use std::collections::HashMap;
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("positions.csv");
    let args = ["eval-error", "--every", "40", "--solve-at", "0", "--exact-only", "--depths", "1,3", "--json"];
    let v = eval_error_json_writing(&args, &csv);
    // The canonical image of every bundled game's 24-empty position → its exact score.
    let exact: HashMap<thorbook::Board, i32> =
        bundled_positions_at_24().into_iter().map(|p| (p.position.board.canonical().0, p.exact)).collect();
    assert!(exact.len() > 5000, "{} positions", exact.len());
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("depth,width,empties,key,player,opponent,target,label,score,error"));
    let mut by_depth: HashMap<u64, Vec<f64>> = HashMap::new();
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f.len(), 10, "{line}");
        assert_eq!((f[1], f[2], f[7]), ("full", "24", "exact"), "{line}");
        let board = thorbook::Board::new(hex(f[4]), hex(f[5])).unwrap();
        assert_eq!(board.canonical().0, board, "the canonical image: {line}");
        assert_eq!(hex(f[3]), board.canonical_key(), "{line}");
        let target: i32 = f[6].parse().unwrap();
        assert_eq!(exact.get(&board), Some(&target), "{line}");
        let (score, error): (f64, f64) = (f[8].parse().unwrap(), f[9].parse().unwrap());
        assert_eq!(score.fract(), 0.0, "a search's score is whole discs: {line}");
        assert_eq!(error, score - f64::from(target), "{line}");
        by_depth.entry(f[0].parse().unwrap()).or_default().push(error);
    }
    let runs = v["depths"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for run in runs {
        let depth = run["depth"].as_u64().unwrap();
        assert_eq!(run["search"], format!("depth {depth}, full width, no exact solve").as_str());
        let at24 = run["summary"].as_array().unwrap().iter().find(|g| g["group"] == "24 empties").unwrap();
        let errors = &by_depth[&depth];
        assert!(errors.len() >= 100, "{} positions at depth {depth}", errors.len());
        assert_eq!(errors.len() as u64, at24["positions"].as_u64().unwrap());
        let mean = errors.iter().sum::<f64>() / errors.len() as f64;
        assert!((mean - at24["signed"].as_f64().unwrap()).abs() < 1e-9, "depth {depth}: {mean} against {at24}");
    }
    // A cut search says its width, in the text report and in every row; so does the
    // static evaluation.
    let csv_s = csv.to_str().unwrap();
    for (search, header, depth_width) in [
        (vec!["--level", "5"], "depth 6, selectivity 1.5 σ, exact at <= 14 empties", "6,1.5,"),
        (vec![], "static evaluation", "0,static,"),
    ] {
        let mut args =
            vec!["eval-error", "--every", "400", "--solve-at", "0", "--exact-only", "--positions-out", csv_s];
        args.extend(search);
        let run = thorbook(&args);
        assert!(run.ok().contains(header), "{}", run.stdout);
        let text = std::fs::read_to_string(&csv).unwrap();
        let rows: Vec<&str> = text.lines().skip(1).collect();
        assert!(!rows.is_empty() && rows.iter().all(|r| r.starts_with(depth_width)), "{header}: {text}");
    }
    let missing = dir.path().join("no/such/dir/positions.csv");
    let mut bad = args.to_vec();
    bad.extend(["--positions-out", missing.to_str().unwrap()]);
    let bad = thorbook(&bad);
    assert!(bad.fails().contains("no/such/dir/positions.csv"), "{}", bad.stderr);
    assert!(!bad.stderr.contains("measuring"), "fails before measuring: {}", bad.stderr);
}

/// The lean within games (`sides`) and the calibration against naive references:
/// every bundled game replayed, its positions at 9, 10 and 24 empties (all exact, both
/// colours to move) looked up in `--positions-out`, each game's mean error by the
/// colour to move averaged and differenced by hand (both colours' errors are each for
/// the side to move, so a lean for the side to move and one toward black are told
/// apart); the slope and the binned exact − measured recomputed from the rows.
#[test]
fn eval_error_splits_the_lean_within_games_and_measures_calibration() {
    use std::collections::HashMap;
    use thorbook::thor::{bundled_sources, LoadOptions, ThorDatabase};
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("p.csv");
    let args = ["eval-error", "--solve-at", "0", "--solve-empties", "9,10", "--exact-only", "--depths", "2", "--json"];
    let v = eval_error_json_writing(&args, &csv);
    let text = std::fs::read_to_string(&csv).unwrap();
    let rows: Vec<Vec<&str>> = text.lines().skip(1).map(|line| line.split(',').collect()).collect();
    let errors: HashMap<thorbook::Board, f64> =
        rows.iter().map(|f| (thorbook::Board::new(hex(f[4]), hex(f[5])).unwrap(), f[9].parse().unwrap())).collect();
    let db = ThorDatabase::load(&bundled_sources(), LoadOptions::default()).unwrap();
    let (mut to_move, mut toward_black) = (Vec::new(), Vec::new());
    for g in db.games().iter().filter(|g| g.theoretical_discs().is_some()) {
        // [white, black]: errors at 9, 10 and 24 empties.
        let mut by_colour: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
        let (mut pos, mut reaches_24) = (Position::START, false);
        for mv in g.moves_with_passes().into_iter().map(Some).chain([None]) {
            let e = pos.board.empty_count();
            reaches_24 |= e == 24;
            if [9, 10, 24].contains(&e) && pos.board.legal_moves() != 0 {
                let error = errors[&pos.board.canonical().0];
                by_colour[usize::from(pos.side == thorbook::Color::Black)].push(error);
            }
            match mv {
                None => break,
                Some(thorbook::Move::Pass) => pos = pos.pass(),
                Some(mv) => pos = pos.try_play(mv).unwrap(),
            }
        }
        let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len() as f64;
        if let (true, [w, b]) = (reaches_24, &by_colour) {
            if !w.is_empty() && !b.is_empty() {
                to_move.push((mean(b) + mean(w)) / 2.0);
                toward_black.push((mean(b) - mean(w)) / 2.0);
            }
        }
    }
    assert!(to_move.len() > 5000, "{} games", to_move.len());
    let sides = &v["depths"][0]["sides"];
    assert_eq!(sides["games"].as_u64(), Some(to_move.len() as u64), "{sides}");
    for (xs, mean_key, se_key) in
        [(&to_move, "to_move", "to_move_se"), (&toward_black, "toward_black", "toward_black_se")]
    {
        let n = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / n;
        let se = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0) / n).sqrt();
        assert!((sides[mean_key].as_f64().unwrap() - mean).abs() < 1e-9, "{mean_key}: {mean} against {sides}");
        assert!((sides[se_key].as_f64().unwrap() - se).abs() < 1e-9, "{se_key}: {se} against {sides}");
    }
    // Calibration, recomputed from the rows: the slope of exact on measured, and exact −
    // measured per bin of measured scores (edges -20, -10, -4, 0, 4, 10, 20).
    let pairs: Vec<(f64, f64)> = rows.iter().map(|f| (f[8].parse().unwrap(), f[6].parse().unwrap())).collect();
    let calibration = &v["depths"][0]["calibration"];
    let n = pairs.len() as f64;
    assert_eq!(calibration["positions"].as_u64(), Some(pairs.len() as u64));
    let (mx, my) = (pairs.iter().map(|p| p.0).sum::<f64>() / n, pairs.iter().map(|p| p.1).sum::<f64>() / n);
    let cov: f64 = pairs.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let var: f64 = pairs.iter().map(|p| (p.0 - mx).powi(2)).sum();
    assert!((calibration["slope"].as_f64().unwrap() - cov / var).abs() < 1e-9, "{calibration}");
    let edges = [f64::NEG_INFINITY, -20.0, -10.0, -4.0, 0.0, 4.0, 10.0, 20.0, f64::INFINITY];
    let bins = calibration["bins"].as_array().unwrap();
    let mut checked = 0;
    for w in edges.windows(2) {
        let gaps: Vec<f64> = pairs.iter().filter(|p| p.0 >= w[0] && p.0 < w[1]).map(|p| p.1 - p.0).collect();
        if gaps.is_empty() {
            continue;
        }
        let bin = &bins[checked];
        checked += 1;
        let k = gaps.len() as f64;
        let mean = gaps.iter().sum::<f64>() / k;
        assert_eq!(bin["positions"].as_u64(), Some(gaps.len() as u64), "{bin}");
        assert!((bin["exact_minus_score"].as_f64().unwrap() - mean).abs() < 1e-9, "{mean} against {bin}");
        if gaps.len() > 1 {
            // The standard error of the mean, from the sample variance.
            let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / (k - 1.0);
            let se = (var / k).sqrt();
            assert!((bin["se"].as_f64().unwrap() - se).abs() < 1e-9, "se {se} against {bin}");
        }
        let bound = |x: f64| if x.is_finite() { Some(x) } else { None };
        assert_eq!((bin["from"].as_f64(), bin["to"].as_f64()), (bound(w[0]), bound(w[1])), "{bin}");
    }
    assert_eq!(checked, bins.len());
    assert!(checked >= 6, "{calibration}");
    // The text report says both; with only one colour to move (24 empties) there is nothing to split.
    let text = thorbook(&args[..args.len() - 1]);
    let line =
        format!("depth  2  within {} games (exact positions, both colours to move): side to move", to_move.len());
    assert!(text.ok().contains(&line), "{}", text.stdout);
    let line = format!("depth  2  calibration over {} exact positions: exact on measured slope", pairs.len());
    assert!(text.stdout.contains(&line), "{}", text.stdout);
    let one_colour = thorbook(&["eval-error", "--every", "40", "--solve-at", "0", "--exact-only", "--json"]);
    let v: serde_json::Value = serde_json::from_str(one_colour.ok()).unwrap();
    assert!(v["sides"].is_null(), "{v}");
}

/// `--every N --offset K` samples partition the games, in the archives' order and
/// shuffled by `--shuffle-seed`: the 24-empty positions of the three samples of
/// `--every 3` are together those of every game; an offset not below N is refused as
/// a usage error, in `labels solve` too.
#[test]
fn game_samples_with_offsets_partition_the_games() {
    use std::collections::BTreeSet;
    let dir = tempfile::tempdir().unwrap();
    let keys = |sample: &[&str]| -> (BTreeSet<String>, usize) {
        let csv = dir.path().join("p.csv");
        let mut args = vec!["eval-error", "--solve-at", "0", "--exact-only", "--positions-out", csv.to_str().unwrap()];
        args.extend(sample);
        thorbook(&args).ok();
        let text = std::fs::read_to_string(&csv).unwrap();
        let rows: Vec<String> = text.lines().skip(1).map(|l| l.split(',').nth(3).unwrap().to_owned()).collect();
        (rows.iter().cloned().collect(), rows.len())
    };
    let (all, n) = keys(&[]);
    assert!(n > 5000, "{n} positions");
    let mut firsts = Vec::new();
    for seed in [None, Some("7")] {
        let mut union = BTreeSet::new();
        let mut sizes = Vec::new();
        for offset in ["0", "1", "2"] {
            let mut sample = vec!["--every", "3", "--offset", offset];
            sample.extend(seed.map(|s| ["--shuffle-seed", s]).into_iter().flatten());
            let (part, len) = keys(&sample);
            assert!(part.is_subset(&all));
            sizes.push(len);
            if offset == "0" {
                firsts.push(part.clone());
            }
            union.extend(part);
        }
        assert_eq!(union, all, "seed {seed:?}");
        // About a third each (positions two games share may fall in two samples).
        assert!(sizes.iter().all(|&k| 3 * k >= n - 30 && 3 * k <= n + 300), "seed {seed:?}: {sizes:?} of {n}");
    }
    // Shuffled, a sample holds other games than the archives' order gives (most of
    // its positions differ); the same seed draws the same games, another seed others.
    let common = firsts[0].intersection(&firsts[1]).count();
    assert!(common < firsts[0].len() / 2, "{common} of {} in common", firsts[0].len());
    assert_eq!(keys(&["--every", "3", "--shuffle-seed", "7"]).0, firsts[1]);
    assert_ne!(keys(&["--every", "3", "--shuffle-seed", "8"]).0, firsts[1]);
    for cmd in [vec!["eval-error"], vec!["labels", "solve", "--solve-at", "4", "--labels", "x.tbl"]] {
        let mut args = cmd.clone();
        args.extend(["--every", "3", "--offset", "3"]);
        let bad = thorbook(&args);
        assert!(bad.fails().contains("--offset must be below --every (3), got 3"), "{}", bad.stderr);
        assert_eq!(bad.status, 2, "{}", bad.stderr);
    }
}

/// A bundled game's position at 24 empties and its exact score: the game's theoretical
/// score, for the side to move.
struct ExactAt24 {
    position: Position,
    exact: i32,
    /// A pass came before it (without one, black is to move).
    after_pass: bool,
}

/// The 24-empty position of every bundled game with a theoretical score.
fn bundled_positions_at_24() -> Vec<ExactAt24> {
    use thorbook::thor::{bundled_sources, LoadOptions, ThorDatabase};
    let db = ThorDatabase::load(&bundled_sources(), LoadOptions::default()).unwrap();
    db.games()
        .iter()
        .filter_map(|g| {
            let black = 2 * i32::from(g.theoretical_discs()?) - 64;
            let (mut pos, mut after_pass) = (Position::START, false);
            for mv in g.moves_with_passes() {
                if mv == thorbook::Move::Pass {
                    (pos, after_pass) = (pos.pass(), true);
                    continue;
                }
                if pos.board.empty_count() == 24 {
                    let exact = if pos.side == thorbook::Color::Black { black } else { -black };
                    return Some(ExactAt24 { position: pos, exact, after_pass });
                }
                pos = pos.try_play(mv).unwrap();
            }
            None
        })
        .collect()
}

/// Signed error (score − exact, discs for the side to move) of midgame searches at 2σ
/// and depths 4..=9, no solve, over every position at 24 empties with black to move of
/// the bundled games (WTHOR 2013–2015, which neither the weights nor their leaf
/// correction were fitted on); their theoretical scores are exact there.
fn signed_errors_at_24(eval: &EvalSource) -> Vec<f64> {
    use thorbook::testutil::searches::Searcher;
    let positions: Vec<(thorbook::Board, i32)> =
        bundled_positions_at_24().into_iter().filter(|p| !p.after_pass).map(|p| (p.position.board, p.exact)).collect();
    assert!(positions.len() > 5000, "{} positions", positions.len());
    // Plain threads, each with its searcher: an engine searches on its own pool, and a
    // rayon worker waiting for another pool takes on more of its own work meanwhile,
    // nesting searches on its stack.
    let threads = std::thread::available_parallelism().map_or(2, usize::from);
    let chunk = positions.len().div_ceil(threads);
    (4..=9)
        .map(|depth| {
            let sum: i64 = std::thread::scope(|s| {
                let parts: Vec<_> = positions
                    .chunks(chunk)
                    .map(|part| {
                        s.spawn(move || {
                            let mut searcher = Searcher::with_eval(4, eval.clone());
                            part.iter()
                                .map(|(board, exact)| i64::from(searcher.depth(board, depth, Some(2.0)) - exact))
                                .sum::<i64>()
                        })
                    })
                    .collect();
                parts.into_iter().map(|p| p.join().expect("a searching thread")).sum()
            });
            sum as f64 / positions.len() as f64
        })
        .collect()
}

/// The search does not lean toward the side that makes its last choice: without the
/// search-leaf correction the signed error swings with the parity of the depth
/// (about −0.7 at even depths and +0.2 at odd ones here with the previous weights);
/// with the bundled weights' correction it stays within 0.3 disc at every depth, and
/// so does the swing between consecutive depths from depth 5 on.
///
/// Depth 4 (leaves at 20 empties) is the exception: it reads +0.21 and depth 5 −0.27
/// here. Not a defect of the correction's measurement but a limit of its model (a
/// lean by leaf empties alone): on `calibrate`'s exact positions, the shallow pairs
/// of searches that end at 20 empties read it over-corrected by 0.35–0.55 disc, while
/// the swing of deeper searches, which the correction follows, finds it right
/// (`train::calibrate`'s module doc). The 4 → 5 step is bounded at 0.5.
#[test]
fn searches_do_not_lean_with_the_parity_of_their_depth() {
    let corrected = signed_errors_at_24(&EvalSource::Bundled);
    let swing = |e: &[f64]| e.windows(2).map(|w| (w[1] - w[0]).abs()).fold(0.0, f64::max);
    assert!(corrected.iter().all(|e| e.abs() <= 0.3), "signed errors at depths 4..=9: {corrected:.2?}");
    assert!(swing(&corrected[1..]) <= 0.3, "signed errors at depths 4..=9: {corrected:.2?}");
    assert!((corrected[1] - corrected[0]).abs() <= 0.5, "signed errors at depths 4..=9: {corrected:.2?}");
    let mut weights = Weights::bundled().into_parts();
    assert!(weights.leaf_correction.iter().any(|&c| c != 0), "the bundled weights carry a leaf correction");
    weights.leaf_correction.clear();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("uncorrected.tbe");
    Weights::try_from(weights).unwrap().save(&path).unwrap();
    let uncorrected = signed_errors_at_24(&EvalSource::File(path));
    assert!(swing(&uncorrected) >= 0.6, "without the correction: {uncorrected:.2?}");
}

/// `thorbook calibrate` writes weights with a leaf correction measured on the games,
/// leaving the rest of the weights as they were, and refuses bad settings.
#[test]
fn calibrate_writes_a_correction_beside_the_same_weights() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cal.tbe");
    let run = thorbook(&[
        "calibrate",
        "-o",
        out.to_str().unwrap(),
        "--exact-positions",
        "0",
        "--swing-positions",
        "20",
        "--swing-depth",
        "7",
        "--rounds",
        "1",
        "--threads",
        "2",
    ]);
    assert!(run.ok().contains("correction (discs)"), "{}", run.stdout);
    let written = Weights::load(&out).unwrap();
    let bundled = Weights::bundled();
    assert_eq!((written.values(), written.probcut()), (bundled.values(), bundled.probcut()));
    assert!(written.note().contains("search-leaf correction"), "{}", written.note());
    assert_eq!(written.leaf_correction().len(), 61);
    // Measured, not copied: one round from the bundled correction moves it.
    assert_ne!(written.leaf_correction(), bundled.leaf_correction());
    let bad = thorbook(&["calibrate", "-o", out.to_str().unwrap(), "--rounds", "0"]);
    assert!(bad.fails().contains("--rounds must be from 1 to 10, got 0"), "{}", bad.stderr);
}

/// `labels solve` in shards (the index from `--index` or a scheduler's variable) and
/// `labels merge`: the merged shards are the one-process store byte for byte, the
/// trainer reads them without solving again, and stores that disagree or are missing
/// are refused by name.
#[test]
fn labels_solved_in_shards_merge_to_one_store_that_training_reads() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let job = ["labels", "solve", "--solve-at", "10", "--threads", "1"];
    let shard = |index: &str| {
        let mut args = job.to_vec();
        let out = p("shard.{index}.tbl");
        args.extend(["--shards", "2", "--labels", &out, "--index", index]);
        thorbook(&args).ok();
    };
    shard("0");
    // The second shard from a Slurm array task's variable.
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_thorbook"))
        .args(job)
        .args(["--shards", "2", "--labels", &p("shard.{index}.tbl")])
        .env("SLURM_ARRAY_TASK_ID", "1")
        .output()
        .unwrap();
    assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
    let mut whole = job.to_vec();
    let whole_path = p("whole.tbl");
    whole.extend(["--labels", &whole_path]);
    thorbook(&whole).ok();
    // Run again: everything is there.
    assert!(thorbook(&whole).stderr.contains(", 0 solved now"));
    thorbook(&["labels", "merge", &p("shard.0.tbl"), &p("shard.1.tbl"), "-o", &p("merged.tbl")]).ok();
    thorbook(&["labels", "merge", &whole_path, "-o", &p("whole-merged.tbl")]).ok();
    let merged = std::fs::read(p("merged.tbl")).unwrap();
    assert!(merged == std::fs::read(p("whole-merged.tbl")).unwrap(), "the shards' labels differ from one run's");
    let info = thorbook(&["labels", "info", &p("merged.tbl"), "--json"]);
    let v: serde_json::Value = serde_json::from_str(info.ok().trim()).unwrap();
    let (n0, n1) = (std::fs::read(p("shard.0.tbl")).unwrap().len(), std::fs::read(p("shard.1.tbl")).unwrap().len());
    assert!(n0 > 1000 && n1 > 1000, "a shard is empty: {n0} {n1} bytes");
    assert_eq!(v["exact_by_empties"].as_array().unwrap().len(), 10, "{v}");
    // Training with `--solve-at 10` on the same games finds every solve.
    let w = p("w.tbe");
    let train = thorbook(&[
        "train",
        "--labels",
        &p("merged.tbl"),
        "--solve-at",
        "10",
        "--iterations",
        "2",
        "--probcut-positions",
        "0",
        "--threads",
        "2",
        "-o",
        &w,
    ]);
    train.ok();
    assert!(train.stderr.contains("; 0 new labels"), "training solved again: {}", train.stderr);
    // Damage: a store that disagrees, a missing store, no index in a sharded run.
    let mut bad = merged.clone();
    let first_score = 8 + 4 + 16; // magic, chunk count, then the first record's score byte
    bad[first_score] = bad[first_score].wrapping_add(2);
    let crc_end = 8 + 4 + u32::from_le_bytes(bad[8..12].try_into().unwrap()) as usize * 24;
    let crc = crc32fast::hash(&bad[8..crc_end]);
    bad[crc_end..crc_end + 4].copy_from_slice(&crc.to_le_bytes());
    std::fs::write(p("bad.tbl"), &bad).unwrap();
    let err = thorbook(&["labels", "merge", &p("merged.tbl"), &p("bad.tbl"), "-o", &p("x.tbl")]);
    assert!(err.fails().contains("bad.tbl: position ") && err.stderr.contains("(exact)"), "{}", err.stderr);
    assert!(!dir.path().join("x.tbl").exists());
    let err = thorbook(&["labels", "merge", &p("nope.tbl"), "-o", &p("x.tbl")]);
    assert!(err.fails().contains("nope.tbl: no such label store"));
    let mut args = job.to_vec();
    let out = p("s.tbl");
    args.extend(["--shards", "2", "--labels", &out]);
    assert!(thorbook(&args).fails().contains("no shard index"));
}
