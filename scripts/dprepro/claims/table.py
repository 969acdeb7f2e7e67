r"""The claims table: every statement a paper makes that our numbers can test.

Each study writes ``results/<study>/tables/claims.csv`` with one row per claim
(and per beyond-the-paper finding); the ``claims`` target concatenates them
into ``results/claims.csv``. A row carries the statistic, its point estimate,
a confidence interval from the Monte Carlo replicates (or seeds / draws), the
criterion that makes the claim true, and a verdict:

``holds``
    the whole interval satisfies the criterion;
``fails``
    the whole interval violates it;
``inconclusive``
    the interval straddles the criterion's boundary (more replicates needed), or
    the row itself calls its interval unreliable (``reliable`` false, the reason in
    ``reliability_reason``);
``untestable``
    the configured data cannot decide the claim by design (fewer independent units
    than the criterion needs, a statement no experiment can refute); the reason is
    the start of ``note``.

Every row also says where it comes from (``claim_origin``: ``paper`` for a statement
the paper makes, ``beyond`` for the project's own; ``source`` then names the paper's
table, figure or section, or says "beyond the paper") and what its data are
(``data_origin``: real, synthetic or simulation). Where a criterion's tolerance is
the project's choice, the verdicts at half and at twice that tolerance stand beside
the verdict (``verdict_half_tolerance``, ``verdict_double_tolerance``), so a reader
sees which verdicts hinge on it. Every verdict of a row follows the same rules: an
unreliable interval (``reliable`` false) turns each firm one (``verdict`` and the two
tolerance verdicts alike) into ``inconclusive``, an untestable claim has no tolerance
verdicts, so no column of a row contradicts another.

Criteria are short strings so a reader sees them verbatim in the table:
``"< 1"``, ``"<= 0.05"``, ``"> 0"``, ``">= 0.8"``, ``"within [0.67, 1.5]"``,
optionally with a minimum of independent units behind the interval
(``"> 0; at least 5 independent units"``: fewer give ``inconclusive``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dprepro.runtime.privacy_record import non_private

__all__ = ["BEYOND", "CLAIMS_PRIVACY", "CLAIM_COLUMNS", "CLAIM_ORIGINS", "DATA_ORIGINS",
           "FAMILY", "VERDICTS", "Criterion", "Tolerance", "bootstrap_counts",
           "bootstrap_interval", "claim_row", "claims_frame", "family_note", "merge_claims",
           "newcombe_difference",
           "percentile_interval", "verdict"]

CLAIM_COLUMNS = ["study", "claim_id", "claim", "claim_origin", "source", "data_origin",
                 "statistic", "paper_value", "reproduced_value", "ci_lower", "ci_upper",
                 "ci_method", "level", "privacy_unit", "criterion", "verdict",
                 "verdict_half_tolerance", "verdict_double_tolerance", "reliable",
                 "reliability_reason", "note"]
VERDICTS = ("holds", "fails", "inconclusive", "untestable")
#: ``paper``: a statement the paper makes; ``beyond``: the project's own.
CLAIM_ORIGINS = ("paper", "beyond")
#: What a row's data are (several, comma-separated, for a row over several cohorts).
DATA_ORIGINS = ("real", "synthetic", "simulation")
#: The ``source`` of every row that is not the paper's.
BEYOND = "beyond the paper"

#: Privacy record of claims tables: statistics about private releases *and*
#: non-private references (not a release in its own right).
CLAIMS_PRIVACY = non_private("statistics of the studies' private releases and non-private "
                             "references; see each study's tables for the mechanisms",
                             mechanism="claims")

_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?inf"
_BOUND = re.compile(rf"^\s*(<=|>=|<|>)\s*({_NUMBER})\s*$")
_WITHIN = re.compile(rf"^\s*within\s*\[\s*({_NUMBER})\s*,\s*({_NUMBER})\s*\]\s*$")
_UNITS = re.compile(r"^(.*?);\s*at least (\d+) independent units\s*$")


@dataclass(frozen=True)
class Criterion:
    """A parsed criterion: the set of values for which a claim is true.

    A suffix ``"; at least N independent units"`` (``min_units``) makes a verdict
    need that many independent units behind the interval: with fewer it is
    ``inconclusive`` whatever the interval (a bootstrap over 4 units says little).
    """

    text: str
    lower: float
    upper: float
    lower_closed: bool
    upper_closed: bool
    min_units: int | None = None

    @classmethod
    def parse(cls, text: str) -> Criterion:
        if not isinstance(text, str):
            raise TypeError(f"criterion must be a string, got {type(text).__name__}")
        if m := _UNITS.match(text):
            if _UNITS.match(m.group(1)):
                raise ValueError(f"criterion {text!r} states more than one minimum of units")
            base = cls.parse(m.group(1))
            return cls(text, base.lower, base.upper, base.lower_closed, base.upper_closed,
                       int(m.group(2)))
        if m := _BOUND.match(text):
            op, value = m.group(1), float(m.group(2))
            if op in ("<", "<="):
                return cls(text, -math.inf, value, True, op == "<=")
            return cls(text, value, math.inf, op == ">=", True)
        if m := _WITHIN.match(text):
            low, high = float(m.group(1)), float(m.group(2))
            if not low < high:
                raise ValueError(f"criterion {text!r}: the interval needs lower < upper")
            return cls(text, low, high, True, True)
        raise ValueError(f"criterion {text!r} not understood; expected '< c', '<= c', '> c', "
                         "'>= c' or 'within [a, b]', optionally followed by "
                         "'; at least N independent units'")

    def contains(self, value: float) -> bool:
        above = value >= self.lower if self.lower_closed else value > self.lower
        below = value <= self.upper if self.upper_closed else value < self.upper
        return bool(above and below)


def verdict(ci_lower: float, ci_upper: float, criterion: str | Criterion,
            units: int | None = None) -> str:
    """``holds`` / ``fails`` / ``inconclusive`` / ``untestable`` for an interval.

    The criterion's set is an interval, so the claim holds on the whole CI when
    both end points satisfy it, and fails on the whole CI when the CI lies
    entirely on one side of it. A criterion with ``min_units`` also needs
    ``units`` (the independent units behind the interval) to reach it: with fewer,
    which the configuration fixes (the lineages, splits or cohorts it runs), the
    claim is ``untestable`` on these data, whatever the interval.
    """
    crit = criterion if isinstance(criterion, Criterion) else Criterion.parse(criterion)
    lo, hi = float(ci_lower), float(ci_upper)
    if math.isnan(lo) or math.isnan(hi):
        raise ValueError("confidence limits must not be NaN")
    if lo > hi:
        raise ValueError(f"ci_lower {lo} exceeds ci_upper {hi}")
    if crit.min_units is not None:
        if units is None:
            raise ValueError(f"criterion {crit.text!r} needs the number of independent units")
        if isinstance(units, bool) or not isinstance(units, (int, np.integer)) or units < 0:
            raise ValueError(f"units must be a count (an integer >= 0), got {units!r}")
        if units < crit.min_units:
            return "untestable"
    if crit.contains(lo) and crit.contains(hi):
        return "holds"
    below = hi < crit.lower or (hi == crit.lower and not crit.lower_closed)
    above = lo > crit.upper or (lo == crit.upper and not crit.upper_closed)
    return "fails" if below or above else "inconclusive"


def bootstrap_interval(statistic, samples: Iterable[np.ndarray], *, rng: np.random.Generator,
                       resamples: int = 2000, level: float = 0.95,
                       batched: bool = False) -> tuple[float, float, float]:
    r"""Paired percentile bootstrap over replicates.

    ``samples`` are arrays whose first axis indexes the same replicates (paired:
    one resample of replicate indices is applied to all of them), and
    ``statistic(*arrays)`` maps them to a number (e.g. a ratio of integrated
    MSEs). With ``batched=True`` the statistic of 1-D samples is called once
    on the ``(resamples, n)`` arrays of all resamples and returns one value
    per row (e.g. ``np.mean(a, axis=-1)``: the same sums row by row, so the
    same numbers, without a Python call per resample). Returns
    ``(estimate, lower, upper)`` with the percentile interval at ``level``.
    Efron & Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 13.
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError("rng must be a numpy.random.Generator")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    if resamples < 100:
        raise ValueError(f"resamples must be >= 100, got {resamples}")
    arrays = [np.asarray(s) for s in samples]
    n = {a.shape[0] for a in arrays}
    if len(n) != 1:
        raise ValueError(f"paired samples need the same number of replicates, got {sorted(n)}")
    n = n.pop()
    estimate = float(statistic(*arrays))
    index = rng.integers(0, n, size=(resamples, n))
    if batched:
        stats = np.asarray(statistic(*(a[index] for a in arrays)), dtype=float)
        if stats.shape != (resamples,):
            raise ValueError(f"a batched statistic must return {resamples} values, one per "
                             f"resample; got shape {stats.shape}")
    else:
        stats = np.array([statistic(*(a[i] for a in arrays)) for i in index], dtype=float)
    tail = (1 - level) / 2
    lower, upper = np.quantile(stats, [tail, 1 - tail])
    return estimate, float(lower), float(upper)


