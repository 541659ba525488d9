r"""CPU threads of a graphbench process: how torch's OpenMP threads wait, and how many there are.

torch runs each CPU operator on a team of OpenMP threads. By default (``OMP_WAIT_POLICY`` unset) a
thread that reaches the end of a parallel region *spins* until the others arrive. When one thread of
the team has lost its core to another process (a second run, a test suite, a browser, a cgroup quota
smaller than the node), the others burn their cores waiting for it, thousands of times a training
step on graphs of a few thousand nodes: a run on a 2-core machine beside one busy process ran 8-35x
slower than alone. Two settings prevent the collapse:

* **the wait policy**: graphbench sets ``OMP_WAIT_POLICY=PASSIVE`` (threads sleep at once instead of
  spinning) in every process it starts, before torch loads its OpenMP runtime, which reads the
  variable once, when it is loaded (:func:`prepare_process`, called by the package's ``__init__``).
  Child processes (DataLoader workers, DDP ranks, joblib and submitit jobs, the reproduce runner's
  runs) inherit it through the environment. A value the user set is kept.
* **the thread count** (config key ``threads``): ``auto`` uses the CPUs this process may really use
  (:func:`cpu_allowance`: its affinity mask, and the cgroup CPU quota, not ``os.cpu_count()``)
  while data is prepared, then, at the first training batch, one thread when a step's work is too
  small for a second one to pay, else all of them (:func:`training_threads`; :data:`PARALLEL_WORK`,
  measured by ``python -m benchmarks --only contention``). ``threads=N`` or an explicit
  ``OMP_NUM_THREADS`` fixes the count.

The choice is printed in the run's header and recorded in ``results.json`` under
``provenance.threads``.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Mapping, MutableMapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from graphbench.vocabulary.errors import ConfigError

#: the OpenMP wait policy graphbench starts its processes with
WAIT_POLICY: str = "PASSIVE"
#: set beside ``OMP_WAIT_POLICY`` when graphbench set it, so that a child process can tell the two apart
SET_BY_GRAPHBENCH: str = "GRAPHBENCH_SET_OMP_WAIT_POLICY"

#: nodes x channels of a training step from which every usable CPU pays: below it a step's operators
#: are too small for a second thread to gain what waking it costs. Measured on the 2-core development
#: machine (the crossover rows of ``python -m benchmarks --only contention``, docs/performance.md).
PARALLEL_WORK: int = 400_000


@dataclass(frozen=True)
class WaitPolicy:
    """The ``OMP_WAIT_POLICY`` this process's OpenMP runtime started with: its ``value`` (``None``:
    the runtime's default, spinning), who set it (``graphbench`` or ``environment``), and whether it
    is ``in_force`` (``False`` when torch was imported before graphbench could set it). A process
    started by a graphbench process inherits its policy: ``graphbench, inherited``."""

    value: str | None
    source: str
    in_force: bool


def prepare_process(environ: MutableMapping[str, str] = os.environ, loaded: Mapping[str, Any] = sys.modules) -> WaitPolicy:
    """Set ``OMP_WAIT_POLICY`` to :data:`WAIT_POLICY` in ``environ`` unless it is set already; the
    policy takes effect when torch's OpenMP runtime loads, so only if torch is not in ``loaded`` yet."""
    in_force = "torch" not in loaded
    if environ.get("OMP_WAIT_POLICY"):
        inherited = environ.get(SET_BY_GRAPHBENCH) == environ["OMP_WAIT_POLICY"]
        return WaitPolicy(environ["OMP_WAIT_POLICY"], "graphbench, inherited" if inherited else "environment", in_force)
    if not in_force:
        return WaitPolicy(None, "torch was imported before graphbench: the runtime's default (spinning)", False)
    environ["OMP_WAIT_POLICY"] = environ[SET_BY_GRAPHBENCH] = WAIT_POLICY
    return WaitPolicy(WAIT_POLICY, "graphbench", True)


#: what :func:`prepare_process` did when ``graphbench`` was imported (set by the package's ``__init__``)
PROCESS_WAIT_POLICY: WaitPolicy | None = None


