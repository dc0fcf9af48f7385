//! How far an evaluation (static, or through a search of a given depth) is from the
//! targets of labeled positions: per number of empties (which fixes the phase and the
//! parity), the mean signed error — a bias toward one side or one parity shows here —,
//! the mean absolute error and sign agreement; over the exact positions, the lean
//! within games split between the side to move and a colour ([`SideLean`]) and how
//! the exact score follows the measured one ([`Calibration`]).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use rayon::prelude::*;

use super::labels::shard::solve_targets;
use super::labels::{solve_order, LabelStore};
use super::positions::{game_positions, label_positions, Dataset, LabelKind, Labeled, TrainGame};
use super::trainer::{TrainError, DEFAULT_MOVE_LOSS};
use super::{stage_count, ProgressFn, Stage};
use crate::board::Board;
use crate::eval::{AnyEval, IncrementalEvaluator};
use crate::search::batch::{map_with_tables, WorkerTable};
use crate::search::tt::TableError;
use crate::search::{Search, Settings, SettingsError, Strength, Width};
use crate::setting::{check, Setting};
use crate::work::StopHandle;

/// Error statistics of a set of positions, in discs.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct ErrorStats {
    /// Positions measured.
    pub positions: usize,
    /// Mean of score − target: positive when the evaluation is too optimistic for the
    /// side to move.
    pub signed: f64,
    /// Mean absolute error.
    pub mae: f64,
    /// Root mean square error.
    pub rms: f64,
    /// Standard error of `signed` (the errors' standard deviation over √n): a lean
    /// is measured when `signed` is several of these from 0.
    pub signed_se: f64,
    /// Share of positions with a non-zero target whose score has the target's sign.
    pub sign_agreement: f64,
}

/// Scores and targets of positions, to summarise.
#[derive(Clone, Debug, Default)]
pub(crate) struct PositionErrors {
    /// (score, target) per position.
    pub pairs: Vec<(f64, i32)>,
}

impl PositionErrors {
    /// The static evaluation (unrounded) of `rows` against their targets.
    pub(crate) fn static_errors<E: IncrementalEvaluator>(eval: &E, rows: &[Labeled]) -> PositionErrors {
        PositionErrors { pairs: rows.par_iter().map(|l| (eval.discs(&l.board), i32::from(l.target))).collect() }
    }

    /// The statistics.
    pub(crate) fn stats(&self) -> ErrorStats {
        let n = self.pairs.len();
        if n == 0 {
            return ErrorStats::default();
        }
        let signed = self.pairs.iter().map(|&(s, t)| s - f64::from(t)).sum::<f64>() / n as f64;
        let mae = self.pairs.iter().map(|&(s, t)| (s - f64::from(t)).abs()).sum::<f64>() / n as f64;
        let square = self.pairs.iter().map(|&(s, t)| (s - f64::from(t)).powi(2)).sum::<f64>() / n as f64;
        let decided: Vec<&(f64, i32)> = self.pairs.iter().filter(|(_, t)| *t != 0).collect();
        let agree = decided.iter().filter(|(s, t)| s.round() as i32 * t.signum() > 0).count();
        ErrorStats {
            positions: n,
            signed,
            mae,
            rms: square.sqrt(),
            signed_se: standard_error(n, signed, square),
            sign_agreement: agree as f64 / decided.len().max(1) as f64,
        }
    }
}

/// The mean of `values` (at least one) and its standard error.
fn mean_and_se(values: &[f64]) -> (f64, f64) {
    let n = values.len();
    let mean = values.iter().sum::<f64>() / n as f64;
    let square = values.iter().map(|x| x * x).sum::<f64>() / n as f64;
    (mean, standard_error(n, mean, square))
}

/// The standard error of a mean `mean` of `n` values whose squares average `square`.
fn standard_error(n: usize, mean: f64, square: f64) -> f64 {
    if n < 2 {
        return f64::NAN;
    }
    let variance = (square - mean * mean).max(0.0) * n as f64 / (n - 1) as f64;
    (variance / n as f64).sqrt()
}

/// One search to measure: how positions are scored.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MeasureConfig {
    /// The search that scores each position (`None`: the static evaluation).
    pub search: Option<Strength>,
    /// Only positions whose target is exact.
    pub exact_only: bool,
    /// Table per search, MiB.
    pub hash_mib: usize,
}

