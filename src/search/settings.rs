//! How hard to search, said once for every command and pipeline: [`Settings`] (a level,
//! explicit values that override it, budgets, the table size, threads and the
//! evaluation), checked and resolved by one [`Settings::resolve`] into [`Resolved`],
//! whose [`Strength`] is what one search runs with.
//!
//! The precedence rule, everywhere: an explicit depth, exact threshold or width wins;
//! otherwise the level's value applies; without a level, the caller's fallback does (an
//! engine's: the level nearest an explicit depth, or the default level; a deviation's:
//! the book's own settings).

use std::time::Duration;

use super::level::Level;
use super::midgame::{Limits, Selectivity};
use super::tt::{TableError, TranspositionTable};
use crate::board::Board;
use crate::eval::EvalSource;
use crate::setting::{check, OutOfRange, Setting};

/// The largest thread count a search accepts.
pub(crate) const MAX_THREADS: usize = 256;

/// Threads to use when none are given: the hardware's, at most [`MAX_THREADS`] (a
/// default must be a valid setting on any host).
pub(crate) fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, MAX_THREADS)
}

/// The longest time budget any setting accepts: a year.
pub(crate) const MAX_SECONDS: f64 = 31_536_000.0;

/// Multi-ProbCut selectivity of a game under a clock with no width given: more cuts
/// than the levels' 1.5 σ, trading width for depth where every move's time is short.
/// In 4 s games (`match --clock 4`, one thread each, no book, the same weights, 400
/// games) 1.0 σ against 1.5 σ scored 186–68–146, Elo +35 (95% +4 .. +66).
const CLOCK_SELECTIVITY: Option<Selectivity> = Selectivity::from_tenths(10);

/// Whether the midgame search may cut moves by Multi-ProbCut.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Width {
    /// Every move searched.
    Full,
    /// Multi-ProbCut at this selectivity.
    Selective(Selectivity),
}

impl Width {
    /// From a number of standard deviations as people write it: 0 for full width, else
    /// 0.1 to 10 rounded to tenths (what a book header can record exactly).
    pub fn from_sigmas(sigmas: f32) -> Result<Width, SettingsError> {
        if sigmas == 0.0 {
            return Ok(Width::Full);
        }
        let tenths = (sigmas * 10.0).round();
        match (sigmas.is_finite() && (1.0..=100.0).contains(&tenths)).then(|| Selectivity::from_tenths(tenths as u8)) {
            Some(Some(s)) => Ok(Width::Selective(s)),
            _ => Err(OutOfRange::new(
                Setting::Selectivity,
                sigmas,
                "0 (full width) or from 0.1 to 10 standard deviations",
            )
            .into()),
        }
    }

    /// The selectivity a search takes (`None`: full width).
    pub(crate) fn selectivity(self) -> Option<Selectivity> {
        match self {
            Width::Full => None,
            Width::Selective(s) => Some(s),
        }
    }

    /// The width of a search's selectivity.
    pub(crate) fn of(selectivity: Option<Selectivity>) -> Width {
        selectivity.map_or(Width::Full, Width::Selective)
    }
}

impl std::fmt::Display for Width {
    /// "full width", or the cut as `book info` writes it ("selectivity 1.5 σ").
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Width::Full => f.write_str("full width"),
            Width::Selective(s) => write!(f, "selectivity {:.1} σ", s.sigmas()),
        }
    }
}

/// Settings that cannot be searched with: a value out of range, or a table that
/// cannot be made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SettingsError {
    /// A value out of its range, by setting.
    #[error(transparent)]
    OutOfRange(#[from] OutOfRange),
    /// The table: out of range, or not allocatable.
    #[error(transparent)]
    Table(#[from] TableError),
}

/// `value` as a person would write it back: plain for everyday sizes, in scientific
/// notation beyond them (`1e300`, not its 301 digits; `1e-300`, not 300 zeros).
pub(crate) fn shown(value: f64) -> String {
    if value == 0.0 || !value.is_finite() || (1e-4..1e9).contains(&value.abs()) {
        format!("{value}")
    } else {
        format!("{value:e}")
    }
}

/// Seconds as a duration: finite, at most a year, and positive unless `zero_ok`. The
/// one check behind every time setting (command line, GTP, book builds); the message
/// completes a sentence that starts with the setting's name.
pub(crate) fn seconds(value: f64, zero_ok: bool) -> Result<Duration, String> {
    let low_ok = if zero_ok { value >= 0.0 } else { value > 0.0 };
    if !(low_ok && value <= MAX_SECONDS) {
        let what = if zero_ok { "a number of seconds from 0" } else { "a positive number of seconds" };
        return Err(format!("must be {what} up to a year, got {}", shown(value)));
    }
    Duration::try_from_secs_f64(value).map_err(|e| format!("{}: {e}", shown(value)))
}

/// Settings that passed every check, with the level resolved: what a search runs
/// with. Only [`Settings::resolve`] (and the crate's book and audit pipelines, over their own fallback) make one, so a
/// function that takes a `Resolved` cannot be handed settings nobody checked (the way
/// shakmaty's `Setup` becomes a `Chess` only through validation).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Resolved {
    strength: Strength,
    hash_mib: usize,
    threads: usize,
    eval: EvalSource,
}

