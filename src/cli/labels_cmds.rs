//! `thorbook labels`: the label store's costly part, exact solves, cut into shards for
//! a cluster (`solve`), the shards' stores merged (`merge`), and what a store holds
//! (`info`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::{Args, Subcommand};

use super::archive_args::load_games;
use super::archive_args::ArchiveArgs;
use super::jobs::stop_on_ctrl_c;
use super::label_store::{open_labels, warn_cut_short};
use super::progress::{bar, progress_to};
use super::EvalChoiceArgs;
use crate::train::labels::shard::{solve_shard, SolveJob};
use crate::train::labels::LabelStore;
use crate::train::trainer::TrainError;

/// `thorbook labels …`.
#[derive(Subcommand, Debug)]
pub enum LabelsCommand {
    /// Solve exactly the positions of games (those `train --solve-at` and `eval-error
    /// --solve-empties` would solve), or one shard of them, into a label store.
    Solve(SolveArgs),
    /// Merge label stores (the shards of a job) into one, checking that they agree.
    Merge(MergeArgs),
    /// What a label store holds, by number of empties.
    Info(InfoArgs),
}

/// `thorbook labels solve`.
#[derive(Args, Debug)]
pub struct SolveArgs {
    /// Games whose positions are solved (default: the bundled archives).
    #[command(flatten)]
    archives: ArchiveArgs,
    /// Solve the positions with at most this many empties (0 to 24; 0: none).
    #[arg(long, default_value_t = 0)]
    solve_at: u32,
    /// And the positions with exactly these numbers of empties (each 1 to 30; e.g.
    /// `23,25,26` for both sides to move around the games' exact scores at 24).
    #[arg(long, value_delimiter = ',')]
    solve_empties: Vec<u32>,
    #[command(flatten)]
    sample: super::archive_args::GameSampleArgs,
    /// Cut the positions into this many shards (by board: whatever the games' order);
    /// the shards' stores merged hold what one run would.
    #[arg(long, default_value_t = 1)]
    shards: u32,
    /// The shard to solve (default: SLURM_ARRAY_TASK_ID, else JOB_COMPLETION_INDEX).
    #[arg(long)]
    index: Option<u32>,
    /// The label store solved into (created if needed; what it holds is not solved
    /// again, so a stopped run resumes). `{index}` in the name is replaced by the
    /// shard's index (`--labels labels.{index}.tbl` in a Slurm array).
    #[arg(long)]
    labels: PathBuf,
    /// Solves run side by side (default: every core).
    #[arg(long)]
    threads: Option<usize>,
    /// The evaluation that orders the solver's moves (speed only: an exact score does
    /// not depend on it).
    #[command(flatten)]
    eval: EvalChoiceArgs,
}

/// `thorbook labels merge`.
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The stores to merge.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// The merged store, written atomically (it may be one of the inputs).
    #[arg(short, long)]
    output: PathBuf,
}

/// `thorbook labels info`.
#[derive(Args, Debug)]
pub struct InfoArgs {
    /// The store.
    store: PathBuf,
    /// JSON output.
    #[arg(long)]
    json: bool,
    /// One line per evaluation that searched (backward labelling uses one a phase).
    #[arg(long)]
    verbose: bool,
}

pub(super) fn run(cmd: LabelsCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        LabelsCommand::Solve(args) => solve(args),
        LabelsCommand::Merge(args) => merge(args),
        LabelsCommand::Info(args) => info(args),
    }
}

