//! Sharded book computation through the binary: `book plan`, `shard`, `status`,
//! `assemble` and `submit` (against a stand-in scheduler), the files they leave, and
//! what a file system that refuses locks does to them. The plans' library tests are
//! in `src/book/plan/tests.rs`.

use std::path::Path;

use crate::util::thorbook;

/// The first `games` bundled games as a transcript in `dir`, planned by the binary as
/// `book plan build` (ply 12, 1 game, `depth`, exact at 14, 2 MiB tables) in `shards`
/// shards into `work`, with `extra` arguments.
fn cli_plan(dir: &Path, work: &Path, games: usize, depth: u32, shards: u32, extra: &[&str]) {
    let all = thorbook(&["thor", "export", "--format", "transcript"]);
    let lines: Vec<&str> = all.ok().lines().take(games).collect();
    let transcript = dir.join(format!("games-{games}.txt"));
    std::fs::write(&transcript, lines.join("\n") + "\n").unwrap();
    let (depth, shards) = (depth.to_string(), shards.to_string());
    let out = work.join("book.tbk");
    let mut args = vec!["book", "plan", "build", transcript.to_str().unwrap(), "--max-ply", "12", "--min-games", "1"];
    args.extend(["--depth", &depth, "--exact-at", "14", "--hash-mib", "2", "--shards", &shards]);
    args.extend(["--work-dir", work.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    args.extend(extra);
    thorbook(&args).ok();
}

/// `book status DIR --json`.
fn status(work: &Path) -> serde_json::Value {
    serde_json::from_str(thorbook(&["book", "status", work.to_str().unwrap(), "--json"]).ok()).unwrap()
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
    let shard = thorbook(&["book", "shard", w, "--index", "2", "--threads", "1"]);
    shard.ok();
    assert!(
        shard.stderr.contains("shard 2: ") && shard.stderr.contains(" positions (100.0%), done in "),
        "{}",
        shard.stderr
    );
    let v: serde_json::Value = serde_json::from_str(thorbook(&["book", "status", w, "--json"]).ok()).unwrap();
    assert_eq!((v["done"].as_u64(), v["missing"].as_u64()), (Some(3), Some(0)));
    assert!(thorbook(&["book", "assemble", w, "--threads", "0"]).fails().contains("--threads"));
    thorbook(&["book", "assemble", w, "--threads", "3"]).ok();
    assert!(std::fs::read(&out).unwrap() == std::fs::read(&local).unwrap());
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
    assert!(err.contains("--error must be from 0 to 64, got 100"), "{err}");
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
    cli_plan(dir.path(), &work, 60, 2, 3, &[]);
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
    let shim = crate::util::no_flock_shim(dir.path());
    let work = dir.path().join("w");
    cli_plan(dir.path(), &work, 300, 6, 2, &[]);
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
    cli_plan(dir.path(), &work, 40, 2, 1, &[]);
    let json = std::fs::read_to_string(work.join("plan.json")).unwrap();
    assert!(json.contains("\"thorbook plan 3\"") && !json.contains("\"threads\""), "{json}");
    std::fs::write(work.join("plan.json"), json.replace("thorbook plan 3", "thorbook plan 2")).unwrap();
    let old = thorbook(&["book", "status", work.to_str().unwrap()]);
    let err = old.fails();
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
    let dir = tempfile::tempdir().unwrap();
    let weights = dir.path().join("weights.bin");
    thorbook::eval::Weights::bundled().save(&weights).unwrap();
    let work = dir.path().join("w");
    let w = work.to_str().unwrap();
    cli_plan(dir.path(), &work, 40, 2, 2, &["--eval", weights.to_str().unwrap()]);
    thorbook(&["book", "shard", w, "--index", "0", "--threads", "1"]).ok();
    let original = std::fs::read(&weights).unwrap();
    std::fs::remove_file(&weights).unwrap();
    let status = thorbook(&["book", "status", w]);
    assert!(status.ok().contains("1 done"), "{}", status.stdout);
    let missing = thorbook(&["book", "shard", w, "--index", "1"]);
    assert!(missing.fails().contains("weights.bin"), "{}", missing.stderr);
    crate::util::zero_weights(1).save(&weights).unwrap();
    let changed = thorbook(&["book", "shard", w, "--index", "1", "--threads", "1"]);
    assert!(changed.fails().contains("weights.bin") && changed.stderr.contains("changed"), "{}", changed.stderr);
    std::fs::write(&weights, &original).unwrap();
    thorbook(&["book", "shard", w, "--index", "1", "--threads", "1"]).ok();
    std::fs::remove_file(&weights).unwrap();
    thorbook(&["book", "assemble", w]).ok();
    std::fs::write(&weights, &original).unwrap();
    let local = dir.path().join("local.tbk");
    let games = dir.path().join("games-40.txt");
    thorbook(&[
        "book",
        "build",
        games.to_str().unwrap(),
        "--max-ply",
        "12",
        "--min-games",
        "1",
        "--depth",
        "2",
        "--exact-at",
        "14",
        "--hash-mib",
        "2",
        "--eval",
        weights.to_str().unwrap(),
        "-o",
        local.to_str().unwrap(),
    ])
    .ok();
    assert!(std::fs::read(work.join("book.tbk")).unwrap() == std::fs::read(&local).unwrap());
}

/// The first checkpoint write that fails stops a shard at once with an error naming
/// the checkpoint (a file size limit stands in for a full disk).
#[cfg(unix)]
#[test]
fn a_failed_checkpoint_write_stops_the_shard_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("w");
    cli_plan(dir.path(), &work, 200, 3, 1, &[]);
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
    thorbook(&["book", "shard", work.to_str().unwrap(), "--index", "0", "--threads", "1"]).ok();
    assert_eq!(status(&work)["shard_states"][0]["state"], "done");
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

/// A second runner of a shard through the binary fails naming the lock (the library's
/// side is in `src/book/plan/tests.rs`), and `book status` says the shard is running.
#[test]
fn the_binary_refuses_a_second_runner_of_a_shard() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("w");
    cli_plan(dir.path(), &work, 60, 2, 2, &[]);
    let holder = std::fs::File::create(work.join("shard-0000.partial")).unwrap();
    holder.lock().unwrap();
    let cli = thorbook(&["book", "shard", work.to_str().unwrap(), "--index", "0"]);
    assert!(cli.fails().contains("locked") && cli.stderr.contains("shard-0000.partial"), "{}", cli.stderr);
    assert_eq!(status(&work)["shard_states"][0]["state"], "running");
    drop(holder);
    assert_eq!(status(&work)["shard_states"][0]["state"], "stopped");
}