impl Resolved {
    /// The depth, exact threshold, budgets and width each search runs with: without a
    /// level, an explicit depth brings the exact threshold and width of the level
    /// nearest it; a time or node budget alone deepens without a depth limit; nothing
    /// at all is the default level (over a fallback, the fallback's values instead).
    pub(crate) fn strength(&self) -> Strength {
        self.strength
    }

    /// The transposition table's size in MiB.
    pub(crate) fn hash_mib(&self) -> usize {
        self.hash_mib
    }

    /// Threads.
    pub(crate) fn threads(&self) -> usize {
        self.threads
    }

    /// The evaluation.
    pub(crate) fn eval(&self) -> &EvalSource {
        &self.eval
    }

    /// A table of the size asked for; one that cannot be allocated is an error value,
    /// never an abort.
    pub(crate) fn table(&self) -> Result<TranspositionTable, SettingsError> {
        Ok(TranspositionTable::try_new(self.hash_mib)?)
    }
}

/// How hard to search: what a user asks for. Build one with [`Settings::default`] (the
/// default level) or [`Settings::at_level`], set what you need (`with_depth`, …), and
/// every pipeline checks it before it searches ([`Settings::effective_strength`] tells
/// what a search then runs at).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Settings {
    /// The level whose depth, exact threshold and width apply where no explicit value
    /// is given.
    pub level: Option<Level>,
    /// Midgame depth in plies (overrides the level's).
    pub depth: Option<u32>,
    /// Solve exactly at this many empties or fewer (overrides the level's).
    pub exact_at: Option<u32>,
    /// Full width or Multi-ProbCut (overrides the level's).
    pub width: Option<Width>,
    /// Time budget per search.
    pub time: Option<Duration>,
    /// Node budget per search.
    pub nodes: Option<u64>,
    /// Transposition table size in MiB (per search where searches run side by side).
    pub hash_mib: usize,
    /// Threads.
    pub threads: usize,
    /// The evaluation.
    pub eval: EvalSource,
}

impl Default for Settings {
    /// Nothing explicit: the default level, a 64 MiB table, one thread, the bundled
    /// evaluation.
    fn default() -> Settings {
        Settings {
            level: None,
            depth: None,
            exact_at: None,
            width: None,
            time: None,
            nodes: None,
            hash_mib: 64,
            threads: 1,
            eval: EvalSource::Bundled,
        }
    }
}

impl Settings {
    /// These settings with the level `level`.
    pub fn with_level(self, level: Level) -> Settings {
        Settings { level: Some(level), ..self }
    }

    /// These settings with the midgame depth `depth` (over the level's).
    pub fn with_depth(self, depth: u32) -> Settings {
        Settings { depth: Some(depth), ..self }
    }

    /// These settings solving exactly from `empties` empties (over the level's).
    pub fn with_exact_at(self, empties: u32) -> Settings {
        Settings { exact_at: Some(empties), ..self }
    }

    /// These settings with the width `width` (over the level's).
    pub fn with_width(self, width: Width) -> Settings {
        Settings { width: Some(width), ..self }
    }

    /// These settings with a time budget a search.
    pub fn with_time(self, time: Duration) -> Settings {
        Settings { time: Some(time), ..self }
    }

    /// These settings with a node budget a search.
    pub fn with_nodes(self, nodes: u64) -> Settings {
        Settings { nodes: Some(nodes), ..self }
    }

