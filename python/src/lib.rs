//! `thorbook` for Python: the library's public API, wrapped for notebooks and training
//! pipelines. Every call goes through the public Rust surface (`api/public-api.txt`);
//! nothing here reaches the crate's internals, so what Python users can do is what the
//! Rust API offers.

use pyo3::prelude::*;

mod book;
mod data;
mod engine;
mod errors;
mod games;
mod pickle;
mod position;
mod review;
mod run;

/// The native module; `thorbook/__init__.py` re-exports it.
#[pymodule]
fn _thorbook(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<position::Position>()?;
    m.add_class::<games::Games>()?;
    m.add_class::<games::Game>()?;
    m.add_class::<book::Book>()?;
    m.add_class::<engine::Engine>()?;
    m.add_class::<review::Review>()?;
    m.add_function(wrap_pyfunction!(position::move_to_index, m)?)?;
    m.add_function(wrap_pyfunction!(position::index_to_move, m)?)?;
    m.add_function(wrap_pyfunction!(games::read_games, m)?)?;
    m.add_function(wrap_pyfunction!(data::random_games, m)?)?;
    m.add_function(wrap_pyfunction!(data::selfplay_games, m)?)?;
    m.add_function(wrap_pyfunction!(data::planes, m)?)?;
    m.add_function(wrap_pyfunction!(data::label_exact, m)?)?;
    m.add_function(wrap_pyfunction!(data::label_search, m)?)?;
    m.add_function(wrap_pyfunction!(data::label_book, m)?)?;
    m.add_function(wrap_pyfunction!(review::review_games, m)?)?;
    // What pickles hold, turned back into objects.
    m.add_function(wrap_pyfunction!(pickle::_games_from_state, m)?)?;
    m.add_function(wrap_pyfunction!(pickle::_game_from_state, m)?)?;
    m.add_function(wrap_pyfunction!(engine::_engine_from_settings, m)?)?;
    Ok(())
}
