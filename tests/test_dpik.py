"""dprepro.survival.bandwidth.dpik against R's KernSmooth::dpik (committed reference values).

The reference files are written by ``Rscript tests/r/dpik_reference.R``; R is not
needed to run these tests.
"""

from __future__ import annotations

import math
import warnings
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dprepro.survival import bandwidth
from dprepro.survival.bandwidth import dpik, dpik_rows

DATA = Path(__file__).resolve().parent / "data"
REL_TOL = 1e-6


@cache
def _reference() -> pd.DataFrame:
    # round_trip: pandas' default parser is not correctly rounded (see the R script).
    return pd.read_csv(DATA / "dpik_reference.csv", comment="#", float_precision="round_trip")


@cache
def _samples() -> dict[int, np.ndarray]:
    long = pd.read_csv(DATA / "dpik_reference_samples.csv.gz", float_precision="round_trip")
    return {int(k): g["value"].to_numpy() for k, g in long.groupby("sample_id", sort=True)}


def _options(row) -> dict:
    default_range = pd.isna(row["range_lo"])
    return {
        "scalest": row["scalest"],
        "level": int(row["level"]),
        "kernel": row["kernel"],
        "canonical": bool(row["canonical"]),
        "gridsize": int(row["gridsize"]),
        "range_x": None if default_range else (row["range_lo"], row["range_hi"]),
        "truncate": bool(row["truncate"]),
    }


def _row_id(row) -> str:
    opts = _options(row)
    extra = "".join(
        f"-{k}={v}"
        for k, v in opts.items()
        if k not in ("scalest", "level", "kernel")
        and v != {"canonical": False, "gridsize": 401, "range_x": None, "truncate": True}[k]
    )
    return (
        f"s{row['sample_id']}-{row['distribution']}-n{row['n']}-{row['scalest']}"
        f"-L{row['level']}-{row['kernel']}{extra}"
    )


# The "precision" block (hundreds of short samples that pin R's last-bit arithmetic)
# is checked in one test rather than one test per row, to keep the report readable.
REF_ROWS = [row for _, row in _reference().iterrows() if row["distribution"] != "precision"]
PRECISION_ROWS = [row for _, row in _reference().iterrows() if row["distribution"] == "precision"]


def _quiet_dpik(x, **opts) -> float:
    # Heavy-tailed samples trigger R's (expected) coarse-grid warning.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return dpik(x, **opts)


def _n_binned(x, **opts) -> float:
    M = opts.get("gridsize", 401)
    _, counts, _ = bandwidth._standardised_counts(
        np.asarray(x, dtype=float)[None],
        opts.get("scalest", "minim"),
        M,
        opts.get("range_x"),
        opts.get("truncate", True),
    )
    return float(counts.sum())


def test_reference_covers_the_brief():
    ref, samples = _reference(), _samples()
    assert len(samples) >= 24
    assert {20, 50, 100, 500, 1000, 5000} <= set(ref["n"])
    assert {"normal", "uniform", "lognormal", "t2", "cauchy", "rounded", "poisson"} <= set(
        ref["distribution"]
    )
    assert {"minim", "stdev", "iqr"} <= set(ref["scalest"])
    for sample_id, n in ref.groupby("sample_id")["n"].first().items():
        assert len(samples[sample_id]) == n
    # Both outcomes of the max-observation rounding (see the R script) are exercised.
    default = ref[ref["range_lo"].isna() & ref["truncate"]]
    assert (default["n_binned"] == default["n"]).any()
    assert (default["n_binned"] < default["n"] - 0.5).any()


@pytest.mark.r_oracle
@pytest.mark.parametrize("row", REF_ROWS, ids=_row_id)
def test_matches_r(row):
    x = _samples()[row["sample_id"]]
    got = _quiet_dpik(x, **_options(row))
    assert math.isclose(got, row["dpik"], rel_tol=REL_TOL, abs_tol=0.0)


