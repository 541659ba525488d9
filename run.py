"""graphbench entry point: compose the config from conf/, then run its task.

    python run.py                                            # the default experiment
    python run.py -m dataset=peptides-func model=gcn head=mlp2 seed=0,1,2,3
    python run.py --help                                     # groups and their options
"""
from __future__ import annotations

import logging
import sys

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig

from graphbench.cli import run_task
from graphbench.errors import GraphbenchError

log = logging.getLogger("graphbench")


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def main(cfg: DictConfig) -> None:
    try:
        run_task(cfg)
    except GraphbenchError as exc:
        log.error("%s", exc)
        print(f"error: {exc}", file=sys.stderr)
        if HydraConfig.get().mode == RunMode.RUN:
            raise SystemExit(1) from None
        # in a multirun the other jobs go on; the failure is recorded in this job's results.json


if __name__ == "__main__":
    main()
