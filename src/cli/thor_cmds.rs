//! `thorbook thor …`: info, games, stats, check, export.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use clap::{Args, Subcommand, ValueEnum};
use serde::Serialize;

use super::archive_args::ArchiveArgs;
use super::PositionArgs;
use crate::board::Color;
use crate::fileio::{atomic_write, IoError};
use crate::thor::FileKind;
use crate::thor::{Compression, GameId, SourceFormat, TextFormat};
use crate::thor::{GameFilter, GameText, LoadOptions, SortKey, ThorDatabase};

/// The `thor` subcommands.
#[derive(Subcommand, Debug)]
pub enum ThorCommand {
    /// Per file and in total: games, years, P3, finished / early / unfinished, players, tournaments.
    Info(InfoArgs),
    /// List games (year, tournament, players, scores, transcript), filtered and sorted.
    Games(GamesArgs),
    /// Statistics of the games reaching a position, move by move (WZebra's database window).
    Stats(StatsArgs),
    /// Validate archives: every anomaly with file, record, byte offset and ply.
    Check(CheckArgs),
    /// Export games for training pipelines (transcripts, CSV, JSON lines) or as a new WTHOR file.
    Export(ExportArgs),
}

/// Which games, by what the records say: player, tournament, years.
#[derive(Args, Debug, Clone, Default)]
pub struct GameFieldArgs {
    /// Games of a player (case-insensitive substring of the name).
    #[arg(long)]
    pub player: Option<String>,
    /// With --player: the colour the player had.
    #[arg(long = "as", value_enum, default_value_t = PlayerSide::Either)]
    pub side: PlayerSide,
    /// Games of a tournament (case-insensitive substring).
    #[arg(long)]
    pub tournament: Option<String>,
    /// Years, inclusive: `1990..2000`, `1990`, `1990..`, `..2000`.
    #[arg(long, value_parser = crate::thor::parse_years)]
    pub years: Option<(u16, u16)>,
}

impl GameFieldArgs {
    /// Whether any condition is given.
    pub(super) fn is_set(&self) -> bool {
        self.player.is_some() || self.side != PlayerSide::Either || self.tournament.is_some() || self.years.is_some()
    }

    /// The library's filter: these conditions, and the games through `position`.
    pub(super) fn filter(&self, position: Option<crate::position::Position>) -> GameFilter {
        GameFilter {
            player: self.player.clone(),
            player_color: match self.side {
                PlayerSide::Black => Some(Color::Black),
                PlayerSide::White => Some(Color::White),
                PlayerSide::Either => None,
            },
            tournament: self.tournament.clone(),
            years: self.years,
            position,
        }
    }
}

/// Which games.
#[derive(Args, Debug, Clone, Default)]
pub struct FilterArgs {
    #[command(flatten)]
    pub fields: GameFieldArgs,
    #[command(flatten)]
    pub position: PositionArgs,
}

/// The colour a player had.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Default)]
pub enum PlayerSide {
    /// Black.
    Black,
    /// White.
    White,
    /// Either.
    #[default]
    Either,
}

impl FilterArgs {
    fn filter(&self) -> anyhow::Result<GameFilter> {
        let position = if self.position.moves.is_some() || self.position.board.is_some() {
            Some(self.position.position()?)
        } else {
            None
        };
        Ok(self.fields.filter(position))
    }
}

/// Arguments of `thor info`.
#[derive(Args, Debug)]
pub struct InfoArgs {
    #[command(flatten)]
    archives: ArchiveArgs,
    /// JSON output.
    #[arg(long)]
    json: bool,
}

/// Output formats of game listings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum GameFormat {
    /// Aligned columns.
    Table,
    /// One transcript per line (`f5d6c3… +12`: the result as black's disc difference, when known).
    Transcript,
    /// CSV with a header line.
    Csv,
    /// One JSON object per line.
    Jsonl,
    /// One GGF game per line, as GGS's archives.
    Ggf,
    /// A WTHOR `.wtb` file with its `.JOU` and `.TRN` beside it (export only, needs -o).
    Wtb,
}