impl MeasureConfig {
    /// What a measurement searches where neither an explicit setting nor a level says:
    /// no exact solve, full width (the depth always comes from the settings).
    pub(crate) const FALLBACK: Strength =
        Strength { depth: None, exact_at: Some(0), time: None, nodes: None, selectivity: None };

    /// A measurement with `settings`: the static evaluation unless they give a depth, a
    /// level or a budget, else their search over `MeasureConfig::FALLBACK`.
    pub(crate) fn new(settings: &Settings, exact_only: bool) -> Result<MeasureConfig, SettingsError> {
        let resolved = settings.resolve_over(MeasureConfig::FALLBACK)?;
        let searched = settings.depth.is_some() || settings.level.is_some() || settings.budget_only();
        Ok(MeasureConfig { search: searched.then(|| resolved.strength()), exact_only, hash_mib: resolved.hash_mib() })
    }

    /// The search depth, 0 for the static evaluation (for reports).
    pub(crate) fn depth(&self) -> u32 {
        self.search.and_then(|s| s.depth).unwrap_or(0)
    }

    /// What scores the positions, as a report names it: the width above all, since the
    /// same depth reads differently full width and cut (e.g. "depth 8, full width, no
    /// exact solve").
    pub(crate) fn describe(&self) -> String {
        let Some(s) = self.search else {
            return "static evaluation".to_owned();
        };
        let mut out = match s.depth {
            Some(d) => format!("depth {d}, {}", Width::of(s.selectivity)),
            None => format!("no depth limit, {}", Width::of(s.selectivity)),
        };
        if let Some(t) = s.time {
            out += &format!(", {:.3} s a position", t.as_secs_f64());
        }
        if let Some(n) = s.nodes {
            out += &format!(", {n} nodes a position");
        }
        match s.exact_at_with(None) {
            0 => out += ", no exact solve",
            e => out += &format!(", exact at <= {e} empties"),
        }
        out
    }
}

/// One measured position and its score (kept on request, [`ErrorConfig::keep_positions`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct ScoredPosition {
    /// The board searched (the canonical image, side to move as `player`).
    pub board: Board,
    /// Its target for the side to move.
    pub target: i8,
    /// Where the target comes from.
    pub kind: LabelKind,
    /// The score (the static evaluation unrounded, a search's in whole discs).
    pub score: f64,
}

/// A measurement's lean within games, split between the side to move and a colour.
///
/// At each number of empties one colour is to move (save after a pass), so a count's
/// signed error cannot tell a lean for the side to move from a lean toward a colour —
/// and a sample of games can lean toward a colour of its own (its players, its era).
/// Within each game holding exact positions of both colours to move, the mean error
/// of its black-to-move positions `b` and of its white-to-move ones `w` (each for its
/// side to move) give `(b + w) / 2`, the lean for the side to move, and `(b − w) / 2`,
/// the lean toward black; averaged over the games, each with its standard error.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub(crate) struct SideLean {
    /// Games with exact positions of both colours to move.
    pub games: usize,
    /// The lean for the side to move (negative: it is underrated, whichever colour).
    pub to_move: f64,
    /// Its standard error over the games.
    pub to_move_se: f64,
    /// The lean toward black (negative: toward white).
    pub toward_black: f64,
    /// Its standard error over the games.
    pub toward_black_se: f64,
}

impl SideLean {
    /// From each game's exact positions (canonical board, black to move) and the
    /// errors (score − target for the side to move) of the boards measured; `None`
    /// with fewer than two games holding both colours to move.
    fn within_games(games: &[Vec<(Board, bool)>], errors: &HashMap<Board, f64>) -> Option<SideLean> {
        let (mut to_move, mut toward_black) = (Vec::new(), Vec::new());
        for game in games {
            // [white, black]: sum of errors, positions.
            let mut sums = [(0.0, 0u32); 2];
            for (board, black) in game {
                if let Some(&e) = errors.get(board) {
                    let side = &mut sums[usize::from(*black)];
                    side.0 += e;
                    side.1 += 1;
                }
            }
            if let [(w, white @ 1..), (b, black @ 1..)] = sums {
                let (w, b) = (w / f64::from(white), b / f64::from(black));
                to_move.push((b + w) / 2.0);
                toward_black.push((b - w) / 2.0);
            }
        }
        if to_move.len() < 2 {
            return None;
        }
        let ((to_move_mean, to_move_se), (toward_black_mean, toward_black_se)) =
            (mean_and_se(&to_move), mean_and_se(&toward_black));
        Some(SideLean {
            games: to_move.len(),
            to_move: to_move_mean,
            to_move_se,
            toward_black: toward_black_mean,
            toward_black_se,
        })
    }
}

