from __future__ import annotations

from functools import partial

import pytest
import torch
from torch_geometric.data import Batch, Data

from graphbench.data.info import DatasetInfo, FeatureSpec
from graphbench.modules.heads import MLPHead
from graphbench.modules.layers import GatedGCNLayer, GCNIILayer, GCNLayer, GINELayer, MLPLayer
from graphbench.modules.network import GraphNetwork, count_parameters
from graphbench.modules.norms import NodeNorm
from graphbench.vocabulary.errors import ArgumentError

INFO = DatasetInfo("toy", "graph", "multilabel", 3, "ap", True, FeatureSpec("atom"), FeatureSpec("bond"))


def tiny_batch() -> Batch:
    g1 = Data(
        x=torch.zeros(3, 9, dtype=torch.long),
        edge_index=torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]]),
        edge_attr=torch.zeros(4, 3, dtype=torch.long),
    )
    g2 = Data(
        x=torch.ones(2, 9, dtype=torch.long),
        edge_index=torch.tensor([[0, 1], [1, 0]]),
        edge_attr=torch.ones(2, 3, dtype=torch.long),
    )
    return Batch.from_data_list([g1, g2])


def network(layer, **kwargs) -> GraphNetwork:
    defaults = dict(
        info=INFO,
        layer=layer,
        head=partial(MLPHead, num_layers=2),
        norm=partial(NodeNorm, kind="batchnorm"),
        hidden_dim=8,
        num_layers=2,
    )
    defaults.update(kwargs)
    return GraphNetwork(**defaults)


@pytest.mark.parametrize("layer", [GCNLayer, GINELayer, GatedGCNLayer, MLPLayer])
def test_forward_backward_shapes(layer) -> None:
    torch.manual_seed(0)
    net = network(layer)
    out = net(tiny_batch())
    assert out.shape == (2, 3)
    out.sum().backward()
    assert all(p.grad is not None for p in net.layers.parameters())


def test_mlp_baseline_ignores_edges() -> None:
    torch.manual_seed(0)
    net = network(MLPLayer).eval()
    batch = tiny_batch()
    rewired = batch.clone()
    rewired.edge_index = rewired.edge_index.flip(0)[:, :0]
    assert torch.equal(net(batch), net(rewired))


def test_head_depth_and_exact_parameter_count() -> None:
    linear = MLPHead(8, 3, num_layers=1)
    mlp3 = MLPHead(8, 3, num_layers=3)
    assert count_parameters(linear) == 8 * 3 + 3
    assert count_parameters(mlp3) == 2 * (8 * 8 + 8) + 8 * 3 + 3


def test_a_layers_refused_argument_is_named_as_the_networks_layer_argument() -> None:
    """The layer names its own argument; the network, given the layer as ``layer``, puts that in front."""
    with pytest.raises(ArgumentError, match=r"^layer.num_convs=0 must be >= 1$") as err:
        network(partial(GCNIILayer, num_convs=0), num_layers=1)
    assert err.value.argument == "layer"


def test_unknown_pooling_lists_valid_ones() -> None:
    with pytest.raises(ValueError, match=r"^pooling='median' is not one of \['add', 'max', 'mean'\]$"):
        network(GCNLayer, pooling="median")


def test_kipf_welling_form_has_exactly_two_convolutions() -> None:
    """encode_inputs=False + last_layer_outputs=True: GCNConv(F->h) -> ReLU -> GCNConv(h->C), no more."""
    info = DatasetInfo("toy", "node", "multiclass", 3, "accuracy", True, FeatureSpec("dense", dim=5), None)
    net = network(
        GCNLayer,
        info=info,
        hidden_dim=4,
        norm=partial(NodeNorm, kind="none"),
        residual=False,
        encode_inputs=False,
        last_layer_outputs=True,
    )
    assert net.head is None and net.edge_encoder is None
    assert count_parameters(net) == (5 * 4 + 4) + (4 * 3 + 3)
    graph = Data(x=torch.randn(4, 5), edge_index=torch.tensor([[0, 1, 2, 3], [1, 0, 3, 2]]))
    assert net(graph).shape == (4, 3)


def test_raw_inputs_need_dense_features() -> None:
    with pytest.raises(ValueError, match="dense node features"):
        network(GCNLayer, encode_inputs=False)


def test_residual_block_adds_the_layer_output_alone() -> None:
    """model.block=residual: h + layer(h), no norm, activation or dropout around the layer."""
    torch.manual_seed(0)
    net = network(GINELayer, block="residual", norm=partial(NodeNorm, kind="none"), dropout=0.5, activation="gelu").eval()
    batch = tiny_batch()
    h = net.node_encoder(batch.x)
    e = net.edge_encoder(batch.edge_attr)
    for layer in net.layers:
        h = h + layer(h, batch.edge_index, e)[0]
    torch.testing.assert_close(net.embed(batch), h)
    with pytest.raises(ValueError, match=r"^block='residual' puts no norm around the layers: its norm must be of kind none$"):
        network(GINELayer, block="residual")
    with pytest.raises(ValueError, match=r"^block='post' is not one of \['full', 'residual'\]$"):
        network(GINELayer, block="post")


