//! `thorbook book …`: build, query, info, verify, export, import, merge; and the book
//! lookups `bestmove`/`analyze` make before searching.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};

use crate::book::BackUpRule;
use crate::book::{BuildEvent, Builder};
use serde::Serialize;

use super::archive_args::ArchiveArgs;
use super::book_args::{
    book_search_defaults, build_error, open_book, open_unverified, position_from, BackUpArg, BuildArgs, DeepenArgs,
    DeviateArgs,
};
use super::progress::Meter;
use super::search_args::SearchArgs;
use super::PositionArgs;
use crate::board::Board;
use crate::book::build::{BuildConfig, GameLine};
use crate::book::format::BuildParams;
use crate::book::interchange::{self, EdaxDate, ExportFormat};
use crate::book::query::{book_line, turn_to_f5};
use crate::book::{walk, Book};
use crate::fileio::{atomic_write, Bytes};
use crate::position::Position;
use crate::square::{format_moves, Move};

/// The `book` subcommands.
#[derive(Subcommand, Debug)]
pub enum BookCommand {
    /// Build a book from WTHOR archives (default: the bundled ones).
    Build(BuildArgs),
    /// Every legal move of a position with its book value, leaf, games and black win rate.
    Query(QueryArgs),
    /// The lines a player of one colour must know: the book's best move on their turns,
    /// every reply within --error discs (or played in --min-games games) on the opponent's.
    Repertoire(super::repertoire_cmds::RepertoireArgs),
    /// Size, format and build parameters, in constant time; `--full` adds the checksum
    /// state, leaf levels and the per-ply histogram (reading the whole book).
    Info(InfoArgs),
    /// Check checksums and structure; report damage.
    Verify(BookFileArgs),
    /// Write a book as thorbook text, Edax `book.dat` or Egaroucid `.egbk3`.
    Export(ExportArgs),
    /// Read any book thorbook knows (its own text or binary, Edax binary or text, Egaroucid `.egbk3`) into a thorbook book.
    Import(ImportArgs),
    /// Merge two or more books: exact leaves beat searched ones, deeper beat shallower (any order gives the same book).
    Merge(MergeArgs),
    /// Grow a book beyond the played lines: expand leaves within an error per move and
    /// a cumulative budget, one side deviating at a time (like Edax's and Egaroucid's deviate).
    Deviate(DeviateArgs),
    /// Search again, at a deeper level, the leaves that can change what the book plays:
    /// those on lines within the error bounds of the best, most influential first.
    Deepen(DeepenArgs),
    /// A book's values against deeper searches of positions on the lines it plays: mean
    /// absolute and signed error, by ply, side, leaf or backed-up value, leaf level, and
    /// the worst positions.
    Audit(super::audit_cmds::AuditArgs),
    /// Search again, at a level, the leaves behind the values on the book's lines that a
    /// search at that level contradicts by more than a threshold, then back up.
    Fix(super::audit_cmds::FixArgs),
    /// Rebuild a book from its archives plus new ones, searching only new or changed
    /// leaves (the result equals a full build with the same settings).
    Update(UpdateArgs),
    /// Add the lines of games to a book as Edax and Zebra learn (each game's line to the
    /// book's ply limit; where it leaves the book, a searched leaf), then back up.
    Learn(LearnArgs),
    /// Plan a computation in shards for a cluster (`book plan build … --shards N --work-dir DIR`).
    #[command(subcommand)]
    Plan(super::plan_cmds::PlanCommand),
    /// Run one shard of a plan (the index from --index, SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX).
    Shard(super::plan_cmds::ShardArgs),
    /// Check every shard of a plan and write the book.
    Assemble(super::plan_cmds::AssembleArgs),
    /// Shards done, running, missing and damaged; positions per second; ETA.
    Status(super::plan_cmds::StatusArgs),
    /// Submit a plan's missing shards and its assembly to Slurm (`--slurm [--wait]`).
    Submit(super::plan_cmds::SubmitArgs),
}

/// Which book to open.
#[derive(Args, Debug, Clone, Default)]
pub struct BookFileArgs {
    /// Book file (default: the book bundled in the binary).
    #[arg(long)]
    pub book: Option<PathBuf>,
    /// JSON output.
    #[arg(long)]
    pub json: bool,
}

