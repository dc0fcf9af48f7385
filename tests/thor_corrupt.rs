//! Damaged WTHOR input: every problem is reported with file, record, byte and ply;
//! `thor check` reports them all; other commands skip and warn, or fail under --strict.
//! Nothing panics.

use std::path::{Path, PathBuf};

use thorbook::thor::{bundled_sources, AnomalyKind, LoadOptions, Source, ThorDatabase, ThorError};

use crate::util::thorbook;

fn bundled(name: &str) -> Vec<u8> {
    bundled_sources().into_iter().find(|s| s.name == name).unwrap().bytes().to_vec()
}

// The WTHOR layout, from the format's description (not from the crate under test):
// a 16-byte header, 68-byte game records whose 60 moves start at byte 8.
const HEADER_LEN: usize = 16;
const GAME_RECORD_LEN: usize = 68;
const MOVES_OFFSET: usize = 8;

/// Offset of move `ply` (1-based) of record `record`.
fn move_at(record: usize, ply: usize) -> usize {
    HEADER_LEN + record * GAME_RECORD_LEN + MOVES_OFFSET + ply - 1
}

/// A copy of WTH_2015.wtb with one damage per listed record.
fn damaged_games() -> Vec<u8> {
    let mut b = bundled("WTH_2015.wtb");
    b[move_at(3, 5)] = 19; // not a square
    b[move_at(4, 1)] = 90; // not a square
    let prev = b[move_at(5, 11)];
    b[move_at(5, 12)] = prev; // occupied at ply 12
    b[move_at(6, 3)] = 11; // a1: empty but illegal at ply 3
    b[move_at(7, 10)] = 0; // a zero in the middle of the list
    b
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn each_damage_is_located_precisely() {
    let bytes = damaged_games();
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "WTH_2015.wtb", &bytes);
    let out = thorbook(&["thor", "check", p.to_str().unwrap()]);
    let report = out.stdout.clone();
    out.fails();
    let name = p.display().to_string();
    for want in [
        format!("{name}: record 3 (byte {}), ply 5: move byte 19 is not a square", move_at(3, 5)),
        format!("{name}: record 4 (byte {}), ply 1: move byte 90 is not a square", move_at(4, 1)),
        format!("{name}: record 5 (byte {}), ply 12: ", move_at(5, 12)),
        format!("{name}: record 6 (byte {}), ply 3: a1 is not legal for black", move_at(6, 3)),
        format!("{name}: record 7 (byte {}), ply 10: a zero ends the move list", move_at(7, 10)),
    ] {
        assert!(report.contains(&want), "missing `{want}` in\n{report}");
    }
    assert!(report.contains("is already occupied"), "{report}");
    assert!(report.contains("1921 valid games, 5 anomalies"), "{report}");
}

#[test]
fn other_commands_skip_and_warn_or_fail_when_strict() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "WTH_2015.wtb", &damaged_games());
    let path = p.to_str().unwrap();
    // The output is complete, and the exit status says something was skipped.
    let out = thorbook(&["thor", "info", "--json", path]);
    out.fails();
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["total_games"], 1926 - 5);
    assert_eq!(v["anomalies"], 5);
    assert!(out.stderr.contains("warning: skipped:") && out.stderr.contains("5 anomalies"), "{}", out.stderr);
    assert!(out.stderr.contains("5 damaged games or files were skipped"), "{}", out.stderr);
    let lenient = thorbook(&["thor", "info", "--json", "--lenient", path]);
    let w: serde_json::Value = serde_json::from_str(lenient.ok()).unwrap();
    assert_eq!((&w["total_games"], &w["anomalies"]), (&v["total_games"], &v["anomalies"]));

    let err = thorbook(&["thor", "info", "--strict", path]).fails().to_string();
    assert!(err.contains("record 3") && err.contains("ply 5") && err.contains("move byte 19"), "{err}");

    let out = thorbook(&["thor", "stats", "--moves", "f5", "--json", "--lenient", path]);
    let v: serde_json::Value = serde_json::from_str(out.ok()).unwrap();
    assert_eq!(v["games"], 1921);
}