def bootstrap_counts(n: int, *, rng: np.random.Generator, resamples: int = 2000) -> np.ndarray:
    r"""How often each of ``n`` replicates appears in each bootstrap resample.

    Returns a ``(resamples, n)`` float array of counts, drawn with the same
    ``rng.integers(0, n, size=(resamples, n))`` call as
    :func:`bootstrap_interval`, so a statistic that is a function of weighted
    means (``counts @ values / n``) gives the same resamples, computed for all
    of them at once by matrix products instead of a Python loop (paired: one
    count matrix serves every estimator measured on the same replicates).
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError("rng must be a numpy.random.Generator")
    if resamples < 100:
        raise ValueError(f"resamples must be >= 100, got {resamples}")
    if n < 2:
        raise ValueError(f"need at least 2 replicates to resample, got {n}")
    index = rng.integers(0, n, size=(resamples, n))
    flat = (index + n * np.arange(resamples)[:, None]).ravel()
    return np.bincount(flat, minlength=resamples * n).reshape(resamples, n).astype(float)


def percentile_interval(estimate: float, resampled, *, level: float = 0.95
                        ) -> tuple[float, float, float]:
    """``(estimate, lower, upper)``: the percentile interval of bootstrap statistics."""
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    resampled = np.asarray(resampled, dtype=float)
    if resampled.ndim != 1 or resampled.size < 100 or not np.all(np.isfinite(resampled)):
        raise ValueError("need at least 100 finite bootstrap statistics")
    tail = (1 - level) / 2
    lower, upper = np.quantile(resampled, [tail, 1 - tail])
    return float(estimate), float(lower), float(upper)


class Tolerance:
    """A criterion whose tolerance is ours: ``at(t)`` gives its text at tolerance ``t``.

    Given to :func:`claim_row` as the criterion, it states the verdicts at half and twice
    ``tolerance`` beside the verdict (as ``criterion_at`` and ``tolerance`` do).
    """

    def __init__(self, at, tolerance: float):
        self.at, self.tolerance = at, float(tolerance)

    def __str__(self) -> str:
        return self.at(self.tolerance)


def newcombe_difference(x1: int, n1: int, x2: int, n2: int, *, level: float = 0.95
                        ) -> tuple[float, float, float]:
    r"""The difference of two proportions ``x1/n1 - x2/n2`` with Newcombe's interval.

    Newcombe's hybrid score interval (method 10 of Newcombe 1998, *Statistics in
    Medicine* 17:873-890) combines the Wilson intervals :math:`[l_i, u_i]` of the two
    proportions:
    :math:`\hat d - \sqrt{(\hat p_1 - l_1)^2 + (u_2 - \hat p_2)^2}` to
    :math:`\hat d + \sqrt{(u_1 - \hat p_1)^2 + (\hat p_2 - l_2)^2}`.
    For a claim compared with a reference that is itself estimated (a permuted-label
    share, a second mechanism's share), so the interval covers both estimates' error.
    """
    # scipy.special's normal quantile: scipy.stats.norm.ppf's numbers without importing
    # scipy.stats (about 0.7 CPU-s of a claims job)
    from scipy.special import ndtri

    for name, x, n in (("1", x1, n1), ("2", x2, n2)):
        if not (isinstance(n, (int, np.integer)) and n > 0 and 0 <= x <= n):
            raise ValueError(f"proportion {name}: need 0 <= x <= n and n > 0, got {x}/{n}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    z = float(ndtri(0.5 + level / 2))

    def wilson(x, n):
        p = x / n
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        return p, centre - half, centre + half

    p1, l1, u1 = wilson(x1, n1)
    p2, l2, u2 = wilson(x2, n2)
    d = p1 - p2
    return (d, d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2),
            d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2))


def claim_row(*, study: str, claim_id: str, claim: str, source: str, statistic: str,
              reproduced_value: float, ci_lower: float, ci_upper: float, ci_method: str,
              criterion: str | Tolerance, privacy_unit: str, level: float = 0.95,
              paper_value: float | str = "", note: str = "", units: int | None = None,
              claim_origin: str | None = None, data_origin: str = "",
              tolerance: float | None = None, criterion_at=None, reliable: bool = True,
              reliability_reason: str = "", untestable: str = "",
              tolerance_verdicts: Mapping[str, str] | None = None) -> dict:
    """One row of a claims table, its verdict computed from the interval.

    ``ci_method`` names how the interval was obtained (e.g. "Clopper-Pearson over
    draws", "percentile bootstrap over simulated samples", or why there is none), so
    a reader need not find it in the note. ``privacy_unit`` is whom the privacy
    statements behind the claim protect (the neighbouring relation's unit: a
    patient, an individual's indicator, a cell line), as in the study's tables.
    ``units`` counts the independent units behind the interval, for a criterion
    that states a minimum (``"> 0; at least 5 independent units"``).

    ``claim_origin`` is ``paper`` or ``beyond`` (default: ``beyond`` when ``source``
    starts with "beyond the paper"); a ``beyond`` row's source must say so.
    ``data_origin`` is what the row's data are (:data:`DATA_ORIGINS`, several
    comma-separated). A criterion whose tolerance is the project's choice is given
    as ``criterion_at`` (a function of the tolerance returning the criterion text)
    and ``tolerance``: the verdict uses ``criterion_at(tolerance)`` and the verdicts
    at half and twice it fill ``verdict_half_tolerance`` and
    ``verdict_double_tolerance``; a study that computes them otherwise (a share
    recounted at another tolerance) gives them as ``tolerance_verdicts``.

    ``reliable=False`` says that the row's own interval is unreliable, and
    ``reliability_reason`` why (required then; both are columns of the row): every firm
    verdict of the row, at our tolerance and at half and twice it, becomes
    ``inconclusive``, so no tolerance verdict is firmer than the verdict.
    ``untestable`` (a reason) makes the verdict ``untestable`` (no tolerance verdicts)
    and starts the note.
    """
    if not claim_id.startswith(f"{study.split('_')[0]}."):
        raise ValueError(f"claim_id {claim_id!r} must start with the study prefix "
                         f"{study.split('_')[0]!r} + '.'")
    if not isinstance(ci_method, str) or not ci_method.strip():
        raise ValueError(f"ci_method of claim {claim_id!r} must name how its interval was "
                         f"obtained, got {ci_method!r}")
    if not isinstance(privacy_unit, str) or not privacy_unit.strip():
        raise ValueError(f"privacy_unit of claim {claim_id!r} must name whom the privacy "
                         f"statements protect, got {privacy_unit!r}")
    if not isinstance(reliable, (bool, np.bool_)):
        raise TypeError(f"reliable of claim {claim_id!r} must be a bool, got {reliable!r}")
    if not reliable and not str(reliability_reason).strip():
        raise ValueError(f"claim {claim_id!r} calls its interval unreliable: give the reason "
                         "(reliability_reason)")
    if reliable and reliability_reason:
        raise ValueError(f"claim {claim_id!r} has a reliability_reason but reliable=True")
    if not 0 < float(level) < 1:
        raise ValueError(f"level of claim {claim_id!r} must be in (0, 1), got {level!r}")
    claim_origin, source = _origin(claim_id, claim_origin, source)
    bad = sorted(set(filter(None, str(data_origin).split(","))) - set(DATA_ORIGINS))
    if bad:
        raise ValueError(f"data_origin of claim {claim_id!r}: {bad} not among {DATA_ORIGINS}")
    if isinstance(criterion, Tolerance):
        criterion_at, tolerance = criterion.at, criterion.tolerance
    if criterion_at is not None:
        if tolerance is None or not tolerance > 0:
            raise ValueError(f"claim {claim_id!r}: criterion_at needs a tolerance > 0")
        criterion = criterion_at(tolerance)
    Criterion.parse(criterion)
    half = double = ""
    if untestable:
        # an untestable statement may have no number at all (NaN): nothing to decide
        result = "untestable"
        note = f"untestable: {untestable}" + (f"; {note}" if note else "")
    else:
        result = verdict(ci_lower, ci_upper, criterion, units)
        if criterion_at is not None:
            half = verdict(ci_lower, ci_upper, criterion_at(tolerance / 2), units)
            double = verdict(ci_lower, ci_upper, criterion_at(tolerance * 2), units)
        if tolerance_verdicts:
            unknown = sorted(set(tolerance_verdicts) - set(_TOLERANCE_COLUMNS))
            if unknown:
                raise ValueError(f"claim {claim_id!r}: tolerance_verdicts may set only "
                                 f"{_TOLERANCE_COLUMNS}, got {unknown}")
            half = tolerance_verdicts.get("verdict_half_tolerance", half)
            double = tolerance_verdicts.get("verdict_double_tolerance", double)
        if not reliable:
            # one rule for every verdict of the row: a stricter tolerance cannot fail
            # where the row's own verdict is undecided
            result, half, double = (_settle(v) for v in (result, half, double))
    return {"study": study, "claim_id": claim_id, "claim": claim,
            "claim_origin": claim_origin, "source": source, "data_origin": data_origin,
            "statistic": statistic, "paper_value": paper_value,
            "reproduced_value": float(reproduced_value), "ci_lower": float(ci_lower),
            "ci_upper": float(ci_upper), "ci_method": ci_method, "level": float(level),
            "privacy_unit": privacy_unit, "criterion": criterion, "verdict": result,
            "verdict_half_tolerance": half, "verdict_double_tolerance": double,
            "reliable": bool(reliable), "reliability_reason": str(reliability_reason),
            "note": note}


#: The columns of the verdicts at half and at twice our tolerance.
_TOLERANCE_COLUMNS = ("verdict_half_tolerance", "verdict_double_tolerance")


def _settle(result: str) -> str:
    """A verdict on an unreliable interval: a firm one (holds, fails) is not firm."""
    return "inconclusive" if result in ("holds", "fails") else result


def _origin(claim_id: str, claim_origin: str | None, source: str) -> tuple[str, str]:
    """``(claim_origin, source)`` of a row: ``beyond`` rows' sources say so."""
    if claim_origin is None:
        claim_origin = "beyond" if source.lower().startswith(BEYOND) else "paper"
    if claim_origin not in CLAIM_ORIGINS:
        raise ValueError(f"claim_origin of claim {claim_id!r} must be one of {CLAIM_ORIGINS}, "
                         f"got {claim_origin!r}")
    if claim_origin == "beyond" and not source.lower().startswith(BEYOND):
        source = f"{BEYOND} ({source})" if source else BEYOND
    return claim_origin, source


def claims_frame(rows: Iterable[Mapping]) -> pd.DataFrame:
    """A claims table in the column order of :data:`CLAIM_COLUMNS`; ids must be unique."""
    frame = pd.DataFrame(list(rows), columns=CLAIM_COLUMNS)
    dup = frame["claim_id"][frame["claim_id"].duplicated()].tolist()
    if dup:
        raise ValueError(f"duplicate claim ids {dup}")
    bad = sorted(set(frame["verdict"]) - set(VERDICTS))
    if bad:
        raise ValueError(f"unknown verdicts {bad}; expected one of {VERDICTS}")
    origins = {part for value in frame["data_origin"].dropna()
               for part in str(value).split(",") if part}
    if origins - set(DATA_ORIGINS):
        raise ValueError(f"unknown data origins {sorted(origins - set(DATA_ORIGINS))}; "
                         f"expected {DATA_ORIGINS}")
    return frame


#: How a note counts the claims its per-claim interval is not corrected for; ``merge_claims``
#: recounts it in the merged table (a study's own table lacks the privacy rows).
FAMILY = "no family-wise (multiple-testing) correction across the {count} claims of {where}"
_FAMILY = re.compile(r"no family-wise \(multiple-testing\) correction across the \d+ claims "
                     r"of [^;]*")


def family_note(count: int, where: str = "this table") -> str:
    """The note's count of the claims without a family-wise correction (:data:`FAMILY`)."""
    return FAMILY.format(count=int(count), where=where)


def merge_claims(tables: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """Concatenate per-study claims tables (study order as given; none gives an empty table).

    A note counting a study's claims (:func:`family_note`, counted in the study's own table)
    is recounted: the merged table holds the study's rows of every job (its privacy
    statements, from the audit, included), so the count is that of the merged rows.
    """
    frames = [claims_frame(t.to_dict("records")) for t in tables]
    if not frames:
        return claims_frame([])
    merged = pd.concat(frames, ignore_index=True)
    counts = merged["study"].map(merged["study"].value_counts())
    notes = [_FAMILY.sub(family_note(n, f"{study} in results/claims.csv"), note)
             if isinstance(note, str) else note
             for note, study, n in zip(merged["note"], merged["study"], counts, strict=True)]
    return claims_frame(merged.assign(note=notes).to_dict("records"))