pub(super) fn run(cmd: BookCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        BookCommand::Build(a) => build_cmd(a),
        BookCommand::Query(a) => query(a),
        BookCommand::Repertoire(a) => super::repertoire_cmds::run(a),
        BookCommand::Info(a) => info(a),
        BookCommand::Verify(a) => verify(a),
        BookCommand::Export(a) => export(a),
        BookCommand::Import(a) => import(a),
        BookCommand::Merge(a) => merge(a),
        BookCommand::Deviate(a) => deviate(a),
        BookCommand::Update(a) => update(a),
        BookCommand::Learn(a) => learn(a),
        BookCommand::Deepen(a) => deepen(a),
        BookCommand::Audit(a) => super::audit_cmds::audit_cmd(a),
        BookCommand::Fix(a) => super::audit_cmds::fix_cmd(a),
        BookCommand::Plan(c) => super::plan_cmds::plan(c),
        BookCommand::Shard(a) => super::plan_cmds::shard(a),
        BookCommand::Assemble(a) => super::plan_cmds::assemble(a),
        BookCommand::Status(a) => super::plan_cmds::status(a),
        BookCommand::Submit(a) => super::plan_cmds::submit(a),
    }
}

fn build_cmd(args: BuildArgs) -> anyhow::Result<ExitCode> {
    let config = BuildConfig::try_from(&args)?;
    let db = args.archives.load(false)?;
    let games: Vec<GameLine> = db.games.iter().map(GameLine::from).collect();
    drop(db);
    run_builder(Builder::new(config, &args.output).resume(args.resume), &games, Over::Games)
}

/// Arguments of `book update`.
#[derive(Args, Debug)]
pub struct UpdateArgs {
    /// The book to update (its header gives the settings not given here).
    #[arg(long)]
    book: PathBuf,
    /// Every archive the new book comes from, old and new (the book alone cannot know
    /// the positions that were below the game minimum before).
    #[command(flatten)]
    archives: ArchiveArgs,
    /// Output book file (written atomically).
    #[arg(short, long)]
    output: PathBuf,
    /// Collect positions up to this ply (default: the book's).
    #[arg(long)]
    max_ply: Option<u32>,
    /// Keep positions reached by at least this many games (default: the book's).
    #[arg(long)]
    min_games: Option<u32>,
    /// How new leaves are searched (default: as the book's header says; leaves are
    /// reused only when these match it).
    #[command(flatten)]
    search: SearchArgs,
    /// How values are backed up (default: as the book's header says).
    #[arg(long, value_enum)]
    back_up: Option<BackUpArg>,
    /// Continue an interrupted update from its checkpoint.
    #[arg(long)]
    resume: bool,
}

fn update(args: UpdateArgs) -> anyhow::Result<ExitCode> {
    let old = open_book(Some(&args.book))?;
    let choices = crate::book::UpdateChoices {
        max_ply: args.max_ply,
        min_games: args.min_games,
        back_up: args.back_up.map(BackUpRule::from),
        search: args.search.settings(&book_search_defaults(4))?,
    };
    let builder = builder_over(&old, &args.book, choices, &args.output, args.resume)?;
    let db = args.archives.load(false)?;
    let games: Vec<GameLine> = db.games.iter().map(GameLine::from).collect();
    drop(db);
    run_builder(builder, &games, Over::Update(&old))
}

/// The builder that updates `old` (read from `path`) or learns into it: the book's
/// recorded settings unless `choices` says otherwise, its leaves reusable.
fn builder_over(
    old: &Book<crate::fileio::Bytes>,
    path: &std::path::Path,
    choices: crate::book::UpdateChoices,
    output: &std::path::Path,
    resume: bool,
) -> anyhow::Result<Builder> {
    let config = BuildConfig::update_of(&old.params(), choices)
        .map_err(build_error)
        .with_context(|| format!("building over {}", path.display()))?;
    eprintln!("{}: {} positions, their leaves reusable where unchanged", path.display(), old.len());
    Ok(Builder::new(config, output).resume(resume))
}

