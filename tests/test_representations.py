"""Tests for dprepro.representations.pca (PCA, random projection, VAE, quantile mapping)."""

import logging
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.decomposition import PCA

from dprepro.data.synthetic_expression import synthetic_public_private
from dprepro.representations.base import FitBudgetExceeded
from dprepro.representations.pca import fit_pca, truncate_pca
from dprepro.representations.quantile import QuantileScaler, quantile_map
from dprepro.representations.random_projection import RandomProjection
from dprepro.representations.vae import VAE, VAERepresentation

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def lowrank():
    """Synthetic low-rank expression: 500 rows to fit on, 200 held out."""
    d = synthetic_public_private(
        np.random.default_rng(42), n_public=700, n_private=10, n_genes=200, rank=4
    )
    x = d["public_expression"]
    return x.iloc[:500], x.iloc[500:]


VAE_KW = dict(n_hidden_layers=1, hidden_width=64, learning_rate=3e-3, max_epochs=150, patience=8)


@pytest.fixture(scope="module")
def fitted_vae(lowrank):
    train, _ = lowrank
    return VAERepresentation(4, random_state=0, device="cpu", **VAE_KW).fit(train)


def test_fit_pca_equals_sklearn(lowrank):
    train, test = lowrank
    pca = fit_pca(train, 5, random_state=0)
    ref = PCA(n_components=5, svd_solver="full").fit(train.to_numpy())
    np.testing.assert_allclose(pca.transform(test), ref.transform(test.to_numpy()), atol=1e-8)
    with pytest.raises(ValueError, match="dim"):
        fit_pca(train, 0, random_state=0)


def test_truncated_pca_is_the_fit_at_that_r_to_the_bit(lowrank):
    """Exact PCA is nested: the first r components of a fit at r_max are the fit at r,
    signs included, so the search can fit r_max once and truncate."""
    train, held = lowrank
    big = fit_pca(train, 12)
    for r in (1, 2, 3, 5, 12):
        cut, alone = truncate_pca(big, r), fit_pca(train, r)
        np.testing.assert_array_equal(cut.components_, alone.components_)
        # the sign convention: each component's largest-magnitude entry is positive
        top = np.abs(alone.components_).argmax(axis=1)
        assert (alone.components_[np.arange(r), top] > 0).all()
        for name in ("mean_", "explained_variance_", "explained_variance_ratio_",
                     "singular_values_"):
            np.testing.assert_array_equal(getattr(cut, name), getattr(alone, name))
        np.testing.assert_array_equal(cut.transform(held), alone.transform(held))
        np.testing.assert_array_equal(cut.transform(train), alone.transform(train))
        assert cut.n_components_ == r
        assert cut.components_.strides == alone.components_.strides  # same BLAS path
        assert cut.noise_variance_ == pytest.approx(alone.noise_variance_, rel=1e-10)
    assert big.n_components_ == 12  # the fit at r_max is left as it was
    with pytest.raises(ValueError, match="dim"):
        truncate_pca(big, 13)
    fake = fit_pca(train, 4)
    fake.svd_solver = "arpack"
    with pytest.raises(ValueError, match="exact SVD"):
        truncate_pca(fake, 2)


def _max_angle(a, b):
    from scipy.linalg import subspace_angles

    return float(np.max(subspace_angles(a.T, b.T)))


def test_randomized_pca_is_seeded_and_equals_the_exact_fit_to_its_accuracy(lowrank):
    """The randomized solver against LAPACK's exact SVD: the same subspace and variances (the
    4 latent factors stand far above the noise, so its error is at rounding level), the same
    components for the same seed to the bit, another seed only to that accuracy."""
    train, held = lowrank
    exact = fit_pca(train, 6)
    fits = [fit_pca(train, 6, svd_solver="randomized", random_state=seed, oversamples=10,
                    power_iterations=7) for seed in (3, 3, 4)]
    np.testing.assert_array_equal(fits[0].components_, fits[1].components_)
    assert not np.array_equal(fits[0].components_, fits[2].components_)
    for fit in fits:
        assert fit.svd_solver == "randomized"
        assert _max_angle(fit.components_[:4], exact.components_[:4]) < 1e-8
        np.testing.assert_allclose(fit.explained_variance_[:4], exact.explained_variance_[:4],
                                   rtol=1e-10)
        # sklearn's sign convention, so the leading components match with their signs
        np.testing.assert_allclose(fit.transform(held)[:, :4], exact.transform(held)[:, :4],
                                   atol=1e-6)
        np.testing.assert_allclose(fit.mean_, exact.mean_)
    # a generator gives one 32-bit draw as the seed
    from_rng = fit_pca(train, 6, svd_solver="randomized", random_state=np.random.default_rng(9))
    seed = int(np.random.default_rng(9).integers(0, 2**32))
    np.testing.assert_array_equal(
        from_rng.components_,
        fit_pca(train, 6, svd_solver="randomized", random_state=seed).components_)
    with pytest.raises(TypeError, match="random_state"):
        fit_pca(train, 6, svd_solver="randomized")
    with pytest.raises(ValueError, match="svd_solver"):
        fit_pca(train, 6, svd_solver="arpack")


