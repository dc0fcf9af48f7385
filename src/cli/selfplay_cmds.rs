//! `thorbook selfplay`: self-play games written one a line (transcripts, GGF or JSON
//! lines by the output's extension), resumable and cut into shards for a cluster.

use std::io::{BufRead, Seek, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use super::engine_cmds::EngineArgs;
use crate::engine::selfplay::{play_games, SelfPlayConfig, SelfPlayGame};
use crate::engine::EngineConfig;
use crate::square::{format_moves, Move};

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

#[derive(Clone, Copy, PartialEq, Eq)]
enum OutputFormat {
    Transcript,
    Ggf,
    Jsonl,
}

impl OutputFormat {
    fn of(path: &Path) -> OutputFormat {
        match path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase()).as_deref() {
            Some("ggf") => OutputFormat::Ggf,
            Some("jsonl") => OutputFormat::Jsonl,
            _ => OutputFormat::Transcript,
        }
    }

    fn line(self, g: &SelfPlayGame, engine: &str) -> String {
        let placed: Vec<Move> = g.moves.iter().copied().filter(|m| *m != Move::Pass).collect();
        let black_discs = (64 + g.black_score) / 2;
        match self {
            OutputFormat::Transcript => format!("{} {:+}", format_moves(&placed), g.black_score),
            OutputFormat::Jsonl => serde_json::json!({
                "game": g.index,
                "black": engine,
                "white": engine,
                "black_score": black_discs,
                "moves": format_moves(&placed),
            })
            .to_string(),
            OutputFormat::Ggf => {
                let escape = crate::thor::ggf::escape;
                let mut out = format!(
                    "(;GM[Othello]PC[thorbook selfplay]GN[{}]PB[{}]PW[{}]RE[{:+}]",
                    g.index,
                    escape(engine),
                    escape(engine),
                    g.black_score
                );
                crate::thor::export::ggf_moves(&mut out, &g.moves);
                out
            }
        }
    }
}

/// The complete lines of a file already written, the file cut after the last one.
fn complete_lines(path: &Path) -> anyhow::Result<u64> {
    let file = std::fs::OpenOptions::new().read(true).write(true).open(path)?;
    let mut reader = std::io::BufReader::new(&file);
    let (mut lines, mut kept) = (0u64, 0u64);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = reader.read_until(b'\n', &mut buf)?;
        if n == 0 || buf.last() != Some(&b'\n') {
            break;
        }
        lines += 1;
        kept += n as u64;
    }
    // A line cut by an interruption is played again.
    file.set_len(kept)?;
    Ok(lines)
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
    anyhow::ensure!(args.games > 0, "--games must be at least 1");
    anyhow::ensure!((1..=args.games).contains(&args.shards), "--shards must be in 1..={} (the games)", args.games);
    let index = match (args.shards, args.index) {
        (1, i) => i.unwrap_or(0),
        (_, Some(i)) => i,
        (_, None) => u64::from(super::plan_cmds::shard_index(None)?),
    };
    anyhow::ensure!(index < args.shards, "shard {index} of {}: the index must be below --shards", args.shards);
    // In u128: games × shards cannot overflow.
    let bound = |k: u64| {
        u64::try_from(u128::from(args.games) * u128::from(k) / u128::from(args.shards)).expect("at most the games")
    };
    let range = bound(index)..bound(index + 1);
    let output = PathBuf::from(args.output.to_string_lossy().replace("{index}", &index.to_string()));
    let threads = engine.search.threads.max(1);
    let config = SelfPlayConfig { engine, openings, threads };

    // What the output's games depend on: a resumed run must be the same run.
    let identity = format!("{:?} {:?} {:?}", config.engine, config.openings, range);
    let digest = format!("{:016x}", xxhash_rust::xxh3::xxh3_64(identity.as_bytes()));
    let sidecar = PathBuf::from(format!("{}.selfplay", output.display()));
    let done = if args.resume && output.exists() {
        let recorded = std::fs::read_to_string(&sidecar)
            .with_context(|| format!("{} has no record of its settings: it cannot be resumed", output.display()))?;
        anyhow::ensure!(
            recorded.trim() == digest,
            "{} was written with other settings, games or shard: it cannot be resumed with these",
            output.display()
        );
        complete_lines(&output).with_context(|| format!("reading {}", output.display()))?
    } else {
        anyhow::ensure!(
            !output.exists() || std::fs::metadata(&output)?.len() == 0,
            "{} exists: --resume continues it; to start again, remove it",
            output.display()
        );
        crate::fileio::atomic_write(&sidecar, format!("{digest}\n").as_bytes())
            .with_context(|| format!("writing {}", sidecar.display()))?;
        0
    };
    let todo = (range.start + done.min(range.end - range.start))..range.end;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&output)
        .with_context(|| format!("opening {}", output.display()))?;
    file.seek(std::io::SeekFrom::End(0))?;
    let mut out = std::io::BufWriter::new(file);
    if done > 0 {
        eprintln!("resuming: {done} games already in {}", output.display());
    }
    let format = OutputFormat::of(&output);
    let name = match (config.engine.search.level, config.engine.search.depth) {
        (_, Some(d)) => format!("thorbook depth {d}"),
        (Some(l), None) => format!("thorbook level {}", l.number()),
        (None, None) => "thorbook".to_string(),
    };
    let stop = super::train_cmds::stop_on_ctrl_c("the games in hand; --resume continues")?;
    let bar = ProgressBar::new(todo.end - todo.start).with_style(
        ProgressStyle::with_template("self-play {bar:40} {pos}/{len} games, {per_sec}, ETA {eta}")
            .expect("valid template"),
    );
    let start = Instant::now();
    let mut distinct = std::collections::HashSet::new();
    let mut score_sum = 0i64;
    let played = play_games(&config, todo.clone(), &stop, &mut |g| {
        writeln!(out, "{}", format.line(&g, &name))?;
        distinct.insert(xxhash_rust::xxh3::xxh3_64(format_moves(&g.moves).as_bytes()));
        score_sum += i64::from(g.black_score);
        bar.inc(1);
        if g.index % 64 == 63 {
            out.flush()?;
            out.get_ref().sync_data()?;
        }
        Ok(())
    });
    bar.finish_and_clear();
    out.flush()?;
    out.get_ref().sync_data()?;
    let played = played.with_context(|| format!("self-play into {}", output.display()))?;
    let secs = start.elapsed().as_secs_f64();
    let complete = todo.start + played == todo.end;
    eprintln!(
        "played games {}..{} ({played} this run, {} distinct) in {secs:.1} s: {:.0} games/hour on {threads} threads \
         ({:.0} per core), black's mean score {:+.2}",
        todo.start,
        todo.start + played,
        distinct.len(),
        played as f64 * 3600.0 / secs.max(1e-9),
        played as f64 * 3600.0 / secs.max(1e-9) / threads as f64,
        score_sum as f64 / played.max(1) as f64
    );
    if (distinct.len() as u64) < played {
        eprintln!(
            "note: {} games repeat an earlier one: vary them with --book-randomness D (book moves within D discs \
             of the best) or --openings FILE",
            played - distinct.len() as u64
        );
    }
    if !complete {
        eprintln!("stopped: `--resume` with the same options continues at game {}", todo.start + played);
        return Ok(ExitCode::from(130));
    }
    Ok(ExitCode::SUCCESS)
}
