"""GraphSAGE-mean on a hand-built path with identity weights."""

from __future__ import annotations

import pytest
import torch

from graphbench.modules.layers import SAGELayer
from tests.modules._graphs import PATH_EDGES, PATH_X, set_identity


def sage(root: float, neighbours: float, **kwargs) -> SAGELayer:
    layer = SAGELayer(2, 2, 2, **kwargs)
    set_identity(layer.conv.lin_l, neighbours)  # weighs the aggregated neighbours (carries the bias)
    set_identity(layer.conv.lin_r, root)  # weighs the node itself
    return layer


def test_mean_aggregation_exact() -> None:
    out, _ = sage(root=0.0, neighbours=1.0)(PATH_X, PATH_EDGES, None)
    expected = torch.tensor([[10.0, 1.0], [50.5, 1.0], [505.0, 2.0], [100.0, 2.0]])
    assert torch.equal(out, expected)


def test_root_plus_mean_exact() -> None:
    out, _ = sage(root=2.0, neighbours=1.0)(PATH_X, PATH_EDGES, None)
    assert torch.equal(out[1], torch.tensor([2 * 10.0 + 50.5, 2 * 1.0 + 1.0]))


def test_isolated_node_aggregates_zero() -> None:
    out, _ = sage(root=1.0, neighbours=1.0)(PATH_X, PATH_EDGES[:, :2], None)  # only 0 <-> 1
    assert torch.equal(out[3], PATH_X[3])


def test_normalize_gives_unit_rows() -> None:
    out, _ = sage(root=1.0, neighbours=1.0, normalize=True)(PATH_X, PATH_EDGES, None)
    assert torch.allclose(out.norm(dim=-1), torch.ones(4))


def test_unknown_aggregation_fails() -> None:
    with pytest.raises(ValueError):
        SAGELayer(2, 2, 2, aggr="median_of_medians")
