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

use super::fit::{train, train_backward, TrainConfig, TrainReport};
use super::labels::{LabelStore, LabelStoreError, SearchSpec};
use super::positions::{
    game_positions, label_positions, Dataset, GamePosition, Labeled, TrainGame, THEORETICAL_EMPTIES,
};
use super::probcut::{self, fit_probcut, ProbCutConfig};
use super::selfplay::{self, self_play_positions, SelfPlayPositions};
use super::LabelKind;
use super::Progress;
use crate::board::Board;
use crate::eval::{PatternEval, Weights};
use crate::search::Width;
use crate::setting::{check, OutOfRange, Setting};
use crate::work::StopHandle;

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
    /// raised by this much per move they understate (see `train::positions`).
    pub move_loss: f64,
    /// Bootstrapping rounds (`None`: round 0 only).
    pub bootstrap: Option<Bootstrap>,
    /// Round 0's midgame labels by backward searches (`None`: the games' theoretical
    /// scores).
    pub backward: Option<Backward>,
    /// Self-play games added to the positions (0 games: none).
    pub self_play: SelfPlayPositions,
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
            self_play: SelfPlayPositions::default(),
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
        stop: &'a StopHandle,
    ) -> Result<Trainer<'a>, TrainError> {
        config.validate()?;
        Ok(Trainer { config, start, store, stop: stop.flag() })
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
#[path = "trainer_tests.rs"]
mod tests;
