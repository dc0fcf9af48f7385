//! Game archives other than WTHOR: GGF (as GGS ships it), transcripts and JSON lines,
//! read everywhere WTHOR is, converted to and from WTHOR without losing a move, and
//! damaged input located by file, line, byte and ply.

use std::io::Write;
use std::path::{Path, PathBuf};

use thorbook::book::{BuildConfig, GameLine};
use thorbook::search::Settings;
use thorbook::thor::{
    bundled_sources, AnomalyKind, GameFilter, GameText, IoStep, LoadOptions, SkipReason, Source, TextFault,
    ThorDatabase,
};
use thorbook::Position;

use crate::util::{build_book_bytes, thorbook};

fn bundled() -> ThorDatabase {
    ThorDatabase::load(&bundled_sources(), with!(LoadOptions::default(), strict: true, index: true)).unwrap()
}

fn load_text(name: &str, text: &str) -> ThorDatabase {
    ThorDatabase::load(&[Source::from_vec(name, text.as_bytes().to_vec())], with!(LoadOptions::default(), index: true))
        .unwrap()
}

fn written(db: &ThorDatabase, format: GameText) -> String {
    db.games().iter().map(|g| db.write_game(g, format) + "\n").collect()
}

/// Each game's moves as stored (no passes), and its result.
fn move_lists(db: &ThorDatabase) -> Vec<(String, Option<u8>)> {
    db.games().iter().map(|g| (g.transcript(), g.black_discs())).collect()
}

/// Reloads WTHOR files written by `to_wthor`.
fn through_wthor(db: &ThorDatabase) -> ThorDatabase {
    let ids: Vec<_> = db.game_ids().collect();
    let export = db.to_wthor(&ids);
    let mut sources: Vec<Source> = export
        .games
        .into_iter()
        .enumerate()
        .map(|(i, f)| Source::from_vec(&format!("WTH_{}_{i}.wtb", f.year), f.bytes))
        .collect();
    sources.extend(export.players.map(|f| Source::from_vec("x.JOU", f.bytes)));
    sources.extend(export.tournaments.map(|f| Source::from_vec("x.TRN", f.bytes)));
    ThorDatabase::load(&sources, with!(LoadOptions::default(), strict: true, index: true)).unwrap()
}

#[test]
fn wthor_through_ggf_and_transcripts_back_to_wthor_keeps_every_move_and_result() {
    let db = bundled();
    for (format, name) in
        [(GameText::Ggf, "all.ggf"), (GameText::Transcript, "all.txt"), (GameText::Jsonl, "all.jsonl")]
    {
        let copy = load_text(name, &written(&db, format));
        assert!(copy.anomalies().is_empty(), "{name}: {:?}", copy.anomalies().first());
        // The same games in the same order, their move bytes identical, results kept.
        assert_eq!(move_lists(&copy), move_lists(&db), "{name}");
        let back = through_wthor(&copy);
        let mut want = move_lists(&db);
        let mut got = move_lists(&back);
        want.sort_unstable();
        got.sort_unstable();
        assert_eq!(got, want, "{name} → WTHOR");
        // GGF and JSON lines carry names and years; JSON lines the theoretical score.
        if format != GameText::Transcript {
            let who = |d: &ThorDatabase, i: usize| {
                let g = &d.games()[i];
                (d.black_name(g), d.white_name(g), d.tournament_name(g), g.known_year())
            };
            for i in (0..db.games().len()).step_by(97) {
                assert_eq!(who(&copy, i), who(&db, i), "{name} game {i}");
            }
        }
        let theoretical = |d: &ThorDatabase| d.games().iter().map(|g| g.theoretical_discs()).collect::<Vec<_>>();
        if format == GameText::Jsonl {
            assert_eq!(theoretical(&copy), theoretical(&db));
        } else {
            assert!(copy.games().iter().all(|g| g.theoretical_discs().is_none()), "{name} has no theoretical score");
        }
    }
}

