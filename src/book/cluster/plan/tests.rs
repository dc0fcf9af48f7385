//! Sharded book computation through the library: a plan's shards, run in any number
//! and on any thread count, assemble to the bytes of a single-process build; missing,
//! foreign, truncated and damaged shards are refused by name; a shard killed mid-run
//! resumes to the identical file. (The binary's plan commands, Slurm submission and the
//! file formats' oracles are tested in `tests/plan.rs`.)

use std::path::Path;
use std::sync::Mutex;

use super::{shard_of, Plan, PlanError, Planned, ShardEvent, ShardState};
use crate::board::Board;
use crate::book::{Book, BuildConfig, Builder, GameLine, Grower, Growth, GrowthConfig};
use crate::search::Settings;
use crate::thor::{bundled_sources, LoadOptions, ThorDatabase};

fn games(n: usize) -> Vec<GameLine> {
    let db = ThorDatabase::load(&bundled_sources(), with!(LoadOptions::default(), strict: true, index: false)).unwrap();
    db.games.iter().take(n).map(GameLine::from).collect()
}

fn config(depth: u32, threads: usize) -> BuildConfig {
    with!(
        BuildConfig::default(),
        max_ply: 12,
        min_games: 1,
        search: with!(Settings::default(), depth: Some(depth), exact_at: Some(14), hash_mib: 2, threads: threads),
    )
}

fn run_all(plan: &Plan, threads: Option<usize>) {
    for i in 0..plan.shards() {
        plan.run_shard(i, threads, &|_| {}).unwrap();
    }
}

#[test]
fn sharded_builds_equal_the_single_process_build_for_any_shards_and_threads() {
    let dir = tempfile::tempdir().unwrap();
    let games = games(300);
    let local = built(config(4, 2), dir.path().join("local.tbk"), &games);
    // The shards' threads, and the assembly's (the rayon pool it runs in).
    for (shards, threads, assembly) in [(1, 1, 1), (3, 2, 3), (4, 1, 2), (4, 2, 1)] {
        let work = dir.path().join(format!("w{shards}-{threads}"));
        let out = work.join("book.tbk");
        let plan = Plan::create_build(&work, &games, &config(4, threads), shards, &out).unwrap();
        assert!(plan.positions() >= Book::open(&local[..]).unwrap().len());
        run_all(&Plan::open(&work).unwrap(), None);
        let pool = rayon::ThreadPoolBuilder::new().num_threads(assembly).build().unwrap();
        let assembled = pool.install(|| Plan::open(&work).unwrap().assemble(None)).unwrap();
        assert_eq!(assembled.size, local.len() as u64);
        assert!(std::fs::read(&out).unwrap() == local);
    }
}

/// Planning collects positions by an external sort: with a buffer of a few positions
/// (many runs spilled and merged) the positions are those collected in memory, and the
/// plan — its positions file, its digest — is the same as with the default budget.
/// Key collisions and the game minimum are applied the same way.
#[test]
fn a_plan_collected_in_a_tiny_buffer_equals_the_plan_collected_in_memory() {
    use crate::testutil::build_steps::{collect, collect_sorted};
    let dir = tempfile::tempdir().unwrap();
    let games = games(300);
    for (max_ply, min_games) in [(12, 1), (16, 2), (20, 3)] {
        let in_memory = collect(&games, max_ply, min_games).unwrap();
        for budget in [0, 40 * 100, 40 * 500, 1 << 30] {
            let (sorted, runs) = collect_sorted(&games, max_ply, min_games, dir.path(), budget).unwrap();
            assert!(sorted == in_memory, "ply {max_ply}, min {min_games}, budget {budget}: positions differ");
            assert_eq!(runs > 1, budget < 1 << 30, "budget {budget}: {runs} runs");
        }
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "runs were left behind");
    let out = dir.path().join("b.tbk");
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let plan = Plan::create_build(&a, &games, &config(3, 1), 3, &out).unwrap();
    let tiny = Plan::create_build_with_budget(&b, &games, &config(3, 1), 3, &out, 4096).unwrap();
    assert_eq!(plan.digest(), tiny.digest());
    for file in ["nodes.bin", "plan.json"] {
        assert!(std::fs::read(a.join(file)).unwrap() == std::fs::read(b.join(file)).unwrap(), "{file} differs");
    }
    assert_eq!(std::fs::read_dir(&b).unwrap().count(), 2, "only the plan's files are left");
}

