"""The repr_transfer study: experiments, selection, privacy columns, tables, paper-mode data."""

import dataclasses
import hashlib
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from dprepro.data.synthetic_expression import synthetic_public_private
from dprepro.learners.feature_selection import dp_select_features
from dprepro.learners.linear_regression import SSPLinearRegression
from dprepro.representations.pca import fit_pca
from dprepro.studies.repr_transfer import baselines as repr_baselines
from dprepro.studies.repr_transfer import cancer_type as repr_cancer_type
from dprepro.studies.repr_transfer import common as repr_common
from dprepro.studies.repr_transfer import drug as repr_drug
from dprepro.studies.repr_transfer import figures as repr_figures
from dprepro.studies.repr_transfer import fitting as repr_fitting
from dprepro.studies.repr_transfer import privacy as repr_privacy
from dprepro.studies.repr_transfer import study_data as repr_study_data
from dprepro.studies.repr_transfer import tables as repr_tables
from helpers import background
from helpers.smallruns import SMALL

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "expression"
#: Configured cancer-type cases (``cancer_type.cases``): the rows keep their finite ε.
LISTED = [["lineage_01", "lineage_02"]]


@pytest.fixture(scope="module")
def separable():
    """Synthetic data with well separated lineages and a noiseless linear response."""
    return synthetic_public_private(np.random.default_rng(3), n_public=300, n_private=240,
                                    n_genes=200, rank=4, n_lineages=3, n_drugs=3,
                                    lineage_separation=4.0, response_noise=0.0)


# --------------------------------------------------------------------------- #
# hyperparameter selection on the public auxiliary task
# --------------------------------------------------------------------------- #
def test_selection_picks_the_best_candidate_per_representation():
    candidates = pd.DataFrame({
        "representation": ["vae", "pca", "pca", "pca", "vae", "random_projection"],
        "candidate": ["r4_lr0.001_h1_w32", "r2", "r4", "r8", "r4_lr0.01_h1_w32", "r2"],
        "dim": [4, 2, 4, 8, 4, 2],
        "score": [0.70, 0.80, 0.90, 0.85, 0.75, 0.40],
    })
    table = repr_fitting.select_hyperparameters(candidates)
    chosen = table[table["selected"]].set_index("representation")["candidate"].to_dict()
    assert chosen == {"pca": "r4", "vae": "r4_lr0.01_h1_w32", "random_projection": "r2"}
    assert list(table["representation"]) == ["pca"] * 3 + ["random_projection"] + ["vae"] * 2
    assert table["selected"].sum() == 3


def test_selection_ties_go_to_the_smaller_representation():
    candidates = pd.DataFrame({"representation": ["pca"] * 3, "candidate": ["r8", "r4", "r2"],
                               "dim": [8, 4, 2], "score": [0.9, 0.9, 0.5]})
    table = repr_fitting.select_hyperparameters(candidates)
    assert table.loc[table["selected"], "candidate"].tolist() == ["r4"]


def test_auxiliary_score_separates_good_from_useless_representations(separable):
    labels = separable["public_lineage"]
    good = separable["public_latent"]
    noise = np.random.default_rng(0).standard_normal(good.shape)
    score_good = repr_fitting.auxiliary_score(good, labels, folds=5, random_state=1)
    score_noise = repr_fitting.auxiliary_score(noise, labels, folds=5, random_state=1)
    assert score_good["score"] > 0.95
    assert score_noise["score"] < 0.6
    assert score_good["n_classes"] == 3 and score_good["n_samples"] == 300


def test_auxiliary_score_drops_lineages_too_small_for_the_folds():
    rng = np.random.default_rng(1)
    labels = np.array(["a"] * 20 + ["b"] * 20 + ["c"] * 2 + [None] * 3, dtype=object)
    Z = rng.standard_normal((len(labels), 2))
    score = repr_fitting.auxiliary_score(Z, labels, folds=5, random_state=0)
    assert score["n_classes"] == 2 and score["n_samples"] == 40
    with pytest.raises(ValueError, match="two lineages"):
        repr_fitting.auxiliary_score(Z[:22], labels[:22], folds=5, random_state=0)


def test_pca_without_torch_equals_the_library_fit(separable):
    public = separable["public_expression"]
    ours = repr_fitting.fit_representation("pca", {"dim": 3}, public,
                                         rng=np.random.default_rng(0))
    np.testing.assert_allclose(ours.transform(public), fit_pca(public, 3).transform(public),
                               rtol=0, atol=1e-12)


def test_representation_fits_are_deterministic_given_the_generator(separable):
    public = separable["public_expression"].iloc[:, :50]
    spec = {"dim": 2, "learning_rate": 0.01, "hidden_layers": 1, "width_multiplier": 4}
    options = {"max_epochs": 3, "device": "cpu", "batch_size": 64}
    for name in ("random_projection", "vae"):
        a, b = (repr_fitting.fit_representation(name, spec, public, rng=np.random.default_rng(5),
                                              vae_options=options if name == "vae" else None)
                for _ in range(2))
        np.testing.assert_array_equal(a.transform(public), b.transform(public))


def test_seed_representations_fit_pca_once_and_equal_per_seed_fits(separable, monkeypatch):
    from dprepro.runtime.seeds import seed_sequence

    public = separable["public_expression"].iloc[:, :50]
    private = separable["private_expression"].iloc[:, :50]
    local = private.iloc[::-1] + 0.5  # another order: mapped in the private order
    real = repr_fitting.fit_representation
    fits = []
    monkeypatch.setattr(repr_fitting, "fit_representation",
                        lambda *a, **k: fits.append(a[0]) or real(*a, **k))
    for name, expected_fits in (("pca", 1), ("random_projection", 3)):
        fits.clear()
        frame = repr_fitting.seed_representations(
            name, {"dim": 3}, public, {"private": private, "private_line_local": local},
            seeds=3, base_seed=9, stream=f"fit/{name}")
        assert len(fits) == expected_fits
        for seed in range(3):
            model = real(name, {"dim": 3}, public, rng=np.random.default_rng(
                seed_sequence(9, repr_common.STUDY, f"fit/{name}", seed)))
            want = repr_fitting.representation_frame(
                model.transform(public), model.transform(private), public.index, private.index,
                extra_sets={"private_line_local": model.transform(local.loc[private.index])})
            got = frame[frame["seed"] == seed].drop(columns="seed").reset_index(drop=True)
            pd.testing.assert_frame_equal(got, want)


def test_randomized_pca_with_the_configuration_seed_is_one_map_for_every_stream(separable):
    """With the plan's one random_state, PCA and its control pca_vae_dim at the same r are the
    same features to the bit (so the control is PCA's release, as with the exact SVD); drawn
    from each fit stream instead, they would differ in the last bits."""
    public = separable["public_expression"].iloc[:, :50]
    private = separable["private_expression"].iloc[:, :50]
    sets = {"private": private}
    frames = {}
    for seeded in (True, False):
        options = {"svd_solver": "randomized", **({"random_state": 77} if seeded else {})}
        for stream in ("fit/pca", "fit/pca_vae_dim"):
            frames[(seeded, stream)] = repr_fitting.seed_representations(
                "pca", {"dim": 3}, public, sets, seeds=2, base_seed=9, stream=stream,
                pca_options=options)
    pd.testing.assert_frame_equal(frames[(True, "fit/pca")], frames[(True, "fit/pca_vae_dim")],
                                  check_exact=True)
    assert not frames[(False, "fit/pca")].equals(frames[(False, "fit/pca_vae_dim")])
    exact = repr_fitting.seed_representations("pca", {"dim": 3}, public, sets, seeds=2,
                                              base_seed=9, stream="fit/pca")
    z = [c for c in exact.columns if c.startswith("z")]
    np.testing.assert_allclose(frames[(True, "fit/pca")][z], exact[z], atol=1e-8)


# --------------------------------------------------------------------------- #
# cancer-type pairs
# --------------------------------------------------------------------------- #
def test_cases_are_pairs_of_the_most_frequent_lineages():
    lineage = pd.Series(["a"] * 30 + ["b"] * 20 + ["c"] * 12 + ["d"] * 5 + [None] * 4)
    assert repr_cancer_type.cancer_type_cases(lineage, n_lineages=3, min_count=10) == [
        ("a", "b"), ("a", "c"), ("b", "c")]
    assert repr_cancer_type.cancer_type_cases(lineage, n_lineages=9, min_count=10) == [
        ("a", "b"), ("a", "c"), ("b", "c")]
    assert repr_cancer_type.cancer_type_cases(lineage, n_lineages=2, min_count=1,
                                        cases=[["c", "d"]]) == [("c", "d")]
    with pytest.raises(ValueError, match="'d' has 5 private lines, need >= 10"):
        repr_cancer_type.cancer_type_cases(lineage, n_lineages=2, min_count=10, cases=[["a", "d"]])
    with pytest.raises(ValueError, match="need two private lineages"):
        repr_cancer_type.cancer_type_cases(lineage, n_lineages=4, min_count=25)


def _cancer(private, lineage, *, epsilons, variant="paper", seeds=(0, 1), selection=None,
            cases=(("lineage_01", "lineage_02"),)):
    features = {s: private for s in seeds}
    scales = {s: repr_baselines.mean_row_norm(private) for s in seeds}
    return repr_cancer_type.cancer_type_experiment(
        features, lineage, list(cases), epsilons=epsilons, folds=5, l2=0.1, variant=variant,
        base_seed=11, stream="cancer_type/test", scales=scales, selection=selection,
        automatic_cases=False)


def test_non_private_accuracy_beats_chance_on_separable_lineages(separable):
    Z = separable["private_latent"]
    lineage = separable["private_lineage"].reset_index(drop=True)
    rows = _cancer(Z, lineage, epsilons=[math.inf])
    majority = lineage[lineage.isin(["lineage_01", "lineage_02"])].value_counts(
        normalize=True).max()
    assert (rows["accuracy"] > 0.95).all() and (rows["accuracy"] > majority + 0.3).all()
    assert (rows["mechanism"] == "non_private").all() and rows["epsilon"].isna().all()


def test_private_accuracy_falls_with_epsilon_and_stays_a_probability(separable):
    Z = separable["private_latent"]
    lineage = separable["private_lineage"].reset_index(drop=True)
    rows = _cancer(Z, lineage, epsilons=[0.05, math.inf], seeds=range(8))
    tiny = rows.loc[rows["epsilon"] == 0.05, "accuracy"].mean()
    exact = rows.loc[rows["mechanism"] == "non_private", "accuracy"].mean()
    assert 0 <= rows["accuracy"].min() and rows["accuracy"].max() <= 1
    assert tiny < exact - 0.1


def test_cancer_rows_do_not_depend_on_the_other_epsilons(separable):
    Z = separable["private_latent"]
    lineage = separable["private_lineage"].reset_index(drop=True)
    both = _cancer(Z, lineage, epsilons=[1.0, 2.0])
    alone = _cancer(Z, lineage, epsilons=[2.0])
    pd.testing.assert_frame_equal(both[both["epsilon"] == 2.0].reset_index(drop=True), alone)
    assert not both.equals(_cancer(Z, lineage, epsilons=[1.0, 2.0], seeds=(2, 3)))


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_subsample_votes_plus_noise_is_dp_select_features(separable):
    X = separable["private_expression"].to_numpy()[:, :60]
    y = separable["private_response"].to_numpy()[:, 0].copy()
    y[::7] = np.nan
    votes, k = repr_baselines.subsample_votes(X, y, 5, lasso_max_iter=2000)
    assert k == math.isqrt(int(np.sum(~np.isnan(y)))) and votes.sum() == 5 * k
    for eps in (0.3, 2.0):
        ours = repr_baselines.noisy_top_features(votes, k, 5, epsilon=eps,
                                             rng=np.random.default_rng(9))
        theirs = dp_select_features(X, y, 5, epsilon=eps, rng=np.random.default_rng(9),
                                    lasso_max_iter=2000)
        np.testing.assert_array_equal(ours, theirs)
    top = repr_baselines.noisy_top_features(votes, k, 5, epsilon=math.inf, rng=None)
    assert set(votes[top]) <= set(np.sort(votes)[-5:])


def _vote_fractions(selection, X, y, lines):
    votes, k = selection.votes(X, y, lines)
    return votes / k


def test_hashed_feature_selection_sensitivity_under_add_remove_neighbours(separable):
    # the referee's neighbours: one line removed, and one response removed for one drug; the
    # vote fractions may move by at most 2m/k in L1 (the bound the Laplace noise is scaled to)
    X = separable["private_expression"].to_numpy()[:100, :60]
    y = separable["private_response"].to_numpy()[:100, 0].copy()
    lines = np.array([f"line{i:03d}" for i in range(100)], dtype=object)
    m = 5
    public = repr_baselines.FeatureSelection(n_select=m, public=np.zeros((1, 60)),
                                             lasso_max_iter=2000, n_parts=10,
                                             part_key=repr_baselines.part_key(7))
    paper = repr_baselines.FeatureSelection(n_select=m, public=np.zeros((1, 60)),
                                            lasso_max_iter=2000)
    assert public.public_parts and not paper.public_parts
    bound = 2 * m / 10
    full = _vote_fractions(public, X, y, lines)
    full_paper = _vote_fractions(paper, X, y, lines)
    worst, worst_paper = 0.0, 0.0
    for i in range(0, 100, 9):
        keep = np.arange(100) != i
        removed_line = _vote_fractions(public, X[keep], y[keep], lines[keep])
        y_missing = y.copy()
        y_missing[i] = np.nan
        removed_response = _vote_fractions(public, X, y_missing, lines)
        worst = max(worst, np.abs(removed_line - full).sum(),
                    np.abs(removed_response - full).sum())
        # the same neighbour under the authors' k = isqrt(n), alpha = 1/n, i mod k parts
        worst_paper = max(worst_paper, np.abs(
            _vote_fractions(paper, X, y_missing, lines) - full_paper).sum() * 10 / 2 / m)
    assert 0 < worst <= bound + 1e-12
    # the test has power: the data-dependent parts break their own 2m/k bound on these neighbours
    assert worst_paper > 1.0


