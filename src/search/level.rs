//! Playing levels: one number a person can choose, mapped to a search depth and the
//! number of empty squares from which the engine solves exactly. The table is the single
//! place these pairs are defined; the level table in docs/playing.md gives the measured time a
//! move takes at each level (`scripts/level_ladder.sh`).

use std::fmt;

use super::Selectivity;

/// A playing level, 1 (instant, weak) to [`Level::MAX`] (strong, slow).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Level(u8);

/// What a level means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LevelSpec {
    /// Midgame search depth in plies.
    pub depth: u32,
    /// Solve exactly (final disc difference) at this many empty squares or fewer.
    pub exact_at: u32,
    /// Multi-ProbCut selectivity (`None`: full width).
    pub selectivity: Option<Selectivity>,
}

const TABLE: [LevelSpec; 14] = [
    LevelSpec { depth: 1, exact_at: 6, selectivity: Selectivity::from_tenths(15) },
    LevelSpec { depth: 2, exact_at: 8, selectivity: Selectivity::from_tenths(15) },
    LevelSpec { depth: 3, exact_at: 10, selectivity: Selectivity::from_tenths(15) },
    LevelSpec { depth: 4, exact_at: 12, selectivity: Selectivity::from_tenths(15) },
    LevelSpec { depth: 6, exact_at: 14, selectivity: Selectivity::from_tenths(15) },
    LevelSpec { depth: 8, exact_at: 16, selectivity: Selectivity::from_tenths(15) },
    LevelSpec { depth: 12, exact_at: 18, selectivity: Selectivity::from_tenths(15) },
    LevelSpec { depth: 14, exact_at: 20, selectivity: Selectivity::from_tenths(15) },
    LevelSpec { depth: 16, exact_at: 21, selectivity: Selectivity::from_tenths(15) },
    LevelSpec { depth: 18, exact_at: 22, selectivity: Selectivity::from_tenths(20) },
    LevelSpec { depth: 20, exact_at: 23, selectivity: Selectivity::from_tenths(20) },
    LevelSpec { depth: 22, exact_at: 24, selectivity: Selectivity::from_tenths(20) },
    // Levels for analysis and for auditing books: deeper than any book leaf, solving no
    // further than level 12 (26 empties can take minutes).
    LevelSpec { depth: 24, exact_at: 24, selectivity: Selectivity::from_tenths(20) },
    LevelSpec { depth: 26, exact_at: 24, selectivity: Selectivity::from_tenths(20) },
];

impl Level {
    /// The strongest level.
    pub const MAX: u8 = TABLE.len() as u8;
    /// The level used when nothing else is asked for: strong, a fraction of a second a move.
    pub(crate) const DEFAULT: Level = Level(7);

    /// Level `n`, 1..=[`Level::MAX`], or the error naming the level setting.
    pub fn new(n: u8) -> Result<Level, crate::setting::OutOfRange> {
        crate::setting::check(crate::setting::Setting::Level, n, 1..=Level::MAX)?;
        Ok(Level(n))
    }

    /// Every level, weakest first.
    pub(crate) fn all() -> impl Iterator<Item = Level> {
        (1..=Level::MAX).map(Level)
    }

    /// The number, 1..=[`Level::MAX`].
    pub fn number(self) -> u8 {
        self.0
    }

    /// The level whose depth is nearest `depth` (the shallower of two equally near).
    pub(crate) fn nearest_depth(depth: u32) -> Level {
        Level::all().min_by_key(|l| l.spec().depth.abs_diff(depth)).unwrap_or_default()
    }

    /// What this level means.
    pub(crate) fn spec(self) -> LevelSpec {
        TABLE[self.0 as usize - 1]
    }
}

impl Default for Level {
    fn default() -> Level {
        Level::DEFAULT
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_grow_monotonically() {
        let specs: Vec<LevelSpec> = Level::all().map(Level::spec).collect();
        assert_eq!(specs.len(), Level::MAX as usize);
        for w in specs.windows(2) {
            // The analysis levels past 12 deepen the midgame but solve no earlier.
            assert!(w[1].depth > w[0].depth && w[1].exact_at >= w[0].exact_at, "{w:?}");
        }
        assert!(specs.windows(2).take(11).all(|w| w[1].exact_at > w[0].exact_at));
        assert!(Level::new(0).is_err() && Level::new(Level::MAX + 1).is_err());
        assert_eq!(Level::new(Level::MAX).unwrap().spec(), specs[specs.len() - 1]);
    }
}