/// How the exact score follows a measurement's over the exact positions: the slope of
/// the least-squares line of exact on measured (1: calibrated on average) and, per bin
/// of the measured score, the mean of exact − measured. A population whose positions
/// are more decisive than the evaluation's features say reads above 0 in the bins
/// above 0 and below it in those below (and leans against whoever is ahead, usually the
/// side to move); one less decisive reads the other way.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub(crate) struct Calibration {
    /// Exact positions measured.
    pub positions: usize,
    /// Slope of exact on measured (`None` when every score is the same).
    pub slope: Option<f64>,
    /// The bins of [`CALIBRATION_EDGES`], empty ones left out.
    pub bins: Vec<CalibrationBin>,
}

/// One bin of measured scores: `from <= score < to` (no bound: open that side).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub(crate) struct CalibrationBin {
    /// Lower bound, inclusive.
    pub from: Option<i32>,
    /// Upper bound, exclusive.
    pub to: Option<i32>,
    /// Positions in the bin.
    pub positions: usize,
    /// Mean of exact − measured, discs for the side to move.
    pub exact_minus_score: f64,
    /// Its standard error.
    pub se: f64,
}

/// The inner edges of the calibration bins, in discs: wider where scores are rare.
pub(crate) const CALIBRATION_EDGES: [i32; 7] = [-20, -10, -4, 0, 4, 10, 20];

impl Calibration {
    /// Over `(measured, exact)` pairs; `None` without any.
    fn of(pairs: &[(f64, f64)]) -> Option<Calibration> {
        let n = pairs.len();
        if n == 0 {
            return None;
        }
        let mean = |f: &dyn Fn(&(f64, f64)) -> f64| pairs.iter().map(f).sum::<f64>() / n as f64;
        let (mx, my) = (mean(&|p| p.0), mean(&|p| p.1));
        let sxx = mean(&|p| (p.0 - mx) * (p.0 - mx));
        let slope = (sxx > 0.0).then(|| mean(&|p| (p.0 - mx) * (p.1 - my)) / sxx);
        let bounds: Vec<Option<i32>> =
            std::iter::once(None).chain(CALIBRATION_EDGES.iter().copied().map(Some)).chain([None]).collect();
        let bins = bounds
            .windows(2)
            .filter_map(|w| {
                let (from, to) = (w[0], w[1]);
                let inside = |x: f64| from.is_none_or(|f| x >= f64::from(f)) && to.is_none_or(|t| x < f64::from(t));
                let gaps: Vec<f64> = pairs.iter().filter(|p| inside(p.0)).map(|p| p.1 - p.0).collect();
                (!gaps.is_empty()).then(|| {
                    let (exact_minus_score, se) = mean_and_se(&gaps);
                    CalibrationBin { from, to, positions: gaps.len(), exact_minus_score, se }
                })
            })
            .collect();
        Some(Calibration { positions: n, slope, bins })
    }
}

/// The error at one number of empties.
#[derive(Clone, Debug, serde::Serialize)]
#[non_exhaustive]
pub struct EmptiesError {
    /// Empty squares.
    pub empties: u32,
    /// The error there.
    #[serde(flatten)]
    pub stats: ErrorStats,
}

/// The score of `l`'s board by `eval` as `config` says (static: unrounded). A search
/// runs from a cleared table (a static measurement asks for none).
pub(crate) fn scored<E: IncrementalEvaluator>(
    eval: &E,
    table: &mut WorkerTable,
    l: &Labeled,
    config: &MeasureConfig,
) -> Result<f64, TableError> {
    let Some(search) = config.search else {
        return Ok(eval.discs(&l.board));
    };
    let tt = table.get()?;
    tt.clear();
    let stop = AtomicBool::new(false);
    let limits = search.limits(&l.board);
    Ok(f64::from(Search::new(eval, tt, &stop, 1).run(&l.board, limits, false).score().unwrap_or(0)))
}

