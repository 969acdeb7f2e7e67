"""Direct plug-in bandwidth for kernel density estimation (port of ``KernSmooth::dpik``).

The port follows R's KernSmooth 2.23 (``dpik``, ``bkfe`` and the Fortran ``linbin``)
operation by operation, including the parts that only matter at the last bit:

* ``mean`` and ``var`` are computed the way R's C code does (two passes accumulated in
  ``long double``).  This is not pedantry: whether the sample maximum survives the
  linear binning depends on the last bit of the standardised range (see
  :func:`_linbin_rows`), and dropping or keeping one observation moves the bandwidth
  of a small sample by far more than any rounding error.
* type-7 quantiles replicate ``stats::quantile`` including its "no interpolation
  between equal order statistics" rule.

The long-double sums match R when ``numpy.longdouble`` is the C ``long double`` R was
built with: x87 extended precision on x86-64 Linux (where the committed reference
values come from), IEEE quad on aarch64 Linux, plain double on macOS arm64.  numpy on
Windows has a 64-bit ``longdouble`` while R there uses extended precision, so there a
few percent of small samples may flip the maximum-observation decision and differ
from R by O(1/n).
"""

from __future__ import annotations

import math
import operator
import warnings

import numpy as np

__all__ = ["dpik", "dpik_rows"]

_SCALEST = ("minim", "stdev", "iqr")

# Canonical bandwidth delta_0(K) = (R(K) / mu_2(K)^2)^(1/5), as tabulated in dpik().
_DEL0 = {
    "normal": 1 / ((4 * math.pi) ** (1 / 10)),
    "box": (9 / 2) ** (1 / 5),
    "epanech": 15 ** (1 / 5),
    "biweight": 35 ** (1 / 5),
    "triweight": (9450 / 143) ** (1 / 5),
}

# C_r = -He_r(0), so that C_r * sqrt(2/pi) = -2 phi^(r)(0): the AMSE-optimal
# normal-kernel bandwidth for psi_r given psi_{r+2} is
# (C_r * sqrt(2/pi) / (psi_{r+2} * n))^(1/(r+3)), written as in dpik().
_PSI_CONST = {4: -3.0, 6: 15.0, 8: -105.0, 10: 945.0}

_MAX_LEVEL = 5
_IQR_TO_SD = 1.349
_INV_SQRT_2PI = 0.398942280401432677939946059934  # R's M_1_SQRT_2PI

_COARSE_GRID_MSG = (
    "Binning grid too coarse for current (small) bandwidth: consider increasing 'gridsize'"
)


