r"""Representations learned on public data (study ``repr_transfer``).

Niinimäki et al. (2019) learn a map :math:`f: \mathbb R^d \to \mathbb R^r`
on public expression data only (no DP needed) and apply it to the private
data before a DP learner. This module provides the three maps of the paper:

* :func:`fit_pca` -- principal component analysis (scikit-learn);
* :class:`RandomProjection` -- a data-independent orthonormal Gaussian
  projection, centred on the public mean;
* :class:`VAERepresentation` -- a variational autoencoder (Kingma & Welling
  2014) in torch, inputs mapped to [0, 1] by :class:`QuantileScaler`
  (defined in :mod:`dprepro.vae`, so that torch loads only where a VAE is trained);

plus :func:`quantile_map`, which puts the private matrix on the public
data's scale by global quantile mapping over the shared genes.

Everything is deterministic given ``random_state``; no global random state is
touched (torch weights are initialised from a private ``torch.Generator``).

References
----------
Kingma D. P., Welling M. (2014). Auto-encoding variational Bayes. ICLR.

Niinimäki T., Heikkilä M. A., Honkela A., Kaski S. (2019). Representation
transfer for differentially private drug sensitivity prediction.
Bioinformatics 35(14), i218-i224. Code: github.com/DPBayes/dp-representation-transfer
(``models/vae_pytorch.py``, ``models/rand_proj.py``, ``models/normalizer.py``,
``data_processing/unify_tcga_gdsc_datas.py``).
"""

from __future__ import annotations

import logging
import math

import numpy as np
import pandas as pd
import scipy.linalg
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.decomposition import PCA

# VAE and VAERepresentation are also importable from here (see __getattr__)
__all__ = [
    "FitBudgetExceeded",
    "QuantileScaler",
    "RandomProjection",
    "fit_pca",
    "quantile_map",
    "truncate_pca",
]

_TORCH_NAMES = ("VAE", "VAERepresentation")


