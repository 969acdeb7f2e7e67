r"""Representations learned on public data (study ``repr_transfer``).

Niinimäki et al. (2019) learn a map :math:`f: \mathbb R^d \to \mathbb R^r`
on public expression data only (no DP needed) and apply it to the private
data before a DP learner. This module provides the three maps of the paper:

* :func:`fit_pca` -- principal component analysis (scikit-learn);
* :class:`RandomProjection` -- a data-independent orthonormal Gaussian
  projection, centred on the public mean;
* :class:`VAERepresentation` -- a variational autoencoder (Kingma & Welling
  2014) in torch, inputs mapped to [0, 1] by :class:`QuantileScaler`;

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

import copy
import logging
import math
import time
from collections.abc import Sequence

import numpy as np
import pandas as pd
import scipy.linalg
import torch
import torch.nn.functional as F
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.decomposition import PCA
from torch import nn

__all__ = [
    "VAE",
    "QuantileScaler",
    "RandomProjection",
    "VAERepresentation",
    "fit_pca",
    "quantile_map",
]

logger = logging.getLogger(__name__)


# --------------------------------------------------------------------------- #
# helpers
# --------------------------------------------------------------------------- #
def _as_generator(random_state) -> np.random.Generator:
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or (
        isinstance(random_state, int | np.integer) and not isinstance(random_state, bool)
    ):
        return np.random.default_rng(random_state)
    raise TypeError(
        f"random_state must be None, an int or a numpy.random.Generator, got {random_state!r}"
    )


def _check_int(name: str, value, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if value < low or (high is not None and value > high):
        rng = f"[{low}, {high}]" if high is not None else f">= {low}"
        raise ValueError(f"{name} must be {rng}, got {value}")
    return int(value)


def _check_float(
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


class _FeatureNamesMixin:
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
    dim = _check_int("dim", dim, 1, min(m, d))
    return PCA(n_components=dim, svd_solver=svd_solver, random_state=random_state).fit(public)


class RandomProjection(_FeatureNamesMixin, TransformerMixin, BaseEstimator):
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
        dim = _check_int("dim", self.dim, 1, d)
        rng = _as_generator(self.random_state)
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
class QuantileScaler(_FeatureNamesMixin, TransformerMixin, BaseEstimator):
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
        q = _check_float("quantile", self.quantile, low=0.0, high=0.5)
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


# --------------------------------------------------------------------------- #
# variational autoencoder
# --------------------------------------------------------------------------- #
class VAE(nn.Module):
    r"""Gaussian VAE with a sigmoid mean and one shared output variance.

    Encoder :math:`q(z|x) = N(\mu(x), \mathrm{diag}\, e^{\ell(x)})` and
    decoder :math:`p(x|z) = N(\mathrm{sigmoid}(g(z)), \sigma^2 I)` with
    ReLU MLPs (decoder widths mirror the encoder) and prior
    :math:`N(0, I_r)`. The output log-variance is one learned scalar kept
    above ``log_var_floor`` by
    :math:`\log\sigma^2 = \text{floor} + \mathrm{softplus}(\rho)`.
    The loss of a batch is the summed negative ELBO,

    .. math::

        \sum_i \Bigl[\tfrac12\sum_j\Bigl(\frac{(x_{ij}-\hat x_{ij})^2}{\sigma^2}
        + \log 2\pi\sigma^2\Bigr)
        + \tfrac12 \sum_k \bigl(\mu_{ik}^2 + e^{\ell_{ik}} - 1 - \ell_{ik}\bigr)\Bigr],

    with a single reparametrised draw :math:`z = \mu + e^{\ell/2}\varepsilon`.

    Parameters
    ----------
    n_features, latent_dim : int
    hidden_dims : sequence of int
        Encoder hidden widths (1-3 layers in the paper).
    log_var_floor : float
        Lower bound of :math:`\log\sigma^2` (paper: :math:`\log 0.01^2`).
    init_log_var : float
        Initial :math:`\log\sigma^2` (must exceed the floor).
    generator : torch.Generator, optional
        Source of the initial weights (PyTorch's default ``nn.Linear``
        scheme, U(-1/sqrt(fan_in), 1/sqrt(fan_in))).
    """

    def __init__(
        self,
        n_features: int,
        latent_dim: int,
        hidden_dims: Sequence[int],
        *,
        log_var_floor: float = math.log(0.01**2),
        init_log_var: float = 0.0,
        generator=None,
    ):
        super().__init__()
        if not init_log_var > log_var_floor:
            raise ValueError(
                f"init_log_var ({init_log_var}) must exceed log_var_floor ({log_var_floor})"
            )
        self.n_features = int(n_features)
        self.latent_dim = int(latent_dim)
        self.hidden_dims = tuple(int(h) for h in hidden_dims)
        self.log_var_floor = float(log_var_floor)

        def linear(i, o):
            # skip_init: weights come from our generator, not the global RNG
            return torch.nn.utils.skip_init(nn.Linear, i, o)

        dims = (self.n_features, *self.hidden_dims)
        self.encoder = nn.Sequential(
            *[
                m
                for a, b in zip(dims[:-1], dims[1:], strict=True)
                for m in (linear(a, b), nn.ReLU())
            ]
        )
        self.z_mean = linear(dims[-1], self.latent_dim)
        self.z_log_var = linear(dims[-1], self.latent_dim)
        ddims = (self.latent_dim, *reversed(self.hidden_dims))
        self.decoder = nn.Sequential(
            *[
                m
                for a, b in zip(ddims[:-1], ddims[1:], strict=True)
                for m in (linear(a, b), nn.ReLU())
            ]
        )
        self.x_mean = linear(ddims[-1], self.n_features)
        # inverse softplus so that the initial log-variance is init_log_var
        gap = init_log_var - self.log_var_floor
        raw = gap + math.log(-math.expm1(-gap))
        self.x_log_var_raw = nn.Parameter(torch.tensor(raw, dtype=torch.float32))
        self.reset_parameters(generator)

    def reset_parameters(self, generator=None) -> None:
        with torch.no_grad():
            for mod in self.modules():
                if isinstance(mod, nn.Linear):
                    bound = 1.0 / math.sqrt(mod.in_features)
                    mod.weight.uniform_(-bound, bound, generator=generator)
                    mod.bias.uniform_(-bound, bound, generator=generator)

    def encode(self, x):
        h = self.encoder(x)
        return self.z_mean(h), self.z_log_var(h)

    def x_log_var(self):
        return self.log_var_floor + F.softplus(self.x_log_var_raw)

    def decode(self, z):
        return torch.sigmoid(self.x_mean(self.decoder(z)))

    def forward(self, x, generator=None, *, mean: bool = False):
        mu, log_var = self.encode(x)
        if mean:
            return self.decode(mu), mu, log_var
        eps = torch.randn(mu.shape, generator=generator, device=mu.device, dtype=mu.dtype)
        z = mu + torch.exp(0.5 * log_var) * eps
        return self.decode(z), mu, log_var

    def loss(self, x, generator=None, *, mean: bool = False):
        r"""Summed negative ELBO of the batch (one draw of z per row; ``mean``: z = μ).

        With ``mean=True`` the reconstruction term is evaluated at the posterior
        mean, so the value is a deterministic function of the weights (what
        early stopping compares epoch to epoch).
        """
        x_hat, mu, log_var = self(x, generator, mean=mean)
        xlv = self.x_log_var()
        nll = 0.5 * (
            torch.sum((x - x_hat) ** 2) * torch.exp(-xlv)
            + x.numel() * (math.log(2 * math.pi) + xlv)
        )
        kl = 0.5 * torch.sum(mu**2 + torch.exp(log_var) - 1.0 - log_var)
        return nll + kl


def _resolve_device(device: str):
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        return torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ValueError(
            f"device must be 'auto', 'cpu', 'cuda' or 'cuda:N', got {device!r}"
        ) from exc


class VAERepresentation(_FeatureNamesMixin, TransformerMixin, BaseEstimator):
    r"""VAE representation learned on public data; ``transform`` gives the encoder mean.

    Training follows the authors' ``models/vae_pytorch.py`` as configured in
    ``learn_and_predict_tcga_split_cancertypes_optim.py``: a random 20 % of
    the rows is held out for validation; inputs are mapped to [0, 1] by a
    :class:`QuantileScaler` (global 5 %/95 % quantiles of the training rows,
    clipped); ReLU encoder with ``n_hidden_layers`` layers of width
    ``hidden_width`` (default ``32 * latent_dim``) and a mirrored decoder;
    sigmoid output mean and one learned output variance with floor
    :math:`\log\sigma^2 \ge \log 0.01^2`; Adam on the summed negative ELBO
    in minibatches of 64 in a fresh random order each epoch; early stopping
    when the validation loss (per row, evaluated at the posterior mean z = μ so
    that it is deterministic) has not improved for ``patience`` epochs,
    keeping the best weights; at most ``max_epochs`` epochs.

    Departures from the original, each for a stated reason:

    * the variance floor is a hard bound
      (:math:`\log\sigma^2 = \text{floor} + \mathrm{softplus}(\rho)`); the
      original added a hinge penalty :math:`\max(0, \text{floor} -
      \log\sigma^2)` once per batch, negligible next to a likelihood summed
      over 64 x thousands of entries, so it did not bound anything;
    * :math:`\log\sigma^2` starts at the log of the mean per-gene variance of
      the scaled training rows, not at 0 (:math:`\sigma = 1` is far above the
      spread of [0, 1] data and costs hundreds of epochs at lr 1e-3);
    * the best weights are really restored: the original stored
      ``state_dict()`` without copying, so its "best" state tracked the live
      weights and training ended with the last epoch's weights;
    * the original had no seeds for its split, order and noise (it even
      reseeded from the clock); here all come from ``random_state``;
    * there is no wall-clock limit (the original stopped after 1 h), which
      would make results depend on the machine.

    Parameters
    ----------
    latent_dim : int
        Representation size r.
    n_hidden_layers : int, default 1
        1 to 3.
    hidden_width : int, optional
        Width of every hidden layer; default ``32 * latent_dim`` (the
        authors' "e32" setting; their tuning searched width = 10^u * r, u in [0, 4]).
    learning_rate : float, default 1e-3
    batch_size : int, default 64
    max_epochs : int, default 2000
    patience : int, default 10
    validation_fraction : float, default 0.2
    quantile : float, default 0.05
    log_var_floor : float, default log(0.01**2)
    device : str, default "auto"
        "auto" uses CUDA when available, else CPU.
    random_state : int or numpy.random.Generator, optional
        Seeds the validation split, the epoch orders, the weight
        initialisation and the reparametrisation noise.
    log_every : int, default 10
        Epoch progress is logged at INFO every ``log_every`` epochs (DEBUG otherwise).

    Attributes
    ----------
    model_ : VAE
        The trained torch module (on ``device_``).
    scaler_ : QuantileScaler
    history_ : dict
        ``{"train_loss": [...], "val_loss": [...]}`` per epoch, mean negative
        ELBO per row (the initial, untrained values are ``initial_*_loss_``).
    initial_train_loss_, initial_val_loss_ : float
    best_epoch_ : int
        1-based epoch whose weights were kept.
    n_epochs_ : int
        Epochs run.
    fit_time_ : float
        Wall-clock seconds of ``fit``.
    device_ : torch.device
    """

    def __init__(
        self,
        latent_dim: int,
        *,
        n_hidden_layers: int = 1,
        hidden_width: int | None = None,
        learning_rate: float = 1e-3,
        batch_size: int = 64,
        max_epochs: int = 2000,
        patience: int = 10,
        validation_fraction: float = 0.2,
        quantile: float = 0.05,
        log_var_floor: float = math.log(0.01**2),
        device: str = "auto",
        random_state=None,
        log_every: int = 10,
    ):
        self.latent_dim = latent_dim
        self.n_hidden_layers = n_hidden_layers
        self.hidden_width = hidden_width
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.max_epochs = max_epochs
        self.patience = patience
        self.validation_fraction = validation_fraction
        self.quantile = quantile
        self.log_var_floor = log_var_floor
        self.device = device
        self.random_state = random_state
        self.log_every = log_every
        self._validate_params()

    def _validate_params(self) -> None:
        _check_int("latent_dim", self.latent_dim, 1)
        _check_int("n_hidden_layers", self.n_hidden_layers, 1, 3)
        if self.hidden_width is not None:
            _check_int("hidden_width", self.hidden_width, 1)
        _check_float("learning_rate", self.learning_rate)
        _check_int("batch_size", self.batch_size, 1)
        _check_int("max_epochs", self.max_epochs, 1)
        _check_int("patience", self.patience, 1)
        _check_float("validation_fraction", self.validation_fraction, high=1.0)
        _check_float("quantile", self.quantile, high=0.5)
        if (
            isinstance(self.log_var_floor, bool)
            or not isinstance(self.log_var_floor, int | float | np.integer | np.floating)
            or not math.isfinite(self.log_var_floor)
        ):
            raise ValueError(f"log_var_floor must be a finite number, got {self.log_var_floor!r}")
        if not isinstance(self.device, str):
            raise TypeError(f"device must be a string, got {self.device!r}")
        _check_int("log_every", self.log_every, 1)
        _as_generator(self.random_state)  # type check only

    # -- training ---------------------------------------------------------- #
    def fit(self, X, y=None):
        r"""Learn the representation from the public matrix ``X`` (samples x genes)."""
        self._validate_params()
        start = time.perf_counter()
        X = self._to_array_fit(X)
        rng = _as_generator(self.random_state)
        n = X.shape[0]
        n_val = int(round(self.validation_fraction * n))
        if n_val < 1 or n - n_val < 1:
            raise ValueError(
                f"validation_fraction={self.validation_fraction} leaves an empty split for {n} rows"
            )
        perm = rng.permutation(n)
        val_idx, train_idx = perm[:n_val], perm[n_val:]

        self.scaler_ = QuantileScaler(self.quantile, clip=True).fit(X[train_idx])
        U = self.scaler_.transform(X).astype(np.float32)
        device = _resolve_device(self.device)
        self.device_ = device

        width = self.hidden_width if self.hidden_width is not None else 32 * self.latent_dim
        seed_init, seed_noise = (int(s) for s in rng.integers(0, 2**63 - 1, size=2))
        gen_init = torch.Generator(device="cpu").manual_seed(seed_init)
        gen_noise = torch.Generator(device=device).manual_seed(seed_noise)
        u_train = torch.from_numpy(U[train_idx]).to(device)
        u_val = torch.from_numpy(U[val_idx]).to(device)
        # start the output variance at the residual variance of a constant
        # (column-mean) reconstruction instead of the authors' sigma=1, which is
        # far above the [0, 1] data's spread and slows early training
        resid_var = float(np.mean(np.var(U[train_idx], axis=0)))
        init_log_var = max(math.log(max(resid_var, 1e-12)), float(self.log_var_floor) + 1e-3)
        model = VAE(
            X.shape[1],
            self.latent_dim,
            [width] * self.n_hidden_layers,
            log_var_floor=float(self.log_var_floor),
            init_log_var=init_log_var,
            generator=gen_init,
        ).to(device)
        optimizer = torch.optim.Adam(model.parameters(), lr=float(self.learning_rate))

        def mean_loss(data) -> float:
            model.eval()
            total = 0.0
            with torch.no_grad():
                # z = posterior mean: a deterministic loss, and no noise drawn for it
                for i in range(0, data.shape[0], 1024):
                    total += float(model.loss(data[i : i + 1024], mean=True))
            model.train()
            return total / data.shape[0]

        self.initial_train_loss_ = mean_loss(u_train)
        self.initial_val_loss_ = mean_loss(u_val)
        logger.info(
            "VAE fit: %d train / %d validation rows, %d features, r=%d, hidden=%s, device=%s; "
            "initial loss train %.4f val %.4f",
            u_train.shape[0],
            u_val.shape[0],
            X.shape[1],
            self.latent_dim,
            [width] * self.n_hidden_layers,
            device,
            self.initial_train_loss_,
            self.initial_val_loss_,
        )

        history = {"train_loss": [], "val_loss": []}
        best_val, best_epoch, best_state, stale = math.inf, 0, None, 0
        n_train = u_train.shape[0]
        bs = int(self.batch_size)
        epoch = 0
        for epoch in range(1, int(self.max_epochs) + 1):
            order = torch.from_numpy(rng.permutation(n_train)).to(device)
            total = 0.0
            for i in range(0, n_train, bs):
                batch = u_train[order[i : i + bs]]
                optimizer.zero_grad(set_to_none=True)
                loss = model.loss(batch, gen_noise)
                loss.backward()
                optimizer.step()
                total += float(loss.detach())
            train_loss = total / n_train
            val_loss = mean_loss(u_val)
            history["train_loss"].append(train_loss)
            history["val_loss"].append(val_loss)
            level = logging.INFO if epoch % int(self.log_every) == 0 else logging.DEBUG
            logger.log(
                level,
                "VAE epoch %4d  train loss %.4f  val loss %.4f  sigma %.4f",
                epoch,
                train_loss,
                val_loss,
                math.exp(0.5 * float(model.x_log_var().detach())),
            )
            if not math.isfinite(train_loss):
                raise FloatingPointError(
                    f"VAE training diverged at epoch {epoch}; lower learning_rate"
                )
            if val_loss < best_val:
                best_val, best_epoch, stale = val_loss, epoch, 0
                # state_dict() shares storage with the live parameters; copy it
                # (the original code kept a reference, so it never restored)
                best_state = copy.deepcopy(model.state_dict())
            else:
                stale += 1
                if stale >= int(self.patience):
                    logger.info(
                        "VAE early stop at epoch %d (best epoch %d, val loss %.4f)",
                        epoch,
                        best_epoch,
                        best_val,
                    )
                    break
        if best_state is not None:
            model.load_state_dict(best_state)
        model.eval()
        self.model_ = model
        self.history_ = history
        self.best_epoch_ = best_epoch
        self.n_epochs_ = epoch
        self.fit_time_ = time.perf_counter() - start
        logger.info("VAE fit done: %d epochs, best %d, %.1f s", epoch, best_epoch, self.fit_time_)
        return self

    # -- mapping ------------------------------------------------------------ #
    def _encode_scaled(self, U: np.ndarray) -> np.ndarray:
        out = []
        with torch.no_grad():
            for i in range(0, U.shape[0], 4096):
                u = torch.from_numpy(U[i : i + 4096].astype(np.float32)).to(self.device_)
                out.append(self.model_.encode(u)[0].cpu().numpy())
        return np.concatenate(out).astype(float)

    def transform(self, X) -> np.ndarray:
        r"""Encoder mean :math:`\mu(x)` of the scaled rows, shape (n, latent_dim)."""
        X = self._to_array(X)
        return self._encode_scaled(self.scaler_.transform(X))

    def decode_scaled(self, Z) -> np.ndarray:
        r"""Decoder mean in the scaled [0, 1] space."""
        if not hasattr(self, "model_"):
            raise AttributeError("VAERepresentation is not fitted; call fit first")
        Z = np.asarray(Z, dtype=np.float32)
        if Z.ndim != 2 or Z.shape[1] != self.latent_dim:
            raise ValueError(f"Z must have shape (n, {self.latent_dim}), got {Z.shape}")
        out = []
        with torch.no_grad():
            for i in range(0, Z.shape[0], 4096):
                z = torch.from_numpy(Z[i : i + 4096]).to(self.device_)
                out.append(self.model_.decode(z).cpu().numpy())
        return np.concatenate(out).astype(float)

    def inverse_transform(self, Z) -> np.ndarray:
        r"""Decoder mean mapped back to the input units."""
        return self.scaler_.inverse_transform(self.decode_scaled(Z))

    def reconstruct_scaled(self, X) -> np.ndarray:
        r"""Scaled rows passed through encoder mean and decoder mean, in [0, 1]."""
        return self.decode_scaled(self.transform(X))
