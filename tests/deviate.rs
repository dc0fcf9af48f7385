//! Book deviation: growth stays reachable and negamax-consistent, is the same with 1
//! and 2 threads, survives being killed and resumed, and stops where its bounds say.

use std::path::Path;

use thorbook::board::Board;
use thorbook::book::Book;
use thorbook::book::{BuildConfig, GameLine};
use thorbook::book::{Grower, GrowthConfig, GrowthError, GrowthEvent, GrowthInput, StopReason};
use thorbook::search::Settings;
use thorbook::testutil::walk;
use thorbook::thor::{bundled_sources, LoadOptions, ThorDatabase};

use crate::util::{build_book_bytes, thorbook};

fn search(depth: u32) -> BuildConfig {
    with!(
        BuildConfig::default(),
        max_ply: 8,
        min_games: 2,
        search: with!(Settings::default(), depth: Some(depth), exact_at: Some(0), hash_mib: 1),
    )
}

fn small_book() -> Vec<u8> {
    let db = ThorDatabase::load(&bundled_sources(), with!(LoadOptions::default(), strict: true, index: false)).unwrap();
    let games: Vec<GameLine> = db.games().iter().take(400).map(GameLine::from).collect();
    let cfg = search(2);
    build_book_bytes(&games, &cfg)
}

fn config(max_positions: Option<usize>) -> GrowthConfig {
    with!(
        GrowthConfig::default(),
        error: 2,
        budget: 4,
        contempt: 0,
        max_positions: max_positions,
        time: None,
        max_ply: 12,
        search: search(2).search,
        growth: Default::default(),
    )
}

fn run(input: &Book<&[u8]>, mut cfg: GrowthConfig, out: &Path, threads: usize) -> thorbook::book::GrowthSummary {
    cfg.search.threads = threads;
    Grower::new(cfg, Board::START, out).run(input, &|_| {}).unwrap()
}

/// Every position's value is the best of its leaf and its book children.
fn assert_negamax_consistent(book: &Book<Vec<u8>>) {
    let boards = walk(book);
    for (key, board) in &boards {
        let r = book.get(*key).unwrap();
        // The leaf's score where a move leaves the book or the game is over.
        let mut best = (r.leaf().is_some() || board.is_game_over()).then_some(i32::from(r.leaf_score));
        for (_, child) in board.successors() {
            if let Some(c) = book.get(child.canonical().0.key()) {
                best = Some(best.map_or(-(c.value as i32), |b: i32| b.max(-(c.value as i32))));
            }
        }
        assert_eq!(Some(r.value as i32), best, "{board:?}");
        // A leaf never leads into the book: it is the best move leaving it.
        if let Some(thorbook::Move::Place(sq)) = r.leaf() {
            assert!(book.get(board.play(sq).unwrap().canonical().0.key()).is_none(), "leaf into the book at {board:?}");
        }
    }
}