def test_power_iterations_buy_the_randomized_solver_its_accuracy():
    """On a slowly decaying spectrum (variances 1/i) one pass leaves the 10th component
    visibly off; the power iterations bring it to the exact subspace (Halko et al. 2011)."""
    rng = np.random.default_rng(1)
    X = (rng.normal(size=(400, 60)) * np.arange(1, 61) ** -0.5) @ rng.normal(size=(60, 300))
    X += 0.05 * rng.normal(size=X.shape)
    exact = fit_pca(X, 10).components_
    crude = fit_pca(X, 10, svd_solver="randomized", random_state=0, oversamples=2,
                    power_iterations=0).components_
    sharp = fit_pca(X, 10, svd_solver="randomized", random_state=0, oversamples=40,
                    power_iterations=10).components_
    assert _max_angle(crude, exact) > 1e-2
    assert _max_angle(sharp, exact) < 1e-6


def test_auto_solver_is_exact_up_to_the_threshold():
    from dprepro.representations.pca import EXACT_MAX_SIDE, pca_solver

    assert pca_solver("auto", (EXACT_MAX_SIDE, 17_737)) == "full"
    assert pca_solver("auto", (EXACT_MAX_SIDE + 1, 17_737)) == "randomized"
    assert pca_solver("auto", (10_535, 1_500)) == "full"
    assert pca_solver("full", (10_535, 17_737)) == "full"
    assert pca_solver("randomized", (50, 40)) == "randomized"
    with pytest.raises(ValueError, match="svd_solver must be one of"):
        pca_solver("lapack", (3, 3))


def test_truncated_randomized_pca_keeps_the_leading_components(lowrank):
    """A randomized fit at r_max truncates to its first r components (the search's nested
    candidates): the same rows to the bit, and the exact top-r subspace to its accuracy."""
    train, held = lowrank
    big = fit_pca(train, 12, svd_solver="randomized", random_state=5)
    exact = fit_pca(train, 12)
    for r in (1, 3, 4):
        cut = truncate_pca(big, r)
        np.testing.assert_array_equal(cut.components_, big.components_[:r])
        np.testing.assert_array_equal(cut.explained_variance_, big.explained_variance_[:r])
        np.testing.assert_allclose(cut.transform(held), big.transform(held)[:, :r],
                                   rtol=0, atol=1e-12)
        assert _max_angle(cut.components_, exact.components_[:r]) < 1e-8
        assert cut.noise_variance_ == pytest.approx(
            truncate_pca(exact, r).noise_variance_, rel=1e-6)


def test_vae_fit_stops_at_its_wall_clock_budget(lowrank):
    train, _ = lowrank
    with pytest.raises(FitBudgetExceeded, match="budget") as stop:
        VAERepresentation(2, random_state=0, max_seconds=1e-9, **VAE_KW).fit(train)
    assert stop.value.epochs == 0
    with pytest.raises(TypeError, match="max_seconds"):
        VAERepresentation(2, max_seconds="1")


def test_random_projection_is_orthonormal_and_centred(lowrank):
    train, test = lowrank
    rp = RandomProjection(6, random_state=3).fit(train)
    A = rp.components_
    assert A.shape == (train.shape[1], 6)
    np.testing.assert_allclose(A.T @ A, np.eye(6), atol=1e-12)
    np.testing.assert_allclose(rp.mean_, train.mean(axis=0).to_numpy())
    np.testing.assert_allclose(rp.transform(test), (test.to_numpy() - rp.mean_) @ A)
    np.testing.assert_allclose(rp.transform(train).mean(axis=0), 0.0, atol=1e-10)
    same = RandomProjection(6, random_state=3).fit(train).components_
    other = RandomProjection(6, random_state=4).fit(train).components_
    np.testing.assert_array_equal(A, same)
    assert not np.allclose(A, other)


