"""GRAND (Feng et al. 2020) on hand-built graphs: DropNode's mask and scaling, the mixed-order
propagation against a dense computation and a hand-computed value, sharpening and the consistency
loss with exact values, the task module's training objective, a deterministic evaluation pass, the
recipes and the budget, and a short Trainer run."""

from __future__ import annotations

import math

import lightning as L
import pytest
import torch
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from torch import Tensor, nn
from torch.utils.data import DataLoader
from torch_geometric.data import Batch, Data

from graphbench.build.model import network_builder, network_width
from graphbench.build.task_module import build_task_module
from graphbench.data.info import DatasetInfo, FeatureSpec
from graphbench.modules.heads import MLPHead
from graphbench.modules.layers import GRANDLayer
from graphbench.modules.layers.grand import drop_node, grand_init_, initialize, mixed_order_propagation
from graphbench.modules.losses import ConsistencyLoss, sharpen
from graphbench.modules.network import GraphNetwork, count_parameters
from graphbench.modules.norms import NodeNorm
from graphbench.modules.propagation import EdgePlan
from graphbench.modules.task_module import GraphTaskModule
from graphbench.vocabulary.errors import ConfigError
from tests.paths import CONF

# a path 0-1-2-3 and an isolated node 4, both directions
EDGE_INDEX = torch.tensor([[0, 1, 1, 2, 2, 3], [1, 0, 2, 1, 3, 2]])
X = torch.tensor([[1.0, 0.0], [2.0, 1.0], [0.0, 3.0], [4.0, 0.0], [5.0, 5.0]])


def dense_normalized_adjacency(edge_index: Tensor, num_nodes: int) -> Tensor:
    """:math:`\\hat D^{-1/2}(A + I)\\hat D^{-1/2}` as a dense matrix (rows receive)."""
    a = torch.eye(num_nodes)
    a[edge_index[1], edge_index[0]] = 1.0
    inv_sqrt = a.sum(dim=1).pow(-0.5)
    return inv_sqrt[:, None] * a * inv_sqrt[None, :]


def test_drop_node_keeps_or_zeroes_whole_rows_unscaled_in_training_and_scales_in_evaluation() -> None:
    assert torch.equal(drop_node(X, 0.5, training=False), X * 0.5)
    assert torch.equal(drop_node(X, 0.0, training=True), X)
    torch.manual_seed(8)
    expected_mask = torch.bernoulli(torch.full((5, 1), 0.75))
    torch.manual_seed(8)
    out = drop_node(X, 0.25, training=True)
    assert torch.equal(out, X * expected_mask)  # whole rows, kept rows unscaled (the authors' code)
    assert 0 < int(expected_mask.sum()) < 5  # this seed drops some rows and keeps others
    with pytest.raises(ValueError, match=r"^rate=1.0 must be in \[0, 1\)$"):
        drop_node(X, 1.0, training=True)


def test_mixed_order_propagation_is_the_mean_of_the_adjacency_powers() -> None:
    plan = EdgePlan(EDGE_INDEX, 5)
    a_hat = dense_normalized_adjacency(EDGE_INDEX, 5)
    expected = (X + a_hat @ X + a_hat @ a_hat @ X + a_hat @ a_hat @ a_hat @ X) / 4
    out = mixed_order_propagation(X, plan, 3)
    assert torch.allclose(out, expected, atol=1e-6)
    assert torch.equal(out[4], X[4])  # an isolated node keeps its features (A_hat_44 = 1)
    assert torch.equal(mixed_order_propagation(X, plan, 0), X)
    # by hand: one edge 0-1 gives A_hat = [[1/2, 1/2], [1/2, 1/2]] = A_hat^k, so with K = 2 and
    # X = [3, 0]: (X + 2 A_hat X) / 3 = ([3, 0] + 2 [1.5, 1.5]) / 3 = [2, 1]
    pair = EdgePlan(torch.tensor([[0, 1], [1, 0]]), 2)
    assert torch.allclose(mixed_order_propagation(torch.tensor([[3.0], [0.0]]), pair, 2), torch.tensor([[2.0], [1.0]]))


