r"""Representations learned on public data (study ``repr_transfer``).

Niinimäki et al. (2019) learn a map :math:`f: \mathbb R^d \to \mathbb R^r`
on public expression data only (no DP needed) and apply it to the private
data before a DP learner. This module holds the first of the paper's three maps,
:func:`fit_pca` (principal component analysis, scikit-learn) and
:func:`truncate_pca` (the leading components of a wider fit); the others are
:class:`~dprepro.representations.random_projection.RandomProjection` (a
data-independent orthonormal Gaussian projection) and
:class:`~dprepro.representations.vae.VAERepresentation` (a variational autoencoder,
Kingma & Welling 2014, in torch; torch loads only where a VAE is trained).

Everything is deterministic given ``random_state``; no global random state is
touched (torch weights are initialised from a private ``torch.Generator``).

References
----------
Kingma D. P., Welling M. (2014). Auto-encoding variational Bayes. ICLR.

Niinimäki T., Heikkilä M. A., Honkela A., Kaski S. (2019). Representation
transfer for differentially private drug sensitivity prediction.
Bioinformatics 35(14), i218-i224. Code: github.com/DPBayes/dp-representation-transfer
(``models/vae_pytorch.py``, ``models/rand_proj.py``, ``models/normalizer.py``,
``data_processing/unify_tcga_gdsc_datas.py``).
"""

from __future__ import annotations

import numpy as np
from sklearn.decomposition import PCA

from dprepro.representations.base import check_int

__all__ = ["EXACT_MAX_SIDE", "PCA_DEFAULTS", "SVD_SOLVERS", "fit_pca", "pca_solver",
           "truncate_pca"]

#: The PCA solvers of ``repr_transfer.pca.svd_solver``.
SVD_SOLVERS = ("auto", "full", "randomized")
#: ``auto`` keeps the exact SVD while the public matrix's smaller side is at most this: then
#: it costs at most ~90 CPU-s at 17,737 genes (benchmarks/paper_scale.csv), and the quick and
#: full runs (500 and 1,000 public samples) keep their exact fits and tables.
EXACT_MAX_SIDE = 2_000
#: The schema's defaults of ``repr_transfer.pca`` (the keyword arguments of :func:`fit_pca`).
PCA_DEFAULTS = {"svd_solver": "auto", "oversamples": 40, "power_iterations": 10}


# --------------------------------------------------------------------------- #
# PCA and random projection
# --------------------------------------------------------------------------- #
def pca_solver(svd_solver: str, shape) -> str:
    """The solver :func:`fit_pca` runs: ``full`` or ``randomized``.

    ``auto`` is ``full`` (LAPACK's exact SVD) when the smaller side of ``shape``
    is at most :data:`EXACT_MAX_SIDE`, else ``randomized``; the others are kept.
    """
    if svd_solver not in SVD_SOLVERS:
        raise ValueError(f"svd_solver must be one of {list(SVD_SOLVERS)}, got {svd_solver!r}")
    if svd_solver != "auto":
        return svd_solver
    return "full" if min(shape) <= EXACT_MAX_SIDE else "randomized"


