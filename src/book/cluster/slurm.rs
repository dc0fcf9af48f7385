//! Running a [`Plan`] on a Slurm cluster as a well-behaved batch job: readable sbatch
//! scripts written into the work directory (users adapt them), the shards submitted as
//! one job array and the assembly as a job that depends on it (`afterok`, with
//! `--kill-on-invalid-dep=yes` so that a failed shard never leaves it pending for
//! ever), and a wait that follows both and names what failed with its log file.
//! Submitting again runs only the shards that are missing, stopped or damaged, and
//! makes the assembly wait for those still running as jobs.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant, SystemTime};

use super::plan::{Plan, ShardState, ShardStatus};
use crate::fileio::IoError;

/// How long a checkpoint write keeps a shard presumed running when neither its lock
/// nor the scheduler can tell (a file system that refuses locks, a runner that named
/// no job): ten minutes.
pub(crate) const FRESH: Duration = Duration::from_secs(600);

/// How to submit.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct SlurmOptions {
    /// The `thorbook` binary the jobs run (an absolute path every node can reach).
    pub binary: PathBuf,
    /// `--partition`.
    pub partition: Option<String>,
    /// `--time` per job (`HH:MM:SS` or any form sbatch takes).
    pub time: Option<String>,
    /// `--cpus-per-task`: each shard's leaf searches side by side.
    pub cpus_per_task: u32,
    /// `--mem` per job (e.g. `2G`).
    pub mem: Option<String>,
    /// Submit every shard not done, running or not.
    pub force: bool,
    /// Where the file system refuses locks and the runner named no job, a shard whose
    /// checkpoint was written this recently is presumed running.
    pub fresh: Duration,
}

impl Default for SlurmOptions {
    fn default() -> SlurmOptions {
        SlurmOptions {
            binary: PathBuf::new(),
            partition: None,
            time: None,
            cpus_per_task: 1,
            mem: None,
            force: false,
            fresh: FRESH,
        }
    }
}

/// What was submitted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Submission {
    /// The shard array's job id (`None` when every shard was already done).
    pub array: Option<String>,
    /// The shards in the array.
    pub shards: Vec<u32>,
    /// Shards not submitted because they run (or wait in the queue) as a job the
    /// scheduler knows, with that job: the assembly waits for them too.
    pub running: Vec<(u32, String)>,
    /// The assembly's job id.
    pub assemble: String,
    /// When it was submitted.
    pub at: SystemTime,
}

/// Why a submission or a wait failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SlurmError {
    /// sbatch, squeue or scontrol could not be run or refused.
    #[error("{command}: {message}")]
    Command {
        /// The command line.
        command: String,
        /// What it said.
        message: String,
    },
    /// A script could not be written.
    #[error(transparent)]
    Io(#[from] IoError),
    /// An option out of range.
    #[error(transparent)]
    Setting(#[from] crate::setting::OutOfRange),
    /// Shards that did not finish, with their logs.
    #[error("{} shard(s) failed: {}", .0.len(), .0.iter().map(|(i, log)| format!("shard {i} (log {})", log.display())).collect::<Vec<_>>().join(", "))]
    ShardsFailed(Vec<(u32, PathBuf)>),
    /// Shards that look running with no job the scheduler knows (a process here holds
    /// the lock, or the file system refuses locks and the checkpoint was written within
    /// `fresh`): nothing was submitted, since the assembly could not wait for them.
    #[error(
        "nothing submitted: shard(s) {} look running with no job the scheduler knows (a process holds the lock, \
         or on a file system without locks the checkpoint was written in the last {} min): wait for them to \
         finish, or --force to submit them anyway",
        array_spec(shards), fresh.as_secs() / 60
    )]
    RunningUnscheduled {
        /// The shards.
        shards: Vec<u32>,
        /// The freshness window.
        fresh: Duration,
    },
    /// The assembly did not write the book.
    #[error("the assembly did not write the book (log {0})")]
    AssemblyFailed(PathBuf),
}

