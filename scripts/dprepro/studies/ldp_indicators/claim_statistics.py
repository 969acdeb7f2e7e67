r"""Statistics of the ``ldp_indicators`` claims: integrated errors and their paired bootstrap.

Each claim (:mod:`dprepro.studies.ldp_indicators.claims`) is a statistic of
integrated errors over the time grid, computed from the per-replicate estimates,
with a paired percentile bootstrap over replicates: the estimators of one
censoring level are computed on the same simulated samples (every α and
mechanism reuses the data stream), so one resample of replicate indices is
applied to all of them (:func:`dprepro.claims.table.bootstrap_counts`). With
several independent noise draws per sample (``noise_draws``), a replicate is
resampled with all its draws, so each interval covers the sample and the privacy
noise (the statistics are means over every (replicate, draw) pair; :class:`ErrorSet`).

Integrated quantities over the evenly spaced grid :math:`t_1..t_T`, for the
errors :math:`D_{rt} = E^{(r)}(t) - F(t \mid x)` of replicate :math:`r`:

.. math::
    \mathrm{IMSE} = \frac1T \sum_t \frac1R \sum_r D_{rt}^2, \quad
    \mathrm{IBIAS} = \frac1T \sum_t \bar D_t, \quad
    \mathrm{IVAR} = \mathrm{IMSE} - \frac1T \sum_t \bar D_t^2 ,

and the distance of two bias curves :math:`\frac1T \sum_t |\bar D^A_t - \bar D^B_t|`.

A bootstrap resample replaces :math:`1/R` by the resample counts :math:`w_r/R`,
so every statistic of every resample is a matrix product (no Python loop).

A claim's declaration (:data:`dprepro.claims.registry.CLAIMS`) decorates a function
that describes its statistic (:class:`Statistic`); :func:`paired` turns it into the
declaration's evidence, bootstrapped with the claim's own seed, and
:func:`per_mechanism` declares a statement of the paper's Laplace mechanism for the
other configured mechanisms too.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from dprepro.claims.registry import CLAIMS, Evidence
from dprepro.claims.table import BEYOND, Tolerance, bootstrap_counts, percentile_interval
from dprepro.mechanisms.registry import REFERENCE
from dprepro.runtime.seeds import seed_sequence
from dprepro.studies.ldp_indicators.simulation import (
    ESTIMATORS,
    estimators,
    hazard_rate,
    replicate_column,
    replicate_moments,
    truth,
)

__all__ = ["ClaimContext", "ErrorSet", "Statistic", "error_set", "interval", "paired",
           "per_mechanism"]

STUDY = "ldp_indicators"


def _release_ise(errors: np.ndarray) -> np.ndarray:
    """Per-sample ISE of one release: the mean over t of its squared errors (R, T) -> (R,).

    An infinite error makes the ISE infinite (the release is); t where the error is
    NaN (no estimate there) are left out, and a sample with none is NaN.
    """
    squared = np.asarray(errors, dtype=float) ** 2
    infinite = np.isinf(squared).any(axis=1)
    defined = ~np.isnan(squared)
    with np.errstate(invalid="ignore"):
        ise = np.where(defined, squared, 0.0).sum(axis=1) / defined.sum(axis=1)
    return np.where(infinite, np.inf, ise)


def _row_mean(values: np.ndarray) -> np.ndarray:
    if np.isnan(values).any():
        return np.nanmean(values, axis=1)
    return values.mean(axis=1)


class ErrorSet:
    r"""Per-replicate errors :math:`D` (R, T) of every estimator, keyed by setting.

    Keys are ``(censoring, mechanism, alpha, estimator)`` with ``mechanism``
    the registry name (``"none"`` and ``alpha`` NaN for the references).
    With several noise draws per replicate, ``errors[key]`` is the draw mean
    :math:`\bar D_r` and ``squared[key]`` the draw mean of :math:`D^2`,
    :math:`\bar D_r^2 + V_r` (default :math:`D^2`: one draw), so that a
    bootstrap over replicates resamples each replicate with all its draws.
    """

    def __init__(self, errors: Mapping[tuple, np.ndarray],
                 squared: Mapping[tuple, np.ndarray] | None = None,
                 first_draw: Mapping[tuple, np.ndarray] | None = None,
                 rates: Mapping[str, tuple] | None = None,
                 grids: Mapping[str, np.ndarray] | None = None):
        #: censoring label -> (λ_T, λ_C) the main design ran with (empty: not known)
        self.rates = dict(rates or {})
        #: censoring label -> the t grid of the main design's errors (empty: not known)
        self.grids = {k: np.asarray(v, dtype=float) for k, v in dict(grids or {}).items()}
        self.errors = dict(errors)
        squared = dict(squared or {})
        # one release per sample (the first noise draw): its ISE, infinite where the
        # release is (a per-release statistic must not average over draws)
        self._first_ise = {k: _release_ise(d) for k, d in dict(first_draw or {}).items()}
        if extra := set(squared) - set(self.errors):
            raise ValueError(f"squared errors without errors for {sorted(extra)}")
        sizes = {d.shape[0] for d in self.errors.values()}
        if len(sizes) != 1:
            raise ValueError(f"every setting needs the same number of replicates, got {sizes}")
        self.replicates = sizes.pop()
        # p̂(x, t) is NaN where its window is empty: averaged over the t it exists at
        self._ise = {k: _row_mean(squared[k] if k in squared else d**2)
                     for k, d in self.errors.items()}
        self._ie = {k: _row_mean(d) for k, d in self.errors.items()}

    def key(self, censoring, estimator, mechanism="none", alpha=math.nan) -> tuple:
        return (str(censoring), mechanism, float(alpha), estimator)

    def moments(self, weights: np.ndarray) -> _Moments:
        """Statistics under replicate weights (rows summing to 1), shape (B,)."""
        return _Moments(self, weights)


class _Moments:
    def __init__(self, errors: ErrorSet, weights: np.ndarray):
        self.errors, self.weights = errors, weights

    def _get(self, table, key):
        try:
            return table[key]
        except KeyError:
            raise KeyError(f"no replicates for {key}") from None

    def imse(self, key) -> np.ndarray:
        return self.weights @ self._get(self.errors._ise, key)

    def ibias(self, key) -> np.ndarray:
        return self.weights @ self._get(self.errors._ie, key)

    def bias(self, key) -> np.ndarray:
        """The bias curve :math:`\\bar D_t` per weight row, shape (B, T) (NaN where a
        replicate has no estimate at t)."""
        return self.weights @ self._get(self.errors.errors, key)

    def ivar(self, key) -> np.ndarray:
        mean = self.bias(key)  # (B, T)
        return self.imse(key) - (mean**2).mean(axis=1)

    def bias_distance(self, first, second) -> np.ndarray:
        """Time average of :math:`|\\mathrm{bias}_A(t) - \\mathrm{bias}_B(t)|`, shape (B,):
        the distance of two bias curves, which (unlike a difference of the signed IBIAS)
        cannot cancel over t."""
        return _row_mean(np.abs(self.bias(first) - self.bias(second)))

    def median_ise(self, key) -> np.ndarray:
        """Median over the samples of one release's ISE (the first noise draw's), per weights.

        One release per sample, so the statistic does not depend on the number of
        noise draws: the mean of several draws' ISEs is heavy-tailed where the
        estimator's mean does not exist, and its median grows with the draws. The
        weights are bootstrap counts over the replicates divided by their number,
        so each resample's median is that of the sample with every replicate
        repeated its count of times (an even total: the mean of the two middle
        values, as ``numpy.median``); infinite ISEs count as the largest, samples
        without one (NaN) are left out. Unlike the IMSE it exists for every
        estimator. NaN for a resample that holds no sample with an ISE.
        """
        ise = self._get(self.errors._first_ise, key)
        order = np.argsort(ise, kind="stable")  # NaN last
        values = ise[order]
        counts = np.rint(self.weights[:, order] * self.errors.replicates).astype(np.int64)
        counts[:, np.isnan(values)] = 0
        cumulative = np.cumsum(counts, axis=1)
        total = cumulative[:, -1:]
        # the (total + 1) // 2-th and (total // 2 + 1)-th smallest values (1-based)
        low = np.minimum((cumulative < (total + 1) // 2).sum(axis=1), len(values) - 1)
        high = np.minimum((cumulative < total // 2 + 1).sum(axis=1), len(values) - 1)
        with np.errstate(invalid="ignore"):
            median = (values[low] + values[high]) / 2.0
        return np.where(total[:, 0] > 0, median, np.nan)


def error_set(results: Iterable[tuple[Mapping, pd.DataFrame]], *, x: float) -> ErrorSet:
    r"""Errors of every estimator from ``(setting, replicate frame)`` pairs.

    References (non-private estimators) are the same in every job of a
    censoring level and are kept once. Besides the estimators of F(t | x)
    (keys as named in :data:`~dprepro.studies.ldp_indicators.simulation.ESTIMATORS`) it holds the
    cumulative-hazard estimators against Λ(t | x), the presmoother p̂(x, t)
    against P(δ = 1 | x, t) (when the setting gives ``lambda_c``), and each F
    estimator's errors divided by :math:`\sqrt{F(1-F)}` under
    ``"<name>/scaled"`` (so that an ISE is comparable across x, where F differs).
    """
    errors, squared, first = {}, {}, {}
    wanted = {name for target in ("cdf", "hazard", "phat", "cdf_unclipped")
              for name in estimators(target)}
    rates, grids = {}, {}
    for setting, frame in results:
        # a variant (other x, p̂ at x) is told apart by its tag on every key
        tag = setting.get("tag", "")
        if not tag and "lambda_c" in setting:
            rates[str(setting["censoring"])] = (tuple(map(float, setting["lambda_t"])),
                                                tuple(map(float, setting["lambda_c"])))
        mechanism = setting.get("mechanism", "laplace") + tag
        at = setting.get("x", x)
        for name, group in frame.groupby("estimator", sort=False):
            info = ESTIMATORS.get(name)
            if name not in wanted or (info["target"] == "phat" and "lambda_c" not in setting):
                continue
            private = info["private"]
            key = (str(setting["censoring"]), mechanism if private else REFERENCE.mechanism + tag,
                   float(setting["alpha"]) if private else math.nan, name)
            if not private and key in errors:
                continue
            t, mean, within = replicate_moments(group)
            if not tag and "lambda_c" in setting:
                grids.setdefault(str(setting["censoring"]), t)
            true = truth(t, target=info["target"], x=at, lambda_t=setting["lambda_t"],
                         lambda_c=setting.get("lambda_c"))
            # the unclipped F̂_n is infinite where p̂ < 0 meets the last at-risk
            # observation: undefined there (the draw mean is over the finite draws,
            # NaN where none is), left out of its replicate's averages
            errors[key] = np.where(np.isfinite(mean), mean - true, np.nan)
            if np.any(within > 0):
                squared[key] = errors[key] ** 2 + within
            if private and info["target"] in ("cdf", "cdf_unclipped") and "first_draw" in group:
                first[key] = replicate_column(group, "first_draw") - true
            if info["target"] == "phat":
                # weighted by the density of Y at x, f_Y(t | x) = μ e^{-μt} with
                # μ = λ_T(x) + λ_C(x): where the observations whose p̂ enters the
                # estimator lie (the grid weights every t evenly up to 1.5)
                mu = float(hazard_rate(setting["lambda_t"], at)
                           + hazard_rate(setting["lambda_c"], at))
                weight = np.exp(-mu * t)
                weight = np.where(np.isfinite(mean).any(axis=0), weight, np.nan)
                weight = np.sqrt(weight / np.nanmean(weight))
                observed = key[:3] + (name + "/observed",)
                errors[observed] = errors[key] * weight
                if key in squared:
                    squared[observed] = squared[key] * weight**2
            if info["target"] == "cdf":
                scale = np.sqrt(true * (1 - true))
                scaled = key[:3] + (name + "/scaled",)
                errors[scaled] = errors[key] / scale
                if key in squared:
                    squared[scaled] = squared[key] / scale**2
    return ErrorSet(errors, squared, first, rates, grids)



def interval(errors: ErrorSet, statistic: Callable, *, rng, resamples: int, level: float
             ) -> tuple[float, float, float]:
    """``statistic`` of the moments, and its paired percentile bootstrap interval.

    ``statistic`` maps :class:`_Moments` to one value per row of weights; the
    estimate uses equal weights, the interval ``resamples`` bootstrap counts
    drawn from ``rng`` over the replicates.
    """
    r = errors.replicates
    estimate = float(statistic(errors.moments(np.full((1, r), 1.0 / r)))[0])
    counts = bootstrap_counts(r, rng=rng, resamples=resamples)
    return percentile_interval(estimate, statistic(errors.moments(counts / r)), level=level)


# --- from a declaration's statistic to its evidence ----------------------------------------

SOURCE = "paper §5, discussion of Figure 1"
_NO_NUMBER = "the paper gives a figure only (no number to compare)"
_PAPER_MECHANISM = "laplace"
#: What every bootstrapped declaration shares (the study, its units and interval).
PAIRED = dict(study=STUDY, units="simulated samples (each with its noise draws)",
              ci_method="percentile bootstrap over the simulated samples")
NEAR = "within [1/(1 + t), 1 + t], t = near_ratio − 1 (ours)"
NEAR_KEY = "ldp_indicators.claims.near_ratio"


@dataclass(frozen=True)
class Statistic:
    """What a declaration's function gives: its statistic and what its row says beside it.

    ``statistic`` maps the moments under replicate weights
    (:meth:`ErrorSet.moments`) to one value per weight row; ``criterion`` is the
    criterion when it holds a tolerance of ours; ``statement`` overrides the
    declaration's; ``fields`` fill its templates; ``one_release`` marks a
    statistic of the first noise draw only (its note says so); ``untestable`` is why
    these data cannot decide this row (the statistic is still shown); ``applies`` is the
    paper's source of a statement a beyond-the-paper row applies to another mechanism
    (the row's source names both).
    """

    statistic: Callable
    note: str = ""
    criterion: Tolerance | None = None
    statement: str | None = None
    fields: Mapping = field(default_factory=dict)
    one_release: bool = False
    untestable: str = ""
    applies: str = ""


@dataclass
class ClaimContext:
    """The errors and the configuration every declaration's function reads."""

    errors: ErrorSet
    censorings: list
    alphas: list
    mechanisms: list
    seed: int
    near_ratio: float
    bias_tolerance: float
    hazard_bias_tolerance: float
    phat_tolerance: float
    resamples: int
    level: float
    variants: Mapping | None
    x: float
    grid_alphas: list
    noise_draws: int
    n: int

    def key(self, *args) -> tuple:
        return self.errors.key(*args)

    @property
    def near(self) -> Tolerance:
        return Tolerance(lambda t: f"within [{1 / (1 + t):.3g}, {1 + t:g}]", self.near_ratio - 1)

    @property
    def pair(self) -> tuple[str, str] | None:
        """The lowest and highest censoring levels (``None`` with one level)."""
        return (self.censorings[0], self.censorings[-1]) if len(self.censorings) >= 2 else None

    def evidence(self, declaration, binding: Mapping, found: Statistic) -> Evidence:
        """``found``'s statistic with its interval, bootstrapped with the row's own seed.

        The note adds what every row of the study says: that the paper prints no
        number for Figure 1's statements, and how the noise draws enter. A row of the
        paper's statement on another mechanism names the paper's source in its own.
        """
        claim_id = declaration.id.format(**{**binding, **found.fields})
        rng = np.random.default_rng(seed_sequence(self.seed, STUDY, f"claims/{claim_id}", 0))
        value, lower, upper = interval(self.errors, found.statistic, rng=rng,
                                       resamples=self.resamples, level=self.level)
        note = found.note
        if (found.applies or declaration.source) == SOURCE:
            note = f"{note}; {_NO_NUMBER}" if note else _NO_NUMBER
        if self.noise_draws > 1 and not found.one_release:
            note = (f"{note}; {self.errors.replicates} samples × {self.noise_draws} noise "
                    "draws, each sample resampled with its draws")
        elif self.noise_draws > 1:
            note = (f"{note}; {self.errors.replicates} samples, the first of their "
                    f"{self.noise_draws} noise draws each")
        source = None
        if found.applies:
            # the paper's statement, tested on a mechanism the paper does not have
            mechanism = binding["mechanism"].replace("_", " ")
            source = f"{BEYOND}: {found.applies}, for {mechanism}"
        return Evidence(value, lower, upper, note=note, criterion=found.criterion,
                        statement=found.statement, fields=found.fields, source=source,
                        untestable=found.untestable)


def paired(describe: Callable) -> Callable:
    """A declaration's function from one that gives its :class:`Statistic` (or ``None``).

    The row's bootstrap seed is its claim id, which only the declaration knows: the
    function finds the declaration it is registered under.
    """
    @functools.wraps(describe)
    def compute(context: ClaimContext, **binding):
        found = describe(context, **binding)
        if found is None:
            return None
        declaration, = (d for d in CLAIMS.declarations(STUDY) if d.compute is compute)
        return context.evidence(declaration, binding, found)
    return compute


def per_mechanism(tail: str, **texts) -> Callable:
    """Declare the paper's statement ``ldp.<tail>`` for its Laplace mechanism, and again
    as ``ldp.<mechanism>.<tail>`` for every other configured mechanism: the latter is
    ours (origin ``beyond``; the paper has only Laplace), each row's source naming the
    paper's and the mechanism.

    An id template cannot hold an empty segment (a placeholder matches one character
    at least), so the paper's rows and the other mechanisms' are two declarations of
    one function, called with ``mechanism``.
    """
    def register(describe: Callable) -> Callable:
        def paper(context, **binding):
            if _PAPER_MECHANISM not in context.mechanisms:
                return None
            return describe(context, mechanism=_PAPER_MECHANISM, **binding)

        def other(context, mechanism, **binding):
            if mechanism == _PAPER_MECHANISM:
                return None
            found = describe(context, mechanism=mechanism, **binding)
            return None if found is None else replace(found, applies=texts["source"])

        over = texts.pop("over")
        CLAIMS.declare(f"ldp.{tail}", **texts, over=over)(paired(paper))
        beyond = {**texts, "origin": "beyond",
                  "source": f"{BEYOND}: {texts['source']}, for each configured mechanism "
                            "other than the paper's Laplace"}
        CLAIMS.declare(f"ldp.{{mechanism}}.{tail}", **beyond,
                       over=("mechanism", *over))(paired(other))
        return describe
    return register
