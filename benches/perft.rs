//! perft(DEPTH) from the start position, single-threaded, on thorbook and on the
//! `magpie` crate in the same run (so the ratio survives a noisy machine), then on
//! thorbook with 2 threads.
//!
//! `cargo bench --bench perft` (depth 12), or `cargo bench --bench perft -- 11`.
//! Both implementations count the same tree the same way: bulk counting at the last
//! ply, a finished game is one leaf. The counts are checked before times are printed.

use std::time::Instant;

use magpie::othello::{Board as MBoard, Stone};
use thorbook::board::Board;
use thorbook::perft::{perft, perft_parallel};

const COUNTS: [u64; 15] =
    [1, 4, 12, 56, 244, 1396, 8200, 55092, 390216, 3005288, 24571284, 212258800, 1939886636, 18429641748, 184042084512];

/// The same algorithm as `thorbook::perft`, written on magpie's API.
fn magpie_perft(board: &MBoard, stone: Stone, depth: u32) -> u64 {
    let moves = board.moves_for(stone);
    if moves.is_empty() {
        if depth == 1 {
            return 1;
        }
        return if board.moves_for(stone.flip()).is_empty() { 1 } else { magpie_perft(board, stone.flip(), depth - 1) };
    }
    if depth == 1 {
        return u64::from(moves.count_set());
    }
    let mut total = 0;
    for pos in moves.hot_bits() {
        let mut child = board.clone();
        child.play(stone, pos);
        total += if depth == 2 {
            u64::from(child.moves_for(stone.flip()).count_set().max(1))
        } else {
            magpie_perft(&child, stone.flip(), depth - 1)
        };
    }
    total
}

fn timed(label: &str, want: u64, f: impl FnOnce() -> u64) -> f64 {
    let start = Instant::now();
    let got = f();
    let secs = start.elapsed().as_secs_f64();
    assert_eq!(got, want, "{label}: wrong count");
    println!("{label:<28} {got:>12} leaves {secs:>8.3} s {:>8.1} M leaves/s", got as f64 / secs / 1e6);
    secs
}

fn main() {
    let depth: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(12);
    let want = COUNTS[depth];
    println!("perft({depth}) from the start position");
    let ours = timed("thorbook, 1 thread", want, || perft(&Board::START, depth as u32));
    let theirs = timed("magpie 0.12, 1 thread", want, || magpie_perft(&MBoard::standard(), Stone::Black, depth as u32));
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let par = timed("thorbook, 2 threads", want, || pool.install(|| perft_parallel(&Board::START, depth as u32)));
    println!("thorbook / magpie speed: {:.2}x; 2 threads / 1 thread: {:.2}x", theirs / ours, ours / par);
}
