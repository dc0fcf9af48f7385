//! `thorbook review`: a game's decisions scored against the book, a search or the
//! exact solver ([`crate::engine::review`]), as a table, JSON lines or a value graph;
//! or every game of archives (`--all`), in parallel and resumable, as JSON lines.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::Mutex;

use anyhow::Context;
use clap::Args;

use super::archive_args::ArchiveArgs;
use super::engine_cmds::EngineArgs;
use super::progress::Meter;
use super::thor_cmds::GameFieldArgs;
use crate::engine::review::{review_game, review_games, AnalysisStore, BatchError, GameReview, ValueSource};
use crate::engine::{Engine, EngineConfig};
use crate::fileio::IoError;
use crate::position::Position;
use crate::square::{parse_move_sequence, Move};
use crate::thor::{GameId, SortKey, ThorDatabase};

/// Arguments of `thorbook review`.
#[derive(Args, Debug)]
pub struct ReviewArgs {
    /// The game's moves from the start position (`f5d6c3…`; passes may be left out).
    #[arg(long, conflicts_with_all = ["game", "all"], required_unless_present_any = ["game", "all"])]
    pub moves: Option<String>,
    /// The N-th game (from 1) that `thorbook thor games` lists for the same archives
    /// and filters (sorted by year).
    #[arg(long, value_name = "N", conflicts_with = "all")]
    pub game: Option<usize>,
    /// Every game of the archives that passes the filters, in parallel on every core,
    /// one JSON line per game written to --output. Run again with the same output to
    /// resume: the games already written are skipped.
    #[arg(long, requires = "output", conflicts_with_all = ["json", "svg"])]
    pub all: bool,
    /// With --all: the JSON lines file (appended to).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// With --all: games reviewed at once (default: one per core).
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
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
    /// Also draw the value along the game (black's view) as SVG to FILE.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    #[command(flatten)]
    pub store: StoreArgs,
}

/// Where reviews keep their analyses.
#[derive(Args, Debug, Clone, Default)]
pub struct StoreArgs {
    /// The analysis store: positions searched before at the same settings are not
    /// searched again, and those searched now are kept (default: reviews.jsonl in
    /// $THORBOOK_CACHE_DIR, $XDG_CACHE_HOME/thorbook or ~/.cache/thorbook).
    #[arg(long, value_name = "FILE", conflicts_with = "no_store")]
    pub store: Option<PathBuf>,
    /// Search every position again, keeping nothing.
    #[arg(long)]
    pub no_store: bool,
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
        let g = db.own_game(id);
        let title = title(&db, id);
        let theoretical = g.theoretical_discs().map(|t| (t, g.depth));
        Ok(Reviewed { moves: g.moves_with_passes(), title: Some(title), theoretical })
    }
}

/// Where reviews keep their analyses when no `--store` is given; `None` when no cache
/// directory can be named (no home directory).
fn default_store() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    var("THORBOOK_CACHE_DIR")
        .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("thorbook")))
        .or_else(|| var("HOME").map(|d| d.join(".cache/thorbook")))
        .map(|d| d.join("reviews.jsonl"))
}

impl StoreArgs {
    /// The store asked for (`None`: --no-store, or no cache directory to keep it in).
    pub(super) fn open(&self) -> anyhow::Result<Option<AnalysisStore>> {
        if self.no_store {
            return Ok(None);
        }
        let Some(path) = self.store.clone().or_else(default_store) else {
            eprintln!("note: no cache directory (set THORBOOK_CACHE_DIR or give --store): nothing is kept");
            return Ok(None);
        };
        let store = AnalysisStore::open(&path).context("cannot open the analysis store (--no-store goes without)")?;
        if let (n @ 1.., Some(first)) = store.damaged_lines() {
            eprintln!("warning: {}: {n} damaged lines skipped (the first is line {first})", path.display());
        }
        Ok(Some(store))
    }
}

pub(super) fn review(args: ReviewArgs) -> anyhow::Result<ExitCode> {
    if args.all {
        return review_all(&args);
    }
    if args.jobs.is_some() || args.output.is_some() {
        return Err(super::flags::usage("--output and --jobs are for --all"));
    }
    let game = args.game()?;
    let store = args.store.open()?;
    let mut engine = Engine::new(EngineConfig::try_from(&args.engine)?)?;
    super::jobs::stop_engine_on_ctrl_c(&engine)?;
    let meter = Meter::new("review", "moves");
    let review =
        review_game(&mut engine, &Position::START, &game.moves, store.as_ref(), &|p| meter.update(p.done, p.total))?;
    meter.finish();
    if let Some(store) = &store {
        store.sync()?;
    }
    if let Some(path) = &args.svg {
        crate::fileio::atomic_write(path, review.value_graph_svg().as_bytes()).map_err(IoError::at(path))?;
    }
    if args.json {
        for p in &review.plies {
            outln!("{}", serde_json::to_string(p)?);
        }
        outln!(
            "{}",
            serde_json::to_string(
                &serde_json::json!({ "summary": summary_json(&review, game.title.as_deref(), game.theoretical) })
            )?
        );
    } else {
        print_table(&review, &game)?;
    }
    if review.interrupted {
        eprintln!("interrupted: the decisions reviewed until then are shown");
        return Ok(ExitCode::from(130));
    }
    Ok(ExitCode::SUCCESS)
}

