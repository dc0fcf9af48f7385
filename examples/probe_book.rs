//! Probing an opening book: the book's moves in a position with their values, and the
//! line the book plays from there.
//!
//! `cargo run --example probe_book -- f5d6 [book.tbk]` (no book: the bundled one).

use thorbook::book::query::{book_line, book_moves};
use thorbook::book::{self, Book};
use thorbook::fileio::read_mapped;
use thorbook::square::{format_moves, parse_move_sequence};
use thorbook::Position;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    run(&std::env::args().skip(1).collect::<Vec<_>>())
}

/// The example on its arguments (the suite runs it this way).
pub fn run(args: &[String]) -> Result<(), Box<dyn std::error::Error>> {
    let moves = args.first().map_or("", String::as_str);
    let pos = Position::START.play_sequence(&parse_move_sequence(moves)?)?;
    match args.get(1) {
        // A book file is memory-mapped and checked once; probes then read it in place.
        Some(path) => show(&Book::open_verified(read_mapped(path.as_ref())?)?, &pos),
        None => show(&book::bundled()?, &pos),
    }
    Ok(())
}

fn show<D: AsRef<[u8]>>(book: &Book<D>, pos: &Position) {
    let moves = book_moves(book, pos);
    if moves.is_empty() {
        println!("not a book position");
        return;
    }
    for m in &moves {
        let kind = if m.in_book { format!("book, {} games", m.games) } else { format!("leaf, depth {}", m.depth) };
        println!("{:<4} {:+3}  {kind}", m.mv.to_string(), m.score);
    }
    println!("book line: {}", format_moves(&book_line(book, pos, 60)));
}
