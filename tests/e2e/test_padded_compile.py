"""``dataset.pad_to=buckets model.compile=true``: one epoch of the LRGB-tuned Peptides-func GCN recipe (narrowed,
without dropout) on real peptides in the official raw format compiles one graph per bucket and mode, without
a graph break (``fullgraph=True``), and trains with the per-step losses of the unpadded eager run."""

from __future__ import annotations

import gzip
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import lightning as L
import numpy as np
import pytest
import torch
from omegaconf import DictConfig

from graphbench.build.data import build_datamodule
from graphbench.build.model import prepared_model
from graphbench.data.io.raw_files import RawFile, md5sum
from graphbench.data.sources.graph import peptides
from graphbench.run.record import RunRecord
from graphbench.tasks.train import train
from tests.conftest import FAST_CYCLES

#: graphs of the fixture: 32 to train on (4 batches of 8), 8 to validate on
NUM_TRAIN, NUM_VAL = 32, 8
OVERRIDES = [
    "experiment=lrgb-tuned/peptides-func-gcn",
    "dataset.batch_size=8",
    "dataset.featurize_workers=1",
    "model.hidden_dim=16",
    "model.num_layers=2",
    "pe.concat_dim=4",
    "model.dropout=0.0",  # the compiled network draws its own dropout masks
    "head.dropout=0.0",
    "trainer.max_epochs=1",
    "logger=none",
]


@pytest.fixture
def peptides_root(tmp_path: Path, peptide_sample: tuple[list[str], torch.Tensor], monkeypatch: pytest.MonkeyPatch) -> Path:
    """A data root with Peptides-func's two official files, holding the first 48 peptides of the sample."""
    smiles, labels = peptide_sample
    folder = tmp_path / "data" / "peptides-functional"
    (folder / "raw").mkdir(parents=True)
    rows = [",smiles,peptide_seq,labels,identifier"]
    for i in range(NUM_TRAIN + 2 * NUM_VAL):
        rows.append(f'{i},{smiles[i]},SEQ{i},"{[int(v) for v in labels[i].tolist()]}",id{i}')
    with gzip.open(folder / "raw" / "peptide_multi_class_dataset.csv.gz", "wt") as handle:
        handle.write("\n".join(rows) + "\n")
    split = {
        "train": np.arange(NUM_TRAIN),
        "val": np.arange(NUM_TRAIN, NUM_TRAIN + NUM_VAL),
        "test": np.arange(NUM_TRAIN + NUM_VAL, NUM_TRAIN + 2 * NUM_VAL),
    }
    (folder / "splits_random_stratified_peptide.pickle").write_bytes(pickle.dumps(split))
    root = tmp_path / "data"
    files = [RawFile(f.relpath, md5=md5sum(root / f.relpath), url=f.url) for f in peptides.PEPTIDES_FUNC_FILES]
    monkeypatch.setattr(peptides, "PEPTIDES_FUNC_FILES", files)
    return root


class StepRecorder(L.Callback):
    """Each training step's loss, and the (mode, node rows, edge rows) of every batch the network sees."""

    def __init__(self) -> None:
        self.losses: list[float] = []
        self.shapes: set[tuple[bool, int, int]] = set()

    def on_train_batch_start(self, trainer: L.Trainer, pl_module: L.LightningModule, batch: Any, batch_idx: int) -> None:
        self.shapes.add((True, batch.x.size(0), batch.edge_index.size(1)))

    def on_validation_batch_start(
        self, trainer: L.Trainer, pl_module: L.LightningModule, batch: Any, batch_idx: int, dataloader_idx: int = 0
    ) -> None:
        self.shapes.add((False, batch.x.size(0), batch.edge_index.size(1)))

    def on_train_batch_end(
        self, trainer: L.Trainer, pl_module: L.LightningModule, outputs: Any, batch: Any, batch_idx: int
    ) -> None:
        self.losses.append(float(outputs["loss"]))


def one_epoch(cfg: DictConfig) -> StepRecorder:
    datamodule = build_datamodule(cfg)
    datamodule.setup()
    model = prepared_model(cfg, datamodule, RunRecord(status="running", config=None))
    recorder = StepRecorder()
    trainer = L.Trainer(
        max_epochs=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
        gradient_clip_val=cfg.trainer.gradient_clip_val,
        callbacks=[recorder],
    )
    trainer.fit(model, datamodule)
    return recorder


@pytest.mark.slow  # compilation: minutes on 2 busy cores
@pytest.mark.real_data
def test_a_padded_compiled_epoch_compiles_once_per_bucket_and_trains_as_the_eager_one(
    compose_cfg: Callable[..., DictConfig], peptides_root: Path, tmp_path: Path
) -> None:
    from torch._dynamo.utils import counters

    data = f"paths.data_dir={peptides_root}"
    eager = one_epoch(compose_cfg([*OVERRIDES, data], run_dir=tmp_path / "eager"))
    torch._dynamo.reset()
    counters.clear()
    padded = one_epoch(
        compose_cfg([*OVERRIDES, data, "dataset.pad_to=buckets", "model.compile=true"], run_dir=tmp_path / "padded")
    )
    assert len(padded.losses) == len(eager.losses) == NUM_TRAIN // 8
    torch.testing.assert_close(padded.losses, eager.losses, rtol=1e-4, atol=1e-5)
    # every batch padded: each (mode, bucket) is one compiled graph, fullgraph=True (no break) and no recompilation
    assert all(nodes % 8 == 0 and edges % 8 == 0 for _, nodes, edges in padded.shapes)
    assert counters["stats"]["unique_graphs"] == len(padded.shapes)
    assert not counters["graph_break"]


def test_padded_runs_end_with_the_unpadded_runs_metrics(compose_cfg: Callable[..., DictConfig], tmp_path: Path) -> None:
    """Two epochs of the cycles task (GINE, BatchNorm) in eager mode: batches padded on the CPU, or gathered
    and padded on the device (``dataset.batch_on_device=true``), give the unpadded run's losses and metrics."""
    runs = {}
    for name, extra in {
        "plain": [],
        "padded": ["dataset.pad_to=buckets"],
        "padded_on_device": ["dataset.pad_to=buckets", "dataset.batch_on_device=true"],
    }.items():
        runs[name] = train(compose_cfg([*FAST_CYCLES, "seed=1", "logger=none", *extra], run_dir=tmp_path / name))
    assert all(run.status == "completed" for run in runs.values())
    plain = runs["plain"].metrics
    for name in ("padded", "padded_on_device"):
        assert runs[name].metrics.keys() == plain.keys()
        for key, value in plain.items():
            assert runs[name].metrics[key] == pytest.approx(value, rel=1e-4, abs=1e-5), (name, key)
        assert runs[name].best_epoch == runs["plain"].best_epoch
