"""RWSE's compiled walk kernels: exact returns on hand-built graphs, both kernels agree, the block matrix."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from graphbench.transforms.walk_kernels import symmetric_returns, walk_matrix, walk_returns


def csr(dense: np.ndarray) -> sp.csr_matrix:
    return sp.csr_matrix(dense)


def returns(kernel, m: sp.csr_matrix, k: int) -> np.ndarray:
    """``kernel``'s returns from every start node of ``m``, into a fresh zero array."""
    out = np.zeros((m.shape[0], k), np.float32)
    kernel(m.indptr, m.indices, m.data, out, 0, m.shape[0])
    return out


def test_directed_cycle_returns_every_third_step_exactly():
    # 0 -> 1 -> 2 -> 0: P^3 = I, so t = 3, 6 return with probability 1 and all others 0
    m = csr(np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]], dtype=np.float64))
    out = returns(walk_returns, m, 7)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, np.tile([0, 0, 1, 0, 0, 1, 0], (3, 1)).astype(np.float32))


def test_symmetric_path_from_its_ends_and_middle():
    # path 0-1-2, S = D^-1/2 A D^-1/2 has S_01 = S_12 = 1/sqrt(2): even walks return with 1/2
    # from an end and 1 from the middle (float64 sums, so exact after rounding to float32)
    s = 1 / np.sqrt(2.0)
    m = csr(np.array([[0, s, 0], [s, 0, s], [0, s, 0]]))
    out = returns(symmetric_returns, m, 5)
    np.testing.assert_array_equal(out, np.array([[0, 0.5, 0, 0.5, 0], [0, 1, 0, 1, 0], [0, 0.5, 0, 0.5, 0]], np.float32))


