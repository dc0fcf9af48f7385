//! Building a small opening book with `Builder`: positions of the first plies of the
//! bundled archives' games, leaves searched at a low depth, values backed up by
//! negamax, written atomically, then opened and probed.
//!
//! `cargo run --release --example small_book -- [OUT.tbk]`.

use thorbook::book::book_moves;
use thorbook::book::BuildConfig;
use thorbook::book::GameLine;
use thorbook::book::{Book, BuildEvent, Builder};
use thorbook::search::Settings;
use thorbook::thor::{bundled_sources, LoadOptions, ThorDatabase};
use thorbook::Position;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    run(&std::env::args().skip(1).collect::<Vec<_>>(), &mut std::io::stdout())
}

/// The example on its arguments, printing to `out` (the suite runs it this way and
/// checks what it prints).
pub fn run(args: &[String], out: &mut dyn std::io::Write) -> Result<(), Box<dyn std::error::Error>> {
    let path = args.first().cloned().unwrap_or_else(|| std::env::temp_dir().join("small.tbk").display().to_string());
    let db = ThorDatabase::load(&bundled_sources(), LoadOptions::default())?;
    let games: Vec<GameLine> = db.games().iter().map(GameLine::from).collect();
    // Configurations are `#[non_exhaustive]`: start from the default and set fields.
    let mut config = BuildConfig::default();
    config.max_ply = 8;
    config.min_games = 2;
    config.search = Settings::default().with_depth(4).with_exact_at(0).with_hash_mib(4).with_threads(2);
    let summary = Builder::new(config, &path).run(&games, &|event| {
        if let BuildEvent::Collected { positions, .. } = event {
            eprintln!("{positions} positions to score");
        }
    })?;
    writeln!(out, "{path}: {} positions from {} games, {} bytes", summary.positions, summary.games, summary.size)?;
    let book = Book::open_verified(std::fs::read(&path)?)?;
    let best = &book_moves(&book, &Position::START)[0];
    writeln!(out, "best first move: {} ({:+})", best.mv, best.score)?;
    Ok(())
}