/// Arguments of `thor games`.
#[derive(Args, Debug)]
pub struct GamesArgs {
    #[command(flatten)]
    archives: ArchiveArgs,
    #[command(flatten)]
    filter: FilterArgs,
    /// At most this many games (0: all).
    #[arg(long, default_value_t = 50)]
    limit: usize,
    /// Order: year, black, white, tournament, score.
    #[arg(long, default_value = "year")]
    sort: SortKey,
    /// Output format.
    #[arg(long, value_enum, default_value_t = GameFormat::Table)]
    format: GameFormat,
    /// JSON lines (same as --format jsonl).
    #[arg(long)]
    json: bool,
}

/// Arguments of `thor export`.
#[derive(Args, Debug)]
pub struct ExportArgs {
    #[command(flatten)]
    archives: ArchiveArgs,
    #[command(flatten)]
    filter: FilterArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = GameFormat::Transcript)]
    format: GameFormat,
    /// Write here (atomically) instead of standard output; required for --format wtb.
    #[arg(short, long)]
    output: Option<PathBuf>,
}

/// Arguments of `thor stats`.
#[derive(Args, Debug)]
pub struct StatsArgs {
    #[command(flatten)]
    archives: ArchiveArgs,
    #[command(flatten)]
    filter: FilterArgs,
    /// JSON output.
    #[arg(long)]
    json: bool,
}

/// Arguments of `thor check`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Game archives or directories (default: the bundled archives).
    paths: Vec<PathBuf>,
    /// JSON output.
    #[arg(long)]
    json: bool,
}

pub(super) fn run(cmd: ThorCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        ThorCommand::Info(a) => info(a),
        ThorCommand::Games(a) => games(a),
        ThorCommand::Stats(a) => stats(a),
        ThorCommand::Check(a) => check(a),
        ThorCommand::Export(a) => export(a),
    }
}

#[derive(Serialize)]
struct InfoJson<'a> {
    files: &'a [crate::thor::FileSummary],
    total_games: usize,
    finished: usize,
    finished_early: usize,
    unfinished: usize,
    years: Option<(u16, u16)>,
    players: usize,
    tournaments: usize,
    anomalies: usize,
    load_seconds: f64,
}

