"""The learners' noise draws: objective perturbation (CMS11) and SSP's Laplace and Wishart terms."""

from __future__ import annotations

import math

import numpy as np

from dprepro.learners.accounting import ssp_shares
from dprepro.learners.checks import check_epsilon, check_positive, check_rng, check_share

# re-exported: the clipping weights and the feature-selection baselines live in their own
# modules (split by concept); importing them from here keeps callers working

__all__ = [
    "objective_perturbation_noise",
    "objective_perturbation_noise_draws",
    "psd_repair",
    "ssp_laplace_noise",
    "ssp_laplace_noise_draws",
    "ssp_noise",
    "ssp_noise_draws",
    "wishart_noise",
]


# --------------------------------------------------------------------------- #
# noise draws
# --------------------------------------------------------------------------- #
def objective_perturbation_noise(dim: int, *, epsilon: float, rng: np.random.Generator):
    r"""Draw the noise vector of objective perturbation.

    The density is :math:`\nu(b) \propto \exp(-\tfrac{\epsilon}{2}\lVert b\rVert)`
    on :math:`\mathbb R^{dim}`, i.e. :math:`\lVert b\rVert \sim
    \mathrm{Gamma}(\text{shape}=dim, \text{scale}=2/\epsilon)` and
    :math:`b/\lVert b\rVert` uniform on the sphere (CMS11, Algorithm 1/2).

    Parameters
    ----------
    dim : int
        Dimension of the parameter vector (features + bias).
    epsilon : float
        Privacy parameter of the noise density (> 0, finite).
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of shape (dim,)
    """
    dim, scale = _check_op_noise_args(dim, epsilon, rng)
    # not objective_perturbation_noise_draws(..., 1)[0]: the same generator calls, but its
    # vectorised arithmetic rounds differently, and the learners' tables depend on these bits
    norm = rng.gamma(shape=dim, scale=scale)
    direction = rng.standard_normal(dim)
    # np.linalg.norm of a vector is sqrt(x.dot(x)), without its per-call overhead
    return norm * direction / math.sqrt(direction.dot(direction))


def objective_perturbation_noise_draws(dim: int, draws: int, *, epsilon: float,
                                       rng: np.random.Generator) -> np.ndarray:
    """``draws`` independent noise vectors of :func:`objective_perturbation_noise`, at once.

    Drawn in two vectorised calls, all norms and then all directions (the
    privacy audit's 10⁵ draws: a Python step per vector took ~0.5 s per
    10⁵). The stream therefore differs from ``draws`` successive single
    draws; one draw (``draws=1``) takes the same values from the generator
    as :func:`objective_perturbation_noise`.

    Returns
    -------
    ndarray of shape (draws, dim)
    """
    dim, scale = _check_op_noise_args(dim, epsilon, rng)
    draws = _check_draws(draws)
    norms = rng.gamma(shape=dim, scale=scale, size=draws)
    directions = rng.standard_normal((draws, dim))
    lengths = np.sqrt(np.einsum("ij,ij->i", directions, directions))
    return (norms / lengths)[:, None] * directions


def _check_op_noise_args(dim, epsilon, rng) -> tuple[int, float]:
    """Validated (d, Gamma scale 2/ε) of an objective-perturbation noise draw."""
    if isinstance(dim, bool) or not isinstance(dim, int | np.integer) or dim < 1:
        raise ValueError(f"dim must be a positive integer, got {dim!r}")
    epsilon = check_epsilon(epsilon)
    if not math.isfinite(epsilon):
        raise ValueError("epsilon must be finite to draw noise")
    check_rng(rng, epsilon)
    return int(dim), 2.0 / epsilon


def _check_draws(draws) -> int:
    if isinstance(draws, bool) or not isinstance(draws, int | np.integer) or draws < 1:
        raise ValueError(f"draws must be a positive integer, got {draws!r}")
    return int(draws)


def wishart_noise(dim: int, df: int, scale: float, *, rng: np.random.Generator) -> np.ndarray:
    r"""Draw :math:`W \sim \mathrm{Wishart}_{dim}(df, \text{scale}\cdot I)`.

    For integer ``df`` this is :math:`W = \sum_{k=1}^{df} g_k g_k^\top` with
    :math:`g_k \sim N(0, \text{scale}\, I)`, so :math:`E[W] = df\cdot
    \text{scale}\cdot I` (the parametrisation of :func:`scipy.stats.wishart`).
    """
    if isinstance(dim, bool) or not isinstance(dim, int | np.integer) or dim < 1:
        raise ValueError(f"dim must be a positive integer, got {dim!r}")
    if isinstance(df, bool) or not isinstance(df, int | np.integer) or df < dim:
        raise ValueError(f"df must be an integer >= dim={dim}, got {df!r}")
    scale = check_positive("scale", scale)
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    g = rng.standard_normal((int(df), int(dim))) * math.sqrt(scale)
    return g.T @ g