/// Arguments of `book learn`.
#[derive(Args, Debug)]
pub struct LearnArgs {
    /// The book to learn into (its header gives the ply limit and the leaf search).
    #[arg(long)]
    book: PathBuf,
    /// The games to learn: any archives (GGF, transcripts, JSON lines, WTHOR) or folders.
    #[command(flatten)]
    archives: ArchiveArgs,
    /// Output book file (written atomically).
    #[arg(short, long)]
    output: PathBuf,
    /// How new leaves are searched (default: as the book's header says; leaves are
    /// reused only when these match it).
    #[command(flatten)]
    search: SearchArgs,
    /// Continue an interrupted learning from its checkpoint.
    #[arg(long)]
    resume: bool,
}

fn learn(args: LearnArgs) -> anyhow::Result<ExitCode> {
    let old = open_book(Some(&args.book))?;
    let choices = crate::book::UpdateChoices {
        max_ply: None,
        min_games: None,
        back_up: None,
        search: args.search.settings(&book_search_defaults(4))?,
    };
    let builder = builder_over(&old, &args.book, choices, &args.output, args.resume)?;
    let db = args.archives.load(false)?;
    let games: Vec<GameLine> = db.games.iter().map(GameLine::from).collect();
    drop(db);
    run_builder(builder, &games, Over::Learn(&old))
}

