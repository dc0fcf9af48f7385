//! thorbook: an Othello (Reversi) toolkit for WTHOR game archives, opening books and a
//! book-playing engine.
//!
//! Layers, each using only those listed before it:
//! - [`square`], [`error`]: squares, moves, their notation, and the board layer's
//!   errors;
//! - [`board`]: the bitboard core (move generation, flips, scores);
//! - [`position`]: absolute colours, board text and checked move sequences;
//! - [`symmetry`]: the 8 board symmetries and canonical forms;
//! - [`zobrist`]: stable 64-bit keys, incremental and canonical;
//! - [`perft`]: move-generation counts;
//! - [`stability`]: stable discs;
//! - [`obf`]: FFO/Edax problem files;
//! - [`openings`]: named openings;
//! - [`eval`]: static evaluation (trained patterns, the classic baseline);
//! - [`search`]: how hard to search ([`search::Settings`], levels), the endgame
//!   solver, the midgame search, the transposition table;
//! - [`fileio`]: memory maps and atomic writes;
//! - [`thor`]: WTHOR archives: read, replay, validate, index, search, write;
//! - [`train`]: training the pattern evaluation from games and exact solves, and
//!   measuring its error;
//! - [`book`]: opening books: format, probing, building ([`book::Builder`]),
//!   deviation, merging, interchange;
//! - [`engine`]: the book-then-search player, GTP, NBoard, terminal play and engine
//!   matches;
//! - [`svg`], [`explorer`]: board pictures and the browser explorer over the above;
//! - [`cli`]: the command line, a thin layer over the library;
//! - [`testutil`], [`fuzz`]: naive references for tests, and the fuzz targets' checks.
#![deny(missing_docs)]

pub mod board;
pub mod book;
pub mod cli;
pub mod engine;
pub mod error;
pub mod eval;
pub mod explorer;
pub mod fileio;
pub mod fuzz;
pub mod obf;
pub mod openings;
pub mod perft;
pub mod position;
pub mod search;
pub mod square;
pub mod stability;
pub mod svg;
pub mod symmetry;
pub mod testutil;
pub mod thor;
pub mod train;
pub mod zobrist;

pub use board::{Board, Color};
pub use position::Position;
pub use square::{Move, Square};
pub use symmetry::Transform;
