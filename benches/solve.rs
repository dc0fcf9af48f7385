//! Exact solving of FFO #20–39 (`../shared/ffo/fforum-20-39.obf`) with 1 and 2 threads:
//! per-position nodes and times, totals, nodes/s and the speed-up. Then the margin by
//! which time-limited searches overshoot their deadline.
//!
//! `cargo bench --bench solve` (or `-- FILE.obf` for another problem set).

use std::time::{Duration, Instant};

use thorbook::book::BookSource;
use thorbook::engine::{Engine, EngineConfig};
use thorbook::obf::parse_obf;
use thorbook::search::{Limits, Settings};
use thorbook::testutil::{random_position, Rng};
use thorbook::{Color, Position};

/// An engine without a book: `threads` search threads, a table of `hash_mib` MiB, the
/// bundled evaluation.
fn engine(threads: usize, hash_mib: usize) -> Engine {
    let search = Settings::default().with_threads(threads).with_hash_mib(hash_mib);
    let mut config = EngineConfig::default();
    (config.book, config.search) = (BookSource::None, search);
    Engine::new(config).unwrap()
}

fn main() {
    let path = std::env::args()
        .skip(1)
        .find(|a| a.ends_with(".obf"))
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/ffo/fforum-20-39.obf").to_string());
    let Ok(text) = std::fs::read_to_string(&path) else {
        println!("skipping: {path} is absent");
        return;
    };
    let problems = parse_obf(&text).unwrap();
    let mut totals = Vec::new();
    for threads in [1, 2] {
        println!("{threads} thread(s): {path}");
        println!(
            "{:>3} {:>4} {:>5} {:>6} {:>13} {:>9} {:>10}",
            "#", "emp", "move", "score", "nodes", "seconds", "Mnodes/s"
        );
        let (mut nodes, mut secs) = (0u64, 0f64);
        // One table for the whole set, as `thorbook solve` does: allocating and zeroing
        // 256 MiB per position would be timed as serial work.
        let mut engine = engine(threads, 256);
        for (i, p) in problems.iter().enumerate() {
            let start = Instant::now();
            let r = engine.search(&p.position, exact());
            let s = start.elapsed().as_secs_f64();
            assert_eq!(r.score(), p.best_score(), "line {}", p.line);
            println!(
                "{:>3} {:>4} {:>5} {:>+6} {:>13} {:>9.3} {:>10.1}",
                i + 1,
                p.position.board.empty_count(),
                r.best_move().unwrap().to_string(),
                r.score().unwrap(),
                r.nodes,
                s,
                r.nodes as f64 / s / 1e6
            );
            nodes += r.nodes;
            secs += s;
        }
        println!("total: {nodes} nodes, {secs:.3} s, {:.1} M nodes/s\n", nodes as f64 / secs / 1e6);
        totals.push(secs);
    }
    println!("speed-up with 2 threads: {:.2}x", totals[0] / totals[1]);

    // Time control: how far past its budget a time-limited search returns.
    let mut rng = Rng(7);
    let mut worst = Duration::ZERO;
    let mut engine = engine(1, 64);
    for i in 0..12 {
        let pos = Position { board: random_position(&mut rng, 24 + i * 2), side: Color::Black };
        engine.new_game();
        let budget = Duration::from_millis(300);
        let start = Instant::now();
        let r = engine.search(&pos, timed(budget));
        assert!(r.best_move().is_some());
        worst = worst.max(start.elapsed().saturating_sub(budget));
    }
    println!("time limit 300 ms: worst overshoot {:.2} ms over 12 positions", worst.as_secs_f64() * 1e3);
}

/// An exact solve (`Limits` is `#[non_exhaustive]`: made from its default).
fn exact() -> Limits {
    let mut limits = Limits::default();
    limits.exact = true;
    limits
}

/// A search for `budget`.
fn timed(budget: Duration) -> Limits {
    let mut limits = Limits::default();
    limits.time = Some(budget);
    limits
}
