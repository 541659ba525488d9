"""``MLPHead``: ``num_layers - 1`` hidden Linear -> activation -> dropout blocks of the input width, then a linear
output layer."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from graphbench.modules.heads import MLPHead


def test_one_layer_is_a_linear_head() -> None:
    head = MLPHead(in_dim=3, out_dim=2, num_layers=1)
    assert [type(m) for m in head.mlp] == [nn.Linear]
    with torch.no_grad():
        head.mlp[0].weight.copy_(torch.tensor([[1.0, 0.0, -1.0], [0.5, 0.5, 0.5]]))
        head.mlp[0].bias.copy_(torch.tensor([0.0, 1.0]))
    assert torch.equal(head(torch.tensor([[2.0, 4.0, 6.0]])), torch.tensor([[-4.0, 7.0]]))


def test_hidden_layers_keep_the_input_width_and_apply_the_activation() -> None:
    head = MLPHead(in_dim=2, out_dim=1, num_layers=2, activation="relu", dropout=0.25)
    assert [type(m) for m in head.mlp] == [nn.Linear, nn.ReLU, nn.Dropout, nn.Linear]
    assert head.mlp[0].weight.shape == (2, 2) and head.mlp[3].weight.shape == (1, 2) and head.mlp[2].p == 0.25
    with torch.no_grad():
        head.mlp[0].weight.copy_(torch.tensor([[1.0, 0.0], [0.0, -1.0]]))
        head.mlp[0].bias.zero_()
        head.mlp[3].weight.copy_(torch.tensor([[1.0, 1.0]]))
        head.mlp[3].bias.zero_()
    head.eval()
    # relu([3, -5]) = [3, 0] -> 3; relu([-3, 5]) = [0, 5] -> 5
    assert torch.equal(head(torch.tensor([[3.0, 5.0], [-3.0, -5.0]])), torch.tensor([[3.0], [5.0]]))


def test_reset_parameters_redraws_every_linear_layer() -> None:
    head = MLPHead(in_dim=4, out_dim=2, num_layers=3)
    before = [p.detach().clone() for p in head.parameters()]
    torch.manual_seed(0)
    head.reset_parameters()
    assert all(not torch.equal(a, b) for a, b in zip(before, head.parameters(), strict=True))


def test_zero_layers_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^num_layers=0 must be >= 1$"):
        MLPHead(in_dim=4, out_dim=2, num_layers=0)


def test_graphgps_mlp_graph_order_drops_out_before_every_linear_map() -> None:
    """``mlp_graph`` of GraphGPS / toenshoff/LRGB: (Dropout -> Linear -> act) x (L-1), Dropout -> Linear."""
    head = MLPHead(in_dim=4, out_dim=2, num_layers=3, activation="gelu", dropout=0.1, dropout_first=True)
    kinds = [type(m) for m in head.mlp]
    assert kinds == [nn.Dropout, nn.Linear, nn.GELU, nn.Dropout, nn.Linear, nn.GELU, nn.Dropout, nn.Linear]
    assert all(m.p == 0.1 for m in head.mlp if isinstance(m, nn.Dropout))


def test_graphgym_mlp_order_normalizes_hidden_rows() -> None:
    """GraphGym's MLP with a fresh LayerConfig (PyG 2.3.0): Linear -> ReLU -> L2 normalization per hidden layer."""
    head = MLPHead(in_dim=2, out_dim=1, num_layers=2, activation="relu", l2_normalize=True).eval()
    with torch.no_grad():
        head.mlp[0].weight.copy_(torch.eye(2))
        head.mlp[0].bias.zero_()
        head.mlp[-1].weight.copy_(torch.tensor([[1.0, 0.0]]))
        head.mlp[-1].bias.zero_()
    # relu([3, 4]) / 5 = [0.6, 0.8] -> 0.6
    assert torch.allclose(head(torch.tensor([[3.0, 4.0]])), torch.tensor([[0.6]]))
    with pytest.raises(ValueError, match="one of them"):
        MLPHead(2, 1, 2, dropout_first=True, l2_normalize=True)


def test_dot_product_head_scores_pairs_by_the_dot_product_of_mapped_embeddings() -> None:
    """toenshoff/LRGB's inductive_edge head (edge_decoding: dot, layers_post_mp: 1): <W h_u + b, W h_v + b>."""
    from graphbench.modules.heads import DotProductHead, score_pairs

    head = DotProductHead(in_dim=2, out_dim=1, num_layers=1)
    assert [type(m) for m in head.node_map.mlp] == [nn.Linear]
    assert sum(p.numel() for p in head.parameters()) == 2 * 2 + 2
    with torch.no_grad():
        head.node_map.mlp[0].weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 2.0]]))
        head.node_map.mlp[0].bias.copy_(torch.tensor([1.0, 0.0]))
    h_u, h_v = torch.tensor([[1.0, 1.0]]), torch.tensor([[0.0, 3.0]])
    # g(h_u) = (2, 2), g(h_v) = (1, 6): 2 + 12
    assert score_pairs(head, h_u, h_v).tolist() == [[14.0]]
    linear = nn.Linear(2, 1, bias=False)
    nn.init.ones_(linear.weight)
    assert score_pairs(linear, h_u, h_v).tolist() == [[3.0]]
    with pytest.raises(ValueError, match="out_dim must be 1"):
        DotProductHead(2, 3, 1)
