//! [`Trainer`]: the whole training pipeline — positions, exact labels, a first fit,
//! bootstrapping rounds, Multi-ProbCut — reporting through events, so the command
//! line and any other front end only render.
//!
//! Round 0 fits the exact solves, the theoretical scores at 24 empties and, elsewhere,
//! the games' theoretical scores. Each bootstrapping round then labels the midgame
//! (more than `solve_at` empties, 24 excepted) by a search with the evaluation of the
//! round kept last and fits again; a round is kept only when the held-out error
//! against exact targets falls, and the first round that does not lower it ends the
//! bootstrapping. Every label goes through the [`LabelStore`], so a second run — or a
//! run after an interruption — computes only what is missing.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::Instant;

use super::dataset::{game_positions, label_positions, Dataset, GamePosition, Labeled, TrainGame, THEORETICAL_EMPTIES};
use super::fit::{train, train_backward, TrainConfig, TrainReport};
use super::labels::{LabelStore, LabelStoreError, SearchSpec};
use super::probcut::{self, fit_probcut, ProbCutConfig};
use super::selfplay::{self, self_play_positions, SelfPlayConfig};
use super::LabelKind;
use super::Progress;
use crate::board::Board;
use crate::eval::{PatternEval, Weights};
use crate::search::Width;
use crate::setting::{check, OutOfRange, Setting};

/// The mean loss of a played move in the Thor games, in discs: exact solves of every
/// tenth training game of 2010–2012 against its theoretical score are +2.15 ± 0.40
/// discs better for the side to move at 19 empties and +2.54 ± 0.31 at 21 (one move
/// understated each), +0.59 ± 0.36 at 20 (none).
pub(crate) const DEFAULT_MOVE_LOSS: f64 = 2.3;

/// Bootstrapping: midgame targets from searches by the last kept evaluation.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct Bootstrap {
    /// Rounds at most (each is kept only if it lowers the held-out error).
    pub rounds: usize,
    /// Depth of the label searches.
    pub depth: u8,
    /// Their width: full, or Multi-ProbCut at a selectivity.
    pub width: Width,
    /// Share of the midgame positions labelled (chosen by board, the same every
    /// round); the others keep the theoretical score.
    pub share: f64,
}

/// Labels that flow backward from the end of the game: phases are fitted from the
/// end, and before a phase learns, its positions beyond `solve_at` empties (the exact
/// 24-empty ones excepted) are labelled by full-width searches of `depth` plies with
/// the phases fitted so far. The leaves of those searches lie in phases nearer the
/// end, already fitted on exact solves or on labels that came the same way, so no
/// label depends on the phase's own weights or on a previous evaluation; with
/// `keep_theoretical` off, none depends on the moves the players made either.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct Backward {
    /// Depth of the label searches: half the positions (chosen by board) are searched
    /// to this depth, the other half one ply less, so that the lean a search has toward
    /// the side that moves at its last ply — the opposite side at the next depth —
    /// cancels in the fit instead of adding up phase after phase. The leaves of both
    /// must lie beyond the phase's window.
    pub depth: u8,
    /// Share of the positions labelled (chosen by board).
    pub share: f64,
    /// Keep the games' theoretical score for the positions not labelled (else they
    /// are left out of the fit).
    pub keep_theoretical: bool,
}

impl Backward {
    /// The depth `board` is searched to: `depth` or one less, by a hash of the board.
    fn depth_for(board: &Board, depth: u8) -> u8 {
        depth - u8::from(board.key().wrapping_mul(0xD6E8_FEB8_6659_FD93) >> 63 == 1)
    }
}

/// Everything training needs to know.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct TrainerConfig {
    /// How each round fits.
    pub fit: TrainConfig,
    /// Positions with at most this many empties are solved exactly (≤ 24).
    pub solve_at: u32,
    /// Discs a played move loses on average: the games' theoretical targets are
    /// raised by this much per move they understate (see `train::dataset`).
    pub move_loss: f64,
    /// Bootstrapping rounds (`None`: round 0 only).
    pub bootstrap: Option<Bootstrap>,
    /// Round 0's midgame labels by backward searches (`None`: the games' theoretical
    /// scores).
    pub backward: Option<Backward>,
    /// Self-play games added to the positions (0 games: none).
    pub self_play: SelfPlayConfig,
    /// The Multi-ProbCut fit of the kept weights (`None`: no table).
    pub probcut: Option<ProbCutConfig>,
}

