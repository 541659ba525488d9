"""graphbench.build.trainer: the Trainer of ``cfg.trainer``: the progress bar resolved, DDP's unused
parameters, the caller's arguments over the config's."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from lightning.pytorch.strategies import DDPStrategy
from omegaconf import DictConfig

from graphbench.build.trainer import build_trainer, show_progress_bar


@pytest.mark.parametrize(("edge_encoder", "find_unused"), [("auto", False), ("always", True)])
def test_ddp_finds_unused_parameters_under_an_unread_edge_encoder(
    compose_cfg: Callable[..., DictConfig], tmp_path: Path, edge_encoder: str, find_unused: bool
) -> None:
    """``model.edge_encoder=always`` may build parameters no layer reads (GCN): plain DDP would refuse them."""
    cfg = compose_cfg(["trainer=ddp_cpu", "trainer.devices=1", f"model.edge_encoder={edge_encoder}"])
    trainer = build_trainer(cfg, [], [], str(tmp_path))
    assert isinstance(trainer.strategy, DDPStrategy)
    assert trainer.strategy._ddp_kwargs.get("find_unused_parameters", False) is find_unused


def test_the_callers_arguments_win_over_the_config(compose_cfg: Callable[..., DictConfig], tmp_path: Path) -> None:
    cfg = compose_cfg(["trainer.max_epochs=3"])
    assert build_trainer(cfg, [], [], str(tmp_path)).max_epochs == 3
    assert build_trainer(cfg, [], [], str(tmp_path), max_epochs=5).max_epochs == 5


def test_the_progress_bar_shows_on_a_terminal_only_under_auto(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdout.isatty", lambda: False)
    assert (show_progress_bar("auto"), show_progress_bar(True), show_progress_bar(False)) == (False, True, False)
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    assert show_progress_bar("auto") is True