def test_quantile_scaler_uses_global_quantiles():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 30)) * np.linspace(1, 5, 30)
    s = QuantileScaler(0.05).fit(X)
    lo, hi = np.percentile(X, [5, 95])
    assert (s.low_, s.high_) == (lo, hi)
    U = s.transform(X)
    assert U.min() == 0.0 and U.max() == 1.0
    inside = (X > lo) & (X < hi)
    np.testing.assert_allclose(U[inside], (X[inside] - lo) / (hi - lo))
    assert np.mean((U == 0) | (U == 1)) == pytest.approx(0.10, abs=0.01)
    with pytest.raises(ValueError, match="quantile"):
        QuantileScaler(0.5).fit(X)


def test_quantile_map_equal_sizes_reproduces_public_values():
    rng = np.random.default_rng(1)
    public = rng.gamma(2.0, size=(30, 8))
    private = 3.0 + 0.5 * rng.normal(size=(30, 8))
    mapped = quantile_map(private, public)
    np.testing.assert_array_equal(np.sort(mapped, axis=None), np.sort(public, axis=None))
    # order of the private entries is kept
    np.testing.assert_array_equal(
        np.argsort(mapped, axis=None, kind="stable"), np.argsort(private, axis=None, kind="stable")
    )


def test_quantile_map_unequal_sizes_interpolates_public_quantiles():
    rng = np.random.default_rng(2)
    public = rng.normal(size=(50, 4))
    private = rng.uniform(size=(7, 4))
    mapped = quantile_map(private, public)
    ref = np.sort(public, axis=None)
    expected = np.interp(np.linspace(0, ref.size - 1, private.size), np.arange(ref.size), ref)
    np.testing.assert_allclose(np.sort(mapped, axis=None), expected, rtol=1e-12)


def test_line_local_mapping_equals_the_global_one_for_a_single_line():
    rng = np.random.default_rng(4)
    public = rng.gamma(2.0, size=(40, 30))
    line = rng.normal(size=(1, 30))
    np.testing.assert_array_equal(quantile_map(line, public, local=True),
                                  quantile_map(line, public))


def test_line_local_mapping_keeps_other_lines_when_one_line_changes():
    rng = np.random.default_rng(5)
    public = rng.gamma(2.0, size=(40, 30))
    private = rng.normal(size=(6, 30))
    changed = private.copy()
    changed[2] = 10 * rng.normal(size=30)
    others = [0, 1, 3, 4, 5]
    local = quantile_map(private, public, local=True)
    np.testing.assert_array_equal(local[others],
                                  quantile_map(changed, public, local=True)[others])
    # the paper's global mapping moves the other lines (what the corrected pipeline fixes)
    assert np.abs(quantile_map(private, public)[others]
                  - quantile_map(changed, public)[others]).max() > 0.1
    # each line takes the pooled public quantiles at evenly spaced ranks
    ref = np.sort(public, axis=None)
    expected = np.interp(np.linspace(0, ref.size - 1, 30), np.arange(ref.size), ref)
    np.testing.assert_allclose(np.sort(local[1]), expected, rtol=1e-12)


def test_quantile_map_dataframes_use_shared_genes_in_public_order():
    rng = np.random.default_rng(3)
    public = pd.DataFrame(rng.normal(size=(6, 3)), columns=["G3", "G1", "G2"])
    private = pd.DataFrame(rng.normal(size=(4, 3)), columns=["G1", "G2", "G9"], index=list("abcd"))
    mapped = quantile_map(private, public)
    assert list(mapped.columns) == ["G1", "G2"]
    assert list(mapped.index) == list("abcd")
    with pytest.raises(TypeError, match="DataFrames"):
        quantile_map(private, public.to_numpy())


