//! thorbook: an Othello (Reversi) toolkit for WTHOR game archives, opening books and a
//! book-playing engine.
//!
//! ```
//! use thorbook::book::{self, book_moves};
//! use thorbook::square::parse_move_sequence;
//! use thorbook::Position;
//!
//! // The bundled book's moves after f5 d6, best first.
//! let book = book::bundled()?;
//! let pos = Position::START.play_sequence(&parse_move_sequence("f5d6")?)?;
//! let moves = book_moves(&book, &pos);
//! assert!(moves.len() > 1);
//! println!("{}: {:+}", moves[0].mv, moves[0].score);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Where to start
//! - **Reading archives**: [`thor::ThorDatabase::load`] over [`thor::bundled_sources`]
//!   or [`thor::Source::open`] (WTHOR, GGF, transcripts, JSON lines; plain, gzip or
//!   bzip2, recognised by content), with [`thor::LoadOptions`]; statistics of a position
//!   with [`thor::ThorDatabase::stats`] and a [`thor::GameFilter`]; converting with
//!   [`thor::ThorDatabase::to_wthor`] and [`thor::ThorDatabase::write_game`].
//! - **Building a book**: [`book::Builder`] with a [`book::BuildConfig`] (or
//!   [`book::BuildConfig::update_of`] and [`book::Builder::update`] to update one,
//!   [`book::Builder::learn`] to learn games into one, with games from
//!   [`engine::selfplay::SelfPlayRun`] or [`engine::selfplay::play_games`]), growing it with
//!   [`book::Grower`]; checking it (`thorbook book audit`, `book fix`) and planning it
//!   on a cluster (`thorbook book plan`, `shard`, `submit`, `assemble`) go through the
//!   binary and the plan files `book-format.md` documents.
//! - **Probing a book**: [`book::Book::open`] over a file's bytes, or [`book::bundled`], then
//!   [`book::book_moves`] and [`book::book_line`].
//! - **Playing**: [`engine::Engine`] with an [`engine::EngineConfig`] (how hard to
//!   search: [`search::Settings`]); [`engine::gtp::GtpSession`] and
//!   [`engine::nboard::NBoardSession`] for GUIs; [`engine::matches::run_match`].
//! - **Learning from positions**: [`dataset::GamePositions::of_games`] (every position
//!   of some games, as columns), [`dataset::random_games`] and
//!   [`dataset::self_play_games`], [`dataset::planes`]; labels from
//!   [`dataset::exact_scores`], [`dataset::search_scores`] and [`dataset::book_labels`]
//!   (the arrays the Python package hands to numpy).
//!
//! Configurations are `#[non_exhaustive]` with a `Default`: start from it and set
//! fields. Long work (builds, growth, self-play, labelling, batch reviews, the
//! explorer's server, an engine's search) stops through one [`work::StopHandle`],
//! keeping what it finished. Errors are typed: a value out of range is a [`setting::OutOfRange`] naming
//! its [`setting::Setting`]; a failed read or write is a [`fileio::IoError`] naming the
//! file.
//!
//! Layers, each using only those listed before it:
//! - [`setting`]: settings by name and the one out-of-range error;
//! - [`work`]: how long work is asked to stop and how it reports progress;
//! - [`square`]: squares, moves, their notation and its parse error;
//! - [`board`]: the bitboard core (move generation, flips, scores);
//! - [`position`]: absolute colours, board text (one alphabet) and checked move
//!   sequences, with the errors of playing them;
//! - [`symmetry`]: the 8 board symmetries and canonical forms;
//! - [`zobrist`]: stable 64-bit keys, incremental and canonical;
//! - [`perft`]: move-generation counts;
//! - [`obf`]: FFO/Edax problem files;
//! - [`openings`]: named openings;
//! - [`eval`]: static evaluation (trained patterns, the classic baseline);
//! - [`search`]: how hard to search ([`search::Settings`], levels), the endgame
//!   solver, the midgame search, the transposition table, problem sets;
//! - [`fileio`]: memory maps and atomic writes;
//! - [`thor`]: WTHOR archives: read, replay, validate, index, search, write;
//! - `train` (crate-private, driven by `thorbook train`, `eval-error` and `calibrate`):
//!   training the pattern evaluation from games and exact solves, and measuring its
//!   error; its product is the weight file [`eval::Weights`] loads;
//! - [`book`]: opening books: format, probing, building ([`book::Builder`]),
//!   deviation, merging, interchange;
//! - [`dataset`]: positions and labels as columns, for learning (the Python package's
//!   arrays);
//! - [`engine`]: the book-then-search player ([`engine::Engine`]), GTP, NBoard,
//!   terminal play and engine matches;
//! - `explorer` (feature `explorer`): the browser explorer over the above;
//! - `cli` (feature `cli`): the command line, a thin layer over the library.
//!
//! # Features
//! - `cli` (default): the `thorbook` binary and its module; brings clap, indicatif,
//!   ctrlc, anyhow and shlex, and turns on `explorer`.
//! - `explorer`: the explorer's web server (tiny_http).
//! - `testing`: naive references, random positions and the fuzz targets' checks for
//!   thorbook's own tests, benchmarks and fuzz targets; not part of the API.
//!
//! A program that only needs the library depends on it with
//! `thorbook = { version = "0.1", default-features = false }`.
#![deny(missing_docs)]

/// `base` with the given fields set, as the integration tests build configurations.
#[cfg(test)]
macro_rules! with {
    ($base:expr $(, $field:ident: $value:expr)* $(,)?) => {{
        #[allow(unused_mut)]
        let mut value = $base;
        // Through a reference: inside the crate the fields could be given in a struct
        // expression, which clippy would ask for; the tests read as the outside ones.
        let fields = &mut value;
        $(fields.$field = $value;)*
        value
    }};
}

pub mod board;
pub mod book;
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod cli;
mod cpu;
pub mod dataset;
pub mod engine;
pub mod eval;
#[cfg(feature = "explorer")]
pub mod explorer;
pub mod fileio;
#[cfg(feature = "testing")]
#[doc(hidden)]
pub mod fuzz;
pub mod obf;
pub mod openings;
mod parallel_count;
pub mod perft;
mod playout;
pub mod position;
mod results;
mod rng;
pub mod search;
pub mod setting;
pub mod square;
mod stability;
mod svg;
pub mod symmetry;
#[cfg(any(test, feature = "testing"))]
#[doc(hidden)]
pub mod testutil;
pub mod thor;
pub mod work;
// Training is a pipeline only the binary drives: its product is the weight file that
// `eval::{Weights, PatternEval}` load.
#[cfg(any(feature = "cli", feature = "testing", test))]
pub(crate) mod train;
pub mod zobrist;

/// The Rust examples of the README and the guide's library page, compiled and run as
/// doctests so that they stay true.
#[cfg(doctest)]
mod documentation_examples {
    #[doc = include_str!("../README.md")]
    struct Readme;
    #[doc = include_str!("../docs/library.md")]
    struct LibraryGuide;
}

pub use board::{Board, Color};
pub use position::{MoveError, PlayError, Position, PositionError};
pub use square::{BoardTextFault, Move, ParseError, Square};
pub use symmetry::Transform;
