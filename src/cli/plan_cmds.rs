//! `thorbook book plan|shard|assemble|status`: a book build split into shards that run
//! anywhere (Slurm array tasks, Kubernetes indexed jobs, or one after the other here),
//! over the library's [`Plan`].

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::SystemTime;

use clap::{Args, Subcommand};

use super::audit_cmds::{audit_checks, fix_checks, AuditArgs, FixArgs};
use super::book_args::{build_error, open_book, position_from, BuildArgs, DeepenArgs, DeviateArgs, GrowArgs};
use super::progress::Meter;
use crate::book::build::collect;
use crate::book::build::{BuildConfig, GameLine};
use crate::book::check::audit::{Checks, ChecksKind};
use crate::book::cluster::plan::{AfterRound, Planned};
use crate::book::cluster::plan::{Plan, PlanError, ShardEvent, ShardState, PLAN_FILE};
use crate::book::cluster::slurm::{self, SlurmOptions};
use crate::book::grow::Growth;

/// What `book plan` plans.
#[derive(Subcommand, Debug)]
pub enum PlanCommand {
    /// Plan a build: `book build`'s options, plus the shards and the work directory
    /// (`-o` is where `book assemble` writes the book).
    Build(PlanBuildArgs),
    /// Plan a deviation in rounds: `book deviate`'s options (not `--max-time` or
    /// `--resume`), plus the shards per round and the work directory (`-o` is where the
    /// last round's assembly writes the book).
    Deviate(PlanDeviateArgs),
    /// Plan a deepening in rounds, as `deviate` with `book deepen`'s options.
    Deepen(PlanDeepenArgs),
    /// Plan an audit's searches: `book audit`'s options (not `--compare-level` or
    /// `--resume`), the log named by `--checkpoint` (or `-o`). The assembly fills the
    /// log; `book audit` with the same options and `--resume` then reports from it.
    Audit(PlanAuditArgs),
    /// Plan a fix's checks: `book fix`'s options (not `--max-time` or `--resume`). The
    /// assembly fills OUT.fix; `book fix` with the same options and `--resume` then
    /// runs the rounds that search leaves again.
    Fix(PlanFixArgs),
}

/// Arguments of `book plan audit`.
#[derive(Args, Debug)]
pub struct PlanAuditArgs {
    #[command(flatten)]
    audit: AuditArgs,
    #[command(flatten)]
    sharding: ShardingArgs,
}

/// Arguments of `book plan fix`.
#[derive(Args, Debug)]
pub struct PlanFixArgs {
    #[command(flatten)]
    fix: FixArgs,
    #[command(flatten)]
    sharding: ShardingArgs,
}

/// Where a plan's shards go.
#[derive(Args, Debug)]
pub struct ShardingArgs {
    /// Number of shards (array tasks) per round, 1 to 100000.
    #[arg(long)]
    shards: u32,
    /// The work directory every shard can read and write (a shared file system on a
    /// cluster): the plan, the input, each round's searches and books.
    #[arg(long)]
    work_dir: PathBuf,
}

/// Arguments of `book plan deviate`.
#[derive(Args, Debug)]
pub struct PlanDeviateArgs {
    #[command(flatten)]
    deviate: DeviateArgs,
    #[command(flatten)]
    sharding: ShardingArgs,
}

/// Arguments of `book plan deepen`.
#[derive(Args, Debug)]
pub struct PlanDeepenArgs {
    #[command(flatten)]
    deepen: DeepenArgs,
    #[command(flatten)]
    sharding: ShardingArgs,
}

/// Arguments of `book plan build`.
#[derive(Args, Debug)]
pub struct PlanBuildArgs {
    #[command(flatten)]
    build: BuildArgs,
    /// Number of shards (array tasks), 1 to 100000.
    #[arg(long)]
    shards: u32,
    /// The work directory every shard can read and write (a shared file system on a
    /// cluster): the plan, the positions, the shards' files.
    #[arg(long)]
    work_dir: PathBuf,
    /// Memory for collecting the positions, in MiB: beyond it, sorted runs are spilled
    /// to the work directory and merged (the plan is the same for any value).
    #[arg(long, default_value_t = collect::DEFAULT_SORT_MIB, value_parser = clap::value_parser!(u32).range(1..=1 << 20))]
    sort_mib: u32,
}

