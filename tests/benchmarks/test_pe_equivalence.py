"""The batched positional encodings the PE benchmark times give PyG's per-graph results on real
Peptides-func graphs: RWSE equal to float precision, LapPE equal up to each eigenvector's sign and,
within a repeated eigenvalue, up to a rotation of its eigenvectors (wherever PyG's ARPACK returns
true eigenvectors; where it does not, graphbench's are checked against the float64 spectrum)."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import torch
from torch_geometric.data import Data
from torch_geometric.transforms import AddLaplacianEigenvectorPE, AddRandomWalkPE

from benchmarks.pe import RESIDUAL, compare_lappe, eigenspaces
from graphbench.data.store.encodings import precompute_store, separated_graphs
from graphbench.data.store.graph_store import GraphStore
from graphbench.transforms.lap_pe import LapPE
from graphbench.transforms.precompute import precompute
from graphbench.transforms.rwse import RWSE

K, STEPS = 10, 20


def test_eigenspaces_group_close_values() -> None:
    values = torch.tensor([0.0, 1e-9, 0.5, 0.50005, 0.5001, 1.0])
    assert eigenspaces(values) == [[0, 1], [2, 3, 4], [5]]


def test_projector_difference_stays_within_the_davis_kahan_bound() -> None:
    # tilt the 4-cycle's eigenvector of 2 by theta towards one of 1: its residual is sin(theta), the
    # gap to the rest of the spectrum 1, so the projectors may differ by sin(theta) and no more
    cycle = Data(edge_index=torch.tensor([[0, 1, 1, 2, 2, 3, 3, 0], [1, 0, 2, 1, 3, 2, 0, 3]]), num_nodes=4)
    ours = LapPE(k=3)(copy.copy(cycle))
    theta = 1e-3
    tilted = ours.lap_pe.double().clone()
    tilted[:, 2] = math.cos(theta) * tilted[:, 2] + math.sin(theta) * tilted[:, 0]
    found = compare_lappe(cycle, ours.lap_pe, ours.lap_eigval, tilted)
    assert found.pyg_residual == pytest.approx(math.sin(theta), rel=1e-3)
    assert 0.5 * math.sin(theta) < found.projector_diff <= math.sin(theta) + 1e-6
    assert found.projector_excess <= 0


def test_compare_lappe_sees_sign_rotation_and_wrong_vectors() -> None:
    # a 4-cycle: spectrum 0, 1, 1, 2 (the eigenvalue 1 repeated)
    cycle = Data(edge_index=torch.tensor([[0, 1, 1, 2, 2, 3, 3, 0], [1, 0, 2, 1, 3, 2, 0, 3]]), num_nodes=4)
    ours = LapPE(k=3)(copy.copy(cycle))
    c, s = 0.6, 0.8  # rotate the eigenvectors of 1 and flip the sign of the eigenvector of 2
    turned = ours.lap_pe.clone()
    turned[:, 0], turned[:, 1] = c * ours.lap_pe[:, 0] + s * ours.lap_pe[:, 1], -s * ours.lap_pe[:, 0] + c * ours.lap_pe[:, 1]
    turned[:, 2] = -turned[:, 2]
    same = compare_lappe(cycle, ours.lap_pe, ours.lap_eigval, turned)
    assert same.projector_diff < 1e-6 and same.residual < 1e-6 and same.pyg_residual < 1e-6 and same.eigval_error < 1e-6
    assert same.rotations == 1 and same.projector_excess <= 0
    wrong = ours.lap_pe[:, [0, 2, 1]]  # eigenvectors in the wrong columns
    other = compare_lappe(cycle, ours.lap_pe, ours.lap_eigval, wrong)
    assert other.projector_diff > 0.1 and other.pyg_residual > 0.1


@pytest.mark.real_data
def test_rwse_equals_pyg_per_graph(peptide_graphs: list[Data]) -> None:
    ours = precompute(peptide_graphs, RWSE(k=STEPS))
    # the path the benchmark times and the DataModule takes: the collated store, encoded as it is
    on_store = separated_graphs(precompute_store(GraphStore.from_list(peptide_graphs), RWSE(k=STEPS)))
    for graph, mine, stored in zip(peptide_graphs, ours, on_store):
        pyg = AddRandomWalkPE(walk_length=STEPS)(copy.copy(graph)).random_walk_pe
        torch.testing.assert_close(mine.rwse, pyg, atol=1e-6, rtol=1e-5)
        assert torch.equal(stored.rwse, mine.rwse)


@pytest.mark.real_data
def test_lappe_equals_pyg_up_to_sign_and_rotation(peptide_graphs: list[Data]) -> None:
    graphs = [g for g in peptide_graphs if g.num_nodes > K + 1]  # PyG's transform needs N > k + 1
    assert len(graphs) > 0.9 * len(peptide_graphs)
    ours = precompute(graphs, LapPE(k=K))
    on_store = separated_graphs(precompute_store(GraphStore.from_list(graphs), LapPE(k=K)))
    found = []
    for graph, mine, stored in zip(graphs, ours, on_store):
        torch.testing.assert_close(stored.lap_pe, mine.lap_pe, rtol=0, atol=0)
        torch.testing.assert_close(stored.lap_eigval, mine.lap_eigval, rtol=0, atol=0, equal_nan=True)
        # ARPACK starts from a random vector unless given one: a seeded start makes PyG's side repeatable
        start = np.random.default_rng(len(found)).uniform(-1.0, 1.0, graph.num_nodes)
        pyg = AddLaplacianEigenvectorPE(k=K, is_undirected=True, v0=start)(copy.copy(graph)).laplacian_eigenvector_pe
        found.append(compare_lappe(graph, mine.lap_pe, mine.lap_eigval, pyg))
    assert max(c.eigval_error for c in found) < 1e-5
    assert max(c.residual for c in found) < 1e-5, "graphbench's columns must be eigenvectors of their eigenvalues"
    accurate = [c for c in found if c.pyg_residual <= RESIDUAL]
    assert len(accurate) >= 0.98 * len(found), "PyG's ARPACK should converge on nearly every graph"
    # the projectors differ by no more than both solvers' residuals allow (Davis-Kahan), on every graph
    assert max(c.projector_excess for c in found) <= 0
    # and typically by float rounding (the largest depend on ARPACK's start and the platform's BLAS)
    assert float(np.median([c.projector_diff for c in accurate])) < 1e-5
    assert sum(c.rotations for c in accurate) > 0, "the sample must contain repeated eigenvalues"
