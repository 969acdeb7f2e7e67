r"""Cox fits of designs that code one factor, from per-level risk-set sums.

Where every design codes one factor :math:`G \in \{0, \dots, k-1\}` (column
:math:`g - 1` the indicator of level :math:`g`, level 0 the reference where all are
0; :func:`factor_labels` recognises such a design), the rows enter the partial
likelihood only through the level sums at each distinct event time :math:`t_j`,

.. math::

    N_{jg} = \sum_{i \in R_j} w_i [G_i = g], \qquad
    D_{jg} = \sum_{i \in D_j} w_i [G_i = g]

(risk set :math:`R_j`, the :math:`d_j` events :math:`D_j` at :math:`t_j`, case
weights :math:`w_i`, 1 by default). With :math:`r_g = e^{\beta_g}`
(:math:`\beta_0 = 0`), Efron's [Efr77]_ term :math:`l = 0, \dots, d_j - 1` of event
time :math:`j` has :math:`A_{jl\cdot} = N_{j\cdot} - \frac{l}{d_j} D_{j\cdot}`
(Breslow's [Bre74]_: :math:`N_{j\cdot}`, one term per event time with multiplicity
:math:`m_j`), and

.. math::

    \ell(\beta) = \sum_g L_g \beta_g - \sum_{jl} m_{jl} \log \sum_g r_g A_{jlg},
    \qquad
    \mu_{jlg} = \frac{r_g A_{jlg}}{\sum_h r_h A_{jlh}},

    U_g = L_g - \sum_{jl} m_{jl} \mu_{jlg}, \qquad
    I = \sum_{jl} m_{jl} \big(\operatorname{diag}(\mu_{jl}) - \mu_{jl} \mu_{jl}^\top\big),

with :math:`L_g = \sum_j D_{jg}` (an indicator's square is itself, so the second
moment is diagonal) and :math:`m_{jl}` R's ``coxph`` weights (1; with case weights
the event's own or, under Efron, the tied events' mean). :math:`N` and :math:`D` cost
one pass over the rows per design; each Newton step then costs :math:`O(J k^2)` for
the :math:`J` event times (matrix-vector products with the fixed pair products
:math:`N_g N_h`) plus one logarithm per event, instead of the row-level exponentials,
cumulative sums and :math:`O(n p^2)` products of the general kernel
(:mod:`dprepro.survival.cox`), with the same result to rounding. Score residuals
(for the robust variance) are R's ``coxscore2`` recipe as in the general kernel, with
:math:`x_i` the row's indicator.

References
----------
.. [Efr77] B. Efron (1977). The efficiency of Cox's likelihood function for
   censored data. JASA 72, 557–565.
.. [Bre74] N. Breslow (1974). Covariance analysis of censored survival data.
   Biometrics 30, 89–99.
"""

from __future__ import annotations

import numpy as np

from dprepro.survival.cox_core import CoxBatch, Layout, cumulative_at, fit_in_chunks, solve

__all__ = ["factor_labels", "fit_levels"]

#: values of a block's level sums (designs x sums x event times): about 2 MB, in cache
_BLOCK = 1 << 18


def factor_labels(x: np.ndarray) -> np.ndarray | None:
    """The level (0 .. p) of every row of designs ``x`` (B, n, p) whose entries are 0 or 1
    with at most one 1 per row (treatment coding of one factor), else None."""
    if not np.all((x == 0) | (x == 1)):
        return None
    p = x.shape[2]
    code_and_count = x @ np.stack([np.arange(1.0, p + 1), np.ones(p)], axis=1)
    if np.any(code_and_count[..., 1] > 1):
        return None
    return code_and_count[..., 0].astype(np.intp)


def _pair_products(x: np.ndarray, y: np.ndarray, g: np.ndarray, h: np.ndarray) -> np.ndarray:
    """``x[:, g] * y[:, h]`` (b, pairs, J), one pair at a time (no gathered copies)."""
    out = np.empty((x.shape[0], len(g), x.shape[2]))
    for i, (a, b) in enumerate(zip(g, h, strict=True)):
        np.multiply(x[:, a], y[:, b], out=out[:, i])
    return out


