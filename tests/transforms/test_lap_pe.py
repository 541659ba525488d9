"""LapPE: known spectra, eigen-equations, padding, PyG parity, equivariance up to sign."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch_geometric.data import Data
from torch_geometric.transforms import AddLaplacianEigenvectorPE
from torch_geometric.utils import get_laplacian, to_dense_adj, to_undirected

from graphbench.transforms.lap_pe import LapPE, _laplacian


def undirected(edges: list[tuple[int, int]], n: int) -> Data:
    ei = torch.tensor(edges, dtype=torch.long).t().reshape(2, -1)
    return Data(edge_index=to_undirected(ei, num_nodes=n), num_nodes=n)


def cycle(n: int) -> Data:
    return undirected([(i, (i + 1) % n) for i in range(n)], n)


def path(n: int) -> Data:
    return undirected([(i, i + 1) for i in range(n - 1)], n)


def complete(n: int) -> Data:
    return undirected([(i, j) for i in range(n) for j in range(i + 1, n)], n)


def random_graph(n: int, p: float, seed: int) -> Data:
    """G(n, p) plus a Hamiltonian path, so it is connected."""
    g = torch.Generator().manual_seed(seed)
    ei = (torch.rand(n, n, generator=g) < p).triu(1).nonzero().t()
    chain = torch.stack([torch.arange(n - 1), torch.arange(1, n)])
    return Data(edge_index=to_undirected(torch.cat([ei, chain], 1), num_nodes=n), num_nodes=n)


def sym_laplacian(data: Data) -> torch.Tensor:
    n = data.num_nodes
    adj = torch.zeros(n, n, dtype=torch.float64)
    adj[data.edge_index[0], data.edge_index[1]] = 1.0
    deg = adj.sum(-1)
    dinv = torch.where(deg > 0, deg.clamp(min=1).rsqrt(), torch.zeros_like(deg))
    return torch.eye(n, dtype=torch.float64) - dinv[:, None] * adj * dinv[None, :]


def check_eigenpairs(data: Data, out: Data, k: int) -> None:
    """Columns are orthonormal and satisfy L v = lambda v; eigvals are broadcast per node."""
    vecs, vals = out.lap_pe.double(), out.lap_eigval.double()
    assert vecs.shape == vals.shape == (data.num_nodes, k)
    assert torch.equal(vals, vals[:1].expand_as(vals))
    lap = sym_laplacian(data)
    torch.testing.assert_close(vecs.T @ vecs, torch.eye(k, dtype=torch.float64), atol=1e-6, rtol=0)
    torch.testing.assert_close(lap @ vecs, vecs * vals[0], atol=1e-6, rtol=0)


def test_cycle_spectrum():
    # C_6: 1 - cos(2 pi j / 6) = 0, .5, .5, 1.5, 1.5, 2; the trivial 0 is dropped
    data = cycle(6)
    out = LapPE(k=5)(data)
    expected = sorted(1 - math.cos(2 * math.pi * j / 6) for j in range(6))[1:]
    torch.testing.assert_close(out.lap_eigval[0], torch.tensor(expected), atol=1e-6, rtol=0)
    check_eigenpairs(data, out, 5)


def test_complete_graph_spectrum():
    # K_5: every non-trivial eigenvalue is n / (n - 1)
    data = complete(5)
    out = LapPE(k=3)(data)
    torch.testing.assert_close(out.lap_eigval, torch.full((5, 3), 1.25), atol=1e-6, rtol=0)
    check_eigenpairs(data, out, 3)


def test_path_spectrum_and_vectors():
    # P_5: eigenvalues 1 - cos(pi j / 4); eigenvectors u_j(i) ~ sqrt(d_i) cos(pi j i / 4)
    data = path(5)
    out = LapPE(k=4)(data)
    expected = [1 - math.cos(math.pi * j / 4) for j in range(1, 5)]
    torch.testing.assert_close(out.lap_eigval[0], torch.tensor(expected), atol=1e-6, rtol=0)
    check_eigenpairs(data, out, 4)
    # Fiedler vector [1, 1, 0, -1, -1] / 2; the canonical sign makes node 0 positive
    fiedler = torch.tensor([1.0, 1.0, 0.0, -1.0, -1.0]) / 2
    torch.testing.assert_close(out.lap_pe[:, 0], fiedler, atol=1e-6, rtol=0)


def test_small_eigenvalues_to_float32_precision():
    # P_120: lambda_j = 1 - cos(pi j / 119), lambda_1 = 3.5e-4, where a float32 step is 3e-11: LAPACK's
    # bisection stops within BISECTION_TOL = 1e-9, and only the Rayleigh quotients are this close
    n = 120
    out = LapPE(k=6)(path(n))
    exact = np.array([1 - math.cos(math.pi * j / (n - 1)) for j in range(1, 7)])
    steps = np.abs(out.lap_eigval[0].double().numpy() - exact) / np.spacing(exact.astype(np.float32))
    assert steps.max() <= 1.0, steps
    check_eigenpairs(path(n), out, 6)


def test_small_graph_is_padded_with_zeros_and_nan():
    out = LapPE(k=5)(path(3))
    assert torch.equal(out.lap_pe[:, 2:], torch.zeros(3, 3))
    assert torch.isnan(out.lap_eigval[:, 2:]).all()
    torch.testing.assert_close(out.lap_eigval[0, :2], torch.tensor([1.0, 2.0]), atol=1e-6, rtol=0)
    single = LapPE(k=2)(Data(edge_index=torch.empty(2, 0, dtype=torch.long), num_nodes=1))
    assert torch.equal(single.lap_pe, torch.zeros(1, 2)) and torch.isnan(single.lap_eigval).all()


def test_isolated_node_is_an_eigenvector_with_eigenvalue_one():
    # edge 0-1 and isolated node 2: L = [[1,-1,0],[-1,1,0],[0,0,1]], spectrum 0, 1, 2
    data = undirected([(0, 1)], 3)
    out = LapPE(k=2)(data)
    torch.testing.assert_close(out.lap_eigval[0], torch.tensor([1.0, 2.0]), atol=1e-6, rtol=0)
    torch.testing.assert_close(out.lap_pe[:, 0], torch.tensor([0.0, 0.0, 1.0]), atol=1e-6, rtol=0)
    check_eigenpairs(data, out, 2)


def test_directed_input_is_symmetrised_and_self_loops_ignored():
    directed = Data(edge_index=torch.tensor([[0, 1, 2, 3, 1], [1, 2, 3, 0, 1]]), num_nodes=4)
    a, b = LapPE(k=3)(directed), LapPE(k=3)(cycle(4))
    torch.testing.assert_close(a.lap_eigval, b.lap_eigval)
    torch.testing.assert_close(a.lap_pe @ a.lap_pe.T, b.lap_pe @ b.lap_pe.T, atol=1e-6, rtol=0)


def test_laplacian_by_hand_with_parallel_weighted_and_looped_edges():
    # edges 0->1 (1 and 3: summed to 4), 1->0 (2: the symmetric part takes max(4, 2)), 1->2 (1), 2->2 (a
    # self-loop, dropped): A = [[0, 4, 0], [4, 0, 1], [0, 1, 0]], degrees 4, 5, 1
    row, col = np.array([0, 0, 1, 1, 2]), np.array([1, 1, 0, 2, 2])
    lap, diag, first, second, entry = _laplacian(3, row, col, np.array([1.0, 3.0, 2.0, 1.0, 5.0]), np.full((3, 3), np.nan), True)
    s5 = math.sqrt(5.0)
    expected = np.array([[1.0, -2.0 / s5, 0.0], [-2.0 / s5, 1.0, -1.0 / s5], [0.0, -1.0 / s5, 1.0]])
    np.testing.assert_allclose(lap, expected, rtol=0, atol=1e-15)
    assert np.array_equal(lap, lap.T)
    assert first.tolist() == [0, 1] and second.tolist() == [1, 2]
    np.testing.assert_array_equal(entry, lap[first, second])
    assert diag.tolist() == [1.0, 1.0, 1.0]
    combinatorial, diag, first, second, entry = _laplacian(
        3, row, col, np.array([1.0, 3.0, 2.0, 1.0, 5.0]), np.full((3, 3), np.nan), False
    )
    np.testing.assert_array_equal(combinatorial, np.array([[4.0, -4.0, 0.0], [-4.0, 5.0, -1.0], [0.0, -1.0, 1.0]]))
    assert diag.tolist() == [4.0, 5.0, 1.0] and entry.tolist() == [-4.0, -1.0]


@pytest.mark.parametrize("n", [3, 7, 12])
def test_combinatorial_with_the_trivial_eigenvector_is_graphgps_lappe(n):
    """GraphGPS's LapPE as toenshoff/LRGB configures it (``laplacian_norm: none``, ``max_freqs: 10``;
    ``graphgps/transform/posenc_stats.py``): the 10 smallest eigenpairs of D - A from PyG's
    ``get_laplacian(normalization=None)``, the trivial one included, NaN-padded beyond N."""
    data = path(n) if n == 3 else random_graph(n, 0.5, seed=n)
    ours = LapPE(k=10, laplacian="combinatorial", keep_trivial=True)(data.clone())
    index, weight = get_laplacian(data.edge_index, normalization=None, num_nodes=n)
    lap = to_dense_adj(index, edge_attr=weight, max_num_nodes=n)[0].double()
    vals, vecs = torch.linalg.eigh(lap)
    m = min(n, 10)
    torch.testing.assert_close(ours.lap_eigval[0, :m].double(), vals[:m], atol=1e-5, rtol=0)
    assert torch.isnan(ours.lap_eigval[0, m:]).all() and (ours.lap_pe[:, m:] == 0).all()
    assert ours.lap_eigval[0, 0].abs() < 1e-6  # the trivial pair is kept: constant vector, eigenvalue 0
    torch.testing.assert_close(ours.lap_pe[:, 0].abs(), torch.full((n,), n**-0.5), atol=1e-5, rtol=0)
    simple = [j for j in range(m) if (j == 0 or vals[j] - vals[j - 1] > 1e-4) and (j == n - 1 or vals[j + 1] - vals[j] > 1e-4)]
    for j in simple:  # eigenvectors up to sign where the eigenvalue is simple
        torch.testing.assert_close(ours.lap_pe[:, j].double().abs(), vecs[:, j].abs(), atol=1e-5, rtol=0)


def test_permutation_equivariance_up_to_sign():
    data = path(7)  # simple spectrum
    perm = torch.randperm(7, generator=torch.Generator().manual_seed(1))
    inverse = torch.empty_like(perm)
    inverse[perm] = torch.arange(7)
    permuted = Data(edge_index=inverse[data.edge_index], num_nodes=7)
    a, b = LapPE(k=4)(data).lap_pe[perm], LapPE(k=4)(permuted).lap_pe
    signs = torch.sign((a * b).sum(0))
    assert bool((signs.abs() == 1).all())
    torch.testing.assert_close(b, a * signs, atol=1e-6, rtol=0)


@pytest.mark.parametrize("n", [12, 30, 100])  # PyG uses dense eigh below 100 nodes, eigsh from 100
def test_matches_pyg_eigenvectors(n):
    data = random_graph(n, 6 / n, seed=n)
    k = 4
    ours = LapPE(k=k)(data.clone())
    pyg = AddLaplacianEigenvectorPE(k=k, is_undirected=True)(data.clone()).laplacian_eigenvector_pe
    lap = sym_laplacian(data)
    eig_all = torch.linalg.eigvalsh(lap)
    gaps = (eig_all[1] - eig_all[0], eig_all[k + 1] - eig_all[k])
    assert min(gaps) > 1e-3, "test graph must not split an eigenspace at either cut"
    # same eigenvalues (Rayleigh quotients of PyG's vectors) and the same spanned subspace
    pyg64 = pyg.double()
    torch.testing.assert_close((pyg64 * (lap @ pyg64)).sum(0), ours.lap_eigval[0].double(), atol=1e-5, rtol=0)
    ours64 = ours.lap_pe.double()
    torch.testing.assert_close(ours64 @ ours64.T, pyg64 @ pyg64.T, atol=1e-5, rtol=0)


def test_deterministic_and_errors():
    data = random_graph(9, 0.4, seed=0)
    a, b = LapPE(k=3)(data), LapPE(k=3)(data)
    assert torch.equal(a.lap_pe, b.lap_pe) and torch.equal(a.lap_eigval, b.lap_eigval)
    assert a.lap_pe.dtype == a.lap_eigval.dtype == torch.float32
    custom = LapPE(k=2, eigen_attr="v", eigval_attr="lam")(data)
    assert custom.v.shape == custom.lam.shape == (9, 2)
    with pytest.raises(ValueError, match="k >= 1"):
        LapPE(k=0)
