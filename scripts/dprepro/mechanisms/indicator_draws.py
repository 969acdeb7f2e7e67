"""Local differential-privacy mechanisms on failure indicators.

API in the style of diffprivlib: keyword-only privacy parameter, an explicit
:class:`numpy.random.Generator`, eager validation with ``ValueError`` /
``TypeError``.
"""

from __future__ import annotations

import numpy as np

from dprepro.mechanisms.checks import check_generator, check_privacy_parameter

__all__ = [
    "debias_randomized_response",
    "laplace_indicators",
    "randomized_response_indicators",
    "randomized_response_keep_probability",
]


def laplace_indicators(delta, *, alpha: float, rng: np.random.Generator) -> np.ndarray:
    r"""Privatise binary failure indicators with the Laplace mechanism.

    .. math::
        Z_k = \delta_k + \mu_k, \qquad \mu_k \overset{iid}{\sim} \mathrm{Laplace}(0, 1/\alpha).

    An indicator has sensitivity :math:`|\delta - \delta'| \le 1`, so the
    density ratio of :math:`Z` under neighbouring inputs is at most
    :math:`\exp(\alpha |\delta-\delta'|) \le e^{\alpha}`: the mechanism is
    exactly :math:`\alpha`-locally differentially private, non-interactive,
    and :math:`E[Z \mid \delta] = \delta`, so any estimator linear in the
    indicators stays unbiased.

    The noise is drawn as ``(1/alpha)`` times one standard Laplace variate per
    indicator (numpy draws ``Laplace(0, s)`` as ``s`` times the standard draw of
    the same uniform), so the same generator state at two α gives noises that
    are exact rescalings of each other: common random numbers across α.
    Each α is α-LDP on its own, but two α from one generator state together
    are **not private** (ε = ∞): :math:`\alpha_1 Z_1 - \alpha_2 Z_2 =
    (\alpha_1 - \alpha_2)\delta`. A simulation device for paired comparisons,
    never a release design.

    The scale ``1/alpha`` is a documented decision: the symbol of the Laplace
    parameter is lost in the paper's text; ``1/alpha`` is the unique scale
    that makes a sensitivity-1 query exactly α-LDP.

    Parameters
    ----------
    delta : array_like of {0, 1}
        Failure indicators (any shape; replicates × n is typical).
    alpha : float
        Local privacy level, ``alpha > 0`` (keyword-only).
    rng : numpy.random.Generator
        Source of the noise.

    Returns
    -------
    numpy.ndarray of float
        ``Z`` with the shape of ``delta``.

    References
    ----------
    Dwork, McSherry, Nissim & Smith (2006), Calibrating noise to sensitivity.
    Duchi, Jordan & Wainwright (2018), Minimax optimal procedures for locally
    private estimation, JASA 113.
    """
    alpha = check_privacy_parameter(alpha, "alpha")
    rng = check_generator(rng)
    delta = _check_indicators(delta)
    return delta.astype(float) + rng.laplace(0.0, 1.0 / alpha, size=delta.shape)


def _check_indicators(delta) -> np.ndarray:
    delta = np.asarray(delta)
    if delta.dtype == bool:
        delta = delta.astype(np.int8)
    if not np.issubdtype(delta.dtype, np.number):
        raise TypeError(f"delta must be numeric 0/1 indicators, got dtype {delta.dtype}")
    if not np.all(np.isfinite(delta)):
        raise ValueError("delta contains non-finite values (NaN or inf); indicators must be 0 or 1")
    if not np.all((delta == 0) | (delta == 1)):
        bad = np.unique(delta[(delta != 0) & (delta != 1)])[:5]
        raise ValueError(f"delta must contain only 0 and 1, found {bad.tolist()}")
    return delta


def randomized_response_keep_probability(alpha: float) -> float:
    r""":math:`p = e^\alpha / (1 + e^\alpha)`, the probability that δ is reported as is."""
    alpha = check_privacy_parameter(alpha, "alpha")
    return float(1.0 / (1.0 + np.exp(-alpha)))


def randomized_response_indicators(delta, *, alpha: float, rng: np.random.Generator
                                   ) -> np.ndarray:
    r"""Privatise binary failure indicators with (Warner's) binary randomized response.

    .. math::
        Z_k = \begin{cases} \delta_k & \text{with probability } p = e^\alpha/(1+e^\alpha),\\
                             1 - \delta_k & \text{with probability } 1 - p, \end{cases}

    drawn as :math:`Z_k = \delta_k` if :math:`U_k < p`, else :math:`1 - \delta_k`, with
    :math:`U_k` uniform from ``rng`` (one uniform per indicator, whatever α: the
    same generator state gives common random numbers across α). For either
    output the likelihood ratio between δ = 1 and δ = 0 is
    :math:`p/(1-p) = e^\alpha`, so the mechanism is exactly α-LDP. The
    released bits are biased, :math:`E[Z \mid \delta] = (1-p) + (2p-1)\delta`;
    :func:`debias_randomized_response` removes that.

    Each α is α-LDP on its own, but two α from one generator state together
    are **not private** (ε = ∞): with shared uniforms :math:`Z_1 \ne Z_2`
    happens only when δ is kept at the larger α, which then reveals δ. A
    simulation device for paired comparisons, never a release design.

    Parameters
    ----------
    delta : array_like of {0, 1}
    alpha : float
        Local privacy level, ``alpha > 0`` (keyword-only).
    rng : numpy.random.Generator

    Returns
    -------
    numpy.ndarray of float (0.0 / 1.0), the shape of ``delta``.

    References
    ----------
    Warner, S. L. (1965). Randomized response: a survey technique for eliminating
    evasive answer bias. JASA 60, 63–69.
    Kairouz, Oh & Viswanath (2016). Extremal mechanisms for local differential
    privacy. JMLR 17 (binary randomized response is optimal for one bit).
    """
    p = randomized_response_keep_probability(alpha)
    rng = check_generator(rng)
    delta = _check_indicators(delta)
    keep = rng.random(delta.shape) < p
    return np.where(keep, delta, 1 - delta).astype(float)


def debias_randomized_response(released, *, alpha: float) -> np.ndarray:
    r"""Unbiased proxy of δ from randomized-response bits: :math:`(Z - (1-p)) / (2p - 1)`.

    :math:`E[\cdot \mid \delta] = \delta`; its variance is
    :math:`p(1-p)/(2p-1)^2 = e^\alpha/(e^\alpha - 1)^2` whatever δ, about half
    of Laplace(1/α)'s :math:`2/\alpha^2` for small α.
    """
    p = randomized_response_keep_probability(alpha)
    return (np.asarray(released, dtype=float) - (1.0 - p)) / (2.0 * p - 1.0)
