//! `solve`, `analyze`, `bestmove`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use serde::Serialize;

use super::engine_cmds::EngineArgs;
use super::PositionArgs;
use crate::engine::{Engine, EngineConfig, MoveSource};
use crate::obf::parse_obf;
use crate::search::problems::{Goal, ProblemResult, ProblemSetError, ProblemSolver};
use crate::search::Settings;
use crate::square::format_moves;

/// Arguments of `thorbook solve`.
#[derive(Args, Debug)]
pub struct SolveArgs {
    /// Problem file (FFO/Edax `.obf`: board, side, then `MV:+S;` scores).
    pub file: PathBuf,
    /// Threads.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Only win / draw / loss.
    #[arg(long)]
    pub wld: bool,
    /// Transposition table size in MiB.
    #[arg(long, default_value_t = 256)]
    pub hash_mib: usize,
    /// JSON lines output, one per problem.
    #[arg(long)]
    pub json: bool,
    /// The evaluation.
    #[command(flatten)]
    pub eval: super::EvalChoiceArgs,
}

pub(super) fn solve(args: SolveArgs) -> anyhow::Result<ExitCode> {
    let settings =
        Settings { hash_mib: args.hash_mib, threads: args.threads, eval: args.eval.source(), ..Settings::default() };
    let goal = if args.wld { Goal::WinDrawLoss } else { Goal::Exact };
    let solver = ProblemSolver::new(&settings, goal).map_err(|e| match e {
        ProblemSetError::Settings(e) => super::search_args::flag_error(e),
        e => e.into(),
    })?;
    let text = std::fs::read_to_string(&args.file).with_context(|| format!("reading {}", args.file.display()))?;
    let problems = parse_obf(&text).with_context(|| format!("{}", args.file.display()))?;
    anyhow::ensure!(!problems.is_empty(), "{} holds no positions", args.file.display());
    let stop = solver.stop_handle();
    ctrlc::set_handler(move || stop.store(true, std::sync::atomic::Ordering::Relaxed))?;
    if !args.json {
        outln!(
            "{:>4} {:>3} {:>5} {:>6} {:>14} {:>9} {:>12}  pv",
            "#",
            "emp",
            "move",
            "score",
            "nodes",
            "time s",
            "nodes/s"
        );
    }
    let (mut n, mut written) = (0, Ok(()));
    let totals = solver.run(&problems, &mut |r| {
        n += 1;
        if written.is_ok() {
            written = print_problem(n, r, args.json);
        }
    });
    written?;
    if !args.json {
        outln!(
            "total: {} position{}, {} nodes, {:.3} s, {:.0} nodes/s; wrong scores {}, wrong moves {}",
            totals.positions,
            if totals.positions == 1 { "" } else { "s" },
            totals.nodes,
            totals.seconds,
            totals.nodes_per_second(),
            totals.wrong_scores,
            totals.wrong_moves
        );
    }
    if totals.interrupted {
        eprintln!("interrupted: {} of {} positions solved", totals.positions, problems.len());
        return Ok(ExitCode::from(INTERRUPTED));
    }
    Ok(if totals.wrong_scores + totals.wrong_moves > 0 { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

/// One problem's line: JSON, or a table row numbered `n`.
fn print_problem(n: usize, r: &ProblemResult, json: bool) -> anyhow::Result<()> {
    if json {
        outln!("{}", serde_json::to_string(r)?);
        return Ok(());
    }
    let flag = match (r.score_ok, r.move_ok) {
        (Some(false), _) => "  WRONG SCORE",
        (_, Some(false)) => "  WRONG MOVE",
        _ => "",
    };
    outln!(
        "{:>4} {:>3} {:>5} {:>+6} {:>14} {:>9.3} {:>12.0}  {}{flag}",
        n,
        r.empties,
        r.best_move,
        r.score,
        r.nodes,
        r.seconds,
        r.nodes_per_second,
        r.pv
    );
    Ok(())
}

/// Arguments of `thorbook analyze` and `thorbook bestmove`.
#[derive(Args, Debug)]
pub struct EngineCommandArgs {
    #[command(flatten)]
    pub position: PositionArgs,
    #[command(flatten)]
    pub engine: EngineArgs,
    /// JSON output.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct MoveJson {
    #[serde(rename = "move")]
    mv: String,
    score: i32,
    pv: String,
    /// The book's score for the move (a book child's value or the leaf), if any.
    book_score: Option<i32>,
}

pub(super) fn analyze(args: EngineCommandArgs) -> anyhow::Result<ExitCode> {
    let pos = args.position.position()?;
    let mut engine = Engine::new(EngineConfig::try_from(&args.engine)?)?;
    super::jobs::stop_engine_on_ctrl_c(&engine)?;
    let a = engine.analyze(&pos, None);
    warn_of_book_damage(&engine);
    let code = if engine.stopped() { ExitCode::from(INTERRUPTED) } else { ExitCode::SUCCESS };
    let r = &a.search;
    let best_pv = format_moves(&a.pv);
    let moves: Vec<MoveJson> = r
        .moves
        .iter()
        .map(|m| MoveJson {
            mv: m.mv.to_string(),
            score: m.score,
            pv: if a.pv.first() == Some(&m.mv) { best_pv.clone() } else { m.mv.to_string() },
            book_score: a.book.iter().find(|b| b.mv == m.mv).map(|b| b.score),
        })
        .collect();
    if args.json {
        let v = serde_json::json!({
            "board": pos.to_board_text(),
            "side_to_move": pos.side.to_string(),
            "depth": r.depth,
            "exact": r.exact,
            "nodes": r.nodes,
            "seconds": r.elapsed.as_secs_f64(),
            "table_bytes": engine.table_bytes(),
            "moves": moves,
            "book": a.book,
            "book_line": format_moves(&a.book_line),
            "game_over": pos.board.is_game_over(),
            "opening": args.position.opening().map(|o| o.name),
        });
        outln!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(code);
    }
    out!("{}", pos.diagram());
    if let Some(o) = args.position.opening() {
        outln!("opening: {}", o.name);
    }
    if pos.board.is_game_over() {
        outln!("game over: {:+} for {}", pos.board.final_score(), pos.side);
        return Ok(code);
    }
    let kind = match (r.exact, r.depth) {
        (true, d) => format!("exact, depth {d}"),
        (false, 0) => "stopped before depth 1: moves ordered by the static evaluation".to_string(),
        (false, d) => format!("depth {d}"),
    };
    outln!("search: {} to move; {kind}, {} nodes in {:.3} s", pos.side, r.nodes, r.elapsed.as_secs_f64());
    outln!("  {:<5} {:>6}  {:>5} {:>6}  {:<24} pv", "move", "search", "book", "trust", "book source");
    for m in &moves {
        let book = a.book.iter().find(|b| b.mv.to_string() == m.mv);
        let (score, grade, source) = match book {
            Some(b) if b.in_book => {
                (format!("{:+}", b.score), b.trust.grade.to_string(), format!("book, {} games", b.games))
            }
            Some(b) if b.exact => (format!("{:+}", b.score), b.trust.grade.to_string(), "leaf, exact".to_string()),
            Some(b) => (
                format!("{:+}", b.score),
                b.trust.grade.to_string(),
                format!("leaf, depth {}", b.depth.unwrap_or(b.trust.leaf_depth)),
            ),
            None => (String::new(), String::new(), String::new()),
        };
        outln!("  {:<5} {:>+6}  {score:>5} {grade:>6}  {source:<24} {}", m.mv, m.score, m.pv);
    }
    if !a.book_line.is_empty() {
        outln!("book line: {}", format_moves(&a.book_line));
    }
    Ok(code)
}

pub(super) fn bestmove(args: EngineCommandArgs) -> anyhow::Result<ExitCode> {
    let pos = args.position.position()?;
    let mut engine = Engine::new(EngineConfig::try_from(&args.engine)?)?;
    super::jobs::stop_engine_on_ctrl_c(&engine)?;
    let m = engine.choose(&pos)?;
    warn_of_book_damage(&engine);
    let code = if engine.stopped() { ExitCode::from(INTERRUPTED) } else { ExitCode::SUCCESS };
    if engine.stopped() {
        eprintln!("interrupted: the move of the last finished iteration");
    }
    if args.json {
        outln!("{}", serde_json::to_string(&m)?);
        return Ok(code);
    }
    let detail = match m.source {
        MoveSource::Book => format!("book, score {:+}", m.score),
        MoveSource::Forced => format!("forced, score {:+}", m.score),
        MoveSource::Search => format!(
            "search, score {:+}, {} {}, {} nodes, {:.3} s",
            m.score,
            if m.exact { "exact" } else { "depth" },
            m.depth,
            m.nodes,
            m.time.as_secs_f64()
        ),
    };
    outln!("{} ({detail}, pv {})", m.mv, format_moves(&m.pv));
    Ok(code)
}

/// A damaged block of the engine's book is never used (the engine searches instead):
/// say so, once the move is chosen.
fn warn_of_book_damage<E: crate::eval::IncrementalEvaluator>(engine: &Engine<E>) {
    if let Some(damage) = engine.book().and_then(|b| b.damage()) {
        eprintln!("warning: the book is damaged ({damage}); its damaged part was not used");
    }
}

/// The exit code of a command stopped by Ctrl-C (128 + SIGINT), after printing what it
/// had found.
const INTERRUPTED: u8 = 130;
