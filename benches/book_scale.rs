//! Books at cluster scale, on synthetic data (nothing of it is committed):
//!
//! - `cargo bench --bench book_scale -- plan POSITIONS SHARDS DIR` writes random games
//!   (up to ply 24, a draw unless over sooner; transcripts in `DIR/games.txt`) for at
//!   least POSITIONS positions, plans a build of them in SHARDS shards in DIR with
//!   `thorbook book plan build`, and writes every shard with synthetic leaves (a legal
//!   move, a score drawn from the key) instead of searching them, as
//!   `book-format.md`'s *Sharded builds* describes the plan's `nodes.bin` and the
//!   shard files;
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
use thorbook::testutil::Rng;

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
    // A game that ended keeps its score; one cut at the last ply is called a draw.
    let black_to_move = moves.len() % 2 == 0;
    let black_difference = match (board.is_game_over(), black_to_move) {
        (false, _) => 0,
        (true, true) => board.final_score(),
        (true, false) => -board.final_score(),
    };
    GameLine { moves, black_score: Some(u8::try_from(32 + black_difference / 2).expect("0..=64 discs")) }
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
    use std::io::Write;
    std::fs::create_dir_all(dir).unwrap();
    let games = plan_games(positions);
    let count = games.len();
    let transcripts = dir.join("games.txt");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&transcripts).unwrap());
    for game in games {
        // With its result, black's disc difference, so that `update` (which takes the
        // games as they are made) and the plan count the same games the same way.
        let black_difference = 2 * i32::from(game.black_score.expect("a result")) - 64;
        writeln!(out, "{} {black_difference:+}", thorbook::square::format_moves(&game.moves)).unwrap();
    }
    out.into_inner().unwrap().sync_all().unwrap();
    let start = Instant::now();
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_thorbook"))
        .args(["book", "plan", "build", "--strict", "--max-ply", &MAX_PLY.to_string(), "--min-games", "1"])
        .args(["--depth", "1", "--exact-at", "0", "--shards", &shards.to_string()])
        .arg("--work-dir")
        .arg(dir)
        .arg("-o")
        .arg(dir.join("book.tbk"))
        .arg(&transcripts)
        .status()
        .unwrap();
    assert!(status.success(), "book plan build failed");
    let planned = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let positions = write_synthetic_shards(dir);
    println!("planned {positions} positions from {count} random games in {shards} shards: {planned:.1} s");
    println!("wrote {shards} synthetic shards: {:.1} s", start.elapsed().as_secs_f64());
}

/// Writes every shard of the build plan in `dir` complete, each position's leaf its
/// first legal move (a pass if none) at depth 1 with a score drawn from its key, in
/// the layout `book-format.md` gives; returns the plan's positions.
fn write_synthetic_shards(dir: &std::path::Path) -> usize {
    use std::io::{BufWriter, Read, Write};
    let plan: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("plan.json")).unwrap()).unwrap();
    let digest = u64::from_str_radix(plan["digest"].as_str().unwrap(), 16).unwrap();
    let shards = plan["shards"].as_u64().unwrap() as u32;
    let mut nodes = std::io::BufReader::new(std::fs::File::open(dir.join("nodes.bin")).unwrap());
    let mut head = [0u8; 16];
    nodes.read_exact(&mut head).unwrap();
    assert_eq!(&head[..8], b"TBNODES1");
    let total = u64::from_le_bytes(head[8..16].try_into().unwrap());
    // Shards are contiguous key ranges, so the positions (in key order) fill them in
    // turn; the one being written, by index.
    type Shard = (u32, BufWriter<std::fs::File>, crc32fast::Hasher, u64);
    let finish = |(_, mut file, crc, entries): Shard| {
        file.write_all(b"TBSHDEND").unwrap();
        file.write_all(&entries.to_le_bytes()).unwrap();
        file.write_all(&crc.finalize().to_le_bytes()).unwrap();
        file.write_all(&[0; 4]).unwrap();
        file.into_inner().unwrap().sync_all().unwrap();
    };
    let open = |index: u32| -> Shard {
        let path = dir.join(format!("shard-{index:04}.tbs"));
        let mut file = BufWriter::new(std::fs::File::create(path).unwrap());
        let in_shard = plan["shard_positions"][index as usize].as_u64().unwrap();
        file.write_all(b"TBSHARD1").unwrap();
        file.write_all(&digest.to_le_bytes()).unwrap();
        file.write_all(&index.to_le_bytes()).unwrap();
        file.write_all(&shards.to_le_bytes()).unwrap();
        file.write_all(&in_shard.to_le_bytes()).unwrap();
        (index, file, crc32fast::Hasher::new(), 0)
    };
    // Finishes the shard being written, if any: the index of the next.
    let next = |current: Option<Shard>| match current {
        Some(done) => {
            let index = done.0 + 1;
            finish(done);
            index
        }
        None => 0,
    };
    let mut current: Option<Shard> = None;
    let mut node = [0u8; 40];
    for _ in 0..total {
        nodes.read_exact(&mut node).unwrap();
        let word = |i: usize| u64::from_le_bytes(node[i..i + 8].try_into().unwrap());
        let (key, board) = (word(0), Board { player: word(8), opponent: word(16) });
        let of = (((key >> 32) * u64::from(shards)) >> 32) as u32;
        while current.as_ref().is_none_or(|c| c.0 < of) {
            let index = next(current.take());
            current = Some(open(index));
        }
        let legal = board.legal_moves();
        let mv = if legal == 0 { 64 } else { legal.trailing_zeros() as u8 };
        let score = ((key % 129) as i64 - 64) as i8;
        let mut entry = [0u8; 16];
        entry[..8].copy_from_slice(&key.to_le_bytes());
        entry[8..12].copy_from_slice(&[mv, score as u8, 1, 0]);
        let crc = crc32fast::hash(&entry[..12]);
        entry[12..].copy_from_slice(&crc.to_le_bytes());
        let (_, file, crc, entries) = current.as_mut().unwrap();
        file.write_all(&entry).unwrap();
        crc.update(&entry);
        *entries += 1;
    }
    // The last shard, and any past the last position's (empty).
    for index in next(current)..shards {
        finish(open(index));
    }
    total as usize
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
