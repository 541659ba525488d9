r"""Compiled (Numba) kernels for :class:`graphbench.transforms.rwse.RWSE`.

Each start node :math:`i` pushes its walk distribution :math:`x_t = e_i M^t` through the CSR
matrix :math:`M`, one row vector at a time. A vector is held sparsely (its nodes in order of first
reach, its values in a dense buffer, membership by a stamp), so a step costs the out-degrees of the
nodes it holds, never :math:`n`. Start nodes are independent: a node's result depends only on its
own graph's rows, whichever graphs share the matrix. Sums are taken in float64.

Why compiled loops rather than SciPy's sparse products (the previous implementation): a
composition of CSR products, element-wise products and row sums stores every power of the
whole matrix and pays SciPy's symbolic passes and temporaries; on Peptides-func it was 1.5x
slower (A/B in one run). One fused loop per start node holds two vectors.

The two kernels repeat their set-up on purpose: one kernel with a ``symmetric`` flag (also with
the flag a compile-time constant, and with the set-up in helpers) ran 10-15% slower on
Peptides-func in A/B runs.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def _step(indptr, indices, values, nodes, count, vals, out_nodes, out_vals, out_stamp, stamp):
    """``out = x M`` for the sparse vector ``x`` (``nodes[:count]``, ``vals``); returns its size.
    ``out`` holds node ``l`` exactly when ``out_stamp[l] == stamp``."""
    size = 0
    for a in range(count):
        j = nodes[a]
        x = vals[j]
        for p in range(indptr[j], indptr[j + 1]):
            col = indices[p]
            if out_stamp[col] != stamp:
                out_stamp[col] = stamp
                out_vals[col] = 0.0
                out_nodes[size] = col
                size += 1
            out_vals[col] += x * values[p]
    return size


@numba.njit(cache=True, nogil=True)
def symmetric_returns(indptr, indices, values, k):
    r"""``out[i, t-1]`` = :math:`(S^t)_{ii}` for a symmetric CSR matrix :math:`S`, from
    :math:`\lceil k/2 \rceil` steps per start node: with :math:`x_m = e_i S^m`,
    :math:`(S^{2m})_{ii} = x_m \cdot x_m` and :math:`(S^{2m+1})_{ii} = x_m \cdot x_{m+1}`."""
    n = indptr.size - 1
    out = np.zeros((n, k), dtype=np.float32)
    nodes = np.empty((2, n), np.int64)
    vals = np.zeros((2, n))
    stamps = np.full((2, n), -1, np.int64)
    stamp = 0
    for i in range(n):
        cur = 0
        stamp += 1
        stamps[cur, i] = stamp
        nodes[cur, 0] = i
        vals[cur, i] = 1.0
        count = 1
        m = 0
        while 2 * m + 1 <= k and count:
            nxt = 1 - cur
            stamp += 1
            size = _step(indptr, indices, values, nodes[cur], count, vals[cur], nodes[nxt], vals[nxt], stamps[nxt], stamp)
            odd = 0.0
            for a in range(count):
                j = nodes[cur, a]
                if stamps[nxt, j] == stamp:
                    odd += vals[cur, j] * vals[nxt, j]
            out[i, 2 * m] = odd
            if 2 * m + 2 <= k:
                even = 0.0
                for a in range(size):
                    v = vals[nxt, nodes[nxt, a]]
                    even += v * v
                out[i, 2 * m + 1] = even
            cur, count, m = nxt, size, m + 1
    return out


@numba.njit(cache=True, nogil=True)
def walk_returns(indptr, indices, values, k):
    r"""``out[i, t-1]`` = :math:`(M^t)_{ii}` for any CSR matrix :math:`M`, from :math:`k` steps
    per start node (:math:`(e_i M^t)_i`)."""
    n = indptr.size - 1
    out = np.zeros((n, k), dtype=np.float32)
    nodes = np.empty((2, n), np.int64)
    vals = np.zeros((2, n))
    stamps = np.full((2, n), -1, np.int64)
    stamp = 0
    for i in range(n):
        cur = 0
        stamp += 1
        stamps[cur, i] = stamp
        nodes[cur, 0] = i
        vals[cur, i] = 1.0
        count = 1
        for t in range(k):
            nxt = 1 - cur
            stamp += 1
            count = _step(indptr, indices, values, nodes[cur], count, vals[cur], nodes[nxt], vals[nxt], stamps[nxt], stamp)
            if count == 0:
                break
            if stamps[nxt, i] == stamp:
                out[i, t] = vals[nxt, i]
            cur = nxt
    return out