def dpik(
    x,
    *,
    scalest: str = "minim",
    level: int = 2,
    kernel: str = "normal",
    canonical: bool = False,
    gridsize: int = 401,
    range_x=None,
    truncate: bool = True,
) -> float:
    r"""Direct plug-in bandwidth for kernel density estimation.

    A port of ``KernSmooth::dpik`` (M. P. Wand) that reproduces R's value to
    floating-point accuracy, with the same defaults.

    Parameters
    ----------
    x : array_like, shape (n,)
        The sample; at least 2 finite values.
    scalest : {"minim", "stdev", "iqr"}
        Scale estimate :math:`\hat\sigma` used for the normal-scale start and for
        standardising the data: the sample standard deviation ``"stdev"``, the
        interquartile range divided by 1.349 ``"iqr"``, or the smaller of the two
        ``"minim"``.
    level : int, 0 to 5
        Number of functional-estimation stages. ``level=0`` is the normal-scale rule.
    kernel : {"normal", "box", "epanech", "biweight", "triweight"}
        Kernel the bandwidth is intended for. The functionals are always estimated with
        normal kernels (as in KernSmooth); ``kernel`` only sets the canonical factor
        :math:`\delta_0(K)`.
    canonical : bool
        Return the bandwidth on the canonical scale (:math:`\delta_0(K) = 1`).
    gridsize : int
        Number of equally spaced grid points used for linear binning.
    range_x : pair of float, optional
        End points of the binning grid in the units of ``x``; default
        ``(min(x), max(x))``.
    truncate : bool
        If true, observations outside ``range_x`` are ignored by the binning; otherwise
        their weight goes to the nearest end grid point.

    Returns
    -------
    float
        The plug-in bandwidth :math:`\hat h` in the units of ``x``.

    Raises
    ------
    ValueError
        For fewer than 2 observations, non-finite values, a zero scale estimate
        (R: "scale estimate is zero for input data"), invalid options, or data for
        which an estimated functional has the wrong sign so that the next bandwidth is
        undefined (R fails or returns ``NaN`` there).

    Warns
    -----
    RuntimeWarning
        When a functional bandwidth is smaller than one bin width (R's "Binning grid
        too coarse" warning); the estimate then only uses the zero-lag kernel weight.

    See Also
    --------
    dpik_rows : the same bandwidth for every row of a 2-D array, vectorised.

    Notes
    -----
    With :math:`\hat\sigma` from ``scalest``, the data are standardised,
    :math:`z_i = (x_i - \bar x)/\hat\sigma`, and linearly binned on ``gridsize`` points
    spanning the standardised ``range_x`` (bin counts :math:`c_k`, grid spacing
    :math:`\delta`, :math:`m = \sum_k c_k`). The binned kernel functional estimate of
    :math:`\psi_r = \int f^{(r)} f` is

    .. math::

        \tilde\psi_r(g) = m^{-2} \sum_k \sum_l c_k c_l\, \phi_g^{(r)}\big((k-l)\delta\big),
        \qquad |k - l|\,\delta \le (4 + r) g,

    with :math:`\phi_g^{(r)}(u) = g^{-r-1} He_r(u/g) \phi(u/g)`. For the default
    ``level=2`` the plug-in steps are (:math:`n` = sample size):

    1. :math:`\psi_8` from the normal scale rule,
       :math:`\psi_8^{NS} = 105 / (32 \sqrt\pi)` (standardised data), giving
       :math:`g_1 = \big(-2\phi^{(6)}(0) / (\psi_8^{NS} n)\big)^{1/9}
       = \big(2 \sqrt 2^{\,9} / (7 n)\big)^{1/9}`;
    2. :math:`\hat\psi_6 = \tilde\psi_6(g_1)`;
    3. :math:`g_2 = \big(-2\phi^{(4)}(0) / (\hat\psi_6 n)\big)^{1/7}
       = \big(-3 \sqrt{2/\pi} / (\hat\psi_6 n)\big)^{1/7}`;
    4. :math:`\hat\psi_4 = \tilde\psi_4(g_2)`;
    5. :math:`\hat h = \hat\sigma \big(R(K) / (\mu_2(K)^2 \hat\psi_4 n)\big)^{1/5}
       = \hat\sigma\, \delta_0(K)\, (\hat\psi_4 n)^{-1/5}`.

    Other levels start the chain at :math:`\psi_{2\,\mathrm{level}+4}`; ``level=0``
    uses :math:`\psi_4^{NS} = 3/(8\sqrt\pi)`.

    Two properties of R's implementation are kept on purpose. The estimates are
    normalised by the binned count :math:`m`, while the bandwidth formulas use
    :math:`n`. And with ``truncate=True`` the Fortran binning drops every observation
    whose grid coordinate reaches the last grid point, so with the default range the
    sample maximum (and its ties) is dropped or kept depending on the rounding of
    :math:`(\max z - \min z)/\delta` -- the port reproduces that decision bit for bit.

    References
    ----------
    M. P. Wand and M. C. Jones (1995). *Kernel Smoothing*. Chapman & Hall, §3.6.

    M. P. Wand. KernSmooth: Functions for Kernel Smoothing Supporting Wand & Jones
    (1995). R package, https://CRAN.R-project.org/package=KernSmooth.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> h = dpik(rng.normal(size=500))
    """
    arr = np.asarray(x, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"x must be one-dimensional, got shape {arr.shape}")
    return float(
        _dpik_batch(
            arr[None, :],
            scalest=scalest,
            level=level,
            kernel=kernel,
            canonical=canonical,
            gridsize=gridsize,
            range_x=range_x,
            truncate=truncate,
            single=True,
        )[0]
    )


