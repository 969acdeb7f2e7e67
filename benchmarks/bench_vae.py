"""Benchmark: one VAE representation fit on 1,000 x 5,000 SYNTHETIC expression.

Target on a laptop CPU: <= 60 s wall time. Run from the repository root:

    python benchmarks/bench_vae.py [--device cpu] [--latent-dim 10] [--threads N]
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

from dprepro.data.synthetic_expression import synthetic_public_private  # noqa: E402
from dprepro.representations.vae import VAERepresentation  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--genes", type=int, default=5000)
    ap.add_argument("--latent-dim", type=int, default=10)
    ap.add_argument("--hidden-layers", type=int, default=1)
    ap.add_argument("--learning-rate", type=float, default=1e-3)
    ap.add_argument("--max-epochs", type=int, default=2000)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=None, help="torch intra-op threads")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING)
    if args.threads:
        torch.set_num_threads(args.threads)  # a benchmark process, so global is fine here

    data = synthetic_public_private(
        np.random.default_rng(args.seed), n_public=args.n, n_private=2, n_genes=args.genes
    )
    x = data["public_expression"]
    vae = VAERepresentation(
        args.latent_dim,
        n_hidden_layers=args.hidden_layers,
        learning_rate=args.learning_rate,
        max_epochs=args.max_epochs,
        device=args.device,
        random_state=args.seed,
    )
    t0 = time.perf_counter()
    vae.fit(x)
    wall = time.perf_counter() - t0
    print(
        f"VAE fit on SYNTHETIC {x.shape[0]} x {x.shape[1]} (r={args.latent_dim}, "
        f"device={vae.device_}, threads={torch.get_num_threads()}): {wall:.1f} s wall, "
        f"{vae.n_epochs_} epochs (best {vae.best_epoch_}), "
        f"{wall / vae.n_epochs_:.3f} s/epoch, "
        f"val loss {vae.initial_val_loss_:.1f} -> {min(vae.history_['val_loss']):.1f}"
    )
    print("target <= 60 s:", "OK" if wall <= 60 else "SLOW")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