    /// These settings with a table of `mib` MiB.
    pub fn with_hash_mib(self, mib: usize) -> Settings {
        Settings { hash_mib: mib, ..self }
    }

    /// These settings on `threads` threads.
    pub fn with_threads(self, threads: usize) -> Settings {
        Settings { threads, ..self }
    }

    /// These settings with the evaluation `eval`.
    pub fn with_eval(self, eval: EvalSource) -> Settings {
        Settings { eval, ..self }
    }

    /// A level and nothing explicit.
    pub fn at_level(level: Level) -> Settings {
        Settings { level: Some(level), ..Settings::default() }
    }

    /// What a search with these settings runs at, once every setting is checked: the
    /// level's depth, exact threshold and width where no explicit value is given (an
    /// explicit depth brings those of the level nearest it; a time or node budget
    /// alone deepens without a depth limit; nothing at all is the default level).
    pub fn effective_strength(&self) -> Result<Strength, SettingsError> {
        self.resolve().map(|r| r.strength())
    }

    /// Checks every range and resolves the level: the settings a search runs with,
    /// an engine's way (see [`Resolved::strength`]). The only way to a [`Resolved`].
    pub(crate) fn resolve(&self) -> Result<Resolved, SettingsError> {
        self.validate()?;
        Ok(self.resolved(self.strength()))
    }

    /// As [`Settings::resolve`], over `fallback`: the values that apply where neither
    /// an explicit value nor a level gives one (a book's leaves, an audit's searches).
    pub(crate) fn resolve_over(&self, fallback: Strength) -> Result<Resolved, SettingsError> {
        self.validate()?;
        Ok(self.resolved(self.strength_over(fallback)))
    }

    fn resolved(&self, strength: Strength) -> Resolved {
        Resolved { strength, hash_mib: self.hash_mib, threads: self.threads, eval: self.eval.clone() }
    }

    /// Checks every range; the error names the setting.
    pub(crate) fn validate(&self) -> Result<(), SettingsError> {
        if let Some(d) = self.depth {
            check(Setting::Depth, d, 1..=60)?;
        }
        if let Some(e) = self.exact_at {
            check(Setting::ExactAt, e, 0..=60)?;
        }
        if self.nodes == Some(0) {
            return Err(OutOfRange::new(Setting::Nodes, 0, "at least 1").into());
        }
        if let Some(t) = self.time.filter(|t| t.is_zero() || t.as_secs_f64() > MAX_SECONDS) {
            return Err(
                OutOfRange::new(Setting::Time, t.as_secs_f64(), "a positive number of seconds up to a year").into()
            );
        }
        check(Setting::Threads, self.threads, 1..=MAX_THREADS)?;
        Ok(TranspositionTable::check_size(self.hash_mib)?)
    }

    /// A time or node budget is the only limit given: no depth, no level.
    pub(crate) fn budget_only(&self) -> bool {
        self.level.is_none() && self.depth.is_none() && (self.time.is_some() || self.nodes.is_some())
    }

    /// What these settings mean for a search under a clock: with neither a level nor a
    /// depth, deepening until the clock's share for each move, solving exactly as that
    /// share allows (the rest as [`Settings::strength`]); `None` when a level or a
    /// depth was given, which then caps the search while the clock only limits it.
    /// Without a width of its own it cuts at [`CLOCK_SELECTIVITY`].
    pub(crate) fn clock_strength(&self) -> Option<Strength> {
        (self.level.is_none() && self.depth.is_none()).then(|| Strength {
            depth: None,
            exact_at: self.exact_at,
            selectivity: self.width.map_or(CLOCK_SELECTIVITY, Width::selectivity),
            ..self.strength()
        })
    }

    /// What these settings mean for a search, an engine's way: without a level, an
    /// explicit depth brings the exact threshold and width of the level nearest it; a
    /// time or node budget alone deepens without a depth limit (solving exactly as each
    /// search's time allows); nothing at all is the default level.
    pub(crate) fn strength(&self) -> Strength {
        let fallback = match self.depth {
            Some(d) => Strength::for_depth(d),
            None if self.budget_only() => Strength { exact_at: None, ..Strength::level(Level::DEFAULT) },
            None => Strength::level(Level::DEFAULT),
        };
        self.strength_over(fallback)
    }

