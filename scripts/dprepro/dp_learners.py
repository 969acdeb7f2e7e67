r"""Differentially private learners of study ``repr_transfer``.

* :class:`DPLogisticRegression` -- binary logistic regression by objective
  perturbation (Chaudhuri, Monteleoni & Sarwate 2011), as used by Niinimäki et
  al. (2019) for the cancer-type task.
* :class:`SSPLinearRegression` -- ridge-type linear regression by sufficient
  statistics perturbation (Honkela et al. 2018), used for drug sensitivity.
* :func:`ssp_clipping_weights` -- the clipping weights of the SSP learner chosen
  on synthetic data, as in the authors' ``diffpri.omega``.
* :func:`dp_select_features` -- DP feature selection by subsample-and-aggregate
  (Kifer, Smith & Thakurta 2012), the paper's feature-selection baseline.
* :func:`select_columns` -- the fixed-gene-set baseline.

All mechanisms give pure epsilon-DP for *bounded* neighbouring data sets (one
record replaced), the notion used in the paper. Randomness comes only from an
explicit :class:`numpy.random.Generator`.

References
----------
Chaudhuri K., Monteleoni C., Sarwate A. D. (2011). Differentially private
empirical risk minimization. JMLR 12, 1069-1109.

Honkela A., Das M., Nieminen A., Dikmen O., Kaski S. (2018). Efficient
differentially private learning improves drug sensitivity prediction.
Biology Direct 13:1.

Kifer D., Smith A., Thakurta A. (2012). Private convex empirical risk
minimization and high-dimensional regression. COLT, PMLR 23:25.1-25.40.

Niinimäki T., Heikkilä M. A., Honkela A., Kaski S. (2019). Representation
transfer for differentially private drug sensitivity prediction.
Bioinformatics 35(14), i218-i224. Code: github.com/DPBayes/dp-representation-transfer.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import optimize, stats
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin

__all__ = [
    "DPLogisticRegression",
    "SSPLinearRegression",
    "clip_rows_to_unit_ball",
    "dp_select_features",
    "objective_perturbation_noise",
    "select_columns",
    "ssp_clipping_weights",
    "psd_repair",
    "ssp_laplace_noise",
    "ssp_noise",
    "wishart_noise",
]

#: Bound on |l''| for the logistic loss, the constant c of CMS11 Algorithm 2.
LOGISTIC_LOSS_C = 0.25


# --------------------------------------------------------------------------- #
# validation helpers
# --------------------------------------------------------------------------- #
def _check_epsilon(epsilon) -> float:
    if isinstance(epsilon, bool) or not isinstance(epsilon, int | float | np.integer | np.floating):
        raise TypeError(f"epsilon must be a positive number or np.inf, got {epsilon!r}")
    epsilon = float(epsilon)
    if math.isnan(epsilon) or epsilon <= 0:
        raise ValueError(f"epsilon must be > 0 (np.inf for no noise), got {epsilon!r}")
    return epsilon


def _check_rng(rng, epsilon: float) -> None:
    if rng is None:
        if math.isfinite(epsilon):
            raise TypeError("rng must be a numpy.random.Generator when epsilon is finite")
        return
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator or None, got {type(rng).__name__}")


def _check_positive(name: str, value, *, allow_inf: bool = False, allow_zero: bool = False):
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise TypeError(f"{name} must be a number, got {value!r}")
    value = float(value)
    ok = (value >= 0 if allow_zero else value > 0) and not math.isnan(value)
    ok = ok and (allow_inf or math.isfinite(value))
    if not ok:
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(
            f"{name} must be {bound}{'' if allow_inf else ' and finite'}, got {value!r}"
        )
    return value


def _check_matrix(X, name: str = "X") -> np.ndarray:
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array, got shape {X.shape}")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"{name} must be non-empty, got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{name} contains non-finite values")
    return X


def _check_vector(y, n: int, name: str = "y") -> np.ndarray:
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != n:
        raise ValueError(f"{name} must be 1-D of length {n}, got shape {y.shape}")
    return y


# --------------------------------------------------------------------------- #
# noise draws
# --------------------------------------------------------------------------- #
def objective_perturbation_noise(dim: int, *, epsilon: float, rng: np.random.Generator):
    r"""Draw the noise vector of objective perturbation.

    The density is :math:`\nu(b) \propto \exp(-\tfrac{\epsilon}{2}\lVert b\rVert)`
    on :math:`\mathbb R^{dim}`, i.e. :math:`\lVert b\rVert \sim
    \mathrm{Gamma}(\text{shape}=dim, \text{scale}=2/\epsilon)` and
    :math:`b/\lVert b\rVert` uniform on the sphere (CMS11, Algorithm 1/2).

    Parameters
    ----------
    dim : int
        Dimension of the parameter vector (features + bias).
    epsilon : float
        Privacy parameter of the noise density (> 0, finite).
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of shape (dim,)
    """
    if isinstance(dim, bool) or not isinstance(dim, int | np.integer) or dim < 1:
        raise ValueError(f"dim must be a positive integer, got {dim!r}")
    epsilon = _check_epsilon(epsilon)
    if not math.isfinite(epsilon):
        raise ValueError("epsilon must be finite to draw noise")
    _check_rng(rng, epsilon)
    norm = rng.gamma(shape=int(dim), scale=2.0 / epsilon)
    direction = rng.standard_normal(int(dim))
    return norm * direction / np.linalg.norm(direction)


def wishart_noise(dim: int, df: int, scale: float, *, rng: np.random.Generator) -> np.ndarray:
    r"""Draw :math:`W \sim \mathrm{Wishart}_{dim}(df, \text{scale}\cdot I)`.

    For integer ``df`` this is :math:`W = \sum_{k=1}^{df} g_k g_k^\top` with
    :math:`g_k \sim N(0, \text{scale}\, I)`, so :math:`E[W] = df\cdot
    \text{scale}\cdot I` (the parametrisation of :func:`scipy.stats.wishart`).
    """
    if isinstance(dim, bool) or not isinstance(dim, int | np.integer) or dim < 1:
        raise ValueError(f"dim must be a positive integer, got {dim!r}")
    if isinstance(df, bool) or not isinstance(df, int | np.integer) or df < dim:
        raise ValueError(f"df must be an integer >= dim={dim}, got {df!r}")
    scale = _check_positive("scale", scale)
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    g = rng.standard_normal((int(df), int(dim))) * math.sqrt(scale)
    return g.T @ g


def ssp_noise(
    dim: int,
    *,
    epsilon: float,
    clip_x: float,
    clip_y: float,
    rng: np.random.Generator,
    xx_share: float = 0.5,
) -> tuple[np.ndarray, np.ndarray]:
    r"""Draw the noise of sufficient statistics perturbation (Honkela et al. 2018).

    With element-wise bounds :math:`|x_{ij}| \le B_x`, :math:`|y_i| \le B_y`
    and budget split :math:`\epsilon_1 = p\,\epsilon` (for :math:`X^\top X`),
    :math:`\epsilon_2 = (1-p)\,\epsilon` (for :math:`X^\top y`):

    .. math::

        W \sim \mathrm{Wishart}_d\!\left(d+1,\ \frac{d B_x^2}{\epsilon_1} I\right),
        \qquad
        L_j \overset{iid}{\sim} \mathrm{Laplace}\!\left(0,\ \frac{2 d B_x B_y}{\epsilon_2}\right).

    The Laplace scale is the L1 sensitivity :math:`2 d B_x B_y` of
    :math:`X^\top y` under replacement of one row divided by
    :math:`\epsilon_2`. With :math:`p = 1/2` these are exactly the parameters
    of the authors' ``diffpri.predictL`` (``wishart.rvs(d+1, 2 d B_x^2/e)``,
    ``laplace(scale=4 d B_x B_y/e)``).

    Returns
    -------
    W : ndarray of shape (dim, dim)
    L : ndarray of shape (dim,)
    """
    epsilon, clip_x, clip_y, xx_share = _check_noise_args(epsilon, clip_x, clip_y, xx_share,
                                                           rng)
    eps_xx = xx_share * epsilon
    eps_xy = (1.0 - xx_share) * epsilon
    W = wishart_noise(dim, int(dim) + 1, dim * clip_x**2 / eps_xx, rng=rng)
    L = rng.laplace(0.0, 2.0 * dim * clip_x * clip_y / eps_xy, size=int(dim))
    return W, L


def _check_noise_args(epsilon, clip_x, clip_y, xx_share, rng):
    """Validated (ε, B_x, B_y, share of ε on XᵀX) of an SSP noise draw."""
    epsilon = _check_epsilon(epsilon)
    if not math.isfinite(epsilon):
        raise ValueError("epsilon must be finite to draw noise")
    clip_x = _check_positive("clip_x", clip_x)
    clip_y = _check_positive("clip_y", clip_y)
    xx_share = _check_share(xx_share)
    _check_rng(rng, epsilon)
    return epsilon, clip_x, clip_y, xx_share


def _check_share(xx_share) -> float:
    if isinstance(xx_share, bool) or not isinstance(
        xx_share, int | float | np.integer | np.floating
    ):
        raise TypeError(f"xx_share must be a number in (0, 1), got {xx_share!r}")
    xx_share = float(xx_share)
    if not 0.0 < xx_share < 1.0:
        raise ValueError(f"xx_share must be in (0, 1), got {xx_share!r}")
    return xx_share


def ssp_laplace_noise(
    dim: int,
    *,
    epsilon: float,
    clip_x: float,
    clip_y: float,
    rng: np.random.Generator,
    xx_share: float = 0.5,
) -> tuple[np.ndarray, np.ndarray]:
    r"""SSP noise with Laplace on the upper triangle of :math:`X^\top X` (full support).

    With :math:`|x_{ij}| \le B_x`, :math:`|y_i| \le B_y`, replacing one row
    changes a diagonal entry of :math:`X^\top X` by at most :math:`B_x^2` and
    an off-diagonal one by at most :math:`2B_x^2`, so the L1 sensitivity of
    the :math:`d(d+1)/2` upper-triangle entries is
    :math:`dB_x^2 + d(d-1)B_x^2 = d^2B_x^2` (adding or removing a row changes
    it by less). Hence

    .. math::

        E_{jk} = E_{kj} \overset{iid}{\sim}
            \mathrm{Laplace}\!\left(0, \frac{d^2 B_x^2}{\epsilon_1}\right)\ (j \le k),
        \qquad
        L_j \overset{iid}{\sim} \mathrm{Laplace}\!\left(0, \frac{2 d B_x B_y}{\epsilon_2}\right),

    :math:`\epsilon_1 = p\,\epsilon`, :math:`\epsilon_2 = (1-p)\,\epsilon`, is
    pure ε-DP by the Laplace mechanism and composition. Unlike the Wishart
    noise of :func:`ssp_noise` the noise has full support, so the privacy
    loss is bounded for every output (Dwork & Roth 2014, Thm 3.6). The noisy
    matrix may be indefinite: repair it with :func:`psd_repair`
    (post-processing, free). AdaSSP (Wang 2018) perturbs the same statistics.

    Returns
    -------
    E : ndarray of shape (dim, dim), symmetric
    L : ndarray of shape (dim,)
    """
    epsilon, clip_x, clip_y, xx_share = _check_noise_args(epsilon, clip_x, clip_y, xx_share,
                                                           rng)
    if isinstance(dim, bool) or not isinstance(dim, int | np.integer) or dim < 1:
        raise ValueError(f"dim must be a positive integer, got {dim!r}")
    d = int(dim)
    eps_xx, eps_xy = xx_share * epsilon, (1.0 - xx_share) * epsilon
    upper = np.triu_indices(d)
    E = np.zeros((d, d))
    E[upper] = rng.laplace(0.0, d * d * clip_x**2 / eps_xx, size=upper[0].size)
    E = E + np.triu(E, 1).T
    L = rng.laplace(0.0, 2.0 * d * clip_x * clip_y / eps_xy, size=d)
    return E, L


def psd_repair(A: np.ndarray, floor: float = 0.0) -> np.ndarray:
    r"""Nearest (Frobenius) symmetric matrix with eigenvalues :math:`\ge` ``floor``.

    :math:`A = Q\Lambda Q^\top \mapsto Q \max(\Lambda, \text{floor}) Q^\top`
    (Higham 1988). Post-processing of a DP release, so it costs no privacy.
    """
    A = np.asarray(A, dtype=float)
    values, vectors = np.linalg.eigh((A + np.swapaxes(A, -1, -2)) / 2.0)
    values = np.maximum(values, float(floor))
    return (vectors * values[..., None, :]) @ np.swapaxes(vectors, -1, -2)


def _check_xx_noise(xx_noise) -> str:
    if xx_noise not in ("wishart", "laplace"):
        raise ValueError(f"xx_noise must be 'wishart' or 'laplace', got {xx_noise!r}")
    return xx_noise


def clip_rows_to_unit_ball(X: np.ndarray) -> np.ndarray:
    r"""Project each row onto the closed unit L2 ball: :math:`x / \max(1, \lVert x\rVert)`."""
    X = np.asarray(X, dtype=float)
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    return X / np.maximum(norms, 1.0)


# --------------------------------------------------------------------------- #
# logistic regression by objective perturbation
# --------------------------------------------------------------------------- #
class DPLogisticRegression(ClassifierMixin, BaseEstimator):
    r"""Binary logistic regression, epsilon-DP by objective perturbation.

    Inputs are bounded as in Niinimäki et al. (2019): each row is divided by
    ``scale`` (the mean row norm of the *public* representation), projected
    onto the unit ball, a constant 1 is appended for the bias and the
    augmented row is divided by :math:`\sqrt 2`, so :math:`\lVert a_i\rVert
    \le 1`. With labels :math:`y_i \in \{-1, 1\}` the minimised objective is
    (sum form, as in the authors' code)

    .. math::

        J(w) = \sum_{i=1}^n \log\bigl(1 + e^{-y_i w^\top a_i}\bigr)
               + \frac{\alpha}{2} \lVert P w \rVert^2 + b^\top w,

    which is :math:`n` times CMS11's
    :math:`\frac1n\sum_i \ell + \frac{\Lambda}{2}\lVert w\rVert^2 +
    \frac1n b^\top w` with :math:`\Lambda = \alpha / n`. Hence the
    non-private optimum equals scikit-learn's ``LogisticRegression(C=1/alpha)``
    on the augmented rows. The noise :math:`b` has
    :math:`\lVert b\rVert \sim \mathrm{Gamma}(d+1, 2/\epsilon')` and a
    uniform direction (:func:`objective_perturbation_noise`).

    Two variants (``variant``):

    ``"paper"`` (default)
        The authors' ``models/logistic_regression.py``: the bias coordinate is
        not penalised (:math:`P` drops it), :math:`\epsilon' = \epsilon`, no
        extra regulariser. Note: CMS11's proof needs the ε' correction below
        and a penalty on every coordinate, so this variant does not carry the
        formal ε guarantee of CMS11 Theorem 9 (with the bias penalised its
        privacy loss would be bounded by :math:`\epsilon + 2\log(1 +
        c/\alpha)`, :math:`c = 1/4`).
    ``"cms11"``
        CMS11 Algorithm 2 exactly: every coordinate penalised and
        :math:`\epsilon' = \epsilon - 2\log(1 + c/\alpha)`; if
        :math:`\epsilon' \le 0` an extra penalty
        :math:`\alpha_\Delta = c/(e^{\epsilon/4} - 1) - \alpha` is added and
        :math:`\epsilon' = \epsilon/2`. Pure ε-DP (bounded neighbours).

    Parameters
    ----------
    epsilon : float
        Privacy parameter (> 0); ``np.inf`` gives the non-private fit.
    l2 : float, default 0.1
        Penalty :math:`\alpha` of the sum-form objective (the paper's
        ``regularizer_strength = 0.1``).
    scale : float, default 1.0
        Divisor applied to the rows before clipping; the paper uses the mean
        row norm (``np.linalg.norm(X, axis=1).mean()``). Take it from public
        data: the authors' scripts took it from the private training rows,
        which ε does not cover. (Their extra 1 % ``bounding_slack`` only
        guarded an assertion and is omitted.)
    variant : {"paper", "cms11"}, default "paper"
    rng : numpy.random.Generator, optional
        Required when ``epsilon`` is finite.
    tol : float, default 1e-10
        Gradient tolerance of the L-BFGS solver.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        Sorted labels; ``classes_[1]`` is the positive class.
    weights_ : ndarray of shape (n_features + 1,)
        Minimiser :math:`w` in the augmented (clipped, /√2) space; last entry bias.
    coef_ : ndarray of shape (1, n_features)
        ``weights_[:-1] / sqrt(2)``, acting on the scaled, clipped rows.
    intercept_ : ndarray of shape (1,)
        ``weights_[-1] / sqrt(2)``.
    noise_ : ndarray of shape (n_features + 1,)
        The drawn perturbation :math:`b` (zeros when epsilon is inf).
    epsilon_noise_, l2_effective_ : float
        :math:`\epsilon'` and the total penalty actually used.
    n_features_in_ : int
    """

    def __init__(
        self,
        epsilon: float,
        *,
        l2: float = 0.1,
        scale: float = 1.0,
        variant: str = "paper",
        rng: np.random.Generator | None = None,
        tol: float = 1e-10,
    ):
        self.epsilon = epsilon
        self.l2 = l2
        self.scale = scale
        self.variant = variant
        self.rng = rng
        self.tol = tol
        self._validate_params()

    def _validate_params(self) -> None:
        eps = _check_epsilon(self.epsilon)
        _check_positive("l2", self.l2)
        _check_positive("scale", self.scale)
        _check_positive("tol", self.tol)
        if self.variant not in ("paper", "cms11"):
            raise ValueError(f"variant must be 'paper' or 'cms11', got {self.variant!r}")
        _check_rng(self.rng, eps)

    def design(self, X) -> np.ndarray:
        r"""Bounded, bias-augmented design :math:`a_i = [\,\mathrm{clip}(x_i/s), 1\,]/\sqrt2`."""
        X = _check_matrix(X)
        Z = clip_rows_to_unit_ball(X / float(self.scale))
        return np.hstack([Z, np.ones((Z.shape[0], 1))]) / math.sqrt(2.0)

    def privacy_parameters(self) -> tuple[float, float]:
        r"""Return :math:`(\epsilon', \alpha_{\mathrm{total}})` for this configuration."""
        eps = _check_epsilon(self.epsilon)
        alpha = float(self.l2)
        if self.variant == "paper" or not math.isfinite(eps):
            return eps, alpha
        c = LOGISTIC_LOSS_C
        eps_prime = eps - 2.0 * math.log1p(c / alpha)
        if eps_prime > 0:
            return eps_prime, alpha
        # CMS11 Alg. 2: add Delta so that the Jacobian-ratio term is eps/2
        extra = c / math.expm1(eps / 4.0) - alpha
        return eps / 2.0, alpha + max(extra, 0.0)

    def fit(self, X, y):
        r"""Fit on rows ``X`` (n, d) and binary labels ``y`` (two distinct values)."""
        self._validate_params()
        A = self.design(X)
        y = _check_vector(y, A.shape[0])
        classes = np.unique(y)
        if classes.size != 2:
            raise ValueError(f"y must contain exactly two classes, got {classes.size}")
        s = np.where(y == classes[1], 1.0, -1.0)
        n, p = A.shape
        eps_noise, alpha = self.privacy_parameters()
        if math.isfinite(eps_noise):
            b = objective_perturbation_noise(p, epsilon=eps_noise, rng=self.rng)
        else:
            b = np.zeros(p)
        mask = np.ones(p)
        if self.variant == "paper":
            mask[-1] = 0.0  # the authors leave the bias unpenalised

        def objective(w):
            m = s * (A @ w)
            loss = np.sum(np.logaddexp(0.0, -m))
            grad = -A.T @ (s * expit(-m))
            loss += 0.5 * alpha * np.sum(mask * w * w) + b @ w
            grad += alpha * mask * w + b
            return loss, grad

        res = optimize.minimize(
            objective,
            np.zeros(p),
            jac=True,
            method="L-BFGS-B",
            options={"gtol": float(self.tol), "ftol": 0.0, "maxiter": 10_000, "maxcor": 30},
        )
        w = res.x
        self.classes_ = classes
        self.weights_ = w
        self.coef_ = (w[:-1] / math.sqrt(2.0))[None, :]
        self.intercept_ = np.array([w[-1] / math.sqrt(2.0)])
        self.noise_ = b
        self.epsilon_noise_ = eps_noise
        self.l2_effective_ = alpha
        self.n_features_in_ = p - 1
        self.n_iter_ = int(res.nit)
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "weights_"):
            raise AttributeError("DPLogisticRegression is not fitted; call fit first")

    def decision_function(self, X) -> np.ndarray:
        r"""Linear score :math:`w^\top a(x)`; positive means ``classes_[1]``."""
        self._check_fitted()
        A = self.design(X)
        if A.shape[1] != self.weights_.size:
            raise ValueError(
                f"X has {A.shape[1] - 1} features, the model was fitted on {self.n_features_in_}"
            )
        return A @ self.weights_

    def predict_proba(self, X) -> np.ndarray:
        r"""Class probabilities, columns ordered as ``classes_``."""
        p1 = expit(self.decision_function(X))
        return np.column_stack([1.0 - p1, p1])

    def predict(self, X) -> np.ndarray:
        return self.classes_[(self.decision_function(X) > 0).astype(int)]


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
        eps = _check_epsilon(self.epsilon)
        private = math.isfinite(eps)
        _check_positive("clip_x", self.clip_x, allow_inf=not private)
        _check_positive("clip_y", self.clip_y, allow_inf=not private)
        _check_positive("ridge", self.ridge, allow_zero=True)
        _check_share(self.xx_share)
        if not isinstance(self.center, bool | np.bool_):
            raise TypeError(f"center must be a bool, got {self.center!r}")
        _check_xx_noise(self.xx_noise)
        _check_rng(self.rng, eps)

    def _intercept_value(self) -> float:
        return float(self.clip_x) if math.isfinite(float(self.clip_x)) else 1.0

    @property
    def public_centring(self) -> bool:
        """Whether no centre is taken from the training data."""
        return not self.center or (self.x_center is not None and self.y_center is not None)

    def fit(self, X, y):
        self._validate_params()
        X = _check_matrix(X)
        y = _check_vector(y, X.shape[0]).astype(float)
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
        X = _check_matrix(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, the model was fitted on {self.n_features_in_}"
            )
        return (X - self.x_mean_) @ self.coef_ + self.y_mean_


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
    epsilon = _check_epsilon(epsilon)
    _check_xx_noise(xx_noise)
    if not math.isfinite(epsilon):
        raise ValueError("epsilon must be finite; with epsilon=inf no clipping is needed")
    _check_rng(rng, epsilon)
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
                         ridge: float, xx_noise: str) -> np.ndarray:
    """Summed Spearman ρ of every grid pair of :func:`ssp_clipping_weights` (validated inputs).

    All g² fits of one noise draw are one batched solve and one einsum; the
    sum over the draws runs in draw order so the scores, and hence the argmax
    with its first-wins tie rule, do not depend on how the work is batched.
    """
    g = grid.size
    score = np.zeros((g, g))
    eye = np.eye(d)
    for _ in range(n_datasets):
        x = rng.standard_normal((n, d))
        x -= x.mean(axis=0)
        beta = rng.standard_normal(d)
        y = x @ beta + rng.standard_normal(n)
        y -= y.mean()
        sx, sy = np.std(x, ddof=1), np.std(y, ddof=1)
        # statistics of the clipped data for every (w_x, w_y) pair
        xcs = [np.clip(x, -wx * sx, wx * sx) for wx in grid]
        xx = np.stack([xc.T @ xc for xc in xcs])  # (g, d, d)
        ycs = np.stack([np.clip(y, -wy * sy, wy * sy) for wy in grid])  # (g, n)
        xy = np.einsum("and,bn->abd", np.stack(xcs), ycs)  # (g_x, g_y, d)
        bx = grid * sx
        by = grid * sy
        for _ in range(n_noise):
            noise = ssp_noise if xx_noise == "wishart" else ssp_laplace_noise
            W1, L1 = noise(
                d, epsilon=epsilon, clip_x=1.0, clip_y=1.0, rng=rng, xx_share=xx_share
            )
            prec = xx + W1[None] * (bx**2)[:, None, None]
            if xx_noise == "laplace":
                prec = psd_repair(prec)
            prec = prec + ridge * eye[None]
            rhs = xy + L1[None, None, :] * (bx[:, None] * by[None, :])[:, :, None]
            w = np.linalg.solve(prec[:, None, :, :], rhs[..., None])[..., 0]  # (g, g, d)
            pred = np.einsum("nd,abd->abn", x, w)
            score += _spearman_rows(pred.reshape(g * g, n), y).reshape(g, g)
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
    ties fall back to :func:`scipy.stats.rankdata`. Equals the ``rankdata``
    formula bit for bit (tests/test_dp_learners.py).
    """
    P = np.asarray(P, dtype=float)
    n = P.shape[1]
    if n**3 >= 2**50:
        raise ValueError(f"rank sums are exact only for n**3 < 2**50, got n={n}")
    ry = stats.rankdata(y)
    ry = ry - ry.mean()
    order = np.argsort(P, axis=1)
    # flat gather: take_along_axis builds index grids and costs more than the sort
    flat = order + (np.arange(P.shape[0]) * n)[:, None]
    sorted_p = np.ascontiguousarray(P).ravel()[flat]
    tied = np.any(sorted_p[:, 1:] == sorted_p[:, :-1], axis=1)
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


# --------------------------------------------------------------------------- #
# feature selection baselines
# --------------------------------------------------------------------------- #
def dp_select_features(
    X,
    y,
    n_select: int,
    *,
    epsilon: float,
    rng: np.random.Generator,
    sparsity: float = 1.0,
    n_parts: int | None = None,
    lasso_max_iter: int = 10_000,
) -> np.ndarray:
    r"""Select features with ε-DP by subsample-and-aggregate (Kifer et al. 2012).

    As in the authors' ``learn_and_test_kifer.select_features``: the rows are
    split into :math:`k = \lfloor\sqrt n\rfloor` disjoint interleaved parts
    (row :math:`i` goes to part :math:`i \bmod k`); on each part a Lasso
    (scikit-learn ``alpha = sparsity / n``, intercept fitted) is fitted and
    its ``n_select`` largest :math:`|\beta_j|` get a vote. With :math:`v_j`
    the fraction of parts voting for feature :math:`j`,

    .. math:: \tilde v_j = v_j + \mathrm{Laplace}\!\left(0, \frac{2\,m}{k\,\epsilon}\right),

    and the ``n_select`` largest :math:`\tilde v_j` are returned. Replacing
    one row changes one part, whose vote vector changes in at most
    :math:`2m` entries by :math:`1/k`: L1 sensitivity :math:`2m/k`
    (:math:`m` = ``n_select``). Ties in :math:`|\beta|` are broken by column
    order (stable sort) so that the result is deterministic.

    Parameters
    ----------
    X : array_like of shape (n, p)
    y : array_like of shape (n,)
        Rows with missing (NaN) responses are dropped first, as in the original.
    n_select : int
        Number of features m to select (1 <= m <= p).
    epsilon : float
        Budget spent on the selection (finite, > 0). The paper gives half of
        the total ε to the selection and half to the regression.
    rng : numpy.random.Generator
    sparsity : float, default 1.0
    n_parts : int, optional
        Number of parts k (default :math:`\lfloor\sqrt n\rfloor`).
    lasso_max_iter : int, default 10000

    Returns
    -------
    ndarray of int, shape (n_select,)
        Column indices, in order of decreasing noisy vote.
    """
    from sklearn.linear_model import Lasso

    X = _check_matrix(X)
    y = np.asarray(y, dtype=float)
    _check_vector(y, X.shape[0])
    epsilon = _check_epsilon(epsilon)
    if not math.isfinite(epsilon):
        raise ValueError("epsilon must be finite for DP feature selection")
    _check_rng(rng, epsilon)
    keep = ~np.isnan(y)
    X, y = X[keep], y[keep]
    n, p = X.shape
    if isinstance(n_select, bool) or not isinstance(n_select, int | np.integer):
        raise TypeError(f"n_select must be an integer, got {n_select!r}")
    if not 1 <= n_select <= p:
        raise ValueError(f"n_select must be in [1, {p}], got {n_select}")
    _check_positive("sparsity", sparsity)
    k = int(math.isqrt(n)) if n_parts is None else n_parts
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or not 1 <= k <= n:
        raise ValueError(f"n_parts must be an integer in [1, {n}], got {n_parts!r}")

    votes = np.zeros(p)
    lasso = Lasso(alpha=sparsity / n, fit_intercept=True, max_iter=lasso_max_iter)
    for i in range(k):
        lasso.fit(X[i::k], y[i::k])
        top = np.argsort(-np.abs(lasso.coef_), kind="stable")[:n_select]
        votes[top] += 1.0
    noisy = votes / k + rng.laplace(0.0, 2.0 * n_select / (k * epsilon), size=p)
    return np.argsort(-noisy, kind="stable")[:n_select]


def select_columns(X, names: Sequence[str]):
    r"""Fixed-gene-set baseline: the columns ``names`` of a DataFrame, in that order.

    Raises ``KeyError`` naming the genes that are missing.
    """
    missing = [g for g in names if g not in X.columns]
    if missing:
        raise KeyError(f"genes not in the expression matrix: {missing}")
    return X.loc[:, list(names)]
