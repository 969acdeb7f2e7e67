r"""SYNTHETIC public/private expression data for study ``repr_transfer``.

Stands in for the real inputs (public DepMap/CCLE or TCGA expression with
lineages; private GDSC expression with LN_IC50 drug responses), which are
large or may not be redistributed, so that the whole study runs offline on a
laptop in minutes. Nothing here is real data: every returned table carries
``attrs["synthetic"] = True`` and the returned dict has ``"synthetic": True``.

Generative model (shared by both sets; :math:`r` = ``rank``, :math:`K` =
``n_lineages``):

.. math::

    \ell_i &\sim \mathrm{Categorical}(\pi), \qquad
    z_i = c_{\ell_i} + u_i,\quad c_k \sim N(0, s_c^2 I_r),\ u_i \sim N(0, I_r), \\
    e_{ig} &= \max\bigl(0,\ m_g + a_g\, z_i^\top v_g / \sqrt r + \sigma_e \eta_{ig}\bigr),
    \qquad v_g \sim N(0, I_r),\ \eta_{ig} \sim N(0,1), \\
    y_{id} &= b_d + z_i^\top \beta_d / \sqrt r + \sigma_y \xi_{id},
    \qquad \beta_d \sim N(0, s_\beta^2 I_r),

so expression is low-rank plus noise (log2(TPM+1)-like, floored at 0), the
lineage is encoded in the latent :math:`z` (auxiliary cancer-type task), and
the responses depend on the expression only through :math:`z`. The private
set is measured on a different "platform": its expression is
:math:`e' = p_0 + p_1 e + \sigma_p \zeta` (an RMA-like affine change of
scale), which global quantile mapping
(:func:`dprepro.representations.quantile.quantile_map`) undoes approximately.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["synthetic_public_private"]


def _check_count(name: str, value, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if value < low:
        raise ValueError(f"{name} must be >= {low}, got {value}")
    return int(value)


def _check_nonneg(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise TypeError(f"{name} must be a number, got {value!r}")
    if not np.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be finite and >= 0, got {value!r}")
    return float(value)


def _mark(obj):
    obj.attrs["synthetic"] = True
    return obj


def _checked_scales(lineage_separation, expression_noise, response_effect, response_noise,
                    platform_scale, platform_shift, platform_noise, missing_fraction):
    """The scales of :func:`synthetic_public_private` as floats, in its order; ValueError
    naming the first out of its domain."""
    s_c = _check_nonneg("lineage_separation", lineage_separation)
    s_e = _check_nonneg("expression_noise", expression_noise)
    s_b = _check_nonneg("response_effect", response_effect)
    s_y = _check_nonneg("response_noise", response_noise)
    p1 = _check_nonneg("platform_scale", platform_scale)
    if p1 == 0:
        raise ValueError("platform_scale must be > 0")
    p0 = float(platform_shift)
    s_p = _check_nonneg("platform_noise", platform_noise)
    miss = _check_nonneg("missing_fraction", missing_fraction)
    if miss >= 1:
        raise ValueError(f"missing_fraction must be < 1, got {missing_fraction}")
    return s_c, s_e, s_b, s_y, p1, p0, s_p, miss


def synthetic_public_private(
    rng: np.random.Generator,
    *,
    n_public: int = 1000,
    n_private: int = 400,
    n_genes: int = 2000,
    rank: int = 10,
    n_lineages: int = 8,
    n_drugs: int = 20,
    lineage_separation: float = 1.5,
    expression_noise: float = 1.0,
    response_effect: float = 0.5,
    response_noise: float = 1.0,
    platform_scale: float = 0.8,
    platform_shift: float = 1.5,
    platform_noise: float = 0.2,
    missing_fraction: float = 0.0,
) -> dict:
    r"""Draw a SYNTHETIC public/private expression pair with lineages and drug responses.

    Parameters
    ----------
    rng : numpy.random.Generator
        The only source of randomness.
    n_public, n_private : int
        Samples (cell lines) in the public and the private set.
    n_genes : int
        Genes, named ``GENE0001``, ``GENE0002``, ...
    rank : int
        Dimension :math:`r` of the shared latent structure.
    n_lineages : int
        Lineages (cancer types), named ``lineage_01``, ...; their
        probabilities are :math:`\pi_k \propto 1 + k/K` so classes are mildly
        unbalanced.
    n_drugs : int
        Drugs, columns ``DRUG001``, ... of the response table.
    lineage_separation : float, default 1.5
        :math:`s_c`, spread of the lineage centres in latent units.
    expression_noise : float, default 1.0
        :math:`\sigma_e`.
    response_effect, response_noise : float, default 0.5 and 1.0
        :math:`s_\beta` and :math:`\sigma_y`.
    platform_scale, platform_shift, platform_noise : float
        :math:`p_1, p_0, \sigma_p` of the private platform.
    missing_fraction : float, default 0.0
        Fraction of private responses set to NaN at random (GDSC has gaps).

    Returns
    -------
    dict
        ``public_expression``, ``private_expression`` : DataFrame (samples x genes);
        ``public_lineage``, ``private_lineage`` : Series of str;
        ``private_response`` : DataFrame (private samples x drugs, LN_IC50-like);
        ``public_latent``, ``private_latent`` : ndarray (samples x rank);
        ``synthetic`` : True. Every table has ``attrs["synthetic"] = True``.
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    n_public = _check_count("n_public", n_public, 2)
    n_private = _check_count("n_private", n_private, 2)
    n_genes = _check_count("n_genes", n_genes, 1)
    rank = _check_count("rank", rank, 1)
    n_lineages = _check_count("n_lineages", n_lineages, 1)
    n_drugs = _check_count("n_drugs", n_drugs, 1)
    s_c, s_e, s_b, s_y, p1, p0, s_p, miss = _checked_scales(
        lineage_separation, expression_noise, response_effect, response_noise,
        platform_scale, platform_shift, platform_noise, missing_fraction)

    genes = [f"GENE{g + 1:04d}" for g in range(n_genes)]
    lineages = np.array([f"lineage_{k + 1:02d}" for k in range(n_lineages)])
    drugs = [f"DRUG{d + 1:03d}" for d in range(n_drugs)]

    # parameters shared by both sets
    centres = s_c * rng.standard_normal((n_lineages, rank))
    probs = 1.0 + np.arange(n_lineages) / n_lineages
    probs /= probs.sum()
    loadings = rng.standard_normal((rank, n_genes)) / np.sqrt(rank)
    gene_mean = rng.normal(4.0, 1.5, size=n_genes)
    gene_amp = rng.uniform(0.5, 1.5, size=n_genes)
    drug_mean = rng.normal(2.0, 1.5, size=n_drugs)
    drug_coef = s_b * rng.standard_normal((rank, n_drugs)) / np.sqrt(rank)

    def draw(n):
        lab = rng.choice(n_lineages, size=n, p=probs)
        z = centres[lab] + rng.standard_normal((n, rank))
        expr = gene_mean + gene_amp * (z @ loadings) + s_e * rng.standard_normal((n, n_genes))
        return lab, z, np.maximum(expr, 0.0)

    pub_lab, pub_z, pub_x = draw(n_public)
    prv_lab, prv_z, prv_x = draw(n_private)
    prv_x = p0 + p1 * prv_x + s_p * rng.standard_normal(prv_x.shape)
    resp = drug_mean + prv_z @ drug_coef + s_y * rng.standard_normal((n_private, n_drugs))
    if miss > 0:
        resp[rng.random(resp.shape) < miss] = np.nan

    pub_ids = pd.Index([f"PUB{i + 1:05d}" for i in range(n_public)], name="sample")
    prv_ids = pd.Index([f"PRIV{i + 1:05d}" for i in range(n_private)], name="sample")
    gene_idx = pd.Index(genes, name="gene")
    return {
        "public_expression": _mark(pd.DataFrame(pub_x, index=pub_ids, columns=gene_idx)),
        "private_expression": _mark(pd.DataFrame(prv_x, index=prv_ids, columns=gene_idx)),
        "public_lineage": _mark(pd.Series(lineages[pub_lab], index=pub_ids, name="lineage")),
        "private_lineage": _mark(pd.Series(lineages[prv_lab], index=prv_ids, name="lineage")),
        "private_response": _mark(
            pd.DataFrame(resp, index=prv_ids, columns=pd.Index(drugs, name="drug"))
        ),
        "public_latent": pub_z,
        "private_latent": prv_z,
        "synthetic": True,
    }
