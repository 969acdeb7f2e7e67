"""Workflow runs that a test checks later, started when the workflow tests begin.

The workflow tests run one after another, each waiting for its own Snakemake run, so
one of the two cores mostly idled through them. The self-contained runs (their own
inputs, servers and folders, no shared state) are registered here by name; conftest
starts those whose tests are selected when the first workflow test begins, two at a time
in worker threads (the long ones first, then in the tests' order), and each test then
only waits for its run and checks it: a test that waits uses no core itself. A test run
on its own (nothing started) runs its job inline. (Started right after collection
instead, beside the small runs and the unit tests, they slowed the suite: 6:15.)
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

_JOBS: dict[str, Callable[[Path], Any]] = {}
_FUTURES: dict[str, Future] = {}
_FOLDERS: dict[str, Path] = {}
_POOL: ThreadPoolExecutor | None = None


def register(name: str):
    """Decorator: ``fn(folder) -> result`` is the run named ``name``."""

    def add(fn: Callable[[Path], Any]) -> Callable[[Path], Any]:
        if name in _JOBS and _JOBS[name] is not fn:
            raise ValueError(f"background run {name!r} registered twice")
        _JOBS[name] = fn
        return fn

    return add


def start(names, mktemp: Callable[[str], Path]) -> None:
    """Start the runs ``names`` (in this order, two at a time) in worker threads."""
    global _POOL
    for name in names:
        if name in _FUTURES:
            continue
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="background-run")
        _FOLDERS[name] = mktemp(name)
        _FUTURES[name] = _POOL.submit(_JOBS[name], _FOLDERS[name])


def result(name: str, folder: Path):
    """The run's result: waited for when started, else run here into ``folder``.

    An exception of the run is raised here, in the test that checks it.
    """
    future = _FUTURES.get(name)
    if future is None:
        _FOLDERS[name] = folder
        return _JOBS[name](folder)
    return future.result()


def folder(name: str) -> Path:
    """The folder the run ``name`` worked in (after :func:`result`)."""
    return _FOLDERS[name]


def shutdown() -> None:
    """Wait for the runs still going (a session that ends early)."""
    if _POOL is not None:
        _POOL.shutdown(wait=True, cancel_futures=True)
