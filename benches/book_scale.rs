//! Books at cluster scale, on synthetic data (nothing of it is committed):
//!
//! - `cargo bench --bench book_scale -- plan POSITIONS SHARDS DIR` makes a build plan
//!   of at least POSITIONS positions (from random games, up to ply 24) in SHARDS
//!   shards in DIR, and writes every shard with synthetic leaves (a legal move, a
//!   score drawn from the key) instead of searching them;
//! - `/usr/bin/time -v thorbook book assemble DIR -o BOOK` then measures the assembly
//!   (wall time, peak RSS);
//! - `cargo bench --bench book_scale -- probe BOOK` measures opening the book, a full
//!   verification and probes of present and absent positions.

use std::time::Instant;

use thorbook::board::Board;
use thorbook::book::Book;
use thorbook::book::{BuildConfig, GameLine};
use thorbook::fileio::read_mapped;
use thorbook::search::Settings;
use thorbook::square::Move;
use thorbook::testutil::{build_steps, Rng};

const MAX_PLY: u32 = 24;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["plan", positions, shards, dir] => plan(positions.parse().unwrap(), shards.parse().unwrap(), dir.as_ref()),
        ["probe", book] => probe(book.as_ref()),
        _ => eprintln!("usage: book_scale plan POSITIONS SHARDS DIR | probe BOOK (see the source's header)"),
    }
}

/// A random game of `MAX_PLY` moves (passes included), or shorter if it ends.
fn random_game(rng: &mut Rng) -> GameLine {
    let mut board = Board::START;
    let mut moves = Vec::with_capacity(MAX_PLY as usize);
    while moves.len() < MAX_PLY as usize && !board.is_game_over() {
        let legal = board.legal_moves();
        if legal == 0 {
            moves.push(Move::Pass);
            board = board.pass();
            continue;
        }
        let sq = rng.pick(legal);
        moves.push(Move::Place(sq));
        board = board.play(sq).expect("legal");
    }
    GameLine { moves, black_score: Some(32) }
}

fn plan(positions: usize, shards: u32, dir: &std::path::Path) {
    let mut rng = Rng(20);
    // About 14.3 new positions a random game to ply 24 at 45 M (16.6 at 1 M): a little
    // spare. The games are made as the plan reads them, one at a time, so that the
    // peak RSS is the library's.
    let count = positions / 14 + 1000;
    let games = (0..count).map(|_| random_game(&mut rng));
    let mut config = BuildConfig::default();
    config.max_ply = MAX_PLY;
    config.min_games = 1;
    config.search = Settings::default().with_depth(1).with_exact_at(0).with_hash_mib(1);
    let (positions, planned, written) = build_steps::synthetic_plan(dir, games, &config, shards);
    println!("planned {positions} positions from {count} random games in {shards} shards: {planned:.1} s");
    println!("wrote {shards} synthetic shards: {written:.1} s");
}

fn probe(path: &std::path::Path) {
    let start = Instant::now();
    let book = Book::open(read_mapped(path).unwrap()).unwrap();
    println!(
        "open ({} positions, {} bytes): {:.1} µs",
        book.len(),
        book.size_bytes(),
        start.elapsed().as_secs_f64() * 1e6
    );
    let start = Instant::now();
    book.verify().unwrap();
    println!("full verify: {:.1} ms", start.elapsed().as_secs_f64() * 1e3);
    let mut rng = Rng(7);
    let keys: Vec<u64> = book.records().map(|r| r.key).collect();
    let present: Vec<u64> = (0..1_000_000).map(|_| keys[rng.below(keys.len() as u64) as usize]).collect();
    let absent: Vec<u64> = (0..1_000_000).map(|_| rng.next_u64()).collect();
    for (name, keys) in [("present", &present), ("absent", &absent)] {
        let start = Instant::now();
        let found = keys.iter().filter(|&&k| book.get(k).is_some()).count();
        let per = start.elapsed().as_secs_f64() / keys.len() as f64;
        println!("get, {name} keys (1 M, random order, warm after verify): {:.0} ns each ({found} found)", per * 1e9);
    }
}
