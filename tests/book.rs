//! Opening books: building from games, the file format, queries under symmetry,
//! negamax consistency, exact leaves, round trips, damage, interrupted builds.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use thorbook::board::{Board, Squares};
use thorbook::book::{book_line, book_moves};
use thorbook::book::{bundled, Book, Record};
use thorbook::book::{BookError, BuildParams, LeafMove};
use thorbook::book::{BuildConfig, GameLine};
use thorbook::search::Settings;
use thorbook::setting::Setting;
use thorbook::testutil::walk;
use thorbook::thor::{bundled_sources, LoadOptions, ThorDatabase};
use thorbook::{Move, Position, Transform};

use crate::util::{book_from_records, build_book_bytes, thorbook};

pub(crate) fn bundled_games(n: usize) -> Vec<GameLine> {
    let db = ThorDatabase::load(&bundled_sources(), with!(LoadOptions::default(), strict: true, index: false)).unwrap();
    db.games().iter().take(n).map(GameLine::from).collect()
}

pub(crate) fn config(max_ply: u32, depth: u32, exact_at: u32) -> BuildConfig {
    with!(
        BuildConfig::default(),
        max_ply: max_ply,
        min_games: 1,
        search: with!(Settings::default(), depth: Some(depth), exact_at: Some(exact_at), hash_mib: 2),
    )
}

fn build_book(games: &[GameLine], cfg: &BuildConfig) -> Book<Vec<u8>> {
    Book::open_verified(build_book_bytes(games, cfg)).unwrap()
}

#[test]
fn a_book_holds_exactly_the_positions_of_its_games_with_right_counts() {
    let games = bundled_games(5);
    let max_ply = 12;
    // Naive reference: every position of every game up to the ply limit, by canonical board.
    let mut want: HashMap<Board, (u32, u32)> = HashMap::new();
    for g in &games {
        let mut pos = Position::START;
        for ply in 0..=max_ply {
            let e = want.entry(pos.board.canonical().0).or_default();
            e.0 += 1;
            let mover_black = pos.side == thorbook::Color::Black;
            let black = i32::from(g.black_score.expect("WTHOR games have results"));
            let score = if mover_black { black } else { 64 - black };
            e.1 += (score > 32) as u32;
            if ply == max_ply {
                break;
            }
            pos = pos.try_play(g.moves[ply]).unwrap();
        }
    }
    let book = build_book(&games, &config(max_ply as u32, 2, 0));
    assert_eq!(book.len(), want.len());
    for (board, (games_n, wins)) in &want {
        let r = book.get(board.key()).expect("every game position is in the book");
        assert_eq!((r.games, r.wins), (*games_n, *wins));
    }
    assert_eq!(book.probe(&Board::START).unwrap().record.games, 5);
}

#[test]
fn queries_agree_under_all_symmetries() {
    let games = bundled_games(30);
    let book = build_book(&games, &config(10, 3, 0));
    let pos = Position::from_moves("f5d6c3d3c4").unwrap();
    let base = book_moves(&book, &pos);
    assert!(!base.is_empty());
    for t in Transform::ALL {
        let img = t.board(&pos.board);
        let moves = book_moves(&book, &Position { board: img, side: pos.side });
        let mapped: Vec<(Move, i32, u32)> = base.iter().map(|m| (t.apply_move(m.mv), m.score, m.games)).collect();
        let mut got: Vec<(Move, i32, u32)> = moves.iter().map(|m| (m.mv, m.score, m.games)).collect();
        let mut mapped_sorted = mapped.clone();
        mapped_sorted.sort();
        got.sort();
        assert_eq!(got, mapped_sorted, "{t:?}");
        assert_eq!(book.probe(&img).unwrap().value(), book.probe(&pos.board).unwrap().value());
        let leaf = book.probe(&img).unwrap().leaf_move();
        assert_eq!(leaf, book.probe(&pos.board).unwrap().leaf_move().map(|m| t.apply_move(m)));
    }
}

