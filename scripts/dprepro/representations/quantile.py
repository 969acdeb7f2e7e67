"""Quantile normalisation of expression data: a fitted scaler and the map of one set onto another's
marginals.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin

from dprepro.representations.base import FeatureNamesMixin, check_float

__all__ = ["QuantileScaler", "quantile_map"]


# --------------------------------------------------------------------------- #
# input scaling and quantile mapping
# --------------------------------------------------------------------------- #
class QuantileScaler(FeatureNamesMixin, TransformerMixin, BaseEstimator):
    r"""Map data to [0, 1] by two *global* quantiles of the fitted data.

    .. math:: u = \mathrm{clip}\!\left(\frac{x - q_{\alpha}}{q_{1-\alpha} - q_{\alpha}}, 0, 1\right)

    with :math:`q_p` the p-quantile of all entries pooled (one scalar pair,
    not per gene) -- the authors' ``Normalizer`` with
    ``normalize_input_type='quantiles'``, ``quantile=0.05``,
    ``axis='global'``, ``target=(0, 1)``, ``clip=True``.

    Parameters
    ----------
    quantile : float, default 0.05
        :math:`\alpha \in (0, 0.5)`.
    clip : bool, default True

    Attributes
    ----------
    low_, high_ : float
        :math:`q_\alpha` and :math:`q_{1-\alpha}`.
    """

    def __init__(self, quantile: float = 0.05, *, clip: bool = True):
        self.quantile = quantile
        self.clip = clip

    def fit(self, X, y=None):
        X = self._to_array_fit(X)
        q = check_float("quantile", self.quantile, low=0.0, high=0.5)
        self.low_, self.high_ = (float(v) for v in np.percentile(X, [100 * q, 100 * (1 - q)]))
        if not self.high_ > self.low_:
            raise ValueError("the two quantiles of X coincide; cannot scale")
        return self

    def transform(self, X) -> np.ndarray:
        U = (self._to_array(X) - self.low_) / (self.high_ - self.low_)
        return np.clip(U, 0.0, 1.0) if self.clip else U

    def inverse_transform(self, U) -> np.ndarray:
        return np.asarray(U, dtype=float) * (self.high_ - self.low_) + self.low_


def quantile_map(private, public, *, local: bool = False):
    r"""Redistribute the private matrix onto the public distribution (globally or per line).

    Global (``local=False``, the paper's mapping): all entries of ``private``
    are ranked together; the entry of rank
    :math:`k \in \{0, \dots, N-1\}` gets the value of the sorted pooled public
    entries :math:`s_0 \le \dots \le s_{M-1}` at fractional position
    :math:`t_k = k (M-1)/(N-1)`, linearly interpolated:
    :math:`(1-a)\, s_{\lfloor t_k\rfloor} + a\, s_{\lceil t_k\rceil}`,
    :math:`a = t_k - \lfloor t_k \rfloor` (authors' ``redistribute_all``). The
    mapped matrix thus has exactly the public empirical quantiles; when
    :math:`N = M` its sorted entries equal the sorted public entries. Tied
    private values get consecutive ranks in row-major order (stable sort).

    Line-local (``local=True``): each private row is ranked on its own and
    mapped the same way onto the same pooled public quantiles (:math:`N` =
    the number of genes). A private line's mapped values then depend only on
    that line and on public data, so changing one private line leaves every
    other line's features unchanged -- what a DP guarantee per cell line
    needs (with the global mapping one line moves every other line's ranks).
    With a single private line both mappings coincide.

    Parameters
    ----------
    private, public : DataFrame or array_like
        Samples x genes. For DataFrames only the shared genes are used, in the
        public column order (the paper maps over genes present in both sets);
        arrays must already have matching columns.
    local : bool, default False
        Rank each private line on its own.

    Returns
    -------
    DataFrame or ndarray
        Mapped private matrix (DataFrame with the private index and shared
        columns when DataFrames are given). Restrict the public matrix to the
        same columns before learning a representation.
    """
    if isinstance(private, pd.DataFrame) and isinstance(public, pd.DataFrame):
        shared = public.columns.intersection(private.columns, sort=False)
        if len(shared) == 0:
            raise ValueError("private and public share no genes")
        out = (_redistribute_rows if local else _redistribute)(
            private.loc[:, shared].to_numpy(float), public.loc[:, shared].to_numpy(float)
        )
        return pd.DataFrame(out, index=private.index, columns=shared)
    if isinstance(private, pd.DataFrame) or isinstance(public, pd.DataFrame):
        raise TypeError("pass both private and public as DataFrames, or both as arrays")
    private = np.asarray(private, dtype=float)
    public = np.asarray(public, dtype=float)
    if private.ndim != 2 or public.ndim != 2 or private.shape[1] != public.shape[1]:
        raise ValueError(
            f"private and public must be 2-D with the same columns, got {private.shape} "
            f"and {public.shape}"
        )
    return (_redistribute_rows if local else _redistribute)(private, public)


def _redistribute_rows(x: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Line-local :func:`_redistribute`: each row ranked alone onto the pooled ``ref``."""
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(ref))):
        raise ValueError("quantile_map needs finite values; impute or drop missing entries first")
    if x.shape[1] < 2:
        raise ValueError("line-local mapping needs at least 2 genes per line")
    ref_sorted = np.sort(ref, axis=None)
    order = np.argsort(x, axis=1, kind="stable")
    positions = np.linspace(0.0, ref_sorted.size - 1, x.shape[1])
    pos = np.empty(x.shape)
    np.put_along_axis(pos, order, np.broadcast_to(positions, x.shape), axis=1)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, ref_sorted.size - 1)
    a = pos - lo
    return (1 - a) * ref_sorted[lo] + a * ref_sorted[hi]


def _redistribute(x: np.ndarray, ref: np.ndarray) -> np.ndarray:
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(ref))):
        raise ValueError("quantile_map needs finite values; impute or drop missing entries first")
    if x.size < 2:
        raise ValueError("private needs at least 2 entries")
    ref_sorted = np.sort(ref, axis=None)
    order = np.argsort(x, axis=None, kind="stable")
    pos = np.empty(x.size)
    pos[order] = np.linspace(0.0, ref_sorted.size - 1, x.size)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, ref_sorted.size - 1)
    a = pos - lo
    return ((1 - a) * ref_sorted[lo] + a * ref_sorted[hi]).reshape(x.shape)