def set_process_wait_policy(policy: WaitPolicy) -> None:
    global PROCESS_WAIT_POLICY
    PROCESS_WAIT_POLICY = policy


def process_wait_policy() -> WaitPolicy:
    """What :func:`prepare_process` did in this process (as the environment says, when it did not run)."""
    if PROCESS_WAIT_POLICY is not None:
        return PROCESS_WAIT_POLICY
    return WaitPolicy(os.environ.get("OMP_WAIT_POLICY"), "environment", False)


@dataclass(frozen=True)
class CpuAllowance:
    """The CPUs a process may run on (``affinity``: its affinity mask) and the CPU time its cgroup
    grants per unit of wall time (``quota``; ``None``: no quota). ``usable`` is the smaller of the two,
    the quota rounded down, at least one."""

    affinity: int
    quota: float | None

    @property
    def usable(self) -> int:
        if self.quota is None:
            return self.affinity
        return max(1, min(self.affinity, math.floor(self.quota)))

    def describe(self) -> str:
        quota = "no CPU quota" if self.quota is None else f"a cgroup CPU quota of {self.quota:g}"
        return f"{self.usable} usable CPUs (affinity {self.affinity}, {quota})"


def affinity_cpus() -> int:
    """The CPUs in this process's affinity mask (all of them where the platform has no mask)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def cgroup_quota(proc_cgroup: Path = Path("/proc/self/cgroup"), root: Path = Path("/sys/fs/cgroup")) -> float | None:
    """The CPUs' worth of time per second the process's cgroup and its ancestors grant (the tightest
    of them), from cgroup v2's ``cpu.max`` or v1's ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``;
    ``None`` without a quota or where the files cannot be read. Inside a container, the path in
    ``/proc/self/cgroup`` may not exist under ``root``: its ancestors and ``root`` itself are read too."""
    try:
        lines = proc_cgroup.read_text().splitlines()
    except OSError:
        return None
    quotas: list[float] = []
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controllers == "":  # cgroup v2: "0::/path"
            quotas += [q for d in _dirs(root, path) if (q := _v2_quota(d / "cpu.max")) is not None]
        elif "cpu" in controllers.split(","):
            for mount in (root / controllers, root / "cpu", root / "cpu,cpuacct"):
                if mount.is_dir():
                    quotas += [q for d in _dirs(mount, path) if (q := _v1_quota(d)) is not None]
                    break
    return min(quotas) if quotas else None


def _dirs(mount: Path, path: str) -> list[Path]:
    """``mount/path`` and each of its ancestors up to ``mount``, those that exist."""
    parts = [p for p in path.strip("/").split("/") if p]
    candidates = [mount.joinpath(*parts[:i]) for i in range(len(parts), -1, -1)]
    return [d for d in candidates if d.is_dir()]


def _v2_quota(path: Path) -> float | None:
    try:
        quota, period = path.read_text().split()[:2]
    except (OSError, ValueError):
        return None
    return None if quota == "max" else int(quota) / int(period)


def _v1_quota(directory: Path) -> float | None:
    try:
        quota = int((directory / "cpu.cfs_quota_us").read_text())
        period = int((directory / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return None if quota <= 0 or period <= 0 else quota / period


def cpu_allowance() -> CpuAllowance:
    """This process's :class:`CpuAllowance`."""
    return CpuAllowance(affinity_cpus(), cgroup_quota())


def threads_setting(value: Any) -> str | int:
    """The config key ``threads``, checked: ``"auto"`` or a positive number of threads."""
    if value is None or str(value) == "auto":
        return "auto"
    try:
        count = int(str(value))
    except ValueError:
        count = 0
    if count < 1:
        raise ConfigError(f"threads={value!r} is not valid; valid: auto, or a number of threads >= 1")
    return count


