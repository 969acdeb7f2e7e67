"""Tests for dprepro.learners.metrics (Spearman and the probabilistic C-index)."""

import math

import numpy as np
import pytest
from scipy import stats

from dprepro.learners.metrics import probabilistic_c_index, spearman


def _pc_reference(pred, real, sd):
    """Direct transcription of the authors' ``diffpri.pc`` double loop."""
    n = len(real)
    pred = -1.0 * np.asarray(pred, float)
    real = -1.0 * np.asarray(real, float)
    rho = 0.0
    for i in range(n):
        for j in range(n):
            if i < j:
                c = 0.5
                if pred[i] > pred[j]:
                    c = 0.5 * (1 + math.erf((real[i] - real[j]) / (2 * sd)))
                if pred[i] < pred[j]:
                    c = 0.5 * (1 + math.erf((real[j] - real[i]) / (2 * sd)))
                rho += c
    return 2.0 / (n * (n - 1)) * rho


def test_spearman_equals_scipy_with_ties():
    rng = np.random.default_rng(0)
    y = rng.normal(size=60)
    p = np.round(y + rng.normal(size=60), 1)  # rounding creates ties
    assert spearman(y, p) == pytest.approx(stats.spearmanr(y, p).statistic, abs=1e-12)


def test_spearman_constant_prediction_is_zero_by_default():
    y = np.arange(10.0)
    assert spearman(y, np.ones(10)) == 0.0
    assert np.isnan(spearman(y, np.ones(10), constant_value=np.nan))


def test_pc_index_equals_double_loop_reference():
    rng = np.random.default_rng(1)
    y = rng.normal(size=45)
    p = np.round(0.5 * y + rng.normal(size=45), 1)  # includes tied predictions
    sd = 0.7
    assert probabilistic_c_index(y, p, noise_sd=sd) == pytest.approx(
        _pc_reference(p, y, sd), rel=1e-12
    )
    # default noise_sd is the sample sd of y_true; small blocks give the same sum
    ref = _pc_reference(p, y, np.std(y, ddof=1))
    assert probabilistic_c_index(y, p, block_size=7) == pytest.approx(ref, rel=1e-12)


def test_pc_index_limits():
    y = np.linspace(0.0, 10.0, 30)
    assert probabilistic_c_index(y, 2 * y + 1, noise_sd=1e-3) == pytest.approx(1.0, abs=1e-12)
    assert probabilistic_c_index(y, -y, noise_sd=1e-3) == pytest.approx(0.0, abs=1e-12)
    assert probabilistic_c_index(y, np.zeros(30), noise_sd=0.5) == 0.5
    # large noise pulls a perfect ranking towards 1/2
    assert 0.5 < probabilistic_c_index(y, y, noise_sd=100.0) < 0.55


def test_metric_validation():
    with pytest.raises(ValueError, match="y_pred"):
        spearman(np.arange(3.0), np.arange(4.0))
    with pytest.raises(ValueError, match="y_true"):
        probabilistic_c_index([1.0, np.nan, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="noise_sd"):
        probabilistic_c_index([1.0, 2.0], [1.0, 2.0], noise_sd=0.0)
    with pytest.raises(ValueError, match="noise_sd"):
        probabilistic_c_index([1.0, 1.0], [1.0, 2.0])  # constant y: default sd is 0
