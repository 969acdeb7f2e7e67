r"""A VAE learned jointly with an auxiliary classification task (study ``repr_transfer``).

Niinimäki et al. (2019, Discussion) leave open "whether representation learning
would also benefit from having an integral auxiliary prediction task that would
be learned concurrently with the representation. The optimisation target would
in that case be a combination of unsupervised reconstruction error and
supervised prediction error." :class:`SupervisedVAERepresentation` is that
model: the VAE of :mod:`dprepro.representations.vae` (the same module, training
loop, seeds, early stopping and device handling: it is a subclass) with a linear
classification head on the latent mean :math:`\mu(x)`, trained on the public
rows to minimise

.. math::

    \sum_i \bigl[-\mathrm{ELBO}(x_i)\bigr]
    \;+\; \lambda \sum_{i\,\text{labelled}} \mathrm{CE}\bigl(W\mu(x_i) + b,\ y_i\bigr),

the VAE's summed negative ELBO plus λ times the summed cross-entropy of the
head's multinomial logistic regression on the public auxiliary target (the
lineage, or cancer type, of the public samples). Rows whose label is missing
(``None``/NaN) are unlabelled: they enter the reconstruction and KL terms only.
The early-stopping loss is the same combination on the validation rows.

The head is linear because the downstream DP learners are linear in the
representation (logistic regression on μ); the cross-entropy pulls μ toward
directions that separate the public lineages linearly.

λ = 0 is the VAE itself: the cross-entropy term is skipped, the head's weights
are drawn after the VAE's from the same initialisation generator, and nothing
else consumes randomness, so the same ``random_state`` gives the VAE's weights
and transforms to the bit (tested).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn

from dprepro.representations.base import check_float
from dprepro.representations.vae import VAE, VAERepresentation

__all__ = ["SupervisedVAE", "SupervisedVAERepresentation", "encode_labels"]


class SupervisedVAE(VAE):
    r""":class:`dprepro.representations.vae.VAE` with a linear head on the latent mean.

    ``head(μ)`` gives the logits of ``n_classes`` classes. The VAE's weights
    are drawn first (by :class:`VAE`), then the head's from the same
    ``generator`` (PyTorch's default ``nn.Linear`` scheme), so the VAE part is
    initialised exactly as a plain VAE with the same generator.
    """

    def __init__(
        self,
        n_features: int,
        latent_dim: int,
        hidden_dims,
        *,
        n_classes: int,
        log_var_floor: float = math.log(0.01**2),
        init_log_var: float = 0.0,
        generator=None,
    ):
        super().__init__(
            n_features,
            latent_dim,
            hidden_dims,
            log_var_floor=log_var_floor,
            init_log_var=init_log_var,
            generator=generator,
        )
        if int(n_classes) < 2:
            raise ValueError(f"n_classes must be >= 2, got {n_classes}")
        self.n_classes = int(n_classes)
        self.head = torch.nn.utils.skip_init(nn.Linear, self.latent_dim, self.n_classes)
        bound = 1.0 / math.sqrt(self.latent_dim)
        with torch.no_grad():
            self.head.weight.uniform_(-bound, bound, generator=generator)
            self.head.bias.uniform_(-bound, bound, generator=generator)

    def logits(self, x):
        """Class logits of the head at the latent mean of ``x``."""
        return self.head(self.encode(x)[0])

    def joint_loss(self, x, target, weight: float, generator=None, *, mean: bool = False):
        r"""Summed negative ELBO + ``weight`` x summed cross-entropy of the labelled rows.

        ``target``: class codes per row, ``-1`` for an unlabelled row (no
        cross-entropy). ``weight = 0`` (or no ``target``) skips the head: the
        value, and its gradient, are :meth:`VAE.loss`'s.
        """
        x_hat, mu, log_var = self(x, generator, mean=mean)
        loss = self.negative_elbo(x, x_hat, mu, log_var)
        if weight > 0 and target is not None:
            ce = F.cross_entropy(self.head(mu), target, ignore_index=-1, reduction="sum")
            loss = loss + float(weight) * ce
        return loss


def encode_labels(y, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Class codes of ``y`` (``-1`` where missing) and the sorted class names.

    ``y``: one label per row; ``None``, NaN and ``pd.NA`` mark an unlabelled
    row. Labels are compared as strings.
    """
    if y is None:
        raise TypeError(
            "the supervised VAE needs y (one auxiliary label per row; None/NaN "
            "for an unlabelled row)"
        )
    labels = pd.Series(np.asarray(y, dtype=object).ravel())
    if len(labels) != n_rows:
        raise ValueError(f"y has {len(labels)} labels for {n_rows} rows")
    present = labels.notna().to_numpy()
    text = labels[present].astype(str)
    classes = np.array(sorted(set(text)), dtype=object)
    codes = np.full(n_rows, -1, dtype=np.int64)
    codes[present] = np.searchsorted(classes, text.to_numpy(dtype=object))
    return codes, classes


class SupervisedVAERepresentation(VAERepresentation):
    r"""VAE representation trained jointly with a public classification task.

    Everything of :class:`dprepro.representations.vae.VAERepresentation`
    (``transform`` gives the encoder mean; seeds, validation split, early
    stopping, ``device``), plus the head and its weight:

    Parameters
    ----------
    latent_dim : int
        As :class:`VAERepresentation`, and so are ``n_hidden_layers``, ``hidden_width``,
        ``learning_rate``, ``batch_size``, ``max_epochs``, ``patience``,
        ``validation_fraction``, ``quantile``, ``log_var_floor``, ``device``,
        ``random_state``, ``log_every`` and ``max_seconds``.
    supervised_weight : float, default 1.0
        λ >= 0, the weight of the summed cross-entropy beside the summed
        negative ELBO (both per row, summed over a minibatch). 0: the VAE.

    Attributes
    ----------
    classes_ : ndarray of str
        The auxiliary classes the head predicts (the labelled rows' labels).
    n_labelled_ : int
        Rows whose label entered the cross-entropy (training and validation).
    model_ : SupervisedVAE
    """

    def __init__(
        self,
        latent_dim: int,
        *,
        supervised_weight: float = 1.0,
        n_hidden_layers: int = 1,
        hidden_width: int | None = None,
        learning_rate: float = 1e-3,
        batch_size: int = 64,
        max_epochs: int = 2000,
        patience: int = 10,
        validation_fraction: float = 0.2,
        quantile: float = 0.05,
        log_var_floor: float = math.log(0.01**2),
        device: str = "auto",
        random_state=None,
        log_every: int = 10,
        max_seconds: float | None = None,
    ):
        self.supervised_weight = supervised_weight
        super().__init__(
            latent_dim,
            n_hidden_layers=n_hidden_layers,
            hidden_width=hidden_width,
            learning_rate=learning_rate,
            batch_size=batch_size,
            max_epochs=max_epochs,
            patience=patience,
            validation_fraction=validation_fraction,
            quantile=quantile,
            log_var_floor=log_var_floor,
            device=device,
            random_state=random_state,
            log_every=log_every,
            max_seconds=max_seconds,
        )

    def _validate_params(self) -> None:
        super()._validate_params()
        check_float("supervised_weight", self.supervised_weight, low=0.0, low_open=False)

    def fit(self, X, y=None):
        r"""Learn the representation from the public ``X`` and its auxiliary labels ``y``.

        ``y`` is required (one label per row; None/NaN: unlabelled). With
        ``supervised_weight > 0`` at least two classes must be labelled.
        """
        return super().fit(X, y)

    def _fit_targets(self, y, n_rows: int) -> np.ndarray:
        codes, classes = encode_labels(y, n_rows)
        if float(self.supervised_weight) > 0 and len(classes) < 2:
            raise ValueError(f"the auxiliary task needs >= 2 labelled classes, got {list(classes)}")
        self.classes_ = classes
        self.n_labelled_ = int(np.sum(codes >= 0))
        return codes

    def _build_model(
        self, n_features: int, hidden_dims, *, init_log_var: float, generator
    ) -> SupervisedVAE:
        return SupervisedVAE(
            n_features,
            self.latent_dim,
            hidden_dims,
            n_classes=max(len(self.classes_), 2),
            log_var_floor=float(self.log_var_floor),
            init_log_var=init_log_var,
            generator=generator,
        )

    def _loss(self, model, x, target, generator=None, *, mean: bool = False):
        return model.joint_loss(x, target, float(self.supervised_weight), generator, mean=mean)

    # -- the head ------------------------------------------------------------ #
    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities of the head (columns: :attr:`classes_`)."""
        X = self._to_array(X)
        U = self.scaler_.transform(X).astype(np.float32)
        out = []
        with torch.no_grad():
            for i in range(0, U.shape[0], 4096):
                u = torch.from_numpy(U[i : i + 4096]).to(self.device_)
                out.append(torch.softmax(self.model_.logits(u), dim=1).cpu().numpy())
        return np.concatenate(out).astype(float)[:, : len(self.classes_)]

    def predict(self, X) -> np.ndarray:
        """The head's most probable auxiliary class per row."""
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]
