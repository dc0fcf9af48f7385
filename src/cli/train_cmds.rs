//! `thorbook train`, `thorbook calibrate`, `thorbook eval` and `thorbook eval-error`: arguments into
//! training and measurement configs, progress bars, and the reports.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context};
use clap::Args;

use super::progress::Meter;
use super::search_args::{flag_error, SearchArgs};
use super::thor_cmds::ArchiveArgs;
use super::EvalChoiceArgs;
use super::PositionArgs;
use crate::eval::{AnyEval, Evaluator, PatternEval, Weights};
use crate::fileio::{atomic_write, AtomicFile};
use crate::search::{Settings, Width};
use crate::train::calibrate::{self, CalibrateConfig};
use crate::train::dataset::TrainGame;
use crate::train::fit::TrainConfig;
use crate::train::fit::TrainReport;
use crate::train::labels::LabelStore;
use crate::train::measure::{measure_error, positions_csv, ErrorConfig, ErrorRun, ErrorStats};
use crate::train::probcut::ProbCutConfig;
use crate::train::selfplay::SelfPlayConfig;
use crate::train::trainer::{Backward, Bootstrap, TrainError, Validation};
use crate::train::trainer::{Trainer, TrainerConfig, TrainerEvent};
use crate::train::Progress;

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
    #[arg(long, default_value_t = SelfPlayConfig::default().depth)]
    self_play_depth: u32,
    /// Share of self-play moves played at random.
    #[arg(long, default_value_t = SelfPlayConfig::default().randomness)]
    self_play_randomness: f64,
    /// Seed of the self-play draws.
    #[arg(long, default_value_t = SelfPlayConfig::default().seed)]
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
            self_play: SelfPlayConfig {
                games: args.self_play_games,
                depth: args.self_play_depth,
                randomness: args.self_play_randomness,
                seed: args.seed,
                ..SelfPlayConfig::default()
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

/// A progress meter labelled by the library's stage names.
pub(super) fn bar() -> Meter {
    Meter::new("", "")
}

pub(super) fn progress_to(bar: &Meter) -> impl Fn(Progress) + Sync + '_ {
    move |p: Progress| {
        bar.set_prefix(p.stage.label());
        bar.update(p.done, p.total);
    }
}

/// Which of the loaded games a measurement or a solve takes: `--every N --offset K`,
/// games K, K + N, K + 2N… in the order loaded, or in a seeded shuffle of it with
/// `--shuffle-seed`. The same flags in `eval-error`, `labels solve` and `train`, so that
/// a store solved for one sample is the one measured.
#[derive(Args, Debug, Clone, Copy)]
pub(super) struct GameSampleArgs {
    /// Every Nth game only (a quicker estimate).
    #[arg(long, default_value_t = 1)]
    every: usize,
    /// With --every N, start at game K (0..N): samples with different offsets share no
    /// game, so a second sample is independent of the first.
    #[arg(long, default_value_t = 0)]
    offset: usize,
    /// Shuffle the games with this seed before --every and --offset take theirs: a
    /// sample free of the archives' order (years, tournaments, rounds), the same for
    /// the same seed, and the offsets of one seed still share no game.
    #[arg(long, value_name = "SEED")]
    shuffle_seed: Option<u64>,
}

impl GameSampleArgs {
    /// A usage error for an --every of 0 or an --offset not below it (checked before
    /// any work, and by [`GameSampleArgs::pick`]).
    pub(super) fn validate(&self) -> anyhow::Result<()> {
        let (every, offset) = (self.every, self.offset);
        if every == 0 {
            return Err(crate::cli::flags::usage("--every must be >= 1"));
        }
        if offset >= every {
            return Err(crate::cli::flags::usage(format!("--offset must be below --every ({every}), got {offset}")));
        }
        Ok(())
    }

    /// The games of the sample.
    pub(super) fn pick<T>(&self, mut games: Vec<T>) -> anyhow::Result<Vec<T>> {
        self.validate()?;
        if let Some(seed) = self.shuffle_seed {
            // Fisher–Yates, from the last game down.
            let mut draws = crate::rng::Draws(seed);
            for i in (1..games.len()).rev() {
                // A draw below a length always fits a usize.
                let j = usize::try_from(draws.below(i as u64 + 1)).unwrap_or(i);
                games.swap(i, j);
            }
        }
        Ok(games.into_iter().skip(self.offset).step_by(self.every).collect())
    }
}

/// `--tournament-weight NAME=W`: the games of tournaments whose name contains `name`
/// (lowercased) weigh `weight`.
#[derive(Clone, Debug)]
pub(super) struct TournamentWeight {
    name: String,
    weight: f32,
}