/// `review --all`: every game passing the filters, a JSON line each in `--output`.
fn review_all(args: &ReviewArgs) -> anyhow::Result<ExitCode> {
    let output = args.output.as_deref().context("--all needs --output FILE")?;
    let db = args.archives.load(false)?;
    let mut ids = db.select(&args.games.filter(None));
    db.sort_games(&mut ids, SortKey::Year);
    let done = reviewed_already(output)?;
    // (the game's number in the listing, from 1; its id)
    let todo: Vec<(usize, GameId)> = ids
        .iter()
        .enumerate()
        .filter(|(_, &id)| !done.contains(&game_key(&db, id)))
        .map(|(i, &id)| (i + 1, id))
        .collect();
    if !done.is_empty() {
        eprintln!("{}: {} games reviewed already, {} to go", output.display(), ids.len() - todo.len(), todo.len());
    }
    let store = args.store.open()?;
    let jobs = args.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from)).max(1);
    let config = EngineConfig::try_from(&args.engine)?;
    let stop = crate::work::StopHandle::new();
    {
        let stop = stop.clone();
        ctrlc::set_handler(move || stop.stop())?;
    }
    let file = std::fs::OpenOptions::new().create(true).append(true).open(output).map_err(IoError::at(output))?;
    let out = Mutex::new(file);
    let meter = Meter::new("review", "games");
    let written = std::sync::atomic::AtomicUsize::new(0);
    let write_error = Mutex::new(None);
    let games: Vec<Vec<Move>> = todo.iter().map(|&(_, id)| db.own_game(id).moves_with_passes()).collect();
    let result = review_games(&config, &games, jobs, store.as_ref(), &stop, &|i, review| {
        let (number, id) = todo[i];
        let g = db.own_game(id);
        let theoretical = g.theoretical_discs().map(|t| (t, g.depth));
        let line = serde_json::to_vec(&serde_json::json!({
            "number": number,
            "game": db.game_json(g, false),
            "summary": summary_json(&review, Some(&title(&db, id)), theoretical),
            "plies": review.plies,
        }));
        // One write per line: a line is whole or, after a crash, cut at the end.
        let written_ok = line.map_err(anyhow::Error::from).and_then(|mut line| {
            line.push(b'\n');
            let mut f = out.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            f.write_all(&line).map_err(|e| IoError::new(output, e).into())
        });
        match written_ok {
            Ok(()) => {
                let n = written.fetch_add(1, Ordering::Relaxed) + 1;
                meter.update(n as u64, todo.len() as u64);
                true
            }
            Err(e) => {
                write_error.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get_or_insert(e);
                false
            }
        }
    });
    meter.finish();
    out.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner).sync_data().map_err(IoError::at(output))?;
    if let Some(store) = &store {
        store.sync()?;
    }
    if let Some(e) = write_error.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner) {
        return Err(e);
    }
    result.map_err(|e| match e {
        BatchError::Game { index, source } => {
            let g = db.own_game(todo[index].1);
            anyhow::anyhow!("game {} ({} record {}): {source}", todo[index].0, db.file_name(g), g.record)
        }
        e => e.into(),
    })?;
    let n = written.load(Ordering::Relaxed);
    eprintln!("{n} games reviewed into {}", output.display());
    if stop.is_stopped() {
        eprintln!("interrupted: {} games to go; the same command resumes", todo.len() - n);
        return Ok(ExitCode::from(130));
    }
    Ok(ExitCode::SUCCESS)
}

/// What identifies a game across runs: its file's name and record.
fn game_key(db: &ThorDatabase, id: GameId) -> (String, u32) {
    let g = db.own_game(id);
    (db.file_name(g).to_string(), g.record)
}

/// The games `output` holds already (file name and record of each whole line). A last
/// line cut short by a crash is cut off, so that the next game starts a line.
fn reviewed_already(output: &Path) -> anyhow::Result<std::collections::HashSet<(String, u32)>> {
    let text = match std::fs::read(output) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Default::default()),
        Err(e) => return Err(IoError::new(output, e).into()),
    };
    let whole = text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    if whole < text.len() {
        eprintln!(
            "{}: the last line was cut short ({} bytes); it is reviewed again",
            output.display(),
            text.len() - whole
        );
        let f = std::fs::OpenOptions::new().write(true).open(output).map_err(IoError::at(output))?;
        f.set_len(whole as u64).map_err(IoError::at(output))?;
        f.sync_data().map_err(IoError::at(output))?;
    }
    let mut done = std::collections::HashSet::new();
    for (i, line) in text[..whole].split(|&b| b == b'\n').enumerate().filter(|(_, l)| !l.is_empty()) {
        let v: serde_json::Value = serde_json::from_slice(line)
            .with_context(|| format!("{} line {}: not a review line (another file?)", output.display(), i + 1))?;
        let key = (v["game"]["file"].as_str(), v["game"]["record"].as_u64().and_then(|r| u32::try_from(r).ok()));
        match key {
            (Some(file), Some(record)) => done.insert((file.to_string(), record)),
            _ => anyhow::bail!("{} line {}: no game file and record", output.display(), i + 1),
        };
    }
    Ok(done)
}

fn title(db: &ThorDatabase, id: GameId) -> String {
    let g = db.own_game(id);
    format!(
        "{} {}: {} (black) - {} (white), {}",
        g.year,
        db.tournament_name(g),
        db.black_name(g),
        db.white_name(g),
        g.black_discs().map_or("no result".to_string(), |b| format!("{b}-{}", 64 - b))
    )
}

/// The review's summary with what the record says: its title and theoretical score
/// (black's discs at that many empties).
fn summary_json(r: &GameReview, title: Option<&str>, theoretical: Option<(u8, u8)>) -> serde_json::Value {
    let mut v = r.summary_json();
    v["game"] = serde_json::json!(title);
    v["theoretical_black_discs"] = serde_json::json!(theoretical.map(|t| t.0));
    v["theoretical_empties"] = serde_json::json!(theoretical.map(|t| t.1));
    v
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