#[test]
fn shards_split_the_key_space_into_contiguous_ranges() {
    for shards in [1, 2, 3, 7, 64, 1000] {
        let mut last = 0;
        for key in [0u64, 1, u64::MAX / 3, u64::MAX / 2, u64::MAX - 1, u64::MAX] {
            let s = shard_of(key, shards);
            assert!(s < shards && s >= last, "{key} {shards}");
            last = s;
        }
        assert_eq!(shard_of(u64::MAX, shards), shards - 1);
    }
}

fn flip(path: &Path, at: usize) {
    let mut bytes = std::fs::read(path).unwrap();
    bytes[at] ^= 0x10;
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn assembly_refuses_missing_foreign_truncated_and_damaged_shards_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let games = games(120);
    let work = dir.path().join("w");
    let plan = Plan::create_build(&work, &games, &config(3, 1), 3, &work.join("b.tbk")).unwrap();
    run_all(&plan, None);
    let good = std::fs::read(plan.shard_path(1)).unwrap();
    let err = |plan: &Plan| plan.assemble(None).unwrap_err().to_string();

    std::fs::remove_file(plan.shard_path(1)).unwrap();
    assert!(err(&plan).contains("shard 1") && err(&plan).contains("missing"), "{}", err(&plan));
    assert_eq!(plan.status()[1].state, ShardState::Missing);

    // A shard of another plan (other settings, same shard count).
    let other_dir = dir.path().join("other");
    let other = Plan::create_build(&other_dir, &games, &config(2, 1), 3, &other_dir.join("b.tbk")).unwrap();
    other.run_shard(1, None, &|_| {}).unwrap();
    std::fs::copy(other.shard_path(1), plan.shard_path(1)).unwrap();
    assert!(err(&plan).contains("shard 1") && err(&plan).contains("of another plan"), "{}", err(&plan));

    std::fs::write(plan.shard_path(1), &good[..good.len() - 30]).unwrap();
    assert!(err(&plan).contains("truncated"), "{}", err(&plan));
    assert!(matches!(plan.status()[1].state, ShardState::Damaged(_)));

    std::fs::write(plan.shard_path(1), &good).unwrap();
    flip(&plan.shard_path(1), 32 + 16 + 9); // the score of the second entry
    assert!(err(&plan).contains("shard 1") && err(&plan).contains("checksum"), "{}", err(&plan));
    // Running the damaged shard again scores it anew, to the same bytes.
    plan.run_shard(1, None, &|_| {}).unwrap();
    assert!(std::fs::read(plan.shard_path(1)).unwrap() == good);
    plan.assemble(None).unwrap();

    // A complete shard is not run again; an index beyond the plan is an error.
    let events = Mutex::new(Vec::new());
    plan.run_shard(2, None, &|e| events.lock().unwrap().push(e)).unwrap();
    assert_eq!(events.into_inner().unwrap(), vec![ShardEvent::AlreadyDone]);
    assert!(matches!(plan.run_shard(3, None, &|_| {}), Err(PlanError::Index { index: 3, shards: 3 })));
    // Planning another build into the same directory is refused; the same one is not.
    assert!(Plan::create_build(&work, &games, &config(2, 1), 3, &work.join("b.tbk")).is_err());
    assert_eq!(
        Plan::create_build(&work, &games, &config(3, 1), 3, &work.join("b.tbk")).unwrap().digest(),
        plan.digest()
    );
    // An edited plan is refused.
    let json = std::fs::read_to_string(work.join("plan.json")).unwrap();
    std::fs::write(work.join("plan.json"), json.replace("\"max_ply\": 12", "\"max_ply\": 11")).unwrap();
    assert!(Plan::open(&work).err().unwrap().to_string().contains("digest"));
}

