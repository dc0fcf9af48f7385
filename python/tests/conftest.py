"""Where the tests find the command line (for answers to compare with) and the shared
data. Nothing is skipped silently: a missing binary fails the test, and the tests
marked ``shared`` are deselected by ``.ci/run`` (with a NOT RUN line) where
``../shared`` is absent."""

import contextlib
import os
import pathlib
import signal
import subprocess
import threading

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


@pytest.fixture
def ctrl_c():
    """``with ctrl_c(seconds):`` sends this process SIGINT that long into the block, as
    Ctrl-C would. Python's own handler (``KeyboardInterrupt``) is installed for the
    block: a process started with SIGINT ignored (a background job of a script, nohup)
    inherits the ignoring, Python keeps it, and the signal would be lost.

    ``ctrl_c.press()``, called inside the block from any thread (a progress callback on
    a worker), sends SIGINT and returns only once the main thread has handled it: the
    work cannot race past the stop, whatever the machine's speed."""
    handled = threading.Event()

    def handler(signum, frame):
        handled.set()
        raise KeyboardInterrupt

    @contextlib.contextmanager
    def after(seconds: float):
        handled.clear()
        previous = signal.signal(signal.SIGINT, handler)
        timer = threading.Timer(seconds, lambda: os.kill(os.getpid(), signal.SIGINT))
        timer.start()
        try:
            yield
        finally:
            timer.cancel()
            timer.join()
            signal.signal(signal.SIGINT, previous)

    def press():
        os.kill(os.getpid(), signal.SIGINT)
        # The handler runs on the main thread at its next signal check (every 50 ms
        # while a long call waits); the bound only turns a lost signal into a failure.
        assert handled.wait(60), "SIGINT was not handled within a minute"

    after.press = press
    return after