impl Default for TrainerConfig {
    fn default() -> Self {
        TrainerConfig {
            fit: TrainConfig::default(),
            solve_at: 18,
            move_loss: DEFAULT_MOVE_LOSS,
            bootstrap: None,
            backward: None,
            self_play: SelfPlayConfig::default(),
            probcut: Some(ProbCutConfig::default()),
        }
    }
}

impl TrainerConfig {
    /// Checks every setting; the message names the one at fault.
    pub(crate) fn validate(&self) -> Result<(), OutOfRange> {
        self.fit.validate()?;
        self.self_play.validate()?;
        if self.solve_at > THEORETICAL_EMPTIES {
            return Err(OutOfRange::new(
                Setting::SolveAt,
                self.solve_at,
                "at most 24 (the theoretical scores are exact there)",
            ));
        }
        if !(self.move_loss.is_finite() && (0.0..=10.0).contains(&self.move_loss)) {
            return Err(OutOfRange::new(Setting::MoveLoss, self.move_loss, "from 0 to 10 discs"));
        }
        if let Some(b) = &self.bootstrap {
            check(Setting::BootstrapRounds, b.rounds, 1..=20)?;
            check(Setting::BootstrapDepth, b.depth, 1..=30)?;
            if !(b.share.is_finite() && b.share > 0.0 && b.share <= 1.0) {
                return Err(OutOfRange::new(Setting::BootstrapShare, b.share, "in (0, 1]"));
            }
        }
        if let (Some(_), Some(b)) = (&self.backward, &self.bootstrap) {
            // Bootstrapping relabels the midgame from the games' scores again.
            return Err(OutOfRange::new(Setting::BootstrapRounds, b.rounds, "0 with backward labelling"));
        }
        if let Some(b) = &self.backward {
            // A label at the top of a phase's window must reach below the phase, at
            // the shallower of its two depths too.
            let plies = 60 / self.fit.phases.max(1) as u32;
            let least = plies + self.fit.window + 1;
            if !(least..=30).contains(&u32::from(b.depth)) {
                return Err(OutOfRange::new(
                    Setting::BackwardDepth,
                    b.depth,
                    format!(
                        "from {least} to 30 (beyond a phase's {plies} plies and its window of {})",
                        self.fit.window
                    ),
                ));
            }
            if !(b.share.is_finite() && b.share > 0.0 && b.share <= 1.0) {
                return Err(OutOfRange::new(Setting::BackwardShare, b.share, "in (0, 1]"));
            }
        }
        if let Some(p) = &self.probcut {
            check(Setting::ProbCutDepth, p.max_measured_depth, 3..=14)?;
            check(Setting::ProbCutPositions, p.positions_per_empties, 1..=10_000)?;
        }
        Ok(())
    }
}

/// What a round did.
#[derive(Clone, Debug, serde::Serialize)]
#[non_exhaustive]
pub struct RoundSummary {
    /// 0 for the first fit, then the bootstrapping rounds.
    pub round: usize,
    /// The label searches of this round (`None` for round 0).
    pub search_depth: Option<u8>,
    /// Training rows by target: exact, search, theoretical.
    pub exact_rows: usize,
    /// Rows labelled by search.
    pub search_rows: usize,
    /// Rows keeping the games' theoretical score.
    pub theoretical_rows: usize,
    /// New labels computed for this round (searches, or solves for round 0).
    pub new_labels: usize,
    /// Mean absolute held-out error against exact targets above `solve_at` empties.
    pub validation_mae: Option<f64>,
    /// Kept: the error fell (round 0 is always kept).
    pub kept: bool,
    /// Seconds the round took, labels included.
    pub seconds: f64,
}

/// What the trainer reports as it goes.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum TrainerEvent {
    /// Progress of a long step.
    Progress(Progress),
    /// The games, split.
    Games {
        /// Games that train.
        train: usize,
        /// Games that measure.
        validation: usize,
    },
    /// The distinct positions found.
    Positions {
        /// From the training games.
        train: usize,
        /// From the validation games.
        validation: usize,
        /// Given or played in self-play, not in the training games.
        extra: usize,
    },
    /// A round ended.
    Round(RoundSummary),
}

