"""precompute / transform_many: the batched path equals the per-graph path."""

from __future__ import annotations

import pytest
import torch
from torch_geometric.data import Data
from torch_geometric.transforms import Compose, Constant
from torch_geometric.utils import is_undirected, to_undirected

from graphbench.transforms import walk_kernels
from graphbench.transforms.lap_pe import LapPE
from graphbench.transforms.precompute import CollatedGraphs, PECompose, precompute
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


def test_chunking_and_threads_keep_order(monkeypatch):
    graphs = mixed_graphs()
    threads = torch.get_num_threads()
    serial = RWSE(k=5).transform_many(graphs)  # one chunk
    monkeypatch.setattr(RWSE, "CHUNK_ELEMENTS", 200)  # chunks of a few graphs
    assert len(CollatedGraphs.from_list(graphs, [g.num_nodes for g in graphs]).spans(200)) > 4
    with torch_threads(2):  # a pool of two workers, whatever the test process was given
        pooled = RWSE(k=5).transform_many(graphs)
        assert torch.get_num_threads() == 2
    assert torch.get_num_threads() == threads
    for data, a, b in zip(graphs, serial, pooled):
        assert a.rwse.shape == (data.num_nodes, 5)
        assert torch.equal(a.rwse, b.rwse)


def test_spans_cover_the_graphs_in_order_within_the_bound():
    graphs = CollatedGraphs.from_list([Data(num_nodes=n) for n in [3, 2, 0, 4, 1, 5]], [3, 2, 0, 4, 1, 5])
    assert graphs.node_ptr.tolist() == [0, 3, 5, 5, 9, 10, 15] and graphs.edge_ptr.tolist() == [0] * 7
    # sum(max(n, 1) ** 2): 9 + 4 + 1 | 16 | 1 | 25 (a graph above the bound is a chunk of its own)
    assert graphs.spans(15) == [(0, 3), (3, 4), (4, 5), (5, 6)]
    assert graphs.spans(1 << 20) == [(0, 6)]
    assert CollatedGraphs.from_list([], []).spans(15) == []


def test_rwse_directed_and_undirected_graphs_batched_equal_per_graph_exactly(monkeypatch):
    """Each graph takes its own kernel (S for symmetric, P otherwise), whatever it is batched with."""
    graphs = mixed_graphs()
    g = torch.Generator().manual_seed(1)
    for i in range(0, len(graphs), 3):  # every third graph made directed, a fifth of those weighted
        n = graphs[i].num_nodes
        ei = (torch.rand(n, n, generator=g) < 0.4).nonzero().t()
        graphs[i] = Data(edge_index=ei, num_nodes=n)
        if i % 5 == 0:
            graphs[i].edge_weight = torch.rand(ei.size(1), generator=g)
    walked = {"symmetric_returns": 0, "walk_returns": 0}  # start nodes each kernel walked from

    def spy(kernel):
        def run(indptr, indices, values, out, start, stop):
            walked[kernel.__name__] += stop - start
            kernel(indptr, indices, values, out, start, stop)

        return run

    for elements in (1 << 20, 40):
        monkeypatch.setattr(RWSE, "CHUNK_ELEMENTS", elements)
        for data, out in zip(graphs, RWSE(k=7).transform_many(graphs)):
            assert torch.equal(out.rwse, RWSE(k=7)(data).rwse)
    # both kernels give the same returns up to float64 rounding: check which one each graph took
    for kernel in (walk_kernels.symmetric_returns, walk_kernels.walk_returns):
        monkeypatch.setattr(walk_kernels, kernel.__name__, spy(kernel))
    RWSE(k=7).transform_many(graphs)
    directed = sum(g.num_nodes for g in graphs if not is_undirected(g.edge_index, g.get("edge_weight"), g.num_nodes))
    total = sum(g.num_nodes for g in graphs)
    assert 0 < directed < total and walked == {"symmetric_returns": total - directed, "walk_returns": directed}


def test_rwse_collated_equals_per_graph_exactly():
    graphs = mixed_graphs()
    counts = [g.num_nodes for g in graphs]
    pe = RWSE(k=6, attr="walk").transform_collated(CollatedGraphs.from_list(graphs, counts))
    assert list(pe) == ["walk"] and pe["walk"].shape == (sum(counts), 6)
    for data, part in zip(graphs, pe["walk"].split(counts)):
        assert torch.equal(part, RWSE(k=6)(data).rwse)


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
        "PECompose([LapPE(k=4, eigen_attr='lap_pe', eigval_attr='lap_eigval', laplacian='sym', keep_trivial=False), "
        "RWSE(k=5, attr='rwse')])"
    )


def test_empty_list_and_empty_graph():
    assert precompute([], PECompose([LapPE(k=2), RWSE(k=2)])) == []
    empty = Data(edge_index=torch.empty(2, 0, dtype=torch.long), num_nodes=0)
    (out,) = precompute([empty], PECompose([LapPE(k=2), RWSE(k=3)]))
    assert out.lap_pe.shape == (0, 2) and out.lap_eigval.shape == (0, 2) and out.rwse.shape == (0, 3)
