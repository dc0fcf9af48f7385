//! Unpickling: the games and the game a pickle holds, read back from the JSON lines
//! `Games.__reduce__` and `Game.__reduce__` write, each with its original file and
//! record.

use std::sync::Arc;

use pyo3::prelude::*;

use thorbook::thor::{LoadOptions, Source, ThorDatabase};

use crate::errors;
use crate::games::{Game, Games};

/// The games a pickle holds: JSON lines as `thor export --format jsonl` writes them,
/// read back with each game's file name and record as they were.
#[pyfunction]
pub(crate) fn _games_from_state(py: Python<'_>, lines: String, anomalies: String) -> PyResult<Games> {
    // One source per original file, named after it (but never as a `.wtb`, which would
    // be read as WTHOR); each game's file and record are kept beside.
    struct Pickled {
        file: String,
        text: String,
        origins: Vec<(String, u32)>,
    }
    let mut by_file: Vec<Pickled> = Vec::new();
    for line in lines.lines().filter(|l| !l.trim().is_empty()) {
        let value: serde_json::Value =
            serde_json::from_str(line).map_err(|e| errors::setting(format!("a pickled game: {e}")))?;
        let file = value["file"].as_str().unwrap_or("(pickled)").to_string();
        let record = value["record"].as_u64().and_then(|r| u32::try_from(r).ok()).unwrap_or(0);
        let at = match by_file.iter().position(|p| p.file == file) {
            Some(at) => at,
            None => {
                by_file.push(Pickled { file: file.clone(), text: String::new(), origins: Vec::new() });
                by_file.len() - 1
            }
        };
        by_file[at].text.push_str(line);
        by_file[at].text.push('\n');
        by_file[at].origins.push((file, record));
    }
    let sources: Vec<Source> = by_file
        .iter()
        .map(|p| Source::from_vec(&format!("{} (unpickled)", p.file), p.text.clone().into_bytes()))
        .collect();
    let db = py
        .detach(|| ThorDatabase::load(&sources, LoadOptions::default().with_strict(true).with_index(true)))
        .map_err(|e| errors::thor(&e))?;
    // The database holds the games source by source, in order.
    let origins: Vec<(String, u32)> = by_file.into_iter().flat_map(|p| p.origins).collect();
    if origins.len() != db.games().len() {
        return Err(pyo3::exceptions::PyRuntimeError::new_err(format!(
            "{} games pickled, {} read back",
            origins.len(),
            db.games().len()
        )));
    }
    let mut games = Games::all(Arc::new(db));
    games.origins = Some(Arc::new(origins));
    games.pickled_anomalies = Some(Arc::new(anomalies));
    Ok(games)
}

/// The one game a pickled ``Game`` holds.
#[pyfunction]
pub(crate) fn _game_from_state(py: Python<'_>, line: String) -> PyResult<Game> {
    let games = _games_from_state(py, line, "[]".to_string())?;
    if games.ids.len() != 1 {
        return Err(pyo3::exceptions::PyRuntimeError::new_err("a pickled game holds one game"));
    }
    Ok(games.game(0))
}