def _cell_sums(lab: np.ndarray, cell: np.ndarray, w: np.ndarray | None, k: int,
               size: int) -> np.ndarray:
    """Sums (b, k, size) of the weights ``w`` (b, m) (1 where None) by design, level
    ``lab`` (b, m) and ``cell`` (m,) in ``0 .. size-1``, by one ``bincount``."""
    nb = lab.shape[0]
    flat = ((np.arange(nb)[:, None] * k + lab) * size + cell).ravel()
    out = np.bincount(flat, None if w is None else w.ravel(), minlength=nb * k * size)
    return out.reshape(nb, k, size)


class _LevelSums:
    r"""The level sums of a block of ``nb`` designs, event times last.

    ``n0`` (nb, J) and ``n1`` (nb, p, J): :math:`N` of level 0 and of levels 1..p;
    ``lin1`` :math:`L_{1..p}`; ``nn`` (nb, P, J) the products :math:`N_g N_h` of the
    pairs ``pairs`` :math:`g \le h` of levels 1..p, which the information needs at
    every step. Each event time has a main log term (Efron's :math:`l = 0`, or
    Breslow's one term for its tied events) with weight ``mult`` (nb or 1, J; None:
    all 1). Efron's further terms :math:`l = 1 .. d_j - 1` (``extra``, with
    :math:`c = l / d_j` ``extra_frac`` and weights ``extra_mult``) belong to the
    ``tied`` event times (``extra_start``: each one's first extra term, ``extra_of``:
    each extra term's position in ``tied``); only these need :math:`D`: ``d0t``,
    ``d1t`` (nb, p, J_tied), ``dd`` :math:`D_g D_h` and ``dn`` :math:`D_g N_h + N_g D_h`.
    """

    def __init__(self, lay: Layout, lab: np.ndarray, w: np.ndarray | None, k: int):
        self.lay, self.lab, self.w, self.k, self.nb = lay, lab, w, k, lab.shape[0]
        nj, ev = len(lay.ev_block_start), lay.ev_rows
        self._terms(lay, w)
        # rows before the first event time are in no risk set
        valid = lay.row_last_event >= 0
        rows = slice(None) if valid.all() else valid
        at = _cell_sums(lab[:, rows], lay.row_last_event[rows], None if w is None
                        else w[:, rows], k, nj)
        at = np.cumsum(at[:, :, ::-1], axis=2, dtype=float)[:, :, ::-1]
        self.n0, self.n1 = np.ascontiguousarray(at[:, 0]), np.ascontiguousarray(at[:, 1:])
        self.lin1 = _cell_sums(lab[:, ev], np.zeros(len(ev), dtype=np.intp),
                               None if w is None else w[:, ev], k, 1)[:, 1:, 0].astype(float)
        tied_ev = np.flatnonzero(np.isin(lay.ev_block, self.tied))
        died = _cell_sums(lab[:, ev[tied_ev]], np.searchsorted(self.tied, lay.ev_block[tied_ev]),
                          None if w is None else w[:, ev[tied_ev]], k, self.tied.size)
        self.d0t = died[:, 0].astype(float)
        self.d1t = np.ascontiguousarray(died[:, 1:], dtype=float)
        self.pairs = np.triu_indices(k - 1)
        g, h = self.pairs
        self.nn = _pair_products(self.n1, self.n1, g, h)
        n1t = self.n1[:, :, self.tied]
        self.dd = _pair_products(self.d1t, self.d1t, g, h)
        self.dn = _pair_products(self.d1t, n1t, g, h) + _pair_products(n1t, self.d1t, g, h)

    def _terms(self, lay: Layout, w: np.ndarray | None) -> None:
        """The log terms and their weights (R's ``coxph`` conventions)."""
        ev, start = lay.ev_rows, lay.ev_block_start
        counts = np.diff(np.append(start, len(ev)))
        efron = bool(np.any(lay.ev_frac))
        if w is None:
            m = None
        elif efron:  # Efron: the mean weight of the tied events
            m = (np.add.reduceat(w[:, ev], start, axis=1) / counts)[:, lay.ev_block]
        else:
            m = w[:, ev]
        extra = np.flatnonzero(lay.ev_frac > 0)  # Efron's l >= 1
        self.tied = np.unique(lay.ev_block[extra])
        self.extra_frac = lay.ev_frac[extra]
        self.extra_start = np.searchsorted(lay.ev_block[extra], self.tied)
        self.extra_of = np.searchsorted(self.tied, lay.ev_block[extra])
        if efron:
            self.count = counts
            self.mult = None if m is None else m[:, start]
            self.extra_mult = None if m is None else m[:, extra]
        else:  # one term per event time, weighted by its events
            self.count = np.ones(len(start), dtype=np.intp)
            if m is not None:
                self.mult = np.add.reduceat(m, start, axis=1)
            else:  # unweighted: the number of events (None: one each)
                self.mult = counts[None].astype(float) if np.any(counts > 1) else None
            self.extra_mult = None

    def part(self, idx: np.ndarray) -> dict:
        """The per-design arrays of designs ``idx``."""
        names = ("n0", "n1", "lin1", "nn", "d0t", "d1t", "dd", "dn", "mult", "extra_mult")
        out = {name: getattr(self, name) for name in names}
        if idx.size < self.nb:
            for name in names:
                if out[name] is not None and out[name].shape[0] > 1:
                    out[name] = out[name][idx]
        return out