#[test]
fn truncated_and_miscounted_files_keep_their_complete_records() {
    let full = bundled("WTH_2014.wtb");
    let dir = tempfile::tempdir().unwrap();
    // Cut in the middle of record 100.
    let cut = HEADER_LEN + 100 * GAME_RECORD_LEN + 30;
    let p = write(dir.path(), "WTH_2014.wtb", &full[..cut]);
    let out = thorbook(&["thor", "check", p.to_str().unwrap()]);
    let report = out.stdout.clone();
    out.fails();
    assert!(
        report.contains(&format!(
            "header says 1817 records of 68 bytes ({} bytes in all), the file has {cut} bytes",
            full.len()
        )),
        "{report}"
    );
    assert!(report.contains("100 valid games"), "{report}");

    // N1 larger than the file.
    let mut bad_n1 = full.clone();
    bad_n1[4..8].copy_from_slice(&1900u32.to_le_bytes());
    let db = ThorDatabase::load(&[Source::from_vec("n1.wtb", bad_n1)], LoadOptions::default()).unwrap();
    assert_eq!(db.games().len(), 1817);
    assert!(matches!(db.anomalies()[0].kind, AnomalyKind::SizeMismatch { declared: 1900, .. }));

    // Shorter than a header.
    let tiny = [Source::from_vec("tiny.wtb", full[..10].to_vec())];
    match ThorDatabase::load(&tiny, LoadOptions::default().with_strict(true)) {
        Err(ThorError::Anomaly(a)) => {
            assert_eq!(a.kind, AnomalyKind::TooShort { len: 10 });
            assert_eq!(a.to_string(), "tiny.wtb: 10 bytes, shorter than the 16-byte header");
        }
        other => panic!("{:?}", other.map(|db| db.games().len())),
    }
}

#[test]
fn name_files_of_the_wrong_length_are_reported() {
    let jou = bundled("WTHOR.JOU");
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "WTHOR.JOU", &jou[..jou.len() - 7]);
    let out = thorbook(&["thor", "check", p.to_str().unwrap()]);
    let report = out.stdout.clone();
    out.fails();
    assert!(report.contains("header says 3760 records of 20 bytes"), "{report}");
    let trn = bundled("WTHOR.TRN");
    let p = write(dir.path(), "WTHOR.TRN", &[&trn[..], &[0u8; 3]].concat());
    let report = thorbook(&["thor", "check", p.to_str().unwrap()]).stdout;
    assert!(report.contains("header says 436 records of 26 bytes"), "{report}");
}

/// The record layer's refusals are tested in-crate (`thor::tests`); here, the binary
/// names a 10x10 file as such instead of reading it as 8x8 games.
#[test]
fn a_10x10_file_is_shown_as_such() {
    // A 10x10 file: P1 = 10, 104-byte records.
    let mut wtd = bundled("WTH_2013.wtb")[..HEADER_LEN].to_vec();
    wtd[4..8].copy_from_slice(&2u32.to_le_bytes());
    wtd[12] = 10;
    wtd.extend(std::iter::repeat_n(7u8, 2 * 104));
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "games.wtd", &wtd);
    let out = thorbook(&["thor", "info", p.to_str().unwrap()]);
    assert!(out.ok().contains("10x10"), "{}", out.stdout);
}

#[test]
fn missing_paths_are_clear_errors() {
    let err = thorbook(&["thor", "info", "/no/such/WTH_1999.wtb"]).fails().to_string();
    assert!(err.contains("/no/such/WTH_1999.wtb: no such file or directory"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let err = thorbook(&["thor", "info", dir.path().to_str().unwrap()]).fails().to_string();
    assert!(err.contains("holds no game archives"), "{err}");
}

/// A file with nothing valid in it is an error (non-zero exit naming it); beside a good
/// file it is skipped with a warning and the good one is still read.
#[test]
fn an_entirely_invalid_archive_fails_and_a_mixed_load_keeps_going() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("WTH_2001.wtb");
    std::fs::write(&bad, [0x9eu8; 100]).unwrap();
    let err = crate::util::thorbook(&["thor", "info", bad.to_str().unwrap()]).fails().to_string();
    assert!(err.contains("nothing valid was read") && err.contains("WTH_2001.wtb"), "{err}");
    let good = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/thor/WTH_2014.wtb");
    let run = crate::util::thorbook(&["thor", "info", bad.to_str().unwrap(), good.to_str().unwrap()]);
    run.fails();
    assert!(run.stdout.contains("WTH_2014.wtb"), "{}", run.stdout);
    assert!(run.stderr.contains("warning: skipped") && run.stderr.contains("WTH_2001.wtb"), "{}", run.stderr);
}
