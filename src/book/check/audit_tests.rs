//! The audit's and the fix's pipelines: the audit's sample is deterministic and
//! weighted, its errors are the book's values against independent searches, a resumed
//! audit searches nothing twice; a fix makes a shallow book audit better at the fix's
//! level on positions it was not fixed on, the same way every time; both planned in
//! shards equal the local runs.

use crate::book::check::audit::{audit, AuditConfig, AuditReport};
use crate::book::check::fix::{FixConfig, FixEvent, FixStop, Fixer};
use crate::book::{Book, BuildConfig, Builder, GameLine};
use crate::search::{Level, Settings};
use crate::thor::{bundled_sources, LoadOptions, ThorDatabase};

fn build_book_bytes(games: &[GameLine], config: &BuildConfig) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("book.tbk");
    Builder::new(config.clone(), &out).run(games, &|_| {}).unwrap();
    std::fs::read(&out).unwrap()
}

fn games() -> (Vec<GameLine>, Vec<Vec<crate::square::Move>>) {
    let db = ThorDatabase::load(&bundled_sources(), with!(LoadOptions::default(), strict: true, index: false)).unwrap();
    // Books from the 2013-2014 games; the 2015 games are the audit's independent test.
    let (built, held): (Vec<&crate::thor::ThorGame>, Vec<_>) = db.games.iter().partition(|g| g.year < 2015);
    (built.into_iter().map(GameLine::from).collect(), held.iter().map(|g| g.moves_with_passes()).collect())
}

fn level(n: u8) -> Settings {
    with!(Settings::default(), level: Level::new(n).ok(), hash_mib: 2, threads: 2)
}

fn shallow_book(games: &[GameLine]) -> Vec<u8> {
    let config = with!(
        BuildConfig::default(),
        max_ply: 12,
        min_games: 2,
        search: with!(Settings::default(), depth: Some(2), exact_at: Some(0), hash_mib: 1, threads: 2),
    );
    build_book_bytes(games, &config)
}