/// value = max(leaf score, −value of every book child), at every reachable position.
fn check_negamax<D: AsRef<[u8]>>(book: &Book<D>, built: bool) -> usize {
    let boards = walk(book);
    for (key, board) in &boards {
        let r = book.get(*key).unwrap();
        let mut best = if r.leaf().is_some() || board.is_game_over() { r.leaf_score as i32 } else { -99 };
        let children: Vec<Board> = match board.legal_moves() {
            0 if board.opponent_moves() != 0 => vec![board.pass()],
            0 => vec![],
            m => Squares(m).map(|sq| board.play(sq).unwrap()).collect(),
        };
        for c in children {
            if let Some(hit) = book.probe(&c) {
                best = best.max(-hit.value());
            }
        }
        assert_eq!(r.value as i32, best, "key {key:016x}");
        // In a built book a leaf move never leads into the book (after a merge it may:
        // the other book can hold that child).
        if let (true, Some(Move::Place(sq))) = (built, r.leaf()) {
            assert!(book.probe(&board.play(sq).unwrap()).is_none());
        }
    }
    boards.len()
}

#[test]
fn negamax_values_are_consistent_over_whole_books() {
    let book = build_book(&bundled_games(200), &config(14, 3, 0));
    assert!(check_negamax(&book, true) > 500);
    let bundled = bundled().unwrap();
    bundled.verify().unwrap();
    // The bundled book took the deeper leaves of another book by a merge, so a leaf
    // move may lead into it.
    assert!(check_negamax(&bundled, false) > 1000);
}

#[test]
fn build_write_map_query_export_import_merge_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let games = bundled_games(40);
    let cfg = config(10, 3, 0);
    let a = build_book(&games, &cfg);
    let recs: Vec<Record> = a.records().collect();
    let path = dir.path().join("a.tbk");
    std::fs::write(&path, build_book_bytes(&games, &cfg)).unwrap();
    let mapped = Book::open_verified(thorbook::fileio::read_mapped(&path).unwrap()).unwrap();
    assert_eq!(mapped.records().collect::<Vec<_>>(), recs);
    for r in &recs {
        assert_eq!(mapped.get(r.key), Some(*r));
    }

    let p = path.to_str().unwrap();
    let txt = dir.path().join("a.txt");
    thorbook(&["book", "export", "--book", p, "-o", txt.to_str().unwrap()]).ok();
    let back = dir.path().join("b.tbk");
    thorbook(&["book", "import", txt.to_str().unwrap(), "-o", back.to_str().unwrap()]).ok();
    assert!(std::fs::read(&back).unwrap() == std::fs::read(&path).unwrap(), "export then import changed the book");
    // The header names the evaluation that scored the leaves, and the export carries it.
    let digest = thorbook::eval::PatternEval::bundled().digest();
    assert_eq!(mapped.params().eval_digest, digest);
    assert!(thorbook(&["book", "info", "--book", p])
        .ok()
        .contains(&format!("weights {digest:08x} (the bundled weights)")));
    assert!(std::fs::read_to_string(&txt).unwrap().contains(&format!("eval={digest:08x}")));
    // A parameter out of its field's range is refused, not truncated.
    let bad = dir.path().join("bad.txt");
    std::fs::write(&bad, std::fs::read_to_string(&txt).unwrap().replace("max_ply=10", "max_ply=266")).unwrap();
    let err = thorbook(&["book", "import", bad.to_str().unwrap(), "-o", dir.path().join("x.tbk").to_str().unwrap()])
        .fails()
        .to_string();
    assert!(err.contains("line 2") && err.contains("max_ply 266 is not from 0 to 255"), "{err}");

    // Merge: a book of other games, in both orders.
    let other = dir.path().join("o.tbk");
    let other_cfg = config(10, 4, 0);
    let other_book = build_book(&bundled_games(80)[40..], &other_cfg);
    let other_recs: Vec<Record> = other_book.records().collect();
    // Header parameters of another kind of build, for the merged header below.
    let other_params = BuildParams { min_games: 2, selectivity_tenths: 15, ..other_book.params() };
    std::fs::write(&other, book_from_records(&other_recs, other_params)).unwrap();
    let (ab, ba) = (dir.path().join("ab.tbk"), dir.path().join("ba.tbk"));
    thorbook(&["book", "merge", p, other.to_str().unwrap(), "-o", ab.to_str().unwrap()]).ok();
    thorbook(&["book", "merge", other.to_str().unwrap(), p, "-o", ba.to_str().unwrap()]).ok();
    let ab_bytes = std::fs::read(&ab).unwrap();
    assert!(ab_bytes == std::fs::read(&ba).unwrap(), "merge depends on the order");
    // Three books in any order: one book, equal to merging twice.
    let third = dir.path().join("t.tbk");
    std::fs::write(&third, build_book_bytes(&bundled_games(120)[70..], &config(8, 5, 0))).unwrap();
    let (abc, cab, ab_c) = (dir.path().join("abc.tbk"), dir.path().join("cab.tbk"), dir.path().join("ab_c.tbk"));
    let (o, t) = (other.to_str().unwrap(), third.to_str().unwrap());
    thorbook(&["book", "merge", p, o, t, "-o", abc.to_str().unwrap()]).ok();
    thorbook(&["book", "merge", t, p, o, "-o", cab.to_str().unwrap()]).ok();
    thorbook(&["book", "merge", ab.to_str().unwrap(), t, "-o", ab_c.to_str().unwrap()]).ok();
    let abc_bytes = std::fs::read(&abc).unwrap();
    assert!(abc_bytes == std::fs::read(&cab).unwrap(), "a 3-way merge depends on the order");
    assert!(abc_bytes == std::fs::read(&ab_c).unwrap(), "a 3-way merge differs from two merges");
    let merged = Book::open_verified(ab_bytes).unwrap();
    let union: std::collections::HashSet<u64> = recs.iter().chain(&other_recs).map(|r| r.key).collect();
    assert_eq!(merged.len(), union.len());
    check_negamax(&merged, false);
    // The header: the deeper search, the smaller game threshold, the selective width
    // of the one selective book, the evaluation both share.
    let (pa, pm) = (a.params(), merged.params());
    assert_eq!((pa.depth, other_params.depth, pm.depth), (3, 4, 4));
    assert_eq!((pa.min_games, pm.min_games), (1, 1), "{pa:?}");
    assert_eq!((pa.selectivity_tenths, pm.selectivity_tenths), (0, 15));
    assert_eq!(
        (pm.eval_digest, pm.max_ply, pm.exact_at),
        (pa.eval_digest, pa.max_ply, pa.exact_at.max(other_params.exact_at))
    );
    // The deeper leaf wins where both books have the position.
    for r in &other_recs {
        if recs.iter().any(|x| x.key == r.key) && r.leaf().is_some() {
            assert_eq!(
                merged.get(r.key).unwrap().leaf_depth,
                r.leaf_depth.max(recs.iter().find(|x| x.key == r.key).unwrap().leaf_depth)
            );
        }
    }
}

