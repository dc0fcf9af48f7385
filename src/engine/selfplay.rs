//! Self-play games for book builders: the engine plays both sides from an opening line
//! or from the start through a book with random choices, at a fixed level, depth or
//! node budget, one search thread a game and games in parallel.
//!
//! Game `i` depends only on the configuration and `i`: its opening is line
//! `i mod n`, its book choices are drawn from a generator seeded by the seed and `i`,
//! and each game starts from an empty table. So a run can be cut into shards (game
//! ranges) on a cluster, or stopped and resumed, and the games are the same bytes.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;

use super::game::Game;
use super::{Engine, EngineConfig, EngineError};
use crate::square::Move;

/// How to make self-play games.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SelfPlayConfig {
    /// The engine: its search (level, depth or nodes; one thread), its book and how
    /// it picks book moves (randomness), and the seed.
    pub engine: EngineConfig,
    /// Opening lines: game `i` starts with line `i mod n`. Empty: every game starts at
    /// the start position.
    pub openings: Vec<Vec<Move>>,
    /// Games played at once.
    pub threads: usize,
}

impl Default for SelfPlayConfig {
    fn default() -> Self {
        SelfPlayConfig { engine: EngineConfig::default(), openings: Vec::new(), threads: 1 }
    }
}

/// Why self-play cannot run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SelfPlayError {
    /// The engine cannot be made.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// A time limit makes games depend on the machine's speed.
    #[error("self-play games are reproducible only under a level, depth or node budget, not a time limit")]
    TimeLimit,
    /// An opening line that cannot be played.
    #[error("opening {index}: {source}")]
    Opening {
        /// 1-based line.
        index: usize,
        /// The move that cannot be played.
        source: super::game::GameError,
    },
    /// Writing a game failed.
    #[error("writing the games: {0}")]
    Write(#[from] std::io::Error),
    /// The thread pool.
    #[error("cannot start {threads} threads")]
    Threads {
        /// Threads asked for.
        threads: usize,
        /// Why not.
        source: rayon::ThreadPoolBuildError,
    },
}

/// One finished game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SelfPlayGame {
    /// Its index in the run.
    pub index: u64,
    /// The moves from the start, passes included.
    pub moves: Vec<Move>,
    /// Black's final disc difference (empties to the winner).
    pub black_score: i32,
}

impl SelfPlayConfig {
    fn check(&self) -> Result<(), SelfPlayError> {
        if self.engine.search.time.is_some() {
            return Err(SelfPlayError::TimeLimit);
        }
        for (i, line) in self.openings.iter().enumerate() {
            let mut game = Game::default();
            for &mv in line {
                game.play_inferring_pass(mv).map_err(|source| SelfPlayError::Opening { index: i + 1, source })?;
            }
        }
        self.engine.validate()?;
        Ok(())
    }

    /// One engine of a worker: one search thread.
    fn engine(&self) -> Result<Engine, EngineError> {
        let mut config = self.engine.clone();
        config.search.threads = 1;
        config.ponder = false;
        Engine::new(config)
    }

    /// Plays game `index` with `engine`.
    fn play(&self, engine: &mut Engine, index: u64) -> Result<SelfPlayGame, EngineError> {
        engine.new_game();
        engine.reseed(crate::zobrist::mix64(self.engine.seed ^ crate::zobrist::mix64(index)));
        let mut game = Game::default();
        if !self.openings.is_empty() {
            let line = &self.openings[usize::try_from(index).unwrap_or(0) % self.openings.len()];
            for &mv in line {
                game.play_inferring_pass(mv).expect("openings are checked first");
            }
        }
        while !game.is_over() {
            let chosen = engine.choose(&game.position())?;
            game.play(chosen.mv).expect("the engine plays legal moves");
        }
        Ok(SelfPlayGame { index, moves: game.moves(), black_score: game.black_score() })
    }
}

/// Plays the games `range` (in chunks of a few games per thread), calling `on_game`
/// for each in index order; stops between chunks when `stop` is set. Returns the
/// games played.
pub fn play_games(
    config: &SelfPlayConfig,
    range: Range<u64>,
    stop: &AtomicBool,
    on_game: &mut dyn FnMut(SelfPlayGame) -> std::io::Result<()>,
) -> Result<u64, SelfPlayError> {
    config.check()?;
    let threads = config.threads.max(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|source| SelfPlayError::Threads { threads, source })?;
    let mut engines: Vec<Engine> = (0..threads).map(|_| config.engine()).collect::<Result<_, _>>()?;
    let chunk = 2 * threads as u64;
    let mut next = range.start;
    let mut played = 0;
    while next < range.end && !stop.load(Ordering::Relaxed) {
        let end = (next + chunk).min(range.end);
        let ids: Vec<u64> = (next..end).collect();
        // Each engine plays the games i ≡ k (mod threads) of the chunk.
        let games: Vec<Vec<Result<SelfPlayGame, EngineError>>> = pool.install(|| {
            engines
                .par_iter_mut()
                .enumerate()
                .map(|(k, engine)| ids.iter().skip(k).step_by(threads).map(|&i| config.play(engine, i)).collect())
                .collect()
        });
        let mut ordered: Vec<SelfPlayGame> = games.into_iter().flatten().collect::<Result<_, _>>()?;
        ordered.sort_unstable_by_key(|g| g.index);
        for g in ordered {
            on_game(g)?;
            played += 1;
        }
        next = end;
    }
    Ok(played)
}