    /// What these settings mean over `fallback`, the values that apply where neither an
    /// explicit value nor a level gives one.
    ///
    /// A time or node budget with neither a depth nor a level deepens until the budget.
    pub(crate) fn strength_over(&self, fallback: Strength) -> Strength {
        let base = self.level.map_or(fallback, Strength::level);
        Strength {
            depth: if self.budget_only() { None } else { self.depth.or(base.depth) },
            exact_at: self.exact_at.or(base.exact_at),
            time: self.time.or(base.time),
            nodes: self.nodes.or(base.nodes),
            selectivity: self.width.map_or(base.selectivity, Width::selectivity),
        }
    }
}

/// How strong and how long one search is: settings resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Strength {
    /// Midgame depth limit (`None`: until the time or node budget).
    pub depth: Option<u32>,
    /// Solve exactly at this many empties or fewer; `None`: as many as each search's
    /// time budget allows (`Strength::exact_at_for_time`), or the default level's
    /// threshold without a budget.
    pub exact_at: Option<u32>,
    /// Time budget per search.
    pub time: Option<Duration>,
    /// Node budget per search.
    pub nodes: Option<u64>,
    /// Multi-ProbCut selectivity of the midgame search (`None`: full width).
    pub selectivity: Option<Selectivity>,
}

impl Strength {
    /// The strength of a level: its depth, exact threshold and width, no budget.
    pub(crate) fn level(level: Level) -> Strength {
        let spec = level.spec();
        Strength {
            depth: Some(spec.depth),
            exact_at: Some(spec.exact_at),
            time: None,
            nodes: None,
            selectivity: spec.selectivity,
        }
    }

    /// Depth `depth` with the exact threshold and width of the level whose depth is
    /// nearest (what NBoard's `set depth` asks for).
    pub(crate) fn for_depth(depth: u32) -> Strength {
        Strength { depth: Some(depth), ..Strength::level(Level::nearest_depth(depth)) }
    }

    /// The empties from which a search of about `budget` can solve exactly: an exact
    /// solve takes 2–3× longer per empty square (FFO #20–39 on one thread: 0.1–0.6 s
    /// at 20 empties, 8 s at 24).
    pub(crate) fn exact_at_for_time(budget: Duration) -> u32 {
        match budget.as_secs_f64() {
            t if t < 0.05 => 14,
            t if t < 0.2 => 16,
            t if t < 0.6 => 18,
            t if t < 2.0 => 20,
            t if t < 8.0 => 22,
            _ => 24,
        }
    }

    /// The exact threshold for a search of `time` (a clock's share, or the own budget).
    pub(crate) fn exact_at_with(&self, time: Option<Duration>) -> u32 {
        self.exact_at.unwrap_or_else(|| match time.or(self.time) {
            Some(t) => Strength::exact_at_for_time(t),
            None => Level::DEFAULT.spec().exact_at,
        })
    }

    /// The search limits of `board` at this strength (exact when few enough squares are
    /// empty for its time).
    pub fn limits(&self, board: &Board) -> Limits {
        self.limits_at(board.empty_count(), None)
    }

    /// The search limits of `board` with `time` in place of this strength's budget (and
    /// the exact threshold that time allows, unless this strength has its own).
    pub fn limits_within(&self, board: &Board, time: Duration) -> Limits {
        self.limits_at(board.empty_count(), Some(time))
    }

    /// The search limits for a position with `empties` empty squares, the time budget
    /// replaced by `time` when given.
    pub(crate) fn limits_at(&self, empties: u32, time: Option<Duration>) -> Limits {
        let time = time.or(self.time);
        Limits {
            depth: self.depth,
            nodes: self.nodes,
            time,
            target: None,
            exact: empties <= self.exact_at_with(time),
            exclude: 0,
            selectivity: self.selectivity,
        }
    }

    /// The limits of a move under a clock: at most `limit`, aiming at `target` (`None`:
    /// all of `limit`), solving exactly from the empties that the time the move should
    /// take allows (unless this strength has its own threshold).
    pub(crate) fn clock_limits(&self, empties: u32, limit: Duration, target: Option<Duration>) -> Limits {
        let aim = target.unwrap_or(limit);
        Limits {
            time: Some(limit),
            target,
            exact: empties <= self.exact_at_with(Some(aim)),
            ..self.limits_at(empties, Some(limit))
        }
    }
}