/// What a build starts from besides its games.
enum Over<'b> {
    Games,
    Update(&'b Book<crate::fileio::Bytes>),
    Learn(&'b Book<crate::fileio::Bytes>),
}

/// Runs a build with a progress bar and says what it did.
fn run_builder(builder: Builder, games: &[GameLine], over: Over<'_>) -> anyhow::Result<ExitCode> {
    let (max_ply, threads) = (builder.config().max_ply, builder.config().search.threads);
    // A learning keeps every position of its lines, whatever the book's minimum.
    let min_games = if matches!(over, Over::Learn(_)) { 1 } else { builder.config().min_games };
    let bar = Meter::new("scoring", "positions");
    let ckpt_path = builder.checkpoint_path();
    let on_event = |event| match event {
        BuildEvent::Collected { positions, games } => bar.suspend(|| {
            eprintln!("collected {positions} positions from {games} games (ply <= {max_ply}, >= {min_games} games)")
        }),
        BuildEvent::Resumed { scored } => {
            bar.suspend(|| eprintln!("resuming: {scored} positions already scored in {}", ckpt_path.display()))
        }
        BuildEvent::NoCheckpoint => {
            bar.suspend(|| eprintln!("no checkpoint at {}: starting afresh", ckpt_path.display()))
        }
        BuildEvent::Reused { leaves } => bar.suspend(|| eprintln!("{leaves} leaves reused from the previous book")),
        BuildEvent::LockRefused(refused) => bar.suspend(|| {
            eprintln!(
                "warning: {}: {refused}: the checkpoint is not locked; run no second build on it",
                ckpt_path.display()
            )
        }),
        BuildEvent::Scored { done, total } => bar.update(done, total),
    };
    let summary = match over {
        Over::Games => builder.run(games, &on_event),
        Over::Update(book) => builder.update(book, games, &on_event),
        Over::Learn(book) => builder.learn(book, games, &on_event),
    };
    bar.finish();
    let summary = summary.map_err(build_error)?;
    let secs = summary.search_time.as_secs_f64();
    eprintln!(
        "scored {} positions in {secs:.1} s ({:.1} positions/s, {}); wrote {} ({} bytes, {} positions) in {:.1} s total",
        summary.searched,
        summary.searched as f64 / secs.max(1e-9),
        super::flags::threads_phrase(threads),
        builder.output().display(),
        summary.size,
        summary.positions,
        summary.total_time.as_secs_f64()
    );
    let book = open_book(Some(builder.output()))?;
    let line = thor_orientation(&book_line(&book, &Position::START, 30));
    let value = book.probe(&Board::START).map(|h| h.value());
    outln!(
        "best opening line: {} (value {} for black)",
        format_moves(&line),
        value.map_or("?".into(), |v| format!("{v:+}"))
    );
    Ok(ExitCode::SUCCESS)
}

/// A line from the start shown as WTHOR shows games: turned so that it starts with f5.
fn thor_orientation(line: &[Move]) -> Vec<Move> {
    let t = turn_to_f5(line.first().copied());
    line.iter().map(|&m| t.apply_move(m)).collect()
}

/// Arguments of `book query`.
#[derive(Args, Debug)]
pub struct QueryArgs {
    #[command(flatten)]
    position: PositionArgs,
    #[command(flatten)]
    book: BookFileArgs,
}

fn query(args: QueryArgs) -> anyhow::Result<ExitCode> {
    let pos = args.position.position()?;
    let book = open_unverified(args.book.book.as_deref())?;
    let hit = book.probe(&pos.board);
    let out = crate::book::query::query(&book, &pos);
    if let Some(damage) = book.damage() {
        anyhow::bail!("book {}: {damage}", book_name(args.book.book.as_deref()));
    }
    let opening = args.position.opening();
    if args.book.json {
        let mut v = serde_json::to_value(&out)?;
        v["opening"] = serde_json::json!(opening.map(|o| o.name));
        outln!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(ExitCode::SUCCESS);
    }
    out!("{}", pos.diagram());
    if let Some(o) = opening {
        outln!("opening: {}", o.name);
    }
    let Some(h) = hit else {
        outln!("{} to move: not in the book", pos.side);
        return Ok(ExitCode::SUCCESS);
    };
    outln!("{} to move: book value {:+} ({} games)", pos.side, h.value(), h.record.games);
    outln!("{:<5} {:>6} {:>6}  {:<26} {:>7} {:>10}", "move", "value", "trust", "source", "games", "black win");
    for m in &out.moves {
        let t = &m.trust;
        let source = match (m.in_book, t.exact) {
            (true, true) => "book, solved".to_string(),
            (true, false) => format!("book, leaf depth {} {} below", t.leaf_depth, t.leaf_below),
            (false, true) => "leaf, exact".to_string(),
            (false, false) => format!("leaf, depth {}", m.depth.unwrap_or(t.leaf_depth)),
        };
        let rate = m.black_win_rate.map_or(String::new(), |r| format!("{:.1}%", 100.0 * r));
        let games = if m.in_book { m.games.to_string() } else { String::new() };
        outln!("{:<5} {:>+6} {:>6}  {:<26} {:>7} {:>10}", m.mv, m.score, t.grade, source, games, rate);
    }
    if !out.not_in_book.is_empty() {
        let moves: Vec<String> = out.not_in_book.iter().map(Move::to_string).collect();
        outln!("not in book: {}", moves.join(" "));
    }
    outln!("book line: {}", format_moves(&out.line));
    Ok(ExitCode::SUCCESS)
}

/// Arguments of `book info`.
#[derive(Args, Debug)]
pub struct InfoArgs {
    #[command(flatten)]
    book: BookFileArgs,
    /// Also verify the whole file and count leaves, leaf levels and positions by ply
    /// (time and memory in proportion to the book).
    #[arg(long)]
    full: bool,
}

#[derive(Serialize)]
struct InfoJson {
    positions: usize,
    bytes: usize,
    bytes_per_position: f64,
    params: BuildParams,
    version: u32,
    games_at_root: Option<u32>,
    #[serde(flatten)]
    full: Option<FullInfo>,
}

/// What `book info --full` adds: facts that need every record.
#[derive(Serialize)]
struct FullInfo {
    checksum_ok: bool,
    exact_leaves: usize,
    no_leaf: usize,
    positions_by_empties: Vec<(u32, usize)>,
    leaves_by_level: Vec<(String, usize)>,
}

impl FullInfo {
    fn of(book: &Book<crate::fileio::Bytes>) -> FullInfo {
        let checksum_ok = book.verify().is_ok();
        let mut hist: std::collections::BTreeMap<u32, usize> = Default::default();
        for b in walk(book).values() {
            *hist.entry(b.empty_count()).or_default() += 1;
        }
        let mut by_level: std::collections::BTreeMap<(bool, u8, u8), (String, usize)> = Default::default();
        for level in book.records().filter_map(|r| r.leaf_level()) {
            by_level.entry(level.rank()).or_insert_with(|| (level.to_string(), 0)).1 += 1;
        }
        FullInfo {
            checksum_ok,
            exact_leaves: book.records().filter(|r| r.leaf_exact() && !r.leaf_move.is_none()).count(),
            no_leaf: book.records().filter(|r| r.leaf_move.is_none()).count(),
            positions_by_empties: hist.into_iter().rev().collect(),
            leaves_by_level: by_level.into_values().rev().collect(),
        }
    }
}

fn info(args: InfoArgs) -> anyhow::Result<ExitCode> {
    let book = open_unverified(args.book.book.as_deref())?;
    let out = InfoJson {
        positions: book.len(),
        bytes: book.size_bytes(),
        bytes_per_position: book.size_bytes() as f64 / book.len().max(1) as f64,
        params: book.params(),
        version: book.version(),
        games_at_root: book.probe(&Board::START).map(|h| h.record.games),
        full: args.full.then(|| FullInfo::of(&book)),
    };
    if !args.full {
        if let Some(damage) = book.damage() {
            anyhow::bail!("book {}: {damage}", book_name(args.book.book.as_deref()));
        }
    }
    if args.book.json {
        outln!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    outln!(
        "positions:   {} ({} bytes, {:.1} bytes/position, format version {})",
        out.positions,
        out.bytes,
        out.bytes_per_position,
        out.version
    );
    let p = out.params;
    let mixed = out.full.as_ref().map(|f| f.leaves_by_level.iter().any(|(l, _)| l.contains("σ")));
    outln!(
        "built with:  max ply {}, min games {}, depth {}, exact at {} empties, {}",
        p.max_ply,
        p.min_games,
        if p.depth == 0 { "by time".to_string() } else { p.depth.to_string() },
        p.exact_at,
        match (p.selectivity_tenths, mixed) {
            // A grown book whose leaves differ in width records none (0).
            (0, Some(true)) => "widths as the leaf levels say".to_string(),
            (0, Some(false)) => "full width".to_string(),
            (0, None) => "full width, or leaves of several widths (--full lists them)".to_string(),
            (t, _) => format!("selectivity {:.1} σ", t as f32 / 10.0),
        }
    );
    match p.eval_digest {
        0 => outln!("evaluation:  not recorded"),
        d if d == u32::from_le_bytes(*b"CLAS") => outln!("evaluation:  classic (hand-weighted)"),
        d => outln!(
            "evaluation:  weights {d:08x}{}",
            if crate::eval::Weights::is_bundled_digest(d) { " (the bundled weights)" } else { "" }
        ),
    }
    outln!("games:       {} at the start position", out.games_at_root.unwrap_or(0));
    let Some(full) = &out.full else { return Ok(ExitCode::SUCCESS) };
    outln!("checksums:   {}", if full.checksum_ok { "ok" } else { "DAMAGED (run `thorbook book verify`)" });
    outln!("leaves:      {} exact, {} positions with every move in the book", full.exact_leaves, full.no_leaf);
    let levels: Vec<String> = full.leaves_by_level.iter().map(|(l, n)| format!("{l}: {n}")).collect();
    outln!("leaf levels: {}", levels.join(", "));
    outln!("reachable from the start, by ply:");
    for (empties, n) in &full.positions_by_empties {
        outln!("  ply {:>2}: {n}", 60 - empties);
    }
    Ok(ExitCode::SUCCESS)
}

/// How a book is named in messages.
pub(super) fn book_name(path: Option<&Path>) -> String {
    path.map_or("(bundled)".to_string(), |p| p.display().to_string())
}

fn verify(args: BookFileArgs) -> anyhow::Result<ExitCode> {
    let name = book_name(args.book.as_deref());
    let book = open_unverified(args.book.as_deref())?;
    book.verify().with_context(|| format!("book {name}"))?;
    outln!("book {name}: ok ({} positions, header, checksums, key order and fields verified)", book.len());
    Ok(ExitCode::SUCCESS)
}

/// Arguments of `book export`.
#[derive(Args, Debug)]
pub struct ExportArgs {
    #[command(flatten)]
    book: BookFileArgs,
    /// Output format: thorbook text, Edax `book.dat` (Edax 4.4–4.6) or Egaroucid `.egbk3`.
    #[arg(long, value_enum, default_value_t = ExportFormatArg::Text)]
    format: ExportFormatArg,
    /// Write here (atomically) instead of standard output (required for the binary formats).
    #[arg(short, long)]
    output: Option<PathBuf>,
}

/// `--format` of `book export`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormatArg {
    /// thorbook text, one position per line.
    Text,
    /// Edax's binary book.dat.
    Edax,
    /// Egaroucid's .egbk3.
    Egbk3,
}

fn export(args: ExportArgs) -> anyhow::Result<ExitCode> {
    let book = open_book(args.book.book.as_deref())?;
    let format = match args.format {
        ExportFormatArg::Text => ExportFormat::Text,
        ExportFormatArg::Edax => ExportFormat::Edax(EdaxDate::now()),
        ExportFormatArg::Egbk3 => ExportFormat::Egaroucid,
    };
    anyhow::ensure!(
        args.output.is_some() || format == ExportFormat::Text,
        "--format {:?} writes a binary file: give -o FILE",
        args.format
    );
    let out = interchange::export(&book, format)?;
    match &args.output {
        Some(path) => {
            atomic_write(path, &out.bytes).with_context(|| format!("writing {}", path.display()))?;
            eprintln!("wrote {} ({} positions, {} bytes)", path.display(), out.positions, out.bytes.len());
        }
        None => std::io::Write::write_all(&mut std::io::stdout().lock(), &out.bytes)?,
    }
    if out.unreachable > 0 {
        eprintln!(
            "warning: {} positions are not reachable from the start through the book; their boards are unknown, so they were left out",
            out.unreachable
        );
    }
    if out.passes_folded > 0 {
        eprintln!("{} pass positions folded (the format has none; an import adds them back)", out.passes_folded);
    }
    Ok(ExitCode::SUCCESS)
}

/// Arguments of `book import`.
#[derive(Args, Debug)]
pub struct ImportArgs {
    /// A book in any format thorbook reads, recognised by content: thorbook's text export
    /// or binary book (older versions are upgraded), Edax's book.dat or text export,
    /// Egaroucid's .egbk3.
    input: PathBuf,
    /// Output book file.
    #[arg(short, long)]
    output: PathBuf,
    /// Back the values up again by this rule (and record it), instead of keeping the
    /// values the input stores.
    #[arg(long, value_enum)]
    back_up: Option<BackUpArg>,
}

fn import(args: ImportArgs) -> anyhow::Result<ExitCode> {
    let bytes = std::fs::read(&args.input).with_context(|| format!("reading {}", args.input.display()))?;
    let imported = interchange::import(&bytes).with_context(|| format!("{}", args.input.display()))?;
    let out = match args.back_up {
        Some(rule) => crate::book::build::backup::revalue(&Book::open(&imported.bytes[..])?, rule.into())?,
        None => imported.bytes.clone(),
    };
    atomic_write(&args.output, &out).with_context(|| format!("writing {}", args.output.display()))?;
    eprintln!(
        "read {} ({}, {} positions); wrote {} ({} positions{}{})",
        args.input.display(),
        imported.format.name(),
        imported.read,
        args.output.display(),
        imported.positions,
        if imported.duplicates > 0 {
            format!(", {} repeated positions dropped", imported.duplicates)
        } else {
            String::new()
        },
        if imported.passes_added > 0 {
            format!(", {} pass positions added", imported.passes_added)
        } else {
            String::new()
        },
    );
    Ok(ExitCode::SUCCESS)
}

/// Arguments of `book merge`.
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The books to merge (two or more).
    #[arg(required = true, num_args = 2..)]
    books: Vec<PathBuf>,
    /// Output book.
    #[arg(short, long)]
    output: PathBuf,
    /// Threads of the back-up (default: every core; the book is the same for any count).
    #[arg(long)]
    threads: Option<usize>,
}

