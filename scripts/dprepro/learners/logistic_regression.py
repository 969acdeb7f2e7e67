r"""DP logistic regression by objective perturbation (Chaudhuri, Monteleoni & Sarwate 2011),
as used by Niinimäki et al. (2019) for the cancer-type task.

The other learners of study ``repr_transfer`` live beside it:
:mod:`dprepro.learners.linear_regression` (SSP linear regression, Honkela et al. 2018),
:mod:`dprepro.learners.clipping` (the SSP learner's clipping weights),
:mod:`dprepro.learners.feature_selection` (DP feature selection, Kifer, Smith &
Thakurta 2012) and :mod:`dprepro.learners.noise` (the noise draws).

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
import warnings

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin

from dprepro.learners.checks import (
    check_epsilon,
    check_matrix,
    check_positive,
    check_rng,
    check_vector,
)
from dprepro.learners.noise import objective_perturbation_noise

# re-exported: the clipping weights and the feature-selection baselines live in their own
# modules (split by concept); importing them from here keeps callers working

__all__ = [
    "DPLogisticRegression",
    "PendingFits",
    "clip_rows_to_unit_ball",
    "gradient_hessian",
    "minimise_perturbed_objectives",
]

#: Bound on |l''| for the logistic loss, the constant c of CMS11 Algorithm 2.
LOGISTIC_LOSS_C = 0.25


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
        Stop when :math:`\lVert\nabla J(w)\rVert \le` ``tol`` :math:`(1 + \lVert b\rVert + n)`
        or when a Newton step falls below rounding (:func:`minimise_perturbed_objectives`).
    max_iter : int, default 1000
        Newton steps allowed (a fit that has a minimiser and does not reach it warns;
        about 5-25 steps at the penalties used here).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        Sorted labels; ``classes_[1]`` is the positive class.
    weights_ : ndarray of shape (n_features + 1,)
        Minimiser :math:`w` in the augmented (clipped, /√2) space, last entry the
        bias (the last iterate when ``converged_`` is False).
    coef_ : ndarray of shape (1, n_features)
        ``weights_[:-1] / sqrt(2)``, acting on the scaled, clipped rows.
    intercept_ : ndarray of shape (1,)
        ``weights_[-1] / sqrt(2)``.
    noise_ : ndarray of shape (n_features + 1,)
        The drawn perturbation :math:`b` (zeros when epsilon is inf).
    epsilon_noise_, l2_effective_ : float
        :math:`\epsilon'` and the total penalty actually used.
    n_features_in_ : int
    n_iter_ : int
        Newton systems solved.
    has_minimiser_ : bool
        False when :math:`J` is unbounded below: in the ``"paper"`` variant the bias
        is unpenalised, so once the bias coordinate of :math:`b` leaves
        :math:`(-\sum_{s_i<0} a_{i,\mathrm{bias}}, \sum_{s_i>0} a_{i,\mathrm{bias}})`
        (one class's rows) the weights run away along the bias for 100 Newton steps
        and every row is predicted as one class (the mechanism's output then).
    converged_ : bool
        Whether the minimiser was reached (never when ``has_minimiser_`` is False).
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
        max_iter: int = 1000,
    ):
        self.epsilon = epsilon
        self.l2 = l2
        self.scale = scale
        self.variant = variant
        self.rng = rng
        self.tol = tol
        self.max_iter = max_iter
        self._validate_params()

    def _validate_params(self) -> None:
        eps = check_epsilon(self.epsilon)
        check_positive("l2", self.l2)
        check_positive("scale", self.scale)
        check_positive("tol", self.tol)
        if isinstance(self.max_iter, bool) or not isinstance(self.max_iter, int | np.integer) \
                or self.max_iter < 1:
            raise ValueError(f"max_iter must be a positive integer, got {self.max_iter!r}")
        if self.variant not in ("paper", "cms11"):
            raise ValueError(f"variant must be 'paper' or 'cms11', got {self.variant!r}")
        check_rng(self.rng, eps)

    def design(self, X) -> np.ndarray:
        r"""Bounded, bias-augmented design :math:`a_i = [\,\mathrm{clip}(x_i/s), 1\,]/\sqrt2`."""
        X = check_matrix(X)
        Z = clip_rows_to_unit_ball(X / float(self.scale))
        return np.hstack([Z, np.ones((Z.shape[0], 1))]) / math.sqrt(2.0)

    def privacy_parameters(self) -> tuple[float, float]:
        r"""Return :math:`(\epsilon', \alpha_{\mathrm{total}})` for this configuration."""
        eps = check_epsilon(self.epsilon)
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
        pending = PendingFits()
        pending.add(self, X, y)
        return pending.solve()[0]

    def _problem(self, X, y) -> dict:
        """Validate, bound the rows, draw the noise: what the minimisation needs."""
        self._validate_params()
        A = self.design(X)
        y = check_vector(y, A.shape[0])
        classes = np.unique(y)
        if classes.size != 2:
            raise ValueError(f"y must contain exactly two classes, got {classes.size}")
        p = A.shape[1]
        eps_noise, alpha = self.privacy_parameters()
        if math.isfinite(eps_noise):
            b = objective_perturbation_noise(p, epsilon=eps_noise, rng=self.rng)
        else:
            b = np.zeros(p)
        mask = np.ones(p)
        if self.variant == "paper":
            mask[-1] = 0.0  # the authors leave the bias unpenalised
        signs = np.where(y == classes[1], 1.0, -1.0)
        # recession along the unpenalised bias: J is bounded below only inside this interval
        bounded = mask[-1] > 0 or (
            -A[signs < 0, -1].sum() < b[-1] < A[signs > 0, -1].sum())
        return {"A": A, "signs": signs, "classes": classes, "b": b, "alpha": alpha,
                "mask": mask, "eps_noise": eps_noise, "bounded": bool(bounded),
                "tol": float(self.tol),
                "max_iter": int(self.max_iter) if bounded else _UNBOUNDED_STEPS}

    def _set_fitted(self, problem: dict, w: np.ndarray, converged: bool, n_iter: int) -> None:
        self.classes_ = problem["classes"]
        self.weights_ = np.array(w)
        self.coef_ = (w[:-1] / math.sqrt(2.0))[None, :]
        self.intercept_ = np.array([w[-1] / math.sqrt(2.0)])
        self.noise_ = problem["b"]
        self.epsilon_noise_ = problem["eps_noise"]
        self.l2_effective_ = problem["alpha"]
        self.n_features_in_ = w.size - 1
        self.n_iter_ = int(n_iter)
        self.has_minimiser_ = problem["bounded"]
        self.converged_ = bool(converged) and problem["bounded"]

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
# the minimiser, many objectives at once
# --------------------------------------------------------------------------- #
def _margins(W, A, signs):
    if A.ndim == 2:
        return (W @ A.T) * signs
    return np.matmul(A, W[:, :, None])[:, :, 0] * signs


def _objective_values(W, A, signs, counts, alpha, mask, B):
    loss = np.logaddexp(0.0, -_margins(W, A, signs))
    loss = loss @ counts if counts.ndim == 1 else np.sum(loss * counts, axis=1)
    return loss + 0.5 * alpha * np.sum(mask * W * W, axis=1) + np.sum(B * W, axis=1)


def gradient_hessian(W, A, signs, counts, alpha, mask):
    r"""Gradient and Hessian of :math:`J(w) - b^\top w` (the penalised loss) at each row of ``W``.

    Arguments as in :func:`minimise_perturbed_objectives` (``W``: (m, p)). Returns
    ``(grad, hess)`` of shapes (m, p) and (m, p, p).
    """
    alpha = np.broadcast_to(np.asarray(alpha, dtype=float), (W.shape[0],))
    sig = expit(-_margins(W, A, signs))
    curv = sig * (1.0 - sig) * counts
    if A.ndim == 2:
        grad = -(sig * (signs * counts)) @ A
        # Σ_n curv_mn a_n a_nᵀ as one matrix product with the terms' outer products
        outer = (A[:, :, None] * A[:, None, :]).reshape(A.shape[0], -1)
        hess = (curv @ outer).reshape(-1, A.shape[1], A.shape[1])
    else:
        grad = -np.matmul((sig * (signs * counts))[:, None, :], A)[:, 0, :]
        hess = np.matmul(np.swapaxes(A * curv[:, :, None], 1, 2), A)
    return grad + alpha[:, None] * mask * W, hess + alpha[:, None, None] * np.diag(mask)


def minimise_perturbed_objectives(A, signs, counts, alpha, mask, B, *, gtol, max_iter=100):
    r"""Minimise, for every row :math:`b_k` of ``B`` at once,

    .. math::

        J_k(w) = \sum_i c_i \log\bigl(1 + e^{-s_i w^\top a_i}\bigr)
                 + \frac{\alpha_k}2 \lVert P w\rVert^2 + b_k^\top w,

    the objective of :class:`DPLogisticRegression` (:math:`c_i` counts equal rows;
    0 pads a shorter problem), by damped Newton steps with Armijo backtracking.
    Where a minimiser exists :math:`J_k` is strictly convex and Newton's method
    converges quadratically near it: some 5-25 steps at the penalties used here
    (many more at tiny α), each a few array products over all problems, instead
    of one quasi-Newton solve per problem.

    Parameters
    ----------
    A : ndarray of shape (n, p) or (m, n, p)
        Rows :math:`a_i`: one matrix shared by all problems, or one per problem.
    signs, counts : ndarray of shape (n,) or (m, n), like ``A``
        Labels :math:`s_i \in \{-1, 1\}` and weights :math:`c_i \ge 0`.
    alpha : float or ndarray of shape (m,)
        The penalty :math:`\alpha_k` of each problem.
    mask : ndarray of shape (p,)
        Diagonal of :math:`P` (1 = penalised).
    B : ndarray of shape (m, p)
    gtol : float or ndarray of shape (m,)
        Stop a problem once :math:`\lVert\nabla J_k\rVert \le` ``gtol``, or once the
        Newton step is below :math:`10^{-12}(1 + \lVert w\rVert)` (rounding).
    max_iter : int or ndarray of int, shape (m,), default 100
        Newton systems each problem may solve.

    Returns
    -------
    W : ndarray of shape (m, p)
    converged : ndarray of bool, shape (m,)
        False where :math:`J_k` is unbounded below (no minimiser) or ``max_iter`` ran out.
    n_iter : ndarray of int, shape (m,)
    """
    B = np.asarray(B, dtype=float)
    m, p = B.shape
    alpha = np.broadcast_to(np.asarray(alpha, dtype=float), (m,))
    gtol = np.broadcast_to(np.asarray(gtol, dtype=float), (m,))
    max_iter = np.broadcast_to(np.asarray(max_iter, dtype=int), (m,))
    shared = A.ndim == 2

    def rows(x, idx):  # per-problem arrays follow the active problems; shared ones stay
        return x if shared else x[idx]

    W = np.zeros((m, p))
    converged = np.zeros(m, dtype=bool)
    n_iter = np.zeros(m, dtype=int)
    active = np.arange(m)
    eye = np.eye(p)
    for _ in range(int(max_iter.max(initial=0))):
        active = active[n_iter[active] < max_iter[active]]
        if active.size == 0:
            break
        data = rows(A, active), rows(signs, active), rows(counts, active)
        grad, hess = gradient_hessian(W[active], *data, alpha[active], mask)
        grad = grad + B[active]
        done = np.linalg.norm(grad, axis=1) <= gtol[active]
        converged[active[done]] = True
        active, grad, hess = active[~done], grad[~done], hess[~done]
        if active.size == 0:
            break
        n_iter[active] += 1
        step = np.linalg.solve(hess + 1e-12 * eye, grad[..., None])[..., 0]
        tiny = np.linalg.norm(step, axis=1) <= 1e-12 * (1.0 + np.linalg.norm(W[active], axis=1))
        converged[active[tiny]] = True
        active, grad, step = active[~tiny], grad[~tiny], step[~tiny]
        if active.size == 0:
            break
        data = rows(A, active), rows(signs, active), rows(counts, active)
        w0, b0, a0 = W[active], B[active], alpha[active]
        j0 = _objective_values(w0, *data, a0, mask, b0)
        slope = np.sum(grad * step, axis=1)
        # near the optimum the decrease is below the rounding of J: take the full Newton step
        exact = slope <= 1e-12 * (1.0 + np.abs(j0))
        t = np.ones(active.size)
        bad = ~exact
        for _ in range(50):
            idx = np.flatnonzero(bad)
            if idx.size == 0:
                break
            sub = rows(data[0], idx), rows(data[1], idx), rows(data[2], idx)
            j1 = _objective_values(w0[idx] - t[idx, None] * step[idx], *sub, a0[idx], mask,
                                   b0[idx])
            bad[idx] = j1 > j0[idx] - 1e-4 * t[idx] * slope[idx]
            t[bad] *= 0.5
        W[active] = w0 - t[:, None] * step
    return W, converged, n_iter


#: Problems solved together hold at most this many entries of their stacked rows (~32 MB).
_BATCH_ENTRIES = 1 << 22
#: Newton steps of a fit whose objective has no minimiser: its weights run away along the
#: bias (to a norm of about 1e14), which fixes every prediction to one class.
_UNBOUNDED_STEPS = 100


class PendingFits:
    """Fits of :class:`DPLogisticRegression` models whose objectives are minimised together.

    :meth:`add` does what :meth:`DPLogisticRegression.fit` does before minimising
    (checks, bounds the rows, draws the noise from the model's generator), so a
    loop of ``add`` calls consumes every generator exactly as a loop of ``fit``
    calls would, draws of other mechanisms in between included. :meth:`solve`
    then minimises every objective at once (:func:`minimise_perturbed_objectives`;
    problems of one shape stacked, so each equals its fit alone to the bit) and
    leaves each model fitted.

    Examples
    --------
    >>> pending = PendingFits()
    >>> for X, y in folds:                          # doctest: +SKIP
    ...     pending.add(DPLogisticRegression(1.0, rng=rng), X, y)
    >>> models = pending.solve()                    # doctest: +SKIP
    """

    def __init__(self):
        self._models: list[DPLogisticRegression] = []
        self._problems: list[dict] = []
        self._queued: set[int] = set()  # ids of the queued models

    def add(self, model: DPLogisticRegression, X, y) -> DPLogisticRegression:
        """Queue ``model``'s fit on ``(X, y)``, its noise drawn now; returns ``model``."""
        if id(model) in self._queued:
            raise ValueError("this model is queued already: one pending fit per model")
        self._problems.append(model._problem(X, y))
        self._models.append(model)
        self._queued.add(id(model))
        return model

    def solve(self) -> list[DPLogisticRegression]:
        """Minimise every queued objective; the models, fitted, in the order added."""
        models, problems = self._models, self._problems
        self._models, self._problems, self._queued = [], [], set()
        # problems of one shape are stacked (no padding: each fit's sums run as in a fit
        # of its own, so a fit solved here equals one solved alone, to the bit)
        groups: dict[tuple, list[int]] = {}
        for k, problem in enumerate(problems):
            groups.setdefault((*problem["A"].shape, tuple(problem["mask"])), []).append(k)
        for (n, p, mask), members in groups.items():
            size = max(1, _BATCH_ENTRIES // (n * p))
            for start in range(0, len(members), size):
                chunk = members[start:start + size]
                A = np.stack([problems[k]["A"] for k in chunk])
                signs = np.stack([problems[k]["signs"] for k in chunk])
                B = np.array([problems[k]["b"] for k in chunk])
                tol = np.array([problems[k]["tol"] for k in chunk])
                W, converged, n_iter = minimise_perturbed_objectives(
                    A, signs, np.ones_like(signs),
                    np.array([problems[k]["alpha"] for k in chunk]), np.array(mask), B,
                    gtol=tol * (1.0 + np.linalg.norm(B, axis=1) + n),
                    max_iter=np.array([problems[k]["max_iter"] for k in chunk]))
                for row, k in enumerate(chunk):
                    models[k]._set_fitted(problems[k], W[row], converged[row], n_iter[row])
        stuck = [k for k, model in enumerate(models)
                 if problems[k]["bounded"] and not model.converged_]
        if stuck:
            warnings.warn(f"{len(stuck)} of {len(models)} DP logistic fits stopped after "
                          f"max_iter Newton steps short of their minimiser (first: fit "
                          f"{stuck[0]}, max_iter={problems[stuck[0]]['max_iter']}); raise "
                          "max_iter", RuntimeWarning, stacklevel=2)
        return models