#[test]
fn statistics_and_books_from_a_copy_equal_those_from_wthor() {
    let db = bundled();
    let after_f5d6 = Position::from_moves("f5d6").unwrap();
    let want = serde_json::to_string(&db.stats(&after_f5d6, &GameFilter::default())).unwrap();
    let config = with!(
        BuildConfig::default(),
        max_ply: 6,
        min_games: 2,
        search: with!(Settings::default(), depth: Some(2), exact_at: Some(0), hash_mib: 2),
    );
    let lines = |d: &ThorDatabase| d.games().iter().map(GameLine::from).collect::<Vec<_>>();
    let book = build_book_bytes(&lines(&db), &config);
    for (format, name) in [(GameText::Ggf, "all.ggf"), (GameText::Transcript, "all.txt")] {
        let copy = load_text(name, &written(&db, format));
        assert_eq!(serde_json::to_string(&copy.stats(&after_f5d6, &GameFilter::default())).unwrap(), want, "{name}");
        assert!(build_book_bytes(&lines(&copy), &config) == book, "{name}: the book differs");
    }
}

/// Lines as GGS's archives hold them, written from the format's description: the board
/// rows separated by spaces, moves with evaluation and time (`f5/-1.00/0.01`), ratings,
/// a time control and the result as black's disc difference with three decimals.
const GGS_STANDARD: &str = "(;GM[Othello]PC[GGS/os]DT[2003.09.13_20:40:34.UTC]PB[Saio3000]PW[Saio1200]RB[2613.16]RW[2584.44]TI[15:00//02:00]TY[8]RE[-12.000]BO[8 -------- -------- -------- ---O*--- ---*O--- -------- -------- -------- *]B[f5//0.01]W[d6/-1.00/0.01]B[c3]W[d3]B[c4]W[f4]B[f6]W[g5]B[e6]W[c5]B[f3]W[f7]B[e7]W[f8]B[e3]W[g6]B[b6]W[g4]B[c6]W[g3]B[h3]W[f2]B[h5]W[h4]B[e2]W[b5]B[d7]W[b4]B[h6]W[e8]B[c8]W[d8]B[g8]W[g2]B[a5]W[a3]B[a4]W[b3]B[a2]W[e1]B[d2]W[a7]B[d1]W[c1]B[h1]W[h2]B[g1]W[f1]B[b1]W[g7]B[h8]W[h7]B[a6]W[a1]B[PA]W[c7]B[b7]W[a8]B[b8]W[c2]B[b2];)";
/// A random start: eighteen discs already on the board.
const GGS_RANDOM: &str = "(;GM[Othello]PC[GGS/os]DT[2003.09.13_21:00:00.UTC]PB[a]PW[b]TY[8r18]RE[+4.000]BO[8 -------- ---O---- --*OO*-- --*O**-- -*OO*O-- --**O*-- ----*--- -------- *]B[c1//0.1];)";
/// A 10×10 game.
const GGS_TEN: &str = "(;GM[Othello]PC[GGS/os]DT[2003.09.14_10:00:00.UTC]PB[a]PW[b]TY[10]RE[?]BO[10 ---------- ---------- ---------- ---------- ----O*---- ----*O---- ---------- ---------- ---------- ---------- *]B[g6];)";
/// A game lost on time: the result carries `:t`, not a disc count.
const GGS_TIMEOUT: &str = "(;GM[Othello]PC[GGS/os]DT[1054041863]PB[slow]PW[fast]TI[05:00//00:00]TY[8]RE[-64.000:t]BO[8 ---------------------------O*------*O--------------------------- *]B[f5//299.0]W[d6//1.0];)";
/// Synchro, anti-Othello and komi games.
const GGS_VARIANTS: &str = "(;GM[Othello]PC[GGS/os]PB[a]PW[b]TY[s8]RE[+2.000]BO[8 ---------------------------O*------*O--------------------------- *]B[f5]W[d6];)\n(;GM[Othello]PC[GGS/os]PB[a]PW[b]TY[a8]RE[?]BO[8 ---------------------------O*------*O--------------------------- *]B[f5];)\n(;GM[Othello]PC[GGS/os]PB[a]PW[b]TY[k8]RE[?]BO[8 ---------------------------O*------*O--------------------------- *]B[f5];)";

