//! Opening books, by concept; this file only names the parts and what they export.
//! - `probe`: reading a book straight from its bytes ([`Book`], [`BookSource`],
//!   [`bundled`]), each probe checking the blocks it reads;
//! - `query`, `trust`, `repertoire`: the moves of a position ([`book_moves`],
//!   [`query()`]), the book line ([`book_line`]), the engine's choice
//!   ([`choose_move`]), how far a value can be trusted ([`Trust`]), a player's lines;
//! - `format`: the file layout ([`Record`], [`LeafMove`], [`BuildParams`],
//!   [`BackUpRule`]; book-format.md has the bytes);
//! - `build`: what a build is made of ([`BuildConfig`], the games' [`GameLine`]s, the
//!   leaf search) and the [`Builder`] pipeline that runs it (collecting positions,
//!   leaf searches and their logs, the checkpoint, the one back-up of values
//!   [`revalue`] that every book written goes through, the streamed writer,
//!   [`merge_into`]);
//! - `grow`: a [`Grower`] grows a book beyond the played lines, or deepens its
//!   leaves, in rounds (`tree` holds what growth and fixes share);
//! - `check` (crate-private, `thorbook book audit|fix`): audits and fixes;
//! - `cluster` (crate-private, `thorbook book plan|shard|status|submit|assemble`):
//!   builds, growth rounds and checks cut into shards, and their Slurm job arrays;
//! - [`interchange`]: thorbook text, Edax and Egaroucid books, in and out.
//!
//! Positions are stored once per symmetry class, under the Zobrist key of their
//! canonical image, relative to the side to move. A probe canonicalises the board,
//! finds the key, and maps the stored leaf move back to the board's orientation.
// Input handling: every narrowing or sign-changing conversion is checked (`try_from`,
// `from_le_bytes`), never a silent `as`.
#![deny(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_possible_wrap)]

pub(crate) mod build;
#[cfg(any(feature = "cli", feature = "testing", test))]
pub(crate) mod check;
#[cfg(any(feature = "cli", feature = "testing", test))]
pub(crate) mod cluster;
pub(crate) mod format;
pub(crate) mod grow;
pub mod interchange;
pub(crate) mod probe;
pub(crate) mod query;
#[cfg(any(feature = "explorer", test))]
pub(crate) mod repertoire;
pub(crate) mod tree;
pub(crate) mod trust;

pub use build::backup::revalue;
pub use build::builder::{BuildEvent, BuildSummary, Builder};
pub use build::error::{BuildError, BuildInput, CheckpointFault, EntryFault};
pub use build::merge::merge_into;
pub use build::stream::{StreamError, Written};
pub use build::{BuildConfig, GameLine, UpdateChoices};
pub use format::{BackUpRule, BookError, BookRegion, BuildParams, CountsFault, FieldFault, LeafMove, Record};
pub use grow::{Grower, Growth, GrowthConfig, GrowthError, GrowthEvent, GrowthInput, GrowthSummary, StopReason};
pub(crate) use probe::for_each_reachable;
#[cfg(any(feature = "cli", feature = "testing", test))]
pub(crate) use probe::walk;
pub use probe::{bundled, Book, BookHit, BookSource, OpenError};
pub use query::{book_line, book_moves, choose_move, query, BookChoice, BookMove, BookQuery};
pub use trust::{Grade, Trust};
