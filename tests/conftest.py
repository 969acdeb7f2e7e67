"""Fixtures shared by several test modules, and the order of a session.

The small configuration's runs and the SLURM runs take most of a session's time. They
start in the background when the session starts if it runs the whole suite (collecting
keeps one core busy for about ten seconds), otherwise as soon as the tests are collected
(when a selected test needs them); the tests marked ``workflow`` run last: the unit tests
run meanwhile, on the core that a run leaves idle or while SLURM waits.
"""

import re
import sys
import tempfile
import threading
from pathlib import Path

import pytest
from threadpoolctl import threadpool_limits

from dprepro.mechanisms.indicator_draws import laplace_indicators
from dprepro.mechanisms.registry import IndicatorMechanism, register, unregister
from helpers import background, slurmruns, smallruns, snakerun

# One BLAS thread in the test process, for the whole session: its unit tests share the
# two cores with the background runs, and OpenBLAS's second thread then mostly spins
# (two objective-perturbation audits beside two busy processes: 17.1 -> 11.5 CPU-s).
# The runs' jobs set their own limit from their rule's threads (dprepro.runtime.step.start;
# a VAE job's numpy BLAS one thread, its torch repr_transfer.vae.threads).
_ONE_BLAS_THREAD = threadpool_limits(limits=1, user_api="blas")


def _one_torch_thread():
    """One torch thread in the test process too (torch keeps its own pool, one thread
    per core). Beside the two busy background runs its second thread spins: the VAE
    fit of test_representations took 33.6 CPU-s with two threads, 2.7 with one (and
    4.6 against 2.6 on an idle machine). The workflow's VAE jobs pin their own
    (``vae_training_options``: ``repr_transfer.vae.threads``)."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.get_num_threads() != 1:
        torch.set_num_threads(1)


def _toy_wide_laplace(delta, *, alpha, rng):
    """Toy registered mechanism: Laplace with twice the scale, so (α/2)-LDP."""
    return laplace_indicators(delta, alpha=alpha / 2, rng=rng)


def _background_runs(items) -> list[str]:
    """Names of the background runs (``@pytest.mark.background(name)``) of ``items``, in
    the tests' order, the long ones (``early=True``) first."""
    names = {}
    for item in items:
        for mark in item.iter_markers("background"):
            names.setdefault(mark.args[0], not mark.kwargs.get("early", False))
    return sorted(names, key=names.get)


def _queue_background_runs(session) -> None:
    """Queue the selected tests' background runs (tests/helpers/background.py), once."""
    if getattr(session, "_background_started", False):
        return
    session._background_started = True
    names = _background_runs(session.items)
    if names:
        background.start(names, lambda name: _run_dir(
            session.config, "background-" + re.sub(r"[^A-Za-z0-9_.-]", "_", name)))


def _grant_slots_as_the_long_runs_end() -> None:
    """The background runs' first slot once the SLURM and ``--cores 1`` runs have ended,
    the second once the ``--cores 2`` run has: they fill the cores those leave."""
    slurmruns.join()
    smallruns.join("1")
    background.grant(1)
    smallruns.join("2")
    background.grant(2)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """At the first workflow test: every background run may run now (two at a time)."""
    if "workflow" in item.keywords:
        _queue_background_runs(item.session)
        background.grant(2)
    _one_torch_thread()


def pytest_collection_modifyitems(config, items):
    """Unit tests first, then the workflow tests (stable order otherwise): those wait for
    the background runs. Among the workflow tests, those that neither check the small
    configuration's run nor wait for a background run of their own come first, then those
    that check the small run (several run Snakemake in a copy of it), while the background
    runs go on beside them, and last those that wait for a background run. (With the small
    run's tests last, they ran one after another on one core after the background runs had
    ended: about 40 s at the end of a session.)"""
    items.sort(key=lambda item: ("workflow" in item.keywords,
                                 item.get_closest_marker("background") is not None,
                                 "small_run" in getattr(item, "fixturenames", ())))


def _run_dir(config, name: str) -> Path:
    factory = getattr(config, "_tmp_path_factory", None)
    if factory is not None:
        return factory.mktemp(name)
    return Path(tempfile.mkdtemp(prefix=f"dprepro-{name}-"))


def _needed(items, fixture: str) -> bool:
    # fixturenames is the closure: test_workflow's module fixture ``runs`` uses small_run
    return any(fixture in getattr(item, "fixturenames", ()) for item in items)