fn info(args: InfoArgs) -> anyhow::Result<ExitCode> {
    let start = Instant::now();
    let db = args.archives.load(false)?;
    let secs = start.elapsed().as_secs_f64();
    let sum = |f: fn(&crate::thor::FileSummary) -> usize| db.files.iter().map(f).sum::<usize>();
    let years = db
        .games
        .iter()
        .filter_map(|g| g.known_year())
        .fold(None, |acc: Option<(u16, u16)>, y| Some(acc.map_or((y, y), |(lo, hi)| (lo.min(y), hi.max(y)))));
    let out = InfoJson {
        files: &db.files,
        total_games: db.games.len(),
        finished: sum(|f| f.finished),
        finished_early: sum(|f| f.finished_early),
        unfinished: sum(|f| f.unfinished),
        years,
        players: db.players.len(),
        tournaments: db.tournaments.len(),
        anomalies: db.anomalies.len(),
        load_seconds: secs,
    };
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    outln!(
        "{:<24} {:>8} {:>4} {:>3} {:>8} {:>8} {:>6} {:>10} {:>9}",
        "file",
        "kind",
        "year",
        "P3",
        "records",
        "finished",
        "early",
        "unfinished",
        "anomalies"
    );
    for f in &db.files {
        let kind = match (f.format, f.kind) {
            (SourceFormat::Text(TextFormat::Ggf), _) => "GGF",
            (SourceFormat::Text(TextFormat::Transcript), _) => "moves",
            (SourceFormat::Text(TextFormat::Jsonl), _) => "JSONL",
            (SourceFormat::Text(TextFormat::Logistello), _) => "Logistello",
            (_, FileKind::Games) => "games",
            (_, FileKind::Games10) => "10x10",
            (_, FileKind::Players) => "JOU",
            (_, FileKind::Tournaments) => "TRN",
        };
        let kind = match f.compression {
            Compression::None => kind.to_string(),
            Compression::Gzip => format!("{kind}.gz"),
            Compression::Bzip2 => format!("{kind}.bz2"),
        };
        let is_games = f.format == SourceFormat::Wthor && matches!(f.kind, FileKind::Games | FileKind::Games10);
        let year = if is_games { f.header.game_year.to_string() } else { "-".into() };
        let depth = if is_games { f.header.depth.to_string() } else { "-".into() };
        let name = std::path::Path::new(&f.name).file_name().map_or(f.name.clone(), |n| n.to_string_lossy().into());
        outln!(
            "{:<24} {:>8} {:>4} {:>3} {:>8} {:>8} {:>6} {:>10} {:>9}",
            name,
            kind,
            year,
            depth,
            f.records,
            f.finished,
            f.finished_early,
            f.unfinished,
            f.anomalies
        );
        if !f.skipped.is_empty() {
            outln!("{:<24} skipped (not for an 8x8 book from the start): {}", "", skipped_text(f));
        }
    }
    outln!();
    let span = years.map_or("-".to_string(), |(lo, hi)| format!("{lo}–{hi}"));
    outln!("games:       {} ({span})", out.total_games);
    outln!("finished:    {} with 60 moves, {} before 60 moves", out.finished, out.finished_early);
    outln!("unfinished:  {} (stored score is not a final score)", out.unfinished);
    outln!("players:     {}", out.players);
    outln!("tournaments: {}", out.tournaments);
    outln!("anomalies:   {}", out.anomalies);
    let skipped: usize = db.files.iter().flat_map(|f| f.skipped.values()).sum();
    if skipped > 0 {
        outln!("skipped:     {skipped} sound games an 8x8 book cannot use (per file above)");
    }
    let no_result = db.games.iter().filter(|g| g.black_discs().is_none()).count();
    if no_result > 0 {
        outln!("no result:   {no_result} games whose source gives no result (left out of win statistics)");
    }
    if db.files.iter().any(|f| f.kind == FileKind::Games10) {
        outln!("note: 10x10 files are counted from their records but not replayed (thorbook plays 8x8 only)");
    }
    outln!("loaded and replayed in {secs:.3} s");
    Ok(ExitCode::SUCCESS)
}

/// The library's text format of a game listing format; `None` for the table (the
/// command line's own) and WTHOR (files, not text).
fn text_format(format: GameFormat) -> Option<GameText> {
    match format {
        GameFormat::Transcript => Some(GameText::Transcript),
        GameFormat::Ggf => Some(GameText::Ggf),
        GameFormat::Jsonl => Some(GameText::Jsonl),
        GameFormat::Csv => Some(GameText::Csv),
        GameFormat::Table | GameFormat::Wtb => None,
    }
}

fn write_games(out: &mut dyn Write, db: &ThorDatabase, ids: &[GameId], format: GameFormat) -> anyhow::Result<()> {
    match (format, text_format(format)) {
        (_, Some(text)) => out.write_all(db.write_games(ids, text).as_bytes())?,
        (GameFormat::Table, None) => {
            writeln!(
                out,
                "{:<4}  {:<24}  {:<22}  {:<22}  {:>5}  {:>5}  moves",
                "year", "tournament", "black", "white", "score", "theor"
            )?;
            let known = |v: Option<u8>| v.map_or("?".to_string(), |v| v.to_string());
            for &i in ids {
                let g = db.game_json(db.own_game(i), false);
                let score = g.black_score.map_or("?".to_string(), |b| format!("{b}-{}", 64 - i32::from(b)));
                let mark = if g.outcome == crate::thor::Outcome::Unfinished { "*" } else { "" };
                let year = g.year.map_or("?".to_string(), |y| y.to_string());
                writeln!(
                    out,
                    "{year:<4}  {:<24.24}  {:<22.22}  {:<22.22}  {:>5}  {:>5}  {}{mark}",
                    g.tournament,
                    g.black,
                    g.white,
                    score,
                    known(g.theoretical_score),
                    g.moves
                )?;
            }
        }
        (_, None) => {
            return Err(crate::cli::flags::usage(
                "--format wtb writes a file: use `thorbook thor export --format wtb -o FILE`",
            ))
        }
    }
    Ok(())
}