def dpik_rows(
    X,
    *,
    scalest: str = "minim",
    level: int = 2,
    kernel: str = "normal",
    canonical: bool = False,
    gridsize: int = 401,
    range_x=None,
    truncate: bool = True,
) -> np.ndarray:
    """:func:`dpik` for each row of a 2-D array, vectorised over rows.

    Parameters
    ----------
    X : array_like, shape (replicates, n)
        One sample per row, each with at least 2 finite values.
    scalest, level, kernel, canonical, gridsize, truncate
        As in :func:`dpik`, applied to every row.
    range_x : pair of float, optional
        Common grid end points for all rows; default: each row's own range.

    Returns
    -------
    numpy.ndarray, shape (replicates,)
        ``dpik(X[i])`` for every row ``i``.

    Raises
    ------
    ValueError
        As :func:`dpik`; the message names the first offending row.
    """
    arr = np.asarray(X, dtype=float)
    if arr.ndim != 2:
        raise ValueError(f"X must be two-dimensional (replicates x n), got shape {arr.shape}")
    return _dpik_batch(
        arr,
        scalest=scalest,
        level=level,
        kernel=kernel,
        canonical=canonical,
        gridsize=gridsize,
        range_x=range_x,
        truncate=truncate,
        single=False,
    )


def _dpik_batch(
    X: np.ndarray,
    *,
    scalest: str,
    level: int,
    kernel: str,
    canonical: bool,
    gridsize: int,
    range_x,
    truncate: bool,
    single: bool,
) -> np.ndarray:
    M, level = _check_options(scalest, level, kernel, gridsize)
    rows, n = X.shape
    scale, counts, delta = _standardised_counts(X, scalest, M, range_x, truncate, single)
    n_binned = counts.sum(axis=1)
    acf = _autocorrelation(counts)

    nf = float(n)
    coarse = np.zeros(rows, dtype=bool)
    if level == 0:
        psi4 = np.full(rows, 3 / (8 * math.sqrt(math.pi)))
    else:
        top = 2 * level + 2
        # Normal-scale bandwidth for the top functional, written as in dpik().
        g = np.full(rows, (2 * math.sqrt(2) ** (top + 3) / ((top + 1) * nf)) ** (1 / (top + 3)))
        psi = _bkfe(acf, n_binned, delta, g, top, coarse)
        for r in range(top - 2, 2, -2):
            base = _PSI_CONST[r] * math.sqrt(2 / math.pi) / (psi * nf)
            bad = ~(base > 0)
            if bad.any():
                i = int(np.argmax(bad))
                raise ValueError(
                    f"estimated psi_{r + 2} = {psi[i]:.6g} has the wrong sign, so the "
                    f"bandwidth for psi_{r} is undefined{_where(i, single)} (R's dpik fails here)"
                )
            g = base ** (1 / (r + 3))
            psi = _bkfe(acf, n_binned, delta, g, r, coarse)
        psi4 = psi
    bad = ~(psi4 > 0)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(
            f"estimated psi_4 = {psi4[i]:.6g} is not positive, so the bandwidth is "
            f"undefined{_where(i, single)} (R's dpik returns NaN here)"
        )
    if coarse.any():
        warnings.warn(_COARSE_GRID_MSG, RuntimeWarning, stacklevel=3)

    del0 = 1.0 if canonical else _DEL0[kernel]
    return scale * del0 * (1 / (psi4 * nf)) ** (1 / 5)


def _where(i: int, single: bool) -> str:
    return "" if single else f" (row {i})"