/// Arguments of `book shard`.
#[derive(Args, Debug)]
pub struct ShardArgs {
    /// The plan's work directory.
    dir: PathBuf,
    /// The shard to run (default: `SLURM_ARRAY_TASK_ID`, else `JOB_COMPLETION_INDEX`).
    #[arg(long)]
    index: Option<u32>,
    /// Leaf searches side by side (default: `SLURM_CPUS_PER_TASK`, else every core of
    /// the machine the shard runs on).
    #[arg(long)]
    threads: Option<usize>,
}

/// Arguments of `book assemble`.
#[derive(Args, Debug)]
pub struct AssembleArgs {
    /// The plan's work directory.
    dir: PathBuf,
    /// Output book (default: the plan's `-o`).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Threads of the back-up (default: every core; the book is the same for any count).
    #[arg(long)]
    threads: Option<usize>,
}

/// Arguments of `book submit`.
#[derive(Args, Debug)]
pub struct SubmitArgs {
    /// The plan's work directory (on a file system every node shares).
    dir: PathBuf,
    /// Submit to Slurm (the one scheduler supported; for Kubernetes see the guide, docs/cluster.md).
    #[arg(long, required = true)]
    slurm: bool,
    /// Slurm partition.
    #[arg(long)]
    partition: Option<String>,
    /// Time limit per job, as sbatch takes it (e.g. 02:00:00).
    #[arg(long)]
    time: Option<String>,
    /// CPUs per shard: its leaf searches side by side.
    #[arg(long, default_value_t = 1)]
    cpus_per_task: u32,
    /// Memory per job, as sbatch takes it (e.g. 2G).
    #[arg(long)]
    mem: Option<String>,
    /// Follow the jobs with a progress bar; exit non-zero naming failed shards and their logs.
    #[arg(long)]
    wait: bool,
    /// Submit every shard not done, even those that look running (a runner holds
    /// their checkpoint's lock, or runs as a job the scheduler still has).
    #[arg(long)]
    force: bool,
    /// On a file system that refuses locks, a shard whose runner named no job and whose
    /// checkpoint was written this many minutes ago or less is presumed running.
    #[arg(long, default_value_t = slurm::FRESH.as_secs_f64() / 60.0)]
    fresh_minutes: f64,
}

pub(super) fn submit(args: SubmitArgs) -> anyhow::Result<ExitCode> {
    if !(args.fresh_minutes.is_finite() && (0.0..=10_080.0).contains(&args.fresh_minutes)) {
        return Err(crate::cli::flags::usage(format!(
            "--fresh-minutes must be from 0 to 10080 (a week), got {}",
            args.fresh_minutes
        )));
    }
    let opts = SlurmOptions {
        binary: std::env::current_exe()?,
        partition: args.partition,
        time: args.time,
        cpus_per_task: args.cpus_per_task,
        mem: args.mem,
        force: args.force,
        fresh: std::time::Duration::from_secs_f64(args.fresh_minutes * 60.0),
    };
    // A build is one submission; a growth in rounds is one a round, each planned by
    // the previous round's assembly, so only `--wait` can follow them all.
    loop {
        let plan = Plan::open(&args.dir).map_err(plan_error)?;
        if let Some(f) = plan.finished().map_err(plan_error)? {
            eprintln!("finished after {} rounds ({:?}): {} is written", f.rounds, f.stop, f.output.display());
            return Ok(ExitCode::SUCCESS);
        }
        let round = plan.round().map_or(String::new(), |r| format!("round {r}: "));
        let submission = slurm::submit(&plan, plan.dir(), &opts).map_err(|e| match e {
            slurm::SlurmError::Setting(e) => super::flags::out_of_range(&e),
            e => e.into(),
        })?;
        if !submission.running.is_empty() {
            let jobs: Vec<String> =
                submission.running.iter().map(|(i, job)| format!("shard {i} as job {job}")).collect();
            eprintln!("{round}still running or queued: {}; the assembly waits for them", jobs.join(", "));
        }
        match &submission.array {
            Some(id) => eprintln!(
                "{round}submitted {} shard(s) as job array {id} (shards {}), assembly as job {} after them; logs in {}",
                submission.shards.len(),
                slurm::array_spec(&submission.shards),
                submission.assemble,
                slurm::log_dir(plan.dir()).display()
            ),
            None if submission.running.is_empty() => {
                eprintln!("{round}every shard is done: submitted the assembly as job {}", submission.assemble)
            }
            None => eprintln!("{round}submitted the assembly as job {} after them", submission.assemble),
        }
        if !args.wait {
            if plan.round().is_some() {
                eprintln!("when this round is assembled, `book submit` again submits the next (or use --wait)");
            }
            outln!("{}", submission.array.as_deref().unwrap_or(&submission.assemble));
            return Ok(ExitCode::SUCCESS);
        }
        let bar = Meter::new("slurm", "positions");
        bar.set_prefix(round.trim_end_matches(": ").to_string());
        let poll = std::time::Duration::from_millis(300);
        let waited = slurm::wait(&plan, plan.dir(), &submission, poll, &|done, total| bar.update(done, total));
        bar.finish();
        waited?;
        if plan.round().is_none() {
            eprintln!("done: wrote {}", plan.output().display());
            return Ok(ExitCode::SUCCESS);
        }
        eprintln!("{round}assembled into {}", plan.output().display());
    }
}

