"""What made a run: the code, the packages, the machine, the raw files, the overrides and the times.

``results.json`` (schema version 3) holds a ``provenance`` block, :class:`Provenance`, so that two
rows of one table can be told apart when they came from different code or packages
(``graphbench.report`` warns when one row mixes them). Every function here is cheap and never
raises: what cannot be found is ``None`` (for the code, with the reason).

- **code** (:func:`code_version`): graphbench's version; when the package is imported from a git
  checkout (found from the package's own location, not the working directory) the commit, whether
  the tracked files differ from it (``dirty``) and the SHA-256 of ``git diff HEAD --binary`` (so two
  runs of one dirty commit with different edits differ), and how many untracked, not ignored source
  files (:data:`SOURCE_SUFFIXES`) the checkout holds outside run directories (they are in no diff;
  :func:`untracked_sources`). Installed from a wheel (or without git): the version only.
- **packages** (:func:`package_versions`): Python, torch, CUDA and cuDNN as torch sees them, PyG,
  Lightning, Hydra, torchmetrics and OGB.
- **machine** (:func:`machine_info`): the CPU model, the logical cores, the GPUs (``torch.cuda``).
- **raw_files**: ``{path under paths.data_dir: MD5}`` of every raw file the run's data was built
  from (empty for generated data), filled by the task from its DataModule.
- **overrides**: Hydra's task overrides of the run (``model=gcn``, ``seed=1``, ...), handed down
  from ``run.py``; empty for a config composed in-process.
- **threads**: torch's CPU threads and how their OpenMP runtime waits (:mod:`graphbench.run.threads`):
  ``start``, the choice the run started with; ``training``, the one its training ran on.
- **started_at** / **ended_at**: ISO 8601 times in UTC.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import platform
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path, PurePosixPath
from typing import Any

#: the distributions whose versions a run records, under these keys
PACKAGES: dict[str, str] = {
    "torch": "torch",
    "torch_geometric": "torch_geometric",
    "lightning": "lightning",
    "hydra": "hydra-core",
    "torchmetrics": "torchmetrics",
    "ogb": "ogb",
}
#: seconds one git call may take before the commit is recorded as unknown
GIT_TIMEOUT_S: float = 10.0
#: the package whose code a run records
PACKAGE_DIR: Path = Path(__file__).resolve().parent
#: the distribution (pyproject.toml's name) that installs the module graphbench
DISTRIBUTION: str = "graphbench-gnn"
#: the files that can change what a run computes: code and configs
SOURCE_SUFFIXES: frozenset[str] = frozenset({".py", ".pyx", ".c", ".cpp", ".h", ".cu", ".yaml", ".yml", ".toml", ".cfg", ".ini"})
#: what marks a directory as a run's output: its record, or a sweep's config (a run's config snapshot is ``.hydra/``)
RUN_MARKERS: frozenset[str] = frozenset({"results.json", "multirun.yaml"})


def untracked_sources(paths: Sequence[str]) -> int:
    """How many of the untracked ``paths`` (``/``-separated, relative to the checkout) are source files
    (:data:`SOURCE_SUFFIXES`) outside run directories: a directory holding ``.hydra/``, ``results.json``
    or ``multirun.yaml`` is a run's or a sweep's output, and nothing below it (config snapshots, jobs) is code."""
    files = [PurePosixPath(path) for path in paths]
    runs: set[PurePosixPath] = set()
    for file in files:
        if ".hydra" in file.parts:
            runs.add(PurePosixPath(*file.parts[: file.parts.index(".hydra")]))
        elif file.name in RUN_MARKERS:
            runs.add(file.parent)
    return sum(1 for file in files if file.suffix in SOURCE_SUFFIXES and runs.isdisjoint(file.parents))


@dataclass
class CodeVersion:
    """graphbench's code: ``version`` (the installed distribution's), and from a git checkout the
    ``commit``, ``dirty`` (tracked files differ from it), ``diff_sha256`` (of ``git diff HEAD
    --binary``; that of the empty diff when clean) and ``untracked`` (untracked, not ignored source
    files outside run directories: :func:`untracked_sources`).
    Without a checkout these are ``None`` and ``reason`` says why."""

    version: str | None = None
    commit: str | None = None
    dirty: bool | None = None
    diff_sha256: str | None = None
    untracked: int | None = None
    reason: str | None = None

    @property
    def short(self) -> str:
        """``f90b34d5a534`` (``+dirty <diff hash>`` when dirty), else ``graphbench 0.1.0``, else ``unknown``."""
        if self.commit is not None:
            dirty = f"+dirty {self.diff_sha256[:8]}" if self.dirty and self.diff_sha256 else ""
            return self.commit[:12] + dirty
        return f"graphbench {self.version}" if self.version is not None else "unknown"


@dataclass
class Provenance:
    """The ``provenance`` block of ``results.json`` (see the module docstring)."""

    code: CodeVersion = field(default_factory=CodeVersion)
    packages: dict[str, str | None] = field(default_factory=dict)
    machine: dict[str, Any] = field(default_factory=dict)
    raw_files: dict[str, str] = field(default_factory=dict)
    overrides: list[str] = field(default_factory=list)
    threads: dict[str, Any] = field(default_factory=dict)
    started_at: str | None = None
    ended_at: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> Provenance | None:
        """Read a block written by any version; ``None`` when ``data`` is not one (no object)."""
        if not isinstance(data, dict):
            return None
        values = {k: v for k, v in data.items() if k in _field_names(cls)}
        code = values.pop("code", None)
        code = code if isinstance(code, dict) else {}
        return cls(code=CodeVersion(**{k: v for k, v in code.items() if k in _field_names(CodeVersion)}), **values)


def _field_names(cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}


def utc_now() -> str:
    """The current time as ISO 8601 in UTC, e.g. ``2026-05-09T07:35:25.120+00:00``."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def _git(args: Sequence[str], cwd: Path) -> bytes:
    """The stdout of ``git <args>`` in ``cwd``; raises ``OSError`` (no git), ``subprocess.SubprocessError``
    (a failure or a timeout). Optional locks are off: a run never takes the index lock from a commit."""
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, check=True, timeout=GIT_TIMEOUT_S, stdin=subprocess.DEVNULL
    ).stdout


