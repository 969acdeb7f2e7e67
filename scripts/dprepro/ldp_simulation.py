r"""Simulation study of the ``ldp_indicators`` paper (docs/design.md §3).

:math:`X \sim U[0,1]`, :math:`T \mid X \sim \mathrm{Exp}(\langle\lambda_T,(1,X,X^2)\rangle)`,
:math:`C \mid X \sim \mathrm{Exp}(\langle\lambda_C,(1,X,X^2)\rangle)`,
:math:`Y = \min(T, C)`, :math:`\delta = 1\{T \le C\}`; the target is
:math:`F(t \mid x) = 1 - \exp(-\langle\lambda_T,(1,x,x^2)\rangle t)`.

Replicates are rows of ``(R, n)`` arrays.  Each of X, T, C and the Laplace
noise has its own stream, drawn for all replicates at once; a stream is
consumed row by row, so replicate ``r`` gets the same numbers whatever the
number of replicates, and the non-private estimates are identical for every α.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import integrate

from .ldp_mechanisms import IndicatorMechanism, get_mechanism
from .survival import (
    beran_cdf,
    dpik_rows,
    presmoothed_indicator_sets,
    uniform_kernel_window,
)

__all__ = [
    "ESTIMATORS",
    "hazard_rate",
    "true_conditional_cdf",
    "censoring_probability",
    "simulate_censored_regression",
    "SimulationResult",
    "simulate_and_estimate",
    "error_summary",
]

#: Estimator keys, their symbols in the paper and whether they are releases.
ESTIMATORS = {
    "private_beran": {"symbol": "F̂_n", "label": "private (p̂ from Z)", "private": True},
    "generalized_beran": {"symbol": "F̌_n", "label": "generalized Beran (p̂ from δ)",
                          "private": False},
    "beran": {"symbol": "F_n", "label": "Beran", "private": False},
}


def _check_rates(name, vector) -> np.ndarray:
    vector = np.asarray(vector, dtype=float)
    if vector.shape != (3,) or not np.all(np.isfinite(vector)) or np.any(vector < 0):
        raise ValueError(f"{name} must be three finite non-negative numbers, got {vector}")
    if vector[0] <= 0:
        raise ValueError(f"{name}[0] must be > 0 so that every hazard rate is positive")
    return vector


def hazard_rate(lam, x) -> np.ndarray:
    r""":math:`\langle\lambda, (1, x, x^2)\rangle`."""
    lam = np.asarray(lam, dtype=float)
    x = np.asarray(x, dtype=float)
    return lam[0] + lam[1] * x + lam[2] * x * x


def true_conditional_cdf(t, *, x: float, lambda_t) -> np.ndarray:
    return 1.0 - np.exp(-hazard_rate(lambda_t, x) * np.asarray(t, dtype=float))


def censoring_probability(lambda_t, lambda_c) -> float:
    r""":math:`P(\delta = 0) = \int_0^1 r_C(x) / (r_T(x) + r_C(x))\,dx` for exponential times."""
    lambda_t = _check_rates("lambda_t", lambda_t)
    lambda_c = _check_rates("lambda_c", lambda_c)
    value, _ = integrate.quad(
        lambda x: hazard_rate(lambda_c, x) / (hazard_rate(lambda_t, x) + hazard_rate(lambda_c, x)),
        0.0, 1.0,
    )
    return float(value)


def simulate_censored_regression(seed: np.random.SeedSequence, *, replicates: int, n: int,
                                 lambda_t, lambda_c):
    """Draw ``(X, Y, delta)``, each of shape ``(replicates, n)``."""
    if replicates < 1 or n < 2:
        raise ValueError(f"need replicates >= 1 and n >= 2, got {replicates}, {n}")
    lambda_t = _check_rates("lambda_t", lambda_t)
    lambda_c = _check_rates("lambda_c", lambda_c)
    x_rng, t_rng, c_rng = (np.random.default_rng(s) for s in seed.spawn(3))
    shape = (replicates, n)
    covariates = x_rng.uniform(size=shape)
    event_times = t_rng.standard_exponential(shape) / hazard_rate(lambda_t, covariates)
    censor_times = c_rng.standard_exponential(shape) / hazard_rate(lambda_c, covariates)
    observed = np.minimum(event_times, censor_times)
    delta = (event_times <= censor_times).astype(np.int8)
    return covariates, observed, delta


@dataclass
class SimulationResult:
    """Per-replicate estimates of one setting: ``estimates[name]`` has shape (R, T)."""

    t: np.ndarray
    estimates: dict
    bandwidth: np.ndarray
    censored_fraction: np.ndarray

    def to_frame(self) -> pd.DataFrame:
        replicates, steps = next(iter(self.estimates.values())).shape
        frames = []
        for name, values in self.estimates.items():
            frames.append(pd.DataFrame({
                "estimator": name,
                "replicate": np.repeat(np.arange(replicates), steps),
                "t": np.tile(self.t, replicates),
                "estimate": values.ravel(),
                "bandwidth": np.repeat(self.bandwidth, steps),
                "censored_fraction": np.repeat(self.censored_fraction, steps),
            }))
        return pd.concat(frames, ignore_index=True)


def simulate_and_estimate(*, data_seed: np.random.SeedSequence,
                          noise_seed: np.random.SeedSequence, replicates: int, n: int,
                          lambda_t, lambda_c, alpha: float, x: float,
                          bandwidth_multiplier: float, t, clip_phat: bool = True,
                          mechanism: str | IndicatorMechanism = "laplace") -> SimulationResult:
    """Simulate one (censoring, n, α) setting and compute F̂_n, F̌_n and F_n per replicate.

    The bandwidth is ``bandwidth_multiplier * dpik(X)`` per replicate (KernSmooth's
    direct plug-in), the presmoothing bandwidth ``b = sqrt(h)``. ``mechanism``
    (a name in :data:`dprepro.ldp_mechanisms.MECHANISMS` or an entry) privatises
    δ with the generator of ``noise_seed``; its presmoother input (the released
    values, de-biased where the mechanism needs it) replaces δ in F̂_n.
    """
    if not isinstance(mechanism, IndicatorMechanism):
        mechanism = get_mechanism(mechanism)
    if not (np.isfinite(bandwidth_multiplier) and bandwidth_multiplier > 0):
        raise ValueError(f"bandwidth_multiplier must be > 0, got {bandwidth_multiplier}")
    t = np.asarray(t, dtype=float)
    covariates, observed, delta = simulate_censored_regression(
        data_seed, replicates=replicates, n=n, lambda_t=lambda_t, lambda_c=lambda_c
    )
    released = mechanism.privatize(delta, alpha=alpha, rng=np.random.default_rng(noise_seed))
    private = mechanism.presmoother_input(released, alpha=alpha)
    h = bandwidth_multiplier * dpik_rows(covariates)
    window = uniform_kernel_window(covariates, x=x, h=h)
    phat_true, phat_private = presmoothed_indicator_sets(
        observed, covariates, [delta, private], b=np.sqrt(h), where=window
    )
    # p̂ outside the Beran window has weight zero; 0 keeps the exponents finite
    phat_true = np.where(window, phat_true, 0.0)
    phat_private = np.where(window, phat_private, 0.0)
    if clip_phat:
        phat_private = np.clip(phat_private, 0.0, 1.0)
    estimates = {
        "private_beran": beran_cdf(observed, phat_private, covariates, x=x, h=h, t=t),
        "generalized_beran": beran_cdf(observed, phat_true, covariates, x=x, h=h, t=t),
        "beran": beran_cdf(observed, delta, covariates, x=x, h=h, t=t),
    }
    return SimulationResult(t=t, estimates=estimates, bandwidth=h,
                            censored_fraction=1.0 - delta.mean(axis=1))


def error_summary(estimates, truth) -> dict:
    r"""MSE, bias and variance across replicates at each t.

    ``mse = mean_k (E_k - F)^2``, ``bias = mean_k E_k - F``,
    ``variance = mean_k (E_k - mean E)^2`` (divisor R), so that
    ``mse = bias**2 + variance`` holds exactly up to rounding.
    Replicates whose estimate is not finite are counted in ``nonfinite``.
    """
    estimates = np.asarray(estimates, dtype=float)
    truth = np.asarray(truth, dtype=float)
    mean = estimates.mean(axis=0)
    return {
        "mse": ((estimates - truth) ** 2).mean(axis=0),
        "bias": mean - truth,
        "variance": ((estimates - mean) ** 2).mean(axis=0),
        "n_reps": np.full(truth.shape, estimates.shape[0]),
        "nonfinite": (~np.isfinite(estimates)).sum(axis=0),
    }
