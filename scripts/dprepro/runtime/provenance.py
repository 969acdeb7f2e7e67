"""Provenance sidecars: ``<output>.prov.json`` next to every table and figure.

A sidecar answers "which code, which parameters, which inputs and which random
streams made this file?" without rerunning anything: script path and sha256,
dprepro version and git commit (when the workflow lives in a git checkout), the
configuration subset the job used, seed derivation, sha256 of every input and
the versions of the packages the numbers depend on.  Sidecars carry no
timestamps, so an unchanged job rewrites an identical sidecar.
"""

from __future__ import annotations

import functools
import os
import platform
import subprocess
from collections.abc import Iterable, Mapping
from importlib import metadata
from pathlib import Path

from dprepro import __version__
from dprepro.runtime.io import sha256_of, write_json

__all__ = ["PACKAGES", "git_commit", "package_versions", "provenance_record", "sidecar_path",
           "write_provenance"]

PACKAGES = (
    "numpy",
    "pandas",
    "scipy",
    "scikit-learn",
    "lifelines",
    "matplotlib",
    "torch",
    "pyarrow",
    "snakemake",
)


@functools.cache
def git_commit(directory: str) -> str | None:
    """The checkout's HEAD commit (with ``-dirty`` when it has changes), or None."""
    try:
        head = subprocess.run(
            ["git", "-C", directory, "rev-parse", "HEAD"],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", directory, "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{head}-dirty" if dirty else head


def package_versions(packages: Iterable[str] = PACKAGES) -> dict[str, str | None]:
    """The installed version of each distribution in ``packages`` (``None``: not installed)."""
    return dict(_package_versions(tuple(packages)))


@functools.cache
def _package_versions(packages: tuple[str, ...]) -> tuple:
    # read once per process: a job writing many sidecars asked importlib.metadata again for
    # each (about 14 ms a time)
    versions = {}
    for name in packages:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return tuple(versions.items())


def provenance_record(
    *,
    output: str | os.PathLike,
    script: str | os.PathLike,
    inputs: Mapping[str, str | os.PathLike] | Iterable[str | os.PathLike] = (),
    config: Mapping | None = None,
    seeds: object = None,
    privacy: Mapping | None = None,
    data_origin: str | None = None,
    extra: Mapping | None = None,
) -> dict:
    """Build the provenance dictionary for one output file.

    Parameters
    ----------
    output : path-like
        The table or figure this record describes.
    script : path-like
        The step script that produced it (hashed).
    inputs : mapping or iterable of paths
        Every input file (hashed); a mapping keeps the rule's input names.
    config : mapping
        The configuration subset the job used.
    seeds : object
        The seed derivation (see :func:`dprepro.runtime.seeds.seed_record`).
    privacy : mapping
        Mechanism and privacy parameters of a release, or ``{"release": False}``
        for a non-private reference.
    data_origin : str
        ``"real"``, ``"synthetic"`` or ``"simulation"``.
    """
    if isinstance(inputs, Mapping):
        named = {str(k): str(v) for k, v in inputs.items()}
    else:
        named = {str(p): str(p) for p in inputs}
    script = Path(script)
    repo = str(script.resolve().parent)
    return {
        "output": str(output),
        # the output as written (a received copy is checked against it: dprepro.runtime.verify)
        "output_sha256": sha256_of(output) if Path(output).is_file() else None,
        "script": {"path": _workflow_relative(script), "sha256": sha256_of(script)},
        "dprepro": {"version": __version__, "git_commit": git_commit(repo)},
        "config": dict(config or {}),
        "seeds": seeds,
        "privacy": dict(privacy) if privacy is not None else None,
        "data_origin": data_origin,
        "inputs": {name: {"path": p, "sha256": _input_sha256(p)}
                   for name, p in sorted(named.items())},
        "packages": package_versions(),
        "python": platform.python_version(),
        **(dict(extra) if extra else {}),
    }


def _workflow_relative(script: Path) -> str:
    """A step script's path as the workflow names it (``scripts/<name>.py``), so sidecars do
    not carry the producer's directory layout and equal ones compare equal across checkouts."""
    resolved = script.resolve()
    if resolved.parent.name == "scripts":
        return f"scripts/{resolved.name}"
    return str(script)


def _input_sha256(path) -> str:
    """sha256 of an input file, computed once per process for an unchanged file.

    A job writing many outputs (Figure 2: 90 files) hashed the same input
    (the 54 MB curves table) once per sidecar. The key holds the file's size,
    modification time and inode, so a file rewritten in between is hashed anew.
    """
    stat = os.stat(path)
    return _sha256_of_version(str(path), stat.st_size, stat.st_mtime_ns, stat.st_ino)


@functools.lru_cache(maxsize=4096)
def _sha256_of_version(path: str, size: int, mtime_ns: int, inode: int) -> str:
    return sha256_of(path)


def sidecar_path(output: str | os.PathLike) -> str:
    """The provenance sidecar of ``output``: ``<output>.prov.json`` beside it."""
    return f"{output}.prov.json"


def write_provenance(output: str | os.PathLike, **record_kwargs) -> Path:
    """Write ``<output>.prov.json`` atomically and return its path."""
    sidecar = Path(sidecar_path(output))
    write_json(provenance_record(output=output, **record_kwargs), sidecar)
    return sidecar