def test_hashed_feature_selection_noise_covers_replacement_with_a_new_id(separable):
    # the referee's neighbour: one line's record replaced by another line under another id (the
    # replacement relation of the corrected CMS11 and SSP bounds). Its old part loses a line and
    # its new part gains one, so the vote fractions can move by 4m/k, beyond the 2m/k of one part
    X = separable["private_expression"].to_numpy()[:100, :60]
    y = separable["private_response"].to_numpy()[:100, 0].copy()
    lines = np.array([f"line{i:03d}" for i in range(100)], dtype=object)
    m, k = 5, 10
    selection = repr_baselines.FeatureSelection(n_select=m, public=np.zeros((1, 60)),
                                            lasso_max_iter=2000, n_parts=k,
                                            part_key=repr_baselines.part_key(7))
    full = _vote_fractions(selection, X, y, lines)
    parts = repr_baselines.hashed_parts(lines, k, repr_baselines.part_key(7))
    worst = 0.0
    for i in range(0, 100, 6):
        for j in (44, 88):
            # line i replaced by an outlying record (line j's, scaled) under a new id
            other, X2, y2 = lines.copy(), X.copy(), y.copy()
            other[i], X2[i], y2[i] = f"new{i:03d}", 3 * X[j], -3 * y[j]
            if parts[j] == parts[i] or repr_baselines.hashed_parts(
                    other[i:i + 1], k, repr_baselines.part_key(7))[0] == parts[i]:
                continue
            worst = max(worst, np.abs(_vote_fractions(selection, X2, y2, other) - full).sum())
    assert worst > 2 * m / k  # one part's bound fails: the test has power
    assert worst <= 4 * m / k + 1e-12
    assert selection.changed_parts == 2
    assert repr_baselines.FeatureSelection(n_select=m, public=np.zeros((1, 60))).changed_parts == 1
    # the noise is scaled to 4m/(k eps): the draws are the authors' 2m/(k eps) draws doubled
    votes = np.arange(60.0) % 7
    for eps in (0.5, 1.0):
        a = repr_baselines.noisy_top_features(votes, k, m, epsilon=eps,
                                              rng=np.random.default_rng(3),
                                              changed_parts=selection.changed_parts)
        frac = votes / k + np.random.default_rng(3).laplace(0.0, 4 * m / (k * eps), size=60)
        np.testing.assert_array_equal(a, np.argsort(-frac, kind="stable")[:m])
    with pytest.raises(ValueError, match="changed_parts"):
        repr_baselines.noisy_top_features(votes, k, m, epsilon=1.0, rng=np.random.default_rng(3),
                                      changed_parts=3)


def test_hashed_parts_depend_on_the_line_and_key_only():
    key = repr_baselines.part_key(7)
    lines = [f"l{i}" for i in range(200)]
    parts = repr_baselines.hashed_parts(lines, 10, key)
    assert set(parts) == set(range(10))
    np.testing.assert_array_equal(repr_baselines.hashed_parts(lines[5:], 10, key), parts[5:])
    assert key == repr_baselines.part_key(7) != repr_baselines.part_key(8)
    other_key = repr_baselines.part_key(8)
    assert not np.array_equal(repr_baselines.hashed_parts(lines, 10, other_key), parts)
    with pytest.raises(ValueError, match="n_parts"):
        repr_baselines.hashed_parts(lines, 0, key)
    selection = repr_baselines.FeatureSelection(n_select=2, public=np.zeros((1, 3)), n_parts=4,
                                            part_key=key)
    with pytest.raises(ValueError, match="ids"):
        selection.votes(np.zeros((8, 3)), np.zeros(8))


def test_paper_feature_selection_voids_true_epsilon_public_parts_keep_it():
    split = repr_privacy.method_split("dp_feature_selection", 1.0)
    learner = repr_privacy.cancer_learner(split, variant="cms11", l2=0.1,
                                          rng=np.random.default_rng(0))
    public = repr_baselines.FeatureSelection(n_select=2, public=np.zeros((1, 3)), n_parts=4,
                                         part_key=b"k")
    paper = repr_baselines.FeatureSelection(n_select=2, public=np.zeros((1, 3)))
    ok = repr_privacy.cancer_privacy(split, learner, mapping="line_local", selection=public)
    bad = repr_privacy.cancer_privacy(split, learner, mapping="line_local", selection=paper)
    assert ok.true_epsilon == 1.0 and bad.true_epsilon == math.inf
    assert "isqrt(n)" in bad.note and "isqrt(n)" not in ok.note
    assert "Laplace scale is 4m/(k eps_sel)" in ok.note
    # the bias-penalised bound of the paper's learner is a finite ε only where the
    # selection has one: with the authors' parts it is no ε at all (referee pass)
    paper_learner = repr_privacy.cancer_learner(split, variant="paper", l2=0.1,
                                                rng=np.random.default_rng(0))
    ok_bound, bad_bound = (
        repr_privacy.cancer_privacy(split, paper_learner, mapping="line_local",
                                    selection=sel).extra["epsilon_if_bias_penalised"]
        for sel in (public, paper))
    assert ok_bound == pytest.approx(1.0 + 2 * math.log1p(0.25 / 0.1))
    assert math.isinf(bad_bound)
    assert ok.extra["epsilon_if_bias_penalised"] == 1.0
    assert math.isinf(bad.extra["epsilon_if_bias_penalised"])


def test_public_parts_default_to_isqrt_of_the_nominal_training_size(separable):
    """``feature_selection.n_parts`` unset: k = isqrt(N) of each fit's nominal training size N,
    the lines the fit is given (a drug split's training lines before those without the drug's
    response are dropped; a fold's training lines), not the lines that have a response."""
    genes = separable["private_expression"].iloc[:, :40]
    public = separable["public_expression"].iloc[:, :40]
    fs = {"n_genes": 4, "candidate_genes": 40, "sparsity": 1.0, "lasso_max_iter": 2000}

    def selection(**extra):
        return repr_baselines.method_features(
            "dp_feature_selection", seeds=1, samples=genes.index, representations={},
            public_expression=public,
            private_expression=genes, baselines={"feature_selection": {**fs, **extra}},
            public_parts=True, base_seed=7).selection

    derived, fixed = selection(n_parts=None), selection(n_parts=6)
    assert derived.public_parts and derived.n_parts is None and derived.changed_parts == 2
    assert fixed.parts(1000) == 6 and derived.parts(120) == 10 and derived.parts(3) == 1
    with pytest.raises(ValueError, match="nominal"):
        derived.parts(0)
    X = derived.public[:120] + np.random.default_rng(1).standard_normal((120, 40))
    y = separable["private_response"].to_numpy()[:120, 0].copy()
    lines = np.array([f"line{i:03d}" for i in range(120)], dtype=object)
    y[:40] = np.nan  # 80 lines with a response
    votes, k = derived.votes(X, y, lines, nominal=120)
    assert k == 10  # isqrt(120); isqrt(80) = 8 would count responses
    ref, _ = repr_baselines.hashed_votes(X, y, lines, 4, n_parts=10, key=repr_baselines.part_key(7),
                                     sparsity=1.0, lasso_max_iter=2000)
    np.testing.assert_array_equal(votes, ref)
    paper = repr_baselines.FeatureSelection(n_select=4, public=derived.public, lasso_max_iter=2000)
    assert paper.votes(X, y)[1] == 8  # the authors' k counts the lines with a response

    @dataclasses.dataclass(frozen=True)
    class Spy(repr_baselines.FeatureSelection):
        seen: list = dataclasses.field(default_factory=list)

        def votes(self, X, y, lines=None, *, nominal=None):
            self.seen.append((int(np.shape(X)[0]), nominal))
            return super().votes(X, y, lines, nominal=nominal)

    spy = Spy(**{f.name: getattr(derived, f.name)
                 for f in dataclasses.fields(repr_baselines.FeatureSelection)})
    response = separable["private_response"].iloc[:, :2].copy()
    response.iloc[::5, 0] = np.nan  # every line has a response to one drug at least
    response.iloc[1::5, 1] = np.nan
    private = repr_baselines.centred_genes(public, genes, list(genes.columns))[1]
    splits = repr_drug.drug_splits(response, splits=2, test_size=60,
                                    rng=np.random.default_rng(4))
    drug_rows = repr_drug.drug_experiment(
        {0: private}, response, list(response.columns), epsilons=[1.0], splits=splits,
        ridge=1.0, base_seed=11, stream="drug/test", selection=spy,
        clipping_weights=lambda n, d, e: (1.0, 1.0), automatic_drugs=False)
    assert [nominal for _, nominal in spy.seen] == [len(train) for train, _ in splits] * 2
    assert all(given < nominal for given, nominal in spy.seen)  # responses were dropped
    # the rows record the k each fit ran with: isqrt of the split's training lines (so the
    # Laplace scale 4m/(k eps_sel) can be checked from the table), not of the responses
    expected = {no: math.isqrt(len(train)) for no, (train, _) in enumerate(splits)}
    assert (drug_rows["n_parts"] == drug_rows["split"].map(expected)).all()
    assert (drug_rows["n_parts"] != drug_rows["n_train"].map(math.isqrt)).any()
    table = repr_tables.drug_table([drug_rows.assign(representation="dp_feature_selection")],
                                  data_origin="synthetic")
    assert set(table["n_parts"]) == {";".join(map(str, sorted(set(expected.values()))))}
    plain = repr_drug.drug_experiment(
        {0: private}, response, list(response.columns)[:1], epsilons=[1.0], splits=splits[:1],
        ridge=1.0, base_seed=11, stream="drug/test", clipping_weights=lambda n, d, e: (1.0, 1.0),
        automatic_drugs=False)
    assert plain["n_parts"].isna().all()  # no feature selection, no k
    spy.seen.clear()
    lineage = separable["private_lineage"].reset_index(drop=True)
    cancer_rows = _cancer(private, lineage, epsilons=[1.0], seeds=(0,), selection=spy)
    assert spy.seen and all(given == nominal for given, nominal in spy.seen)
    # per fold, in fold order: isqrt of the fold's training lines (fold sizes do not depend
    # on the shuffle's seed)
    from sklearn.model_selection import StratifiedKFold

    pair = lineage[lineage.isin(["lineage_01", "lineage_02"])]
    y = (pair == "lineage_02").to_numpy(int)
    folds = StratifiedKFold(5, shuffle=True, random_state=0).split(np.zeros(len(y)), y)
    assert cancer_rows["n_parts"].tolist() == [
        ";".join(str(math.isqrt(len(train))) for train, _ in folds)]


def test_feature_selection_baseline_runs_with_half_the_budget(separable):
    genes = separable["private_expression"].iloc[:, :40]
    public = separable["public_expression"].iloc[:, :40]
    public_c, private_c = repr_baselines.centred_genes(public, genes, list(genes.columns))
    selection = repr_baselines.FeatureSelection(n_select=4, public=public_c, lasso_max_iter=2000)
    lineage = separable["private_lineage"].reset_index(drop=True)
    rows = _cancer(private_c, lineage, epsilons=[1.0, math.inf], selection=selection)
    private = rows[rows["mechanism"] != "non_private"]
    assert (private["selection_epsilon"] == 0.5).all() and (private["learner_epsilon"] == 0.5).all()
    assert (private["mechanism"] == "subsample_and_aggregate+objective_perturbation").all()
    assert (rows["dim"] == 4).all()


# --------------------------------------------------------------------------- #
# privacy statements
# --------------------------------------------------------------------------- #
def _cancer_record(epsilon, *, variant="paper", method="pca", l2=0.1, mapping="line_local"):
    split = repr_privacy.method_split(method, epsilon)
    learner = repr_privacy.cancer_learner(split, variant=variant, l2=l2,
                                          rng=np.random.default_rng(0))
    return repr_privacy.cancer_privacy(split, learner, mapping=mapping)


def test_paper_variant_reports_no_proven_epsilon_and_the_penalised_bound():
    row = _cancer_record(1.0).columns(repr_privacy.CANCER_PRIVACY_COLUMNS)
    assert row["epsilon"] == 1.0 and math.isinf(row["true_epsilon"])
    # CMS11: eps + 2 log(1 + c/alpha) with c = 1/4, alpha = 0.1
    assert row["epsilon_if_bias_penalised"] == pytest.approx(1 + 2 * math.log(3.5))
    assert "no finite epsilon is proven" in row["privacy_note"]
    exact = _cancer_record(0.5, variant="cms11", method="dp_feature_selection")
    assert exact.true_epsilon == 0.5 and exact.extra["learner_epsilon"] == 0.25
    assert exact.extra["selection_epsilon"] == 0.25 and exact.stated == 0.5
    assert exact.privacy_unit == "cell line" and exact.release is False
    none = _cancer_record(math.inf).columns(repr_privacy.CANCER_PRIVACY_COLUMNS)
    assert none["mechanism"] == "non_private" and math.isnan(none["epsilon"])
    assert list(none) == list(repr_privacy.CANCER_PRIVACY_COLUMNS)
    # what each row's ε covers: one released model per fold, given its lines and its case
    assert none["epsilon_scope"] == "non-private reference"
    assert exact.extra["epsilon_scope"].startswith("per released model (one per fold)")
    assert "ε does not cover how the pairs were chosen" in exact.extra["epsilon_scope"]


def test_every_repr_note_states_the_one_replacement_relation():
    """Issue 39: the rows defined their neighbours two ways ("expression and response
    replaced" and "another id"); the one relation names the id, the expression, the
    lineage and the responses of one line."""
    exact = _cancer_record(1.0, variant="cms11")
    assert repr_privacy.NEIGHBOURS in exact.note
    assert "id, expression, lineage and responses" in repr_privacy.NEIGHBOURS
    assert "expression and response replaced" not in exact.note
    split = repr_privacy.method_split("pca", 1.0)
    learner = repr_privacy.drug_learner(split, ridge=1.0, clip_x=1.0, clip_y=1.0,
                                        rng=np.random.default_rng(0), xx_noise="laplace",
                                        x_center=np.zeros(2), y_center=0.0)
    drug = repr_privacy.drug_privacy(split, learner, mapping="line_local")
    assert math.isfinite(drug.true_epsilon) and repr_privacy.NEIGHBOURS in drug.note
    assert drug.extra["epsilon_scope"].startswith("per released model (one per split)")


def test_record_refuses_a_learner_that_spent_another_epsilon():
    split = repr_privacy.method_split("dp_feature_selection", 1.0)
    whole = repr_privacy.cancer_learner(repr_privacy.method_split("pca", 1.0), variant="cms11",
                                        l2=0.1, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="budget split gives the learner 0.5"):
        repr_privacy.cancer_privacy(split, whole, mapping="line_local")