def test_sharpen_by_hand() -> None:
    p = torch.tensor([[0.75, 0.25], [0.5, 0.5]])
    # T = 1/2 squares: 0.5625 / (0.5625 + 0.0625) = 0.9; a uniform row stays uniform
    assert torch.allclose(sharpen(p, 0.5), torch.tensor([[0.9, 0.1], [0.5, 0.5]]))
    assert torch.allclose(sharpen(p, 1.0), p)


def test_consistency_loss_by_hand() -> None:
    # one node, two augmentations: softmax([log 3, 0]) = [3/4, 1/4], softmax([0, 0]) = [1/2, 1/2];
    # average [5/8, 3/8], sharpened with T = 1/2: [25, 9] / 34; squared distances 2 (1/68)^2 and
    # 2 (8/34)^2, i.e. 0.5/1156 and 128/1156; their mean times lambda = 0.7
    logits = [torch.tensor([[math.log(3.0), 0.0]]), torch.tensor([[0.0, 0.0]])]
    loss = ConsistencyLoss(num_augmentations=2, temperature=0.5, weight=0.7)(logits)
    assert math.isclose(float(loss), 0.7 * (0.5 + 128.0) / 1156 / 2, rel_tol=1e-6)
    # the sharpened average is a target: no gradient flows through it
    z = torch.tensor([[1.0, 0.0]], requires_grad=True)
    ConsistencyLoss(1, 1.0, 1.0)([z]).backward()
    assert z.grad is not None and torch.equal(z.grad, torch.zeros(1, 2))
    with pytest.raises(ValueError, match="expects 2 augmentations' logits, got 1"):
        ConsistencyLoss(2, 0.5, 1.0)(logits[:1])
    with pytest.raises(ValueError, match=r"^temperature=0.0 must be positive \(GRAND uses 0.1-0.5\)$"):
        ConsistencyLoss(2, 0.0, 1.0)


def grand_network(num_classes: int = 2, hidden_dim: int = 4, order: int = 2) -> GraphNetwork:
    info = DatasetInfo("toy", "node", "multiclass", num_classes, "accuracy", True, FeatureSpec("dense", 2), None)
    return GraphNetwork(
        info=info,
        layer=lambda **dims: GRANDLayer(**dims, order=order, drop_node=0.5, dropout=0.5),
        head=lambda in_dim, out_dim: MLPHead(in_dim, out_dim, num_layers=1),
        norm=lambda dim: NodeNorm(dim, "none"),
        hidden_dim=hidden_dim,
        num_layers=1,
        dropout=0.5,
        residual=False,
        encode_inputs=False,
    )


def test_evaluation_is_one_deterministic_pass_and_training_passes_are_random() -> None:
    torch.manual_seed(0)
    network = grand_network()
    batch = Batch.from_data_list([Data(x=X, edge_index=EDGE_INDEX)])
    del batch.batch
    assert count_parameters(network) == (2 * 4 + 4) + (4 * 2 + 2)  # Linear(F -> hidden), Linear(hidden -> C)
    network.eval()
    out = network(batch)
    assert torch.equal(out, network(batch))
    layer = network.layers[0]
    propagated = mixed_order_propagation(X * 0.5, EdgePlan(EDGE_INDEX, 5), 2)
    assert torch.allclose(out, network.head(torch.relu(layer.linear(propagated))), atol=1e-6)
    network.train()
    torch.manual_seed(1)
    first, second = network(batch), network(batch)
    assert not torch.equal(first, second)


class Sequence(nn.Module):
    """Returns the given outputs one call after the other: the training objective is what is tested."""

    def __init__(self, outputs: list[Tensor]) -> None:
        super().__init__()
        self.outputs = outputs
        self.calls = 0

    def forward(self, batch: Batch) -> Tensor:
        self.calls += 1
        return self.outputs[self.calls - 1]