/// `a-b,c,…`: Slurm's array syntax for a sorted index list.
pub(crate) fn array_spec(indices: &[u32]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < indices.len() {
        let start = indices[i];
        let mut end = start;
        while i + 1 < indices.len() && indices[i + 1] == end + 1 {
            i += 1;
            end += 1;
        }
        parts.push(if start == end { start.to_string() } else { format!("{start}-{end}") });
        i += 1;
    }
    parts.join(",")
}

fn quote(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', "'\\''"))
}

/// The directory of the logs of a plan's jobs.
pub(crate) fn log_dir(plan_dir: &Path) -> PathBuf {
    plan_dir.join("logs")
}

/// A shard's log file.
pub(crate) fn shard_log(plan_dir: &Path, index: u32) -> PathBuf {
    log_dir(plan_dir).join(format!("shard-{index:04}.log"))
}

/// Writes `slurm/shards.sbatch` and `slurm/assemble.sbatch` into the plan's directory
/// and returns their paths.
pub(crate) fn write_scripts(plan_dir: &Path, opts: &SlurmOptions) -> Result<(PathBuf, PathBuf), SlurmError> {
    if opts.cpus_per_task == 0 {
        return Err(crate::setting::OutOfRange::new(crate::setting::Setting::CpusPerTask, 0, "at least 1").into());
    }
    let dir = std::path::absolute(plan_dir).unwrap_or_else(|_| plan_dir.to_path_buf());
    let scripts = dir.join("slurm");
    let io = |path: &Path| {
        let path = path.display().to_string();
        move |source| SlurmError::Io(IoError::new(&path, source))
    };
    std::fs::create_dir_all(&scripts).map_err(io(&scripts))?;
    std::fs::create_dir_all(log_dir(&dir)).map_err(io(&log_dir(&dir)))?;
    let mut common = String::new();
    if let Some(p) = &opts.partition {
        common.push_str(&format!("#SBATCH --partition={p}\n"));
    }
    if let Some(t) = &opts.time {
        common.push_str(&format!("#SBATCH --time={t}\n"));
    }
    if let Some(m) = &opts.mem {
        common.push_str(&format!("#SBATCH --mem={m}\n"));
    }
    let bin = quote(&opts.binary);
    let shards = format!(
        "#!/bin/bash\n\
         # One shard of the thorbook plan in {d}, as a task of a job array: the array\n\
         # index is the shard. Written by `thorbook book submit`; adapt it as you need\n\
         # (submit with: sbatch --array=0-N-1 {s}).\n\
         #SBATCH --job-name=thorbook-shards\n\
         #SBATCH --output={log}/shard-%4a.log\n\
         #SBATCH --cpus-per-task={c}\n\
         {common}\
         set -euo pipefail\n\
         exec {bin} book shard {dq} --threads \"${{SLURM_CPUS_PER_TASK:-{c}}}\"\n",
        d = dir.display(),
        s = scripts.join("shards.sbatch").display(),
        log = log_dir(&dir).display(),
        c = opts.cpus_per_task,
        dq = quote(&dir),
    );
    let assemble = format!(
        "#!/bin/bash\n\
         # Assembles the book of the thorbook plan in {d} once every shard is done.\n\
         # Written by `thorbook book submit`; adapt it as you need.\n\
         #SBATCH --job-name=thorbook-assemble\n\
         #SBATCH --output={log}/assemble.log\n\
         #SBATCH --cpus-per-task=1\n\
         {common}\
         set -euo pipefail\n\
         exec {bin} book assemble {dq}\n",
        d = dir.display(),
        log = log_dir(&dir).display(),
        dq = quote(&dir),
    );
    let (sp, ap) = (scripts.join("shards.sbatch"), scripts.join("assemble.sbatch"));
    crate::fileio::atomic_write(&sp, shards.as_bytes()).map_err(io(&sp))?;
    crate::fileio::atomic_write(&ap, assemble.as_bytes()).map_err(io(&ap))?;
    Ok((sp, ap))
}