def test_drug_rows_say_which_statistics_epsilon_covers():
    split = repr_privacy.method_split("pca", 1.0)
    learner = repr_privacy.drug_learner(split, ridge=1.0, clip_x=1.0, clip_y=1.0,
                                        rng=np.random.default_rng(0))
    row = repr_privacy.drug_privacy(split, learner, mapping="line_local").columns(
        repr_privacy.DRUG_PRIVACY_COLUMNS)
    assert row["mechanism"] == "ssp" and math.isinf(row["true_epsilon"])
    assert "X'X" in row["privacy_note"] and "private training lines" in row["privacy_note"]


def test_global_quantile_mapping_voids_every_finite_epsilon():
    """The joint-rank mapping makes one line's record move all others: even the learners that
    are exactly ε-DP on fixed features (cms11, Laplace SSP with public centring) give inf."""
    exact = _cancer_record(1.0, variant="cms11")
    assert exact.true_epsilon == 1.0
    joint = _cancer_record(1.0, variant="cms11", mapping="global")
    assert math.isinf(joint.true_epsilon) and math.isinf(joint.extra["epsilon_if_bias_penalised"])
    assert "joint ranks" in joint.note
    split = repr_privacy.method_split("pca", 1.0)
    learner = repr_privacy.drug_learner(split, ridge=1.0, clip_x=1.0, clip_y=1.0,
                                        rng=np.random.default_rng(0), xx_noise="laplace",
                                        x_center=0.0, y_center=0.0)
    local = repr_privacy.drug_privacy(split, learner, mapping="line_local")
    joint = repr_privacy.drug_privacy(split, learner, mapping="global")
    assert local.true_epsilon == 1.0 and math.isinf(joint.true_epsilon)
    assert "joint ranks" in joint.note and "joint ranks" not in local.note
    with pytest.raises(ValueError, match="mapping must be one of"):
        repr_privacy.drug_privacy(split, learner, mapping="rank")
    # the configured objective-perturbation variant must not leak into the paper's pipeline:
    # as_published rows with variant cms11 still report inf (global mapping)
    table = pd.DataFrame({"representation": ["pca", "pca"], "epsilon": [1.0, 1.0],
                          "pipeline": ["as_published", "corrected"]})
    records = repr_privacy.table_records(table, kind="cancer_type",
                                         settings={"variant": "cms11", "l2": 0.1,
                                                   "cases": LISTED})
    assert math.isinf(records[0].true_epsilon) and records[1].true_epsilon == 1.0


def test_one_epsilon_list_and_one_split_for_experiments_and_clipping():
    settings = {"epsilon": 1, "epsilons": [2, 0.5, 1]}
    assert repr_privacy.epsilon_grid(settings) == [0.5, 1.0, 2.0]
    assert repr_privacy.experiment_epsilons(settings)[-1] == math.inf
    with pytest.raises(ValueError, match="finite and > 0"):
        repr_privacy.epsilon_grid({"epsilon": 1, "epsilons": [0]})
    hyper = pd.DataFrame({"representation": ["pca", "pca"], "dim": [2, 4],
                          "selected": [False, True]})
    baselines = {"fixed_genes": ["a", "b", "c"], "feature_selection": {"n_genes": 5}}
    got = repr_drug.clipping_settings(["pca", "fixed_genes", "dp_feature_selection"],
                                       epsilon=1.0, hyperparameters=hyper, baselines=baselines)
    # the selection baseline's learner gets half of the total (sequential composition)
    assert got == [(4, 1.0), (3, 1.0), (5, 0.5)]


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("variant", ["paper", "cms11"])
def test_table_privacy_columns_are_recomputed_from_the_mechanism_objects(separable, variant):
    genes = separable["private_expression"].iloc[:, :30]
    public = separable["public_expression"].iloc[:, :30]
    public_c, private_c = repr_baselines.centred_genes(public, genes, list(genes.columns))
    selection = repr_baselines.FeatureSelection(n_select=3, public=public_c, lasso_max_iter=500)
    lineage = separable["private_lineage"].reset_index(drop=True)
    frames = []
    for method, features, sel in (("pca", separable["private_latent"], None),
                                  ("dp_feature_selection", private_c, selection)):
        rows = _cancer(features, lineage, epsilons=[0.5, 1.0, math.inf], variant=variant,
                       selection=sel, seeds=(0,))
        rows.insert(0, "representation", method)
        frames.append(rows)
    table = repr_tables.cancer_type_table(frames, data_origin="synthetic")
    records = repr_privacy.table_records(table, kind="cancer_type",
                                         settings={"variant": variant, "l2": 0.1,
                                                   "cases": LISTED})
    columns = list(repr_privacy.CANCER_PRIVACY_COLUMNS)
    pd.testing.assert_frame_equal(repr_privacy.columns_frame(records, columns),
                                  table[columns].reset_index(drop=True))
    # two methods x two finite epsilons, plus the one non-private reference
    assert len(repr_privacy.distinct(records)) == 5


# --------------------------------------------------------------------------- #
# drug sensitivity
# --------------------------------------------------------------------------- #
def _drug(features, response, *, epsilons, seeds=(0, 1), splits=3):
    split_list = repr_drug.drug_splits(response, splits=splits, test_size=60,
                                        rng=np.random.default_rng(4))
    return repr_drug.drug_experiment(
        {s: features for s in seeds}, response, list(response.columns), epsilons=epsilons,
        splits=split_list, ridge=1.0, base_seed=11, stream="drug/test",
        clipping_weights=repr_drug.clipping_weight_cache(11, n_datasets=3, n_noise=3),
        automatic_drugs=False)


def test_non_private_drug_prediction_of_a_noiseless_linear_response_is_exact(separable):
    rows = _drug(separable["private_latent"], separable["private_response"],
                 epsilons=[math.inf])
    assert rows["spearman"].min() > 0.99
    # a perfect ranking scores well below 1 when σ is the responses' own sd; chance is 0.5
    assert rows["pc_index"].min() > 0.6
    assert (rows["n_test"] == 60).all() and (rows["n_train"] == 180).all()


def test_drug_prediction_through_a_public_pca_is_nearly_exact(separable):
    public = separable["public_expression"]
    private = separable["private_expression"]
    model = repr_fitting.fit_representation("pca", {"dim": 4}, public,
                                          rng=np.random.default_rng(0))
    rows = _drug(model.transform(private), separable["private_response"],
                 epsilons=[math.inf], seeds=(0,))
    assert rows["spearman"].mean() > 0.9


def test_private_drug_prediction_is_noisier_but_informative(separable):
    rows = _drug(separable["private_latent"], separable["private_response"],
                 epsilons=[0.05, 5.0, math.inf], seeds=range(4))
    mean = rows.groupby(rows["epsilon"].fillna(np.inf))["spearman"].mean()
    assert mean[0.05] < mean[5.0] <= mean[np.inf] + 1e-9
    assert mean[5.0] > 0.5


def test_drug_splits_are_disjoint_and_skip_lines_without_responses():
    response = pd.DataFrame({"d1": [1.0, np.nan, 3, 4, 5, 6, 7, 8], "d2": [np.nan] * 2 + [1] * 6})
    splits = repr_drug.drug_splits(response, splits=4, test_size=3, rng=np.random.default_rng(0))
    for train, test in splits:
        assert len(test) == 3 and len(train) == 4 and not set(train) & set(test)
        assert 1 not in set(train) | set(test)  # the line with no response at all
    with pytest.raises(ValueError, match="too few lines"):
        repr_drug.drug_splits(response, splits=1, test_size=6, rng=np.random.default_rng(0))


def test_listed_drugs_fix_the_rows_before_any_response_is_read(tmp_path):
    """Paper mode's GDSC path, on the generated release files (tests/helpers/gdsc.py): every
    drug of the dose-response table stays a column, also one that no private line was
    screened with; listed drugs (repr_transfer.drug.drugs) get their rows whatever the
    responses, with NaN scores and splits = 0 where no split has enough, and their finite ε;
    a listed drug the table lacks stops the job naming the key; drugs read off the private
    table print inf, in the rows and in the records rebuilt from the settings."""
    from types import SimpleNamespace

    from dprepro.data.gdsc import gdsc_tables
    from helpers.gdsc import write_gdsc

    symbols = [f"GENE{i:02d}" for i in range(8)]
    files = write_gdsc(tmp_path / "gdsc", symbols, ["LUAD", "SKCM"], per_type=12, drugs=3)
    screens = pd.read_csv(files["dose_response"])
    few = screens["COSMIC_ID"].isin(sorted(screens["COSMIC_ID"].unique())[:2])
    outside = screens.iloc[:1].assign(COSMIC_ID=9_999_999, DRUG_ID=2099)  # not a private line
    screens = pd.concat([screens[(screens["DRUG_ID"] != 2002) | few], outside])
    screens.to_csv(files["dose_response"], index=False, lineterminator="\n")
    gdsc = gdsc_tables(SimpleNamespace(expression=files["expression"],
                                       dose_response=files["dose_response"],
                                       cell_lines=files["cell_lines"]))
    rng = np.random.default_rng(3)
    public = pd.DataFrame(rng.normal(6, 1, (30, len(symbols))), columns=symbols,
                          index=[f"TCGA-{i:02d}" for i in range(30)])
    tcga = pd.DataFrame({"lineage": ["BRCA", "PRAD"] * 15}, index=public.index)
    data = repr_study_data.real_data(
        gdsc["expression"], public, tcga, public_source="tcga", min_shared_genes=5,
        exclude_private_lines=False, gdsc_cell_lines=gdsc["cell_lines"],
        gdsc_dose_response=gdsc["dose_response"])
    response = data["private_response"]
    # the study's tables name their columns as text (parquet), GDSC's DRUG_IDs included
    assert list(response.columns) == ["2000", "2001", "2002", "2099"]
    assert response["2099"].isna().all() and 0 < response["2002"].notna().sum() < 3
    with pytest.raises(ValueError, match=r"repr_transfer.drug.drugs: \['1234'\] are not"):
        repr_drug.drug_list(response.columns, drugs=[1234])
    drugs = repr_drug.drug_list(response.columns, drugs=[2000, "2002", 2099])
    assert drugs == ["2000", "2002", "2099"]
    assert repr_drug.drug_list(response.columns, max_drugs=2) == ["2000", "2001"]
    splits = repr_drug.drug_splits(response, splits=3, test_size=6,
                                   rng=np.random.default_rng(0))
    X = data["private_expression_line_local"].to_numpy()[:, :3]
    P = data["public_expression"].to_numpy()[:, :3]
    spec = repr_privacy.pipeline("corrected")

    def table(automatic):
        rows = repr_drug.drug_experiment(
            {0: X}, response, drugs, epsilons=[1.0, math.inf], splits=splits, ridge=1.0,
            base_seed=1, stream="drug/test", clipping_weights=lambda n, d, e: (1.0, 1.0),
            xx_noise=spec.xx_noise, mapping=spec.mapping, public={0: P},
            response_prior=(2.0, 2.0), automatic_drugs=automatic)
        # every (drug, split, seed, ε), fitted or not
        assert len(rows) == len(drugs) * len(splits) * 2
        assert set(zip(rows["drug"], rows["split"], strict=True)) == {
            (d, s) for d in drugs for s in range(len(splits))}
        return rows, repr_tables.drug_table(
            [rows.assign(representation="fixed_genes", pipeline="corrected")],
            data_origin="real")

    rows, listed = table(False)
    fitted = rows["drug"] == "2000"
    assert rows.loc[fitted, "spearman"].notna().all()
    assert rows.loc[~fitted, "spearman"].isna().all() and rows.loc[~fitted, "pc_index"].isna().all()
    assert (rows.loc[~fitted, "n_train"] < 3).all()
    assert dict(zip(listed["drug"], listed["splits"], strict=False)) == {
        "2000": 3, "2002": 0, "2099": 0}
    private = listed["epsilon"].notna()
    assert (listed.loc[private, "true_epsilon"] == 1.0).all()
    summary = repr_tables.drug_summary(listed)
    assert (summary["n_drugs"] == 1).all() and summary["spearman_mean"].notna().all()
    columns = list(repr_privacy.DRUG_PRIVACY_COLUMNS)
    for automatic, frame in ((False, listed), (True, table(True)[1])):
        records = repr_privacy.table_records(frame, kind="drug",
                                             settings={"drugs_from_data": automatic})
        got = frame[columns].reset_index(drop=True)
        got["variant"] = got["variant"].fillna("")
        pd.testing.assert_frame_equal(repr_privacy.columns_frame(records, columns), got,
                                      check_dtype=False)
    read_off = frame
    read = read_off.loc[read_off["epsilon"].notna()]
    assert np.isinf(read["true_epsilon"]).all()
    assert read["privacy_note"].str.startswith("NOT DIFFERENTIALLY PRIVATE: the drugs").all()
    with pytest.raises(KeyError, match="drugs_from_data"):
        repr_privacy.table_records(listed, kind="drug", settings={"ridge": 1.0})
    # the corrected drug figure says which: finite per model, or none (drugs read off)
    import matplotlib.pyplot as plt

    for automatic, drawn in ((False, listed), (True, read_off)):
        fig = repr_figures.draw_figure(
            "drug_prediction", repr_tables.drug_summary(drawn), data_origin="real",
            settings={"epsilon": 1.0, "drugs_from_data": automatic}, pipeline="corrected")
        text = " ".join(" ".join(t.get_text().split()) for t in fig.findobj(plt.Text))
        plt.close(fig)
        assert ("drugs were read off the private dose-response table" in text) == automatic
        assert ("per released model" in text) != automatic


def test_clipping_lookup_serves_precomputed_weights_only():
    table = repr_drug.clipping_weight_table(30, [(2, 1.0), (2, 1.0), (3, 0.5)], base_seed=1)
    assert list(table[["d", "epsilon"]].itertuples(index=False, name=None)) == [(2, 1.0),
                                                                                (3, 0.5)]
    lookup = repr_drug.clipping_lookup([table])
    assert lookup(30, 2, 1.0) == tuple(table.loc[0, ["w_x", "w_y"]])
    assert lookup(30, 2, 1.0) == repr_drug.clipping_weight_cache(1)(30, 2, 1.0)
    with pytest.raises(KeyError, match="n=30, d=4"):
        lookup(30, 4, 1.0)