#[test]
fn damaged_books_are_refused_with_a_clear_error() {
    let good = build_book_bytes(&bundled_games(3), &config(6, 2, 0));
    assert!(Book::open_verified(&good[..]).is_ok());
    for i in 0..good.len() {
        let mut bad = good.clone();
        bad[i] ^= 0x10;
        assert!(Book::open_verified(&bad[..]).is_err(), "flipping byte {i} went unnoticed");
    }
    for cut in [0, 10, 63, 64, good.len() - 1] {
        assert!(Book::open(&good[..cut]).is_err(), "truncated to {cut}");
    }
    let mut magic = good.clone();
    magic[0] = b'X';
    let err = Book::open(&magic[..]).err().unwrap();
    assert!(matches!(err, BookError::Magic { found } if &found == b"XHORBOOK"), "{err}");
    assert!(err.to_string().contains("not a thorbook book"), "{err}");
    // (A record field out of range under valid checksums: `book::format`'s tests, the
    // writer being crate-private.)
    let mut version = good.clone();
    version[8] = 9;
    let err = Book::open(&version[..]).err().unwrap();
    assert!(matches!(err, BookError::Version { found: 9 }), "{err}");

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.tbk");
    let mut bad = good.clone();
    // A leaf move byte: the book's one block of records fails its checksum.
    bad[64 + 16 * 3 + 9] ^= 1;
    std::fs::write(&path, &bad).unwrap();
    let p = path.to_str().unwrap();
    for args in [
        vec!["book", "query", "--book", p, "--moves", "f5"],
        vec!["book", "verify", "--book", p],
        vec!["book", "export", "--book", p],
    ] {
        let err = thorbook(&args).fails().to_string();
        assert!(err.contains(&format!("book {p}")) && err.contains("checksum"), "{args:?}: {err}");
    }
    // The engine opens its book in constant time and never uses the damaged block: it
    // plays a legal move by its search, and says why.
    let out = thorbook(&["bestmove", "--book", p, "--moves", "f5", "--json"]);
    let v: serde_json::Value = serde_json::from_str(out.ok()).unwrap();
    assert_eq!(v["source"], "search", "{}", out.stdout);
    assert!(out.stderr.contains("warning: the book is damaged (block 0 (records 0.."), "{}", out.stderr);
    let mv: thorbook::square::Square = v["move"].as_str().unwrap().parse().unwrap();
    assert!(Position::from_moves("f5").unwrap().board.is_legal(mv));
    let mut bad_header = good.clone();
    bad_header[20] ^= 1;
    std::fs::write(&path, &bad_header).unwrap();
    let err = thorbook(&["bestmove", "--book", p, "--moves", "f5"]).fails().to_string();
    assert!(err.contains(&format!("book {p}")), "{err}");
    std::fs::write(&path, &good[..100]).unwrap();
    let err = thorbook(&["book", "info", "--book", p]).fails().to_string();
    assert!(err.contains("the file has 100 bytes"), "{err}");
}

