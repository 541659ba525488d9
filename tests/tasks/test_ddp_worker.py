"""``python -m graphbench.tasks.ddp_worker``: a worker rank reads the config rank 0 wrote and runs the same fit,
its exit code that of its status (two real ranks: ``tests/e2e/test_ddp.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from omegaconf import DictConfig, OmegaConf

from graphbench.run.record import RunRecord
from graphbench.tasks import ddp_worker


def test_the_worker_runs_the_written_config_and_returns_its_exit_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[dict, str]] = []

    def train(cfg: DictConfig, checkpoint: str) -> RunRecord:
        calls.append((OmegaConf.to_container(cfg), checkpoint))  # type: ignore[arg-type]
        return RunRecord(status="preempted", config={})

    monkeypatch.setattr(ddp_worker, "train", train)
    written = {"seed": 5, "resume": "auto", "trainer": {"devices": 2}, "task": {"checkpoint": "last"}}
    OmegaConf.save(OmegaConf.create(written), tmp_path / "config.yaml")
    assert ddp_worker.main([str(tmp_path / "config.yaml")]) == 143
    assert ddp_worker.main([str(tmp_path / "config.yaml"), "--resume"]) == 143
    # rank 0 says whether it resumes from its last.ckpt (--resume), whatever the written config's resume
    assert calls == [({**written, "resume": "never"}, "last"), ({**written, "resume": "auto"}, "last")]


def test_a_missing_config_argument_exits_2_naming_the_module(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        ddp_worker.main([])
    assert exit_info.value.code == 2
    assert "python -m graphbench.tasks.ddp_worker" in capsys.readouterr().err
