//! The build's internal steps against independent truth: leaves near the end against
//! exact solves, and the streamed merge against the in-memory reference merge. (The
//! steps are crate-private; `tests/` checks the books the public builder writes.)

use std::collections::{HashMap, HashSet};

use super::{BuildConfig, GameLine};
use crate::board::Squares;
use crate::book::format::LeafMove;
use crate::book::Book;
use crate::search::Settings;
use crate::testutil::build_steps::collect;
use crate::testutil::searches::Searcher;
use crate::thor::{bundled_sources, LoadOptions, ThorDatabase};

fn bundled_games(n: usize) -> Vec<GameLine> {
    let db = ThorDatabase::load(&bundled_sources(), LoadOptions { strict: true, index: false }).unwrap();
    db.games.iter().take(n).map(GameLine::from).collect()
}

fn config(max_ply: u32, depth: u32, exact_at: u32) -> BuildConfig {
    BuildConfig {
        max_ply,
        min_games: 1,
        search: Settings::default().with_depth(depth).with_exact_at(exact_at).with_hash_mib(2),
        ..BuildConfig::default()
    }
}

/// Every leaf of a position with at most 12 empties is exact and equals the best
/// exact score, by an independent solve, of the moves whose child is not in the book.
#[test]
fn leaf_scores_near_the_end_equal_exact_solves() {
    // Deep plies, so that positions have few empties and are solved exactly.
    let games = bundled_games(3);
    let cfg = config(60, 4, 12);
    let nodes = collect(&games, cfg.max_ply, 1).unwrap();
    let leaves = super::score_nodes(&nodes, &cfg.leaf_search().unwrap(), &HashMap::new(), None, &|_, _| {}).unwrap();
    let keys: HashSet<u64> = nodes.iter().map(|n| n.key).collect();
    let mut solver = Searcher::new(4);
    let mut checked = 0;
    for (n, leaf) in nodes.iter().zip(&leaves) {
        if n.board.empty_count() > 12 || leaf.mv == LeafMove::NONE {
            continue;
        }
        assert!(leaf.exact);
        let want = if leaf.mv == LeafMove::PASS {
            -solver.exact(&n.board.pass())
        } else {
            Squares(n.board.legal_moves())
                .map(|sq| n.board.play(sq).unwrap())
                .filter(|c| !keys.contains(&c.canonical_key()))
                .map(|c| -solver.exact(&c))
                .max()
                .unwrap()
        };
        assert_eq!(i32::from(leaf.score), want, "{:?}", n.board);
        checked += 1;
    }
    assert!(checked >= 20, "{checked}");
}

/// The streamed k-way merge (`book merge`'s) writes the book the in-memory merge of
/// the same two books builds, in either order: books of other games, depths and
/// selectivities, so that positions of both, of one, leaves of both and of one occur.
#[test]
fn the_streamed_merge_writes_what_the_in_memory_merge_builds() {
    let dir = tempfile::tempdir().unwrap();
    let games = bundled_games(120);
    let build = |name: &str, games: &[GameLine], cfg: BuildConfig| {
        let path = dir.path().join(name);
        super::builder::Builder::new(cfg, &path).run(games, &|_| {}).unwrap();
        Book::open_verified(std::fs::read(&path).unwrap()).unwrap()
    };
    let a = build("a.tbk", &games[..60], config(10, 3, 0));
    let selective = BuildConfig {
        search: config(10, 4, 0).search.with_width(crate::search::Width::from_sigmas(1.5).unwrap()),
        ..config(12, 4, 0)
    };
    let b = build("b.tbk", &games[40..], selective);
    for (first, second) in [(&a, &b), (&b, &a)] {
        let out = dir.path().join("m.tbk");
        super::merge::merge_into(&[first, second], &out).unwrap();
        let streamed = std::fs::read(&out).unwrap();
        let in_memory = super::merge::merge(first, second).to_bytes().unwrap();
        assert!(streamed == in_memory, "streamed and in-memory merges differ");
    }
    let both = a.records().filter(|r| b.get(r.key).is_some()).count();
    assert!(both > 50 && both < a.len(), "{both} of {} positions in both books", a.len());
}