/// The error of `eval` on `data` per number of empties, start of the game first (in
/// parallel on the current rayon pool, a table per worker; the result does not depend
/// on the thread count).
///
/// The positions `keep` accepts come back too with their scores, in the same order
/// (60 empties first).
pub(crate) fn error_by_empties<E: IncrementalEvaluator>(
    eval: &E,
    data: &Dataset,
    config: &MeasureConfig,
    keep: impl Fn(&Labeled) -> bool,
    progress: ProgressFn,
) -> Result<(Vec<EmptiesError>, Vec<ScoredPosition>), TableError> {
    let wanted = |l: &&Labeled| l.exact() || !config.exact_only;
    let count = stage_count(Stage::Measure, data.iter().filter(wanted).count() as u64, 64, progress);
    let mut out = Vec::with_capacity(60);
    let mut kept = Vec::new();
    for empties in (1..=60u32).rev() {
        let rows: Vec<Labeled> = data.at(empties).iter().filter(wanted).copied().collect();
        let scores: Vec<f64> = map_with_tables(&rows, config.hash_mib, |table, l| {
            let v = scored(eval, table, l, config)?;
            count.add(1);
            Ok::<_, TableError>(v)
        })?;
        let pairs = rows.iter().zip(&scores).map(|(l, &v)| (v, i32::from(l.target))).collect();
        kept.extend(rows.iter().zip(&scores).filter(|(l, _)| keep(l)).map(|(l, &score)| ScoredPosition {
            board: l.board,
            target: l.target,
            kind: l.kind,
            score,
        }));
        out.push(EmptiesError { empties, stats: PositionErrors { pairs }.stats() });
    }
    count.finish();
    Ok((out, kept))
}

/// Statistics over the rows of a range of empties, weighted by positions.
pub(crate) fn pooled(rows: &[EmptiesError], keep: impl Fn(u32) -> bool) -> ErrorStats {
    let kept: Vec<&EmptiesError> = rows.iter().filter(|r| keep(r.empties) && r.stats.positions > 0).collect();
    let n: usize = kept.iter().map(|r| r.stats.positions).sum();
    if n == 0 {
        return ErrorStats::default();
    }
    let mean =
        |f: fn(&ErrorStats) -> f64| kept.iter().map(|r| f(&r.stats) * r.stats.positions as f64).sum::<f64>() / n as f64;
    let (signed, square) = (mean(|s| s.signed), mean(|s| s.rms * s.rms));
    ErrorStats {
        positions: n,
        signed,
        mae: mean(|s| s.mae),
        rms: square.sqrt(),
        signed_se: standard_error(n, signed, square),
        sign_agreement: mean(|s| s.sign_agreement),
    }
}

/// What [`measure_error`] measures: the error of an evaluation, alone or through
/// searches, against exact scores and the games' theoretical scores.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ErrorConfig {
    /// The search that scores each position: the static evaluation unless a depth, a
    /// level, a time or a node budget is given; exact solves only where `exact_at` says.
    pub settings: Settings,
    /// Measure searches of each of these depths in turn, without solving, instead of
    /// one measurement with `settings` (a lean that swings with the parity of the
    /// depth shows).
    pub depths: Vec<u32>,
    /// Positions with at most this many empties get exact targets (solved, and kept
    /// in the label store), 0..=24.
    pub solve_at: u32,
    /// Also solve the positions with exactly these numbers of empties, each 1..=30
    /// (e.g. 23: the parity neighbour of the exact theoretical scores at 24).
    pub solve_empties: Vec<u32>,
    /// Only positions with exact targets (24 empties and the solved ones).
    pub exact_only: bool,
    /// Keep every position's score in each run ([`ErrorRun::positions`]), e.g. to pair
    /// positions of the same games or list the worst ones.
    pub keep_positions: bool,
}

impl Default for ErrorConfig {
    /// The static evaluation, a 2 MiB table per search, solves up to 16 empties.
    fn default() -> ErrorConfig {
        ErrorConfig {
            settings: Settings { hash_mib: 2, ..Settings::default() },
            depths: Vec::new(),
            solve_at: 16,
            solve_empties: Vec::new(),
            exact_only: false,
            keep_positions: false,
        }
    }
}

