//! `thorbook review` and `engine::review::review_game` against independent truth: the
//! WTHOR record's theoretical score, `analyze` of the same position at the same
//! settings, and the exact values of consecutive positions (a move's exact value is
//! minus the next position's).

use thorbook::book::BookSource;
use thorbook::engine::review::{review_game, AnalysisStore, ValueSource};
use thorbook::engine::{Engine, EngineConfig};
use thorbook::search::{Level, Settings};
use thorbook::thor::{bundled_sources, LoadOptions, ThorDatabase};
use thorbook::Position;

use crate::util::thorbook;

fn engine(level: u8, exact_at: Option<u32>, book: bool) -> Engine {
    let mut search = Settings::default().with_level(Level::new(level).unwrap()).with_threads(1).with_hash_mib(16);
    if let Some(e) = exact_at {
        search = search.with_exact_at(e);
    }
    let mut config = EngineConfig::default();
    config.search = search;
    config.book = if book { BookSource::Bundled } else { BookSource::None };
    Engine::new(config).unwrap()
}

fn reaches_a_decision_at_24(moves: &[thorbook::square::Move]) -> bool {
    let mut pos = Position::START;
    for &mv in moves {
        if pos.board.empty_count() == 24 {
            return pos.board.legal_moves().count_ones() >= 2;
        }
        pos = pos.with_inferred_pass(mv).try_play(mv).unwrap();
    }
    false
}

/// A bundled WTHOR game reviewed exactly from its theoretical score's empties: the
/// exact value there is the record's theoretical score, exact values chain from one
/// decision to the next, and no exact move gains on the best.
#[test]
fn the_exact_value_at_the_theoretical_empties_is_the_records() {
    let db = ThorDatabase::load(&bundled_sources(), LoadOptions::default()).unwrap();
    // The first game (in file order) whose position at 24 empties is a decision.
    let game = db
        .games()
        .iter()
        .find(|g| g.depth == 24 && g.theoretical_discs().is_some() && reaches_a_decision_at_24(&g.moves_with_passes()))
        .unwrap();
    let mut e = engine(1, Some(24), false);
    let review = review_game(&mut e, &Position::START, &game.moves_with_passes(), None, &|_| {}).unwrap();
    assert!(!review.interrupted);
    let at24 = review.plies.iter().find(|p| p.empties == 24).unwrap();
    assert_eq!(at24.source, ValueSource::Exact);
    let black = 2 * i32::from(game.theoretical_discs().unwrap()) - 64;
    let want = if at24.side_to_move == thorbook::Color::Black { black } else { -black };
    assert_eq!(at24.value, want, "ply {}", at24.ply);
    let exact: Vec<_> = review.plies.iter().filter(|p| p.source == ValueSource::Exact).collect();
    assert!(exact.len() >= 15);
    for p in &exact {
        assert!(p.played_value <= p.value, "ply {}: played {} above best {}", p.ply, p.played_value, p.value);
        assert_eq!(p.loss, p.value - p.played_value);
    }
    for w in exact.windows(2) {
        // Consecutive decisions with nothing forced between them.
        if w[1].ply == w[0].ply + 1 {
            assert_eq!(w[1].value, -w[0].played_value, "plies {} and {}", w[0].ply, w[1].ply);
        }
    }
    if let Some(result) = review.black_result {
        assert_eq!(result, 2 * i32::from(game.black_discs().unwrap()) - 64);
    }
}

/// A searched decision's value is `analyze`'s best score for that position at the same
/// settings, whatever came before it in the game.
#[test]
fn a_searched_value_is_analyzes_at_the_same_settings() {
    let moves = thorbook::square::parse_move_sequence("f5d6c3d3c4f4f6g5e6c5f3b5b4e3g4f7").unwrap();
    let mut e = engine(4, None, false);
    let review = review_game(&mut e, &Position::START, &moves, None, &|_| {}).unwrap();
    assert!(review.plies.iter().all(|p| p.source == ValueSource::Search));
    let mut pos = Position::START;
    let mut fresh = engine(4, None, false);
    for (i, mv) in moves.iter().enumerate() {
        if let Some(r) = review.plies.iter().find(|p| p.ply == i + 1) {
            let a = fresh.analyze(&pos, None);
            assert_eq!(r.value, a.search.moves[0].score, "ply {}", r.ply);
            let played = a.search.moves.iter().find(|m| m.mv == *mv).unwrap();
            assert_eq!(r.played_value, played.score, "ply {}", r.ply);
            fresh.new_game();
        }
        pos = pos.try_play(*mv).unwrap();
    }
}

