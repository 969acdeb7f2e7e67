r"""Audits of the DP learners: objective perturbation (exact change-of-variables
density of the minimiser) and sufficient-statistics perturbation.

A row's true ε is the rule of :mod:`dprepro.learners.accounting` for the learner as run,
the rule the ``repr_transfer`` study's privacy records are decided by.

Each returns an :class:`~dprepro.audit.bound.AuditResult`; the bound is
:func:`~dprepro.audit.bound.epsilon_lower_bound` (see :mod:`dprepro.audit.suite`).
"""

from __future__ import annotations

import math

import numpy as np

from dprepro.audit.bound import (
    DEFAULT_LEVEL,
    AuditResult,
    _check_draws,
    _check_level,
    _check_positive,
    _check_rng,
    _laplace_llr,
    _threshold_audit,
)
from dprepro.learners.accounting import objective_perturbation_epsilon, ssp_epsilon
from dprepro.learners.logistic_regression import (
    DPLogisticRegression,
    gradient_hessian,
    minimise_perturbed_objectives,
)
from dprepro.learners.noise import (
    objective_perturbation_noise_draws,
    psd_repair,
    ssp_laplace_noise_draws,
    ssp_noise_draws,
)

# --------------------------------------------------------------------------- objective perturbation


def _distinct_terms(A, s) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct pairs (row of ``A``, sign) and how often each occurs.

    The loss is a sum over rows, so equal rows with equal signs add up to one
    term times its count. The audit's data sets repeat two background rows
    ``n_background`` times each: 3 terms instead of ``2 n_background + 1`` in
    every objective, gradient and Hessian evaluated per draw.
    """
    pairs, counts = np.unique(np.column_stack([A, s]), axis=0, return_counts=True)
    return pairs[:, :-1], pairs[:, -1], counts.astype(float)


def _op_fit_batch(A, s, alpha, mask, B, *, max_iter: int = 100) -> tuple[np.ndarray, np.ndarray]:
    r"""Minimise :math:`J_b(w)` for every row ``b`` of ``B`` at once.

    :math:`J_b(w) = \sum_i \log(1 + e^{-s_i w^\top a_i}) + \frac\alpha2 \|Pw\|^2 + b^\top w`,
    the objective of :meth:`DPLogisticRegression.fit`, by its minimiser
    (:func:`~dprepro.learners.logistic_regression.minimise_perturbed_objectives`) over the
    distinct terms of the loss; returns ``(W, converged)``.
    """
    A, s, counts = _distinct_terms(A, s)
    gscale = 1.0 + np.linalg.norm(B, axis=1) + counts.sum()  # + the number of rows
    W, converged, _ = minimise_perturbed_objectives(A, s, counts, alpha, mask, B,
                                                    gtol=1e-10 * gscale, max_iter=max_iter)
    return W, converged


def _op_log_density(W, A, s, alpha, mask, eps_noise):
    r"""Log density (up to a constant shared by neighbours) of the minimiser ``w``.

    At the minimiser :math:`b = -\nabla L(w)` (gradient of the loss plus
    penalty), a bijection with Jacobian :math:`|\det H(w)|`, and
    :math:`\nu(b) \propto e^{-\varepsilon' \|b\|/2}`, so
    :math:`\log p(w) = -\tfrac{\varepsilon'}{2}\|\nabla L(w)\| + \log\det H(w) + C`.
    """
    grad, hess = gradient_hessian(W, *_distinct_terms(A, s), alpha, mask)
    sign, logdet = np.linalg.slogdet(hess)
    logdet = np.where(sign > 0, logdet, -np.inf)
    return -0.5 * eps_noise * np.linalg.norm(grad, axis=1) + logdet


def _op_neighbours(*, epsilon, variant, l2, gamma_scale, n_background) -> dict:
    """Design matrices, signs and noise parameters of the audit's neighbouring data sets."""
    model = DPLogisticRegression(epsilon, l2=l2, variant=variant, rng=np.random.default_rng(0))
    eps_noise, alpha = model.privacy_parameters()
    nominal_scale = 2.0 / eps_noise
    if gamma_scale is not None:
        eps_noise = 2.0 / _check_positive(gamma_scale, "gamma_scale")
    x_bg = np.zeros((2 * n_background, 1))
    y_bg = np.r_[np.ones(n_background), np.zeros(n_background)]
    mask = np.ones(2)
    if variant == "paper":
        mask[-1] = 0.0
    return {
        "A_d": model.design(np.vstack([x_bg, [[1.0]]])),
        "A_dp": model.design(np.vstack([x_bg, [[0.0]]])),
        "s_d": np.where(np.r_[y_bg, 1.0] == 1, 1.0, -1.0),
        "s_dp": np.where(np.r_[y_bg, 0.0] == 1, 1.0, -1.0),
        "alpha": alpha,
        "mask": mask,
        "eps_noise": eps_noise,
        "nominal_gamma_scale": nominal_scale,
        "variant": variant,
    }


