"""Adam's updates by torch's own arithmetic, without ``torch.optim.Optimizer``'s machinery.

``torch.optim.Adam`` imports TorchDynamo (torch's compiler front end) the first time it
adds a parameter group and at every ``step`` (graph breaks for ``torch.compile``): about
1.4 CPU-s a process, as much as importing torch itself, and most of what a small VAE fit
costs a workflow job. No fit here is compiled, so :class:`AdamSteps` keeps the state that
``torch.optim.Adam`` keeps and calls the function its ``step`` calls,
:func:`torch.optim.adam.adam`, with the same arguments: the parameters follow the same
values, bit for bit (tests/test_representations.py compares them with
``torch.optim.Adam(foreach=True)`` step by step).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import torch
from torch.optim.adam import adam

__all__ = ["AdamSteps"]


class AdamSteps:
    r"""Adam (Kingma & Ba 2015) over ``parameters``: ``torch.optim.Adam(foreach=True)``'s steps.

    .. math::

        m_t = \beta_1 m_{t-1} + (1 - \beta_1) g_t, \quad
        v_t = \beta_2 v_{t-1} + (1 - \beta_2) g_t^2, \quad
        \theta_t = \theta_{t-1} - \gamma \frac{m_t / (1 - \beta_1^t)}
                                              {\sqrt{v_t / (1 - \beta_2^t)} + \epsilon}

    As ``torch.optim.Adam``: a parameter without a gradient is left alone and its
    moments and step count start at its first gradient; no weight decay, AMSGrad or
    maximisation (their defaults there).

    Parameters
    ----------
    parameters : iterable of torch.Tensor
        The tensors to update (``model.parameters()``).
    lr : float
        Learning rate :math:`\gamma` (> 0).
    betas : (float, float), default (0.9, 0.999)
        :math:`\beta_1, \beta_2` in [0, 1).
    eps : float, default 1e-8
        :math:`\epsilon` (>= 0).

    References
    ----------
    Kingma, D. P. and Ba, J. (2015). Adam: a method for stochastic optimization. ICLR.

    Raises
    ------
    TypeError
        ``parameters`` is one tensor, or holds something that is not a tensor.
    ValueError
        No parameters, a non-leaf tensor or the same tensor twice; ``lr``, ``betas`` or
        ``eps`` out of range.
    """

    def __init__(self, parameters: Iterable[torch.Tensor], *, lr: float,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8):
        if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not (
                math.isfinite(lr) and lr > 0):
            raise ValueError(f"lr must be a finite number > 0, got {lr!r}")
        if len(betas) != 2 or not all(0.0 <= float(b) < 1.0 for b in betas):
            raise ValueError(f"betas must be two numbers in [0, 1), got {betas!r}")
        if not (math.isfinite(eps) and eps >= 0):
            raise ValueError(f"eps must be a finite number >= 0, got {eps!r}")
        if isinstance(parameters, torch.Tensor):
            # list() of one tensor would give its rows, views that never get a gradient
            raise TypeError("parameters must be an iterable of tensors (model.parameters()), "
                            "got one tensor")
        self.params = list(parameters)
        if not self.params:
            raise ValueError("AdamSteps got no parameters")
        for i, p in enumerate(self.params):
            if not isinstance(p, torch.Tensor):
                raise TypeError(f"parameter {i} is a {type(p).__name__}, not a torch.Tensor")
            if not p.is_leaf:
                raise ValueError(f"parameter {i} is not a leaf tensor: it cannot be optimised")
        if len({id(p) for p in self.params}) != len(self.params):
            # each would get moments of its own and be stepped twice
            raise ValueError("AdamSteps got the same parameter twice")
        self.lr, self.betas, self.eps = float(lr), (float(betas[0]), float(betas[1])), float(eps)
        # per parameter, made at its first gradient: (step count, m, v)
        self._state: dict[int, tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = {}

    def zero_grad(self) -> None:
        """Drop every gradient (``Optimizer.zero_grad(set_to_none=True)``)."""
        for p in self.params:
            p.grad = None

    def step(self) -> None:
        """One update of the parameters that have a gradient."""
        params, grads, exp_avgs, exp_avg_sqs, steps = [], [], [], [], []
        has_complex = False
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            if p.grad.is_sparse:
                raise RuntimeError("AdamSteps does not take sparse gradients")
            if i not in self._state:
                # torch.optim.Adam's step count lives on the CPU, in the scalar dtype
                # that matches the default dtype
                scalar = (torch.float64 if torch.get_default_dtype() == torch.float64
                          else torch.float32)
                self._state[i] = (torch.tensor(0.0, dtype=scalar, device="cpu"),
                                  torch.zeros_like(p, memory_format=torch.preserve_format),
                                  torch.zeros_like(p, memory_format=torch.preserve_format))
            step, m, v = self._state[i]
            has_complex |= torch.is_complex(p)
            params.append(p)
            grads.append(p.grad)
            exp_avgs.append(m)
            exp_avg_sqs.append(v)
            steps.append(step)
        with torch.no_grad():
            adam(params, grads, exp_avgs, exp_avg_sqs, [], steps, foreach=True,
                 capturable=False, differentiable=False, fused=None, grad_scale=None,
                 found_inf=None, has_complex=has_complex, decoupled_weight_decay=False,
                 amsgrad=False, beta1=self.betas[0], beta2=self.betas[1], lr=self.lr,
                 weight_decay=0.0, eps=self.eps, maximize=False)