def ssp_noise(
    dim: int,
    *,
    epsilon: float,
    clip_x: float,
    clip_y: float,
    rng: np.random.Generator,
    xx_share: float = 0.5,
) -> tuple[np.ndarray, np.ndarray]:
    r"""Draw the noise of sufficient statistics perturbation (Honkela et al. 2018).

    With element-wise bounds :math:`|x_{ij}| \le B_x`, :math:`|y_i| \le B_y`
    and budget split :math:`\epsilon_1 = p\,\epsilon` (for :math:`X^\top X`),
    :math:`\epsilon_2 = (1-p)\,\epsilon` (for :math:`X^\top y`):

    .. math::

        W \sim \mathrm{Wishart}_d\!\left(d+1,\ \frac{d B_x^2}{\epsilon_1} I\right),
        \qquad
        L_j \overset{iid}{\sim} \mathrm{Laplace}\!\left(0,\ \frac{2 d B_x B_y}{\epsilon_2}\right).

    The Laplace scale is the L1 sensitivity :math:`2 d B_x B_y` of
    :math:`X^\top y` under replacement of one row divided by
    :math:`\epsilon_2`. With :math:`p = 1/2` these are exactly the parameters
    of the authors' ``diffpri.predictL`` (``wishart.rvs(d+1, 2 d B_x^2/e)``,
    ``laplace(scale=4 d B_x B_y/e)``).

    Returns
    -------
    W : ndarray of shape (dim, dim)
    L : ndarray of shape (dim,)
    """
    root_scale, laplace_scale = _ssp_noise_scales(dim, epsilon, clip_x, clip_y, xx_share, rng)
    # not ssp_noise_draws(..., 1): a batched matmul may round g.T @ g differently (see
    # objective_perturbation_noise)
    g = rng.standard_normal((dim + 1, dim)) * root_scale
    return g.T @ g, rng.laplace(0.0, laplace_scale, size=dim)


def ssp_noise_draws(
    dim: int,
    draws: int,
    *,
    epsilon: float,
    clip_x: float,
    clip_y: float,
    rng: np.random.Generator,
    xx_share: float = 0.5,
) -> tuple[np.ndarray, np.ndarray]:
    """``draws`` independent noise pairs of :func:`ssp_noise`, at once.

    Drawn in two vectorised calls, all Wishart normals and then all Laplace
    variables (the privacy audit's 10⁵ draws): the stream differs from
    ``draws`` successive calls of :func:`ssp_noise`, whose distribution each
    pair has. ``draws=1`` takes the same values from the generator.

    Returns
    -------
    W : ndarray of shape (draws, dim, dim)
    L : ndarray of shape (draws, dim)
    """
    draws = _check_draws(draws)
    root_scale, laplace_scale = _ssp_noise_scales(dim, epsilon, clip_x, clip_y, xx_share, rng)
    g = rng.standard_normal((draws, dim + 1, dim)) * root_scale
    L = rng.laplace(0.0, laplace_scale, size=(draws, dim))
    return np.matmul(g.transpose(0, 2, 1), g), L


def _ssp_noise_scales(dim, epsilon, clip_x, clip_y, xx_share, rng) -> tuple[float, float]:
    """(√ of the Wishart scale, Laplace scale) of an SSP noise draw, arguments validated."""
    epsilon, clip_x, clip_y, xx_share = _check_noise_args(epsilon, clip_x, clip_y, xx_share,
                                                           rng)
    if isinstance(dim, bool) or not isinstance(dim, int | np.integer) or dim < 1:
        raise ValueError(f"dim must be a positive integer, got {dim!r}")
    dim = int(dim)
    eps_xx, eps_xy = ssp_shares(epsilon, xx_share)
    root_scale = math.sqrt(dim * clip_x**2 / eps_xx)  # as wishart_noise computes it
    return root_scale, 2.0 * dim * clip_x * clip_y / eps_xy


def _check_noise_args(epsilon, clip_x, clip_y, xx_share, rng):
    """Validated (ε, B_x, B_y, share of ε on XᵀX) of an SSP noise draw."""
    epsilon = check_epsilon(epsilon)
    if not math.isfinite(epsilon):
        raise ValueError("epsilon must be finite to draw noise")
    clip_x = check_positive("clip_x", clip_x)
    clip_y = check_positive("clip_y", clip_y)
    xx_share = check_share(xx_share)
    check_rng(rng, epsilon)
    return epsilon, clip_x, clip_y, xx_share


