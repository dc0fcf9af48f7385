//! The engine through its protocols and commands: scripted GTP, NBoard and terminal
//! sessions through the real binary, matches checked by replay, and a property test
//! that `Engine::choose` answers every board legally under the harshest limits.

use std::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use thorbook::board::Board;
use thorbook::book::BookSource;
use thorbook::engine::{Engine, EngineConfig, EngineError, Game, MoveSource};
use thorbook::search::{Settings, Strength};
use thorbook::square::{format_moves, parse_move_sequence, Move};
use thorbook::thor::{bundled_sources, LoadOptions, Outcome, ThorDatabase};
use thorbook::{Color, Position};

use crate::util::thorbook_stdin;

/// A board with 35 legal moves for black (more than any fixed list of 32 held).
const WIDE_BOARD: &str = "---------O-OXO-O-OXXXO-X-XX--X---OXO--OX--XX-X---OOOOXO-------X- X";

/// A finished bundled Thor game with at least one pass: its moves (passes left out, as
/// WTHOR stores them) and black's stored final disc count.
fn thor_game_with_pass() -> (Vec<Move>, i32) {
    let db = ThorDatabase::load(&bundled_sources(), with!(LoadOptions::default(), strict: true, index: false)).unwrap();
    let g = db
        .games()
        .iter()
        .find(|g| g.passes() > 0 && g.outcome() == Outcome::Finished)
        .expect("the bundled archives hold games with passes");
    let moves: Vec<Move> = g.moves_with_passes().into_iter().filter(|&m| m != Move::Pass).collect();
    (moves, i32::from(g.black_discs().expect("a finished WTHOR game has its result")))
}

fn gtp_color(pos: &Position) -> &'static str {
    if pos.side == Color::Black {
        "b"
    } else {
        "w"
    }
}

#[test]
fn gtp_session_plays_a_whole_game_with_a_pass() {
    let (moves, black_discs) = thor_game_with_pass();
    let mut script = String::from("protocol_version\nname\nboardsize 8\nboardsize 10\nclear_board\nkomi 0\n");
    let mut pos = Position::START;
    let mut expected = Vec::new();
    for (i, &mv) in moves.iter().enumerate() {
        if pos.board.must_pass() {
            pos = pos.pass();
        }
        if i == 3 {
            // An illegal move, a bad command and an undo in the middle: the loop goes on.
            script.push_str(&format!("play {} a1\nfrobnicate\n", gtp_color(&pos)));
            script.push_str(&format!("play {} {}\nundo\n", gtp_color(&pos), mv.to_string().to_uppercase()));
            expected.extend(["?", "?", "=", "="]);
        }
        script.push_str(&format!("play {} {}\n", gtp_color(&pos), mv.to_string().to_uppercase()));
        expected.push("=");
        pos = pos.try_play(mv).unwrap();
    }
    assert!(pos.board.is_game_over());
    script.push_str("final_score\ngenmove b\nshowboard\nquit\n");
    let out = thorbook_stdin(&["gtp", "--level", "1"], &script);
    let replies: Vec<&str> = out.ok().split("\n\n").filter(|r| !r.trim().is_empty()).collect();
    assert_eq!(replies[0], "= 2");
    assert_eq!(replies[1], "= thorbook");
    assert_eq!(replies[2], "=");
    assert!(replies[3].starts_with("? unacceptable size"), "{}", replies[3]);
    for (i, want) in expected.iter().enumerate() {
        assert!(replies[6 + i].starts_with(want), "reply {}: {} (wanted {want})", 6 + i, replies[6 + i]);
    }
    let score = replies[6 + expected.len()];
    // WTHOR stores black's discs with the empties given to the winner: an independent count.
    let diff = 2 * black_discs - 64;
    let want = match diff {
        0 => "= 0".to_string(),
        d if d > 0 => format!("= B+{d}"),
        d => format!("= W+{}", -d),
    };
    assert_eq!(score, want);
    assert_eq!(replies[7 + expected.len()], "= pass", "genmove after the end");
    assert!(replies[8 + expected.len()].contains("game over"));
}

