from __future__ import annotations

import multiprocessing as mp
from pathlib import Path

import pytest
import torch

from graphbench.datamodules.cache import cache_key, load_or_build


def test_builds_once_then_loads(tmp_path: Path) -> None:
    calls = []
    path = tmp_path / "c.pt"
    assert load_or_build(path, lambda: calls.append(1) or {"a": torch.ones(2)})["a"].tolist() == [1.0, 1.0]
    assert load_or_build(path, lambda: calls.append(1) or {"a": torch.zeros(2)})["a"].tolist() == [1.0, 1.0]
    assert calls == [1]


def test_failed_build_leaves_no_file(tmp_path: Path) -> None:
    path = tmp_path / "c.pt"

    def broken() -> dict:
        raise ValueError("boom")

    with pytest.raises(ValueError):
        load_or_build(path, broken)
    assert not path.exists()
    assert not [p for p in tmp_path.iterdir() if p.suffix == ".tmp"]


def _build_in_process(path: str, marker_dir: str, index: int) -> None:
    def build() -> torch.Tensor:
        (Path(marker_dir) / f"built-{index}").touch()
        return torch.arange(1000)

    assert load_or_build(Path(path), build).sum().item() == sum(range(1000))


def test_concurrent_jobs_build_once(tmp_path: Path) -> None:
    """The jobs of a job array share one cache: exactly one of them builds it."""
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=_build_in_process, args=(str(tmp_path / "c.pt"), str(tmp_path), i)) for i in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    assert all(p.exitcode == 0 for p in procs)
    assert len(list(tmp_path.glob("built-*"))) == 1


def test_cache_key_depends_on_every_part() -> None:
    assert cache_key("a", 1) == cache_key("a", 1)
    assert cache_key("a", 1) != cache_key("a", 2)