fn run(command: &mut Command) -> Result<String, SlurmError> {
    let line = format!("{command:?}");
    let out = command.output().map_err(|e| SlurmError::Command { command: line.clone(), message: e.to_string() })?;
    if !out.status.success() {
        let message = String::from_utf8_lossy(&out.stderr).trim().to_string();
        return Err(SlurmError::Command { command: line, message });
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The job id `sbatch --parsable` printed (`id` or `id;cluster`).
fn job_id(printed: &str) -> String {
    printed.split(';').next().unwrap_or(printed).trim().to_string()
}

/// The file in a plan's `slurm/` directory that remembers which job each submitted
/// shard was given, so that a shard still pending in the queue is not submitted twice.
const JOBS_FILE: &str = "jobs";
const JOBS_MAGIC: &str = "thorbook submitted shards 1";

/// The jobs the shards were last submitted as (shard → job), from `slurm/jobs`.
fn submitted_jobs(plan_dir: &Path) -> HashMap<u32, String> {
    let Ok(text) = std::fs::read_to_string(plan_dir.join("slurm").join(JOBS_FILE)) else { return HashMap::new() };
    let mut lines = text.lines();
    if lines.next() != Some(JOBS_MAGIC) {
        return HashMap::new();
    }
    lines
        .filter_map(|l| {
            let (index, job) = l.split_once(' ')?;
            Some((index.parse().ok()?, job.to_string()))
        })
        .collect()
}

fn write_submitted_jobs(plan_dir: &Path, jobs: &HashMap<u32, String>) -> Result<(), SlurmError> {
    let mut rows: Vec<_> = jobs.iter().collect();
    rows.sort_unstable();
    let mut text = format!("{JOBS_MAGIC}\n");
    for (index, job) in rows {
        text.push_str(&format!("{index} {job}\n"));
    }
    let path = plan_dir.join("slurm").join(JOBS_FILE);
    crate::fileio::atomic_write(&path, text.as_bytes()).map_err(|e| SlurmError::Io(IoError::new(&path, e)))
}

/// Of `jobs` (`ID` or `ID_TASK`), those the scheduler still has queued or running. The
/// scheduler is asked once about their distinct jobs (an array's tasks through its
/// id, so that the command line does not grow with the shards); a job squeue no
/// longer knows has ended.
fn live_jobs<'a>(jobs: impl IntoIterator<Item = &'a str>) -> Result<HashSet<String>, SlurmError> {
    let mut asked: Vec<&str> = jobs.into_iter().map(|j| j.split_once('_').map_or(j, |(array, _)| array)).collect();
    asked.sort_unstable();
    asked.dedup();
    if asked.is_empty() {
        return Ok(HashSet::new());
    }
    let list = asked.join(",");
    // -r: one line per array task, pending ones too.
    let out = Command::new("squeue").args(["-h", "-r", "-o", "%i %T", "-j", &list]).output();
    let printed = match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).to_string(),
        // "Invalid job id specified": every record was purged, so the jobs are over.
        Ok(o) if String::from_utf8_lossy(&o.stderr).contains("Invalid job id") => String::new(),
        Ok(o) => {
            return Err(SlurmError::Command {
                command: format!("squeue -r -j {list}"),
                message: String::from_utf8_lossy(&o.stderr).trim().to_string(),
            })
        }
        Err(e) => return Err(SlurmError::Command { command: "squeue".into(), message: e.to_string() }),
    };
    // squeue lists jobs that just ended too, for a while.
    let ended = [
        "COMPLETED",
        "FAILED",
        "CANCELLED",
        "TIMEOUT",
        "OUT_OF_MEMORY",
        "NODE_FAIL",
        "PREEMPTED",
        "BOOT_FAIL",
        "DEADLINE",
    ];
    Ok(printed
        .lines()
        .filter_map(|l| l.split_once(' '))
        .filter(|(_, state)| !ended.contains(&state.trim()))
        .map(|(id, _)| id.to_string())
        .collect())
}