/// A named group of positions and their pooled error.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct ErrorGroup {
    /// What the positions are (e.g. "<= 16 empties, odd").
    pub group: String,
    /// Their error.
    #[serde(flatten)]
    pub stats: ErrorStats,
}

/// The error of one search depth.
#[derive(Clone, Debug, serde::Serialize)]
#[non_exhaustive]
pub struct ErrorRun {
    /// The search depth (0: the static evaluation).
    pub depth: u32,
    /// What scored the positions: depth, width, exact solves
    /// ([`MeasureConfig::describe`]).
    pub search: String,
    /// The search's width (`None`: the static evaluation).
    #[serde(skip)]
    pub(crate) width: Option<Width>,
    /// The error per number of empties, 60 first (every count, measured or not).
    pub empties: Vec<EmptiesError>,
    /// The error over every position.
    pub all: ErrorStats,
    /// Pooled errors by parity of the empties: over the solved endgame, at each number
    /// of empties solved on request and at 24, and (unless `exact_only`) over the
    /// midgame, whose targets are the games' theoretical scores.
    pub groups: Vec<ErrorGroup>,
    /// Every position measured and its score, 60 empties first, when
    /// [`ErrorConfig::keep_positions`] asks (else empty).
    #[serde(skip)]
    pub(crate) positions: Vec<ScoredPosition>,
    /// The lean within games over the exact positions, split between the side to
    /// move and black (`None` without two games holding exact positions of both
    /// colours to move).
    pub(crate) sides: Option<SideLean>,
    /// How the exact score follows the measured one over the exact positions (`None`
    /// without any).
    pub(crate) calibration: Option<Calibration>,
}

/// What [`measure_error`] found.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ErrorReport {
    /// Distinct positions (canonical boards) of the games.
    pub positions: usize,
    /// One run per depth measured (one, with `settings`, without `depths`).
    pub runs: Vec<ErrorRun>,
}

/// Measures `eval` on the positions of `games`: solves what `config` asks for through
/// `store` (solves already there are reused; ordered by `eval` when it is trained,
/// else by the bundled evaluation), labels every position as training does, and scores
/// it as `config.settings` (or each of `config.depths`) says. Runs on the current
/// rayon pool; the result does not depend on its size. A set `stop` ends it with
/// [`TrainError::Stopped`], the solves made so far kept in `store`.
pub fn measure_error(
    eval: &AnyEval,
    games: &[TrainGame],
    config: &ErrorConfig,
    store: &mut LabelStore,
    stop: &StopHandle,
    progress: ProgressFn,
) -> Result<ErrorReport, TrainError> {
    let stop = stop.flag();
    check(Setting::SolveAt, config.solve_at, 0..=24)?;
    for &e in &config.solve_empties {
        check(Setting::SolveEmpties, e, 1..=30)?;
    }
    let searches = if config.depths.is_empty() {
        vec![MeasureConfig::new(&config.settings, config.exact_only)?]
    } else {
        config
            .depths
            .iter()
            .map(|&depth| {
                MeasureConfig::new(&Settings { depth: Some(depth), ..config.settings.clone() }, config.exact_only)
            })
            .collect::<Result<_, _>>()?
    };
    let positions = game_positions(games);
    let to_solve = solve_targets(&positions, config.solve_at, &config.solve_empties);
    let order = solve_order(eval);
    store.solve_missing(&to_solve, &order, stop, progress)?;
    if stop.load(Relaxed) {
        return Err(TrainError::Stopped);
    }
    // Targets as training sees them: theoretical scores corrected for the move they
    // understate (see `train::positions`).
    let data = label_positions(&positions, &[], store, None, DEFAULT_MOVE_LOSS);
    // Each game's exact positions and who is to move there, for the lean within games.
    let exact: HashSet<Board> = data.iter().filter(|l| l.exact()).map(|l| l.board).collect();
    let games_exact: Vec<Vec<(Board, bool)>> = games
        .par_iter()
        .map(|g| {
            let boards = g.positions().into_iter().map(|t| (t.board.canonical().0, t.black));
            boards.filter(|(b, _)| exact.contains(b)).collect()
        })
        .collect();
    let mut runs = Vec::with_capacity(searches.len());
    for search in &searches {
        let keep = |l: &Labeled| config.keep_positions || l.exact();
        let (empties, mut positions) = error_by_empties(eval, &data, search, keep, progress)?;
        // (measured, exact) over the exact positions, and their errors by board.
        let exact_scores: Vec<(Board, f64, f64)> = positions
            .iter()
            .filter(|p| p.kind == LabelKind::Exact)
            .map(|p| (p.board, p.score, f64::from(p.target)))
            .collect();
        let errors: HashMap<Board, f64> = exact_scores.iter().map(|&(b, score, exact)| (b, score - exact)).collect();
        let sides = SideLean::within_games(&games_exact, &errors);
        let pairs: Vec<(f64, f64)> = exact_scores.iter().map(|&(_, score, exact)| (score, exact)).collect();
        let calibration = Calibration::of(&pairs);
        if !config.keep_positions {
            positions = Vec::new();
        }
        let groups = parity_groups(&empties, config);
        runs.push(ErrorRun {
            depth: search.depth(),
            search: search.describe(),
            width: search.search.map(|s| Width::of(s.selectivity)),
            all: pooled(&empties, |_| true),
            empties,
            groups,
            positions,
            sides,
            calibration,
        });
    }
    Ok(ErrorReport { positions: positions.len(), runs })
}

