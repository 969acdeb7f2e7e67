r"""Conditional survival estimators with (private) failure indicators.

Model and notation follow the ``ldp_indicators`` study (docs/design.md §3): we observe
:math:`(Y_i, \delta_i, X_i)`, :math:`Y = \min(T, C)`, :math:`\delta = 1\{T \le C\}`,
and want :math:`F(t \mid x) = P(T \le t \mid X = x)`.  With the uniform kernel
:math:`K(u) = \tfrac12 1\{|u| \le 1\}` the Nadaraya–Watson weights are

.. math:: W_i(x) = \frac{K((x - X_i)/h)}{\sum_j K((x - X_j)/h)}
          = \frac{1\{|x - X_i| \le h\}}{\#\{j : |x - X_j| \le h\}} .

Every function here accepts one sample (arrays of shape ``(n,)``) or a stack
of replicates (shape ``(R, n)``, one bandwidth per replicate) and is
vectorised over replicates, observations and the time grid.

References
----------
Beran, R. (1981). Nonparametric regression with randomly censored survival
data. Technical report, University of California, Berkeley.
Dabrowska, D. M. (1987). Non-parametric regression with censored survival time
data. Scandinavian Journal of Statistics 14, 269–282.
[EBG23] The generalized Beran estimator with presmoothed (generic) indicators,
as cited under this key by the ``ldp_indicators`` paper.
Local differential privacy in survival analysis using private failure
indicators (the ``ldp_indicators`` paper).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "uniform_kernel_window",
    "beran_cdf",
    "presmoothed_indicators",
    "presmoothed_indicator_sets",
    "presmoothed_indicator_groups",
    "generalized_beran_cdf",
    "private_beran_cdf",
    "conditional_nelson_aalen",
    "conditional_estimator_sets",
]

# The O(n^2) presmoothing pads every replicate's queries to the fullest window
# among _PAIRWISE_BUDGET // n^2 consecutive replicates (32 at n = 500). BLAS picks
# its kernel by the matrix shape, so this fixed grouping keeps p̂ bit for bit
# whatever the block size below is.
_PAIRWISE_BUDGET = 8_000_000
# Bytes of kernel weights built at once: about half the per-core L2 cache, so the
# comparisons, the cast and the product run in cache (one replicate per block at
# n = 500; blocks of 32 replicates, ~50 MB, measured 1.6-2.7x slower).
_CACHE_BUDGET = 1 << 20


def _as_rows(name: str, values) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 1-D (n,) or 2-D (replicates, n), got shape {arr.shape}")
    if arr.shape[1] == 0:
        raise ValueError(f"{name} is empty")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains non-finite values (NaN or inf)")
    return arr


def _check_sample(times, indicators, covariates):
    times = _as_rows("times", times)
    indicators = _as_rows("indicators", indicators)
    covariates = _as_rows("covariates", covariates)
    if not times.shape == indicators.shape == covariates.shape:
        raise ValueError(
            "times, indicators and covariates must have the same shape, got "
            f"{times.shape}, {indicators.shape}, {covariates.shape}"
        )
    return times, indicators, covariates


def _check_bandwidth(name: str, h, replicates: int) -> np.ndarray:
    h = np.asarray(h, dtype=float)
    if h.ndim == 0:
        h = np.full(replicates, float(h))
    if h.shape != (replicates,):
        raise ValueError(f"{name} must be a scalar or have one value per replicate ({replicates})")
    if not np.all(np.isfinite(h)) or np.any(h <= 0):
        raise ValueError(f"{name} must be finite and > 0, got {h[~(np.isfinite(h) & (h > 0))][:3]}")
    return h


def _check_grid(t) -> np.ndarray:
    t = np.atleast_1d(np.asarray(t, dtype=float))
    if t.ndim != 1 or t.size == 0 or not np.all(np.isfinite(t)):
        raise ValueError("t must be a non-empty 1-D array of finite times")
    return t


def _squeeze(result: np.ndarray, was_1d: bool) -> np.ndarray:
    return result[0] if was_1d else result


def uniform_kernel_window(covariates, *, x: float, h) -> np.ndarray:
    r"""Indicator :math:`1\{|x - X_i| \le h\}` of the uniform kernel's support."""
    covariates = _as_rows("covariates", covariates)
    h = _check_bandwidth("h", h, covariates.shape[0])
    return np.abs(covariates - float(x)) <= h[:, None]


