"""``python -m graphbench.tasks.ddp_worker``: a worker rank reads the config rank 0 wrote and runs the same fit,
its exit code that of its status (two real ranks: ``tests/e2e/test_ddp.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from omegaconf import DictConfig, OmegaConf

from graphbench.tasks import ddp_worker


def test_the_worker_runs_the_written_config_and_returns_its_exit_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[dict, bool]] = []

    def train_worker(cfg: DictConfig, resume: bool) -> int:
        calls.append((OmegaConf.to_container(cfg), resume))  # type: ignore[arg-type]
        return 3

    monkeypatch.setattr(ddp_worker, "train_worker", train_worker)
    OmegaConf.save(OmegaConf.create({"seed": 5, "trainer": {"devices": 2}}), tmp_path / "config.yaml")
    assert ddp_worker.main([str(tmp_path / "config.yaml")]) == 3
    assert ddp_worker.main([str(tmp_path / "config.yaml"), "--resume"]) == 3
    assert calls == [({"seed": 5, "trainer": {"devices": 2}}, False), ({"seed": 5, "trainer": {"devices": 2}}, True)]


def test_a_missing_config_argument_exits_2_naming_the_module(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        ddp_worker.main([])
    assert exit_info.value.code == 2
    assert "python -m graphbench.tasks.ddp_worker" in capsys.readouterr().err
