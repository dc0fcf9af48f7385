//! Statistics of a position from WTHOR archives: how often each move was played
//! there and how black fared after it, all 8 symmetries counted as one position.
//!
//! `cargo run --example position_stats -- f5d6c3 [WTH_2014.wtb …]` (no archives: the
//! bundled ones).

use std::path::PathBuf;

use thorbook::square::parse_move_sequence;
use thorbook::thor::{bundled_sources, expand_paths, GameFilter, LoadOptions, Source, ThorDatabase};
use thorbook::Position;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    run(&std::env::args().skip(1).collect::<Vec<_>>(), &mut std::io::stdout())
}

/// The example on its arguments, printing to `out` (the suite runs it this way and
/// checks what it prints).
pub fn run(args: &[String], out: &mut dyn std::io::Write) -> Result<(), Box<dyn std::error::Error>> {
    let moves = args.first().map_or("f5d6", String::as_str);
    let paths: Vec<PathBuf> = args.iter().skip(1).map(PathBuf::from).collect();
    let sources = if paths.is_empty() {
        bundled_sources()
    } else {
        expand_paths(&paths)?.iter().map(|p| Source::open(p)).collect::<Result<Vec<_>, _>>()?
    };
    // The index maps every position of every game (in canonical form) to its games.
    let db = ThorDatabase::load(&sources, LoadOptions::default().with_index(true))?;
    let pos = Position::START.play_sequence(&parse_move_sequence(moves)?)?;
    let stats = db.stats(&pos, &GameFilter::default());
    writeln!(
        out,
        "{moves}: {} games, black won {}, drew {}, lost {}",
        stats.games, stats.black_wins, stats.draws, stats.white_wins
    )?;
    writeln!(out, "{:<5} {:>6} {:>6} {:>9} {:>10}", "move", "games", "share", "black %", "avg black")?;
    for m in &stats.moves {
        writeln!(
            out,
            "{:<5} {:>6} {:>5.1}% {:>8.1}% {:>10.1}",
            m.mv,
            m.games,
            100.0 * m.share,
            100.0 * m.black_win_rate,
            m.average_black_discs
        )?;
    }
    Ok(())
}