fn merge(args: MergeArgs) -> anyhow::Result<ExitCode> {
    let pool = super::flags::thread_pool(args.threads)?;
    let books = args.books.iter().map(|p| open_book(Some(p))).collect::<anyhow::Result<Vec<_>>>()?;
    let refs: Vec<&Book<Bytes>> = books.iter().collect();
    let (written, _) = pool.install(|| crate::book::build::merge::merge_into(&refs, &args.output))?;
    let sizes: Vec<String> = books.iter().map(|b| b.len().to_string()).collect();
    eprintln!(
        "wrote {} ({} positions: {} before merging)",
        args.output.display(),
        written.positions,
        sizes.join(" + ")
    );
    Ok(ExitCode::SUCCESS)
}

fn deepen(args: DeepenArgs) -> anyhow::Result<ExitCode> {
    let config = args.grow.config(args.error, args.budget, args.max_ply, crate::book::grow::Growth::Deepen)?;
    let g = &args.grow;
    grow(g.book.as_deref(), g.from.as_deref(), config, &g.output, g.resume)
}

fn deviate(args: DeviateArgs) -> anyhow::Result<ExitCode> {
    let config = args.grow.config(args.error, args.budget, args.max_ply, crate::book::grow::Growth::Deviate)?;
    let g = &args.grow;
    grow(g.book.as_deref(), g.from.as_deref(), config, &g.output, g.resume)
}

