"""TrainingThreads: the thread count chosen at the first training batch from the batch's size, kept across a resume."""

from __future__ import annotations

from pathlib import Path

import lightning as L
import pytest
import torch
from torch import nn
from torch_geometric.data import Data
from torch_geometric.loader import DataLoader

from graphbench.callbacks.threads import TrainingThreads
from graphbench.run.provenance import Provenance
from graphbench.run.record import RUNNING, RunRecord
from tests.conftest import torch_threads


class Tiny(L.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 1)
        self.threads_seen: list[int] = []

    def training_step(self, batch: Data, batch_idx: int) -> torch.Tensor:
        self.threads_seen.append(torch.get_num_threads())
        return self.lin(batch.x).sum()

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.1)


def fit(callback: TrainingThreads, tmp_path: Path) -> Tiny:
    graphs = [Data(x=torch.randn(n, 4)) for n in (3, 5, 4, 6)]
    module = Tiny()
    trainer = L.Trainer(
        max_epochs=1,
        callbacks=[callback],
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=tmp_path,
    )
    trainer.fit(module, DataLoader(graphs, batch_size=2))
    return module


@pytest.fixture(autouse=True)
def no_thread_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)  # the tests' workers pin it; auto must decide here


def test_auto_trains_a_small_step_on_one_thread_from_the_first_batch(tmp_path: Path) -> None:
    record = RunRecord(status=RUNNING, config={}, provenance=Provenance())
    callback = TrainingThreads("auto", width=16, record=record)
    with torch_threads(2):
        module = fit(callback, tmp_path)
    assert callback.choice is not None and callback.choice.threads == 1 and callback.choice.source == "auto"
    assert record.provenance is not None and record.provenance.threads == {"training": callback.choice.to_dict()}
    assert "8 nodes x 16 channels per step" in callback.choice.reason  # the first batch: graphs of 3 and 5 nodes
    assert module.threads_seen == [1, 1]


def test_a_fixed_count_is_applied(tmp_path: Path) -> None:
    callback = TrainingThreads(2, width=16)
    with torch_threads(1):
        module = fit(callback, tmp_path)
    assert module.threads_seen == [2, 2] and callback.choice is not None and callback.choice.source == "threads=2"


def test_a_resumed_run_keeps_the_count_it_chose(tmp_path: Path) -> None:
    first = TrainingThreads("auto", width=16)
    with torch_threads(2):
        fit(first, tmp_path / "a")
    state = first.state_dict()
    assert state == {"threads": 1}
    resumed = TrainingThreads("auto", width=16)
    resumed.load_state_dict({"threads": 2})  # chosen on a machine where the step's size called for two
    with torch_threads(1):
        module = fit(resumed, tmp_path / "b")
    assert module.threads_seen == [2, 2]
    assert resumed.choice is not None and resumed.choice.reason.startswith("as the run chose before it was resumed")