def test_the_training_step_averages_the_supervised_loss_over_the_passes_and_adds_the_consistency_term() -> None:
    out1 = torch.tensor([[2.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    out2 = torch.tensor([[0.0, 1.0], [0.0, 3.0], [2.0, 0.0]])
    batch = Batch.from_data_list(
        [Data(x=X[:3], y=torch.tensor([0, 0, 1]), edge_index=EDGE_INDEX[:, :4], train_mask=torch.tensor([True, True, False]))]
    )
    info = DatasetInfo("toy", "node", "multiclass", 2, "accuracy", True, FeatureSpec("dense", 2), None)
    consistency = ConsistencyLoss(2, 0.5, 0.7)
    task = GraphTaskModule(Sequence([out1, out2]), info, torch.optim.Adam, loss=nn.CrossEntropyLoss(), consistency=consistency)
    loss = task.training_step(batch, 0)
    target = torch.tensor([0, 0])
    supervised = (nn.functional.cross_entropy(out1[:2], target) + nn.functional.cross_entropy(out2[:2], target)) / 2
    assert loss is not None and torch.allclose(loss, supervised + consistency([out1, out2]))  # over all 3 nodes
    assert float(task.metrics["train_metric"].compute()) == 0.5  # the first pass: node 0 right, node 1 wrong
    binary = DatasetInfo("toy", "node", "binary", 1, "accuracy", True, FeatureSpec("dense", 2), None)
    with pytest.raises(ConfigError, match="needs a multiclass task; dataset 'toy' is binary"):
        GraphTaskModule(nn.Identity(), binary, torch.optim.Adam, loss=nn.BCEWithLogitsLoss(), consistency=consistency)


CORA = DatasetInfo("cora", "node", "multiclass", 7, "accuracy", True, FeatureSpec("dense", 1433), None)


def test_the_recipes_are_the_authors_scripts_and_a_budget_sizes_the_mlp() -> None:
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cora = compose("config", overrides=["experiment=planetoid/cora-grand", "paths.output_dir=/tmp/grand-test"])
        citeseer = compose("config", overrides=["experiment=planetoid/citeseer-grand", "paths.output_dir=/tmp/grand-test"])
    GlobalHydra.instance().clear()
    shapes = [
        (c.model.layer.order, c.model.consistency.num_augmentations, c.model.consistency.temperature, c.model.consistency.weight)
        for c in (cora, citeseer)
    ]
    assert shapes == [(8, 4, 0.5, 1.0), (2, 2, 0.3, 0.7)]
    dropouts = [(c.model.layer.dropout, c.model.dropout, c.model.hidden_dim) for c in (cora, citeseer)]
    assert dropouts == [(0.5, 0.5, 32), (0.0, 0.2, 32)]
    assert (cora.optimizer.lr, cora.optimizer.weight_decay, cora.model.layer.drop_node) == (0.01, 5.0e-4, 0.5)
    make_network = network_builder(cora, CORA)
    network = make_network(network_width(cora, make_network))
    assert count_parameters(network) == 1433 * 32 + 32 + 32 * 7 + 7
    # P(d) = (1433 + 1) d + 7 d + 7: the largest width under 100k parameters is 69
    cora.budget.max_params = 100_000
    assert network_width(cora, make_network) == 69
    module = build_task_module(cora, network, CORA)
    assert module.consistency is not None and module.consistency.num_augmentations == 4
    cora.model.consistency = None  # DropNode alone
    assert build_task_module(cora, network, CORA).consistency is None
    link = DatasetInfo("collab", "link", "binary", 1, "hits@50", True, FeatureSpec("dense", 1433), None)
    with pytest.raises(ConfigError, match=r"is link-level: set model\.consistency=null"):
        build_task_module(citeseer, network, link)


def two_triangles() -> Batch:
    """Two triangles 0-1-2 (class 0) and 3-4-5 (class 1); the labelled nodes 1 and 4 are the ones
    whose features are closest to the other class's, so that any boundary between them separates all."""
    triangle = torch.tensor([[0, 1, 1, 2, 2, 0], [1, 0, 2, 1, 0, 2]])
    edge_index = torch.cat([triangle, triangle + 3], dim=1)
    x = torch.tensor([[1.0, 0.0], [0.6, 0.4], [0.7, 0.3], [0.0, 1.0], [0.4, 0.6], [0.3, 0.7]])
    y = torch.tensor([0, 0, 0, 1, 1, 1])
    train = torch.tensor([False, True, False, False, True, False])
    graph = Data(x=x, y=y, edge_index=edge_index, train_mask=train, val_mask=~train, test_mask=~train)
    batch = Batch.from_data_list([graph])
    del batch.batch
    return batch


def test_a_short_trainer_run_learns_the_two_triangles() -> None:
    L.seed_everything(0, verbose=False)
    batch = two_triangles()
    info = DatasetInfo("toy", "node", "multiclass", 2, "accuracy", True, FeatureSpec("dense", 2), None)
    task = GraphTaskModule(
        grand_network(hidden_dim=8, order=2),
        info,
        lambda params: torch.optim.Adam(params, lr=0.05),
        loss=nn.CrossEntropyLoss(),
        consistency=ConsistencyLoss(4, 0.5, 1.0),
    )
    loader = DataLoader([batch], batch_size=None)
    trainer = L.Trainer(
        max_epochs=60,
        accelerator="cpu",
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer.fit(task, train_dataloaders=loader, val_dataloaders=loader)
    assert trainer.current_epoch == 60
    task.eval()
    with torch.no_grad():
        predicted = task(batch).argmax(dim=-1)
    assert torch.equal(predicted, batch.y)
    assert float(trainer.callback_metrics["val/accuracy"]) == 1.0


class SourceMLPLayer(nn.Module):
    """THUDM/GRAND@7a2fd6e, pygcn/layers.py, ``MLPLayer``, transcribed: the weight stored ``[in, out]``."""

    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.FloatTensor(in_features, out_features))
        self.bias = nn.Parameter(torch.FloatTensor(out_features))
        stdv = 1.0 / math.sqrt(self.weight.size(1))
        self.weight.data.normal_(-stdv, stdv)
        self.bias.data.normal_(-stdv, stdv)


def test_grand_init_draws_the_sources_values_weight_then_bias_with_mean_and_std_one_over_root_out() -> None:
    linear = nn.Linear(3, 4)
    torch.manual_seed(7)
    grand_init_(linear)
    torch.manual_seed(7)
    source = SourceMLPLayer(3, 4)
    assert torch.equal(linear.weight, source.weight.t()) and torch.equal(linear.bias, source.bias)
    # by hand: s = 1/sqrt(out) = 1/2; the weight's 12 draws z in [in, out] order, then the bias's 4: s z - s
    torch.manual_seed(7)
    z_weight, z_bias = torch.randn(12).double(), torch.randn(4).double()  # the generator's standard normal draws
    assert torch.allclose(linear.weight.double(), (0.5 * z_weight - 0.5).view(3, 4).t(), atol=1e-6)
    assert torch.allclose(linear.bias.double(), 0.5 * z_bias - 0.5, atol=1e-6)
    big = nn.Linear(300, 400)  # s = 1/20: 120,000 weights with mean -0.05 and std 0.05
    grand_init_(big)
    assert abs(float(big.weight.mean()) + 0.05) < 1e-3 and abs(float(big.weight.std()) - 0.05) < 1e-3


def test_model_init_grand_redraws_the_layers_map_then_the_heads_and_default_leaves_pytorchs() -> None:
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose("config", overrides=["experiment=planetoid/cora-grand", "speedups=off", "paths.output_dir=/tmp/grand-test"])
    GlobalHydra.instance().clear()
    assert cfg.model.init == "grand"
    torch.manual_seed(0)
    built = network_builder(cfg, CORA)(32)
    cfg.model.init = "default"
    torch.manual_seed(0)
    default = network_builder(cfg, CORA)(32)
    torch.manual_seed(0)
    expected = initialize(network_builder(cfg, CORA)(32), "grand")
    layer, head = built.layers[0].linear, built.head.mlp[0]
    assert [tuple(m.weight.shape) for m in (layer, head)] == [(32, 1433), (7, 32)]
    assert all(torch.equal(a, b) for a, b in zip(built.state_dict().values(), expected.state_dict().values()))
    assert not torch.equal(built.layers[0].linear.weight, default.layers[0].linear.weight)
    assert float(built.head.mlp[0].bias.mean()) < 0 < float(default.layers[0].linear.weight.abs().max())
    cfg.model.init = "xavier"
    with pytest.raises(ConfigError, match=r"model\.init=xavier is not an initialization; valid: default, grand"):
        network_builder(cfg, CORA)
