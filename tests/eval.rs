//! The trained evaluation through the binary: `train`, `eval`, `eval-error`, weight
//! files given to the engine, damaged weight files.

use crate::util::thorbook;
use thorbook::eval::{Evaluator, PatternEval, Weights};
use thorbook::symmetry::Transform;
use thorbook::Position;

#[test]
fn train_on_the_bundled_archives_then_use_the_weights() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("w.tbe");
    let report = dir.path().join("report.json");
    let out_s = out.to_str().unwrap();
    let run = thorbook(&[
        "train",
        "-o",
        out_s,
        "--solve-at",
        "10",
        "--iterations",
        "20",
        "--probcut-positions",
        "4",
        "--probcut-depth",
        "4",
        "--threads",
        "2",
        "--report",
        report.to_str().unwrap(),
    ]);
    let table = run.ok();
    assert!(table.contains("validation"), "{table}");
    // The report: every phase trained, and the trained weights beat "always 0" on the
    // held-out games at the end of the game, where the targets are exact.
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let phases = json["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 30);
    let last = &phases[27];
    assert!(last["validation_positions"].as_u64().unwrap() > 50);
    assert!(last["validation_mae"].as_f64().unwrap() < 8.0, "{last}");

    let weights = Weights::load(&out).unwrap();
    assert_eq!(weights.probcut_depths, 32);
    assert!(weights.note.starts_with("thorbook"), "{}", weights.note);
    let eval = PatternEval::new(&weights);
    let pos = Position::from_moves("f5d6c3d3c4f4f6").unwrap();
    for t in Transform::ALL {
        assert_eq!(eval.evaluate(&t.board(&pos.board)), eval.evaluate(&pos.board));
    }

    // The command line evaluates with it, and so does the engine.
    let v: serde_json::Value =
        serde_json::from_str(thorbook(&["eval", "--moves", "f5d6c3d3c4f4f6", "--eval", out_s, "--json"]).ok()).unwrap();
    assert_eq!(v["score"].as_i64().unwrap(), eval.evaluate(&pos.board) as i64);
    assert_eq!(v["digest"].as_str().unwrap(), format!("{:08x}", weights.digest()));
    let best = thorbook(&["bestmove", "--moves", "f5d6c3d3c4f4f6", "--no-book", "--level", "5", "--eval", out_s]);
    assert!(best.ok().trim().len() >= 2);
}

#[test]
fn eval_explains_and_agrees_with_the_library() {
    let pos = Position::from_moves("f5f6e6f4e3").unwrap();
    let eval = PatternEval::bundled();
    let v: serde_json::Value =
        serde_json::from_str(thorbook(&["eval", "--moves", "f5f6e6f4e3", "--json", "--verbose"]).ok()).unwrap();
    assert_eq!(v["score"].as_i64().unwrap(), eval.evaluate(&pos.board) as i64);
    let parts = v["patterns"].as_array().unwrap();
    assert_eq!(parts.len(), 46);
    let sum: f64 = v["bias"].as_f64().unwrap() + parts.iter().map(|p| p["discs"].as_f64().unwrap()).sum::<f64>();
    assert!((sum - eval.discs(&pos.board)).abs() < 1e-6);
    let text = thorbook(&["eval", "--board", &pos.to_board_text(), "--verbose"]);
    assert!(text.ok().contains("corner2x5"));
}

#[test]
fn damaged_or_foreign_weight_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let good = Weights::zero().to_bytes();
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
        let rows: serde_json::Value = serde_json::from_str(thorbook(&args).ok()).unwrap();
        let rows = rows.as_array().unwrap();
        assert_eq!(rows.len(), 30);
        let measured: u64 = rows.iter().map(|r| r["positions"].as_u64().unwrap()).sum();
        assert!(measured > 1000, "{measured}");
        // Error at 24 empties, where the targets are exact.
        errors.push(rows[18]["mae"].as_f64().unwrap());
    }
    // The trained evaluation is the more accurate one (the flag is not ignored).
    assert!(errors[0] < errors[1] - 1.0, "{errors:?}");
    let classic = thorbook(&["eval", "--classic-eval"]);
    assert!(classic.fails().contains("eval-error --classic-eval"));
    let bad = thorbook(&["eval-error", "--selectivity", "99"]);
    assert!(bad.fails().contains("--selectivity"));
}
