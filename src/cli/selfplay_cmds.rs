//! `thorbook selfplay`: self-play games written one a line (transcripts, GGF or JSON
//! lines by the output's extension), resumable and cut into shards for a cluster.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use super::engine_cmds::EngineArgs;
use super::progress::Meter;
use crate::engine::selfplay::{SelfPlayConfig, SelfPlayError, SelfPlayEvent, SelfPlayRun};
use crate::engine::EngineConfig;

/// Arguments of `selfplay`.
#[derive(Args, Debug)]
pub struct SelfPlayArgs {
    /// Games in the whole run (all shards).
    #[arg(long)]
    games: u64,
    /// Opening lines, one a line from the start (`#` comments): game i starts with
    /// line i mod n. Without it, games start at the start position and vary through
    /// --book-randomness.
    #[arg(long)]
    openings: Option<PathBuf>,
    /// The engine: search options (a level, depth or node budget, not a time; the
    /// default level 7), its book (default: the bundled one), --book-randomness and
    /// --seed (default 1). --threads plays that many games at once, one search
    /// thread each.
    #[command(flatten)]
    engine: EngineArgs,
    /// Output: `.ggf` writes GGF, `.jsonl` JSON lines, anything else transcripts with
    /// the result (`f5d6… +4`). `{index}` in the name is replaced by the shard's index
    /// (`-o games.{index}.txt` in a Slurm array).
    #[arg(short, long)]
    output: PathBuf,
    /// Continue the games in OUTPUT (a run with the same settings that was stopped).
    #[arg(long)]
    resume: bool,
    /// Cut the run into this many shards of consecutive games; the shards' outputs,
    /// concatenated in order, are the whole run's.
    #[arg(long, default_value_t = 1)]
    shards: u64,
    /// The shard to play (default: SLURM_ARRAY_TASK_ID, else JOB_COMPLETION_INDEX).
    #[arg(long)]
    index: Option<u64>,
}

pub(super) fn selfplay(args: SelfPlayArgs) -> anyhow::Result<ExitCode> {
    let mut engine_args = args.engine;
    engine_args.seed = Some(engine_args.seed.unwrap_or(1));
    engine_args.no_ponder = true;
    let engine = EngineConfig::try_from(&engine_args)?;
    let openings = match &args.openings {
        Some(p) => {
            let text = std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
            crate::engine::matches::parse_openings(&text).map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?
        }
        None => Vec::new(),
    };
    let index = super::plan_cmds::run_shard_index(args.shards, args.index)?;
    let threads = engine.search.threads.max(1);
    let config = SelfPlayConfig { engine, openings, threads };
    let run = SelfPlayRun::new(config, args.games, crate::work::Shard::new(index, args.shards), &args.output)
        .map_err(selfplay_error)?
        .resume(args.resume);
    let output = run.output().to_path_buf();
    let stop = super::jobs::stop_on_ctrl_c("the games in hand; --resume continues")?;
    let bar = Meter::new("self-play", "games");
    let summary = run.run(&stop, &|event| match event {
        SelfPlayEvent::Resumed { games } => {
            bar.suspend(|| eprintln!("resuming: {games} games already in {}", output.display()))
        }
        SelfPlayEvent::LockRefused(refused) => bar.suspend(|| {
            eprintln!(
                "warning: {}: {refused}: the output is not locked; run no second self-play on it",
                output.display()
            )
        }),
        SelfPlayEvent::Played { done, total } => bar.update(done, total),
    });
    bar.finish();
    let summary = summary.map_err(selfplay_error)?;
    let played = summary.played.end - summary.played.start;
    let secs = summary.elapsed.as_secs_f64();
    eprintln!(
        "played games {}..{} ({played} this run, {} distinct) in {secs:.1} s: {:.0} games/hour on {} \
         ({:.0} per core), black's mean score {:+.2}",
        summary.played.start,
        summary.played.end,
        summary.distinct,
        played as f64 * 3600.0 / secs.max(1e-9),
        super::flags::threads_phrase(threads),
        played as f64 * 3600.0 / secs.max(1e-9) / threads as f64,
        summary.black_mean
    );
    if summary.distinct < played {
        eprintln!(
            "note: {} games repeat an earlier one: vary them with --book-randomness D (book moves within D discs \
             of the best) or --openings FILE",
            played - summary.distinct
        );
    }
    if !summary.complete {
        eprintln!("stopped: `--resume` with the same options continues at game {}", summary.played.end);
        return Ok(ExitCode::from(130));
    }
    Ok(ExitCode::SUCCESS)
}

/// A self-play error, its setting named by its flag.
fn selfplay_error(e: SelfPlayError) -> anyhow::Error {
    match e {
        SelfPlayError::Setting(e) => super::flags::out_of_range(&e),
        e => e.into(),
    }
}