#[test]
fn gtp_engine_plays_both_sides_to_the_end() {
    // The engine's own moves, genmove after genmove, with passes answered `pass`.
    let mut script = String::from("clear_board\n");
    for i in 0..70 {
        script.push_str(if i % 2 == 0 { "genmove b\n" } else { "genmove w\n" });
    }
    script.push_str("final_score\n");
    let out = thorbook_stdin(&["gtp", "--level", "2", "--no-book"], &script);
    let replies: Vec<&str> = out.ok().split("\n\n").filter(|r| !r.trim().is_empty()).collect();
    let mut game = Game::default();
    for (i, r) in replies[1..71].iter().enumerate() {
        let color = if i % 2 == 0 { Color::Black } else { Color::White };
        if r.starts_with('?') {
            // Asked for the side that is not to move while the other has a move.
            assert!(r.contains("turn"), "{r}");
            continue;
        }
        let word = r.trim_start_matches('=').trim();
        if game.is_over() {
            assert_eq!(word, "pass");
            continue;
        }
        let mv: Move = word.parse().unwrap();
        game.play_for(color, mv).unwrap_or_else(|e| panic!("reply {i} `{r}`: {e}"));
    }
    assert!(game.is_over(), "70 genmoves finish a game: {}", format_moves(&game.moves()));
    assert_eq!(replies[71], format!("= {}", game.result_text()));
}

#[test]
fn nboard_session_answers_go_hint_ping_and_survives_bad_lines() {
    let (moves, _) = thor_game_with_pass();
    let ggf = "(;GM[Othello]PC[NBoard]PB[a]PW[b]RE[?]TI[15:00]TY[8]BO[8 ---------------------------O*------*O--------------------------- *]B[F5]W[F6]B[D3]W[C5];)";
    let mut script =
        format!("nboard 2\nset depth 4\nset game {ggf}\nping 1\ngo\nhint 3\nfly away\nmove A1\nmove E6\nping 2\ngo\n");
    // A game whose ninth move is illegal: named once by its ply; then a line over the bound.
    let bad_game = "(;GM[Othello]TY[8]BO[8 ---------------------------O*------*O--------------------------- *]\
                    B[f5]W[d6]B[c3]W[d3]B[c4]W[f4]B[f6]W[f3]B[b4];)";
    script.push_str(&format!("set game {bad_game}\nset game {ggf}\n{}\n", "x".repeat(2 << 20)));
    // A whole game with a pass, move by move from the start, then analysis of it.
    script.push_str(
        "set game (;GM[Othello]TY[8]BO[8 ---------------------------O*------*O--------------------------- *];)\n",
    );
    for mv in &moves {
        script.push_str(&format!("move {}\n", mv.to_string().to_uppercase()));
    }
    script.push_str("ping 3\ngo\nlearn\nquit\n");
    let out = thorbook_stdin(&["nboard", "--no-book"], &script);
    let text = out.ok();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "set myname thorbook");
    assert!(lines.contains(&"pong 1") && lines.contains(&"pong 2") && lines.contains(&"pong 3"), "{text}");
    let answers: Vec<&str> = lines.iter().filter_map(|l| l.strip_prefix("=== ")).collect();
    assert_eq!(answers.len(), 2, "{text}");
    let after4 = Position::from_moves("f5f6d3c5").unwrap();
    let mv: Move = answers[0].split('/').next().unwrap().parse().unwrap();
    assert!(after4.try_play(mv).is_ok(), "{mv} is legal");
    let after5 = Position::from_moves("f5f6d3c5e6").unwrap();
    let mv: Move = answers[1].split('/').next().unwrap().parse().unwrap();
    assert!(after5.try_play(mv).is_ok(), "{mv} is legal after e6");
    let hints: Vec<&str> = lines.iter().copied().filter(|l| l.starts_with("search ")).collect();
    assert_eq!(hints.len(), 3, "{text}");
    let scores: Vec<f64> = hints.iter().map(|h| h.split(' ').nth(2).unwrap().parse().unwrap()).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "hints best first: {hints:?}");
    assert!(lines.contains(&"learned"));
    // Errors go to stderr and the loop goes on; `go` after the end of the game is one.
    assert!(out.stderr.contains("unknown command `fly`"), "{}", out.stderr);
    assert!(out.stderr.contains("move a1"), "{}", out.stderr);
    assert!(out.stderr.contains("game is over"), "{}", out.stderr);
    assert!(out.stderr.contains(": ply 9: b4 is not legal for black\n"), "{}", out.stderr);
    assert_eq!(out.stderr.matches("ply 9").count(), 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("thorbook nboard: line 14 is longer than 1048576 bytes; it is ignored\n"),
        "{}",
        out.stderr
    );
}