/// What `submit` makes of a shard that is not done.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Seen {
    /// Running (or queued) as this job: the assembly waits for it.
    InJob(String),
    /// Running as far as anyone can tell, with no job the scheduler knows: a runner
    /// holds the lock here, or the file system refuses locks and the checkpoint is
    /// recent.
    Unscheduled,
    /// To submit.
    Stopped,
}

/// What each shard that is not done is: a lock the file system honours is the truth
/// (held: running; free after a runner held it: stopped, however recent its file);
/// where the runner's lock was refused, the scheduler is asked about its job; without
/// one, a checkpoint written within `fresh` is presumed running. A shard submitted
/// earlier and still queued is running as its job.
fn classify(plan: &Plan, submitted: &HashMap<u32, String>, fresh: Duration) -> Result<Vec<(u32, Seen)>, SlurmError> {
    let status: Vec<_> = plan.status().into_iter().filter(|s| s.state != ShardState::Done).collect();
    // A stopped shard's state carries its runner's record; a running one's is read.
    let runner_job = |s: &ShardStatus| match &s.state {
        ShardState::Partial { runner, .. } => runner.as_ref().and_then(|r| r.job.clone()),
        ShardState::Running { .. } => plan.runner(s.index).and_then(|r| r.job),
        _ => None,
    };
    let jobs: Vec<(u32, Option<String>)> = status.iter().map(|s| (s.index, runner_job(s))).collect();
    let asked = jobs.iter().flat_map(|(i, job)| job.iter().chain(submitted.get(i))).map(String::as_str);
    let live = live_jobs(asked)?;
    let here = super::plan::host_name();
    Ok(status
        .into_iter()
        .zip(jobs)
        .map(|(s, (index, runner_job))| {
            let live_job = runner_job.iter().chain(submitted.get(&index)).find(|j| live.contains(*j)).cloned();
            let seen = match (&s.state, live_job) {
                (_, Some(job)) => Seen::InJob(job),
                (ShardState::Running { .. }, None) => Seen::Unscheduled,
                // Its job has ended: whatever the locks say, it stopped.
                (ShardState::Partial { .. }, None) if runner_job.is_some() => Seen::Stopped,
                (ShardState::Partial { idle, .. }, None) if !s.state.lock_tells(&here) && idle < &fresh => {
                    Seen::Unscheduled
                }
                _ => Seen::Stopped,
            };
            (index, seen)
        })
        .collect())
}

/// Writes the scripts and submits the shards that are not done (missing, stopped or
/// damaged) as one array, then the assembly after them and after every shard still
/// running as a job (a held lock or the scheduler says which). A shard running with no job the
/// scheduler knows cannot be waited for: then nothing is submitted and the error names
/// it, unless `opts.force`, which submits every shard not done.
pub fn submit(plan: &Plan, plan_dir: &Path, opts: &SlurmOptions) -> Result<Submission, SlurmError> {
    let (shards_script, assemble_script) = write_scripts(plan_dir, opts)?;
    let at = SystemTime::now();
    let mut submitted = submitted_jobs(plan_dir);
    let seen = classify(plan, &submitted, opts.fresh)?;
    let (mut todo, mut running, mut unscheduled) = (Vec::new(), Vec::new(), Vec::new());
    for (index, seen) in seen {
        match seen {
            _ if opts.force => todo.push(index),
            Seen::Stopped => todo.push(index),
            Seen::InJob(job) => running.push((index, job)),
            Seen::Unscheduled => unscheduled.push(index),
        }
    }
    if !unscheduled.is_empty() {
        return Err(SlurmError::RunningUnscheduled { shards: unscheduled, fresh: opts.fresh });
    }
    let array = if todo.is_empty() {
        None
    } else {
        let printed = run(Command::new("sbatch")
            .arg("--parsable")
            .arg(format!("--array={}", array_spec(&todo)))
            .arg(&shards_script))?;
        let id = job_id(&printed);
        submitted.extend(todo.iter().map(|&i| (i, format!("{id}_{i}"))));
        write_submitted_jobs(plan_dir, &submitted)?;
        Some(id)
    };
    let mut after: Vec<String> = array.iter().cloned().collect();
    after.extend(running.iter().map(|(_, job)| job.clone()));
    let mut assemble = Command::new("sbatch");
    assemble.arg("--parsable");
    if !after.is_empty() {
        assemble.arg(format!("--dependency=afterok:{}", after.join(":"))).arg("--kill-on-invalid-dep=yes");
    }
    let assemble = job_id(&run(assemble.arg(&assemble_script))?);
    Ok(Submission { array, shards: todo, running, assemble, at })
}

