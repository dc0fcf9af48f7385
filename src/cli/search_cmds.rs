//! `solve`, `analyze`, `bestmove`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Args;
use serde::Serialize;

use super::book_cmds::open_book;
use super::PositionArgs;
use crate::board::Board;
use crate::book::query::{book_line, book_moves, choose_move};
use crate::book::Book;
use crate::eval::ClassicEval;
use crate::fileio::Bytes;
use crate::obf::parse_obf;
use crate::position::Position;
use crate::search::{table_pv, Limits, Search, SearchResult, Solved, Solver, TranspositionTable};
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
    anyhow::ensure!(args.threads >= 1, "--threads must be at least 1");
    let text = std::fs::read_to_string(&args.file).with_context(|| format!("reading {}", args.file.display()))?;
    let problems = parse_obf(&text).with_context(|| format!("{}", args.file.display()))?;
    let pool = rayon::ThreadPoolBuilder::new().num_threads(args.threads).build()?;
    let tt = TranspositionTable::new(args.hash_mib);
    let stop = AtomicBool::new(false);
    let (mut total_nodes, mut total_secs, mut wrong_scores, mut wrong_moves) = (0u64, 0f64, 0, 0);
    if !args.json {
        println!(
            "{:>4} {:>3} {:>5} {:>6} {:>14} {:>9} {:>12}  pv",
            "#", "emp", "move", "score", "nodes", "time s", "nodes/s"
        );
    }
    for (n, p) in problems.iter().enumerate() {
        tt.new_search();
        let start = Instant::now();
        let (solved, nodes) = pool.install(|| {
            if args.wld {
                let mut solver = Solver::new(&tt, &stop, args.threads);
                let r = solver.solve(&p.position.board, -1, 1);
                (r, solver.nodes)
            } else {
                let mut search = Search::new(&ClassicEval, &tt, &stop, args.threads);
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
            println!("{}", serde_json::to_string(&line)?);
        } else {
            let flag = match (score_ok, move_ok) {
                (Some(false), _) => "  WRONG SCORE",
                (_, Some(false)) => "  WRONG MOVE",
                _ => "",
            };
            println!(
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
        println!(
            "total: {} positions, {total_nodes} nodes, {total_secs:.3} s, {:.0} nodes/s; wrong scores {wrong_scores}, wrong moves {wrong_moves}",
            problems.len(),
            total_nodes as f64 / total_secs.max(1e-9)
        );
    }
    Ok(if wrong_scores + wrong_moves > 0 { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

/// Search limits and resources shared by `analyze` and `bestmove`.
#[derive(Args, Debug, Clone)]
pub struct EngineArgs {
    /// Search this many plies deep.
    #[arg(long, conflicts_with_all = ["exact"])]
    pub depth: Option<u32>,
    /// Time budget in seconds.
    #[arg(long)]
    pub time: Option<f64>,
    /// Node budget.
    #[arg(long)]
    pub nodes: Option<u64>,
    /// Search to the end of the game (exact scores).
    #[arg(long)]
    pub exact: bool,
    /// Threads.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Transposition table size in MiB.
    #[arg(long, default_value_t = 256)]
    pub hash_mib: usize,
    /// Opening book consulted before searching (default: the bundled book).
    #[arg(long, conflicts_with = "no_book")]
    pub book: Option<PathBuf>,
    /// Do not consult any book.
    #[arg(long)]
    pub no_book: bool,
    /// Play uniformly among book moves within this many discs of the best.
    #[arg(long, default_value_t = 0)]
    pub book_randomness: i32,
    /// Seed for --book-randomness (default: from the clock).
    #[arg(long)]
    pub seed: Option<u64>,
}

impl EngineArgs {
    /// The book to consult, if any.
    fn book(&self) -> anyhow::Result<Option<Book<Bytes>>> {
        if self.no_book {
            return Ok(None);
        }
        anyhow::ensure!(self.book_randomness >= 0, "--book-randomness must be 0 or more discs");
        Ok(Some(open_book(self.book.as_deref())?))
    }

    fn seed(&self) -> u64 {
        self.seed.unwrap_or_else(|| {
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
        })
    }

    fn limits(&self, default_depth: u32) -> anyhow::Result<Limits> {
        anyhow::ensure!(self.threads >= 1, "--threads must be at least 1");
        if let Some(t) = self.time {
            anyhow::ensure!(t > 0.0 && t.is_finite(), "--time must be a positive number of seconds, got {t}");
        }
        let unlimited = self.depth.is_none() && self.time.is_none() && self.nodes.is_none() && !self.exact;
        Ok(Limits {
            depth: if unlimited { Some(default_depth) } else { self.depth },
            nodes: self.nodes,
            time: self.time.map(Duration::from_secs_f64),
            exact: self.exact,
            exclude: 0,
        })
    }

    /// Runs a search of `board` on a pool of the requested size.
    pub fn search(&self, board: &Board, default_depth: u32, all_moves: bool) -> anyhow::Result<SearchResult> {
        let limits = self.limits(default_depth)?;
        let pool = rayon::ThreadPoolBuilder::new().num_threads(self.threads).build()?;
        let tt = TranspositionTable::new(self.hash_mib);
        let stop = AtomicBool::new(false);
        Ok(pool.install(|| Search::new(&ClassicEval, &tt, &stop, self.threads).run(board, limits, all_moves)))
    }
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
}

#[derive(Serialize)]
struct AnalysisJson {
    board: String,
    side_to_move: String,
    depth: u32,
    exact: bool,
    nodes: u64,
    seconds: f64,
    moves: Vec<MoveJson>,
}

fn analysis_json(pos: &Position, r: &SearchResult, tt_pv: impl Fn(Move) -> String) -> AnalysisJson {
    AnalysisJson {
        board: pos.to_board_text(),
        side_to_move: pos.side.to_string(),
        depth: r.depth,
        exact: r.exact,
        nodes: r.nodes,
        seconds: r.elapsed.as_secs_f64(),
        moves: r.moves.iter().map(|m| MoveJson { mv: m.mv.to_string(), score: m.score, pv: tt_pv(m.mv) }).collect(),
    }
}

pub(super) fn analyze(args: EngineCommandArgs) -> anyhow::Result<ExitCode> {
    let pos = args.position.position()?;
    let book = args.engine.book()?;
    let in_book = book.as_ref().map(|b| book_moves(b, &pos)).unwrap_or_default();
    let line = book.as_ref().map(|b| book_line(b, &pos, 60)).unwrap_or_default();
    let r = args.engine.search(&pos.board, 10, true)?;
    // The principal variation follows the book while the book knows the position.
    let best_pv = if !line.is_empty() && in_book.first().map(|m| m.mv) == r.best_move() {
        format_moves(&line)
    } else {
        format_moves(&r.pv)
    };
    let out = analysis_json(&pos, &r, |mv| if Some(mv) == r.best_move() { best_pv.clone() } else { mv.to_string() });
    if args.json {
        let mut v = serde_json::to_value(&out)?;
        v["book"] = serde_json::to_value(&in_book)?;
        v["book_line"] = serde_json::Value::String(format_moves(&line));
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", pos.diagram());
    if !in_book.is_empty() {
        println!("book:");
        for m in &in_book {
            let src = if m.in_book { format!("book, {} games", m.games) } else { format!("leaf, depth {}", m.depth) };
            println!("  {:<5} {:>+4}  {src}", m.mv.to_string(), m.score);
        }
        println!("  book line: {}", format_moves(&line));
    }
    if r.moves.is_empty() {
        println!("game over: {:+} for {}", pos.board.final_score(), pos.side);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "search: {} to move; {} {}, {} nodes in {:.3} s",
        pos.side,
        if r.exact { "exact, depth" } else { "depth" },
        r.depth,
        r.nodes,
        r.elapsed.as_secs_f64()
    );
    for m in &out.moves {
        println!("  {:<5} {:>+4}  {}", m.mv, m.score, m.pv);
    }
    Ok(ExitCode::SUCCESS)
}

pub(super) fn bestmove(args: EngineCommandArgs) -> anyhow::Result<ExitCode> {
    let pos = args.position.position()?;
    if pos.board.is_game_over() {
        anyhow::bail!("the game is over ({:+} for {}): there is no move", pos.board.final_score(), pos.side);
    }
    // Check the search limits even when the book answers: bad arguments are errors.
    args.engine.limits(12)?;
    let book = args.engine.book()?;
    if let Some(b) = &book {
        if let Some((mv, score)) = choose_move(b, &pos, args.engine.book_randomness, args.engine.seed()) {
            let after = pos.try_play(mv, 1)?;
            let mut pv = vec![mv];
            pv.extend(book_line(b, &after, 59));
            if args.json {
                let out = serde_json::json!({
                    "move": mv.to_string(), "score": score, "source": "book", "pv": format_moves(&pv),
                });
                println!("{out}");
            } else {
                println!("{mv} (book, score {score:+}, pv {})", format_moves(&pv));
            }
            return Ok(ExitCode::SUCCESS);
        }
    }
    let r = args.engine.search(&pos.board, 12, false)?;
    let best = r.best_move().expect("the game is not over");
    if args.json {
        let out = serde_json::json!({
            "move": best.to_string(),
            "score": r.score(),
            "source": "search",
            "depth": r.depth,
            "exact": r.exact,
            "nodes": r.nodes,
            "seconds": r.elapsed.as_secs_f64(),
            "pv": format_moves(&r.pv),
        });
        println!("{out}");
    } else {
        println!(
            "{best} (search, score {:+}, {} {}, {} nodes, {:.3} s, pv {})",
            r.score().unwrap_or(0),
            if r.exact { "exact" } else { "depth" },
            r.depth,
            r.nodes,
            r.elapsed.as_secs_f64(),
            format_moves(&r.pv)
        );
    }
    Ok(ExitCode::SUCCESS)
}
