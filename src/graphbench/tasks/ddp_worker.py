"""A worker rank of a local DDP run, started by :class:`graphbench.run.distributed.LocalWorkers` as
``python -m graphbench.tasks.ddp_worker <resolved config> [--resume]``: :func:`graphbench.tasks.train.train`
on that config, which on a rank other than 0 does the same fit and test as rank 0, writing nothing."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from omegaconf import DictConfig, OmegaConf, open_dict

from graphbench.run.cli import quiet_library_logging
from graphbench.run.distributed import WORKER_MODULE
from graphbench.run.record import exit_code
from graphbench.tasks.train import train


def main(argv: list[str] | None = None) -> int:
    """Run the rank; its exit code is that of its status."""
    parser = argparse.ArgumentParser(prog=f"python -m {WORKER_MODULE}", description=__doc__)
    parser.add_argument("config", type=Path, help="the run's resolved config (written by rank 0)")
    parser.add_argument("--resume", action="store_true", help="continue from the run's last.ckpt, as rank 0 does")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="[%(asctime)s][%(name)s][%(levelname)s] - %(message)s")
    quiet_library_logging()
    cfg = OmegaConf.load(args.config)
    assert isinstance(cfg, DictConfig)
    with open_dict(cfg):
        cfg.resume = "auto" if args.resume else "never"  # rank 0 resumes from its last.ckpt, or starts afresh
    return exit_code(train(cfg, checkpoint=str(OmegaConf.select(cfg, "task.checkpoint", default="best"))).status)


if __name__ == "__main__":
    raise SystemExit(main())
