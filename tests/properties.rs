//! Property tests over random positions and record sets: incremental Zobrist keys equal
//! recomputed ones, the canonical form is the same for all 8 images, and any sorted
//! record set survives a book write and read unchanged.

use proptest::prelude::*;
use thorbook::board::{Board, Squares};
use thorbook::book::format::{BuildParams, Writer, MOVE_NONE};
use thorbook::book::{Book, Record};
use thorbook::zobrist::IncrementalKey;
use thorbook::Transform;

/// The positions of a game of up to `plies` random legal moves chosen by `seed`
/// (passes when forced).
fn random_line(seed: u64, plies: usize) -> Vec<Board> {
    let mut rng = thorbook::testutil::Rng(seed);
    let mut b = Board::START;
    let mut line = vec![b];
    for _ in 0..plies {
        let moves = b.legal_moves();
        if moves == 0 {
            if b.opponent_moves() == 0 {
                break;
            }
            b = b.pass();
        } else {
            b = b.play(rng.pick(moves)).unwrap();
        }
        line.push(b);
    }
    line
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn incremental_keys_equal_recomputed_keys(seed in any::<u64>(), plies in 0usize..64) {
        let line = random_line(seed, plies);
        let mut key = IncrementalKey::new(&line[0]);
        for w in line.windows(2) {
            let (before, after) = (w[0], w[1]);
            key = if before.legal_moves() == 0 {
                key.pass()
            } else {
                let sq = Squares(after.opponent & !before.player & !before.opponent).next().expect("one new disc");
                key.play(sq, before.flips(sq))
            };
            prop_assert_eq!(key, IncrementalKey::new(&after));
        }
    }

    #[test]
    fn the_canonical_form_is_the_same_for_all_8_images(seed in any::<u64>(), plies in 0usize..64) {
        let b = *random_line(seed, plies).last().unwrap();
        let (canon, t) = b.canonical();
        prop_assert_eq!(t.board(&b), canon);
        for image in Transform::ALL.map(|t| t.board(&b)) {
            prop_assert_eq!(image.canonical().0, canon);
            prop_assert_eq!(image.canonical_key(), canon.key());
        }
    }

    #[test]
    fn any_sorted_record_set_survives_a_book_write_and_read(
        raw in proptest::collection::vec(
            (any::<u64>(), -64i8..=64, prop_oneof![0u8..=64, Just(MOVE_NONE)], -64i8..=64, any::<u8>(),
             any::<u32>(), any::<u16>(), any::<bool>(), any::<u8>()),
            0..200),
        max_ply in any::<u8>(), depth in any::<u8>(), digest in any::<u32>(),
    ) {
        let mut records: Vec<Record> = raw.iter().map(|&(key, value, leaf_move, leaf_score, leaf_depth, games, draws, exact, sel)| {
            let wins = games / 2;
            Record {
                key, value, leaf_move, leaf_score, leaf_depth, games, wins,
                draws: draws.min((games - wins).min(u16::MAX as u32) as u16),
                flags: exact as u8, leaf_selectivity: sel,
            }
        }).collect();
        records.sort_by_key(|r| r.key);
        records.dedup_by_key(|r| r.key);
        let params = BuildParams { max_ply, depth, eval_digest: digest, ..BuildParams::default() };
        let bytes = Writer::write_all(&records, params).unwrap();
        let book = Book::open_verified(&bytes[..]).unwrap();
        prop_assert_eq!(book.params(), params);
        prop_assert_eq!(book.records().collect::<Vec<_>>(), records.clone());
        for r in &records {
            prop_assert_eq!(book.get(r.key), Some(*r));
        }
        // Out of order is refused, never silently reordered.
        if records.len() >= 2 {
            let mut swapped = records.clone();
            swapped.swap(0, 1);
            prop_assert!(Writer::write_all(&swapped, params).is_err());
        }
    }
}