def ssp_laplace_noise(
    dim: int,
    *,
    epsilon: float,
    clip_x: float,
    clip_y: float,
    rng: np.random.Generator,
    xx_share: float = 0.5,
) -> tuple[np.ndarray, np.ndarray]:
    r"""SSP noise with Laplace on the upper triangle of :math:`X^\top X` (full support).

    With :math:`|x_{ij}| \le B_x`, :math:`|y_i| \le B_y`, replacing one row
    changes a diagonal entry of :math:`X^\top X` by at most :math:`B_x^2` and
    an off-diagonal one by at most :math:`2B_x^2`, so the L1 sensitivity of
    the :math:`d(d+1)/2` upper-triangle entries is
    :math:`dB_x^2 + d(d-1)B_x^2 = d^2B_x^2` (adding or removing a row changes
    it by less). Hence

    .. math::

        E_{jk} = E_{kj} \overset{iid}{\sim}
            \mathrm{Laplace}\!\left(0, \frac{d^2 B_x^2}{\epsilon_1}\right)\ (j \le k),
        \qquad
        L_j \overset{iid}{\sim} \mathrm{Laplace}\!\left(0, \frac{2 d B_x B_y}{\epsilon_2}\right),

    :math:`\epsilon_1 = p\,\epsilon`, :math:`\epsilon_2 = (1-p)\,\epsilon`, is
    pure ε-DP by the Laplace mechanism and composition. Unlike the Wishart
    noise of :func:`ssp_noise` the noise has full support, so the privacy
    loss is bounded for every output (Dwork & Roth 2014, Thm 3.6). The noisy
    matrix may be indefinite: repair it with :func:`psd_repair`
    (post-processing, free). AdaSSP (Wang 2018) perturbs the same statistics.

    Returns
    -------
    E : ndarray of shape (dim, dim), symmetric
    L : ndarray of shape (dim,)
    """
    d, xx_scale, xy_scale = _ssp_laplace_scales(dim, epsilon, clip_x, clip_y, xx_share, rng)
    upper = np.triu_indices(d)
    E = np.zeros((d, d))
    E[upper] = rng.laplace(0.0, xx_scale, size=upper[0].size)
    E = E + np.triu(E, 1).T
    L = rng.laplace(0.0, xy_scale, size=d)
    return E, L


def ssp_laplace_noise_draws(
    dim: int,
    draws: int,
    *,
    epsilon: float,
    clip_x: float,
    clip_y: float,
    rng: np.random.Generator,
    xx_share: float = 0.5,
) -> tuple[np.ndarray, np.ndarray]:
    r"""``draws`` independent noise pairs of :func:`ssp_laplace_noise`, at once.

    Drawn in two vectorised calls, all upper triangles and then all Laplace
    variables of :math:`X^\top y` (the privacy audit's 10⁵ draws): the stream differs
    from ``draws`` successive calls, whose distribution each pair has; ``draws=1``
    takes the same values from the generator.

    Returns
    -------
    E : ndarray of shape (draws, dim, dim), symmetric
    L : ndarray of shape (draws, dim)
    """
    draws = _check_draws(draws)
    d, xx_scale, xy_scale = _ssp_laplace_scales(dim, epsilon, clip_x, clip_y, xx_share, rng)
    upper = np.triu_indices(d)
    E = np.zeros((draws, d, d))
    E[:, upper[0], upper[1]] = rng.laplace(0.0, xx_scale, size=(draws, upper[0].size))
    E = E + np.swapaxes(np.triu(E, 1), -1, -2)
    return E, rng.laplace(0.0, xy_scale, size=(draws, d))


def _ssp_laplace_scales(dim, epsilon, clip_x, clip_y, xx_share, rng) -> tuple[int, float, float]:
    """(d, Laplace scale on XᵀX's upper triangle, on Xᵀy) of :func:`ssp_laplace_noise`."""
    epsilon, clip_x, clip_y, xx_share = _check_noise_args(epsilon, clip_x, clip_y, xx_share,
                                                           rng)
    if isinstance(dim, bool) or not isinstance(dim, int | np.integer) or dim < 1:
        raise ValueError(f"dim must be a positive integer, got {dim!r}")
    d = int(dim)
    eps_xx, eps_xy = ssp_shares(epsilon, xx_share)
    return d, d * d * clip_x**2 / eps_xx, 2.0 * d * clip_x * clip_y / eps_xy


def psd_repair(A: np.ndarray, floor: float = 0.0) -> np.ndarray:
    r"""Nearest (Frobenius) symmetric matrix with eigenvalues :math:`\ge` ``floor``.

    :math:`A = Q\Lambda Q^\top \mapsto Q \max(\Lambda, \text{floor}) Q^\top`
    (Higham 1988). Post-processing of a DP release, so it costs no privacy.
    """
    A = np.asarray(A, dtype=float)
    values, vectors = np.linalg.eigh((A + np.swapaxes(A, -1, -2)) / 2.0)
    values = np.maximum(values, float(floor))
    return (vectors * values[..., None, :]) @ np.swapaxes(vectors, -1, -2)