# --------------------------------------------------------------------------- #
# tables
# --------------------------------------------------------------------------- #
def test_cancer_table_contract_and_summary(separable):
    Z = separable["private_latent"]
    lineage = separable["private_lineage"].reset_index(drop=True)
    frames = []
    for method in ("vae", "pca"):
        rows = _cancer(Z, lineage, epsilons=[1.0, math.inf],
                       cases=[("lineage_01", "lineage_02"), ("lineage_01", "lineage_03")])
        rows.insert(0, "representation", method)
        frames.append(rows)
    table = repr_tables.cancer_type_table(frames, data_origin="synthetic")
    assert list(table.columns[:5]) == ["case", "representation", "epsilon", "seed", "accuracy"]
    assert {"mechanism", "variant", "true_epsilon"} <= set(table.columns)
    assert table["representation"].tolist()[:4] == ["pca"] * 4  # study order within a case
    assert table.groupby(["case", "representation"])["epsilon"].apply(
        lambda e: e.isna().tolist() == [False, False, True, True]).all()
    summary = repr_tables.cancer_summary(table)
    assert set(summary["case"]) == {*table["case"], "all"}
    one = table[(table["representation"] == "pca") & (table["epsilon"] == 1.0)]
    row = summary[(summary["representation"] == "pca") & (summary["epsilon"] == 1.0)]
    first = row[row["case"] == one["case"].iloc[0]].iloc[0]
    acc = one[one["case"] == one["case"].iloc[0]]["accuracy"]
    assert first["accuracy_mean"] == pytest.approx(acc.mean())
    assert first["accuracy_se"] == pytest.approx(acc.std(ddof=1) / math.sqrt(len(acc)))
    per_seed = one.groupby("seed")["accuracy"].mean()
    assert row[row["case"] == "all"]["accuracy_mean"].iloc[0] == pytest.approx(per_seed.mean())


def test_drug_table_contract_and_summary(separable):
    rows = _drug(separable["private_latent"], separable["private_response"],
                 epsilons=[1.0, math.inf])
    rows.insert(0, "representation", "pca")
    table = repr_tables.drug_table([rows], data_origin="synthetic")
    assert list(table.columns[:6]) == ["representation", "epsilon", "seed", "drug", "spearman",
                                       "pc_index"]
    assert (table["splits"] == 3).all() and len(table) == 2 * 2 * 3
    one = rows[(rows["seed"] == 1) & (rows["drug"] == "DRUG002") & (rows["epsilon"] == 1.0)]
    got = table[(table["seed"] == 1) & (table["drug"] == "DRUG002") & (table["epsilon"] == 1.0)]
    assert got["spearman"].iloc[0] == pytest.approx(one["spearman"].mean())
    summary = repr_tables.drug_summary(table)
    assert len(summary) == 2 and (summary["n_seeds"] == 2).all()
    exact = summary[summary["mechanism"] == "non_private"].iloc[0]
    assert exact["spearman_se"] == 0.0  # no noise at ε = ∞ and one representation


# --------------------------------------------------------------------------- #
# paper mode: download and preprocessing rules through a local HTTP server
# --------------------------------------------------------------------------- #
@background.register("gdsc_depmap_data")
def _paper_mode_data_rules_run(tmp_path: Path) -> tuple[subprocess.CompletedProcess, str]:
    """The run of test_paper_mode_data_rules_from_a_local_server: the Snakemake process and
    the served expression file's sha256."""
    from helpers.httpserver import serve

    files = {
        "/gdsc1000/Cell_line_RMA_proc_basalExp.txt.zip":
            FIXTURES / "Cell_line_RMA_proc_basalExp.txt.zip",
        "/release/GDSC2_fitted_dose_response_27Oct23.xlsx":
            FIXTURES / "GDSC2_fitted_dose_response.xlsx",
        "/release/Cell_Lines_Details.xlsx": FIXTURES / "Cell_Lines_Details.xlsx",
        "/files/51065489": FIXTURES / "OmicsExpressionProteinCodingGenesTPMLogp1.csv",
        "/files/51065297": FIXTURES / "Model.csv",
    }
    routes = {path: file.read_bytes() for path, file in files.items()}
    # the small configuration with its file cohort's path absolute (the run is elsewhere,
    # and every cohort table on disk is checked before any job)
    config = yaml.safe_load(SMALL.read_text())
    with serve(routes) as srv:
        expr_sha = hashlib.sha256(routes["/gdsc1000/Cell_line_RMA_proc_basalExp.txt.zip"])
        config["repr_transfer"]["min_shared_genes"] = 5
        config["datasets"] |= {
            "gdsc": {"source": "download",
                     "expression_url": srv.url("/gdsc1000/Cell_line_RMA_proc_basalExp.txt.zip"),
                     "expression_sha256": expr_sha.hexdigest(),
                     "dose_response_url":
                         srv.url("/release/GDSC2_fitted_dose_response_27Oct23.xlsx"),
                     "cell_lines_url": srv.url("/release/Cell_Lines_Details.xlsx")},
            "depmap": {"source": "download", "expression_url": srv.url("/files/51065489"),
                       "models_url": srv.url("/files/51065297"),
                       "exclude_private_lines": True},
        }
        configfile = tmp_path / "paper_small.yaml"
        configfile.write_text(yaml.safe_dump(config))
        proc = subprocess.run(
            [sys.executable, "-m", "snakemake", "--snakefile", str(ROOT / "Snakefile"),
             "--directory", str(tmp_path), "--configfile", str(configfile), "--cores", "2",
             "results/data/repr_transfer/private_expression.parquet",
             "results/data/repr_transfer/public_expression.parquet"],
            capture_output=True, text=True, timeout=600)
    return proc, expr_sha.hexdigest()


@pytest.mark.workflow
@pytest.mark.background("gdsc_depmap_data")
def test_paper_mode_data_rules_from_a_local_server(tmp_path):
    proc, expr_sha = background.result("gdsc_depmap_data", tmp_path)
    assert proc.returncode == 0, proc.stderr[-4000:]
    tmp_path = background.folder("gdsc_depmap_data")
    raw = tmp_path / "results" / "data" / "raw"
    record = json.loads((raw / "gdsc" / "expression.txt.zip.download.json").read_text())
    assert record["sha256"] == expr_sha == record["expected_sha256"]
    assert (raw / "gdsc" / "dose_response.xlsx").exists()
    assert (raw / "depmap" / "expression.csv").exists()  # figshare URL without a suffix
    data = tmp_path / "results" / "data" / "repr_transfer"
    private = pd.read_parquet(data / "private_expression.parquet")
    public = pd.read_parquet(data / "public_expression.parquet")
    lineage = pd.read_parquet(data / "private_lineage.parquet")["lineage"]
    response = pd.read_parquet(data / "private_response.parquet")
    assert list(private.columns) == list(public.columns) and private.shape[1] >= 5
    assert len(public) == 2  # DepMap models that are GDSC lines are left out of the public set
    size = pd.read_csv(tmp_path / "results" / "repr_transfer" / "tables" / "public_set.csv")
    row = size.iloc[0]
    assert (row["source"], row["public_lines"], row["private_lines"]) == (
        "depmap", 2, len(private))
    assert row["excluded_by_cosmic_id"] + row["excluded_by_sanger_model_id"] == (
        row["source_lines"] - 2)
    assert bool(row["smaller_than_private"]) == (2 < len(private))
    assert set(lineage.dropna()) == {"BRCA", "MESO", "SCLC"}
    assert response.shape == (len(private), 5)
    sidecar = json.loads((data / "private_expression.parquet.prov.json").read_text())
    assert sidecar["data_origin"] == "real" and sidecar["privacy"]["release"] is False


# --------------------------------------------------------------------------- #
# DP end to end: the corrected pipeline under a neighbouring private data set
# --------------------------------------------------------------------------- #
def _corrected_features(data, private_expression):
    """Line-local mapping, public PCA, features as the corrected pipeline builds them."""
    from dprepro.data.expression import harmonise_genes

    local, public = harmonise_genes(private_expression, data["public_expression"],
                                    min_shared=10, local=True)
    glob, _ = harmonise_genes(private_expression, data["public_expression"], min_shared=10)
    model = repr_fitting.fit_representation("pca", {"dim": 3}, public,
                                          rng=np.random.default_rng(0))
    frame = repr_fitting.representation_frame(
        model.transform(public), model.transform(glob), public.index, glob.index,
        extra_sets={"private_line_local": model.transform(local)}).assign(seed=0)
    spec = repr_privacy.pipeline("corrected")
    features = repr_baselines.method_features("pca", seeds=1, samples=glob.index,
                                          representations={"pca": frame},
                                          private_set=spec.private_set)
    genes = repr_baselines.method_features("fixed_genes", seeds=1, samples=glob.index,
                                       representations={}, public_expression=public,
                                       private_expression=local,
                                       baselines={"fixed_genes": list(public.columns[:5])})
    as_published = repr_baselines.method_features("pca", seeds=1, samples=glob.index,
                                              representations={"pca": frame})
    return features, genes, as_published


def test_neighbouring_private_sets_change_no_other_line_and_stay_within_sensitivity():
    data = synthetic_public_private(np.random.default_rng(8), n_public=80, n_private=30,
                                    n_genes=40, rank=3, n_lineages=2, n_drugs=2)
    private = data["private_expression"]
    neighbour = private.copy()
    neighbour.iloc[0] = np.random.default_rng(9).gamma(1.0, 20.0, size=private.shape[1])
    a, genes_a, paper_a = _corrected_features(data, private)
    b, genes_b, paper_b = _corrected_features(data, neighbour)
    others = np.arange(1, len(private))
    # identical features of every other line before any noise (corrected pipeline)
    np.testing.assert_array_equal(a.private[0][others], b.private[0][others])
    np.testing.assert_array_equal(genes_a.private[0][others], genes_b.private[0][others])
    np.testing.assert_array_equal(a.public[0], b.public[0])
    assert a.scales == b.scales  # the logistic regression's scale is public
    # the paper's global mapping moves them: the bug this pipeline fixes
    assert np.abs(paper_a.private[0][others] - paper_b.private[0][others]).max() > 1e-6

    # released statistics of the corrected SSP: within the bounds its noise is scaled to
    settings = {"response_center": 2.0, "response_scale": 2.0}
    centring = repr_drug.public_centring(repr_privacy.pipeline("corrected"), a, settings)
    P = centring["public"][0]
    x_center, y_center = P.mean(axis=0), centring["response_prior"][0]
    bx = 1.3 * float(np.std(P - x_center, ddof=1))
    by = 0.9 * centring["response_prior"][1]
    y = data["private_response"].iloc[:, 0].to_numpy()
    d = P.shape[1] + 1  # features plus the intercept column
    stats = []
    for features in (a, b):
        # epsilon = inf: the clipped, centred statistics before any noise
        model = SSPLinearRegression(np.inf, clip_x=bx, clip_y=by, x_center=x_center,
                                    y_center=y_center, intercept_column=True).fit(
                                        features.private[0], y)
        stats.append((model.xx_, model.xy_))
    upper = np.triu_indices(d)
    assert np.abs(stats[0][0] - stats[1][0])[upper].sum() <= d * d * bx**2
    assert np.abs(stats[0][1] - stats[1][1]).sum() <= 2 * d * bx * by
    assert np.abs(stats[0][0] - stats[1][0]).max() > 0  # the changed line does count
    # objective perturbation: every design row in the unit ball (CMS11's premise)
    for features in (a, b):
        learner = repr_privacy.cancer_learner(repr_privacy.method_split("pca", 1.0),
                                              variant="cms11", l2=0.1, scale=features.scales[0],
                                              rng=np.random.default_rng(0))
        assert np.linalg.norm(learner.design(features.private[0]), axis=1).max() <= 1 + 1e-12


def test_corrected_rows_state_a_finite_true_epsilon():
    table = pd.DataFrame({"representation": ["pca", "dp_feature_selection", "pca"],
                          "epsilon": [1.0, 2.0, np.nan],
                          "pipeline": ["corrected", "corrected", "corrected"]})
    drug = repr_privacy.table_records(table, kind="drug", settings={"ridge": 1.0,
                                                                       "drugs_from_data": False})
    cancer = repr_privacy.table_records(table, kind="cancer_type",
                                        settings={"variant": "paper", "l2": 0.1,
                                                  "cases": LISTED})
    assert [r.true_epsilon for r in drug[:2]] == [1.0, 2.0]
    assert [r.true_epsilon for r in cancer[:2]] == [1.0, 2.0]
    assert drug[0].mechanism == "ssp_laplace" and cancer[0].extra["variant"] == "cms11"
    paper = repr_privacy.table_records(table.assign(pipeline="as_published"), kind="drug",
                                       settings={"ridge": 1.0,
                                                                       "drugs_from_data": False})
    assert math.isinf(paper[0].true_epsilon) and "Wishart" in paper[0].note
    assert "zero density" in paper[0].note


@pytest.mark.parametrize("name", sorted(repr_privacy.PIPELINES))
@pytest.mark.parametrize("method", ["pca", "dp_feature_selection"])
@pytest.mark.parametrize("epsilon", [0.5, 2.0, math.inf])
def test_learner_terms_are_what_the_learners_that_run_hold(name, method, epsilon):
    """table_records reads a learner's privacy parameters from its terms (no scikit-learn
    import); they must equal the attributes of the learner the experiment builds, and give
    the same record."""
    spec = repr_privacy.pipeline(name)
    split = repr_privacy.method_split(method, epsilon)
    rng = np.random.default_rng(0)
    variant = spec.cancer_variant or "paper"
    cancer = repr_privacy.cancer_learner(split, variant=variant, l2=0.3, rng=rng)
    terms = repr_privacy.cancer_learner_terms(split, variant=variant, l2=0.3)
    assert (terms.epsilon, terms.variant, terms.l2) == (float(cancer.epsilon), cancer.variant,
                                                        float(cancer.l2))
    centres = {"x_center": 0.0, "y_center": 0.0} if spec.public_centring else {}
    drug = repr_privacy.drug_learner(split, ridge=1.0, clip_x=1.0, clip_y=1.0, rng=rng,
                                     xx_noise=spec.xx_noise, **centres)
    dterms = repr_privacy.drug_learner_terms(split, xx_noise=spec.xx_noise,
                                             public_centres=spec.public_centring)
    assert (dterms.epsilon, dterms.xx_noise, dterms.public_centring) == (
        float(drug.epsilon), drug.xx_noise, drug.public_centring)
    for privacy, learner, learner_terms in [(repr_privacy.cancer_privacy, cancer, terms),
                                            (repr_privacy.drug_privacy, drug, dterms)]:
        assert (privacy(split, learner, mapping=spec.mapping).provenance()
                == privacy(split, learner_terms, mapping=spec.mapping).provenance())


