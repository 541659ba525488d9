"""Normalizations, in particular Benchmarking GNNs' graph-size normalization h_i / sqrt(|V_G|)."""

from __future__ import annotations

import math

import pytest
import torch

from graphbench.modules.norms import NORMS, MaskedBatchNorm1d, NodeNorm, graph_size_norm

BATCH = torch.tensor([0, 0, 0, 0, 1, 2, 2])  # graphs of 4, 1 and 2 nodes


def test_graph_size_norm_divides_by_sqrt_graph_size() -> None:
    x = torch.ones(7, 2)
    expected = torch.tensor([1 / 2] * 4 + [1.0] + [1 / math.sqrt(2)] * 2).unsqueeze(-1).expand(7, 2)
    assert torch.allclose(graph_size_norm(x, BATCH), expected)


def test_graph_size_norm_without_batch_is_one_graph() -> None:
    x = torch.arange(8.0).view(4, 2)
    assert torch.equal(graph_size_norm(x, None), x / 2)
    assert graph_size_norm(torch.zeros(0, 2), None).shape == (0, 2)


def test_graphnorm_is_batchnorm_after_size_normalization() -> None:
    torch.manual_seed(0)
    x = torch.randn(7, 3)
    norm = NodeNorm(3, "graphnorm")
    reference = NodeNorm(3, "batchnorm")
    assert torch.allclose(norm(x, BATCH), reference(graph_size_norm(x, BATCH)))
    assert torch.allclose(norm.norm.running_mean, reference.norm.running_mean)


def test_graphnorm_exact_in_eval_with_fresh_statistics() -> None:
    norm = NodeNorm(2, "graphnorm").eval()  # running mean 0, var 1, weight 1, bias 0
    x = torch.full((7, 2), 4.0)
    out = norm(x, BATCH)
    eps = norm.norm.eps
    assert torch.allclose(out[:4], torch.full((4, 2), 2.0 / math.sqrt(1 + eps)))
    assert torch.allclose(out[4], torch.full((2,), 4.0 / math.sqrt(1 + eps)))


def test_edge_rows_divide_by_sqrt_edges_per_graph() -> None:
    edge_batch = torch.tensor([0, 0, 0, 0, 0, 0, 0, 0, 0, 1])  # 9 edges in graph 0, 1 in graph 1
    out = graph_size_norm(torch.ones(10, 1), edge_batch)
    assert torch.allclose(out.view(-1), torch.tensor([1 / 3] * 9 + [1.0]))


def test_other_kinds_ignore_batch_and_unknown_lists_valid() -> None:
    x = torch.randn(7, 3)
    for kind in ("batchnorm", "layernorm", "none"):
        torch.manual_seed(0)
        a = NodeNorm(3, kind)
        torch.manual_seed(0)
        b = NodeNorm(3, kind)
        assert torch.allclose(a(x, BATCH), b(x))
    assert "graphnorm" in NORMS
    with pytest.raises(ValueError, match="valid"):
        NodeNorm(3, "groupnorm")


@pytest.mark.parametrize("momentum", [0.1, None])
def test_masked_batchnorm_is_batchnorm_over_the_kept_rows(momentum: float | None) -> None:
    torch.manual_seed(0)
    masked, plain = MaskedBatchNorm1d(3, momentum=momentum), torch.nn.BatchNorm1d(3, momentum=momentum)
    for step in range(3):
        x = torch.randn(9, 3) * (step + 1) + step
        mask = torch.tensor([True, False, True, True, False, True, True, True, False])
        torch.testing.assert_close(masked(x, mask)[mask], plain(x[mask]))
    torch.testing.assert_close(masked.running_mean, plain.running_mean)
    torch.testing.assert_close(masked.running_var, plain.running_var)
    assert int(masked.num_batches_tracked) == int(plain.num_batches_tracked) == 3
    assert list(masked.state_dict()) == list(plain.state_dict())
    masked.eval(), plain.eval()
    x = torch.randn(5, 3)
    torch.testing.assert_close(masked(x, torch.ones(5, dtype=torch.bool)), plain(x))
    torch.testing.assert_close(masked(x), plain(x))


def test_node_norm_hands_the_mask_to_its_batchnorm_only() -> None:
    x, mask = torch.randn(6, 2), torch.tensor([True, True, True, True, False, False])
    torch.testing.assert_close(NodeNorm(2, "batchnorm")(x, None, mask)[:4], NodeNorm(2, "batchnorm")(x[:4]))
    torch.testing.assert_close(NodeNorm(2, "layernorm")(x, None, mask), NodeNorm(2, "layernorm")(x))
