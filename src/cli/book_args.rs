//! The options and helpers that several book commands share (`book build` and `book
//! plan build`, the growths and their plans, audits and fixes): a leaf module, so that
//! the commands depend on it and not on each other.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;

use super::archive_args::ArchiveArgs;
use super::search_args::SearchArgs;
use crate::book::build::{BuildConfig, BuildError};
use crate::book::BackUpRule;
use crate::book::{Book, BookSource};
use crate::fileio::Bytes;
use crate::position::Position;
use crate::search::Settings;

/// The position after `--from`'s moves (the start without them).
pub fn position_from(moves: Option<&str>) -> anyhow::Result<Position> {
    match moves {
        Some(seq) => Position::from_moves(seq).with_context(|| format!("--from {seq}")),
        None => Ok(Position::START),
    }
}

/// Opens a book file (or the bundled book) in constant time, records unchecked.
pub fn open_unverified(path: Option<&Path>) -> anyhow::Result<Book<Bytes>> {
    let source = path.map_or(BookSource::Bundled, |p| BookSource::File(p.to_path_buf()));
    Ok(source.open()?.expect("a file or the bundled book"))
}

/// Opens a book file and verifies every record, or the bundled book (checked by the
/// tests that built it).
pub fn open_book(path: Option<&Path>) -> anyhow::Result<Book<Bytes>> {
    let book = open_unverified(path)?;
    if let Some(p) = path {
        book.verify().with_context(|| format!("book {}", p.display()))?;
    }
    Ok(book)
}

/// Arguments of `book build`.
#[derive(Args, Debug)]
pub struct BuildArgs {
    #[command(flatten)]
    pub archives: ArchiveArgs,
    /// Output book file (written atomically).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Collect positions up to this ply.
    #[arg(long, default_value_t = 20)]
    pub max_ply: u32,
    /// Keep positions reached by at least this many games.
    #[arg(long, default_value_t = 2)]
    pub min_games: u32,
    /// How each leaf is searched (default: depth 8, exact at 22 empties, full width,
    /// a 4 MiB table per search, one search per core). `--time` makes the book depend
    /// on the machine's speed.
    #[command(flatten)]
    pub search: SearchArgs,
    /// How values are backed up from the leaves (`book-format.md`).
    #[arg(long, value_enum, default_value_t = BackUpArg::default())]
    pub back_up: BackUpArg,
    /// Continue an interrupted build from its checkpoint (FILE.checkpoint).
    #[arg(long)]
    pub resume: bool,
}

/// `--back-up`: how a book's values are made from its leaves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum BackUpArg {
    /// The best option (plain negamax).
    #[default]
    Negamax,
    /// The best option less the winner's curse of noisy options.
    Corrected,
}

impl From<BackUpArg> for BackUpRule {
    fn from(a: BackUpArg) -> BackUpRule {
        match a {
            BackUpArg::Negamax => BackUpRule::Negamax,
            BackUpArg::Corrected => BackUpRule::Corrected,
        }
    }
}

/// `book build`'s defaults beside the leaf fallback: a small table per search, one
/// search per core.
pub fn book_search_defaults(hash_mib: usize) -> Settings {
    crate::book::build::leaf_settings().with_hash_mib(hash_mib)
}

impl TryFrom<&BuildArgs> for BuildConfig {
    type Error = anyhow::Error;

    /// The build the arguments ask for; the library checks its ranges.
    fn try_from(args: &BuildArgs) -> anyhow::Result<BuildConfig> {
        Ok(BuildConfig {
            max_ply: args.max_ply,
            min_games: args.min_games,
            search: args.search.settings(&book_search_defaults(4))?,
            back_up: args.back_up.into(),
        })
    }
}

/// A build error as the command line says it: a setting named by its flag.
pub fn build_error(e: BuildError) -> anyhow::Error {
    match e {
        BuildError::Setting(e) => super::flags::out_of_range(&e),
        e @ BuildError::Checkpoint { .. } => anyhow::anyhow!("{e} (run without --resume)"),
        e @ BuildError::Previous { .. } => anyhow::anyhow!("{e}; with other weights, give --eval FILE"),
        BuildError::Settings(e) => super::search_args::flag_error(e),
        e => e.into(),
    }
}

/// Arguments of `book deviate`.
#[derive(Args, Debug)]
pub struct DeviateArgs {
    /// Follow and expand moves within this many discs of the best.
    #[arg(long)]
    pub error: i32,
    /// The deviating side's losses along a line add up to at most this many discs.
    #[arg(long)]
    pub budget: i32,
    /// Do not expand positions beyond this ply.
    #[arg(long, default_value_t = 40)]
    pub max_ply: u32,
    #[command(flatten)]
    pub grow: GrowArgs,
}

/// What `book deviate` and `book deepen` share.
#[derive(Args, Debug)]
pub struct GrowArgs {
    /// The book to grow (default: the bundled book).
    #[arg(long)]
    pub book: Option<PathBuf>,
    /// Walk the lines from the position after these moves (default: the start).
    #[arg(long)]
    pub from: Option<String>,
    /// A drawn score counts as this many discs lost for the deviating side (see book-format.md, the draw policy).
    #[arg(long, default_value_t = 0)]
    pub contempt: i32,
    /// Stop after this many positions (deviate: added; deepen: leaves searched again).
    #[arg(long)]
    pub max_positions: Option<usize>,
    /// Stop starting new rounds after this many seconds.
    #[arg(long, conflicts_with = "max_positions")]
    pub max_time: Option<f64>,
    /// Leaves per round: a round's searches run side by side (or as shards of a plan)
    /// and values are backed up between rounds. The result depends on it.
    #[arg(long, default_value_t = crate::book::grow::ROUND_SIZE)]
    pub round_size: usize,
    /// How leaves are searched (default: the book's own depth, exact threshold and
    /// selectivity, a 16 MiB table per search, one search per core).
    #[command(flatten)]
    pub search: SearchArgs,
    /// Continue an interrupted run into the same output (OUT.deviate holds its settings).
    #[arg(long)]
    pub resume: bool,
    /// Output book.
    #[arg(short, long)]
    pub output: PathBuf,
}

impl GrowArgs {
    /// The configuration of a run with these options.
    pub fn config(
        &self,
        error: i32,
        budget: i32,
        max_ply: u32,
        growth: crate::book::grow::Growth,
    ) -> anyhow::Result<crate::book::grow::GrowthConfig> {
        let max_time = self
            .max_time
            .map(|t| {
                crate::search::settings::seconds(t, false)
                    .map_err(|e| crate::cli::flags::usage(format!("--max-time {e}")))
            })
            .transpose()?;
        Ok(crate::book::grow::GrowthConfig {
            error,
            budget,
            contempt: self.contempt,
            max_positions: self.max_positions,
            time: max_time,
            max_ply,
            search: self.search.settings(&book_search_defaults(16))?,
            growth,
            round_size: self.round_size,
        })
    }
}

/// Arguments of `book deepen`.
#[derive(Args, Debug)]
pub struct DeepenArgs {
    /// Deepen the leaves of lines whose moves score within this many discs of the best.
    #[arg(long, default_value_t = 2)]
    pub error: i32,
    /// One side's losses along such a line add up to at most this many discs.
    #[arg(long, default_value_t = 4)]
    pub budget: i32,
    /// Leave positions beyond this ply alone.
    #[arg(long, default_value_t = 60)]
    pub max_ply: u32,
    /// The level (or depth, exact threshold, selectivity) leaves are raised to (required);
    /// leaves searched at least as deeply are left alone.
    #[command(flatten)]
    pub grow: GrowArgs,
}
