//! The one back-up of book values: every pipeline that writes a book (build, merge,
//! deviation, deepening, import) gives the values a naive reference of the rule in
//! `book-format.md` gives, positions no walk reaches keep their values in a merge and
//! are dropped by a build.

use std::collections::{HashMap, HashSet};

use thorbook::board::Board;
use thorbook::book::merge_into;
use thorbook::book::BuildParams;
use thorbook::book::{interchange, Book, LeafMove, Record};
use thorbook::book::{BuildConfig, GameLine};
use thorbook::book::{Grower, Growth, GrowthConfig};
use thorbook::search::Settings;
use thorbook::testutil::walk;
use thorbook::thor::{bundled_sources, LoadOptions, ThorDatabase};

use crate::util::{book_from_records, build_book_bytes, reference_back_up};

fn games() -> Vec<GameLine> {
    let db = ThorDatabase::load(&bundled_sources(), with!(LoadOptions::default(), strict: true, index: false)).unwrap();
    db.games().iter().map(GameLine::from).collect()
}

fn config(max_ply: u32, min_games: u32, depth: u32) -> BuildConfig {
    with!(
        BuildConfig::default(),
        max_ply: max_ply,
        min_games: min_games,
        search: with!(Settings::default(), depth: Some(depth), exact_at: Some(0), hash_mib: 1),
    )
}

/// The book's records, and the reference back-up of them from `roots`: equal.
#[track_caller]
fn assert_backed_up(bytes: &[u8], roots: &[Board]) -> usize {
    let book = Book::open_verified(bytes).unwrap();
    let records: Vec<Record> = book.records().collect();
    // Erase the values the reference must find: each starts at something else.
    let erased: Vec<Record> = records.iter().map(|r| Record { value: r.value.wrapping_add(3), ..*r }).collect();
    let reached = walk(&book).len();
    let want = reference_back_up(&erased, roots);
    let differ = records.iter().zip(&want).filter(|(a, b)| a != b).count();
    assert_eq!(differ, 0, "{differ} of {} records differ from the reference back-up", records.len());
    reached
}

#[test]
fn every_pipeline_backs_values_up_as_the_reference_does() {
    let games = games();
    let a = build_book_bytes(&games[..300], &config(10, 1, 2));
    assert!(assert_backed_up(&a, &[Board::START]) > 500);

    let b = build_book_bytes(&games[200..600], &config(12, 2, 1));
    let dir = tempfile::tempdir().unwrap();
    let merged = dir.path().join("m.tbk");
    let (ba, bb) = (Book::open(&a[..]).unwrap(), Book::open(&b[..]).unwrap());
    merge_into(&[&ba, &bb], &merged).unwrap();
    let merged = std::fs::read(&merged).unwrap();
    assert_backed_up(&merged, &[Board::START]);

    for (growth, depth) in [(Growth::Deviate, 2), (Growth::Deepen, 4)] {
        let cfg = with!(
            GrowthConfig::default(),
            error: 3,
            budget: 6,
            contempt: 0,
            max_positions: Some(150),
            time: None,
            max_ply: 14,
            search: config(0, 0, depth).search,
            growth: growth,
            round_size: 40,
        );
        let out = dir.path().join(format!("{growth:?}.tbk"));
        let grown = Grower::new(cfg, Board::START, &out).run(&ba, &|_| {}).unwrap();
        assert!(grown.rounds >= 2, "{growth:?}: several rounds back up");
        assert_backed_up(&std::fs::read(&out).unwrap(), &[Board::START]);
    }

    // Edax's text export has leaves only: the import backs the values up from every
    // board it reads.
    let book = Book::open(&a[..]).unwrap();
    let mut text = String::new();
    let mut roots = Vec::new();
    for (key, board) in walk(&book) {
        let r = book.get(key).unwrap();
        let Some(mv) = r.leaf() else { continue };
        let squares: String = (0..64)
            .map(|i| match (board.player >> i & 1, board.opponent >> i & 1) {
                (1, _) => 'X',
                (_, 1) => 'O',
                _ => '-',
            })
            .collect();
        let mv = if mv == thorbook::Move::Pass { "PS".into() } else { mv.to_string().to_uppercase() };
        text.push_str(&format!("{squares} X,{},{mv},{}\n", r.leaf_depth, r.leaf_score));
        roots.push(board);
    }
    let imported = interchange::import(text.as_bytes()).unwrap();
    assert_backed_up(&imported.bytes, &roots);
}

