//! The library's typed errors as the package's Python exceptions (`thorbook._errors`):
//! the class by what went wrong, the location as attributes.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use thorbook::book::{BookError, BuildError, GrowthError, OpenError};
use thorbook::fileio::IoError;
use thorbook::thor::{Anomaly, ThorError};

/// An exception of class `class` (in `thorbook._errors`) with `message` and `attrs`.
pub(crate) fn raise(py: Python<'_>, class: &str, message: String, attrs: &[(&str, Option<Py<PyAny>>)]) -> PyErr {
    let made = || -> PyResult<PyErr> {
        let cls = py.import("thorbook._errors")?.getattr(class)?;
        let exc = cls.call1((message,))?;
        for (name, value) in attrs {
            if let Some(v) = value {
                exc.setattr(*name, v)?;
            }
        }
        Ok(PyErr::from_value(exc))
    };
    made().unwrap_or_else(|e| e)
}

fn int(py: Python<'_>, v: Option<u64>) -> Option<Py<PyAny>> {
    v.map(|v| v.into_pyobject(py).map(|o| o.into_any().unbind()).expect("an int converts"))
}

fn text(py: Python<'_>, v: impl Into<String>) -> Option<Py<PyAny>> {
    Some(v.into().into_pyobject(py).map(|o| o.into_any().unbind()).expect("a str converts"))
}

/// A `ValueError` for a bad setting or argument.
pub(crate) fn setting(e: impl std::fmt::Display) -> PyErr {
    Python::attach(|py| raise(py, "SettingError", e.to_string(), &[]))
}

/// An `IllegalMoveError`, with the ply when known.
pub(crate) fn illegal(e: &thorbook::PlayError) -> PyErr {
    let ply = match e {
        thorbook::PlayError::Illegal { ply, .. }
        | thorbook::PlayError::PassWithMoves { ply, .. }
        | thorbook::PlayError::GameOver { ply, .. } => Some(*ply as u64),
        _ => None,
    };
    Python::attach(|py| raise(py, "IllegalMoveError", e.to_string(), &[("ply", int(py, ply))]))
}

/// A `FileError` for an I/O failure on a path.
pub(crate) fn io(e: &IoError) -> PyErr {
    Python::attach(|py| {
        let errno = e.source.raw_os_error().map(|n| n as u64);
        raise(
            py,
            "FileError",
            e.to_string(),
            &[("filename", text(py, e.path.display().to_string())), ("errno", int(py, errno))],
        )
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
                ("filename", text(py, a.file.display().to_string())),
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
        ThorError::Missing { path } => Python::attach(|py| {
            raise(
                py,
                "FileError",
                e.to_string(),
                &[("filename", text(py, path.display().to_string())), ("errno", int(py, Some(2)))],
            )
        }),
        ThorError::NoArchives { dir } => Python::attach(|py| {
            raise(py, "FileError", e.to_string(), &[("filename", text(py, dir.display().to_string()))])
        }),
        other => Python::attach(|py| raise(py, "FileError", other.to_string(), &[])),
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

/// A `BookFileError` naming the book and where it is damaged.
pub(crate) fn book(file: &str, e: &BookError) -> PyErr {
    let (record, byte) = book_location(e);
    Python::attach(|py| {
        raise(
            py,
            "BookFileError",
            format!("book {file}: {e}"),
            &[("filename", text(py, file)), ("record", int(py, record)), ("byte", int(py, byte))],
        )
    })
}

/// The exception of a book that cannot be opened.
pub(crate) fn open(file: &str, e: &OpenError) -> PyErr {
    match e {
        OpenError::Io(e) => io(e),
        OpenError::Format { source, .. } => book(file, source),
        other => Python::attach(|py| raise(py, "BookFileError", other.to_string(), &[("filename", text(py, file))])),
    }
}

/// The exception of a failed book build: files as `FileError`/`BookFileError`,
/// Ctrl-C's stop as `KeyboardInterrupt`, the rest as `SettingError`.
pub(crate) fn build(e: &BuildError) -> PyErr {
    match e {
        BuildError::Io(e) => io(e),
        BuildError::Book(b) => book("(the earlier book)", b),
        BuildError::Checkpoint { path, .. } => Python::attach(|py| {
            raise(py, "FileError", e.to_string(), &[("filename", text(py, path.display().to_string()))])
        }),
        BuildError::Interrupted => pyo3::exceptions::PyKeyboardInterrupt::new_err(e.to_string()),
        other => setting(other),
    }
}

/// The exception of a failed growth, as [`build`]'s.
pub(crate) fn growth(e: &GrowthError) -> PyErr {
    match e {
        GrowthError::Io(e) => io(e),
        GrowthError::Book(b) => book("(the book grown)", b),
        GrowthError::Search(b) => build(b),
        other => setting(other),
    }
}

/// A JSON text as Python objects.
pub(crate) fn json<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.call_method1("loads", (text,))
}

/// A serializable value as Python objects (through JSON: the CLI's `--json` shape).
pub(crate) fn to_python<'py>(py: Python<'py>, value: &impl serde::Serialize) -> PyResult<Bound<'py, PyAny>> {
    let text = serde_json::to_string(value).map_err(setting)?;
    json(py, &text)
}
