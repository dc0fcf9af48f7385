//! `thorbook train`: arguments into a training config, the progress, the report.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use clap::Args;

use super::archive_args::ArchiveArgs;
use super::archive_args::{load_games, load_weighted_games, parse_tournament_weight, GameSampleArgs, TournamentWeight};
use super::jobs::stop_on_ctrl_c;
use super::label_store::open_labels;
use super::progress::{bar, progress_to};
use super::search_args::flag_error;
use crate::eval::PatternEval;
use crate::fileio::atomic_write;
use crate::search::{Settings, Width};
use crate::train::fit::TrainConfig;
use crate::train::fit::TrainReport;
use crate::train::measure::ErrorStats;
use crate::train::probcut::ProbCutConfig;
use crate::train::selfplay::SelfPlayPositions;
use crate::train::trainer::{Backward, Bootstrap, TrainError, Validation};
use crate::train::trainer::{Trainer, TrainerConfig, TrainerEvent};

/// `thorbook train`.
#[derive(Args, Debug)]
pub struct TrainArgs {
    /// Training archives (default: the bundled ones).
    #[command(flatten)]
    archives: ArchiveArgs,
    /// Where to write the weights (gzip-compressed when the name ends in `.gz`).
    #[arg(short, long)]
    output: PathBuf,
    /// A sample of the training games (not of `--validate`'s): with one
    /// `--shuffle-seed`, `--every 8`, `4`, `2` and `1` at offset 0 are nested halvings,
    /// the points of a learning curve.
    #[command(flatten)]
    sample: GameSampleArgs,
    /// Validation archives (e.g. the last years), kept out of training. Without it,
    /// `--validation-share` of the games is held out.
    #[arg(long, num_args = 1..)]
    validate: Vec<PathBuf>,
    /// Share of the training games held out for validation when `--validate` is not given.
    #[arg(long, default_value_t = 0.05)]
    validation_share: f64,
    /// Solve positions with at most this many empties exactly (0: no solves).
    #[arg(long, default_value_t = TrainerConfig::default().solve_at)]
    solve_at: u32,
    /// Discs a played move loses on average: a game's theoretical score, away from 24
    /// empties, is raised by this much per move it understates for the side to move
    /// (one when the empties are odd, in a game without passes). 0 keeps it as it is.
    #[arg(long, default_value_t = TrainerConfig::default().move_loss)]
    move_loss: f64,
    /// The label store: every solve and label search is kept in this file, so a later
    /// run (or one after an interruption) computes only what is missing.
    #[arg(long, visible_alias = "cache")]
    labels: Option<PathBuf>,
    /// Phases of the weights (a divisor of 60): 60 is one per ply.
    #[arg(long, default_value_t = TrainConfig::default().phases)]
    phases: usize,
    /// A phase also learns from positions with up to this many empties more or fewer.
    #[arg(long, default_value_t = TrainConfig::default().window)]
    window: u32,
    /// The weight of those neighbouring positions (a phase's own weigh 1).
    #[arg(long, default_value_t = TrainConfig::default().neighbour_weight)]
    neighbour_weight: f64,
    /// Ridge strength toward the neighbouring phase.
    #[arg(long, default_value_t = TrainConfig::default().lambda)]
    lambda: f64,
    /// Conjugate-gradient iterations per phase.
    #[arg(long, default_value_t = TrainConfig::default().iterations)]
    iterations: usize,
    /// Leave these features out (their weights stay 0), to measure what they are worth:
    /// pattern names (`thorbook eval --verbose` lists them) or counts (mobility,
    /// potential, parity).
    #[arg(long, value_delimiter = ',')]
    without: Vec<String>,
    /// Bootstrapping rounds: relabel the midgame by searches with the last kept
    /// evaluation and fit again, keeping a round only if the held-out error falls.
    #[arg(long, default_value_t = 0)]
    bootstrap_rounds: usize,
    /// Depth of the bootstrapping searches.
    #[arg(long, default_value_t = 10)]
    bootstrap_depth: u8,
    /// Multi-ProbCut selectivity of the bootstrapping searches (0: full width).
    #[arg(long, default_value_t = 1.5)]
    bootstrap_selectivity: f32,
    /// Share of the midgame positions the bootstrapping searches label.
    #[arg(long, default_value_t = 1.0)]
    bootstrap_share: f64,
    /// Labels that flow backward: fit the phases from the end of the game and label
    /// each phase's midgame positions, just before it is fitted, by full-width searches
    /// of this depth whose leaves lie in the phases already fitted (instead of the
    /// games' theoretical scores). At least a phase's plies plus `--window`.
    #[arg(long, conflicts_with = "bootstrap_rounds")]
    backward_depth: Option<u8>,
    /// Share of the midgame positions backward labelling labels (chosen by board).
    #[arg(long, default_value_t = 0.1, requires = "backward_depth")]
    backward_share: f64,
    /// With backward labelling, keep the games' theoretical scores for the positions
    /// not labelled (by default they are left out, so no midgame label depends on the
    /// moves the players made).
    #[arg(long, requires = "backward_depth")]
    keep_theoretical: bool,
    /// `NAME=W`: the games of tournaments whose name contains NAME (any case)
    /// weigh W in the fit instead of 1 (W from 0.01 to 100), e.g. `internet=0.5` for a
    /// population that should count for less without losing its positions. Repeatable;
    /// a game takes the first rule it matches.
    #[arg(long, value_name = "NAME=W", value_parser = parse_tournament_weight)]
    tournament_weight: Vec<TournamentWeight>,
    /// Self-play games from the training games' openings, adding their positions.
    #[arg(long, default_value_t = 0)]
    self_play_games: usize,
    /// Search depth of the self-play moves.
    #[arg(long, default_value_t = SelfPlayPositions::default().depth)]
    self_play_depth: u32,
    /// Share of self-play moves played at random.
    #[arg(long, default_value_t = SelfPlayPositions::default().randomness)]
    self_play_randomness: f64,
    /// Seed of the self-play draws.
    #[arg(long, default_value_t = SelfPlayPositions::default().seed)]
    seed: u64,
    /// Add the positions of this book (e.g. those its deviation reached).
    #[arg(long)]
    book_positions: Option<PathBuf>,
    /// The evaluation that orders the solves and plays self-play (default: the bundled one).
    #[arg(long)]
    start_eval: Option<PathBuf>,
    /// Positions per number of empties searched to fit Multi-ProbCut (0: no ProbCut table).
    #[arg(long, default_value_t = ProbCutConfig::default().positions_per_empties)]
    probcut_positions: usize,
    /// Deepest search measured for ProbCut (deeper depths are extrapolated).
    #[arg(long, default_value_t = ProbCutConfig::default().max_measured_depth)]
    probcut_depth: u32,
    /// Threads.
    #[arg(long, default_value_t = crate::search::default_threads())]
    threads: usize,
    /// Write the report (per round, and per number of empties) as JSON to this file.
    #[arg(long)]
    report: Option<PathBuf>,
}

