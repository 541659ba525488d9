"""The step profile: its phase table times every phase of every contender, and a wrong contender is one clear line."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch_geometric.data import Batch, Data

from benchmarks.dispatch import Contenders
from benchmarks.profile_step import main, phase_table, phase_times
from benchmarks.reference import RECIPES


class GraphMean(nn.Module):
    """A linear map of each graph's mean node features."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(2, 1)

    def forward(self, batch: Batch) -> torch.Tensor:
        counts = torch.bincount(batch.batch).unsqueeze(1).float()
        sums = torch.zeros(batch.num_graphs, 2).index_add_(0, batch.batch, batch.x)
        return self.linear(sums / counts)


def tiny_setup() -> Contenders:
    graphs = [Data(x=torch.ones(n, 2), y=torch.tensor([[1.0]]), num_nodes=n) for n in (2, 3)]
    batch = Batch.from_data_list(graphs)
    models = {name: GraphMean() for name in ("eager", "reference")}
    optimizers = {name: torch.optim.SGD(model.parameters(), lr=0.1) for name, model in models.items()}
    return Contenders(models, optimizers, width=2, params=3, batches={name: batch for name in models})


def test_phase_times_cover_forward_backward_and_step_and_the_steps_train() -> None:
    setup = tiny_setup()
    before = setup.models["eager"].linear.weight.detach().clone()
    times = phase_times(setup, ["eager", "reference"], steps=3)
    assert set(times) == {"eager", "reference"}
    assert all(set(by) == {"forward", "backward", "step"} and min(by.values()) > 0 for by in times.values())
    assert not torch.equal(setup.models["eager"].linear.weight, before)  # the optimizer stepped


def test_phase_table_has_a_row_per_contender() -> None:
    table = phase_table(RECIPES[0], tiny_setup(), ["eager", "reference"], steps=2)
    rows = [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("| contender")]
    assert [row.split(" | ")[0] for row in rows] == ["| eager", "| reference"]


def test_an_unknown_contender_is_one_clear_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--contenders", "eager,jit"])
    assert "unknown contender(s) ['jit']; valid: ['eager', 'compiled', 'buckets', 'reference']" in capsys.readouterr().err
