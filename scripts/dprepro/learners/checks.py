"""Eager argument checks shared by the DP learners (ValueError / TypeError naming the argument)."""

from __future__ import annotations

import math

import numpy as np

# re-exported: the clipping weights and the feature-selection baselines live in their own
# modules (split by concept); importing them from here keeps callers working


# --------------------------------------------------------------------------- #
# validation helpers
# --------------------------------------------------------------------------- #
def check_epsilon(epsilon) -> float:
    if isinstance(epsilon, bool) or not isinstance(epsilon, int | float | np.integer | np.floating):
        raise TypeError(f"epsilon must be a positive number or np.inf, got {epsilon!r}")
    epsilon = float(epsilon)
    if math.isnan(epsilon) or epsilon <= 0:
        raise ValueError(f"epsilon must be > 0 (np.inf for no noise), got {epsilon!r}")
    return epsilon


def check_rng(rng, epsilon: float) -> None:
    if rng is None:
        if math.isfinite(epsilon):
            raise TypeError("rng must be a numpy.random.Generator when epsilon is finite")
        return
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator or None, got {type(rng).__name__}")


def check_positive(name: str, value, *, allow_inf: bool = False, allow_zero: bool = False):
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise TypeError(f"{name} must be a number, got {value!r}")
    value = float(value)
    ok = (value >= 0 if allow_zero else value > 0) and not math.isnan(value)
    ok = ok and (allow_inf or math.isfinite(value))
    if not ok:
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(
            f"{name} must be {bound}{'' if allow_inf else ' and finite'}, got {value!r}"
        )
    return value


def check_matrix(X, name: str = "X") -> np.ndarray:
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array, got shape {X.shape}")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"{name} must be non-empty, got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{name} contains non-finite values")
    return X


def check_vector(y, n: int, name: str = "y") -> np.ndarray:
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != n:
        raise ValueError(f"{name} must be 1-D of length {n}, got shape {y.shape}")
    return y


def check_share(xx_share) -> float:
    if isinstance(xx_share, bool) or not isinstance(
        xx_share, int | float | np.integer | np.floating
    ):
        raise TypeError(f"xx_share must be a number in (0, 1), got {xx_share!r}")
    xx_share = float(xx_share)
    if not 0.0 < xx_share < 1.0:
        raise ValueError(f"xx_share must be in (0, 1), got {xx_share!r}")
    return xx_share


def check_xx_noise(xx_noise) -> str:
    if xx_noise not in ("wishart", "laplace"):
        raise ValueError(f"xx_noise must be 'wishart' or 'laplace', got {xx_noise!r}")
    return xx_noise