# --------------------------------------------------------------------------- #
# hyperparameter search on the paper's objective
# --------------------------------------------------------------------------- #
def _search(data, trials=8, fit_cache=None, **objective):
    from dprepro.studies.repr_transfer import search as repr_search

    public = data["public_expression"]
    lineage = data["public_lineage"]
    return repr_search.search(
        "pca", public, lineage, trials=trials, space={"dim_range": [2, 12]},
        objective={"pairs": 2, "folds": 2, "epsilon": 1.0, "variant": "paper", "l2": 0.1,
                   "pair_folds": 2, "startup_trials": 3, **objective},
        base_seed=5, fit_cache=fit_cache)


def test_pipeline_searches_share_fits_and_score_as_alone(monkeypatch):
    """The searches of both pipelines in one job: each table equals its search run alone, and
    a candidate both propose is fitted once per pair fold (the repr_search job's saving)."""
    data = synthetic_public_private(np.random.default_rng(12), n_public=240, n_private=20,
                                    n_genes=60, rank=3, n_lineages=4, n_drugs=1,
                                    lineage_separation=3.0)
    alone = {v: _search(data, variant=v) for v in ("paper", "cms11")}
    fits = []
    real = repr_fitting.fit_representation

    def counted(representation, spec, public, **kw):
        fits.append(int(spec["dim"]))
        return real(representation, spec, public, **kw)

    monkeypatch.setattr(repr_fitting, "fit_representation", counted)
    cache = {}
    for variant in ("paper", "cms11"):
        pd.testing.assert_frame_equal(_search(data, variant=variant, fit_cache=cache),
                                      alone[variant])
    dims = {int(d) for table in alone.values()
            for d in table.loc[table["duplicate_of"].isna(), "dim"]}
    # PCA is nested: one exact SVD at r_max = 12 per pair fold serves every candidate of
    # both searches (truncated); each candidate's mapping is cached once per pair fold
    assert fits == [12, 12]
    assert len(cache) == 2 + 2 * len(dims)


def test_nested_pca_search_equals_one_fit_per_candidate(monkeypatch):
    """Fitting r_max once per pair fold and truncating gives the same trials, scores and
    selection, to the byte, as fitting every candidate's r (the search before nesting)."""
    from dprepro.studies.repr_transfer import search as repr_search

    data = synthetic_public_private(np.random.default_rng(12), n_public=240, n_private=20,
                                    n_genes=60, rank=3, n_lineages=4, n_drugs=1,
                                    lineage_separation=3.0)
    nested = _search(data)
    monkeypatch.setattr(repr_search, "NESTED", ())
    per_r = _search(data)
    pd.testing.assert_frame_equal(nested, per_r, check_exact=True)
    assert nested["dim"].nunique() > 3 and (nested["status"] == "complete").all()


def test_randomized_pca_search_scores_as_the_exact_one(monkeypatch):
    """The search with PCA's randomized solver at paper mode's settings (nested: one r_max
    fit per pair fold, seeded by the search's fit stream) proposes and scores as with the
    exact SVD, even at r up to 12 of 60 genes where all but 3 components are noise: its
    components agree far below what moves a DP prediction across the boundary. (With
    scikit-learn's own p = 10, q = 7 a candidate deep in the noise scores differently.)"""
    from dprepro.studies.repr_transfer import search as repr_search

    data = synthetic_public_private(np.random.default_rng(12), n_public=240, n_private=20,
                                    n_genes=60, rank=3, n_lineages=4, n_drugs=1,
                                    lineage_separation=3.0)
    exact = _search(data)
    fits = []
    real = repr_fitting.fit_representation
    monkeypatch.setattr(repr_fitting, "fit_representation",
                        lambda *a, **k: fits.append(k.get("pca_options")) or real(*a, **k))
    randomized = repr_search.search(
        "pca", data["public_expression"], data["public_lineage"], trials=8,
        space={"dim_range": [2, 12]},
        objective={"pairs": 2, "folds": 2, "epsilon": 1.0, "variant": "paper", "l2": 0.1,
                   "pair_folds": 2, "startup_trials": 3}, base_seed=5,
        pca_options={"svd_solver": "randomized", "oversamples": 40, "power_iterations": 10})
    assert fits == [{"svd_solver": "randomized", "oversamples": 40, "power_iterations": 10}] * 2
    pd.testing.assert_frame_equal(randomized, exact)


def test_vae_trials_over_their_budget_are_failed_rows_never_selected():
    from dprepro.studies.repr_transfer import search as repr_search

    data = synthetic_public_private(np.random.default_rng(12), n_public=240, n_private=20,
                                    n_genes=60, rank=3, n_lineages=4, n_drugs=1,
                                    lineage_separation=3.0)
    table = repr_search.search(
        "vae", data["public_expression"], data["public_lineage"], trials=3,
        space={"dim_range": [2, 6], "learning_rate_range": [1e-3, 1e-2], "hidden_layers": [1],
               "width_multipliers": [2]},
        objective={"pairs": 2, "folds": 2, "epsilon": 1.0, "variant": "paper", "l2": 0.1,
                   "pair_folds": 2, "startup_trials": 2},
        base_seed=5, vae_options={"max_epochs": 50, "patience": 3, "device": "cpu"},
        trial_seconds=1e-9)
    # every trial stopped in its first fit: a row with no score, never a job overrun
    assert len(table) == 3 and (table["status"] == "over_budget").all()
    assert table["score"].isna().all() and (table["epochs"] == 0).all()
    with pytest.raises(ValueError, match="every trial .* failed"):
        repr_fitting.select_hyperparameters(table)
    # a failed trial is skipped by the selection even where its (absent) score would win
    mixed = pd.DataFrame({"representation": ["vae"] * 3, "candidate": ["t0", "t1", "t2"],
                          "dim": [2, 4, 6], "score": [np.nan, 0.7, 0.8],
                          "score_se": [np.nan, 0.01, 0.01],
                          "status": ["over_budget", "complete", "complete"]})
    chosen = repr_fitting.select_hyperparameters(mixed)
    assert chosen.loc[chosen["selected"], "dim"].tolist() == [6]
    with pytest.raises(ValueError, match="completed candidate has no score"):
        repr_fitting.select_hyperparameters(mixed.assign(status="complete"))


def test_search_is_deterministic_lists_every_trial_and_holds_out_the_validation_lineages():
    data = synthetic_public_private(np.random.default_rng(12), n_public=240, n_private=20,
                                    n_genes=60, rank=3, n_lineages=4, n_drugs=1,
                                    lineage_separation=3.0)
    first, second = _search(data), _search(data)
    pd.testing.assert_frame_equal(first, second)
    assert list(first["trial"]) == list(range(len(first))) and first["score"].between(0, 1).all()
    # duplicates do not count: 8 distinct candidates are scored
    assert first["duplicate_of"].isna().sum() == 8
    counts = data["public_lineage"].value_counts()
    top = list(counts.index[:3])
    # pairs (top0, top1) and (top0, top2), one per pair fold: each fold's fit leaves out its
    # own pair's two lineages only
    fits = [int(counts.drop([top[0], top[i]]).sum()) for i in (1, 2)]
    assert (first["n_fit"] == min(fits)).all() and (first["pair_folds"] == 2).all()
    assert (first["n_pairs"] == 2).all()
    # the first 3 trials are TPE's random start, labelled so
    assert list(first["sampler"]) == ["stratified_startup"] * 3 + ["tpe"] * (len(first) - 3)
    # repeated parameters reuse the earlier score, and the same candidate scores the same
    dup = first[first["duplicate_of"].notna()]
    for _, row in dup.iterrows():
        earlier = first.loc[first["trial"] == int(row["duplicate_of"])].iloc[0]
        assert earlier["dim"] == row["dim"] and earlier["score"] == row["score"]
        assert pd.isna(earlier["duplicate_of"])
    assert first.groupby("dim")["score"].nunique().max() == 1
    assert first.drop_duplicates("dim")["duplicate_of"].isna().all()
    table = repr_fitting.select_hyperparameters(first)
    best = table[table["selected"]].iloc[0]
    top = first.loc[first["score"].idxmax()]
    assert best["score"] >= top["score"] - top["score_se"]
    assert best["dim"] == first.loc[first["score"] >= top["score"] - top["score_se"], "dim"].min()
    # a search that never leaves the random start
    assert (_search(data, trials=2)["sampler"] == "stratified_startup").all()


def test_selection_takes_the_smallest_dim_within_one_se_of_the_best():
    candidates = pd.DataFrame({
        "representation": ["pca"] * 4 + ["vae"] * 2,
        "candidate": ["t0", "t1", "t2", "t3", "t0", "t1"],
        "dim": [15, 3, 8, 2, 15, 3], "score": [0.85, 0.845, 0.84, 0.70, 0.85, 0.80],
        "score_se": [0.013, 0.1, 0.01, 0.2, 0.013, 0.1]})
    table = repr_fitting.select_hyperparameters(candidates)
    chosen = table[table["selected"]].set_index("representation")["dim"]
    # pca: best 0.85 +- 0.013 -> r = 3 (0.845) and 8 (0.84) are within one SE, 2 (0.70) is not
    assert chosen["pca"] == 3
    # vae: 0.80 < 0.85 - 0.013, so the best stands
    assert chosen["vae"] == 15


def test_search_score_averages_noise_draws():
    from dprepro.studies.repr_transfer import search as repr_search

    rng = np.random.default_rng(0)
    labels = np.array(["a"] * 60 + ["b"] * 60, dtype=object)
    Z = np.r_[rng.normal(-0.5, 1, (60, 2)), rng.normal(0.5, 1, (60, 2))]
    kwargs = {"epsilon": 1.0, "folds": 2, "variant": "paper", "l2": 0.1, "base_seed": 1}

    def scores(draws):
        return np.array([repr_search.dp_pair_score(Z, Z, labels, [("a", "b")], stream=f"s{i}",
                                                   noise_draws=draws, **kwargs)["score"]
                         for i in range(12)])

    one, five = scores(1), scores(5)
    # draw 0 is the one-draw stream, so the one-draw score is unchanged by the key's default
    assert repr_search.dp_pair_score(Z, Z, labels, [("a", "b")], stream="s0",
                                     **kwargs)["score"] == one[0]
    # averaging five independent draws shrinks the spread between noise streams
    assert five.std() < 0.8 * one.std()
    with pytest.raises(ValueError, match="noise_draws"):
        repr_search.dp_pair_score(Z, Z, labels, [("a", "b")], stream="s", noise_draws=0,
                                  **kwargs)


def test_search_pairs_listed_rotated_and_checked():
    from dprepro.studies.repr_transfer import search as repr_search

    lineage = pd.Series(["a"] * 5 + ["b"] * 5 + ["c"] * 5 + ["d"] * 1)
    listed = [["a", "b"], ["c", "x"], ["b", "c"]]
    # "x" has no public lines (a held-out private type): that pair is dropped
    assert repr_search.validation_pairs(lineage, pairs=2, min_count=2, listed=listed) == [
        ("a", "b"), ("b", "c")]
    with pytest.raises(ValueError, match="fewer than 2 public lines"):
        repr_search.validation_pairs(lineage, pairs=2, min_count=2, listed=[["a", "d"]])
    pairs = [("a", "b"), ("c", "d"), ("e", "f")]
    assert repr_search.pair_groups(pairs, 2) == [[("a", "b"), ("e", "f")], [("c", "d")]]
    with pytest.raises(ValueError, match="pair_folds"):
        repr_search.pair_groups(pairs, 4)


def test_hyperparameters_are_selected_per_pipeline_search():
    candidates = pd.DataFrame({
        "pipeline": ["corrected", "corrected", "as_published", "as_published"],
        "representation": ["pca"] * 4, "candidate": ["t0", "t1", "t0", "t1"],
        "dim": [4, 8, 4, 8], "score": [0.9, 0.8, 0.7, 0.8]})
    table = repr_fitting.select_hyperparameters(candidates)
    assert list(table["pipeline"]) == ["as_published"] * 2 + ["corrected"] * 2
    assert repr_fitting.selected_spec(table, "pca", "as_published") == {"dim": 8}
    assert repr_fitting.selected_spec(table, "pca", "corrected") == {"dim": 4}
    assert repr_drug.method_dim("pca", hyperparameters=table, baselines={},
                                 pipeline="corrected") == 4


def test_equal_dim_control_is_pca_at_the_vaes_selected_r(separable):
    candidates = pd.DataFrame({
        "pipeline": ["corrected"] * 4, "representation": ["pca", "pca", "vae", "vae"],
        "candidate": ["t0", "t1", "t0", "t1"], "dim": [6, 3, 2, 5],
        "score": [0.9, 0.5, 0.4, 0.8]})
    table = repr_fitting.select_hyperparameters(candidates)
    # PCA selects r = 6, the VAE r = 5: the control takes the VAE's r, fitted as PCA
    assert repr_fitting.selected_spec(table, "pca_vae_dim", "corrected") == {"dim": 5}
    assert repr_drug.method_dim("pca_vae_dim", hyperparameters=table, baselines={},
                                 pipeline="corrected") == 5
    assert repr_common.fitted_as("pca_vae_dim") == "pca"
    assert repr_common.fitted_as("vae") == "vae"
    public = separable["public_expression"]
    private = separable["private_expression"]
    frames = {rep: repr_fitting.seed_representations(
        repr_common.fitted_as(rep), repr_fitting.selected_spec(table, rep, "corrected"), public,
        {"private": private}, seeds=2, base_seed=1, stream=f"fit/{rep}")
        for rep in ("pca", "pca_vae_dim")}
    control = frames["pca_vae_dim"]
    five = [f"z{j:02d}" for j in range(1, 6)]
    assert [c for c in control.columns if c.startswith("z")] == five
    # exact PCA is nested: the control's features are PCA's first five components
    full = frames["pca"]
    np.testing.assert_allclose(control[five].to_numpy(), full[five].to_numpy(), atol=1e-8)
    assert not np.allclose(full["z06"], 0)
    # the experiments' noise: a control with PCA's own r is PCA (the same release, its
    # draws); at another r it draws its own, so two models never share noise
    assert repr_fitting.noise_stream("pca_vae_dim", frames) == "pca_vae_dim"
    assert repr_fitting.noise_stream("pca_vae_dim", {**frames, "pca_vae_dim": full}) == "pca"
    # the same r but not the same numbers (another machine's fit): two releases, two streams
    nudged = full.assign(z01=full["z01"] + 1e-12)
    assert repr_fitting.noise_stream("pca_vae_dim", {**frames, "pca_vae_dim": nudged}) \
        == "pca_vae_dim"
    assert repr_fitting.noise_stream("vae", frames) == "vae"