/// Synthetic records with uniform keys (what Zobrist keys are), `games` each.
fn synthetic_records(n: usize, seed: u64, games: impl Fn(usize) -> u32) -> Vec<Record> {
    let mut state = seed;
    let mut keys: Vec<u64> = (0..n)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let z = (state ^ (state >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            let z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        })
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys.iter()
        .enumerate()
        .map(|(i, &key)| Record {
            key,
            value: ((i % 129) as i32 - 64) as i8,
            leaf_move: match i % 65 {
                64 => LeafMove::PASS,
                sq => LeafMove::from(thorbook::square::Square::new(sq as u8)),
            },
            leaf_score: ((i % 129) as i32 - 64) as i8,
            leaf_depth: (i % 64) as u8,
            games: games(i),
            wins: games(i) / 3,
            draws: (games(i) / 5).min(65_535) as u16,
            flags: (i % 2) as u8,
            leaf_selectivity: (i % 128) as u8,
        })
        .collect()
}

/// A book of several blocks with one damaged: probes that read only intact blocks
/// answer; a probe that reads the damaged block answers "not in the book" and the
/// damage names the block and its bytes; `verify` names it too. A damaged count table
/// is found the same way by a probe of a record whose counts are there.
#[test]
fn a_probe_checks_the_blocks_it_reads_and_never_returns_a_damaged_record() {
    const BLOCK: usize = 256;
    let n = 40 * BLOCK + 100;
    let records = synthetic_records(n, 11, |i| if i % 1000 == 7 { 5_000 + i as u32 } else { i as u32 % 900 });
    assert_eq!(records.len(), n);
    let good = book_from_records(&records, BuildParams::default());
    let large = records.iter().filter(|r| r.games >= 1023 || r.draws >= 64).count();
    let blocks = n.div_ceil(BLOCK);
    assert_eq!(good.len(), 64 + 16 * n + 20 * large + 4 * (blocks + 1), "the size book-format.md states");
    let book = Book::open(&good[..]).unwrap();
    assert!(records.iter().all(|r| book.get(r.key) == Some(*r)) && book.damage().is_none());

    let mut bad = good.clone();
    let damaged = 20;
    let in_it = damaged * BLOCK + 17;
    bad[64 + 16 * in_it + 12] ^= 0x04;
    let book = Book::open(&bad[..]).unwrap();
    // Interpolation reads a few keys near the target: records far from the damage.
    for i in [0, 5 * BLOCK, 35 * BLOCK, n - 1] {
        assert_eq!(book.get(records[i].key), Some(records[i]), "record {i}");
    }
    assert!(book.damage().is_none(), "{:?}", book.damage());
    assert_eq!(book.get(records[in_it].key), None);
    let damage = book.damage().unwrap().to_string();
    let (first, end) = (damaged * BLOCK, (damaged + 1) * BLOCK);
    let (start, stop) = (64 + 16 * first, 64 + 16 * end);
    let expected = format!(
        "block {damaged} (records {first}..{end}) (bytes {start}..{stop}) fails its checksum: the book is damaged there"
    );
    assert_eq!(damage, expected);
    assert_eq!(book.verify().unwrap_err().to_string(), damage);

    let counts_at = 64 + 16 * n;
    let mut bad = good.clone();
    bad[counts_at + 9] ^= 1;
    let book = Book::open(&bad[..]).unwrap();
    let small = records.iter().find(|r| r.games < 1023 && r.draws < 64).unwrap();
    assert_eq!(book.get(small.key), Some(*small));
    let big = records.iter().find(|r| r.games >= 1023).unwrap();
    assert_eq!(book.get(big.key), None);
    assert!(book.damage().unwrap().to_string().starts_with("the count table (bytes"), "{:?}", book.damage());
    assert!(Book::open_verified(&bad[..]).is_err());
}