/// Arguments of `book status`.
#[derive(Args, Debug)]
pub struct StatusArgs {
    /// The plan's work directory.
    dir: PathBuf,
    /// JSON output.
    #[arg(long)]
    json: bool,
}

fn plan_error(e: PlanError) -> anyhow::Error {
    match e {
        PlanError::Build(e) => build_error(e),
        PlanError::Setting(e) => super::flags::out_of_range(&e),
        PlanError::Growth(crate::book::grow::GrowthError::NotInBook) => {
            anyhow::anyhow!("--from: the position is not in the book")
        }
        PlanError::Growth(crate::book::grow::GrowthError::NoTarget) => {
            anyhow::anyhow!("{e}: give --level N (or --depth D)")
        }
        e => e.into(),
    }
}

pub(super) fn plan(cmd: PlanCommand) -> anyhow::Result<ExitCode> {
    let args = match cmd {
        PlanCommand::Build(args) => args,
        PlanCommand::Deviate(a) => {
            let d = a.deviate;
            return plan_rounds(&d.grow, d.error, d.budget, d.max_ply, Growth::Deviate, &a.sharding);
        }
        PlanCommand::Deepen(a) => {
            let d = a.deepen;
            return plan_rounds(&d.grow, d.error, d.budget, d.max_ply, Growth::Deepen, &a.sharding);
        }
        PlanCommand::Audit(a) => return plan_checks(&audit_checks(&a.audit)?, &a.sharding),
        PlanCommand::Fix(a) => return plan_checks(&fix_checks(&a.fix)?, &a.sharding),
    };
    let config = BuildConfig::try_from(&args.build)?;
    config.leaf_search().map_err(build_error)?;
    let db = args.build.archives.load(false)?;
    let games: Vec<GameLine> = db.games.iter().map(GameLine::from).collect();
    let budget = usize::try_from(args.sort_mib).unwrap_or(usize::MAX).saturating_mul(1 << 20);
    let plan = Plan::create_build_with_budget(&args.work_dir, &games, &config, args.shards, &args.build.output, budget)
        .map_err(plan_error)?;
    eprintln!(
        "planned {} positions from {} games in {} shards in {} (digest {:016x}); book to {}",
        plan.positions(),
        games.len(),
        plan.shards(),
        args.work_dir.join(PLAN_FILE).display(),
        plan.digest(),
        plan.output().display()
    );
    outln!("{}", args.work_dir.display());
    Ok(ExitCode::SUCCESS)
}

/// Plans an audit's or a fix's searches.
fn plan_checks(checks: &Checks, sharding: &ShardingArgs) -> anyhow::Result<ExitCode> {
    let dir = &sharding.work_dir;
    let plan = Plan::create_checks(dir, checks, sharding.shards).map_err(plan_error)?;
    eprintln!(
        "planned the {} searches of {} positions at {} in {} shards in {} (digest {:016x}); results to {}",
        run_name(checks.kind),
        plan.positions(),
        checks.search.level(),
        plan.shards(),
        dir.join(PLAN_FILE).display(),
        plan.digest(),
        plan.output().display()
    );
    outln!("{}", dir.display());
    Ok(ExitCode::SUCCESS)
}

