//! Sharded builds on a real Slurm cluster (`scripts/slurm-one-node.sh` starts one on
//! this machine; `.ci/run` runs these where it can, and prints NOT RUN otherwise): the
//! book a job array assembles equals the local build byte for byte, and a task
//! cancelled mid-run is completed by submitting again, to the identical book.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::util::thorbook;

const BUILD: [&str; 8] = ["--max-ply", "16", "--depth", "8", "--exact-at", "16", "--hash-mib", "4"];

fn local_build(out: &Path) -> Vec<u8> {
    let mut args = vec!["book", "build"];
    args.extend(BUILD);
    args.extend(["-o", out.to_str().unwrap()]);
    thorbook(&args).ok();
    std::fs::read(out).unwrap()
}

fn plan(work: &Path) {
    let mut args = vec!["book", "plan", "build"];
    args.extend(BUILD);
    let out = work.join("book.tbk");
    args.extend(["--shards", "4", "--work-dir", work.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    thorbook(&args).ok();
}

fn cluster_is_up() {
    let out =
        Command::new("sinfo").args(["-h", "-N", "-o", "%T"]).output().expect("sinfo (run scripts/slurm-one-node.sh)");
    let state = String::from_utf8_lossy(&out.stdout);
    assert!(state.contains("idle") || state.contains("mix") || state.contains("alloc"), "no Slurm node up: {state}");
}

#[test]
#[ignore = "needs a Slurm cluster (scripts/slurm-one-node.sh)"]
fn slurm_a_job_array_builds_the_same_book_as_one_process() {
    cluster_is_up();
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    plan(&work);
    let started = Instant::now();
    thorbook(&["book", "submit", work.to_str().unwrap(), "--slurm", "--wait"]).ok();
    let slurm_secs = started.elapsed().as_secs_f64();
    let local = local_build(&dir.path().join("local.tbk"));
    assert!(std::fs::read(work.join("book.tbk")).unwrap() == local, "the Slurm book differs from the local one");
    for i in 0..4 {
        // A batch log has no terminal: the shard's progress is there as plain lines.
        let log = std::fs::read_to_string(work.join(format!("logs/shard-{i:04}.log"))).unwrap();
        assert!(log.contains(&format!("shard {i}: ")) && log.contains(" positions (100.0%), done in "), "{log}");
    }
    eprintln!("Slurm build, 4 shards: {slurm_secs:.1} s wall");
    // Submitting again when everything is done only assembles.
    let again = thorbook(&["book", "submit", work.to_str().unwrap(), "--slurm", "--wait"]);
    assert!(again.stderr.contains("every shard is done"), "{}", again.stderr);
}

#[test]
#[ignore = "needs a Slurm cluster (scripts/slurm-one-node.sh)"]
fn slurm_a_cancelled_task_is_completed_by_submitting_again() {
    let (dir, work, array) = planned_and_submitted();
    let w = work.to_str().unwrap();
    // Cancel shard 1 once it has checkpointed some positions.
    let partial = work.join("shard-0001.partial");
    let deadline = Instant::now() + Duration::from_secs(120);
    while std::fs::metadata(&partial).map_or(0, |m| m.len()) < 32 + 16 * 20 {
        assert!(Instant::now() < deadline, "shard 1 never started");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(Command::new("scancel").arg(format!("{array}_1")).status().unwrap().success());
    // The assembly depends on the cancelled task: it is killed, not left pending.
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        let out = Command::new("squeue").args(["-h", "-u", &whoami(), "-o", "%i %j"]).output().unwrap();
        let queue = String::from_utf8_lossy(&out.stdout).to_string();
        if !queue.contains("thorbook") {
            break;
        }
        assert!(Instant::now() < deadline, "jobs still queued: {queue}");
        std::thread::sleep(Duration::from_millis(300));
    }
    assert!(!work.join("book.tbk").exists(), "no book without shard 1");
    let status: serde_json::Value = serde_json::from_str(thorbook(&["book", "status", w, "--json"]).ok()).unwrap();
    // Cancelled, it holds no lock: stopped, not running.
    assert_eq!(status["shard_states"][1]["state"], "stopped", "{status}");
    assert_eq!(status["done"], 3, "{status}");
    // Its checkpoint is seconds old, but the lock is the truth on a file system that
    // honours it (and the scheduler, asked about the job the runner recorded, says it
    // ended): submitting again runs it at once.
    let again = thorbook(&["book", "submit", w, "--slurm", "--wait"]);
    again.ok();
    assert!(again.stderr.contains("submitted 1 shard(s)") && again.stderr.contains("(shards 1)"), "{}", again.stderr);
    let local = local_build(&dir.path().join("local.tbk"));
    assert!(std::fs::read(work.join("book.tbk")).unwrap() == local, "the resubmitted book differs");
}

/// Submitting while the shards still run (or wait in the queue) submits no shard
/// twice: the assembly waits for their jobs, and the book is the local one.
#[test]
#[ignore = "needs a Slurm cluster (scripts/slurm-one-node.sh)"]
fn slurm_submitting_while_shards_run_waits_for_their_jobs() {
    let (dir, work, array) = planned_and_submitted();
    let w = work.to_str().unwrap();
    // Once a shard has checkpointed, submit again: every unfinished shard is a job.
    let deadline = Instant::now() + Duration::from_secs(120);
    while !(0..4).any(|i| std::fs::metadata(work.join(format!("shard-{i:04}.partial"))).is_ok_and(|m| m.len() > 32)) {
        assert!(Instant::now() < deadline, "no shard started");
        std::thread::sleep(Duration::from_millis(50));
    }
    let again = thorbook(&["book", "submit", w, "--slurm", "--wait"]);
    again.ok();
    assert!(again.stderr.contains(&format!("as job {array}_")), "{}", again.stderr);
    assert!(!again.stderr.contains("every shard is done"), "{}", again.stderr);
    let local = local_build(&dir.path().join("local.tbk"));
    assert!(std::fs::read(work.join("book.tbk")).unwrap() == local, "the book differs from the local one");
}

/// A plan of 4 shards in a fresh directory, submitted without waiting: the directory,
/// the plan's work directory and the array's job id.
fn planned_and_submitted() -> (tempfile::TempDir, std::path::PathBuf, String) {
    cluster_is_up();
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    plan(&work);
    let array = thorbook(&["book", "submit", work.to_str().unwrap(), "--slurm"]).ok().trim().to_string();
    (dir, work, array)
}

fn whoami() -> String {
    let out = Command::new("id").arg("-un").output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A deviation planned in rounds runs round after round through `book submit --wait`
/// (each round's assembly plans the next) and writes the book `book deviate` writes.
#[test]
#[ignore = "needs a Slurm cluster (scripts/slurm-one-node.sh)"]
fn slurm_deviation_rounds_write_the_same_book_as_the_local_run() {
    cluster_is_up();
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    thorbook(&["book", "build", "--max-ply", "10", "--depth", "4", "--exact-at", "12", "-o", &p("in.tbk")]).ok();
    let grow = ["--book", &p("in.tbk"), "--error", "2", "--budget", "4", "--max-ply", "14", "--depth", "4"];
    let grow: Vec<&str> =
        grow.into_iter().chain(["--exact-at", "12", "--max-positions", "300", "--round-size", "64"]).collect();
    let mut local = vec!["book", "deviate"];
    local.extend(&grow);
    let local_out = p("local.tbk");
    local.extend(["-o", &local_out]);
    let local_run = thorbook(&local);
    local_run.ok();
    let mut plan = vec!["book", "plan", "deviate"];
    plan.extend(&grow);
    let (work, out) = (p("work"), p("work/out.tbk"));
    plan.extend(["--shards", "3", "--work-dir", &work, "-o", &out]);
    thorbook(&plan).ok();
    let submitted = thorbook(&["book", "submit", &work, "--slurm", "--wait"]);
    submitted.ok();
    assert!(submitted.stderr.contains("round 2: submitted"), "{}", submitted.stderr);
    assert!(
        std::fs::read(&out).unwrap() == std::fs::read(&local_out).unwrap(),
        "the Slurm rounds differ from the local run"
    );
    let rounds = submitted.stderr.matches("assembled into").count();
    assert!(local_run.stderr.contains(&format!("in {rounds} rounds")), "{}\n{}", local_run.stderr, submitted.stderr);
    let status = thorbook(&["book", "status", &work]);
    assert!(status.ok().contains(&format!("finished after {rounds} rounds")), "{}", status.stdout);
}

#[test]
#[ignore = "needs a Slurm cluster (scripts/slurm-one-node.sh)"]
fn slurm_an_audit_planned_in_shards_reports_as_the_local_run() {
    cluster_is_up();
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("audit");
    let log = dir.path().join("audit.log");
    let audit = ["book", "audit", "--sample", "40", "--level", "6", "--json"];
    let mut args = vec!["book", "plan", "audit", "--sample", "40", "--level", "6"];
    args.extend(["--checkpoint", log.to_str().unwrap(), "--shards", "3", "--work-dir", work.to_str().unwrap()]);
    thorbook(&args).ok();
    thorbook(&["book", "submit", work.to_str().unwrap(), "--slurm", "--wait"]).ok();
    let report = |extra: &[&str]| -> serde_json::Value {
        let r = thorbook(&[&audit[..], extra].concat());
        let mut v: serde_json::Value = serde_json::from_str(r.ok()).unwrap();
        v.as_object_mut().unwrap().remove("searched");
        v
    };
    let planned = report(&["--checkpoint", log.to_str().unwrap(), "--resume"]);
    assert_eq!(planned, report(&[]), "the planned audit's report differs from the local one");
}

/// Self-play as a job array (one shard a task, the output named by `{index}` from
/// `SLURM_ARRAY_TASK_ID`): the shards concatenated are the one-process run.
#[test]
#[ignore = "needs a Slurm cluster (scripts/slurm-one-node.sh)"]
fn slurm_self_play_shards_make_the_games_of_one_process() {
    cluster_is_up();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let common = ["selfplay", "--games", "8", "--depth", "3", "--book-randomness", "2", "--seed", "5"];
    let bin = env!("CARGO_BIN_EXE_thorbook");
    let script = format!("{bin} {} --shards 2 -o {}/g.{{index}}.txt", common.join(" "), d.display());
    let log = d.join("task-%a.log");
    let out = Command::new("sbatch")
        .args(["--wait", "--array=0-1", "-o", log.to_str().unwrap(), "--wrap", &script])
        .output()
        .expect("sbatch");
    assert!(out.status.success(), "sbatch: {}", String::from_utf8_lossy(&out.stderr));
    let whole = d.join("whole.txt");
    let mut args = common.to_vec();
    args.extend(["-o", whole.to_str().unwrap()]);
    thorbook(&args).ok();
    let mut shards = std::fs::read(d.join("g.0.txt")).unwrap();
    shards.extend(std::fs::read(d.join("g.1.txt")).unwrap());
    assert!(shards == std::fs::read(&whole).unwrap(), "the array's games differ from one process's");
}

/// Exact labels as the README runs them on a cluster: a job array solves one shard a
/// task into a store of its own, and a job that depends on the array merges them; the
/// merged store is the one-process store byte for byte.
#[test]
#[ignore = "needs a Slurm cluster (scripts/slurm-one-node.sh)"]
fn slurm_labels_solved_in_an_array_merge_to_the_one_process_store() {
    cluster_is_up();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bin = env!("CARGO_BIN_EXE_thorbook");
    let common = "labels solve --solve-at 10 --solve-empties 14 --every 25 --threads 1";
    let solve = format!("{bin} {common} --shards 3 --labels {}/l.{{index}}.tbl", d.display());
    let log = d.join("task-%a.log");
    let array = Command::new("sbatch")
        .args(["--parsable", "--array=0-2", "-o", log.to_str().unwrap(), "--wrap", &solve])
        .output()
        .expect("sbatch");
    assert!(array.status.success(), "sbatch: {}", String::from_utf8_lossy(&array.stderr));
    let array = String::from_utf8_lossy(&array.stdout).trim().split(';').next().unwrap().to_string();
    let merged = d.join("labels.tbl");
    let merge = format!("{bin} labels merge {0}/l.0.tbl {0}/l.1.tbl {0}/l.2.tbl -o {1}", d.display(), merged.display());
    let out = Command::new("sbatch")
        .args(["--wait", &format!("--dependency=afterok:{array}"), "--kill-on-invalid-dep=yes"])
        .args(["-o", d.join("merge.log").to_str().unwrap(), "--wrap", &merge])
        .output()
        .expect("sbatch");
    assert!(
        out.status.success(),
        "merge job: {} {}",
        String::from_utf8_lossy(&out.stderr),
        std::fs::read_to_string(d.join("merge.log")).unwrap_or_default()
    );
    let whole = d.join("whole.tbl");
    let mut args: Vec<&str> = common.split(' ').collect();
    args.extend(["--labels", whole.to_str().unwrap()]);
    thorbook(&args).ok();
    let canonical = d.join("whole-merged.tbl");
    thorbook(&["labels", "merge", whole.to_str().unwrap(), "-o", canonical.to_str().unwrap()]).ok();
    let info = thorbook(&["labels", "info", merged.to_str().unwrap()]);
    assert!(info.stdout.contains(" 14:"), "no 14-empty solves: {}", info.stdout);
    assert!(std::fs::read(&merged).unwrap() == std::fs::read(&canonical).unwrap(), "the array's labels differ");
}