impl TryFrom<&TrainArgs> for TrainerConfig {
    type Error = anyhow::Error;

    fn try_from(args: &TrainArgs) -> anyhow::Result<TrainerConfig> {
        let width = Width::from_sigmas(args.bootstrap_selectivity).map_err(|e| match e {
            crate::search::SettingsError::OutOfRange(e) => anyhow::anyhow!(e.named("--bootstrap-selectivity")),
            e => e.into(),
        })?;
        let config = TrainerConfig {
            fit: TrainConfig {
                phases: args.phases,
                lambda: args.lambda,
                iterations: args.iterations,
                window: args.window,
                neighbour_weight: args.neighbour_weight,
                without: args.without.clone(),
            },
            solve_at: args.solve_at,
            move_loss: args.move_loss,
            bootstrap: (args.bootstrap_rounds > 0).then_some(Bootstrap {
                rounds: args.bootstrap_rounds,
                depth: args.bootstrap_depth,
                width,
                share: args.bootstrap_share,
            }),
            backward: args.backward_depth.map(|depth| Backward {
                depth,
                share: args.backward_share,
                keep_theoretical: args.keep_theoretical,
            }),
            self_play: SelfPlayPositions {
                games: args.self_play_games,
                depth: args.self_play_depth,
                randomness: args.self_play_randomness,
                seed: args.seed,
                ..SelfPlayPositions::default()
            },
            probcut: (args.probcut_positions > 0).then_some(ProbCutConfig {
                positions_per_empties: args.probcut_positions,
                max_measured_depth: args.probcut_depth,
            }),
        };
        config.validate().map_err(|e| super::flags::out_of_range(&e))?;
        Ok(config)
    }
}