/// The book's game counts and black win rates agree with the Thor database's own
/// statistics of the same archives, for black to move and for white to move.
#[test]
fn book_counts_and_win_rates_match_thor_statistics() {
    let db = ThorDatabase::load(&bundled_sources(), with!(LoadOptions::default(), strict: true, index: true)).unwrap();
    let games: Vec<GameLine> = db.games().iter().map(GameLine::from).collect();
    let book = build_book(&games, &with!(config(4, 1, 0), min_games: 2));
    assert_counts_match_thor(&db, &book);
}

/// For short lines (deeper, a book child also counts the games that transposed into
/// it), every move played by at least 2 games has the book's game count and black win
/// rate equal to the Thor database's.
fn assert_counts_match_thor<D: AsRef<[u8]>>(db: &ThorDatabase, book: &Book<D>) {
    for seq in ["", "f5", "f5d6", "f5d6c3"] {
        let pos = Position::from_moves(seq).unwrap();
        let stats = db.stats(&pos, &Default::default());
        let moves = book_moves(book, &pos);
        for m in stats.moves.iter().filter(|m| m.games >= 2) {
            let b = moves.iter().find(|b| b.mv == m.mv).unwrap_or_else(|| panic!("{seq} {} missing", m.mv));
            assert_eq!(b.games as usize, m.games, "{seq} {}", m.mv);
            let rate = b.black_win_rate.unwrap();
            assert!((rate - m.black_win_rate).abs() < 1e-9, "{seq} {}: {rate} vs {}", m.mv, m.black_win_rate);
        }
    }
}

