//! The library's typed errors as the Python exceptions a Python user expects: the
//! package's own classes (`thorbook._errors`) with the location as attributes, or
//! Python's built-in ones where they mean exactly this — `MemoryError` for a table or
//! buffer that cannot be had, `RuntimeError` for what no argument could have avoided,
//! `TimeoutError` for a limit reached before an answer, `KeyboardInterrupt` for Ctrl-C.

use std::path::Path;

use pyo3::exceptions::{PyKeyboardInterrupt, PyMemoryError, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use thorbook::book::{BookError, BuildError, GrowthError, OpenError};
use thorbook::dataset::LabelError;
use thorbook::engine::EngineError;
use thorbook::eval::WeightsError;
use thorbook::fileio::IoError;
use thorbook::search::{SettingsError, TableError};
use thorbook::thor::{Anomaly, ThorError};

/// An exception of class `class` (in `thorbook._errors`) with `message` and `attrs`.
pub(crate) fn raise(py: Python<'_>, class: &str, message: String, attrs: &[(&str, Option<Py<PyAny>>)]) -> PyErr {
    let made = || -> PyResult<PyErr> {
        let cls = py.import("thorbook._errors")?.getattr(class)?;
        let exc = cls.call1((message,))?;
        for (name, value) in attrs {
            exc.setattr(*name, value.as_ref().map_or_else(|| py.None(), |v| v.clone_ref(py)))?;
        }
        Ok(PyErr::from_value(exc))
    };
    made().unwrap_or_else(|e| e)
}

fn int(py: Python<'_>, v: Option<u64>) -> Option<Py<PyAny>> {
    v.map(|v| v.into_pyobject(py).map(|o| o.into_any().unbind()).expect("an int converts"))
}

/// A path as Python sees one: a `str` (what `OSError.filename` holds).
fn path(py: Python<'_>, p: &Path) -> Option<Py<PyAny>> {
    Some(p.as_os_str().into_pyobject(py).map(|o| o.into_any().unbind()).expect("a path converts"))
}

/// A `SettingError` (a `ValueError`) for a bad setting or argument.
pub(crate) fn setting(e: impl std::fmt::Display) -> PyErr {
    Python::attach(|py| raise(py, "SettingError", e.to_string(), &[]))
}

/// An `IllegalMoveError` (a `MoveError`, a `ValueError`) for a move of a sequence, with
/// its 1-based ply.
pub(crate) fn illegal(e: &thorbook::PlayError) -> PyErr {
    Python::attach(|py| raise(py, "IllegalMoveError", e.to_string(), &[("ply", int(py, Some(e.ply as u64)))]))
}

/// The `IllegalMoveError` of one move played on its own (`ply` None).
pub(crate) fn illegal_move(e: &thorbook::MoveError) -> PyErr {
    Python::attach(|py| raise(py, "IllegalMoveError", e.to_string(), &[("ply", int(py, None))]))
}

/// An `InvalidMoveError`: text that is not a move at all.
pub(crate) fn invalid_move(message: impl Into<String>) -> PyErr {
    Python::attach(|py| raise(py, "InvalidMoveError", message.into(), &[]))
}

/// A `MoveError` without a finer class (there is no move to make).
pub(crate) fn no_move(message: impl Into<String>) -> PyErr {
    Python::attach(|py| raise(py, "MoveError", message.into(), &[]))
}

/// A `FileError` (an `OSError`) for an I/O failure on a path: `filename` the path,
/// `errno` the system's number when it gave one.
pub(crate) fn io(e: &IoError) -> PyErr {
    Python::attach(|py| {
        let errno = e.source.raw_os_error().and_then(|n| u64::try_from(n).ok());
        raise(py, "FileError", e.to_string(), &[("filename", path(py, &e.path)), ("errno", int(py, errno))])
    })
}

/// An `ArchiveError` naming the file, record, line, byte and ply of a damaged game.
pub(crate) fn anomaly(a: &Anomaly) -> PyErr {
    Python::attach(|py| {
        let details = serde_json::to_string(a).ok().and_then(|s| json(py, &s).ok()).map(Bound::unbind);
        let kind = details
            .as_ref()
            .and_then(|d| d.bind(py).cast::<PyDict>().ok().and_then(|d| d.get_item("kind").ok().flatten()))
            .map(Bound::unbind);
        raise(
            py,
            "ArchiveError",
            a.to_string(),
            &[
                ("filename", path(py, &a.file)),
                ("record", int(py, a.record.map(|r| r as u64))),
                ("line", int(py, a.line.map(u64::from))),
                ("byte", int(py, a.offset.map(|o| o as u64))),
                ("ply", int(py, a.ply.map(|p| p as u64))),
                ("kind", kind),
                ("details", details),
            ],
        )
    })
}

/// The exception of a failure to read archives.
pub(crate) fn thor(e: &ThorError) -> PyErr {
    match e {
        ThorError::Anomaly(a) => anomaly(a),
        ThorError::Io(e) => io(e),
        ThorError::Missing { path: p } => Python::attach(|py| {
            raise(py, "FileError", e.to_string(), &[("filename", path(py, p)), ("errno", int(py, Some(2)))])
        }),
        ThorError::NoArchives { dir } => {
            Python::attach(|py| raise(py, "FileError", e.to_string(), &[("filename", path(py, dir))]))
        }
        other => PyRuntimeError::new_err(other.to_string()),
    }
}

/// Where in the file a book's damage is: (record, byte).
fn book_location(e: &BookError) -> (Option<u64>, Option<u64>) {
    match e {
        BookError::Block { start, .. } => (None, Some(*start)),
        BookError::Counts { at, index, .. } => (Some(*index), Some(*at)),
        BookError::Field { index, .. } | BookError::Order { index, .. } => (Some(*index), None),
        _ => (None, None),
    }
}

/// A `BookFileError` naming the book (`None` for the bundled one) and where it is
/// damaged.
pub(crate) fn book(file: Option<&Path>, e: &BookError) -> PyErr {
    let (record, byte) = book_location(e);
    let name = file.map_or_else(|| "the bundled book".to_string(), |f| f.display().to_string());
    Python::attach(|py| {
        raise(
            py,
            "BookFileError",
            format!("book {name}: {e}"),
            &[("filename", file.and_then(|f| path(py, f))), ("record", int(py, record)), ("byte", int(py, byte))],
        )
    })
}

/// The exception of a book that cannot be opened.
pub(crate) fn open(file: Option<&Path>, e: &OpenError) -> PyErr {
    match e {
        OpenError::Io(e) => io(e),
        OpenError::Format { source, .. } => book(file, source),
        other => Python::attach(|py| {
            raise(py, "BookFileError", other.to_string(), &[("filename", file.and_then(|f| path(py, f)))])
        }),
    }
}

/// The exception of a weight file that cannot be read.
pub(crate) fn weights(e: &WeightsError) -> PyErr {
    match e {
        WeightsError::Io(e) => io(e),
        WeightsError::Invalid { file, offset, .. } => Python::attach(|py| {
            raise(
                py,
                "WeightsFileError",
                e.to_string(),
                &[("filename", path(py, file)), ("byte", int(py, Some(*offset as u64)))],
            )
        }),
        other => PyRuntimeError::new_err(other.to_string()),
    }
}

/// A table that cannot be had: `MemoryError` when the memory is not there, a
/// `SettingError` for a size out of range.
pub(crate) fn table(e: &TableError) -> PyErr {
    match e {
        TableError::Size { .. } => setting(e),
        _ => PyMemoryError::new_err(e.to_string()),
    }
}

/// The exception of search settings that cannot run.
pub(crate) fn settings(e: &SettingsError) -> PyErr {
    match e {
        SettingsError::Table(t) => table(t),
        other => setting(other),
    }
}

/// The exception of an engine that cannot start or move (`book` names the book it
/// was given).
pub(crate) fn engine(e: &EngineError, book_file: Option<&Path>) -> PyErr {
    match e {
        EngineError::Settings(s) => settings(s),
        EngineError::Setting(s) => setting(s),
        EngineError::Eval(w) => weights(w),
        EngineError::Book(o) => open(book_file, o),
        EngineError::GameOver { .. } => no_move(e.to_string()),
        other => PyRuntimeError::new_err(other.to_string()),
    }
}

/// The exception of a failed book build writing `output` (the checkpoint beside it).
pub(crate) fn build(e: &BuildError, output: &Path) -> PyErr {
    match e {
        BuildError::Io(e) => io(e),
        BuildError::Book(b) => book(Some(output), b),
        BuildError::Checkpoint { path: p, .. } => {
            Python::attach(|py| raise(py, "ResumeError", e.to_string(), &[("filename", path(py, p))]))
        }
        BuildError::Interrupted => PyKeyboardInterrupt::new_err(e.to_string()),
        BuildError::Settings(s) => settings(s),
        BuildError::Setting(_) | BuildError::NoDepth | BuildError::Previous { .. } => setting(e),
        BuildError::Eval(w) => weights(w),
        BuildError::Memory { .. } => PyMemoryError::new_err(e.to_string()),
        BuildError::Game { game, source } => Python::attach(|py| {
            raise(
                py,
                "IllegalMoveError",
                e.to_string(),
                &[("ply", int(py, Some(source.ply as u64))), ("game", int(py, Some(*game as u64)))],
            )
        }),
        other => PyRuntimeError::new_err(other.to_string()),
    }
}

/// The exception of a failed growth of a book into `output`.
pub(crate) fn growth(e: &GrowthError, output: &Path) -> PyErr {
    match e {
        GrowthError::Io(e) => io(e),
        GrowthError::Book(b) => book(Some(output), b),
        GrowthError::Search(b) => build(b, output),
        GrowthError::Resume { path: p, .. } => {
            Python::attach(|py| raise(py, "ResumeError", e.to_string(), &[("filename", path(py, p))]))
        }
        GrowthError::Setting(_) | GrowthError::NotInBook | GrowthError::NoTarget => setting(e),
        other => PyRuntimeError::new_err(other.to_string()),
    }
}

/// The exception of a failed labelling.
pub(crate) fn label(e: &LabelError) -> PyErr {
    match e {
        LabelError::Interrupted => PyKeyboardInterrupt::new_err(e.to_string()),
        LabelError::Table(t) => table(t),
        LabelError::Settings(s) => settings(s),
        other => PyRuntimeError::new_err(other.to_string()),
    }
}

/// A JSON text as Python objects.
pub(crate) fn json<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.call_method1("loads", (text,))
}

/// A serializable value as Python objects (through JSON: the CLI's `--json` shape).
pub(crate) fn to_python<'py>(py: Python<'py>, value: &impl serde::Serialize) -> PyResult<Bound<'py, PyAny>> {
    let text = serde_json::to_string(value).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    json(py, &text)
}

/// Checks an integer argument given from Python against its range, so that a negative
/// or huge value is a `SettingError` saying so rather than PyO3's "out of range
/// integral type conversion".
pub(crate) fn int_arg<T: TryFrom<i128>>(name: &str, value: i128, low: i128, high: i128) -> PyResult<T> {
    if (low..=high).contains(&value) {
        T::try_from(value).map_err(|_| setting(format!("{name} must be from {low} to {high}, got {value}")))
    } else {
        Err(setting(format!("{name} must be from {low} to {high}, got {value}")))
    }
}
