//! `solve`, `analyze`, `bestmove`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use anyhow::Context;
use clap::Args;
use serde::Serialize;

use super::engine_cmds::EngineArgs;
use super::PositionArgs;
use crate::engine::{Engine, EngineConfig, MoveSource};
use crate::obf::parse_obf;
use crate::search::{table_pv, Limits, Search, Solved, Solver};
use crate::square::{format_moves, Move};

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

#[derive(Serialize)]
struct SolveLine {
    line: usize,
    empties: u32,
    best_move: String,
    score: i32,
    expected_score: Option<i32>,
    score_ok: Option<bool>,
    move_ok: Option<bool>,
    nodes: u64,
    seconds: f64,
    nodes_per_second: f64,
    pv: String,
}

pub(super) fn solve(args: SolveArgs) -> anyhow::Result<ExitCode> {
    let settings = crate::search::Settings {
        hash_mib: args.hash_mib,
        threads: args.threads,
        eval: args.eval.source(),
        ..crate::search::Settings::default()
    };
    let tt = settings.table().map_err(super::search_args::flag_error)?;
    let eval = settings.eval.load()?;
    let text = std::fs::read_to_string(&args.file).with_context(|| format!("reading {}", args.file.display()))?;
    let problems = parse_obf(&text).with_context(|| format!("{}", args.file.display()))?;
    anyhow::ensure!(!problems.is_empty(), "{} holds no positions", args.file.display());
    let pool = rayon::ThreadPoolBuilder::new().num_threads(args.threads).build()?;
    let stop = AtomicBool::new(false);
    let (mut total_nodes, mut total_secs, mut wrong_scores, mut wrong_moves) = (0u64, 0f64, 0, 0);
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
    for (n, p) in problems.iter().enumerate() {
        tt.new_search();
        let start = Instant::now();
        let (solved, nodes) = pool.install(|| {
            if args.wld {
                let mut solver = Solver::new(&tt, &stop, args.threads).with_eval(&eval);
                let r = solver.solve(&p.position.board, -1, 1);
                (r, solver.nodes)
            } else {
                let mut search = Search::new(&eval, &tt, &stop, args.threads);
                let r = search.run(&p.position.board, Limits { exact: true, ..Limits::default() }, false);
                let best = r.moves.first().map(|m| Solved { score: m.score, best: Some(m.mv) });
                (best.unwrap_or(Solved { score: p.position.board.final_score(), best: None }), r.nodes)
            }
        });
        let secs = start.elapsed().as_secs_f64();
        let expected = p.best_score().map(|s| if args.wld { s.signum() } else { s });
        let score = if args.wld { solved.score.signum() } else { solved.score };
        let score_ok = expected.map(|e| e == score);
        let best = solved.best.unwrap_or(Move::Pass);
        let move_ok = if p.scores.is_empty() || args.wld { None } else { Some(p.best_moves().contains(&best)) };
        wrong_scores += (score_ok == Some(false)) as usize;
        wrong_moves += (move_ok == Some(false)) as usize;
        total_nodes += nodes;
        total_secs += secs;
        let pv = format_moves(&table_pv(&tt, &p.position.board, 60));
        let line = SolveLine {
            line: p.line,
            empties: p.position.board.empty_count(),
            best_move: best.to_string(),
            score,
            expected_score: expected,
            score_ok,
            move_ok,
            nodes,
            seconds: secs,
            nodes_per_second: nodes as f64 / secs.max(1e-9),
            pv,
        };
        if args.json {
            outln!("{}", serde_json::to_string(&line)?);
        } else {
            let flag = match (score_ok, move_ok) {
                (Some(false), _) => "  WRONG SCORE",
                (_, Some(false)) => "  WRONG MOVE",
                _ => "",
            };
            outln!(
                "{:>4} {:>3} {:>5} {:>+6} {:>14} {:>9.3} {:>12.0}  {}{flag}",
                n + 1,
                line.empties,
                line.best_move,
                line.score,
                line.nodes,
                line.seconds,
                line.nodes_per_second,
                line.pv
            );
        }
    }
    if !args.json {
        outln!(
            "total: {} positions, {total_nodes} nodes, {total_secs:.3} s, {:.0} nodes/s; wrong scores {wrong_scores}, wrong moves {wrong_moves}",
            problems.len(),
            total_nodes as f64 / total_secs.max(1e-9)
        );
    }
    Ok(if wrong_scores + wrong_moves > 0 { ExitCode::FAILURE } else { ExitCode::SUCCESS })
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
    let a = engine.analyze(&pos, None);
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
            "moves": moves,
            "book": a.book,
            "book_line": format_moves(&a.book_line),
            "game_over": pos.board.is_game_over(),
            "opening": args.position.opening().map(|o| o.name),
        });
        outln!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(ExitCode::SUCCESS);
    }
    out!("{}", pos.diagram());
    if let Some(o) = args.position.opening() {
        outln!("opening: {}", o.name);
    }
    if pos.board.is_game_over() {
        outln!("game over: {:+} for {}", pos.board.final_score(), pos.side);
        return Ok(ExitCode::SUCCESS);
    }
    let kind = match (r.exact, r.depth) {
        (true, d) => format!("exact, depth {d}"),
        (false, 0) => "stopped before depth 1: moves ordered by the static evaluation".to_string(),
        (false, d) => format!("depth {d}"),
    };
    outln!("search: {} to move; {kind}, {} nodes in {:.3} s", pos.side, r.nodes, r.elapsed.as_secs_f64());
    outln!("  {:<5} {:>6}  {:>5}  {:<24} pv", "move", "search", "book", "book source");
    for m in &moves {
        let book = a.book.iter().find(|b| b.mv.to_string() == m.mv);
        let (score, source) = match book {
            Some(b) if b.in_book => (format!("{:+}", b.score), format!("book, {} games", b.games)),
            Some(b) if b.exact => (format!("{:+}", b.score), "leaf, exact".to_string()),
            Some(b) => (format!("{:+}", b.score), format!("leaf, depth {}", b.depth)),
            None => (String::new(), String::new()),
        };
        outln!("  {:<5} {:>+6}  {score:>5}  {source:<24} {}", m.mv, m.score, m.pv);
    }
    if !a.book_line.is_empty() {
        outln!("book line: {}", format_moves(&a.book_line));
    }
    Ok(ExitCode::SUCCESS)
}

pub(super) fn bestmove(args: EngineCommandArgs) -> anyhow::Result<ExitCode> {
    let pos = args.position.position()?;
    let mut engine = Engine::new(EngineConfig::try_from(&args.engine)?)?;
    let m = engine.choose(&pos)?;
    if args.json {
        outln!("{}", serde_json::to_string(&m)?);
        return Ok(ExitCode::SUCCESS);
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
    Ok(ExitCode::SUCCESS)
}