/// Which games measure the training instead of feeding it.
#[derive(Clone, Debug)]
pub enum Validation {
    /// A share in `[0, 1)` of the games, chosen by a hash of each game's index (the
    /// same games for the same list, whatever the thread count or the run).
    HeldOut(f64),
    /// Games of their own (e.g. other archives); every given game trains.
    Games(Vec<TrainGame>),
}

/// Splits `games` into training and validation games.
/// For the weight file's note: how many games weigh other than 1, and their mean
/// weight (empty when every game weighs 1).
fn weighed_otherwise(games: &[TrainGame]) -> String {
    let (n, sum) =
        games.iter().filter(|g| g.weight != 1.0).fold((0usize, 0f64), |(n, s), g| (n + 1, s + f64::from(g.weight)));
    if n == 0 {
        String::new()
    } else {
        format!(" ({n} weighing {:.3} on average)", sum / n as f64)
    }
}

fn split_games(games: Vec<TrainGame>, validation: Validation) -> Result<(Vec<TrainGame>, Vec<TrainGame>), TrainError> {
    let (train, validation) = match validation {
        Validation::Games(v) => (games, v),
        Validation::HeldOut(share) => {
            if !(0.0..1.0).contains(&share) {
                return Err(OutOfRange::new(Setting::Validation, share, "in [0, 1)").into());
            }
            let (mut train, mut validation) = (Vec::new(), Vec::new());
            for (i, g) in games.into_iter().enumerate() {
                if held_out(i, share) {
                    validation.push(g)
                } else {
                    train.push(g)
                }
            }
            (train, validation)
        }
    };
    if train.is_empty() {
        return Err(TrainError::NoGames);
    }
    Ok((train, validation))
}

