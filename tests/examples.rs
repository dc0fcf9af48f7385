//! The programs in `examples/`, run on real data as a user would run them: each
//! example's `run` is compiled into the suite from the example's own file.

#[allow(dead_code)]
#[path = "../examples/play_game.rs"]
mod play_game;
#[allow(dead_code)]
#[path = "../examples/position_stats.rs"]
mod position_stats;
#[allow(dead_code)]
#[path = "../examples/probe_book.rs"]
mod probe_book;
#[allow(dead_code)]
#[path = "../examples/small_book.rs"]
mod small_book;

use thorbook::book::query::book_moves;
use thorbook::book::Book;
use thorbook::Position;

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn the_position_statistics_example_reads_the_bundled_archives_and_refuses_bad_moves() {
    position_stats::run(&args(&["f5d6c3"])).unwrap();
    assert!(position_stats::run(&args(&["f5f5"])).is_err());
    assert!(position_stats::run(&args(&["f5", "/no/such/WTH_1999.wtb"])).is_err());
}

#[test]
fn the_book_probing_example_probes_the_bundled_book_and_a_file() {
    probe_book::run(&args(&["f5d6"])).unwrap();
    assert!(probe_book::run(&args(&["", "/no/such/book.tbk"])).is_err());
}

#[test]
fn the_game_example_plays_a_whole_game() {
    play_game::run(&args(&["2"])).unwrap();
    assert!(play_game::run(&args(&["15"])).is_err());
}

#[test]
fn the_small_book_example_writes_a_book_that_opens_and_answers() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("small.tbk");
    small_book::run(&args(&[out.to_str().unwrap()])).unwrap();
    let book = Book::open_verified(std::fs::read(&out).unwrap()).unwrap();
    assert!(book.len() > 500, "{}", book.len());
    assert_eq!(book_moves(&book, &Position::START).len(), 4);
}