@pytest.mark.r_oracle
@pytest.mark.parametrize("row", REF_ROWS, ids=_row_id)
def test_binning_keeps_the_same_observations_as_r(row):
    # Pins the truncation of the sample maximum: an error here means the port lost
    # bit-for-bit agreement in the mean, scale or binning arithmetic.
    x = _samples()[row["sample_id"]]
    assert _n_binned(x, **_options(row)) == pytest.approx(row["n_binned"], abs=1e-9)


@pytest.mark.r_oracle
def test_precision_block_matches_r():
    # About 2% of these samples get a different bandwidth if mean() or var() is not
    # computed exactly as R does (long-double two-pass sums); see the R script.
    assert len(PRECISION_ROWS) >= 100
    wrong = []
    for row in PRECISION_ROWS:
        x = _samples()[row["sample_id"]]
        opts = _options(row)
        got = _quiet_dpik(x, **opts)
        if not math.isclose(got, row["dpik"], rel_tol=REL_TOL, abs_tol=0.0):
            wrong.append(f"{_row_id(row)}: {got!r} != {row['dpik']!r}")
        elif _n_binned(x, **opts) != pytest.approx(row["n_binned"], abs=1e-9):
            wrong.append(f"{_row_id(row)}: binned count differs from R's")
    assert not wrong, "\n".join(wrong)


def test_reference_max_relative_error_is_tiny():
    # Much tighter than the contract: both sides compute the same operations, only the
    # FFT and summation orders differ.
    rel = [
        abs(_quiet_dpik(_samples()[row["sample_id"]], **_options(row)) / row["dpik"] - 1)
        for row in REF_ROWS + PRECISION_ROWS
    ]
    assert max(rel) < 1e-12


