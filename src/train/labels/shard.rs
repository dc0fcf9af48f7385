//! Exact labels made where they are costly: the solves of a set of games' positions as
//! a job cut into shards that run anywhere (one machine, a Slurm job array, Kubernetes
//! indexed jobs), each appending to a label store of its own; the stores merged are
//! the labels one process would have made.
//!
//! Solves are the part of labelling that needs a cluster: a position of 18 empties
//! takes milliseconds, one of 25 about 13 s on a core, and every empty square beyond
//! roughly doubles it. The searches of backward labelling (`train
//! --backward-depth`) run at thousands a second and stay in `train`.
//!
//! A shard takes the positions whose canonical board hashes into its slice
//! ([`in_shard`]), so shards never overlap whatever the games' order, and a shard
//! stopped and started again solves only what its store lacks.

use std::sync::atomic::Ordering::Relaxed;

use super::LabelStore;
use crate::board::Board;
use crate::eval::PatternEval;
use crate::setting::{check, Setting};
use crate::train::positions::{game_positions, GamePosition, TrainGame};
use crate::train::trainer::TrainError;
use crate::train::ProgressFn;
use crate::work::StopHandle;

/// The most shards a job is cut into.
pub(crate) const MAX_SHARDS: u32 = 100_000;

/// Which positions of the games are solved, and which shard of them this run solves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SolveJob {
    /// Positions with at most this many empties (0..=24; 0: none of them).
    pub solve_at: u32,
    /// And the positions with exactly these numbers of empties (each 1..=30).
    pub solve_empties: Vec<u32>,
    /// Shards the job is cut into (1..=[`MAX_SHARDS`]).
    pub shards: u32,
    /// The shard this run solves (0..shards).
    pub index: u32,
}

impl SolveJob {
    /// Refuses settings out of range, naming them.
    pub(crate) fn validate(&self) -> Result<(), TrainError> {
        check(Setting::SolveAt, self.solve_at, 0..=24)?;
        for &e in &self.solve_empties {
            check(Setting::SolveEmpties, e, 1..=30)?;
        }
        check(Setting::Shards, self.shards, 1..=MAX_SHARDS)?;
        check(Setting::ShardIndex, self.index, 0..=self.shards - 1)?;
        Ok(())
    }
}

/// What a shard found and did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SolveOutcome {
    /// The shard's positions at each number of empties (index 0..=60).
    pub positions: [usize; 61],
    /// Of them, solved by this run (the rest were in the store).
    pub solved: usize,
}

/// The positions whose exact scores `train` and `eval-error` use: at most `solve_at`
/// empties, or exactly one of `solve_empties`, in the games' order.
pub(crate) fn solve_targets(positions: &[GamePosition], solve_at: u32, solve_empties: &[u32]) -> Vec<Board> {
    positions
        .iter()
        .map(|p| p.board)
        .filter(|b| b.empty_count() <= solve_at || solve_empties.contains(&b.empty_count()))
        .collect()
}

/// Whether the canonical `board` is in shard `index` of `shards`: its key, mixed,
/// scaled onto `0..shards` (equal slices of the key space).
pub(crate) fn in_shard(board: &Board, shards: u32, index: u32) -> bool {
    let mixed = board.key().wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let shard = (u128::from(mixed) * u128::from(shards)) >> 64;
    shard == u128::from(index)
}

/// Solves the positions of `games` that `job` selects and its shard holds, those
/// `store` lacks, appending each batch as it finishes (see
/// [`LabelStore::solve_missing`]); `order` only orders and seeds the solves. Runs on the
/// current rayon pool. A set `stop` ends it with [`TrainError::Stopped`], what was
/// solved kept.
pub(crate) fn solve_shard(
    games: &[TrainGame],
    job: &SolveJob,
    order: &PatternEval,
    store: &mut LabelStore,
    stop: &StopHandle,
    progress: ProgressFn,
) -> Result<SolveOutcome, TrainError> {
    let stop = stop.flag();
    job.validate()?;
    let targets: Vec<Board> = solve_targets(&game_positions(games), job.solve_at, &job.solve_empties)
        .into_iter()
        .filter(|b| in_shard(b, job.shards, job.index))
        .collect();
    let mut positions = [0; 61];
    for b in &targets {
        positions[b.empty_count() as usize] += 1;
    }
    let solved = store.solve_missing(&targets, order, stop, progress)?;
    if stop.load(Relaxed) {
        return Err(TrainError::Stopped);
    }
    Ok(SolveOutcome { positions, solved })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::PatternEval;

    fn games() -> Vec<TrainGame> {
        crate::train::bundled_games().into_iter().step_by(50).collect()
    }

    #[test]
    fn shards_partition_the_positions_and_merge_to_the_one_process_store() {
        let games = games();
        let job = SolveJob { solve_at: 8, solve_empties: vec![13], shards: 1, index: 0 };
        let eval = PatternEval::bundled();
        let stop = StopHandle::new();
        let mut whole = LabelStore::in_memory();
        let all = solve_shard(&games, &job, &eval, &mut whole, &stop, &|_| {}).unwrap();
        let targets = solve_targets(&game_positions(&games), 8, &[13]);
        assert_eq!(all.solved, targets.len());
        assert!(all.positions[13] > 10 && all.positions[9..13].iter().all(|&n| n == 0), "{:?}", all.positions);
        let mut merged = LabelStore::in_memory();
        let mut sizes = Vec::new();
        for index in 0..3 {
            let mut shard = LabelStore::in_memory();
            let out =
                solve_shard(&games, &SolveJob { shards: 3, index, ..job.clone() }, &eval, &mut shard, &stop, &|_| {})
                    .unwrap();
            sizes.push(out.solved);
            assert_eq!(merged.merge("merged", &shard, "shard").unwrap(), out.solved, "shards overlap");
        }
        assert_eq!(sizes.iter().sum::<usize>(), targets.len());
        assert!(sizes.iter().all(|&n| n * 5 > targets.len()), "unequal shards {sizes:?}");
        assert_eq!(merged.counts(), whole.counts());
        for b in &targets {
            assert_eq!(merged.exact(b), whole.exact(b));
        }
        // A shard run again solves nothing.
        let again = solve_shard(&games, &job, &eval, &mut whole, &stop, &|_| {}).unwrap();
        assert_eq!(again.solved, 0);
    }

    #[test]
    fn bad_jobs_are_refused_by_setting() {
        let job = SolveJob { solve_at: 8, solve_empties: vec![], shards: 2, index: 0 };
        let setting = |j: SolveJob| match j.validate() {
            Err(TrainError::Setting(e)) => Some(e.setting),
            _ => None,
        };
        assert_eq!(setting(job.clone()), None);
        assert_eq!(setting(SolveJob { index: 2, ..job.clone() }), Some(Setting::ShardIndex));
        assert_eq!(setting(SolveJob { shards: 0, ..job.clone() }), Some(Setting::Shards));
        assert_eq!(setting(SolveJob { solve_at: 25, ..job.clone() }), Some(Setting::SolveAt));
        assert_eq!(setting(SolveJob { solve_empties: vec![31], ..job }), Some(Setting::SolveEmpties));
    }
}