#[test]
fn nboard_reports_book_moves_as_book_moves() {
    let script = "nboard 2\nset depth 4\nset game (;GM[Othello]TY[8]BO[8 ---------------------------O*------*O--------------------------- *]B[F5];)\nhint 2\ngo\nquit\n";
    let out = thorbook_stdin(&["nboard"], script);
    let text = out.ok();
    let hints: Vec<&str> = text.lines().filter(|l| l.starts_with("book ") || l.starts_with("search ")).collect();
    assert_eq!(hints.len(), 2, "{text}");
    assert!(hints[0].starts_with("book "), "{text}");
    assert!(text.contains("status thorbook plays from its book"), "{text}");
}

#[test]
fn terminal_play_finishes_a_scripted_game() {
    // The person answers with every square in turn: the first legal one is played.
    let all: String = thorbook::square::Square::ALL.iter().map(|s| format!("{s}\n")).collect();
    let script = format!("hint\nundo\nlevel 99\nlevel 2\nxyz\n{}", all.repeat(40));
    let out = thorbook_stdin(&["play", "--color", "white", "--level", "1", "--no-book"], &script);
    let text = out.ok();
    assert!(text.contains("thorbook plays"), "{text}");
    assert!(text.contains(&format!("level must be 1..{}", thorbook::search::Level::MAX)), "{text}");
    assert!(text.contains("level 2: depth 2"), "{text}");
    assert!(text.contains("is not a move or a command"), "{text}");
    let last = text.lines().rev().find(|l| l.starts_with("game over:")).expect("the game ends");
    let moves = last.rsplit("moves ").next().unwrap();
    let seq = parse_move_sequence(moves).unwrap();
    let mut game = Game::default();
    for mv in seq {
        game.play(mv).unwrap();
    }
    assert!(game.is_over());
    assert!(last.contains(&format!("({})", game.result_text())), "{last}");
}

#[test]
fn match_results_agree_with_a_replay_of_the_games() {
    let dir = tempfile::tempdir().unwrap();
    let games = dir.path().join("games.jsonl");
    let out = thorbook_stdin(
        &[
            "match",
            "--a",
            "self --level 3 --no-book",
            "--b",
            "self --level 1",
            "--b-protocol",
            "nboard",
            "--games",
            "4",
            "--games-out",
            games.to_str().unwrap(),
        ],
        "",
    );
    let text = out.ok().to_string();
    let (mut w, mut d, mut l) = (0, 0, 0);
    for line in std::fs::read_to_string(&games).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(v["forfeit"].is_null(), "{line}");
        let mut game = Game::default();
        for mv in parse_move_sequence(v["moves"].as_str().unwrap()).unwrap() {
            game.play(mv).unwrap();
        }
        assert!(game.is_over(), "{line}");
        assert_eq!(v["black_score"].as_i64().unwrap() as i32, game.black_score(), "{line}");
        let a_black = v["a_color"] == "black";
        let a_diff = if a_black { game.black_score() } else { -game.black_score() };
        match a_diff.signum() {
            1 => w += 1,
            0 => d += 1,
            _ => l += 1,
        }
    }
    assert_eq!(w + d + l, 4);
    assert!(text.contains(&format!("A: {w} wins, {d} draws, {l} losses in 4 games")), "{text}");
}

/// A match's game clock reaches a GTP engine (`time_settings`, `time_left`) and an
/// NBoard engine (GGF `TI`), and neither runs out. How much of the clock it spends is
/// wall time, a measurement and not a test (19.27 s of 20 s measured; the budgets'
/// arithmetic, the same from GTP and GGF, is `clock.rs`'s test).
#[test]
fn under_a_game_clock_the_engine_never_runs_out_on_either_protocol() {
    for protocol in ["gtp", "nboard"] {
        let dir = tempfile::tempdir().unwrap();
        let games = dir.path().join("games.jsonl");
        let out = thorbook_stdin(
            &[
                "match",
                "--a",
                "self",
                "--a-protocol",
                protocol,
                "--b",
                "self --level 3",
                "--clock",
                "20",
                "--games",
                "1",
                "--games-out",
                games.to_str().unwrap(),
            ],
            "",
        );
        let text = out.ok().to_string();
        let line = std::fs::read_to_string(&games).unwrap();
        let v: serde_json::Value = serde_json::from_str(line.trim()).unwrap();
        assert!(v["forfeit"].is_null(), "{protocol}: {line}");
        let used = v["a_thinking"]["seconds"].as_f64().unwrap();
        assert!(used > 0.0 && used < 20.0, "{protocol}: {used} s of 20 s\n{text}");
        assert!(text.contains("of 20.00 s"), "{text}");
    }
}