fn run_name(kind: ChecksKind) -> &'static str {
    match kind {
        ChecksKind::Audit => "audit's",
        ChecksKind::Fix => "fix's",
    }
}

/// What to run once a checks plan is assembled.
fn after_checks(kind: ChecksKind) -> &'static str {
    match kind {
        ChecksKind::Audit => "`book audit` with the same options and `--resume` reports from them",
        ChecksKind::Fix => "`book fix` with the same options and `--resume` runs the rounds that search leaves again",
    }
}

/// Plans a deviation or a deepening in rounds.
fn plan_rounds(
    grow: &GrowArgs,
    error: i32,
    budget: i32,
    max_ply: u32,
    growth: Growth,
    sharding: &ShardingArgs,
) -> anyhow::Result<ExitCode> {
    if grow.resume {
        return Err(crate::cli::flags::usage(
            "--resume is for local runs: a plan resumes by itself (run `book shard` or `book submit` again)",
        ));
    }
    let config = grow.config(error, budget, max_ply, growth)?;
    let book = open_book(grow.book.as_deref())?;
    let from = position_from(grow.from.as_deref())?.board;
    let dir = &sharding.work_dir;
    match Plan::create_rounds(dir, &book, config, from, sharding.shards, &grow.output).map_err(plan_error)? {
        Planned::Round(plan) => eprintln!(
            "planned round {} ({} leaf searches) in {} shards in {} (digest {:016x}); book to {}",
            plan.round().unwrap_or(1),
            plan.positions(),
            plan.shards(),
            plan.dir().display(),
            plan.digest(),
            grow.output.display()
        ),
        Planned::Finished(f) => {
            eprintln!("nothing to search ({:?}): wrote {}", f.stop, f.output.display())
        }
    }
    outln!("{}", dir.display());
    Ok(ExitCode::SUCCESS)
}

/// The shard index: the flag, else the array index a scheduler gives its task.
pub(super) fn shard_index(flag: Option<u32>) -> anyhow::Result<u32> {
    if let Some(i) = flag {
        return Ok(i);
    }
    for var in ["SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX"] {
        if let Ok(text) = std::env::var(var) {
            return text.trim().parse().map_err(|_| anyhow::anyhow!("{var}=`{text}` is not a shard index"));
        }
    }
    anyhow::bail!(
        "no shard index: give --index, or run as a Slurm array task (SLURM_ARRAY_TASK_ID) or a Kubernetes \
         Indexed Job (JOB_COMPLETION_INDEX)"
    )
}

/// The shard a sharded run (self-play, label solves) works on: the flag, else shard 0
/// of a run of one shard, else the scheduler's array index. Generic over the width of
/// the commands' flags (self-play counts its shards in `u64`, label solves in `u32`).
pub(super) fn run_shard_index<T: From<u32> + PartialEq>(shards: T, flag: Option<T>) -> anyhow::Result<T> {
    match flag {
        Some(i) => Ok(i),
        None if shards == T::from(1) => Ok(T::from(0)),
        None => Ok(T::from(shard_index(None)?)),
    }
}

/// The Slurm job this process runs as: `ARRAY_TASK` for an array task, else the job id.
fn slurm_job() -> Option<String> {
    let var = |name| std::env::var(name).ok().map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
    match (var("SLURM_ARRAY_JOB_ID"), var("SLURM_ARRAY_TASK_ID")) {
        (Some(array), Some(task)) => Some(format!("{array}_{task}")),
        _ => var("SLURM_JOB_ID"),
    }
}

