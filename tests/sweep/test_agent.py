"""A generated W&B sweep, run as W&B's agent runs it, offline.

W&B's own code does each step the agent would: the ``sweeps`` package samples the run's parameters,
``wandb``'s ``create_sweep_command_args`` turns them into ``${args_no_hyphens}``, and the environment is
the agent's (``WANDB_SWEEP_ID``, ``WANDB_RUN_ID``, ``WANDB_SWEEP_PARAM_PATH``); only the server is missing
(``WANDB_MODE=offline``). The W&B run is then read back from its offline ``.wandb`` file.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import yaml
from wandb.proto import wandb_internal_pb2
from wandb.sdk.launch.sweeps.utils import create_sweep_command_args
from wandb.sdk.lib import config_util

from graphbench.sweep.__main__ import main
from tests.conftest import FAST_CYCLES
from tests.e2e.test_cli import cli_env
from tests.paths import CONF, REPO


def agent_command(sweep: dict, run_args: dict) -> list[str]:
    """The command W&B's agent (wandb_agent.Agent._command_run) builds from the sweep's ``command``."""
    macros = create_sweep_command_args({"args": run_args})
    macros.update(env=["/usr/bin/env"], interpreter=[sys.executable], program=[str(REPO / sweep["program"])])
    command: list[str] = []
    for item in sweep["command"]:
        command += macros[item[2:-1]] if item.startswith("${") and item.endswith("}") else [item]
    return command


def wandb_records(path: Path) -> Iterator[wandb_internal_pb2.Record]:
    """The records of an offline ``run-<id>.wandb`` file: a 7-byte header, then LevelDB-log records
    (4-byte checksum, 2-byte little-endian length, 1-byte type) in 32 KiB blocks."""
    data, pos, chunks = path.read_bytes(), 7, []
    assert data[:4] == b":W&B"
    while pos + 7 <= len(data):
        left = 32768 - pos % 32768
        length, kind = int.from_bytes(data[pos + 4 : pos + 6], "little"), data[pos + 6]
        if left < 7 or kind == 0:  # block trailer / padding
            pos += left
            continue
        chunks.append(data[pos + 7 : pos + 7 + length])
        pos += 7 + length
        if kind in (1, 4):  # a full record, or the last fragment of one
            record = wandb_internal_pb2.Record()
            record.ParseFromString(b"".join(chunks))
            chunks = []
            yield record


def test_agent_runs_a_sampled_point_of_a_generated_sweep_to_completion(tmp_path: Path) -> None:
    sweep_file = tmp_path / "sweep.yaml"
    swept = ["model=gcn,gine", "optimizer.lr=tag(log, interval(1e-3, 1e-2))", "seed=0,1"]
    assert (
        main(
            [
                "wandb",
                "--config-dir",
                str(CONF),
                *swept,
                *FAST_CYCLES,
                "trainer.max_epochs=1",
                "--method",
                "random",
                "-o",
                str(sweep_file),
            ]
        )
        == 0
    )
    sweep = yaml.safe_load(sweep_file.read_text())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import sweeps
    random.seed(0)  # the sweeps package samples with Python's random module
    sampled = sweeps.next_run(sweep, [], validate=True).config
    run_args = json.loads(json.dumps(sampled, default=float))  # as the agent receives it from the server: plain JSON
    command = agent_command(sweep, run_args)
    assert command[:3] == ["/usr/bin/env", sys.executable, str(REPO / "run.py")]
    assert f"model={run_args['model']['value']}" in command and "logger=wandb" in command

    param_file = tmp_path / "wandb" / "sweep-testsweep" / "config-agentrun1.yaml"
    config_util.save_config_file_from_dict(str(param_file), run_args)
    env = cli_env(
        {
            "WANDB_SWEEP_ID": "testsweep",
            "WANDB_RUN_ID": "agentrun1",
            "WANDB_SWEEP_PARAM_PATH": str(param_file),
            "WANDB_SILENT": "true",
        }
    )
    # the agent runs in the repository root; here tmp_path stands in for it (run.py by absolute path, ./cache, ./multirun)
    proc = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]

    run_dir = tmp_path / "multirun" / "wandb" / "testsweep" / "agentrun1"  # one directory per sweep, one per run
    results = json.loads((run_dir / "results.json").read_text())
    assert results["status"] == "completed"
    assert results["config"]["model"]["name"] == run_args["model"]["value"]
    assert results["config"]["optimizer"]["lr"] == float(run_args["optimizer.lr"]["value"])

    (wandb_file,) = run_dir.glob("wandb/offline-run-*/run-agentrun1.wandb")  # the agent's run id, not another
    records = list(wandb_records(wandb_file))
    (run,) = [r.run for r in records if r.WhichOneof("record_type") == "run"]
    assert (run.run_id, run.sweep_id, run.job_type) == ("agentrun1", "testsweep", "train")
    assert run.run_group.startswith(f"model={run_args['model']['value']},") and "seed=" not in run.run_group  # config minus seed
    summary = {
        u.key: json.loads(u.value_json)
        for r in records
        if r.WhichOneof("record_type") == "summary"
        for u in r.summary.update
        if u.key
    }
    assert summary["num_params"] == results["num_params"] and summary["hidden_dim"] == 16
    assert summary["time_per_epoch_s"] > 0
    assert summary["val/accuracy"] == results["metrics"]["val/accuracy"]  # the sweep's metric, at the best epoch
