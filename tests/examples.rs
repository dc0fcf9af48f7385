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

use thorbook::book::book_moves;
use thorbook::book::Book;
use thorbook::Position;

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// An example's `run`: its arguments, where it prints.
type Example = fn(&[String], &mut dyn std::io::Write) -> Result<(), Box<dyn std::error::Error>>;

/// What an example prints given `list`, or its error.
fn printed(run: Example, list: &[&str]) -> Result<String, String> {
    let mut out = Vec::new();
    run(&args(list), &mut out).map_err(|e| e.to_string())?;
    Ok(String::from_utf8(out).unwrap())
}

#[test]
fn the_position_statistics_example_reads_the_bundled_archives_and_refuses_bad_moves() {
    use thorbook::thor::{bundled_sources, GameFilter, LoadOptions, ThorDatabase};
    let text = printed(position_stats::run, &["f5d6c3"]).unwrap();
    // Its counts are the database's for the position, reached from the games directly.
    let db = ThorDatabase::load(&bundled_sources(), with!(LoadOptions::default(), strict: true, index: true)).unwrap();
    let reached = db
        .games()
        .iter()
        .filter(|g| g.moves_with_passes().iter().take(3).map(|m| m.to_string()).collect::<String>() == "f5d6c3")
        .count();
    let first = text.lines().next().unwrap();
    assert!(first.starts_with(&format!("f5d6c3: {reached} games, black won ")), "{first}");
    let stats = db.stats(&Position::from_moves("f5d6c3").unwrap(), &GameFilter::default());
    // One line a move the games played after it, most played first.
    assert_eq!(text.lines().count(), 2 + stats.moves.len(), "{text}");
    assert!(text.lines().nth(2).unwrap().starts_with(&stats.moves[0].mv.to_string()));
    assert!(printed(position_stats::run, &["f5f5"]).is_err());
    assert!(printed(position_stats::run, &["f5", "/no/such/WTH_1999.wtb"]).is_err());
}

#[test]
fn the_book_probing_example_probes_the_bundled_book_and_a_file() {
    let text = printed(probe_book::run, &["f5d6"]).unwrap();
    let book = thorbook::book::bundled().unwrap();
    let pos = Position::from_moves("f5d6").unwrap();
    let moves = book_moves(&book, &pos);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), moves.len() + 1, "{text}");
    for (line, m) in lines.iter().zip(&moves) {
        assert!(line.starts_with(&format!("{:<4} {:+3}", m.mv.to_string(), m.score)), "{line}");
    }
    let line = thorbook::square::format_moves(&thorbook::book::book_line(&book, &pos, 60));
    assert_eq!(lines.last().unwrap(), &format!("book line: {line}"));
    assert!(printed(probe_book::run, &["a1"]).err().unwrap().contains("a1"));
    assert!(printed(probe_book::run, &["", "/no/such/book.tbk"]).is_err());
}

#[test]
fn the_game_example_plays_a_whole_game() {
    let text = printed(play_game::run, &["2"]).unwrap();
    // The moves printed replay to a finished game whose result is the last line.
    let mut game = thorbook::engine::Game::default();
    let lines: Vec<&str> = text.lines().collect();
    for line in &lines[..lines.len() - 1] {
        let mv: thorbook::square::Move = line.split_whitespace().nth(2).unwrap().parse().unwrap();
        game.play(mv).unwrap();
    }
    assert!(game.is_over(), "{text}");
    assert_eq!(*lines.last().unwrap(), game.result_text());
    assert!(printed(play_game::run, &["15"]).is_err());
}

#[test]
fn the_small_book_example_writes_a_book_that_opens_and_answers() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("small.tbk");
    let text = printed(small_book::run, &[out.to_str().unwrap()]).unwrap();
    let book = Book::open_verified(std::fs::read(&out).unwrap()).unwrap();
    assert!(book.len() > 500, "{}", book.len());
    let moves = book_moves(&book, &Position::START);
    assert_eq!(moves.len(), 4);
    let bytes = std::fs::metadata(&out).unwrap().len();
    assert!(text.contains(&format!(": {} positions from ", book.len())) && text.contains(&format!(", {bytes} bytes")));
    assert!(text.ends_with(&format!("best first move: {} ({:+})\n", moves[0].mv, moves[0].score)), "{text}");
}