/// Follows a submission until its jobs leave the queue, calling `progress(scored,
/// total)` about every `poll`; then checks that every shard is done and the book was
/// written after the submission, naming failed shards and their logs.
pub fn wait(
    plan: &Plan,
    plan_dir: &Path,
    submission: &Submission,
    poll: Duration,
    progress: &dyn Fn(u64, u64),
) -> Result<(), SlurmError> {
    let mut jobs: Vec<&str> = vec![&submission.assemble];
    jobs.extend(submission.array.as_deref());
    jobs.extend(submission.running.iter().map(|(_, job)| job.as_str()));
    let total = plan.positions() as u64;
    let mut last = Instant::now() - Duration::from_secs(3600);
    loop {
        let queued = !live_jobs(jobs.iter().copied())?.is_empty();
        if last.elapsed() >= Duration::from_secs(2) || !queued {
            let scored = plan.status().iter().map(|s| s.scored()).sum();
            progress(scored, total);
            last = Instant::now();
        }
        if !queued {
            break;
        }
        std::thread::sleep(poll);
    }
    let failed: Vec<(u32, PathBuf)> = plan
        .status()
        .into_iter()
        .filter(|s| s.state != ShardState::Done)
        .map(|s| (s.index, shard_log(plan_dir, s.index)))
        .collect();
    if !failed.is_empty() {
        return Err(SlurmError::ShardsFailed(failed));
    }
    let written = std::fs::metadata(plan.output()).and_then(|m| m.modified()).is_ok_and(|t| t >= submission.at);
    if !written {
        return Err(SlurmError::AssemblyFailed(log_dir(plan_dir).join("assemble.log")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_specs_compress_runs() {
        assert_eq!(array_spec(&[0, 1, 2, 3]), "0-3");
        assert_eq!(array_spec(&[0, 2, 3, 4, 7]), "0,2-4,7");
        assert_eq!(array_spec(&[5]), "5");
        assert_eq!(array_spec(&[]), "");
    }

    #[test]
    fn scripts_name_the_plan_logs_and_options() {
        let dir = tempfile_dir();
        let opts = SlurmOptions {
            binary: "/opt/thor book/thorbook".into(),
            partition: Some("long".into()),
            time: Some("02:00:00".into()),
            cpus_per_task: 4,
            mem: Some("3G".into()),
            ..SlurmOptions::default()
        };
        let (s, a) = write_scripts(&dir, &opts).unwrap();
        let shards = std::fs::read_to_string(s).unwrap();
        for want in ["--partition=long", "--time=02:00:00", "--mem=3G", "--cpus-per-task=4", "shard-%4a.log"] {
            assert!(shards.contains(want), "{want}\n{shards}");
        }
        assert!(shards.contains("exec '/opt/thor book/thorbook' book shard"), "{shards}");
        assert!(std::fs::read_to_string(a).unwrap().contains("book assemble"));
        let refused = write_scripts(&dir, &SlurmOptions { cpus_per_task: 0, ..opts }).unwrap_err();
        assert!(
            matches!(refused, SlurmError::Setting(ref e) if e.setting == crate::setting::Setting::CpusPerTask),
            "{refused}"
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    fn tempfile_dir() -> PathBuf {
        let d = std::env::temp_dir().join(format!("thorbook-slurm-test-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }
}
