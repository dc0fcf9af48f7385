"""Where the tests find the command line (for answers to compare with) and the shared
data. Nothing is skipped silently: a missing binary fails the test, and the tests
marked ``shared`` are deselected by ``.ci/run`` (with a NOT RUN line) where
``../shared`` is absent."""

import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def pytest_configure(config):
    config.addinivalue_line("markers", "shared: needs ../shared (the full WTHOR archives and FFO positions)")


@pytest.fixture(scope="session")
def cli():
    """Runs the ``thorbook`` binary (``THORBOOK_BIN``, else target/release/thorbook)."""
    binary = pathlib.Path(os.environ.get("THORBOOK_BIN", ROOT / "target" / "release" / "thorbook"))
    assert binary.exists(), f"{binary}: build it (cargo build --release) or set THORBOOK_BIN"

    def run(*args: str) -> str:
        return subprocess.run([str(binary), *args], check=True, capture_output=True, text=True).stdout

    return run


@pytest.fixture(scope="session")
def shared():
    path = pathlib.Path(os.environ.get("THORBOOK_SHARED", ROOT.parent / "shared"))
    assert path.is_dir(), f"{path}: the shared data is missing (deselect with -m 'not shared')"
    return path
