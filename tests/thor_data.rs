//! WTHOR tooling against the real archives: the bundled subset always, the full shared
//! set (`../shared/thor`) when present. Expectations come from `../shared/README.md`,
//! which an independent replayer produced.

use std::path::Path;

use thorbook::square::Move;
use thorbook::thor::{bundled_sources, expand_paths, GameFilter, LoadOptions, Outcome, Source, ThorDatabase};
use thorbook::{Position, Transform};

use crate::util::{shared, thorbook};

/// Black's discs in a final position with the empties to the winner, as WTHOR counts
/// a finished game (a reference written apart from the library's).
fn black_final_discs(p: &Position) -> u8 {
    let (b, w) = (p.black().count_ones(), p.white().count_ones());
    let empties = 64 - b - w;
    let b = match b.cmp(&w) {
        std::cmp::Ordering::Greater => b + empties,
        std::cmp::Ordering::Equal => b + empties / 2,
        std::cmp::Ordering::Less => b,
    };
    u8::try_from(b).unwrap()
}

fn load_shared(index: bool) -> ThorDatabase {
    let dir = shared("thor");
    let sources: Vec<Source> = expand_paths(&[dir]).unwrap().iter().map(|p| Source::open(p).unwrap()).collect();
    ThorDatabase::load(&sources, with!(LoadOptions::default(), strict: true, index: index)).unwrap()
}

#[test]
#[ignore = "needs ../shared/thor"]
fn shared_archive_facts() {
    let db = load_shared(false);
    assert_eq!(db.games().len(), 115_820);
    assert_eq!(db.files().iter().filter(|f| f.records > 0 && f.header.n1 > 0).count(), 39);
    assert!(db.anomalies().is_empty(), "{:?}", &db.anomalies()[..db.anomalies().len().min(3)]);
    let f5: Move = "f5".parse().unwrap();
    let mut unfinished = 0;
    let mut early = 0;
    let mut with_pass = 0;
    for g in db.games() {
        assert_eq!(g.moves_with_passes()[0], f5, "{:?}", g.record);
        assert_eq!(g.depth, 24);
        match g.outcome() {
            Outcome::Unfinished => unfinished += 1,
            // Strict loading already failed on any mismatch; check again explicitly.
            Outcome::FinishedEarly => {
                early += 1;
                assert_eq!(Some(black_final_discs(&g.final_position())), g.black_discs());
            }
            Outcome::Finished => assert_eq!(Some(black_final_discs(&g.final_position())), g.black_discs()),
        }
        with_pass += (g.passes() > 0) as usize;
    }
    assert_eq!(unfinished, 433);
    assert_eq!(early, 5_150);
    assert_eq!(with_pass, 66_488);
    assert_eq!(db.players().len(), 3_760);
    assert_eq!(db.tournaments().len(), 436);
}

fn check_stats_after_f5(db: &ThorDatabase) {
    let after_f5 = Position::from_moves("f5").unwrap();
    let s = db.stats(&after_f5, &GameFilter::default());
    assert_eq!(s.games, db.games().len(), "every game starts f5");
    let continuing: usize = s.moves.iter().map(|m| m.games).sum();
    assert_eq!(continuing + s.ended_here, s.games);
    assert_eq!(s.black_wins + s.draws + s.white_wins, s.games);

    // The same position in another orientation: d3 is f5 reflected in the a8-h1 diagonal.
    let after_d3 = Position::from_moves("d3").unwrap();
    let t = Transform::AntiTranspose;
    let mirrored = db.stats(&after_d3, &GameFilter::default());
    assert_eq!(mirrored.games, s.games);
    assert_eq!(mirrored.moves.len(), s.moves.len());
    for m in &s.moves {
        let want = t.apply_move(m.mv);
        let got = mirrored.moves.iter().find(|x| x.mv == want).unwrap_or_else(|| panic!("{want} missing"));
        assert_eq!((got.games, got.black_wins, got.draws), (m.games, m.black_wins, m.draws));
    }
}

#[test]
fn stats_after_f5_count_every_game_in_any_orientation() {
    let db = ThorDatabase::load(&bundled_sources(), with!(LoadOptions::default(), strict: true, index: true)).unwrap();
    assert!(db.games().len() > 6_000);
    check_stats_after_f5(&db);
}

#[test]
#[ignore = "needs ../shared/thor"]
fn shared_stats_after_f5_count_every_game_in_any_orientation() {
    check_stats_after_f5(&load_shared(true));
}

