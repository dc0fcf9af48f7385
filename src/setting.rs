//! Settings by name, and the one error of a value out of range ([`OutOfRange`]).
//!
//! Every pipeline (search, build, growth, audit, fix, engine, match, training) checks
//! its configuration when it is resolved and names a setting that is out of range by
//! its [`Setting`], never by a command-line flag: the `thorbook` command line maps
//! each setting to its flag, a GUI to its own control.

use std::fmt;

/// A setting a pipeline can be given.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Setting {
    /// A search level.
    Level,
    /// A midgame search depth in plies.
    Depth,
    /// The number of empties from which a search solves exactly.
    ExactAt,
    /// A search's selectivity in standard deviations.
    Selectivity,
    /// A node budget.
    Nodes,
    /// A time budget in seconds.
    Time,
    /// Search threads.
    Threads,
    /// The last ply a book or a walk goes to.
    MaxPly,
    /// The first ply a walk starts from.
    MinPly,
    /// Games a position needs to enter a book.
    MinGames,
    /// How far below the best move a line may be, in discs a move.
    Error,
    /// How far below the best line a line may fall in all, in discs.
    Budget,
    /// Discs a growth concedes to the opponent's moves.
    Contempt,
    /// Leaves a growth may add.
    MaxPositions,
    /// Leaves a growth searches a round.
    RoundSize,
    /// Positions an audit samples.
    Sample,
    /// Worst positions an audit lists.
    Worst,
    /// How far a check may contradict a value before a fix re-searches it, in discs.
    Threshold,
    /// Shards a plan or a self-play run is split into.
    Shards,
    /// The shard a process plays (self-play).
    ShardIndex,
    /// How far below the best book move the engine may still play one, in discs.
    BookMaxDrop,
    /// The engine's randomness among book moves, in discs.
    BookRandomness,
    /// The most discs the engine's book choice may lose against the best.
    BookMaxLoss,
    /// Games of a match or of self-play.
    Games,
    /// Openings a match is played from.
    Openings,
    /// The share of games kept apart to validate a training.
    Validation,
    /// Game phases of an evaluation.
    Phases,
    /// A fit's regularisation.
    Lambda,
    /// A fit's iterations.
    Iterations,
    /// The empties on either side of a phase whose positions a fit also learns from.
    Window,
    /// The weight of those neighbouring positions.
    NeighbourWeight,
    /// The features an evaluation uses.
    Features,
    /// Games of self-play.
    SelfPlayGames,
    /// The depth of self-play's searches.
    SelfPlayDepth,
    /// The plies where self-play leaves its opening.
    LeaveAt,
    /// Self-play's randomness.
    SelfPlayRandomness,
    /// The discs a training target may lose to a move the game did not play.
    MoveLoss,
    /// Rounds of a calibration.
    Rounds,
    /// Rounds of a bootstrap.
    BootstrapRounds,
    /// The depth of a bootstrap's searches.
    BootstrapDepth,
    /// The share of positions a bootstrap relabels.
    BootstrapShare,
    /// The depth of backward labelling's searches.
    BackwardDepth,
    /// The share of positions backward labelling labels.
    BackwardShare,
    /// The deepest ProbCut depth measured.
    ProbCutDepth,
    /// Positions a ProbCut measurement uses per number of empties.
    ProbCutPositions,
    /// The depths a calibration searches.
    CalibrationDepths,
    /// The empties from which training positions are solved exactly.
    SolveAt,
    /// Further numbers of empties whose positions are solved exactly (measurements).
    SolveEmpties,
    /// CPUs a cluster task gets.
    CpusPerTask,
}

impl Setting {
    /// The setting in words, as a sentence names it.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Setting::Level => "level",
            Setting::Depth => "depth",
            Setting::ExactAt => "exact threshold",
            Setting::Selectivity => "selectivity",
            Setting::Nodes => "node budget",
            Setting::Time => "time",
            Setting::Threads => "threads",
            Setting::MaxPly => "last ply",
            Setting::MinPly => "first ply",
            Setting::MinGames => "games a position needs",
            Setting::Error => "error a move",
            Setting::Budget => "error budget",
            Setting::Contempt => "contempt",
            Setting::MaxPositions => "most new positions",
            Setting::RoundSize => "round size",
            Setting::Sample => "sample size",
            Setting::Worst => "worst positions listed",
            Setting::Threshold => "threshold",
            Setting::Shards => "shards",
            Setting::ShardIndex => "shard index",
            Setting::BookMaxDrop => "book's largest drop",
            Setting::BookRandomness => "book randomness",
            Setting::BookMaxLoss => "book's largest loss",
            Setting::Games => "games",
            Setting::Openings => "openings",
            Setting::Validation => "validation share",
            Setting::Phases => "phases",
            Setting::Lambda => "regularisation",
            Setting::Iterations => "iterations",
            Setting::Window => "window",
            Setting::NeighbourWeight => "neighbour weight",
            Setting::Features => "features",
            Setting::SelfPlayGames => "self-play games",
            Setting::SelfPlayDepth => "self-play depth",
            Setting::LeaveAt => "self-play departure plies",
            Setting::SelfPlayRandomness => "self-play randomness",
            Setting::MoveLoss => "move loss",
            Setting::Rounds => "rounds",
            Setting::BootstrapRounds => "bootstrap rounds",
            Setting::BootstrapDepth => "bootstrap depth",
            Setting::BootstrapShare => "bootstrap share",
            Setting::BackwardDepth => "backward labelling depth",
            Setting::BackwardShare => "backward labelling share",
            Setting::ProbCutDepth => "ProbCut depth",
            Setting::ProbCutPositions => "ProbCut positions",
            Setting::CalibrationDepths => "calibration depths",
            Setting::SolveAt => "exact-solve threshold",
            Setting::SolveEmpties => "empties solved exactly",
            Setting::CpusPerTask => "CPUs a task",
        }
    }
}

