//! Playing a game through `Engine`: the bundled book first, then a search at a level,
//! for both sides, move by move.
//!
//! `cargo run --release --example play_game -- [LEVEL]` (default 4).

use thorbook::engine::Game;
use thorbook::engine::{Engine, EngineConfig, MoveSource};
use thorbook::search::{Level, Settings};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    run(&std::env::args().skip(1).collect::<Vec<_>>(), &mut std::io::stdout())
}

/// The example on its arguments, printing to `out` (the suite runs it this way and
/// checks what it prints).
pub fn run(args: &[String], out: &mut dyn std::io::Write) -> Result<(), Box<dyn std::error::Error>> {
    let level: u8 = args.first().map_or(Ok(4), |a| a.parse())?;
    let mut config = EngineConfig::default();
    config.search = Settings::at_level(Level::new(level)?);
    // `new` validates the settings and allocates the table: errors, never panics.
    let mut engine = Engine::new(config)?;
    let mut game = Game::default();
    while !game.is_over() {
        let pos = game.position();
        let chosen = engine.choose(&pos)?;
        let how = match chosen.source {
            MoveSource::Book => "book".to_string(),
            MoveSource::Forced => "forced".to_string(),
            MoveSource::Search => format!("depth {}, {} nodes", chosen.depth, chosen.nodes),
        };
        writeln!(out, "{:>2}. {} {} {:+} ({how})", game.moves().len() + 1, pos.side, chosen.mv, chosen.score)?;
        game.play(chosen.mv)?;
    }
    writeln!(out, "{}", game.result_text())?;
    Ok(())
}