#[test]
fn real_ggs_lines_are_read_or_skipped_for_the_right_reason() {
    let text = [GGS_STANDARD, GGS_RANDOM, GGS_TEN, GGS_TIMEOUT, GGS_VARIANTS].join("\n");
    let db = load_text("Othello.2003.ggf", &text);
    assert!(db.anomalies().is_empty(), "{:?}", db.anomalies());
    assert_eq!(db.games().len(), 3, "the standard game, the timeout and the synchro game");
    let g = &db.games()[0];
    let first = bundled();
    // The GGS line is the first game of the bundled 2013 archive under other names.
    assert_eq!(g.transcript(), first.games()[0].transcript());
    assert_eq!((g.black_discs(), g.passes(), g.known_year()), (Some(26), 1, Some(2003)));
    assert_eq!((db.black_name(g).as_str(), db.white_name(g).as_str()), ("Saio3000", "Saio1200"));
    assert_eq!(db.tournament_name(g), "GGS/os");
    assert_eq!(g.theoretical_discs(), None, "GGF has no theoretical score");
    let timeout = &db.games()[1];
    assert_eq!((timeout.black_discs(), timeout.known_year(), timeout.record), (None, Some(2003), 4));
    assert_eq!(db.games()[2].black_discs(), Some(33), "a result stated for an unfinished game is kept");
    let skipped = &db.files()[0].skipped;
    let want = [
        (SkipReason::BoardSize(10), 1),
        (SkipReason::RandomStart, 1),
        (SkipReason::AntiOthello, 1),
        (SkipReason::Komi, 1),
    ];
    assert_eq!(skipped.len(), want.len(), "{skipped:?}");
    for (reason, n) in want {
        assert_eq!(skipped.get(&reason), Some(&n), "{reason}");
    }
    // The command line shows the reasons.
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "Othello.2003.ggf", text.as_bytes());
    let info = thorbook(&["thor", "info", p.to_str().unwrap()]);
    assert!(info.ok().contains("1 10x10 board, 1 random start, 1 anti-Othello, 1 komi"), "{}", info.stdout);
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn bz2(bytes: &[u8]) -> Vec<u8> {
    let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn gz(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

#[test]
fn a_folder_of_mixed_archives_is_read_by_content() {
    let db = bundled();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ggf = written(&db, GameText::Ggf);
    let transcripts = written(&db, GameText::Transcript);
    write(d, "Othello.2013.ggf.bz2", &bz2(ggf.as_bytes()));
    // Names that say nothing: the content decides.
    write(d, "selfplay", &gz(transcripts.as_bytes()));
    write(d, "games.dat", ggf.as_bytes());
    write(d, "README.md", b"These are my games.\n");
    let wtb = bundled_sources().into_iter().find(|s| s.name == "WTH_2015.wtb").unwrap();
    write(d, "WTH_2015.wtb", wtb.bytes());
    let out = thorbook(&["thor", "info", d.to_str().unwrap()]);
    let text = out.ok();
    assert!(text.contains("GGF.bz2") && text.contains("moves.gz") && text.contains("games.dat"), "{text}");
    assert!(!text.contains("README"), "{text}");
    let n = db.games().len();
    let wtb_games = ThorDatabase::load(&[wtb], LoadOptions::default()).unwrap().games().len();
    assert!(text.contains(&format!("games:       {} ", 3 * n + wtb_games)), "{text}");
    // Statistics over the mix: every copy counts.
    let stats = thorbook(&["thor", "stats", d.to_str().unwrap(), "--moves", "f5", "--json"]);
    let v: serde_json::Value = serde_json::from_str(stats.ok()).unwrap();
    let one = db.stats(&Position::from_moves("f5").unwrap(), &GameFilter::default()).games;
    assert!(v["games"].as_u64().unwrap() as usize > 3 * one, "{v}");
}

#[test]
fn damaged_text_is_located_and_the_rest_is_read() {
    let good = "(;GM[Othello]PB[x]PW[y]TY[8]RE[?]B[f5]W[d6];)";
    let text = format!(
        "{good}\n(;GM[Othello]PB[x]TY[8]B[f5]W[f5];)\n(;GM[Othello]PB[x]TY[8]B[f5]W[zz];)\n{good}\n(;GM[Othello]PB[cut]B[f5]"
    );
    let db = load_text("broken.ggf", &text);
    assert_eq!(db.games().len(), 2);
    let found: Vec<_> = db.anomalies().iter().map(|a| (a.line, a.ply, a.offset)).collect();
    let line2 = good.len() + 1;
    let line3 = line2 + "(;GM[Othello]PB[x]TY[8]B[f5]W[f5];)\n".len();
    let line5 = line3 + "(;GM[Othello]PB[x]TY[8]B[f5]W[zz];)\n".len() + good.len() + 1;
    assert_eq!(
        found,
        [
            (Some(2), Some(2), Some(line2 + "(;GM[Othello]PB[x]TY[8]B[f5]W[".len())),
            (Some(3), Some(2), Some(line3 + "(;GM[Othello]PB[x]TY[8]B[f5]W[".len())),
            (Some(5), None, Some(line5)),
        ]
    );
    assert!(matches!(db.anomalies()[0].kind, AnomalyKind::Occupied { .. }));
    assert!(
        matches!(db.anomalies()[1].kind, AnomalyKind::Syntax { fault: TextFault::NotAMove }),
        "{}",
        db.anomalies()[1]
    );
    assert!(matches!(db.anomalies()[2].kind, AnomalyKind::Syntax { fault: TextFault::Cut }), "{}", db.anomalies()[2]);
    assert!(db.anomalies()[2].to_string().starts_with("broken.ggf: line 5 (byte"), "{}", db.anomalies()[2]);

    // Transcripts: an illegal move names its ply; JSON lines a syntax error.
    let t = load_text("games.txt", "f5d6c3\nf5d6c3d3c4f4f6f6\nf5d6 +2\n");
    assert_eq!(t.games().len(), 2);
    assert_eq!((t.anomalies()[0].line, t.anomalies()[0].ply), (Some(2), Some(8)));
    let j = load_text("games.jsonl", "{\"moves\":\"f5d6\"}\n{\"moves\":\n");
    assert_eq!((j.games().len(), j.anomalies()[0].line), (1, Some(2)));

    // The command finishes its output, then exits 1 unless --lenient; --strict stops.
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "broken.ggf", text.as_bytes());
    let p = p.to_str().unwrap();
    let run = thorbook(&["thor", "games", p]);
    assert!(run.fails().contains("broken.ggf: line 2 (byte"), "{}", run.stderr);
    assert!(run.stdout.contains("f5d6"), "{}", run.stdout);
    thorbook(&["thor", "games", p, "--lenient"]).ok();
    assert!(thorbook(&["thor", "games", p, "--strict"]).fails().contains("line 2"));
    // A cut compressed archive: the games before the cut are read, the cut is named.
    let mut cut = bz2(written(&bundled(), GameText::Ggf).as_bytes());
    cut.truncate(cut.len() / 2);
    let c = write(dir.path(), "cut.ggf.bz2", &cut);
    let db = ThorDatabase::load(&[Source::open(&c).unwrap()], LoadOptions::default()).unwrap();
    assert!(db.games().len() > 1000, "{}", db.games().len());
    assert!(
        db.anomalies().iter().any(|a| matches!(a.kind, AnomalyKind::Io { step: IoStep::Continue, .. })),
        "{:?}",
        db.anomalies()
    );
    assert!(db.anomalies().iter().any(|a| a.to_string().contains("the data stops")), "{:?}", db.anomalies());
    // A foreign binary is named as such.
    let png = write(dir.path(), "photo", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
    let err = thorbook(&["thor", "info", png.to_str().unwrap()]).fails().to_string();
    assert!(err.contains("photo: not a game archive thorbook reads"), "{err}");
}

#[test]
fn match_output_is_read_with_its_signed_score() {
    let line = r#"{"game":1,"opening":3,"a_color":"black","moves":"f5d6c3d3c4f4f6g5e6c5f3f7e7f8e3g6b6g4c6g3h3f2h5h4e2b5d7b4h6e8c8d8g8g2a5a3a4b3a2e1d2a7d1c1h1h2g1f1b1g7h8h7a6a1psc7b7a8b8c2b2","black_score":-12,"forfeit":null,"a_points":0.0}"#;
    let db = load_text("match.jsonl", &format!("{line}\n"));
    assert!(db.anomalies().is_empty(), "{:?}", db.anomalies());
    assert_eq!(db.games()[0].black_discs(), Some(26));
    assert_eq!(db.black_name(&db.games()[0]), "?");
}

#[test]
fn a_ggf_archive_converts_to_wthor_with_its_names() {
    let dir = tempfile::tempdir().unwrap();
    let text = [GGS_STANDARD, GGS_TIMEOUT].join("\n");
    let p = write(dir.path(), "Othello.ggf", text.as_bytes());
    // The game lost on time reaches f5d6 with no result: counted, not scored.
    let stats = thorbook(&["thor", "stats", p.to_str().unwrap(), "--moves", "f5d6"]);
    assert!(
        stats.ok().contains("2 games (1 without a result): black wins 0 (0.0%), draws 0 (0.0%), white wins 1 (100.0%)"),
        "{}",
        stats.stdout
    );
    let out = dir.path().join("conv.wtb");
    let run = thorbook(&["thor", "export", p.to_str().unwrap(), "--format", "wtb", "-o", out.to_str().unwrap()]);
    run.ok();
    assert!(run.stderr.contains("1 games without a known result"), "{}", run.stderr);
    let back = thorbook(&["thor", "games", dir.path().to_str().unwrap(), "--format", "csv"]);
    let csv = back.ok();
    assert!(csv.contains("2003,GGS/os,Saio3000,Saio1200,26,"), "{csv}");
    assert!(csv.contains("2003,GGS/os,slow,fast,"), "{csv}");
}

/// `book learn` adds the lines of games the way `book update` rebuilds with them: for a
/// book of every position (a minimum of 1 game), learning the 2014 games (from GGF)
/// gives the same bytes as updating with the 2013 and 2014 archives; learning a game
/// already in the book adds no position, searches nothing and changes no value.
#[test]
fn learning_games_equals_updating_with_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let path = |name: &str| d.join(name).to_str().unwrap().to_string();
    for s in bundled_sources() {
        write(d, &s.name, s.bytes());
    }
    let y2014 = ThorDatabase::load(&[Source::open(&d.join("WTH_2014.wtb")).unwrap()], LoadOptions::default()).unwrap();
    write(d, "2014.ggf", written(&y2014, GameText::Ggf).as_bytes());
    let search = ["--depth", "2", "--exact-at", "0", "--threads", "2"];
    let mut build = vec!["book", "build", "--max-ply", "8", "--min-games", "1", "-o"];
    let (old, learned, updated) = (path("old.tbk"), path("learned.tbk"), path("updated.tbk"));
    let (y13, y14, g14) = (path("WTH_2013.wtb"), path("WTH_2014.wtb"), path("2014.ggf"));
    build.extend([old.as_str(), y13.as_str()]);
    build.extend(search);
    thorbook(&build).ok();
    let run = thorbook(&["book", "learn", "--book", &old, &g14, "-o", &learned]);
    assert!(run.ok().contains("best opening line"), "{}", run.stdout);
    thorbook(&["book", "update", "--book", &old, &y13, &y14, "-o", &updated]).ok();
    let (l, u) = (std::fs::read(&learned).unwrap(), std::fs::read(&updated).unwrap());
    assert!(l == u, "learning differs from updating");
    let before = thorbook::book::Book::open_verified(std::fs::read(&old).unwrap()).unwrap();
    let after = thorbook::book::Book::open_verified(l.clone()).unwrap();
    assert!(after.len() > before.len());

    // A game already in the book: the same positions, leaves and values; its line's
    // positions count one game more.
    let game = y2014.write_game(&y2014.games()[0], GameText::Transcript);
    write(d, "again.txt", format!("{game}\n").as_bytes());
    let again = path("again.tbk");
    let run = thorbook(&["book", "learn", "--book", &learned, &path("again.txt"), "-o", &again]);
    assert!(run.stderr.contains("scored 0 positions"), "{}", run.stderr);
    let twice = thorbook::book::Book::open_verified(std::fs::read(&again).unwrap()).unwrap();
    let strip = |b: &thorbook::book::Book<Vec<u8>>| {
        b.records().map(|r| (r.key, r.value, r.leaf_move, r.leaf_score, r.leaf_depth)).collect::<Vec<_>>()
    };
    assert_eq!(strip(&twice), strip(&after));
    let more: u64 = twice.records().zip(after.records()).map(|(a, b)| u64::from(a.games - b.games)).sum();
    assert_eq!(more, 9, "one game more at each of the 9 positions of its line to ply 8");
}

/// Self-play games depend only on the settings and the game's index: two shards,
/// concatenated, are the whole run byte for byte (at other thread counts); a run cut
/// mid-line and resumed is the same file; resuming with other settings is refused.
#[test]
fn self_play_is_reproducible_in_shards_and_resumable() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let common = ["selfplay", "--games", "6", "--depth", "2", "--book-randomness", "3", "--seed", "7"];
    let run = |extra: &[&str]| {
        let mut args = common.to_vec();
        args.extend_from_slice(extra);
        thorbook(&args)
    };
    let whole = path("whole.ggf");
    let first = run(&["--threads", "2", "-o", &whole]);
    first.ok();
    // Progress on a stderr that is not a terminal (a batch job's log) is a plain line.
    assert!(first.stderr.contains("self-play: 6/6 games (100.0%), done in "), "{}", first.stderr);
    let (s0, s1) = (path("s0.ggf"), path("s1.ggf"));
    run(&["--threads", "1", "--shards", "2", "--index", "0", "-o", &s0]).ok();
    run(&["--threads", "2", "--shards", "2", "--index", "1", "-o", &s1]).ok();
    let bytes = std::fs::read(&whole).unwrap();
    let mut shards = std::fs::read(&s0).unwrap();
    shards.extend(std::fs::read(&s1).unwrap());
    assert!(shards == bytes, "the shards differ from the whole run");
    // The games are real: six legal games with their results, read back as GGF.
    let db =
        ThorDatabase::load(&[Source::open(dir.path().join("whole.ggf").as_path()).unwrap()], LoadOptions::default())
            .unwrap();
    assert_eq!((db.games().len(), db.anomalies().len()), (6, 0));
    assert!(db.games().iter().all(|g| g.outcome() != thorbook::thor::Outcome::Unfinished && g.black_discs().is_some()));

    // Cut in the middle of the third game, then resumed.
    let cut = path("cut.ggf");
    let third = bytes.iter().enumerate().filter(|(_, &b)| b == b'\n').nth(1).unwrap().0 + 40;
    std::fs::write(&cut, &bytes[..third]).unwrap();
    std::fs::copy(format!("{whole}.selfplay"), format!("{cut}.selfplay")).unwrap();
    let resumed = run(&["--threads", "2", "-o", &cut, "--resume"]);
    resumed.ok();
    assert!(resumed.stderr.contains("resuming: 2 games"), "{}", resumed.stderr);
    assert!(std::fs::read(&cut).unwrap() == bytes, "the resumed run differs");
    // Other settings, or a fresh run over existing games, are refused.
    let other = thorbook(&["selfplay", "--games", "6", "--depth", "3", "-o", &cut, "--resume"]);
    assert!(other.fails().contains("written with another search"), "{}", other.stderr);
    assert!(run(&["-o", &cut]).fails().contains("exists"));
}