#[test]
fn the_book_covers_the_opening_and_says_where_the_game_left_it() {
    let moves = thorbook::square::parse_move_sequence("f5d6c3d3c4f4f6g5e6c5f3b5b4e3g4f7e7g6c6h3c2d8").unwrap();
    let mut e = engine(2, None, true);
    let review = review_game(&mut e, &Position::START, &moves, None, &|_| {}).unwrap();
    assert_eq!(review.plies[0].source, ValueSource::Book);
    let left = review.left_book_at.expect("this line leaves the bundled book");
    assert!(review.plies.iter().filter(|p| p.ply < left).all(|p| p.source == ValueSource::Book));
    // Independent of the review's code: the book's stored value of each position it
    // scored (negamax back-up: the value of the best option) is the value it gives.
    let book = thorbook::book::bundled().unwrap();
    let mut pos = Position::START;
    let mut checked = 0;
    for (i, mv) in moves.iter().enumerate() {
        if let Some(r) = review.plies.iter().find(|p| p.ply == i + 1 && p.source == ValueSource::Book) {
            assert_eq!(Some(r.value), book.probe(&pos.board).map(|h| h.value()), "ply {}", r.ply);
            checked += 1;
        }
        pos = pos.try_play(*mv).unwrap();
    }
    assert!(checked >= 15, "{checked} book plies");
}

#[test]
fn review_cli_prints_json_lines_and_names_an_illegal_ply() {
    let out = thorbook(&["review", "--moves", "f5d6c3d3", "--level", "2", "--no-book", "--json"]);
    let lines: Vec<serde_json::Value> = out.ok().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 5, "four decisions, then the summary");
    for (i, l) in lines[..4].iter().enumerate() {
        assert_eq!(l["ply"], i + 1);
        for key in ["empties", "side_to_move", "move", "value", "source", "trust", "best_move", "best_value", "loss"] {
            assert!(l.get(key).is_some(), "{key} missing in {l}");
        }
        assert_eq!(l["source"], "search");
    }
    assert_eq!(lines[4]["summary"]["decisions"], 4);

    let out = thorbook(&["review", "--moves", "f5d6c3c3", "--level", "1"]);
    assert_eq!(out.status, 1);
    assert!(out.stderr.contains("ply 4"), "{}", out.stderr);
    let out = thorbook(&["review", "--moves", "f5", "--player", "Tamenori"]);
    assert_eq!(out.status, 2, "a --game filter with --moves: {}", out.stderr);
    let out = thorbook(&["review", "--game", "0"]);
    assert_eq!(out.status, 1);
    assert!(out.stderr.contains("--game counts from 1"), "{}", out.stderr);
}

/// A ply is an index into the game as played, passes included, whether the record
/// writes them (GGF) or leaves them out (WTHOR).
#[test]
fn plies_count_the_passes_of_a_game() {
    let db = ThorDatabase::load(&bundled_sources(), LoadOptions::default()).unwrap();
    let game = db.games().iter().find(|g| g.passes() > 0 && g.moves_with_passes().len() < 62).unwrap();
    let played = game.moves_with_passes();
    let stored: Vec<_> = played.iter().copied().filter(|m| *m != thorbook::square::Move::Pass).collect();
    let mut e = engine(1, Some(8), false);
    let review = review_game(&mut e, &Position::START, &stored, None, &|_| {}).unwrap();
    assert!(!review.plies.is_empty());
    for p in &review.plies {
        assert_eq!(played[p.ply - 1], p.mv, "ply {}", p.ply);
        assert_eq!(
            p.empties as usize,
            60 - played[..p.ply - 1].iter().filter(|m| **m != thorbook::square::Move::Pass).count()
        );
    }
}

/// A store makes a second review search nothing and give the same plies; another game
/// through the same positions (here the same game turned by a symmetry) takes their
/// values from the store too; the values equal a review without a store.
#[test]
fn a_stored_review_searches_nothing_again_and_gives_the_same_values() {
    let moves = thorbook::square::parse_move_sequence("f5d6c3d3c4f4f6g5e6c5f3b5b4e3g4f7e7g6").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("reviews.jsonl");
    let mut e = engine(3, Some(10), false);
    let fresh = review_game(&mut e, &Position::START, &moves, None, &|_| {}).unwrap();
    let store = AnalysisStore::open(&path).unwrap();
    let first = review_game(&mut e, &Position::START, &moves, Some(&store), &|_| {}).unwrap();
    assert_eq!(first.plies, fresh.plies);
    assert_eq!((first.searched, first.from_store), (fresh.plies.len(), 0));
    drop(store);
    let store = AnalysisStore::open(&path).unwrap();
    assert_eq!(store.len(), fresh.plies.len());
    let again = review_game(&mut e, &Position::START, &moves, Some(&store), &|_| {}).unwrap();
    assert_eq!(again.plies, fresh.plies);
    assert_eq!((again.searched, again.from_store), (0, fresh.plies.len()));
    // The same game turned (d3 for f5 ...): every position is a stored one turned.
    let t = thorbook::Transform::ALL
        .into_iter()
        .find(|t| t.board(&Position::START.board) == Position::START.board && *t != thorbook::Transform::Identity)
        .unwrap();
    let turned: Vec<_> = moves.iter().map(|&m| t.apply_move(m)).collect();
    let other = review_game(&mut e, &Position::START, &turned, Some(&store), &|_| {}).unwrap();
    assert_eq!((other.searched, other.from_store), (0, fresh.plies.len()));
    for (a, b) in other.plies.iter().zip(&fresh.plies) {
        assert_eq!((a.value, a.played_value, a.loss, a.mv), (b.value, b.played_value, b.loss, t.apply_move(b.mv)));
    }
    // Other settings are other entries.
    let mut deeper = engine(4, Some(10), false);
    let d = review_game(&mut deeper, &Position::START, &moves, Some(&store), &|_| {}).unwrap();
    assert_eq!(d.from_store, 0);
}

