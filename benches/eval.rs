//! Speed of the evaluation: nanoseconds per static evaluation over every position of
//! the first 300 bundled Thor games, then midgame search speed (nodes per second, one
//! thread) at a fixed depth from positions of those games at 44, 36 and 28 empties,
//! for the trained and the classic evaluation. Each figure is the fastest of several
//! runs, so that a busy host does not blur comparisons between builds.
//!
//! `cargo bench --bench eval`

use std::hint::black_box;
use std::time::Instant;

use thorbook::book::BookSource;
use thorbook::engine::{Engine, EngineConfig};
use thorbook::eval::{ClassicEval, IncrementalEvaluator, PatternEval};
use thorbook::search::{Limits, Selectivity, Settings};
use thorbook::thor::{bundled_sources, LoadOptions, ThorDatabase};
use thorbook::{Board, Color, Move, Position};

fn positions() -> Vec<Vec<Board>> {
    let db = ThorDatabase::load(&bundled_sources(), LoadOptions::default().with_strict(true)).unwrap();
    db.games()
        .iter()
        .take(300)
        .map(|g| {
            let mut b = Board::START;
            let mut out = vec![b];
            for mv in g.moves_with_passes() {
                b = match mv {
                    Move::Pass => b.pass(),
                    Move::Place(sq) => b.play(sq).unwrap(),
                };
                out.push(b);
            }
            out
        })
        .collect()
}

/// Nanoseconds per evaluation: the fastest of many passes over `boards`, so that a
/// busy host (a shared VM) slows no measurement down.
fn static_speed<E: IncrementalEvaluator>(eval: &E, boards: &[Board]) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..TRIALS {
        let start = Instant::now();
        let mut sum = 0i64;
        for b in boards {
            sum += eval.evaluate(black_box(b)) as i64;
        }
        black_box(sum);
        best = best.min(start.elapsed().as_secs_f64());
    }
    best * 1e9 / boards.len() as f64
}

/// Passes timed per measurement; the fastest counts.
const TRIALS: usize = 200;
/// Runs of each search; the fastest counts (a search from an empty table is the same
/// every time).
const SEARCH_RUNS: usize = 5;

fn search_speed<E: IncrementalEvaluator>(
    eval: E,
    boards: &[Board],
    depth: u32,
    selectivity: Option<Selectivity>,
) -> (u64, f64) {
    let mut config = EngineConfig::default();
    (config.book, config.search) = (BookSource::None, Settings::default().with_threads(1).with_hash_mib(64));
    let mut engine = Engine::with_evaluator(config, eval).unwrap();
    let (mut nodes, mut secs) = (0, 0.0);
    for &board in boards {
        let pos = Position { board, side: Color::Black };
        let mut best = f64::INFINITY;
        let mut n = 0;
        for _ in 0..SEARCH_RUNS {
            engine.new_game();
            let start = Instant::now();
            let r = engine.search(&pos, limits(depth, selectivity));
            best = best.min(start.elapsed().as_secs_f64());
            n = r.nodes;
        }
        secs += best;
        nodes += n;
    }
    (nodes, secs)
}

fn main() {
    let games = positions();
    let all: Vec<Board> = games.iter().flatten().copied().collect();
    let pattern = PatternEval::bundled();
    println!("static evaluation, {} positions of 300 Thor games:", all.len());
    let p = static_speed(&pattern, &all);
    let c = static_speed(&ClassicEval, &all);
    println!("  pattern {p:.1} ns, classic {c:.1} ns per evaluation");

    let probes: Vec<Board> = [44usize, 36, 28]
        .iter()
        .flat_map(|&e| games.iter().take(4).map(move |g| g[60 - e]))
        .filter(|b| b.legal_moves() != 0)
        .collect();
    for (depth, selectivity, label) in [(9, None, "full width"), (12, Selectivity::from_sigmas(1.5), "1.5 sigma")] {
        let (pn, ps) = search_speed(pattern.clone(), &probes, depth, selectivity);
        let (cn, cs) = search_speed(ClassicEval, &probes, depth, selectivity);
        println!(
            "depth {depth} {label}, {} positions: pattern {pn} nodes {ps:.2} s {:.2} M nodes/s; classic {cn} nodes {cs:.2} s {:.2} M nodes/s ({:.2}x)",
            probes.len(),
            pn as f64 / ps / 1e6,
            cn as f64 / cs / 1e6,
            (pn as f64 / ps) / (cn as f64 / cs)
        );
    }
}

/// A search to `depth` at `selectivity` (`Limits` is `#[non_exhaustive]`: made from its
/// default, as any program outside the crate makes it).
fn limits(depth: u32, selectivity: Option<Selectivity>) -> Limits {
    let mut limits = Limits::default();
    limits.depth = Some(depth);
    limits.selectivity = selectivity;
    limits
}
