//! `thorbook book repertoire`: the lines a player of one colour must know to play a
//! book's best move against every prepared reply ([`crate::book::repertoire`]), as a
//! tree, as transcripts, or as JSON.

use std::process::ExitCode;

use clap::{Args, ValueEnum};

use super::book_args::open_unverified;
use super::book_cmds::book_name;
use crate::board::Color;
use crate::book::repertoire::{repertoire, RepertoireConfig, RepertoireNode};
use crate::square::format_moves;

/// The colour a repertoire is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RepertoireColor {
    /// Black.
    Black,
    /// White.
    White,
}

/// Arguments of `book repertoire`.
#[derive(Args, Debug)]
pub struct RepertoireArgs {
    /// The colour the player has.
    #[arg(long, value_enum)]
    pub color: RepertoireColor,
    /// Prepare for every book reply of the opponent within this many discs of the best.
    #[arg(long, default_value_t = 2)]
    pub error: i32,
    /// Prepare too for every book reply played in at least this many games.
    #[arg(long, value_name = "G")]
    pub min_games: Option<u32>,
    /// Stop lines after this many plies from the start.
    #[arg(long, default_value_t = 20)]
    pub max_ply: usize,
    /// Print the transcripts (one line each) instead of the tree.
    #[arg(long, conflicts_with = "json")]
    pub lines: bool,
    /// Book file (default: the book bundled in the binary).
    #[arg(long)]
    pub book: Option<std::path::PathBuf>,
    /// JSON: the tree, the transcripts and the counts.
    #[arg(long)]
    pub json: bool,
}

impl TryFrom<&RepertoireArgs> for RepertoireConfig {
    type Error = anyhow::Error;

    fn try_from(a: &RepertoireArgs) -> anyhow::Result<RepertoireConfig> {
        let config = RepertoireConfig {
            color: match a.color {
                RepertoireColor::Black => Color::Black,
                RepertoireColor::White => Color::White,
            },
            error: a.error,
            min_games: a.min_games,
            max_ply: a.max_ply,
        };
        config.validate().map_err(|e| super::flags::out_of_range(&e))?;
        Ok(config)
    }
}

pub(super) fn run(args: RepertoireArgs) -> anyhow::Result<ExitCode> {
    let config = RepertoireConfig::try_from(&args)?;
    let book = open_unverified(args.book.as_deref())?;
    let mut r = repertoire(&book, &config);
    if let Some(damage) = book.damage() {
        anyhow::bail!("book {}: {damage}", book_name(args.book.as_deref()));
    }
    r.turn_to_f5();
    let (positions, lines, longest) = (r.positions, r.lines.len(), r.longest());
    if args.json {
        let v = r.to_json(&config);
        outln!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(ExitCode::SUCCESS);
    }
    if args.lines {
        for l in &r.lines {
            outln!("{}", format_moves(l));
        }
    } else {
        for root in &r.roots {
            print_node(root, 0, &mut 0)?;
        }
    }
    let color = config.color;
    eprintln!(
        "{color}: {positions} positions to know a move in, {lines} lines, the longest {longest} plies \
         (replies within {} discs{}, to ply {})",
        config.error,
        config.min_games.map_or(String::new(), |g| format!(" or played in {g} games")),
        config.max_ply
    );
    Ok(ExitCode::SUCCESS)
}

/// The tree, one move a row, indented by ply; the player's moves marked `*`.
fn print_node(n: &RepertoireNode, depth: usize, line_no: &mut usize) -> std::io::Result<()> {
    let ply = depth + 1;
    let end = if n.children.is_empty() {
        *line_no += 1;
        match n.transposes_to {
            Some(first) => format!("  (line {line_no}: transposes to line {first})"),
            None => format!("  (line {line_no})"),
        }
    } else {
        String::new()
    };
    let games = if n.games > 0 { format!(", {} games", n.games) } else { ", the book's searched move".to_string() };
    outln!("{:indent$}{ply}. {} {:+} ({}{games}){end}", "", n.mv, n.value, n.by, indent = 2 * depth);
    for c in &n.children {
        print_node(c, depth + 1, line_no)?;
    }
    Ok(())
}
