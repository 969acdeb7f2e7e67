r"""Accuracy measures for drug sensitivity prediction (study ``repr_transfer``).

Two measures are used by Niinimäki et al. (2019), following Honkela et al. (2018)
and the DREAM 7 drug sensitivity challenge (Costello et al. 2014):

* Spearman's rank correlation between predicted and measured responses;
* the probabilistic concordance index (PC-index), a concordance index in which
  the measured responses are treated as noisy, with Gaussian measurement noise.

References
----------
Costello J. C. et al. (2014). A community effort to assess and improve drug
sensitivity prediction algorithms. Nature Biotechnology 32, 1202-1212.

Honkela A., Das M., Nieminen A., Dikmen O., Kaski S. (2018). Efficient
differentially private learning improves drug sensitivity prediction.
Biology Direct 13:1.

Niinimäki T., Heikkilä M. A., Honkela A., Kaski S. (2019). Representation
transfer for differentially private drug sensitivity prediction.
Bioinformatics 35(14), i218-i224. arXiv:1901.10227.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import special, stats

__all__ = ["probabilistic_c_index", "spearman"]


def _paired_vectors(y_true, y_pred) -> tuple[np.ndarray, np.ndarray]:
    y_true = np.asarray(y_true, dtype=float)
    y_pred = np.asarray(y_pred, dtype=float)
    if y_true.ndim != 1:
        raise ValueError(f"y_true must be one-dimensional, got shape {y_true.shape}")
    if y_pred.shape != y_true.shape:
        raise ValueError(f"y_pred must have the shape of y_true {y_true.shape}, got {y_pred.shape}")
    if y_true.size < 2:
        raise ValueError(f"y_true needs at least 2 values, got {y_true.size}")
    if not np.all(np.isfinite(y_true)):
        raise ValueError("y_true contains non-finite values; drop missing responses first")
    if not np.all(np.isfinite(y_pred)):
        raise ValueError("y_pred contains non-finite values")
    return y_true, y_pred


def spearman(y_true, y_pred, *, constant_value: float = 0.0) -> float:
    r"""Spearman's rank correlation coefficient between measured and predicted values.

    .. math:: \rho = \operatorname{corr}(\operatorname{rank}(y), \operatorname{rank}(\hat y))

    computed by :func:`scipy.stats.spearmanr` (average ranks for ties).

    Parameters
    ----------
    y_true, y_pred : array_like of shape (n,)
        Measured and predicted responses (finite).
    constant_value : float, default 0.0
        Value returned when either vector is constant, where the coefficient is
        undefined. The authors' code (``diffpri.precision``) scores such a
        prediction as 0, i.e. as uninformative; heavily noised DP models can
        produce it.

    Returns
    -------
    float
    """
    y_true, y_pred = _paired_vectors(y_true, y_pred)
    if np.ptp(y_true) == 0 or np.ptp(y_pred) == 0:
        return float(constant_value)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.ConstantInputWarning)
        rho = stats.spearmanr(y_true, y_pred).statistic
    return float(rho)


def probabilistic_c_index(
    y_true, y_pred, *, noise_sd: float | None = None, block_size: int = 2048
) -> float:
    r"""Probabilistic concordance index (PC-index).

    For every unordered pair :math:`i < j` the measured responses are assumed
    observed with independent Gaussian noise of standard deviation
    :math:`\sigma`, so the probability that the true order agrees with the
    predicted order is

    .. math::

        c_{ij} = \begin{cases}
            \Phi\!\left(\dfrac{s_{ij}\,(y_i - y_j)}{\sqrt{2}\,\sigma}\right)
              = \tfrac12\left(1 + \operatorname{erf}\dfrac{s_{ij}(y_i - y_j)}{2\sigma}\right),
              & s_{ij} = \operatorname{sign}(\hat y_i - \hat y_j) \neq 0, \\
            \tfrac12, & \hat y_i = \hat y_j,
        \end{cases}

    and :math:`\mathrm{PC} = \binom{n}{2}^{-1} \sum_{i<j} c_{ij}`. It is 1/2
    for constant (or random) predictions and tends to 1 for a perfect ranking
    when :math:`\sigma` is small relative to the gaps between responses.
    This follows the authors' ``diffpri.pc`` (there in an explicit double loop);
    here it is vectorised in row blocks (O(n^2) time, O(block_size * n) memory).

    Parameters
    ----------
    y_true, y_pred : array_like of shape (n,)
        Measured and predicted responses (finite, n >= 2).
    noise_sd : float, optional
        Noise standard deviation :math:`\sigma` (> 0). Defaults to the sample
        standard deviation (ddof=1) of ``y_true``. The paper's code uses the
        standard deviation of the drug's responses over *all* cell lines, not
        only the test lines, so pass it explicitly to reproduce the paper.
    block_size : int, default 2048
        Rows processed at once.

    Returns
    -------
    float

    References
    ----------
    Costello et al. (2014), Nature Biotechnology 32, 1202-1212 (online methods);
    Honkela et al. (2018), Biology Direct 13:1.
    """
    y_true, y_pred = _paired_vectors(y_true, y_pred)
    if noise_sd is None:
        noise_sd = float(np.std(y_true, ddof=1))
    if isinstance(noise_sd, bool) or not np.isscalar(noise_sd):
        raise TypeError(f"noise_sd must be a positive float, got {noise_sd!r}")
    noise_sd = abs(float(noise_sd))
    if not np.isfinite(noise_sd) or noise_sd <= 0:
        raise ValueError(f"noise_sd must be positive and finite, got {noise_sd!r}")
    if not isinstance(block_size, int | np.integer) or block_size < 1:
        raise ValueError(f"block_size must be a positive integer, got {block_size!r}")

    n = y_true.size
    total = 0.0
    for start in range(0, n, int(block_size)):
        stop = min(start + int(block_size), n)
        rows = np.arange(start, stop)
        sign = np.sign(y_pred[rows, None] - y_pred[None, :])
        c = 0.5 * (
            1.0 + special.erf(sign * (y_true[rows, None] - y_true[None, :]) / (2 * noise_sd))
        )
        # keep only pairs with j > i so each unordered pair counts once
        upper = np.arange(n)[None, :] > rows[:, None]
        total += float(np.sum(c, where=upper))
    return total / (n * (n - 1) / 2)