@dataclass(frozen=True)
class ThreadChoice:
    """How many intra-op threads torch runs (``threads``), who decided (``source``: ``threads=N``,
    ``OMP_NUM_THREADS`` or ``auto``) and why (``reason``), with the CPU allowance and wait policy."""

    threads: int
    source: str
    reason: str
    allowance: CpuAllowance
    wait_policy: WaitPolicy

    def describe(self) -> str:
        policy = self.wait_policy
        waiting = (
            f"OMP_WAIT_POLICY={policy.value} ({policy.source})"
            if policy.value and policy.in_force
            else f"OpenMP threads spin while they wait ({policy.source})"
        )
        return f"{self.threads} ({self.source}: {self.reason}); {waiting}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "intra_op": self.threads,
            "source": self.source,
            "reason": self.reason,
            "usable_cpus": self.allowance.usable,
            "affinity_cpus": self.allowance.affinity,
            "cgroup_quota": self.allowance.quota,
            "wait_policy": asdict(self.wait_policy),
        }


def _fixed(setting: str | int, environ: Mapping[str, str], allowance: CpuAllowance, policy: WaitPolicy) -> ThreadChoice | None:
    """The choice when the config or the environment fixes the count; ``None`` under ``auto``."""
    if isinstance(setting, int):
        return ThreadChoice(setting, f"threads={setting}", "set in the config", allowance, policy)
    env = environ.get("OMP_NUM_THREADS", "").strip()
    if env:
        try:
            count = max(1, int(env.split(",")[0]))
        except ValueError:
            raise ConfigError(f"OMP_NUM_THREADS={env!r} is not valid; valid: a number of threads >= 1, or unset") from None
        return ThreadChoice(count, "OMP_NUM_THREADS", "set in the environment", allowance, policy)
    return None


def start_threads(
    setting: str | int, processes: int = 1, environ: Mapping[str, str] = os.environ, allowance: CpuAllowance | None = None
) -> ThreadChoice:
    """The thread count a run starts with, while it prepares its data: fixed by the config or the
    environment, else (``auto``) the usable CPUs shared among the run's ``processes`` on this node
    (``allowance``: this process's, :func:`cpu_allowance`, unless given)."""
    allowance, policy = allowance or cpu_allowance(), process_wait_policy()
    fixed = _fixed(setting, environ, allowance, policy)
    if fixed is not None:
        return fixed
    share = max(1, allowance.usable // max(1, processes))
    reason = f"{allowance.describe()}" + (f", shared by {processes} processes" if processes > 1 else "")
    return ThreadChoice(share, "auto", reason + "; training chooses again at its first batch", allowance, policy)


def training_threads(
    setting: str | int,
    nodes: int | None,
    width: int,
    processes: int = 1,
    on_accelerator: bool = False,
    environ: Mapping[str, str] = os.environ,
    allowance: CpuAllowance | None = None,
) -> ThreadChoice:
    """The thread count for training: fixed by the config or the environment, else (``auto``) one
    thread when a step's ``nodes`` x ``width`` is under :data:`PARALLEL_WORK`, all usable CPUs
    (shared among ``processes``) from there on, and on an accelerator, whose host only batches and
    moves data. ``nodes``: the first training batch's node count (``None`` when it has none);
    ``allowance``: this process's (:func:`cpu_allowance`) unless given."""
    allowance, policy = allowance or cpu_allowance(), process_wait_policy()
    fixed = _fixed(setting, environ, allowance, policy)
    if fixed is not None:
        return fixed
    share = max(1, allowance.usable // max(1, processes))
    if on_accelerator or nodes is None:
        why = "the model runs on an accelerator" if on_accelerator else "the batch has no node count"
        return ThreadChoice(share, "auto", f"{why}; {allowance.describe()}", allowance, policy)
    work = nodes * width
    if work < PARALLEL_WORK:
        reason = f"{nodes:,} nodes x {width} channels per step, under the {PARALLEL_WORK:,} from which a second thread pays"
        return ThreadChoice(1, "auto", reason, allowance, policy)
    reason = f"{nodes:,} nodes x {width} channels per step, from {PARALLEL_WORK:,} every usable CPU pays; {allowance.describe()}"
    return ThreadChoice(share, "auto", reason, allowance, policy)


def apply(choice: ThreadChoice) -> None:
    """Run torch's intra-op operators on ``choice.threads`` threads."""
    import torch

    if torch.get_num_threads() != choice.threads:
        torch.set_num_threads(choice.threads)
