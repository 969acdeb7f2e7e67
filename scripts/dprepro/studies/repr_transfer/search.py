r"""Hyperparameter search of the ``repr_transfer`` representations on the paper's objective.

Niinimäki et al. (2019) chose the representation size (and the VAE's learning
rate, depth and width) by Bayesian optimisation of the accuracy of **DP
logistic regression at ε = 1 on held-out public cancer-type pairs**. Here, on
public data only:

* validation pairs: a fixed list of public lineage pairs (the authors used
  16), or the ``pairs`` most frequent pairs of the most frequent public
  lineages (:func:`validation_pairs`);
* the pairs are rotated into ``pair_folds`` groups (the authors: 2-fold over
  pairs, :func:`pair_groups`); per trial and group, the representation is
  fitted on the public lines *outside* the group's lineages (they play the
  private side, as in the paper) and the group's lines are mapped through it;
* the trial's score is the mean over all pairs of the stratified
  ``folds``-fold CV accuracy (the authors: 10) of
  :class:`dprepro.learners.logistic_regression.DPLogisticRegression` at ``epsilon`` with the
  pipeline's objective-perturbation variant (scale = the fit lines' mean row
  norm), averaged over ``noise_draws`` independent noise draws per pair (one
  draw left the ranking of r to a single noise realisation);
* the search is optuna's TPE sampler seeded from the study's streams with an
  explicit number of random start-up trials (each row says which sampler drew
  it), run sequentially, so the same configuration gives the same trials,
  scores and selection whatever the number of cores; a trial that repeats an
  earlier one's parameters reuses its score and does not count: the sampler
  proposes again until ``trials`` distinct candidates are scored (or the
  space, or 10 × ``trials`` proposals, is exhausted).

Every trial is a row of ``hyperparameters.csv``; the selected candidate is
the smallest ``dim`` whose score is within one standard error (over pairs)
of the best score (the one-SE rule, Hastie et al. 2009, §7.10;
:func:`dprepro.studies.repr_transfer.fitting.select_hyperparameters`).
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from dprepro.studies.repr_transfer.common import (
    STUDY,
    SUPERVISED,
    VAE_MODELS,
    stream_int,
    stream_rng,
)

__all__ = ["auxiliary_labels", "dp_pair_score", "pair_groups", "search", "trial_spec",
           "validation_pairs"]


def validation_pairs(lineage: pd.Series, *, pairs: int, min_count: int,
                     listed: Sequence | None = None) -> list[tuple[str, str]]:
    """The validation pairs of public lineages.

    ``listed`` (the configuration's fixed list, as the authors' 16 pairs): those
    pairs, except pairs with a lineage absent from the public data (held out
    because a case's private cancer type, as the authors dropped the pairs
    of the private types); a present lineage with fewer than ``min_count``
    public lines is an error. Otherwise the first ``pairs`` pairs (by
    frequency) of public lineages with >= ``min_count`` lines.
    """
    counts = pd.Series(lineage).dropna().value_counts()
    if listed:
        out = [(str(a), str(b)) for a, b in listed
               if counts.get(str(a), 0) > 0 and counts.get(str(b), 0) > 0]
        short = sorted({x for pair in out for x in pair if counts.get(x, 0) < min_count})
        if not out:
            raise ValueError("repr_transfer.selection.pair_list: no listed pair has both "
                             f"lineages in the public data; lineage counts: {counts.to_dict()}")
        if short:
            raise ValueError(f"repr_transfer.selection.pair_list: lineage(s) {short} have fewer "
                             f"than {min_count} public lines; lineage counts: "
                             f"{counts.to_dict()}")
        return out
    order = [str(k) for k, v in sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0])))
             if v >= min_count]
    out = list(itertools.combinations(order, 2))[:pairs]
    if len(out) < pairs:
        raise ValueError(f"the search needs {pairs} pair(s) of public lineages with >= "
                         f"{min_count} lines each; lineage counts: {counts.to_dict()}")
    return out


def pair_groups(pairs: Sequence[tuple[str, str]], pair_folds: int) -> list[list]:
    """Rotate the validation pairs into ``pair_folds`` groups (pair ``i`` in group ``i mod K``).

    Each group is scored once per trial with the representation fitted on the
    public lines outside that group's lineages (the authors' 2-fold over
    pairs), so every pair is scored by a representation that never saw it.
    """
    if isinstance(pair_folds, bool) or int(pair_folds) < 1 or int(pair_folds) > len(pairs):
        raise ValueError(f"repr_transfer.selection.pair_folds must be in [1, {len(pairs)}] "
                         f"(the number of validation pairs), got {pair_folds!r}")
    return [list(pairs[g::int(pair_folds)]) for g in range(int(pair_folds))]


def trial_spec(trial, representation: str, space: Mapping) -> dict:
    """Draw one candidate from ``space`` through an optuna ``trial``.

    ``space``: ``dim_range`` [low, high] (integers); for the VAE and the joint
    model also ``learning_rate_range`` (log scale), ``hidden_layers`` and
    ``width_multipliers`` (categorical choices); for the joint model also
    ``supervised_weight_range`` (λ, log scale; 0 is not in it: λ = 0 is the VAE).
    """
    low, high = (int(v) for v in space["dim_range"])
    spec = {"dim": trial.suggest_int("dim", low, high)}
    if representation in VAE_MODELS:
        lr_low, lr_high = (float(v) for v in space["learning_rate_range"])
        spec.update(
            learning_rate=trial.suggest_float("learning_rate", lr_low, lr_high, log=True),
            hidden_layers=int(trial.suggest_categorical(
                "hidden_layers", [int(h) for h in space["hidden_layers"]])),
            width_multiplier=int(trial.suggest_categorical(
                "width_multiplier", [int(w) for w in space["width_multipliers"]])))
    if representation in SUPERVISED:
        w_low, w_high = (float(v) for v in space["supervised_weight_range"])
        spec["supervised_weight"] = trial.suggest_float("supervised_weight", w_low, w_high,
                                                        log=True)
    return spec


def auxiliary_labels(lineage: pd.Series, rows, held) -> pd.Series:
    """The joint model's auxiliary target on the fit ``rows``: their public lineage, with
    every lineage in ``held`` (the pair fold's validation lineages) unlabelled (NaN).

    The search scores a candidate on held-out public lineage pairs; were their
    labels in the cross-entropy, the representation would be trained on the
    answer it is scored on. The fit rows already leave those lineages out; this
    also keeps their labels out if they did not.
    """
    labels = pd.Series(lineage).reindex(rows)
    return labels.mask(labels.isin(set(held)))


#: Searches run on another representation's streams: the joint model's on the VAE's.
PAIRED_SEARCH = {"supervised_vae": "vae"}


def search_stream(representation: str) -> str:
    """The name of the streams (sampler seed, fits, DP noise) ``representation``'s search
    uses: the joint model's are the VAE's (:data:`PAIRED_SEARCH`), so both searches draw the
    same start-up candidates and fit them from the same stream (only λ differs)."""
    return PAIRED_SEARCH.get(representation, representation)


def startup_weights(low: float, high: float, count: int, *,
                    rng: np.random.Generator) -> list[float]:
    """The joint model's start-up λ: the log-scale midpoints of ``count`` equal strata of
    ``[low, high]``, in a seeded random order (not tied to the increasing start-up r)."""
    low, high = float(low), float(high)
    if count < 0 or not 0 < low <= high:
        raise ValueError(f"need count >= 0 and 0 < low <= high, got {count}, [{low}, {high}]")
    logs = [math.log10(low) + (math.log10(high) - math.log10(low)) * (i + 0.5) / max(count, 1)
            for i in range(count)]
    return [float(10 ** logs[i]) for i in rng.permutation(count)]


def startup_dims(low: int, high: int, count: int) -> list[int]:
    """Start-up dimensions spread over ``[low, high]``: the midpoints of ``count`` equal strata.

    TPE's random start-up can draw the same r for every start-up trial (with
    the default seed all three VAE start-up trials drew r = 15), leaving the
    search one TPE proposal to explore r; stratifying r costs no extra fit.
    Duplicates (a range narrower than ``count``) are dropped.
    """
    if count < 0 or high < low:
        raise ValueError(f"need count >= 0 and low <= high, got {count}, [{low}, {high}]")
    dims = [int(round(low + (high - low) * (i + 0.5) / count)) for i in range(count)]
    return list(dict.fromkeys(dims))


def dp_pair_score(Z_fit: np.ndarray, Z_val: np.ndarray, labels: Sequence, pairs, *,
                  epsilon: float, folds: int, variant: str, l2: float, base_seed: int,
                  stream: str, noise_draws: int = 1) -> dict:
    """Mean over ``pairs`` of the CV accuracy of DP logistic regression on ``Z_val``.

    ``Z_fit`` (the lines the representation was fitted on) only gives the
    public scale (mean row norm). Folds: ``StratifiedKFold(folds,
    shuffle=True)`` seeded per pair; a pair's accuracy is the mean over
    ``noise_draws`` runs of the CV, run ``d`` with noise from stream
    ``<stream>/<pair>`` (``d = 0``) or ``<stream>/<pair>/draw<d>``.
    """
    if isinstance(noise_draws, bool) or int(noise_draws) < 1:
        raise ValueError(f"noise_draws must be a positive integer, got {noise_draws!r}")
    from sklearn.model_selection import StratifiedKFold

    from dprepro.learners.logistic_regression import DPLogisticRegression, PendingFits
    from dprepro.studies.repr_transfer.baselines import mean_row_norm

    labels = np.asarray(labels, dtype=object)
    scale = mean_row_norm(Z_fit)
    draws = int(noise_draws) if math.isfinite(epsilon) else 1
    # every fit queued (each pair's noise drawn fold after fold, as a loop of fits would)
    # and minimised together
    pending, tests, sizes = PendingFits(), [], []
    for a, b in pairs:
        idx = np.flatnonzero(np.isin(labels, [a, b]))
        y = (labels[idx] == b).astype(int)
        skf = StratifiedKFold(n_splits=folds, shuffle=True,
                              random_state=stream_int(base_seed, f"search/folds/{a} vs {b}"))
        splits = list(skf.split(np.zeros(len(idx)), y))
        for d in range(draws):
            rng = stream_rng(base_seed, f"{stream}/{a} vs {b}" + (f"/draw{d}" if d else ""))
            for train, test in splits:
                model = DPLogisticRegression(epsilon, l2=l2, scale=scale, variant=variant,
                                             rng=rng if math.isfinite(epsilon) else None)
                pending.add(model, Z_val[idx[train]], y[train])
                tests.append((len(sizes), Z_val[idx[test]], y[test]))
        sizes.append(len(idx) * draws)
    correct = np.zeros(len(sizes))
    for model, (pair, Z_test, y_test) in zip(pending.solve(), tests, strict=True):
        correct[pair] += int(np.sum(model.predict(Z_test) == y_test))
    accs = correct / np.asarray(sizes, dtype=float)
    return {"score": float(accs.mean()),
            "score_se": float(accs.std(ddof=1) / math.sqrt(len(accs))) if len(accs) > 1 else 0.0,
            "n_pairs": len(accs), "accuracies": [float(a) for a in accs]}


#: Representations whose fit is nested in r (PCA, exact or randomized): fitted once at r_max per
#: pair fold and truncated.
NESTED = ("pca",)


def search(representation: str, public: pd.DataFrame, lineage: pd.Series, *, trials: int,
           space: Mapping, objective: Mapping, base_seed: int, vae_options: Mapping | None = None,
           log=None, fit_cache: dict | None = None,
           trial_seconds: float | None = None,
           pca_options: Mapping | None = None) -> pd.DataFrame:
    """Run the seeded optuna search of one representation; one row per trial.

    ``objective``: ``pairs``, ``folds``, ``epsilon``, ``variant``, ``l2`` and
    optionally ``pair_list`` (fixed validation pairs), ``pair_folds``
    (rotation of the pairs, default 1), ``startup_trials`` (TPE's random
    start, default 10 = optuna's) and ``noise_draws`` (default 1). A trial
    whose parameters equal an earlier trial's reuses its score
    (``duplicate_of``), nothing is refitted, and does not count toward
    ``trials``: proposals continue until ``trials`` distinct candidates are
    scored, at most 10 × ``trials`` proposals (a small space can run out).
    ``fit_cache``: a dict shared by the searches of the pipelines of one
    representation on the same public data and ``vae_options`` (the caller's
    contract). The fits do not depend on the objective (common random
    numbers: stream ``search/<representation>/fit`` for every trial) and the
    sampler's seed does not name the pipeline, so the random start-up trials
    of every pipeline propose the same candidates; a candidate's fitted
    representation of each pair fold is kept there and reused, not refitted
    (same values: the fit is a deterministic function of the spec, the fit
    rows and the stream). PCA (:data:`NESTED`) is fitted once per pair fold at
    the largest r the fold allows and truncated to each candidate's r
    (:func:`dprepro.representations.pca.truncate_pca`: with the exact SVD the
    same components, to the bit; with the randomized solver the leading
    components of the r_max sketch), so the cache key of that fit has no
    ``dim``. ``pca_options``: PCA's solver (as
    :func:`dprepro.studies.repr_transfer.fitting.fit_representation`).
    ``trial_seconds``: a wall-clock budget of a trial's VAE fits together
    (None: none). A trial whose fits overrun it is recorded with ``status =
    over_budget`` and no score, and is pruned in the optuna study (TPE treats
    its region as poor); the other trials are ``complete``. Which trials
    overrun depends on the machine, so only a search without a budget (the
    default) is reproducible to the byte.
    Columns: ``representation``, ``candidate`` (``t<trial>``), ``trial``,
    ``dim``, ``learning_rate``, ``hidden_layers``, ``width_multiplier``,
    ``hidden_width``, ``score`` (the objective), ``score_se`` (over pairs),
    ``n_pairs``, ``n_fit`` (smallest fit set over pair folds), ``epochs``,
    ``best_epoch`` (first pair fold), ``validation_pairs``, ``pair_folds``,
    ``sampler`` (``stratified_startup`` or ``tpe``), ``duplicate_of``,
    ``status`` (``complete`` or ``over_budget``); the joint model's rows also
    ``supervised_weight`` (λ). The joint model (``supervised_vae``) is fitted
    with the fit rows' public lineages as its auxiliary target, every lineage of
    the pair fold's validation pairs unlabelled (:func:`auxiliary_labels`).
    """
    import optuna

    from dprepro.representations.base import FitBudgetExceeded
    from dprepro.representations.pca import truncate_pca
    from dprepro.representations.vae_size import vae_hidden_width
    from dprepro.studies.repr_transfer.fitting import fit_representation

    if isinstance(trials, bool) or int(trials) < 1:
        raise ValueError(f"trials must be a positive integer, got {trials!r}")
    startup = int(objective.get("startup_trials", 10))
    if startup < 0:
        raise ValueError(f"startup_trials must be >= 0, got {startup}")
    lineage = lineage.reindex(public.index)
    pairs = validation_pairs(lineage, pairs=int(objective["pairs"]),
                             min_count=int(objective["folds"]),
                             listed=objective.get("pair_list") or None)
    groups = pair_groups(pairs, int(objective.get("pair_folds", 1)))
    high = int(space["dim_range"][1])
    folds = []
    for group in groups:
        held = sorted({name for pair in group for name in pair})
        val = lineage.isin(held).to_numpy()
        fit_rows = public.loc[~val]
        if len(fit_rows) < max(2 * high, 10):
            raise ValueError(f"holding out the validation lineages {held} leaves {len(fit_rows)} "
                             f"public lines to fit on; need >= {max(2 * high, 10)} "
                             f"(dim_range upper end {high})")
        folds.append((group, fit_rows, public.loc[val], lineage[val].to_numpy(dtype=object)))
    # the joint model's auxiliary labels of each pair fold: no held-out lineage among them
    fit_labels = [auxiliary_labels(lineage, fit_rows.index,
                                   {name for pair in group for name in pair})
                  for group, fit_rows, _, _ in folds]
    # the joint model's search runs on the VAE's streams (sampler, fits, noise), so its
    # start-up candidates are the VAE search's (r, learning rate, depth, width) plus λ
    streams = search_stream(representation)
    sampler = optuna.samplers.TPESampler(seed=stream_int(base_seed, f"search/{streams}"),
                                         n_startup_trials=startup)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="maximize", sampler=sampler)
    # the start-up trials' r spread over the range; their other parameters are random
    low, high = (int(v) for v in space["dim_range"])
    dims = startup_dims(low, high, startup)
    weights = (startup_weights(*space["supervised_weight_range"], len(dims),
                               rng=stream_rng(base_seed, f"search/{representation}/weights"))
               if representation in SUPERVISED else [None] * len(dims))
    for dim, weight in zip(dims, weights, strict=True):
        # λ fixed here, not drawn: the sampler's random draws of the other parameters
        # then follow the VAE search's one for one
        study.enqueue_trial({"dim": dim} if weight is None
                            else {"dim": dim, "supervised_weight": weight})
    rows, seen = [], {}
    cache = {} if fit_cache is None else fit_cache

    def fitted(g, group, fit_rows, spec, spent):
        """The candidate's fit on pair fold g (a nested PCA: truncated from the r_max fit)."""
        # common random numbers: every trial gets the same fit and noise streams, so
        # the same candidate scores the same and candidates differ only by parameters
        rng = stream_rng(base_seed, f"search/{streams}/fit")
        if representation in NESTED:
            r_max = min(high, fit_rows.shape[1], len(fit_rows))
            base = (representation, g, tuple(map(tuple, group)), "r_max", r_max)
            if base not in cache:
                cache[base] = fit_representation(representation, {**spec, "dim": r_max},
                                                 fit_rows, rng=rng, vae_options=vae_options,
                                                 pca_options=pca_options)
            return truncate_pca(cache[base], spec["dim"])
        options = dict(vae_options or {})
        if trial_seconds is not None and representation in VAE_MODELS:
            options["max_seconds"] = max(float(trial_seconds) - spent, 1e-3)
        return fit_representation(representation, spec, fit_rows, rng=rng,
                                  vae_options=options or vae_options,
                                  labels=fit_labels[g] if representation in SUPERVISED
                                  else None, pca_options=pca_options)

    def evaluate(spec):
        accs, n_fit, epochs, best_epoch = [], [], np.nan, np.nan
        spent = 0.0  # seconds of this trial's fits (the budget covers fits, not scoring)
        for g, (group, fit_rows, val_rows, val_labels) in enumerate(folds):
            spec = {**spec, "dim": min(spec["dim"], fit_rows.shape[1], len(fit_rows))}
            key = (representation, g, tuple(map(tuple, group)), tuple(sorted(spec.items())))
            if key not in cache:
                start = time.perf_counter()
                try:
                    model = fitted(g, group, fit_rows, spec, spent)
                except FitBudgetExceeded as stop:
                    # kept, so the other pipeline's identical candidate fails the same way
                    cache[key] = stop
                else:
                    cache[key] = (model.transform(fit_rows), model.transform(val_rows),
                                  getattr(model, "n_epochs_", np.nan),
                                  getattr(model, "best_epoch_", np.nan))
                spent += time.perf_counter() - start
            elif log is not None:
                log.info("%s pair fold %d: %s fitted by an earlier search, reused",
                         representation, g, spec)
            if isinstance(cache[key], FitBudgetExceeded):
                if log is not None:
                    log.warning("%s pair fold %d: %s over the trial budget of %s s: %s",
                                representation, g, spec, trial_seconds, cache[key])
                return {"score": np.nan, "score_se": np.nan, "n_pairs": 0,
                        "n_fit": len(fit_rows), "epochs": cache[key].epochs,
                        "best_epoch": np.nan, "status": "over_budget"}
            z_fit, z_val, n_epochs, first_best = cache[key]
            score = dp_pair_score(z_fit, z_val,
                                  val_labels, group, epsilon=float(objective["epsilon"]),
                                  folds=int(objective["folds"]), variant=objective["variant"],
                                  l2=float(objective["l2"]), base_seed=base_seed,
                                  stream=f"search/{streams}",
                                  noise_draws=int(objective.get("noise_draws", 1)))
            accs.extend(score["accuracies"])
            n_fit.append(len(fit_rows))
            if g == 0:
                epochs, best_epoch = n_epochs, first_best
        accs = np.asarray(accs)
        return {"score": float(accs.mean()),
                "score_se": float(accs.std(ddof=1) / math.sqrt(len(accs)))
                if len(accs) > 1 else 0.0,
                "n_pairs": len(accs), "n_fit": min(n_fit), "epochs": epochs,
                "best_epoch": best_epoch, "status": "complete"}

    def objective_fn(trial):
        spec = trial_spec(trial, representation, space)
        spec["dim"] = min(spec["dim"], min(len(f[1]) for f in folds), public.shape[1])
        key = tuple(sorted(spec.items()))
        duplicate = key in seen
        if not duplicate:
            seen[key] = (trial.number, evaluate(spec))
        first, result = seen[key]
        result = dict(result)
        status = result.pop("status")
        rows.append({"representation": representation, "candidate": f"t{trial.number}",
                     "trial": trial.number, "dim": spec["dim"],
                     "learning_rate": spec.get("learning_rate", np.nan),
                     "hidden_layers": spec.get("hidden_layers", np.nan),
                     "width_multiplier": spec.get("width_multiplier", np.nan),
                     "hidden_width": (vae_hidden_width(spec["dim"], spec["width_multiplier"],
                                                       (vae_options or {}).get(
                                                           "max_hidden_width"))
                                      if "width_multiplier" in spec else np.nan),
                     **result,
                     **({"supervised_weight": spec["supervised_weight"]}
                        if "supervised_weight" in spec else {}),
                     "validation_pairs": "; ".join(f"{a} vs {b}" for a, b in pairs),
                     "pair_folds": len(folds),
                     "sampler": "stratified_startup" if trial.number < startup else "tpe",
                     "duplicate_of": first if duplicate else np.nan, "status": status})
        if log is not None:
            log.info("%s trial %d (%s): %s -> DP accuracy %.4f%s", representation, trial.number,
                     rows[-1]["sampler"], spec, result["score"],
                     f" (same as trial {first}, not refitted)" if duplicate else "")
        if status != "complete":
            raise optuna.TrialPruned(f"{status}: {spec}")
        return result["score"]

    # duplicates do not count: propose until `trials` distinct candidates (or the cap)
    for _ in range(10 * int(trials)):
        if len(seen) >= int(trials):
            break
        study.optimize(objective_fn, n_trials=1, n_jobs=1)
    if log is not None and int(trials) <= startup:
        # the quick sizes choose it on purpose (docs/modes.md): a note, not a warning
        log.info("%s: %d trials <= %d startup trials: a purely random search", representation,
                    int(trials), startup)
    return pd.DataFrame(rows)


#: Seed derivation, for provenance.
SEEDS = {"sampler": "TPESampler(seed=stream_int(seed, 'search/<streams>'))",
         "fit": "search/<streams>/fit (every trial)",
         "noise": "search/<streams>/<pair>[/draw<d>] (every trial)",
         "streams": "the representation; supervised_vae: vae (paired with the VAE's search)",
         "supervised_weight_startup": "search/supervised_vae/weights (order of the strata)",
         "study": STUDY}