/// The positions of `runs` as CSV (`eval-error --positions-out`), one row per
/// position and run: `depth,width,empties,key,player,opponent,target,label,score,error`.
/// `width` is `full`, the cut in standard deviations (`1.5`) or `static`; `key` is the
/// board's canonical Zobrist key (`Position.canonical_key()` in Python), `player` and
/// `opponent` its bitboards (bit 0 = a1, bit 63 = h8), all three `0x` and 16 hex
/// digits; `target` the disc differential for the side to move, `label` `exact`,
/// `search` or `theoretical`, `score` the measurement's and `error` score − target.
pub(crate) fn positions_csv(runs: &[ErrorRun]) -> String {
    use std::fmt::Write;
    let mut out = String::from("depth,width,empties,key,player,opponent,target,label,score,error\n");
    for run in runs {
        let width = match run.width {
            None => "static".to_owned(),
            Some(Width::Full) => "full".to_owned(),
            Some(Width::Selective(s)) => format!("{:.1}", s.sigmas()),
        };
        for p in &run.positions {
            let label = match p.kind {
                LabelKind::Exact => "exact",
                LabelKind::Search => "search",
                LabelKind::Theoretical => "theoretical",
            };
            let b = p.board;
            // Writing to a String cannot fail.
            let _ = writeln!(
                out,
                "{},{width},{},{:#018x},{:#018x},{:#018x},{},{label},{:.2},{:.2}",
                run.depth,
                b.empty_count(),
                b.canonical_key(),
                b.player,
                b.opponent,
                p.target,
                p.score,
                p.score - f64::from(p.target)
            );
        }
    }
    out
}