#[cfg(test)]
impl Setting {
    /// Every setting, for the tests of tables keyed by setting (the command line's flags): a new
    /// variant goes here too, so that the flag table's test covers it.
    pub(crate) const ALL: [Setting; 49] = [
        Setting::Level,
        Setting::Depth,
        Setting::ExactAt,
        Setting::Selectivity,
        Setting::Nodes,
        Setting::Time,
        Setting::Threads,
        Setting::MaxPly,
        Setting::MinPly,
        Setting::MinGames,
        Setting::Error,
        Setting::Budget,
        Setting::Contempt,
        Setting::MaxPositions,
        Setting::RoundSize,
        Setting::Sample,
        Setting::Worst,
        Setting::Threshold,
        Setting::Shards,
        Setting::ShardIndex,
        Setting::BookMaxDrop,
        Setting::BookRandomness,
        Setting::BookMaxLoss,
        Setting::Games,
        Setting::Openings,
        Setting::Validation,
        Setting::Phases,
        Setting::Lambda,
        Setting::Iterations,
        Setting::Window,
        Setting::NeighbourWeight,
        Setting::Features,
        Setting::SelfPlayGames,
        Setting::SelfPlayDepth,
        Setting::LeaveAt,
        Setting::SelfPlayRandomness,
        Setting::MoveLoss,
        Setting::Rounds,
        Setting::BootstrapRounds,
        Setting::BootstrapDepth,
        Setting::BootstrapShare,
        Setting::BackwardDepth,
        Setting::BackwardShare,
        Setting::ProbCutDepth,
        Setting::ProbCutPositions,
        Setting::CalibrationDepths,
        Setting::SolveAt,
        Setting::SolveEmpties,
        Setting::CpusPerTask,
    ];
}

impl fmt::Display for Setting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

/// A setting whose value is out of its range: "`setting` must be `range`, got
/// `value`".
///
/// What a caller matches on is the [`Setting`]; the value as given and the range in
/// words are the message's (settings are integers, reals, pairs and names, and their
/// ranges rules such as "a divisor of 60"), read through `Display` or
/// [`OutOfRange::named`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{setting} must be {range}, got {value}")]
#[non_exhaustive]
pub struct OutOfRange {
    /// The setting.
    pub setting: Setting,
    value: String,
    range: String,
}

impl OutOfRange {
    /// `setting`'s `value` is not within `range`.
    pub(crate) fn new(setting: Setting, value: impl fmt::Display, range: impl Into<String>) -> OutOfRange {
        OutOfRange { setting, value: value.to_string(), range: range.into() }
    }

    /// The same message with the setting named by `name` (a flag, a control's label).
    pub fn named(&self, name: &str) -> String {
        format!("{name} must be {}, got {}", self.range, self.value)
    }
}

/// `Ok` when `value` is in `range`, else the setting's error.
pub(crate) fn check<T: PartialOrd + fmt::Display>(
    setting: Setting,
    value: T,
    range: std::ops::RangeInclusive<T>,
) -> Result<(), OutOfRange> {
    if range.contains(&value) {
        Ok(())
    } else {
        Err(OutOfRange::new(setting, &value, format!("from {} to {}", range.start(), range.end())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_out_of_range_names_the_setting_in_words_or_by_a_given_name() {
        let e = check(Setting::MaxPly, 70u32, 1..=60).unwrap_err();
        assert_eq!(e.to_string(), "last ply must be from 1 to 60, got 70");
        assert_eq!(e.named("--max-ply"), "--max-ply must be from 1 to 60, got 70");
        assert!(check(Setting::MaxPly, 60u32, 1..=60).is_ok());
        assert!(check(Setting::Error, -1i32, 0..=64).is_err());
    }

    #[test]
    fn every_setting_is_listed_once_with_words_of_its_own() {
        let words: std::collections::HashSet<&str> = Setting::ALL.iter().map(|s| s.describe()).collect();
        assert_eq!(words.len(), Setting::ALL.len());
    }
}
