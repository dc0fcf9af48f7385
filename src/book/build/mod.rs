//! Building a book from games: collect every position up to a ply limit (merged over
//! the 8 symmetries, full boards kept so a key collision is an error, never a silent
//! merge), score each position's best move leaving the book with a deep search in
//! parallel, back the values up by negamax over the book graph, and produce the
//! records. Finished searches are appended to a checkpoint file as they complete
//! ([`checkpoint`], in the leaf-file codec of [`leaflog`]), so a build
//! that is interrupted resumes without redoing them.
//!
//! Scoring is deterministic at a fixed depth: every position is searched on one
//! thread with its own fresh transposition table, so neither the thread count nor an
//! interruption changes the book. (`--time-per-position` is not deterministic.)

pub(crate) mod backup;
pub(crate) mod builder;
pub(crate) mod checkpoint;
pub(crate) mod collect;
pub(crate) mod error;
pub(crate) mod leaf;
pub(crate) mod leaflog;
pub(crate) mod merge;
pub(crate) mod nodes;
pub(crate) mod search;
pub(crate) mod stream;
#[cfg(test)]
mod tests;

pub(crate) use error::BuildError;
pub(crate) use leaf::{leaf_record, score_leaf, Leaf, LeafSearch, LeafSpec};
#[cfg(any(feature = "cli", feature = "testing", test))]
pub(crate) use leaf::{record, search_position};
#[cfg(test)]
pub(crate) use search::score_nodes;

use super::format::BuildParams;
use crate::board::Board;
use crate::book::format::BackUpRule;
use crate::search::{Settings, Strength};
use crate::setting::{check, OutOfRange, Setting};
use crate::square::Move;

/// What to build: which positions, and how each leaf is searched.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct BuildConfig {
    /// Collect positions up to this many plies (moves and passes) from the start, 1..=60.
    pub max_ply: u32,
    /// Leave out positions reached by fewer games (at least 1).
    pub min_games: u32,
    /// How each leaf is searched, over `BuildConfig::LEAF_FALLBACK` (explicit values
    /// first, then the level's). `threads` leaf searches run side by side, each on one
    /// thread with a table of its own of `hash_mib`.
    pub search: Settings,
    /// How the values are backed up from the leaves.
    pub back_up: BackUpRule,
}

/// What an update of a book may change; every `None` keeps what the book's header
/// records ([`BuildConfig::update_of`]).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct UpdateChoices {
    /// Collect positions up to this ply.
    pub max_ply: Option<u32>,
    /// Keep positions reached by at least this many games.
    pub min_games: Option<u32>,
    /// How values are backed up.
    pub back_up: Option<BackUpRule>,
    /// How new leaves are searched: explicit values (depth, exact threshold, width)
    /// over the level's when `search.level` is set, else over the header's; table,
    /// threads and evaluation as given.
    pub search: Settings,
}

/// How leaves are searched unless told otherwise: the default level on every core,
/// each search with a 4 MiB table. A leaf search starts from an empty table, and
/// clearing the default 64 MiB one before each leaf costs more than the search.
pub(crate) fn leaf_settings() -> Settings {
    Settings::default().with_hash_mib(4).with_threads(crate::search::default_threads())
}

impl Default for UpdateChoices {
    /// Everything as the book records; the leaves searched on every core, each search
    /// with a 4 MiB table.
    fn default() -> UpdateChoices {
        UpdateChoices { max_ply: None, min_games: None, back_up: None, search: leaf_settings() }
    }
}

impl Default for BuildConfig {
    /// The bundled book's collection (ply 20, 2 games) with the default leaf search.
    fn default() -> BuildConfig {
        BuildConfig { max_ply: 20, min_games: 2, search: leaf_settings(), back_up: BackUpRule::default() }
    }
}

impl BuildConfig {
    /// The build that updates a book whose header is `params`: the header's ply limit,
    /// game minimum, back-up rule and leaf search (depth, exact threshold, width)
    /// unless `choices` says otherwise, so that the book's leaves stay reusable (the
    /// [`Builder`](super::Builder) refuses, before it collects anything, a search or
    /// evaluation under which they are not).
    pub fn update_of(params: &BuildParams, choices: UpdateChoices) -> Result<BuildConfig, BuildError> {
        let UpdateChoices { max_ply, min_games, back_up, search } = choices;
        let recorded = LeafSpec::recorded(params);
        let search = match search.level {
            Some(_) => search,
            None => Settings {
                depth: search.depth.or(recorded.depth),
                exact_at: search.exact_at.or(recorded.exact_at),
                width: search.width.or(Some(crate::search::Width::of(recorded.selectivity))),
                ..search
            },
        };
        search.validate()?;
        Ok(BuildConfig {
            max_ply: max_ply.unwrap_or(u32::from(params.max_ply)),
            min_games: min_games.unwrap_or(params.min_games),
            search,
            back_up: back_up.unwrap_or(params.back_up),
        })
    }

    /// The leaf search where neither an explicit setting nor a level says otherwise:
    /// depth 8, exact at 22 empties, full width.
    pub(crate) const LEAF_FALLBACK: Strength =
        Strength { depth: Some(8), exact_at: Some(22), time: None, nodes: None, selectivity: None };

    /// Checks every setting and loads the evaluation: the leaf search of this build.
    pub(crate) fn leaf_search(&self) -> Result<LeafSearch, BuildError> {
        check(Setting::MaxPly, self.max_ply, 1..=60)?;
        if self.min_games == 0 {
            return Err(OutOfRange::new(Setting::MinGames, 0, "at least 1").into());
        }
        LeafSearch::new(&self.search, BuildConfig::LEAF_FALLBACK)
    }

    /// The parameters the book's header records (checked as [`BuildConfig::leaf_search`]).
    pub(crate) fn params(&self) -> Result<BuildParams, BuildError> {
        Ok(BuildParams { back_up: self.back_up, ..self.leaf_search()?.params(self.max_ply, self.min_games) })
    }
}

/// A game to learn from: its moves (passes included) and black's final disc count.
#[derive(Clone, Debug)]
pub struct GameLine {
    /// Moves from the start, passes included.
    pub moves: Vec<Move>,
    /// Black's final discs (empties to the winner); `None` when the source does not
    /// know the result (a game lost on time, a transcript without one). Such a game
    /// counts towards the games reaching a position, not towards its wins or draws.
    pub black_score: Option<u8>,
}

/// A replayed Thor game's line.
impl From<&crate::thor::ThorGame> for GameLine {
    fn from(game: &crate::thor::ThorGame) -> GameLine {
        GameLine { moves: game.moves_with_passes(), black_score: game.black_discs() }
    }
}

/// A collected position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Node {
    /// Zobrist key of `board`.
    pub key: u64,
    /// The canonical board.
    pub board: Board,
    /// Games through it.
    pub games: u32,
    /// Won by the side to move.
    pub wins: u32,
    /// Drawn.
    pub draws: u32,
}

impl BuildError {
    /// Two positions of one key, as the error that stops a build.
    pub(crate) fn collision(a: &Node, b: &Node) -> BuildError {
        BuildError::KeyCollision { key: a.key, a: a.board, b: b.board }
    }
}