def _op_sample(setup: dict, which: str, draws: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """Minimisers for ``draws`` noise vectors on D (``which="d"``) or D' (``"dprime"``).

    Returns ``(W, exists)``; rows without a minimiser (paper variant) are NaN.
    """
    A, s = (setup["A_d"], setup["s_d"]) if which == "d" else (setup["A_dp"], setup["s_dp"])
    p = A.shape[1]
    B = objective_perturbation_noise_draws(p, draws, epsilon=setup["eps_noise"], rng=rng)
    exists = np.ones(draws, dtype=bool)
    if setup["variant"] == "paper":  # recession condition along the unpenalised bias direction
        exists = (B[:, -1] > -A[s < 0, -1].sum()) & (B[:, -1] < A[s > 0, -1].sum())
    W = np.full((draws, p), np.nan)
    W[exists], conv = _op_fit_batch(A, s, setup["alpha"], setup["mask"], B[exists])
    if not conv.all():
        raise RuntimeError(f"{np.count_nonzero(~conv)} minimisations did not converge")
    return W, exists


def _op_log_ratio(setup: dict, W) -> np.ndarray:
    """Exact :math:`\\log p_D(w) - \\log p_{D'}(w)` per row of ``W`` (NaN rows stay NaN)."""
    args = (setup["alpha"], setup["mask"], setup["eps_noise"])
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        out = _op_log_density(W, setup["A_d"], setup["s_d"], *args) - _op_log_density(
            W, setup["A_dp"], setup["s_dp"], *args
        )
    return np.where(np.isnan(W).any(axis=1), np.nan, out)


def audit_objective_perturbation(
    *,
    epsilon,
    variant: str = "paper",
    draws,
    rng,
    l2: float = 0.1,
    gamma_scale=None,
    n_background: int = 20,
    statistic: str = "likelihood_ratio",
    level: float = DEFAULT_LEVEL,
) -> AuditResult:
    r"""Audit :class:`dprepro.learners.logistic_regression.DPLogisticRegression` (objective
    perturbation).

    Data (one feature, rows already in the unit ball, ``scale = 1``): a
    background of ``n_background`` rows :math:`x = 0` with label 1 and as many
    with label 0; :math:`D` adds the row :math:`(x = 1, y = 1)`, :math:`D'`
    the row :math:`(x = 0, y = 0)` (bounded neighbours, same size). The
    background gives no curvature along the feature weight, so the
    differing row changes :math:`\det H` as much as the penalty allows —
    the Jacobian term of CMS11's proof, which does not shrink with ε.

    The noise vectors have the law of the library's :func:`objective_perturbation_noise`
    and are drawn all at once by
    :func:`~dprepro.learners.noise.objective_perturbation_noise_draws` (tested against that
    law at 1e-9; a different stream from successive single draws) with the ε' and penalty of
    :meth:`DPLogisticRegression.privacy_parameters`, and all minimisers are
    computed at once by a vectorised Newton method on the same objective as
    :meth:`DPLogisticRegression.fit` (the tests check they agree).

    In the ``"paper"`` variant the bias is unpenalised, so :math:`J` is
    unbounded below when :math:`b_\text{bias} \notin (-\sum_{y_i=0} a_{i,0},
    \sum_{y_i=1} a_{i,0})`: the mechanism has no output then (the library's
    fit runs away along the bias and sets ``converged_ = False``). Those draws are
    counted in no event (a valid post-processing of the output "no minimiser");
    their share is in the note. This is also why the variant fails: :math:`D` has one more
    positive row than :math:`D'`, so for :math:`b_\text{bias}` between
    :math:`n'_+/\sqrt2` and :math:`n_+/\sqrt2` the minimiser exists under
    :math:`D` (a large negative bias balanced by the row :math:`x = 1`) while
    :math:`D'` reaches the same weights only through an exponentially thin
    set of noise vectors (its Hessian along the bias vanishes there): the
    Jacobian factor of the privacy loss is unbounded without a penalty on
    every coordinate.

    Statistics: ``"likelihood_ratio"`` (default) — the exact log density
    ratio :math:`\log p_D(w) - \log p_{D'}(w)` of the minimiser (change of
    variables :math:`w \mapsto b`); ``"projection"`` — :math:`w^\top
    (w^*_D - w^*_{D'})` with the noiseless minimisers. Threshold on half the
    draws.

    Parameters
    ----------
    epsilon : float
        Claimed ε.
    variant : {"paper", "cms11"}
    draws : int
        Runs per neighbouring input.
    rng : numpy.random.Generator
    l2 : float, default 0.1
        The paper's penalty α.
    gamma_scale : float, optional
        Override the scale of :math:`\|b\| \sim \mathrm{Gamma}(d+1, \cdot)`
        (default :math:`2/\varepsilon'`): a mis-scaled copy.
    n_background : int, default 20
    statistic : {"likelihood_ratio", "projection"}
    level : float, default 1e-9
    """
    eps = _check_positive(epsilon, "epsilon")
    rng = _check_rng(rng)
    draws = _check_draws(draws)
    level = _check_level(level)
    if statistic not in ("likelihood_ratio", "projection"):
        raise ValueError(f"statistic must be 'likelihood_ratio' or 'projection', got {statistic!r}")
    if isinstance(n_background, bool) or not isinstance(n_background, int) or n_background < 1:
        raise ValueError(f"n_background must be a positive integer, got {n_background!r}")
    setup = _op_neighbours(
        epsilon=eps, variant=variant, l2=l2, gamma_scale=gamma_scale, n_background=n_background
    )
    A_d, s_d, A_dp, s_dp = setup["A_d"], setup["s_d"], setup["A_dp"], setup["s_dp"]
    alpha, mask, eps_noise = setup["alpha"], setup["mask"], setup["eps_noise"]
    nominal_scale = setup["nominal_gamma_scale"]
    p = A_d.shape[1]
    W_d, ok_d = _op_sample(setup, "d", draws, rng)
    W_dp, ok_dp = _op_sample(setup, "dprime", draws, rng)
    if statistic == "likelihood_ratio":

        def stat(W):
            return _op_log_ratio(setup, W)

        stat_name = "exact log density ratio log p_D(w) - log p_D'(w) of the minimiser"
    else:
        zero = np.zeros((1, p))
        w_star_d, _ = _op_fit_batch(A_d, s_d, alpha, mask, zero)
        w_star_dp, _ = _op_fit_batch(A_dp, s_dp, alpha, mask, zero)
        direction = (w_star_d - w_star_dp)[0]

        def stat(W):
            return W @ direction

        stat_name = "projection w . (w*_D - w*_D') onto the noiseless difference"
    bound, desc = _threshold_audit(stat(W_d), stat(W_dp), level=level)
    name = variant if gamma_scale is None else f"{variant}, gamma_scale={gamma_scale:.6g}"
    note = (
        f"l2 = {l2:g}, penalty used {alpha:.4g}, eps' = {2.0 / nominal_scale:.4g}, Gamma scale "
        f"{2.0 / eps_noise:.4g} (nominal {nominal_scale:.4g}); data: {n_background} rows "
        "(x=0, y=1) + as many (x=0, y=0); D adds (x=1, y=1), D' adds (x=0, y=0)"
    )
    if variant == "paper":
        note += (
            f"; no minimiser (J unbounded below, bias unpenalised) in "
            f"{100 * (1 - ok_d.mean()):.1f}% / {100 * (1 - ok_dp.mean()):.1f}% of draws"
        )
    else:
        note += "; CMS11 Theorem 9 guarantees epsilon"
    # the study's rule for the learner as run; a rescaled Gamma is no learner the study runs
    true = (objective_perturbation_epsilon(eps, variant=variant) if gamma_scale is None
            else math.nan)
    return AuditResult(
        mechanism="objective_perturbation",
        variant=name,
        claimed_epsilon=eps,
        empirical_epsilon_lower_bound=bound,
        level=level,
        draws=draws,
        statistic=f"s = {stat_name}; {desc}",
        true_epsilon=true,
        note=note,
    )


# --------------------------------------------------------------------------- SSP


def _ssp_neighbours(component: str, dim: int, clip_x: float, clip_y: float) -> dict:
    """Exact statistics of the audit's neighbours: a fixed background row plus the
    differing row (clipped data)."""
    x_bg, y_bg = np.full((1, dim), 0.5 * clip_x), np.array([0.25 * clip_y])
    if component == "xy":
        x_d = x_dp = np.full((1, dim), clip_x)
        y_d, y_dp = np.array([clip_y]), np.array([-clip_y])
    else:
        x_d, x_dp = np.zeros((1, dim)), np.full((1, dim), clip_x)
        y_d = y_dp = np.array([0.0])
    X_d, X_dp = np.vstack([x_bg, x_d]), np.vstack([x_bg, x_dp])
    Y_d, Y_dp = np.r_[y_bg, y_d], np.r_[y_bg, y_dp]
    return {"xx_d": X_d.T @ X_d, "xx_dp": X_dp.T @ X_dp,
            "xy_d": X_d.T @ Y_d, "xy_dp": X_dp.T @ Y_dp}


def _ssp_xx_statistic(xx_noise: str, stats: dict, dim: int):
    """(statistic of the released X^T X, its description, the variant's name)."""
    if xx_noise == "wishart":
        def stat(A):
            return -np.linalg.eigvalsh(A - stats["xx_dp"])[:, 0]

        return (stat, "-lambda_min(A - X'^T X') (> 0 is impossible under D')",
                "X^T X + Wishart(d+1)")
    upper = np.triu_indices(dim)

    def stat(A):
        return _laplace_llr(A[:, upper[0], upper[1]], stats["xx_d"][upper],
                            stats["xx_dp"][upper])

    return (stat, "Laplace log likelihood ratio (x scale) of the upper triangle of the "
            "repaired X^T X + E", "X^T X + Laplace")


def _check_ssp_options(component, xx_noise, dim, xx_share) -> None:
    """ValueError naming the first of :func:`audit_ssp`'s options out of its domain."""
    if component not in ("xy", "xx"):
        raise ValueError(f"component must be 'xy' or 'xx', got {component!r}")
    if xx_noise not in ("wishart", "laplace"):
        raise ValueError(f"xx_noise must be 'wishart' or 'laplace', got {xx_noise!r}")
    if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
        raise ValueError(f"dim must be a positive integer, got {dim!r}")
    if not 0.0 < xx_share < 1.0:
        raise ValueError(f"xx_share must be in (0, 1), got {xx_share!r}")


def _ssp_xx_note(xx_noise: str, eps_xx: float, eps: float, dim: int,
                 noise_scale: float) -> str:
    """The note of an audit row of the noisy X^T X: its claim, neighbours and noise."""
    note = (f"claimed = xx_share * epsilon = {eps_xx:g} of total {eps:g}; d = {dim}; "
            "neighbours: rows x = 0 vs x = B_x 1")
    if xx_noise == "wishart":
        mass = 1.0 - math.exp(-eps_xx / (2.0 * noise_scale))
        return note + (
            "; the output A = X^T X + W can fall outside "
            f"X'^T X' + PSD cone: P = 1 - exp(-eps1/2) = {mass:.3f} under D, 0 under D' — "
            "not epsilon-DP for any epsilon (as in the authors' diffpri.predictL)"
        )
    return note + ("; Laplace(d^2 B_x^2 / eps1) on the upper triangle, then the PSD repair "
                   "(post-processing), as the corrected pipeline's learner")


def audit_ssp(
    *,
    epsilon,
    draws,
    rng,
    component: str = "xy",
    xx_noise: str = "wishart",
    dim: int = 2,
    clip_x: float = 1.0,
    clip_y: float = 1.0,
    xx_share: float = 0.5,
    noise_scale: float = 1.0,
    level: float = DEFAULT_LEVEL,
) -> AuditResult:
    r"""Audit the noisy sufficient statistics of SSP (:func:`dprepro.learners.noise.ssp_noise`,
    :func:`~dprepro.learners.noise.ssp_laplace_noise`).

    The release is :math:`(X^\top X + W, X^\top y + L)`; each half claims its
    share of ε (:math:`\varepsilon_1 = ` ``xx_share`` ε for :math:`X^\top X`,
    :math:`\varepsilon_2 = (1 -` ``xx_share``:math:`)\,\varepsilon` for
    :math:`X^\top y`), and the audit checks one share at a time with
    neighbours that change only that statistic (bounded neighbours, clipped
    data :math:`|x_{ij}| \le B_x, |y_i| \le B_y`). The true ε is
    :func:`dprepro.learners.accounting.ssp_epsilon` of the statistic at
    ``epsilon / noise_scale``.

    ``component="xy"``
        :math:`D` has the row :math:`(x = B_x \mathbf 1, y = B_y)`, :math:`D'`
        the row :math:`(x = B_x \mathbf 1, y = -B_y)`: :math:`X^\top X` is
        unchanged and :math:`X^\top y` moves by its full L1 sensitivity
        :math:`2 d B_x B_y`, so the true ε of this pair is exactly
        :math:`\varepsilon_2 / \text{noise\_scale}`. Statistic: the Laplace
        log likelihood ratio.
    ``component="xx"``, ``xx_noise="wishart"``
        :math:`D` has the row :math:`x = 0`, :math:`D'` the row
        :math:`x = B_x \mathbf 1` (:math:`y = 0` in both). :math:`W \sim
        \mathrm{Wishart}_d(d+1, \cdot)` is positive semi-definite, so
        :math:`A = X^\top X + W` always satisfies :math:`A - X_{D'}^\top
        X_{D'} \succeq 0` under :math:`D'` but not under :math:`D`: the event
        :math:`\lambda_{\min}(A - X_{D'}^\top X_{D'}) < 0` has probability 0
        under :math:`D'` and :math:`1 - e^{-\varepsilon_1/2}` under :math:`D`
        (because :math:`\|x'\|^2 / x'^\top W^{-1} x' \sim
        (d B_x^2/\varepsilon_1)\,\chi^2_2`). The noisy :math:`X^\top X` is
        therefore not ε-DP for any ε (the density of a Wishart with
        :math:`d+1` degrees of freedom does not vanish at the boundary of the
        cone). Statistic: :math:`-\lambda_{\min}(A - X_{D'}^\top X_{D'})`.
    ``component="xx"``, ``xx_noise="laplace"``
        The corrected pipeline's noise: Laplace of scale :math:`d^2B_x^2/\varepsilon_1`
        on the upper triangle, then :func:`~dprepro.learners.noise.psd_repair`, as
        :meth:`SSPLinearRegression.fit <dprepro.learners.linear_regression.SSPLinearRegression.fit>`
        releases it. Same neighbours; the upper triangle moves by
        :math:`d(d+1)B_x^2/2` in L1, so the pair's loss is :math:`\varepsilon_1` at
        :math:`d = 1` (the plan's) and :math:`\tfrac{d+1}{2d}\varepsilon_1` above.
        Statistic: the Laplace log likelihood ratio of the repaired upper triangle
        (exact at :math:`d = 1`, where the repair only cuts at 0).

    Parameters
    ----------
    epsilon : float
        Total claimed ε (the row reports the share of the audited component).
    draws : int
        Runs per neighbouring input (each with the law of one draw of the noise,
        all drawn at once by :func:`dprepro.learners.noise.ssp_noise_draws` or
        :func:`~dprepro.learners.noise.ssp_laplace_noise_draws`).
    rng : numpy.random.Generator
    component : {"xy", "xx"}
    xx_noise : {"wishart", "laplace"}, default "wishart"
        Noise on :math:`X^\top X` (the as-published or the corrected learner).
    dim : int, default 2
    clip_x, clip_y : float, default 1
    xx_share : float, default 0.5
    noise_scale : float, default 1
        Multiply every noise scale by this (a mis-scaled copy; implemented by
        drawing the noise at ``epsilon / noise_scale``).
    level : float, default 1e-9
    """
    eps = _check_positive(epsilon, "epsilon")
    rng = _check_rng(rng)
    draws = _check_draws(draws)
    level = _check_level(level)
    noise_scale = _check_positive(noise_scale, "noise_scale")
    clip_x = _check_positive(clip_x, "clip_x")
    clip_y = _check_positive(clip_y, "clip_y")
    _check_ssp_options(component, xx_noise, dim, xx_share)
    stats = _ssp_neighbours(component, dim, clip_x, clip_y)
    draw = ssp_noise_draws if xx_noise == "wishart" else ssp_laplace_noise_draws

    def run(xx, xy):
        W, L = draw(dim, draws, epsilon=eps / noise_scale, clip_x=clip_x, clip_y=clip_y,
                    rng=rng, xx_share=xx_share)
        # the learner releases the repaired Laplace-noised matrix (post-processing)
        return (xx + W if xx_noise == "wishart" else psd_repair(xx + W)), xy + L

    A_d, v_d = run(stats["xx_d"], stats["xy_d"])
    A_dp, v_dp = run(stats["xx_dp"], stats["xy_dp"])
    eps_xx, eps_xy = xx_share * eps, (1.0 - xx_share) * eps
    true = ssp_epsilon(eps / noise_scale, xx_noise=xx_noise, public_centring=True,
                       xx_share=xx_share, statistic=component)
    if component == "xy":
        s_d = _laplace_llr(v_d, stats["xy_d"], stats["xy_dp"])
        s_dp = _laplace_llr(v_dp, stats["xy_d"], stats["xy_dp"])
        claimed = eps_xy
        stat = "Laplace log likelihood ratio (x scale) of X^T y + L"
        variant = "X^T y + Laplace"
        note = (
            f"claimed = (1 - xx_share) * epsilon = {eps_xy:g} of total {eps:g}; d = {dim}; "
            "neighbours: rows (B_x 1, B_y) vs (B_x 1, -B_y), X^T X unchanged"
        )
    else:
        stat_xx, stat, variant = _ssp_xx_statistic(xx_noise, stats, dim)
        s_d, s_dp = stat_xx(A_d), stat_xx(A_dp)
        claimed = eps_xx
        note = _ssp_xx_note(xx_noise, eps_xx, eps, dim, noise_scale)
    if noise_scale != 1.0:
        variant += f", noise_scale={noise_scale:g}"
    bound, desc = _threshold_audit(s_d, s_dp, level=level)
    return AuditResult(
        mechanism="ssp",
        variant=variant,
        claimed_epsilon=claimed,
        empirical_epsilon_lower_bound=bound,
        level=level,
        draws=draws,
        statistic=f"s = {stat}; {desc}",
        true_epsilon=true,
        note=note,
    )