/// Runs `thorbook train`.
pub fn train(args: TrainArgs) -> anyhow::Result<ExitCode> {
    Settings { threads: args.threads, ..Settings::default() }.validate().map_err(flag_error)?;
    let config = TrainerConfig::try_from(&args)?;
    args.sample.validate()?;
    let pool = rayon::ThreadPoolBuilder::new().num_threads(args.threads).build()?;
    let start = Instant::now();
    let validation = if args.validate.is_empty() {
        Validation::HeldOut(args.validation_share)
    } else {
        let validate =
            ArchiveArgs { paths: args.validate.clone(), strict: args.archives.strict, lenient: args.archives.lenient };
        Validation::Games(load_games(&validate)?)
    };
    let games = args.sample.pick(load_weighted_games(&args.archives, &args.tournament_weight)?)?;
    let extra: Vec<crate::board::Board> = match &args.book_positions {
        Some(path) => {
            let book = super::book_args::open_book(Some(path))?;
            crate::book::walk(&book).into_values().collect()
        }
        None => Vec::new(),
    };
    let start_eval = match &args.start_eval {
        Some(path) => PatternEval::load(path)?,
        None => PatternEval::bundled(),
    };
    let mut store = open_labels(args.labels.as_ref())?;
    let stop = stop_on_ctrl_c("the positions in hand")?;
    let b = bar();
    let on_event = |e: TrainerEvent| match e {
        TrainerEvent::Progress(p) => progress_to(&b)(p),
        TrainerEvent::Games { train, validation } => {
            b.suspend(|| eprintln!("{train} training games, {validation} validation games"))
        }
        TrainerEvent::Positions { train, validation, extra } => b.suspend(|| {
            eprintln!("{train} distinct training positions, {validation} validation positions, {extra} extra positions")
        }),
        TrainerEvent::Round(r) => b.suspend(|| {
            eprintln!(
                "round {}: {} exact, {} search, {} theoretical targets; {} new labels; held-out error {}; {} ({:.0} s)",
                r.round,
                r.exact_rows,
                r.search_rows,
                r.theoretical_rows,
                r.new_labels,
                r.validation_mae.map_or("n/a".into(), |m| format!("{m:.3}")),
                if r.kept { "kept" } else { "not kept: the error did not fall" },
                r.seconds
            )
        }),
    };
    let outcome = pool
        .install(|| Trainer::new(config, &start_eval, &mut store, &stop)?.run(games, validation, &extra, &on_event));
    b.finish();
    let outcome = match outcome {
        Err(TrainError::Stopped) => {
            eprintln!(
                "stopped: the labels computed so far are kept{}",
                match &args.labels {
                    Some(p) => format!(" in {}", p.display()),
                    None => " nowhere (no --labels file)".into(),
                }
            );
            return Ok(ExitCode::from(130));
        }
        other => other?,
    };
    let weights = &outcome.weights;
    let written = weights.save(&args.output)?;
    if let Some(p) = outcome.probcut_plane {
        eprintln!("probcut: sigma = {:.2} + {:.3} * depth + {:.3} * empties", p[0], p[1], p[2]);
    }
    print_train_report(&outcome.report)?;
    eprintln!(
        "wrote {} ({} bytes, digest {:08x}); {:.0} s on {}",
        args.output.display(),
        written,
        weights.digest(),
        start.elapsed().as_secs_f64(),
        super::flags::threads_phrase(args.threads)
    );
    if let Some(path) = &args.report {
        let json = serde_json::json!({ "rounds": outcome.rounds, "report": outcome.report });
        atomic_write(path, serde_json::to_string_pretty(&json)?.as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn cell(s: &ErrorStats) -> String {
    if s.positions == 0 {
        format!("{:>8} {:>6} {:>5}", 0, "", "")
    } else {
        format!("{:>8} {:>+6.2} {:>5.2}", s.positions, s.signed, s.mae)
    }
}

fn print_train_report(report: &TrainReport) -> anyhow::Result<()> {
    outln!("empties phase |    train signed   MAE | validation signed MAE |    exact signed   MAE");
    for r in &report.empties {
        outln!(
            "{:>7} {:>5} | {} | {} | {}",
            r.empties,
            r.phase,
            cell(&r.train),
            cell(&r.validation),
            cell(&r.validation_exact)
        );
    }
    Ok(())
}
