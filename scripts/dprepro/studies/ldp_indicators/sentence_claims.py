r"""Two more of the ``ldp_indicators`` paper's sentences as claims.

``ldp.observation_times_insufficient.c<censoring>`` (§1): "observation times alone are
insufficient to infer the survival time distribution", and
``ldp.phat_robust_by_averaging.c<censoring>.a<α>`` (§5): "By averaging the privatized
indicators, p̂_n is robust despite the noise perturbation", the half of the paper's p̂
sentence that Figure 1's α can decide (its "reasonable probability estimates" half is
``ldp.phat_reasonable``'s, untestable there: the noise floor). Declared after the other
claims, bootstrapped like them (:func:`~dprepro.studies.ldp_indicators.claim_statistics.paired`,
each row on its own seed).
"""

from __future__ import annotations

import math

import numpy as np

from dprepro.claims.registry import CLAIMS
from dprepro.claims.table import Tolerance
from dprepro.mechanisms.registry import get_mechanism
from dprepro.studies.ldp_indicators.claim_statistics import (
    _PAPER_MECHANISM,
    PAIRED,
    SOURCE,
    Statistic,
    paired,
)
from dprepro.studies.ldp_indicators.simulation import hazard_rate

__all__ = ["PHAT_NOISE_SHARE"]


@CLAIMS.declare(
    "ldp.observation_times_insufficient.c{censoring}", **PAIRED,
    statement="observation times alone are insufficient to infer the survival time "
              "distribution: the law of Y = min(T, C) at x misses F(t | x) by more than "
              "the Beran estimator F_n, which uses δ, does ({censoring}% censoring)",
    origin="paper",
    source="paper §1 (Introduction: 'the joint information of all outcomes is actually "
           "useful and observation times alone are insufficient to infer the survival time "
           "distribution')",
    statistic="integrated squared bias of F_Y(t | x) = 1 − S_T(t | x) S_C(t | x), the limit "
              "of any estimator from the observation times alone, over IMSE(F_n)",
    criterion="> 1", over=("censoring",))
@paired
def observation_times_insufficient(context, censoring):
    r"""An estimator of the survival time distribution that ignores δ estimates (at best)
    the law of the observation times, :math:`F_Y = 1 - S_T S_C`, whose distance from
    :math:`F` is :math:`F_Y - F = S_T F_C`, exactly, from the design's rates. The row
    compares its integrated square over the t grid with the Beran estimator's IMSE
    (which uses δ) on the simulated samples: above 1, even an infinite sample of
    observation times does worse than n observations with their indicators.
    """
    rates, grid = context.errors.rates.get(censoring), context.errors.grids.get(censoring)
    if rates is None or grid is None:
        return None
    lambda_t, lambda_c = rates
    s_t = np.exp(-float(hazard_rate(lambda_t, context.x)) * grid)
    f_c = 1.0 - np.exp(-float(hazard_rate(lambda_c, context.x)) * grid)
    bias = float(np.mean((s_t * f_c) ** 2))
    beran = context.key(censoring, "beran")
    return Statistic(
        lambda m: bias / m.imse(beran),
        note=f"F_Y − F = S_T F_C exactly (exponential T and C at x = {context.x:g}, the "
             f"configured rates); its integrated square {bias:.4g} is exact, the interval "
             "is that of Beran's IMSE; F_Y is what the empirical law of Y at x converges to")


#: The share of one released indicator's noise (its standard deviation) that p̂ may keep
#: for "robust despite the noise perturbation" (ours).
PHAT_NOISE_SHARE = 0.5


@CLAIMS.declare(
    "ldp.phat_robust_by_averaging.c{censoring}.a{alpha:g}", **PAIRED,
    statement="by averaging the privatized indicators p̂_n is robust despite the noise "
              "perturbation: it keeps at most a fraction t of one released indicator's "
              "noise (Laplace, α = {alpha:g}, {censoring}% censoring)",
    origin="paper", source=f"{SOURCE} ('By averaging the privatized indicators, p̂_n is "
                           "robust despite the noise perturbation')",
    statistic="sqrt(IMSE of p̂_n(x, t) against P(δ = 1 | x, t)) over the t grid / σ(α), the "
              "noise standard deviation of one de-biased released indicator (√2/α)",
    criterion="<= t, t = PHAT_NOISE_SHARE (0.5, ours)", tolerance="PHAT_NOISE_SHARE",
    over=("censoring", "alpha"))
@paired
def phat_robust_by_averaging(context, censoring, alpha):
    r"""The first half of the paper's p̂ sentence, decidable at Figure 1's α.

    Its second half, "reasonable probability estimates", is tested against an absolute
    tolerance by ``ldp.phat_reasonable.*``, which the noise floor makes untestable at
    these α; this row asks what the averaging achieves: one de-biased released
    indicator :math:`V = (Z - \mu)` estimates :math:`p` with noise of standard deviation
    :math:`\sigma(lpha)` (:math:`\sqrt2/lpha` for Laplace); p̂'s root integrated MSE
    divided by it is the share of that noise the kernel average keeps.
    """
    if _PAPER_MECHANISM not in context.mechanisms:
        return None
    key = context.key(censoring, "private_phat", _PAPER_MECHANISM, alpha)
    if key not in context.errors.errors:
        return None
    sigma = math.sqrt(float(get_mechanism(_PAPER_MECHANISM).noise_variance(alpha)))
    return Statistic(
        lambda m: np.sqrt(m.imse(key)) / sigma,
        criterion=Tolerance(lambda t: f"<= {t:g}", PHAT_NOISE_SHARE),
        note=f"σ(α) = {sigma:.4g}: one released indicator's noise; p̂ unclipped; 'robust' "
             f"read as keeping at most {PHAT_NOISE_SHARE:g} of it (our choice; the verdicts "
             "at half and twice it stand beside); the sentence's 'reasonable probability "
             "estimates' is ldp.phat_reasonable's")