def _sorted_risk_set_stack(times, exponent_sets, covariates, x, h):
    """Sort each replicate by time once; per exponent array its sorted exponents, window
    and risk counts.

    Returns the sorted times and, per exponent array, ``(exps_s, window,
    at_risk)``. Ties in time put larger exponents (events) first, the
    Kaplan–Meier convention that censorings at a failure time are still at
    risk: the order by time is shared, and only the rows with tied times (rare
    for continuous times) are re-sorted per array.
    """
    order = np.argsort(times, axis=1)
    times_s = np.take_along_axis(times, order, axis=1)
    tied = np.flatnonzero((np.diff(times_s, axis=1) == 0).any(axis=1))
    inside = np.abs(covariates - x) <= h[:, None]
    shared = None
    out = []
    for exponents in exponent_sets:
        if tied.size:
            own = order.copy()
            own[tied] = np.lexsort((-exponents[tied], times[tied]), axis=1)
            window = np.take_along_axis(inside, own, axis=1)
            out.append((np.take_along_axis(exponents, own, axis=1), window,
                        _risk_counts(window)))
            continue
        if shared is None:
            window = np.take_along_axis(inside, order, axis=1)
            shared = (window, _risk_counts(window))
        out.append((np.take_along_axis(exponents, order, axis=1), *shared))
    return times_s, out


def _risk_counts(window: np.ndarray) -> np.ndarray:
    # Integer risk counts sum_{j >= i} 1{in window}: the uniform kernel's 1/2 and
    # the normalising sum cancel in W_(i) / (1 - sum_{j<i} W_(j)), and counting
    # avoids the round-off of 1 - cumsum(W) that pushes the textbook estimator
    # above 1 after the last in-window observation.
    return np.cumsum(window[:, ::-1], axis=1)[:, ::-1]


