r"""The true ε of the DP learners' releases: one rule per mechanism, shared by study and audit.

The ``repr_transfer`` study's privacy records
(:func:`dprepro.studies.repr_transfer.privacy.cancer_privacy`,
:func:`~dprepro.studies.repr_transfer.privacy.drug_privacy`) decide from these rules
whether a fit's ε is finite, and the privacy audit (:mod:`dprepro.audit`) prints them as
the true ε of its rows; a test checks the two agree for every mechanism. The module
imports no estimator (scikit-learn costs a job a second), so the table jobs can use it.

"True ε" is the level the computation as run is proven to guarantee under replacement
(bounded) neighbours, ``inf`` where no finite level is proven.

* Objective perturbation (:class:`dprepro.learners.logistic_regression.DPLogisticRegression`):
  the ``cms11`` variant is ε-DP (Chaudhuri, Monteleoni & Sarwate 2011, Algorithm 2 with
  its ε′ correction); the ``paper`` variant leaves the bias unpenalised and skips the ε′
  correction, so no finite ε is proven.
* Sufficient statistics perturbation
  (:class:`dprepro.learners.linear_regression.SSPLinearRegression`): :math:`X^\top X`
  gets :math:`\varepsilon_1 = p\varepsilon`, :math:`X^\top y` gets
  :math:`\varepsilon_2 = (1-p)\varepsilon` (:func:`ssp_shares`, also what the noise draws
  are calibrated with). Laplace noise on both is
  :math:`\varepsilon_1 + \varepsilon_2 = \varepsilon`-DP (Laplace mechanism and basic
  composition; Dwork & Roth 2014, Thms 3.6 and 3.16); Wishart noise on :math:`X^\top X`
  has a data-dependent support, so no finite ε; centres or clipping scales taken from the
  private data void any finite ε of the whole fit.
* DP feature selection by subsample-and-aggregate with public parts
  (:func:`dprepro.learners.feature_selection.hashed_votes`): one replacement changes
  :func:`selection_changed_parts` parts; Laplace noise calibrated to ``c`` changed parts
  is ``ε · needed / c``-DP; the authors' data-dependent parts give no finite ε.

References
----------
K. Chaudhuri, C. Monteleoni, A. D. Sarwate (2011). Differentially private empirical
risk minimization. JMLR 12, 1069–1109.
C. Dwork, A. Roth (2014). The algorithmic foundations of differential privacy.
D. Kifer, A. Smith, A. Thakurta (2012). Private convex empirical risk minimization and
high-dimensional regression. COLT, PMLR 23.
"""

from __future__ import annotations

import math

from dprepro.learners.checks import check_epsilon, check_share, check_xx_noise

__all__ = ["SSP_STATISTICS", "objective_perturbation_epsilon", "selection_changed_parts",
           "selection_epsilon", "ssp_epsilon", "ssp_shares"]

#: What :func:`ssp_epsilon` can account: one noisy statistic, or the learner (both).
SSP_STATISTICS = ("xx", "xy", "both")


def _finite_epsilon(epsilon) -> float:
    epsilon = check_epsilon(epsilon)
    if not math.isfinite(epsilon):
        raise ValueError("epsilon must be finite: a non-private fit has no true epsilon")
    return epsilon


def objective_perturbation_epsilon(epsilon, *, variant: str) -> float:
    """True ε of objective perturbation run at ``epsilon``: ε (``cms11``) or ``inf`` (``paper``)."""
    epsilon = _finite_epsilon(epsilon)
    if variant not in ("paper", "cms11"):
        raise ValueError(f"variant must be 'paper' or 'cms11', got {variant!r}")
    return epsilon if variant == "cms11" else math.inf


def ssp_shares(epsilon, xx_share) -> tuple[float, float]:
    r"""(:math:`\varepsilon_1`, :math:`\varepsilon_2`) = (``xx_share`` ε, (1 − ``xx_share``) ε)."""
    xx_share = check_share(xx_share)
    return xx_share * epsilon, (1.0 - xx_share) * epsilon


def ssp_epsilon(epsilon, *, xx_noise: str, public_centring: bool, xx_share: float = 0.5,
                statistic: str = "both") -> float:
    r"""True ε of SSP run at ``epsilon``: of one noisy statistic or of the learner.

    Parameters
    ----------
    epsilon : float
        The learner's ε (finite).
    xx_noise : {"wishart", "laplace"}
        Noise on :math:`X^\top X`.
    public_centring : bool
        Whether the centres (and clipping scales) are public; with private ones no
        statistic has a finite ε (the clipped data themselves depend on every line).
    xx_share : float, default 0.5
    statistic : {"xx", "xy", "both"}
        ``"xx"``: :math:`X^\top X` + noise (:math:`\varepsilon_1`, ``inf`` with Wishart
        noise); ``"xy"``: :math:`X^\top y` + Laplace (:math:`\varepsilon_2`); ``"both"``:
        the learner's release, ε when both are finite (basic composition), else ``inf``.
    """
    epsilon = _finite_epsilon(epsilon)
    check_xx_noise(xx_noise)
    if statistic not in SSP_STATISTICS:
        raise ValueError(f"statistic must be one of {SSP_STATISTICS}, got {statistic!r}")
    eps_xx, eps_xy = ssp_shares(epsilon, xx_share)
    if not public_centring:
        return math.inf
    if xx_noise == "wishart":
        eps_xx = math.inf
    return {"xx": eps_xx, "xy": eps_xy,
            "both": epsilon if math.isfinite(eps_xx) else math.inf}[statistic]


def selection_changed_parts(public_parts: bool) -> int:
    """Parts one replacement neighbour changes: 2 with public (hashed) parts, else 1.

    With hashed parts a line replaced by one with another id leaves its part and
    enters another (:func:`dprepro.learners.feature_selection.hashed_votes`); the
    authors' scheme keeps their stated 2m/k (its ε is void anyway).
    """
    return 2 if public_parts else 1


def selection_epsilon(epsilon, *, public_parts: bool, changed_parts: int | None = None) -> float:
    r"""True ε of DP feature selection whose noise is calibrated to ``epsilon``.

    ``changed_parts`` is the ``c`` the Laplace scale :math:`2cm/(k\varepsilon)` was
    computed with (default :func:`selection_changed_parts`, what the study uses). The
    vote fractions' L1 sensitivity under replacement is :math:`2c^*m/k` with
    :math:`c^*` = ``selection_changed_parts(True)``, so the release is
    :math:`\varepsilon c^*/c`-DP; ``inf`` without public parts.
    """
    epsilon = _finite_epsilon(epsilon)
    if not public_parts:
        return math.inf
    needed = selection_changed_parts(True)
    used = needed if changed_parts is None else changed_parts
    if isinstance(used, bool) or not isinstance(used, int) or used < 1:
        raise ValueError(f"changed_parts must be a positive integer, got {changed_parts!r}")
    return epsilon * needed / used