fn parse_tournament_weight(s: &str) -> Result<TournamentWeight, String> {
    let (name, weight) = s.rsplit_once('=').ok_or_else(|| format!("expected NAME=W, got `{s}`"))?;
    if name.trim().is_empty() {
        return Err(format!("no tournament name before `=` in `{s}`"));
    }
    let weight: f32 = weight.trim().parse().map_err(|_| format!("the weight in `{s}` is not a number"))?;
    if !(0.01..=100.0).contains(&weight) {
        return Err(format!("the weight in `{s}` must be from 0.01 to 100"));
    }
    Ok(TournamentWeight { name: name.trim().to_lowercase(), weight })
}

pub(super) fn load_games(archives: &ArchiveArgs) -> anyhow::Result<Vec<TrainGame>> {
    load_weighted_games(archives, &[])
}

/// The games of `archives` that carry a theoretical score, each weighing what the
/// first of `rules` its tournament matches says (1 when none does); how many games
/// each rule weighed is said on stderr, and a rule that matches no game is an error
/// (a misspelt name would otherwise train unweighted without a word).
fn load_weighted_games(archives: &ArchiveArgs, rules: &[TournamentWeight]) -> anyhow::Result<Vec<TrainGame>> {
    let db = archives.load(false)?;
    let mut matched = vec![0usize; rules.len()];
    let games: Vec<TrainGame> = db
        .games
        .iter()
        .filter_map(|g| {
            let mut game = TrainGame::from_thor(g)?;
            if !rules.is_empty() {
                let tournament = db.tournament_name(g).to_lowercase();
                if let Some(i) = rules.iter().position(|r| tournament.contains(&r.name)) {
                    game.weight = rules[i].weight;
                    matched[i] += 1;
                }
            }
            Some(game)
        })
        .collect();
    for (rule, n) in rules.iter().zip(&matched) {
        if *n == 0 {
            // WTHOR archives name their tournaments only with WTHOR.TRN beside them.
            let hint =
                if db.tournaments().is_empty() { " (no tournament names: give WTHOR.TRN among the paths)" } else { "" };
            return Err(crate::cli::flags::usage(format!(
                "--tournament-weight {}={}: no game's tournament contains `{}`{hint}",
                rule.name, rule.weight, rule.name
            )));
        }
        eprintln!("{n} games of tournaments containing `{}` weigh {}", rule.name, rule.weight);
    }
    let left_out = db.games.len() - games.len();
    if left_out > 0 {
        eprintln!(
            "note: {left_out} of {} games have no theoretical score at 24 empties (only WTHOR archives carry one): \
             training labels positions with it, so they are left out",
            db.games.len()
        );
    }
    if games.is_empty() && left_out > 0 {
        anyhow::bail!("no game to train on: none has a theoretical score at 24 empties");
    }
    Ok(games)
}

/// A stop flag that Ctrl-C sets: long work stops after `what` (the batches running,
/// the games in hand), keeping what it finished; a second Ctrl-C quits at once.
pub(super) fn stop_on_ctrl_c(what: &str) -> anyhow::Result<Arc<AtomicBool>> {
    let what = what.to_string();
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    ctrlc::set_handler(move || {
        if flag.swap(true, Ordering::Relaxed) {
            std::process::exit(130);
        }
        eprintln!("\nstopping after {what} (Ctrl-C again to quit at once)");
    })?;
    Ok(stop)
}

/// Warns that a store's last batch was cut short by an interrupted run (and so is not
/// read), saying what `then` happens to its labels.
pub(super) fn warn_cut_short(path: &std::path::Path, store: &LabelStore, then: &str) {
    if store.dropped_bytes() > 0 {
        eprintln!(
            "{}: {} bytes of a batch cut short at the end (an interrupted run) are not read{then}",
            path.display(),
            store.dropped_bytes()
        );
    }
}

/// Opens the label store (in memory without a file), saying what it holds.
pub(super) fn open_labels(path: Option<&PathBuf>) -> anyhow::Result<LabelStore> {
    let Some(path) = path else { return Ok(LabelStore::in_memory()) };
    let store = LabelStore::open(path)?;
    warn_cut_short(path, &store, "; they are labelled again");
    warn_lock_refused(path, &store);
    if store.exact_len() + store.search_len() > 0 {
        eprintln!(
            "{}: {} exact and {} search labels kept from earlier runs",
            path.display(),
            store.exact_len(),
            store.search_len()
        );
    }
    Ok(store)
}

/// Warns that the label store at `path` is used unlocked, when its file system
/// refused the lock: appends from several processes are then not serialised.
pub(super) fn warn_lock_refused(path: &Path, store: &LabelStore) {
    if let Some(refused) = store.lock_refused() {
        eprintln!(
            "warning: {}: {refused}: the store is appended to unlocked; give each process its own store \
             (--labels with {{index}}) and merge them with `labels merge`",
            path.display()
        );
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
        other => other.map_err(train_flag_error)?,
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

/// A training error, an out-of-range setting named by its flag.
fn train_flag_error(e: TrainError) -> anyhow::Error {
    match e {
        TrainError::Setting(e) => super::flags::out_of_range(&e),
        e => e.into(),
    }
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
        other => other.map_err(train_flag_error)?,
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