impl Default for Strength {
    fn default() -> Strength {
        Strength::level(Level::DEFAULT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn level(n: u8) -> Level {
        Level::new(n).unwrap()
    }

    #[test]
    fn explicit_values_override_the_level_and_the_fallback() {
        let l1 = level(1).spec();
        let s = Settings { level: Some(level(1)), depth: Some(20), exact_at: Some(30), ..Settings::default() };
        let st = s.strength();
        assert_eq!((st.depth, st.exact_at, st.selectivity), (Some(20), Some(30), l1.selectivity));
        let fallback = Strength { depth: Some(9), exact_at: Some(11), time: None, nodes: None, selectivity: None };
        // With a level the fallback does not apply; without one it does.
        assert_eq!(s.strength_over(fallback), st);
        let bare = Settings { exact_at: Some(5), ..Settings::default() };
        assert_eq!(bare.strength_over(fallback), Strength { exact_at: Some(5), ..fallback });
        let wide = Settings { width: Some(Width::Full), ..Settings::at_level(level(8)) };
        assert_eq!(wide.strength().selectivity, None);
    }

    #[test]
    fn the_engine_fallback() {
        assert_eq!(Settings::default().strength(), Strength::level(Level::DEFAULT));
        let d = Settings { depth: Some(13), ..Settings::default() }.strength();
        assert_eq!(d, Strength::for_depth(13));
        let t = Settings { time: Some(Duration::from_millis(100)), ..Settings::default() }.strength();
        assert_eq!((t.depth, t.exact_at, t.selectivity), (None, None, Level::DEFAULT.spec().selectivity));
        assert!(t.limits_at(16, None).exact && !t.limits_at(17, None).exact);
        // Under a clock: no depth, the clock's width unless one is given, and none of
        // it with a level or a depth (they cap the search).
        let clock = Settings::default().clock_strength().unwrap();
        assert_eq!((clock.depth, clock.exact_at, clock.selectivity), (None, None, CLOCK_SELECTIVITY));
        assert_ne!(CLOCK_SELECTIVITY, Level::DEFAULT.spec().selectivity);
        let full = Settings { width: Some(Width::Full), ..Settings::default() }.clock_strength().unwrap();
        assert_eq!(full.selectivity, None);
        assert_eq!(Settings::at_level(level(8)).clock_strength(), None);
        assert_eq!(Settings { depth: Some(12), ..Settings::default() }.clock_strength(), None);
    }

    #[test]
    fn widths_parse_one_way() {
        assert_eq!(Width::from_sigmas(0.0), Ok(Width::Full));
        assert_eq!(Width::from_sigmas(1.54).unwrap().selectivity().unwrap().tenths(), 15);
        for bad in [-1.0, 0.04, 10.06, f32::NAN, f32::INFINITY] {
            assert!(
                matches!(
                    Width::from_sigmas(bad),
                    Err(SettingsError::OutOfRange(OutOfRange { setting: Setting::Selectivity, .. }))
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn validation_names_the_setting() {
        let ok = Settings::default();
        assert!(ok.validate().is_ok());
        let cases: [(Settings, Option<Setting>, &str); 6] = [
            (Settings { depth: Some(0), ..ok.clone() }, Some(Setting::Depth), "depth must be from 1 to 60, got 0"),
            (Settings { exact_at: Some(61), ..ok.clone() }, Some(Setting::ExactAt), "must be from 0 to 60, got 61"),
            (Settings { nodes: Some(0), ..ok.clone() }, Some(Setting::Nodes), "must be at least 1"),
            (Settings { time: Some(Duration::ZERO), ..ok.clone() }, Some(Setting::Time), "must be a positive number"),
            (Settings { threads: 0, ..ok.clone() }, Some(Setting::Threads), "threads must be from 1 to 256, got 0"),
            (Settings { hash_mib: 0, ..ok.clone() }, None, "0 MiB is out of range"),
        ];
        for (s, setting, words) in cases {
            let e = s.validate().unwrap_err();
            assert!(e.to_string().contains(words), "{e}");
            match (e, setting) {
                (SettingsError::OutOfRange(e), Some(setting)) => assert_eq!(e.setting, setting),
                (SettingsError::Table(_), None) => {}
                (e, setting) => panic!("{e:?} is not about {setting:?}"),
            }
            assert!(s.resolve().is_err());
        }
    }
}