def fit_pca(public, dim: int, *, random_state=None, svd_solver: str = "full",
            oversamples: int = 10, power_iterations: int = 7) -> PCA:
    r"""Fit PCA with ``dim`` components on the public matrix.

    :math:`f(x) = V_r^\top (x - \bar x_{pub})` with :math:`V_r` the top-r
    right singular vectors of the centred public data (scikit-learn's sign
    convention: each component's largest entry positive). The paper uses
    scikit-learn ``PCA(n_components=r)``, whose own ``auto`` picks the
    randomized solver at the paper's size.

    The randomized solver (Halko, Martinsson & Tropp 2011, Alg. 4.4 with LU
    normalisation between the passes) sketches the range of the centred
    matrix :math:`A` with :math:`Y = (AA^\top)^q A\Omega`, :math:`\Omega` a
    Gaussian :math:`d \times (r + p)` matrix (:math:`p` = ``oversamples``,
    :math:`q` = ``power_iterations``), and takes the SVD of :math:`Q^\top A`
    with :math:`Q` an orthonormal basis of :math:`Y`: :math:`2q + 2` passes over
    the data, :math:`O(mn(r+p)q)` flops against :math:`O(m^2 n)` for the exact
    SVD. Component :math:`i`'s error shrinks like
    :math:`(\sigma_{r+p+1}/\sigma_i)^{2q+1}` (Halko et al. 2011, Thm 9.2,
    Cor. 10.10); benchmarks/bench_randomized_pca.py measures it at the paper's
    size (docs/performance.md).

    Parameters
    ----------
    public : array_like or DataFrame of shape (m, d)
    dim : int
        Representation size r (1 <= r <= min(m, d)).
    random_state : int or numpy.random.Generator, optional
        Seeds the randomized solver's test matrix :math:`\Omega` (a Generator
        gives one 32-bit draw, the int scikit-learn is passed); required by it,
        unused by the exact SVD.
    svd_solver : {"full", "randomized", "auto"}, default "full"
        The exact LAPACK SVD by default, so the result does not depend on the
        seed; ``auto``: :func:`pca_solver`.
    oversamples, power_iterations : int
        :math:`p` and :math:`q` of the randomized solver (scikit-learn's
        ``n_oversamples`` and ``iterated_power``).

    Returns
    -------
    sklearn.decomposition.PCA
        Fitted; use ``transform`` / ``inverse_transform``.

    References
    ----------
    Halko N., Martinsson P.-G., Tropp J. A. (2011). Finding structure with
    randomness: probabilistic algorithms for constructing approximate matrix
    decompositions. SIAM Review 53(2), 217-288.
    """
    m, d = np.shape(public)
    dim = check_int("dim", dim, 1, min(m, d))
    solver = pca_solver(svd_solver, (m, d))
    if solver == "full":
        return PCA(n_components=dim, svd_solver="full").fit(public)
    oversamples = check_int("oversamples", oversamples, 0)
    power_iterations = check_int("power_iterations", power_iterations, 0)
    if isinstance(random_state, np.random.Generator):
        random_state = int(random_state.integers(0, 2**32))
    elif random_state is None or isinstance(random_state, bool) or not isinstance(
            random_state, int | np.integer):
        raise TypeError("the randomized PCA solver needs random_state, an int or a "
                        f"numpy.random.Generator (reproducible fits), got {random_state!r}")
    return PCA(n_components=dim, svd_solver="randomized", n_oversamples=oversamples,
               iterated_power=power_iterations, power_iteration_normalizer="LU",
               random_state=int(random_state)).fit(public)


def truncate_pca(model: PCA, dim: int) -> PCA:
    r"""The PCA with ``dim`` components, from a fitted one with more.

    PCA is nested: the exact SVD (``svd_solver="full"``) of the centred data
    is computed in full whatever ``n_components``, scikit-learn flips each
    right singular vector's sign by its own largest entry
    (``svd_flip(u_based_decision=False)``) and keeps a copy of the first r
    rows. So the first ``dim`` rows of a fit at :math:`r_{max}` *are* the fit
    at ``dim``: same components (signs included), mean, variances and
    singular values, hence the same ``transform`` to the bit (tested). Only
    ``noise_variance_`` (the mean of the discarded variances) is rebuilt
    from the kept ones, to rounding. The hyperparameter search fits
    :math:`r_{max}` once per pair fold and truncates (at paper scale one
    exact SVD is ~40 CPU minutes).

    A randomized fit (:func:`fit_pca`) is truncated the same way: its first
    ``dim`` components come from a sketch of :math:`r_{max}` + ``oversamples``
    columns, so they are at least as accurate as a fit at ``dim`` (whose sketch
    is smaller; Halko et al. 2011, Thm 9.2), though not equal to it to the bit.
    """
    import copy

    if getattr(model, "svd_solver", None) not in ("full", "randomized"):
        raise ValueError("only the exact SVD (svd_solver='full') and the randomized solver are "
                         f"nested; got {getattr(model, 'svd_solver', None)!r}")
    r_max = int(model.n_components_)
    dim = check_int("dim", dim, 1, r_max)
    out = copy.deepcopy(model)
    out.n_components = out.n_components_ = dim
    for name in ("components_", "explained_variance_", "explained_variance_ratio_",
                 "singular_values_"):
        # a copy in the memory layout scikit-learn keeps (Fortran order for the components,
        # from LAPACK's Vt): the matrix product of transform then runs the same BLAS path
        setattr(out, name, np.array(getattr(model, name)[:dim], copy=True, order="K"))
    rank = min(int(model.n_samples_), int(model.n_features_in_))
    # mean of the variances beyond dim: the kept ones up to r_max plus the mean beyond it
    tail = float(np.sum(model.explained_variance_[dim:])) + float(model.noise_variance_) * (
        rank - r_max)
    out.noise_variance_ = tail / (rank - dim) if rank > dim else 0.0
    return out

