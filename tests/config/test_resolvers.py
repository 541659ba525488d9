"""paths.data_dir's default: $GRAPHBENCH_DATA if set, else ./data if it exists, else ../shared/data if it
exists, else ./data (conf/paths/default.yaml, graphbench.config.resolvers)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from omegaconf import OmegaConf

from graphbench.config.resolvers import FIRST_EXISTING_DIR, RUN_SUFFIX, first_existing_dir
from tests.paths import CONF


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory ``<tmp>/checkout`` with neither ./data nor ../shared/data, and no
    GRAPHBENCH_DATA in the environment."""
    root = tmp_path / "checkout"
    root.mkdir()
    monkeypatch.chdir(root)
    monkeypatch.delenv("GRAPHBENCH_DATA", raising=False)
    return root


def composed_data_dir() -> str:
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
            cfg = compose("config")
        return cfg.paths.data_dir
    finally:
        GlobalHydra.instance().clear()


@pytest.mark.parametrize(
    ("make", "env", "expected"),
    [
        ([], None, "./data"),  # nothing exists: ./data, so that the missing-files message names it
        (["shared/data"], None, "../shared/data"),  # a fresh clone beside the read-only data folder
        (["checkout/data"], None, "./data"),
        (["checkout/data", "shared/data"], None, "./data"),  # ./data wins over ../shared/data
        (["checkout/data", "shared/data"], "/elsewhere/raw", "/elsewhere/raw"),  # the env wins, existing or not
        ([], "/elsewhere/raw", "/elsewhere/raw"),
    ],
    ids=["neither", "shared-only", "local-only", "both", "env-over-both", "env-alone"],
)
def test_data_dir_resolution_order(
    checkout: Path, monkeypatch: pytest.MonkeyPatch, make: list[str], env: str | None, expected: str
) -> None:
    for folder in make:
        (checkout.parent / folder).mkdir(parents=True)
    if env is not None:
        monkeypatch.setenv("GRAPHBENCH_DATA", env)
    assert composed_data_dir() == expected


def test_a_file_is_not_a_data_dir(checkout: Path) -> None:
    (checkout / "data").write_text("not a directory")
    (checkout.parent / "shared" / "data").mkdir(parents=True)
    assert composed_data_dir() == "../shared/data"


def test_resolved_again_in_each_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Not cached: the same config object resolves against the current working directory."""
    (tmp_path / "a" / "data").mkdir(parents=True)
    (tmp_path / "b").mkdir()
    cfg = OmegaConf.create({"d": f"${{{FIRST_EXISTING_DIR}:./data,../shared/data}}"})
    monkeypatch.chdir(tmp_path / "a")
    assert cfg.d == "./data"
    (tmp_path / "shared" / "data").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "b")
    assert cfg.d == "../shared/data"


def test_first_existing_dir_needs_a_candidate() -> None:
    assert first_existing_dir("/no/such/dir", "/no/other") == "/no/such/dir"
    with pytest.raises(ValueError, match="at least one directory"):
        first_existing_dir()


def test_run_suffix_is_fixed_within_a_config_and_differs_between_configs() -> None:
    make = lambda: OmegaConf.create({"a": f"x_${{{RUN_SUFFIX}:}}", "b": {"c": f"${{{RUN_SUFFIX}:}}"}})  # noqa: E731
    first = make()
    assert re.fullmatch(r"x_[0-9a-f]{6}", first.a)
    assert first.a == f"x_{first.b.c}" and first.b.c == first.b.c  # one draw per config, however often resolved
    assert len({make().b.c for _ in range(5)}) == 5  # 16**6 values: a repeat among 5 is a one-in-a-million event


def test_run_and_sweep_dirs_end_in_microseconds_and_the_suffix() -> None:
    raw = OmegaConf.load(CONF / "hydra" / "default.yaml")
    for key in ("run", "sweep"):
        assert OmegaConf.to_container(raw)[key]["dir"].endswith(f"/${{now:%H-%M-%S-%f}}_${{{RUN_SUFFIX}:}}")


def test_metric_mode_is_the_direction_of_the_dataset_metric() -> None:
    node = OmegaConf.create({"up": "${gb.metric_mode:true}", "down": "${gb.metric_mode:false}", "bad": "${gb.metric_mode:1}"})
    assert (node.up, node.down) == ("max", "min")
    with pytest.raises(Exception, match=r"takes true or false \(dataset.higher_is_better\), got 1"):
        _ = node.bad