#[test]
fn a_shard_killed_mid_run_resumes_to_the_identical_file() {
    let dir = tempfile::tempdir().unwrap();
    let games = games(150);
    let work = dir.path().join("w");
    let plan = Plan::create_build(&work, &games, &config(3, 2), 2, &work.join("b.tbk")).unwrap();
    plan.run_shard(0, None, &|_| {}).unwrap();
    let whole = std::fs::read(plan.shard_path(0)).unwrap();
    // What a killed run leaves: the header, some entries, half an entry; no final file.
    let entries = (whole.len() - 32 - 24) / 16;
    let kept = entries / 3;
    let partial = work.join("shard-0000.partial");
    std::fs::write(&partial, &whole[..32 + kept * 16 + 7]).unwrap();
    std::fs::remove_file(plan.shard_path(0)).unwrap();
    assert!(matches!(plan.status()[0].state, ShardState::Partial { scored, .. } if scored == kept as u64));
    let events = Mutex::new(Vec::new());
    plan.run_shard(0, Some(1), &|e| events.lock().unwrap().push(e)).unwrap();
    let events = events.into_inner().unwrap();
    assert_eq!(events[0], ShardEvent::Resumed { scored: kept as u64 });
    assert_eq!(events.len(), 1 + entries - kept, "only the missing positions are searched");
    assert!(std::fs::read(plan.shard_path(0)).unwrap() == whole);
    assert!(!partial.exists());
}

/// Runs every round of a growth plan: its shards on `threads` threads each, then its
/// assembly on `assembly` threads, until it is finished.
fn run_rounds(work: &Path, threads: usize, assembly: usize) -> u32 {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(assembly).build().unwrap();
    for _ in 0..200 {
        let plan = Plan::open(work).unwrap();
        if let Some(f) = plan.finished().unwrap() {
            return f.rounds;
        }
        run_all(&plan, Some(threads));
        pool.install(|| plan.assemble(None)).unwrap();
    }
    panic!("the growth did not finish in 200 rounds");
}

fn grow_config(growth: Growth, depth: u32, threads: usize) -> GrowthConfig {
    with!(
        GrowthConfig::default(),
        error: 2,
        budget: 4,
        contempt: 0,
        max_positions: Some(150),
        time: None,
        max_ply: 14,
        search: with!(Settings::default(), depth: Some(depth), exact_at: Some(14), hash_mib: 2, threads: threads),
        growth: growth,
        round_size: 40,
    )
}

/// A deviation and a deepening planned in rounds of 1, 3 or 4 shards, run on 1 or 2
/// threads, write the book the local run writes, byte for byte (rounds of 40 leaves
/// and a position budget, so that several rounds and the budget's cut are crossed).
#[test]
fn growth_rounds_in_shards_equal_the_local_run_for_any_shards_and_threads() {
    let dir = tempfile::tempdir().unwrap();
    let games = games(300);
    let input = built(config(3, 2), dir.path().join("in.tbk"), &games);
    let book = Book::open_verified(&input[..]).unwrap();
    for (growth, depth) in [(Growth::Deviate, 3), (Growth::Deepen, 5)] {
        let local_out = dir.path().join(format!("{growth:?}-local.tbk"));
        let local = Grower::new(grow_config(growth, depth, 2), Board::START, &local_out).run(&book, &|_| {}).unwrap();
        assert!(local.rounds >= 2, "{growth:?}: the test needs several rounds, got {}", local.rounds);
        let local_bytes = std::fs::read(&local_out).unwrap();
        assert_ne!(local_bytes, input, "{growth:?} changed nothing");
        for (shards, threads) in [(1, 1), (3, 2), (4, 1)] {
            let work = dir.path().join(format!("{growth:?}-{shards}-{threads}"));
            let out = work.join("out.tbk");
            let planned =
                Plan::create_rounds(&work, &book, grow_config(growth, depth, threads), Board::START, shards, &out)
                    .unwrap();
            assert!(matches!(planned, Planned::Round(_)));
            // The assembly on another thread count than the shards.
            let rounds = run_rounds(&work, threads, 3 - threads);
            assert_eq!(u64::from(rounds), local.rounds, "{growth:?} {shards} shards");
            assert!(
                std::fs::read(&out).unwrap() == local_bytes,
                "{growth:?}: {shards} shards on {threads} threads differ from the local run"
            );
        }
    }
}