#[test]
#[ignore = "needs ../shared/thor"]
fn shared_move_order_counts() {
    let db = load_shared(true);
    let count = |seq: &str| {
        let s = db.stats(&Position::from_moves(seq).unwrap(), &GameFilter::default());
        s.moves.iter().map(|m| (m.mv.to_string(), m.games)).collect::<std::collections::HashMap<_, _>>()
    };
    let after_f5 = count("f5");
    assert_eq!((after_f5["d6"], after_f5["f6"], after_f5["f4"]), (75_766, 38_800, 1_254));
    let after_f5d6 = count("f5d6");
    assert_eq!(["c3", "c5", "c4", "c6", "c7"].map(|m| after_f5d6[m]), [39_169, 20_055, 15_439, 908, 195]);
    let after_f5f6 = count("f5f6");
    assert_eq!(["e6", "c4", "d3", "f7"].map(|m| after_f5f6[m]), [38_138, 308, 266, 88]);
    assert_eq!(count("f5f4")["e3"], 1_143);
}

#[test]
fn transpositions_merge_in_the_position_filter() {
    let db = ThorDatabase::load(&bundled_sources(), with!(LoadOptions::default(), strict: true, index: true)).unwrap();
    // f5d6c3d3c4 and f5d6c4d3c3 reach the same position by different move orders.
    let a = Position::from_moves("f5d6c3d3c4").unwrap();
    let b = Position::from_moves("f5d6c4d3c3").unwrap();
    assert_eq!(a, b);
    let by_filter = db.select(&with!(GameFilter::default(), position: Some(a)));
    // Naive reference: replay every game and compare every position's canonical form.
    let canon = a.board.canonical().0;
    let naive: Vec<_> = db
        .game_ids()
        .filter(|&g| {
            let mut pos = Position::START;
            for mv in db.game(g).unwrap().moves_with_passes() {
                if pos.side == a.side && pos.board.canonical().0 == canon {
                    return true;
                }
                pos = pos.try_play(mv).unwrap();
            }
            pos.side == a.side && pos.board.canonical().0 == canon
        })
        .collect();
    assert!(!naive.is_empty());
    assert_eq!(by_filter, naive);
}

#[test]
fn cli_info_stats_games_on_bundled_defaults() {
    let out = thorbook(&["thor", "info", "--json"]);
    let v: serde_json::Value = serde_json::from_str(out.ok()).unwrap();
    assert_eq!(v["total_games"], 6139);
    assert_eq!(v["anomalies"], 0);

    let out = thorbook(&["thor", "stats", "--moves", "f5", "--json"]);
    let v: serde_json::Value = serde_json::from_str(out.ok()).unwrap();
    assert_eq!(v["games"], 6139);

    let out = thorbook(&["thor", "games", "--moves", "f5d6c3", "--sort", "score", "--limit", "5", "--format", "csv"]);
    let text = out.ok();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 6, "{text}");
    assert!(lines[1..].iter().all(|l| l.ends_with(|c: char| c.is_ascii_digit()) && l.contains(",f5d6c3")));

    let out = thorbook(&["thor", "export", "--years", "2014", "--format", "jsonl"]);
    let n = out.ok().lines().count();
    assert_eq!(n, 1817);

    // Every text format written to a file is what standard output shows (the table too).
    let dir = tempfile::tempdir().unwrap();
    for format in ["table", "transcript", "csv", "jsonl", "ggf"] {
        let file = dir.path().join(format!("2014.{format}"));
        let shown = thorbook(&["thor", "export", "--years", "2014", "--format", format]).ok().to_string();
        thorbook(&["thor", "export", "--years", "2014", "--format", format, "-o", file.to_str().unwrap()]).ok();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), shown, "{format}");
    }
}

#[test]
fn export_wtb_writes_a_loadable_subset() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("subset.wtb");
    let p = path.to_str().unwrap();
    thorbook(&["thor", "export", "--years", "2015", "--moves", "f5f6", "--format", "wtb", "-o", p]).ok();
    let subset =
        ThorDatabase::load(&[Source::open(&path).unwrap()], with!(LoadOptions::default(), strict: true)).unwrap();
    assert!(subset.anomalies().is_empty());
    let db = ThorDatabase::load(&bundled_sources(), with!(LoadOptions::default(), strict: true, index: true)).unwrap();
    let want = db.select(&with!(
        GameFilter::default(),
        years: Some((2015, 2015)),
        position: Some(Position::from_moves("f5f6").unwrap()),
    ));
    assert_eq!(subset.games().len(), want.len());
    assert!(subset.games().iter().all(|g| g.year == 2015));
    let transcripts = |d: &ThorDatabase, ids: &[thorbook::thor::GameId]| -> Vec<String> {
        ids.iter().map(|&i| d.game(i).unwrap().transcript()).collect()
    };
    assert_eq!(transcripts(&subset, &subset.game_ids().collect::<Vec<_>>()), transcripts(&db, &want));
    assert!(Path::new(&path).exists());
}

