"""Sufficient-statistics-perturbation (SSP) linear regression, as in the repr paper's drug-response
step.
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin

from dprepro.learners.checks import (
    check_epsilon,
    check_matrix,
    check_positive,
    check_rng,
    check_share,
    check_vector,
    check_xx_noise,
)
from dprepro.learners.noise import psd_repair, ssp_laplace_noise, ssp_noise

# re-exported: the clipping weights and the feature-selection baselines live in their own
# modules (split by concept); importing them from here keeps callers working

__all__ = ["SSPLinearRegression"]


# --------------------------------------------------------------------------- #
# linear regression by sufficient statistics perturbation
# --------------------------------------------------------------------------- #
class SSPLinearRegression(RegressorMixin, BaseEstimator):
    r"""Linear regression, epsilon-DP by sufficient statistics perturbation.

    Following Honkela et al. (2018) in the fixed-precision form used by
    Niinimäki et al. (2019) (``diffpri.predictL``): the columns of ``X`` and
    ``y`` are centred, every entry is clipped, :math:`x_{ij} \mapsto
    \max(-B_x, \min(B_x, x_{ij}))` and :math:`y_i \mapsto \max(-B_y,
    \min(B_y, y_i))`, and

    .. math::

        \hat w = \left(X^\top X + W + \lambda_0 I\right)^{-1}
                  \left(X^\top y + L\right),

    the posterior mean of Bayesian linear regression with noise precision 1
    and prior precision :math:`\lambda_0` (``ridge``; the authors use
    :math:`\lambda = \lambda_0 = 1`), with :math:`W, L` from :func:`ssp_noise`
    (ε split between the two statistics by ``xx_share``, halves by default).
    With ``epsilon=np.inf`` no noise is added and, with infinite bounds, the
    estimate is closed-form ridge regression.

    Centring uses the training means, as in the authors' code; those means
    are *not* covered by ε (the authors' code does the same). The original
    code centres a test set by its own mean; centring by the training means
    shifts all predictions by one constant, which leaves Spearman's ρ and
    the PC-index unchanged.

    Parameters
    ----------
    epsilon : float
        Privacy parameter (> 0); ``np.inf`` for no noise.
    clip_x, clip_y : float
        Element-wise bounds :math:`B_x, B_y` (> 0, may be inf when epsilon is
        inf). The paper uses :math:`B_x = w_x\,\mathrm{sd}(X)`,
        :math:`B_y = w_y\,\mathrm{sd}(Y)` with the weights of
        :func:`ssp_clipping_weights`, sd(X) the standard deviation (ddof=1) of
        all entries of the centred private training matrix and sd(Y) that of
        all drugs' centred responses pooled (``np.nanstd(y_pv, ddof=1)`` in
        ``diffpri.processData``). Those sds come from private data and are not
        covered by ε in the original either.
    ridge : float, default 1.0
        Prior precision :math:`\lambda_0` (>= 0).
    xx_share : float, default 0.5
        Fraction of ε spent on :math:`X^\top X`.
    center : bool, default True
    rng : numpy.random.Generator, optional
        Required when ``epsilon`` is finite.
    xx_noise : {"wishart", "laplace"}, default "wishart"
        ``"wishart"``: the paper's noise (:func:`ssp_noise`); its support is
        the positive-definite cone shifted by :math:`X^\top X`, so outputs
        exist whose density is zero under a neighbouring data set -- no
        finite ε holds. ``"laplace"``: :func:`ssp_laplace_noise` plus
        :func:`psd_repair`, pure ε-DP.
    x_center, y_center : array_like / float, optional
        Centres used instead of the training means (with ``center=True``):
        take them from public data or a-priori knowledge so that ε covers the
        whole fit.
    intercept_column : bool, default False
        Append a constant column :math:`B_x` (1 when unclipped) to the
        clipped design, so that an offset between the fixed centres and the
        private means is learned (and perturbed) like any coefficient; the
        statistics then have dimension d + 1.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
        ``y_mean_ - x_mean_ @ coef_`` (0 when ``center=False``).
    x_mean_, y_mean_ : training means (zeros / 0.0 when ``center=False``).
    xx_, xy_ : the (noisy) statistics that were solved.
    n_features_in_ : int
    """

    def __init__(
        self,
        epsilon: float,
        *,
        clip_x: float,
        clip_y: float,
        ridge: float = 1.0,
        xx_share: float = 0.5,
        center: bool = True,
        rng: np.random.Generator | None = None,
        xx_noise: str = "wishart",
        x_center=None,
        y_center: float | None = None,
        intercept_column: bool = False,
    ):
        self.epsilon = epsilon
        self.clip_x = clip_x
        self.clip_y = clip_y
        self.ridge = ridge
        self.xx_share = xx_share
        self.center = center
        self.rng = rng
        self.xx_noise = xx_noise
        self.x_center = x_center
        self.y_center = y_center
        self.intercept_column = intercept_column
        self._validate_params()

    def _validate_params(self) -> None:
        eps = check_epsilon(self.epsilon)
        private = math.isfinite(eps)
        check_positive("clip_x", self.clip_x, allow_inf=not private)
        check_positive("clip_y", self.clip_y, allow_inf=not private)
        check_positive("ridge", self.ridge, allow_zero=True)
        check_share(self.xx_share)
        if not isinstance(self.center, bool | np.bool_):
            raise TypeError(f"center must be a bool, got {self.center!r}")
        check_xx_noise(self.xx_noise)
        check_rng(self.rng, eps)

    def _intercept_value(self) -> float:
        return float(self.clip_x) if math.isfinite(float(self.clip_x)) else 1.0

    @property
    def public_centring(self) -> bool:
        """Whether no centre is taken from the training data."""
        return not self.center or (self.x_center is not None and self.y_center is not None)

    def fit(self, X, y):
        self._validate_params()
        X = check_matrix(X)
        y = check_vector(y, X.shape[0]).astype(float)
        if not np.all(np.isfinite(y)):
            raise ValueError("y contains non-finite values; drop missing responses first")
        n, d = X.shape
        if self.center:
            x_mean = (X.mean(axis=0) if self.x_center is None
                      else np.broadcast_to(np.asarray(self.x_center, float), (d,)).copy())
            y_mean = float(y.mean()) if self.y_center is None else float(self.y_center)
        else:
            x_mean, y_mean = np.zeros(d), 0.0
        Xc = np.clip(X - x_mean, -self.clip_x, self.clip_x)
        yc = np.clip(y - y_mean, -self.clip_y, self.clip_y)
        if self.intercept_column:
            Xc = np.hstack([Xc, np.full((n, 1), self._intercept_value())])
        p = Xc.shape[1]
        xx = Xc.T @ Xc
        xy = Xc.T @ yc
        if math.isfinite(float(self.epsilon)):
            noise = ssp_noise if self.xx_noise == "wishart" else ssp_laplace_noise
            W, L = noise(
                p,
                epsilon=self.epsilon,
                clip_x=self.clip_x,
                clip_y=self.clip_y,
                rng=self.rng,
                xx_share=self.xx_share,
            )
            xx = xx + W
            xy = xy + L
            if self.xx_noise == "laplace":
                xx = psd_repair(xx)
        coef = np.linalg.solve(xx + float(self.ridge) * np.eye(p), xy)
        offset = coef[d] * self._intercept_value() if self.intercept_column else 0.0
        coef = coef[:d]
        self.coef_ = coef
        self.x_mean_ = x_mean
        self.y_mean_ = y_mean + offset
        self.intercept_ = float(self.y_mean_ - x_mean @ coef)
        self.xx_ = xx
        self.xy_ = xy
        self.n_features_in_ = d
        return self

    def predict(self, X) -> np.ndarray:
        if not hasattr(self, "coef_"):
            raise AttributeError("SSPLinearRegression is not fitted; call fit first")
        X = check_matrix(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, the model was fitted on {self.n_features_in_}"
            )
        return (X - self.x_mean_) @ self.coef_ + self.y_mean_

