r"""Compiled (Numba) kernels for :class:`graphbench.transforms.rwse.RWSE`.

Each start node :math:`i` pushes its walk distribution :math:`x_t = e_i M^t` through the CSR
matrix :math:`M`, one row vector at a time. A vector is held sparsely (its nodes in order of first
reach, its values in a dense buffer, membership by a stamp), so a step costs the out-degrees of the
nodes it holds, never :math:`n`. Start nodes are independent: a node's result depends only on its
own graph's rows, whichever graphs share the matrix. Sums are taken in float64.

Why compiled loops rather than SciPy's sparse products (the previous implementation): a
composition of CSR products, element-wise products and row sums stores every power of the
whole matrix and pays SciPy's symbolic passes and temporaries; on Peptides-func it was 1.5x
slower (A/B in one run). One fused loop per start node holds two vectors (three in
:func:`symmetric_returns`, which sums both dot products while it pushes).

The two kernels repeat their set-up on purpose: one kernel with a ``symmetric`` flag (also with
the flag a compile-time constant, and with the set-up in helpers) ran 10-15% slower on
Peptides-func in A/B runs. Tried on Peptides-func and slower or no faster than these loops (A/B,
one thread): branch-free appends, fixed-width (ELL) rows, dense products over index windows (with
and without reverse Cuthill-McKee ordering), 2-16 start nodes walked together over the union of
their supports, zero values instead of stamps for membership, and leaves dropped from the walks
themselves (a three-term recurrence over the other nodes). Most of the time goes to finding each
step's nodes (about 2.4 ns per edge visit).
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
def symmetric_returns(indptr, indices, values, out, start, stop):
    r"""Sets ``out[i, t-1]`` = :math:`(S^t)_{ii}` for :math:`t = 1..k` (``k = out.shape[1]``) and the start
    nodes ``start <= i < stop``, which with their neighbours must make up whole blocks (graphs) of the
    CSR matrix, on which :math:`S` is symmetric (rows sorted, without duplicates); ``out`` must be zero
    there. From :math:`\lceil k/2 \rceil` steps per start node: with :math:`x_m = e_i S^m`,
    :math:`(S^{2m})_{ii} = x_m \cdot x_m` and :math:`(S^{2m-1})_{ii} = x_{m-1} \cdot x_m`, both summed
    over :math:`x_m`'s nodes while they are pushed to :math:`x_{m+1}` (three buffers rotate).

    A leaf :math:`u`, whose row holds one entry, at :math:`w \ne u` with a row of two or more, takes
    no walk: every closed walk from :math:`u` steps to :math:`w` first and back from it last, so
    :math:`(S^t)_{uu} = S_{uw}^2 (S^{t-2})_{ww}` for :math:`t \ge 2` (:math:`(S^0)_{ww} = 1`) and
    :math:`(S^1)_{uu} = 0`. On Peptides-func, whose leaves (the O of a C=O, terminal carbons) are 29% of
    the atoms, this takes a fifth off the kernel's time."""
    n = indptr.size - 1
    k = out.shape[1]
    leaf = np.zeros(n, np.bool_)
    for u in range(start, stop):
        if indptr[u + 1] - indptr[u] == 1:
            w = indices[indptr[u]]
            leaf[u] = w != u and indptr[w + 1] - indptr[w] >= 2
    nodes = np.empty((3, n), np.int64)
    vals = np.zeros((3, n))
    stamps = np.full((3, n), -1, np.int64)
    returns = np.zeros(k + 1)  # returns[t] = (S^t)_ii in float64
    steps = (k + 1) // 2
    stamp = 0
    for i in range(start, stop):
        if leaf[i]:
            continue
        returns[:] = 0.0
        returns[0] = 1.0
        stamp += 1
        cur, prev = 0, 1
        cur_stamp, prev_stamp = stamp, 0  # no node carries stamp 0: x_{-1} is empty
        stamps[cur, i] = cur_stamp
        nodes[cur, 0] = i
        vals[cur, i] = 1.0
        count = 1
        for m in range(steps + 1):
            nxt = 3 - cur - prev
            stamp += 1
            size = 0
            even = 0.0
            odd = 0.0
            for a in range(count):
                j = nodes[cur, a]
                x = vals[cur, j]
                even += x * x
                if stamps[prev, j] == prev_stamp:
                    odd += x * vals[prev, j]
                if m < steps:
                    for p in range(indptr[j], indptr[j + 1]):
                        col = indices[p]
                        if stamps[nxt, col] != stamp:
                            stamps[nxt, col] = stamp
                            vals[nxt, col] = 0.0
                            nodes[nxt, size] = col
                            size += 1
                        vals[nxt, col] += x * values[p]
            if m >= 1:
                returns[2 * m - 1] = odd
                if 2 * m <= k:
                    returns[2 * m] = even
            if size == 0:
                break
            prev, cur = cur, nxt
            prev_stamp, cur_stamp = cur_stamp, stamp
            count = size
        for t in range(1, k + 1):
            out[i, t - 1] = returns[t]
        for p in range(indptr[i], indptr[i + 1]):
            u = indices[p]
            if leaf[u]:
                for t in range(2, k + 1):
                    out[u, t - 1] = values[p] * values[p] * returns[t - 2]


