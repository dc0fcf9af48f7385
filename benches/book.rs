//! Book building and probing: positions scored per second with 1 and 2 threads on the
//! same positions (from the bundled archives), bytes per position, the time to open
//! a book, and the time per probe (warm, from a memory map).
//!
//! `cargo bench --bench book`.

use std::collections::HashMap;
use std::time::Instant;

use thorbook::board::Board;
use thorbook::book::Book;
use thorbook::book::{BuildConfig, GameLine};
use thorbook::fileio::read_mapped;
use thorbook::search::Settings;
use thorbook::testutil::build_steps::{self, collect, score_all};
use thorbook::testutil::Rng;
use thorbook::thor::{bundled_sources, LoadOptions, ThorDatabase};

fn main() {
    let db = ThorDatabase::load(&bundled_sources(), LoadOptions::default().with_strict(true)).unwrap();
    let games: Vec<GameLine> =
        db.games().iter().map(|g| GameLine { moves: g.moves_with_passes(), black_score: g.black_discs() }).collect();
    let mut config = BuildConfig::default();
    config.max_ply = 16;
    config.min_games = 2;
    config.search = Settings::default().with_depth(8).with_hash_mib(4);
    let nodes = collect(&games, config.max_ply, config.min_games).unwrap();
    println!("{} positions (bundled archives, ply <= 16, >= 2 games), leaf depth 8", nodes.len());
    let mut rates = Vec::new();
    let mut leaves = Vec::new();
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let start = Instant::now();
        leaves = pool.install(|| score_all(&nodes, &config, &HashMap::new())).unwrap();
        let secs = start.elapsed().as_secs_f64();
        let rate = nodes.len() as f64 / secs;
        println!("{threads} thread(s): {secs:.2} s, {rate:.1} positions/s");
        rates.push(rate);
    }
    println!("speed-up with 2 threads: {:.2}x", rates[1] / rates[0]);

    let mut records = build_steps::records(&nodes, &leaves);
    build_steps::back_up(&mut records, &config);
    let params = build_steps::params(&config).unwrap();
    let bytes = build_steps::write_book(&records, params).unwrap();
    println!(
        "{} bytes for {} positions: {:.2} bytes/position",
        bytes.len(),
        records.len(),
        bytes.len() as f64 / records.len() as f64
    );

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
    let dir = std::env::temp_dir().join(format!("thorbook-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, recs) in [("small", &records), ("1M", &big)] {
        let path = dir.join(format!("{name}.tbk"));
        std::fs::write(&path, build_steps::write_book(recs, params).unwrap()).unwrap();
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
