"""The "dataset" extension path, end to end: a new dataset is one source class and one YAML.

The source is defined here (a handful of hand-built graphs), its YAML is written into a config
folder of the test and put on Hydra's search path, and the composed config trains through
``graphbench.tasks.train.train`` exactly as ``python run.py dataset=tiny`` would.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import torch
from omegaconf import DictConfig
from torch import Tensor

from graphbench.build.data import build_datamodule
from graphbench.data.datamodules import GraphLevelDataModule
from graphbench.data.info import DataFacts, FeatureSpec
from graphbench.data.io.raw_root import RawRoot
from graphbench.data.sources.base import Source
from graphbench.data.store.collate import collate
from graphbench.data.store.graph_store import GraphStore
from graphbench.tasks.train import train
from graphbench.vocabulary.splits import SPLITS


class TinyRings(Source):
    """Rings of 3..3+num_graphs-1 nodes with 3 dense node features; the label is whether the ring
    has an even number of nodes. Graphs are dealt out to train/val/test in turn."""

    def __init__(self, *, num_graphs: int = 12) -> None:
        self.num_graphs = num_graphs

    def facts(self, store: GraphStore | None = None) -> DataFacts:
        return DataFacts(num_outputs=1, node_features=FeatureSpec("dense", dim=3), edge_features=None)

    def cache_params(self) -> tuple[int, ...]:
        return (self.num_graphs,)

    def build(self, raw: RawRoot) -> tuple[GraphStore, dict[str, Tensor]]:
        sizes = [3 + i for i in range(self.num_graphs)]
        rings = [torch.arange(n) for n in sizes]
        edge_index = [torch.stack([torch.cat([r, (r + 1) % len(r)]), torch.cat([(r + 1) % len(r), r])]) for r in rings]
        x = [torch.stack([r.float(), torch.ones(len(r)), r.float() % 2], dim=1) for r in rings]
        y = torch.tensor([[float(n % 2 == 0)] for n in sizes])
        data, slices = collate(edge_index, {"x": x}, graph={"y": y})
        ids = torch.arange(self.num_graphs)
        return GraphStore(data, slices), {split: ids[i::3] for i, split in enumerate(SPLITS)}


TINY_YAML = f"""\
# a dataset added by a test: the graph-level DataModule with the test's own source
_target_: graphbench.data.datamodules.GraphLevelDataModule
name: tiny
provenance: hand-built rings ({__name__})
task_type: binary
metric: accuracy
higher_is_better: true
split: every third graph
data_dir: ${{paths.data_dir}}
cache_dir: ${{paths.cache_dir}}
batch_size: 4
num_workers: 0
num_graphs: 12
source:
  _target_: {TinyRings.__module__}.{TinyRings.__qualname__}
  num_graphs: ${{dataset.num_graphs}}
module:
  _target_: graphbench.modules.task_module.GraphTaskModule
  loss:
    _target_: graphbench.modules.losses.MaskedBCEWithLogitsLoss
"""


def compose_tiny(compose_cfg: Callable[..., DictConfig], tmp_path: Path, overrides: list[str] = ()) -> DictConfig:
    conf = tmp_path / "more-conf"
    (conf / "dataset").mkdir(parents=True, exist_ok=True)
    (conf / "dataset" / "tiny.yaml").write_text(TINY_YAML)
    return compose_cfg([f"hydra.searchpath=[file://{conf}]", "dataset=tiny", *overrides])


def test_the_new_dataset_builds_sets_up_and_loads(compose_cfg: Callable[..., DictConfig], tmp_path: Path) -> None:
    cfg = compose_tiny(compose_cfg, tmp_path, ["dataset.num_graphs=9"])
    dm = build_datamodule(cfg)
    assert isinstance(dm, GraphLevelDataModule) and isinstance(dm.source, TinyRings) and dm.source.num_graphs == 9
    info = dm.info  # stated by the source: known before any data is read
    assert (info.name, info.level, info.num_outputs, info.node_features.dim, info.metric) == ("tiny", "graph", 1, 3, "accuracy")
    assert not Path(cfg.paths.cache_dir).exists()
    dm.prepare_data()
    dm.setup("fit")
    assert len(list(Path(cfg.paths.cache_dir).glob("tiny-*.pt"))) == 1
    assert {split: dm.splits[split].tolist() for split in SPLITS} == {"train": [0, 3, 6], "val": [1, 4, 7], "test": [2, 5, 8]}
    batch = next(iter(dm.val_dataloader()))
    assert batch.num_graphs == 3 and batch.idx.tolist() == [1, 4, 7] and batch.x.size(1) == 3
    assert batch.y.view(-1).tolist() == [1.0, 0.0, 1.0]  # rings of 4, 7, 10 nodes


def test_the_new_dataset_trains_through_graphbench_train(compose_cfg: Callable[..., DictConfig], tmp_path: Path) -> None:
    fast = [
        "trainer.max_epochs=1",
        "trainer.enable_progress_bar=false",
        "model.hidden_dim=8",
        "model.num_layers=2",
        "logger=none",
    ]
    record = train(compose_tiny(compose_cfg, tmp_path, fast))
    assert record.status == "completed", record.status
    assert record.epochs_trained == 1 and {"train/accuracy", "val/accuracy", "test/accuracy"} <= set(record.metrics)
