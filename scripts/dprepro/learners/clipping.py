r"""Clipping weights of the SSP linear regression, chosen on synthetic data.

:func:`ssp_clipping_weights` follows the authors' ``diffpri.omega``: the
weights :math:`(w_x, w_y)` that maximise the Spearman correlation of the
noisy SSP fit on synthetic data of the private set's size and dimension (no
privacy spent). Split out of :mod:`dprepro.learners.logistic_regression`, which re-exports it.

References
----------
Honkela A., Das M., Nieminen A., Dikmen O., Kaski S. (2018). Efficient
differentially private learning improves drug sensitivity prediction.
Biology Direct 13:1.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import stats

from dprepro.learners.checks import check_epsilon, check_rng, check_xx_noise
from dprepro.learners.noise import psd_repair, ssp_laplace_noise, ssp_noise

__all__ = ["ssp_clipping_weights"]


def ssp_clipping_weights(
    n: int,
    d: int,
    *,
    epsilon: float,
    rng: np.random.Generator,
    grid: Sequence[float] | None = None,
    n_datasets: int = 20,
    n_noise: int = 20,
    xx_share: float = 0.5,
    ridge: float = 1.0,
    xx_noise: str = "wishart",
) -> tuple[float, float]:
    r"""Choose the clipping weights :math:`(w_x, w_y)` of SSP on synthetic data.

    Follows the authors' ``diffpri.omega`` (non-MCMC branch): for each of
    ``n_datasets`` synthetic sets :math:`x_{ij} \sim N(0,1)`,
    :math:`\beta \sim N(0, I)`, :math:`y \sim N(X\beta, 1)` (both centred)
    and each of ``n_noise`` noise draws of :func:`ssp_noise` at unit bounds
    (rescaled by :math:`B_x^2`, :math:`B_x B_y`), every pair
    :math:`B_x = w_x \mathrm{sd}(X)`, :math:`B_y = w_y \mathrm{sd}(y)` on the grid
    is scored by Spearman's ρ between :math:`X\hat w` and :math:`y`; the pair
    with the largest mean ρ is returned. Uses no private data, so it costs no
    privacy. The noise draws are shared across the grid (common random
    numbers), as in the original.

    Parameters
    ----------
    n, d : int
        Private training-set size and dimension.
    epsilon : float
        The ε that the SSP learner will use (finite).
    rng : numpy.random.Generator
    grid : sequence of float, optional
        Candidate weights; default 0.1, 0.2, ..., 2.0 (the authors' grid).
    n_datasets, n_noise : int, default 20
        Synthetic data sets and noise draws per set (the authors' ``ln=20``).
    xx_noise : {"wishart", "laplace"}
        The noise of the learner the weights are for (:class:`SSPLinearRegression`).

    Returns
    -------
    (w_x, w_y) : tuple of float
    """
    for name, v in (("n", n), ("d", d), ("n_datasets", n_datasets), ("n_noise", n_noise)):
        if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    if n < 3:
        raise ValueError(f"n must be >= 3, got {n}")
    epsilon = check_epsilon(epsilon)
    check_xx_noise(xx_noise)
    if not math.isfinite(epsilon):
        raise ValueError("epsilon must be finite; with epsilon=inf no clipping is needed")
    check_rng(rng, epsilon)
    grid = np.arange(1, 21) / 10.0 if grid is None else np.asarray(grid, dtype=float)
    if grid.ndim != 1 or grid.size == 0 or np.any(~np.isfinite(grid)) or np.any(grid <= 0):
        raise ValueError("grid must be a non-empty 1-D sequence of positive finite numbers")

    score = _ssp_clipping_scores(n, d, epsilon=epsilon, rng=rng, grid=grid,
                                 n_datasets=n_datasets, n_noise=n_noise, xx_share=xx_share,
                                 ridge=ridge, xx_noise=xx_noise)
    i, j = np.unravel_index(np.argmax(score), score.shape)
    return float(grid[i]), float(grid[j])


def _ssp_clipping_scores(n: int, d: int, *, epsilon: float, rng: np.random.Generator,
                         grid: np.ndarray, n_datasets: int, n_noise: int, xx_share: float,
                         ridge: float, xx_noise: str, batch_rows: int = 2**22) -> np.ndarray:
    """Summed Spearman ρ of every grid pair of :func:`ssp_clipping_weights` (validated inputs).

    Per synthetic data set, the ``n_noise`` noise draws are drawn first (the
    generator sees the same calls in the same order as one draw at a time)
    and then all g² fits of as many draws as fit in ``batch_rows`` predicted
    values are one batched solve and one matrix product. Only the ranks of
    the predictions enter the score and the ρ of a row is exact given its
    ranks (:func:`_spearman_rows`); the sum over the draws runs in draw order,
    so the scores, and hence the argmax with its first-wins tie rule, do not
    depend on how the work is batched.
    """
    g = grid.size
    score = np.zeros((g, g))
    eye = np.eye(d)
    noise = ssp_noise if xx_noise == "wishart" else ssp_laplace_noise
    per_batch = max(1, int(batch_rows) // (g * g * n))
    for _ in range(n_datasets):
        x = rng.standard_normal((n, d))
        x -= x.mean(axis=0)
        beta = rng.standard_normal(d)
        y = x @ beta + rng.standard_normal(n)
        y -= y.mean()
        sx, sy = np.std(x, ddof=1), np.std(y, ddof=1)
        # statistics of the clipped data for every (w_x, w_y) pair
        xcs = np.stack([np.clip(x, -wx * sx, wx * sx) for wx in grid])  # (g, n, d)
        xx = np.stack([c.T @ c for c in xcs])  # (g, d, d)
        ycs = np.stack([np.clip(y, -wy * sy, wy * sy) for wy in grid])  # (g, n)
        xy = np.einsum("and,bn->abd", xcs, ycs)  # (g_x, g_y, d)
        bx, by = grid * sx, grid * sy
        bx2 = (bx**2)[None, :, None, None]
        bxby = (bx[:, None] * by[None, :])[None, :, :, None]
        draws = [noise(d, epsilon=epsilon, clip_x=1.0, clip_y=1.0, rng=rng, xx_share=xx_share)
                 for _ in range(n_noise)]
        for start in range(0, n_noise, per_batch):
            chunk = draws[start:start + per_batch]
            W1 = np.stack([w for w, _ in chunk])[:, None]  # (k, 1, d, d)
            L1 = np.stack([v for _, v in chunk])[:, None, None, :]  # (k, 1, 1, d)
            prec = xx[None] + W1 * bx2  # (k, g, d, d)
            if xx_noise == "laplace":
                prec = psd_repair(prec)
            prec = prec + ridge * eye
            rhs = xy[None] + L1 * bxby  # (k, g_x, g_y, d)
            # one factorisation per (draw, w_x), the g_y right-hand sides solved together
            w = np.linalg.solve(prec, np.swapaxes(rhs, -1, -2))  # (k, g_x, d, g_y)
            pred = np.swapaxes(w, -1, -2).reshape(-1, d) @ x.T  # (k g g, n)
            rho = _spearman_rows(pred, y).reshape(len(chunk), g, g)
            for r in rho:  # draw order, as one draw at a time
                score += r
    return score


def _spearman_rows(P: np.ndarray, y: np.ndarray) -> np.ndarray:
    r"""Spearman's ρ of each row of ``P`` with ``y`` (0 for constant rows).

    .. math:: \rho_r = \frac{\sum_i \tilde r_{ri} \tilde s_i}
                           {\sqrt{\sum_i \tilde r_{ri}^2 \, \sum_i \tilde s_i^2}}

    with :math:`\tilde r_{r\cdot}`, :math:`\tilde s` the centred mid-ranks of
    row r of ``P`` and of ``y`` (Spearman 1904; ties get the average rank).

    Why this is exact and order-free: centred mid-ranks are multiples of 1/2
    (the mean rank is (n+1)/2), so every product is a multiple of 1/4 and
    every partial sum is exactly representable while n³ ≪ 2⁵³. The numerator
    and both sums of squares are therefore the same floats whatever the
    summation order, and so is ρ (one correctly rounded multiply, sqrt and
    divide). That lets rows without ties skip the rank array: with the row's
    sort order o, :math:`\sum_i \tilde r_{ri} \tilde s_i = \sum_k (k - \tfrac{n+1}{2})
    \tilde s_{o_k}` and :math:`\sum_i \tilde r_{ri}^2 = n(n^2-1)/12`. Rows with
    ties (and rows :func:`_row_order` cannot order for sure) fall back to
    :func:`scipy.stats.rankdata`. Equals the ``rankdata`` formula bit for bit
    (tests/test_learners.py).
    """
    P = np.asarray(P, dtype=float)
    n = P.shape[1]
    if n**3 >= 2**50:
        raise ValueError(f"rank sums are exact only for n**3 < 2**50, got n={n}")
    ry = stats.rankdata(y)
    ry = ry - ry.mean()
    order, tied = _row_order(P)
    centred = np.arange(1, n + 1) - (n + 1) / 2.0
    num = ry[order] @ centred
    ss = np.full(P.shape[0], np.sum(centred**2))
    if tied.any():
        rp = stats.rankdata(P[tied], axis=1)
        rp = rp - rp.mean(axis=1, keepdims=True)
        num[tied] = rp @ ry
        ss[tied] = np.sum(rp**2, axis=1)
    den = np.sqrt(ss * np.sum(ry**2))
    out = np.zeros(P.shape[0])
    ok = den > 0
    out[ok] = num[ok] / den[ok]
    return out


def _row_order(P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sort order of each row of ``P`` and whether the row may hold a tie.

    One integer sort instead of an argsort: the bits of a float64 read as a
    signed integer, with the 63 low bits flipped for negative numbers, order
    like the floats (-0.0 is made +0.0 first: the two are equal). The lowest
    b = ⌈log₂ n⌉ bits of each key are replaced by the column index and the
    keys sorted; the order is read from those bits. Truncating b bits keeps
    the order weakly (a < b ⇒ trunc(a) ≤ trunc(b)), so a row whose truncated
    keys strictly increase along the sorted order has no tie and this is its
    exact (unique) argsort; a row with two equal truncated keys (a tie, or two
    values within 2⁻⁴² relative of each other) is flagged ``tied`` and left to
    the exact rank formula. Non-finite values are flagged too.
    """
    n = P.shape[1]
    bits = max(1, (n - 1).bit_length())
    low = np.int64((1 << bits) - 1)
    key = (P + 0.0).view(np.int64)  # a new array; + 0.0 turns -0.0 into +0.0
    flip = key >> 63  # -1 for negative numbers, 0 otherwise
    flip &= np.int64(0x7FFFFFFFFFFFFFFF)
    key ^= flip
    key &= ~low
    key |= np.arange(n, dtype=np.int64)
    key.sort(axis=1)
    order = key & low
    key >>= bits
    tied = np.any(key[:, 1:] == key[:, :-1], axis=1) | ~np.isfinite(P).all(axis=1)
    return order, tied
