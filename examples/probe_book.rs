//! Probing an opening book: the book's moves in a position with their values, and the
//! line the book plays from there.
//!
//! `cargo run --example probe_book -- f5d6 [book.tbk]` (no book: the bundled one).

use thorbook::book::{self, Book};
use thorbook::book::{book_line, book_moves};
use thorbook::fileio::read_mapped;
use thorbook::square::{format_moves, parse_move_sequence};
use thorbook::Position;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    run(&std::env::args().skip(1).collect::<Vec<_>>(), &mut std::io::stdout())
}

/// The example on its arguments, printing to `out` (the suite runs it this way and
/// checks what it prints).
pub fn run(args: &[String], out: &mut dyn std::io::Write) -> Result<(), Box<dyn std::error::Error>> {
    let moves = args.first().map_or("", String::as_str);
    let pos = Position::START.play_sequence(&parse_move_sequence(moves)?)?;
    match args.get(1) {
        // A book file is memory-mapped and checked once; probes then read it in place.
        Some(path) => show(&Book::open_verified(read_mapped(path.as_ref())?)?, &pos, out)?,
        None => show(&book::bundled()?, &pos, out)?,
    }
    Ok(())
}

fn show<D: AsRef<[u8]>>(book: &Book<D>, pos: &Position, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let moves = book_moves(book, pos);
    if moves.is_empty() {
        return writeln!(out, "not a book position");
    }
    for m in &moves {
        let kind = if m.in_book {
            format!("book, {} games", m.games)
        } else {
            format!("leaf, depth {}", m.depth.unwrap_or(m.trust.leaf_depth))
        };
        writeln!(out, "{:<4} {:+3}  {kind}", m.mv.to_string(), m.score)?;
    }
    writeln!(out, "book line: {}", format_moves(&book_line(book, pos, 60)))
}