def test_vae_validation_loss_falls(fitted_vae):
    v = fitted_vae
    assert v.history_["val_loss"][v.best_epoch_ - 1] < v.initial_val_loss_
    assert min(v.history_["train_loss"]) < v.initial_train_loss_
    assert 1 <= v.best_epoch_ <= v.n_epochs_ <= VAE_KW["max_epochs"]
    assert len(v.history_["val_loss"]) == v.n_epochs_


def test_vae_reconstruction_beats_column_mean_on_held_out_rows(fitted_vae, lowrank):
    train, test = lowrank
    v = fitted_vae
    u_test = v.scaler_.transform(test)
    u_train = v.scaler_.transform(train)
    mse_vae = np.mean((v.reconstruct_scaled(test) - u_test) ** 2)
    mse_mean = np.mean((u_train.mean(axis=0) - u_test) ** 2)
    assert mse_vae < 0.6 * mse_mean
    z = v.transform(test)
    assert z.shape == (len(test), 4)
    # inverse_transform goes back to expression units
    np.testing.assert_allclose(
        v.scaler_.transform(v.inverse_transform(z)), v.reconstruct_scaled(test), atol=1e-6
    )


def test_vae_aligns_dataframe_columns(fitted_vae, lowrank):
    _, test = lowrank
    shuffled = test[test.columns[::-1]]
    np.testing.assert_array_equal(fitted_vae.transform(shuffled), fitted_vae.transform(test))
    with pytest.raises(ValueError, match="lacks"):
        fitted_vae.transform(test.iloc[:, 1:])


def test_vae_same_seed_gives_identical_weights_and_outputs(lowrank, caplog):
    train, test = lowrank
    kw = dict(VAE_KW, max_epochs=3, log_every=1)
    with caplog.at_level(logging.INFO, logger="dprepro.representations.vae"):
        a = VAERepresentation(3, random_state=7, device="cpu", **kw).fit(train)
    assert any("epoch    3" in r.getMessage() for r in caplog.records)
    b = VAERepresentation(3, random_state=7, device="cpu", **kw).fit(train)
    c = VAERepresentation(3, random_state=8, device="cpu", **kw).fit(train)
    sa, sb = a.model_.state_dict(), b.model_.state_dict()
    assert sa.keys() == sb.keys()
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    np.testing.assert_array_equal(a.transform(test), b.transform(test))
    assert a.history_ == b.history_
    assert not np.array_equal(a.transform(test), c.transform(test))


def test_vae_adam_steps_are_torch_adams_to_the_bit(lowrank, monkeypatch):
    """The fit's Adam (AdamSteps: one update over all parameters at once) gives the weights of
    torch.optim.Adam's per-parameter loop, bit for bit."""
    import dprepro.representations.vae as vae_module

    train, _ = lowrank
    kw = dict(VAE_KW, max_epochs=4)
    seen = []

    def torch_adam(params, *, lr):
        seen.append(lr)
        return torch.optim.Adam(params, lr=lr, foreach=False)

    a = VAERepresentation(3, random_state=5, device="cpu", **kw).fit(train)
    monkeypatch.setattr(vae_module, "AdamSteps", torch_adam)
    b = VAERepresentation(3, random_state=5, device="cpu", **kw).fit(train)
    assert len(seen) == 1
    sa, sb = a.model_.state_dict(), b.model_.state_dict()
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    assert a.history_ == b.history_


def test_adam_steps_follow_torch_adam_including_parameters_without_a_gradient():
    """Step by step against torch.optim.Adam(foreach=True): a parameter left without a
    gradient stays, and its moments and step count start at its first gradient."""
    from dprepro.representations.adam import AdamSteps

    def model():
        torch.manual_seed(3)
        # "b" (no gradient at first) between two that have one: state kept by a parameter's
        # place among those with a gradient would give "c" the state of "b" and fail here
        return torch.nn.ModuleDict({"a": torch.nn.Linear(6, 4), "b": torch.nn.Linear(4, 2),
                                    "c": torch.nn.Linear(4, 3)})

    ours, theirs = model(), model()
    steps = AdamSteps(ours.parameters(), lr=0.01, betas=(0.8, 0.99), eps=1e-6)
    reference = torch.optim.Adam(theirs.parameters(), lr=0.01, betas=(0.8, 0.99), eps=1e-6,
                                 foreach=True)
    x = torch.randn(16, 6, generator=torch.Generator().manual_seed(4))
    for step in range(12):
        for net, opt in ((ours, steps), (theirs, reference)):
            opt.zero_grad()
            hidden = net["a"](x)
            # "b" gets no gradient in the first five steps
            loss = ((hidden ** 2).mean() + net["c"](hidden).pow(2).mean()
                    + (net["b"](hidden).sum() if step >= 5 else 0))
            loss.backward()
            opt.step()
        for name, p in ours.named_parameters():
            assert torch.equal(p, dict(theirs.named_parameters())[name]), (step, name)
    # the step moved "b" only after it had a gradient
    assert not torch.equal(ours["b"].weight, model()["b"].weight)