/// Keeping some games rebuilds the position index over them: statistics and
/// selections of the kept database are those of the whole one filtered the same way
/// (with the games' ids renumbered), never a stale index's.
#[test]
fn retaining_games_rebuilds_the_position_index() {
    let mut db = ThorDatabase::load(&bundled_sources(), LoadOptions::default()).unwrap();
    let pos = Position::from_moves("f5d6c3").unwrap();
    let in_2015 = with!(GameFilter::default(), years: Some((2015, 2015)));
    let whole = db.stats(&pos, &in_2015);
    let transcripts = |db: &ThorDatabase, ids: Vec<thorbook::thor::GameId>| -> Vec<String> {
        ids.into_iter().map(|g| db.game(g).unwrap().transcript()).collect()
    };
    let selected = transcripts(&db, db.select(&with!(in_2015.clone(), position: Some(pos))));
    db.retain(|g| g.year == 2015);
    assert!(db.games().iter().all(|g| g.year == 2015) && !db.games().is_empty());
    let kept = db.stats(&pos, &GameFilter::default());
    assert_eq!((kept.games, kept.black_wins, kept.draws), (whole.games, whole.black_wins, whole.draws));
    assert_eq!(kept.moves.len(), whole.moves.len());
    assert_eq!(transcripts(&db, db.select(&with!(GameFilter::default(), position: Some(pos)))), selected);
    assert!(whole.games > 100, "{} games of 2015 reach f5d6c3", whole.games);
}
