"""Reproducible random streams (docs/design.md §6).

Every job derives its generators from one base seed and stable identifiers, so
the same configuration gives byte-identical tables whatever the number of cores,
the executor or the order in which jobs run.  Identifiers are hashed with CRC-32
(stable across processes and Python versions; the built-in ``hash`` is salted).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np

__all__ = ["stable_id", "seed_sequence", "replicate_generators", "seed_record"]


def stable_id(name: str) -> int:
    """Return a stable 32-bit identifier of ``name`` (CRC-32 of its UTF-8 bytes)."""
    if not isinstance(name, str):
        raise TypeError(f"stable_id expects a str, got {type(name).__name__}")
    return zlib.crc32(name.encode("utf-8"))


def _check_base_seed(base_seed: int) -> int:
    if isinstance(base_seed, bool) or not isinstance(base_seed, int | np.integer):
        raise TypeError(f"base_seed must be an int, got {type(base_seed).__name__}")
    if base_seed < 0:
        raise ValueError(f"base_seed must be >= 0, got {base_seed}")
    return int(base_seed)


def seed_sequence(base_seed: int, study: str, step: str, replicate: int) -> np.random.SeedSequence:
    """``SeedSequence([base, stable_id(study), stable_id(step), replicate])``.

    Parameters
    ----------
    base_seed : int
        The configuration's ``seed``.
    study, step : str
        Names of the study and of the step; a step that must not share
        randomness with another (data versus noise, one α versus another)
        gets its own name, e.g. ``"privatize/cens25/alpha0.2"``.
    replicate : int
        Replicate index, so that replicate ``r`` draws the same numbers
        whatever the total number of replicates.
    """
    base = _check_base_seed(base_seed)
    if replicate < 0:
        raise ValueError(f"replicate must be >= 0, got {replicate}")
    return np.random.SeedSequence([base, stable_id(study), stable_id(step), int(replicate)])


def replicate_generators(
    base_seed: int, study: str, step: str, replicates: int | Sequence[int]
) -> list[np.random.Generator]:
    """One independent :class:`numpy.random.Generator` (PCG64) per replicate."""
    indices = range(replicates) if isinstance(replicates, int | np.integer) else replicates
    return [np.random.default_rng(seed_sequence(base_seed, study, step, r)) for r in indices]


def seed_record(base_seed: int, study: str, step: str, replicates: int) -> dict:
    """What provenance stores to let anyone re-derive a job's streams."""
    return {
        "base_seed": _check_base_seed(base_seed),
        "study": study,
        "step": step,
        "entropy": [_check_base_seed(base_seed), stable_id(study), stable_id(step), "<replicate>"],
        "replicates": int(replicates),
        "derivation": "numpy.random.SeedSequence([base, crc32(study), crc32(step), replicate])",
    }
