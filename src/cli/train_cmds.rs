//! `thorbook train`, `thorbook eval` and `thorbook eval-error`: arguments into
//! training and measurement configs, progress bars, and the reports.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use super::thor_cmds::ArchiveArgs;
use super::EvalChoiceArgs;
use super::PositionArgs;
use crate::eval::{AnyEval, Evaluator, PatternEval};
use crate::fileio::atomic_write;
use crate::search::Selectivity;
use crate::train::dataset::games_digest;
use crate::train::measure::{error_by_phase, MeasureConfig, PhaseError};
use crate::train::probcut::{fit_probcut, ProbCutConfig};
use crate::train::{Dataset, Labeling, Progress, TrainConfig, TrainGame};

/// `thorbook train`.
#[derive(Args, Debug)]
pub struct TrainArgs {
    /// Training archives (default: the bundled ones).
    #[command(flatten)]
    archives: ArchiveArgs,
    /// Where to write the weights (gzip-compressed when the name ends in `.gz`).
    #[arg(short, long)]
    output: PathBuf,
    /// Validation archives (e.g. the last years), kept out of training. Without it,
    /// `--validation-share` of the games is held out.
    #[arg(long, num_args = 1..)]
    validate: Vec<PathBuf>,
    /// Share of the training games held out for validation when `--validate` is not given.
    #[arg(long, default_value_t = 0.05)]
    validation_share: f64,
    /// Solve positions with at most this many empties exactly (0: theoretical scores only).
    #[arg(long, default_value_t = 20)]
    solve_at: u32,
    /// Also label every child of a solved position (all moves solved exactly).
    #[arg(long)]
    solve_children: bool,
    /// Keep the labeled positions in this file; a later run with the same games and
    /// labeling settings reuses them instead of solving again.
    #[arg(long)]
    cache: Option<PathBuf>,
    /// Each phase also learns from this many neighbouring phases on each side.
    #[arg(long, default_value_t = TrainConfig::default().window)]
    window: usize,
    /// Ridge strength toward the neighbouring phase.
    #[arg(long, default_value_t = TrainConfig::default().lambda)]
    lambda: f64,
    /// Conjugate-gradient iterations per phase.
    #[arg(long, default_value_t = TrainConfig::default().iterations)]
    iterations: usize,
    /// Positions per phase searched to fit Multi-ProbCut (0: no ProbCut table).
    #[arg(long, default_value_t = ProbCutConfig::default().positions_per_phase)]
    probcut_positions: usize,
    /// Deepest search measured for ProbCut (deeper depths are extrapolated).
    #[arg(long, default_value_t = ProbCutConfig::default().max_measured_depth)]
    probcut_depth: u32,
    /// Threads.
    #[arg(long, default_value_t = std::thread::available_parallelism().map_or(1, |n| n.get()))]
    threads: usize,
    /// Write the per-phase report as JSON to this file.
    #[arg(long)]
    report: Option<PathBuf>,
}

/// A progress bar labelled by the library's stage names.
fn bar() -> ProgressBar {
    ProgressBar::new(0).with_style(
        ProgressStyle::with_template("{prefix:>16} {bar:40} {pos}/{len} {per_sec} ETA {eta}").expect("valid template"),
    )
}

fn progress_to(bar: &ProgressBar) -> impl Fn(Progress) + Sync + '_ {
    move |p: Progress| {
        bar.set_prefix(p.stage.label());
        bar.set_length(p.total);
        bar.set_position(p.done);
    }
}

fn load_games(archives: &ArchiveArgs) -> anyhow::Result<Vec<TrainGame>> {
    let db = archives.load(false)?;
    Ok(db.games.iter().map(TrainGame::from_thor).collect())
}