@pytest.mark.parametrize("scalest", ["minim", "stdev", "iqr"])
def test_rows_equal_single_calls(scalest):
    samples = _samples()
    by_n: dict[int, list[np.ndarray]] = {}
    for x in samples.values():
        by_n.setdefault(len(x), []).append(x)
    for xs in by_n.values():
        X = np.vstack(xs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            batched = dpik_rows(X, scalest=scalest)
        single = [_quiet_dpik(x, scalest=scalest) for x in xs]
        np.testing.assert_allclose(batched, single, rtol=1e-13, atol=0)


def test_rows_shape_and_empty_batch():
    X = np.random.default_rng(11).normal(size=(7, 40))
    assert dpik_rows(X).shape == (7,)
    assert dpik_rows(np.empty((0, 40))).shape == (0,)


def test_power_of_two_scaling_is_exact():
    # Multiplying by 2^k is exact in binary, so every intermediate value scales exactly
    # and even the max-observation rounding decision is unchanged.
    X = np.random.default_rng(12).standard_t(3, size=(200, 60))
    h = dpik_rows(X)
    for a in (2.0**-7, 8.0, 2.0**20):
        np.testing.assert_array_equal(dpik_rows(a * X), a * h)


def test_affine_equivariance_without_truncation():
    X = np.random.default_rng(13).lognormal(size=(300, 80))
    h = dpik_rows(X, truncate=False)
    for a, b in ((3.7, 100.0), (0.013, -5.0), (1e6, 1e6)):
        np.testing.assert_allclose(dpik_rows(a * X + b, truncate=False), a * h, rtol=1e-10)


def test_affine_equivariance_breaks_only_through_the_dropped_maximum():
    # With R's default truncate=TRUE the maximum is kept or dropped depending on the
    # last bit of the standardised range, so a generic affine map can change the
    # bandwidth by O(1/n). Apart from that, the plug-in is equivariant.
    X = np.random.default_rng(14).normal(size=(400, 50))
    a, b = 3.7, 100.0
    ratio = dpik_rows(a * X + b) / (a * dpik_rows(X))
    changed = np.array([_n_binned(a * x + b) != _n_binned(x) for x in X])
    np.testing.assert_allclose(ratio[~changed], 1.0, rtol=1e-10)
    assert changed.any()
    assert np.all(np.abs(ratio[changed] - 1) > 1e-6)


def test_dpik_is_dpik_rows_of_one_row():
    x = np.random.default_rng(15).exponential(size=300)
    assert dpik(x) == dpik_rows(x[None])[0]


def test_kernel_and_canonical_only_rescale():
    x = np.random.default_rng(16).normal(size=200)
    canonical = dpik(x, canonical=True)
    assert dpik(x) == pytest.approx(canonical / (4 * math.pi) ** 0.1, rel=1e-14)
    assert dpik(x, kernel="epanech") == pytest.approx(canonical * 15**0.2, rel=1e-14)


def test_coarse_grid_warns_like_r():
    # One far outlier stretches the grid so that the bulk sits in one or two bins.
    x = np.append(np.random.default_rng(17).normal(size=200), 1e6)
    with pytest.warns(RuntimeWarning, match="Binning grid too coarse"):
        dpik(x)


# --- input validation -------------------------------------------------------------


@pytest.mark.parametrize(
    ("x", "match"),
    [
        ([1.0, np.nan, 3.0], "non-finite"),
        ([1.0, np.inf, 3.0], "non-finite"),
        ([1.0, -np.inf, 3.0], "non-finite"),
        ([1.0], "at least 2 observations"),
        ([], "at least 2 observations"),
        ([2.0, 2.0, 2.0], "scale estimate is zero"),
    ],
)
def test_bad_data(x, match):
    with pytest.raises(ValueError, match=match):
        dpik(x)


def test_zero_iqr_suggests_stdev():
    x = [1.0, 1.0, 1.0, 1.0, 2.0]
    with pytest.raises(ValueError, match=r"IQR is zero.*scalest='stdev'"):
        dpik(x)
    assert dpik(x, scalest="stdev") > 0


def test_rows_error_names_the_row():
    X = np.random.default_rng(18).normal(size=(5, 30))
    X[3, 7] = np.nan
    with pytest.raises(ValueError, match=r"non-finite.*row 3"):
        dpik_rows(X)
    X[3, 7] = 0.0
    X[2] = 4.0
    with pytest.raises(ValueError, match=r"scale estimate is zero.*row 2"):
        dpik_rows(X)


@pytest.mark.parametrize(
    ("opts", "match"),
    [
        ({"scalest": "mad"}, "unsupported scalest 'mad'"),
        ({"kernel": "gaussian"}, "unsupported kernel 'gaussian'"),
        ({"level": 6}, "level must be an integer from 0 to 5"),
        ({"level": -1}, "level must be an integer from 0 to 5"),
        ({"level": 2.0}, "level must be an integer"),
        ({"gridsize": 1}, "gridsize must be an integer >= 2"),
        ({"gridsize": 400.5}, "gridsize must be an integer"),
        ({"gridsize": True}, "gridsize must be integers, not bool"),
        ({"range_x": (3.0, 1.0)}, "range_x must be finite"),
        ({"range_x": (0.0, np.inf)}, "range_x must be finite"),
        ({"range_x": 5.0}, "range_x must be a pair"),
    ],
)
def test_bad_options(opts, match):
    x = np.random.default_rng(19).normal(size=50)
    with pytest.raises(ValueError, match=match):
        dpik(x, **opts)


def test_wrong_dimensions():
    with pytest.raises(ValueError, match="one-dimensional"):
        dpik(np.ones((2, 3)))
    with pytest.raises(ValueError, match="two-dimensional"):
        dpik_rows(np.ones(5))


def test_wrong_sign_functional_is_an_error(monkeypatch):
    # Never seen on real data (psi_6 < 0 < psi_4 for every density); R fails or
    # returns NaN there, so the port refuses with a message instead.
    x = np.random.default_rng(20).normal(size=50)
    monkeypatch.setattr(bandwidth, "_bkfe", lambda *args: np.array([1.0]))
    with pytest.raises(ValueError, match=r"psi_6 = 1 has the wrong sign"):
        dpik(x)
    monkeypatch.setattr(bandwidth, "_bkfe", lambda *args: np.array([-1.0]))
    with pytest.raises(ValueError, match=r"psi_4 = -1 is not positive"):
        dpik(x, level=1)
