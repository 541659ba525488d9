"""The empirical NTK against a brute-force per-parameter computation, kernel alignment on hand-worked
kernels, the normalised adjacency power by hand, and the callback inside a Lightning Trainer."""

from __future__ import annotations

import csv
import math
from pathlib import Path
from types import SimpleNamespace

import lightning as L
import pytest
import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch_geometric.data import Batch, Data
from torch_geometric.loader import DataLoader
from torch_geometric.nn import GCNConv, global_mean_pool

from graphbench.callbacks.ntk import NTKAlignment, alignment, empirical_ntk, normalized_adjacency_power, target_kernel
from graphbench.vocabulary.errors import ConfigError

# a 5-node graph: the path 0-1-2-3-4 plus the chord 0-2, both directions
EDGES = torch.tensor([[0, 1, 1, 2, 2, 3, 3, 4, 0, 2], [1, 0, 2, 1, 3, 2, 4, 3, 2, 0]])


class TinyGCN(nn.Module):
    """A 2-layer GCN (2 -> 3 -> 2), optionally with BatchNorm and dropout between the layers, and
    mean pooling for graph-level outputs."""

    def __init__(self, norm_and_dropout: bool = False, graph_level: bool = False) -> None:
        super().__init__()
        self.layers = nn.ModuleList([GCNConv(2, 3), GCNConv(3, 2)])
        self.norm = nn.BatchNorm1d(3) if norm_and_dropout else nn.Identity()
        self.dropout = nn.Dropout(0.5 if norm_and_dropout else 0.0)
        self.graph_level = graph_level

    def forward(self, data: Data) -> Tensor:
        h = self.dropout(torch.relu(self.norm(self.layers[0](data.x, data.edge_index))))
        h = self.layers[1](h, data.edge_index)
        return global_mean_pool(h, data.batch) if self.graph_level else h


def graph(seed: int = 0) -> Data:
    generator = torch.Generator().manual_seed(seed)
    return Data(x=torch.randn(5, 2, generator=generator), edge_index=EDGES, y=torch.tensor([0, 0, 1, 1, 0]))


def brute_force_ntk(model: nn.Module, data: Data, rows: Tensor) -> Tensor:
    """sum_k J_k J_k^T with every row of J_k from autograd, one output entry and one parameter tensor at a time."""
    out = model(data)[rows]
    params = [p for p in model.parameters() if p.requires_grad]
    theta = torch.zeros(len(rows), len(rows))
    for k in range(out.size(1)):
        for param in params:
            jacobian = torch.stack(
                [torch.autograd.grad(out[i, k], param, retain_graph=True)[0].reshape(-1) for i in range(len(rows))]
            )
            theta += jacobian @ jacobian.T
    return theta


@pytest.mark.parametrize("budget", [1, 60, 120, 2**27])  # one parameter per slice and one product at a time ... all at once
@pytest.mark.parametrize("rows", [None, [4, 0, 2]])
def test_empirical_ntk_equals_brute_force(budget: int, rows: list[int] | None) -> None:
    torch.manual_seed(0)
    model, data = TinyGCN(), graph()
    index = torch.tensor(rows) if rows is not None else torch.arange(5)
    expected = brute_force_ntk(model, data, index)
    theta = empirical_ntk(model, data, None if rows is None else index, max_jacobian_elements=budget)
    torch.testing.assert_close(theta, expected, atol=1e-5, rtol=1e-5)
    assert all(p.grad is None for p in model.parameters())


def test_ntk_is_symmetric_positive_semidefinite() -> None:
    torch.manual_seed(1)
    theta = empirical_ntk(TinyGCN(), graph(1)).double()
    torch.testing.assert_close(theta, theta.T)
    assert float(torch.linalg.eigvalsh(theta).min()) >= -1e-6 * float(theta.abs().max())


def test_ntk_is_computed_in_eval_mode_and_the_modes_are_restored() -> None:
    torch.manual_seed(2)
    model, data = TinyGCN(norm_and_dropout=True), graph(2)
    model(data)  # one training-mode pass so the running statistics are not the initial ones
    running_mean = model.norm.running_mean.clone()
    model.layers[1].eval()  # a submodule in its own mode must keep it
    theta = empirical_ntk(model, data, max_jacobian_elements=50)
    assert model.training and model.norm.training and not model.layers[1].training
    torch.testing.assert_close(model.norm.running_mean, running_mean)  # eval mode: no statistics update
    model.eval()
    torch.testing.assert_close(theta, brute_force_ntk(model, data, torch.arange(5)), atol=1e-5, rtol=1e-5)