#[test]
fn deviation_grows_a_reachable_consistent_book_the_same_on_any_thread_count() {
    let bytes = small_book();
    let input = Book::open_verified(&bytes[..]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (one, two) = (dir.path().join("one.tbk"), dir.path().join("two.tbk"));
    let a = run(&input, config(None), &one, 1);
    run(&input, config(None), &two, 2);
    assert_eq!(a.stop, StopReason::Complete);
    assert!(a.after > a.before + 20, "{} -> {}", a.before, a.after);
    let a_bytes = std::fs::read(&one).unwrap();
    assert_eq!(a_bytes, std::fs::read(&two).unwrap(), "1 and 2 threads grow the same book");
    assert_eq!(a.written.bytes, a_bytes.len() as u64);
    assert!(!dir.path().join("one.tbk.deviate").exists(), "a complete run leaves no state behind");

    let grown = Book::open_verified(a_bytes.clone()).unwrap();
    // Every original position is kept, with its counts; every position is reachable.
    for r in input.records() {
        let g = grown.get(r.key).unwrap();
        assert_eq!((g.games, g.wins, g.draws), (r.games, r.wins, r.draws));
    }
    assert_eq!(walk(&grown).len(), grown.len(), "every position is reachable from the start");
    assert_negamax_consistent(&grown);
    // New positions come from no game and respect the ply limit.
    for (key, board) in walk(&grown) {
        if input.get(key).is_none() {
            assert_eq!(grown.get(key).unwrap().games, 0);
            assert!(60 - board.empty_count() <= config(None).max_ply + 1);
        }
    }
    // A fixpoint: deviating the grown book again with the same bounds adds nothing.
    let again_path = dir.path().join("again.tbk");
    let grown_ref = Book::open_verified(&a_bytes[..]).unwrap();
    let again = run(&grown_ref, config(None), &again_path, 2);
    assert_eq!(again.after, again.before, "nothing inside the bounds is left to expand");
    // Wider bounds grow more.
    let wide = run(&input, with!(config(None), error: 4, budget: 8), &dir.path().join("w.tbk"), 2);
    assert!(wide.after > a.after, "{} vs {}", wide.after, a.after);
    // The position budget is honoured exactly.
    let capped = run(&input, config(Some(7)), &dir.path().join("c.tbk"), 2);
    assert_eq!((capped.after - capped.before, capped.stop), (7, StopReason::Positions));
    // The leaves added were searched at the deviation's depth.
    assert!(grown
        .records()
        .filter(|r| input.get(r.key).is_none())
        .all(|r| r.leaf().is_none() || r.leaf_exact() || r.leaf_depth == 2));
}

#[test]
fn a_killed_deviation_resumes_to_the_identical_book() {
    let bytes = small_book();
    let input = Book::open_verified(&bytes[..]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let whole = run(&input, config(Some(600)), &dir.path().join("whole.tbk"), 2);
    let whole_bytes = std::fs::read(dir.path().join("whole.tbk")).unwrap();
    assert!(whole.rounds >= 2, "the run needs several rounds for this test ({} rounds)", whole.rounds);

    let out = dir.path().join("killed.tbk");
    // "Kill" the run once its first batch is written.
    let killed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        Grower::new(config(Some(600)), Board::START, &out).run(&input, &|e| {
            if let GrowthEvent::Written { .. } = e {
                panic!("killed");
            }
        })
    }));
    assert!(killed.is_err());
    let partial = Book::open_verified(std::fs::read(&out).unwrap()).unwrap();
    assert!(partial.len() > input.len() && partial.len() < whole.after);
    // Resume: the same book as the uninterrupted run.
    let resumed = Grower::new(config(Some(600)), Board::START, &out).resume(true).run(&input, &|_| {}).unwrap();
    assert_eq!(resumed.written, whole.written);
    assert_eq!(std::fs::read(&out).unwrap(), whole_bytes);

    // Resuming with other settings is refused, the partial book left alone.
    let out2 = dir.path().join("other.tbk");
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        Grower::new(config(Some(600)), Board::START, &out2).run(&input, &|e| {
            if let GrowthEvent::Written { .. } = e {
                panic!("killed");
            }
        })
    }));
    let before = std::fs::read(&out2).unwrap();
    let err = Grower::new(with!(config(Some(600)), error: 3), Board::START, &out2)
        .resume(true)
        .run(&input, &|_| {})
        .expect_err("other settings are refused");
    match &err {
        GrowthError::Resume { path, field: GrowthInput::Limits } => assert!(path.ends_with("other.tbk.deviate")),
        _ => panic!("{err}"),
    }
    assert_eq!(std::fs::read(&out2).unwrap(), before);
}

