"""Data-parallel (DDP) runs: how many processes a run has, which one writes, and the local launcher.

A DDP run is one process per device. Rank 0 is the process the user started (a Hydra job): it
alone writes ``results.json``, ``predictions.npz``, the checkpoints (Lightning saves on rank 0) and
the W&B run. On one node, graphbench starts ranks 1..N-1 itself (:class:`LocalWorkers`) as
``python -m graphbench.tasks.ddp_worker <resolved config>`` rather than through Lightning's launcher,
which re-executes the command line: under a Hydra multirun that would start the whole sweep again
in every child. Under SLURM (one task per device) or ``torchrun``, the scheduler starts every rank
and Lightning reads its place from the environment; nothing is launched here.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from types import TracebackType
from typing import Any

import torch
from lightning.fabric.accelerators import CUDAAccelerator
from lightning.fabric.plugins.environments import (
    ClusterEnvironment,
    LightningEnvironment,
    SLURMEnvironment,
    TorchElasticEnvironment,
)
from lightning.fabric.utilities.rank_zero import rank_zero_only
from omegaconf import DictConfig, OmegaConf

from graphbench.vocabulary.errors import ConfigError, GraphbenchError

#: the module :class:`LocalWorkers` runs with ``python -m`` for each rank > 0 (named, not imported:
#: the tasks sit above the run frame)
WORKER_MODULE: str = "graphbench.tasks.ddp_worker"

log = logging.getLogger(__name__)

#: strategies whose processes graphbench can launch (or find launched) one per device
DDP_STRATEGIES: tuple[str, ...] = ("ddp", "ddp_find_unused_parameters_true", "ddp_find_unused_parameters_false")
#: the environment a rank reads its place from (Lightning's ``LightningEnvironment``), and the
#: folder of the logs and readiness marks of the workers that :class:`LocalWorkers` starts
RANK_ENV: tuple[str, ...] = ("MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "NODE_RANK", "LOCAL_RANK", "GRAPHBENCH_DDP_DIR")
#: how long rank 0 waits for the other ranks to exit after it finished
EXIT_TIMEOUT_S: float = 120.0
WORKER_DIR_ENV: str = RANK_ENV[-1]
#: an interpolation through a resolver (``${hydra:runtime.output_dir}``, ``${now:...}``, ``${oc.env:...}``)
_RESOLVER = re.compile(r"\$\{[^}]*:")


class WorkerFailed(GraphbenchError):
    """A rank other than 0 of a local DDP run exited with an error."""


def is_rank_zero() -> bool:
    """Whether this process writes the run's files: rank 0 of a DDP run, or any single-process run.
    Lightning reads the rank from the environment (``RANK``, ``LOCAL_RANK``, ``SLURM_PROCID``, ...)."""
    return rank_zero_only.rank == 0


def processes_per_node(trainer_cfg: Mapping[str, Any]) -> int:
    """The number of DDP processes per node the Trainer arguments ask for; 1 without a DDP strategy."""
    strategy = trainer_cfg.get("strategy", "auto")
    if not isinstance(strategy, str) or not strategy.startswith("ddp"):
        return 1
    if strategy not in DDP_STRATEGIES:
        raise ConfigError(
            f"trainer.strategy={strategy} is not supported: its processes would not share the run's callbacks and "
            f"files; use one of {list(DDP_STRATEGIES)} (trainer=ddp on GPUs, trainer=ddp_cpu on CPU)"
        )
    devices = trainer_cfg.get("devices", 1)
    accelerator = str(trainer_cfg.get("accelerator", "auto"))
    if accelerator in ("gpu", "cuda") or (accelerator == "auto" and torch.cuda.is_available()):
        parsed = CUDAAccelerator.parse_devices(devices)
        return len(parsed) if parsed else 1
    if isinstance(devices, (list, tuple)):
        return len(devices)
    if not isinstance(devices, int) or devices < 1:
        raise ConfigError(f"trainer.devices={devices!r}: on CPU, DDP needs the number of processes, an integer >= 1")
    return devices


def launched_externally() -> bool:
    """Whether a scheduler (SLURM with one task per device, ``torchrun``) or a local launcher already
    started every rank. A SLURM job with one task is not: graphbench starts its ranks."""
    slurm_tasks = int(os.environ.get("SLURM_NTASKS", "1") or 1) if SLURMEnvironment.detect() else 1
    return "LOCAL_RANK" in os.environ or slurm_tasks > 1 or TorchElasticEnvironment.detect()


def cluster_plugins() -> list[ClusterEnvironment]:
    """The Trainer's ``plugins`` for a process of a run whose ranks :class:`LocalWorkers` started:
    Lightning's plain environment (rank and world size from ``LOCAL_RANK``/``WORLD_SIZE``), which it
    would otherwise take from SLURM's variables when the job runs under SLURM."""
    return [LightningEnvironment()] if WORKER_DIR_ENV in os.environ else []