#[test]
fn commands_while_the_engine_ponders_are_answered_and_quit_ends_it() {
    // Under a clock with no level the engine ponders with no limit after its move (at
    // 58 empties it would search for hours): every command must stop it and be answered.
    for (mode, script, answers) in [
        ("gtp", "time_settings 30 0 0\nplay b f5\ngenmove w\n", 3),
        ("nboard", "nboard 2\nset game (;GM[Othello]PC[t]PB[a]PW[b]TI[0:30]TY[8]B[F5];)\ngo\n", 1),
    ] {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_thorbook"))
            .args([mode, "--no-book", "--threads", "1"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in std::io::BufRead::lines(std::io::BufReader::new(stdout)) {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        use std::io::Write;
        stdin.write_all(script.as_bytes()).unwrap();
        let wait = std::time::Duration::from_secs(120);
        let reply = |want: &str| loop {
            let line = rx.recv_timeout(wait).unwrap_or_else(|_| panic!("{mode}: no `{want}` line"));
            if line.starts_with(want) {
                break line;
            }
        };
        for _ in 0..answers {
            reply(if mode == "gtp" { "=" } else { "===" });
        }
        // The engine has moved and thinks on: a command is still answered, then quit.
        let (ask, want) = if mode == "gtp" { ("showboard\n", "=") } else { ("ping 5\n", "pong 5") };
        for _ in 0..3 {
            std::thread::sleep(std::time::Duration::from_millis(300));
            stdin.write_all(ask.as_bytes()).unwrap();
            reply(want);
        }
        stdin.write_all(b"quit\n").unwrap();
        let start = std::time::Instant::now();
        while child.try_wait().unwrap().is_none() {
            assert!(start.elapsed() < wait, "{mode}: quit did not end a pondering engine");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

#[test]
fn a_mixed_protocol_match_gives_both_sides_the_same_time() {
    let dir = tempfile::tempdir().unwrap();
    let games = dir.path().join("games.jsonl");
    let engine = "self --level 12 --no-book";
    let out = thorbook_stdin(
        &[
            "match",
            "--a",
            engine,
            "--b",
            engine,
            "--b-protocol",
            "nboard",
            "--time-per-move",
            "0.15",
            "--games",
            "4",
            "--games-out",
            games.to_str().unwrap(),
        ],
        "",
    );
    let text = out.ok().to_string();
    // The summary's time per move by phase: ">40" and "21-40" empties are searched
    // under the budget; the endgame's exact solves end when they are done.
    let midgame = |side: &str| -> f64 {
        let row = text.lines().find(|l| l.trim_start().starts_with(&format!("{side} "))).expect("a time row");
        let ms: Vec<f64> = row.split_whitespace().filter_map(|w| w.parse().ok()).collect();
        assert_eq!(ms.len(), 3, "{row}");
        (ms[0] + ms[1]) / 2.0 / 1000.0
    };
    let (mean_a, mean_b) = (midgame("A"), midgame("B"));
    // Every move after the opening's is thought about by one side or the other:
    // neither protocol lost a turn (a pass is the referee's, not an engine's).
    let openings: Vec<String> = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/data/openings.txt"))
        .unwrap()
        .lines()
        .filter_map(|l| l.split('#').next().map(str::trim).filter(|l| !l.is_empty()).map(String::from))
        .collect();
    for line in std::fs::read_to_string(&games).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(v["forfeit"].is_null(), "{line}");
        let opening = &openings[v["opening"].as_u64().unwrap() as usize - 1];
        let opening_plies = parse_move_sequence(opening).unwrap().len();
        let moves = parse_move_sequence(v["moves"].as_str().unwrap()).unwrap();
        let passes = moves.iter().filter(|m| matches!(m, Move::Pass)).count();
        let thought = v["a_thinking"]["moves"].as_u64().unwrap() + v["b_thinking"]["moves"].as_u64().unwrap();
        assert_eq!(thought as usize, moves.len() - opening_plies - passes, "{line}");
        // Each side's moves with their empties, as a replay of the game counts them,
        // and times that add up to the side's total.
        let a_black = v["a_color"] == "black";
        let mut expected = [Vec::new(), Vec::new()];
        let mut empties = 60;
        for (ply, m) in moves.iter().enumerate() {
            if matches!(m, Move::Place(_)) {
                if ply >= opening_plies {
                    let black = ply % 2 == 0;
                    expected[usize::from(black != a_black)].push(empties);
                }
                empties -= 1;
            }
        }
        for (side, key) in ["a_thinking", "b_thinking"].iter().enumerate() {
            let per_move = v[key]["per_move"].as_array().unwrap();
            let got: Vec<u64> = per_move.iter().map(|m| m[0].as_u64().unwrap()).collect();
            assert_eq!(got, expected[side], "{key}: {line}");
            let sum: f64 = per_move.iter().map(|m| m[1].as_f64().unwrap()).sum();
            assert!((sum - v[key]["seconds"].as_f64().unwrap()).abs() < 1e-9, "{key}: {line}");
        }
    }
    // Level 12 never finishes a midgame move in 0.15 s: both sides use their budget,
    // which the protocol must have carried (without it a move takes seconds).
    assert!(mean_a < 0.15 && mean_b < 0.15, "A {mean_a:.3} s, B {mean_b:.3} s a move");
    let ratio = mean_a / mean_b;
    assert!((1.0 / 1.2..=1.2).contains(&ratio), "A {mean_a:.3} s, B {mean_b:.3} s a move");
}

#[test]
fn a_crashing_engine_forfeits_and_the_match_goes_on() {
    let out =
        thorbook_stdin(&["match", "--a", "self --level 1", "--b", "false", "--games", "2", "--move-timeout", "5"], "");
    let text = out.ok();
    assert_eq!(text.matches("B forfeits").count(), 2, "{text}");
    assert!(text.contains("A: 2 wins, 0 draws, 0 losses"), "{text}");
}

#[test]
fn silent_and_illegal_engines_forfeit() {
    let out = thorbook_stdin(
        &["match", "--a", "self --level 1", "--b", "sleep 30", "--games", "1", "--move-timeout", "1"],
        "",
    );
    let text = out.ok();
    assert!(text.contains("B forfeits: setting up the game: no answer within 1.0 s"), "{text}");
    // A GTP engine that answers A1 to everything: its first genmove is illegal.
    let liar = "sh -c 'while read l; do echo \"= A1\"; echo; done'";
    let out =
        thorbook_stdin(&["match", "--a", liar, "--b", "self --level 1", "--games", "2", "--move-timeout", "5"], "");
    let text = out.ok();
    assert_eq!(text.matches("A forfeits: illegal move").count(), 2, "{text}");
    assert!(text.contains("A: 0 wins, 0 draws, 2 losses"), "{text}");
}

#[test]
fn engine_commands_reject_absurd_arguments_without_crashing() {
    for (args, want) in [
        (vec!["bestmove", "--moves", "f5d6", "--time", "1e20"], "--time must be"),
        (vec!["bestmove", "--moves", "f5d6", "--hash-mib", "100000000"], "table of 100000000 MiB is out of range"),
        (vec!["bestmove", "--level", "0"], "--level must be"),
        (vec!["bestmove", "--threads", "0"], "threads must be from 1 to 256, got 0"),
        (vec!["solve", "x.obf", "--threads", "0"], "--threads must be from 1 to 256, got 0"),
        (vec!["gtp", "--depth", "99"], "depth must be from 1 to 60, got 99"),
        (vec!["match", "--a", "self", "--b", "self", "--games", "0"], "--games must be"),
        (vec!["match", "--a", "self", "--b", "self", "--openings", "/no/such/file"], "/no/such/file"),
    ] {
        let err = thorbook_stdin(&args, "").fails().to_string();
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

#[test]
fn wide_boards_and_cut_short_searches_still_give_a_legal_move() {
    let pos = Position::parse_board_text(WIDE_BOARD).unwrap();
    assert_eq!(pos.board.legal_moves().count_ones(), 35);
    for args in [
        vec!["bestmove", "--board", WIDE_BOARD, "--depth", "3", "--json"],
        vec!["analyze", "--board", WIDE_BOARD, "--depth", "2", "--json"],
        vec!["bestmove", "--board", WIDE_BOARD, "--nodes", "1", "--json"],
    ] {
        let out = thorbook_stdin(&args, "");
        let v: serde_json::Value = serde_json::from_str(out.ok()).unwrap();
        let mv = if args[0] == "analyze" { v["moves"][0]["move"].clone() } else { v["move"].clone() };
        let mv: Move = mv.as_str().unwrap().parse().unwrap();
        assert!(pos.try_play(mv).is_ok(), "{args:?}: {mv}");
        if args[0] == "analyze" {
            assert_eq!(v["moves"].as_array().unwrap().len(), 35);
        }
    }
    // 14 empties, an exact solve stopped after 1000 nodes: a move, not a panic or "game over".
    let ffo1 = "--XXXXX--OOOXX-O-OOOXXOX-OXOXOXXOXXXOXXX--XOXOXX-XXXOOO--OOOOO-- X";
    let out = thorbook_stdin(&["analyze", "--board", ffo1, "--exact", "--nodes", "1000"], "");
    assert!(!out.ok().contains("game over"), "{}", out.stdout);
    let out =
        thorbook_stdin(&["bestmove", format!("--board={ffo1}").as_str(), "--exact", "--nodes", "1000", "--json"], "");
    let v: serde_json::Value = serde_json::from_str(out.ok()).unwrap();
    let mv: Move = v["move"].as_str().unwrap().parse().unwrap();
    assert!(Position::parse_board_text(ffo1).unwrap().try_play(mv).is_ok());
}

/// Boards of every density, either side to move, some with dozens of legal moves.
fn any_board() -> impl Strategy<Value = (Position, u8)> {
    (any::<u64>(), any::<u64>(), any::<u64>(), 0u8..4, any::<bool>(), 0u8..6).prop_map(
        |(a, b, c, density, white, limit)| {
            let occupied = match density {
                0 => a & b,
                1 => a,
                2 => a | b,
                _ => a & b & c,
            };
            let black = occupied & c;
            let white_discs = occupied & !c;
            let side = if white { Color::White } else { Color::Black };
            (Position::from_colors(black, white_discs, side).unwrap(), limit)
        },
    )
}

#[test]
fn engine_choose_answers_any_board_legally() {
    let config =
        with!(EngineConfig::default(), search: with!(Settings::default(), hash_mib: 1), book: BookSource::None);
    let engine = std::sync::Mutex::new(Engine::new(config).unwrap());
    let wide = Position::parse_board_text(WIDE_BOARD).unwrap();
    let mut runner = TestRunner::new(Config { cases: 400, ..Config::default() });
    let check = |pos: Position, limit: u8| -> Result<(), TestCaseError> {
        let strength = match limit {
            0 => Strength { depth: Some(1), exact_at: Some(0), time: None, nodes: None, selectivity: None },
            1 => Strength {
                depth: Some(4),
                exact_at: Some(10),
                time: None,
                nodes: None,
                selectivity: thorbook::search::Selectivity::from_sigmas(1.0),
            },
            2 => Strength { depth: None, exact_at: Some(60), time: None, nodes: Some(1), selectivity: None },
            3 => {
                Strength { depth: None, exact_at: Some(14), time: Some(Duration::ZERO), nodes: None, selectivity: None }
            }
            4 => Strength {
                depth: Some(3),
                exact_at: Some(60),
                time: Some(Duration::ZERO),
                nodes: Some(1),
                selectivity: None,
            },
            _ => Strength { depth: Some(2), exact_at: Some(8), time: None, nodes: None, selectivity: None },
        };
        let mut engine = engine.lock().unwrap();
        engine.set_strength(strength);
        let board: Board = pos.board;
        match engine.choose(&pos) {
            Err(EngineError::GameOver { score }) => {
                prop_assert!(board.is_game_over());
                prop_assert_eq!(score, board.final_score());
            }
            Err(e) => prop_assert!(false, "{e}"),
            Ok(m) => {
                prop_assert!(!board.is_game_over());
                if board.must_pass() {
                    prop_assert_eq!(m.mv, Move::Pass);
                    prop_assert_eq!(m.source, MoveSource::Forced);
                } else {
                    prop_assert!(m.mv != Move::Pass && pos.try_play(m.mv).is_ok(), "{} in {}", m.mv, pos);
                }
                prop_assert!((-64..=64).contains(&m.score));
            }
        }
        Ok(())
    };
    for limit in 0..6 {
        check(wide, limit).unwrap();
        check(wide.pass(), limit).unwrap();
    }
    runner.run(&any_board(), |(pos, limit)| check(pos, limit)).unwrap();
}

/// `--hash-mib 64` allocates 64 MiB (a power of two used to get half), reported by
/// `analyze --json`; a size that is not a power of two gets the largest power of two
/// buckets below it.
#[test]
fn the_table_holds_the_size_asked_for() {
    for (mib, bytes) in [("64", 64u64 << 20), ("100", 64 << 20), ("1", 1 << 20)] {
        let out = crate::util::thorbook(&["analyze", "--moves", "f5d6", "--level", "2", "--hash-mib", mib, "--json"]);
        let v: serde_json::Value = serde_json::from_str(out.ok()).unwrap();
        assert_eq!(v["table_bytes"].as_u64(), Some(bytes), "--hash-mib {mib}");
    }
}

/// A `ping` that arrives while the engine thinks stops the search: the move found so
/// far is played at once (`===`), then `pong` answers — long before the depth-40
/// search asked for could end (the bound of 30 s only catches a search never stopped).
#[test]
fn nboard_ping_during_a_search_stops_it_and_is_answered() {
    use std::io::{BufRead, BufReader, Write};
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_thorbook"))
        .args(["nboard", "--no-book", "--depth", "40", "--exact-at", "0", "--hash-mib", "16"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let start_position =
        "(;GM[Othello]TY[8]BO[8 ---------------------------O*------*O--------------------------- *]B[F5]W[D6];)";
    writeln!(stdin, "nboard 2\nset game {start_position}\ngo").unwrap();
    stdin.flush().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let asked = std::time::Instant::now();
    writeln!(stdin, "ping 1").unwrap();
    stdin.flush().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        seen.push(line.clone());
        if line == "pong 1" {
            break;
        }
        assert!(asked.elapsed().as_secs() < 30, "no pong: {seen:?}");
    }
    let played = seen.iter().position(|l| l.starts_with("=== "));
    let pong = seen.iter().position(|l| l == "pong 1");
    assert!(played.is_some() && played < pong, "the move then the pong: {seen:?}");
    // `quit` ends the engine while the GUI still holds the pipe open.
    writeln!(stdin, "quit").unwrap();
    stdin.flush().unwrap();
    assert!(child.wait().unwrap().success());
    drop(stdin);
}

/// The engine plays a book leaf only where its own search would not go deeper: at a
/// level searching beyond the leaf's depth it searches the position itself; at the
/// leaf's own depth, or under a time budget, it plays the book.
#[test]
fn the_engine_searches_instead_of_playing_a_shallower_book_leaf() {
    use thorbook::book::book_moves;
    let book = thorbook::book::bundled().unwrap();
    // The first position on the book's lines (breadth first) whose best option is a
    // searched leaf, strictly better than every book move.
    let mut queue = std::collections::VecDeque::from([Position::START]);
    let (pos, leaf) = loop {
        let pos = queue.pop_front().expect("the bundled book has a position decided by its own leaf");
        let moves = book_moves(&book, &pos);
        if let [best, second, ..] = &moves[..] {
            if best.leaf && !best.exact && best.score > second.score && pos.board.empty_count() < 56 {
                break (pos, best.clone());
            }
        }
        for m in moves.iter().filter(|m| m.in_book) {
            queue.push_back(pos.try_play(m.mv).unwrap());
        }
    };
    let engine_at = |depth: u32, time: Option<Duration>| {
        let search =
            with!(Settings::default(), depth: Some(depth), exact_at: Some(0), time: time, hash_mib: 4, threads: 1);
        Engine::new(with!(EngineConfig::default(), search: search, book: BookSource::Bundled)).unwrap()
    };
    let leaf_depth = u32::from(leaf.depth.expect("a leaf move has its depth"));
    let at_leaf = engine_at(leaf_depth, None).choose(&pos).unwrap();
    assert_eq!((at_leaf.source, at_leaf.mv), (MoveSource::Book, leaf.mv), "{}", pos.to_board_text());
    let deeper = engine_at(leaf_depth + 1, None).choose(&pos).unwrap();
    assert_eq!(deeper.source, MoveSource::Search, "{}", pos.to_board_text());
    assert_eq!(deeper.depth, leaf_depth + 1);
    let timed = engine_at(leaf_depth + 1, Some(Duration::from_millis(50))).choose(&pos).unwrap();
    assert_eq!(timed.source, MoveSource::Book);
}
