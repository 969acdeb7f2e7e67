r"""Audit of DP feature selection with public (hashed) parts, the corrected pipeline's.

Subsample-and-aggregate (Kifer, Smith & Thakurta 2012) as the ``repr_transfer`` study's
corrected pipeline runs it: :func:`dprepro.learners.feature_selection.hashed_votes` (a
Lasso per part, parts a keyed hash of each line's id) and
:func:`~dprepro.learners.feature_selection.noisy_top_features` with the Laplace scale of
:func:`dprepro.learners.accounting.selection_changed_parts` changed parts. The row's true
ε is :func:`dprepro.learners.accounting.selection_epsilon`, the rule the study's records
are decided by. The bound is :func:`~dprepro.audit.bound.epsilon_lower_bound` (see
:mod:`dprepro.audit.suite`).
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
    epsilon_lower_bound,
)
from dprepro.learners.accounting import selection_changed_parts, selection_epsilon
from dprepro.learners.feature_selection import hashed_parts, hashed_votes, noisy_top_features

__all__ = ["audit_feature_selection", "selection_audit_data"]

#: Key of the audit's part hash: any key gives the same law; the lines are chosen by it.
AUDIT_PART_KEY = b"dprepro privacy audit"


def _ids_by_part(n_parts: int, need: dict[int, int], key: bytes) -> dict[int, list[str]]:
    """``need[j]`` line ids hashing to part ``j`` (``line0``, ``line1``, ... in order)."""
    found = {j: [] for j in need}
    start = 0
    while any(len(found[j]) < need[j] for j in need):
        ids = [f"line{i}" for i in range(start, start + 256)]
        for line, part in zip(ids, hashed_parts(ids, n_parts, key), strict=True):
            if part in found and len(found[part]) < need[part]:
                found[part].append(line)
        start += 256
    return found


def selection_audit_data(n_parts: int, *, key: bytes = AUDIT_PART_KEY) -> dict:
    r"""Neighbouring training sets for :func:`audit_feature_selection` (two features).

    Every part but two holds the rows :math:`(x, y) = ((0, 1), 1), ((0, -1), -1)`, on
    which the Lasso's largest coefficient is feature 1. Part :math:`P` (of the line
    ``u``) adds ``u`` = :math:`((3, 0), 9)` in :math:`D` and so votes for feature 0;
    part :math:`Q` holds :math:`((1, 0), 1), ((-1, 0), -1)` (feature 0) and, in
    :math:`D'`, also the line ``u'`` = :math:`((0, 3), 9)`, which turns its vote to
    feature 1. :math:`D'` is :math:`D` with ``u`` replaced by ``u'`` (another id, the
    same number of lines): votes (2, k − 2) against (0, k), the vote fractions moving by
    :math:`4/k` in L1, the largest change one replacement can make (``4m/k``, m = 1).
    """
    need = {j: 2 for j in range(n_parts)}
    need[0], need[1] = 3, 3  # part P: u and two rows; part Q: two rows and u'
    ids = _ids_by_part(n_parts, need, key)
    rows, lines = [], []
    for j in range(2, n_parts):
        rows += [((0.0, 1.0), 1.0), ((0.0, -1.0), -1.0)]
        lines += ids[j][:2]
    rows += [((0.0, 1.0), 1.0), ((0.0, -1.0), -1.0), ((1.0, 0.0), 1.0), ((-1.0, 0.0), -1.0)]
    lines += [ids[0][1], ids[0][2], ids[1][0], ids[1][1]]
    X = np.array([r[0] for r in rows])
    y = np.array([r[1] for r in rows])
    return {"X_d": np.vstack([X, [3.0, 0.0]]), "y_d": np.r_[y, 9.0],
            "lines_d": [*lines, ids[0][0]],
            "X_dp": np.vstack([X, [0.0, 3.0]]), "y_dp": np.r_[y, 9.0],
            "lines_dp": [*lines, ids[1][2]], "key": key}


def audit_feature_selection(*, epsilon, draws, rng, changed_parts: int | None = None,
                            n_parts: int | None = None,
                            level: float = DEFAULT_LEVEL) -> AuditResult:
    r"""Audit DP feature selection with hashed parts (claimed ``epsilon``-DP, replacement).

    Neighbours: :func:`selection_audit_data` (one line replaced by one with another id,
    two parts change their vote). One feature is selected out of two, so the release is
    the index of the larger of :math:`v_j/k + L_j`, :math:`L_j \sim
    \mathrm{Laplace}(b)`, :math:`b = 2cm/(k\varepsilon)`; the event "feature 0 is
    selected", fixed in advance, has probability :math:`G(\Delta_D/b)` with
    :math:`\Delta = v_0/k - v_1/k` and :math:`G(x) = e^{x}(2 - x)/4` for
    :math:`x \le 0` (the difference of two Laplace variables), so its log ratio
    :math:`\varepsilon^* + \log\frac{2 - x}{2 - x + \varepsilon^*}`, :math:`x =
    \Delta_D / b`, approaches the true :math:`\varepsilon^*` in the tail. ``n_parts``
    (default :math:`4 + \lceil 5/\varepsilon\rceil`) puts :math:`x` at about −2.5 for a
    noise of half the scale (the control), where the bound is about 0.8 of its truth.

    Parameters
    ----------
    epsilon : float
        Claimed ε of the selection (its share of the fit's ε).
    draws : int
        Selections per neighbouring input.
    rng : numpy.random.Generator
    changed_parts : int, optional
        The ``c`` of the Laplace scale (default the study's,
        :func:`~dprepro.learners.accounting.selection_changed_parts`: 2); 1, the
        authors' scale, is a copy with half the noise needed under replacement.
    n_parts : int, optional
    level : float, default 1e-9
    """
    eps = _check_positive(epsilon, "epsilon")
    rng = _check_rng(rng)
    draws = _check_draws(draws)
    level = _check_level(level)
    c = selection_changed_parts(True) if changed_parts is None else changed_parts
    k = 4 + math.ceil(5.0 / eps) if n_parts is None else n_parts
    if isinstance(k, bool) or not isinstance(k, int) or k < 3:
        raise ValueError(f"n_parts must be an integer >= 3, got {n_parts!r}")
    data = selection_audit_data(k)
    votes_d, _ = hashed_votes(data["X_d"], data["y_d"], data["lines_d"], 1, n_parts=k,
                              key=data["key"])
    votes_dp, _ = hashed_votes(data["X_dp"], data["y_dp"], data["lines_dp"], 1, n_parts=k,
                               key=data["key"])
    if list(votes_d) != [2, k - 2] or list(votes_dp) != [0, k]:  # pragma: no cover
        raise RuntimeError(f"unexpected votes {votes_d} and {votes_dp} of the audit's data")
    picks_d = noisy_top_features(votes_d, k, 1, epsilon=eps, rng=rng, changed_parts=c,
                                 draws=draws)[:, 0]
    picks_dp = noisy_top_features(votes_dp, k, 1, epsilon=eps, rng=rng, changed_parts=c,
                                  draws=draws)[:, 0]
    counts = int(np.count_nonzero(picks_d == 0)), int(np.count_nonzero(picks_dp == 0))
    bound = epsilon_lower_bound([counts[0]], [counts[1]], draws, level=level,
                                both_directions=False)
    variant = f"hashed parts, k={k}, m=1"
    if changed_parts is not None:
        variant += f", changed_parts={c}"
    return AuditResult(
        mechanism="subsample_and_aggregate",
        variant=variant,
        claimed_epsilon=eps,
        empirical_epsilon_lower_bound=bound,
        level=level,
        draws=draws,
        statistic="event: feature 0 selected (fixed in advance)",
        true_epsilon=selection_epsilon(eps, public_parts=True, changed_parts=c),
        note=(f"Lasso per hashed part (alpha = 1/k^2), 1 of 2 features selected with "
              f"Laplace(2*{c}*m/(k*eps)) on the vote fractions; neighbours (replacement, "
              f"another id): votes {votes_d.astype(int).tolist()} vs "
              f"{votes_dp.astype(int).tolist()}, L1 change 4m/k of the fractions"),
    )
