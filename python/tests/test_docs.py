"""The Python in the documentation runs as written: each page's ``python`` blocks, in
order, in one namespace (as a notebook runs them), in a scratch directory where
``data/`` is the repository's. A block right after a ``<!-- not run: REASON -->``
line is shown, not run. The tour's time is printed (``-s`` shows it), not asserted:
timings belong to benchmarks."""

import os
import pathlib
import re
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGES = ["docs/python.md", "python/README.md", "README.md"]


def python_blocks(text):
    """The ``python`` blocks of a Markdown page that run, with their line numbers."""
    blocks = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("```python"):
            before = next((l for l in reversed(lines[:i]) if l.strip()), "")
            start = i + 1
            i += 1
            while not lines[i].startswith("```"):
                i += 1
            if not before.startswith("<!-- not run: "):
                blocks.append((start + 1, "\n".join(lines[start:i])))
        i += 1
    return blocks


@pytest.mark.parametrize("page", PAGES)
def test_the_python_on_the_page_runs(page, tmp_path, monkeypatch):
    text = (ROOT / page).read_text()
    blocks = python_blocks(text)
    assert blocks, f"{page} shows no Python"
    os.symlink(ROOT / "data", tmp_path / "data")
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__docs__"}
    started = time.perf_counter()
    for line, code in blocks:
        compiled = compile(code, f"{page}:{line}", "exec")
        exec(compiled, namespace)
    print(f"\n{page}: {len(blocks)} blocks in {time.perf_counter() - started:.1f} s")


def test_the_pages_name_only_what_exists():
    """Every ``tb.NAME`` the pages mention is in the package."""
    import thorbook as tb

    for page in PAGES:
        for name in set(re.findall(r"\btb\.([A-Za-z_]+)", (ROOT / page).read_text())):
            assert hasattr(tb, name), f"{page} mentions tb.{name}, which the package lacks"
