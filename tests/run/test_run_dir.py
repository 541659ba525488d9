"""Run directories: usable paths, one run each, resumption only of the same config."""

from __future__ import annotations

from pathlib import Path

import pytest
from omegaconf import OmegaConf

from graphbench.run.record import RunRecord
from graphbench.run.run_dir import RunDirGuard, config_differences, default_resume, existing_run, resume_mode, usable_dir
from graphbench.vocabulary.errors import ConfigError

CONFIG = {"seed": 0, "model": {"hidden_dim": 16, "dims": (1, 2)}, "paths": {"output_dir": "/a"}, "resume": "never"}


def test_usable_dir_creates_a_missing_directory(tmp_path: Path) -> None:
    usable_dir(tmp_path / "a" / "b", "hydra.run.dir")
    assert (tmp_path / "a" / "b").is_dir() and list((tmp_path / "a" / "b").iterdir()) == []


@pytest.mark.parametrize("where", ["under_a_file", "a_file", "proc"])
def test_usable_dir_names_the_setting_of_an_unusable_path(tmp_path: Path, where: str) -> None:
    (tmp_path / "file").write_text("x")
    path = {"under_a_file": tmp_path / "file" / "run", "a_file": tmp_path / "file", "proc": Path("/proc/graphbench")}[where]
    with pytest.raises(
        ConfigError, match=r"^hydra\.sweep\.dir=.* cannot be used: .*set hydra\.sweep\.dir=<a writable directory>$"
    ):
        usable_dir(path, "hydra.sweep.dir")


def test_config_differences_ignore_volatile_keys_and_json_round_trips() -> None:
    recorded = {**CONFIG, "model": {"hidden_dim": 16, "dims": [1, 2]}, "paths": {"output_dir": "/b"}, "resume": "auto"}
    assert config_differences(recorded, CONFIG) == []
    changed = {**CONFIG, "model": {"hidden_dim": 32, "dims": (1, 2)}, "lr": 0.1}
    assert config_differences(recorded, changed) == ["lr: <unset> -> 0.1", "model.hidden_dim: 16 -> 32"]


def test_an_empty_directory_holds_no_run(tmp_path: Path) -> None:
    assert existing_run(tmp_path, resume=False, config=CONFIG) is None


def test_another_runs_record_is_refused_without_resume(tmp_path: Path) -> None:
    RunRecord(status="completed", config=CONFIG).write(tmp_path / "results.json")
    with pytest.raises(ConfigError, match=r"already holds another run \(results\.json: completed\).*resume=auto"):
        existing_run(tmp_path, resume=False, config=CONFIG)


def test_resume_continues_the_same_config_only(tmp_path: Path) -> None:
    RunRecord(status="interrupted", config=CONFIG).write(tmp_path / "results.json")
    record = existing_run(tmp_path, resume=True, config={**CONFIG, "resume": "auto"})
    assert record is not None and record.status == "interrupted"
    with pytest.raises(ConfigError, match=r"another config \(seed: 0 -> 1\); resume=auto continues only the same config"):
        existing_run(tmp_path, resume=True, config={**CONFIG, "seed": 1})


def test_resume_over_an_unreadable_record_continues_from_the_checkpoint(tmp_path: Path) -> None:
    (tmp_path / "results.json").write_text("{not json")
    assert existing_run(tmp_path, resume=True, config=CONFIG) is None


def test_resume_continues_a_claim_that_never_recorded_its_config(tmp_path: Path) -> None:
    """A run killed right after claiming its directory left ``status: running`` and ``config: {}``."""
    RunRecord(status="running", config={}).write(tmp_path / "results.json")
    record = existing_run(tmp_path, resume=True, config=CONFIG)
    assert record is not None and record.status == "running"
    with pytest.raises(ConfigError, match=r"already holds another run \(results\.json: running\)"):
        existing_run(tmp_path, resume=False, config=CONFIG)


def test_resume_modes() -> None:
    assert (default_resume("hydra_plugins.hydra_submitit_launcher.submitit_launcher.SlurmLauncher"), default_resume("")) == (
        "auto",
        "never",
    )
    assert resume_mode(None) == "never"
    with pytest.raises(ConfigError, match=r"resume='always' is not one of \['never', 'auto'\]"):
        resume_mode("always")


def hydra_config(tmp_path: Path, **paths: str) -> object:
    return OmegaConf.create(
        {
            "resume": None,
            "paths": {"cache_dir": str(tmp_path / "cache"), "data_dir": str(tmp_path / "data"), **paths},
            "hydra": {"run": {"dir": str(tmp_path / "run")}, "sweep": {"dir": str(tmp_path / "sweep")}, "launcher": {}},
        }
    )


def test_guard_passes_usable_fresh_paths(tmp_path: Path) -> None:
    RunDirGuard().on_run_start(hydra_config(tmp_path))
    RunDirGuard().on_multirun_start(hydra_config(tmp_path))
    assert (tmp_path / "run").is_dir() and (tmp_path / "sweep").is_dir() and (tmp_path / "cache").is_dir()


@pytest.mark.parametrize(
    ("setup", "expected"),
    [
        ("cache_file", "error: paths.cache_dir="),
        ("data_file", "error: paths.data_dir="),
        ("taken_run", "already holds another run (results.json: completed)"),
        ("taken_sweep", "already holds 1 run(s)"),
    ],
)
def test_guard_ends_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], setup: str, expected: str) -> None:
    (tmp_path / "file").write_text("x")
    paths = {"cache_file": {"cache_dir": str(tmp_path / "file")}, "data_file": {"data_dir": str(tmp_path / "file")}}.get(
        setup, {}
    )
    config = hydra_config(tmp_path, **paths)
    if setup.startswith("taken"):
        job = tmp_path / "run" if setup == "taken_run" else tmp_path / "sweep" / "0"
        job.mkdir(parents=True)
        RunRecord(status="completed", config={}).write(job / "results.json")
    start = RunDirGuard().on_multirun_start if setup == "taken_sweep" else RunDirGuard().on_run_start
    with pytest.raises(SystemExit) as stop:
        start(config)
    assert stop.value.code == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and expected in err


def test_guard_lets_resume_auto_into_a_taken_directory(tmp_path: Path) -> None:
    config = hydra_config(tmp_path)
    config.resume = "auto"
    (tmp_path / "run").mkdir()
    RunRecord(status="completed", config={}).write(tmp_path / "run" / "results.json")
    RunDirGuard().on_run_start(config)  # the run frame compares the configs