def test_alignment_by_hand() -> None:
    k1 = torch.tensor([[2.0, 1.0], [1.0, 2.0]])
    k2 = torch.tensor([[1.0, 0.0], [0.0, 0.0]])
    # <K1, K2> = 2, |K1| = sqrt(10), |K2| = 1
    assert alignment(k1, k2) == pytest.approx(2 / math.sqrt(10))
    # 2 x 2: HKH = (a + c - 2b) / 4 * [[1, -1], [-1, 1]], so both centre to multiples of one matrix
    assert alignment(k1, k2, centered=True) == pytest.approx(1.0)
    # 3 x 3: K1 = diag(1, 0, 0), K2 = I. Uncentred: 1 / (1 * sqrt(3)). Centred: H K1 H = h h^T with
    # h = H e1 = (2/3, -1/3, -1/3), H I H = H; <h h^T, H> = |h|^2 = 2/3, |h h^T| = 2/3, |H| = sqrt(2)
    e1, eye = torch.diag(torch.tensor([1.0, 0.0, 0.0])), torch.eye(3)
    assert alignment(e1, eye) == pytest.approx(1 / math.sqrt(3))
    assert alignment(e1, eye, centered=True) == pytest.approx(1 / math.sqrt(2))


def test_alignment_of_a_kernel_with_itself_is_one_and_of_zero_is_nan() -> None:
    torch.manual_seed(3)
    theta = empirical_ntk(TinyGCN(), graph(3))
    assert alignment(theta, theta) == pytest.approx(1.0)
    assert alignment(theta, 5 * theta, centered=True) == pytest.approx(1.0)
    assert math.isnan(alignment(theta, torch.ones(5, 5), centered=True))  # a constant kernel centres to 0


def test_normalized_adjacency_power_by_hand() -> None:
    # the path 0-1-2 given one way, with a self-loop on 1: A + I has degrees 2, 3, 2
    edges = torch.tensor([[0, 1, 1], [1, 2, 1]])
    s = 1 / math.sqrt(6)
    a_hat = torch.tensor([[1 / 2, s, 0], [s, 1 / 3, s], [0, s, 1 / 2]], dtype=torch.float64)
    torch.testing.assert_close(normalized_adjacency_power(edges, 3, 0), torch.eye(3, dtype=torch.float64))
    torch.testing.assert_close(normalized_adjacency_power(edges, 3, 1), a_hat)
    torch.testing.assert_close(normalized_adjacency_power(edges, 3, 4), torch.linalg.matrix_power(a_hat, 4))
    subset = torch.tensor([2, 0])
    torch.testing.assert_close(normalized_adjacency_power(edges, 3, 2, subset), (a_hat @ a_hat)[subset][:, subset])


def test_target_kernel() -> None:
    same_class = target_kernel(torch.tensor([0, 2, 0]), "multiclass", 3)
    assert same_class.tolist() == [[1, 0, 1], [0, 1, 0], [1, 0, 1]]
    labels = torch.tensor([[1.0, math.nan], [1.0, 1.0]])
    assert target_kernel(labels, "multilabel", 2).tolist() == [[1, 1], [1, 2]]


class TinyTask(L.LightningModule):
    def __init__(self, network: nn.Module, level: str) -> None:
        super().__init__()
        self.network = network
        self.info = SimpleNamespace(level=level, task_type="multiclass", num_outputs=2)

    def training_step(self, batch: Batch, batch_idx: int) -> Tensor:
        out = self.network(batch)
        return (
            F.cross_entropy(out, batch.y)
            if self.info.level == "graph"
            else F.cross_entropy(out[batch.train_mask], batch.y[batch.train_mask])
        )

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.5)


class TinyData(L.LightningDataModule):
    def __init__(self, graphs: list[Data], batch_size: int) -> None:
        super().__init__()
        self.graphs, self.batch_size = graphs, batch_size

    def train_dataloader(self) -> DataLoader:
        return DataLoader(self.graphs, batch_size=self.batch_size, shuffle=True)


def fit(module: L.LightningModule, data: L.LightningDataModule, callback: NTKAlignment, root: Path, epochs: int = 2) -> L.Trainer:
    trainer = L.Trainer(
        max_epochs=epochs,
        accelerator="cpu",
        devices=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=str(root),
        callbacks=[callback],
    )
    trainer.fit(module, datamodule=data)
    return trainer


