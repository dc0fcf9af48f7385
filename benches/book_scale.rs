//! Books at cluster scale, on synthetic data (nothing of it is committed):
//!
//! - `cargo bench --bench book_scale -- plan POSITIONS SHARDS DIR` makes a build plan
//!   of at least POSITIONS positions (from random games, up to ply 24) in SHARDS
//!   shards in DIR, and writes every shard with synthetic leaves (a legal move, a
//!   score drawn from the key) instead of searching them;
//! - `/usr/bin/time -v thorbook book assemble DIR -o BOOK` then measures the assembly
//!   (wall time, peak RSS);
//! - `cargo bench --bench book_scale -- probe BOOK` measures opening the book, a full
//!   verification and probes of present and absent positions;
//! - `cargo bench --bench book_scale -- update POSITIONS BOOK NEW OUT` updates BOOK
//!   (the assembly of `plan POSITIONS`) with the plan's games and NEW more random games
//!   into OUT, and `... learn BOOK NEW OUT` learns NEW random games into BOOK: run under
//!   `/usr/bin/time -v` for their peak RSS (the leaves of new positions are searched at
//!   depth 1).

use std::time::Instant;

use thorbook::board::Board;
use thorbook::book::Book;
use thorbook::book::{BuildConfig, BuildEvent, Builder, GameLine, UpdateChoices};
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
        ["update", positions, book, new, out] => grow(
            book.as_ref(),
            plan_games(positions.parse().unwrap()).chain(new_games(new.parse().unwrap())),
            out,
            false,
        ),
        ["learn", book, new, out] => grow(book.as_ref(), new_games(new.parse().unwrap()), out, true),
        _ => eprintln!(
            "usage: book_scale plan POSITIONS SHARDS DIR | probe BOOK | update POSITIONS BOOK NEW OUT | \
             learn BOOK NEW OUT (see the source's header)"
        ),
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

/// The random games of `plan POSITIONS`, made as they are read.
fn plan_games(positions: usize) -> impl ExactSizeIterator<Item = GameLine> {
    let mut rng = Rng(20);
    // About 14.3 new positions a random game to ply 24 at 45 M (16.6 at 1 M): a little
    // spare.
    let count = positions / 14 + 1000;
    (0..count).map(move |_| random_game(&mut rng))
}

/// `count` random games the plan's do not include.
fn new_games(count: usize) -> impl Iterator<Item = GameLine> {
    let mut rng = Rng(21);
    (0..count).map(move |_| random_game(&mut rng))
}

fn plan(positions: usize, shards: u32, dir: &std::path::Path) {
    // The games are made as the plan reads them, one at a time, so that the peak RSS
    // is the library's.
    let games = plan_games(positions);
    let count = games.len();
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
        std::fs::metadata(path).unwrap().len(),
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

/// Updates `path` with `games`, or learns them into it, into `out`.
fn grow(path: &std::path::Path, games: impl Iterator<Item = GameLine>, out: &str, learn: bool) {
    let start = Instant::now();
    let book = Book::open(read_mapped(path).unwrap()).unwrap();
    // A build takes its games as a slice: 1.4 M games of 24 moves are about 70 MB.
    let games: Vec<GameLine> = games.collect();
    let made = start.elapsed().as_secs_f64();
    let mut choices = UpdateChoices::default();
    choices.search = Settings::default().with_hash_mib(1);
    let config = BuildConfig::update_of(&book.params(), choices).unwrap();
    let builder = Builder::new(config, out);
    let on_event = |e: BuildEvent| {
        if !matches!(e, BuildEvent::Scored { .. }) {
            eprintln!("{:.1} s: {e:?}", start.elapsed().as_secs_f64());
        }
    };
    let summary =
        if learn { builder.learn(&book, &games, &on_event) } else { builder.update(&book, &games, &on_event) };
    let summary = summary.unwrap();
    println!(
        "{} {} games into {} positions ({} searched, {:.1} s) in {:.1} s ({made:.1} s making the games)",
        if learn { "learned" } else { "updated with" },
        summary.games,
        summary.positions,
        summary.searched,
        summary.search_time.as_secs_f64(),
        summary.total_time.as_secs_f64()
    );
}