/// Game `i` is held out when a hash of its index falls under `share`.
fn held_out(i: usize, share: f64) -> bool {
    let h = (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    ((h >> 11) as f64 / (1u64 << 53) as f64) < share
}

/// Runs `thorbook train`.
pub fn train(args: TrainArgs) -> anyhow::Result<ExitCode> {
    crate::search::check_threads(args.threads).map_err(|e| anyhow::anyhow!("--{e}"))?;
    if !(0.0..1.0).contains(&args.validation_share) {
        bail!("--validation-share must be in [0, 1), got {}", args.validation_share);
    }
    if args.solve_at > 24 {
        bail!("--solve-at must be at most 24 (the theoretical scores are exact there), got {}", args.solve_at);
    }
    if !(args.lambda.is_finite() && args.lambda > 0.0) {
        bail!("--lambda must be a positive number, got {}", args.lambda);
    }
    if args.iterations == 0 || args.iterations > 10_000 {
        bail!("--iterations must be 1..=10000, got {}", args.iterations);
    }
    if args.probcut_depth < 3 || args.probcut_depth > 14 {
        bail!("--probcut-depth must be 3..=14, got {}", args.probcut_depth);
    }
    let pool = rayon::ThreadPoolBuilder::new().num_threads(args.threads).build()?;
    let start = Instant::now();
    let all = load_games(&args.archives)?;
    let (train_games, validation_games) = if args.validate.is_empty() {
        let (v, t): (Vec<_>, Vec<_>) =
            all.into_iter().enumerate().partition(|(i, _)| held_out(*i, args.validation_share));
        (t.into_iter().map(|(_, g)| g).collect::<Vec<_>>(), v.into_iter().map(|(_, g)| g).collect())
    } else {
        let validate = ArchiveArgs { paths: args.validate.clone(), strict: args.archives.strict };
        (all, load_games(&validate)?)
    };
    if train_games.is_empty() {
        bail!("no training games");
    }
    eprintln!("{} training games, {} validation games", train_games.len(), validation_games.len());

    let labeling = Labeling { solve_at: args.solve_at, children: args.solve_children };
    let digest = games_digest(&train_games, &labeling) ^ games_digest(&validation_games, &labeling).rotate_left(17);
    let cached = match &args.cache {
        Some(path) if path.exists() => {
            let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
            let sets =
                Dataset::from_cache_bytes(&path.display().to_string(), &bytes, digest).map_err(anyhow::Error::msg)?;
            match sets {
                Some(mut sets) if sets.len() == 2 => {
                    eprintln!("reusing the labeled positions in {}", path.display());
                    let v = sets.pop().expect("two sets");
                    Some((sets.pop().expect("two sets"), v))
                }
                _ => {
                    eprintln!("{} was made from other games or settings: labeling again", path.display());
                    None
                }
            }
        }
        _ => None,
    };
    let (train_set, validation_set) = match cached {
        Some(sets) => sets,
        None => {
            let b = bar();
            let order = PatternEval::bundled();
            let sets = pool.install(|| {
                let t = Dataset::collect(&train_games, &labeling, Some(&order), &progress_to(&b));
                let v = Dataset::collect(&validation_games, &labeling, Some(&order), &progress_to(&b));
                (t, v)
            });
            b.finish_and_clear();
            if let Some(path) = &args.cache {
                atomic_write(path, &Dataset::cache_bytes(digest, &[&sets.0, &sets.1]))
                    .with_context(|| format!("writing {}", path.display()))?;
            }
            sets
        }
    };
    let collect_secs = start.elapsed().as_secs_f64();
    eprintln!(
        "labeled {} training and {} validation positions in {collect_secs:.0} s (exact solves at <= {} empties)",
        train_set.len(),
        validation_set.len(),
        args.solve_at
    );

    let config = TrainConfig { lambda: args.lambda, iterations: args.iterations, window: args.window };
    let fit_start = Instant::now();
    let b = bar();
    let (mut weights, report) =
        pool.install(|| crate::train::train(&train_set, &validation_set, &config, &progress_to(&b)));
    b.finish_and_clear();
    let fit_secs = fit_start.elapsed().as_secs_f64();

    let mut probcut_secs = 0.0;
    if args.probcut_positions > 0 {
        let pc_start = Instant::now();
        let pc_config =
            ProbCutConfig { positions_per_phase: args.probcut_positions, max_measured_depth: args.probcut_depth };
        let source = if validation_set.is_empty() { &train_set } else { &validation_set };
        let b = bar();
        let eval = PatternEval::new(&weights);
        let table = pool.install(|| fit_probcut(&eval, source, &pc_config, &progress_to(&b)));
        b.finish_and_clear();
        eprintln!(
            "probcut: sigma = {:.2} + {:.3} * depth + {:.3} * empties (fitted on {} positions per phase, depths 3..={})",
            table.plane[0], table.plane[1], table.plane[2], args.probcut_positions, args.probcut_depth
        );
        weights.probcut = table.sigma;
        weights.probcut_depths = table.depths;
        probcut_secs = pc_start.elapsed().as_secs_f64();
    }
    weights.note = format!(
        "thorbook {} train: {} games, {} positions, solve_at {}, lambda {}, {} iterations, probcut {}x{}",
        env!("CARGO_PKG_VERSION"),
        train_games.len(),
        train_set.len(),
        args.solve_at,
        args.lambda,
        args.iterations,
        args.probcut_positions,
        args.probcut_depth
    );
    let gz = args.output.extension().is_some_and(|e| e == "gz");
    let bytes = if gz { weights.to_gzip_bytes() } else { weights.to_bytes() };
    atomic_write(&args.output, &bytes).with_context(|| format!("writing {}", args.output.display()))?;

    println!("phase  empties   train   MAE | validation   MAE | exact   MAE");
    for p in &report.phases {
        println!(
            "{:>5}  {:>2}-{:<2}  {:>8} {:>5.2} | {:>8} {:>7.2} | {:>6} {:>5.2}",
            p.phase,
            p.empties.0,
            p.empties.1,
            p.train_positions,
            p.train_mae,
            p.validation_positions,
            p.validation_mae,
            p.validation_exact,
            p.validation_exact_mae
        );
    }
    eprintln!(
        "wrote {} ({} bytes, digest {:08x}); collect {collect_secs:.0} s, fit {fit_secs:.0} s, probcut {probcut_secs:.0} s, total {:.0} s on {} threads",
        args.output.display(),
        bytes.len(),
        weights.digest(),
        start.elapsed().as_secs_f64(),
        args.threads
    );
    if let Some(path) = &args.report {
        atomic_write(path, serde_json::to_string_pretty(&report)?.as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `thorbook eval`.
#[derive(Args, Debug)]
pub struct EvalCommandArgs {
    #[command(flatten)]
    position: PositionArgs,
    #[command(flatten)]
    eval: EvalChoiceArgs,
    /// Each pattern instance's contribution.
    #[arg(long)]
    verbose: bool,
    /// JSON output.
    #[arg(long)]
    json: bool,
}

/// Runs `thorbook eval`.
pub fn eval(args: EvalCommandArgs) -> anyhow::Result<ExitCode> {
    let pos = args.position.position()?;
    let eval = match args.eval.source().load()? {
        AnyEval::Pattern(e) => e,
        AnyEval::Classic(_) => {
            bail!("`thorbook eval` shows the pattern evaluation; measure the classic one with `eval-error --classic-eval`")
        }
    };
    let board = pos.board;
    let discs = eval.discs(&board);
    let (bias, parts) = eval.explain(&board);
    if args.json {
        let mut v = serde_json::json!({
            "board": pos.to_board_text(),
            "side": pos.side.symbol().to_string(),
            "empties": board.empty_count(),
            "score": eval.evaluate(&board),
            "discs": (discs * 1000.0).round() / 1000.0,
            "digest": format!("{:08x}", eval.digest()),
        });
        if args.verbose {
            v["bias"] = serde_json::json!(bias);
            v["patterns"] = serde_json::to_value(&parts)?;
        }
        println!("{v}");
        return Ok(ExitCode::SUCCESS);
    }
    println!("{}", pos.diagram());
    println!(
        "evaluation: {:+} ({discs:+.2} discs for {} to move, {} empties; weights {:08x})",
        eval.evaluate(&board),
        pos.side,
        board.empty_count(),
        eval.digest()
    );
    if args.verbose {
        println!("bias {bias:+.2}");
        for c in &parts {
            let squares: Vec<String> = c.squares.iter().map(|s| s.to_string()).collect();
            println!("{:<10} {:+7.2}  {}", c.pattern, c.discs, squares.join(" "));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `thorbook eval-error`.
#[derive(Args, Debug)]
pub struct EvalErrorArgs {
    /// Games to measure on (default: the bundled archives).
    #[command(flatten)]
    archives: ArchiveArgs,
    #[command(flatten)]
    eval: EvalChoiceArgs,
    /// Search depth (0: the static evaluation).
    #[arg(long, default_value_t = 0)]
    depth: u32,
    /// Multi-ProbCut selectivity of the searches (standard deviations; default: full width).
    #[arg(long)]
    selectivity: Option<f32>,
    /// Solve positions with at most this many empties for their targets (as `train`).
    #[arg(long, default_value_t = 16)]
    solve_at: u32,
    /// Only positions with exact targets (24 empties and the solved ones).
    #[arg(long)]
    exact_only: bool,
    /// Every Nth game only (a quicker estimate).
    #[arg(long, default_value_t = 1)]
    every: usize,
    /// Threads.
    #[arg(long, default_value_t = std::thread::available_parallelism().map_or(1, |n| n.get()))]
    threads: usize,
    /// JSON output.
    #[arg(long)]
    json: bool,
}

/// Runs `thorbook eval-error`.
pub fn eval_error(args: EvalErrorArgs) -> anyhow::Result<ExitCode> {
    crate::search::check_threads(args.threads).map_err(|e| anyhow::anyhow!("--{e}"))?;
    if args.every == 0 || args.depth > 30 || args.solve_at > 24 {
        bail!("--every must be >= 1, --depth <= 30, --solve-at <= 24");
    }
    let selectivity = match args.selectivity {
        Some(t) => {
            Some(Selectivity::from_sigmas(t).with_context(|| format!("--selectivity must be 0.1..=10, got {t}"))?)
        }
        None => None,
    };
    let pool = rayon::ThreadPoolBuilder::new().num_threads(args.threads).build()?;
    let games: Vec<TrainGame> = load_games(&args.archives)?.into_iter().step_by(args.every).collect();
    let config = MeasureConfig { depth: args.depth, selectivity, exact_only: args.exact_only };
    let start = Instant::now();
    let b = bar();
    let labeling = Labeling { solve_at: args.solve_at, children: false };
    let order = PatternEval::bundled();
    let data = pool.install(|| Dataset::collect(&games, &labeling, Some(&order), &progress_to(&b)));
    b.finish_and_clear();
    let b = bar();
    let eval = args.eval.source().load()?;
    let rows = pool.install(|| error_by_phase(&eval, &data, &config, &progress_to(&b)));
    b.finish_and_clear();
    if args.json {
        println!("{}", serde_json::to_string(&rows)?);
    } else {
        print_errors(eval.name(), args.depth, &rows);
    }
    eprintln!("{} games, {:.0} s", games.len(), start.elapsed().as_secs_f64());
    Ok(ExitCode::SUCCESS)
}

fn print_errors(name: &str, depth: u32, rows: &[PhaseError]) {
    println!("{name} evaluation, depth {depth}");
    println!("phase  empties  positions    MAE  sign");
    for r in rows.iter().filter(|r| r.positions > 0) {
        println!(
            "{:>5}  {:>2}-{:<2}    {:>8}  {:>5.2}  {:>4.1}%",
            r.phase,
            r.empties.0,
            r.empties.1,
            r.positions,
            r.mae,
            100.0 * r.sign_agreement
        );
    }
    let n: usize = rows.iter().map(|r| r.positions).sum();
    let mae = rows.iter().map(|r| r.mae * r.positions as f64).sum::<f64>() / n.max(1) as f64;
    println!("all          {n:>8}  {mae:>5.2}");
}
