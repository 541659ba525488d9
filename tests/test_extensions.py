"""The extension table of ``docs/architecture.md``, row by row, done inside the tests: each extension
is written here (its Python in this module, its YAML into a config folder of the test that joins
Hydra's search path) and then used exactly as a user would use it.

- dataset: ``tests/data/test_adding_a_dataset.py`` (a ``Source`` and ``conf/dataset/<name>.yaml``,
  trained through ``graphbench.tasks.train.train``); its source and YAML are reused here.
- layer: a layer class and ``conf/model/<name>.yaml``, trained with ``model=<name>``.
- analysis task: a task function over the run frame and ``conf/task/<name>.yaml``, run by
  ``python run.py --config-dir <folder> task=<name>`` (``graphbench --config-dir`` when installed).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import torch
from omegaconf import DictConfig
from torch import Tensor, nn
from torch_geometric.utils import scatter

from graphbench.build.data import build_datamodule
from graphbench.build.model import network_builder
from graphbench.modules.layers.contract import Layer
from graphbench.run.frame import completed_run, record_raw_files, run_frame
from graphbench.run.record import RunRecord
from graphbench.tasks.train import train
from graphbench.vocabulary.splits import SPLITS
from tests.data.test_adding_a_dataset import TINY_YAML
from tests.paths import REPO
from tests.warm_python import run_python

FAST = ["trainer.max_epochs=1", "trainer.enable_progress_bar=false", "model.hidden_dim=8", "model.num_layers=2", "logger=none"]


class NeighbourSumLayer(Layer):
    r"""A layer added by a test: :math:`x_i' = W \big(x_i + \sum_{j \in \mathcal{N}(i)} x_j\big) + b`
    (GIN with :math:`\epsilon = 0` and a one-layer MLP). It follows the layer contract
    (:mod:`graphbench.modules.layers.contract`): built as ``layer(in_dim=, out_dim=, edge_dim=)``, it
    maps ``(x, edge_index, edge_attr) -> (x, edge_attr)``, and it declares what differs from the
    contract's defaults: it reads no edge features."""

    uses_edge_attr = False

    def __init__(self, in_dim: int, out_dim: int, edge_dim: int) -> None:
        super().__init__()
        self.lin = nn.Linear(in_dim, out_dim)

    def reset_parameters(self) -> None:
        self.lin.reset_parameters()

    def forward(self, x: Tensor, edge_index: Tensor, edge_attr: Tensor | None) -> tuple[Tensor, Tensor | None]:
        neighbours = scatter(x[edge_index[0]], edge_index[1], dim=0, dim_size=x.size(0), reduce="sum")
        return self.lin(x + neighbours), edge_attr


LAYER_YAML = f"""\
# a model added by a test: GraphNetwork with the test's own layer
_target_: graphbench.modules.network.GraphNetwork
name: neighbour-sum
layer:
  _target_: {__name__}.NeighbourSumLayer
  _partial_: true
hidden_dim: 16
num_layers: 2
dropout: 0.0
activation: relu
residual: true
pooling: mean
width_multiple: 1
"""


def split_sizes(cfg: DictConfig, *, overrides: Sequence[str] = ()) -> RunRecord:
    """An analysis task added by a test: the number of graphs and nodes in each split of the configured
    (many-graph) dataset, written as ``{split}/graphs`` and ``{split}/nodes`` into ``results.json``."""

    if (done := completed_run(cfg)) is not None:  # resume=auto skips a completed run
        return done
    with run_frame(cfg, overrides) as frame:
        record = frame.record
        datamodule = build_datamodule(cfg)
        datamodule.prepare_data()
        datamodule.setup("fit")
        record_raw_files(record, datamodule)
        nodes_per_graph = datamodule.dataset.slices["x"].diff()
        for split in SPLITS:
            ids = datamodule.splits[split]
            record.metrics[f"{split}/graphs"] = len(ids)
            record.metrics[f"{split}/nodes"] = int(nodes_per_graph[ids].sum())
    return frame.record


TASK_YAML = f"""\
# an analysis task added by a test
_target_: {__name__}.split_sizes
_partial_: true
name: split_sizes
"""


def user_conf(tmp_path: Path) -> Path:
    """A folder of user configs: the tiny dataset of the dataset row, the model and the task of this module."""
    conf = tmp_path / "user-conf"
    for group, name, text in (
        ("dataset", "tiny", TINY_YAML),
        ("model", "neighbour-sum", LAYER_YAML),
        ("task", "split_sizes", TASK_YAML),
    ):
        (conf / group).mkdir(parents=True, exist_ok=True)
        (conf / group / f"{name}.yaml").write_text(text)
    return conf


def test_the_new_layer_sums_neighbours_on_a_path() -> None:
    layer = NeighbourSumLayer(in_dim=1, out_dim=1, edge_dim=4)
    with torch.no_grad():
        layer.lin.weight.fill_(2.0)
        layer.lin.bias.fill_(1.0)
    x = torch.tensor([[1.0], [10.0], [100.0]])
    edge_index = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])  # the path 0 - 1 - 2
    out, edge_attr = layer(x, edge_index, None)
    assert out.view(-1).tolist() == [2 * 11 + 1, 2 * 111 + 1, 2 * 110 + 1] and edge_attr is None


def test_the_new_layer_builds_the_network_and_trains(compose_cfg: Callable[..., DictConfig], tmp_path: Path) -> None:
    cfg = compose_cfg([f"hydra.searchpath=[file://{user_conf(tmp_path)}]", "dataset=tiny", "model=neighbour-sum", *FAST])
    network = network_builder(cfg, build_datamodule(cfg).info)(8)
    assert [type(layer) for layer in network.layers] == [NeighbourSumLayer, NeighbourSumLayer]
    assert network.edge_encoder is None  # the network read the contract: no layer reads edge features
    record = train(cfg)
    assert record.status == "completed", record.status
    assert record.epochs_trained == 1 and {"train/accuracy", "val/accuracy", "test/accuracy"} <= set(record.metrics)


def test_the_new_analysis_task_runs_from_the_command_line_with_a_config_dir(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    command = [
        "run.py",
        "--config-dir",
        str(user_conf(tmp_path)),
        "task=split_sizes",
        "dataset=tiny",
        f"paths.cache_dir={tmp_path / 'cache'}",
        f"hydra.run.dir={run_dir}",
    ]
    env = {**os.environ, "WANDB_MODE": "offline", "PYTHONPATH": str(REPO)}
    done = run_python(command, REPO, env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((run_dir / "results.json").read_text())
    assert results["status"] == "completed"
    assert results["config"]["task"]["name"] == "split_sizes"
    # rings of 3..14 nodes dealt out in turn: train 3, 6, 9, 12; val 4, 7, 10, 13; test 5, 8, 11, 14
    assert {k: results["metrics"][k] for k in ("train/graphs", "train/nodes", "val/nodes", "test/nodes")} == {
        "train/graphs": 4,
        "train/nodes": 30,
        "val/nodes": 34,
        "test/nodes": 38,
    }