@pytest.mark.parametrize("kwargs", [{"lr": 0}, {"lr": float("nan")}, {"lr": True},
                                    {"lr": 0.1, "betas": (0.9, 1.0)},
                                    {"lr": 0.1, "eps": -1.0}])
def test_adam_steps_refuse_bad_settings(kwargs):
    from dprepro.representations.adam import AdamSteps

    with pytest.raises(ValueError, match=next(iter(k for k in kwargs if k != "lr"), "lr")):
        AdamSteps(torch.nn.Linear(2, 2).parameters(), **kwargs)


def test_adam_steps_refuse_what_torch_adam_cannot_step():
    from dprepro.representations.adam import AdamSteps

    layer = torch.nn.Linear(2, 2)
    with pytest.raises(TypeError, match="one tensor"):
        AdamSteps(layer.weight, lr=0.1)
    with pytest.raises(TypeError, match="parameter 1 is a float"):
        AdamSteps([layer.weight, 0.5], lr=0.1)
    with pytest.raises(ValueError, match="not a leaf"):
        AdamSteps([layer.weight * 2], lr=0.1)
    with pytest.raises(ValueError, match="same parameter twice"):
        AdamSteps([layer.weight, layer.bias, layer.weight], lr=0.1)
    with pytest.raises(ValueError, match="no parameters"):
        AdamSteps([], lr=0.1)


def test_a_vae_fit_does_not_import_torchdynamo(lowrank, tmp_path):
    """torch.optim's Optimizer imports TorchDynamo (about as costly as torch): a fit in a
    fresh interpreter leaves it out."""
    train, _ = lowrank
    np.save(tmp_path / "train.npy", train)
    code = (
        "import sys, numpy as np\n"
        "from dprepro.representations.vae import VAERepresentation\n"
        f"VAERepresentation(3, random_state=5, device='cpu', max_epochs=2)"
        f".fit(np.load({str(tmp_path / 'train.npy')!r}))\n"
        "print('torch._dynamo' in sys.modules)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT / "scripts")},
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().splitlines()[-1] == "False"


def test_vae_module_shapes_and_variance_floor():
    g = torch.Generator().manual_seed(0)
    m = VAE(10, 2, [8, 6], log_var_floor=-3.0, init_log_var=-1.0, generator=g)
    assert float(m.x_log_var().detach()) == pytest.approx(-1.0, abs=1e-5)
    with torch.no_grad():
        m.x_log_var_raw.fill_(-50.0)
    assert float(m.x_log_var().detach()) >= -3.0
    x = torch.rand(5, 10)
    x_hat, mu, log_var = m(x, torch.Generator().manual_seed(1))
    assert x_hat.shape == (5, 10) and mu.shape == (5, 2) and log_var.shape == (5, 2)
    assert torch.all((x_hat >= 0) & (x_hat <= 1))
    assert [lin.out_features for lin in m.encoder if isinstance(lin, torch.nn.Linear)] == [8, 6]
    assert [lin.out_features for lin in m.decoder if isinstance(lin, torch.nn.Linear)] == [6, 8]


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"n_hidden_layers": 4}, ValueError, "n_hidden_layers"),
        ({"learning_rate": 0.0}, ValueError, "learning_rate"),
        ({"validation_fraction": 1.0}, ValueError, "validation_fraction"),
        ({"random_state": "a"}, TypeError, "random_state"),
        ({"latent_dim": 0}, ValueError, "latent_dim"),
    ],
)
def test_vae_validation(kwargs, exc, match):
    kw = {"latent_dim": 2, **kwargs}
    with pytest.raises(exc, match=match):
        VAERepresentation(kw.pop("latent_dim"), **kw)


