"""RWSE: known return probabilities on hand-built graphs, PyG parity, equivariance."""

from __future__ import annotations

from math import comb

import pytest
import torch
from torch_geometric.data import Data
from torch_geometric.transforms import AddRandomWalkPE
from torch_geometric.utils import to_undirected

from graphbench.transforms.rwse import RWSE


def undirected(edges: list[tuple[int, int]], n: int) -> Data:
    ei = torch.tensor(edges, dtype=torch.long).t().reshape(2, -1)
    return Data(edge_index=to_undirected(ei, num_nodes=n), num_nodes=n)


def cycle(n: int) -> Data:
    return undirected([(i, (i + 1) % n) for i in range(n)], n)


def complete(n: int) -> Data:
    return undirected([(i, j) for i in range(n) for j in range(i + 1, n)], n)


def random_graph(n: int, p: float, seed: int) -> Data:
    g = torch.Generator().manual_seed(seed)
    mask = torch.rand(n, n, generator=g) < p
    ei = mask.triu(1).nonzero().t()
    return Data(edge_index=to_undirected(ei, num_nodes=n), num_nodes=n)


def reference(data: Data, k: int) -> torch.Tensor:
    """diag((D^-1 A)^t) in float64 by repeated matrix products."""
    n = data.num_nodes
    adj = torch.zeros(n, n, dtype=torch.float64)
    ones = torch.ones(data.edge_index.size(1), dtype=torch.float64)
    adj.index_put_(tuple(data.edge_index), ones, accumulate=True)
    deg = adj.sum(-1, keepdim=True)
    trans = torch.where(deg > 0, adj / deg.clamp(min=1e-300), torch.zeros_like(adj))
    out, power = [], torch.eye(n, dtype=torch.float64)
    for _ in range(k):
        power = power @ trans
        out.append(power.diagonal())
    return torch.stack(out, -1)


def test_even_cycle_matches_central_binomials_exactly():
    # C_8: odd t cannot return (bipartite); even t < 8 returns with C(t, t/2) / 2^t
    pe = RWSE(k=7)(cycle(8)).rwse
    assert pe.shape == (8, 7) and pe.dtype == torch.float32
    expected = [0.0 if t % 2 else comb(t, t // 2) / 2**t for t in range(1, 8)]
    assert torch.equal(pe, torch.tensor(expected).repeat(8, 1))


def test_complete_graph_closed_form():
    # K_n: P = (J - I)/(n-1) has eigenvalues 1 and -1/(n-1) (n-1 times), so
    # (P^t)_ii = (1 + (n-1) (-1/(n-1))^t) / n
    n, k = 5, 10
    pe = RWSE(k=k)(complete(n)).rwse
    expected = torch.tensor([(1 + (n - 1) * (-1 / (n - 1)) ** t) / n for t in range(1, k + 1)])
    torch.testing.assert_close(pe, expected.float().repeat(n, 1), atol=1e-7, rtol=1e-6)


def test_path_and_isolated_node():
    # path 0-1-2 plus isolated node 3: from the middle node every even walk returns
    data = undirected([(0, 1), (1, 2)], 4)
    pe = RWSE(k=4)(data).rwse
    expected = torch.tensor([[0, 0.5, 0, 0.5], [0, 1, 0, 1], [0, 0.5, 0, 0.5], [0, 0, 0, 0]], dtype=torch.float32)
    # float32 products (1/sqrt(2) squared): within 2 ulps of the exact values; the zeros exactly zero
    torch.testing.assert_close(pe, expected, rtol=2.5e-7, atol=0.0)


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 9, 10, 16, 17, 20])
def test_every_k_matches_repeated_products(k):
    # exercises each split t = q*m + r of the sqrt(k) power chain
    data = random_graph(13, 0.3, seed=k)
    torch.testing.assert_close(RWSE(k=k)(data).rwse, reference(data, k).float(), atol=1e-6, rtol=1e-5)


def test_matches_pyg_add_random_walk_pe():
    graphs = [random_graph(n, 0.25, seed=n) for n in (2, 5, 9, 17, 40)]
    # a self-loop and a directed graph: both keep PyG's semantics
    graphs.append(Data(edge_index=torch.tensor([[0, 0, 1, 1, 2], [0, 1, 0, 2, 0]]), num_nodes=3))
    graphs.append(Data(edge_index=torch.tensor([[0, 1, 2, 2], [1, 2, 0, 1]]), num_nodes=4))
    for data in graphs:
        ours = RWSE(k=12)(data.clone()).rwse
        pyg = AddRandomWalkPE(walk_length=12)(data.clone()).random_walk_pe
        torch.testing.assert_close(ours, pyg, atol=1e-6, rtol=1e-5)


def test_permutation_equivariance():
    data = random_graph(11, 0.35, seed=3)
    perm = torch.randperm(11, generator=torch.Generator().manual_seed(0))
    inverse = torch.empty_like(perm)
    inverse[perm] = torch.arange(11)
    permuted = Data(edge_index=inverse[data.edge_index], num_nodes=11)  # new node inverse[i] = old i
    pe, pe_perm = RWSE(k=8)(data).rwse, RWSE(k=8)(permuted).rwse
    torch.testing.assert_close(pe_perm, pe[perm], atol=1e-7, rtol=1e-6)


def test_edge_weights_and_attr_name():
    # weighted path 0-1-2 with weights 1 and 3: from node 1, P(1->0)=1/4, P(1->2)=3/4
    data = Data(
        edge_index=torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]]),
        edge_weight=torch.tensor([1.0, 1.0, 3.0, 3.0]),
        num_nodes=3,
    )
    out = RWSE(k=2, attr="walk")(data)
    assert torch.equal(out.walk[:, 1], torch.tensor([0.25, 1.0, 0.75]))


def test_does_not_modify_input_and_rejects_bad_k():
    data = cycle(4)
    RWSE(k=3)(data)
    assert "rwse" not in data
    with pytest.raises(ValueError, match="k >= 1"):
        RWSE(k=0)
    assert repr(RWSE(k=3)) == "RWSE(k=3, attr='rwse')"


def test_rejects_graphs_above_max_nodes(monkeypatch):
    monkeypatch.setattr(RWSE, "MAX_NODES", 7)
    RWSE(k=2)(cycle(7))
    with pytest.raises(ValueError, match=r"8 nodes > RWSE.MAX_NODES=7"):
        RWSE(k=2).transform_many([cycle(4), cycle(8)])
