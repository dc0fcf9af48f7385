//! `perft` and `show`.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use clap::Args;
use serde::Serialize;

use super::PositionArgs;
use crate::board::Squares;
use crate::perft;

/// The deepest perft asked for: beyond it a count takes years.
const MAX_PERFT_DEPTH: u32 = 20;

/// Arguments of `thorbook perft`.
#[derive(Args, Debug)]
pub struct PerftArgs {
    /// Depth in plies (a pass is a ply).
    pub depth: u32,
    #[command(flatten)]
    pub position: PositionArgs,
    /// Worker threads (1 = on the calling thread, no pool).
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Print every depth from 1 up to DEPTH.
    #[arg(long)]
    pub divide_depths: bool,
}

/// Arguments of `thorbook show`.
#[derive(Args, Debug)]
pub struct ShowArgs {
    #[command(flatten)]
    pub position: PositionArgs,
    /// Print JSON instead of a diagram.
    #[arg(long)]
    pub json: bool,
    /// Also write an SVG diagram here (atomically): coordinates, last move, and the
    /// legal moves, or with --book-values the book's values on its moves.
    #[arg(long)]
    pub svg: Option<std::path::PathBuf>,
    /// Mark the book's values (default book, or --book FILE) instead of the legal moves.
    #[arg(long, requires = "svg")]
    pub book_values: bool,
    /// The book for --book-values (default: the bundled book).
    #[arg(long, requires = "book_values")]
    pub book: Option<std::path::PathBuf>,
}

pub(super) fn perft(args: PerftArgs) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(args.threads >= 1, "--threads must be at least 1");
    let pos = args.position.position()?;
    let pool = rayon::ThreadPoolBuilder::new().num_threads(args.threads).build()?;
    // Leaves grow about tenfold a ply: depth 14 already counts 10^11 of them.
    anyhow::ensure!(
        (1..=MAX_PERFT_DEPTH).contains(&args.depth),
        "depth must be from 1 to {MAX_PERFT_DEPTH}, got {}",
        args.depth
    );
    let first = if args.divide_depths { 1 } else { args.depth };
    for depth in first..=args.depth {
        let start = Instant::now();
        let count = if args.threads == 1 {
            perft::perft(&pos.board, depth)
        } else {
            pool.install(|| perft::perft_parallel(&pos.board, depth))
        };
        let secs = start.elapsed().as_secs_f64();
        outln!(
            "perft {depth}: {count} leaves in {secs:.3} s ({:.1} M leaves/s, {})",
            count as f64 / secs.max(1e-9) / 1e6,
            super::flags::threads_phrase(args.threads)
        );
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Serialize)]
struct ShowJson {
    board: String,
    side_to_move: String,
    legal_moves: Vec<String>,
    black_discs: u32,
    white_discs: u32,
    empties: u32,
    must_pass: bool,
    game_over: bool,
    canonical_key: String,
    opening: Option<&'static str>,
}

pub(super) fn show(args: ShowArgs) -> anyhow::Result<ExitCode> {
    let pos = args.position.position()?;
    let b = pos.board;
    let info = ShowJson {
        board: pos.to_board_text(),
        side_to_move: pos.side.to_string(),
        legal_moves: Squares(b.legal_moves()).map(|s| s.to_string()).collect(),
        black_discs: pos.black().count_ones(),
        white_discs: pos.white().count_ones(),
        empties: b.empty_count(),
        must_pass: b.must_pass(),
        game_over: b.is_game_over(),
        canonical_key: format!("{:016x}", b.canonical_key()),
        opening: args.position.opening().map(|o| o.name),
    };
    if let Some(path) = &args.svg {
        let last = args
            .position
            .moves
            .as_deref()
            .and_then(|m| crate::square::parse_move_sequence(m).ok())
            .and_then(|m| m.last().copied());
        let mut diagram = crate::svg::Diagram::with_legal_moves(pos, last);
        if args.book_values {
            let book = super::book_args::open_unverified(args.book.as_deref())?;
            let moves = crate::book::query::book_moves(&book, &pos);
            if let Some(damage) = book.damage() {
                anyhow::bail!(
                    "book {}: {damage}",
                    args.book.as_deref().map_or("(bundled)".into(), |p| p.display().to_string())
                );
            }
            let best = moves.first().map(|m| m.score);
            diagram.marks = moves
                .iter()
                .filter_map(|m| {
                    let sq = m.mv.square()?;
                    Some((sq, crate::svg::Mark::Text { text: format!("{:+}", m.score), best: Some(m.score) == best }))
                })
                .collect();
        }
        crate::fileio::atomic_write(path, diagram.to_svg().as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
    }
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&info)?);
        return Ok(ExitCode::SUCCESS);
    }
    out!("{}", pos.diagram());
    outln!("board:  {}", info.board);
    let status = if info.game_over {
        format!("game over, final score {:+} for {}", b.final_score(), pos.side)
    } else if info.must_pass {
        format!("{} must pass", pos.side)
    } else {
        format!("{} to move", pos.side)
    };
    outln!("{status}");
    outln!("legal:  {}", if info.legal_moves.is_empty() { "none".to_string() } else { info.legal_moves.join(" ") });
    outln!("discs:  black {}  white {}  empty {}", info.black_discs, info.white_discs, info.empties);
    outln!("key:    {}", info.canonical_key);
    if let Some(name) = info.opening {
        outln!("opening: {name}");
    }
    Ok(ExitCode::SUCCESS)
}