def test_a_concat_pe_is_concatenated_to_a_narrower_feature_embedding() -> None:
    """GraphGPS's Atom+RWSE: the atom embedding is hidden_dim - dim_pe wide, the PE fills the rest."""
    from graphbench.modules.pe_encoders import RWSEEncoder

    torch.manual_seed(0)
    net = network(GINELayer, pe_encoder=partial(RWSEEncoder, k=3, concat_dim=2)).eval()
    batch = tiny_batch()
    batch.rwse = torch.rand(5, 3)
    assert net.node_encoder.atom_embedding_list[0].embedding_dim == 6
    assert net.pe_encoder.linear.weight.shape == (2, 3)
    first = net.layers[0]
    h0 = torch.cat([net.node_encoder(batch.x), net.pe_encoder(batch)], dim=-1)
    seen: list[torch.Tensor] = []
    first.register_forward_pre_hook(lambda module, args: seen.append(args[0]))
    net(batch)
    torch.testing.assert_close(seen[0], h0)


def gin_every_layer_network(hidden_dim: int, info: DatasetInfo) -> GraphNetwork:
    from torch_geometric.nn import global_add_pool

    from graphbench.modules.layers import GINLayer

    net = GraphNetwork(
        info=info,
        layer=partial(GINLayer, mlp_batch_norm=True),
        head=partial(MLPHead, num_layers=1),
        norm=partial(NodeNorm, kind="batchnorm"),
        hidden_dim=hidden_dim,
        num_layers=4,
        pooling="add",
        readout_layers="all",
    )
    assert net.pool is global_add_pool
    return net


def test_every_layer_readout_sums_a_linear_prediction_of_each_pooled_embedding() -> None:
    """readout_layers=all: y = sum_l head_l(pool(h^(l))), l = 0..L (Benchmarking GNNs' gin_net.py).
    With identity layers and heads and no norm, h^(l) = A_hat^l x on a path; sum pooling adds the nodes."""
    from graphbench.modules.layers import GINLayer
    from tests.modules._graphs import PATH_EDGES, PATH_X, neighbour_sum, set_identity

    info = DatasetInfo("toy", "graph", "multiclass", 2, "accuracy", True, FeatureSpec("dense", dim=2), None)
    net = network(
        GINLayer,
        info=info,
        hidden_dim=2,
        num_layers=2,
        norm=partial(NodeNorm, kind="none"),
        head=partial(MLPHead, num_layers=1),
        residual=False,
        pooling="add",
        readout_layers="all",
    )
    assert len(net.layer_heads) == 2
    for linear in [net.node_encoder, net.head.mlp[0], *(head.mlp[0] for head in net.layer_heads)]:
        set_identity(linear)
    for layer in net.layers:
        set_identity(layer.conv.nn[0])
        set_identity(layer.conv.nn[2])
    graph = Data(x=PATH_X, edge_index=PATH_EDGES)
    h1 = PATH_X + neighbour_sum(PATH_X, PATH_EDGES)  # [[11, 1], [111, 3], [1110, 6], [1100, 5]]
    h2 = h1 + neighbour_sum(h1, PATH_EDGES)
    expected = (PATH_X.sum(0) + h1.sum(0) + h2.sum(0)).unsqueeze(0)
    assert torch.equal(net(graph), expected)
    assert torch.equal(expected, torch.tensor([[1111.0 + 2332.0 + 5885.0, 6.0 + 15.0 + 39.0]]))
    set_identity(net.head.mlp[0], scale=0.0)  # the input embedding's prediction is one of the terms
    assert torch.equal(net(graph), (h1.sum(0) + h2.sum(0)).unsqueeze(0))


def test_every_layer_readout_counts_the_source_gin_parameters() -> None:
    """Benchmarking GNNs' GINNet on ENZYMES (18 attributes, 6 classes) at its width 110: embedding 18*110+110,
    per layer two Linear(110, 110), two BatchNorms and epsilon, and five Linear(110, 6) predictions."""
    info = DatasetInfo("enzymes", "graph", "multiclass", 6, "accuracy", True, FeatureSpec("dense", dim=18), None)
    net = gin_every_layer_network(110, info)
    per_layer = 2 * (110 * 110 + 110) + 2 * 2 * 110 + 1
    assert count_parameters(net) == (18 * 110 + 110) + 4 * per_layer + 5 * (110 * 6 + 6) == 104_864


def test_every_layer_readout_refuses_a_model_without_a_head_per_layer() -> None:
    info = DatasetInfo("toy", "node", "multiclass", 3, "accuracy", True, FeatureSpec("dense", dim=5), None)
    with pytest.raises(ArgumentError, match=r"^readout_layers=all needs a head per layer"):
        network(GCNLayer, info=info, norm=partial(NodeNorm, kind="none"), last_layer_outputs=True, readout_layers="all")
    with pytest.raises(ArgumentError, match=r"^readout_layers='first' is not one of \['last', 'all'\]$"):
        network(GCNLayer, readout_layers="first")