/// Game `i` is held out when a hash of its index falls under `share`.
fn held_out(i: usize, share: f64) -> bool {
    let h = (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    ((h >> 11) as f64 / (1u64 << 53) as f64) < share
}

/// Why training stopped without weights.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TrainError {
    /// A setting is out of range.
    #[error(transparent)]
    Setting(#[from] OutOfRange),
    /// No training game.
    #[error("no training games")]
    NoGames,
    /// No training position.
    #[error("no training positions (the games never reach 24 empties?)")]
    NoPositions,
    /// The label store could not be read or written.
    #[error(transparent)]
    Labels(#[from] LabelStoreError),
    /// A worker's transposition table could not be allocated.
    #[error(transparent)]
    Table(#[from] crate::search::TableError),
    /// Stopped on request; every label computed so far is in the store.
    #[error("stopped; the labels computed so far are kept in the label store")]
    Stopped,
}

impl From<crate::search::SettingsError> for TrainError {
    fn from(e: crate::search::SettingsError) -> TrainError {
        match e {
            crate::search::SettingsError::OutOfRange(e) => TrainError::Setting(e),
            crate::search::SettingsError::Table(e) => TrainError::Table(e),
        }
    }
}

/// The result of training.
#[derive(Clone, Debug)]
pub struct TrainingOutcome {
    /// The kept weights, with their ProbCut table and a note on how they were made.
    pub weights: Weights,
    /// Their error per number of empties.
    pub report: TrainReport,
    /// Every round, kept or not.
    pub rounds: Vec<RoundSummary>,
    /// The ProbCut plane `σ = a + b·depth + c·empties`, if fitted.
    pub probcut_plane: Option<[f64; 3]>,
}

/// Runs training.
pub struct Trainer<'a> {
    config: TrainerConfig,
    /// Orders the exact solves (speed only) and plays the self-play games.
    start: &'a PatternEval,
    store: &'a mut LabelStore,
    stop: &'a AtomicBool,
}

impl<'a> Trainer<'a> {
    /// A trainer; `start` is the evaluation that orders solves and plays self-play.
    pub fn new(
        config: TrainerConfig,
        start: &'a PatternEval,
        store: &'a mut LabelStore,
        stop: &'a AtomicBool,
    ) -> Result<Trainer<'a>, TrainError> {
        config.validate()?;
        Ok(Trainer { config, start, store, stop })
    }

    /// Trains on `games` (plus `extra` positions, e.g. a book's), measuring on the
    /// games `validation` says, in parallel on the current rayon pool. The weights do
    /// not depend on the thread count.
    pub fn run(
        &mut self,
        games: Vec<TrainGame>,
        validation: Validation,
        extra: &[Board],
        on_event: &(dyn Fn(TrainerEvent) + Sync),
    ) -> Result<TrainingOutcome, TrainError> {
        let (train_games, validation_games) = split_games(games, validation)?;
        on_event(TrainerEvent::Games { train: train_games.len(), validation: validation_games.len() });
        let (train_games, validation_games) = (train_games.as_slice(), validation_games.as_slice());
        let progress = |p: Progress| on_event(TrainerEvent::Progress(p));
        let solve_at = self.config.solve_at;
        let train_positions = game_positions(train_games);
        if train_positions.is_empty() {
            return Err(TrainError::NoPositions);
        }
        let validation_positions = game_positions(validation_games);
        let mut extra: Vec<Board> = extra.to_vec();
        if self.config.self_play.games > 0 {
            extra.extend(self_play_positions(
                train_games,
                self.start,
                &self.config.self_play,
                self.stop,
                &progress,
                selfplay::TABLE_MIB,
            )?);
        }
        let extra = distinct_extra(extra, &train_positions);
        on_event(TrainerEvent::Positions {
            train: train_positions.len(),
            validation: validation_positions.len(),
            extra: extra.len(),
        });

        let started = Instant::now();
        let endgame: Vec<Board> = train_positions
            .iter()
            .chain(&validation_positions)
            .map(|p| p.board)
            .chain(extra.iter().copied())
            .filter(|b| b.empty_count() <= solve_at)
            .collect();
        let solved = self.store.solve_missing(&endgame, self.start, self.stop, &progress)?;
        self.check_stop()?;
        let validation = label_positions(&validation_positions, &[], self.store, None, self.config.move_loss);
        let mut data = label_positions(&train_positions, &extra, self.store, None, self.config.move_loss);
        let first = match self.config.backward {
            None => self.fit(0, &mut data, &validation, solved, started, &progress),
            Some(backward) => {
                let (weights, report, searched) =
                    self.fit_backward(backward, &mut data, &train_positions, &extra, &validation, &progress)?;
                let summary = self.summary(0, Some(backward.depth), &data, &report, solved + searched, started);
                (weights, summary, report)
            }
        };
        let (mut best, mut rounds) = (first, Vec::new());
        rounds.push(best.1.clone());
        on_event(TrainerEvent::Round(best.1.clone()));

        // The kept weights with their ProbCut table: each round's label searches need
        // it, and when a round is not kept, the searcher of that round is the final file.
        let mut final_file = None;
        if let Some(b) = self.config.bootstrap {
            for round in 1..=b.rounds {
                let started = Instant::now();
                let searcher = self.with_probcut(best.0.clone(), &validation, &progress)?;
                let spec = SearchSpec { depth: b.depth, selectivity: b.width.selectivity(), eval: searcher.0.digest() };
                let midgame = midgame_boards(&train_positions, &extra, solve_at, b.share);
                let eval = PatternEval::new(&searcher.0);
                let searched = self.store.search_missing(&midgame, spec, &eval, self.stop, &progress)?;
                self.check_stop()?;
                let mut data = label_positions(&train_positions, &extra, self.store, Some(spec), self.config.move_loss);
                let candidate = self.fit(round, &mut data, &validation, searched, started, &progress);
                let better = match (candidate.1.validation_mae, best.1.validation_mae) {
                    (Some(new), Some(old)) => new < old,
                    _ => false,
                };
                let mut summary = candidate.1.clone();
                summary.kept = better;
                rounds.push(summary.clone());
                on_event(TrainerEvent::Round(summary));
                if !better {
                    final_file = Some(searcher);
                    break;
                }
                best = candidate;
            }
        }

        let (mut weights, plane) = match final_file {
            Some(f) => f,
            None => self.with_probcut(best.0, &validation, &progress)?,
        };
        let kept = rounds.iter().filter(|r| r.kept).map(|r| r.round).max().unwrap_or(0);
        let kept_round = &rounds[kept];
        weights.set_note(format!(
            "thorbook {} train: {} games{}, {} positions (+{} extra), {} phases, window {}, solve_at {}, \
             round {kept} of {} kept ({} exact, {} search, {} theoretical targets{}), lambda {}, {} iterations, \
             without [{}], probcut {:?}",
            env!("CARGO_PKG_VERSION"),
            train_games.len(),
            weighed_otherwise(train_games),
            train_positions.len(),
            extra.len(),
            self.config.fit.phases,
            self.config.fit.window,
            solve_at,
            rounds.len() - 1,
            kept_round.exact_rows,
            kept_round.search_rows,
            kept_round.theoretical_rows,
            self.config.bootstrap.map_or(String::new(), |b| format!(
                "; searches depth {} at {} share {}",
                b.depth,
                b.width.selectivity().map_or("full width".into(), |s| format!("{} sigma", s.sigmas())),
                b.share
            )) + &self.config.backward.map_or(String::new(), |b| format!(
                "; backward searches depth {} and {} full width share {}{}",
                b.depth,
                b.depth - 1,
                b.share,
                if b.keep_theoretical { ", theoretical kept" } else { "" }
            )),
            self.config.fit.lambda,
            self.config.fit.iterations,
            self.config.fit.without.join(", "),
            self.config.probcut.as_ref().map(|p| (p.positions_per_empties, p.max_measured_depth)),
        ));
        let report = best.2;
        Ok(TrainingOutcome { weights, report, rounds, probcut_plane: plane })
    }

    fn check_stop(&self) -> Result<(), TrainError> {
        if self.stop.load(Relaxed) {
            Err(TrainError::Stopped)
        } else {
            Ok(())
        }
    }

    /// Fits one round and measures it.
    fn fit(
        &self,
        round: usize,
        data: &mut Dataset,
        validation: &Dataset,
        new_labels: usize,
        started: Instant,
        progress: &(dyn Fn(Progress) + Sync),
    ) -> (Weights, RoundSummary, TrainReport) {
        let (weights, report) = train(data, validation, &self.config.fit, progress);
        let depth = (round > 0).then(|| self.config.bootstrap.map_or(0, |b| b.depth));
        let summary = self.summary(round, depth, data, &report, new_labels, started);
        (weights, summary, report)
    }

    /// What a fit learnt from and how it measured.
    fn summary(
        &self,
        round: usize,
        search_depth: Option<u8>,
        data: &Dataset,
        report: &TrainReport,
        new_labels: usize,
        started: Instant,
    ) -> RoundSummary {
        let count = |kind| data.iter().filter(|l| l.kind == kind).count();
        RoundSummary {
            round,
            search_depth,
            exact_rows: count(super::LabelKind::Exact),
            search_rows: count(super::LabelKind::Search),
            theoretical_rows: count(super::LabelKind::Theoretical),
            new_labels,
            validation_mae: report.exact_validation_mae(self.config.solve_at + 1),
            kept: true,
            seconds: started.elapsed().as_secs_f64(),
        }
    }

    /// Round 0 with labels that flow backward ([`Backward`]): `data` holds the exact
    /// and theoretical labels, and each phase's midgame rows are relabelled by search
    /// just before the phase is fitted. Returns the weights, their report and the
    /// searches made.
    #[allow(clippy::too_many_arguments)]
    fn fit_backward(
        &mut self,
        backward: Backward,
        data: &mut Dataset,
        games: &[GamePosition],
        extra: &[Board],
        validation: &Dataset,
        progress: &(dyn Fn(Progress) + Sync),
    ) -> Result<(Weights, TrainReport, usize), TrainError> {
        let solve_at = self.config.solve_at;
        // The boards to search, by empties: the share chosen by board, less the solved.
        let mut pending: Vec<Vec<Board>> = vec![Vec::new(); 61];
        for board in midgame_boards(games, extra, solve_at, backward.share) {
            if self.store.exact(&board).is_none() {
                pending[board.empty_count() as usize].push(board);
            }
        }
        let chosen: HashSet<Board> = pending.iter().flatten().copied().collect();
        let extra: HashSet<Board> = extra.iter().copied().collect();
        let (store, stop) = (&mut *self.store, self.stop);
        let mut labelled = [false; 61];
        let mut searched = 0;
        let relabel = |data: &mut Dataset, empties: std::ops::RangeInclusive<u32>, weights: &Weights| {
            let due: Vec<usize> =
                empties.map(|e| e as usize).filter(|&e| !labelled[e] && e > solve_at as usize).collect();
            if due.is_empty() {
                return Ok(());
            }
            let digest = weights.digest();
            let eval = PatternEval::new(weights);
            for depth in [backward.depth, backward.depth - 1] {
                let spec = SearchSpec { depth, selectivity: None, eval: digest };
                let boards: Vec<Board> = due
                    .iter()
                    .flat_map(|&e| pending[e].iter().copied())
                    .filter(|b| Backward::depth_for(b, backward.depth) == depth)
                    .collect();
                searched += store.search_missing(&boards, spec, &eval, stop, progress)?;
                if stop.load(Relaxed) {
                    return Err(TrainError::Stopped);
                }
            }
            for e in due {
                labelled[e] = true;
                let label = |board: &Board| {
                    let spec = SearchSpec {
                        depth: Backward::depth_for(board, backward.depth),
                        selectivity: None,
                        eval: digest,
                    };
                    chosen.contains(board).then(|| store.searched(board, spec)).flatten()
                };
                data.by_empties[e].retain_mut(|row| match (row.kind, label(&row.board)) {
                    (LabelKind::Exact, _) => true,
                    (_, Some(target)) => {
                        *row = Labeled { target, kind: LabelKind::Search, ..*row };
                        true
                    }
                    (kind, None) => backward.keep_theoretical && kind == LabelKind::Theoretical,
                });
                // Extra positions enter the data only with a label of their own.
                let extras = pending[e].iter().filter(|b| extra.contains(b));
                let rows: Vec<Labeled> = extras
                    .filter_map(|b| {
                        Some(Labeled { board: *b, target: label(b)?, kind: LabelKind::Search, weight: 1.0 })
                    })
                    .collect();
                data.by_empties[e].extend(rows);
            }
            Ok(())
        };
        let (weights, report) = train_backward(data, validation, &self.config.fit, progress, relabel)?;
        Ok((weights, report, searched))
    }

    /// The weights with their ProbCut table fitted (unchanged without ProbCut).
    fn with_probcut(
        &self,
        mut weights: Weights,
        validation: &Dataset,
        progress: &(dyn Fn(Progress) + Sync),
    ) -> Result<(Weights, Option<[f64; 3]>), TrainError> {
        let Some(config) = &self.config.probcut else { return Ok((weights, None)) };
        let eval = PatternEval::new(&weights);
        let table = fit_probcut(&eval, weights.phases, validation, config, progress, probcut::TABLE_MIB)?;
        weights.probcut = table.sigma;
        weights.probcut_depths = table.depths;
        Ok((weights, Some(table.plane)))
    }
}

/// Extra positions as canonical boards, without repeats or positions of the games,
/// sorted.
fn distinct_extra(extra: Vec<Board>, games: &[GamePosition]) -> Vec<Board> {
    let known: HashSet<Board> = games.iter().map(|p| p.board).collect();
    let mut out: Vec<Board> = extra
        .into_iter()
        .filter(|b| b.legal_moves() != 0)
        .map(|b| b.canonical().0)
        .filter(|b| !known.contains(b))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The positions a bootstrapping round labels by search: more than `solve_at`
/// empties, not the exact 24-empty ones, a `share` of them chosen by board.
fn midgame_boards(games: &[GamePosition], extra: &[Board], solve_at: u32, share: f64) -> Vec<Board> {
    let threshold = (share * u64::MAX as f64) as u64;
    games
        .iter()
        .filter(|p| !p.theoretical_is_exact())
        .map(|p| p.board)
        .chain(extra.iter().copied())
        .filter(|b| b.empty_count() > solve_at)
        .filter(|b| share >= 1.0 || b.key().wrapping_mul(0x9E37_79B9_7F4A_7C15) <= threshold)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::bundled_games as games;

    fn small_config() -> TrainerConfig {
        TrainerConfig {
            fit: TrainConfig { iterations: 8, ..TrainConfig::default() },
            solve_at: 8,
            move_loss: DEFAULT_MOVE_LOSS,
            bootstrap: Some(Bootstrap { rounds: 2, depth: 2, width: Width::Full, share: 1.0 }),
            backward: None,
            self_play: SelfPlayConfig { games: 20, depth: 1, ..SelfPlayConfig::default() },
            probcut: Some(ProbCutConfig { positions_per_empties: 4, max_measured_depth: 4 }),
        }
    }

    /// A training run from a fresh in-memory store: the outcome, the store and the
    /// events other than progress.
    fn train_run(
        config: TrainerConfig,
        train: &[TrainGame],
        validation: &[TrainGame],
    ) -> (TrainingOutcome, LabelStore, Vec<TrainerEvent>) {
        let (start, stop) = (PatternEval::bundled(), AtomicBool::new(false));
        let mut store = LabelStore::in_memory();
        let events = std::sync::Mutex::new(Vec::new());
        let outcome = Trainer::new(config, &start, &mut store, &stop)
            .unwrap()
            .run(train.to_vec(), Validation::Games(validation.to_vec()), &[], &|e| {
                if !matches!(e, TrainerEvent::Progress(_)) {
                    events.lock().unwrap().push(e);
                }
            })
            .unwrap();
        (outcome, store, events.into_inner().unwrap())
    }

    #[test]
    fn training_runs_its_rounds_keeps_only_improvements_and_is_deterministic() {
        let all = games();
        let (train_games, validation_games) = all.split_at(all.len() - 400);
        let train_games = &train_games[..1500];
        let run = || {
            let (outcome, _, events) = train_run(small_config(), train_games, validation_games);
            (outcome, events)
        };
        let (a, events) = run();
        assert!(matches!(events[0], TrainerEvent::Games { train: 1500, validation: 400 }));
        assert!(matches!(events[1], TrainerEvent::Positions { extra, .. } if extra > 0));
        assert_eq!(a.rounds[0].round, 0);
        assert!(a.rounds[0].kept && a.rounds[0].search_rows == 0 && a.rounds[0].theoretical_rows > 0);
        assert!(a.rounds.len() >= 2, "at least one bootstrapping round ran");
        assert!(a.rounds[1].search_rows > 0);
        // Rounds are kept while they lower the error; the first that does not ends it.
        for w in a.rounds.windows(2) {
            if w[1].kept {
                assert!(w[1].validation_mae < w[0].validation_mae);
            }
        }
        if let Some(last) = a.rounds.last().filter(|r| r.round > 0) {
            assert!(last.kept || a.rounds.iter().filter(|r| !r.kept).count() == 1);
        }
        assert_eq!(a.weights.probcut_depths, super::super::probcut::PROBCUT_DEPTHS);
        assert!(a.weights.note.contains("round"), "{}", a.weights.note);
        let (b, _) = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap().install(run);
        assert_eq!(a.weights, b.weights, "training depends on the thread count");
    }

    /// Plain negamax to `depth` plies with `eval` at the leaves: a pass costs no ply,
    /// the end of the game scores exactly (the midgame search's rules).
    fn negamax(eval: &PatternEval, board: &Board, depth: u32) -> i32 {
        use crate::eval::Evaluator;
        if depth == 0 {
            return eval.evaluate(board);
        }
        if board.is_game_over() {
            return board.final_score();
        }
        board
            .successors()
            .map(|(mv, next)| -negamax(eval, &next, if mv == crate::Move::Pass { depth } else { depth - 1 }))
            .max()
            .unwrap()
    }

    #[test]
    fn backward_labels_come_from_the_phases_nearer_the_end_only() {
        let all = games();
        let (train_games, validation_games) = all.split_at(all.len() - 300);
        let train_games = &train_games[..1200];
        let start = PatternEval::bundled();
        let stop = AtomicBool::new(false);
        let backward = Backward { depth: 5, share: 0.3, keep_theoretical: false };
        let config = TrainerConfig {
            bootstrap: None,
            backward: Some(backward),
            self_play: SelfPlayConfig { games: 10, depth: 1, ..SelfPlayConfig::default() },
            probcut: None,
            ..small_config()
        };
        let run = |config: TrainerConfig| {
            let (outcome, store, _) = train_run(config, train_games, validation_games);
            (outcome, store)
        };
        let (outcome, store) = run(config.clone());
        let round = &outcome.rounds[0];
        assert_eq!(round.search_depth, Some(5));
        assert!(round.search_rows > 1000 && round.exact_rows > 0, "{round:?}");
        assert_eq!(round.theoretical_rows, 0, "no midgame label from the players' moves");
        // A label searched while its phase was fitted saw only the phases fitted before,
        // which the final weights keep unchanged: a plain negamax of the label's depth
        // with the final weights finds every label again. (A label that had read its own
        // phase, still zero then, would not match.)
        let eval = PatternEval::new(&outcome.weights);
        let labels: Vec<(Board, SearchSpec, i8)> = store.search_labels().collect();
        assert!(labels.len() >= round.search_rows, "{} labels", labels.len());
        let mut checked = 0;
        for (board, spec, score) in labels.iter().step_by(7).take(300) {
            assert!([4, 5].contains(&spec.depth) && spec.selectivity.is_none(), "{spec:?}");
            assert!(board.empty_count() > 8, "solved positions are not searched");
            assert_eq!(negamax(&eval, board, u32::from(spec.depth)), i32::from(*score), "{board:?}");
            checked += 1;
        }
        assert!(checked >= 100);
        // Both depths, about half each.
        let deeper = labels.iter().filter(|l| l.1.depth == 5).count() as f64 / labels.len() as f64;
        assert!((0.45..0.55).contains(&deeper), "{deeper}");
        // Labels from different phases were made by different partial weights.
        let digests: HashSet<u32> = labels.iter().map(|l| l.1.eval).collect();
        assert!(digests.len() > 10, "{} digests", digests.len());
        // Deterministic whatever the thread count; keeping the theoretical scores
        // keeps the positions not searched.
        let (one_thread, _) =
            rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap().install(|| run(config.clone()));
        assert_eq!(outcome.weights, one_thread.weights, "backward training depends on the thread count");
        let keep = TrainerConfig { backward: Some(Backward { keep_theoretical: true, ..backward }), ..config.clone() };
        assert!(
            outcome.weights.note.contains("backward searches depth 5 and 4 full width share 0.3"),
            "{}",
            outcome.weights.note
        );
        let (kept, _) = run(keep);
        assert_eq!(kept.rounds[0].search_rows, round.search_rows);
        assert!(kept.rounds[0].theoretical_rows > 2 * round.search_rows);
        // The leaves must lie beyond the phase and its window; bootstrapping would undo it.
        let shallow = TrainerConfig { backward: Some(Backward { depth: 4, ..backward }), ..config.clone() };
        let err = Trainer::new(shallow, &start, &mut LabelStore::in_memory(), &stop).err().unwrap();
        assert!(matches!(err, TrainError::Setting(ref e) if e.setting == Setting::BackwardDepth), "{err}");
        let both = TrainerConfig { bootstrap: small_config().bootstrap, ..config };
        let err = Trainer::new(both, &start, &mut LabelStore::in_memory(), &stop).err().unwrap();
        assert!(matches!(err, TrainError::Setting(ref e) if e.setting == Setting::BootstrapRounds), "{err}");
    }

    #[test]
    fn bad_settings_are_refused_and_a_stop_keeps_the_labels() {
        let start = PatternEval::bundled();
        let stop = AtomicBool::new(true);
        let mut store = LabelStore::in_memory();
        let bad = TrainerConfig { solve_at: 30, ..small_config() };
        let refused = Trainer::new(bad, &start, &mut store, &stop).err().unwrap();
        assert!(
            matches!(refused, TrainError::Setting(ref e) if e.setting == crate::setting::Setting::SolveAt),
            "{refused}"
        );
        let all = games();
        let err = Trainer::new(small_config(), &start, &mut store, &stop)
            .unwrap()
            .run(all[..50].to_vec(), Validation::Games(Vec::new()), &[], &|_| {})
            .unwrap_err();
        assert!(matches!(err, TrainError::Stopped), "{err}");
        assert!(matches!(
            Trainer::new(small_config(), &start, &mut store, &AtomicBool::new(false)).unwrap().run(
                Vec::new(),
                Validation::HeldOut(0.0),
                &[],
                &|_| {}
            ),
            Err(TrainError::NoGames)
        ));
    }

    #[test]
    fn the_held_out_split_is_a_stable_share_of_the_games() {
        let all = games();
        let n = all.len();
        let (train, validation) = split_games(all.clone(), Validation::HeldOut(0.1)).unwrap();
        assert_eq!(train.len() + validation.len(), n);
        let share = validation.len() as f64 / n as f64;
        assert!((0.08..0.12).contains(&share), "{share} of {n}");
        // The same games each time.
        let (train2, validation2) = split_games(all.clone(), Validation::HeldOut(0.1)).unwrap();
        assert!(train == train2 && validation == validation2);
        let (train0, validation0) = split_games(all.clone(), Validation::HeldOut(0.0)).unwrap();
        assert_eq!((train0.len(), validation0.len()), (n, 0));
        let given = all[..10].to_vec();
        let (t, v) = split_games(all.clone(), Validation::Games(given.clone())).unwrap();
        assert!(t.len() == n && v == given);
        for bad in [1.0, -0.1, f64::NAN] {
            let err = split_games(all.clone(), Validation::HeldOut(bad)).unwrap_err().to_string();
            assert!(err.contains("validation share"), "{err}");
        }
        assert!(matches!(split_games(Vec::new(), Validation::HeldOut(0.1)), Err(TrainError::NoGames)));
    }
}