def test_dp_pair_score_separates_informative_from_useless_features():
    from dprepro.studies.repr_transfer import search as repr_search

    rng = np.random.default_rng(0)
    labels = np.array(["a"] * 100 + ["b"] * 100, dtype=object)
    good = np.r_[rng.normal(-2, 1, (100, 2)), rng.normal(2, 1, (100, 2))]
    noise = rng.normal(size=(200, 2))
    kwargs = {"epsilon": 1.0, "folds": 2, "variant": "paper", "l2": 0.1, "base_seed": 1,
              "stream": "t"}
    assert repr_search.dp_pair_score(good, good, labels, [("a", "b")], **kwargs)["score"] > 0.85
    assert repr_search.dp_pair_score(noise, noise, labels, [("a", "b")], **kwargs)["score"] < 0.7


def _claims_table(n_units, seeds=4):
    rows = []
    for seed in range(seeds):
        for pipeline in ("as_published", "corrected"):
            for rep, acc in (("pca", 0.9), ("vae", 0.89), ("fixed_genes", 0.6),
                             ("dp_feature_selection", 0.7)):
                # corrected: the fixed genes win, so the claim must fail there
                value = acc if pipeline == "as_published" else 1.5 - acc
                for u in range(n_units):
                    for eps, shift in ((0.5, -0.2), (1.0, 0.0), (np.nan, 0.01)):
                        v = value + shift + 0.01 * ((seed * 7 + u) % 3)
                        rows.append({"case": f"c{u}", "drug": f"d{u}", "representation": rep,
                                     "pipeline": pipeline, "epsilon": eps, "seed": seed,
                                     "accuracy": v, "spearman": v})
    return pd.DataFrame(rows)


def _split_rows(table, splits=6):
    """Per-split drug rows whose mean over splits is the table's value (offsets sum to 0)."""
    offsets = 0.002 * (np.arange(splits) - (splits - 1) / 2)
    return pd.concat([table.assign(split=k, spearman=table["spearman"] + offsets[k])
                      for k in range(splits)], ignore_index=True)


def test_claims_verdicts_follow_the_paired_differences():
    from dprepro.studies.repr_transfer import claims as repr_claims

    table = _claims_table(6)
    claims = repr_claims.repr_claims(table, table, cancer_epsilon=1.0, drug_epsilon=1.0,
                                     pipelines=["as_published", "corrected"], base_seed=3,
                                     drug_splits=_split_rows(table))
    verdict = claims.set_index("claim_id")["verdict"]
    assert verdict["repr.as_published.cancer.pca_beats_fixed_genes"] == "holds"
    assert verdict["repr.corrected.cancer.pca_beats_fixed_genes"] == "fails"
    assert verdict["repr.as_published.drug.pca_beats_dp_feature_selection"] == "holds"
    assert verdict["repr.as_published.drug.vae_about_pca"] == "holds"
    assert verdict["repr.as_published.cancer.pca_rises_with_epsilon"] == "holds"
    assert verdict["repr.as_published.cancer.vae_approaches_non_private"] == "holds"
    # the VAE - PCA gap is the same on both tasks here: no dependence on the task
    assert verdict["repr.as_published.vae_vs_pca_depends_on_task"] == "fails"
    assert verdict["repr.as_published.cancer.vae_beats_pca"] == "fails"
    rows = claims.set_index("claim_id")
    # every estimate lies inside its own interval (no bootstrap of an absolute value)
    assert ((rows["ci_lower"] <= rows["reproduced_value"])
            & (rows["reproduced_value"] <= rows["ci_upper"])).all()
    about = rows.loc["repr.as_published.cancer.vae_about_pca"]
    assert about["source"].startswith("beyond the paper (ours")
    assert about["claim_origin"] == "beyond"
    # the paper's statement is the task dependence; each task's VAE-vs-PCA row is a
    # component of it, ours
    paper = rows.loc["repr.as_published.vae_vs_pca_depends_on_task"]
    assert paper["claim_origin"] == "paper" and "ours" not in paper["source"]
    assert rows.loc["repr.as_published.cancer.vae_beats_pca", "claim_origin"] == "beyond"
    assert rows.loc["repr.as_published.cancer.pca_beats_fixed_genes", "claim_origin"] == "paper"
    trends = rows.loc["repr.as_published.cancer.pca_rises_with_epsilon"]
    assert trends["claim_origin"] == "beyond" and trends["source"].startswith("beyond")
    # beyond rows do not imply the paper states them; the paper's baselines comparison
    # states no ε, so the row says the ε is ours
    assert trends["source"] == "beyond the paper: ours, read off the paper's figures"
    per_task = rows.loc["repr.as_published.cancer.vae_beats_pca", "source"]
    assert "On some tasks that certainly seems to be the case" in per_task
    assert per_task.startswith("beyond the paper: ours")
    assert rows.loc["repr.as_published.cancer.pca_beats_fixed_genes", "claim"].endswith(
        "at ε = 1 (the paper states no ε; ours) (as_published pipeline)")
    assert "repr.as_published.cancer.random_projection_beats_fixed_genes" not in verdict
    assert claims["claim_id"].str.startswith("repr.").all()
    bootstrapped = ~claims["claim_id"].str.endswith("depends_on_task")
    assert claims.loc[bootstrapped, "note"].str.contains(
        "cluster bootstrap over 6 cases|crossed bootstrap over 6 drugs x 6 splits x 4").all()
    assert (claims["paper_value"].fillna("") == "").all()
    assert claims["note"].str.contains("figures only").all()


def test_equal_dim_claim_uses_its_own_stream_and_tests_vae_against_the_control():
    from dprepro.studies.repr_transfer import claims as repr_claims

    table = _claims_table(6)
    kwargs = {"cancer_epsilon": 1.0, "drug_epsilon": 1.0, "pipelines": ["as_published"],
              "base_seed": 3}
    without = repr_claims.repr_claims(table, table, drug_splits=_split_rows(table), **kwargs)
    # the control: 0.03 above the VAE on the cancer task, 0.03 below on the drug task
    control = table[table["representation"] == "vae"].assign(representation="pca_vae_dim")
    cancer = pd.concat([table, control.assign(accuracy=control["accuracy"] + 0.03)])
    drug = pd.concat([table, control.assign(spearman=control["spearman"] - 0.03)])
    claims = repr_claims.repr_claims(cancer, drug, drug_splits=_split_rows(drug), **kwargs)
    rows = claims.set_index("claim_id")
    cancer_row = rows.loc["repr.as_published.cancer.vae_beats_pca_at_equal_dim"]
    drug_row = rows.loc["repr.as_published.drug.vae_beats_pca_at_equal_dim"]
    assert cancer_row["verdict"] == "fails" and drug_row["verdict"] == "holds"
    assert cancer_row["reproduced_value"] == pytest.approx(-0.03)
    assert drug_row["reproduced_value"] == pytest.approx(0.03)
    assert cancer_row["source"].startswith("beyond the paper (ours")
    assert cancer_row["claim_origin"] == "beyond" and "VAE's" in cancer_row["note"]
    # the effect of r alone: the control minus PCA (the control is the VAE + 0.03 on the
    # cancer task, PCA is 0.01 above the VAE: +0.02)
    r_effect = rows.loc["repr.as_published.cancer.pca_at_vae_dim_beats_pca"]
    assert r_effect["reproduced_value"] == pytest.approx(0.02)
    assert r_effect["statistic"].endswith("pca_vae_dim - pca")
    # every other row is what the table without the control gave, to the bit, but for the
    # notes that point at the new rows
    new = claims["claim_id"].str.endswith(("at_equal_dim", "pca_at_vae_dim_beats_pca"))
    others = claims[~new].reset_index(drop=True)
    pd.testing.assert_frame_equal(others.drop(columns="note"), without.drop(columns="note"))
    pointed = others["note"] != without["note"]
    assert set(others.loc[pointed, "claim_id"]) == {
        "repr.as_published.cancer.vae_beats_pca", "repr.as_published.drug.vae_beats_pca",
        "repr.as_published.vae_vs_pca_depends_on_task"}
    assert others.loc[pointed, "note"].str.contains("vae_beats_pca_at_equal_dim").all()
    assert "control is PCA itself" not in cancer_row["note"]
    # at equal r the control is PCA row for row: the row repeats vae_beats_pca's estimate
    # and interval, says so, and there is no r-effect row
    same = pd.concat([table, table[table["representation"] == "pca"].assign(
        representation="pca_vae_dim")])
    rows = repr_claims.repr_claims(same, same, drug_splits=_split_rows(same),
                                   **kwargs).set_index("claim_id")
    for task in ("cancer", "drug"):
        row = rows.loc[f"repr.as_published.{task}.vae_beats_pca_at_equal_dim"]
        beats = rows.loc[f"repr.as_published.{task}.vae_beats_pca"]
        assert "control is PCA itself" in row["note"]
        columns = ["reproduced_value", "ci_lower", "ci_upper", "verdict", "criterion"]
        assert row[columns].tolist() == beats[columns].tolist()
        assert f"repr.as_published.{task}.pca_at_vae_dim_beats_pca" not in rows.index


def test_task_dependence_holds_only_when_one_task_holds_and_the_other_fails():
    from dprepro.studies.repr_transfer import claims as repr_claims

    table = _claims_table(6)
    # the drug task: the VAE 0.05 above PCA; the cancer task keeps it 0.01 below
    drug = table.copy()
    drug.loc[drug["representation"] == "vae", "spearman"] += 0.06
    claims = repr_claims.repr_claims(table, drug, cancer_epsilon=1.0, drug_epsilon=1.0,
                                     pipelines=["as_published"], base_seed=3,
                                     drug_splits=_split_rows(drug))
    rows = claims.set_index("claim_id")
    assert rows.loc["repr.as_published.drug.vae_beats_pca", "verdict"] == "holds"
    assert rows.loc["repr.as_published.cancer.vae_beats_pca", "verdict"] == "fails"
    assert rows.loc["repr.as_published.vae_vs_pca_depends_on_task", "verdict"] == "holds"
    # the row reads each task's vae_about_pca too (the cancer task: 0.01 below PCA)
    assert rows.loc["repr.as_published.cancer.vae_about_pca", "verdict"] == "holds"
    assert "cancer fails, vae_about_pca holds: not beneficial" in rows.loc[
        "repr.as_published.vae_vs_pca_depends_on_task", "note"]
    cancer = table.copy()
    cancer.loc[cancer["representation"] == "vae", "accuracy"] += 0.06
    both = repr_claims.repr_claims(cancer, drug, cancer_epsilon=1.0, drug_epsilon=1.0,
                                   pipelines=["as_published"], base_seed=3,
                                   drug_splits=_split_rows(drug))
    assert both.set_index("claim_id").loc[
        "repr.as_published.vae_vs_pca_depends_on_task", "verdict"] == "fails"
    # an inconclusive task leaves the dependence inconclusive
    row = repr_claims.task_dependence_row({"verdict": "holds"}, {"verdict": "inconclusive"},
                                          pipeline="p")
    assert row["verdict"] == "inconclusive" and "drug inconclusive" in row["note"]


def test_task_dependence_counts_an_about_equal_task_as_not_beneficial():
    """The paper: whether the VAE is beneficial "depends on the task. On some tasks that
    certainly seems to be the case": one task where vae_beats_pca holds, the other where
    it fails or vae_about_pca holds (no better than PCA)."""
    from dprepro.studies.repr_transfer import claims as repr_claims

    def dependence(cancer, drug, cancer_about=None, drug_about=None):
        return repr_claims.task_dependence_row(
            {"verdict": cancer}, {"verdict": drug}, pipeline="p",
            cancer_about=None if cancer_about is None else {"verdict": cancer_about},
            drug_about=None if drug_about is None else {"verdict": drug_about})

    # holds / about equal (vae_beats_pca inconclusive, vae_about_pca holds) -> holds
    row = dependence("holds", "inconclusive", drug_about="holds")
    assert row["verdict"] == "holds"
    assert (row["reproduced_value"], row["ci_lower"], row["ci_upper"]) == (1, 1, 1)
    assert "drug inconclusive, vae_about_pca holds: not beneficial" in row["note"]
    # the same with the tasks swapped, and holds / fails as before
    assert dependence("inconclusive", "holds", cancer_about="holds")["verdict"] == "holds"
    assert dependence("holds", "fails")["verdict"] == "holds"
    # holds / holds -> fails, also where one gain lies within the margin (about holds)
    assert dependence("holds", "holds")["verdict"] == "fails"
    assert dependence("holds", "holds", drug_about="holds")["verdict"] == "fails"
    # both not beneficial -> fails
    assert dependence("fails", "inconclusive", drug_about="holds")["verdict"] == "fails"
    # holds / inconclusive (about not shown) -> inconclusive
    assert dependence("holds", "inconclusive")["verdict"] == "inconclusive"
    assert dependence("holds", "inconclusive", drug_about="inconclusive")[
        "verdict"] == "inconclusive"
    # a task whose vae_beats_pca is untestable leaves the dependence untestable
    row = dependence("untestable", "holds", cancer_about="untestable")
    assert row["verdict"] == "untestable" and row["note"].startswith("untestable: the cancer")


def test_every_claim_row_is_declared_with_its_origin_and_source():
    """Each row maps to its declaration (CLAIMS.match), whose origin and source it carries
    unless it applies the paper's statement beyond the paper (then it says so)."""
    from dprepro.claims.registry import CLAIMS
    from dprepro.claims.table import BEYOND
    from dprepro.studies.repr_transfer import claims as repr_claims

    table = _claims_table(6)
    pca = table[table["representation"] == "pca"]
    # every method a declaration compares, each a little apart so every control has a row
    extra = [pca.assign(representation=method, accuracy=pca["accuracy"] + shift,
                        spearman=pca["spearman"] + shift)
             for method, shift in (("random_projection", -0.1), ("pca_vae_dim", 0.02),
                                   ("supervised_vae", 0.03), ("vae_svae_dim", 0.01))]
    both = pd.concat([table, *extra], ignore_index=True)
    claims = repr_claims.repr_claims(both, both, cancer_epsilon=1.0, drug_epsilon=1.0,
                                     pipelines=["as_published", "corrected"], base_seed=3,
                                     drug_splits=_split_rows(both), data_origin="synthetic",
                                     representations={("as_published", "pca"):
                                                      _representation(0.0)})
    matched, beyond = set(), []
    for row in claims.itertuples(index=False):
        declaration = CLAIMS.match(row.claim_id)
        assert declaration.study == "repr_transfer" and declaration.group == ""
        matched.add(declaration.id)
        if row.claim_origin == declaration.origin:
            assert row.source == declaration.source, row.claim_id
        else:
            assert (declaration.origin, row.claim_origin) == ("paper", "beyond"), row.claim_id
            assert row.source == f"{BEYOND} ({declaration.source})"
            beyond.append(row.claim_id)
    assert matched == {d.id for d in CLAIMS.declarations("repr_transfer", group="")}
    # only random projection, which the paper does not run, takes a paper statement beyond it
    assert beyond and all(".random_projection_beats_" in claim_id for claim_id in beyond)
    assert (claims["data_origin"] == "synthetic").all()


