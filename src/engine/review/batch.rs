//! Many games reviewed at once: one engine per worker thread, each taking the next
//! game, so that a machine's cores review different games (a review's searches are
//! short, and one game's positions depend on nothing but themselves).

use crate::work::StopHandle;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use super::{review_game, AnalysisStore, GameReview, ReviewError};
use crate::engine::{Engine, EngineConfig, EngineError};
use crate::position::Position;
use crate::square::Move;

/// Why a batch of reviews stopped short.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BatchError {
    /// An engine could not be made from the configuration.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// A game could not be reviewed (an illegal move, the store unwritable).
    #[error("game {index}: {source}")]
    Game {
        /// Its index in the batch.
        index: usize,
        /// What went wrong.
        source: ReviewError,
    },
}

/// Reviews `games` (each the moves from the start position) on `jobs` threads, one
/// engine each made from `config` with one search thread. `done(index, review)` is
/// called from a worker as each game is finished, in no set order; returning `false`
/// stops the batch (a caller that could not keep a review). Setting `stop` stops it
/// too: games under review then are dropped, never reported half done. The games
/// reported are the batch's work; an error stops the batch and is returned. `stop` is
/// left set whenever the batch ended before its last game.
pub fn review_games(
    config: &EngineConfig,
    games: &[Vec<Move>],
    jobs: usize,
    store: Option<&AnalysisStore>,
    stop: &StopHandle,
    done: &(dyn Fn(usize, GameReview) -> bool + Sync),
) -> Result<(), BatchError> {
    let stop = stop.flag();
    let mut config = config.clone();
    config.search.threads = 1;
    let workers = jobs.max(1).min(games.len());
    let engines: Vec<Engine> = (0..workers).map(|_| Engine::new(config.clone())).collect::<Result<_, _>>()?;
    let handles: Vec<_> = engines.iter().map(Engine::stop_handle).collect();
    let next = AtomicUsize::new(0);
    let finished = AtomicBool::new(false);
    let work = |mut engine: Engine| -> Result<(), BatchError> {
        while !stop.load(Ordering::Relaxed) {
            let index = next.fetch_add(1, Ordering::Relaxed);
            let Some(moves) = games.get(index) else { break };
            let review = review_game(&mut engine, &Position::START, moves, store, &|_| {}).map_err(|source| {
                stop.store(true, Ordering::Relaxed);
                BatchError::Game { index, source }
            })?;
            if review.interrupted || !done(index, review) {
                stop.store(true, Ordering::Relaxed);
            }
        }
        Ok(())
    };
    std::thread::scope(|scope| {
        // The engines' own stop flags follow `stop`: a game under review stops at once.
        scope.spawn(|| {
            while !finished.load(Ordering::Relaxed) {
                if stop.load(Ordering::Relaxed) {
                    handles.iter().for_each(|h| h.stop());
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        let workers: Vec<_> = engines.into_iter().map(|engine| scope.spawn(|| work(engine))).collect();
        let mut result = Ok(());
        for w in workers {
            let r = w.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            if let (Err(e), Ok(())) = (r, &result) {
                result = Err(e);
            }
        }
        finished.store(true, Ordering::Relaxed);
        result
    })
}
