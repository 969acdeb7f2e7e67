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

__all__ = ["fit_pca", "truncate_pca"]


# --------------------------------------------------------------------------- #
# PCA and random projection
# --------------------------------------------------------------------------- #
def fit_pca(public, dim: int, *, random_state=None, svd_solver: str = "full") -> PCA:
    r"""Fit PCA with ``dim`` components on the public matrix.

    :math:`f(x) = V_r^\top (x - \bar x_{pub})` with :math:`V_r` the top-r
    right singular vectors of the centred public data (scikit-learn's sign
    convention). The paper uses scikit-learn ``PCA(n_components=r)``.

    Parameters
    ----------
    public : array_like or DataFrame of shape (m, d)
    dim : int
        Representation size r (1 <= r <= min(m, d)).
    random_state : int, optional
        Passed to :class:`sklearn.decomposition.PCA` (used by randomized solvers).
    svd_solver : str, default "full"
        Exact LAPACK SVD by default, so the result does not depend on the seed.

    Returns
    -------
    sklearn.decomposition.PCA
        Fitted; use ``transform`` / ``inverse_transform``.
    """
    m, d = np.shape(public)
    dim = check_int("dim", dim, 1, min(m, d))
    return PCA(n_components=dim, svd_solver=svd_solver, random_state=random_state).fit(public)



def truncate_pca(model: PCA, dim: int) -> PCA:
    r"""The exact-SVD PCA with ``dim`` components, from a fitted one with more.

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
    """
    import copy

    if getattr(model, "svd_solver", None) != "full":
        raise ValueError("only the exact SVD (svd_solver='full') is nested; got "
                         f"{getattr(model, 'svd_solver', None)!r}")
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

