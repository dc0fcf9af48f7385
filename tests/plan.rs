//! Sharded book computation: a plan's shards, run in any number and on any thread
//! count, assemble to the bytes of a single-process build; missing, foreign,
//! truncated and damaged shards are refused by name; a shard killed mid-run resumes to
//! the identical file.

use std::path::Path;
use std::sync::Mutex;

use thorbook::board::Board;
use thorbook::book::plan::{shard_of, Plan, PlanError, Planned, ShardEvent, ShardState};
use thorbook::book::{Book, Builder};
use thorbook::book::{BuildConfig, GameLine};
use thorbook::book::{DeviateConfig, Deviator, Growth};
use thorbook::search::Settings;
use thorbook::thor::{bundled_sources, LoadOptions, ThorDatabase};

use crate::util::thorbook;

fn games(n: usize) -> Vec<GameLine> {
    let db = ThorDatabase::load(&bundled_sources(), with!(LoadOptions::default(), strict: true, index: false)).unwrap();
    db.games.iter().take(n).map(GameLine::from_thor).collect()
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
    let local = Builder::new(config(4, 2), dir.path().join("local.tbk")).run(&games, &|_| {}).unwrap();
    // The shards' threads, and the assembly's (the rayon pool it runs in).
    for (shards, threads, assembly) in [(1, 1, 1), (3, 2, 3), (4, 1, 2), (4, 2, 1)] {
        let work = dir.path().join(format!("w{shards}-{threads}"));
        let out = work.join("book.tbk");
        let plan = Plan::create_build(&work, &games, &config(4, threads), shards, &out).unwrap();
        assert!(plan.positions() >= local.positions);
        run_all(&Plan::open(&work).unwrap(), None);
        let pool = rayon::ThreadPoolBuilder::new().num_threads(assembly).build().unwrap();
        let assembled = pool.install(|| Plan::open(&work).unwrap().assemble(None)).unwrap();
        assert_eq!(assembled.size, local.bytes.len() as u64);
        assert!(std::fs::read(&out).unwrap() == local.bytes);
    }
}

