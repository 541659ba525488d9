"""precompute / transform_many: the batched path equals the per-graph path."""

from __future__ import annotations

import pytest
import torch
from torch_geometric.data import Data
from torch_geometric.transforms import Compose, Constant
from torch_geometric.utils import to_undirected

from graphbench.transforms.lap_pe import LapPE
from graphbench.transforms.precompute import PECompose, map_batched, precompute
from graphbench.transforms.rwse import RWSE
from tests.conftest import torch_threads


def undirected(edges: list[tuple[int, int]], n: int) -> Data:
    ei = torch.tensor(edges, dtype=torch.long).t().reshape(2, -1)
    return Data(edge_index=to_undirected(ei, num_nodes=n), num_nodes=n)


def mixed_graphs() -> list[Data]:
    """Random graphs of a few repeated sizes, with cycles and complete graphs (repeated
    eigenvalues), a disconnected graph, isolated nodes and graphs smaller than k."""
    g = torch.Generator().manual_seed(0)
    graphs = []
    for i in range(36):
        n = [1, 2, 3, 5, 8, 8, 13, 13, 13][i % 9]
        ei = (torch.rand(n, n, generator=g) < 0.35).triu(1).nonzero().t()
        x = torch.full((n, 1), float(i))
        graphs.append(Data(edge_index=to_undirected(ei, num_nodes=n), num_nodes=n, x=x))
    for n in (8, 13):
        graphs.append(undirected([(i, (i + 1) % n) for i in range(n)], n))
        graphs.append(undirected([(i, j) for i in range(n) for j in range(i + 1, n)], n))
    graphs.append(undirected([(0, 1), (1, 2), (2, 0), (3, 4), (4, 5), (5, 3)], 8))  # 2 triangles + 2 isolated
    order = torch.randperm(len(graphs), generator=g)
    return [graphs[i] for i in order]


def eigenspaces_agree(a: Data, b: Data, k: int) -> None:
    """Same eigenvalues; per eigenvalue the same spanned subspace (if not cut off at k)."""
    n = a.num_nodes
    torch.testing.assert_close(a.lap_eigval, b.lap_eigval, atol=1e-5, rtol=0, equal_nan=True)
    vals = a.lap_eigval[0] if n else torch.empty(0)
    kk = min(k, n - 1)
    for lam in set(torch.round(vals[:kk] * 1e4).tolist()):
        cols = (torch.round(vals[:kk] * 1e4) == lam).nonzero().flatten()
        if (int(cols.max()) == kk - 1 and kk < n - 1) or lam == 0:
            # the eigenspace may continue past column k, or be the null space of a
            # disconnected graph minus the dropped vector: any subspace of it is valid
            continue
        pa, pb = a.lap_pe[:, cols].double(), b.lap_pe[:, cols].double()
        torch.testing.assert_close(pa @ pa.T, pb @ pb.T, atol=1e-5, rtol=0)
    assert torch.equal(a.lap_pe[:, kk:], b.lap_pe[:, kk:])


def test_rwse_batched_equals_per_graph_exactly():
    graphs = mixed_graphs()
    batched = RWSE(k=9).transform_many(graphs)
    for data, out in zip(graphs, batched):
        assert torch.equal(out.rwse, RWSE(k=9)(data).rwse)


@pytest.mark.parametrize("k", [3, 6])
def test_lappe_batched_equals_per_graph_up_to_basis(k):
    graphs = mixed_graphs()
    batched = LapPE(k=k).transform_many(graphs)
    for data, out in zip(graphs, batched):
        eigenspaces_agree(out, LapPE(k=k)(data), k)


def test_chunking_and_threads_keep_order():
    graphs = mixed_graphs()
    threads = torch.get_num_threads()
    serial = map_batched(graphs, RWSE(k=5)._kernel, parallel=False)  # one chunk
    with torch_threads(2):  # a pool of two workers, whatever the test process was given
        pooled = map_batched(graphs, RWSE(k=5)._kernel, max_elements=200)  # chunks of a few graphs
        assert torch.get_num_threads() == 2
    assert torch.get_num_threads() == threads
    for data, a, b in zip(graphs, serial, pooled):
        assert a["rwse"].shape == (data.num_nodes, 5)
        assert torch.equal(a["rwse"], b["rwse"])


def test_lappe_worker_processes_give_the_same_bits_in_order(monkeypatch):
    graphs = mixed_graphs() * 3
    monkeypatch.setattr(LapPE, "MIN_GRAPHS_TO_FORK", 1)
    here = LapPE(k=4).transform_many(graphs, num_workers=1)
    forked = LapPE(k=4).transform_many(graphs, num_workers=2)  # 16 chunks over two processes
    for data, a, b in zip(graphs, here, forked):
        torch.testing.assert_close(a.lap_pe, b.lap_pe, rtol=0, atol=0)
        torch.testing.assert_close(a.lap_eigval, b.lap_eigval, rtol=0, atol=0, equal_nan=True)
        eigenspaces_agree(b, LapPE(k=4)(data), 4)  # each result reached its own graph


def test_precompute_compose_variants_and_inputs_untouched():
    graphs = mixed_graphs()
    ours = precompute(graphs, PECompose([LapPE(k=4), RWSE(k=5)]))
    pyg_compose = precompute(graphs, Compose([LapPE(k=4), RWSE(k=5), Constant(value=2.0)]))
    for data, a, b in zip(graphs, ours, pyg_compose):
        assert "lap_pe" not in data and "rwse" not in data  # shallow copies only
        assert a.x is data.x and torch.equal(b.x[:, -1], torch.full((data.num_nodes,), 2.0))
        assert torch.equal(a.rwse, b.rwse) and torch.equal(a.rwse, RWSE(k=5)(data).rwse)
        eigenspaces_agree(a, b, 4)
        per_graph = PECompose([LapPE(k=4), RWSE(k=5)])(data)
        assert torch.equal(per_graph.rwse, a.rwse)
        eigenspaces_agree(per_graph, a, 4)
    assert precompute(graphs, None) == graphs
    assert repr(PECompose([LapPE(k=4), RWSE(k=5)])) == (
        "PECompose([LapPE(k=4, eigen_attr='lap_pe', eigval_attr='lap_eigval'), RWSE(k=5, attr='rwse')])"
    )


def test_empty_list_and_empty_graph():
    assert precompute([], PECompose([LapPE(k=2), RWSE(k=2)])) == []
    empty = Data(edge_index=torch.empty(2, 0, dtype=torch.long), num_nodes=0)
    (out,) = precompute([empty], PECompose([LapPE(k=2), RWSE(k=3)]))
    assert out.lap_pe.shape == (0, 2) and out.lap_eigval.shape == (0, 2) and out.rwse.shape == (0, 3)