/// The groups of [`ErrorRun::groups`], each with at least one position.
fn parity_groups(rows: &[EmptiesError], config: &ErrorConfig) -> Vec<ErrorGroup> {
    let solve_at = config.solve_at;
    let mut out = Vec::new();
    let mut push = |group: String, keep: &dyn Fn(u32) -> bool| {
        let stats = pooled(rows, keep);
        if stats.positions > 0 {
            out.push(ErrorGroup { group, stats });
        }
    };
    for (name, parity) in [("odd", 1), ("even", 0)] {
        push(format!("<= {solve_at} empties, {name}"), &|e| e <= solve_at && e % 2 == parity);
    }
    let mut singles: Vec<u32> = config.solve_empties.iter().copied().chain([24]).filter(|&e| e > solve_at).collect();
    singles.sort_unstable();
    singles.dedup();
    for e in singles {
        push(format!("{e} empties"), &|x| x == e);
    }
    if !config.exact_only {
        for (name, parity) in [("odd", 1), ("even", 0)] {
            push(format!("25-60 empties, {name} (theoretical targets)"), &|e| e >= 25 && e % 2 == parity);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_are_signed_and_absolute() {
        let e = PositionErrors { pairs: vec![(3.0, 1), (-2.0, 0), (-1.0, 2), (0.5, -4)] };
        let s = e.stats();
        assert_eq!(s.positions, 4);
        assert!((s.signed - ((2.0 - 2.0 - 3.0 + 4.5) / 4.0)).abs() < 1e-12);
        assert!((s.mae - ((2.0 + 2.0 + 3.0 + 4.5) / 4.0)).abs() < 1e-12);
        // Three decided targets: +1 agrees, +2 does not, −4 does not (0.5 rounds to +1).
        assert!((s.sign_agreement - 1.0 / 3.0).abs() < 1e-12);
        // The errors 2, −2, −3, 4.5: their sample standard deviation over √4.
        let errors = [2.0f64, -2.0, -3.0, 4.5];
        let mean = errors.iter().sum::<f64>() / 4.0;
        let sample_var = errors.iter().map(|e| (e - mean).powi(2)).sum::<f64>() / 3.0;
        assert!((s.signed_se - (sample_var / 4.0).sqrt()).abs() < 1e-12);
        assert!((s.rms - (errors.iter().map(|e| e * e).sum::<f64>() / 4.0).sqrt()).abs() < 1e-12);
        let rows = vec![
            EmptiesError {
                empties: 23,
                stats: ErrorStats {
                    positions: 1,
                    signed: -3.0,
                    mae: 3.0,
                    rms: 3.0,
                    signed_se: f64::NAN,
                    sign_agreement: 1.0,
                },
            },
            EmptiesError {
                empties: 24,
                stats: ErrorStats {
                    positions: 3,
                    signed: 1.0,
                    mae: 1.0,
                    rms: 1.0,
                    signed_se: 0.0,
                    sign_agreement: 0.0,
                },
            },
        ];
        let all = pooled(&rows, |_| true);
        assert_eq!(all.positions, 4);
        assert!((all.signed - 0.0).abs() < 1e-12 && (all.mae - 1.5).abs() < 1e-12);
        // Pooled, the errors are −3, 1, 1, 1: a sample variance of 4, a standard error of 1.
        assert!((all.rms - 3f64.sqrt()).abs() < 1e-12 && (all.signed_se - 1.0).abs() < 1e-12);
        assert_eq!(pooled(&rows, |e| e % 2 == 1).signed, -3.0);
    }

    /// Extra empties solved on request (`eval-error --solve-empties 20`): every
    /// 20-empty position of the measured games gets its exact score, checked against a
    /// plain solve, and the store keeps it.
    #[test]
    fn solved_empties_are_exact_and_kept_in_the_store() {
        let games: Vec<TrainGame> = crate::train::bundled_games().into_iter().step_by(400).collect();
        let eval = AnyEval::Classic(crate::eval::ClassicEval);
        let stop = StopHandle::new();
        let mut store = LabelStore::in_memory();
        let config = ErrorConfig { solve_at: 4, solve_empties: vec![20], exact_only: true, ..ErrorConfig::default() };
        measure_error(&eval, &games, &config, &mut store, &stop, &|_| {}).unwrap();
        let mut solver = crate::testutil::searches::Searcher::new(16);
        let boards = crate::train::positions::game_positions(&games);
        let at20: Vec<_> = boards.iter().map(|p| p.board).filter(|b| b.empty_count() == 20).collect();
        assert!(at20.len() >= 10, "{} positions at 20 empties", at20.len());
        for board in &at20 {
            assert_eq!(store.exact(board).map(i32::from), Some(solver.exact(board)), "{board:?}");
        }
    }

    #[test]
    fn measure_error_refuses_what_it_cannot_solve_by_setting() {
        let eval = AnyEval::Classic(crate::eval::ClassicEval);
        let stop = StopHandle::new();
        let mut store = LabelStore::in_memory();
        for (config, setting) in [
            (ErrorConfig { solve_at: 25, ..ErrorConfig::default() }, Setting::SolveAt),
            (ErrorConfig { solve_empties: vec![23, 31], ..ErrorConfig::default() }, Setting::SolveEmpties),
            (ErrorConfig { depths: vec![4, 0], ..ErrorConfig::default() }, Setting::Depth),
        ] {
            let err = measure_error(&eval, &[], &config, &mut store, &stop, &|_| {}).unwrap_err();
            assert!(matches!(err, TrainError::Setting(ref e) if e.setting == setting), "{err}");
        }
        // Nothing to measure is an empty report, not an error.
        let report = measure_error(&eval, &[], &ErrorConfig::default(), &mut store, &stop, &|_| {}).unwrap();
        assert_eq!((report.positions, report.runs.len()), (0, 1));
        assert_eq!(report.runs[0].all.positions, 0);
    }
}