def _runs_every_test(config) -> bool:
    """Whether the session runs the whole suite, as README's ``python -m pytest`` does: no
    path but the test folder, no ``-k``, ``-m``, ``--deselect``, ``--ignore``, ``--lf``,
    ``--sw``, ``-o`` or an option that runs no test (``--co``, ``--fixtures``,
    ``--setup-plan``). A session it misjudges only starts runs that its end stops."""
    option = config.option
    narrowing = ("collectonly", "keyword", "markexpr", "deselect", "ignore", "ignore_glob",
                 "lf", "stepwise", "stepwise_skip", "showfixtures", "show_fixtures_per_test",
                 "setuponly", "setupplan")
    if any(getattr(option, name, None) for name in narrowing):
        return False
    # -o settings that choose the tests (addopts' --strict-markers is an -o setting too)
    chosen = {entry.split("=", 1)[0].strip() for entry in option.override_ini or ()}
    if chosen & {"python_files", "python_classes", "python_functions", "testpaths",
                 "norecursedirs"}:
        return False
    tests = Path(config.rootpath) / "tests"
    return all(Path(config.invocation_params.dir, arg).resolve() == tests
               for arg in config.args)


def _start_long_runs(config, *, slurm: bool, small: bool, killed: bool,
                     workflow: bool) -> None:
    """Start SLURM's and the small configuration's runs (each once) and the dry-run fork
    server (from this thread, before a background worker at a lower priority could)."""
    if slurm and not slurmruns.started():
        slurmruns.start(_run_dir(config, "slurm"))
    for cores, wanted in (("2", small), ("1", small and killed)):
        if wanted and not smallruns.started(cores):
            smallruns.start(cores, _run_dir(config, f"small_cores{cores}"))
    if workflow:
        snakerun.start()


def pytest_sessionstart(session):
    """The whole suite: the long runs start now, not after collection. Collecting (the
    assertion rewriting of every test module included) keeps one core busy for about ten
    seconds, in which the other one was idle."""
    if _runs_every_test(session.config):
        _start_long_runs(session.config, slurm=True, small=True, killed=True, workflow=True)


def pytest_collection_finish(session):
    """Start the runs that the selected tests will need (those not started at the session's
    start): the small configuration's, and SLURM's (tests/test_slurm.py)."""
    items = session.items
    if session.config.option.collectonly:
        return
    _start_long_runs(session.config, slurm=_needed(items, "slurm_runs"),
                     small=_needed(items, "small_run"), killed=_needed(items, "killed_run"),
                     workflow=any("workflow" in item.keywords for item in items))
    _queue_background_runs(session)
    threading.Thread(target=_grant_slots_as_the_long_runs_end, name="background-slots",
                     daemon=True).start()


def pytest_sessionfinish(session):
    # the runs nobody will check stop first, so they use no core while the queue's
    # running runs are waited for
    smallruns.stop_unfinished()
    slurmruns.stop()
    background.shutdown()
    snakerun.stop()


@pytest.fixture
def toy():
    """A mechanism registered for one test only (a new mechanism is one function + a name)."""
    mechanism = register(IndicatorMechanism(
        name="toy_wide_laplace", function=_toy_wide_laplace,
        description="toy: Z = δ + Laplace(0, 2/α)", true_epsilon=lambda alpha: alpha / 2))
    yield mechanism
    unregister(mechanism.name)


@pytest.fixture(scope="session")
def small_run(request, tmp_path_factory) -> Path:
    """The small configuration run from nothing with ``--cores 2``, once per test session.

    The reference of every test that runs the workflow: test_workflow checks its outputs and
    reruns against it, and the fault (SIGKILL resume) and SLURM tests compare their own runs'
    tables byte for byte with it, instead of each module running the configuration again.
    Tests must not change it (copy it first, as test_single_figure_rebuilds_alone does).
    Started in the background when the session starts (the whole suite) or after
    collection (with the ``--cores 1`` run of ``killed_run`` when a test using it is
    selected); started here only when no collected test asked.
    """
    if not smallruns.started("2"):
        smallruns.start("2", tmp_path_factory.mktemp("small_cores2"))
    return smallruns.wait("2")


@pytest.fixture(scope="session")
def killed_run(small_run, tmp_path_factory) -> tuple[Path, dict]:
    """The small configuration run with ``--cores 1``, SIGKILLed once its first job had
    started, unlocked and resumed (tests/helpers/smallruns.py), once per test session: its
    folder, and its return code and CSV tables when it was killed.

    One run for two tests, which compare its tables with ``small_run``'s: the SIGKILL
    resume (test_faults) and determinism across ``--cores`` (test_workflow). It draws no
    figures. Tests must not change it.
    """
    if not smallruns.started("1"):
        smallruns.start("1", tmp_path_factory.mktemp("small_cores1"))
    return smallruns.wait("1"), smallruns.killed("1")
