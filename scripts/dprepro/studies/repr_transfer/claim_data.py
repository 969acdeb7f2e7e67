r"""What the ``repr_transfer`` claims read: per pipeline and task, the paired differences.

:class:`ReprClaimData` is the context :func:`dprepro.studies.repr_transfer.claims.repr_claims`
evaluates the declared claims on: the result tables, the bootstrap streams, the searched
learning rates every VAE claim states, and the rows evaluated so far (for the claims
that read other claims' verdicts). :meth:`ReprClaimData.task` gives one pipeline's task
(:class:`TaskData`): its units × seeds (and drugs × splits × seeds) differences of two
methods (:mod:`dprepro.studies.repr_transfer.claim_bootstrap`) and the evidence of
"a − b" with the note every claim of the study states (what was resampled, the units,
why ``paper_value`` is empty).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from dprepro.claims.registry import Evidence
from dprepro.claims.table import Tolerance
from dprepro.studies.repr_transfer.claim_bootstrap import (
    UNIT,
    difference_cube,
    difference_matrix,
    dims,
    paired_interval,
    split_cube,
    unit_seed_table,
)
from dprepro.studies.repr_transfer.common import stream_rng

__all__ = ["DRUG_NOTE", "EMPTY_PAPER_VALUE", "EQUIVALENCE_MARGIN", "MIN_UNITS", "TASKS",
           "ReprClaimData", "TaskData", "margin", "with_units"]

#: |VAE - PCA| below this counts as "about equal" (accuracy / Spearman units); ours.
EQUIVALENCE_MARGIN = 0.05
#: Fewer independent units than this: the verdict is ``untestable``.
MIN_UNITS = 5

#: The two tasks, in the order their claims are evaluated.
TASKS = ("cancer", "drug")

#: Why every row's ``paper_value`` is empty (the end of each note).
EMPTY_PAPER_VALUE = ("paper_value empty: the paper states this in words and gives its numbers "
                     "in figures only")
#: The note of a drug row without per-split rows (its verdict is capped at inconclusive).
DRUG_NOTE = ("descriptive, capped at inconclusive: drugs share lines, splits and features, "
             "and without the per-split rows the interval could only resample drugs as "
             "independent, which is too narrow")
#: Why a drugs-only interval is not reliable.
DRUGS_ONLY = ("drugs-only interval: the drugs share lines, splits and features, and without "
              "the per-split rows the bootstrap resamples them as independent (too narrow)")
SPLIT_NOTE = ("drugs share lines, splits and features: splits are resampled as units shared "
              "by all drugs, the lines are one fixed private set")


def with_units(criterion: str) -> str:
    """The criterion with the minimum of independent units a verdict needs."""
    return f"{criterion}; at least {MIN_UNITS} independent units"


def _units_note(note: str, units: int) -> str:
    if units < MIN_UNITS:
        return (f"untestable: {units} independent units, fewer than the minimum "
                f"{MIN_UNITS} (the configuration fixes them: more lineages, drugs or splits "
                "would decide it); " + note)
    return note


def margin(at) -> Tolerance:
    """A criterion at :data:`EQUIVALENCE_MARGIN` (ours), with the minimum of units."""
    return Tolerance(lambda t: with_units(at(t)), EQUIVALENCE_MARGIN)


class TaskData:
    """One pipeline's task as its claims read it: the paired differences and the streams.

    ``rng`` is the stream the paper-comparison claims of this pipeline and task share,
    drawn in declaration order (``outer=("pipeline", "task")``); the equal-r controls and
    the joint model's rows draw from streams of their own (:meth:`stream`), so adding
    one leaves every other row's draws unchanged.
    """

    def __init__(self, data: ReprClaimData, pipeline: str, task: str):
        table, self.epsilon = data.tables[task]
        self.data, self.pipeline, self.task = data, pipeline, task
        self.unit, _, what = UNIT[task]
        self.fields = {"eps": f"{self.epsilon:g}",
                       "what": f"{what}, mean over {self.unit}s x seeds"}
        self.wide = unit_seed_table(table, task, pipeline=pipeline)
        self.cubes = split_cube(data.drug_splits, pipeline) if task == "drug" else None
        self.rng = self.stream("")
        self.dims = dims(table, pipeline)
        self.grid = sorted(e for e in self.wide.index.get_level_values("epsilon").unique()
                           if math.isfinite(e))
        #: vae_beats_pca's evidence without the notes only its row gets (its controls read it)
        self.beats: Evidence | None = None
        self._trends: dict = {}
        self._control = None

    def stream(self, name: str):
        """The stream ``claims/<pipeline>/<task>[/<name>]`` (no name: the shared one)."""
        return stream_rng(self.data.base_seed, f"claims/{self.pipeline}/{self.task}"
                          + (f"/{name}" if name else ""))

    def pair(self, a: str, b: str, eps_a: float | None = None,
             eps_b: float | None = None) -> dict:
        """The matrix and (drug task) cube of ``a`` at ``eps_a`` − ``b`` at ``eps_b``."""
        eps_a = self.epsilon if eps_a is None else eps_a
        eps_b = self.epsilon if eps_b is None else eps_b
        return {"D": difference_matrix(self.wide, a, b, eps_a, eps_b),
                "cube": difference_cube(self.cubes, a, b, eps_a, eps_b)}

    def evidence(self, a: str, b: str, *, note: str, rng=None, eps_a: float | None = None,
                 eps_b: float | None = None, fields: dict | None = None,
                 vae_note: bool = True, **rules) -> Evidence | None:
        """The evidence of "a − b" (``rules``: :class:`Evidence`'s criterion, reliable,
        untestable); ``None`` where the methods (or ε) were not run.

        A comparison with a VAE states the searched learning rates (``vae_note``).
        """
        pair = self.pair(a, b, eps_a, eps_b)
        interval = paired_interval(pair["D"], pair["cube"], unit=self.unit,
                                   rng=self.rng if rng is None else rng)
        if interval is None:
            return None
        descriptive = not interval.crossed and self.unit == "drug"
        extra = [SPLIT_NOTE] if interval.crossed else [DRUG_NOTE] if descriptive else []
        if descriptive:
            # a drugs-only interval is too narrow: no firm verdict, whatever it says
            reasons = [rules.get("reliability_reason", ""), DRUGS_ONLY]
            rules = {**rules, "reliable": False,
                     "reliability_reason": "; ".join(filter(None, reasons))}
        detail = "; ".join([note, interval.resampled, *extra, EMPTY_PAPER_VALUE])
        detail = _units_note(detail, interval.units)
        if vae_note and ("vae" in a or "vae" in b):
            detail += self.data.vae_note
        return Evidence(interval.estimate, interval.lower, interval.upper, note=detail,
                        units=interval.units, ci_method=interval.method,
                        fields={**self.fields, **(fields or {})}, **rules)

    def control(self) -> tuple[bool, bool, bool] | None:
        """``(known, equal_r, same)`` of vae_beats_pca's control, PCA at the VAE's r.

        ``None`` without vae_beats_pca or the control. ``known``: the r effect (PCA at
        the VAE's r − PCA) has rows; ``equal_r``: the two searches picked the same r
        (from the ``dim`` columns, else from identical rows); ``same``: the control's
        rows are then PCA's own (one fit, one release:
        :func:`dprepro.studies.repr_transfer.fitting.noise_stream`).
        """
        if self.beats is None or self.pair("vae", "pca_vae_dim")["D"] is None:
            return None
        if self._control is None:
            r_effect = self.pair("pca_vae_dim", "pca")
            known = r_effect["D"] is not None
            equal_r = (self.dims["pca_vae_dim"] == self.dims["pca"]
                       if {"pca_vae_dim", "pca"} <= set(self.dims) else None)
            identical = known and not r_effect["D"].to_numpy(float).any() and (
                r_effect["cube"] is None or not r_effect["cube"].any())
            # without the dimensions (older tables), identical rows stand for equal r
            same = identical and equal_r is not False
            self._control = (known, identical if equal_r is None else equal_r, same)
        return self._control

    def trend(self, rep: str) -> tuple[Evidence | None, Evidence | None]:
        """``rep``'s rises-with-ε and approaches-non-private evidence, drawn together.

        The two claims share the stream in the order rises, approaches per
        representation (pca, then vae); two declarations cannot interleave their
        bindings, so the first of them to run for ``rep`` draws both.
        """
        if rep not in self._trends:
            if len(self.grid) < 2:
                self._trends[rep] = (None, None)
            else:
                low, high = self.grid[0], self.grid[-1]
                at = {"fields": {"high": high, "low": low}}
                rises = self.evidence(rep, rep, eps_a=high, eps_b=low,
                                      note=f"pipeline {self.pipeline}", **at)
                approaches = self.evidence(
                    rep, rep, eps_a=math.inf, eps_b=high, criterion=margin(lambda t: f"< {t:g}"),
                    note=f"pipeline {self.pipeline}; margin {EQUIVALENCE_MARGIN:g} is ours", **at)
                self._trends[rep] = (rises, approaches)
        return self._trends[rep]


class ReprClaimData:
    """What the claims of one run read, per pipeline and task (:meth:`task`).

    The arguments are :func:`dprepro.studies.repr_transfer.claims.repr_claims`'s; ``rows``
    holds the rows evaluated so far (by id), for the claims reading other claims' verdicts.
    """

    def __init__(self, cancer: pd.DataFrame, drug: pd.DataFrame, *, cancer_epsilon: float,
                 drug_epsilon: float, base_seed: int, drug_splits: pd.DataFrame | None,
                 vae_learning_rates: Sequence[float] | None, data_origin: str,
                 representations=None):
        self.tables = {"cancer": (cancer, float(cancer_epsilon)),
                       "drug": (drug, float(drug_epsilon))}
        #: (pipeline, representation) -> its table of public and private lines' coordinates
        self.representations = dict(representations or {})
        self.base_seed, self.drug_splits = base_seed, drug_splits
        self.synthetic = "synthetic" in str(data_origin).split(",")
        self.vae_note = ""
        if vae_learning_rates is not None:
            low, high = (float(v) for v in vae_learning_rates)
            self.vae_note = (f"; VAE learning rate searched in [{low:g}, {high:g}] (the "
                             f"authors: [1e-06, 0.01]); the VAE's r comes from a small "
                             f"search (one-SE rule over few pairs), so VAE verdicts are "
                             f"sensitive to it")
        self.rows: dict[str, dict] = {}
        self._tasks: dict[tuple[str, str], TaskData] = {}

    def task(self, pipeline: str, task: str) -> TaskData:
        """``pipeline``'s ``task``, built when one of its claims first asks for it."""
        if (pipeline, task) not in self._tasks:
            self._tasks[pipeline, task] = TaskData(self, pipeline, task)
        return self._tasks[pipeline, task]