/// A round plan names its input: the copied input book changed, a time limit, another
/// growth in the same directory are refused; planning the same growth again returns
/// the current round.
#[test]
fn round_plans_refuse_a_changed_input_a_time_limit_and_another_growth() {
    let dir = tempfile::tempdir().unwrap();
    let games = games(120);
    let input = built(config(3, 1), dir.path().join("in.tbk"), &games);
    let book = Book::open_verified(&input[..]).unwrap();
    let work = dir.path().join("w");
    let out = work.join("out.tbk");
    let cfg = grow_config(Growth::Deviate, 3, 1);
    let timed = with!(cfg.clone(), time: Some(std::time::Duration::from_secs(5)));
    let err = Plan::create_rounds(&work, &book, timed, Board::START, 2, &out).err().unwrap().to_string();
    assert!(err.contains("a time limit cannot be planned"), "{err}");
    let Planned::Round(plan) = Plan::create_rounds(&work, &book, cfg.clone(), Board::START, 2, &out).unwrap() else {
        panic!("nothing to deviate")
    };
    assert_eq!(plan.round(), Some(1));
    let again = Plan::create_rounds(&work, &book, cfg.clone(), Board::START, 2, &out).unwrap();
    assert!(matches!(again, Planned::Round(p) if p.digest() == plan.digest()));
    let other = with!(cfg.clone(), error: 3);
    let err = Plan::create_rounds(&work, &book, other, Board::START, 2, &out).err().unwrap().to_string();
    assert!(err.contains("another plan"), "{err}");
    // The copied input damaged in place (a record's byte, its block checksum left):
    // opening the plan reads only the header and the checksums, and the assembly,
    // which reads every record, refuses it by name.
    let copy = work.join("input.tbk");
    let pristine = std::fs::read(&copy).unwrap();
    let mut bytes = pristine.clone();
    bytes[64 + 8] ^= 1;
    std::fs::write(&copy, &bytes).unwrap();
    let plan = Plan::open(&work).unwrap();
    run_all(&plan, Some(1));
    let err = plan.assemble(None).err().unwrap().to_string();
    assert!(err.contains("input.tbk") && err.contains("block 0"), "{err}");
    // Another book in its place: every later open names it.
    let other = built(config(3, 1), dir.path().join("other.tbk"), &games[..60]);
    std::fs::write(&copy, &other).unwrap();
    let err = Plan::open(&work).err().unwrap().to_string();
    assert!(err.contains("input.tbk") && err.contains("not the book round 1 was planned from"), "{err}");
    std::fs::write(&copy, &pristine).unwrap();
    assert!(Plan::open(&work).unwrap().assemble(None).is_ok());
}

/// What used to panic: a path a plan cannot name in its JSON (not UTF-8) is refused
/// before anything is written; a build plan where a growth's first round belongs is
/// refused by name.
#[test]
fn plans_refuse_paths_they_cannot_write_and_foreign_round_directories() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let games = games(60);
    let bad = dir.path().join(std::ffi::OsStr::from_bytes(b"book-\xff.tbk"));
    let work = dir.path().join("w");
    let err = Plan::create_build(&work, &games, &config(2, 1), 2, &bad).err().unwrap().to_string();
    assert!(err.contains("valid UTF-8"), "{err}");
    assert!(!work.exists(), "nothing is written");

    // A build plan in W/round-0001, then a deviation planned in W.
    let input = built(config(2, 1), dir.path().join("in.tbk"), &games);
    let book = Book::open_verified(&input[..]).unwrap();
    Plan::create_build(&work.join("round-0001"), &games, &config(2, 1), 2, &dir.path().join("b.tbk")).unwrap();
    let cfg = grow_config(Growth::Deviate, 2, 1);
    let out = dir.path().join("out.tbk");
    let err = Plan::create_rounds(&work, &book, cfg, Board::START, 2, &out).err().unwrap().to_string();
    assert!(err.contains("round-0001") && err.contains("not a round of a growth"), "{err}");
}

/// Two runners of one shard: the second fails at once naming the lock, and the
/// status says the shard is running; once the first lets go the shard runs and
/// resumes nothing it did not write.
#[test]
fn a_second_runner_of_a_shard_fails_on_its_lock() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("w");
    let plan = Plan::create_build(&work, games(60), &config(2, 1), 2, &work.join("book.tbk")).unwrap();
    let partial = work.join("shard-0000.partial");
    let holder = std::fs::File::create(&partial).unwrap();
    holder.lock().unwrap();
    let err = plan.run_shard(0, Some(1), &|_| {}).unwrap_err();
    assert!(err.to_string().contains("another runner") && err.to_string().contains("shard-0000.partial"), "{err}");
    assert!(matches!(plan.status()[0].state, ShardState::Running { .. }), "{:?}", plan.status()[0]);
    drop(holder);
    assert!(matches!(plan.status()[0].state, ShardState::Partial { scored: 0, .. }), "{:?}", plan.status()[0]);
    plan.run_shard(0, Some(1), &|_| {}).unwrap();
    assert_eq!(plan.status()[0].state, ShardState::Done);
    assert!(!partial.exists());
}