def test_lineage_bootstrap_rebuilds_the_cases_from_resampled_lineages():
    from dprepro.studies.repr_transfer import claims as repr_claims

    lineages = ["A", "B", "C", "D", "E"]
    cases = [f"{a} vs {b}" for i, a in enumerate(lineages) for b in lineages[i + 1:]]
    # lineage A carries the whole effect: the 4 cases with A are 1, the other 6 are 0
    D = np.array([[1.0 if "A" in c.split(" vs ") else 0.0] for c in cases])
    out = repr_claims.lineage_bootstrap(D, cases, rng=np.random.default_rng(5), resamples=400)
    # oracle: draw lineage copies, rebuild every case whose two lineages were drawn (once per
    # pair of copies), average
    draws = np.random.default_rng(5).integers(0, 5, size=(400, 5))
    expected = []
    for drawn in draws:
        names = [lineages[i] for i in drawn]
        rebuilt = [D[cases.index(f"{a} vs {b}"), 0] for a in names for b in names
                   if f"{a} vs {b}" in cases]
        if rebuilt:
            expected.append(np.mean(rebuilt))
    np.testing.assert_allclose(out, expected)
    # dependent cases: resampling them as independent understates the spread
    naive = repr_claims.cluster_bootstrap(D, rng=np.random.default_rng(5), resamples=400)
    assert np.std(out) > 1.3 * np.std(naive)
    with pytest.raises(ValueError, match="a vs b"):
        repr_claims.lineage_bootstrap(D, ["x"] * len(cases), rng=np.random.default_rng(5))


def test_claims_count_lineages_and_mark_drug_verdicts_descriptive():
    from dprepro.studies.repr_transfer import claims as repr_claims

    table = _claims_table(6)
    names = ["L1 vs L2", "L1 vs L3", "L1 vs L4", "L2 vs L3", "L2 vs L4", "L3 vs L4"]
    table["case"] = table["case"].map({f"c{u}": n for u, n in enumerate(names)})
    claims = repr_claims.repr_claims(table, table, cancer_epsilon=1.0, drug_epsilon=1.0,
                                     pipelines=["as_published"], base_seed=3)
    cancer = claims[claims["claim_id"].str.contains(r"\.cancer\.")]
    drug = claims[claims["claim_id"].str.contains(r"\.drug\.")]
    # 6 cases but only 4 independent lineages: below the minimum units, so the configured
    # data cannot decide (untestable, not inconclusive)
    assert (cancer["verdict"] == "untestable").all()
    assert cancer["note"].str.contains("4 lineages \\(the 6 cases rebuilt").all()
    # no per-split rows: the drug verdicts are descriptive and capped at inconclusive
    assert drug["note"].str.contains("descriptive, capped at inconclusive").all()
    assert (drug["verdict"] == "inconclusive").all()
    assert (drug["ci_lower"] > 0).any()  # the drugs-only interval alone would say "holds"
    assert not cancer["note"].str.contains("descriptive").any()
    with_lr = repr_claims.repr_claims(table, table, cancer_epsilon=1.0, drug_epsilon=1.0,
                                      pipelines=["as_published"], base_seed=3,
                                      vae_learning_rates=[0.001, 0.01])
    vae = with_lr["claim_id"].str.contains("vae")
    # stated after the verdict's reason, which opens the note
    assert with_lr.loc[vae, "note"].str.contains("VAE learning rate searched in [0.001, 0.01]"
                                                 " (the authors: [1e-06, 0.01])",
                                                 regex=False).all()
    untestable = with_lr.loc[vae][with_lr.loc[vae, "verdict"] == "untestable"]
    assert len(untestable) and untestable["note"].str.startswith("untestable: ").all()
    assert not with_lr.loc[~vae, "note"].str.contains("learning rate").any()


def test_claims_are_untestable_below_the_minimum_units():
    from dprepro.studies.repr_transfer import claims as repr_claims

    table = _claims_table(repr_claims.MIN_UNITS - 1)
    claims = repr_claims.repr_claims(table, table, cancer_epsilon=1.0, drug_epsilon=1.0,
                                     pipelines=["as_published"], base_seed=3)
    assert (claims["verdict"] == "untestable").all()
    bootstrapped = ~claims["claim_id"].str.endswith("depends_on_task")
    assert claims.loc[bootstrapped, "note"].str.startswith(
        "untestable: 4 independent units").all()
    # a task-dependence row built on untestable task rows is untestable, with the reason
    dependence = claims.set_index("claim_id").loc["repr.as_published.vae_vs_pca_depends_on_task"]
    assert dependence["note"].startswith("untestable: the cancer and drug task")
    # the interval itself would have said "holds"; the criterion states the minimum
    row = claims.set_index("claim_id").loc["repr.as_published.cancer.pca_beats_fixed_genes"]
    assert row["ci_lower"] > 0
    assert row["criterion"] == f"> 0; at least {repr_claims.MIN_UNITS} independent units"


def test_drug_claims_resample_the_splits_shared_by_all_drugs():
    from dprepro.studies.repr_transfer import claims as repr_claims

    rng = np.random.default_rng(11)
    drugs, splits, seeds = 12, 10, 3
    # PCA - fixed genes: a split effect shared by every drug (sd 0.1, mean 0.03) plus tiny
    # drug noise. Averaged over splits every drug shows ~ +0.03 with almost no spread, so
    # resampling drugs as independent says "holds"; the 10 splits cannot exclude 0.
    split_effect = rng.normal(0.0, 0.1, splits)
    split_effect += 0.03 - split_effect.mean()
    rows = []
    for d in range(drugs):
        for k in range(splits):
            for seed in range(seeds):
                for rep, base in (("pca", 0.3), ("fixed_genes", 0.3)):
                    extra = split_effect[k] + rng.normal(0, 1e-3) if rep == "pca" else 0.0
                    rows.append({"drug": f"d{d}", "split": k, "seed": seed, "epsilon": 1.0,
                                 "representation": rep, "pipeline": "as_published",
                                 "spearman": base + extra})
    per_split = pd.DataFrame(rows)
    table = (per_split.groupby(["drug", "seed", "epsilon", "representation", "pipeline"])
             ["spearman"].mean().reset_index())
    cancer = _claims_table(6)
    cid = "repr.as_published.drug.pca_beats_fixed_genes"
    naive = repr_claims.cluster_bootstrap(
        table.pivot_table(index=["drug", "seed"], columns="representation", values="spearman")
        .eval("pca - fixed_genes").unstack("seed").to_numpy(),
        rng=np.random.default_rng(0), resamples=2000)
    assert np.quantile(naive, 0.025) > 0  # drugs as independent: a firm "holds"
    claims = repr_claims.repr_claims(cancer, table, cancer_epsilon=1.0, drug_epsilon=1.0,
                                     pipelines=["as_published"], base_seed=3,
                                     drug_splits=per_split).set_index("claim_id")
    row = claims.loc[cid]
    assert row["verdict"] == "inconclusive"
    assert row["ci_lower"] < 0 < row["ci_upper"]
    assert abs(row["reproduced_value"] - 0.03) < 1e-3
    assert "crossed bootstrap over 12 drugs x 10 splits x 3" in row["note"]
    # the crossed bootstrap's spread: sd of the mean of 10 split effects (sd ~0.1) ~ 0.03
    C = (per_split[per_split["representation"] == "pca"].set_index(["drug", "split", "seed"])
         ["spearman"] - 0.3).unstack(["split", "seed"]).to_numpy().reshape(drugs, splits, seeds)
    stats = repr_claims.crossed_bootstrap(C, rng=np.random.default_rng(2), resamples=4000)
    expected = split_effect.std(ddof=0) / np.sqrt(splits)
    assert 0.75 * expected < stats.std() < 1.3 * expected
    # a stronger effect against the same split noise holds
    strong = per_split.assign(spearman=per_split["spearman"]
                              + 0.2 * (per_split["representation"] == "pca"))
    strong_table = (strong.groupby(["drug", "seed", "epsilon", "representation", "pipeline"])
                    ["spearman"].mean().reset_index())
    firm = repr_claims.repr_claims(cancer, strong_table, cancer_epsilon=1.0, drug_epsilon=1.0,
                                   pipelines=["as_published"], base_seed=3,
                                   drug_splits=strong).set_index("claim_id")
    assert firm.loc[cid, "verdict"] == "holds"


def test_cluster_bootstrap_spreads_with_the_units_not_only_the_seeds():
    from dprepro.studies.repr_transfer import claims as repr_claims

    rng = np.random.default_rng(0)
    # units differ a lot, seeds barely: a seeds-only bootstrap would give a tiny interval
    D = rng.normal(0, 1, size=(30, 1)) + rng.normal(0, 1e-3, size=(30, 3))
    stats = repr_claims.cluster_bootstrap(D, rng=np.random.default_rng(1), resamples=4000)
    # the mean of 30 unit effects with sd 1 has sd 1/sqrt(30) = 0.18
    assert 0.13 < stats.std() < 0.24
    assert abs(stats.mean() - D.mean()) < 0.02


def test_low_expression_filter_and_small_public_set_warning():
    rng = np.random.default_rng(0)
    genes = [f"G{i}" for i in range(12)]
    gdsc = pd.DataFrame(rng.normal(5, 1, (6, 12)), index=[101, 102, 103, 104, 105, 106],
                        columns=genes)
    depmap = pd.DataFrame(rng.normal(5, 1, (4, 12)), index=["M1", "M2", "M3", "M4"],
                          columns=genes)
    depmap[["G0", "G1"]] = 0.1  # low public expression
    models = pd.DataFrame({"ModelID": ["M1", "M2", "M3", "M4"],
                           "COSMICID": [101.0, np.nan, 999.0, np.nan],
                           "lineage": ["A", "B", "A", "B"]})
    catalogue = pd.DataFrame({"TCGA_LABEL": ["X"] * 6}, index=pd.Index(gdsc.index,
                                                                      name="COSMIC_ID"))
    with pytest.warns(UserWarning, match="public set .3 DepMap models.* smaller"):
        out = repr_study_data.real_data(gdsc, depmap, models, min_shared_genes=5,
                                        exclude_private_lines=True, min_public_median=1.0,
                                        gdsc_cell_lines=catalogue)
    assert list(out["public_expression"].index) == ["M2", "M3", "M4"]
    assert "G0" not in out["public_expression"].columns
    assert out["public_expression"].shape[1] == 10


def test_depmap_overlap_matched_by_cosmic_and_sanger_model_id():
    rng = np.random.default_rng(0)
    genes = [f"G{i}" for i in range(8)]
    gdsc = pd.DataFrame(rng.normal(5, 1, (3, 8)), index=[101, 102, 103], columns=genes)
    depmap = pd.DataFrame(rng.normal(5, 1, (5, 8)), index=[f"M{i}" for i in range(1, 6)],
                          columns=genes)
    # M1: same COSMIC id; M2: no COSMIC id but GDSC line 102's Sanger id; M3: a different
    # COSMIC id but line 103's Sanger id; M4, M5: not GDSC lines
    models = pd.DataFrame({"ModelID": depmap.index,
                           "COSMICID": [101.0, np.nan, 555.0, np.nan, 999.0],
                           "SangerModelID": ["SIDM1", "SIDM2", "SIDM3", None, "SIDM9"],
                           "lineage": ["A", "B", "A", "B", "A"]})
    cell_lines = pd.DataFrame({"TCGA_LABEL": ["X", "Y", "Z"],
                               "SANGER_MODEL_ID": ["SIDM1", "SIDM2", "SIDM3"]},
                              index=pd.Index([101, 102, 103], name="COSMIC_ID"))
    with pytest.warns(UserWarning, match="smaller than the private set"):
        out = repr_study_data.real_data(gdsc, depmap, models, min_shared_genes=5,
                                   exclude_private_lines=True, gdsc_cell_lines=cell_lines)
    assert list(out["public_expression"].index) == ["M4", "M5"]
    table = out["public_set"].iloc[0]
    assert (table["excluded_by_cosmic_id"], table["excluded_by_sanger_model_id"]) == (1, 2)
    assert (table["source_lines"], table["public_lines"], table["private_lines"]) == (5, 2, 3)
    assert table["smaller_than_private"]
    # COSMIC ids alone would keep the two lines known only by their Sanger ids
    cosmic_only = repr_study_data.real_data(
        gdsc, depmap, models, min_shared_genes=5, exclude_private_lines=True,
        gdsc_cell_lines=cell_lines.drop(columns="SANGER_MODEL_ID"))
    assert list(cosmic_only["public_expression"].index) == ["M2", "M3", "M4", "M5"]
    # without GDSC's catalogue only the private ids could be excluded: refused
    with pytest.raises(ValueError, match="catalogue of cell lines.*depend on the private"):
        repr_study_data.real_data(gdsc, depmap, models, min_shared_genes=5,
                                  exclude_private_lines=True)


