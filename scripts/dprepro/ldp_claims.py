r"""The claims of the ``ldp_indicators`` paper's results section, tested on the replicates.

Each claim is a statistic of integrated errors over the time grid, computed
from the per-replicate estimates, with a paired percentile bootstrap over
replicates: the estimators of one censoring level are computed on the same
simulated samples (every α and mechanism reuses the data stream), so one
resample of replicate indices is applied to all of them
(:func:`dprepro.claims.bootstrap_counts`).

Integrated quantities over the evenly spaced grid :math:`t_1..t_T`, for the
errors :math:`D_{rt} = E^{(r)}(t) - F(t \mid x)` of replicate :math:`r`:

.. math::
    \mathrm{IMSE} = \frac1T \sum_t \frac1R \sum_r D_{rt}^2, \quad
    \mathrm{IBIAS} = \frac1T \sum_t \bar D_t, \quad
    \mathrm{IVAR} = \mathrm{IMSE} - \frac1T \sum_t \bar D_t^2 .

A bootstrap resample replaces :math:`1/R` by the resample counts :math:`w_r/R`,
so every statistic of every resample is a matrix product (no Python loop).

"Close", "near" and "similar" are not defined by the paper; our criteria are
an IMSE ratio within :math:`[1/1.5, 1.5]` and integrated biases within
``bias_tolerance`` (0.01, one percentage point of probability) of each other.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping

import numpy as np
import pandas as pd

from .claims import bootstrap_counts, claim_row, claims_frame, percentile_interval
from .ldp_mechanisms import REFERENCE, get_mechanism
from .ldp_simulation import estimators, true_conditional_cdf
from .seeds import seed_sequence

__all__ = ["ErrorSet", "error_set", "ldp_claims"]

STUDY = "ldp_indicators"
SOURCE = "paper §5, discussion of Figure 1"


class ErrorSet:
    """Per-replicate errors :math:`D` (R, T) of every estimator, keyed by setting.

    Keys are ``(censoring, mechanism, alpha, estimator)`` with ``mechanism``
    the registry name (``"none"`` and ``alpha`` NaN for the references).
    """

    def __init__(self, errors: Mapping[tuple, np.ndarray]):
        self.errors = dict(errors)
        sizes = {d.shape[0] for d in self.errors.values()}
        if len(sizes) != 1:
            raise ValueError(f"every setting needs the same number of replicates, got {sizes}")
        self.replicates = sizes.pop()
        self._ise = {k: (d**2).mean(axis=1) for k, d in self.errors.items()}
        self._ie = {k: d.mean(axis=1) for k, d in self.errors.items()}

    def key(self, censoring, estimator, mechanism="none", alpha=math.nan) -> tuple:
        return (str(censoring), mechanism, float(alpha), estimator)

    def moments(self, weights: np.ndarray) -> _Moments:
        """Statistics under replicate weights (rows summing to 1), shape (B,)."""
        return _Moments(self, weights)


class _Moments:
    def __init__(self, errors: ErrorSet, weights: np.ndarray):
        self.errors, self.weights = errors, weights

    def _get(self, table, key):
        try:
            return table[key]
        except KeyError:
            raise KeyError(f"no replicates for {key}") from None

    def imse(self, key) -> np.ndarray:
        return self.weights @ self._get(self.errors._ise, key)

    def ibias(self, key) -> np.ndarray:
        return self.weights @ self._get(self.errors._ie, key)

    def ivar(self, key) -> np.ndarray:
        mean = self.weights @ self._get(self.errors.errors, key)  # (B, T)
        return self.imse(key) - (mean**2).mean(axis=1)


def error_set(results: Iterable[tuple[Mapping, pd.DataFrame]], *, x: float) -> ErrorSet:
    """Errors of every estimator from ``(setting, replicate frame)`` pairs.

    References (non-private estimators) are the same in every job of a
    censoring level and are kept once.
    """
    errors = {}
    for setting, frame in results:
        # a variant (other x, p̂ at x) is told apart by its tag on every key
        tag = setting.get("tag", "")
        mechanism = setting.get("mechanism", "laplace") + tag
        for name, group in frame.groupby("estimator", sort=False):
            if name not in estimators("cdf"):
                continue
            wide = group.pivot(index="replicate", columns="t", values="estimate")
            t = wide.columns.to_numpy(dtype=float)
            truth = true_conditional_cdf(t, x=setting.get("x", x), lambda_t=setting["lambda_t"])
            private = name == "private_beran"
            key = (str(setting["censoring"]), mechanism if private else REFERENCE.mechanism + tag,
                   float(setting["alpha"]) if private else math.nan, name)
            if not private and key in errors:
                continue
            errors[key] = wide.to_numpy() - truth
    return ErrorSet(errors)


def _interval(errors: ErrorSet, statistic: Callable, *, rng, resamples: int, level: float):
    r = errors.replicates
    estimate = float(statistic(errors.moments(np.full((1, r), 1.0 / r)))[0])
    counts = bootstrap_counts(r, rng=rng, resamples=resamples)
    return percentile_interval(estimate, statistic(errors.moments(counts / r)), level=level)


def ldp_claims(errors: ErrorSet, *, censorings, alphas, mechanisms, seed: int,
               near_ratio: float = 1.5, bias_tolerance: float = 0.01, resamples: int = 2000,
               level: float = 0.95, variants: Mapping | None = None, x: float = 0.5
               ) -> pd.DataFrame:
    """Every claim of the results section (and beyond-the-paper findings) with its CI.

    Parameters
    ----------
    errors : ErrorSet
        From :func:`error_set` on the main design's replicates.
    censorings : list of str
        Censoring labels, low to high.
    alphas : list of float
        The α of Figure 1.
    mechanisms : list of str
        Configured mechanism names; ``"laplace"`` is the paper's.
    seed : int
        Base seed; claim ``c`` bootstraps with ``seed_sequence(seed,
        "ldp_indicators", "claims/" + c, 0)``, so a row does not depend on
        the others.
    near_ratio, bias_tolerance : float
        Our reading of "close"/"near" (IMSE ratio within [1/near_ratio,
        near_ratio]) and of "similar biases" (integrated biases within
        ``bias_tolerance`` of each other).
    variants : mapping, optional
        The configuration's ``variants`` (mechanism, x_values, noise_scales,
        phat_at_x) whose replicates are in ``errors`` (tagged ``@x<value>`` and
        ``@phat_x``; rescaled mechanisms as ``<name>_scale<c>``): adds the
        claim that the results do not depend on x, the paper's verbal claims
        at each noise scale, and the p̂(x, Y_i) difference.
    x : float
        The x of Figure 1.
    """
    alphas = sorted(float(a) for a in alphas)
    censorings = [str(c) for c in censorings]
    near = f"within [{1 / near_ratio:.3g}, {near_ratio:g}]"
    rows = []

    def add(claim_id, claim, statistic_text, statistic, criterion, *, note="", source=SOURCE,
            paper_value=""):
        rng = np.random.default_rng(seed_sequence(seed, STUDY, f"claims/{claim_id}", 0))
        value, lower, upper = _interval(errors, statistic, rng=rng, resamples=resamples,
                                        level=level)
        rows.append(claim_row(study=STUDY, claim_id=claim_id, claim=claim, source=source,
                              statistic=statistic_text, reproduced_value=value, ci_lower=lower,
                              ci_upper=upper, criterion=criterion, level=level,
                              paper_value=paper_value, note=note))

    key = errors.key
    for c in censorings:
        gen, beran = key(c, "generalized_beran"), key(c, "beran")
        priv = {a: key(c, "private_beran", "laplace", a) for a in alphas}
        tag = f"c{c}"
        add(f"ldp.generalized_smallest_variance.{tag}",
            f"without privacy F̌_n has the smallest variability ({c}% censoring)",
            "IVAR(F̌_n) / min(IVAR(F_n), IVAR(F̂_n) over α)",
            lambda m, gen=gen, beran=beran, priv=priv: m.ivar(gen) / np.min(
                [m.ivar(beran), *[m.ivar(k) for k in priv.values()]], axis=0),
            "< 1")
        add(f"ldp.generalized_below_beran.{tag}",
            f"F̌_n outperforms the Beran estimator F_n ({c}% censoring)",
            "IMSE(F̌_n) / IMSE(F_n)",
            lambda m, gen=gen, beran=beran: m.imse(gen) / m.imse(beran), "< 1")
        if len(alphas) >= 2:
            add(f"ldp.private_falls_with_alpha.{tag}",
                f"the private MSE falls as α grows ({c}% censoring)",
                "max over consecutive α of IMSE(F̂_n, next α) − IMSE(F̂_n, α)",
                lambda m, priv=priv: np.max(np.diff([m.imse(priv[a]) for a in alphas],
                                                    axis=0), axis=0),
                "< 0")
        low, high = alphas[0], alphas[-1]
        add(f"ldp.private_highest_smallest_alpha.{tag}",
            f"F̂_n has the highest MSE at the smallest α = {low:g} ({c}% censoring)",
            "IMSE(F̂_n) / max(IMSE(F̌_n), IMSE(F_n))",
            lambda m, k=priv[low], gen=gen, beran=beran: m.imse(k) / np.maximum(
                m.imse(gen), m.imse(beran)),
            "> 1")
        add(f"ldp.private_close_generalized_largest_alpha.{tag}",
            f"at the largest α = {high:g} F̂_n is similar to F̌_n ({c}% censoring)",
            "IMSE(F̂_n) / IMSE(F̌_n)",
            lambda m, k=priv[high], gen=gen: m.imse(k) / m.imse(gen), near,
            note="'similar' read as an IMSE ratio within the criterion (our choice)")
        for a in alphas:
            if math.isclose(a, 0.3):
                add(f"ldp.private_near_beran_alpha0.3.{tag}",
                    f"at α = 0.3 F̂_n has curves similar to F_n ({c}% censoring)",
                    "IMSE(F̂_n) / IMSE(F_n)",
                    lambda m, k=priv[a], beran=beran: m.imse(k) / m.imse(beran), near,
                    note="'similar' read as an IMSE ratio within the criterion (our choice)")
        for a in alphas:
            add(f"ldp.biases_similar.{tag}.a{a:g}",
                f"the biases of F̂_n, F̌_n and F_n are similar (α = {a:g}, {c}% censoring)",
                "max pairwise |IBIAS difference| among F̂_n, F̌_n, F_n",
                lambda m, k=priv[a], gen=gen, beran=beran: np.max(np.abs([
                    m.ibias(k) - m.ibias(gen), m.ibias(k) - m.ibias(beran),
                    m.ibias(gen) - m.ibias(beran)]), axis=0),
                f"<= {bias_tolerance:g}",
                note=f"IBIAS = time average of the bias; 'similar' read as within "
                     f"{bias_tolerance:g} (our choice)")
            add(f"ldp.private_as_efficient.{tag}.a{a:g}",
                f"F̂_n is as efficient as the non-private F_n (α = {a:g}, {c}% censoring)",
                "IMSE(F̂_n) / IMSE(F_n)",
                lambda m, k=priv[a], beran=beran: m.imse(k) / m.imse(beran),
                f"<= {near_ratio:g}",
                note="'as efficient' read as an IMSE at most near_ratio times F_n's (our choice)")
    if len(censorings) >= 2:
        lo, hi = censorings[0], censorings[-1]

        def censoring_ratios(m, lo=lo, hi=hi):
            pairs = [(key(lo, n), key(hi, n)) for n in ("generalized_beran", "beran")]
            pairs += [(key(lo, "private_beran", "laplace", a), key(hi, "private_beran", "laplace",
                                                                     a)) for a in alphas]
            return np.array([m.imse(b) / m.imse(a) for a, b in pairs])

        add("ldp.censoring_raises_mse",
            f"more censoring ({hi}% vs {lo}%) gives higher MSE for every method",
            "min over estimators and α of IMSE(high) / IMSE(low)",
            lambda m: censoring_ratios(m).min(axis=0), "> 1",
            note="censoring levels use independent samples; the same resample indices are "
                 "applied to both (valid for independent replicates)")
        add("ldp.censoring_affects_all_equally",
            f"more censoring affects every method alike ({hi}% vs {lo}%)",
            "max / min over estimators and α of IMSE(high) / IMSE(low)",
            lambda m: censoring_ratios(m).max(axis=0) / censoring_ratios(m).min(axis=0),
            f"<= {near_ratio:g}", note="'equally' read as ratios within a factor near_ratio")
    if variants:
        _variant_claims(add, key, variants, censorings=censorings, alphas=alphas, x=x,
                        near=near, near_ratio=near_ratio)
    for name in mechanisms:
        if name == "laplace":
            continue
        label = get_mechanism(name).release_name
        for c in censorings:
            for a in alphas:
                add(f"ldp.{name}_below_laplace.c{c}.a{a:g}",
                    f"{label} gives a lower MSE than Laplace at the same α = {a:g} "
                    f"({c}% censoring)",
                    f"IMSE(F̂_n, {label}) / IMSE(F̂_n, Laplace)",
                    lambda m, c=c, a=a, name=name: m.imse(key(c, "private_beran", name, a))
                    / m.imse(key(c, "private_beran", "laplace", a)),
                    "< 1", source="beyond the paper: second α-LDP mechanism on δ")
    return claims_frame(rows)


def _variant_claims(add, key, variants, *, censorings, alphas, x, near, near_ratio):
    """Claims on the variants: x, noise scale, p̂ at (x, Y_i)."""
    m = variants["mechanism"]
    names = ("private_beran", "generalized_beran", "beran")
    xs = [float(v) for v in variants["x_values"]]
    tags = ["" if math.isclose(v, x) else f"@x{v:g}" for v in xs]
    if len(xs) >= 2:
        for c in censorings:
            def spread(mom, c=c):
                ratios = []
                for name in names:
                    for a in (alphas if name == "private_beran" else [math.nan]):
                        values = [mom.imse(key(c, name, (m if name == "private_beran" else "none")
                                               + tag, a)) for tag in tags]
                        ratios.append(np.max(values, axis=0) / np.min(values, axis=0))
                return np.max(ratios, axis=0)

            add(f"ldp.no_dependence_on_x.c{c}",
                f"the performance does not depend on x ∈ {xs} ({c}% censoring)",
                "max over estimators and α of max_x IMSE / min_x IMSE",
                spread, f"<= {near_ratio:g}", source="paper §5, simulation design",
                note="'no significant differences' read as IMSE within a factor near_ratio "
                     "across x (our choice); same samples at every x (paired)")
    for scale in variants["noise_scales"]:
        if float(scale) == 1.0:
            continue
        scaled = f"{m}_scale{float(scale):g}"
        note = (f"NOT α-LDP: noise scale × {float(scale):g}, true ε = α/{float(scale):g}; "
                "shows at which scale the verbal claims would hold")
        for c in censorings:
            gen, beran = key(c, "generalized_beran"), key(c, "beran")
            high = alphas[-1]
            top = key(c, "private_beran", scaled, high)
            add(f"ldp.scale{float(scale):g}.private_close_generalized_largest_alpha.c{c}",
                f"with noise scale × {float(scale):g}: F̂_n similar to F̌_n at α = {high:g} "
                f"({c}% censoring)",
                "IMSE(F̂_n) / IMSE(F̌_n)",
                lambda mom, k=top, gen=gen: mom.imse(k) / mom.imse(gen), near,
                source="beyond the paper: noise-scale sensitivity", note=note)
            for a in alphas:
                if math.isclose(a, 0.3):
                    at03 = key(c, "private_beran", scaled, a)
                    add(f"ldp.scale{float(scale):g}.private_near_beran_alpha0.3.c{c}",
                        f"with noise scale × {float(scale):g}: F̂_n similar to F_n at α = 0.3 "
                        f"({c}% censoring)",
                        "IMSE(F̂_n) / IMSE(F_n)",
                        lambda mom, k=at03, beran=beran: mom.imse(k) / mom.imse(beran),
                        near,
                        source="beyond the paper: noise-scale sensitivity", note=note)
    if variants["phat_at_x"]:
        for c in censorings:
            for a in alphas:
                add(f"ldp.phat_at_x_same.c{c}.a{a:g}",
                    f"p̂ at (x, Y_i) instead of (X_i, Y_i) changes F̂_n little "
                    f"(α = {a:g}, {c}% censoring)",
                    "IMSE(F̂_n, p̂(x, Y_i)) / IMSE(F̂_n, p̂(X_i, Y_i))",
                    lambda mom, c=c, a=a: mom.imse(key(c, "private_beran", m + "@phat_x", a))
                    / mom.imse(key(c, "private_beran", m, a)),
                    near, source="beyond the paper: presmoother variant from the literature",
                    note="our choice is p̂(X_i, Y_i); same samples and noise (paired)")