pub(super) fn shard(args: ShardArgs) -> anyhow::Result<ExitCode> {
    let plan = Plan::open(&args.dir).map_err(plan_error)?;
    let index = shard_index(args.index)?;
    // The environment is the CLI's to read: a Slurm task runs on the CPUs it was given
    // and records its job, so that `submit` can ask the scheduler about it.
    let threads = match (args.threads, std::env::var("SLURM_CPUS_PER_TASK")) {
        (Some(t), _) => Some(t),
        (None, Ok(v)) => {
            Some(v.trim().parse::<usize>().ok().filter(|t| (1..=crate::search::MAX_THREADS).contains(t)).ok_or_else(
                || {
                    anyhow::anyhow!(
                        "SLURM_CPUS_PER_TASK=`{v}` is not a thread count (1 to {})",
                        crate::search::MAX_THREADS
                    )
                },
            )?)
        }
        (None, Err(_)) => None,
    };
    let job = slurm_job();
    let bar = Meter::new("shard", "positions");
    bar.set_prefix(index.to_string());
    let started = std::time::Instant::now();
    let result = plan.run_shard_as(index, threads, job.as_deref(), &|event| match event {
        ShardEvent::AlreadyDone => {
            bar.suspend(|| eprintln!("shard {index}: already complete ({})", plan.shard_path(index).display()))
        }
        ShardEvent::Resumed { scored } => {
            bar.suspend(|| eprintln!("shard {index}: resuming, {scored} positions already scored"))
        }
        ShardEvent::LockRefused(refused) => bar.suspend(|| {
            eprintln!(
                "shard {index}: warning: {refused}: its checkpoint is not locked; `book submit` asks the scheduler \
                 about this job instead, and presumes a shard without one running while it writes"
            )
        }),
        ShardEvent::Scored { done, total } => bar.update(done, total),
    });
    bar.finish();
    result.map_err(plan_error)?;
    eprintln!(
        "shard {index} of {}: {} in {:.1} s",
        plan.shards(),
        plan.shard_path(index).display(),
        started.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

pub(super) fn assemble(args: AssembleArgs) -> anyhow::Result<ExitCode> {
    let plan = Plan::open(&args.dir).map_err(plan_error)?;
    if let Some(f) = plan.finished().map_err(plan_error)? {
        eprintln!("finished after {} rounds ({:?}): {} is written", f.rounds, f.stop, f.output.display());
        return Ok(ExitCode::SUCCESS);
    }
    // A round writes its book into its directory; `-o` is where the last round's goes.
    let given = args.output.is_some() || plan.round().is_none();
    let out = args.output.unwrap_or_else(|| plan.output().to_path_buf());
    let pool = super::flags::thread_pool(args.threads)?;
    let assembled = pool.install(|| plan.assemble(given.then_some(out.as_path()))).map_err(plan_error)?;
    if let Some(kind) = plan.checks_run() {
        eprintln!(
            "assembled {} shards: the {} searches of {} positions are in {} ({} bytes); {}",
            plan.shards(),
            run_name(kind),
            assembled.positions,
            out.display(),
            assembled.size,
            after_checks(kind)
        );
        return Ok(ExitCode::SUCCESS);
    }
    match (&assembled.after, plan.round()) {
        (None, _) | (_, None) => eprintln!(
            "assembled {} shards: wrote {} ({} positions, {} bytes)",
            plan.shards(),
            out.display(),
            assembled.positions,
            assembled.size
        ),
        (Some(after), Some(round)) => {
            eprintln!(
                "assembled round {round} ({} shards): {} positions in {}",
                plan.shards(),
                assembled.positions,
                plan.output().display()
            );
            report_after(after);
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn report_after(after: &AfterRound) {
    match after {
        AfterRound::Next { number, leaves, searches } => {
            eprintln!("planned round {number}: {leaves} leaves, {searches} leaf searches")
        }
        AfterRound::Finished(f) => {
            eprintln!("finished after {} rounds ({:?}): wrote {}", f.rounds, f.stop, f.output.display())
        }
    }
}

/// A started shard whose lock says nothing here (refused, or taken on another host):
/// running or not, only the scheduler knows.
fn unlocked_partial(state: &ShardState, here: &str) -> bool {
    matches!(state, ShardState::Partial { .. }) && !state.lock_tells(here)
}

pub(super) fn status(args: StatusArgs) -> anyhow::Result<ExitCode> {
    let plan = Plan::open(&args.dir).map_err(plan_error)?;
    let finished = plan.finished().map_err(plan_error)?;
    let shards = plan.status();
    let here = crate::book::cluster::plan::host_name();
    let count = |f: &dyn Fn(&ShardState) -> bool| shards.iter().filter(|s| f(&s.state)).count();
    let done = count(&|s| matches!(s, ShardState::Done));
    let running = count(&|s| matches!(s, ShardState::Running { .. }));
    let stopped = count(&|s| matches!(s, ShardState::Partial { .. }));
    let unlocked = count(&|s| matches!(s, ShardState::Partial { .. }) && unlocked_partial(s, &here));
    let missing = count(&|s| matches!(s, ShardState::Missing));
    let damaged = count(&|s| matches!(s, ShardState::Damaged(_)));
    let scored: u64 = shards.iter().map(|s| s.scored()).sum();
    let total = plan.positions() as u64;
    // The rate since the plan was made: what the shards have done together.
    let since = std::fs::metadata(args.dir.join(PLAN_FILE))
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .map_or(0.0, |d| d.as_secs_f64());
    let rate = if since > 0.0 { scored as f64 / since } else { 0.0 };
    let eta = (rate > 0.0 && scored < total).then(|| (total - scored) as f64 / rate);
    if args.json {
        let rows: Vec<serde_json::Value> = shards
            .iter()
            .map(|s| {
                let (state, scored, idle, message) = match &s.state {
                    ShardState::Done => ("done", s.positions, None, None),
                    ShardState::Running { scored, idle } => ("running", *scored, Some(idle.as_secs_f64()), None),
                    ShardState::Partial { scored, idle, .. } => {
                        let state = if unlocked_partial(&s.state, &here) { "unlocked" } else { "stopped" };
                        (state, *scored, Some(idle.as_secs_f64()), None)
                    }
                    ShardState::Missing => ("missing", 0, None, None),
                    ShardState::Damaged(m) => ("damaged", 0, None, Some(m.clone())),
                };
                let job = match &s.state {
                    ShardState::Partial { runner: Some(r), .. } => r.job.clone(),
                    _ => plan.runner(s.index).and_then(|r| r.job),
                };
                serde_json::json!({ "index": s.index, "positions": s.positions, "state": state,
                    "scored": scored, "idle_seconds": idle, "job": job, "message": message })
            })
            .collect();
        let v = serde_json::json!({
            "round": plan.round(), "finished": finished.is_some(),
            "shards": plan.shards(), "positions": total, "scored": scored,
            "done": done, "running": running, "stopped": stopped, "unlocked": unlocked, "missing": missing, "damaged": damaged,
            "positions_per_second": rate, "eta_seconds": eta, "shard_states": rows,
        });
        outln!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(round) = plan.round() {
        match &finished {
            Some(f) => {
                outln!("{}: finished after {round} rounds ({:?}): {}", args.dir.display(), f.stop, f.output.display())
            }
            None => outln!("{}: round {round} ({})", args.dir.display(), plan.dir().display()),
        }
    }
    outln!(
        "{}: {} shards: {done} done, {running} running, {stopped} stopped{}, {missing} missing, {damaged} damaged",
        plan.dir().display(),
        plan.shards(),
        if unlocked > 0 {
            format!(" ({unlocked} of them unlocked: running or not, only the scheduler knows)")
        } else {
            String::new()
        }
    );
    outln!(
        "{scored} of {total} positions scored ({:.1}%), {rate:.1} positions/s since planned{}",
        100.0 * scored as f64 / total.max(1) as f64,
        eta.map_or(String::new(), |e| format!(", ETA {:.0} s", e))
    );
    for s in &shards {
        match &s.state {
            ShardState::Done => {}
            ShardState::Running { scored, idle } => outln!(
                "  shard {}: running, {scored}/{} positions, last write {:.0} s ago",
                s.index,
                s.positions,
                idle.as_secs_f64()
            ),
            ShardState::Partial { scored, idle, runner, .. } if unlocked_partial(&s.state, &here) => outln!(
                "  shard {}: not locked (the file system refuses locks), {scored}/{} positions, last write {:.0} s ago{}",
                s.index,
                s.positions,
                idle.as_secs_f64(),
                match runner.as_ref().and_then(|r| r.job.as_deref()) {
                    Some(j) => format!(", job {j}: `book submit` asks the scheduler whether it runs"),
                    None => String::new(),
                }
            ),
            ShardState::Partial { scored, idle, .. } => outln!(
                "  shard {}: stopped, {scored}/{} positions, last write {:.0} s ago (run it again to resume)",
                s.index,
                s.positions,
                idle.as_secs_f64()
            ),
            ShardState::Missing => outln!("  shard {}: missing", s.index),
            ShardState::Damaged(m) => outln!("  shard {}: damaged: {m}", s.index),
        }
    }
    Ok(ExitCode::SUCCESS)
}
