from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import lightning as L
import pytest
import torch
from lightning.pytorch.trainer.connectors.logger_connector.result import _ResultCollection, _ResultMetric
from torch import Tensor
from torch.utils.data import DataLoader
from torchmetrics import MeanMetric

from graphbench.speedups import result_moves

CPU, META = torch.device("cpu"), torch.device("meta")


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """Installs the skip for this test only; returns the calls that reached Lightning's own ``to``."""
    calls: list[tuple[Any, ...]] = []
    lightning_to = result_moves._lightning_to

    def counted(self: _ResultMetric, *args: Any, **kwargs: Any) -> _ResultMetric:
        calls.append((*args, *kwargs.values()))
        return lightning_to(self, *args, **kwargs)

    monkeypatch.setattr(_ResultMetric, "to", _ResultMetric.to)  # restored after the test
    monkeypatch.setattr(result_moves, "_lightning_to", counted)
    result_moves.install()
    return calls


def logged_loss(results: _ResultCollection) -> _ResultMetric:
    results.log("training_step", "loss", torch.tensor(2.0), batch_size=3)
    results.log("training_step", "loss", torch.tensor(4.0), batch_size=1)
    return results["training_step.loss"]


def test_logging_on_the_results_device_skips_the_move_and_keeps_the_batch_weighted_mean(installed: list) -> None:
    result = logged_loss(_ResultCollection(training=True))
    assert installed == []
    assert result.compute().item() == (2.0 * 3 + 4.0 * 1) / 4


def test_a_move_to_another_device_is_lightnings_own(installed: list) -> None:
    result = logged_loss(_ResultCollection(training=True))
    result.to(META)
    assert installed == [(META,)]
    assert result.value.device == META and result.cumulated_batch_size.device == META
    assert result._defaults["value"].device == META


@pytest.mark.parametrize("args, kwargs", [(("cpu",), {}), ((), {"device": CPU})])
def test_other_call_forms_are_lightnings_own(installed: list, args: tuple, kwargs: dict) -> None:
    result = logged_loss(_ResultCollection(training=True))
    result.to(*args, **kwargs)
    assert len(installed) == 1


def test_install_replaces_the_method_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_ResultMetric, "to", _ResultMetric.to)
    result_moves.install()
    result_moves.install()
    assert _ResultMetric.to is result_moves._to_unless_there


def test_installed_lasts_for_the_block_only_also_on_error() -> None:
    lightnings_own = _ResultMetric.to
    with pytest.raises(RuntimeError), result_moves.installed(result_moves.TESTED_LIGHTNING[0]) as patched:
        assert patched is True
        assert _ResultMetric.to is result_moves._to_unless_there
        raise RuntimeError("the run failed")
    assert _ResultMetric.to is lightnings_own


def test_an_untested_lightning_keeps_its_method_and_says_so(caplog: pytest.LogCaptureFixture) -> None:
    lightnings_own = _ResultMetric.to
    with caplog.at_level("INFO", logger=result_moves.__name__), result_moves.installed("0.0.1") as patched:
        assert patched is False
        assert _ResultMetric.to is lightnings_own
    assert "Lightning 0.0.1 is not one of" in caplog.text


@dataclass
class Holder:
    tensor: Tensor


@pytest.mark.parametrize(
    "obj, expected",
    [
        ({"a": torch.zeros(1), "b": [torch.zeros(1), (torch.zeros(1),)]}, True),
        ({"a": torch.zeros(1), "b": [torch.zeros(1), (torch.zeros(1, device=META),)]}, False),
        ({"a": {torch.zeros(1, device=META)}}, False),
        ({"a": Holder(torch.zeros(1))}, True),
        ({"a": Holder(torch.zeros(1, device=META))}, False),
        ({"a": MeanMetric()}, False),  # a nested metric: moved by Lightning, whatever its device
        ({"a": "text", "b": None, "c": 3, "d": Holder}, True),
    ],
)
def test_all_on_looks_through_containers_and_dataclasses(obj: dict, expected: bool) -> None:
    assert result_moves.all_on(obj, CPU) is expected


class LogsKnownValues(L.LightningModule):
    """Logs ``batch_idx + 1`` with batch size ``batch_idx + 1`` at every step, for the epoch mean."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(()))

    def training_step(self, batch: Tensor, batch_idx: int) -> Tensor:
        self.log("seen", float(batch_idx + 1), on_step=False, on_epoch=True, batch_size=batch_idx + 1)
        return (self.weight - batch.sum()) ** 2

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.1)


def test_a_trainer_reports_the_same_epoch_figure_with_the_skip(installed: list, tmp_path: Any) -> None:
    trainer = L.Trainer(
        max_epochs=2, logger=False, enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
        default_root_dir=tmp_path,
    )  # fmt: skip
    trainer.fit(LogsKnownValues(), DataLoader(torch.ones(3, 1), batch_size=1))
    # batches 1, 2, 3 weighted by 1, 2, 3: (1 + 4 + 9) / 6
    assert trainer.callback_metrics["seen"].item() == pytest.approx(14 / 6, rel=1e-7)
    assert all(args != (CPU,) for args in installed)  # self.log never reached Lightning's walk
