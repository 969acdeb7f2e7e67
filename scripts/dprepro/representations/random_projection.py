"""Gaussian random projection: the paper's data-independent baseline representation."""

from __future__ import annotations

import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator, TransformerMixin

from dprepro.representations.base import FeatureNamesMixin, as_generator, check_int

__all__ = ["RandomProjection"]


class RandomProjection(FeatureNamesMixin, TransformerMixin, BaseEstimator):
    r"""Orthonormalised Gaussian random projection, centred on the public mean.

    :math:`f(x) = A^\top (x - \bar x_{pub})` where :math:`A \in \mathbb
    R^{d\times r}` is an orthonormal basis (``scipy.linalg.orth``, as in the
    authors' ``rand_proj.py``) of the span of a matrix with i.i.d. N(0, 1)
    entries. Only the mean depends on data.

    Parameters
    ----------
    dim : int
        Representation size r.
    random_state : int or numpy.random.Generator, optional

    Attributes
    ----------
    components_ : ndarray of shape (d, r)
        :math:`A`, with :math:`A^\top A = I_r`.
    mean_ : ndarray of shape (d,)
    """

    def __init__(self, dim: int, *, random_state=None):
        self.dim = dim
        self.random_state = random_state

    def fit(self, X, y=None):
        X = self._to_array_fit(X)
        d = X.shape[1]
        dim = check_int("dim", self.dim, 1, d)
        rng = as_generator(self.random_state)
        self.components_ = scipy.linalg.orth(rng.standard_normal((d, dim)))
        self.mean_ = X.mean(axis=0)
        return self

    def transform(self, X) -> np.ndarray:
        return (self._to_array(X) - self.mean_) @ self.components_

    def inverse_transform(self, Z) -> np.ndarray:
        return np.asarray(Z, dtype=float) @ self.components_.T + self.mean_