def installed_version(distribution: str) -> str | None:
    """The installed version of ``distribution`` (``importlib.metadata``), ``None`` when not installed."""
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def code_version(package_dir: Path = PACKAGE_DIR, distribution: str = DISTRIBUTION) -> CodeVersion:
    """The code of the package in ``package_dir``: its version and, when its ``__init__.py`` is
    tracked in a git checkout, the checkout's commit, dirty flag, diff hash and untracked files.

    A package installed into a virtual environment inside a checkout is not tracked there, so it
    gets the version only, as does one where git is missing or too slow (:data:`GIT_TIMEOUT_S`)."""
    code = CodeVersion(version=installed_version(distribution))
    try:
        _git(["ls-files", "--error-unmatch", "--", "__init__.py"], Path(package_dir))
    except OSError as exc:
        code.reason = f"git not available ({exc.strerror or exc})"
        return code
    except subprocess.TimeoutExpired:
        code.reason = f"git did not answer within {GIT_TIMEOUT_S:g} s"
        return code
    except subprocess.CalledProcessError:
        code.reason = f"{package_dir} is not tracked in a git checkout (an installed package)"
        return code
    try:
        commit = _git(["rev-parse", "HEAD"], package_dir).decode().strip()
        diff = _git(["diff", "HEAD", "--binary", "--no-color", "--no-ext-diff"], package_dir)
        untracked = _git(["ls-files", "--others", "--exclude-standard", "--full-name", ":/"], package_dir)
    except (OSError, subprocess.SubprocessError) as exc:
        code.reason = f"git failed in {package_dir} ({type(exc).__name__})"
        return code
    code.commit, code.dirty = commit, bool(diff)
    code.diff_sha256 = hashlib.sha256(diff).hexdigest()
    code.untracked = untracked_sources(untracked.decode().splitlines())
    return code


def package_versions() -> dict[str, str | None]:
    """Python's version, and torch's, the CUDA and cuDNN versions torch was built with (``None`` on a
    CPU build), PyG's, Lightning's, Hydra's, torchmetrics' and OGB's (``None`` when not installed)."""
    import torch

    versions: dict[str, str | None] = {"python": platform.python_version()}
    versions["torch"] = installed_version(PACKAGES["torch"])
    versions["cuda"] = torch.version.cuda
    try:
        cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    except RuntimeError:  # a cuDNN that does not load
        cudnn = None
    versions["cudnn"] = str(cudnn) if cudnn is not None else None
    versions.update({key: installed_version(dist) for key, dist in PACKAGES.items() if key != "torch"})
    return versions


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str | None:
    """The CPU's model name: the first ``model name`` of ``/proc/cpuinfo`` (Linux), else
    ``platform.processor()``, else ``None``."""
    try:
        for line in cpuinfo.read_text(errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and value.strip():
                return value.strip()
    except OSError:
        pass
    return platform.processor() or None


def machine_info() -> dict[str, Any]:
    """``platform`` (OS and architecture), ``cpu`` (model), ``cpu_count`` (logical cores),
    ``gpu_count`` and ``gpus`` (names) as ``torch.cuda`` sees them (``CUDA_VISIBLE_DEVICES`` applies)."""
    import torch

    gpu_count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    return {
        "platform": platform.platform(),
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "gpu_count": gpu_count,
        "gpus": [torch.cuda.get_device_name(i) for i in range(gpu_count)],
    }


def collect(overrides: Sequence[str] = (), started_at: str | None = None) -> Provenance:
    """The provenance of a run starting now (or at ``started_at``) with Hydra's task ``overrides``;
    ``raw_files`` and ``ended_at`` are filled later by the run."""
    return Provenance(
        code=code_version(),
        packages=package_versions(),
        machine=machine_info(),
        overrides=[str(o) for o in overrides],
        started_at=started_at or utc_now(),
    )
