//! WTHOR loading speed on the shared archives (`../shared/thor`, 1977–2015): bytes
//! to replayed games on one thread (thorbook's load against the `wthor` crate's parse
//! followed by a replay on thorbook's board, same bytes, same run), then thorbook's
//! full load on every thread (parse, replay, validate, then the index), then `stats`
//! queries.
//!
//! `cargo bench --bench thor`. Each figure is the best of several runs.

use std::path::PathBuf;
use std::time::Instant;

use thorbook::board::Board;
use thorbook::square::Square;
use thorbook::thor::{expand_paths, GameFilter, LoadOptions, Source, ThorDatabase};
use thorbook::Position;

fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut best = f64::INFINITY;
    let mut out = None;
    for _ in 0..runs {
        let start = Instant::now();
        let v = f();
        best = best.min(start.elapsed().as_secs_f64());
        out = Some(v);
    }
    (best, out.unwrap())
}

/// Whether a game's moves (as the `wthor` crate reads them) replay legally from the
/// start on thorbook's board, passes inferred.
fn replays(moves: &[wthor::game_archive::Position]) -> bool {
    let mut board = Board::START;
    for mv in moves {
        let Some(sq) = Square::from_coords(mv.file, mv.rank) else { return false };
        if board.legal_moves() == 0 {
            board = board.pass();
        }
        match board.play(sq) {
            Some(next) => board = next,
            None => return false,
        }
    }
    true
}

fn main() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/thor");
    if !dir.exists() {
        println!("skipping: {} is absent", dir.display());
        return;
    }
    let paths: Vec<PathBuf> =
        expand_paths(&[dir]).unwrap().into_iter().filter(|p| p.extension().is_some_and(|e| e == "wtb")).collect();
    let files: Vec<(String, Vec<u8>)> =
        paths.iter().map(|p| (p.display().to_string(), std::fs::read(p).unwrap())).collect();
    let bytes: usize = files.iter().map(|(_, b)| b.len()).sum();

    // One thread for both: the comparison is of work, not of parallelism.
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let sources: Vec<Source> = files.iter().map(|(name, b)| Source::from_vec(name, b.clone())).collect();
    let (ours, n) = best_of(10, || {
        one.install(|| ThorDatabase::load(&sources, LoadOptions::default().with_strict(true)).unwrap().games().len())
    });
    let (theirs, m) = best_of(10, || {
        files
            .iter()
            .map(|(_, b)| {
                let archive = wthor::parse::<wthor::game_archive::GameArchive>(b).unwrap();
                archive.games.iter().filter(|g| replays(&g.moves)).count()
            })
            .sum::<usize>()
    });
    assert_eq!(n, m, "both read and replay every game");
    println!("{} files, {n} games, {:.1} MB", files.len(), bytes as f64 / 1e6);
    println!("to replayed games, thorbook load       {:>8.2} ms  {:>6.2} M games/s", ours * 1e3, n as f64 / ours / 1e6);
    println!(
        "to replayed games, wthor 0.6 + replay  {:>8.2} ms  {:>6.2} M games/s",
        theirs * 1e3,
        m as f64 / theirs / 1e6
    );
    println!("thorbook / (wthor + replay) speed: {:.2}x (1 thread each)", theirs / ours);

    let all = expand_paths(&[PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/thor")]).unwrap();
    let (load, db) = best_of(5, || {
        let sources: Vec<Source> = all.iter().map(|p| Source::open(p).unwrap()).collect();
        ThorDatabase::load(&sources, LoadOptions::default().with_strict(true)).unwrap()
    });
    println!(
        "load + replay + validate {:>8.2} ms  ({} games, {} threads)",
        load * 1e3,
        db.games().len(),
        rayon::current_num_threads()
    );
    let (full, db) = best_of(5, || {
        let sources: Vec<Source> = all.iter().map(|p| Source::open(p).unwrap()).collect();
        ThorDatabase::load(&sources, LoadOptions::default().with_strict(true).with_index(true)).unwrap()
    });
    println!("... + position index     {:>8.2} ms  ({} games)", full * 1e3, db.games().len());

    for seq in ["", "f5", "f5d6c3d3c4", "f5d6c3d3c4f4f6f3e6e7", "f5f6e6f4e3c5c4e7c6e2"] {
        let pos = Position::from_moves(seq).unwrap();
        let (q, s) = best_of(20, || db.stats(&pos, &GameFilter::default()));
        println!("stats {:<22} {:>8.3} ms  ({} games)", if seq.is_empty() { "(start)" } else { seq }, q * 1e3, s.games);
    }
}