/// Planning collects positions by an external sort: with a buffer of a few positions
/// (many runs spilled and merged) the positions are those collected in memory, and the
/// plan — its positions file, its digest — is the same as with the default budget.
/// Key collisions and the game minimum are applied the same way.
#[test]
fn a_plan_collected_in_a_tiny_buffer_equals_the_plan_collected_in_memory() {
    use thorbook::testutil::build_steps::{collect, collect_sorted};
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

#[test]
fn the_cli_plans_runs_shards_by_environment_index_and_assembles() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("w");
    let w = work.to_str().unwrap();
    let out = work.join("book.tbk");
    let local = dir.path().join("local.tbk");
    let args = ["--max-ply", "8", "--depth", "3", "--exact-at", "12"];
    let mut plan_args = vec!["book", "plan", "build"];
    plan_args.extend(args);
    plan_args.extend(["--shards", "3", "--work-dir", w, "-o", out.to_str().unwrap()]);
    thorbook(&plan_args).ok();
    let mut build_args = vec!["book", "build"];
    build_args.extend(args);
    build_args.extend(["-o", local.to_str().unwrap()]);
    thorbook(&build_args).ok();
    // No index anywhere is an error (even when the suite itself runs as a Slurm task);
    // an index beyond the plan too.
    let no_index = std::process::Command::new(env!("CARGO_BIN_EXE_thorbook"))
        .args(["book", "shard", w])
        .env_remove("SLURM_ARRAY_TASK_ID")
        .env_remove("JOB_COMPLETION_INDEX")
        .output()
        .unwrap();
    assert!(!no_index.status.success());
    assert!(String::from_utf8_lossy(&no_index.stderr).contains("SLURM_ARRAY_TASK_ID"));
    assert!(thorbook(&["book", "shard", w, "--index", "3"]).fails().contains("out of range"));
    let status = thorbook(&["book", "status", w, "--json"]);
    let v: serde_json::Value = serde_json::from_str(status.ok()).unwrap();
    assert_eq!(v["missing"], 3);
    let env_run = |var: &str, index: &str| {
        let status = std::process::Command::new(env!("CARGO_BIN_EXE_thorbook"))
            .args(["book", "shard", w])
            .env_remove("SLURM_ARRAY_TASK_ID")
            .env_remove("JOB_COMPLETION_INDEX")
            .env(var, index)
            .status()
            .unwrap();
        assert!(status.success());
    };
    env_run("SLURM_ARRAY_TASK_ID", "0");
    env_run("JOB_COMPLETION_INDEX", "1");
    assert!(thorbook(&["book", "assemble", w]).fails().contains("shard 2"));
    thorbook(&["book", "shard", w, "--index", "2", "--threads", "1"]).ok();
    let v: serde_json::Value = serde_json::from_str(thorbook(&["book", "status", w, "--json"]).ok()).unwrap();
    assert_eq!((v["done"].as_u64(), v["missing"].as_u64()), (Some(3), Some(0)));
    assert!(thorbook(&["book", "assemble", w, "--threads", "0"]).fails().contains("--threads"));
    thorbook(&["book", "assemble", w, "--threads", "3"]).ok();
    assert!(std::fs::read(&out).unwrap() == std::fs::read(&local).unwrap());
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

fn grow_config(growth: Growth, depth: u32, threads: usize) -> DeviateConfig {
    with!(
        DeviateConfig::default(),
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
    let input = Builder::new(config(3, 2), dir.path().join("in.tbk")).run(&games, &|_| {}).unwrap();
    let book = Book::open_verified(&input.bytes[..]).unwrap();
    for (growth, depth) in [(Growth::Deviate, 3), (Growth::Deepen, 5)] {
        let local_out = dir.path().join(format!("{growth:?}-local.tbk"));
        let local = Deviator::new(grow_config(growth, depth, 2), Board::START, &local_out).run(&book, &|_| {}).unwrap();
        assert!(local.rounds >= 2, "{growth:?}: the test needs several rounds, got {}", local.rounds);
        let local_bytes = std::fs::read(&local_out).unwrap();
        assert_ne!(local_bytes, input.bytes, "{growth:?} changed nothing");
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
    let input = Builder::new(config(3, 1), dir.path().join("in.tbk")).run(&games, &|_| {}).unwrap();
    let book = Book::open_verified(&input.bytes[..]).unwrap();
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
    let other = Builder::new(config(3, 1), dir.path().join("other.tbk")).run(&games[..60], &|_| {}).unwrap();
    std::fs::write(&copy, &other.bytes).unwrap();
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
    let input = Builder::new(config(2, 1), dir.path().join("in.tbk")).run(&games, &|_| {}).unwrap();
    let book = Book::open_verified(&input.bytes[..]).unwrap();
    Plan::create_build(&work.join("round-0001"), &games, &config(2, 1), 2, &dir.path().join("b.tbk")).unwrap();
    let cfg = grow_config(Growth::Deviate, 2, 1);
    let out = dir.path().join("out.tbk");
    let err = Plan::create_rounds(&work, &book, cfg, Board::START, 2, &out).err().unwrap().to_string();
    assert!(err.contains("round-0001") && err.contains("not a round of a growth"), "{err}");
}

/// A growth's setting out of range is named by its flag before anything is written;
/// it used to name the work directory's input copy, which was never created.
#[test]
fn a_planned_growth_with_a_setting_out_of_range_names_the_flag_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("W1");
    let (w, out) = (work.to_str().unwrap(), dir.path().join("out.tbk"));
    let run = thorbook(&[
        "book",
        "plan",
        "deviate",
        "--error",
        "100",
        "--budget",
        "4",
        "--shards",
        "2",
        "--work-dir",
        w,
        "-o",
        out.to_str().unwrap(),
    ]);
    let err = run.fails();
    assert!(err.contains("--error must be 0..=64, got 100"), "{err}");
    assert!(!err.contains("input.tbk"), "{err}");
    assert!(!work.exists());
    // A deepening without its level, and a start outside the book, likewise.
    let run = thorbook(&["book", "plan", "deepen", "--shards", "2", "--work-dir", w, "-o", out.to_str().unwrap()]);
    assert!(run.fails().contains("give --level N"), "{}", run.stderr);
    let run = thorbook(&[
        "book",
        "plan",
        "deviate",
        "--error",
        "2",
        "--budget",
        "4",
        "--from",
        "f5f4c3c6f3",
        "--shards",
        "2",
        "--work-dir",
        w,
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(run.fails().contains("not in the book"), "{}", run.stderr);
    assert!(!work.exists());
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
    let cli = thorbook(&["book", "shard", work.to_str().unwrap(), "--index", "0"]);
    assert!(cli.fails().contains("locked"), "{}", cli.stderr);
    drop(holder);
    assert!(matches!(plan.status()[0].state, ShardState::Partial { scored: 0, .. }), "{:?}", plan.status()[0]);
    plan.run_shard(0, Some(1), &|_| {}).unwrap();
    assert_eq!(plan.status()[0].state, ShardState::Done);
    assert!(!partial.exists());
}

/// A stand-in scheduler for `book submit`: `sbatch` records its arguments and prints
/// job 42; `squeue` prints the file `queue` (lines `JOB STATE`).
#[cfg(unix)]
struct FakeSlurm {
    bin: std::path::PathBuf,
    log: std::path::PathBuf,
    queue: std::path::PathBuf,
}

#[cfg(unix)]
impl FakeSlurm {
    fn new(dir: &Path) -> FakeSlurm {
        use std::os::unix::fs::PermissionsExt;
        let bin = dir.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let (log, queue) = (dir.join("sbatch.log"), dir.join("queue"));
        std::fs::write(&queue, "").unwrap();
        let scripts = [
            ("sbatch", format!("#!/bin/sh\necho \"$@\" >> '{}'\necho 42\n", log.display())),
            ("squeue", format!("#!/bin/sh\ncat '{}'\n", queue.display())),
        ];
        for (name, text) in scripts {
            std::fs::write(bin.join(name), text).unwrap();
            std::fs::set_permissions(bin.join(name), std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        FakeSlurm { bin, log, queue }
    }

    /// `book submit WORK --slurm EXTRA`: its exit status, what sbatch was given (one
    /// line per call) and its stderr.
    fn submit(&self, work: &Path, extra: &[&str]) -> (bool, Vec<String>, String) {
        let _ = std::fs::remove_file(&self.log);
        let mut args = vec!["book", "submit", work.to_str().unwrap(), "--slurm"];
        args.extend(extra);
        let path = format!("{}:{}", self.bin.display(), std::env::var("PATH").unwrap());
        let out =
            std::process::Command::new(env!("CARGO_BIN_EXE_thorbook")).args(&args).env("PATH", &path).output().unwrap();
        let calls = std::fs::read_to_string(&self.log).unwrap_or_default().lines().map(str::to_string).collect();
        (out.status.success(), calls, String::from_utf8_lossy(&out.stderr).to_string())
    }
}

/// `book submit` against a stand-in scheduler. A lock is the truth about a running
/// shard: one held by a process with no job stops the whole submission (the assembly
/// could not wait for it), naming the shard; once let go, the shard is stopped however
/// recent its file. Shards submitted earlier and still queued are not submitted again:
/// the assembly waits for their jobs (`afterok`), and "every shard is done" is said
/// only when it is so.
#[cfg(unix)]
#[test]
fn submit_waits_for_running_jobs_and_resubmits_stopped_shards() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("w");
    Plan::create_build(&work, games(60), &config(2, 1), 3, &work.join("book.tbk")).unwrap();
    let slurm = FakeSlurm::new(dir.path());
    // Shard 1 locked by a process that is no job.
    let holder = std::fs::File::create(work.join("shard-0001.partial")).unwrap();
    holder.lock().unwrap();
    let (ok, calls, stderr) = slurm.submit(&work, &[]);
    assert!(!ok && calls.is_empty(), "{stderr}");
    assert!(stderr.contains("nothing submitted: shard(s) 1 look running"), "{stderr}");
    let (ok, calls, stderr) = slurm.submit(&work, &["--force"]);
    assert!(ok, "{stderr}");
    assert!(calls[0].contains("--array=0-2") && calls[1].contains("--dependency=afterok:42 "), "{calls:?}");
    drop(holder);
    // Shards 0 and 2 are still queued as the jobs they were given; shard 1 was
    // written a moment ago, but nothing holds its lock: it stopped.
    std::fs::write(&slurm.queue, "42_0 PENDING\n42_2 RUNNING\n42_1 CANCELLED\n").unwrap();
    let (ok, calls, stderr) = slurm.submit(&work, &[]);
    assert!(ok, "{stderr}");
    assert!(calls[0].starts_with("--parsable --array=1 "), "{calls:?}");
    assert!(calls[1].contains("--dependency=afterok:42:42_0:42_2 --kill-on-invalid-dep=yes"), "{calls:?}");
    assert!(stderr.contains("shard 0 as job 42_0, shard 2 as job 42_2"), "{stderr}");
    // Every unfinished shard still queued: only the assembly, after them.
    std::fs::write(&slurm.queue, "42_0 RUNNING\n42_1 PENDING\n42_2 RUNNING\n").unwrap();
    let (ok, calls, stderr) = slurm.submit(&work, &[]);
    assert!(ok && calls.len() == 1, "{stderr}");
    assert!(calls[0].contains("--dependency=afterok:42_0:42_1:42_2"), "{calls:?}");
    assert!(!stderr.contains("every shard is done"), "{stderr}");
    // The queue empty: all of them again.
    std::fs::write(&slurm.queue, "").unwrap();
    let (ok, calls, _) = slurm.submit(&work, &[]);
    assert!(ok && calls[0].contains("--array=0-2"), "{calls:?}");
    let refused = thorbook(&["book", "submit", work.to_str().unwrap(), "--slurm", "--fresh-minutes=-1"]);
    assert!(refused.fails().contains("--fresh-minutes"), "{}", refused.stderr);
}

/// A file system that refuses locks (as Lustre without `-o flock` or NFS without a
/// lock manager do; here `flock` made to fail with ENOLCK for the binary): a shard runs
/// anyway, warning, and records that it holds no lock. Stopped mid-run, it is
/// presumed running while its checkpoint is recent (nothing else can tell) unless it
/// named its Slurm job, which `submit` then asks the scheduler about.
#[cfg(target_os = "linux")]
#[test]
fn shards_run_where_locks_are_refused_and_submit_asks_the_scheduler() {
    let dir = tempfile::tempdir().unwrap();
    let shim_c = dir.path().join("noflock.c");
    std::fs::write(
        &shim_c,
        "#include <errno.h>\nint flock(int fd, int op) { (void)fd; (void)op; errno = ENOLCK; return -1; }\n",
    )
    .unwrap();
    let shim = dir.path().join("libnoflock.so");
    let cc = std::process::Command::new("cc").args(["-shared", "-fPIC", "-o"]).arg(&shim).arg(&shim_c).status();
    assert!(cc.is_ok_and(|s| s.success()), "this test needs a C compiler (cc) to make its flock shim");
    let work = dir.path().join("w");
    Plan::create_build(&work, games(300), &config(6, 1), 2, &work.join("book.tbk")).unwrap();
    let shard = |index: &str, job: Option<&str>| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_thorbook"));
        cmd.args(["book", "shard", work.to_str().unwrap(), "--index", index, "--threads", "1"])
            .env("LD_PRELOAD", &shim)
            .env_remove("SLURM_ARRAY_JOB_ID")
            .env_remove("SLURM_ARRAY_TASK_ID")
            .env_remove("SLURM_JOB_ID")
            .env_remove("SLURM_CPUS_PER_TASK")
            .stderr(std::process::Stdio::piped());
        if let Some(job) = job {
            let (array, task) = job.split_once('_').unwrap();
            cmd.env("SLURM_ARRAY_JOB_ID", array).env("SLURM_ARRAY_TASK_ID", task);
        }
        cmd
    };
    let whole = shard("0", None).output().unwrap();
    let stderr = String::from_utf8_lossy(&whole.stderr);
    assert!(whole.status.success(), "{stderr}");
    assert!(stderr.contains("refuses locks") && stderr.contains("No locks available"), "{stderr}");
    // Shard 1 stopped mid-run.
    let stop_mid_run = |job: Option<&str>| {
        let partial = work.join("shard-0001.partial");
        let before = std::fs::metadata(&partial).map_or(32, |m| m.len());
        let mut child = shard("1", job).spawn().unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        // Entries written by this runner (it records itself before it searches).
        while std::fs::metadata(&partial).map_or(0, |m| m.len()) < before + 16 * 3 {
            assert!(std::time::Instant::now() < deadline, "shard 1 never checkpointed");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        child.kill().unwrap();
        child.wait().unwrap();
    };
    stop_mid_run(None);
    let status: serde_json::Value =
        serde_json::from_str(thorbook(&["book", "status", work.to_str().unwrap(), "--json"]).ok()).unwrap();
    assert_eq!(status["shard_states"][1]["state"], "unlocked", "{status}");
    let slurm = FakeSlurm::new(dir.path());
    let (ok, calls, stderr) = slurm.submit(&work, &[]);
    assert!(!ok && calls.is_empty() && stderr.contains("shard(s) 1 look running"), "{stderr}");
    let (ok, calls, stderr) = slurm.submit(&work, &["--fresh-minutes", "0"]);
    assert!(ok && calls[0].contains("--array=1 "), "{stderr}");
    // As Slurm's array task 77_1: the scheduler says whether it runs.
    std::fs::remove_file(work.join("slurm").join("jobs")).unwrap();
    stop_mid_run(Some("77_1"));
    let status: serde_json::Value =
        serde_json::from_str(thorbook(&["book", "status", work.to_str().unwrap(), "--json"]).ok()).unwrap();
    assert_eq!(status["shard_states"][1]["job"], "77_1", "{status}");
    std::fs::write(&slurm.queue, "77_1 RUNNING\n").unwrap();
    let (ok, calls, stderr) = slurm.submit(&work, &[]);
    assert!(ok && calls.len() == 1 && calls[0].contains("--dependency=afterok:77_1 "), "{stderr} {calls:?}");
    std::fs::write(&slurm.queue, "").unwrap();
    let (ok, calls, stderr) = slurm.submit(&work, &[]);
    assert!(ok && calls[0].contains("--array=1 ") && calls[1].contains("afterok:42 "), "{stderr} {calls:?}");
}

/// Plans and logs of the previous formats (digests of two CRC-32s, a recorded thread
/// count) are refused with a message that says what to do, not a digest mismatch.
#[test]
fn plans_and_logs_of_older_formats_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("w");
    Plan::create_build(&work, games(40), &config(2, 1), 1, &work.join("book.tbk")).unwrap();
    let json = std::fs::read_to_string(work.join("plan.json")).unwrap();
    assert!(json.contains("\"thorbook plan 3\"") && !json.contains("\"threads\""), "{json}");
    std::fs::write(work.join("plan.json"), json.replace("thorbook plan 3", "thorbook plan 2")).unwrap();
    let err = Plan::open(&work).err().expect("an old plan is refused").to_string();
    assert!(err.contains("plan.json") && err.contains("thorbook plan 2") && err.contains("plan again"), "{err}");
    let mut old_log = b"TBLEAFL1".to_vec();
    old_log.resize(32, 0);
    let log = dir.path().join("audit.checkpoint");
    std::fs::write(&log, &old_log).unwrap();
    let out = thorbook(&[
        "book",
        "audit",
        "--sample",
        "4",
        "--level",
        "1",
        "--resume",
        "--checkpoint",
        log.to_str().unwrap(),
    ]);
    assert!(out.fails().contains("older thorbook"), "{}", out.stderr);
}

/// Reporting on a plan and assembling it load no evaluation: with the plan's weight
/// file gone, `status` and `assemble` work and a shard fails naming the file; with
/// another file in its place a shard fails naming the change.
#[test]
fn only_a_shard_that_searches_loads_the_evaluation() {
    use thorbook::eval::{EvalSource, Weights};
    let dir = tempfile::tempdir().unwrap();
    let weights = dir.path().join("weights.bin");
    Weights::bundled().save(&weights).unwrap();
    let work = dir.path().join("w");
    let mut cfg = config(2, 1);
    cfg.search.eval = EvalSource::File(weights.clone());
    let plan = Plan::create_build(&work, games(40), &cfg, 2, &work.join("book.tbk")).unwrap();
    plan.run_shard(0, Some(1), &|_| {}).unwrap();
    let original = std::fs::read(&weights).unwrap();
    std::fs::remove_file(&weights).unwrap();
    let w = work.to_str().unwrap();
    let status = thorbook(&["book", "status", w]);
    assert!(status.ok().contains("1 done"), "{}", status.stdout);
    let missing = thorbook(&["book", "shard", w, "--index", "1"]);
    assert!(missing.fails().contains("weights.bin"), "{}", missing.stderr);
    Weights::zero(1).save(&weights).unwrap();
    let changed = Plan::open(&work).unwrap().run_shard(1, Some(1), &|_| {}).unwrap_err().to_string();
    assert!(changed.contains("weights.bin") && changed.contains("changed"), "{changed}");
    std::fs::write(&weights, &original).unwrap();
    Plan::open(&work).unwrap().run_shard(1, Some(1), &|_| {}).unwrap();
    std::fs::remove_file(&weights).unwrap();
    thorbook(&["book", "assemble", w]).ok();
    let local = Builder::new(cfg.clone(), dir.path().join("local.tbk"));
    std::fs::write(&weights, &original).unwrap();
    let local = local.run(&games(40), &|_| {}).unwrap();
    assert!(std::fs::read(work.join("book.tbk")).unwrap() == local.bytes);
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

/// The first checkpoint write that fails stops a shard at once with an error naming
/// the checkpoint (a file size limit stands in for a full disk).
#[cfg(unix)]
#[test]
fn a_failed_checkpoint_write_stops_the_shard_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("w");
    Plan::create_build(&work, games(200), &config(3, 1), 1, &work.join("book.tbk")).unwrap();
    let script = format!(
        "trap '' XFSZ; ulimit -f 1; exec '{}' book shard '{}' --index 0 --threads 1",
        env!("CARGO_BIN_EXE_thorbook"),
        work.display()
    );
    let out = std::process::Command::new("bash").arg("-c").arg(&script).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains("shard-0000.partial"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    // Nothing past the limit was written, and the shard resumes from what was.
    assert!(std::fs::metadata(work.join("shard-0000.partial")).unwrap().len() <= 1024);
    run_all(&Plan::open(&work).unwrap(), Some(1));
    assert_eq!(Plan::open(&work).unwrap().status()[0].state, ShardState::Done);
}

/// Two builds resuming one checkpoint: the second is refused naming the lock.
#[test]
fn a_build_checkpoint_is_locked_while_a_build_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("b.tbk");
    let ckpt = dir.path().join("b.tbk.checkpoint");
    let holder = std::fs::File::create(&ckpt).unwrap();
    holder.lock().unwrap();
    let refused =
        thorbook(&["book", "build", "--max-ply", "8", "--depth", "2", "--resume", "-o", out.to_str().unwrap()]);
    assert!(refused.fails().contains("locked") && refused.stderr.contains("b.tbk.checkpoint"), "{}", refused.stderr);
    drop(holder);
    thorbook(&["book", "build", "--max-ply", "8", "--depth", "2", "--resume", "-o", out.to_str().unwrap()]).ok();
    assert!(out.exists() && !ckpt.exists());
}