@numba.njit(cache=True, nogil=True)
def walk_returns(indptr, indices, values, out, start, stop):
    r"""Sets ``out[i, t-1]`` = :math:`(M^t)_{ii}` for :math:`t = 1..k` (``k = out.shape[1]``) and the
    start nodes ``start <= i < stop``, for any CSR matrix :math:`M`, from :math:`k` steps per start
    node (:math:`(e_i M^t)_i`); ``out`` must be zero there."""
    n = indptr.size - 1
    k = out.shape[1]
    nodes = np.empty((2, n), np.int64)
    vals = np.zeros((2, n))
    stamps = np.full((2, n), -1, np.int64)
    stamp = 0
    for i in range(start, stop):
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


@numba.njit(cache=True, nogil=True)
def walk_matrix(ends, weight, edge_counts, node_counts):
    r"""The graphs' random-walk matrix, block-diagonal in CSR: ``(indptr, indices, values, symmetric)``.

    Graph ``b`` has ``node_counts[b]`` nodes (rows from the sum of the counts before it) and the next
    ``edge_counts[b]`` columns of ``ends`` (``[2, E]``, graph-local ``source, target``) with their
    ``weight``. Parallel edges are summed, columns sorted. With :math:`A` a graph's adjacency and
    :math:`D` its row sums (:math:`D^{-1}_{ii} := 0` where :math:`D_{ii} = 0`), its block of ``values``
    holds :math:`S = D^{-1/2} A D^{-1/2}` when :math:`A` is symmetric and non-negative
    (``symmetric[b]``, a boolean per graph), else :math:`P = D^{-1} A`: decided graph by graph, so
    that a graph's encoding does not depend on the graphs it is batched with. One compiled pass: SciPy's COO-to-CSR conversion, duplicate sums and
    transposed comparison cost a third of the walks on Peptides-func."""
    n = 0
    for b in range(node_counts.size):
        n += node_counts[b]
    size = ends.shape[1]
    rows = np.empty(size, np.int64)
    cols = np.empty(size, np.int64)
    e = 0
    offset = 0
    for b in range(node_counts.size):
        for _ in range(edge_counts[b]):
            if not (0 <= ends[0, e] < node_counts[b] and 0 <= ends[1, e] < node_counts[b]):
                raise ValueError("RWSE: an edge_index entry is not a node of its graph (negative or >= num_nodes)")
            rows[e] = ends[0, e] + offset
            cols[e] = ends[1, e] + offset
            e += 1
        offset += node_counts[b]
    indptr = np.zeros(n + 1, np.int64)
    for e in range(size):
        indptr[rows[e] + 1] += 1
    for i in range(n):
        indptr[i + 1] += indptr[i]
    fill = indptr[:-1].copy()
    indices = np.empty(size, np.int64)
    data = np.empty(size)
    for e in range(size):
        p = fill[rows[e]]
        indices[p] = cols[e]
        data[p] = weight[e]
        fill[rows[e]] += 1
    nnz = 0
    start = 0
    for i in range(n):
        end = indptr[i + 1]
        for a in range(start + 1, end):  # insertion sort: rows are short
            col, value = indices[a], data[a]
            c = a - 1
            while c >= start and indices[c] > col:
                indices[c + 1] = indices[c]
                data[c + 1] = data[c]
                c -= 1
            indices[c + 1] = col
            data[c + 1] = value
        first = nnz
        for a in range(start, end):
            if nnz > first and indices[nnz - 1] == indices[a]:
                data[nnz - 1] += data[a]
            else:
                indices[nnz] = indices[a]
                data[nnz] = data[a]
                nnz += 1
        start = end
        indptr[i + 1] = nnz
    indices = indices[:nnz]
    data = data[:nnz]
    inv = np.zeros(n)
    for i in range(n):
        degree = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            degree += data[p]
        inv[i] = 1.0 / degree if degree > 0 else 0.0
    symmetric = np.ones(node_counts.size, np.bool_)
    values = np.empty(nnz)
    isqrt = np.sqrt(inv)
    first = 0
    for b in range(node_counts.size):
        last = first + node_counts[b]
        for i in range(first, last):
            for p in range(indptr[i], indptr[i + 1]):
                j = indices[p]
                mirror = -1.0  # A_ji, -1 if absent: sorted row j, scanned (rows are short)
                for q in range(indptr[j], indptr[j + 1]):
                    if indices[q] >= i:
                        if indices[q] == i:
                            mirror = data[q]
                        break
                symmetric[b] &= data[p] >= 0 and mirror == data[p]
        for i in range(first, last):
            for p in range(indptr[i], indptr[i + 1]):
                if symmetric[b]:
                    values[p] = isqrt[i] * data[p] * isqrt[indices[p]]
                else:
                    values[p] = inv[i] * data[p]
        first = last
    return indptr, indices, values, symmetric