def portable_config(cfg: DictConfig) -> DictConfig:
    """``cfg`` for a process without Hydra: every value computed by a resolver (``${hydra:...}``,
    ``${now:...}``) replaced by its value here; references between keys (``${dataset.name}``) stay
    as they are."""

    def portable(node: Any, path: str) -> Any:
        if isinstance(node, dict):
            return {key: portable(value, f"{path}.{key}" if path else str(key)) for key, value in node.items()}
        if isinstance(node, list):
            return [portable(value, f"{path}[{i}]") for i, value in enumerate(node)]
        if isinstance(node, str) and _RESOLVER.search(node):
            return OmegaConf.select(cfg, path)
        return node

    return OmegaConf.create(portable(OmegaConf.to_container(cfg, resolve=False), ""))


def launch_context(cfg: DictConfig, num_processes: int, run_dir: Path, resume: bool) -> AbstractContextManager[Any]:
    """What surrounds the Trainer of one process of a run: rank 0 of a one-node DDP run starts the
    other ranks (:class:`LocalWorkers`); a rank it started marks itself ready; anything else: nothing."""
    worker_dir = os.environ.get(WORKER_DIR_ENV)
    if worker_dir is not None:
        return _ready_mark(Path(worker_dir) / f"rank{os.environ['LOCAL_RANK']}.ready")
    if num_processes > 1 and not launched_externally():
        return LocalWorkers(cfg, num_processes, run_dir, resume)
    return nullcontext()


@contextmanager
def _ready_mark(path: Path) -> Iterator[None]:
    path.touch()
    yield


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LocalWorkers:
    """Ranks 1..N-1 of a one-node DDP run, for the duration of a ``with`` block around the Trainer.

    Entering sets the rendezvous environment of rank 0 in this process (restored on exit), writes
    the resolved config to ``<run_dir>/ddp/config.yaml`` and starts each worker, whose output goes to
    ``<run_dir>/ddp/rank<r>.log``. Exiting waits for them (or kills them when rank 0 failed), tears
    the process group down so that the next job of a sweep can start its own, and raises
    :class:`WorkerFailed` when a worker failed while rank 0 did not.
    """

    def __init__(self, cfg: DictConfig, num_processes: int, run_dir: Path, resume: bool) -> None:
        self.cfg = cfg
        self.num_processes = num_processes
        self.dir = run_dir / "ddp"
        self.resume = resume
        self.procs: list[subprocess.Popen[bytes]] = []
        self._saved_env: dict[str, str | None] = {}

    def __enter__(self) -> LocalWorkers:
        self.dir.mkdir(parents=True, exist_ok=True)
        for stale in self.dir.glob("rank*.ready"):
            stale.unlink()
        config_path = self.dir / "config.yaml"
        OmegaConf.save(portable_config(self.cfg), config_path)
        self._saved_env = {key: os.environ.get(key) for key in RANK_ENV}
        rendezvous = {
            "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": str(_free_port()),
            "WORLD_SIZE": str(self.num_processes),
            "NODE_RANK": "0",
        }
        os.environ.update(rendezvous, LOCAL_RANK="0", **{WORKER_DIR_ENV: str(self.dir)})
        command = [sys.executable, "-m", WORKER_MODULE, str(config_path)] + (["--resume"] if self.resume else [])
        for rank in range(1, self.num_processes):
            with open(self.dir / f"rank{rank}.log", "wb") as out:
                env = {**os.environ, "LOCAL_RANK": str(rank)}
                self.procs.append(subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT))
        log.info("DDP: %d processes on this node (ranks 1-%d log to %s)", self.num_processes, self.num_processes - 1, self.dir)
        try:
            self._wait_ready()
        except BaseException:
            self._kill()
            self._restore()
            raise
        return self

    def _wait_ready(self) -> None:
        """Returns once every worker has built its data and model; raises :class:`WorkerFailed` when
        one exited before (a worker that fails after this point breaks the process group instead,
        which ends rank 0's collectives with an error)."""
        waiting = dict(enumerate(self.procs, start=1))
        while waiting:
            for rank, proc in list(waiting.items()):
                if (self.dir / f"rank{rank}.ready").exists():
                    del waiting[rank]
                elif proc.poll() is not None:
                    raise WorkerFailed(self._failure(rank, proc.returncode))
            time.sleep(0.05)

    def _failure(self, rank: int, code: int) -> str:
        log_path = self.dir / f"rank{rank}.log"
        lines = log_path.read_text(errors="replace").strip().splitlines() if log_path.is_file() else []
        return f"DDP rank {rank} exited with code {code}: {lines[-1] if lines else ''} (log: {log_path})"

    def _restore(self) -> None:
        for key, value in self._saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        if torch.distributed.is_available() and torch.distributed.is_initialized():
            torch.distributed.destroy_process_group()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        try:
            failures = self._kill() if exc_type is not None else self._wait()
        finally:
            self._restore()
        if failures and exc_type is None:
            raise WorkerFailed("; ".join(failures))

    def _wait(self) -> list[str]:
        failures = []
        for rank, proc in enumerate(self.procs, start=1):
            try:
                code = proc.wait(timeout=EXIT_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                code = proc.wait()
            if code != 0:
                failures.append(self._failure(rank, code))
        return failures

    def _kill(self) -> list[str]:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
        for proc in self.procs:
            proc.wait()
        return []
