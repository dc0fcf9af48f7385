//! `thorbook eval`, `thorbook eval-error` and `thorbook calibrate`: the static
//! evaluation of a position, the evaluation's error against exact scores, and the
//! search-leaf correction measured and stored.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context};
use clap::Args;

use super::archive_args::ArchiveArgs;
use super::archive_args::{load_games, GameSampleArgs};
use super::jobs::stop_on_ctrl_c;
use super::label_store::open_labels;
use super::progress::{bar, progress_to};
use super::search_args::{flag_error, SearchArgs};
use super::EvalChoiceArgs;
use super::PositionArgs;
use crate::eval::{AnyEval, Evaluator, Weights};
use crate::fileio::AtomicFile;
use crate::search::{Settings, Width};
use crate::train::calibrate::{self, CalibrateConfig};
use crate::train::measure::{measure_error, positions_csv, ErrorConfig, ErrorRun};
use crate::train::positions::TrainGame;
use crate::train::trainer::TrainError;

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
        outln!("{v}");
        return Ok(ExitCode::SUCCESS);
    }
    outln!("{}", pos.diagram());
    outln!(
        "evaluation: {:+} ({discs:+.2} discs for {} to move, {} empties; weights {:08x})",
        eval.evaluate(&board),
        pos.side,
        board.empty_count(),
        eval.digest()
    );
    if args.verbose {
        outln!("bias {bias:+.2}");
        for c in &parts {
            let squares: Vec<String> = c.squares.iter().map(|s| s.to_string()).collect();
            outln!("{:<12} {:+7.2}  {}", c.feature, c.discs, squares.join(" "));
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
    /// The search that scores each position (default: the static evaluation; a depth,
    /// a level, a time or a node budget searches, full width unless --selectivity or a
    /// level cuts, without exact solves unless --exact-at or a level says so; a 2 MiB
    /// table per search, one search per core). The report names the search it ran.
    #[command(flatten)]
    search: SearchArgs,
    /// Solve positions with at most this many empties for their targets (as `train`).
    #[arg(long, default_value_t = 16)]
    solve_at: u32,
    /// Also solve the positions with exactly these numbers of empties (e.g. `23`: the
    /// parity neighbour of the exact theoretical scores at 24).
    #[arg(long, value_delimiter = ',')]
    solve_empties: Vec<u32>,
    /// The label store: solves are kept in this file and reused by later runs.
    #[arg(long, visible_alias = "cache")]
    labels: Option<PathBuf>,
    /// Only positions with exact targets (24 empties and the solved ones).
    #[arg(long)]
    exact_only: bool,
    #[command(flatten)]
    sample: GameSampleArgs,
    /// Measure searches of each of these depths in turn (e.g. `4,5,6,7,8`: a lean that
    /// swings with the parity of the depth shows), each full width and without solving
    /// unless the search flags say otherwise, instead of one measurement at --depth; the
    /// summary groups per depth.
    #[arg(long, value_delimiter = ',', conflicts_with = "depth")]
    depths: Vec<u32>,
    /// Also write every position measured, its target and score (per depth) to this CSV
    /// file: `depth,width,empties,key,player,opponent,target,label,score,error`, the
    /// board as its canonical image (see docs/internals.md).
    #[arg(long, value_name = "FILE")]
    positions_out: Option<PathBuf>,
    /// JSON output.
    #[arg(long)]
    json: bool,
}

/// Runs `thorbook eval-error`.
pub fn eval_error(args: EvalErrorArgs) -> anyhow::Result<ExitCode> {
    let defaults = Settings { hash_mib: 2, threads: crate::search::default_threads(), ..Settings::default() };
    let settings = args.search.settings(&defaults)?;
    args.sample.validate()?;
    let config = ErrorConfig {
        settings,
        depths: args.depths.clone(),
        solve_at: args.solve_at,
        solve_empties: args.solve_empties.clone(),
        exact_only: args.exact_only,
        keep_positions: args.positions_out.is_some(),
    };
    let eval = config.settings.eval.load()?;
    // Opened before the measurement, so that an unwritable path fails at once, not
    // after hours of solves; put in place only when the measurement ends.
    let mut positions_out = match &args.positions_out {
        Some(path) => Some(AtomicFile::create(path).with_context(|| path.display().to_string())?),
        None => None,
    };
    let pool = rayon::ThreadPoolBuilder::new().num_threads(config.settings.threads).build()?;
    let games: Vec<TrainGame> = args.sample.pick(load_games(&args.archives)?)?;
    let start = Instant::now();
    let mut store = open_labels(args.labels.as_ref())?;
    let stop = stop_on_ctrl_c("the positions in hand")?;
    let b = bar();
    let report = pool.install(|| measure_error(&eval, &games, &config, &mut store, &stop, &progress_to(&b)));
    b.finish();
    let report = match report {
        Err(TrainError::Stopped) => {
            eprintln!("stopped: the solves made so far are kept in the label store (if any)");
            return Ok(ExitCode::from(130));
        }
        other => other.map_err(super::flags::train_error)?,
    };
    if let (Some(mut file), Some(path)) = (positions_out.take(), &args.positions_out) {
        let written = file.write_all(positions_csv(&report.runs).as_bytes()).and_then(|()| file.commit());
        written.with_context(|| path.display().to_string())?;
    }
    let digest = format!("{:08x}", eval.digest());
    if !args.depths.is_empty() {
        if args.json {
            let depths: Vec<_> = report
                .runs
                .iter()
                .map(|r| {
                    serde_json::json!({
                        "depth": r.depth,
                        "search": r.search,
                        "summary": r.groups,
                        "sides": r.sides,
                        "calibration": r.calibration,
                    })
                })
                .collect();
            outln!("{}", serde_json::json!({ "evaluation": eval.name(), "digest": digest, "depths": depths }));
        } else {
            for run in &report.runs {
                // The width first: the same depth reads differently full width and cut.
                outln!("depth {:>2}  {}", run.depth, run.search);
                for g in &run.groups {
                    outln!(
                        "depth {:>2}  {:<44} {:>8}  {:>+6.2} ({:.2})  {:>5.2}",
                        run.depth,
                        g.group,
                        g.stats.positions,
                        g.stats.signed,
                        g.stats.signed_se,
                        g.stats.mae
                    );
                }
                for line in sides_line(run).into_iter().chain(calibration_line(run)) {
                    outln!("depth {:>2}  {line}", run.depth);
                }
            }
        }
    } else if let [run] = report.runs.as_slice() {
        if args.json {
            let json = serde_json::json!({
                "evaluation": eval.name(),
                "digest": digest,
                "depth": run.depth,
                "search": run.search,
                "empties": run.empties,
                "summary": run.groups,
                "sides": run.sides,
                "calibration": run.calibration,
            });
            outln!("{json}");
        } else {
            print_errors(&eval, run)?;
        }
    }
    eprintln!("{} games, {} distinct positions, {:.0} s", games.len(), report.positions, start.elapsed().as_secs_f64());
    Ok(ExitCode::SUCCESS)
}

fn print_errors(eval: &AnyEval, run: &ErrorRun) -> anyhow::Result<()> {
    outln!("{} evaluation {:08x}, {}", eval.name(), eval.digest(), run.search);
    outln!("empties  positions  signed  (s.e.)    MAE  sign");
    for r in run.empties.iter().filter(|r| r.stats.positions > 0) {
        let s = &r.stats;
        outln!(
            "{:>7}  {:>9}  {:>+6.2}  ({:.2})  {:>5.2}  {:>4.1}%",
            r.empties,
            s.positions,
            s.signed,
            s.signed_se,
            s.mae,
            100.0 * s.sign_agreement
        );
    }
    let all = &run.all;
    outln!("all      {:>9}  {:>+6.2}  ({:.2})  {:>5.2}", all.positions, all.signed, all.signed_se, all.mae);
    for g in &run.groups {
        outln!(
            "{:<44} {:>8}  {:>+6.2} ({:.2})  {:>5.2}",
            g.group,
            g.stats.positions,
            g.stats.signed,
            g.stats.signed_se,
            g.stats.mae
        );
    }
    for line in sides_line(run).into_iter().chain(calibration_line(run)) {
        outln!("{line}");
    }
    Ok(())
}

/// How the exact score follows the measured one, as one line: the slope, then exact −
/// measured per bin of measured scores.
fn calibration_line(run: &ErrorRun) -> Option<String> {
    let c = run.calibration.as_ref()?;
    let slope = c.slope.map_or("-".to_owned(), |s| format!("{s:.2}"));
    let bins: Vec<String> = c
        .bins
        .iter()
        .map(|b| {
            let range = match (b.from, b.to) {
                (None, Some(t)) => format!("< {t}"),
                (Some(f), None) => format!(">= {f}"),
                (Some(f), Some(t)) => format!("{f}..{t}"),
                (None, None) => "all".to_owned(),
            };
            format!("{range} {:+.2} ({:.2})", b.exact_minus_score, b.se)
        })
        .collect();
    Some(format!(
        "calibration over {} exact positions: exact on measured slope {slope}; exact - measured by measured score: {}",
        c.positions,
        bins.join(", ")
    ))
}

/// The lean within games, split between the side to move and black, as one line.
fn sides_line(run: &ErrorRun) -> Option<String> {
    let s = run.sides?;
    Some(format!(
        "within {} games (exact positions, both colours to move): side to move {:+.2} ({:.2}), toward black {:+.2} ({:.2})",
        s.games, s.to_move, s.to_move_se, s.toward_black, s.toward_black_se
    ))
}

/// `thorbook calibrate`.
#[derive(Args, Debug)]
pub struct CalibrateArgs {
    /// Games whose positions are searched (default: the bundled archives; use games the
    /// weights were trained on, and keep another year out to measure).
    #[command(flatten)]
    archives: ArchiveArgs,
    /// The weights to calibrate (default: the bundled ones); their own correction, if
    /// any, is the starting point.
    #[arg(long = "eval", value_name = "FILE")]
    eval_file: Option<PathBuf>,
    /// Where to write the calibrated weights (gzip-compressed when the name ends in `.gz`).
    #[arg(short, long)]
    output: PathBuf,
    /// Exact positions at each of 24, 23, 22 and 21 empties (those below 24 are solved).
    #[arg(long, default_value_t = 800)]
    exact_positions: usize,
    /// Positions per number of empties (12–59) for the swing between depths.
    #[arg(long, default_value_t = 60)]
    swing_positions: usize,
    /// Measure-and-correct rounds.
    #[arg(long, default_value_t = CalibrateConfig::default().rounds)]
    rounds: u32,
    /// Deepest search from the exact positions.
    #[arg(long, default_value_t = CalibrateConfig::default().max_exact_depth)]
    exact_depth: u32,
    /// Deepest search from the swing positions.
    #[arg(long, default_value_t = CalibrateConfig::default().max_swing_depth)]
    swing_depth: u32,
    /// Multi-ProbCut selectivity of the measuring searches (0: full width).
    #[arg(long, default_value_t = 1.5)]
    selectivity: f32,
    /// The label store: the solves at 21–23 empties are kept in this file.
    #[arg(long, visible_alias = "cache")]
    labels: Option<PathBuf>,
    /// Threads.
    #[arg(long, default_value_t = crate::search::default_threads())]
    threads: usize,
    /// Print the rounds' measurements as JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `thorbook calibrate`.
pub fn calibrate(args: CalibrateArgs) -> anyhow::Result<ExitCode> {
    let config = CalibrateConfig {
        width: Width::from_sigmas(args.selectivity).map_err(flag_error)?,
        max_exact_depth: args.exact_depth,
        max_swing_depth: args.swing_depth,
        rounds: args.rounds,
        exact_positions: args.exact_positions,
        swing_positions: args.swing_positions,
        ..CalibrateConfig::default()
    };
    let threads = super::flags::thread_pool(Some(args.threads))?;
    let weights = match &args.eval_file {
        Some(p) => Weights::load(p)?,
        None => Weights::bundled(),
    };
    let games = load_games(&args.archives)?;
    let start = Instant::now();
    let mut store = open_labels(args.labels.as_ref())?;
    let stop = stop_on_ctrl_c("the positions in hand")?;
    let b = bar();
    let calibration =
        threads.install(|| calibrate::calibrate(&weights, &games, &config, &mut store, &stop, &progress_to(&b)));
    b.finish();
    let calibration = match calibration {
        Err(TrainError::Stopped) => {
            eprintln!("stopped: nothing written (the solves made so far are kept in the label store, if any)");
            return Ok(ExitCode::from(130));
        }
        other => other.map_err(super::flags::train_error)?,
    };
    let weights = &calibration.weights;
    let bytes = weights.save(&args.output)?;
    if args.json {
        outln!("{}", serde_json::json!({ "correction": calibration.correction, "rounds": calibration.rounds }));
    } else {
        for (i, round) in calibration.rounds.iter().enumerate() {
            outln!(
                "round {}: lean of the leaf's side to move, discs (e: empties at the leaf; * against exact scores)",
                i + 1
            );
            let cells: Vec<String> = round
                .iter()
                .map(|l| format!("{}{}:{:+.2}", l.empties, if l.exact { "*" } else { "" }, l.lean))
                .collect();
            for line in cells.chunks(10) {
                outln!("  {}", line.join(" "));
            }
        }
        let c: Vec<String> = (1..=60).map(|e| format!("{:.2}", f64::from(calibration.correction[e]) / 64.0)).collect();
        outln!("correction (discs), empties 1..60: {}", c.join(" "));
    }
    eprintln!(
        "{} exact and {} swing positions, {:.0} s; wrote {} ({bytes} bytes, digest {:08x})",
        calibration.exact_positions,
        calibration.swing_positions,
        start.elapsed().as_secs_f64(),
        args.output.display(),
        weights.digest()
    );
    Ok(ExitCode::SUCCESS)
}