#[test]
fn engine_and_query_use_the_bundled_book() {
    let out = thorbook(&["book", "query", "--moves", "f5", "--json"]);
    let v: serde_json::Value = serde_json::from_str(out.ok()).unwrap();
    assert_eq!(v["in_book"], true);
    assert!(v["games"].as_u64().unwrap() > 6000);
    assert!(!v["line"].as_str().unwrap().is_empty());

    let out = thorbook(&["bestmove", "--moves", "f5", "--json"]);
    let v: serde_json::Value = serde_json::from_str(out.ok()).unwrap();
    assert_eq!(v["source"], "book");
    let book = bundled().unwrap();
    let pos = Position::from_moves("f5").unwrap();
    let best = book_moves(&book, &pos)[0].score;
    // analyze puts the book's score next to the search's for every move.
    let out = thorbook(&["analyze", "--moves", "f5", "--level", "3", "--json"]);
    let an: serde_json::Value = serde_json::from_str(out.ok()).unwrap();
    let listed = book_moves(&book, &pos);
    for m in an["moves"].as_array().unwrap() {
        let want = listed.iter().find(|b| b.mv.to_string() == m["move"].as_str().unwrap()).map(|b| b.score as i64);
        assert_eq!(m["book_score"].as_i64(), want, "{m}");
    }
    assert!(an["moves"].as_array().unwrap().iter().filter(|m| !m["book_score"].is_null()).count() >= 2);
    let text = thorbook(&["analyze", "--moves", "f5", "--level", "3"]).ok().to_string();
    assert!(text.contains("book source") && text.contains("games"), "{text}");
    let mv: Move = v["move"].as_str().unwrap().parse().unwrap();
    let chosen = book_moves(&book, &pos).into_iter().find(|m| m.mv == mv).unwrap();
    assert_eq!(chosen.score, best);

    let out = thorbook(&["bestmove", "--moves", "f5", "--no-book", "--depth", "4", "--json"]);
    let v: serde_json::Value = serde_json::from_str(out.ok()).unwrap();
    assert_eq!(v["source"], "search");

    // A book whose best move loses is left for a search under --book-max-loss 0, and
    // followed without it. Which positions lose depends on the build (the main line is
    // a draw), so take the first of the book's positions, breadth first through its
    // moves, where the side to move does.
    let mut queue = std::collections::VecDeque::from([String::new()]);
    let losing = loop {
        let line = queue.pop_front().expect("a book position whose best book move loses");
        let moves = book_moves(&book, &Position::from_moves(&line).unwrap());
        if moves.first().is_some_and(|m| m.score < 0) {
            break line;
        }
        queue.extend(moves.iter().map(|m| format!("{line}{}", m.mv)));
    };
    let losing = losing.as_str();
    let out = thorbook(&["bestmove", "--moves", losing, "--book-max-loss", "0", "--depth", "2", "--json"]);
    let v: serde_json::Value = serde_json::from_str(out.ok()).unwrap();
    assert_eq!(v["source"], "search");
    let out = thorbook(&["bestmove", "--moves", losing, "--depth", "2", "--json"]);
    let v: serde_json::Value = serde_json::from_str(out.ok()).unwrap();
    assert_eq!(v["source"], "book");

    // Randomness stays within R discs of the best.
    for seed in 0..10 {
        let s = seed.to_string();
        let out = thorbook(&["bestmove", "--moves", "f5d6", "--book-randomness", "3", "--seed", &s, "--json"]);
        let v: serde_json::Value = serde_json::from_str(out.ok()).unwrap();
        assert!(
            v["score"].as_i64().unwrap()
                >= book_moves(&book, &Position::from_moves("f5d6").unwrap())[0].score as i64 - 3
        );
    }
    // Over one cycle of seeds each near move is picked exactly its weight's times:
    // R + 1 − d for a move d discs below the best.
    let pos = Position::from_moves("f5d6c3").unwrap();
    let all = book_moves(&book, &pos);
    let r = 4;
    let near: Vec<_> = all.iter().filter(|m| m.score >= all[0].score - r).collect();
    assert!(near.len() >= 2, "{all:?}");
    let weights: Vec<u64> = near.iter().map(|m| (r + 1 - (all[0].score - m.score)) as u64).collect();
    let total: u64 = weights.iter().sum();
    let choice = with!(thorbook::book::BookChoice::default(), randomness: r, max_loss: 64, max_drop: 2);
    for (m, w) in near.iter().zip(&weights) {
        let picked = (0..total)
            .filter(|&seed| thorbook::book::choose_move(&book, &pos, choice, seed).unwrap().mv == m.mv)
            .count() as u64;
        assert_eq!(picked, *w, "{}", m.mv);
    }
    let line = book_line(&book, &Position::START, 60);
    assert!(line.len() >= 10, "{line:?}");
    // Along the line, each move is the one the move list shows first (at the start the
    // four first moves tie in value and games: the tie is broken the same way in both).
    let mut at = Position::START;
    for &mv in &line {
        let listed = book_moves(&book, &at);
        if listed.iter().any(|m| m.in_book) {
            assert_eq!(listed[0].mv, mv, "at {}", at.to_board_text());
        }
        at = at.try_play(mv).unwrap();
    }

    // Safety: where the stored value is above every playable move (an inconsistent
    // book), the engine leaves the book rather than trust it.
    let key = pos.board.canonical().0.key();
    let tampered: Vec<Record> = book
        .records()
        .map(|rec| if rec.key == key { Record { value: (all[0].score + 3) as i8, ..rec } } else { rec })
        .collect();
    let tampered = Book::open_verified(book_from_records(&tampered, book.params())).unwrap();
    let strict = with!(thorbook::book::BookChoice::default(), randomness: 0, max_loss: 64, max_drop: 2);
    assert!(thorbook::book::choose_move(&tampered, &pos, strict, 0).is_none());
    let lax = with!(strict, max_drop: 3);
    assert_eq!(thorbook::book::choose_move(&tampered, &pos, lax, 0).unwrap().mv, all[0].mv);
    assert!(thorbook::book::choose_move(&book, &pos, strict, 0).is_some());

    let out = thorbook(&["book", "info", "--json", "--full"]);
    let v: serde_json::Value = serde_json::from_str(out.ok()).unwrap();
    assert!(v["bytes_per_position"].as_f64().unwrap() <= 16.1);
    assert_eq!(v["checksum_ok"], true);
}