fn solve(args: SolveArgs) -> anyhow::Result<ExitCode> {
    args.sample.validate()?;
    let index = super::plan_cmds::run_shard_index(args.shards, args.index)?;
    let job =
        SolveJob { solve_at: args.solve_at, solve_empties: args.solve_empties.clone(), shards: args.shards, index };
    job.validate().map_err(flag_error)?;
    if job.solve_at == 0 && job.solve_empties.is_empty() {
        return Err(super::flags::usage("nothing to solve: give --solve-at N or --solve-empties LIST"));
    }
    let path = PathBuf::from(args.labels.to_string_lossy().replace("{index}", &index.to_string()));
    let order = crate::train::labels::solve_order(&args.eval.source().load()?);
    let games: Vec<_> = args.sample.pick(load_games(&args.archives)?)?;
    let mut store = open_labels(Some(&path))?;
    let refused_at_open = store.lock_refused().is_some();
    let pool = super::flags::thread_pool(args.threads)?;
    let threads = pool.current_num_threads();
    let stop = stop_on_ctrl_c("the solves under way; run again to resume")?;
    let started = Instant::now();
    let b = bar();
    let outcome = pool.install(|| solve_shard(&games, &job, &order, &mut store, &stop, &progress_to(&b)));
    b.finish();
    if !refused_at_open {
        super::label_store::warn_lock_refused(&path, &store);
    }
    let outcome = match outcome {
        Err(TrainError::Stopped) => {
            eprintln!("stopped: the solves made are kept in {}; run again to resume", path.display());
            return Ok(ExitCode::from(130));
        }
        other => other.map_err(flag_error)?,
    };
    let total: usize = outcome.positions.iter().sum();
    let secs = started.elapsed().as_secs_f64();
    let mut parts: Vec<String> = Vec::new();
    let up_to: usize = outcome.positions[..=job.solve_at as usize].iter().sum();
    if job.solve_at > 0 {
        parts.push(format!("{up_to} with <= {} empties", job.solve_at));
    }
    parts.extend(
        outcome
            .positions
            .iter()
            .enumerate()
            .filter(|&(e, &n)| n > 0 && e > job.solve_at as usize)
            .map(|(e, n)| format!("{n} at {e}")),
    );
    eprintln!(
        "shard {index} of {}: {total} positions of {} games ({}), {} solved now in {secs:.1} s on {}, \
         the rest already in {}",
        job.shards,
        games.len(),
        parts.join(", "),
        outcome.solved,
        super::flags::threads_phrase(threads),
        path.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn flag_error(e: TrainError) -> anyhow::Error {
    match e {
        TrainError::Setting(e) => super::flags::out_of_range(&e),
        e => e.into(),
    }
}

fn merge(args: MergeArgs) -> anyhow::Result<ExitCode> {
    let name = |p: &Path| p.display().to_string();
    let mut merged = LabelStore::in_memory();
    let mut before: Vec<String> = Vec::new();
    for input in &args.inputs {
        if !input.exists() {
            anyhow::bail!("{}: no such label store", input.display());
        }
        let store = LabelStore::open(input)?;
        warn_cut_short(input, &store, "; the merge leaves them out");
        let added = merged.merge(&before.join(", "), &store, &name(input))?;
        before.push(name(input));
        eprintln!("{}: {} labels, {added} new", input.display(), store.exact_len() + store.search_len());
    }
    merged.write_to(&args.output)?;
    eprintln!(
        "wrote {}: {} exact and {} search labels",
        args.output.display(),
        merged.exact_len(),
        merged.search_len()
    );
    Ok(ExitCode::SUCCESS)
}

fn info(args: InfoArgs) -> anyhow::Result<ExitCode> {
    if !args.store.exists() {
        anyhow::bail!("{}: no such label store", args.store.display());
    }
    let store = LabelStore::open(&args.store)?;
    let counts = store.counts();
    let empties = |row: &[usize; 61]| -> Vec<(usize, usize)> {
        row.iter().enumerate().filter(|&(_, &n)| n > 0).map(|(e, &n)| (e, n)).collect()
    };
    if args.json {
        let search: Vec<_> = counts
            .search
            .iter()
            .map(|(spec, row)| {
                serde_json::json!({
                    "depth": spec.depth,
                    "selectivity": spec.selectivity.map(|s| s.sigmas()),
                    "eval": format!("{:08x}", spec.eval),
                    "by_empties": empties(row),
                })
            })
            .collect();
        outln!(
            "{}",
            serde_json::json!({
                "file": args.store,
                "exact": store.exact_len(),
                "exact_by_empties": empties(&counts.exact),
                "search": store.search_len(),
                "searches": search,
                "dropped_bytes": store.dropped_bytes(),
            })
        );
        return Ok(ExitCode::SUCCESS);
    }
    outln!("{}: {} exact and {} search labels", args.store.display(), store.exact_len(), store.search_len());
    if store.dropped_bytes() > 0 {
        outln!("{} bytes of a batch cut short at the end (an interrupted run) are not read", store.dropped_bytes());
    }
    let row = |row: &[usize; 61]| empties(row).iter().map(|(e, n)| format!("{e}:{n}")).collect::<Vec<_>>().join(" ");
    outln!("exact, by empties: {}", row(&counts.exact));
    let width = |s: Option<crate::search::Selectivity>| {
        s.map_or("full width".to_string(), |s| format!("at {} sigma", s.sigmas()))
    };
    // Backward labelling searches with a different evaluation for every phase: one
    // line per depth and width, with the evaluations counted (each one with --verbose).
    let mut grouped: std::collections::BTreeMap<(u8, Option<crate::search::Selectivity>), ([usize; 61], usize)> =
        std::collections::BTreeMap::new();
    for (spec, r) in &counts.search {
        let entry = grouped.entry((spec.depth, spec.selectivity)).or_insert(([0; 61], 0));
        for (sum, n) in entry.0.iter_mut().zip(r) {
            *sum += n;
        }
        entry.1 += 1;
        if args.verbose {
            outln!(
                "search depth {} {}, evaluation {:08x}: {} labels, by empties: {}",
                spec.depth,
                width(spec.selectivity),
                spec.eval,
                r.iter().sum::<usize>(),
                row(r)
            );
        }
    }
    if !args.verbose {
        for ((depth, selectivity), (r, evals)) in &grouped {
            outln!(
                "search depth {depth} {} by {evals} evaluation(s): {} labels, by empties: {}",
                width(*selectivity),
                r.iter().sum::<usize>(),
                row(r)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