fn games(args: GamesArgs) -> anyhow::Result<ExitCode> {
    let filter = args.filter.filter()?;
    let db = args.archives.load(filter.position.is_some())?;
    let mut ids = db.select(&filter);
    db.sort_games(&mut ids, args.sort);
    let total = ids.len();
    if args.limit > 0 {
        ids.truncate(args.limit);
    }
    let format = if args.json { GameFormat::Jsonl } else { args.format };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    write_games(&mut out, &db, &ids, format)?;
    out.flush()?;
    if format == GameFormat::Table {
        eprintln!("{} of {total} matching games shown (--limit 0 shows all; * marks unfinished games)", ids.len());
    }
    Ok(ExitCode::SUCCESS)
}

fn export(args: ExportArgs) -> anyhow::Result<ExitCode> {
    let filter = args.filter.filter()?;
    let db = args.archives.load(filter.position.is_some())?;
    let ids = db.select(&filter);
    if args.format == GameFormat::Wtb {
        let path = args.output.as_ref().context("--format wtb needs -o FILE")?;
        return export_wthor(&db, &ids, path);
    }
    match &args.output {
        Some(path) => {
            // The table has no library writer; every other format is written as Python
            // writes it.
            match text_format(args.format) {
                Some(text) => db.write_games_to(&ids, text, path)?,
                None => {
                    let mut table = Vec::new();
                    write_games(&mut table, &db, &ids, args.format)?;
                    atomic_write(path, &table).map_err(IoError::at(path))?;
                }
            }
            eprintln!("wrote {} games to {}", ids.len(), path.display());
        }
        None => write_games(&mut std::io::stdout().lock(), &db, &ids, args.format)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes games as WTHOR files (named by `WthorExport::write_at`).
fn export_wthor(db: &ThorDatabase, ids: &[GameId], path: &std::path::Path) -> anyhow::Result<ExitCode> {
    let export = db.to_wthor(ids);
    for (i, (out, f)) in export.write_at(path)?.iter().enumerate() {
        if i < export.games.len() {
            eprintln!("wrote {} games of {} to {}", f.records, f.year, out.display());
        } else {
            eprintln!("wrote {} names to {}", f.records, out.display());
        }
    }
    let d = &export.dropped;
    let notes = [
        (d.text_games, "games from text sources: dates beyond the year, clocks, ratings and move annotations dropped"),
        (d.names_altered, "names cut to WTHOR's length or with characters outside Latin-1 written `?`"),
        (d.results_unknown, "games without a known result: written with the final position's disc count"),
        (d.theoretical_unknown, "games without a theoretical score: written with P3 = 0"),
        (d.years_unknown, "games without a year: written as year 0"),
        (d.names_lost, "names beyond the 65,535 a name file holds: written as `?`"),
    ];
    for (n, what) in notes {
        if n > 0 {
            eprintln!("note: {n} {what}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn stats(args: StatsArgs) -> anyhow::Result<ExitCode> {
    let opening = args.filter.position.opening();
    let mut filter = args.filter.filter()?;
    let pos = filter.position.take().unwrap_or_default();
    let start = Instant::now();
    let db = args.archives.load(true)?;
    let loaded = start.elapsed().as_secs_f64();
    let query = Instant::now();
    let s = db.stats(&pos, &filter);
    let query_secs = query.elapsed().as_secs_f64();
    if args.json {
        let mut v = serde_json::to_value(&s)?;
        v["opening"] = serde_json::json!(opening.map(|o| o.name));
        outln!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(ExitCode::SUCCESS);
    }
    out!("{}", pos.diagram());
    outln!("{} to move", pos.side);
    if let Some(o) = opening {
        outln!("opening: {}", o.name);
    }
    if s.games == 0 {
        outln!("no game reaches this position");
        return Ok(ExitCode::SUCCESS);
    }
    // Shares of the games whose result is known.
    let decided = s.games - s.results_unknown;
    let pct = |n: usize| 100.0 * n as f64 / decided.max(1) as f64;
    let unknown = match s.results_unknown {
        0 => String::new(),
        n => format!(" ({n} without a result)"),
    };
    outln!(
        "{} games{unknown}: black wins {} ({:.1}%), draws {} ({:.1}%), white wins {} ({:.1}%)",
        s.games,
        s.black_wins,
        pct(s.black_wins),
        s.draws,
        pct(s.draws),
        s.white_wins,
        pct(s.white_wins)
    );
    if decided > 0 {
        // WTHOR's stored score is black's disc count (empties to the winner), not a
        // difference: said as what it is.
        outln!("black's final discs: average {:.2}, median {:.1}", s.average_black_discs, s.median_black_discs);
    }
    if s.ended_here > 0 {
        outln!("{} games end here", s.ended_here);
    }
    outln!();
    outln!("{:<5} {:>7} {:>7} {:>10} {:>10}", "move", "games", "share", "black win", "avg black");
    // NaN: no game through the move has a known result.
    let known = |x: f64, text: String| if x.is_nan() { "-".to_string() } else { text };
    for m in &s.moves {
        outln!(
            "{:<5} {:>7} {:>6.1}% {:>10} {:>10}",
            m.mv,
            m.games,
            100.0 * m.share,
            known(m.black_win_rate, format!("{:.1}%", 100.0 * m.black_win_rate)),
            known(m.average_black_discs, format!("{:.2}", m.average_black_discs))
        );
    }
    eprintln!("({} positions indexed in {loaded:.3} s; query {:.1} ms)", db.index_len(), query_secs * 1e3);
    Ok(ExitCode::SUCCESS)
}

#[derive(Serialize)]
struct CheckJson<'a> {
    files: usize,
    records: usize,
    games_valid: usize,
    anomalies: &'a [crate::thor::Anomaly],
}

fn check(args: CheckArgs) -> anyhow::Result<ExitCode> {
    let archives = ArchiveArgs { paths: args.paths, strict: false, lenient: true };
    let (sources, unreadable) = archives.sources()?;
    let mut db = ThorDatabase::load(&sources, LoadOptions { strict: false, index: false })?;
    let files_unreadable = unreadable.len();
    db.anomalies.splice(0..0, unreadable);
    let sources_len = sources.len() + files_unreadable;
    let records: usize = db.files.iter().map(|f| f.records).sum();
    if args.json {
        let out = CheckJson { files: sources_len, records, games_valid: db.games.len(), anomalies: &db.anomalies };
        outln!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        for a in &db.anomalies {
            outln!("{a}");
        }
        outln!(
            "checked {} files, {records} records: {} valid games, {} anomalies",
            sources_len,
            db.games.len(),
            db.anomalies.len()
        );
        for f in db.files.iter().filter(|f| !f.skipped.is_empty()) {
            outln!("{}: skipped, sound but not for an 8x8 book from the start: {}", f.name, skipped_text(f));
        }
    }
    Ok(if db.anomalies.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// A file's skipped games by reason: `3 random start, 1 10x10 board`.
fn skipped_text(f: &crate::thor::FileSummary) -> String {
    let reasons: Vec<String> = f.skipped.iter().map(|(reason, n)| format!("{n} {reason}")).collect();
    reasons.join(", ")
}