/// `book build --level N` scores leaves at that engine level: its depth, exact
/// threshold and Multi-ProbCut selectivity are recorded, shown and exported.
#[test]
fn a_book_scored_at_a_level_records_its_settings() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("l5.tbk");
    let o = out.to_str().unwrap();
    thorbook(&["book", "build", "-o", o, "--max-ply", "8", "--level", "5", "--threads", "2"]).ok();
    let book = Book::open_verified(std::fs::read(&out).unwrap()).unwrap();
    let p = book.params();
    let spec = Settings::at_level(thorbook::search::Level::new(5).unwrap()).effective_strength().unwrap();
    let spec = (spec.depth.unwrap(), spec.exact_at.unwrap());
    assert_eq!((p.depth as u32, p.exact_at as u32), spec);
    assert_eq!(p.selectivity_tenths, 15);
    assert!(book.records().all(|r| r.leaf().is_none() || r.leaf_depth as u32 == spec.0));
    let info = thorbook(&["book", "info", "--book", o]);
    assert!(info.ok().contains("depth 6, exact at 14 empties, selectivity 1.5 σ"), "{}", info.stdout);
    let txt = dir.path().join("l5.txt");
    thorbook(&["book", "export", "--book", o, "-o", txt.to_str().unwrap()]).ok();
    assert!(std::fs::read_to_string(&txt).unwrap().contains("selectivity=15"));
    let back = dir.path().join("back.tbk");
    thorbook(&["book", "import", txt.to_str().unwrap(), "-o", back.to_str().unwrap()]).ok();
    assert!(std::fs::read(&back).unwrap() == std::fs::read(&out).unwrap());
    let bad = thorbook(&["book", "build", "-o", o, "--level", "15"]);
    assert!(bad.fails().contains("--level must be from 1 to 14"));
    let bad = thorbook(&["book", "build", "-o", o, "--selectivity", "30"]);
    assert!(bad.fails().contains("--selectivity must be 0 (full width) or from 0.1 to 10"));
}

/// The bundled book was built from the full archives: its game counts and win rates
/// are those of `../shared/thor` (run by `.ci/run` where `../shared` exists).
#[test]
#[ignore = "needs ../shared/thor (the full WTHOR archives); .ci/run runs it where they are"]
fn shared_bundled_book_counts_match_the_full_archives() {
    let dir = crate::util::shared("thor");
    let sources: Vec<thorbook::thor::Source> = thorbook::thor::expand_paths(&[dir])
        .unwrap()
        .iter()
        .map(|p| thorbook::thor::Source::open(p).unwrap())
        .collect();
    let db = ThorDatabase::load(&sources, with!(LoadOptions::default(), strict: false, index: true)).unwrap();
    assert_eq!(db.games().len(), 115_820);
    let book = bundled().unwrap();
    assert_eq!(book.probe(&Board::START).unwrap().record.games, 115_820);
    assert_counts_match_thor(&db, &book);
}

/// Library callers get error values for settings the library cannot use, never a
/// panic or an abort: a zero table, a table the system cannot give, a deviation with
/// absurd ranges.
#[test]
fn builder_and_deviator_refuse_unusable_settings_with_errors() {
    use thorbook::book::{Grower, GrowthConfig};
    let dir = tempfile::tempdir().unwrap();
    let games = bundled_games(20);
    let out = dir.path().join("x.tbk");
    use thorbook::book::{BuildError, GrowthError};
    use thorbook::search::{SettingsError, TableError};
    // Each bad setting with the cause both pipelines must give for it.
    let by_setting =
        |setting: Setting| move |e: &SettingsError| matches!(e, SettingsError::OutOfRange(r) if r.setting == setting);
    type Cause<'a> = &'a dyn Fn(&SettingsError) -> bool;
    let cases: [(Settings, Cause); 4] = [
        (with!(Settings::default(), hash_mib: 0), &|e| matches!(e, SettingsError::Table(TableError::Size { mib: 0 }))),
        (
            with!(Settings::default(), hash_mib: 1 << 20),
            &|e| matches!(e, SettingsError::Table(TableError::Size { mib } | TableError::MoreThanAvailable { mib, .. } | TableError::Allocation { mib }) if *mib == 1 << 20),
        ),
        (with!(Settings::default(), threads: 0), &by_setting(Setting::Threads)),
        (with!(Settings::default(), depth: Some(0)), &by_setting(Setting::Depth)),
    ];
    for (search, cause) in cases {
        let config = with!(BuildConfig::default(), max_ply: 6, min_games: 1, search: search.clone());
        let err = thorbook::book::Builder::new(config, &out).run(&games, &|_| {}).unwrap_err();
        assert!(matches!(&err, BuildError::Settings(e) if cause(e)), "{err:?}");
        let deviate = with!(
            GrowthConfig::default(),
            error: 2,
            budget: 4,
            contempt: 0,
            max_positions: None,
            time: None,
            max_ply: 10,
            search: search,
            growth: Default::default(),
        );
        let book = bundled().unwrap();
        let err = Grower::new(deviate, Board::START, &out).run(&book, &|_| {}).unwrap_err();
        assert!(matches!(&err, GrowthError::Search(BuildError::Settings(e)) if cause(e)), "{err:?}");
    }
    let err = thorbook::book::Builder::new(with!(BuildConfig::default(), max_ply: 0, min_games: 1), &out)
        .run(&games, &|_| {})
        .unwrap_err();
    // The library names the setting by kind (the command line maps it to its flag).
    match &err {
        thorbook::book::BuildError::Setting(e) => {
            assert_eq!(e.setting, Setting::MaxPly);
            assert!(e.to_string().ends_with("must be from 1 to 60, got 0"), "{e}");
        }
        e => panic!("{e}"),
    }
    let bad = with!(
        GrowthConfig::default(),
        error: -1,
        budget: 4,
        contempt: 0,
        max_positions: None,
        time: None,
        max_ply: 10,
        search: Settings::default(),
        growth: Default::default(),
    );
    let err = Grower::new(bad, Board::START, &out).run(&bundled().unwrap(), &|_| {}).unwrap_err();
    match &err {
        thorbook::book::GrowthError::Setting(e) => {
            assert_eq!(e.setting, Setting::Error);
            assert!(e.to_string().ends_with("must be from 0 to 64, got -1"), "{e}");
        }
        e => panic!("{e}"),
    }
    assert!(!out.exists());
}

