//! The search options every searching command shares ([`SearchArgs`]), turned into the
//! library's [`Settings`] by one conversion, so that a flag means the same everywhere.

use clap::Args;

use super::flags;
use crate::search::settings::seconds;
use crate::search::{Level, Settings, SettingsError, Width};
use crate::setting::{OutOfRange, Setting};

/// A settings error as the command line says it: the setting named as its flag (a
/// table that cannot be made names its size instead).
pub fn flag_error(e: SettingsError) -> anyhow::Error {
    match e {
        SettingsError::OutOfRange(e) => flags::out_of_range(&e),
        e => e.into(),
    }
}

/// How hard to search: flattened into `bestmove`, `analyze`, `gtp`, `nboard`, `play`,
/// `book build`, `book deviate` and the training commands. Explicit values override
/// the level's, everywhere.
#[derive(Args, Debug, Clone, Default)]
pub struct SearchArgs {
    /// Level 1 to 14: depth, exact threshold and selectivity (the guide's level table, docs/playing.md; 13 and 14 are for analysis and audits).
    #[arg(long)]
    pub level: Option<u8>,
    /// Midgame search depth in plies, 1 to 60 (overrides the level's).
    #[arg(long, conflicts_with = "exact")]
    pub depth: Option<u32>,
    /// Solve exactly at this many empty squares or fewer, 0 to 60 (overrides the level's).
    #[arg(long, conflicts_with = "exact")]
    pub exact_at: Option<u32>,
    /// Always search to the end of the game (the same as --exact-at 60).
    #[arg(long)]
    pub exact: bool,
    /// Multi-ProbCut selectivity in standard deviations: 0 for full width, else 0.1 to 10,
    /// rounded to tenths (overrides the level's).
    #[arg(long)]
    pub selectivity: Option<f32>,
    /// Time budget per search (a move, a book leaf) in seconds.
    #[arg(long, alias = "time-per-position")]
    pub time: Option<f64>,
    /// Node budget per search.
    #[arg(long)]
    pub nodes: Option<u64>,
    /// Threads (default: the command's).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Transposition table in MiB, per search where searches run side by side
    /// (default: the command's).
    #[arg(long)]
    pub hash_mib: Option<usize>,
    /// The evaluation.
    #[command(flatten)]
    pub(crate) eval: super::EvalChoiceArgs,
}

impl SearchArgs {
    /// The settings these options give over a command's defaults (its table size and
    /// thread count), validated.
    pub fn settings(&self, defaults: &Settings) -> anyhow::Result<Settings> {
        self.settings_unflagged(defaults).map_err(flag_error)
    }

    fn settings_unflagged(&self, defaults: &Settings) -> Result<Settings, SettingsError> {
        let level = self.level.map(Level::new).transpose()?;
        let settings = Settings {
            level: level.or(defaults.level),
            depth: self.depth.or(defaults.depth),
            exact_at: if self.exact { Some(60) } else { self.exact_at.or(defaults.exact_at) },
            width: self.selectivity.map(Width::from_sigmas).transpose()?.or(defaults.width),
            time: self
                .time
                .map(|t| {
                    seconds(t, false)
                        .map_err(|_| OutOfRange::new(Setting::Time, t, "a positive number of seconds up to a year"))
                })
                .transpose()?
                .or(defaults.time),
            nodes: self.nodes.or(defaults.nodes),
            hash_mib: self.hash_mib.unwrap_or(defaults.hash_mib),
            threads: self.threads.unwrap_or(defaults.threads),
            eval: if self.eval.is_given() { self.eval.source() } else { defaults.eval.clone() },
        };
        settings.validate()?;
        Ok(settings)
    }
}