def __getattr__(name):
    # The VAE lives in dprepro.vae so that only the steps that train one import
    # torch (about 2 s per job); it stays importable from here as before.
    if name in _TORCH_NAMES:
        from . import vae

        return getattr(vae, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

logger = logging.getLogger(__name__)


# --------------------------------------------------------------------------- #
# helpers
# --------------------------------------------------------------------------- #
def as_generator(random_state) -> np.random.Generator:
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or (
        isinstance(random_state, int | np.integer) and not isinstance(random_state, bool)
    ):
        return np.random.default_rng(random_state)
    raise TypeError(
        f"random_state must be None, an int or a numpy.random.Generator, got {random_state!r}"
    )


def check_int(name: str, value, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if value < low or (high is not None and value > high):
        rng = f"[{low}, {high}]" if high is not None else f">= {low}"
        raise ValueError(f"{name} must be {rng}, got {value}")
    return int(value)


def check_float(
    name: str,
    value,
    *,
    low: float = 0.0,
    high: float | None = None,
    low_open: bool = True,
    high_open: bool = True,
) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise TypeError(f"{name} must be a number, got {value!r}")
    v = float(value)
    bad = math.isnan(v) or (v <= low if low_open else v < low)
    if high is not None:
        bad = bad or (v >= high if high_open else v > high)
    if bad or not math.isfinite(v):
        lo_b = "(" if low_open else "["
        hi_b = ")" if high_open else "]"
        raise ValueError(
            f"{name} must be in {lo_b}{low}, {high if high is not None else 'inf'}{hi_b}"
            f", got {value!r}"
        )
    return v


class FeatureNamesMixin:
    r"""Remember DataFrame columns on fit and align DataFrames on transform."""

    def _to_array_fit(self, X) -> np.ndarray:
        if isinstance(X, pd.DataFrame):
            self.feature_names_in_ = np.asarray(X.columns, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[0] < 2 or X.shape[1] < 1:
            raise ValueError(f"X must be a 2-D array with at least 2 rows, got shape {X.shape}")
        if not np.all(np.isfinite(X)):
            raise ValueError("X contains non-finite values")
        self.n_features_in_ = X.shape[1]
        return X

    def _to_array(self, X) -> np.ndarray:
        if not hasattr(self, "n_features_in_"):
            raise AttributeError(f"{type(self).__name__} is not fitted; call fit first")
        if isinstance(X, pd.DataFrame) and hasattr(self, "feature_names_in_"):
            missing = pd.Index(self.feature_names_in_).difference(X.columns)
            if len(missing):
                raise ValueError(
                    f"X lacks {len(missing)} fitted features, e.g. {list(missing[:5])}"
                )
            X = X.loc[:, self.feature_names_in_]
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(f"X must have {self.n_features_in_} columns, got shape {X.shape}")
        if not np.all(np.isfinite(X)):
            raise ValueError("X contains non-finite values")
        return X


class FitBudgetExceeded(TimeoutError):
    """A fit stopped at its wall-clock budget (``VAERepresentation(max_seconds=...)``).

    ``epochs`` is the number of completed epochs. The hyperparameter search
    records such a trial as failed (``status = over_budget``) instead of
    letting the job overrun its declared runtime.
    """

    def __init__(self, message: str, *, epochs: int):
        super().__init__(message)
        self.epochs = int(epochs)


# --------------------------------------------------------------------------- #
# PCA and random projection
# --------------------------------------------------------------------------- #
def fit_pca(public, dim: int, *, random_state=None, svd_solver: str = "full") -> PCA:
    r"""Fit PCA with ``dim`` components on the public matrix.

    :math:`f(x) = V_r^\top (x - \bar x_{pub})` with :math:`V_r` the top-r
    right singular vectors of the centred public data (scikit-learn's sign
    convention). The paper uses scikit-learn ``PCA(n_components=r)``.

    Parameters
    ----------
    public : array_like or DataFrame of shape (m, d)
    dim : int
        Representation size r (1 <= r <= min(m, d)).
    random_state : int, optional
        Passed to :class:`sklearn.decomposition.PCA` (used by randomized solvers).
    svd_solver : str, default "full"
        Exact LAPACK SVD by default, so the result does not depend on the seed.

    Returns
    -------
    sklearn.decomposition.PCA
        Fitted; use ``transform`` / ``inverse_transform``.
    """
    m, d = np.shape(public)
    dim = check_int("dim", dim, 1, min(m, d))
    return PCA(n_components=dim, svd_solver=svd_solver, random_state=random_state).fit(public)



def truncate_pca(model: PCA, dim: int) -> PCA:
    r"""The exact-SVD PCA with ``dim`` components, from a fitted one with more.

    PCA is nested: the exact SVD (``svd_solver="full"``) of the centred data
    is computed in full whatever ``n_components``, scikit-learn flips each
    right singular vector's sign by its own largest entry
    (``svd_flip(u_based_decision=False)``) and keeps a copy of the first r
    rows. So the first ``dim`` rows of a fit at :math:`r_{max}` *are* the fit
    at ``dim``: same components (signs included), mean, variances and
    singular values, hence the same ``transform`` to the bit (tested). Only
    ``noise_variance_`` (the mean of the discarded variances) is rebuilt
    from the kept ones, to rounding. The hyperparameter search fits
    :math:`r_{max}` once per pair fold and truncates (at paper scale one
    exact SVD is ~40 CPU minutes).
    """
    import copy

    if getattr(model, "svd_solver", None) != "full":
        raise ValueError("only the exact SVD (svd_solver='full') is nested; got "
                         f"{getattr(model, 'svd_solver', None)!r}")
    r_max = int(model.n_components_)
    dim = check_int("dim", dim, 1, r_max)
    out = copy.deepcopy(model)
    out.n_components = out.n_components_ = dim
    for name in ("components_", "explained_variance_", "explained_variance_ratio_",
                 "singular_values_"):
        # a copy in the memory layout scikit-learn keeps (Fortran order for the components,
        # from LAPACK's Vt): the matrix product of transform then runs the same BLAS path
        setattr(out, name, np.array(getattr(model, name)[:dim], copy=True, order="K"))
    rank = min(int(model.n_samples_), int(model.n_features_in_))
    # mean of the variances beyond dim: the kept ones up to r_max plus the mean beyond it
    tail = float(np.sum(model.explained_variance_[dim:])) + float(model.noise_variance_) * (
        rank - r_max)
    out.noise_variance_ = tail / (rank - dim) if rank > dim else 0.0
    return out


class RandomProjection(FeatureNamesMixin, TransformerMixin, BaseEstimator):
    r"""Orthonormalised Gaussian random projection, centred on the public mean.

    :math:`f(x) = A^\top (x - \bar x_{pub})` where :math:`A \in \mathbb
    R^{d\times r}` is an orthonormal basis (``scipy.linalg.orth``, as in the
    authors' ``rand_proj.py``) of the span of a matrix with i.i.d. N(0, 1)
    entries. Only the mean depends on data.

    Parameters
    ----------
    dim : int
        Representation size r.
    random_state : int or numpy.random.Generator, optional

    Attributes
    ----------
    components_ : ndarray of shape (d, r)
        :math:`A`, with :math:`A^\top A = I_r`.
    mean_ : ndarray of shape (d,)
    """

    def __init__(self, dim: int, *, random_state=None):
        self.dim = dim
        self.random_state = random_state

    def fit(self, X, y=None):
        X = self._to_array_fit(X)
        d = X.shape[1]
        dim = check_int("dim", self.dim, 1, d)
        rng = as_generator(self.random_state)
        self.components_ = scipy.linalg.orth(rng.standard_normal((d, dim)))
        self.mean_ = X.mean(axis=0)
        return self

    def transform(self, X) -> np.ndarray:
        return (self._to_array(X) - self.mean_) @ self.components_

    def inverse_transform(self, Z) -> np.ndarray:
        return np.asarray(Z, dtype=float) @ self.components_.T + self.mean_


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