/// `review --all`: a JSON line per game of the filter, each game's plies as `review
/// --game N` gives them; interrupted (here: its output cut in the middle of a line, as
/// a crash leaves it) and run again, it reviews only what is missing.
#[test]
fn review_all_writes_every_game_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("all.jsonl");
    let store = dir.path().join("store.jsonl");
    let (o, st) = (out.to_str().unwrap(), store.to_str().unwrap());
    let common = ["--tournament", "airplane", "--level", "1", "--exact-at", "12", "--no-book", "--store", st];
    let mut args = vec!["review", "--all", "-o", o, "--jobs", "2"];
    args.extend(common);
    thorbook(&args).ok();
    let lines =
        |text: &str| -> Vec<serde_json::Value> { text.lines().map(|l| serde_json::from_str(l).unwrap()).collect() };
    let whole = std::fs::read_to_string(&out).unwrap();
    let all = lines(&whole);
    let listed =
        thorbook(&["thor", "games", "--tournament", "airplane", "--json", "--limit", "0"]).ok().lines().count();
    assert_eq!((all.len(), listed), (8, 8));
    let mut numbers: Vec<u64> = all.iter().map(|l| l["number"].as_u64().unwrap()).collect();
    numbers.sort();
    assert_eq!(numbers, (1..=8).collect::<Vec<u64>>());
    // Game 3 as `review --game 3` reviews it.
    let third = all.iter().find(|l| l["number"] == 3).unwrap();
    let mut one = vec!["review", "--game", "3", "--json"];
    one.extend(common);
    let single = lines(thorbook(&one).ok());
    assert_eq!(serde_json::Value::from(single[..single.len() - 1].to_vec()), third["plies"]);
    assert_eq!(single.last().unwrap()["summary"]["game"], third["summary"]["game"]);
    // Three whole lines and half of the fourth: the rest is reviewed, nothing twice.
    let cut: usize =
        whole.lines().take(3).map(|l| l.len() + 1).sum::<usize>() + whole.lines().nth(3).unwrap().len() / 2;
    std::fs::write(&out, &whole[..cut]).unwrap();
    let resumed = thorbook(&args);
    assert!(resumed.stderr.contains("3 games reviewed already, 5 to go"), "{}", resumed.stderr);
    let again = lines(&std::fs::read_to_string(&out).unwrap());
    assert_eq!(again.len(), 8);
    let key = |l: &serde_json::Value| {
        (l["game"]["file"].to_string(), l["game"]["record"].as_u64().unwrap(), l["plies"].clone())
    };
    let mut a: Vec<_> = all.iter().map(key).collect();
    let mut b: Vec<_> = again.iter().map(key).collect();
    a.sort_by(|x, y| (&x.0, x.1).cmp(&(&y.0, y.1)));
    b.sort_by(|x, y| (&x.0, x.1).cmp(&(&y.0, y.1)));
    assert_eq!(a, b);
    // The resumed games came from the store: nothing was searched again.
    assert!(again[3..].iter().all(|l| l["summary"]["searched"] == 0), "{:?}", again[3]["summary"]);
    // Not a review file: an error naming the line, the file left alone.
    std::fs::write(&out, "{\"something\": 1}\n").unwrap();
    assert!(thorbook(&args).fails().contains("line 1"));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "{\"something\": 1}\n");
}

#[test]
fn review_svg_draws_a_point_per_decision() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("game.svg");
    let out = thorbook(&[
        "review",
        "--moves",
        "f5d6c3d3c4f4f6g5e6c5f3b5",
        "--level",
        "2",
        "--json",
        "--no-store",
        "--svg",
        svg.to_str().unwrap(),
    ]);
    let decisions = out.ok().lines().count() - 1;
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg") && text.trim_end().ends_with("</svg>"));
    assert_eq!(text.matches("class=\"ply\"").count(), decisions);
}