NODE_KEYS = {
    f"ntk/{pair}_alignment{suffix}" for pair in ("kernel_target", "kernel_graph", "graph_target") for suffix in ("", "_centered")
}


def test_callback_on_a_node_task(tmp_path: Path) -> None:
    torch.manual_seed(4)
    data = graph(4)
    data.train_mask = torch.tensor([True, True, True, False, False])
    module = TinyTask(TinyGCN(), "node")
    initial = empirical_ntk(module.network, data)
    callback = NTKAlignment(num_nodes=4, seed=0)
    trainer = fit(module, TinyData([data], 1), callback, tmp_path)
    assert [record["epoch"] for record in callback.history] == [0, 1, 2]
    assert NODE_KEYS <= set(trainer.logged_metrics)
    # S: 4 of the 5 nodes drawn with seed 0; L = 2 from network.layers, so A_hat^4
    rows = torch.randperm(5, generator=torch.Generator().manual_seed(0))[:4].sort().values
    first = callback.history[0]
    assert first["ntk/kernel_target_alignment"] == pytest.approx(
        alignment(initial[rows][:, rows], target_kernel(data.y[rows], "multiclass", 2)), rel=1e-5
    )
    graph_kernel = normalized_adjacency_power(EDGES, 5, 4, rows)
    assert first["ntk/kernel_graph_alignment_centered"] == pytest.approx(
        alignment(initial[rows][:, rows], graph_kernel, centered=True), rel=1e-5
    )
    assert all(record["ntk/graph_target_alignment"] == first["ntk/graph_target_alignment"] for record in callback.history)
    assert first["ntk/kernel_target_alignment"] != callback.history[-1]["ntk/kernel_target_alignment"]  # it trained
    with (tmp_path / "ntk_alignment.csv").open() as handle:
        written = list(csv.DictReader(handle))
    assert [int(row["epoch"]) for row in written] == [0, 1, 2]
    assert float(written[-1]["ntk/kernel_graph_alignment"]) == pytest.approx(callback.history[-1]["ntk/kernel_graph_alignment"])
    last = callback.history[-1]
    assert callback.final_metrics() == {f"{key}_final": last[key] for key in NODE_KEYS}


def test_callback_every_n_epochs_on_a_split_and_its_state(tmp_path: Path) -> None:
    torch.manual_seed(5)
    data = graph(5)
    data.train_mask = torch.tensor([True, False, True, True, False])
    callback = NTKAlignment(every_n_epochs=2, num_nodes=10, split="train", num_layers=1, csv_name=None)
    fit(TinyTask(TinyGCN(), "node"), TinyData([data], 1), callback, tmp_path, epochs=3)
    assert [record["epoch"] for record in callback.history] == [0, 2]
    assert callback._rows is not None and callback._rows.tolist() == [0, 2, 3]
    assert not (tmp_path / "ntk_alignment.csv").exists()
    restored = NTKAlignment()
    assert restored.final_metrics() == {}  # nothing measured yet
    restored.load_state_dict(callback.state_dict())
    assert restored.history == callback.history
    # the last measurement is of epoch 2 of 3 (every 2 epochs)
    assert restored.final_metrics()["ntk/kernel_target_alignment_final"] == callback.history[1]["ntk/kernel_target_alignment"]


def test_callback_rejects_bad_arguments() -> None:
    with pytest.raises(ConfigError, match="split"):
        NTKAlignment(split="training")
    with pytest.raises(ConfigError, match="every_n_epochs"):
        NTKAlignment(every_n_epochs=0)


def test_callback_on_a_graph_task(tmp_path: Path) -> None:
    torch.manual_seed(6)
    graphs = [graph(seed) for seed in range(6)]
    for index, item in enumerate(graphs):
        item.y = torch.tensor([index % 2])
    callback = NTKAlignment(num_graphs=4, seed=1)
    trainer = fit(TinyTask(TinyGCN(graph_level=True), "graph"), TinyData(graphs, 3), callback, tmp_path, epochs=1)
    assert len(callback.history) == 2
    assert {key for key in trainer.logged_metrics if key.startswith("ntk/")} == {
        "ntk/kernel_target_alignment",
        "ntk/kernel_target_alignment_centered",
    }
    assert callback._inputs.num_graphs == 4