/// A table the address space cannot hold is a clean error naming its size (it used to
/// abort with exit 134 in the leaf searches).
#[test]
fn book_build_with_a_table_beyond_the_address_space_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("big.tbk");
    let script = format!(
        "ulimit -v 1500000; exec '{}' book build --max-ply 4 --hash-mib 4096 -o '{}'",
        env!("CARGO_BIN_EXE_thorbook"),
        out.display()
    );
    let run = Command::new("sh").arg("-c").arg(&script).current_dir(env!("CARGO_MANIFEST_DIR")).output().unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("4096 MiB") && !stderr.contains("panicked"), "{stderr}");
    assert!(!out.exists());
}

/// `book update`: the book of 2013–2014 updated with the archives of 2013–2015 equals
/// the book built from 2013–2015, and searches only what is new or changed.
#[test]
fn an_updated_book_equals_a_full_rebuild() {
    let dir = tempfile::tempdir().unwrap();
    let thor = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/thor");
    let year = |y: u32| thor.join(format!("WTH_{y}.wtb")).display().to_string();
    let (old, new, full) = (dir.path().join("old.tbk"), dir.path().join("new.tbk"), dir.path().join("full.tbk"));
    let settings = ["--max-ply", "12", "--depth", "5", "--exact-at", "14"];
    let build = |years: &[u32], out: &Path| {
        let mut args: Vec<String> = vec!["book".into(), "build".into()];
        args.extend(years.iter().map(|&y| year(y)));
        args.extend(settings.iter().map(|s| s.to_string()));
        args.extend(["-o".into(), out.display().to_string()]);
        thorbook(&args.iter().map(String::as_str).collect::<Vec<_>>()).ok();
    };
    build(&[2013, 2014], &old);
    build(&[2013, 2014, 2015], &full);
    let (y13, y14, y15) = (year(2013), year(2014), year(2015));
    let run =
        thorbook(&["book", "update", "--book", old.to_str().unwrap(), &y13, &y14, &y15, "-o", new.to_str().unwrap()]);
    run.ok();
    assert!(std::fs::read(&new).unwrap() == std::fs::read(&full).unwrap(), "update differs from a rebuild");
    let reused: usize = run
        .stderr
        .lines()
        .find_map(|l| l.strip_suffix(" leaves reused from the previous book"))
        .and_then(|n| n.trim().parse().ok())
        .expect("the update says how many leaves it reused");
    let book = Book::open_verified(std::fs::read(&full).unwrap()).unwrap();
    assert!(reused > book.len() / 2 && reused < book.len(), "{reused} of {}", book.len());
    // Other settings than the book's, or another evaluation: its leaves cannot be
    // reused, and it says so before any position is collected.
    let update = |extra: &[&str]| {
        let mut args = vec!["book", "update", "--book", old.to_str().unwrap(), &y13];
        args.extend(extra);
        args.extend(["-o", new.to_str().unwrap()]);
        thorbook(&args).fails().to_string()
    };
    let err = update(&["--depth", "6"]);
    assert!(err.contains("cannot be reused") && !err.contains("collected"), "{err}");
    let err = update(&["--classic-eval"]);
    assert!(
        err.contains("cannot be reused") && err.contains("give --eval FILE") && !err.contains("collected"),
        "{err}"
    );
}
