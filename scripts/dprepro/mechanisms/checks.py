"""Eager argument checks shared by the release mechanisms (diffprivlib style: ValueError /
TypeError).
"""

from __future__ import annotations

import numpy as np


def check_generator(rng) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            "rng must be a numpy.random.Generator (e.g. numpy.random.default_rng(seed)), "
            f"got {type(rng).__name__}"
        )
    return rng


def check_privacy_parameter(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value}")
    return value


# --------------------------------------------------------------------------- validation





def check_real(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    return float(value)


def check_epsilon(epsilon, *, allow_inf: bool = False) -> float:
    eps = check_real(epsilon, "epsilon")
    if np.isnan(eps) or eps <= 0 or (np.isinf(eps) and not allow_inf):
        allowed = "> 0 (inf allowed)" if allow_inf else "finite and > 0"
        raise ValueError(f"epsilon must be {allowed}, got {epsilon!r}")
    return eps


def check_k(k) -> int:
    if isinstance(k, bool) or not isinstance(k, int | np.integer):
        raise TypeError(f"k must be an integer, got {type(k).__name__}")
    if k < 2:
        raise ValueError(f"k must be >= 2 (number of categories), got {k}")
    return int(k)


def check_p(p) -> float:
    p = check_real(p, "p")
    if not 0 <= p < 1:
        raise ValueError(f"p must be in [0, 1), got {p!r}")
    return p


def check_draws(draws) -> int | None:
    if draws is None:
        return None
    if isinstance(draws, bool) or not isinstance(draws, int | np.integer):
        raise TypeError(f"draws must be an integer or None, got {type(draws).__name__}")
    if draws < 1:
        raise ValueError(f"draws must be >= 1, got {draws}")
    return int(draws)

