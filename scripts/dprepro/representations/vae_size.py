"""The VAE's size before it is built: hidden width, weight count and training memory.

Torch-free, so the workflow sizes its jobs (memory, runtime) without importing torch.
"""

from __future__ import annotations

__all__ = ["vae_hidden_width", "vae_training_mb", "vae_weights"]


def vae_hidden_width(dim: int, multiplier: int, cap: int | None = None) -> int:
    """A VAE candidate's hidden width: ``multiplier`` x r, at most ``cap``.

    ``cap`` is ``vae.max_hidden_width`` (None: no cap).
    """
    width = int(multiplier) * int(dim)
    return width if cap is None else min(width, int(cap))


def vae_training_mb(n_features: int, width: int, layers: int, *, base_mb: float) -> float:
    r"""Peak memory (MB) of training the VAE of :mod:`dprepro.representations.vae` on
    ``n_features`` genes.

    Its weights: the encoder's first and the decoder's last layer
    (:math:`2 n_{features} w`), :math:`2 (L - 1) w^2` between hidden layers, and
    the small latent layers (left out, as the biases: a few :math:`w` each).
    Each weight is held four times in float32 during training (value, gradient,
    Adam's two moments): 16 bytes. ``base_mb`` is the rest (the data and the
    process), from a measured fit (``benchmarks/paper_scale.csv``).
    """
    return float(base_mb) + 16 * vae_weights(n_features, width, layers) / 2**20


def vae_weights(n_features: int, width: int, layers: int) -> int:
    """The big weight matrices of the VAE (:func:`vae_training_mb`): what memory and an
    epoch's arithmetic grow with."""
    return 2 * int(n_features) * int(width) + 2 * max(int(layers) - 1, 0) * int(width) ** 2

