r"""Revised randomized response (RRR) for a categorical label.

The paper's baseline LNTE is in :mod:`dprepro.mechanisms.lnte` (as published) and
:mod:`dprepro.mechanisms.grid_lnte` (on a public grid); the debiased estimator in
:mod:`dprepro.mechanisms.debiased_rrr`.

RRR (De Faveri et al., SEBD 2024, after Warner 1965 [War65]_ and Greenberg et al. 1969)
privatises the group label of each patient locally: keep the true label with
probability :math:`p`, otherwise output a label drawn uniformly from all
:math:`k` labels (the true one included). Its transition matrix is

.. math::

    P(Y = j \mid X = i) = p\,\mathbb 1\{i = j\} + \frac{1-p}{k},

so the largest likelihood ratio between two inputs is

.. math::

    \frac{p + (1-p)/k}{(1-p)/k} = 1 + \frac{k p}{1-p}
    \quad\Longrightarrow\quad
    \varepsilon_{\text{true}}(p, k) = \log\Bigl(1 + \frac{k p}{1-p}\Bigr).

The paper's calibration and what it really guarantees
------------------------------------------------------
The paper (Sec. 4) divides :math:`p + (1-p)/k` by :math:`(1-p)(1-1/k)`, the
probability of reporting *some* other label, instead of by :math:`(1-p)/k`,
the probability of reporting one *specific* other label, and inverts

.. math:: \varepsilon = \log\frac{p k + 1 - p}{(1-p)(k-1)}
          \;\Longleftrightarrow\;
          p_{\text{paper}}(\varepsilon, k) = \frac{e^\varepsilon (k-1) - 1}{(1+e^\varepsilon)(k-1)}.

Substituting, :math:`1 - p_{\text{paper}} = k / ((1+e^\varepsilon)(k-1))` and
:math:`k p/(1-p) = e^\varepsilon (k-1) - 1`, hence **exactly**

.. math:: \varepsilon_{\text{true}}(p_{\text{paper}}(\varepsilon, k), k) = \varepsilon + \log(k-1)

for every :math:`\varepsilon > 0` and :math:`k \ge 2` (an algebraic identity,
not an approximation; the tests check it to 1e-12). For :math:`k = 2` the two
coincide; for the five IPSS-R groups the nominal :math:`\varepsilon = 1, 2, 3`
are really :math:`2.386, 3.386, 4.386`, and for the four kidney groups
:math:`2.099, 3.099, 4.099`. The ``"exact"`` calibration solves
:math:`\varepsilon_{\text{true}} = \varepsilon`:
:math:`p = (e^\varepsilon - 1)/(e^\varepsilon + k - 1)`, i.e. :math:`k`-ary
randomized response (Wang et al. 2017 [Wan17]_) written as keep-or-uniform.

References
----------
.. [DeF24] F. L. De Faveri, G. Faggioli, N. Ferro, R. Spizzo (2024). "Dead or
   Alive, we can deny it": differentially private survival analysis via
   Revised Randomized Response. SEBD 2024, CEUR-WS.
.. [War65] S. L. Warner (1965). Randomized response: a survey technique for
   eliminating evasive answer bias. JASA 60, 63–69.
.. [Wan17] T. Wang, J. Blocki, N. Li, S. Jha (2017). Locally differentially
   private protocols for frequency estimation. USENIX Security 2017.
.. [GW20] L. Gondara, K. Wang (2020). Differentially private survival function
   estimation. MLHC 2020, PMLR 126, 271–291.
.. [KM58] E. L. Kaplan, P. Meier (1958). Nonparametric estimation from
   incomplete observations. JASA 53, 457–481.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from dprepro.mechanisms.checks import check_draws, check_epsilon, check_generator, check_k, check_p
from dprepro.runtime.privacy_record import PrivacyRecord

__all__ = [
    "CALIBRATIONS",
    "RevisedRandomizedResponse",
    "privatize_labels",
    "rrr_keep_probability",
    "rrr_true_epsilon",
    "transition_matrix",
]

CALIBRATIONS = ("paper", "exact")


# --------------------------------------------------------------------------- RRR maths


def rrr_keep_probability(epsilon, k, *, calibration: str = "paper") -> float:
    r"""Probability :math:`p` of reporting the true label.

    .. math::

        p_{\text{paper}} = \frac{e^\varepsilon (k-1) - 1}{(1+e^\varepsilon)(k-1)},
        \qquad
        p_{\text{exact}} = \frac{e^\varepsilon - 1}{e^\varepsilon + k - 1}.

    ``"paper"`` is the parametrisation of [DeF24]_ (k = 5: 0.6638, 0.8510,
    0.9407 for ε = 1, 2, 3); it is really
    :math:`(\varepsilon + \log(k-1))`-LDP (see the module notes). ``"exact"``
    makes keep-or-uniform exactly ε-LDP.

    Parameters
    ----------
    epsilon : float
        Nominal privacy level, finite and > 0.
    k : int
        Number of categories, >= 2.
    calibration : {"paper", "exact"}

    Returns
    -------
    float
    """
    eps = check_epsilon(epsilon)
    k = check_k(k)
    calibration = check_calibration(calibration)
    e = np.exp(eps)
    if calibration == "paper":
        return float((e * (k - 1) - 1) / ((1 + e) * (k - 1)))
    return float((e - 1) / (e + k - 1))


def rrr_true_epsilon(p, k) -> float:
    r"""Exact LDP level of keep-with-probability-``p``-else-uniform over ``k`` labels.

    .. math:: \varepsilon_{\text{true}} = \log\Bigl(1 + \frac{k p}{1-p}\Bigr),

    the log of the largest ratio :math:`P(Y=j|X=i)/P(Y=j|X=i')` (attained at
    :math:`j = i \ne i'`). For the paper's :math:`p` this is exactly
    :math:`\varepsilon + \log(k-1)`.

    Parameters
    ----------
    p : float
        Keep probability in [0, 1).
    k : int
        Number of categories, >= 2.
    """
    return float(np.log1p(check_k(k) * check_p(p) / (1 - p)))


def transition_matrix(p, k) -> np.ndarray:
    r"""Theoretical :math:`k \times k` matrix :math:`P_{ij} = p\,1\{i=j\} + (1-p)/k`.

    Rows are true labels, columns reported labels; rows sum to 1.
    """
    p = check_p(p)
    k = check_k(k)
    return np.full((k, k), (1 - p) / k) + p * np.eye(k)


@dataclass(frozen=True)
class RevisedRandomizedResponse:
    r"""Revised randomized response on a fixed set of categories.

    Each label is kept with probability :math:`p` (from ``epsilon`` and
    ``calibration`` via :func:`rrr_keep_probability`), otherwise replaced by a
    uniform draw from all categories. Sampling is vectorised: one uniform for
    the coin and one integer for the replacement per output, so
    :math:`10^6` labels take a few milliseconds.

    Parameters
    ----------
    epsilon : float
        Nominal privacy level (keyword-only), finite and > 0.
    categories : sequence
        The k >= 2 distinct labels (the output alphabet).
    calibration : {"paper", "exact"}, default "paper"

    Attributes
    ----------
    k, p, true_epsilon
        Number of categories, keep probability, exact LDP level.
    """

    epsilon: float
    categories: tuple
    calibration: str = "paper"

    def __init__(self, *, epsilon, categories, calibration: str = "paper"):
        eps = check_epsilon(epsilon)
        cats = tuple(pd.unique(pd.Series(list(categories), dtype=object)))
        if len(cats) != len(list(categories)):
            raise ValueError("categories must be distinct")
        if len(cats) < 2:
            raise ValueError(f"categories must hold at least 2 labels, got {list(cats)}")
        object.__setattr__(self, "epsilon", eps)
        object.__setattr__(self, "categories", cats)
        object.__setattr__(self, "calibration", check_calibration(calibration))

    @property
    def k(self) -> int:
        return len(self.categories)

    @property
    def p(self) -> float:
        return rrr_keep_probability(self.epsilon, self.k, calibration=self.calibration)

    @property
    def true_epsilon(self) -> float:
        return rrr_true_epsilon(self.p, self.k)

    def transition_matrix(self) -> np.ndarray:
        """:func:`transition_matrix` in the order of ``categories``."""
        return transition_matrix(self.p, self.k)

    def encode(self, labels) -> np.ndarray:
        """Integer codes (positions in ``categories``) of ``labels``; unknown labels raise."""
        values = np.asarray(labels, dtype=object).ravel()
        codes = pd.Categorical(values, categories=list(self.categories)).codes
        if np.any(codes < 0):
            bad = pd.unique(pd.Series(values[codes < 0], dtype=object))[:5]
            raise ValueError(
                f"labels contains values not among categories {list(self.categories)}: {list(bad)}"
            )
        return codes.astype(np.intp).reshape(np.shape(labels))

    def privatize_codes(self, codes, *, rng, draws=None) -> np.ndarray:
        """Privatise integer codes ``0..k-1``; shape ``codes.shape`` or ``(draws, *shape)``."""
        rng = check_generator(rng)
        draws = check_draws(draws)
        codes = np.asarray(codes)
        if not np.issubdtype(codes.dtype, np.integer):
            raise TypeError(f"codes must be integers, got dtype {codes.dtype}")
        if codes.size and (codes.min() < 0 or codes.max() >= self.k):
            raise ValueError(f"codes must lie in 0..{self.k - 1}")
        shape = codes.shape if draws is None else (draws, *codes.shape)
        keep = rng.random(shape) < self.p
        replacement = rng.integers(0, self.k, size=shape, dtype=np.intp)
        return np.where(keep, codes, replacement)

    def privatize(self, labels, *, rng, draws=None) -> np.ndarray:
        """Privatise labels; returns labels (same alphabet), shape as :meth:`privatize_codes`."""
        rng = check_generator(rng)
        codes = self.encode(labels)
        out = self.privatize_codes(codes, rng=rng, draws=draws)
        return np.asarray(self.categories, dtype=object)[out]

    def privacy_record(self, *, privacy_unit: str = "record") -> PrivacyRecord:
        r"""The privacy statement of a release made by this mechanism.

        Stated ε is the configured ``epsilon``; the true level is
        :math:`\ln(1 + kp/(1-p))` (:func:`rrr_true_epsilon`) for the keep
        probability :math:`p` this object draws with, so the two differ by
        :math:`\ln(k-1)` under the paper's calibration and agree under
        ``"exact"``. ``privacy_unit`` names whose label one draw protects.
        """
        p, true = self.p, self.true_epsilon
        note = (f"RRR on the group label, keep probability p = {p:.4f}, k = {self.k}; "
                f"true LDP level ln(1 + kp/(1-p)) = {true:.3f}")
        return PrivacyRecord(mechanism="rrr", release=True, stated=self.epsilon,
                             true_epsilon=true, privacy_unit=privacy_unit, note=note,
                             extra={"calibration": self.calibration})


def privatize_labels(
    labels, *, epsilon, categories, rng, calibration: str = "paper", draws=None
) -> np.ndarray:
    """Privatise ``labels`` with RRR (see :class:`RevisedRandomizedResponse`).

    Parameters
    ----------
    labels : array_like
        True labels, each one of ``categories``.
    epsilon : float
        Nominal privacy level, finite and > 0.
    categories : sequence
        Output alphabet (k >= 2 distinct labels).
    rng : numpy.random.Generator
    calibration : {"paper", "exact"}, default "paper"
    draws : int, optional
        Number of independent replicates; output shape ``(draws, n)``.

    Returns
    -------
    numpy.ndarray of object
    """
    mech = RevisedRandomizedResponse(
        epsilon=epsilon, categories=categories, calibration=calibration
    )
    return mech.privatize(labels, rng=rng, draws=draws)


def check_calibration(calibration) -> str:
    if calibration not in CALIBRATIONS:
        raise ValueError(f"calibration must be one of {CALIBRATIONS}, got {calibration!r}")
    return calibration

