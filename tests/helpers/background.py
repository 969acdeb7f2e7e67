"""Workflow runs that a test checks later, started before the workflow tests need them.

The workflow tests run one after another, each waiting for its own Snakemake run, so
one of the two cores mostly idled through them. The self-contained runs (their own
inputs, servers and folders, no shared state) are registered here by name; conftest
queues those whose tests are selected once collection is done (the long ones first,
then in the tests' order) and they run two at a time in worker threads, each test then
only waiting for its run and checking it: a test that waits uses no core itself. A test
run on its own (nothing queued) runs its job inline.

A queued run starts only on a slot granted to it (:func:`grant`): conftest grants the
first when the SLURM and ``--cores 1`` small runs have ended and the second when the
``--cores 2`` run has, so the queue fills the cores those runs leave, not the cores they
use; the first workflow test grants both. (Started right after collection beside the
small runs and the unit tests, they slowed the suite: 6:15; started at the first
workflow test, the cores idled for about 30 s between the small runs' end and it.)
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

_JOBS: dict[str, Callable[[Path], Any]] = {}
_FUTURES: dict[str, Future] = {}
_FOLDERS: dict[str, Path] = {}
_POOL: ThreadPoolExecutor | None = None
#: the runs' two slots: granted one by one (:func:`grant`), each held while a run runs
_WORKERS = 2
_SLOTS = threading.Semaphore(0)
_GRANTED = 0
_GRANT_LOCK = threading.Lock()
#: set by :func:`shutdown`: a run that gets its slot after it does not start
_CANCELLED = threading.Event()


def register(name: str):
    """Decorator: ``fn(folder) -> result`` is the run named ``name``."""

    def add(fn: Callable[[Path], Any]) -> Callable[[Path], Any]:
        if name in _JOBS and _JOBS[name] is not fn:
            raise ValueError(f"background run {name!r} registered twice")
        _JOBS[name] = fn
        return fn

    return add


def start(names, mktemp: Callable[[str], Path]) -> None:
    """Queue the runs ``names`` (in this order, two at a time once :func:`grant` allows)
    in worker threads; their folders are made here, in the calling thread."""
    global _POOL
    for name in names:
        if name in _FUTURES:
            continue
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=_WORKERS, thread_name_prefix="background-run")
        _FOLDERS[name] = mktemp(name)
        _FUTURES[name] = _POOL.submit(_on_a_slot, _JOBS[name], _FOLDERS[name])


class Cancelled(RuntimeError):
    """A queued run that the session's end cancelled before it started."""


#: Niceness of the queue's worker threads, which the runs' processes inherit: the test
#: process, which checks the small run meanwhile, gets the cores first and the queue fills
#: what it leaves. Before, the queue took its share all along and ended first, and the
#: test process then checked the small run alone on one core for the session's last 40 s
#: (5:52-5:54 against 6:07-6:12, side by side). The small and SLURM runs are left alone:
#: they run in sessions of their own (so that a timeout can kill the whole group), which a
#: kernel with autogroup scheduling (most Linux distributions) weighs as groups whatever
#: their processes' niceness.
BACKGROUND_NICE = 10


def lower_priority() -> None:
    """Make the calling thread :data:`BACKGROUND_NICE` nicer than the test process (at
    most 19; Linux: niceness is per thread, and the processes it starts inherit it).
    Where that cannot be done, nothing changes but the order in which the cores serve
    the runs."""
    try:
        thread = threading.get_native_id()
        own = os.getpriority(os.PRIO_PROCESS, os.getpid())
        os.setpriority(os.PRIO_PROCESS, thread, min(19, own + BACKGROUND_NICE))
    except (AttributeError, OSError):
        pass


def _on_a_slot(job: Callable[[Path], Any], folder: Path):
    lower_priority()
    # the pool's two workers take the first two runs at once and wait here for a slot:
    # cancel_futures cannot cancel those, so a session that ends early stops them here
    with _SLOTS:
        if _CANCELLED.is_set():
            raise Cancelled("the test session ended before this run started")
        return job(folder)


def grant(total: int) -> None:
    """Let up to ``total`` (at most two) queued runs run at once; never takes slots back."""
    global _GRANTED
    with _GRANT_LOCK:
        while _GRANTED < min(total, _WORKERS):
            _GRANTED += 1
            _SLOTS.release()


def result(name: str, folder: Path):
    """The run's result: waited for when started, else run here into ``folder``.

    An exception of the run is raised here, in the test that checks it.
    """
    future = _FUTURES.get(name)
    if future is None:
        _FOLDERS[name] = folder
        return _JOBS[name](folder)
    grant(_WORKERS)  # a test waits for it: whatever else runs, let the queue run
    return future.result()


def folder(name: str) -> Path:
    """The folder the run ``name`` worked in (after :func:`result`)."""
    return _FOLDERS[name]


def shutdown() -> None:
    """End the queue: runs not started yet are cancelled (a session that ends early, by
    ``-x``, Ctrl-C or a collection error, starts none), runs going are waited for."""
    if _POOL is not None:
        _CANCELLED.set()
        grant(_WORKERS)  # the workers waiting for a slot wake up, see the flag and return
        _POOL.shutdown(wait=True, cancel_futures=True)
