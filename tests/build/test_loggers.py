"""graphbench.build.loggers: one logger per entry of ``cfg.logger``, none for ``logger=none``; opened with
the run's config, a resumed run's CSV logger keeping the rows of the epochs its checkpoint holds."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import yaml
from omegaconf import DictConfig

from graphbench.build.loggers import build_loggers, open_loggers
from graphbench.run.loggers import ResumableCSVLogger, RunTensorBoardLogger
from graphbench.run.record import RunRecord


def test_logger_lists_compose_one_logger_per_entry(compose_cfg: Callable[..., DictConfig]) -> None:
    assert [type(lg) for lg in build_loggers(compose_cfg(["logger=[csv,tensorboard]"]))] == [
        ResumableCSVLogger,
        RunTensorBoardLogger,
    ]
    assert sorted(compose_cfg(["logger=[csv,wandb,tensorboard]"]).logger) == ["csv", "tensorboard", "wandb"]
    assert build_loggers(compose_cfg(["logger=none"])) == []


def test_open_loggers_appends_them_with_the_runs_config_and_the_resumed_epoch(
    compose_cfg: Callable[..., DictConfig], tmp_path: Path
) -> None:
    cfg = compose_cfg(["logger=csv", "seed=7"], run_dir=tmp_path)
    record = RunRecord(status="running", config={"seed": 7, "model": {"name": "gcn"}})
    loggers: list = []
    open_loggers(cfg, record, loggers, resumed_epoch=2)
    (csv,) = loggers
    assert isinstance(csv, ResumableCSVLogger) and csv.keep_through_epoch == 2
    hparams = yaml.safe_load((Path(csv.log_dir) / "hparams.yaml").read_text())
    assert hparams == {"seed": 7, "model.name": "gcn"}
