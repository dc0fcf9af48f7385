//! The command line's names for the library's settings: one table from
//! [`Setting`] to its flag, so that every error the library reports about a setting
//! reaches the user under the flag they typed.

use crate::setting::{OutOfRange, Setting};

/// The flag that sets `setting`.
pub fn flag(setting: Setting) -> &'static str {
    match setting {
        Setting::Level => "--level",
        Setting::Depth => "--depth",
        Setting::ExactAt => "--exact-at",
        Setting::Selectivity => "--selectivity",
        Setting::Nodes => "--nodes",
        Setting::Time => "--time",
        Setting::Threads => "--threads",
        Setting::MaxPly => "--max-ply",
        Setting::MinPly => "--min-ply",
        Setting::MinGames => "--min-games",
        Setting::Error => "--error",
        Setting::Budget => "--budget",
        Setting::Contempt => "--contempt",
        Setting::MaxPositions => "--max-positions",
        Setting::RoundSize => "--round-size",
        Setting::Sample => "--sample",
        Setting::Worst => "--worst",
        Setting::Threshold => "--threshold",
        Setting::Shards => "--shards",
        Setting::ShardIndex => "--index",
        Setting::BookMaxDrop => "--book-max-drop",
        Setting::BookRandomness => "--book-randomness",
        Setting::BookMaxLoss => "--book-max-loss",
        Setting::Games => "--games",
        Setting::Openings => "--openings",
        Setting::Validation => "--validation-share",
        Setting::Phases => "--phases",
        Setting::Lambda => "--lambda",
        Setting::Iterations => "--iterations",
        Setting::Window => "--window",
        Setting::NeighbourWeight => "--neighbour-weight",
        Setting::Features => "--without",
        Setting::SelfPlayGames => "--self-play-games",
        Setting::SelfPlayDepth => "--self-play-depth",
        Setting::LeaveAt => "the self-play departure plies",
        Setting::SelfPlayRandomness => "--self-play-randomness",
        Setting::MoveLoss => "--move-loss",
        Setting::Rounds => "--rounds",
        Setting::BootstrapRounds => "--bootstrap-rounds",
        Setting::BootstrapDepth => "--bootstrap-depth",
        Setting::BootstrapShare => "--bootstrap-share",
        Setting::BackwardDepth => "--backward-depth",
        Setting::BackwardShare => "--backward-share",
        Setting::ProbCutDepth => "--probcut-depth",
        Setting::ProbCutPositions => "--probcut-positions",
        Setting::CalibrationDepths => "--exact-depth/--swing-depth",
        Setting::SolveAt => "--solve-at",
        Setting::SolveEmpties => "--solve-empties",
        Setting::CpusPerTask => "--cpus-per-task",
    }
}

/// `e` with its setting named by its flag.
pub fn out_of_range(e: &OutOfRange) -> anyhow::Error {
    usage(e.named(flag(e.setting)))
}

/// A wrong argument, said by `message` (exit status 2).
pub fn usage(message: impl std::fmt::Display) -> anyhow::Error {
    anyhow::Error::new(UsageError(message.to_string()))
}

/// A wrong argument found after parsing (a value out of range): the command line is at
/// fault, not the work, so the exit status is 2, as for the arguments clap refuses.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// A pool of `--threads` workers (every core when not given) for the library's work
/// that runs on the rayon pool it is called in (a streamed book's back-up).
pub fn thread_pool(threads: Option<usize>) -> anyhow::Result<rayon::ThreadPool> {
    let threads = threads.unwrap_or_else(crate::search::default_threads);
    crate::setting::check(Setting::Threads, threads, 1..=crate::search::MAX_THREADS).map_err(|e| out_of_range(&e))?;
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| anyhow::anyhow!("cannot start {threads} threads: {e}"))
}

/// "1 thread", "2 threads": how summaries say what ran.
pub fn threads_phrase(threads: usize) -> String {
    format!("{threads} thread{}", if threads == 1 { "" } else { "s" })
}

/// A training error, an out-of-range setting named by its flag.
pub(super) fn train_error(e: crate::train::trainer::TrainError) -> anyhow::Error {
    match e {
        crate::train::trainer::TrainError::Setting(e) => super::flags::out_of_range(&e),
        e => e.into(),
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    /// Every long flag of every command and subcommand.
    fn all_flags(cmd: &clap::Command, out: &mut std::collections::BTreeSet<String>) {
        for arg in cmd.get_arguments() {
            if let Some(long) = arg.get_long() {
                out.insert(format!("--{long}"));
            }
        }
        for sub in cmd.get_subcommands() {
            all_flags(sub, out);
        }
    }

    /// The table names real flags: each setting's flag is one some command takes
    /// (a renamed flag would otherwise leave errors naming a flag that does not exist).
    #[test]
    fn every_setting_names_a_flag_some_command_takes() {
        let mut flags = std::collections::BTreeSet::new();
        all_flags(&crate::cli::Cli::command(), &mut flags);
        for setting in Setting::ALL {
            for name in flag(setting).split('/').filter(|f| f.starts_with("--")) {
                assert!(flags.contains(name), "{setting:?} names {name}, which no command takes");
            }
        }
        assert!(flags.len() > 50, "{flags:?}");
    }
}