def test_the_depmap_public_set_does_not_depend_on_which_lines_are_private():
    """Issue 39: the public set was DepMap minus the *private* lines' ids, so two private
    samples differing in one line (1003 vs 5000) gave different public sets and PCA bases.
    It is now DepMap minus GDSC's whole public catalogue: the same for both."""
    rng = np.random.default_rng(3)
    genes = [f"G{i}" for i in range(8)]
    catalogue_ids = [1001, 1002, 1003, 5000, 6000]
    catalogue = pd.DataFrame({"TCGA_LABEL": list("VWXYZ"),
                              "SANGER_MODEL_ID": [f"SIDM{i}" for i in catalogue_ids]},
                             index=pd.Index(catalogue_ids, name="COSMIC_ID"))
    # DepMap copies of 1003 and 5000, one of 6000 known by its Sanger id only, two others
    depmap = pd.DataFrame(rng.normal(5, 1, (5, 8)), columns=genes,
                          index=["M1003", "M5000", "M6000", "M7", "M8"])
    models = pd.DataFrame({"ModelID": depmap.index,
                           "COSMICID": [1003.0, 5000.0, np.nan, 7.0, np.nan],
                           "SangerModelID": ["SIDM1003", "SIDM5000", "SIDM6000", None, "X"],
                           "lineage": list("ABABA")})
    publics = []
    for private_ids in ([1001, 1002, 5000], [1001, 1002, 1003]):
        gdsc = pd.DataFrame(rng.normal(5, 1, (3, 8)), index=private_ids, columns=genes)
        with pytest.warns(UserWarning, match="smaller than the private set"):
            out = repr_study_data.real_data(gdsc, depmap, models, min_shared_genes=5,
                                            exclude_private_lines=True,
                                            gdsc_cell_lines=catalogue)
        publics.append(out["public_expression"])
        table = out["public_set"].iloc[0]
        assert (table["excluded_by_cosmic_id"], table["excluded_by_sanger_model_id"]) == (2, 1)
    pd.testing.assert_frame_equal(*publics)
    assert list(publics[0].index) == ["M7", "M8"]
    # a private line outside the catalogue is not excluded one by one (that would make
    # the public set depend on it): said in the log
    gdsc = pd.DataFrame(rng.normal(5, 1, (3, 8)), index=[1001, 1002, 7], columns=genes)
    with pytest.warns(UserWarning) as caught:
        out = repr_study_data.real_data(gdsc, depmap, models, min_shared_genes=5,
                                        exclude_private_lines=True, gdsc_cell_lines=catalogue)
    assert any("1 private GDSC line(s) are not in GDSC's catalogue" in str(w.message)
               for w in caught)
    pd.testing.assert_frame_equal(out["public_expression"], publics[0])


def test_gdsc_caches_carry_the_sanger_model_ids():
    from types import SimpleNamespace

    from dprepro.data.gdsc import gdsc_tables, read_gdsc_sanger_ids

    response = FIXTURES / "GDSC2_fitted_dose_response.csv"
    raw = pd.read_csv(response)
    ids = read_gdsc_sanger_ids(response)
    expected = raw.drop_duplicates("COSMIC_ID").set_index("COSMIC_ID")["SANGER_MODEL_ID"]
    assert ids.to_dict() == expected.sort_index().to_dict()
    tables = gdsc_tables(SimpleNamespace(
        expression=FIXTURES / "Cell_line_RMA_proc_basalExp.txt.zip", dose_response=response,
        cell_lines=FIXTURES / "Cell_Lines_Details.csv"))
    lines = tables["cell_lines"]
    known = lines.index.isin(expected.index)
    assert known.any()
    assert (lines.loc[known, "SANGER_MODEL_ID"] == expected.reindex(lines.index[known])).all()


def test_tcga_public_set_holds_out_the_cases_cancer_types():
    rng = np.random.default_rng(1)
    genes = [f"G{i}" for i in range(8)]
    gdsc = pd.DataFrame(rng.normal(5, 1, (3, 8)), index=[101, 102, 103], columns=genes)
    samples = [f"TCGA-{i}" for i in range(6)]
    tcga = pd.DataFrame(rng.normal(5, 1, (6, 8)), index=samples, columns=genes)
    lineage = pd.DataFrame({"lineage": ["BRCA", "LUAD", "COAD", "READ", "SKCM", "SKCM"]},
                           index=pd.Index(samples, name="sample"))
    with pytest.warns(UserWarning, match="held out 3 TCGA samples"):
        out = repr_study_data.real_data(gdsc, tcga, lineage, min_shared_genes=5,
                                   exclude_private_lines=True, public_source="tcga",
                                   holdout=["BRCA", "COAD", "READ"])
    assert list(out["public_expression"].index) == ["TCGA-1", "TCGA-4", "TCGA-5"]
    assert out["public_lineage"]["lineage"].tolist() == ["LUAD", "SKCM", "SKCM"]
    with pytest.raises(ValueError, match="public_source must be"):
        repr_study_data.real_data(gdsc, tcga, lineage, min_shared_genes=5,
                             exclude_private_lines=True, public_source="gtex")


def test_startup_dims_are_stratum_midpoints_over_the_range():
    from dprepro.studies.repr_transfer.search import startup_dims

    assert startup_dims(2, 20, 3) == [5, 11, 17]
    assert startup_dims(2, 20, 1) == [11]
    assert startup_dims(2, 3, 4) == [2, 3]  # a narrow range: no duplicates
    assert startup_dims(2, 20, 0) == []
    with pytest.raises(ValueError):
        startup_dims(5, 2, 3)


def test_figure_footers_say_pca_seeds_carry_noise_only():
    """PCA is fitted once (deterministic): its '± SE over seeds' is the DP noise's only, and
    every repr figure's footer says so."""
    import matplotlib.pyplot as plt

    table = _claims_table(3).assign(
        case=lambda t: t["case"].map({"c0": "A vs B", "c1": "A vs C", "c2": "B vs C"}),
        mechanism="m", variant="cms11", true_epsilon=1.0, majority_accuracy=0.5,
        pc_index=0.6)
    summaries = {"cancer_type_summary": repr_tables.cancer_summary(table),
                 "drug_summary": repr_tables.drug_summary(table)}
    for name, spec in repr_figures.FIGURES.items():
        for pipeline in ("as_published", "corrected"):
            fig = repr_figures.draw_figure(name, summaries[spec["table"]],
                                         settings={"epsilon": 1.0, "variant": "paper",
                                                   "cases": LISTED, "drugs_from_data": False},
                                         data_origin="synthetic", pipeline=pipeline)
            # footers are wrapped: compare words, not line breaks
            text = " ".join(" ".join(t.get_text().split()) for t in fig.findobj(plt.Text))
            plt.close(fig)
            assert "SE over" in text and "PCA is deterministic" in text, (name, text)


def test_figures_label_each_representation_with_its_r_and_hide_a_control_that_is_pca():
    """The equal-dimension control: drawn (brown squares, 'PCA at the VAE's r (r = 3)') where
    its r differs from PCA's; left out, with a footer saying why, where it is PCA itself."""
    import matplotlib.pyplot as plt

    base = _claims_table(3).assign(
        case=lambda t: t["case"].map({"c0": "A vs B", "c1": "A vs C", "c2": "B vs C"}),
        mechanism="m", variant="cms11", true_epsilon=1.0, majority_accuracy=0.5,
        pc_index=0.6)
    base["dim"] = base["representation"].map({"pca": 5, "vae": 3, "fixed_genes": 10,
                                              "dp_feature_selection": 10})
    pca = base[base["representation"] == "pca"]
    differs = pd.concat([base, pca.assign(representation="pca_vae_dim", dim=3,
                                          accuracy=pca["accuracy"] - 0.1)])
    same = pd.concat([base, pca.assign(representation="pca_vae_dim")])
    summary = repr_tables.drug_summary(differs)
    assert summary.groupby("representation")["dim"].first().to_dict() == {
        "pca": 5, "vae": 3, "pca_vae_dim": 3, "fixed_genes": 10, "dp_feature_selection": 10}

    def texts(table):
        fig = repr_figures.draw_figure("cancer_type_accuracy", repr_tables.cancer_summary(table),
                                     settings={"epsilon": 1.0, "variant": "paper",
                                               "cases": LISTED},
                                     data_origin="synthetic", pipeline="corrected")
        words = " ".join(" ".join(t.get_text().split()) for t in fig.findobj(plt.Text))
        plt.close(fig)
        return words

    drawn, hidden = texts(differs), texts(same)
    assert "PCA (r = 5)" in drawn and "VAE (r = 3)" in drawn
    assert "PCA at the VAE's r (r = 3)" in drawn and "PCA itself here" not in drawn
    assert "PCA at the VAE's r (r = 5)" not in hidden and "PCA itself here" in hidden


def test_equal_dim_rows_decide_equal_r_from_the_dimensions_not_the_values():
    """Equal values at different r still test the effect of r; at equal r whose fits differ
    in the last bits there is no effect of r to test (referee: a 1e-15 'holds')."""
    from dprepro.studies.repr_transfer import claims as repr_claims

    table = _claims_table(6).assign(dim=lambda t: t["representation"].map(
        {"pca": 5, "vae": 3, "fixed_genes": 10, "dp_feature_selection": 10}))
    pca = table[table["representation"] == "pca"]
    kwargs = {"cancer_epsilon": 1.0, "drug_epsilon": 1.0, "pipelines": ["as_published"],
              "base_seed": 3}

    def claims(control):
        both = pd.concat([table, control])
        return repr_claims.repr_claims(both, both, drug_splits=_split_rows(both),
                                       **kwargs).set_index("claim_id")

    # another r, the same values: not "PCA itself", and the r-effect row is written
    rows = claims(pca.assign(representation="pca_vae_dim", dim=3))
    row = rows.loc["repr.as_published.cancer.vae_beats_pca_at_equal_dim"]
    assert "PCA itself" not in row["note"]
    assert rows.loc["repr.as_published.cancer.pca_at_vae_dim_beats_pca",
                    "reproduced_value"] == 0.0
    # PCA's own r, values 1e-15 apart: no r-effect row, and the note says why
    rows = claims(pca.assign(representation="pca_vae_dim",
                             accuracy=pca["accuracy"] + 1e-15, spearman=pca["spearman"] + 1e-15))
    assert "repr.as_published.cancer.pca_at_vae_dim_beats_pca" not in rows.index
    assert "not bit-identical" in rows.loc["repr.as_published.cancer.vae_beats_pca_at_equal_dim",
                                           "note"]


def test_the_joint_models_cancer_rows_are_untestable_only_at_the_measured_ceiling():
    """Issue 38: "linearly separable" made the joint model's cancer rows untestable on any
    synthetic data, though at ε = 1 the accuracies were 0.79-0.87. The reason must come
    from the accuracies measured at the row's ε, and say them."""
    from dprepro.studies.repr_transfer import claims as repr_claims

    table = _claims_table(6)
    vae = table[table["representation"] == "vae"]
    joint = [vae.assign(representation=method, accuracy=vae["accuracy"] + shift,
                        spearman=vae["spearman"] + shift)
             for method, shift in (("supervised_vae", 0.03), ("vae_svae_dim", 0.01))]
    both = pd.concat([table, *joint], ignore_index=True)
    ids = [f"repr.as_published.cancer.{name}" for name in (
        "supervised_vae_beats_vae", "supervised_vae_beats_vae_at_equal_dim",
        "vae_svae_dim_beats_vae")]

    def rows(cancer):
        return repr_claims.repr_claims(
            cancer, both, cancer_epsilon=1.0, drug_epsilon=1.0, pipelines=["as_published"],
            base_seed=3, drug_splits=_split_rows(both),
            data_origin="synthetic").set_index("claim_id").loc[ids]

    # synthetic, accuracies about 0.9-0.93 at ε = 1: room to add, so testable
    room = rows(both)
    assert not room["note"].str.contains("ceiling|separable").any()
    assert (room["verdict"] != "untestable").all()
    # every compared method at accuracy >= 0.99 at ε = 1: untestable, naming the accuracies
    top = both.assign(accuracy=np.where(both["representation"].isin(
        ["vae", "supervised_vae", "vae_svae_dim"]), 0.995, both["accuracy"]))
    capped = rows(top)
    assert (capped["verdict"] == "untestable").all()
    assert capped["note"].str.contains("at its ceiling at ε = 1").all()
    assert capped["note"].str.contains("supervised_vae 0.995").all()


def _representation(shift, spread=1.0, seeds=2, n_pub=120, n_priv=80, dim=3, seed=0):
    """A representation table: public lines N(0, I), private N(shift, spread² I)."""
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(seeds):
        for name, n, centre, scale in (("public", n_pub, 0.0, 1.0),
                                       ("private", n_priv, shift, spread)):
            z = centre + scale * rng.normal(size=(n, dim))
            rows.append(pd.DataFrame({"set": name, "sample": [f"{name}{i}" for i in range(n)],
                                      **{f"z{k + 1:02d}": z[:, k] for k in range(dim)},
                                      "seed": s}))
    return pd.concat(rows, ignore_index=True)


def test_the_papers_public_private_assumption_is_read_off_the_learned_map():
    """Issue 38: 'distributed similarly enough that using the same mapping ... is
    reasonable' had no row. The private lines' mean squared distance from the public
    centroid over the public lines' own: E = (dim·spread² + |shift|²) / dim."""
    from dprepro.studies.repr_transfer import claims as repr_claims
    from dprepro.studies.repr_transfer.similarity_claims import spread_ratio

    big = _representation(shift=1.0, seeds=1, n_pub=20000, n_priv=20000)
    value, _ = spread_ratio(big)
    assert value == pytest.approx((3 + 3 * 1.0) / 3, rel=0.03)  # shift 1 in each of 3 axes
    # by hand on a tiny table
    tiny = pd.DataFrame({"set": ["public", "public", "private"], "sample": ["a", "b", "c"],
                         "z01": [0.0, 2.0, 4.0], "seed": 0})
    assert spread_ratio(tiny)[0] == pytest.approx(9.0)  # centre 1: (3²) / ((1² + 1²)/2)
    table = _claims_table(6)
    reps = {("as_published", "pca"): _representation(0.0),
            ("as_published", "vae"): _representation(1.5),
            ("corrected", "pca"): _representation(0.0, spread=0.3)}
    rows = repr_claims.repr_claims(table, table, cancer_epsilon=1.0, drug_epsilon=1.0,
                                   pipelines=["as_published", "corrected"], base_seed=3,
                                   drug_splits=_split_rows(table),
                                   representations=reps).set_index("claim_id")
    alike = rows.loc["repr.as_published.pca_public_private_similar"]
    assert alike["verdict"] == "holds" and alike["ci_lower"] < 1 < alike["ci_upper"]
    assert "Section 2" in alike["source"] and alike["claim_origin"] == "paper"
    assert rows.loc["repr.as_published.vae_public_private_similar", "verdict"] == "fails"
    # a map that squeezes the private lines (spread 0.3: ratio 0.09) is not 'similar'
    assert rows.loc["repr.corrected.pca_public_private_similar", "verdict"] == "fails"
    assert "repr.corrected.vae_public_private_similar" not in rows.index
    # the other rows are those of a run without the representations
    without = repr_claims.repr_claims(table, table, cancer_epsilon=1.0, drug_epsilon=1.0,
                                      pipelines=["as_published", "corrected"], base_seed=3,
                                      drug_splits=_split_rows(table)).set_index("claim_id")
    pd.testing.assert_frame_equal(rows.loc[without.index], without)
