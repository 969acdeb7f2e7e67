"""A neighbouring-dataset test of every private release the workflow writes.

For each release function a rule calls (every rrr_survival mechanism of the shipped
configurations on every shipped cohort, a user cohort without ``horizon`` and one with
an absent group; the Cox fits on RRR; the repr_transfer public set and both pipelines'
learners; every registered ldp mechanism), the harness runs it on a dataset D and on
neighbours D' under the study's own neighbour relation, with the same seeds. A release
whose record states a finite ``true_epsilon`` must release the same *structure* on D
and D': the same columns, row counts, time grids, label sets, index sets and
parameters not drawn from noise. Anything that differs is a parameter read off the
private data (a horizon taken from the largest follow-up time, a public set built from
the private ids, a label set taken from the data): a finite ε cannot hold, and the
failure names the release, the neighbour and the parameter.

The list of releases is built from what the rules call (the plans' release lists of
the shipped configurations, the study's registries) and checked against the privacy
boundary: a new rule, mechanism, cohort or pipeline fails
:func:`test_the_harness_covers_every_rule_mechanism_cohort_and_pipeline` until it is
covered here.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from dprepro.config.schema import fill_defaults, load_schema
from dprepro.data.cohort_spec import CohortSpec, build_cohort, group_order
from dprepro.data.cohorts import synthetic_ipssr_cohort
from dprepro.runtime.privacy_record import PrivacyRecord
from dprepro.runtime.study_registry import privacy_boundary
from dprepro.studies.rrr_survival import plan as rrr_plan
from dprepro.studies.rrr_survival.analysis import run_release
from helpers.shipped import shipped_config

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = load_schema(ROOT / "workflow" / "schemas" / "config.schema.yaml")
BOUNDARY = privacy_boundary(ROOT / "workflow" / "privacy_boundary.yaml")
#: The shipped configurations, each over the embedded default.
SHIPPED = {"quick": (), "full": ("full.yaml",), "paper": ("paper.yaml",)}
#: Draws of each noisy release (the structure does not depend on their number).
DRAWS = 2
SEED = 11


# --------------------------------------------------------------------------- the harness
@dataclass(frozen=True)
class Release:
    """One private release function as a rule calls it, with its data and neighbours.

    ``run(data)`` returns ``(output, record)``: what the release publishes (a frame or
    a mapping of frames) and the privacy record the rule writes beside it.
    ``neighbours(data)`` lists ``(what changed, data')`` under the study's relation.
    """

    name: str
    rule: str
    run: Callable
    data: object
    neighbours: Callable
    key: tuple = ()
    #: ``sizes(data)``: ``(output, record, {name: training sizes it reads})`` (repr_transfer)
    sizes: Callable | None = None


#: Columns whose values are structure, not noise: grids, labels, index sets, parameters.
STRUCTURE_COLUMNS = ("t", "group", "group_a", "group_b", "draw", "term", "estimator",
                     "mechanism", "epsilon", "calibration", "case", "fold", "seed", "split",
                     "drug", "dim", "n_parts", "true_epsilon", "privacy_note")


def structure(output) -> dict:
    """What a release publishes apart from values drawn from noise, by parameter name."""
    if isinstance(output, Mapping):
        return {f"{key}.{name}": value for key, frame in output.items()
                for name, value in structure(frame).items()}
    if isinstance(output, np.ndarray):
        return {"shape": output.shape, "dtype": str(output.dtype)}
    if isinstance(output, pd.Index):
        return {"index": tuple(output)}
    frame = output
    out = {"columns": tuple(frame.columns), "rows": len(frame),
           "index": tuple(frame.index) if not isinstance(frame.index, pd.RangeIndex) else ()}
    for column in STRUCTURE_COLUMNS:
        if column in frame.columns:
            values = frame[column].astype(object).where(frame[column].notna(), None)
            out[column] = tuple(dict.fromkeys(values.tolist()))
    return out


def finite(record: PrivacyRecord) -> bool:
    return math.isfinite(record.true_epsilon)


def check_release(release: Release) -> list[str]:
    """Failures of one release: structure that differs between D and a neighbour D'."""
    output, record = release.run(release.data)
    if not finite(record):
        # no finite ε: any difference is allowed, and nothing is claimed
        assert not (record.release and math.isnan(record.true_epsilon)), release.name
        return []
    base = structure(output)
    failures = []
    for what, data in release.neighbours(release.data):
        other_output, other = release.run(data)
        if other != record:
            failures.append(f"{release.name} [{release.rule}], neighbour '{what}': the privacy "
                            f"record itself changed ({record.true_epsilon} -> "
                            f"{other.true_epsilon})")
        changed = structure(other_output)
        for key in sorted(set(base) | set(changed)):
            if base.get(key) != changed.get(key):
                failures.append(f"{release.name} [{release.rule}], true_epsilon "
                                f"{record.true_epsilon:g}, neighbour '{what}': released "
                                f"parameter '{key}' differs ({_short(base.get(key))} vs "
                                f"{_short(changed.get(key))})")
    return failures


def _short(value) -> str:
    text = repr(value)
    return text if len(text) < 120 else f"{text[:60]} ... {text[-50:]}"


# ----------------------------------------------------------------- rrr_survival cohorts
#: The person whose record each neighbour changes: the cohort's first id.
def _person(cohort: pd.DataFrame) -> pd.Series:
    ids = cohort["id"].astype(str)
    return ids == ids.iloc[0]


def pushed_past_max(cohort, labels):
    rows = _person(cohort)
    return cohort.assign(time=np.where(rows, 2 * cohort["time"].max() + 1, cohort["time"]))


def event_flipped(cohort, labels):
    rows = _person(cohort)
    return cohort.assign(event=np.where(rows, 1 - cohort["event"], cohort["event"]))


def group_changed(cohort, labels):
    """The person's group moved to the next label of the public domain (an absent label
    where the domain has one: the release must not reveal that someone has it now)."""
    rows = _person(cohort)
    present = set(cohort["group"])
    mine = cohort.loc[rows, "group"].iloc[0]
    absent = [g for g in labels if g not in present]
    target = absent[0] if absent else labels[(list(labels).index(mine) + 1) % len(labels)]
    return cohort.assign(group=np.where(rows, target, cohort["group"]).astype(object))


def removed(cohort, labels):
    return cohort.loc[~_person(cohort)].reset_index(drop=True)


#: Every neighbour of a survival cohort, by what it changes of one person's record.
SURVIVAL_NEIGHBOURS = {"time pushed past the largest follow-up": pushed_past_max,
                       "event flipped": event_flipped, "group changed": group_changed,
                       "person removed": removed}
#: Each mechanism's own neighbour relation (its privacy record's statement). RRR
#: randomises the group only: times and events are public in its threat model (the
#: privacy boundary's note), so its neighbours differ in one person's group. Grid LNTE
#: protects times, events and groups under add/remove-one-person neighbours (and
#: replacement, at 2ε). The rest state no finite ε and are run on every neighbour.
RELATION = {"rrr": ("group changed",), "rrr_debiased": ("group changed",),
            "lnte": tuple(SURVIVAL_NEIGHBOURS), "lnte_grid": tuple(SURVIVAL_NEIGHBOURS),
            "lnte_grid_no_noise": tuple(SURVIVAL_NEIGHBOURS),
            "original": tuple(SURVIVAL_NEIGHBOURS)}


@dataclass(frozen=True)
class Cohort:
    frame: pd.DataFrame
    labels: tuple


def _survival_neighbours(mechanism):
    def neighbours(data: Cohort):
        return [(what, Cohort(SURVIVAL_NEIGHBOURS[what](data.frame, data.labels), data.labels))
                for what in RELATION[mechanism]]
    return neighbours


#: User cohorts beyond the shipped ones: the small configuration's toy CSV (no horizon,
#: as a user may leave it) and the same with a configured group no patient has.
USER_COHORTS = {
    "toy_without_horizon": {"source": "file", "path": "tests/data/toy_cohort.csv",
                            "columns": {"id": "id", "time": "time", "status": "status",
                                        "group": "group"},
                            "event_values": ["dead"], "censored_values": ["alive"],
                            "time_unit": "weeks", "groups": ["arm A", "arm B", "arm C"],
                            "lnte_grid_bins": 4},
}
USER_COHORTS["toy_absent_group"] = {**USER_COHORTS["toy_without_horizon"], "horizon": 60,
                                    "groups": ["arm A", "arm B", "arm C", "arm D"]}


@cache
def _built(name: str, raw_text: str, seed: int) -> Cohort:
    raw = yaml.safe_load(raw_text)
    spec = CohortSpec.from_config(name, raw)
    if spec.source == "cbioportal":
        # paper mode's IPSS-R comes from cBioPortal (a download): the stand-in's frame
        # under paper mode's specification
        raw_frame = synthetic_ipssr_cohort(np.random.default_rng(seed))
        frame = raw_frame.assign(id=[f"p{i}" for i in range(len(raw_frame))])
    else:
        inputs = {}
        if spec.source in ("bundled", "file"):
            inputs = {"table": str(ROOT / raw["path"])}
            if spec.source == "bundled":
                inputs["checksum"] = inputs["table"] + ".sha256"
        frame = build_cohort(spec, inputs=inputs, seed=seed).frame
    frame = frame.reset_index(drop=True)
    return Cohort(frame, tuple(group_order(frame["group"], spec.groups)))


def _cohort(name: str, raw: Mapping, seed: int) -> Cohort:
    """The tidy cohort a rule builds (built once per specification)."""
    return _built(name, yaml.safe_dump(dict(raw), sort_keys=True), seed)


def survival_configs() -> dict[str, dict]:
    """The shipped configurations, and the quick one with the user cohorts added."""
    configs = {name: shipped_config(*files) for name, files in SHIPPED.items()}
    user = shipped_config()
    user["rrr_survival"]["datasets"] = list(USER_COHORTS)
    user["rrr_survival"]["cox"]["extra_datasets"] = []
    for name, raw in USER_COHORTS.items():
        user["datasets"][name] = copy.deepcopy(raw)
    fill_defaults(user, SCHEMA)
    configs["user"] = user
    return configs


def rrr_releases() -> list[Release]:
    """Every (dataset, mechanism, calibration) the rrr rules run, at one ε each."""
    out, seen = [], set()
    for config_name, config in survival_configs().items():
        for r in rrr_plan.releases(config):
            if r["epsilon"] not in (None, float(config["rrr_survival"]["epsilons"][0])):
                continue
            key = (r["dataset"], r["mechanism"], r["calibration"])
            if key in seen:
                continue
            seen.add(key)
            raw = config["datasets"][r["dataset"]]
            out.append(_rrr_release(config_name, r, raw, config["seed"]))
        out += _cox_releases(config_name, config, seen)
    return out


def _rrr_release(config_name, r, raw, seed) -> Release:
    def run(data: Cohort):
        results, record, _ = run_release(
            data.frame, dataset=r["dataset"], mechanism=r["mechanism"], epsilon=r["epsilon"],
            calibration=r["calibration"], labels=list(data.labels), draws=DRAWS, seed=SEED,
            privacy_unit=r["privacy_unit"])
        return results, record

    label = f"{r['mechanism']} eps{r['epsilon']} {r['calibration']}".strip()
    return Release(name=f"rrr_survival/{r['dataset']}/{label} ({config_name})",
                   rule="rrr_original" if r["mechanism"] == "original"
                   else "rrr_private_releases",
                   run=run, data=_cohort(r["dataset"], raw, seed),
                   neighbours=_survival_neighbours(r["mechanism"]),
                   key=(r["dataset"], r["mechanism"], r["calibration"]))


def _cox_releases(config_name, config, seen) -> list[Release]:
    """The Cox fits of rrr_cox: each on its own RRR draws of the labels, per cohort."""
    from dprepro.studies.rrr_survival.cox import cox_fits
    from dprepro.studies.rrr_survival.releases import release_record

    cox = config["rrr_survival"]["cox"]
    out = []
    for dataset, spec in rrr_plan.cox_specs(config).items():
        if ("cox", dataset) in seen:
            continue
        seen.add(("cox", dataset))
        releases = rrr_plan.cox_releases(config)[:1]

        def run(data: Cohort, spec=spec, dataset=dataset, releases=releases):
            # MC-SIMEX with 2 replicates: its structure does not depend on their number
            fits = cox_fits(data.frame, dataset=dataset, labels=list(data.labels),
                            releases=releases, draws=DRAWS, seed=SEED,
                            covariates=list(spec.covariates), estimators=cox["estimators"],
                            simex_replicates=2, lambdas=cox["lambdas"],
                            tau_at_risk=cox["tau_at_risk"],
                            clustered=spec.rows_per_person > 1,
                            privacy_unit=spec.privacy_unit, data_origin=spec.origin)
            eps, calibration = releases[0]
            return fits, release_record("rrr", epsilon=eps, labels=list(data.labels),
                                        calibration=calibration,
                                        privacy_unit=spec.privacy_unit)

        out.append(Release(name=f"rrr_survival/{dataset}/cox on rrr ({config_name})",
                           rule="rrr_cox", run=run,
                           data=_cohort(dataset, config["datasets"][dataset], config["seed"]),
                           neighbours=_survival_neighbours("rrr"), key=("cox", dataset)))
    return out


# ------------------------------------------------------------------------ repr_transfer
@dataclass(frozen=True)
class Lines:
    """The private cell lines (raw expression, lineage, responses) and the public set."""

    public: pd.DataFrame
    private: pd.DataFrame
    lineage: pd.Series
    response: pd.DataFrame


#: The case of the cancer-type releases (configured, as in every shipped configuration).
CASE = ("lineage_01", "lineage_02")


@cache
def repr_lines() -> Lines:
    from dprepro.data.synthetic_expression import synthetic_public_private

    data = synthetic_public_private(np.random.default_rng(5), n_public=60, n_private=40,
                                    n_genes=30, rank=3, n_lineages=3, n_drugs=2)
    return Lines(data["public_expression"], data["private_expression"],
                 data["private_lineage"], data["private_response"])


def _in_case(lines: Lines) -> int:
    return int(np.flatnonzero(lines.lineage.isin(CASE).to_numpy())[0])


def line_replaced(lines: Lines) -> Lines:
    """One private line's record, id included, replaced by another line's (same lineage)."""
    i = _in_case(lines)
    ids = list(lines.private.index)
    ids[i] = "PRIV_NEW"
    private = lines.private.copy()
    private.iloc[i] = lines.public.iloc[0].to_numpy()
    response = lines.response.copy()
    response.iloc[i] = -response.iloc[i].to_numpy()
    index = pd.Index(ids, name=lines.private.index.name)
    return Lines(lines.public, private.set_axis(index), lines.lineage.set_axis(index),
                 response.set_axis(index))


def repr_lines_one_response() -> Lines:
    """:func:`repr_lines` with the last drug measured on one line only (the case's first)."""
    lines = repr_lines()
    response = lines.response.copy()
    last = response.columns[-1]
    response[last] = np.where(np.arange(len(response)) == _in_case(lines), response[last],
                              np.nan)
    return Lines(lines.public, lines.private, lines.lineage, response)


def response_removed(lines: Lines) -> Lines:
    """The first line with a response to the last drug: its record replaced by one without
    that response (the other responses, and so the lines with a response, unchanged)."""
    last = lines.response.columns[-1]
    i = int(np.flatnonzero(lines.response[last].notna().to_numpy())[0])
    response = lines.response.copy()
    response.iloc[i, -1] = np.nan
    return Lines(lines.public, lines.private, lines.lineage, response)


def lineage_switched(lines: Lines) -> Lines:
    """One private line's lineage replaced by the other lineage of its case."""
    i = _in_case(lines)
    lineage = lines.lineage.copy()
    lineage.iloc[i] = CASE[1] if lineage.iloc[i] == CASE[0] else CASE[0]
    return Lines(lines.public, lines.private, lineage, lines.response)


def lineage_to_third(lines: Lines) -> Lines:
    """One line of the second most frequent private lineage given the third's lineage: the
    counts the automatic cases are read from change (here 11 and 9 become 10 and 10, and the
    tie goes to the third by name)."""
    order = sorted(lines.lineage.value_counts().items(), key=lambda kv: (-kv[1], str(kv[0])))
    second, third = order[1][0], order[2][0]
    i = int(np.flatnonzero((lines.lineage == second).to_numpy())[0])
    lineage = lines.lineage.copy()
    lineage.iloc[i] = third
    return Lines(lines.public, lines.private, lineage, lines.response)


#: The study's neighbours: replacement of one line's record (the relation of every
#: corrected mechanism, privacy.py), the number of lines fixed.
REPR_NEIGHBOURS = {"line replaced (id, expression, responses)": line_replaced,
                   "lineage switched within the case": lineage_switched,
                   "a line of the second lineage moved to the third": lineage_to_third,
                   "a line's response to the last drug removed": response_removed}


def _repr_neighbours(lines: Lines):
    return [(what, make(lines)) for what, make in REPR_NEIGHBOURS.items()]


def _features(lines: Lines, spec, method: str, config: Mapping):
    from dprepro.data.expression import harmonise_genes
    from dprepro.studies.repr_transfer.baselines import method_features

    study = config["repr_transfer"]
    private, public = harmonise_genes(lines.private, lines.public, min_shared=10,
                                      local=spec.mapping == "line_local")
    baselines = {"fixed_genes": study["fixed_genes"],
                 "feature_selection": {**study["feature_selection"], "n_genes": 3,
                                       "candidate_genes": 12}}
    return method_features(method, seeds=1, samples=lines.lineage.index, representations={},
                           public_expression=public, private_expression=private,
                           baselines=baselines, private_set=spec.private_set,
                           public_parts=spec.public_selection, base_seed=SEED)


def _recording(selection, seen: list):
    """``selection`` (a FeatureSelection) that appends to ``seen`` every nominal training size N
    its k is derived from (k = isqrt(N), ``n_parts`` unset); None stays None."""
    import dataclasses

    if selection is None:
        return None

    class Recording(type(selection)):
        def parts(self, nominal):
            if self.n_parts is None:
                seen.append(int(nominal))
            return super().parts(nominal)

    return Recording(**{f.name: getattr(selection, f.name)
                        for f in dataclasses.fields(selection)})


def _repr_release(task: str, pipeline: str, method: str, config: Mapping, *,
                  cases=(CASE,), drugs=None) -> Release:
    """A repr_cancer_type or repr_drug job's learners, on a small synthetic pair.

    ``cases``: the configured ``cancer_type.cases``; empty, the job picks every pair of the
    2 most frequent private lineages, as ``repr_cancer_type`` does. ``drugs``: None, the
    synthetic generator's (every column of the response table); ``"data"``, the drugs some
    line has a response to (as a dose-response table lists them: read off the private
    data); a tuple, the configured ``drug.drugs`` (both on :func:`repr_lines_one_response`).
    The release's ``sizes`` also returns the training sizes it reads: the clipping
    weights' n and the nominal N that DP feature selection's k = isqrt(N) comes from.
    """
    from dprepro.studies.repr_transfer import privacy as repr_privacy
    from dprepro.studies.repr_transfer.cancer_type import cancer_type_cases, cancer_type_experiment
    from dprepro.studies.repr_transfer.drug import (
        drug_experiment,
        drug_list,
        drug_splits,
        public_centring,
    )

    spec = repr_privacy.pipeline(pipeline)
    settings = {**config["repr_transfer"][task], "epsilons": [1.0]}
    if task == "cancer_type":
        settings.update(cases=[list(pair) for pair in cases], lineages=2)
    else:
        settings.update(drugs_from_data=drugs == "data")
    epsilons = [1.0, math.inf]

    def execute(lines: Lines):
        features = _features(lines, spec, method, config)
        seen = {"clipping_n": [], "nominal_n": []}
        selection = _recording(features.selection, seen["nominal_n"])
        if task == "cancer_type":
            # as the job: the configured cases, or the automatic ones from the lineage counts
            chosen = cancer_type_cases(lines.lineage, n_lineages=settings["lineages"],
                                       min_count=2, cases=settings["cases"])
            rows = cancer_type_experiment(
                features.private, lines.lineage, chosen, epsilons=epsilons, folds=2,
                l2=settings["l2"], variant=spec.cancer_variant or settings["variant"],
                base_seed=SEED, stream=f"cancer_type/{method}", scales=features.scales,
                selection=selection, mapping=spec.mapping,
                automatic_cases=repr_privacy.automatic_cases(settings))
        else:
            response = lines.response
            listed = ([d for d in response.columns if response[d].notna().any()]
                      if drugs == "data" else drug_list(response.columns, drugs=drugs or ()))
            splits = drug_splits(response, splits=2, test_size=8,
                                 rng=np.random.default_rng(SEED))

            def clipping(n, d, e):
                seen["clipping_n"].append(int(n))
                return (1.0, 1.0)

            rows = drug_experiment(
                features.private, response, listed, epsilons=epsilons, splits=splits,
                ridge=settings["ridge"], base_seed=SEED, stream=f"drug/{method}",
                clipping_weights=clipping, selection=selection, xx_noise=spec.xx_noise,
                mapping=spec.mapping, automatic_drugs=repr_privacy.automatic_drugs(settings),
                **public_centring(spec, features, settings))
        table = rows.assign(representation=method, pipeline=pipeline)
        records = repr_privacy.table_records(table, kind=task, settings=settings)
        record = next(r for r in records if math.isfinite(r.stated))
        return rows, record, {key: tuple(values) for key, values in seen.items()}

    suffix = ("" if cases else " (automatic cases)") + (
        "" if drugs is None else " (drugs from the data)" if drugs == "data"
        else " (listed drugs)")
    return Release(name=f"repr_transfer/{task}/{pipeline}/{method}{suffix}",
                   rule=f"repr_{task}", run=lambda lines: execute(lines)[:2],
                   data=repr_lines() if drugs is None else repr_lines_one_response(),
                   neighbours=_repr_neighbours, sizes=execute)


def _public_set_release(pipeline: str) -> Release:
    """The DepMap public set (paper mode): DepMap without GDSC's catalogue of lines; the
    corrected learners' finite ε rests on it being the same for neighbouring samples."""
    from dprepro.runtime.privacy_record import budget_split
    from dprepro.studies.repr_transfer import privacy as repr_privacy
    from dprepro.studies.repr_transfer.study_data import real_data

    spec = repr_privacy.pipeline(pipeline)
    catalogue = pd.DataFrame({"TCGA_LABEL": list("WXYZ")},
                             index=pd.Index([1001, 1002, 1003, 5000], name="COSMIC_ID"))
    rng = np.random.default_rng(8)
    genes = [f"G{i}" for i in range(8)]
    depmap = pd.DataFrame(rng.normal(5, 1, (5, 8)), columns=genes,
                          index=["M1003", "M5000", "M7", "M8", "M9"])
    models = pd.DataFrame({"ModelID": depmap.index,
                           "COSMICID": [1003.0, 5000.0, 7.0, np.nan, 9.0],
                           "lineage": list("ABABA")})
    gdsc = pd.DataFrame(rng.normal(5, 1, (3, 8)), index=[1001, 1002, 1003], columns=genes)

    def run(private: pd.DataFrame):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            out = real_data(private, depmap, models, min_shared_genes=5,
                            exclude_private_lines=True, gdsc_cell_lines=catalogue)
        split = budget_split(1.0, feature_selection=False)
        centre = ({"x_center": np.zeros(8), "y_center": 0.0} if spec.public_centring
                  else {})
        learner = repr_privacy.drug_learner(split, ridge=1.0, clip_x=1.0, clip_y=1.0,
                                            rng=np.random.default_rng(0),
                                            xx_noise=spec.xx_noise, **centre)
        record = repr_privacy.drug_privacy(split, learner, mapping=spec.mapping)
        return {"public_expression": out["public_expression"]}, record

    def neighbours(private):
        return [(f"private line 1003 replaced by line {new}",
                 private.set_axis(pd.Index([1001, 1002, new]))) for new in (5000, 7)]

    return Release(name=f"repr_transfer/public_set/depmap/{pipeline}", rule="repr_public_data",
                   run=run, data=gdsc, neighbours=neighbours)


def repr_releases() -> list[Release]:
    from dprepro.studies.repr_transfer.privacy import PIPELINES

    config = shipped_config()
    return [*(_repr_release(task, pipeline, method, config)
              for task in ("cancer_type", "drug") for pipeline in PIPELINES
              for method in config["repr_transfer"]["baselines"]),
            # cancer_type.cases left empty (as the schema's default and the small
            # configuration do): the cases are read off the private lineage counts
            *(_repr_release("cancer_type", pipeline, method, config, cases=())
              for pipeline in PIPELINES for method in config["repr_transfer"]["baselines"]),
            # a drug with a response on one line: the drugs read off the responses (as
            # paper mode without repr_transfer.drug.drugs), or listed
            *(_repr_release("drug", "corrected", "fixed_genes", config, drugs=drugs)
              for drugs in ("data", tuple(repr_lines().response.columns))),
            *(_public_set_release(pipeline) for pipeline in PIPELINES)]


# ------------------------------------------------------------------------ ldp_indicators
def ldp_releases() -> list[Release]:
    """Every registered mechanism on the failure indicators, at the configured α."""
    from dprepro.mechanisms.registry import MECHANISMS

    alpha = float(shipped_config()["ldp_indicators"]["alphas"][0])
    delta = np.random.default_rng(2).integers(0, 2, size=50)

    def release(mechanism):
        def run(d):
            released = mechanism.privatize(d, alpha=alpha, rng=np.random.default_rng(SEED))
            return (mechanism.presmoother_input(released, alpha=alpha),
                    mechanism.privacy_record(alpha))

        def neighbours(d):
            flipped = d.copy()
            flipped[0] = 1 - flipped[0]
            return [("one indicator flipped", flipped)]

        return Release(name=f"ldp_indicators/{mechanism.name} alpha{alpha:g}",
                       rule="ldp_simulate", run=run, data=delta, neighbours=neighbours)

    return [release(m) for m in MECHANISMS.values()]


# ------------------------------------------------------------------------ the tests
RELEASES = {release.name: release
            for release in [*rrr_releases(), *repr_releases(), *ldp_releases()]}


@pytest.mark.parametrize("name", sorted(RELEASES))
def test_a_finite_epsilon_release_has_the_same_structure_on_neighbours(name):
    failures = check_release(RELEASES[name])
    assert not failures, "\n".join(failures)


#: Every other rule of the privacy boundary, and why it writes no private release of its
#: own (a release it reads is run above, under the rule that makes it).
NOT_A_RELEASE = {
    **dict.fromkeys(
        ["cbioportal_download", "cohort_download", "rrr_cohort", "gdsc_download",
         "gdsc_preprocess", "repr_private_data", "repr_fit", "repr_fit_vae"],
        "sensitive: raw private records (or private lines through a public map), never "
        "released"),
    **dict.fromkeys(
        ["rrr_bands_table", "claims_table", "claims_figure", "report_tables",
         "rrr_median_table", "rrr_logrank_table", "rrr_rejection_table", "rrr_utility_table",
         "rrr_curves_table", "rrr_claims_table", "rrr_figure2", "rrr_km_bands",
         "rrr_utility", "rrr_cox_table", "rrr_cox_forest_figure",
         "rrr_cox_bias_coverage_figure", "repr_cancer_type_table", "repr_drug_table",
         "repr_claims_table", "repr_figure", "report_cohort_tables", "report_introduction"],
        "reference: tables and figures of the releases run above beside the original data "
        "(release false); each row states its release's record"),
    **dict.fromkeys(
        ["depmap_download", "depmap_preprocess", "tcga_download", "tcga_preprocess",
         "repr_search", "repr_search_vae", "repr_hyperparameter_table",
         "repr_clipping_weights", "run_manifest"],
        "public data, synthetic data or the configuration only"),
    **dict.fromkeys(
        ["privacy_audit_table", "privacy_audit_figure", "audit_claims_table"],
        "the privacy audit: synthetic worst-case neighbours (dprepro.audit)"),
    **dict.fromkeys(
        ["ldp_mse_table", "ldp_figure", "ldp_claims", "ldp_clip_table", "ldp_hazard_table",
         "ldp_floor_table", "ldp_variant_table", "ldp_alpha_grid_table",
         "ldp_convergence_table"],
        "simulation: summaries of the ldp_simulate releases"),
    "ldp_simulate_convergence": "simulation: the ldp_simulate mechanisms at other sample sizes",
}


def test_the_harness_covers_every_rule_mechanism_cohort_and_pipeline():
    """The releases above are those the rules call: a new rule of the privacy boundary, a
    new rrr mechanism, a shipped cohort, a repr pipeline or an ldp mechanism that the
    harness does not run fails here."""
    from dprepro.mechanisms.registry import MECHANISMS as LDP_MECHANISMS
    from dprepro.studies.repr_transfer.privacy import PIPELINES

    releases = list(RELEASES.values())
    rules = {rule for cls, names in BOUNDARY.items() if cls != "target" for rule in names}
    covered = {r.rule for r in releases}
    assert covered <= rules, covered - rules
    assert rules - covered == set(NOT_A_RELEASE), (
        "classify in NOT_A_RELEASE or cover with a release: "
        f"{sorted((rules - covered) ^ set(NOT_A_RELEASE))}")
    # rrr_survival: every mechanism the plan runs has its neighbour relation and is run,
    # on every cohort of every shipped configuration (and the user cohorts)
    assert set(RELATION) == set(rrr_plan.MECHANISMS)
    keys = {r.key for r in releases}
    for config_name, config in survival_configs().items():
        for r in rrr_plan.releases(config):
            assert (r["dataset"], r["mechanism"], r["calibration"]) in keys, (config_name, r)
        for dataset in rrr_plan.cox_specs(config):
            assert ("cox", dataset) in keys, (config_name, dataset)
    # the user cohorts: one without a horizon, one with a group no patient has
    assert not USER_COHORTS["toy_without_horizon"].get("horizon")
    absent = set(USER_COHORTS["toy_absent_group"]["groups"]) - set(
        _cohort("toy_absent_group", USER_COHORTS["toy_absent_group"], 0).frame["group"])
    assert absent == {"arm D"}
    # repr_transfer: every pipeline, task and baseline; ldp: every registered mechanism
    for pipeline in PIPELINES:
        assert f"repr_transfer/public_set/depmap/{pipeline}" in RELEASES
        for task in ("cancer_type", "drug"):
            for method in shipped_config()["repr_transfer"]["baselines"]:
                assert f"repr_transfer/{task}/{pipeline}/{method}" in RELEASES
    assert {n.split("/")[1].split(" ")[0] for n in RELEASES
            if n.startswith("ldp_indicators/")} == set(LDP_MECHANISMS)


def test_the_harness_fails_a_grid_read_off_the_data_under_a_finite_epsilon():
    """The control that must fail: grid LNTE without a horizon, its record forced to the
    finite ε the study printed before (issue 39), is caught by the neighbour whose
    follow-up is pushed past the maximum, naming the release and the grid."""
    from dataclasses import replace

    release = RELEASES["rrr_survival/toy_without_horizon/lnte_grid eps1.0 grid=4,rows=1 (user)"]

    def claimed_finite(data):
        output, record = release.run(data)
        assert math.isinf(record.true_epsilon) and not record.release
        return output, replace(record, release=True, true_epsilon=1.0)

    failures = check_release(replace(release, run=claimed_finite))
    assert failures
    assert any("neighbour 'time pushed past the largest follow-up'" in f
               and "released parameter 'curves.t' differs" in f
               and "toy_without_horizon/lnte_grid" in f for f in failures), failures
    # the same release with its true record passes (ε = ∞ claims nothing)
    assert check_release(release) == []


# ------------------------------------------- the neighbours a repr row states, and its n
#: Words by which a row's note would claim add/remove-one-line (unbounded) neighbours.
ADD_REMOVE_CLAIM = re.compile(r"add/remove|add-remove|added or removed|adding or removing|"
                              r"unbounded (dp|neighbour)", re.IGNORECASE)


def line_removed(lines: Lines) -> Lines:
    """One private line of the case, which has a response to every drug, removed (an
    add/remove neighbour: the number of lines changes)."""
    keep = np.arange(len(lines.lineage)) != _in_case(lines)
    return Lines(lines.public, lines.private.iloc[keep], lines.lineage.iloc[keep],
                 lines.response.iloc[keep])


#: Neighbours under each relation a row may state. Replacement: one line's record replaced,
#: its training lines kept (the scope of every finite repr ε, "given its training lines";
#: a replacement that moves a line into or out of a case or the lines with a response
#: changes the training lines and is outside it). Add/remove: one line removed.
STATED_RELATIONS = {
    "replacement": {"line replaced (id, expression, responses)": line_replaced,
                    "lineage switched within the case": lineage_switched,
                    "a line's response to the last drug removed": response_removed},
    "add/remove": {"a line of the case removed": line_removed},
}


def stated_relation(record: PrivacyRecord) -> str | None:
    """The neighbour relation a repr record's note states: ``"add/remove"`` where it claims
    it anywhere, ``"replacement"`` where it states the study's relation
    (:data:`dprepro.studies.repr_transfer.privacy.NEIGHBOURS`), else None."""
    from dprepro.studies.repr_transfer.privacy import NEIGHBOURS

    if ADD_REMOVE_CLAIM.search(record.note):
        return "add/remove"
    return "replacement" if NEIGHBOURS in record.note else None


def check_relation(release: Release) -> list[str]:
    """Failures of a repr release whose finite ε rests on a training size that the relation
    its row states does not fix: under each neighbour of that relation, the sizes the
    release reads (the clipping weights' n, the N of DP feature selection's k = isqrt(N))
    must be those it read on D."""
    _, record, sizes = release.sizes(release.data)
    if not finite(record):
        return []
    relation = stated_relation(record)
    if relation is None:
        return [f"{release.name}: true_epsilon {record.true_epsilon:g} but its note states no "
                "neighbour relation"]
    failures = []
    for what, make in STATED_RELATIONS[relation].items():
        _, _, other = release.sizes(make(release.data))
        for key in sorted(sizes):
            if sizes[key] != other[key]:
                failures.append(f"{release.name} [{release.rule}], true_epsilon "
                                f"{record.true_epsilon:g} under {relation} neighbours, "
                                f"neighbour '{what}': the training size '{key}' it reads "
                                f"differs ({_short(sizes[key])} vs {_short(other[key])})")
    return failures


REPR_SIZED = sorted(name for name, r in RELEASES.items() if r.sizes is not None)


@pytest.mark.parametrize("name", REPR_SIZED)
def test_a_repr_row_states_neighbours_that_fix_the_training_sizes_it_reads(name):
    """Every repr row with a finite ε states the study's replacement relation, under which
    the training sizes its learner reads (n, N) are the same on every neighbour of its
    training lines; a row that claimed add/remove neighbours while reading them fails."""
    release = RELEASES[name]
    _, record, sizes = release.sizes(release.data)
    if finite(record):
        assert stated_relation(record) == "replacement", record.note
    assert set(sizes) == {"clipping_n", "nominal_n"}
    failures = check_relation(release)
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("task", ["drug", "cancer_type"])
def test_the_harness_fails_a_row_claiming_add_remove_while_reading_n(task):
    """The control that must fail: the corrected DP feature selection's rows, their notes made
    to claim add/remove neighbours, read n (drug: the clipping weights' n and k = isqrt(N);
    cancer type: each fold's N), which a removed line changes: caught, naming the release,
    the neighbour and the size. The true rows (replacement) pass."""
    from dataclasses import replace

    from dprepro.studies.repr_transfer.privacy import NEIGHBOURS

    release = RELEASES[f"repr_transfer/{task}/corrected/dp_feature_selection"]
    _, record, sizes = release.sizes(release.data)
    assert math.isfinite(record.true_epsilon) and NEIGHBOURS in record.note
    read = {"drug": ("clipping_n", "nominal_n"), "cancer_type": ("nominal_n",)}[task]
    assert all(sizes[key] for key in read)
    # the removal changes them (the control has power)
    _, _, removed = release.sizes(line_removed(release.data))
    assert all(removed[key] != sizes[key] for key in read)

    def claiming_add_remove(release):
        def sizes(data):
            output, record, sizes = release.sizes(data)
            note = record.note.replace(NEIGHBOURS, "one cell line added or removed")
            return output, replace(record, note=note), sizes

        return replace(release, sizes=sizes)

    assert check_relation(release) == []
    failures = check_relation(claiming_add_remove(release))
    for key in read:
        assert any(f"{task}/corrected/dp_feature_selection" in f
                   and "under add/remove neighbours, neighbour 'a line of the case removed'" in f
                   and f"the training size '{key}' it reads differs" in f
                   for f in failures), failures
    # a learner that reads no n (fixed genes in the cancer-type task) may state either
    fixed = RELEASES["repr_transfer/cancer_type/corrected/fixed_genes"]
    assert fixed.sizes(fixed.data)[2] == {"clipping_n": (), "nominal_n": ()}
    assert check_relation(claiming_add_remove(fixed)) == []


def test_the_harness_fails_drugs_read_off_the_responses_under_a_finite_epsilon():
    """The control that must fail: the drugs some line has a response to (as a dose-response
    table lists them: paper mode without repr_transfer.drug.drugs), their record forced to a
    finite ε, are caught by the neighbour that removes the one response to a drug; the true
    record says why it is inf, and the listed drugs keep their rows (NaN scores where no
    model is fitted) and their finite ε."""
    from dataclasses import replace

    release = RELEASES["repr_transfer/drug/corrected/fixed_genes (drugs from the data)"]
    output, record = release.run(release.data)
    assert math.isinf(record.true_epsilon) and "repr_transfer.drug.drugs" in record.note
    assert record.note.startswith("NOT DIFFERENTIALLY PRIVATE: the drugs")
    assert check_release(release) == []

    def claimed_finite(data):
        output, record = release.run(data)
        return output, replace(record, true_epsilon=1.0, note="")

    failures = check_release(replace(release, run=claimed_finite))
    assert any("neighbour 'a line's response to the last drug removed'" in f
               and "released parameter 'drug' differs" in f for f in failures), failures
    listed = RELEASES["repr_transfer/drug/corrected/fixed_genes (listed drugs)"]
    rows, record = listed.run(listed.data)
    assert record.true_epsilon == 1.0 and "NOT DIFFERENTIALLY PRIVATE" not in record.note
    last = listed.data.response.columns[-1]
    assert set(rows["drug"]) == set(listed.data.response.columns)
    # one response in all: no split has a model of the last drug, its rows stay
    gone = rows[rows["drug"] == last]
    assert len(gone) == len(rows) / 2 and gone["spearman"].isna().all()
    assert (gone["n_train"] + gone["n_test"] <= 1).all()
    assert check_release(listed) == []


def test_the_harness_fails_cases_read_off_the_lineage_counts_under_a_finite_epsilon():
    """The control that must fail: cancer-type cases chosen from the private lineage counts
    (``cancer_type.cases`` empty), their record forced to the finite ε the corrected
    pipeline printed before (issue 39), are caught by the neighbour that moves one line
    between lineages, naming the release and the case; the true record (ε = ∞, the note
    naming the key) passes."""
    from dataclasses import replace

    release = RELEASES["repr_transfer/cancer_type/corrected/fixed_genes (automatic cases)"]
    output, record = release.run(release.data)
    assert math.isinf(record.true_epsilon) and not record.release
    assert "chosen from the private lineage counts" in record.note
    assert "repr_transfer.cancer_type.cases" in record.note
    assert math.isinf(record.extra["epsilon_if_bias_penalised"])
    # the same learner on the listed case keeps its finite ε
    listed = RELEASES["repr_transfer/cancer_type/corrected/fixed_genes"]
    assert listed.run(listed.data)[1].true_epsilon == 1.0

    def claimed_finite(data):
        output, record = release.run(data)
        assert math.isinf(record.true_epsilon)
        return output, replace(record, true_epsilon=1.0, note="", extra={})

    failures = check_release(replace(release, run=claimed_finite))
    assert any("neighbour 'a line of the second lineage moved to the third'" in f
               and "released parameter 'case' differs" in f
               and "cancer_type/corrected/fixed_genes (automatic cases)" in f
               for f in failures), failures
    assert check_release(release) == []


def _cancer_table(cases, tmp_path: Path) -> tuple[pd.DataFrame, dict]:
    """The cancer-type table and summary as repr_cancer_type and repr_cancer_type_table
    write and read them, from the quick configuration with ``cancer_type.cases`` = cases,
    and the settings the table's records are rebuilt from (the plan's)."""
    from dprepro.runtime.io import read_table, write_csv
    from dprepro.studies.repr_transfer import privacy as repr_privacy
    from dprepro.studies.repr_transfer.plan import ReprPlan
    from dprepro.studies.repr_transfer.tables import TABLES

    config = shipped_config()
    config["repr_transfer"]["cancer_type"].update(cases=[list(c) for c in cases], lineages=2)
    settings = ReprPlan(config).privacy_settings("cancer_type")
    frames = []
    for pipeline in repr_privacy.PIPELINES:
        release = _repr_release("cancer_type", pipeline, "fixed_genes", config, cases=cases)
        rows, _ = release.run(release.data)
        frames.append(rows.assign(representation="fixed_genes", pipeline=pipeline))
    table, summary = TABLES["cancer_type"](frames, data_origin="synthetic")
    out = {}
    for name, frame in (("table", table), ("summary", summary)):
        write_csv(frame, tmp_path / f"{name}.csv")
        out[name] = read_table(tmp_path / f"{name}.csv")
    return out, settings


@pytest.mark.parametrize("cases", [(), (CASE,)], ids=["automatic", "listed"])
def test_cases_from_the_private_counts_print_inf_in_every_written_row(cases, tmp_path):
    """cancer_type.cases empty: every private row of the written table and summary, and of
    the records rebuilt for the sidecars, has true_epsilon = inf and says why; listed cases
    keep the finite ε of the corrected pipeline (inf as published: global mapping)."""
    from dprepro.runtime.privacy_record import provenance_of
    from dprepro.studies.repr_transfer import privacy as repr_privacy

    written, settings = _cancer_table(cases, tmp_path)
    table, summary = written["table"], written["summary"]
    assert settings["cases"] == [list(c) for c in cases]
    private = table["epsilon"].notna()
    assert private.any() and (~private).any()
    # the references state no ε (nan), as the rrr original and the grid without noise do
    assert table.loc[~private, "true_epsilon"].isna().all()
    records = repr_privacy.table_records(table, kind="cancer_type", settings=settings)
    columns = list(repr_privacy.CANCER_PRIVACY_COLUMNS)
    got = table[columns].reset_index(drop=True)
    got["variant"] = got["variant"].astype(object).where(got["variant"].notna(), "")
    pd.testing.assert_frame_equal(repr_privacy.columns_frame(records, columns), got,
                                  check_dtype=False)
    entries = provenance_of(repr_privacy.distinct(records))["records"]
    corrected = private & (table["pipeline"] == "corrected")
    summary_private = summary["epsilon"].notna()
    if not cases:
        assert np.isinf(table.loc[private, "true_epsilon"]).all()
        assert np.isinf(table.loc[private, "epsilon_if_bias_penalised"]).all()
        assert table.loc[private, "privacy_note"].str.contains(
            "chosen from the private lineage counts").all()
        assert np.isinf(summary.loc[summary_private, "true_epsilon"]).all()
        assert all(e["true_epsilon"] == "inf" for e in entries if e["epsilon"] is not None)
    else:
        assert (table.loc[corrected, "true_epsilon"] == table.loc[corrected, "epsilon"]).all()
        assert not table["privacy_note"].str.contains("lineage counts").any()
        assert np.isfinite(summary.loc[summary_private
                                       & (summary["pipeline"] == "corrected"),
                                       "true_epsilon"]).all()
        assert any(e["true_epsilon"] == 1.0 for e in entries)


def test_the_plan_warns_about_cases_read_off_the_private_data():
    """The configuration check prints a warning naming repr_transfer.cancer_type.cases and the
    fix; listed cases (every shipped configuration) give none; figure captions say it too.
    Paper mode lists no drugs, so its drugs are read off the private dose-response table:
    it warns of that (the synthetic generator's drugs of the embedded runs are public)."""
    from dprepro.studies.repr_transfer.plan import ReprPlan

    for name, files in SHIPPED.items():
        plan = ReprPlan(shipped_config(*files))
        warnings = plan.config_warnings()
        if name == "paper":
            (warning,) = warnings
            assert warning.startswith("repr_transfer.drug.drugs: empty on real data")
            assert "true_epsilon = inf" in warning and "list the drugs" in warning
            assert plan.drugs_from_data() and plan.privacy_settings("drug")["drugs_from_data"]
            assert "no finite ε" in plan.caption_privacy("drug_prediction", "corrected")
            paper = shipped_config(*files)
            paper["repr_transfer"]["drug"]["drugs"] = [1003, 1004]
            listed = ReprPlan(paper)
            assert listed.config_warnings() == [] and not listed.drugs_from_data()
            assert "no finite ε" not in listed.caption_privacy("drug_prediction", "corrected")
        else:
            assert warnings == [] and not plan.drugs_from_data()
    config = shipped_config()
    config["repr_transfer"]["cancer_type"]["cases"] = []
    plan = ReprPlan(config)
    (warning,) = plan.config_warnings()
    assert warning.startswith("repr_transfer.cancer_type.cases: empty")
    assert "true_epsilon = inf" in warning and "list the pairs" in warning
    assert "no finite ε" in plan.caption_privacy("cancer_type_accuracy", "corrected")
    assert "no finite ε" not in plan.caption_privacy("drug_prediction", "corrected")
    config["studies"] = [s for s in config["studies"] if s != "repr_transfer"]
    assert ReprPlan(config).config_warnings() == []
