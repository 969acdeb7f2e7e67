"""The test session's queue of background runs (tests/helpers/background.py): a session
that ends before granting a slot starts none of them, and a granted queue runs each once.

Each case runs in a fresh interpreter: the queue is module state the session itself uses.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from helpers import background, snakerun

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = """
import sys, tempfile
from pathlib import Path
sys.path.insert(0, {tests!r})
from helpers import background

ran = []
for name in ("one", "two", "three"):
    background.register(name)(lambda folder, name=name: ran.append(name) or name)
background.start(["one", "two", "three"], lambda name: Path(tempfile.mkdtemp()))
if {grant}:
    background.grant(2)
    print("results", [background.result(n, None) for n in ("one", "two", "three")])
background.shutdown()
outcomes = {{}}
for name, future in background._FUTURES.items():
    if future.cancelled():
        outcomes[name] = "cancelled"
    elif isinstance(future.exception(), background.Cancelled):
        outcomes[name] = "not started"
    else:
        outcomes[name] = future.result()
print("ran", sorted(ran))
print("outcomes", outcomes)
"""


def _session(grant: bool) -> list[str]:
    done = subprocess.run([sys.executable, "-c", SCRIPT.format(tests=str(ROOT / "tests"),
                                                               grant=grant)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.splitlines()


def test_a_session_that_ends_before_any_slot_is_granted_starts_no_run():
    # the pool's two workers hold the first two runs, waiting for a slot, when it ends
    # (or still in the pool's queue, where shutdown cancels them: which ones is up to the
    # threads' timing, that none ran is not)
    out = _session(grant=False)
    assert out[0] == "ran []"
    outcomes = ast.literal_eval(out[1].removeprefix("outcomes "))
    assert set(outcomes) == {"one", "two", "three"}
    assert set(outcomes.values()) <= {"not started", "cancelled"}, outcomes


def test_granted_runs_each_run_once_and_give_their_results():
    out = _session(grant=True)
    assert out[0] == "results ['one', 'two', 'three']"
    assert out[1] == "ran ['one', 'three', 'two']"  # each once (sorted by name)
    assert out[2] == "outcomes {'one': 'one', 'two': 'two', 'three': 'three'}"


def test_a_late_runs_thread_and_its_processes_run_nicer_than_the_test_process():
    seen = {}

    def start_a_run():
        background.lower_priority()
        seen["child"] = int(subprocess.run(["sh", "-c", "nice"], capture_output=True,
                                           text=True, check=True).stdout)

    own = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    thread = threading.Thread(target=start_a_run)
    thread.start()
    thread.join()
    assert seen["child"] == min(19, own + background.BACKGROUND_NICE)
    # the test process itself (this thread) keeps its priority
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == own


@pytest.mark.workflow
def test_the_dry_run_server_runs_at_the_test_process_priority():
    """conftest starts it from the main thread: started from a queue worker, it and the
    test process's own dry runs (its forks) would run nicer."""
    server = snakerun.start()
    assert (os.getpriority(os.PRIO_PROCESS, server.proc.pid)
            == os.getpriority(os.PRIO_PROCESS, os.getpid()))


def _config(tmp_path, *args, **options):
    from types import SimpleNamespace

    settings = {"collectonly": False, "keyword": "", "markexpr": "", "deselect": [],
                "ignore": [], "ignore_glob": [], "lf": False,
                "override_ini": ["strict_markers=true"], **options}
    return SimpleNamespace(option=SimpleNamespace(**settings), rootpath=tmp_path,
                           invocation_params=SimpleNamespace(dir=tmp_path),
                           args=list(args) or ["tests"])


@pytest.mark.parametrize("args,options,whole", [
    ((), {}, True),  # python -m pytest: the test paths
    (("tests/",), {}, True),
    (("tests/test_io.py",), {}, False),
    (("tests/test_io.py::test_x",), {}, False),
    ((), {"keyword": "slurm"}, False),
    ((), {"markexpr": "not workflow"}, False),
    ((), {"deselect": ["tests/test_io.py"]}, False),
    ((), {"ignore": ["tests/test_slurm.py"]}, False),
    ((), {"lf": True}, False),
    ((), {"collectonly": True}, False),
    ((), {"stepwise": True}, False),
    ((), {"override_ini": ["strict_markers=true", "python_files=test_io.py"]}, False),
    ((), {"showfixtures": True}, False),
    ((), {"setupplan": True}, False),
])
def test_the_long_runs_start_before_collection_only_for_the_whole_suite(tmp_path, args,
                                                                         options, whole):
    """conftest starts the small configuration's and SLURM's runs at the session's start
    only when every test will run; otherwise after collection, if a selected test needs
    them."""
    import conftest

    (tmp_path / "tests").mkdir()
    assert conftest._runs_every_test(_config(tmp_path, *args, **options)) is whole
