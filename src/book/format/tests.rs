//! The writer and the reader of the book file against each other, over any records a
//! version 3 book can hold (the writer is crate-private: books are written by the
//! pipelines).

use proptest::prelude::*;

use super::{BookError, BuildParams, FieldFault, LeafMove, Record, Writer};
use crate::book::Book;

proptest! {
    /// Any records a version 3 book can hold (leaf depth 0..=63, selectivity 0..=127,
    /// any counts: small ones in the record, large ones in the count table) are read
    /// back exactly, by scan and by probe; blocks of several records exercise the block
    /// checksums; a field the record cannot hold is refused by record.
    #[test]
    fn any_sorted_record_set_survives_a_book_write_and_read(
        raw in proptest::collection::vec(
            (any::<u64>(), -64i8..=64, prop_oneof![0u8..=64, Just(LeafMove::NONE.byte())], -64i8..=64, 0u8..=63,
             prop_oneof![0u32..1100, any::<u32>()], any::<u16>(), any::<bool>(), 0u8..=127),
            0..300),
        max_ply in any::<u8>(), depth in any::<u8>(), digest in any::<u32>(), bad_field in 0usize..3,
    ) {
        let mut records: Vec<Record> = raw.iter().map(|&(key, value, leaf_move_code, leaf_score, leaf_depth, games, draws, exact, sel)| {
            let wins = games / 2;
            Record {
                key, value, leaf_move: LeafMove::from_byte(leaf_move_code), leaf_score, leaf_depth, games, wins,
                draws: draws.min(u16::try_from(games - wins).unwrap_or(u16::MAX)),
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
        let fresh = Book::open(&bytes[..]).unwrap();
        for r in &records {
            prop_assert_eq!(book.get(r.key), Some(*r));
            prop_assert_eq!(fresh.get(r.key), Some(*r));
        }
        prop_assert!(fresh.damage().is_none());
        // Out of order is refused, never silently reordered.
        if records.len() >= 2 {
            let mut swapped = records.clone();
            swapped.swap(0, 1);
            prop_assert!(Writer::write_all(&swapped, params).is_err());
        }
        if let Some(last) = records.len().checked_sub(1) {
            let mut bad = records.clone();
            match bad_field {
                0 => bad[last].leaf_depth = 64,
                1 => bad[last].leaf_selectivity = 128,
                _ => bad[last].flags = 2,
            }
            let err = Writer::write_all(&bad, params).unwrap_err();
            let field = matches!(
                (bad_field, &err),
                (0, BookError::Field { what: FieldFault::LeafDepth { depth: 64 }, .. })
                    | (1, BookError::Field { what: FieldFault::Selectivity { tenths: 128 }, .. })
                    | (2, BookError::Field { what: FieldFault::Flags { flags: 2 }, .. })
            );
            prop_assert!(field && matches!(err, BookError::Field { index, .. } if index == last as u64), "{}", err);
            prop_assert!(err.to_string().starts_with(&format!("record {last} ")), "{}", err);
        }
    }
}

/// A leaf move code no position has (65..=254), written under valid checksums (the
/// writer keeps the byte as it is, as it keeps a damaged book's), is refused by the
/// full verification, named by record and byte; a probe of it reads no leaf move.
#[test]
fn a_leaf_move_code_out_of_range_is_refused_by_record_and_byte() {
    let records: Vec<Record> = (0..5u8)
        .map(|i| Record {
            key: u64::from(i) << 40,
            value: 3,
            leaf_move: LeafMove::from_byte(if i == 2 { 70 } else { i }),
            leaf_score: 3,
            leaf_depth: 4,
            games: 2,
            wins: 1,
            draws: 0,
            flags: 0,
            leaf_selectivity: 0,
        })
        .collect();
    let bytes = Writer::write_all(&records, BuildParams::default()).unwrap();
    let book = Book::open(&bytes[..]).unwrap();
    assert_eq!(book.get(2 << 40).unwrap().leaf(), None);
    let err = Book::open_verified(&bytes[..]).err().unwrap();
    assert!(matches!(err, BookError::Field { index: 2, what: FieldFault::LeafMove { code: 70 }, .. }), "{err}");
    let text = err.to_string();
    assert!(text.contains("record 2 (byte 96,") && text.contains("leaf move code 70"), "{text}");
}
