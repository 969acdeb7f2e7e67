r"""One privacy policy: the record every release carries, and how ε is split.

Every study builds its privacy statement from the objects that ran the
mechanism (a registered mechanism and its parameter, an RRR keep probability,
a DP learner and its budget split), never from hand-written dicts in step
scripts. A :class:`PrivacyRecord` then feeds both places a reader looks:

* the table columns (:meth:`PrivacyRecord.columns`), and
* the provenance sidecar (:meth:`PrivacyRecord.provenance`, written by
  :func:`dprepro.runtime.step.write_sidecars`).

Terms
-----
stated
    The privacy parameter the paper (or the configuration) names: ε for
    central DP and for RRR, α for the local Laplace mechanism on indicators.
true ε
    The level the computation as run is proven to guarantee, in the same
    unit (per ``privacy_unit``). ``inf`` when no finite level holds (e.g. a
    mechanism with data-dependent sensitivity); ``nan`` for non-private
    references. Where it differs from the stated value both are reported.
privacy unit
    Whose data a neighbouring dataset changes: one ``individual`` (the
    simulated subjects), one ``patient``, one ``cell line``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

__all__ = ["AUDIT_PRIVACY", "BudgetSplit", "PrivacyRecord", "budget_split", "non_private",
           "provenance_of"]


@dataclass(frozen=True)
class PrivacyRecord:
    """The privacy statement of one release (or of a non-private reference).

    Parameters
    ----------
    mechanism : str
        Name of the mechanism that ran (``"original"`` / ``"non_private"`` for
        references).
    release : bool
        Whether the output is a privacy release (False for references and for
        sensitive intermediates).
    parameter : str
        ``"epsilon"`` or ``"alpha"``: the name of the stated parameter.
    stated : float
        The stated ε or α; ``nan`` for references.
    true_epsilon : float
        The guarantee really delivered, per ``privacy_unit``; ``inf`` when none
        is proven, ``nan`` for references.
    privacy_unit : str
        Whose data one neighbouring change touches.
    note : str
        One sentence a reader needs to trust (or distrust) the number.
    extra : mapping
        Study-specific columns (RRR calibration, learner variant, the budget
        split), kept in insertion order.
    """

    mechanism: str
    release: bool
    parameter: str = "epsilon"
    stated: float = math.nan
    true_epsilon: float = math.nan
    privacy_unit: str = ""
    note: str = ""
    extra: Mapping = field(default_factory=dict)

    def __post_init__(self):
        if self.parameter not in ("epsilon", "alpha"):
            raise ValueError(f"parameter must be 'epsilon' or 'alpha', got {self.parameter!r}")
        if not isinstance(self.mechanism, str) or not self.mechanism:
            raise ValueError("mechanism must be a non-empty string")
        if not (math.isnan(self.stated) or self.stated > 0):
            raise ValueError(f"stated {self.parameter} must be > 0 or nan, got {self.stated}")

    def columns(self, order: Iterable[str] | None = None) -> dict:
        """The table columns of this record.

        Default order: ``mechanism``, the stated parameter under its own name
        (``epsilon`` or ``alpha``), the ``extra`` columns, ``true_epsilon``,
        ``privacy_note``. ``order`` selects and orders a subset, for tables
        whose column contract predates a field (``privacy_unit`` is only
        emitted when asked for).
        """
        full = {"mechanism": self.mechanism, self.parameter: self.stated, **dict(self.extra),
                "true_epsilon": self.true_epsilon, "privacy_unit": self.privacy_unit,
                "privacy_note": self.note}
        if order is None:
            order = [k for k in full if k != "privacy_unit"]
        missing = [k for k in order if k not in full]
        if missing:
            raise KeyError(f"privacy record has no column(s) {missing}; it has {list(full)}")
        return {k: full[k] for k in order}

    def statement(self) -> str:
        """The record as one sentence for a reader of the release.

        A release states its mechanism, the stated parameter, the true ε (``inf``: none is
        proven; ``unknown`` for ``nan``) and whose data it protects, then its note; a
        reference says it is no release.

        Examples
        --------
        >>> PrivacyRecord(mechanism="rrr", release=True, stated=2.0, true_epsilon=3.0986,
        ...               privacy_unit="patient", note="keep probability p = 0.8411").statement()
        'rrr: stated ε = 2, true ε = 3.099 per patient (keep probability p = 0.8411)'
        >>> non_private("the original labels").statement()
        'non_private: no privacy release (the original labels)'
        """
        note = f" ({self.note})" if self.note else ""
        if not self.release:
            return f"{self.mechanism}: no privacy release{note}"
        symbol = "ε" if self.parameter == "epsilon" else "α"
        true = "unknown" if math.isnan(self.true_epsilon) else f"{self.true_epsilon:.4g}"
        unit = f" per {self.privacy_unit}" if self.privacy_unit else ""
        return f"{self.mechanism}: stated {symbol} = {self.stated:g}, true ε = {true}{unit}{note}"

    def provenance(self) -> dict:
        """The ``privacy`` entry of a provenance sidecar (JSON-safe: inf/nan as text)."""
        out = {"release": bool(self.release), "mechanism": self.mechanism,
               "parameter": self.parameter}
        for key, value in ((self.parameter, self.stated), ("true_epsilon", self.true_epsilon)):
            out[key] = _json_number(value)
        if self.privacy_unit:
            out["privacy_unit"] = self.privacy_unit
        if self.note:
            out["note"] = self.note
        for key, value in self.extra.items():
            out[key] = _json_number(value) if isinstance(value, float) else value
        return out


def _json_number(value):
    value = float(value)
    if math.isnan(value):
        return None
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def non_private(note: str = "non-private reference", *, mechanism: str = "non_private",
                release: bool = False, privacy_unit: str = "", parameter: str = "epsilon",
                extra: Mapping | None = None) -> PrivacyRecord:
    """The record of a non-private reference or a sensitive intermediate."""
    return PrivacyRecord(mechanism=mechanism, release=release, parameter=parameter,
                         privacy_unit=privacy_unit, note=note, extra=dict(extra or {}))


#: Privacy record of the audit's outputs: not a release, no person's data. Defined here,
#: not in dprepro.audit.suite, so that the audit's figure job does not import the audited
#: learners (scikit-learn, scipy.stats: a second of start-up).
AUDIT_PRIVACY = non_private("audit on synthetic worst-case neighbouring inputs",
                            mechanism="privacy_audit")


def provenance_of(records) -> dict:
    """The sidecar ``privacy`` entry of one record, a list of records, or a plain mapping.

    A table mixing several releases (e.g. every ε of a study) gets
    ``{"release": any, "records": [...]}`` with the distinct records in order.
    """
    if records is None:
        return None
    if isinstance(records, PrivacyRecord):
        return records.provenance()
    if isinstance(records, Mapping):
        return dict(records)
    records = list(records)
    if not all(isinstance(r, PrivacyRecord) for r in records):
        raise TypeError("privacy must be a PrivacyRecord, a list of them, or a mapping")
    distinct = []
    for record in records:
        entry = record.provenance()
        if entry not in distinct:
            distinct.append(entry)
    return {"release": any(r.release for r in records), "records": distinct}


@dataclass(frozen=True)
class BudgetSplit:
    """How a total ε is divided between DP feature selection and the learner."""

    total: float
    selection: float
    learner: float

    @property
    def note(self) -> str:
        """Prefix of the privacy note (empty without feature selection)."""
        if math.isnan(self.selection):
            return ""
        return (f"selection {self.selection:g} (subsample-and-aggregate, Laplace) + "
                f"learner {self.learner:g}; ")


def budget_split(epsilon: float, *, feature_selection: bool) -> BudgetSplit:
    r"""Split ε by basic sequential composition.

    With DP feature selection the selection and the learner each get
    :math:`\varepsilon/2` (they compose to ε); without it the learner gets all
    of ε and the selection share is ``nan``. The one place this split is
    written: the experiments, the clipping-weight search and the privacy
    columns all call it.

    Parameters
    ----------
    epsilon : float
        Total budget, > 0 (``inf`` for a non-private run).
    feature_selection : bool
        Whether a DP feature-selection step precedes the learner.
    """
    if isinstance(epsilon, bool) or not isinstance(epsilon, int | float | np.integer | np.floating):
        raise TypeError(f"epsilon must be a real number, got {type(epsilon).__name__}")
    epsilon = float(epsilon)
    if math.isnan(epsilon) or epsilon <= 0:
        raise ValueError(f"epsilon must be > 0 (or inf), got {epsilon}")
    if not feature_selection:
        return BudgetSplit(total=epsilon, selection=math.nan, learner=epsilon)
    half = epsilon / 2
    return BudgetSplit(total=epsilon, selection=half, learner=half)