def _standardised_counts(
    X: np.ndarray, scalest: str, M: int, range_x, truncate: bool, single: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validate the samples, then standardise and bin them as dpik() does.

    Returns the scale estimates, the bin counts (rows x M) and the standardised bin
    widths.
    """
    rows, n = X.shape
    if n < 2:
        raise ValueError(f"dpik needs at least 2 observations per sample, got {n}")
    finite = np.isfinite(X).all(axis=1)
    if not finite.all():
        i = int(np.argmin(finite))
        raise ValueError(f"x contains non-finite values (NaN or inf){_where(i, single)}")

    mean = _r_mean(X)
    scale, lo, hi = _scale_estimate(X, mean, scalest)
    zero = scale == 0
    if zero.any():
        i = int(np.argmax(zero))
        hint = (
            "; the IQR is zero because the middle half of the values are tied: try scalest='stdev'"
            if scalest != "stdev" and lo[i] != hi[i]
            else ""
        )
        raise ValueError(f"scale estimate is zero for input data{_where(i, single)}{hint}")

    if range_x is None:
        a, b = lo, hi
    else:
        a, b = _check_range(range_x)
        a, b = np.full(rows, a), np.full(rows, b)

    # Same operations as dpik(): data and grid ends are standardised separately, so
    # the extreme observations coincide bit for bit with the grid ends.
    sx = (X - mean[:, None]) / scale[:, None]
    sa = (a - mean) / scale
    sb = (b - mean) / scale
    counts = _linbin_rows(sx, sa, sb, M, truncate)
    return scale, counts, (sb - sa) / (M - 1)


def _check_options(scalest, level, kernel, gridsize) -> tuple[int, int]:
    if scalest not in _SCALEST:
        raise ValueError(f"unsupported scalest {scalest!r}; expected one of {_SCALEST}")
    if kernel not in _DEL0:
        raise ValueError(f"unsupported kernel {kernel!r}; expected one of {tuple(_DEL0)}")
    if isinstance(level, bool) or isinstance(gridsize, bool):
        raise ValueError("level and gridsize must be integers, not bool")
    try:
        level = operator.index(level)
    except TypeError:
        raise ValueError(f"level must be an integer from 0 to 5, got {level!r}") from None
    if not 0 <= level <= _MAX_LEVEL:
        raise ValueError(f"level must be an integer from 0 to 5, got {level}")
    try:
        M = operator.index(gridsize)
    except TypeError:
        raise ValueError(f"gridsize must be an integer >= 2, got {gridsize!r}") from None
    if M < 2:
        raise ValueError(f"gridsize must be an integer >= 2, got {M}")
    return M, level


def _check_range(range_x) -> tuple[float, float]:
    try:
        a, b = (float(v) for v in range_x)
    except (TypeError, ValueError):
        raise ValueError(f"range_x must be a pair of numbers, got {range_x!r}") from None
    if not (math.isfinite(a) and math.isfinite(b) and a < b):
        raise ValueError(f"range_x must be finite with range_x[0] < range_x[1], got {range_x!r}")
    return a, b


def _r_mean(X: np.ndarray) -> np.ndarray:
    """Row means as R's ``mean()``: sequential long-double sum, then a correction pass."""
    xl = X.astype(np.longdouble)
    n = np.longdouble(X.shape[1])
    # cumsum, unlike sum, accumulates strictly left to right, like R's C loop.
    s = np.cumsum(xl, axis=1)[:, -1] / n
    ok = np.isfinite(s)
    t = np.cumsum(xl - s[:, None], axis=1)[:, -1] / n
    s = np.where(ok, s + t, s)
    return s.astype(float)


def _r_var(X: np.ndarray, mean: np.ndarray) -> np.ndarray:
    """Row variances as R's ``var()`` (C ``cov_na_1``): long-double deviations from the
    double-rounded mean."""
    d = X.astype(np.longdouble) - mean.astype(np.longdouble)[:, None]
    return (np.cumsum(d * d, axis=1)[:, -1] / np.longdouble(X.shape[1] - 1)).astype(float)


def _scale_estimate(
    X: np.ndarray, mean: np.ndarray, scalest: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Scale estimate per row, plus the row minima and maxima (from the same partition)."""
    n = X.shape[1]
    # stats::quantile type 7: 1-based index 1 + (n - 1) p.
    idx = [1 + (n - 1) * p for p in (0.25, 0.75)]
    kth = sorted({0, n - 1, *(math.floor(i) - 1 for i in idx), *(math.ceil(i) - 1 for i in idx)})
    part = np.partition(X, kth, axis=1)
    q1, q3 = (_quantile7(part, i) for i in idx)
    lo, hi = part[:, 0], part[:, -1]
    if scalest == "iqr":
        return (q3 - q1) / _IQR_TO_SD, lo, hi
    sd = np.sqrt(_r_var(X, mean))
    if scalest == "stdev":
        return sd, lo, hi
    return np.minimum((q3 - q1) / _IQR_TO_SD, sd), lo, hi


def _quantile7(part: np.ndarray, index: float) -> np.ndarray:
    lo, hi = math.floor(index), math.ceil(index)
    q = part[:, lo - 1]
    upper = part[:, hi - 1]
    h = index - lo
    # R interpolates only where it would change the value, so equal order statistics
    # give that value exactly rather than (1 - h) q + h q.
    if h == 0:
        return q
    return np.where(upper != q, (1 - h) * q + h * upper, q)


def _linbin_rows(
    sx: np.ndarray, a: np.ndarray, b: np.ndarray, M: int, truncate: bool
) -> np.ndarray:
    """Linear binning of each row on ``M`` points from ``a[i]`` to ``b[i]`` (Fortran linbin).

    An observation at grid coordinate ``lxi`` (1-based) splits its unit weight between
    grid points ``int(lxi)`` and ``int(lxi) + 1``. The Fortran accepts only
    ``1 <= int(lxi) < M``, so a point at or beyond the last grid point is dropped under
    truncation -- which is how the sample maximum can be lost: ``lxi`` for it is
    ``(b - a) / ((b - a) / (M - 1)) + 1``, which rounds to exactly ``M`` or just below.
    """
    rows, n = sx.shape
    delta = (b - a) / (M - 1)
    lxi = (sx - a[:, None]) / delta[:, None] + 1
    li = np.trunc(lxi)  # Fortran int(): toward zero
    rem = lxi - li
    inside = (li >= 1) & (li < M)
    outside_weight = 0.0 if truncate else 1.0
    left = np.where(inside, li - 1, np.where(li < 1, 0, M - 1)).astype(np.intp)
    right = np.where(inside, left + 1, left)
    w_left = np.where(inside, 1 - rem, outside_weight)
    w_right = np.where(inside, rem, 0.0)
    offset = (np.arange(rows, dtype=np.intp) * M)[:, None]
    # Interleave (left, right) per observation so that bincount adds the weights to
    # each bin in the same order as the Fortran loop; zero weights change nothing.
    idx = np.stack([left + offset, right + offset], axis=-1).ravel()
    w = np.stack([w_left, w_right], axis=-1).ravel()
    return np.bincount(idx, weights=w, minlength=rows * M).reshape(rows, M)


def _autocorrelation(counts: np.ndarray) -> np.ndarray:
    """``acf[i, l] = sum_k counts[i, k] counts[i, k + l]`` for lags 0..M-1.

    bkfe() convolves the counts with the kernel weights and takes the inner product
    with the counts again; that double sum equals sum_l kappa(l) acf(l) over lags
    -L..L, so the counts are transformed once and reused by every plug-in stage.
    """
    M = counts.shape[1]
    P = 1 << (2 * M - 1).bit_length()  # zero padding so the circular product is linear
    F = np.fft.rfft(counts, n=P, axis=1)
    return np.fft.irfft(F.real**2 + F.imag**2, n=P, axis=1)[:, :M]


def _bkfe(
    acf: np.ndarray,
    n_binned: np.ndarray,
    delta: np.ndarray,
    g: np.ndarray,
    drv: int,
    coarse: np.ndarray,
) -> np.ndarray:
    """Binned estimate of psi_drv with normal-kernel bandwidth ``g[i]`` (KernSmooth bkfe)."""
    M = acf.shape[1]
    L = np.minimum(np.floor((4 + drv) * g / delta), M)
    coarse |= L == 0
    lags = np.arange(M)
    arg = lags * delta[:, None] / g[:, None]
    # He_drv(arg) by the recurrence bkfe uses.
    h0, h1 = np.ones_like(arg), arg
    for i in range(2, drv + 1):
        h0, h1 = h1, arg * h1 - (i - 1) * h0
    kappa = _INV_SQRT_2PI * np.exp(-0.5 * arg * arg) / (g[:, None] ** (drv + 1)) * h1
    # bkfe's support: lags beyond L get no weight; lags +l and -l both contribute.
    weight = np.where(lags <= L[:, None], np.where(lags == 0, 1.0, 2.0), 0.0)
    return (kappa * weight * acf).sum(axis=1) / n_binned**2
