//! The search against independent truth through the public `Engine` and the binary:
//! the FFO positions' listed move scores, legality of every returned move, the same
//! refusals everywhere, interruption. The crate-private problem-set runner and the
//! windowed solver are checked against FFO, plain alpha-beta and the WTHOR theoretical
//! scores in `src/search/truth_tests.rs`.

use thorbook::book::BookSource;
use thorbook::engine::{Engine, EngineConfig};
use thorbook::eval::EvalSource;
use thorbook::obf::{parse_obf, Problem};
use thorbook::search::{Limits, Settings};
use thorbook::testutil::{random_position, Rng};
use thorbook::{Move, Position};

use crate::util::{shared, thorbook};

fn problems(name: &str) -> Vec<Problem> {
    let path = shared(&format!("ffo/{name}"));
    parse_obf(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Bad settings are refused with their typed cause by the engine (and by the solver
/// of problem files alike: `search::truth_tests`).
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