def _step_counts(times_s: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``counts[r, j] = #{i : times_s[r, i] <= t[j]}``, by binary search in each sorted row."""
    counts = np.empty((times_s.shape[0], t.size), dtype=np.intp)
    for row, sorted_times in enumerate(times_s):
        counts[row] = np.searchsorted(sorted_times, t, side="right")
    return counts


def _step_values(grid_values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Right-continuous step functions (value after each sorted time) at the counted t."""
    padded = np.concatenate([np.zeros((grid_values.shape[0], 1)), grid_values], axis=1)
    return np.take_along_axis(padded, counts, axis=1)


def _beran_from_sorted(exps_s, window, at_risk, counts) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        log_factor = np.where(window, np.log1p(-1.0 / np.maximum(at_risk, 1)), 0.0)
        contribution = np.where(window & (exps_s != 0), exps_s * log_factor, 0.0)
        log_survival = np.cumsum(contribution, axis=1)
        return 1.0 - np.exp(_step_values(log_survival, counts))


def _nelson_aalen_from_sorted(vals_s, window, at_risk, counts) -> np.ndarray:
    increments = np.where(window, vals_s / np.maximum(at_risk, 1), 0.0)
    return _step_values(np.cumsum(increments, axis=1), counts)


_FROM_SORTED = {"cdf": _beran_from_sorted, "hazard": _nelson_aalen_from_sorted}


def conditional_estimator_sets(times, indicator_sets, covariates, *, x: float, h, t,
                               target: str = "cdf") -> list[np.ndarray]:
    """:func:`beran_cdf` (``target="cdf"``) or :func:`conditional_nelson_aalen`
    (``"hazard"``) for several indicator arrays on one sample.

    The sort by time, the kernel window, the risk counts and the grid positions
    are computed once and shared, so K arrays cost one sort instead of K; each
    result equals the single-array function on that array bit for bit (the
    same floating-point operations). ``indicator_sets`` is a sequence of
    arrays shaped like ``times``.
    """
    if target not in _FROM_SORTED:
        raise ValueError(f"target must be one of {sorted(_FROM_SORTED)}, got {target!r}")
    if len(indicator_sets) == 0:
        raise ValueError("indicator_sets is empty")
    was_1d = np.ndim(times) == 1
    checked = [_check_sample(times, values, covariates) for values in indicator_sets]
    times, _, covariates = checked[0]
    h = _check_bandwidth("h", h, times.shape[0])
    t = _check_grid(t)
    times_s, sets = _sorted_risk_set_stack(times, [values for _, values, _ in checked],
                                           covariates, x, h)
    counts = _step_counts(times_s, t)
    return [_squeeze(_FROM_SORTED[target](*parts, counts), was_1d) for parts in sets]


def beran_cdf(times, indicators, covariates, *, x: float, h, t) -> np.ndarray:
    r"""Beran's conditional distribution function with the uniform kernel.

    With the sample sorted by :math:`Y_{(1)} \le \dots \le Y_{(n)}`,

    .. math::
        F_n(t \mid x) = 1 - \prod_{Y_{(i)} \le t}
            \Bigl[1 - \frac{W_{(i)}(x)}{1 - \sum_{j<i} W_{(j)}(x)}\Bigr]^{\delta_{(i)}} .

    ``indicators`` may be the 0/1 failure indicators (Beran's estimator) or
    real-valued exponents such as presmoothed probabilities
    :math:`\hat p(X_{(i)}, Y_{(i)})` (the generalized Beran estimator of
    [EBG23]); see :func:`generalized_beran_cdf` and :func:`private_beran_cdf`.

    Conventions (documented choices):

    * an observation outside the window has :math:`W_{(i)} = 0` and contributes
      the factor 1, including after the last in-window observation, where
      :math:`1 - \sum_{j<i} W_{(j)} = 0` (the textbook estimator; reference code
      that evaluates ``1 - cumsum(W)`` in floating point can return F > 1);
    * the last in-window observation has factor :math:`0^{e}` = 0 for an
      exponent :math:`e > 0` and 1 for :math:`e = 0`.  A negative exponent
      (possible only for unclipped private :math:`\hat p`) makes the raw
      formula infinite; that is returned as is;
    * ties in :math:`Y` are broken with events first, so with 0/1 indicators
      and a window covering every :math:`X_i` the estimator is exactly the
      Kaplan–Meier estimator of :math:`1 - S(t)`.

    Parameters
    ----------
    times, indicators, covariates : array_like, shape (n,) or (R, n)
        Observed times :math:`Y`, indicators/exponents, covariates :math:`X`.
    x : float
        Covariate value at which to estimate.
    h : float or array_like of shape (R,)
        Bandwidth (one per replicate allowed).
    t : array_like, shape (T,)
        Times at which to evaluate.

    Returns
    -------
    numpy.ndarray, shape (T,) or (R, T)
    """
    return conditional_estimator_sets(times, [indicators], covariates, x=x, h=h, t=t,
                                      target="cdf")[0]


def presmoothed_indicators(times, indicators, covariates, *, b) -> np.ndarray:
    r"""Kernel regression :math:`\hat p(X_i, Y_i)` of the indicators on :math:`(X, Y)`.

    .. math::
        \hat p(x, y) = \frac{\sum_j \tilde K\bigl(\tfrac{x - X_j}{b}\bigr)
                              \tilde K\bigl(\tfrac{y - Y_j}{b}\bigr) \delta_j}
                            {\sum_j \tilde K\bigl(\tfrac{x - X_j}{b}\bigr)
                              \tilde K\bigl(\tfrac{y - Y_j}{b}\bigr)},

    the Nadaraya–Watson estimate of :math:`p(x, y) = P(\delta = 1 \mid X=x, Y=y)`
    with the uniform product kernel, evaluated at every observation (which is
    always inside its own window, so the denominator is at least 1).  With
    privatised indicators :math:`Z_j` in place of :math:`\delta_j` it estimates
    the same function, since :math:`E[Z \mid X, Y, \delta] = \delta`.

    Parameters
    ----------
    times, indicators, covariates : array_like, shape (n,) or (R, n)
    b : float or array_like of shape (R,)
        Bandwidth, the same in both directions (the paper uses :math:`b = \sqrt h`).

    Returns
    -------
    numpy.ndarray, shape of ``times``
    """
    was_1d = np.ndim(times) == 1
    (phat,) = presmoothed_indicator_sets(times, covariates, [indicators], b=b)
    return _squeeze(phat, was_1d)


def presmoothed_indicator_sets(times, covariates, indicator_sets, *, b, where=None
                               ) -> list[np.ndarray]:
    r""":func:`presmoothed_indicators` for several indicator vectors on the same sample.

    The pairwise kernel matrix is the expensive part and does not depend on
    the indicators, so the true and the privatised indicators share one pass.
    ``where`` (bool, shape (R, n)) restricts the evaluation points, e.g. to the
    observations inside the Beran window, the only ones whose :math:`\hat p`
    enters the estimator; other entries are NaN.  Returns 2-D arrays (R, n),
    one per entry of ``indicator_sets``.
    """
    (out,) = presmoothed_indicator_groups(times, covariates, [indicator_sets], b=b, where=where)
    return out


def presmoothed_indicator_groups(times, covariates, groups, *, b, where=None
                                 ) -> list[list[np.ndarray]]:
    r""":func:`presmoothed_indicator_sets` for several groups of indicator vectors.

    The kernel weights are built once per block of replicates and applied to
    each group in its own matrix product, so a group's result does not depend
    on the other groups: the same floating-point operations as
    :func:`presmoothed_indicator_sets` on that group alone (a product with more
    columns may sum in another order). The simulation uses one group per α,
    ``[δ, Z_α]``.
    """
    if len(groups) == 0 or any(len(g) == 0 for g in groups):
        raise ValueError("indicator_sets is empty")
    checked = [[_check_sample(times, values, covariates) for values in g] for g in groups]
    times, _, covariates = checked[0][0]
    stacks = [np.stack([values for _, values, _ in g], axis=2) for g in checked]  # (R, n, k)
    b = _check_bandwidth("b", b, times.shape[0])
    replicates, n = times.shape
    if where is None:
        where = np.ones((replicates, n), dtype=bool)
    where = np.broadcast_to(np.asarray(where, dtype=bool), (replicates, n))
    # Evaluation points first in each row, so that a block of replicates needs
    # only as many query rows as its fullest window.
    query_order = np.argsort(~where, axis=1, kind="stable")
    query_counts = where.sum(axis=1)
    outs = [np.full_like(stacked, np.nan) for stacked in stacks]
    group = max(1, _PAIRWISE_BUDGET // (n * n))
    for first in range(0, replicates, group):
        last = min(first + group, replicates)
        m = int(query_counts[first:last].max(initial=0))
        if m == 0:
            continue
        block = max(1, _CACHE_BUDGET // (8 * m * n))
        for start in range(first, last, block):
            _presmooth_block(slice(start, min(start + block, last)), m, query_order, times,
                             covariates, stacks, b, outs)
    result = []
    for out in outs:
        out[~where] = np.nan
        result.append([out[..., k] for k in range(out.shape[2])])
    return result


def _presmooth_block(rows, m, query_order, times, covariates, stacks, b, outs):
    """p̂ at the first ``m`` queries of each replicate in ``rows``, for every stack."""
    queries = query_order[rows, :m]
    qx = np.take_along_axis(covariates[rows], queries, axis=1)
    qy = np.take_along_axis(times[rows], queries, axis=1)
    bw = b[rows, None]
    # |q - v| <= b as two comparisons against per-query bounds: no (m, n)
    # temporaries of differences, several times faster than abs(q - v) <= b
    near = covariates[rows, None, :] >= (qx - bw)[:, :, None]
    near &= covariates[rows, None, :] <= (qx + bw)[:, :, None]
    near &= times[rows, None, :] >= (qy - bw)[:, :, None]
    near &= times[rows, None, :] <= (qy + bw)[:, :, None]
    weights = near.astype(float)
    totals = weights.sum(axis=2)[..., None]
    for stacked, out in zip(stacks, outs, strict=True):
        smoothed = np.matmul(weights, stacked[rows]) / totals
        # rows with fewer evaluation points than m also got some extra (correct)
        # estimates at other observations; they are masked by the caller
        np.put_along_axis(out[rows], np.broadcast_to(queries[..., None], smoothed.shape),
                          smoothed, axis=1)


def generalized_beran_cdf(times, indicators, covariates, *, x: float, h, t, b=None):
    r"""Generalized Beran estimator :math:`\check F_n(t \mid x)` of [EBG23].

    :func:`beran_cdf` with the exponents :math:`\delta_{(i)}` replaced by the
    presmoothed :math:`\hat p(X_{(i)}, Y_{(i)})` of :func:`presmoothed_indicators`,
    computed with bandwidth ``b`` (default :math:`\sqrt h`, as the paper).
    """
    b = np.sqrt(np.asarray(h, dtype=float)) if b is None else b
    phat = presmoothed_indicators(times, indicators, covariates, b=b)
    return beran_cdf(times, phat, covariates, x=x, h=h, t=t)


def private_beran_cdf(times, private_indicators, covariates, *, x, h, t, b=None, clip=True):
    r"""Private estimator :math:`\hat F_n(t \mid x)`: generalized Beran with :math:`\hat p` from Z.

    :math:`\hat p` is the kernel regression of the privatised indicators
    :math:`Z = \delta + \mathrm{Laplace}(1/\alpha)`; it can leave [0, 1].
    With ``clip=True`` (default, a documented choice) it is projected onto
    [0, 1] before it enters the product-limit: a post-processing step, so the
    guarantee is unchanged, that never moves :math:`\hat p` away from the true
    probability and keeps every factor in [0, 1].  ``clip=False`` gives the raw
    formula, which can be infinite when :math:`\hat p < 0` at the last
    in-window observation.  At zero noise (:math:`Z = \delta`) this equals
    :func:`generalized_beran_cdf` exactly.
    """
    b = np.sqrt(np.asarray(h, dtype=float)) if b is None else b
    phat = presmoothed_indicators(times, private_indicators, covariates, b=b)
    if clip:
        phat = np.clip(phat, 0.0, 1.0)
    return beran_cdf(times, phat, covariates, x=x, h=h, t=t)


def conditional_nelson_aalen(times, indicators, covariates, *, x: float, h, t) -> np.ndarray:
    r"""Conditional Nelson–Aalen cumulative hazard with generic indicators.

    .. math::
        \hat\Lambda(t \mid x) = \sum_{Y_i \le t}
            \frac{W_i(x)\, p_i}{\sum_j W_j(x) 1\{Y_j \ge Y_i\}},

    where :math:`p_i` is :math:`\delta_i`, :math:`Z_i` or a presmoothed
    :math:`\hat p_i` (pass it as ``indicators``).  Linear in the indicators, so
    with :math:`Z_i` it is unbiased for the estimator with :math:`\delta_i`.
    Tied times are counted one at a time (events first), which is lifelines'
    default ``nelson_aalen_smoothing`` :math:`\sum_{k<d} 1/(r-k)` for a tie
    of :math:`d` events among :math:`r` at risk.
    """
    return conditional_estimator_sets(times, [indicators], covariates, x=x, h=h, t=t,
                                      target="hazard")[0]
