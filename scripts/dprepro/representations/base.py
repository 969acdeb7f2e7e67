"""Shared pieces of the representations: argument checks, the generator, feature names and the fit
budget.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

__all__ = ["FeatureNamesMixin", "FitBudgetExceeded", "as_generator", "check_float", "check_int"]


# --------------------------------------------------------------------------- #
# helpers
# --------------------------------------------------------------------------- #
def as_generator(random_state) -> np.random.Generator:
    """``random_state`` as a :class:`numpy.random.Generator`: a Generator as given, ``None``
    or an int seeds a new one; anything else is a :class:`TypeError`."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or (
        isinstance(random_state, int | np.integer) and not isinstance(random_state, bool)
    ):
        return np.random.default_rng(random_state)
    raise TypeError(
        f"random_state must be None, an int or a numpy.random.Generator, got {random_state!r}"
    )


def check_int(name: str, value, low: int, high: int | None = None) -> int:
    """``value`` as an int in ``[low, high]`` (``high=None``: no upper bound); a bool or a
    non-integer is a :class:`TypeError`, a value outside a :class:`ValueError` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if value < low or (high is not None and value > high):
        rng = f"[{low}, {high}]" if high is not None else f">= {low}"
        raise ValueError(f"{name} must be {rng}, got {value}")
    return int(value)


def check_float(
    name: str,
    value,
    *,
    low: float = 0.0,
    high: float | None = None,
    low_open: bool = True,
    high_open: bool = True,
) -> float:
    """``value`` as a finite float between ``low`` and ``high`` (open or closed ends); a bool or
    a non-number is a :class:`TypeError`, a value outside a :class:`ValueError` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise TypeError(f"{name} must be a number, got {value!r}")
    v = float(value)
    bad = math.isnan(v) or (v <= low if low_open else v < low)
    if high is not None:
        bad = bad or (v >= high if high_open else v > high)
    if bad or not math.isfinite(v):
        lo_b = "(" if low_open else "["
        hi_b = ")" if high_open else "]"
        raise ValueError(
            f"{name} must be in {lo_b}{low}, {high if high is not None else 'inf'}{hi_b}"
            f", got {value!r}"
        )
    return v


class FeatureNamesMixin:
    r"""Remember DataFrame columns on fit and align DataFrames on transform."""

    def _to_array_fit(self, X) -> np.ndarray:
        if isinstance(X, pd.DataFrame):
            self.feature_names_in_ = np.asarray(X.columns, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[0] < 2 or X.shape[1] < 1:
            raise ValueError(f"X must be a 2-D array with at least 2 rows, got shape {X.shape}")
        if not np.all(np.isfinite(X)):
            raise ValueError("X contains non-finite values")
        self.n_features_in_ = X.shape[1]
        return X

    def _to_array(self, X) -> np.ndarray:
        if not hasattr(self, "n_features_in_"):
            raise AttributeError(f"{type(self).__name__} is not fitted; call fit first")
        if isinstance(X, pd.DataFrame) and hasattr(self, "feature_names_in_"):
            missing = pd.Index(self.feature_names_in_).difference(X.columns)
            if len(missing):
                raise ValueError(
                    f"X lacks {len(missing)} fitted features, e.g. {list(missing[:5])}"
                )
            X = X.loc[:, self.feature_names_in_]
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(f"X must have {self.n_features_in_} columns, got shape {X.shape}")
        if not np.all(np.isfinite(X)):
            raise ValueError("X contains non-finite values")
        return X


class FitBudgetExceeded(TimeoutError):
    """A fit stopped at its wall-clock budget (``VAERepresentation(max_seconds=...)``).

    ``epochs`` is the number of completed epochs. The hyperparameter search
    records such a trial as failed (``status = over_budget``) instead of
    letting the job overrun its declared runtime.
    """

    def __init__(self, message: str, *, epochs: int):
        super().__init__(message)
        self.epochs = int(epochs)

