//! Auditing and fixing books through the binary (the pipelines' own tests are in
//! `src/book/audit_tests.rs`), and the trust a book's moves show.

use thorbook::book::Book;
use thorbook::book::{BuildConfig, GameLine, Grade};
use thorbook::search::Settings;
use thorbook::thor::{bundled_sources, LoadOptions, ThorDatabase};

use crate::util::{build_book_bytes, thorbook};

fn games() -> (Vec<GameLine>, Vec<Vec<thorbook::Move>>) {
    let db = ThorDatabase::load(&bundled_sources(), with!(LoadOptions::default(), strict: true, index: false)).unwrap();
    // Books from the 2013-2014 games; the 2015 games are the audit's independent test.
    let (built, held): (Vec<&thorbook::thor::ThorGame>, Vec<_>) = db.games().iter().partition(|g| g.year < 2015);
    (built.into_iter().map(GameLine::from).collect(), held.iter().map(|g| g.moves_with_passes()).collect())
}

#[test]
fn audit_and_fix_refuse_bad_settings_by_flag() {
    let r = thorbook(&["book", "fix", "-o", "/nonexistent/x.tbk"]);
    assert!(r.fails().contains("book fix needs the level"), "{}", r.stderr);
    let r = thorbook(&["book", "audit", "--sample", "0"]);
    assert!(r.fails().contains("--sample must be from 1 to 1000000, got 0"), "{}", r.stderr);
    let r = thorbook(&["book", "fix", "--level", "3", "--threshold", "99", "-o", "/nonexistent/x.tbk"]);
    assert!(r.fails().contains("--threshold must be from 0 to 64, got 99"), "{}", r.stderr);
    let plan = ["--shards", "2", "--work-dir", "/nonexistent/w"];
    let r =
        thorbook(&[&["book", "plan", "audit", "--checkpoint", "a.log", "--compare-level", "6"][..], &plan].concat());
    assert!(r.fails().contains("plan the comparison as an audit of its own"), "{}", r.stderr);
    let r = thorbook(&[&["book", "plan", "audit"][..], &plan].concat());
    assert!(r.fails().contains("needs the log its shards fill"), "{}", r.stderr);
    let r = thorbook(&[&["book", "plan", "fix", "--level", "4", "--max-time", "9", "-o", "x.tbk"][..], &plan].concat());
    assert!(r.fails().contains("--max-time cannot be planned"), "{}", r.stderr);
}

/// Every book move says how far its score can be trusted: proven where everything
/// below it was solved, else the depth of the leaf that decides it and a grade from
/// that leaf's uncertainty.
#[test]
fn book_moves_show_how_far_their_scores_can_be_trusted() {
    let (built, _) = games();
    let config = with!(
        BuildConfig::default(),
        max_ply: 60,
        min_games: 1,
        search: with!(Settings::default(), depth: Some(2), exact_at: Some(14), hash_mib: 1),
    );
    let bytes = build_book_bytes(&built[..2], &config);
    let book = Book::open_verified(&bytes[..]).unwrap();
    let mut pos = thorbook::Position::START;
    let moves = &built[0].moves;
    let mut seen_exact = false;
    let mut seen_searched = false;
    for (i, &mv) in moves.iter().enumerate() {
        for m in thorbook::book::book_moves(&book, &pos) {
            let t = &m.trust;
            if t.exact {
                assert_eq!(t.grade, Grade::Exact);
                assert_eq!(t.grade.to_string(), "exact");
                assert_eq!(t.uncertainty, 0.0);
                seen_exact |= m.in_book;
            } else if t.leaf_depth == 0 {
                // Decided by a solved leaf, a searched option beside it: a lower bound.
                assert_eq!((t.grade, t.uncertainty), (Grade::AtLeast, 0.0), "{t:?}");
                assert_eq!(t.grade.to_string(), "≥");
            } else {
                // The grade is the uncertainty rounded (one standard deviation, discs).
                assert!(matches!(t.grade, Grade::Within(n) if f64::from(n) == t.uncertainty.round().max(1.0)), "{t:?}");
                assert!(t.grade.to_string().starts_with('±'), "{t:?}");
                assert!(t.uncertainty >= 1.0 && t.leaf_depth == 2, "{t:?}");
                seen_searched = true;
            }
            // Proven only where every leaf below is exact: here, from 14 empties on.
            if m.in_book && t.exact {
                assert!(pos.board.empty_count() <= 16, "ply {i}: {t:?}");
            }
        }
        pos = pos.try_play(mv).unwrap();
    }
    assert!(seen_exact && seen_searched);
    let json = thorbook(&["book", "query", "--moves", "f5", "--json"]);
    let v: serde_json::Value = serde_json::from_str(json.ok()).unwrap();
    let first = &v["moves"][0]["trust"];
    assert!(first["grade"].as_str().unwrap().starts_with('±'), "{first}");
    assert!(first["leaf_depth"].as_u64().unwrap() >= 14, "{first}");
}