/// `status` verifies a complete shard once and then trusts it while its length and
/// modification time stay (the `verified` file): a damaged file with a new time is
/// verified again and reported; assembly checks every shard whatever the cache says.
#[test]
fn status_verifies_a_shard_once_and_again_when_it_changes() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("w");
    let plan = Plan::create_build(&work, games(40), &config(2, 1), 2, &work.join("book.tbk")).unwrap();
    run_all(&plan, Some(1));
    let shard = work.join("shard-0000.tbs");
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    std::fs::File::options().write(true).open(&shard).unwrap().set_modified(old).unwrap();
    assert!(plan.status().iter().all(|s| s.state == ShardState::Done));
    let cache = std::fs::read_to_string(work.join("verified")).unwrap();
    assert!(cache.starts_with("thorbook verified shards 1") && cache.lines().count() == 2, "{cache}");
    // Damaged under the same length and time: status trusts its cache, assembly does not.
    flip(&shard, 40);
    std::fs::File::options().write(true).open(&shard).unwrap().set_modified(old).unwrap();
    assert_eq!(plan.status()[0].state, ShardState::Done);
    let err = plan.assemble(None).unwrap_err().to_string();
    assert!(err.contains("shard-0000.tbs"), "{err}");
    // Damaged with a new time, as any write leaves it: verified again.
    flip(&shard, 41);
    assert!(matches!(plan.status()[0].state, ShardState::Damaged(_)), "{:?}", plan.status()[0]);
}

/// Opening a build plan reads `plan.json` and checks the positions file's size, no
/// position: `status` of verified shards reads none (a positions file damaged after
/// the shards ran does not change it), while a shard or the assembly, which read the
/// positions, name the damaged file. The shards' sizes the plan records are the
/// positions' own.
#[test]
fn opening_a_plan_reads_no_position_until_a_shard_or_the_assembly_needs_them() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("w");
    let plan = Plan::create_build(&work, games(60), &config(2, 1), 3, &work.join("book.tbk")).unwrap();
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(work.join("plan.json")).unwrap()).unwrap();
    let sizes: Vec<u64> = json["shard_positions"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
    assert_eq!(sizes.len(), 3);
    assert_eq!(sizes.iter().sum::<u64>(), plan.positions() as u64);
    assert!(plan.status().iter().zip(&sizes).all(|(s, &n)| s.positions == n));
    run_all(&plan, Some(1));
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    for i in 0..3 {
        let shard = work.join(format!("shard-{i:04}.tbs"));
        std::fs::File::options().write(true).open(&shard).unwrap().set_modified(old).unwrap();
    }
    assert!(Plan::open(&work).unwrap().status().iter().all(|s| s.state == ShardState::Done));
    // A position's key, changed: the file keeps its size and its checksum fails.
    flip(&work.join("nodes.bin"), 16 + 40 * 5);
    let reopened = Plan::open(&work).unwrap();
    assert!(reopened.status().iter().all(|s| s.state == ShardState::Done));
    let err = reopened.assemble(None).unwrap_err().to_string();
    assert!(err.contains("nodes.bin"), "{err}");
    let err = Plan::open(&work).unwrap().run_shard(1, Some(1), &|_| {}).unwrap_err().to_string();
    assert!(err.contains("nodes.bin"), "{err}");
    // Cut: refused at opening.
    let nodes = std::fs::read(work.join("nodes.bin")).unwrap();
    std::fs::write(work.join("nodes.bin"), &nodes[..nodes.len() - 40]).unwrap();
    let err = Plan::open(&work).err().unwrap().to_string();
    assert!(err.contains("nodes.bin"), "{err}");
}

/// The bytes of the book `Builder` writes to `path` from `games` with `config`.
fn built(config: BuildConfig, path: std::path::PathBuf, games: &[GameLine]) -> Vec<u8> {
    Builder::new(config, &path).run(games, &|_| {}).unwrap();
    std::fs::read(&path).unwrap()
}