#[test]
fn a_fix_at_a_level_makes_a_shallow_book_audit_better_at_that_level() {
    let (built, held) = games();
    let before = shallow_book(&built);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fixed.tbk");
    let config = with!(FixConfig::new(level(6)), max_ply: 12);
    let book = Book::open_verified(&before[..]).unwrap();
    // Keep the log as it stands when the first round starts: every check made, no book
    // written yet (what a fix killed then leaves behind).
    let log = dir.path().join("fixed.tbk.fix");
    let saved = dir.path().join("checks.fix");
    let keep_log = |e: FixEvent| {
        if let FixEvent::Round { number: 1, .. } = e {
            std::fs::copy(&log, &saved).unwrap();
        }
    };
    let fixed = Fixer::new(config.clone(), &out).run(&book, &keep_log).unwrap();
    assert_eq!(fixed.stop, FixStop::Complete);
    assert!(fixed.searches > 50 && fixed.rounds >= 2, "{} searches in {} rounds", fixed.searches, fixed.rounds);
    assert!(fixed.contradicted_after * 2 < fixed.contradicted_before, "{fixed:?}");
    let fixed_bytes = std::fs::read(&out).unwrap();
    assert_eq!(fixed.written.bytes, fixed_bytes.len() as u64);
    assert!(!dir.path().join("fixed.tbk.fix").exists(), "a complete fix leaves no log behind");
    // The same fix again: the same book.
    let again = Fixer::new(config.clone(), dir.path().join("again.tbk")).run(&book, &|_| {}).unwrap();
    assert_eq!(
        (again.written, std::fs::read(dir.path().join("again.tbk")).unwrap()),
        (fixed.written, fixed_bytes.clone())
    );
    // Out of time before anything is checked: nothing searched, the fix unfinished and
    // its log kept; resumed without a limit, the identical book.
    let late = dir.path().join("late.tbk");
    let cut = with!(config.clone(), time: Some(std::time::Duration::ZERO));
    let stopped = Fixer::new(cut, &late).run(&book, &|_| {}).unwrap();
    assert_eq!((stopped.stop, stopped.checked, stopped.searches), (FixStop::Time, 0, 0));
    assert!(dir.path().join("late.tbk.fix").exists(), "an unfinished fix keeps its log");
    let resumed = Fixer::new(config.clone(), &late).resume(true).run(&book, &|_| {}).unwrap();
    assert_eq!((resumed.stop, std::fs::read(&late).unwrap()), (FixStop::Complete, fixed_bytes.clone()));
    // Killed after its checks, before any book was written: the log alone resumes it,
    // checking nothing again.
    std::fs::remove_file(&late).unwrap();
    std::fs::copy(&saved, dir.path().join("late.tbk.fix")).unwrap();
    let checks = std::sync::atomic::AtomicU64::new(0);
    let count = |e: FixEvent| {
        if let FixEvent::Checked { .. } = e {
            checks.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    };
    let resumed = Fixer::new(config, &late).resume(true).run(&book, &count).unwrap();
    assert_eq!((resumed.stop, std::fs::read(&late).unwrap()), (FixStop::Complete, fixed_bytes.clone()));
    assert_eq!(checks.into_inner(), 0, "the checks come from the log");

    // On the lines the unfixed book plays (the fix's own walk follows the values it
    // changes, so both books are audited on the same positions: those of the first
    // audit's lines), at the fix's level but with another sample than the fix checked.
    let walk = with!(AuditConfig::new(level(6)), sample: 250, min_ply: 4, max_ply: 12, seed: 7);
    let lines: Vec<Vec<crate::square::Move>> = audit(&book, &walk, None, &|_| {})
        .unwrap()
        .audited
        .iter()
        .map(|x| crate::square::parse_move_sequence(&x.line).unwrap())
        .collect();
    let a = audit_of(&before, &lines, level(6));
    let b = audit_of(&fixed_bytes, &lines, level(6));
    assert_eq!(a.positions, b.positions, "the same positions");
    assert!(a.positions >= 80, "{} positions", a.positions);
    // The fix corrects what contradicts its level by more than its threshold, so what
    // it can remove depends on how far the shallow book starts: with the bundled
    // weights labelled backward, depth 2 already errs 1.03 disc against level 6 here,
    // and the fix takes it to 0.87 (with the previous weights, 2.19 to 1.34).
    assert!(b.mae < a.mae * 0.9, "audit MAE {:.2} before, {:.2} after the fix", a.mae, b.mae);
    // Positions of games no book here comes from, off the lines the fix checked, move
    // little: the fix corrects what it checks.
    let (c, d) = (audit_of(&before, &held, level(6)), audit_of(&fixed_bytes, &held, level(6)));
    assert!(d.mae <= c.mae + 0.1, "held-out games: audit MAE {:.2} before, {:.2} after", c.mae, d.mae);
}

#[test]
fn an_audit_samples_by_its_seed_and_resumes_from_its_log() {
    let (built, held) = games();
    let bytes = shallow_book(&built);
    let book = Book::open_verified(&bytes[..]).unwrap();
    let walk = |seed| with!(AuditConfig::new(level(4)), sample: 60, min_ply: 2, max_ply: 12, seed: seed);
    let a = audit(&book, &walk(1), None, &|_| {}).unwrap();
    let b = audit(&book, &walk(1), None, &|_| {}).unwrap();
    let c = audit(&book, &walk(2), None, &|_| {}).unwrap();
    let lines = |r: &AuditReport| r.audited.iter().map(|x| x.line.clone()).collect::<Vec<_>>();
    assert_eq!(lines(&a), lines(&b));
    assert_ne!(lines(&a), lines(&c));
    assert_eq!(a.positions, 60);
    // The errors are the book's values against the searches: recomputed here.
    for x in &a.audited {
        assert_eq!(x.error, x.value - x.score);
        let pos = crate::position::Position::from_moves(&x.line).unwrap();
        assert_eq!(book.probe(&pos.board).unwrap().value(), x.value);
    }
    let mean = a.audited.iter().map(|x| f64::from(x.error)).sum::<f64>() / 60.0;
    assert!((mean - a.bias).abs() < 1e-9);
    // Positions played in many games are drawn more often than those of few.
    let heavy = |r: &AuditReport| r.audited.iter().filter(|x| x.games >= 20).count();
    let walk_all = with!(walk(1), sample: 100_000);
    let all = audit(&book, &with!(walk_all, search: level(1)), None, &|_| {}).unwrap();
    let share_all = heavy(&all) as f64 / all.positions as f64;
    let share_sample = heavy(&a) as f64 / a.positions as f64;
    assert!(share_sample > share_all, "{share_sample:.2} of the sample, {share_all:.2} of all");

    // With a log: a second run searches nothing.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("audit.log");
    let config = with!(walk(1), games: Some(held));
    let first = audit(&book, &config, Some((&log, true)), &|_| {}).unwrap();
    assert_eq!(first.searched, first.positions);
    let second = audit(&book, &config, Some((&log, true)), &|_| {}).unwrap();
    assert_eq!((second.searched, second.mae), (0, first.mae));
}

/// An audit's searches and a fix's checks planned in shards, run shard by shard and
/// assembled into the run's log give the local run's report and book, searching
/// nothing again.
#[test]
fn audits_and_fixes_planned_in_shards_equal_local_runs() {
    use crate::book::check::audit::checks;
    use crate::book::cluster::plan::Plan;
    let (built, _) = games();
    let bytes = shallow_book(&built);
    let book = Book::open_verified(&bytes[..]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let run = |plan: &Plan| {
        for i in 0..plan.shards() {
            plan.run_shard(i, Some(1), &|_| {}).unwrap();
        }
    };

    let config = with!(AuditConfig::new(level(4)), sample: 40, min_ply: 2, max_ply: 12);
    let log = dir.path().join("audit.log");
    let planned = checks(&book, &config, &log).unwrap();
    assert_eq!(planned.positions.len(), 40);
    let work = dir.path().join("audit");
    let plan = Plan::create_checks(&work, &planned, 3).unwrap();
    // Planned again: the same plan; with other shards: refused.
    assert_eq!(Plan::create_checks(&work, &planned, 3).unwrap().digest(), plan.digest());
    let e = Plan::create_checks(&work, &planned, 2).err().unwrap().to_string();
    assert!(e.contains("another plan"), "{e}");
    plan.run_shard(0, Some(1), &|_| {}).unwrap();
    let e = plan.assemble(None).err().unwrap().to_string();
    assert!(e.contains("shard 1") && e.contains("missing"), "{e}");
    run(&plan);
    let assembled = Plan::open(&work).unwrap().assemble(None).unwrap();
    assert_eq!(assembled.positions, 40);
    let from_plan = audit(&book, &config, Some((&log, true)), &|_| {}).unwrap();
    let local = audit(&book, &config, None, &|_| {}).unwrap();
    assert_eq!((from_plan.searched, local.searched), (0, 40));
    let rows = |r: &AuditReport| r.audited.iter().map(|a| (a.line.clone(), a.value, a.score)).collect::<Vec<_>>();
    assert_eq!(rows(&from_plan), rows(&local));
    // A log of another run is not overwritten.
    let other = dir.path().join("other.log");
    audit(&book, &with!(config.clone(), seed: 9), Some((&other, false)), &|_| {}).unwrap();
    let kept = std::fs::read(&other).unwrap();
    let e = plan.assemble(Some(&other)).err().unwrap().to_string();
    assert!(e.contains("another run"), "{e}");
    assert_eq!(std::fs::read(&other).unwrap(), kept);
    // Nor into the work directory of a growth.
    std::fs::create_dir_all(dir.path().join("growth/round-0001")).unwrap();
    let e = Plan::create_checks(&dir.path().join("growth"), &planned, 2).err().unwrap().to_string();
    assert!(e.contains("growth planned in rounds"), "{e}");
    // A time limit cannot be planned.
    let timed = with!(config.clone(), search: with!(level(4), time: Some(std::time::Duration::from_millis(5))));
    let e = Plan::create_checks(&dir.path().join("timed"), &checks(&book, &timed, &log).unwrap(), 2);
    assert!(e.err().unwrap().to_string().contains("time limit"));

    let fix = with!(FixConfig::new(level(4)), max_ply: 10);
    let local = Fixer::new(fix.clone(), dir.path().join("local.tbk")).run(&book, &|_| {}).unwrap();
    assert!(local.searches > 0, "the fix searches leaves again");
    let out = dir.path().join("fixed.tbk");
    let fixer = Fixer::new(fix, &out);
    let plan = Plan::create_checks(&dir.path().join("fix"), &fixer.checks(&book).unwrap(), 2).unwrap();
    assert_eq!(plan.output(), fixer.log_path());
    run(&plan);
    plan.assemble(None).unwrap();
    let checked = std::sync::atomic::AtomicU64::new(0);
    let count = |e: FixEvent| {
        if let FixEvent::Checked { .. } = e {
            checked.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    };
    let fixed = fixer.resume(true).run(&book, &count).unwrap();
    assert_eq!(checked.into_inner(), 0, "the checks come from the plan");
    assert_eq!((fixed.checked, fixed.searches), (local.checked, local.searches));
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(dir.path().join("local.tbk")).unwrap());
}

/// With a comparison search, the audit weighs the book's move against that search's
/// move where they differ, each scored by the audit search of the position it leads
/// to: recomputed here with engines (one thread, a fresh table per search, canonical
/// boards, as the audit searches).
#[test]
fn an_audit_weighs_the_book_s_moves_against_a_search_s() {
    use crate::book::book_moves;
    use crate::book::BookSource;
    use crate::engine::{Engine, EngineConfig};
    let (built, _) = games();
    let bytes = shallow_book(&built);
    let book = Book::open_verified(&bytes[..]).unwrap();
    let one = |n| with!(level(n), threads: 1);
    let config = with!(AuditConfig::new(one(5)), sample: 40, min_ply: 2, max_ply: 12, compare: Some(one(2)));
    let report = audit(&book, &config, None, &|_| {}).unwrap();
    let d = report.decisions.clone().expect("a comparison weighs decisions");
    let (mut differing, mut gain) = (0, 0);
    for a in &report.audited {
        let pos = crate::position::Position::from_moves(&a.line).unwrap();
        let canonical = pos.board.canonical().0;
        let fresh =
            |n: u8| Engine::new(with!(EngineConfig::default(), search: one(n), book: BookSource::None)).unwrap();
        let at = |n: u8, board: crate::board::Board| {
            let limits = settings_limits(&one(n), board.empty_count());
            fresh(n).search(&crate::position::Position { board, side: crate::board::Color::Black }, limits)
        };
        let engine_move = at(2, canonical).moves[0].mv;
        let search_child = crate::position::Position { board: canonical, side: crate::board::Color::Black }
            .try_play(engine_move)
            .unwrap()
            .board
            .canonical()
            .0;
        let book_child = pos.try_play(book_moves(&book, &pos)[0].mv).unwrap().board.canonical().0;
        if book_child == search_child {
            continue;
        }
        differing += 1;
        let score = |child: crate::board::Board| -at(5, child).moves[0].score;
        gain += score(book_child) - score(search_child);
    }
    assert!(differing >= 5, "{differing} differing decisions");
    assert_eq!((d.positions, d.differing), (40, differing));
    assert!((d.mean_gain - f64::from(gain) / differing as f64).abs() < 1e-9, "{d:?} against {gain}");
    assert_eq!(d.book_moves.differing + d.leaf_moves.differing, differing);
}

fn settings_limits(settings: &Settings, empties: u32) -> crate::search::Limits {
    settings.resolve_over(AuditConfig::FALLBACK).unwrap().strength().limits_at(empties, None)
}

fn audit_of(bytes: &[u8], held: &[Vec<crate::square::Move>], search: Settings) -> AuditReport {
    let config = with!(AuditConfig::new(search), sample: 250, min_ply: 4, max_ply: 12, games: Some(held.to_vec()));
    audit(&Book::open_verified(bytes).unwrap(), &config, None, &|_| {}).unwrap()
}