def test_symmetric_kernel_equals_general_kernel_and_dense_powers():
    rng = np.random.default_rng(0)
    n, k = 12, 9
    upper = np.triu(rng.random((n, n)) < 0.3, 1) * rng.random((n, n))
    adj = upper + upper.T
    adj[3, 3] = 2.0  # a weighted self-loop
    adj[:, 7] = adj[7, :] = 0.0  # an isolated node
    deg = adj.sum(1)
    inv = np.divide(1.0, deg, out=np.zeros(n), where=deg > 0)
    trans, sym = csr(inv[:, None] * adj), csr(np.sqrt(inv)[:, None] * adj * np.sqrt(inv)[None, :])
    dense = np.stack([np.diagonal(np.linalg.matrix_power(trans.toarray(), t)) for t in range(1, k + 1)], -1)
    general = returns(walk_returns, trans, k)
    symmetric = returns(symmetric_returns, sym, k)
    np.testing.assert_allclose(general, dense, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(symmetric, dense, rtol=1e-6, atol=1e-7)
    assert not general[7].any() and not symmetric[7].any()


def test_leaves_take_their_neighbours_returns():
    # 0-1-2 with leaves 3 (on 1) and 4 (on 2, weight 3); 5-6 is a component of two leaves (both walk);
    # 7 has only a self-loop (not a leaf); 2 has a self-loop, so odd returns are non-zero
    n, k = 8, 8
    adj = np.zeros((n, n))
    for i, j, w in [(0, 1, 1.0), (1, 2, 2.0), (1, 3, 1.0), (2, 4, 3.0), (5, 6, 1.0), (2, 2, 0.5), (7, 7, 1.0)]:
        adj[i, j] = adj[j, i] = w
    deg = adj.sum(1)
    isqrt = 1 / np.sqrt(deg)
    sym = csr(isqrt[:, None] * adj * isqrt[None, :])
    dense = np.stack([np.diagonal(np.linalg.matrix_power(sym.toarray(), t)) for t in range(1, k + 1)], -1)
    out = returns(symmetric_returns, sym, k)
    np.testing.assert_allclose(out, dense, rtol=1e-6, atol=1e-7)
    # the leaves 0, 3, 4: even returns are positive; odd ones only through 2's self-loop, for 4 on 2
    assert (out[[0, 3, 4], 0] == 0).all() and (out[[0, 3, 4], 1::2] > 0).all()
    assert out[4, 2] > 0 and out[3, 2] == out[0, 2] == 0
    np.testing.assert_array_equal(out[5], np.tile([0, 1], k // 2).astype(np.float32))


def test_walk_matrix_blocks_sums_parallel_edges_and_normalizes():
    # graph 0: 0-1 twice (summed to 2) and 1-2, both ways; graph 1: one node with a self-loop of weight 3
    ends = np.array([[1, 0, 0, 1, 2, 1, 0], [0, 1, 1, 2, 1, 0, 0]])
    weight = np.array([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 3.0])
    indptr, indices, values, symmetric = walk_matrix(ends, weight, np.array([6, 1]), np.array([3, 1]))
    assert symmetric.tolist() == [True, True]
    assert indptr.tolist() == [0, 1, 3, 4, 5] and indices.tolist() == [1, 0, 2, 1, 3]
    # A = [[0, 2, 0], [2, 0, 1], [0, 1, 0]] (+ [[3]]), degrees 2, 3, 1 (+ 3): S = D^-1/2 A D^-1/2
    np.testing.assert_allclose(values, [2 / np.sqrt(6), 2 / np.sqrt(6), 1 / np.sqrt(3), 1 / np.sqrt(3), 1.0], rtol=1e-15)


def test_walk_matrix_directed_or_negative_is_row_normalized():
    directed = walk_matrix(np.array([[0, 0, 1], [1, 2, 2]]), np.ones(3), np.array([3]), np.array([3]))
    assert directed[3].tolist() == [False]
    np.testing.assert_array_equal(directed[2], [0.5, 0.5, 1.0])  # P = D^-1 A, node 2 has no out-edge
    negative = walk_matrix(np.array([[0, 1], [1, 0]]), np.array([-1.0, -1.0]), np.array([2]), np.array([2]))
    assert negative[3].tolist() == [False]


def test_walk_matrix_normalizes_each_graph_its_own_way():
    # graph 0: the path 0-1-2 (symmetric, S); graph 1: 0 -> 1, 0 -> 2 (directed, P); graph 2: no edges
    ends = np.array([[0, 1, 1, 2, 0, 0], [1, 0, 2, 1, 1, 2]])
    indptr, indices, values, symmetric = walk_matrix(ends, np.ones(6), np.array([4, 2, 0]), np.array([3, 3, 2]))
    assert symmetric.tolist() == [True, False, True]
    assert indptr.tolist() == [0, 1, 3, 4, 6, 6, 6, 6, 6] and indices.tolist() == [1, 0, 2, 1, 4, 5]
    s = 1 / np.sqrt(2.0)
    np.testing.assert_allclose(values, [s, s, s, s, 0.5, 0.5], rtol=1e-15)


def test_kernels_walk_only_their_start_nodes():
    # two triangles in one matrix; walks from the second one only leave the first one's rows zero
    s = 0.5
    block = np.array([[0, s, s], [s, 0, s], [s, s, 0]])
    m = csr(np.block([[block, np.zeros((3, 3))], [np.zeros((3, 3)), block]]))
    for kernel in (symmetric_returns, walk_returns):
        out = np.zeros((6, 4), np.float32)
        kernel(m.indptr, m.indices, m.data, out, 3, 6)
        assert not out[:3].any()
        np.testing.assert_array_equal(out[3:], returns(kernel, m, 4)[3:])
        np.testing.assert_array_equal(out[3], np.array([0, 0.5, 0.25, 0.375], np.float32))


def test_walk_matrix_rejects_an_edge_outside_its_graph():
    with pytest.raises(ValueError, match="not a node of its graph"):
        walk_matrix(np.array([[0, 0], [1, 3]]), np.ones(2), np.array([1, 1]), np.array([2, 2]))
