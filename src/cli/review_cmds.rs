//! `thorbook review`: a game's decisions scored against the book, a search or the
//! exact solver ([`crate::engine::review`]), as a table or JSON lines.

use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use super::engine_cmds::EngineArgs;
use super::progress::Meter;
use super::thor_cmds::{ArchiveArgs, GameFieldArgs};
use crate::engine::review::{review_game, GameReview, ValueSource};
use crate::engine::{Engine, EngineConfig};
use crate::position::Position;
use crate::square::{parse_move_sequence, Move};
use crate::thor::SortKey;

/// Arguments of `thorbook review`.
#[derive(Args, Debug)]
pub struct ReviewArgs {
    /// The game's moves from the start position (`f5d6c3…`; passes may be left out).
    #[arg(long, conflicts_with = "game", required_unless_present = "game")]
    pub moves: Option<String>,
    /// The N-th game (from 1) that `thorbook thor games` lists for the same archives
    /// and filters (sorted by year).
    #[arg(long, value_name = "N")]
    pub game: Option<usize>,
    #[command(flatten)]
    pub archives: ArchiveArgs,
    /// With --game: which games are counted.
    #[command(flatten)]
    pub games: GameFieldArgs,
    /// The engine: book, level (its exact threshold decides which positions are
    /// solved; `--exact-at E` solves from E empties), threads, table.
    #[command(flatten)]
    pub engine: EngineArgs,
    /// JSON lines: one object per decision, then one summary object.
    #[arg(long)]
    pub json: bool,
}

/// A game to review: its moves and, from an archive, what the record says.
struct Reviewed {
    moves: Vec<Move>,
    title: Option<String>,
    /// The record's theoretical score: black's discs at `depth` empties.
    theoretical: Option<(u8, u8)>,
}

impl ReviewArgs {
    fn game(&self) -> anyhow::Result<Reviewed> {
        if let Some(text) = &self.moves {
            if self.games.is_set() || !self.archives.paths.is_empty() {
                return Err(super::flags::usage(
                    "--player, --as, --tournament, --years and archives choose a game for --game, not for --moves",
                ));
            }
            let moves = parse_move_sequence(text).map_err(|e| anyhow::anyhow!("--moves: {e}"))?;
            return Ok(Reviewed { moves, title: None, theoretical: None });
        }
        let n = self.game.context("give --moves SEQ or --game N")?;
        anyhow::ensure!(n >= 1, "--game counts from 1, got 0");
        let db = self.archives.load(false)?;
        let filter = self.games.filter(None);
        let mut ids = db.select(&filter);
        db.sort_games(&mut ids, SortKey::Year);
        let id = *ids.get(n - 1).with_context(|| format!("--game {n}: only {} games match", ids.len()))?;
        let g = db.game(id);
        let title = format!(
            "{} {}: {} (black) - {} (white), {}",
            g.year,
            db.tournament_name(g),
            db.black_name(g),
            db.white_name(g),
            g.black_discs().map_or("no result".to_string(), |b| format!("{b}-{}", 64 - b))
        );
        let theoretical = g.theoretical_discs().map(|t| (t, g.depth));
        Ok(Reviewed { moves: g.moves_with_passes(), title: Some(title), theoretical })
    }
}

pub(super) fn review(args: ReviewArgs) -> anyhow::Result<ExitCode> {
    let game = args.game()?;
    let mut engine = Engine::new(EngineConfig::try_from(&args.engine)?)?;
    super::search_cmds::stop_on_ctrl_c(&engine)?;
    let meter = Meter::new("review", "moves");
    let review = review_game(&mut engine, &Position::START, &game.moves, &|done, total| {
        meter.update(done as u64, total as u64)
    })?;
    meter.finish();
    if args.json {
        for p in &review.plies {
            outln!("{}", serde_json::to_string(p)?);
        }
        outln!("{}", serde_json::to_string(&serde_json::json!({ "summary": summary_json(&review, &game) }))?);
    } else {
        print_table(&review, &game)?;
    }
    if review.interrupted {
        eprintln!("interrupted: the decisions reviewed until then are shown");
        return Ok(ExitCode::from(130));
    }
    Ok(ExitCode::SUCCESS)
}

fn summary_json(r: &GameReview, game: &Reviewed) -> serde_json::Value {
    serde_json::json!({
        "decisions": r.plies.len(),
        "black": r.black,
        "white": r.white,
        "worst": r.worst,
        "left_book_at": r.left_book_at,
        "black_result": r.black_result,
        "game": game.title,
        "theoretical_black_discs": game.theoretical.map(|t| t.0),
        "theoretical_empties": game.theoretical.map(|t| t.1),
        "interrupted": r.interrupted,
    })
}

fn print_table(r: &GameReview, game: &Reviewed) -> std::io::Result<()> {
    if let Some(title) = &game.title {
        outln!("{title}");
    }
    outln!(
        "{:>4} {:>3} {:<5} {:<4} {:>6} {:<6} {:<8} {:<4} {:>5}",
        "ply",
        "emp",
        "side",
        "move",
        "value",
        "source",
        "trust",
        "best",
        "loss"
    );
    let mut source = None;
    for p in &r.plies {
        if source.is_some_and(|s| s != p.source) {
            let what = match p.source {
                ValueSource::Book => "back in the book",
                ValueSource::Search => "out of the book: searched",
                ValueSource::Exact => "solved exactly from here",
            };
            outln!("     -- {what}");
        }
        source = Some(p.source);
        let best = if p.loss > 0 { p.best_move.to_string() } else { String::new() };
        let loss = if p.loss > 0 { format!("-{}", p.loss) } else { String::new() };
        outln!(
            "{:>4} {:>3} {:<5} {:<4} {:>+6} {:<6} {:<8} {:<4} {:>5}",
            p.ply,
            p.empties,
            p.side_to_move.to_string(),
            p.mv.to_string(),
            p.value,
            p.source.to_string(),
            p.trust.to_string(),
            best,
            loss
        );
    }
    for (name, s) in [("black", &r.black), ("white", &r.white)] {
        outln!(
            "{name}: {} moves, {} best ({:.1}%), {} discs lost ({:.2} a move)",
            s.moves,
            s.best_moves,
            s.accuracy,
            s.discs_lost,
            s.average_loss
        );
    }
    if let Some(ply) = r.left_book_at {
        outln!("left the book at ply {ply}");
    }
    if !r.worst.is_empty() {
        let worst: Vec<String> = r
            .worst
            .iter()
            .filter_map(|&ply| r.plies.iter().find(|p| p.ply == ply))
            .map(|p| format!("{} {} {} (-{}, {} was best)", p.ply, p.side_to_move, p.mv, p.loss, p.best_move))
            .collect();
        outln!("worst: {}", worst.join("; "));
    }
    if let Some(result) = r.black_result {
        outln!("result: {result:+} for black");
    }
    if let Some((discs, empties)) = game.theoretical {
        outln!("theoretical: {:+} for black at {empties} empties (the record)", 2 * i32::from(discs) - 64);
    }
    Ok(())
}
