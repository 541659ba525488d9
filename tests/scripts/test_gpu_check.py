"""scripts/gpu_check.sh without a GPU: its syntax, the commands of a dry run, and its table on fabricated
run directories (scripts/gpu_check_table.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.paths import REPO

SCRIPT = REPO / "scripts" / "gpu_check.sh"
TABLE = REPO / "scripts" / "gpu_check_table.py"


def test_script_parses() -> None:
    done = subprocess.run(["bash", "-n", str(SCRIPT)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_dry_run_prints_every_command(tmp_path: Path) -> None:
    env = {**os.environ, "GPU_CHECK_DRY_RUN": "1", "GPU_CHECK_OUT": str(tmp_path / "out"), "GRAPHBENCH_DATA": "/data"}
    env.pop("GPU_CHECK_WHEELS", None)
    done = subprocess.run(["bash", str(SCRIPT)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    commands = [line[2:] for line in done.stdout.splitlines() if line.startswith("+ ")]
    assert "-k cuda" in commands[0] and "tests/data/store/test_device_store.py" in commands[0]
    alone = [c for c in commands if c.startswith("python run.py") and "/alone/" in c]
    assert len(alone) == 12 + 3  # 3 recipes x store on/off x eager/compiled, then GCN padded: eager, compiled, CUDA graphs
    assert (
        "python run.py experiment=lrgb-tuned/peptides-func-gatedgcn trainer=gpu trainer.max_epochs=3 "
        "dataset.batch_on_device=false model.compile=true paths.data_dir=/data "
        f"hydra.run.dir={tmp_path}/out/alone/gatedgcn-store_false-compile_true"
    ) in alone
    padded = [c for c in commands if "dataset.pad_to=buckets" in c]
    assert [c.split("hydra.run.dir=")[1] for c in padded] == [
        f"{tmp_path}/out/alone/gcn-padded-{variant}" for variant in ("eager", "compiled", "cudagraphs")
    ]
    assert all("experiment=lrgb-tuned/peptides-func-gcn" in c and "dataset.batch_on_device=true" in c for c in padded)
    assert "model.compile=true model.compile_mode=reduce-overhead" in padded[2] and "model.compile=false" in padded[0]
    together = [c for c in commands if "/together/" in c and c.endswith(" &")]
    assert [c.split()[2] for c in together] == [f"experiment=lrgb-tuned/peptides-func-{r}" for r in ("gcn", "gine", "gatedgcn")]
    # nothing ran, so the whole 10 minutes are left: 9 of them for the runs at once
    assert all("trainer.max_epochs=250 trainer.max_time=00:00:09:00 dataset.batch_on_device=true" in c for c in together)
    assert commands[-1].startswith("python scripts/gpu_check_table.py ") and len(commands[-1].split()) == 2 + 18
    assert not (tmp_path / "out").exists()


def test_wheels_are_installed_offline_from_the_folder_given(tmp_path: Path) -> None:
    env = {**os.environ, "GPU_CHECK_DRY_RUN": "1", "GPU_CHECK_WHEELS": "/wheels", "GPU_CHECK_RECIPES": "gcn"}
    done = subprocess.run(["bash", str(SCRIPT)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    install = next(line for line in done.stdout.splitlines() if "pip install" in line)
    assert "--no-index --find-links /wheels" in install and "antlr4-python3-runtime==4.9.3" in install


def _record(run_dir: Path, **fields: object) -> None:
    run_dir.mkdir(parents=True)
    (run_dir / "results.json").write_text(json.dumps({"status": "completed", "config": {}, **fields}))


def test_table_of_fabricated_runs(tmp_path: Path) -> None:
    _record(
        tmp_path / "gcn-store_true-compile_false",
        metric="ap",
        metrics={"test/ap": 0.68123},
        epochs_trained=3,
        time_per_epoch_s=1.1612,
        peak_memory_mb=2950.4,
        total_time_s=41.7,
    )
    _record(tmp_path / "gine", status="failed", metric="ap", metrics={})
    (tmp_path / "gatedgcn").mkdir()
    dirs = [str(tmp_path / name) for name in ("gcn-store_true-compile_false", "gine", "gatedgcn")]
    done = subprocess.run([sys.executable, str(TABLE), *dirs], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "| run | status | epochs | s / epoch | test metric | peak memory | total |",
        "|---|---|---|---|---|---|---|",
        "| gcn-store_true-compile_false | completed | 3 | 1.16 s | ap 0.6812 | 2,950 MiB | 42 s |",
        "| gine | failed | — | — | — | — | — |",
        "| gatedgcn | no results.json | — | — | — | — | — |",
    ]


def test_table_without_run_dirs_says_how_to_call_it() -> None:
    done = subprocess.run([sys.executable, str(TABLE)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "usage: python scripts/gpu_check_table.py <run dir>" in done.stderr
