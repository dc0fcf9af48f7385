//! Book building and probing: positions scored per second with 1 and 2 threads on the
//! same positions (from the bundled archives, by the public `Builder`), bytes per
//! position, the time to open a book, and the time per probe (warm, from a memory map).
//!
//! `cargo bench --bench book`.

use std::time::Instant;

use thorbook::board::Board;
use thorbook::book::{Book, Builder, Record};
use thorbook::book::{BuildConfig, GameLine};
use thorbook::fileio::read_mapped;
use thorbook::search::Settings;
use thorbook::testutil::Rng;
use thorbook::thor::{bundled_sources, LoadOptions, ThorDatabase};

/// The tests' helpers: the book of any records, through the public text import.
#[allow(dead_code)]
#[path = "../tests/util.rs"]
mod util;

fn main() {
    let db = ThorDatabase::load(&bundled_sources(), LoadOptions::default().with_strict(true)).unwrap();
    let games: Vec<GameLine> = db.games().iter().map(GameLine::from).collect();
    let dir = std::env::temp_dir().join(format!("thorbook-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("built.tbk");
    let mut rates = Vec::new();
    let mut built = None;
    for threads in [1, 2] {
        let mut config = BuildConfig::default();
        config.max_ply = 16;
        config.min_games = 2;
        config.search = Settings::default().with_depth(8).with_hash_mib(4).with_threads(threads);
        let summary = Builder::new(config, &path).run(&games, &|_| {}).unwrap();
        let secs = summary.search_time.as_secs_f64();
        let rate = summary.searched as f64 / secs;
        if threads == 1 {
            println!("{} positions (bundled archives, ply <= 16, >= 2 games), leaf depth 8", summary.positions);
        }
        println!("{threads} thread(s): {secs:.2} s searching, {rate:.1} positions/s");
        rates.push(rate);
        built = Some(summary);
    }
    println!("speed-up with 2 threads: {:.2}x", rates[1] / rates[0]);
    let built = built.unwrap();
    println!(
        "{} bytes for {} positions: {:.2} bytes/position",
        built.size,
        built.positions,
        built.size as f64 / built.positions as f64
    );
    let book = Book::open(std::fs::read(&path).unwrap()).unwrap();
    let records: Vec<Record> = book.records().collect();
    let params = book.params();

    // A large synthetic book (1 M positions, random keys) for open and probe times.
    let mut rng = Rng(1);
    let mut big = records.clone();
    while big.len() < 1_000_000 {
        let mut r = records[big.len() % records.len()];
        r.key = rng.next_u64();
        big.push(r);
    }
    big.sort_by_key(|r| r.key);
    big.dedup_by_key(|r| r.key);
    for (name, recs) in [("small", &records), ("1M", &big)] {
        let path = dir.join(format!("{name}.tbk"));
        std::fs::write(&path, util::book_from_records(recs, params)).unwrap();
        let start = Instant::now();
        let book = Book::open(read_mapped(&path).unwrap()).unwrap();
        let open = start.elapsed();
        let start = Instant::now();
        book.verify().unwrap();
        let verify = start.elapsed();
        println!(
            "{name} book ({} positions): open {:.1} µs, full verify {:.2} ms",
            book.len(),
            open.as_secs_f64() * 1e6,
            verify.as_secs_f64() * 1e3
        );
        // Probe: present keys and absent boards, warm.
        let keys: Vec<u64> = (0..100_000).map(|i| recs[(i * 7919) % recs.len()].key).collect();
        let mut found = 0;
        let start = Instant::now();
        for _ in 0..10 {
            for &k in &keys {
                found += book.get(k).is_some() as usize;
            }
        }
        let per_get = start.elapsed().as_secs_f64() / 1e6;
        assert_eq!(found, 1_000_000);
        let boards: Vec<Board> = thorbook::testutil::random_games(3, 2_000).into_iter().take(100_000).collect();
        let start = Instant::now();
        let mut hits = 0;
        for b in &boards {
            hits += book.probe(b).is_some() as usize;
        }
        let per_probe = start.elapsed().as_secs_f64() / boards.len() as f64;
        println!(
            "  get by key {:.0} ns; probe of a board (canonical form + key + search) {:.0} ns ({hits} hits)",
            per_get * 1e9,
            per_probe * 1e9
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
