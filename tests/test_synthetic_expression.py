"""Tests for dprepro.data.synthetic_expression."""

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression, Ridge

from dprepro.data.synthetic_expression import synthetic_public_private
from dprepro.learners.metrics import spearman
from dprepro.representations.pca import fit_pca
from dprepro.representations.quantile import quantile_map

SMALL = dict(n_public=400, n_private=300, n_genes=300, rank=6, n_lineages=5, n_drugs=6)


@pytest.fixture(scope="module")
def data():
    return synthetic_public_private(np.random.default_rng(0), **SMALL)


def test_shapes_names_and_synthetic_marks(data):
    assert data["synthetic"] is True
    pub, prv = data["public_expression"], data["private_expression"]
    assert pub.shape == (400, 300) and prv.shape == (300, 300)
    assert list(pub.columns[:2]) == ["GENE0001", "GENE0002"]
    assert (pub.columns == prv.columns).all()
    assert data["private_response"].shape == (300, 6)
    assert data["public_latent"].shape == (400, 6)
    assert set(data["public_lineage"]) <= {f"lineage_{k:02d}" for k in range(1, 6)}
    for key in (
        "public_expression",
        "private_expression",
        "public_lineage",
        "private_lineage",
        "private_response",
    ):
        assert data[key].attrs["synthetic"] is True
    assert (pub.to_numpy() >= 0).all()  # log2(TPM + 1)-like
    assert not data["private_response"].isna().any().any()


def test_deterministic_given_seed():
    a = synthetic_public_private(np.random.default_rng(5), **SMALL)
    b = synthetic_public_private(np.random.default_rng(5), **SMALL)
    c = synthetic_public_private(np.random.default_rng(6), **SMALL)
    pd.testing.assert_frame_equal(a["private_expression"], b["private_expression"])
    pd.testing.assert_frame_equal(a["private_response"], b["private_response"])
    pd.testing.assert_series_equal(a["public_lineage"], b["public_lineage"])
    assert not np.allclose(a["public_expression"], c["public_expression"])


def test_lineages_are_predictable_from_public_expression(data):
    x, lab = data["public_expression"], data["public_lineage"]
    pca = fit_pca(x.iloc[:300], 6, random_state=0)
    clf = LogisticRegression(max_iter=5000).fit(pca.transform(x.iloc[:300]), lab.iloc[:300])
    acc = clf.score(pca.transform(x.iloc[300:]), lab.iloc[300:])
    chance = lab.value_counts(normalize=True).max()
    assert acc > chance + 0.4


def test_responses_are_predictable_through_public_representation(data):
    pub = data["public_expression"]
    prv = quantile_map(data["private_expression"], pub)
    z = fit_pca(pub, 6, random_state=0).transform(prv)
    resp = data["private_response"]
    rhos = [
        spearman(resp[c].iloc[200:], Ridge(1.0).fit(z[:200], resp[c].iloc[:200]).predict(z[200:]))
        for c in resp.columns
    ]
    assert np.mean(rhos) > 0.3
    # and the responses are not predictable from noise
    noise = np.random.default_rng(1).normal(size=z.shape)
    rho0 = [
        spearman(
            resp[c].iloc[200:], Ridge(1.0).fit(noise[:200], resp[c].iloc[:200]).predict(noise[200:])
        )
        for c in resp.columns
    ]
    assert np.mean(rhos) > np.mean(rho0) + 0.25


def test_private_platform_differs_and_missing_responses():
    d = synthetic_public_private(np.random.default_rng(2), missing_fraction=0.2, **SMALL)
    pub, prv = d["public_expression"].to_numpy(), d["private_expression"].to_numpy()
    assert abs(prv.mean() - pub.mean()) > 0.5
    frac = d["private_response"].isna().to_numpy().mean()
    assert 0.15 < frac < 0.25


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"n_genes": 0}, ValueError, "n_genes"),
        ({"rank": 2.5}, TypeError, "rank"),
        ({"missing_fraction": 1.0}, ValueError, "missing_fraction"),
        ({"platform_scale": 0.0}, ValueError, "platform_scale"),
    ],
)
def test_validation(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        synthetic_public_private(np.random.default_rng(0), **kwargs)
    with pytest.raises(TypeError, match="rng"):
        synthetic_public_private(0)