class _LevelTerms:
    r"""Partial log-likelihood, score and information of designs ``idx`` at ``beta``.

    Per log term :math:`t` of event time :math:`j`, :math:`A_t = N_j - c_t D_j`,
    :math:`\mathrm{den}_t = r^\top A_t` and :math:`q_t = m_t / \mathrm{den}_t`; the
    score's subtracted part is :math:`u = r \circ \sum_j (a_j N_j - v_j D_j)` and the
    information :math:`\operatorname{diag}(u) - \operatorname{diag}(r) \sum_j \big(b_j
    N_j N_j^\top - b'_j (D_j N_j^\top + N_j D_j^\top) + b''_j D_j D_j^\top\big)
    \operatorname{diag}(r)`, with the sums over :math:`j`'s terms :math:`a_j = \sum q_t`,
    :math:`v_j = \sum q_t c_t`, :math:`b_j = \sum q_t / \mathrm{den}_t`, :math:`b'_j =
    \sum c_t q_t / \mathrm{den}_t`, :math:`b''_j = \sum c_t^2 q_t / \mathrm{den}_t`
    (:math:`c_t = 0` but at tied event times): matrix-vector products over the event
    times with the fixed sums and pair products of :class:`_LevelSums`.
    """

    def __init__(self, sums: _LevelSums, idx: np.ndarray, beta: np.ndarray):
        arr = sums.part(idx)
        self.sums, self.idx, self.arr = sums, idx, arr
        shift = np.maximum(beta.max(axis=1), 0.0)[:, None]
        r0, r1 = np.exp(-shift), np.exp(beta - shift)  # e^beta up to a per-design factor
        self.r = np.concatenate([r0, r1], axis=1)
        s0 = arr["n0"] * r0 + np.matmul(r1[:, None, :], arr["n1"])[:, 0]
        logs, weight, q = _log_terms(s0, arr["mult"])
        self.den = s0
        a, b0 = q, q / s0
        if sums.tied.size:
            sd = arr["d0t"] * r0 + np.matmul(r1[:, None, :], arr["d1t"])[:, 0]
            c, at = sums.extra_frac, sums.extra_of
            den = s0[:, sums.tied][:, at] - c * sd[:, at]
            more, more_weight, qe = _log_terms(den, arr["extra_mult"])
            logs, weight = logs + more, weight + more_weight
            q2e = qe / den
            sum_q, sum_q2, v, b1, b2 = np.add.reduceat(
                np.stack([qe, q2e, qe * c, q2e * c, q2e * c * c]), sums.extra_start, axis=2)
            a[:, sums.tied] += sum_q
            b0[:, sums.tied] += sum_q2
            self.extra = (den, v, b1, b2)
        self.a, self.b0 = a, b0
        self.loglik = np.sum(arr["lin1"] * beta, axis=1) - logs - shift[:, 0] * weight
        total = np.matmul(arr["n1"], a[:, :, None])[:, :, 0]
        second = np.matmul(arr["nn"], b0[:, :, None])[:, :, 0]
        if sums.tied.size:
            total -= np.matmul(arr["d1t"], v[:, :, None])[:, :, 0]
            second += (np.matmul(arr["dd"], b2[:, :, None])
                       - np.matmul(arr["dn"], b1[:, :, None]))[:, :, 0]
        total *= r1
        self.score = arr["lin1"] - total
        g, h = sums.pairs
        info = np.empty((len(idx),) + (beta.shape[1],) * 2)
        info[:, g, h] = -(r1[:, g] * second * r1[:, h])
        info[:, h, g] = info[:, g, h]
        diag = np.arange(beta.shape[1])
        info[:, diag, diag] += total
        self.info = info

    def score_residuals(self) -> np.ndarray:
        r"""Per-row score residuals (b, n, p) in sorted order, R's ``coxscore2`` recipe
        with the per-event-time sums of the terms: :math:`\sum_t q_t`, :math:`\sum_t q_t
        \mu_t`, the same times :math:`c_t`, and the mean :math:`\bar\mu_j` of the terms'
        means (:math:`\mu_t = r \circ A_t / \mathrm{den}_t`, levels 1..p)."""
        s, lay, arr = self.sums, self.sums.lay, self.arr
        r1 = self.r[:, 1:, None]
        n1 = arr["n1"]
        inv_sum = 1.0 / self.den
        b_j = r1 * n1 * self.b0[:, None]  # (b, p, J)
        zeros = np.zeros_like(self.a)
        v_j, vb_j = zeros, np.zeros_like(n1)
        if s.tied.size:
            den, v, b1, b2 = self.extra
            c = s.extra_frac
            more, more_c = np.add.reduceat(np.stack([1.0 / den, c / den]), s.extra_start,
                                           axis=2)
            inv_sum[:, s.tied] += more
            d1t, n1t = arr["d1t"], n1[:, :, s.tied]
            v_j = zeros.copy()
            v_j[:, s.tied] = v
            b_j[:, :, s.tied] -= r1 * d1t * b1[:, None]
            vb_j = vb_j.copy()
            vb_j[:, :, s.tied] = r1 * (n1t * b1[:, None] - d1t * b2[:, None])
        abar = r1 * n1 * (inv_sum / s.count)[:, None]
        if s.tied.size:
            abar[:, :, s.tied] -= r1 * d1t * (more_c / s.count[s.tied])[:, None]
        ev, blk = lay.event, lay.row_block
        ca = cumulative_at(self.a, lay.row_last_event) - ev * v_j[:, blk]
        cb = (cumulative_at(b_j.transpose(0, 2, 1), lay.row_last_event)
              - ev[:, None] * vb_j.transpose(0, 2, 1)[:, blk])
        lab = s.lab[self.idx]
        x = (lab[:, :, None] == np.arange(1, s.k)).astype(float)
        risk = np.take_along_axis(self.r, lab, axis=1)
        resid = (ev[:, None] * (x - abar.transpose(0, 2, 1)[:, blk])
                 - risk[:, :, None] * (x * ca[:, :, None] - cb))
        if s.w is not None:
            resid *= s.w[self.idx][:, :, None]
        return resid


