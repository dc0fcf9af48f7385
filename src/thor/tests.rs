//! Tests of the WTHOR record layer (files, headers, records, replay), which is
//! crate-private: byte-for-byte round trips of the bundled and shared archives, the
//! board sizes a file may declare, and random games written, read and exported.

use std::path::PathBuf;

use proptest::prelude::*;

use super::format::{FileKind, Header, RawGame, Records, ThorFile, HEADER_LEN};
use super::replay::{encode_square, replay};
use super::{bundled_sources, expand_paths, LoadOptions, Source, ThorDatabase};
use crate::position::Position;
use crate::square::Move;

fn assert_files_round_trip(files: &[(String, Vec<u8>)]) {
    for (name, bytes) in files {
        let (file, anomalies) = ThorFile::parse(name, bytes).unwrap();
        assert!(anomalies.is_empty(), "{name}: {anomalies:?}");
        assert!(file.to_bytes() == *bytes, "{name}: bytes differ after a round trip");
    }
}

#[test]
fn every_bundled_file_round_trips_byte_for_byte() {
    let files: Vec<(String, Vec<u8>)> =
        bundled_sources().iter().map(|s| (s.name.clone(), s.bytes().to_vec())).collect();
    assert_eq!(files.len(), 5);
    assert_files_round_trip(&files);
}

/// The shared archives (`cargo test --release --lib shared_ -- --ignored`, run by
/// `.ci/run`); fails, not skips, when they are absent.
#[test]
#[ignore = "needs ../shared/thor"]
fn shared_files_round_trip_byte_for_byte() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/thor");
    assert!(dir.exists(), "{} is absent: this test needs the shared data next to the repository", dir.display());
    let files: Vec<(String, Vec<u8>)> =
        expand_paths(&[dir]).unwrap().iter().map(|p| (p.display().to_string(), std::fs::read(p).unwrap())).collect();
    assert_eq!(files.len(), 41, "39 game files, WTHOR.JOU and WTHOR.TRN");
    assert_files_round_trip(&files);
}

fn bundled(name: &str) -> Vec<u8> {
    let source = bundled_sources().into_iter().find(|s| s.name == name).expect("a bundled file");
    source.bytes().to_vec()
}

#[test]
fn solitaire_10x10_and_unknown_board_sizes_are_never_read_as_8x8_games() {
    let mut sol = bundled("WTH_2013.wtb");
    sol[13] = 1;
    let err = ThorFile::parse("WTH_SOL.wtb", &sol).unwrap_err();
    assert!(err.to_string().contains("solitaire"), "{err}");

    // A 10x10 file: P1 = 10, 104-byte records.
    let mut wtd = bundled("WTH_2013.wtb")[..HEADER_LEN].to_vec();
    wtd[4..8].copy_from_slice(&2u32.to_le_bytes());
    wtd[12] = 10;
    wtd.extend(std::iter::repeat_n(7u8, 2 * 104));
    let (file, anomalies) = ThorFile::parse("games.wtd", &wtd).unwrap();
    assert!(anomalies.is_empty());
    assert_eq!(file.len(), 2);
    assert_eq!(file.to_bytes(), wtd);
    // Named .wtb, the header's P1 = 10 still wins: read as 10x10, not misread as 8x8.
    let (file, _) = ThorFile::parse("games.wtb", &wtd).unwrap();
    assert_eq!(file.kind, FileKind::Games10);
    // An unknown board size is refused.
    let mut odd = wtd.clone();
    odd[12] = 6;
    assert!(ThorFile::parse("odd.wtb", &odd).unwrap_err().to_string().contains("P1 = 6"));
}

/// A finished (or abandoned after `plies`) random legal game as a WTHOR record, with
/// its real final score.
fn random_record(seed: u64, plies: usize, ids: (u16, u16, u16), theoretical: u8) -> RawGame {
    let mut rng = crate::testutil::Rng(seed);
    let mut pos = Position::START;
    let mut moves = [0u8; 60];
    let mut n = 0;
    while n < plies.min(60) && !pos.board.is_game_over() {
        if pos.board.must_pass() {
            pos = pos.pass();
            continue;
        }
        let sq = rng.pick(pos.board.legal_moves());
        moves[n] = encode_square(sq);
        n += 1;
        pos = pos.try_play(Move::Place(sq)).unwrap();
    }
    let (tournament, black, white) = ids;
    let mut raw = RawGame { tournament, black, white, black_score: 0, theoretical_score: theoretical, moves };
    raw.black_score = replay(&raw).unwrap().black_final_discs();
    raw
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Games of several years and P3 values, in files as WTHOR stores them, load; the
    /// export writes one file per (year, P3) and reloads to the same games.
    #[test]
    fn any_legal_games_of_several_years_survive_an_export_and_reload(
        files in proptest::collection::vec(
            (1977u16..=2035, prop_oneof![Just(0u8), 1u8..=60],
             proptest::collection::vec((any::<u64>(), 0usize..=60, any::<(u16, u16, u16)>(), 0u8..=64), 0..6)),
            1..5),
    ) {
        let sources: Vec<Source> = files.iter().enumerate().map(|(i, (year, depth, games))| {
            let records: Vec<RawGame> =
                games.iter().map(|&(seed, plies, ids, theo)| random_record(seed, plies, ids, theo)).collect();
            let mut header = Header::new(*year, *depth);
            header.n1 = u32::try_from(records.len()).unwrap();
            let file = ThorFile { name: format!("f{i}"), kind: FileKind::Games, header, records: Records::Games(records) };
            let bytes = file.to_bytes();
            // A file written is read back to the same header and records.
            let (back, anomalies) = ThorFile::parse("x.wtb", &bytes).unwrap();
            assert!(anomalies.is_empty() && back.header == file.header && back.records == file.records);
            Source::from_vec(&format!("WTH_{year}_{i}.wtb"), bytes)
        }).collect();
        let db = ThorDatabase::load(&sources, with!(LoadOptions::default(), strict: true, index: false)).unwrap();
        let total: usize = files.iter().map(|f| f.2.len()).sum();
        prop_assert_eq!(db.games().len(), total);

        let ids: Vec<_> = db.game_ids().collect();
        let exported = db.to_wthor(&ids).games;
        let mut groups: Vec<(u16, u8)> = files.iter().filter(|f| !f.2.is_empty()).map(|f| (f.0, f.1)).collect();
        groups.sort_unstable();
        groups.dedup();
        if groups.is_empty() {
            // No games: one empty file.
            groups.push((0, 24));
        }
        prop_assert_eq!(exported.iter().map(|f| (f.year, f.depth)).collect::<Vec<_>>(), groups);
        crate::testutil::assert_export_reloads(&db);
    }
}