def test_vae_bad_device_is_rejected(lowrank):
    train, _ = lowrank
    with pytest.raises(ValueError, match="device"):
        VAERepresentation(2, device="tpu9", max_epochs=1).fit(train)


def test_vae_width_cap_and_the_memory_model_match_the_network(lowrank):
    """vae.max_hidden_width caps a candidate's width (multiplier x r), and the weights that
    size the VAE jobs' memory (vae_size.vae_training_mb) are the network's own."""
    import torch

    from dprepro.representations import vae_size
    from dprepro.representations.vae import VAE
    from dprepro.studies.repr_transfer import fitting

    assert vae_size.vae_hidden_width(20, 10_000) == 200_000
    assert vae_size.vae_hidden_width(20, 10_000, 4096) == 4096
    assert vae_size.vae_hidden_width(3, 2, 4096) == 6
    train, _ = lowrank
    model = fitting.fit_representation(
        "vae", {"dim": 3, "hidden_layers": 2, "width_multiplier": 10, "learning_rate": 1e-3},
        train, rng=np.random.default_rng(0),
        vae_options={"max_hidden_width": 8, "max_epochs": 1, "device": "cpu"})
    widths = {m.out_features for m in model.model_.encoder.modules()
              if isinstance(m, torch.nn.Linear)}
    assert widths == {8}  # 10 x 3 = 30 capped at 8
    # the memory model counts the big weight matrices; the latent layers (3 x w x r) and
    # the biases are what it leaves out
    n, r = 200, 3
    for width, layers in ((16, 1), (16, 3), (64, 2)):
        net = VAE(n, r, [width] * layers)
        weights = sum(m.weight.numel() for m in net.modules() if isinstance(m, torch.nn.Linear))
        counted = (vae_size.vae_training_mb(n, width, layers, base_mb=0) * 2**20) / 16
        assert counted <= weights <= counted + 3 * width * r, (width, layers)


def test_vae_training_options_pin_torch_to_the_configured_threads(lowrank, monkeypatch, caplog):
    """A VAE job's torch threads are ``vae.threads``, not the job's share of ``--cores``,
    and its numpy BLAS goes to one thread (from two here); the log names torch's actual
    threads and warns when the job has fewer cores; a bad count is refused by name, and
    so is a thread count that reaches a fit without going through them."""
    from threadpoolctl import threadpool_info, threadpool_limits

    from dprepro.studies.repr_transfer.fitting import fit_representation, vae_training_options

    train, _ = lowrank
    before = torch.get_num_threads()
    saved = threadpool_limits(limits=None)  # every library's limit, restored below
    for variable in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.setenv(variable, "2")  # restored after the test
    log = logging.getLogger("test_vae_threads")
    try:
        threadpool_limits(2, user_api="blas")
        assert {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"} == {2}
        with caplog.at_level(logging.INFO, logger=log.name):
            options = vae_training_options({"threads": 2, "device": "cpu", "max_epochs": 4},
                                           job_cores=1, log=log)
        assert options == {"device": "cpu", "max_epochs": 4}
        assert torch.get_num_threads() == 2
        assert os.environ["OPENBLAS_NUM_THREADS"] == os.environ["MKL_NUM_THREADS"] == "1"
        assert {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"} == {1}
        assert "VAE fits on cpu with 2 torch CPU thread(s)" in caplog.text
        assert "vae.threads = 2 on 1 core(s): oversubscribed" in caplog.text
        caplog.clear()
        with caplog.at_level(logging.INFO, logger=log.name):
            assert vae_training_options({"device": "cpu"}, job_cores=1, log=log) == {
                "device": "cpu"}
        assert torch.get_num_threads() == 1
        assert "with 1 torch CPU thread(s)" in caplog.text and "oversubscribed" not in caplog.text
        for bad in (0, True, 1.5, "2"):
            with pytest.raises(ValueError, match="threads"):
                vae_training_options({"threads": bad, "device": "cpu"})
        spec = {"dim": 2, "learning_rate": 1e-3, "hidden_layers": 1, "width_multiplier": 8}
        with pytest.raises(ValueError, match="vae_training_options"):
            fit_representation("vae", spec, train, rng=np.random.default_rng(0),
                               vae_options={"threads": 2, "device": "cpu", "max_epochs": 1})
    finally:
        torch.set_num_threads(before)
        saved.restore_original_limits()