def _log_terms(den: np.ndarray, mult: np.ndarray | None):
    """:math:`\\sum_t m_t \\log \\mathrm{den}_t`, :math:`\\sum_t m_t` and :math:`q_t = m_t /
    \\mathrm{den}_t` of per-term denominators (b, T), weights ``mult`` (None: 1)."""
    if mult is None:
        return np.sum(np.log(den), axis=1), den.shape[1], 1.0 / den
    return np.sum(mult * np.log(den), axis=1), mult.sum(axis=1), mult / den


def fit_levels(lay: Layout, labels: np.ndarray, k: int, w: np.ndarray | None, codes,
               tol: float, max_iter: int) -> CoxBatch:
    """Cox fits of the factor designs given by ``labels`` (B, n) in ``0 .. k-1``, rows in
    the original order; ``w``: case weights (B or 1, n) or None (a weighted batch may
    share one label vector, ``labels`` (1, n)); ``codes``: clusters or None."""
    nb = max(labels.shape[0], 1 if w is None else w.shape[0])
    lab = np.broadcast_to(labels, (nb, labels.shape[1]))
    ws = None if w is None else np.broadcast_to(w, lab.shape)
    # per design: N, D and the pair products, (k + p (p + 1) / 2) values per event time
    chunk = max(1, _BLOCK // (len(lay.ev_block_start) * (k + k * (k - 1) // 2)))

    def fit(part: slice) -> CoxBatch:
        sums = _LevelSums(lay, lab[part][:, lay.order].astype(np.intp), None if ws is None
                          else ws[part][:, lay.order], k)
        return solve(lambda idx, beta: _LevelTerms(sums, idx, beta), lay, sums.nb, k - 1,
                     codes, tol, max_iter)

    return fit_in_chunks(nb, chunk, fit)