#[test]
fn a_position_no_walk_reaches_keeps_its_value_in_a_merge_and_is_dropped_by_a_build() {
    let games = games();
    // A build keeps a position only if it is reachable through kept positions: the
    // naive rule over the collected positions.
    let cfg = config(20, 2, 1);
    // The canonical keys of every game's positions up to the book's last ply, with
    // the games through each: those of at least the minimum are collected.
    let mut through: HashMap<u64, u32> = HashMap::new();
    for game in &games {
        let mut board = Board::START;
        for ply in 0..=cfg.max_ply as usize {
            *through.entry(board.canonical_key()).or_default() += 1;
            match game.moves.get(ply) {
                Some(thorbook::Move::Pass) => board = board.pass(),
                Some(thorbook::Move::Place(sq)) => board = board.play(*sq).unwrap(),
                None => break,
            }
        }
    }
    let keys: HashSet<u64> = through.into_iter().filter(|&(_, n)| n >= cfg.min_games).map(|(k, _)| k).collect();
    let mut reachable = HashSet::new();
    let mut stack = vec![Board::START.canonical().0];
    while let Some(b) = stack.pop() {
        if keys.contains(&b.key()) && reachable.insert(b.key()) {
            stack.extend(b.successors().map(|(_, c)| c.canonical().0));
        }
    }
    assert!(reachable.len() < keys.len(), "the bundled games hold positions reachable only below the game minimum");
    let built = Book::open_verified(build_book_bytes(&games, &cfg)).unwrap();
    let built_keys: HashSet<u64> = built.records().map(|r| r.key).collect();
    assert_eq!(built_keys, reachable);

    // A merge keeps a position no walk reaches, with its value.
    // A position of a game at ply 30, past the book's 20.
    let mut board = Board::START;
    for mv in &games[0].moves[..30] {
        board = match mv {
            thorbook::Move::Pass => board.pass(),
            thorbook::Move::Place(sq) => board.play(*sq).unwrap(),
        };
    }
    let orphan_board = board.canonical().0;
    assert!(built.get(orphan_board.key()).is_none());
    let orphan = Record {
        key: orphan_board.key(),
        value: 17,
        leaf_move: LeafMove::NONE,
        leaf_score: -5,
        leaf_depth: 0,
        games: 1,
        wins: 0,
        draws: 0,
        flags: 0,
        leaf_selectivity: 0,
    };
    let lone = book_from_records(&[orphan], BuildParams::default());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.tbk");
    merge_into(&[&built, &Book::open(lone).unwrap()], &out).unwrap();
    let merged = Book::open_verified(std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(merged.get(orphan.key).unwrap().value, 17);
    let values: HashMap<u64, i8> = built.records().map(|r| (r.key, r.value)).collect();
    assert!(merged.records().filter(|r| r.key != orphan.key).all(|r| values[&r.key] == r.value));
}

/// The back-up rule is the book's: recorded in its header, kept by growths and merges,
/// and a book valued by one rule revalued by the other equals the book built with it.
#[test]
fn the_back_up_rule_is_recorded_and_kept() {
    use thorbook::book::{revalue, BackUpRule};
    let games = games();
    let negamax = build_book_bytes(&games[..300], &config(10, 1, 2));
    let cfg = with!(config(10, 1, 2), back_up: BackUpRule::Corrected);
    let corrected = build_book_bytes(&games[..300], &cfg);
    let (n, c) = (Book::open_verified(&negamax[..]).unwrap(), Book::open_verified(&corrected[..]).unwrap());
    assert_eq!((n.params().back_up, c.params().back_up), (BackUpRule::Negamax, BackUpRule::Corrected));
    // The same leaves; the values differ where noisy options nearly tie.
    let differ = n.records().zip(c.records()).filter(|(a, b)| a.value != b.value).count();
    assert!(n.records().zip(c.records()).all(|(a, b)| (a.key, a.leaf_score) == (b.key, b.leaf_score)));
    assert!(differ > 20, "{differ} values differ");
    assert_eq!(revalue(&c, BackUpRule::Negamax).unwrap(), negamax);
    assert_eq!(revalue(&n, BackUpRule::Corrected).unwrap(), corrected);
    // Merges keep the corrected rule whichever comes first; a growth keeps its input's.
    let dir = tempfile::tempdir().unwrap();
    for (i, pair) in [[&n, &c], [&c, &n]].into_iter().enumerate() {
        let out = dir.path().join(format!("m{i}.tbk"));
        merge_into(&pair, &out).unwrap();
        assert_eq!(Book::open(std::fs::read(&out).unwrap()).unwrap().params().back_up, BackUpRule::Corrected);
    }
    let grow = with!(
        GrowthConfig::default(),
        error: 2,
        budget: 4,
        contempt: 0,
        max_positions: Some(40),
        time: None,
        max_ply: 12,
        search: config(0, 0, 2).search,
        growth: Growth::Deviate,
        round_size: 20,
    );
    Grower::new(grow, Board::START, dir.path().join("g.tbk")).run(&c, &|_| {}).unwrap();
    let grown = std::fs::read(dir.path().join("g.tbk")).unwrap();
    assert_eq!(Book::open(&grown[..]).unwrap().params().back_up, BackUpRule::Corrected);
}
