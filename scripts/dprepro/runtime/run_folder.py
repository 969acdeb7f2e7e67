"""Where a configuration's run lives, and what in it an earlier configuration left.

Two rules keep the outputs of one configuration from mixing with another's:

* ``run_name`` puts a run in a folder of its own, ``runs/<run_name>/`` under the
  directory snakemake is started in: its ``results/``, logs and Snakemake records,
  so runs of two configurations never share a file. Relative cohort paths (``path``) still
  mean the directory snakemake is started in (:func:`launch_relative`).
* In one folder, a rerun with another configuration remakes every output whose
  parameters changed (each job's parameters are in its rerun triggers), but files
  the new configuration no longer makes (the panels of an ε no longer configured, a
  cohort taken out) would stay beside the new ones. After a complete run,
  :func:`stale_outputs` lists them; the workflow writes the list to
  ``results/stale_outputs.txt`` and removes them when ``remove_stale_outputs`` is
  set.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

__all__ = [
    "RUNS_DIR",
    "STALE_LIST",
    "launch_relative",
    "remove_outputs",
    "run_directory",
    "stale_outputs",
    "write_stale_list",
]

#: Parent folder of named runs (relative to the directory snakemake is started in).
RUNS_DIR = "runs"
#: Where the leftovers of earlier configurations are listed (relative to the run folder).
STALE_LIST = "results/stale_outputs.txt"
#: Folders of ``results/`` never reported as leftovers: logs and benchmarks of earlier
#: jobs (records, not results), downloads (a cache, expensive to fetch again).
KEPT_FOLDERS = ("results/logs", "results/benchmarks", "results/data/raw")
#: Files under ``results/`` that no rule makes but the user's own commands do.
KEPT_FILES = ("results/report.html", "results/report.zip", STALE_LIST)
_SIDECAR = ".prov.json"


def run_directory(config: Mapping) -> str:
    """``runs/<run_name>`` when the configuration names its run, else ``""`` (here)."""
    name = str(config.get("run_name") or "")
    return f"{RUNS_DIR}/{name}" if name else ""


def launch_relative(path: str, launch_dir: str | os.PathLike,
                    working_dir: str | os.PathLike) -> str:
    """A path given relative to ``launch_dir`` as seen from ``working_dir``.

    Unchanged when both directories are the same or ``path`` is absolute, so a run
    in the directory it was started in plans exactly the paths it was given.
    """
    if os.path.isabs(path) or os.path.realpath(launch_dir) == os.path.realpath(working_dir):
        return path
    return os.path.relpath(os.path.join(launch_dir, path), working_dir)


def stale_outputs(expected: Iterable[str], root: str | os.PathLike = ".") -> list[str]:
    """Files under ``<root>/results`` that none of ``expected`` accounts for.

    Parameters
    ----------
    expected : iterable of str
        Every output of the complete run of the current configuration (paths relative
        to ``root``); their provenance sidecars (``<output>.prov.json``) and the files
        inside expected output folders are expected too.
    root : path-like
        The run folder.

    Returns
    -------
    list of str
        Relative paths, sorted; logs, benchmarks, downloads and the report are never
        listed (:data:`KEPT_FOLDERS`, :data:`KEPT_FILES`).
    """
    root = Path(root)
    expected = {os.path.normpath(str(path)) for path in expected}
    folders = tuple(f"{path}{os.sep}" for path in expected)
    kept = tuple(f"{os.path.normpath(folder)}{os.sep}" for folder in KEPT_FOLDERS)
    results = root / "results"
    if not results.is_dir():
        return []
    stale = []
    for path in results.rglob("*"):
        if not path.is_file() and not path.is_symlink():
            continue
        name = os.path.normpath(path.relative_to(root).as_posix())
        if name in KEPT_FILES or name.startswith(kept):
            continue
        owner = name[: -len(_SIDECAR)] if name.endswith(_SIDECAR) else name
        if owner in expected or name.startswith(folders):
            continue
        stale.append(name)
    return sorted(stale)


def write_stale_list(stale: list[str], root: str | os.PathLike = ".") -> Path | None:
    """Write (or, with nothing stale, remove) ``results/stale_outputs.txt``."""
    target = Path(root) / STALE_LIST
    if not stale:
        target.unlink(missing_ok=True)
        return None
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("".join(f"{path}\n" for path in stale), encoding="utf-8")
    return target


def remove_outputs(paths: Iterable[str], root: str | os.PathLike = ".") -> int:
    """Delete the listed files (and folders left empty under ``results/``)."""
    root = Path(root)
    removed = 0
    for name in paths:
        path = root / name
        if path.is_file() or path.is_symlink():
            path.unlink()
            removed += 1
        parent = path.parent
        while parent != root / "results" and parent.is_dir() and not any(parent.iterdir()):
            parent.rmdir()
            parent = parent.parent
    return removed