/// A stop flag set after the first round's book is written stops the growth before
/// the next round (`StopReason::Interrupted`) with that book in place; resumed, it
/// ends as the uninterrupted run.
#[test]
fn a_stopped_deviation_keeps_its_rounds_and_resumes_to_the_identical_book() {
    let bytes = small_book();
    let input = Book::open_verified(&bytes[..]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let whole = run(&input, config(Some(600)), &dir.path().join("whole.tbk"), 2);
    assert!(whole.rounds >= 2, "the run needs several rounds for this test ({} rounds)", whole.rounds);
    let out = dir.path().join("stopped.tbk");
    let stop = thorbook::work::StopHandle::new();
    let stopped = Grower::new(config(Some(600)), Board::START, &out)
        .stop_on(stop.clone())
        .run(&input, &|e| {
            if let GrowthEvent::Written { .. } = e {
                stop.stop();
            }
        })
        .unwrap();
    assert_eq!((stopped.stop, stopped.rounds), (StopReason::Interrupted, 1));
    let partial = Book::open_verified(std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(partial.len(), stopped.after);
    assert!(partial.len() > input.len() && partial.len() < whole.after);
    let resumed = Grower::new(config(Some(600)), Board::START, &out).resume(true).run(&input, &|_| {}).unwrap();
    assert_eq!(resumed.written, whole.written);
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(dir.path().join("whole.tbk")).unwrap());
}

#[test]
fn deviate_through_the_binary() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("d.tbk");
    let o = out.to_str().unwrap();
    let err = thorbook(&["book", "deviate", "--error=-1", "--budget", "4", "-o", o]).fails().to_string();
    assert!(err.contains("--error must be from 0 to 64"), "{err}");
    let err =
        thorbook(&["book", "deviate", "--error", "2", "--budget", "4", "--from", "a1", "-o", o]).fails().to_string();
    assert!(err.contains("--from"), "{err}");
    // Beyond 10 σ used to be accepted and searched full width without a word.
    let err = thorbook(&["book", "deviate", "--error", "2", "--budget", "4", "--selectivity", "15", "-o", o])
        .fails()
        .to_string();
    assert!(
        err.contains("--selectivity must be 0 (full width) or from 0.1 to 10 standard deviations, got 15"),
        "{err}"
    );
    let run = thorbook(&[
        "book",
        "deviate",
        "--error",
        "1",
        "--budget",
        "2",
        "--depth",
        "2",
        "--max-positions",
        "30",
        "--from",
        "f5d6",
        "-o",
        o,
    ]);
    run.ok();
    let msg = &run.stderr;
    assert!(msg.contains("(+30,") && msg.contains("stopped: Positions"), "{msg}");
    let book = Book::open_verified(std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(book.len(), thorbook::book::bundled().unwrap().len() + 30);
}

/// `book deepen`: the leaves inside the bounds are searched again at the level asked
/// (and only they: the others keep their records), the positions stay the same, the
/// book stays negamax-consistent, and the result is the same on 1 and 2 threads.
#[test]
fn deepening_raises_the_leaves_inside_the_bounds_and_keeps_the_book_consistent() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = small_book();
    let input = Book::open_verified(&bytes[..]).unwrap();
    let deepen = with!(config(None), search: search(5).search, growth: thorbook::book::Growth::Deepen, max_ply: 60);
    let a = run(&input, deepen.clone(), &dir.path().join("a.tbk"), 1);
    run(&input, deepen.clone(), &dir.path().join("b.tbk"), 2);
    let a_bytes = std::fs::read(dir.path().join("a.tbk")).unwrap();
    assert!(a_bytes == std::fs::read(dir.path().join("b.tbk")).unwrap(), "deepening depends on the thread count");
    assert_eq!(a.stop, StopReason::Complete);
    assert_eq!(a.after, a.before, "deepening adds no position");
    let out = Book::open_verified(a_bytes.clone()).unwrap();
    assert_negamax_consistent(&out);
    let (mut raised, mut kept) = (0, 0);
    for r in input.records() {
        let now = out.get(r.key).unwrap();
        assert_eq!((now.games, now.wins, now.draws), (r.games, r.wins, r.draws));
        if now.leaf_depth != r.leaf_depth || now.leaf_exact() != r.leaf_exact() {
            assert!(now.leaf_exact() || now.leaf_depth == 5, "{now:?}");
            raised += 1;
        } else {
            kept += 1;
        }
    }
    assert!(raised as u64 == a.searches && raised >= 5 && kept > raised, "{raised} raised, {kept} kept");
    // A wider error bound reaches more leaves; deepening again finds nothing to do.
    let wide = run(&input, with!(deepen.clone(), error: 6, budget: 12), &dir.path().join("w.tbk"), 2);
    assert!(wide.searches > a.searches);
    let again = run(&out_book(&a_bytes), deepen, &dir.path().join("again.tbk"), 2);
    assert_eq!((again.searches, again.stop), (0, StopReason::Complete));
}

fn out_book(bytes: &[u8]) -> Book<&[u8]> {
    Book::open_verified(bytes).unwrap()
}