/// Runs a deviation or a deepening with a progress bar and says what it did.
fn grow(
    book: Option<&Path>,
    from: Option<&str>,
    config: crate::book::grow::GrowthConfig,
    output: &Path,
    resume: bool,
) -> anyhow::Result<ExitCode> {
    use crate::book::grow::{Grower, Growth, GrowthError, GrowthEvent};
    let deepen = config.growth == Growth::Deepen;
    let book = open_book(book)?;
    let from_pos = position_from(from)?;
    let levels_before = leaf_levels(&book);
    let deviator = Grower::new(config, from_pos.board, output).resume(resume);
    let bar = Meter::new("round", "searches");
    let state_path = deviator.state_path();
    let summary = deviator.run(&book, &|event| match event {
        GrowthEvent::Round { number, leaves, positions } => {
            bar.set_prefix(number.to_string());
            bar.set_message(format!("({leaves} leaves, book {positions} positions)"));
            bar.reset();
        }
        GrowthEvent::Searched { done, total } => bar.update(done, total),
        GrowthEvent::NothingToResume => bar.suspend(|| {
            eprintln!("no interrupted run at {} ({}): starting afresh", output.display(), state_path.display())
        }),
        GrowthEvent::Written { positions, root_value } => {
            bar.set_message(format!("(book {positions} positions, value {root_value:+})"));
        }
    });
    bar.finish();
    let s = summary.map_err(|e| match e {
        GrowthError::Setting(e) => super::flags::out_of_range(&e),
        GrowthError::NoTarget => anyhow::anyhow!("{e}: give --level N (or --depth D)"),
        e @ GrowthError::Resume { .. } => anyhow::anyhow!("{e} (run without --resume)"),
        GrowthError::NotInBook => {
            anyhow::anyhow!("--from: the position after `{}` is not in the book", from.unwrap_or(""))
        }
        GrowthError::Search(e) => build_error(e),
        e => e.into(),
    })?;
    let minutes = s.elapsed.as_secs_f64() / 60.0;
    if deepen {
        eprintln!(
            "deepened {} leaves in {} rounds, {:.1} s; value {:+} -> {:+}; stopped: {:?}",
            s.searches,
            s.rounds,
            s.elapsed.as_secs_f64(),
            s.root_before,
            s.root_after,
            s.stop
        );
        let after = leaf_levels(&Book::open(crate::fileio::read_mapped(output)?)?);
        outln!("searched leaves by level   before    after");
        let mut keys: Vec<&String> = levels_before.keys().chain(after.keys()).collect();
        keys.sort();
        keys.dedup();
        for k in keys {
            outln!("  {k:<22} {:>8} {:>8}", levels_before.get(k).unwrap_or(&0), after.get(k).unwrap_or(&0));
        }
        eprintln!("wrote {} ({} bytes)", output.display(), s.written.bytes);
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!(
        "{} -> {} positions (+{}, {:.0} per minute) in {} rounds, {} searches, {:.1} s; value {:+} -> {:+}; stopped: {:?}",
        s.before,
        s.after,
        s.after - s.before,
        (s.after - s.before) as f64 / minutes.max(1e-9),
        s.rounds,
        s.searches,
        s.elapsed.as_secs_f64(),
        s.root_before,
        s.root_after,
        s.stop
    );
    eprintln!("wrote {} ({} bytes)", output.display(), s.written.bytes);
    Ok(ExitCode::SUCCESS)
}

/// Leaves by level (`depth 14 @1.5σ`, `exact`, …), sorted so that levels compare.
fn leaf_levels<D: AsRef<[u8]>>(book: &Book<D>) -> std::collections::BTreeMap<String, usize> {
    let mut out = std::collections::BTreeMap::new();
    for r in book.records() {
        if let Some(level) = r.leaf_level() {
            let name = if level.exact { "exact".to_string() } else { format!("depth {:02} {}", level.depth, level) };
            *out.entry(name).or_insert(0) += 1;
        }
    }
    out
}