/// `thor export --format wtb` over several years writes one file per year, each with
/// its own year and P3, so the games reload as the games they were (a single file would
/// date them all by its one header).
#[test]
fn a_wtb_export_over_several_years_writes_a_file_per_year() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sel.wtb");
    crate::util::thorbook(&["thor", "export", "--format", "wtb", "-o", out.to_str().unwrap()]).ok();
    let original = thorbook::thor::ThorDatabase::load(
        &thorbook::thor::bundled_sources(),
        with!(thorbook::thor::LoadOptions::default(), strict: true, index: false),
    )
    .unwrap();
    let mut reloaded_games = 0;
    for year in [2013u16, 2014, 2015] {
        let path = dir.path().join(format!("sel_{year}.wtb"));
        let source = thorbook::thor::Source::open(&path).unwrap();
        let db = thorbook::thor::ThorDatabase::load(
            &[source],
            with!(thorbook::thor::LoadOptions::default(), strict: true, index: false),
        )
        .unwrap();
        assert!(db.games().iter().all(|g| g.year == year), "{year}");
        // Moves, scores and P3 (the ids are checked in-crate, by `thor::tests`).
        let record = |g: &thorbook::thor::ThorGame| (g.transcript(), g.black_discs(), g.theoretical_discs(), g.depth);
        let want: Vec<_> = original.games().iter().filter(|g| g.year == year).map(record).collect();
        let got: Vec<_> = db.games().iter().map(record).collect();
        assert_eq!(got, want, "{year}");
        reloaded_games += got.len();
    }
    assert_eq!(reloaded_games, original.games().len());
    assert!(!out.exists(), "several years never go into one file");
    // One year still goes to the file named.
    let one = dir.path().join("one.wtb");
    crate::util::thorbook(&["thor", "export", "--format", "wtb", "--years", "2014", "-o", one.to_str().unwrap()]).ok();
    let db = thorbook::thor::ThorDatabase::load(
        &[thorbook::thor::Source::open(&one).unwrap()],
        with!(thorbook::thor::LoadOptions::default(), strict: true, index: false),
    )
    .unwrap();
    assert_eq!(db.games().len(), original.games().iter().filter(|g| g.year == 2014).count());
}

/// Logistello's book games (`../shared/logistello/logbook.gam.gz`), read by content as
/// every archive is, checked line by line against a replay written here from the text
/// (each move's sign names its colour; a repeated sign is a pass).
#[test]
#[ignore = "needs ../shared/logistello"]
fn shared_logistello_book_games_read_and_replay() {
    use std::io::BufRead;
    let path = shared("logistello/logbook.gam.gz");
    let db = ThorDatabase::load(&[Source::open(&path).unwrap()], LoadOptions::default()).unwrap();
    assert!(db.anomalies().is_empty(), "{:?}", &db.anomalies()[..db.anomalies().len().min(3)]);
    assert_eq!(db.games().len(), 121_123);
    let text = std::io::BufReader::new(flate2::read::GzDecoder::new(std::fs::File::open(&path).unwrap()));
    let d3: Move = "d3".parse().unwrap();
    let (mut sixty, mut plain_results) = (0, 0);
    for (g, line) in db.games().iter().zip(text.lines()) {
        let line = line.unwrap();
        let (moves, tail) = line.split_once(':').unwrap();
        let stored: i32 = tail.split_whitespace().next().unwrap().parse().unwrap();
        let mut p = Position::START;
        let mut played = Vec::new();
        for m in moves.as_bytes().chunks(3) {
            let side = if m[0] == b'+' { thorbook::Color::Black } else { thorbook::Color::White };
            if side != p.side {
                p = p.pass();
            }
            let mv: Move = std::str::from_utf8(&m[1..]).unwrap().parse().unwrap();
            p = p.try_play(mv).unwrap();
            played.push(mv);
        }
        assert_eq!(g.moves_with_passes().into_iter().filter(|m| *m != Move::Pass).collect::<Vec<_>>(), played);
        assert_eq!(g.moves_with_passes()[0], d3);
        assert!(p.board.is_game_over(), "line {}", g.record);
        assert_eq!(Some(black_final_discs(&p)), g.black_discs(), "line {}", g.record);
        // The stored result is black's disc difference; some count the empties as WTHOR
        // does (to the winner), the rest leave them out: both must be this game's.
        let (b, w) = (p.black().count_ones() as i32, p.white().count_ones() as i32);
        let full = 2 * i32::from(black_final_discs(&p)) - 64;
        assert!(stored == full || stored == b - w, "line {}: stored {stored}, replayed {full}", g.record);
        plain_results += usize::from(stored != full);
        sixty += usize::from(played.len() == 60);
    }
    assert_eq!(sixty, 119_644);
    // 1,477 games (1.2%) store the difference without the empties (measured with a
    // Python replay through the package); they are read as finished, scored as WTHOR
    // scores them.
    assert_eq!(plain_results, 1_477);
}
